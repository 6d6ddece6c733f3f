"""A connection's ``resync`` is answered at most once per ``--resync-interval``:
one sent sooner is answered once the interval is over, any more meanwhile
are folded into that answer, silently; the connection goes on.

Were every ``resync`` to build and send a whole ``welcome`` at once, bounded
only by the message rate (100 a second), 64 spectators sending them would
make the server build thousands of welcomes a second and slow every table."""

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


def test_resyncs_at_once_get_two_welcomes(served):
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
        # the first answered at once; the second waits for the interval, the
        # other 18 are folded into it, silently (a page is not told off)
        assert len(welcomes) == 1, [m["type"] for m in got]
        assert not [m for m in got if m["type"] == "error"], got
        # the folded answer comes, once: nothing more after it
        seat.until("welcome")
        seat.send({"type": "ping"})
        seat.until("pong")
        got = seat.received[start:]
        assert sum(m["type"] == "welcome" for m in got) == 2, [m["type"] for m in got]
        assert sum(m["type"] == "error" for m in got) == 0
        # each welcome offered the open decision again; the seat still plays
        assert sum(m["type"] == "decide" and m["seq"] == decide["seq"] for m in got) == 2
        answer = seat.ask({"type": "act", "hand": decide["hand"], "seq": decide["seq"],
                           "action": decide["legal"][0]})
        assert answer["type"] == "ack", answer
    finally:
        seat.close()


def test_a_welcome_resent_at_one_state_is_never_an_older_states(served):
    """Welcomes are made once per state and resent to every connection
    resyncing at it: two spectators resyncing at one state get the same
    welcome, and after the seat's discard a resync shows it — the stock,
    the seat's discards or melds, the events up to ``next_event`` — never
    the welcome made before it."""
    t = served.create(bots=[1, 2, 3])
    token = t["spectator_token"]
    seat = SyncSeat(served, t["id"], t["seats"]["0"], strict=False)
    a = SyncSeat(served, t["id"], token, strict=False)
    b = SyncSeat(served, t["id"], token, strict=False)
    try:
        decide = seat.next_decision()
        while not any(x["type"] == "discard" for x in decide["legal"]):   # a claim: pass
            assert seat.ask({"type": "act", "hand": decide["hand"], "seq": decide["seq"],
                             "action": decide["legal"][-1]})["type"] == "ack"
            seq = decide["seq"]
            decide = seat.until("decide", lambda m: m["seq"] != seq)
        # the table waits for seat 0's discard now
        for spec in (a, b):
            spec.until("welcome")
        before = []
        for spec in (a, b):
            spec.send({"type": "resync"})
            before.append(spec.until("welcome"))
        assert before[0] == before[1]
        assert len(before[0]["view"]["events"]) == before[0]["next_event"]
        discard = next(x for x in decide["legal"] if x["type"] == "discard")
        assert seat.ask({"type": "act", "hand": decide["hand"], "seq": decide["seq"],
                         "action": discard})["type"] == "ack"
        a.until("events")   # the discard reached the spectators
        a.send({"type": "resync"})
        after = a.until("welcome")
        assert after["next_event"] > before[0]["next_event"]
        assert len(after["view"]["events"]) == after["next_event"]
        assert {"type": "discarded", "seat": 0, "card": discard["card"]} in \
            after["view"]["events"]
    finally:
        for c in (seat, a, b):
            c.close()
