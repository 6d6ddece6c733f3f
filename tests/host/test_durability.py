"""SIGKILL mid-hand, restart: the table goes on and its record is the
record of an uninterrupted run of the same actions."""

from __future__ import annotations

import hashlib
import time

import msgspec
import pytest

from hostkit import SyncSeat, action_json, choose, create, start_server
from qipai.bots import hand_seed
from qipai.core.model import Action
from qipai.core.records import decode_record, record_of, replay_check
from qipai.core.ruleset import load
from qipai.core.table import Table

SEED = 5
ACTION = msgspec.json.Decoder(Action)


def conduct(seats: list[SyncSeat], local: Table, steps: int | None) -> dict | None:
    """Answer decisions one at a time, the lowest deciding seat first (as
    the local mirror table says), applying each acknowledged action to
    ``local`` too.  Stops after ``steps`` actions (None: the hand's end) and
    returns the last act sent without waiting for its ack when stopping
    mid-hand (``steps`` given) — the kill comes right after it."""
    n = 0
    while not local.over:
        seat = local.to_decide()[0]
        c = seats[seat]
        while c.decide is None or c.decide["seq"] in c.answered or c.decide["hand"] != 0:
            c.recv()
        d = c.decide
        c.answered.add(d["seq"])
        mine = msgspec.convert(choose(d["legal"]), Action)
        assert mine in local.legal_actions(seat)
        act = {"type": "act", "hand": 0, "seq": d["seq"], "action": action_json(mine)}
        c.send(act)
        if steps is not None and n == steps:
            return {"seat": seat, "action": mine}
        c.until("ack", lambda m, s=d["seq"]: m["seq"] == s)
        local.apply(mine)
        n += 1
    return None


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["guilin-mahjong", "guilin-zipai"])
def test_sigkill_mid_hand_then_restart_continues_the_same_hand(db_url, tmp_path, variant):
    served = start_server(db_url, tmp_path, "--seed", str(SEED))
    try:
        t = create(served, variant)
        rs = load(variant)
        local = Table(rs, seed=hand_seed(SEED, 0), ask_all=True)
        seats = [SyncSeat(served, t["id"], t["seats"][str(s)]) for s in range(rs.manifest.players)]
        first = seats[0].until("welcome")
        commitment = first["commitment"]
        in_flight = conduct(seats, local, steps=25)
        served.kill()
        killed_at = time.time()
        for c in seats:
            c.close()
    finally:
        served.stop()
    served = start_server(db_url, tmp_path, "--seed", str(SEED))
    try:
        seats = [SyncSeat(served, t["id"], t["seats"][str(s)]) for s in range(rs.manifest.players)]
        seat = in_flight["seat"]
        w = seats[seat].until("welcome")
        assert w["hand"] == 0 and w["commitment"] == commitment
        # the act sent just before the kill was committed, or not at all
        if w["view"] != action_json(local.view(seat)):
            local.apply(in_flight["action"])
        assert w["view"] == action_json(local.view(seat))
        for s, c in enumerate(seats):
            if s != seat:
                assert c.until("welcome")["view"] == action_json(local.view(s))
        # the open decision got a fresh deadline: the whole allowance, counted
        # from the restore (after the kill), not what was left before it
        d = seats[local.to_decide()[0]].until("decide")
        assert d["deadline"] >= killed_at + d["timeout"]
        conduct(seats, local, steps=None)
        for c in seats:
            c.until("hand_ended")
            c.close()
        with served.http() as http:
            out = http.get(f"/tables/{t['id']}/records").json()
    finally:
        served.stop()
    got = out["hands"][0]["record"]
    rec = decode_record(got)
    want = record_of(local)
    for name in ("variant", "options", "seed", "deal", "actions", "events", "result", "ask_all",
                 "rng"):
        assert getattr(rec, name) == getattr(want, name), name
    assert replay_check(rec) is None
    # the commitment published at the deal (before the kill) is the deal's
    deal = rec.deal
    hands = ",".join("[" + ",".join(map(str, h)) + "]" for h in deal.hands)
    body = (f'{{"dealer":{deal.dealer},"hands":[{hands}],"wall":[{",".join(map(str, deal.wall))}],'
            f'"shown":[{",".join(map(str, deal.shown))}]}}').encode()
    assert hashlib.sha256(body + bytes.fromhex(got["salt"])).hexdigest() == commitment
    assert got["commitment"] == commitment


def play_until(seats: list[SyncSeat], local: Table, n: int) -> None:
    """Conduct (acknowledged actions, one at a time) until ``local`` has ``n`` actions."""
    while len(local.state.actions) < n and not local.over:
        seat = local.to_decide()[0]
        c = seats[seat]
        while c.decide is None or c.decide["seq"] in c.answered:
            c.recv()
        d = c.decide
        c.answered.add(d["seq"])
        mine = msgspec.convert(choose(d["legal"]), Action)
        c.send({"type": "act", "hand": 0, "seq": d["seq"], "action": action_json(mine)})
        c.until("ack", lambda m, s=d["seq"]: m["seq"] == s)
        local.apply(mine)


def stored_actions(db_url: str, table_id: str, hand: int) -> list[Action]:
    """The actions the database holds for one hand, in ``seq`` order."""
    import sqlalchemy as sa

    from pgcluster import sqlalchemy_url

    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.connect() as c:
            rows = c.execute(sa.text("SELECT seq, action FROM qipai_actions WHERE table_id = :t "
                                     "AND hand = :h ORDER BY seq"), {"t": table_id, "h": hand})
            rows = list(rows)
    finally:
        engine.dispose()
    assert [r[0] for r in rows] == list(range(len(rows))), "stored seqs are 0, 1, 2, … "
    return [ACTION.decode(r[1]) for r in rows]


def drain(c: SyncSeat) -> None:
    """Read what the killed server's socket still delivers (into ``c.received``)."""
    try:
        while True:
            c.recv()
    except Exception:  # noqa: BLE001 - the connection is gone: all is read
        pass


@pytest.mark.slow
def test_sigkill_with_several_acts_in_flight_on_several_tables(db_url, tmp_path):
    """Group commit: several tables, each with every seat of a claim window
    answering at once, killed right after.  The database holds, per table,
    the acknowledged actions and a part of the in-flight ones, in order;
    every ``ack`` any client got is of a stored action; no client saw an
    event beyond what the database holds; after a restart every seat's view
    is the stored actions' and the hand plays on to a record equal to an
    uninterrupted run of the stored actions."""
    variant = "guilin-mahjong"
    rs = load(variant)
    served = start_server(db_url, tmp_path, "--seed", str(SEED))
    games = []
    try:
        for k in range(3):
            t = create(served, variant)
            local = Table(rs, seed=hand_seed(SEED, 0), ask_all=True)
            seats = [SyncSeat(served, t["id"], t["seats"][str(s)]) for s in range(4)]
            seats[0].until("welcome")
            play_until(seats, local, 8 + k)
            games.append((t, local, seats))
        # each table: play on until a window where several seats decide, then all answer at once
        flights = []
        for t, local, seats in games:
            while len(local.to_decide()) < 2:
                play_until(seats, local, len(local.state.actions) + 1)
            deciding = local.to_decide()
            for s in deciding:
                while seats[s].decide is None or seats[s].decide["seq"] in seats[s].answered:
                    seats[s].recv()
            flights.append([(s, msgspec.convert(choose(seats[s].decide["legal"]), Action),
                             seats[s].decide["seq"]) for s in deciding])
        for (t, local, seats), flight in zip(games, flights):
            for s, mine, seq in flight:
                seats[s].send({"type": "act", "hand": 0, "seq": seq, "action": action_json(mine)})
        served.kill()
        for _, _, seats in games:
            for c in seats:
                drain(c)
                c.close()
    finally:
        served.stop()
    for (t, local, seats), flight in zip(games, flights):
        stored = stored_actions(db_url, t["id"], 0)
        n = len(local.state.actions)
        assert stored[:n] == list(local.state.actions), "every acknowledged action is stored"
        extra = stored[n:]
        sent = [a for _, a, _ in flight]
        assert len(extra) == len(set(map(repr, extra))) and all(a in sent for a in extra), \
            "only in-flight actions were stored after the acknowledged ones, each once"
        for a in extra:
            local.apply(a)
        seen = 0
        for s, c in enumerate(seats):
            for m in c.received:
                if m["type"] == "ack" and m["hand"] == 0:
                    mine = [a for s2, a, seq in flight if s2 == s and seq == m["seq"]]
                    assert not mine or mine[0] in extra, f"seat {s}: acked, not stored: {m}"
                if m["type"] == "events" and m["hand"] == 0:
                    seen = max(seen, m["first"] + len(m["events"]))
        assert seen <= len(local.state.events), "a client saw an event the database lacks"
    served = start_server(db_url, tmp_path, "--seed", str(SEED))
    try:
        for t, local, _ in games:
            seats = [SyncSeat(served, t["id"], t["seats"][str(s)]) for s in range(4)]
            for s, c in enumerate(seats):
                assert c.until("welcome")["view"] == action_json(local.view(s))
            conduct(seats, local, steps=None)
            for c in seats:
                c.until("hand_ended")
                c.close()
            with served.http() as http:
                got = http.get(f"/tables/{t['id']}/records").json()["hands"][0]["record"]
            rec = decode_record(got)
            want = record_of(local)
            for name in ("deal", "actions", "events", "result"):
                assert getattr(rec, name) == getattr(want, name), name
            assert replay_check(rec) is None
    finally:
        served.stop()
