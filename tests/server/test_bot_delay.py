"""``qipai serve --bot-delay S``: the bots wait S seconds before answering
what came up — a turn, or a card in play (one wait for all the bots asked
about it) — so people can follow a table where bots play (without it an
all-bot demo table plays a whole hand in well under a second).

(The assertion is a lower bound on the time three decisions take, which a
slow machine can only make longer: never a timing a slow machine could
break.)"""

from __future__ import annotations

import time

from hostkit import SyncSeat, start_server


def test_bots_wait_before_each_turn_and_each_card_in_play(tmp_path):
    delay = 0.5
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3",
                     "--bot-delay", str(delay))
    try:
        t = s.create(bots=[0, 1, 2, 3])
        watch = SyncSeat(s, t["id"], t["spectator_token"], strict=False)
        try:
            watch.until("welcome")   # the bots start when the spectator comes
            t0 = time.monotonic()
            discards = 0
            while discards < 3:
                msg = watch.until("events")
                discards += sum(e["type"] == "discarded" for e in msg["events"])
            took = time.monotonic() - t0
        finally:
            watch.close()
        # discard 1 after the dealer's turn wait; 2 and 3 each after the wait
        # for the bots asked about the card before (all pass or claim) and the
        # next turn's: five waits of 0.5 s (less a little: the first began
        # as the spectator was welcomed).  With no delay: a few milliseconds.
        assert took >= 5 * delay - 0.1, took
    finally:
        s.stop()
