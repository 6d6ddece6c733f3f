"""A closed table leaves the server's memory: ``/health`` no longer counts
it, ``GET /tables/{id}`` answers for it from the database (its totals the
sum of its finished hands), and a close asked again answers as the first
did — the admin token still needed.

A closed table kept in memory would cost about 25 KB until the server
stopped (2,000 tables made and closed would take a server from 50 to 113
MB), and ``/health`` would report it among the tables served."""

from __future__ import annotations

from hostkit import SyncSeat, create


def test_a_closed_table_is_let_go_and_answered_from_the_database(served):
    t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])
    other = create(served, "guilin-zipai", bots=[1, 2])
    watch = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
    try:
        watch.until("welcome")   # the bots play while the table is watched
        for _ in range(2):
            watch.until("hand_ended")
    finally:
        watch.close()
    admin = {"Authorization": f"Bearer {t['admin']}"}
    with served.http() as h:
        assert h.get("/health").json()["tables"] == 2
        r = h.post(f"/tables/{t['id']}/close", headers=admin)
        assert r.status_code == 200, r.text
        closed = r.json()
        assert closed["open"] is False
        assert h.get("/health").json()["tables"] == 1         # the other table only
        assert [x["id"] for x in h.get("/tables").json()] == [other["id"]]

        info = h.get(f"/tables/{t['id']}")
        assert info.status_code == 200, info.text
        info = info.json()
        recs = h.get(f"/tables/{t['id']}/records").json()
        assert len(recs["hands"]) >= 2
        # the totals: the sum of the finished hands' nets, one per seat
        by_seat = [sum(hand["record"]["result"]["net"][s] for hand in recs["hands"])
                   for s in range(4)]
        assert info == {"id": t["id"], "spec": "guilin-mahjong", "variant": "guilin-mahjong",
                        "players": 4, "bots": [0, 1, 2, 3], "rng": "seeded", "open": False,
                        "hands_done": len(recs["hands"]), "totals": by_seat, "names": {},
                        "hands": None, "ready": False, "ended": "closed", "tally": None,
                        "levels": {"0": "normal", "1": "normal", "2": "normal", "3": "normal"},
                        # no stake: no money (issue 36, item 2)
                        "stake": None, "rake": None, "money_totals": None, "house": None}
        assert closed["totals"] == by_seat == recs["total"]
        assert _closed_at(served.db, t["id"]) is not None   # when: for the retention
        assert _closed_at(served.db, other["id"]) is None

        # asked again: the same answer, and only with the admin token
        again = h.post(f"/tables/{t['id']}/close", headers=admin)
        assert again.status_code == 200 and again.json() == closed, again.text
        for headers in ({}, {"Authorization": f"Bearer {other['admin']}"},
                        {"Authorization": f"Bearer {t['spectator_token']}"}):
            r = h.post(f"/tables/{t['id']}/close", headers=headers)
            assert r.status_code == 403 and r.json()["error"] == "BadToken", r.text
        r = h.post("/tables/nosuchtable/close", headers=admin)
        assert r.status_code == 404 and r.json()["error"] == "UnknownTable", r.text

        # a table closed before its first hand ended: zeros, one per seat
        fresh = create(served, "guilin-zipai", bots=[1, 2])
        r = h.post(f"/tables/{fresh['id']}/close",
                   headers={"Authorization": f"Bearer {fresh['admin']}"})
        assert r.status_code == 200 and r.json()["totals"] == [0, 0, 0], r.text
        got = h.get(f"/tables/{fresh['id']}").json()
        assert (got["players"], got["bots"], got["hands_done"], got["totals"]) == \
            (3, [1, 2], 0, [0, 0, 0])
    late = SyncSeat(served, t["id"], t["spectator_token"])
    assert late.recv()["code"] == "UnknownTable"
    late.close()


def _closed_at(db: str, tid: str) -> float | None:
    import sqlalchemy as sa

    from qipai.host.store import engine_url, tables

    engine = sa.create_engine(engine_url(db))
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(tables.c.closed).where(tables.c.id == tid)).scalar_one()
    finally:
        engine.dispose()


def test_a_close_asked_again_while_the_first_waits_gets_its_outcome(tmp_path):
    """A close sent again while the first still waits for the database (an
    outside program holds the SQLite file locked) waits for the first's
    outcome: answered 200 ``{"open": false}`` at once, with nothing
    written, the table would still be open, and a crash would keep it so."""
    import threading

    import httpx
    from hostkit import PATIENCE, start_server
    from test_lock_lost import poll
    from test_sqlite_locked import locked

    path = tmp_path / "q.db"
    s = start_server(f"sqlite:///{path}", tmp_path, "--seed", "3", "--stall-seconds", "0.2")
    try:
        t = s.create("guilin-zipai", bots=[1, 2])
        admin = {"Authorization": f"Bearer {t['admin']}"}
        answers: dict[str, tuple] = {}

        def close(name: str) -> None:
            with httpx.Client(base_url=s.url, timeout=PATIENCE) as h:
                r = h.post(f"/tables/{t['id']}/close", headers=admin)
                # what the table is the moment the close is answered
                answers[name] = (r.status_code, r.json(), h.get(f"/tables/{t['id']}").json())

        with s.http() as h, locked(path):
            first = threading.Thread(target=close, args=("first",))
            first.start()
            # the first close's write waits for the lock
            assert poll(lambda: h.get("/health").json()["status"],
                        lambda st: st == "stalled") == "stalled"
            second = threading.Thread(target=close, args=("second",))
            second.start()
            second.join(1.0)   # a wait, not a timing: a wrong early answer would come by now
        first.join()
        second.join()
        for name in ("first", "second"):
            status, body, info = answers[name]
            assert status == 200 and body["open"] is False, (name, body)
            assert info["open"] is False, (name, info)   # written before it was answered
        assert answers["first"][1] == answers["second"][1]
    finally:
        s.stop()
