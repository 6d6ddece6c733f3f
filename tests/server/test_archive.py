"""``qipai serve --retention … --archive DIR``: a closed table is written to
``DIR/<day>/<id>.json`` (its records, as ``GET /tables/{id}/records``
serves them, and its metadata) before its rows are deleted; a file that
cannot be written keeps the table, is logged once and counted, and is
tried again; a bad ``DIR`` is refused at start.  Real server processes on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone

from hostkit import PATIENCE, SyncSeat, start_server
from test_hostile_operator import _rows, poll
from test_keys import qipai


def _played(s, hands: int = 2) -> dict:
    """An all-bot table (watched: it plays) closed after ``hands`` hands or
    more; its create answer."""
    t = s.create(bots=[0, 1, 2, 3])
    c = SyncSeat(s, t["id"], t["spectator_token"], strict=False)
    for _ in range(hands):
        c.until("hand_ended")
    c.close()
    s.close(t)
    return t


def _metric(s, name: str) -> float:
    with s.http() as h:
        for line in h.get("/metrics").text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


def test_a_closed_table_is_archived_then_pruned(db_url, tmp_path):
    archive = tmp_path / "archive"
    archive.mkdir()
    # played and closed by a server that keeps them: their records are final
    a = start_server(db_url, tmp_path, "--seed", "3", "--stake", "10")
    try:
        played = [_played(a), _played(a, 1)]
        with a.http() as h:
            served = {t["id"]: h.get(f"/tables/{t['id']}/records").json() for t in played}
            kept = a.create(bots=[1, 2, 3])   # open: never pruned, never archived
    finally:
        a.stop()
    assert all(len(r["hands"]) >= 1 for r in served.values())
    s = start_server(db_url, tmp_path, "--retention", "1s", "--archive", str(archive))
    try:
        rows = poll(lambda: _rows(db_url), lambda r: r["qipai_tables"] == 1)
        assert rows["qipai_tables"] == 1 and rows["qipai_hands"] == 1, rows
        with s.http() as h:
            for tid in served:
                assert h.get(f"/tables/{tid}").status_code == 404
            assert h.get(f"/tables/{kept['id']}").json()["open"] is True
        assert _metric(s, "qipai_tables_archived_total") == 2
        assert _metric(s, "qipai_tables_pruned_total") == 2
        assert _metric(s, "qipai_archive_failures_total") == 0
    finally:
        s.stop()
    files = sorted(archive.glob("*/*.json"))
    assert sorted(f.stem for f in files) == sorted(served), files
    assert not list(archive.rglob("*.tmp"))
    for f in files:
        body = json.loads(f.read_text())
        meta = body.pop("archive")
        assert body == served[f.stem]   # exactly what GET /tables/{id}/records served
        rec = body["hands"][0]["record"]
        assert rec["chain"] and rec["money"]["stake"] == 10, rec.keys()
        closed = datetime.fromtimestamp(meta["closed"], timezone.utc)
        assert f.parent.name == closed.strftime("%Y-%m-%d")
        assert meta["variant"] == "guilin-mahjong" and meta["bots"] == [0, 1, 2, 3]
        assert meta["ended"] == "closed" and meta["total"] == body["total"]
        assert meta["hands_done"] == len(body["hands"]) and meta["stake"] == 10
        text = f.read_text()
        t = next(t for t in (*played, kept) if t["id"] == f.stem)
        for secret in (t["admin"], t["spectator_token"], *t["seats"].values()):
            assert secret not in text
        assert "_hash" not in text and "tokens" not in text
        r = subprocess.run([sys.executable, "-m", "qipai", "verify", str(f)],
                           capture_output=True, text=True, timeout=PATIENCE)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "verified:" in r.stdout
    log = s.log_path.read_text()
    assert log.count(" table_archived ") == 2 and "archive_failed" not in log, log


def test_an_unwritable_archive_keeps_the_table(db_url, tmp_path):
    archive = tmp_path / "archive"
    archive.mkdir()
    # the day's folder cannot be made (a file has its name; root ignores permissions)
    now = datetime.now(timezone.utc)
    blocked = [archive / d.strftime("%Y-%m-%d") for d in (now, now + timedelta(days=1))]
    for b in blocked:
        b.write_text("not a folder")
    s = start_server(db_url, tmp_path, "--retention", "1s", "--archive", str(archive))
    try:
        t = s.create(bots=[1, 2, 3])
        s.close(t)
        # tried at two prunes at least: the table stays, the failure is logged once
        poll(lambda: _metric(s, "qipai_archive_failures_total"), lambda n: n >= 2)
        assert _rows(db_url)["qipai_tables"] == 1
        assert s.info(t["id"])["open"] is False
        assert _metric(s, "qipai_tables_pruned_total") == 0
        log = s.log_path.read_text()
        failed = [x for x in log.splitlines() if " archive_failed " in x]
        assert len(failed) == 1, failed
        assert f"table={t['id']}" in failed[0] and "error=" in failed[0], failed
        # writable again: the next prune archives and deletes it
        for b in blocked:
            b.unlink()
        poll(lambda: _rows(db_url), lambda r: r["qipai_tables"] == 0)
        assert _rows(db_url)["qipai_tables"] == 0
        assert [f.stem for f in archive.glob("*/*.json")] == [t["id"]]
        assert _metric(s, "qipai_tables_archived_total") == 1
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()


def test_a_bad_archive_is_refused_at_start(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for args, said in ((["--retention", "1d", "--archive", str(tmp_path / "none")],
                        "no such folder"),
                       (["--retention", "1d", "--archive", str(a_file)], "not a folder"),
                       (["--archive", str(tmp_path)], "--archive goes with --retention")):
        r = qipai("serve", "--port", "0", "--db", db, *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("error: ") and said in r.stderr, r.stderr
    assert not (tmp_path / "q.db").exists()   # refused before the database was opened


def test_each_cluster_node_archives_the_tables_it_prunes(pg_cluster, tmp_path):
    url = pg_cluster.create_database()
    shared = tmp_path / "shared"   # one folder every node writes (a shared volume)
    shared.mkdir()
    nodes = [start_server(url, tmp_path, "--cluster", "--node-id", name, "--retention", "1s",
                          "--archive", str(shared)) for name in ("a", "b")]
    try:
        made = {}
        for n in nodes:
            t = n.create(bots=[1, 2, 3])
            assert n.info(t["id"])["node"] == n.args[2]
            n.close(t)
            made[t["id"]] = n
        poll(lambda: _rows(url), lambda r: r["qipai_tables"] == 0)
        assert _rows(url)["qipai_tables"] == 0
        assert sorted(f.stem for f in shared.glob("*/*.json")) == sorted(made)
        for tid, n in made.items():   # the node that closed it archived it
            assert f"table_archived table={tid} " in n.log_path.read_text()
            assert _metric(n, "qipai_tables_archived_total") == 1
    finally:
        for n in nodes:
            n.stop()


def test_a_write_that_fails_leaves_no_file(tmp_path, monkeypatch):
    import os

    from qipai.server import archive

    path = tmp_path / "2026-12-08" / "ab12.json"
    archive.write(path, b'{"old": 1}')
    assert path.read_bytes() == b'{"old": 1}'

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive.os, "fsync", no_space)
    try:
        archive.write(path, b'{"new": 2}')
    except OSError as exc:
        assert exc.errno == 28
    else:
        raise AssertionError("the write did not fail")
    # the file is the whole old one, and no temporary file is left
    assert path.read_bytes() == b'{"old": 1}'
    assert sorted(os.listdir(path.parent)) == ["ab12.json"]
