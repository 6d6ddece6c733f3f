"""A hostile reviewer's look at rooms (issue 35), against a real server:
what a player may do out of place in a ready step, a dissolve vote or
托管, and that it changes nothing."""

from __future__ import annotations

from test_rooms import kind, make, play, quick, seat  # noqa: F401 - a fixture


def test_an_act_during_the_ready_step_is_not_now(quick):
    """The dealer's first decision exists while the ready step waits (the
    hand is dealt, its ``legal`` in the welcome's view): an ``act`` answering
    it is refused ``NotNow`` and nothing is applied — the ready step is not
    skipped by guessing ``seq`` 0."""
    t = make(quick, bots=[1, 2], hands=2)
    # seat 3 in 托管 plays hand 0 as a bot would: it deals hand 1 (seed 5)
    d = seat(quick, t, 3, strict=False)
    d.until("welcome")
    d.send({"type": "tuoguan", "on": True}, paced=True)
    d.until("presence", lambda m: m["tuoguan"] == [3])
    c = seat(quick, t, 0)
    play(c, 0, kind("hand_ended"))
    assert c.until("ready_step")["waiting"] == [0]
    w = d.until("welcome", lambda m: m["hand"] == 1)
    assert w["view"]["dealer"] == 3 and w["view"]["legal"] and w["ready_step"]
    d.send({"type": "act", "hand": 1, "seq": 0, "action": w["view"]["legal"][0]}, paced=True)
    err = d.until("error")
    assert err["code"] == "NotNow" and err["seq"] == 0
    assert not any(m["type"] in ("ack", "events") and m.get("hand") == 1
                   for m in d.received)
    # the ready step goes on: seat 0 ready, the hand begins, the dealer is offered its turn
    c.send({"type": "ready", "hand": 1}, paced=True)
    d.until("ready_step", lambda m: m["waiting"] == [])
    assert d.until("decide")["seq"] == 0
    c.close(), d.close()
