"""Joint deals (issue 36 item 3) against a real server: two human seats
commit and reveal their values, the hand is dealt from the deal function of
the server seed and the values, and the record verifies; a seat that
withholds is recorded so; bad seat values are refused by name; a restart
mid-step resumes it; every human seat gets its say — the first hand waits
for every player to sit down, an offline seat is waited for until the
deadline, one offline in 托管 is not."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

import pytest

from hostkit import SyncSeat, choose, start_server

SEEDED = ("--seed", "5", "--seat-values", "--tuoguan-delay", "0")


def make(served, **body: Any) -> dict[str, Any]:
    with served.http() as h:
        r = h.post("/tables", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def get(served, path: str) -> dict[str, Any]:
    with served.http() as h:
        r = h.get(path)
    assert r.status_code == 200, r.text
    return r.json()


def seat(served, t: dict[str, Any], s: int, **kw: Any) -> SyncSeat:
    return SyncSeat(served, t["id"], t["seats"][str(s)], **kw)


def events(served, tid: str, kind: str, hand: int) -> dict[str, Any]:
    """The data of table ``tid``'s one ``kind`` event of ``hand`` (read
    from the outbox table)."""
    import sqlalchemy as sa

    from qipai.host.store import engine_url
    from qipai.host.store.schema import events as ev

    eng = sa.create_engine(engine_url(served.db))
    try:
        with eng.connect() as c:
            rows = c.execute(sa.select(ev.c.body).where(ev.c.table_id == tid,
                                                        ev.c.kind == kind)).all()
    finally:
        eng.dispose()
    found = [json.loads(r[0]) for r in rows if json.loads(r[0])["hand"] == hand]
    assert len(found) == 1, found
    return found[0]


def value() -> tuple[str, str]:
    v = secrets.token_bytes(32)
    return v.hex(), hashlib.sha256(v).hexdigest()


def step(c: SyncSeat, phase: str, hand: int = 0) -> dict[str, Any]:
    return c.until("seat_values", lambda m: m["phase"] == phase and m["hand"] == hand)


def play_out(c: SyncSeat, *others: SyncSeat) -> dict[str, Any]:
    """Answer every decision of ``c`` and ``others`` until ``c`` sees the hand end."""
    seats = [c, *others]
    while True:
        for x in seats:
            try:
                m = x.recv(timeout=0.02) if len(seats) > 1 else x.recv()
            except TimeoutError:
                continue
            if m["type"] == "hand_ended" and x is c:
                return m
            if m["type"] == "decide":
                x.send({"type": "act", "hand": m["hand"], "seq": m["seq"],
                        "action": choose(m["legal"])}, paced=True)


def chain_holds(served, tid: str) -> None:
    """``qipai verify --db`` (a CLI process) finds table ``tid``'s journal
    whole: a joint deal chains its hand row again over the dealt commitment."""
    import subprocess
    import sys

    from hostkit import PATIENCE

    p = subprocess.run([sys.executable, "-m", "qipai", "verify", "--db", served.db,
                        "--table", tid], capture_output=True, text=True, timeout=PATIENCE)
    assert p.returncode == 0, p.stdout + p.stderr


def verify(rec: dict[str, Any]) -> list[str]:
    from qipai.core.fair import verify_record
    from qipai.core.records import decode_record

    return verify_record(decode_record(rec))


@pytest.fixture
def served(db_url, tmp_path):
    """A seeded server with seat values on (SQLite and PostgreSQL)."""
    s = start_server(db_url, tmp_path, *SEEDED, "--seat-value-timeout", "600")
    yield s
    s.stop()


def test_two_seats_commit_reveal_and_the_record_verifies(served):
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    try:
        first = step(a, "commit")
        assert first["seat"] == 0 and first["waiting"] in ([0], [0, 1])
        step(b, "commit")
        va, ca = value()
        vb, cb = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        r = step(a, "reveal")
        assert r["commitments"] == {"0": ca, "1": cb}
        step(b, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        b.send({"type": "seat_reveal", "hand": 0, "value": vb})
        w = a.until("welcome")
        assert w["hand"] == 0 and w["rng"] == "joint"
        assert get(served, f"/tables/{t['id']}")["rng"] == "joint"
        b.until("welcome")
        play_out(a, b)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert rec["rng"] == "joint"
        j = rec["joint"]
        assert [s.get("value") for s in j["seats"]] == [va, vb, None, None]
        assert [s.get("commitment") for s in j["seats"]] == [ca, cb, None, None]
        assert j["server_commitment"] == r["server_commitment"]
        assert verify(rec) == []
        # qipai verify says so; the operator's events carry the commitments, then the reveal
        from click.testing import CliRunner

        from qipai.cli import cli

        out = CliRunner().invoke(cli, ["verify", "-"], input=json.dumps(rec))
        assert out.exit_code == 0 and "ok   joint: the server seed matches" in out.output, \
            out.output
        started, ended = events(served, t["id"], "hand_started", 0), \
            events(served, t["id"], "hand_ended", 0)
        assert started["joint"] == {"server_commitment": r["server_commitment"],
                                    "commitments": [ca, cb, None, None]}
        assert started["commitment"] == rec["commitment"]
        assert ended["reveal"]["joint"] == j and ended["reveal"]["seed"] == rec["seed"]
        assert ended["chain"] == rec["chain"]["head"]
        chain_holds(served, t["id"])
    finally:
        a.close()
        b.close()


def test_a_seat_that_withholds_is_recorded(tmp_path):
    served = start_server(f"sqlite:///{tmp_path / 'w.db'}", tmp_path, *SEEDED,
                          "--seat-value-timeout", "3", "--turn-timeout", "0.1")
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    va, ca = value()
    vb, cb = value()
    try:   # (committed at once, well inside the commit phase's 3 s)
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        step(a, "reveal")
        b.close()   # seat 1 withholds: its value never comes
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        a.until("welcome")      # the reveal phase's deadline passed
        a.until("hand_ended")   # every decision timed out
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        seats = rec["joint"]["seats"]
        assert seats[0] == {"commitment": ca, "value": va}
        assert seats[1] == {"commitment": cb, "withheld": True}
        assert seats[2] == {} and seats[3] == {}
        assert verify(rec) == []
    finally:
        a.close()
        b.close()
        served.stop()


def error(c: SyncSeat) -> dict[str, Any]:
    return c.until("error", lambda m: m["code"] != "Throttled")


def test_bad_seat_values_are_refused_by_name_and_change_nothing(served):
    t = make(served, bots=[2, 3])
    a = seat(served, t, 0, strict=False)
    b = seat(served, t, 1, strict=False)
    w = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
    try:
        step(a, "commit")
        step(w, "commit")
        va, ca = value()
        vb, cb = value()
        for bad, code in (("ab", "BadValue"), ("zz" * 32, "BadValue"), (ca + "00", "BadValue"),
                          ("aa" * 20 + " " * 24, "BadValue")):   # (64 characters, 20 bytes)
            a.send({"type": "seat_commit", "hand": 0, "commitment": bad}, paced=True)
            e = error(a)
            assert e["code"] == code and "seat commitment" in e["message"], e
        a.send({"type": "seat_commit", "hand": 1, "commitment": ca}, paced=True)
        assert error(a)["code"] == "NotNow"          # another hand
        a.send({"type": "seat_reveal", "hand": 0, "value": va}, paced=True)
        assert error(a)["code"] == "NotNow"          # out of order: no reveal yet
        w.send({"type": "seat_commit", "hand": 0, "commitment": ca}, paced=True)
        assert error(w)["code"] == "Spectator"
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca}, paced=True)
        s = a.until("seat_values", lambda m: m["commitments"].get("0") == ca)
        assert s["waiting"] == [1]
        a.send({"type": "seat_commit", "hand": 0, "commitment": cb}, paced=True)
        e = error(a)
        assert e["code"] == "AlreadyDone", e                 # sent twice
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb}, paced=True)
        step(a, "reveal")
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca}, paced=True)
        assert error(a)["code"] == "AlreadyDone"
        a.send({"type": "seat_reveal", "hand": 0, "value": vb}, paced=True)   # not its value
        e = error(a)
        assert e["code"] == "BadReveal" and ca in e["message"], e
        a.send({"type": "seat_reveal", "hand": 0, "value": "12"}, paced=True)
        assert error(a)["code"] == "BadValue"
        a.send({"type": "seat_reveal", "hand": 0, "value": va[:40] + " " * 24}, paced=True)
        assert error(a)["code"] == "BadValue"
        a.send({"type": "seat_reveal", "hand": 0, "value": va}, paced=True)
        a.until("seat_values", lambda m: m["revealed"] == [0])
        a.send({"type": "seat_reveal", "hand": 0, "value": va}, paced=True)
        assert error(a)["code"] == "AlreadyDone"
        b.send({"type": "seat_reveal", "hand": 0, "value": vb}, paced=True)
        a.until("welcome")
        w.until("welcome")
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca}, paced=True)
        e = error(a)
        assert e["code"] == "NotNow" and "dealt" in e["message"], e   # after the deal
        a.send({"type": "seat_reveal", "hand": 0, "value": va}, paced=True)
        assert error(a)["code"] == "NotNow"
        served.close(t)
    finally:
        for c in (a, b, w):
            c.close()


def test_a_table_without_seat_values_refuses_them(served):
    t = make(served, bots=[1, 2, 3], seat_values=False)
    a = seat(served, t, 0, strict=False)
    try:
        assert a.recv()["type"] == "welcome"    # dealt at once, as before
        _, ca = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca}, paced=True)
        assert error(a)["code"] == "NotNow"
    finally:
        a.close()
    with served.http() as h:
        r = h.post("/tables", json={"seat_values": "yes"})
    assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text


def test_no_seat_sees_the_hand_before_the_deal_and_no_seed_goes_out(served):
    """During the step nobody is welcomed (the provisional deal is never
    shown) and the server seed is in no message before the hand ends."""
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    try:
        s = step(a, "commit")
        step(b, "commit")
        va, ca = value()
        vb, cb = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        step(a, "reveal")
        step(b, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        b.send({"type": "seat_reveal", "hand": 0, "value": vb})
        a.until("welcome")
        b.until("welcome")
        before = [m["type"] for m in a.received[:a.received.index(
            next(m for m in a.received if m["type"] == "welcome"))]]
        assert set(before) <= {"seat_values", "seat_conns", "presence"}, before
        assert a.received[0]["type"] == "seat_values"
        ended = play_out(a, b)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        seed_hex = rec["joint"]["server_seed"]
        assert hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest() == s["server_commitment"]
        upto = a.raw[:a.raw.index(next(r for r in a.raw if '"hand_ended"' in r))]
        assert not any(seed_hex in r for r in upto)
        assert ended["hand"] == 0
    finally:
        a.close()
        b.close()


def test_the_provisional_dealer_is_not_shown_during_the_step(served):
    """A mahjong table's first dealer is drawn with the deal: during the
    step GET /tables/{id} showed the provisional deal's — the dealer if
    every seat withheld — so a player could weigh withholding.  It shows
    none until the deal; then the dealt hand's."""
    t = make(served, bots=[1, 2, 3])
    a = seat(served, t, 0)
    try:
        step(a, "commit")
        info = get(served, f"/tables/{t['id']}")
        assert info["dealer"] is None, info
        assert all(info2["dealer"] is None for info2 in get(served, "/tables")
                   if info2["id"] == t["id"])
        va, ca = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        step(a, "reveal")
        assert get(served, f"/tables/{t['id']}")["dealer"] is None
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        w = a.until("welcome")
        assert get(served, f"/tables/{t['id']}")["dealer"] == w["view"]["dealer"]
    finally:
        a.close()


def test_a_spectator_alone_does_not_deal_the_hand(served):
    """A spectator watching before any player (an operator's watcher, a
    lobby): the commit phase asked nobody, so the hand was dealt at once
    from the server seed alone.  It waits, without a clock, for the human
    seats; its deadline starts when they have come, and the players' values
    go into the deal."""
    t = make(served, bots=[2, 3])
    w = SyncSeat(served, t["id"], t["spectator_token"])
    a = b = None
    try:
        s = step(w, "commit")
        assert (s["waiting"], s["unseated"], s["deadline"]) == ([0, 1], [0, 1], None), s
        a = seat(served, t, 0)
        b = seat(served, t, 1)
        va, ca = value()
        vb, cb = value()
        assert a.recv()["type"] == "seat_values"   # (not dealt: no welcome first)
        step(a, "commit")
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        step(a, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        b.send({"type": "seat_reveal", "hand": 0, "value": vb})
        a.until("welcome")
        w.until("welcome")
        started = events(served, t["id"], "hand_started", 0)
        assert started["joint"]["commitments"] == [ca, cb, None, None], started
    finally:
        w.close()
        for c in (a, b):
            if c is not None:
                c.close()


def restart(served, tmp_path, *args: str):
    served.kill()
    served.log.close()
    return start_server(served.db, tmp_path, *args)


@pytest.mark.parametrize("phase", ["commit", "reveal"])
def test_a_restart_mid_step_resumes_it(db_url, tmp_path, phase):
    args = (*SEEDED, "--seat-value-timeout", "600")
    served = start_server(db_url, tmp_path, *args)
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    va, ca = value()
    vb, cb = value()
    try:
        step(a, "commit")
        step(b, "commit")
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        if phase == "reveal":
            b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
            step(a, "reveal")
            a.send({"type": "seat_reveal", "hand": 0, "value": va})
            a.until("seat_values", lambda m: m["revealed"] == [0])
        else:
            b.until("seat_values", lambda m: m["commitments"].get("0") == ca)
    finally:
        a.close()
        b.close()
    served = restart(served, tmp_path, *args)   # SIGKILL, and up again
    # (seat 1 first: an offline seat that has not committed is waited for,
    # and one that has committed is too)
    b = seat(served, t, 1)
    a = seat(served, t, 0)
    try:
        step(b, phase)
        s = step(a, phase)
        if phase == "commit":
            assert s["commitments"] == {"0": ca}
            b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
            step(a, "reveal")
            a.send({"type": "seat_reveal", "hand": 0, "value": va})
        else:
            assert s["commitments"] == {"0": ca, "1": cb} and s["revealed"] == [0]
        b.send({"type": "seat_reveal", "hand": 0, "value": vb})
        a.until("welcome")
        play_out(a, b)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert [x.get("value") for x in rec["joint"]["seats"][:2]] == [va, vb]
        assert verify(rec) == []
        chain_holds(served, t["id"])
    finally:
        a.close()
        b.close()
        served.stop()


def test_qipai_connect_makes_commits_and_reveals_its_value(served):
    import re
    import subprocess
    import sys

    t = make(served, bots=[1, 2, 3])
    url = served.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    r = subprocess.run([sys.executable, "-m", "qipai", "connect", "--auto", "--hands", "1", url],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    found = re.search(r"your value: ([0-9a-f]{64})", r.stdout)
    assert found, r.stdout
    rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
    assert rec["joint"]["seats"][0]["value"] == found.group(1)
    assert verify(rec) == []


def test_a_room_deals_each_hand_jointly_then_asks_ready(served):
    """A room of two hands: each hand's seat-value step comes first, then
    (after the first hand) its ready step; both records verify."""
    t = make(served, bots=[1, 2, 3], hands=2)
    a = seat(served, t, 0)
    try:
        for hand in (0, 1):
            s = step(a, "commit", hand)
            assert s["waiting"] == [0]
            v, c = value()
            a.send({"type": "seat_commit", "hand": hand, "commitment": c})
            step(a, "reveal", hand)
            a.send({"type": "seat_reveal", "hand": hand, "value": v})
            w = a.until("welcome", lambda m: m["hand"] == hand)
            rs = w.get("ready_step")
            if hand == 1:   # the ready step begins at the deal
                assert rs is not None and rs["waiting"] == [0]
                a.send({"type": "ready", "hand": 1}, paced=True)
            else:
                assert rs is None
            play_out(a)
        a.until("tally")
        recs = get(served, f"/tables/{t['id']}/records")["hands"]
        assert len(recs) == 2
        for h in recs:
            assert h["record"]["rng"] == "joint" and verify(h["record"]) == []
        chain_holds(served, t["id"])
    finally:
        a.close()


def test_a_table_closes_during_its_step(served):
    t = make(served, bots=[2, 3])
    a = seat(served, t, 0)
    try:
        step(a, "commit")
        served.close(t)
        assert a.until("closed")
        info = served.info(t["id"])
        assert info["open"] is False
    finally:
        a.close()


def test_retention_prunes_a_closed_tables_seat_values(db_url, tmp_path):
    import time

    import sqlalchemy as sa

    from qipai.host.store import engine_url
    from qipai.host.store.schema import seat_values

    served = start_server(db_url, tmp_path, *SEEDED, "--retention", "1s")
    eng = sa.create_engine(engine_url(db_url))

    def rows() -> int:
        with eng.connect() as c:
            return len(c.execute(sa.select(seat_values)).all())

    try:
        t = make(served, bots=[1, 2, 3])
        a = seat(served, t, 0)
        _, ca = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        step(a, "reveal")
        assert rows() == 1
        a.close()
        served.close(t)
        end = time.monotonic() + 60   # a bound on a hang, not a timing
        while rows() and time.monotonic() < end:
            time.sleep(0.05)
        assert rows() == 0
        with served.http() as h:
            assert h.get(f"/tables/{t['id']}").status_code == 404
    finally:
        eng.dispose()
        served.stop()


def test_a_colluding_seat_cannot_move_the_deal(served):
    """Seat 1 colludes with the server: it sees seat 0's commitment (public)
    but never its value before the hand ends, and once committed it can
    reveal nothing but its own value — every other value is refused — so
    the deal is the deal function of the committed values, as verify shows."""
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1, strict=False)
    try:
        va, ca = value()
        vb, cb = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        b.until("seat_values", lambda m: m["commitments"].get("0") == ca)
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        step(b, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        b.until("seat_values", lambda m: m["revealed"] == [0])
        for _ in range(5):   # grinding: any other value is refused, nothing changed
            other, _ = value()
            b.send({"type": "seat_reveal", "hand": 0, "value": other}, paced=True)
            assert error(b)["code"] == "BadReveal"
        b.send({"type": "seat_reveal", "hand": 0, "value": vb}, paced=True)
        b.until("welcome")
        b.strict = True
        play_out(a, b)
        assert not any(va in r for r in b.raw if '"hand_ended"' not in r)   # never seen
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        from qipai.core.joint import deal_seed

        j = rec["joint"]
        assert rec["seed"] == deal_seed(bytes.fromhex(j["server_seed"]), 0, [va, vb, None, None])
        assert verify(rec) == []
    finally:
        a.close()
        b.close()


def test_a_joint_deal_with_a_stake_verifies_both(served):
    t = make(served, bots=[1, 2, 3], stake=10, rake={"percent": 5, "cap": 30})
    a = seat(served, t, 0)
    try:
        v, c = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": c})
        step(a, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": v})
        a.until("welcome")
        play_out(a)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert rec["joint"]["seats"][0]["value"] == v and rec["money"]["stake"] == 10
        assert verify(rec) == []
    finally:
        a.close()


def deal_both(a: SyncSeat, b: SyncSeat, hand: int = 0) -> tuple[str, str]:
    """Seats ``a`` and ``b`` commit and reveal at once; both welcomed to
    the dealt hand.  Their values."""
    va, ca = value()
    vb, cb = value()
    a.send({"type": "seat_commit", "hand": hand, "commitment": ca})
    b.send({"type": "seat_commit", "hand": hand, "commitment": cb})
    step(a, "reveal", hand)
    step(b, "reveal", hand)
    a.send({"type": "seat_reveal", "hand": hand, "value": va})
    b.send({"type": "seat_reveal", "hand": hand, "value": vb})
    a.until("welcome", lambda m: m["hand"] == hand)
    b.until("welcome", lambda m: m["hand"] == hand)
    return va, vb


def gone(served, tid: str, online: list[int]) -> None:
    """Wait until the server has seen the seats not in ``online`` leave
    (``GET /tables/{id}``'s ``connected``: in a step, ``presence`` is held
    for the welcome at the deal)."""
    import time

    from hostkit import PATIENCE

    end = time.monotonic() + PATIENCE   # a bound on a hang, not a timing
    while served.info(tid)["connected"] != online:
        assert time.monotonic() < end, served.info(tid)
        time.sleep(0.05)


def stored_joint(served, tid: str, hand: int) -> dict[str, Any]:
    """The ``joint`` column of a dealt hand's row (read from the database)."""
    import sqlalchemy as sa

    from qipai.host.store import engine_url
    from qipai.host.store.schema import hands

    eng = sa.create_engine(engine_url(served.db))
    try:
        with eng.connect() as c:
            raw = c.execute(sa.select(hands.c.joint).where(hands.c.table_id == tid,
                                                           hands.c.hand == hand)).scalar_one()
    finally:
        eng.dispose()
    assert raw is not None, f"hand {hand} is not dealt"
    return json.loads(raw)


def test_the_first_hand_waits_for_every_player_to_sit_down(served):
    """Seat 1 connects after seat 0 has committed.  The first hand's commit
    phase has no clock (``deadline`` null, seat 1 ``unseated``) until seat
    1 has come, then the clock starts; seat 1 commits and both values go
    into hand 0.  (An audit: a seat not connected yet counted empty at
    once, so hand 0 was dealt from seat 0's value alone — which a server
    colluding with seat 0 could have picked.)"""
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), None
    va, ca = value()
    vb, cb = value()
    try:
        s = step(a, "commit")
        assert (s["unseated"], s["deadline"], s["waiting"]) == ([1], None, [0, 1]), s
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        s = a.until("seat_values", lambda m: m["commitments"].get("0") == ca)
        assert (s["phase"], s["unseated"], s["deadline"], s["waiting"]) == \
            ("commit", [1], None, [1]), s
        b = seat(served, t, 1)
        s = step(b, "commit")
        assert s["unseated"] == [] and s["deadline"] is not None and s["waiting"] == [1], s
        s = a.until("seat_values", lambda m: m["deadline"] is not None)
        assert (s["phase"], s["unseated"], s["waiting"]) == ("commit", [], [1]), s
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        r = step(a, "reveal")
        assert r["commitments"] == {"0": ca, "1": cb}, r
        step(b, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        b.send({"type": "seat_reveal", "hand": 0, "value": vb})
        a.until("welcome")
        b.until("welcome")
        play_out(a, b)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert [x.get("value") for x in rec["joint"]["seats"]] == [va, vb, None, None]
        assert verify(rec) == []
    finally:
        a.close()
        if b is not None:
            b.close()


def test_a_restart_before_the_first_deal_still_waits_for_every_player(db_url, tmp_path):
    """Seat 0 commits and goes; the server restarts before the first deal.
    Seat 0 has sat down (its commitment is stored); seat 1 never came: a
    spectator sees the phase wait for it without a clock.  Seat 1 comes,
    the clock starts, and both values — seat 0's revealed after it comes
    back — go into hand 0."""
    args = (*SEEDED, "--seat-value-timeout", "600")
    served = start_server(db_url, tmp_path, *args)
    t = make(served, bots=[2, 3])
    a = seat(served, t, 0)
    va, ca = value()
    vb, cb = value()
    try:
        step(a, "commit")
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        a.until("seat_values", lambda m: m["commitments"].get("0") == ca)
    finally:
        a.close()
    served = restart(served, tmp_path, *args)
    w = SyncSeat(served, t["id"], t["spectator_token"])
    a = b = None
    try:
        s = step(w, "commit")
        assert (s["commitments"], s["unseated"], s["deadline"], s["waiting"]) == \
            ({"0": ca}, [1], None, [1]), s
        b = seat(served, t, 1)
        s = step(b, "commit")
        assert s["unseated"] == [] and s["deadline"] is not None and s["waiting"] == [1], s
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        r = step(b, "reveal")
        assert r["waiting"] == [0, 1], r   # seat 0, committed and offline, too
        b.send({"type": "seat_reveal", "hand": 0, "value": vb})
        a = seat(served, t, 0)
        step(a, "reveal")
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        a.until("welcome")
        play_out(a, b)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert [x.get("value") for x in rec["joint"]["seats"]] == [va, vb, None, None]
        assert verify(rec) == []
    finally:
        for c in (w, a, b):
            if c is not None:
                c.close()
        served.stop()


def test_an_offline_player_is_waited_for_until_the_deadline(db_url, tmp_path):
    """Hand 1: seat 1 (not in 托管) went offline after hand 0.  Seat 0's
    commitment does not end the commit phase: seat 1 is waited for until
    the deadline, then counts empty (``{}``, not withheld)."""
    import time

    served = start_server(db_url, tmp_path, *SEEDED, "--seat-value-timeout", "8")
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    try:
        deal_both(a, b)
        play_out(a, b)
        step(a, "commit", 1)   # (hand 1's step, seat 1 still online: it leaves now)
        b.close()
        gone(served, t["id"], [0])
        v, c = value()
        a.send({"type": "seat_commit", "hand": 1, "commitment": c})
        s = a.until("seat_values", lambda m: m["hand"] == 1 and m["commitments"].get("0") == c)
        assert (s["phase"], s["waiting"], s["unseated"]) == ("commit", [1], []), s
        assert s["deadline"] is not None
        r = step(a, "reveal", 1)
        # (the server moved on at the deadline, not before: 0.5 s of clock slack)
        assert time.time() >= s["deadline"] - 0.5, (time.time(), s["deadline"])
        assert r["commitments"] == {"0": c} and r["waiting"] == [0], r
        a.send({"type": "seat_reveal", "hand": 1, "value": v})
        a.until("welcome", lambda m: m["hand"] == 1)
        assert events(served, t["id"], "hand_started", 1)["joint"]["commitments"] == \
            [c, None, None, None]
        seats = stored_joint(served, t["id"], 1)["seats"]
        assert seats[0] == {"commitment": c, "value": v} and seats[1] == {}, seats
    finally:
        a.close()
        b.close()
        served.stop()


def test_an_offline_player_in_tuoguan_is_not_waited_for(served):
    """Hand 1: seat 1 put itself in 托管 and went offline.  The bot plays it,
    and the commit phase does not wait for it (600 s): seat 0's commitment
    ends it; seat 1 counts empty."""
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    try:
        deal_both(a, b)
        b.send({"type": "tuoguan", "on": True})
        a.until("presence", lambda m: m["tuoguan"] == [1])
        b.close()
        a.until("presence", lambda m: m["online"] == [0])
        play_out(a)
        s = step(a, "commit", 1)
        assert s["waiting"] == [0] and s["deadline"] is not None, s
        v, c = value()
        a.send({"type": "seat_commit", "hand": 1, "commitment": c})
        r = step(a, "reveal", 1)
        assert r["commitments"] == {"0": c} and r["waiting"] == [0], r
        a.send({"type": "seat_reveal", "hand": 1, "value": v})
        a.until("welcome", lambda m: m["hand"] == 1)
        assert events(served, t["id"], "hand_started", 1)["joint"]["commitments"] == \
            [c, None, None, None]
        assert stored_joint(served, t["id"], 1)["seats"][1] == {}
    finally:
        a.close()
        b.close()
