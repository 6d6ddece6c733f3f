"""One server per database: a second ``qipai serve`` on the same database
(SQLite file or PostgreSQL database) refuses to start, in one line naming
the first; once the first is gone — stopped or killed — a server starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hostkit import free_port, start_server

pytestmark = pytest.mark.slow   # four server starts per database


def second(db_url: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", str(free_port()),
                           "--db", db_url], capture_output=True, text=True, timeout=120)


def test_a_second_server_on_one_database_refuses_to_start(db_url, tmp_path):
    first = start_server(db_url, tmp_path, "--seed", "1")
    try:
        with first.http() as http:
            t = http.post("/tables", json={"variant": "guilin-mahjong"}).json()
        p = second(db_url)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: database "), p.stderr
        assert "in use by another server" in lines[0]
        assert f"pid {first.proc.pid} " in lines[0]      # names the holder
        with first.http() as http:   # the first goes on
            assert http.get(f"/tables/{t['id']}").status_code == 200
    finally:
        first.stop()
    again = start_server(db_url, tmp_path, "--seed", "1")   # stopped: the lock is free
    try:
        with again.http() as http:
            assert http.get(f"/tables/{t['id']}").json()["id"] == t["id"]
        again.kill()   # SIGKILL: no shutdown, the lock goes with the process
    finally:
        again.stop()
    last = start_server(db_url, tmp_path, "--seed", "1")
    last.stop()
