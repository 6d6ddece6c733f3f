"""A connection's ``resync`` is answered at most once per ``--resync-interval``:
one sent sooner is answered once the interval is over, any more meanwhile
are folded into that answer, with one ``Throttled`` error saying so; the
connection goes on.

Before, every ``resync`` built and sent a whole ``welcome`` at once, bounded
only by the message rate (100 a second): 64 spectators sending them made
the server build thousands of welcomes a second and slowed every table."""

from __future__ import annotations

import pytest

from hostkit import SyncSeat, start_server

#: long enough that 20 frames are read well within it, on any machine
INTERVAL = 2.0


@pytest.fixture
def served(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3",
                     "--resync-interval", str(INTERVAL), "--turn-timeout", "600")
    yield s
    s.stop()


def test_resyncs_at_once_get_two_welcomes_and_one_throttled(served):
    t = served.create(bots=[1, 2, 3])
    seat = SyncSeat(served, t["id"], t["seats"]["0"], strict=False)
    try:
        seat.until("welcome")
        seat.until("seat_conns")   # (after the welcome, and its decide if any)
        decide = seat.next_decision()   # seat 0's first, the bots' turns before it
        seat.send({"type": "ping"})
        seat.until("pong")
        start = len(seat.received)
        for _ in range(20):
            seat.send({"type": "resync"})
        seat.send({"type": "ping"})
        seat.until("pong")
        got = seat.received[start:]
        welcomes = [m for m in got if m["type"] == "welcome"]
        throttled = [m for m in got if m["type"] == "error"]
        # the first answered at once; the second waits for the interval, the
        # other 18 are folded into it — said once, typed
        assert len(welcomes) == 1, [m["type"] for m in got]
        assert [m["code"] for m in throttled] == ["Throttled"], throttled
        assert "at most one resync is answered every 2 s" in throttled[0]["message"]
        assert "folded into the welcome that follows" in throttled[0]["message"]
        # the folded answer comes, once: nothing more after it
        seat.until("welcome")
        seat.send({"type": "ping"})
        seat.until("pong")
        got = seat.received[start:]
        assert sum(m["type"] == "welcome" for m in got) == 2, [m["type"] for m in got]
        assert sum(m["type"] == "error" for m in got) == 1
        # each welcome offered the open decision again; the seat still plays
        assert sum(m["type"] == "decide" and m["seq"] == decide["seq"] for m in got) == 2
        answer = seat.ask({"type": "act", "hand": decide["hand"], "seq": decide["seq"],
                           "action": decide["legal"][0]})
        assert answer["type"] == "ack", answer
    finally:
        seat.close()
