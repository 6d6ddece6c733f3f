"""SIGKILL a keyed server (``qipai serve --keys``) mid-hand while its named
players are seated with seat tokens their operator signed (JWT), restart
it: every acknowledged action is there, the same tokens sit the same
players again, and the hand ends as an uninterrupted run of the same
actions would (issue 34's identity under issue 11's durability)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import jwt
import msgspec
import pytest

from hostkit import PATIENCE, SyncSeat, action_json, choose, start_server
from qipai.bots import hand_seed
from qipai.core.model import Action
from qipai.core.records import decode_record, record_of, replay_check
from qipai.core.ruleset import load
from qipai.core.table import Table

SEED = 11
PLAYERS = [{"seat": s, "player": f"u-{s}", "name": n} for s, n in enumerate("甲乙丙丁")]


def conduct(seats: list[SyncSeat], local: Table, steps: int | None) -> dict | None:
    """Answer decisions one at a time, the lowest deciding seat first,
    mirroring each acknowledged action on ``local``; after ``steps``
    actions, the next act is sent and returned unacknowledged (None: play
    to the hand's end)."""
    n = 0
    while not local.over:
        seat = local.to_decide()[0]
        c = seats[seat]
        while c.decide is None or c.decide["seq"] in c.answered or c.decide["hand"] != 0:
            c.recv()
        d = c.decide
        c.answered.add(d["seq"])
        mine = msgspec.convert(choose(d["legal"]), Action)
        c.send({"type": "act", "hand": 0, "seq": d["seq"], "action": action_json(mine)})
        if steps is not None and n == steps:
            return {"seat": seat, "action": mine}
        c.until("ack", lambda m, s=d["seq"]: m["seq"] == s)
        local.apply(mine)
        n += 1
    return None


@pytest.mark.slow
def test_sigkill_a_keyed_server_and_the_signed_seats_come_back(db_url, tmp_path):
    keys = tmp_path / "keys.json"
    r = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "shop", "--file",
                        str(keys)], capture_output=True, text=True, timeout=PATIENCE)
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()
    secret = json.loads(keys.read_text())["keys"][0]["secret"]
    args = ("--keys", str(keys), "--seed", str(SEED), "--log-format", "json")
    served = start_server(db_url, tmp_path, *args)
    auth = {"Authorization": f"Bearer {key}"}
    try:
        with served.http() as h:
            t = h.post("/tables", json={"players": PLAYERS}, headers=auth).json()
        exp = int(time.time()) + 3600
        tokens = [jwt.encode({"table": t["id"], "seat": p["seat"], "player": p["player"],
                              "exp": exp}, secret, algorithm="HS256", headers={"kid": "shop"})
                  for p in PLAYERS]
        local = Table(load("guilin-mahjong"), seed=hand_seed(SEED, 0), ask_all=True)
        seats = [SyncSeat(served, t["id"], tok) for tok in tokens]
        welcome = seats[0].until("welcome")
        assert welcome["names"] == {str(p["seat"]): p["name"] for p in PLAYERS}
        in_flight = conduct(seats, local, steps=30)
        served.kill()
        logs = [served.log_path]
        for c in seats:
            c.close()
    finally:
        served.stop()
    served = start_server(db_url, tmp_path, *args)
    try:
        seats = [SyncSeat(served, t["id"], tok) for tok in tokens]
        welcomes = [c.until("welcome") for c in seats]
        seat = in_flight["seat"]
        # the act sent just before the kill was committed, or not at all
        if welcomes[seat]["view"] != action_json(local.view(seat)):
            local.apply(in_flight["action"])
        for s, w in enumerate(welcomes):
            assert w["seat"] == s and w["player"] == f"u-{s}"
            assert w["view"] == action_json(local.view(s)), s
        conduct(seats, local, steps=None)
        for c in seats:
            c.until("hand_ended")
            c.close()
        with served.http() as h:   # a player reads his finished hand with his signed token
            out = h.get(f"/tables/{t['id']}/records",
                        headers={"Authorization": f"Bearer {tokens[2]}"}).json()
    finally:
        served.stop()
    rec = decode_record(out["hands"][0]["record"])
    want = record_of(local)
    for name in ("deal", "actions", "events", "result"):
        assert getattr(rec, name) == getattr(want, name), name
    assert replay_check(rec) is None
    log = "".join(p.read_text() for p in [*logs, served.log_path])
    assert "Traceback" not in log and key not in log and secret not in log
    assert not any(tok in log for tok in tokens)
