"""One server per SQLite database *file*, whatever it is named: a second
``qipai serve`` on a symlink or a hard link to the database another server
plays refuses to start (``DatabaseInUse``, one line), and the first plays on.

The lock is the file's, not ``PATH.lock`` of the path as written: were
``two_link.db`` (a symlink, or a hard link, to ``two.db``) to lock
``two_link.db.lock``, the second server would start, both would play the
same all-bot table and it would halt, damaged."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hostkit import SyncSeat, free_port, start_server

pytestmark = pytest.mark.slow   # a server start and two refused starts (3 s each)


def second(db_url: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", str(free_port()),
                           "--db", db_url], capture_output=True, text=True, timeout=60)


def test_a_second_server_on_a_link_to_the_database_refuses_to_start(tmp_path):
    db = tmp_path / "two.db"
    first = start_server(f"sqlite:///{db}", tmp_path, "--seed", "1")
    watch = None
    try:
        t = first.create(bots=[0, 1, 2, 3])
        watch = SyncSeat(first, t["id"], t["spectator_token"])   # the table plays
        watch.until("hand_ended")
        (tmp_path / "two_link.db").symlink_to(db)
        os.link(db, tmp_path / "two_hard.db")
        for name, said in (("two_link.db", f"(qipai serve pid {first.proc.pid} "),
                           ("two_hard.db", f"(pid {first.proc.pid} holds this database file")):
            p = second(f"sqlite:///{tmp_path / name}")
            assert p.returncode == 2, (name, p.stdout, p.stderr)
            lines = p.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: database "), p.stderr
            assert "is in use by another server" in lines[0] and said in lines[0], lines[0]
        # the first plays on, its table whole: another hand ends, nothing halted
        watch.until("hand_ended")
        info = first.info(t["id"])
        assert "halted" not in info and info["hands_done"] >= 2, info
        assert first.alive()
    finally:
        if watch is not None:
            watch.close()
        first.stop()
    # stopped: the file is free, under either name
    again = start_server(f"sqlite:///{tmp_path / 'two_hard.db'}", tmp_path, "--seed", "1")
    try:
        assert again.info(t["id"])["id"] == t["id"]
    finally:
        again.stop()
