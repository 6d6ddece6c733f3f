"""``qipai serve --max-tables N``: a ``POST /tables`` beyond N open tables is
answered 503 ``TooManyTables`` naming the limit, and nothing is written;
closing one makes room; the open tables restored at start count (all of
them are served, even beyond the limit).

Without a limit anyone could create tables at will (5,000 in 8.5 s take
the server's memory from 51 to 160 MB, every one replayed at each start)."""

from __future__ import annotations

from hostkit import start_server


def test_tables_beyond_the_limit_are_refused(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    served = start_server(db, tmp_path, "--seed", "3", "--max-tables", "2")
    try:
        a = served.create(bots=[1, 2, 3])
        b = served.create("guilin-zipai")
        with served.http() as h:
            r = h.post("/tables", json={"variant": "guangxi-mahjong"})
            assert r.status_code == 503, r.text
            assert r.json()["error"] == "TooManyTables"
            assert "2 open tables, its limit (qipai serve --max-tables 2)" in r.json()["message"]
            assert len(h.get("/tables").json()) == 2      # nothing made
            assert h.get("/health").json()["tables"] == 2
        served.close(a)
        c = served.create("guangxi-mahjong")             # room again
    finally:
        served.stop()
    again = start_server(db, tmp_path, "--seed", "3", "--max-tables", "1")
    try:
        with again.http() as h:
            # both open tables are restored and served, though over the limit
            assert {t["id"] for t in h.get("/tables").json()} == {b["id"], c["id"]}
            r = h.post("/tables", json={})
            assert r.status_code == 503 and r.json()["error"] == "TooManyTables", r.text
            assert "2 open tables, its limit (qipai serve --max-tables 1)" in r.json()["message"]
    finally:
        again.stop()
