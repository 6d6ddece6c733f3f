"""Decisions and their deadlines: a hosted table's clock.

Every seat with pending actions has a *decision* — a ``seq`` (the number of
actions the hand had when the decision was offered), its legal list and,
for a human seat, a deadline.  A seat whose deadline passes gets
:func:`qipai.core.timeouts.default_action`, recorded in the hand's
``timeouts``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from qipai.core.model import Action
from qipai.core.timeouts import default_action
from qipai.host.errors import Refused


@dataclass
class Decision:
    """One seat's open decision (``legal`` is the table's own pending list)."""

    seq: int
    legal: list[Action]
    deadline: float | None  # None for a bot seat
    timeout: float


class Clock:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  The open
    decisions, one timer for their deadlines, and the start and stop of
    what runs in the loop (the timer, the bots' task)."""

    def refresh_decisions(self) -> None:
        """Give every seat whose pending list is new a new decision."""
        table = self.table
        now = time.time()
        fresh: dict[int, Decision] = {}
        for seat, legal in table.pending.items():
            old = self.decisions.get(seat)
            if old is not None and old.legal is legal:
                fresh[seat] = old
                continue
            allow = (self.server.claim_timeout if table.window is not None
                     else self.server.turn_timeout)
            fresh[seat] = Decision(len(table.actions), legal,   # a bot's, or 托管: no clock
                                   None if seat in self.bots or seat in self.tuoguan
                                   else now + allow, allow)
        self.decisions = fresh

    def start(self) -> None:
        """Start the table's clock (timeouts) and its bots (in the running loop)."""
        self._started = True
        self.poke()

    def poke(self) -> None:
        """Something changed: re-arm the clock, let the bots move."""
        if not self._started or not self.open or self.rereading is not None:
            return   # (the re-read pokes once it is done)
        if not self.conns:
            return   # paused
        if self.deal_step is not None:   # a seat-value step: nothing runs but its timer
            self.arm_step()
            return
        if self.ready_step is not None:   # a room's ready step: nothing runs but its timer
            self.arm_ready()
            return
        self._arm()
        if not self._bots_running and any(s in self.bots or s in self.tuoguan
                                          for s in self.decisions):
            self._bots_running = True
            self._tasks.append(asyncio.get_running_loop().create_task(self._run_bots()))

    def _arm(self) -> None:
        """One timer, due at or before the earliest deadline of the open
        decisions (a timer that comes early finds nothing due and re-arms:
        kept, it saves a new timer per action)."""
        due = min((d.deadline for d in self.decisions.values() if d.deadline is not None),
                  default=None)
        if due is None or (self._timer is not None and self._due is not None
                           and self._due <= due):
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due = due
        if due is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(loop.time() + max(0.0, due - time.time()), self._expire)

    def _expire(self) -> None:
        """The earliest deadline passed: play the default action of one seat
        whose time is up (the next one re-arms the timer)."""
        self._timer = self._due = None
        if (not self.open or self.closing or not self.conns or self.halted is not None
                or self.rereading is not None or self.ready_step is not None
                or self.deal_step is not None):
            return   # closed, halted, re-reading, paused or a ready step (the next poke re-arms)
        now = time.time()
        for seat, d in sorted(self.decisions.items()):
            if d.deadline is not None and d.deadline <= now:
                hand = self.hand
                try:
                    self.play(seat, default_action(self.table, seat), timeout=True)
                    self.server.events.emit("timeout", table=self.id, key=self.key_name,
                                            hand=hand, seat=seat, seq=d.seq)
                except Refused as exc:
                    if self.halted is None and self.rereading is None:
                        # a default action is legal: refused, it would be refused again
                        # at once (a deadline already past), so the table stops
                        self._broken(exc, f"seat {seat}'s timeout")
                except Exception as exc:  # noqa: BLE001 - a plugin's qipai_default_action
                    self._broken(exc, f"seat {seat}'s timeout")
                self.flush()
                break
        self._arm()

    def stop(self) -> None:
        """Stop the clock and the tasks (server shutdown; the table stays
        open in the database)."""
        self.stop_room()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due = None
        for t in self._tasks:
            t.cancel()
