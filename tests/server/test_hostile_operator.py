"""The hostile scenarios of issue 34, each a test against a real ``qipai
serve`` process (SQLite and PostgreSQL), with small limits so they are quick:

* the anonymous spectator lock-out — one client filled the server-wide
  connection limit with spectators of its own table, and every player was
  refused ``TooManyConnections``;
* the anonymous table flood — tables made until ``--max-tables`` blocked
  every legitimate creation, no operator route closed them, and a restart
  brought them back;
* public records — tables, records and replays read by anyone;
* repeated parameters — ``?token=bad&token=GOOD`` took the last value;
* unbounded growth — create-and-close cycles grew the database for ever.
"""

import json
import time

import pytest
import sqlalchemy as sa
from websockets.exceptions import InvalidStatus

from hostkit import PATIENCE, SyncSeat, refusal, start_server
from qipai.host.store import engine_url
from test_keys import bearer, new_key, qipai


def poll(what, until):
    end = time.monotonic() + PATIENCE   # a bound on a hang, not a timing
    while not until(value := what()) and time.monotonic() < end:
        time.sleep(0.05)
    return value


def test_anonymous_spectator_lockout(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--max-connections", "20")   # an open demo
    try:
        mine = s.create(bots=[1, 2, 3])      # the attacker's own table
        theirs = s.create(bots=[2, 3])       # somebody else's: two players to come
        held = []
        try:
            for _ in range(64):              # a table admits 64 spectators
                c = SyncSeat(s, mine["id"], mine["spectator_token"], strict=False)
                msg = c.recv()
                if msg["type"] != "welcome":
                    c.close()
                    break
                held.append(c)
            assert msg["type"] == "error" and msg["code"] == "TooManyConnections", msg
            assert "kept for seated players" in msg["message"]
            # the reserve: the three seats not connected (at least --seat-reserve 2)
            assert len(held) == 20 - 3
            # the players still come in — of the other table, and the attacker's own seat
            seats = [SyncSeat(s, theirs["id"], theirs["seats"][k]) for k in ("0", "1")]
            seats.append(SyncSeat(s, mine["id"], mine["seats"]["0"]))
            for seat in seats:
                assert seat.until("welcome")["type"] == "welcome"
            for seat in seats:
                seat.close()
        finally:
            for c in held:
                c.close()
        with s.http() as h:
            text = h.get("/metrics").text
        assert 'qipai_limit_refusals_total{key="",limit="seat_reserve"} 1.0' in text
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log
    assert log.count("the server reached its limit of spectator connections") == 1


def test_anonymous_table_flood(db_url, tmp_path):
    # the open demo: the flood fills --max-tables, and survives a restart …
    s = start_server(db_url, tmp_path, "--max-tables", "12")
    try:
        flood = {s.create(bots=[1, 2, 3])["id"] for _ in range(12)}
        with s.http() as h:
            r = h.post("/tables", json={"bots": [1, 2, 3]})
            assert r.status_code == 503 and r.json()["error"] == "TooManyTables", r.text
    finally:
        s.stop()
    s = start_server(db_url, tmp_path, "--max-tables", "12")
    try:
        with s.http() as h:
            listed = h.get("/admin/tables").json()   # (a loopback client)
            assert {x["id"] for x in listed} == flood
            assert all(x["key"] is None and x["connected"] == [] for x in listed)
            # … until the operator closes it in one request
            r = h.post("/admin/tables/close", json={"key": ""})
            assert r.status_code == 200, r.text
            done = r.json()
            assert {x["id"] for x in done["closed"]} == flood
            assert done["failed"] == [] and done["unknown"] == []
            assert h.get("/admin/tables").json() == []
            for tid in flood:
                assert h.get(f"/tables/{tid}").json()["open"] is False
            assert h.post("/tables", json={"bots": [1, 2, 3]}).status_code == 201
            # a bad request changes nothing
            for body in ({}, {"ids": ["x"], "all": True}, {"nope": 1}):
                r = h.post("/admin/tables/close", json=body)
                assert r.status_code == 400 and r.json()["error"] == "BadMessage", body
            assert len(h.get("/admin/tables").json()) == 1
    finally:
        s.stop()

    # with keys: no anonymous creation at all, and one key cannot block another
    f = tmp_path / "keys.json"
    alice, mallory = new_key(f, "alice"), new_key(f, "mallory")
    s = start_server(db_url, tmp_path, "--keys", str(f), "--max-tables", "20",
                     "--key-max-tables", "5")
    try:
        with s.http() as h:
            r = h.post("/tables", json={"bots": [1, 2, 3]})
            assert r.status_code == 401 and r.json()["error"] == "NoKey"
            assert h.get("/admin/tables").json()["error"] == "NoKey"
            assert h.post("/admin/tables/close", json={"all": True}).status_code == 401
            for _ in range(5):
                r = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(mallory))
                assert r.status_code == 201
            r = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(mallory))
            assert r.status_code == 429 and r.json()["limit"] == "max_tables", r.text
            mine = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(alice)).json()
            theirs = h.get("/admin/tables?key=mallory", headers=bearer(alice)).json()
            assert len(theirs) == 5 and {x["key"] for x in theirs} == {"mallory"}
            r = h.post("/admin/tables/close", json={"ids": [theirs[0]["id"], "nosuch"]},
                       headers=bearer(alice))
            assert r.json()["unknown"] == ["nosuch"] and len(r.json()["closed"]) == 1
            r = h.post("/admin/tables/close", json={"key": "mallory"}, headers=bearer(alice))
            assert len(r.json()["closed"]) == 4, r.text
            assert h.get("/admin/tables?key=mallory", headers=bearer(alice)).json() == []
            left = h.get("/admin/tables?key=alice", headers=bearer(mallory)).json()
            assert [x["id"] for x in left] == [mine["id"]]
            assert left[0]["idle_seconds"] >= 0 and left[0]["hands_done"] == 0
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()


def test_public_records(db_url, tmp_path):
    f = tmp_path / "keys.json"
    key = new_key(f, "alice")
    s = start_server(db_url, tmp_path, "--keys", str(f), "--seed", "5")
    try:
        with s.http() as h:
            made = h.post("/tables", json={"bots": [0, 1, 2, 3]}, headers=bearer(key)).json()
            other = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(key)).json()
            watcher = SyncSeat(s, made["id"], made["spectator_token"])   # the bots play
            watcher.until("hand_ended")
            watcher.close()
            tid = made["id"]
            for path in ("/tables", "/records", f"/tables/{tid}/records",
                         f"/tables/{tid}/records/0/replay", "/admin/tables"):
                r = h.get(path)
                assert r.status_code == 401 and r.json()["error"] == "NoKey", (path, r.text)
                r = h.get(path, headers=bearer(made["spectator_token"]))
                assert r.status_code == 401, (path, r.text)
            r = h.get(f"/tables/{tid}/records/0/replay", headers=bearer(other["seats"]["0"]))
            assert r.status_code == 403 and r.json()["error"] == "WrongTable"
            r = h.get(f"/tables/{tid}/records/0/replay", headers=bearer(key))
            assert r.status_code == 200, r.text
            assert h.get("/records", headers=bearer(key)).json()[0]["table"] == tid
    finally:
        s.stop()


def test_repeated_parameters(db_url, tmp_path):
    s = start_server(db_url, tmp_path)
    try:
        t = s.create(bots=[1, 2, 3])
        with s.http() as h:
            r = h.get("/admin/tables?key=a&key=b")
            assert r.status_code == 400 and r.json()["error"] == "BadMessage"
        # a wrong token then the right one: refused, not the last value taken
        with pytest.raises(InvalidStatus) as refused:
            SyncSeat(s, t["id"], f"bad&token={t['seats']['0']}", strict=False)
        assert refused.value.response.status_code == 400
        assert json.loads(refused.value.response.body)["error"] == "BadMessage"
        assert refusal(s, t["id"], "bad")["code"] == "BadToken"
        assert s.info(t["id"])["connected"] == []
    finally:
        s.stop()


def _rows(db_url: str) -> dict[str, int]:
    eng = sa.create_engine(engine_url(db_url))
    try:
        with eng.connect() as c:
            out = {n: c.execute(sa.text(f"select count(*) from {n}")).scalar()
                   for n in ("qipai_tables", "qipai_hands", "qipai_actions", "qipai_events")}
            if eng.dialect.name == "sqlite":
                out["pages"] = c.execute(sa.text("pragma page_count")).scalar()
                out["free"] = c.execute(sa.text("pragma freelist_count")).scalar()
            return out
    finally:
        eng.dispose()


def test_unbounded_growth(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--retention", "1s")
    try:
        kept = s.create(bots=[1, 2, 3])   # open: never pruned
        pages = []
        for _ in range(2):
            gone = []
            for _ in range(40):
                t = s.create(bots=[1, 2, 3])
                s.close(t)
                gone.append(t["id"])
            rows = poll(lambda: _rows(db_url), lambda r: r["qipai_tables"] == 1)
            assert rows["qipai_tables"] == 1 and rows["qipai_hands"] == 1, rows
            assert rows["qipai_events"] == 2, rows   # the kept table's created, hand_started
            pages.append((rows.get("pages", 0), rows.get("free", 0)))
            with s.http() as h:
                for tid in gone[:3]:
                    r = h.get(f"/tables/{tid}")
                    assert r.status_code == 404 and r.json()["error"] == "UnknownTable"
                    assert h.get(f"/tables/{tid}/records").status_code == 404
                assert h.get(f"/tables/{kept['id']}").json()["open"] is True
        # SQLite: the pages in use come back to what they were (the pruned tables' pages
        # are free), and the file grows by less than a round's 40 tables (about a
        # dozen pages of 4 KiB) — its high-water mark is how many closed tables wait
        # for their prune at once, which a loaded machine stretches, not how many
        # were ever made
        (size0, free0), (size1, free1) = pages
        assert size1 - free1 <= size0 - free0 + 2, pages
        assert size1 <= size0 + 10, pages
        with s.http() as h:
            text = h.get("/metrics").text
        assert "qipai_tables_pruned_total 80.0" in text
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log and "not pruned" not in log
