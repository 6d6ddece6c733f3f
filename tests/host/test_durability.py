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
