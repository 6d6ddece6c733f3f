"""A hosted table's seats: tokens, connections, and the bot seats.

Watched: a table plays only while at least one connection (a seat or the
spectator) is attached.  With none — an all-bot table nobody watches, every
player gone, a table just restored — it *pauses*: its bots do not move and
its clock does not run, so no default action is played for an absent seat
and nothing is written.  The first connection resumes it, every open
decision with a fresh deadline (the whole allowance again, as after a
restart).  (An unwatched table would otherwise play bots, or time out
absent seats, forever.)
"""

from __future__ import annotations

import asyncio
import time

from qipai.bots import GreedyBot, RandomBot
from qipai.bots.registry import BotFault, bot_label, checked_act
from qipai.host import protocol as P
from qipai.host.errors import Refused
from qipai.host.outbox import Conn

#: The most connections one seat may have open at once (a player's
#: devices and tabs); one more is refused ``TooManyConnections`` (close 4429).
MAX_CONNS_PER_SEAT = 8
#: The most spectator connections of one table (as :data:`MAX_CONNS_PER_SEAT`).
MAX_SPECTATORS = 64
#: Seconds the table's bot waits before it answers for a seat in 托管 (at
#: least; ``qipai serve --bot-delay`` when longer): a player's pace.  The
#: default of ``qipai serve --tuoguan-delay``.
TUOGUAN_DELAY = 1.0

#: The bots whose decisions take well under a millisecond: asked on the
#: event loop.  Any other (a strong bot, an operator's) is asked in a
#: thread (``asyncio.to_thread``), so a bot that thinks does not stall
#: every table of the server.
ON_LOOP = (GreedyBot, RandomBot)

#: Seconds a bot asked in a thread may think before the table's greedy bot
#: answers in its place (a ``bot_fault``, as a bot that raised).  Python
#: cannot stop the thread: until it returns, greedy answers that seat's
#: decisions, so a bot that hangs holds one thread at most, not one per
#: decision (the executor's threads are shared by every table).
BOT_THINK_S = 3.0



class Seats:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  Who a token
    is, connections attached and detached, and the bots' moves."""

    def who(self, token_hash: str) -> int | str | None:
        """The seat of a token's hash, ``"spectator"``, or None."""
        if token_hash in self.seat_of_hash:
            return self.seat_of_hash[token_hash]
        if token_hash == self.spectator_hash:
            return "spectator"
        return None

    def attach(self, conn: Conn) -> None:
        """A new connection; the first one resumes a paused table.  (While
        the hand is re-read, :meth:`reread` welcomes it once it is back.)"""
        resume = not self.conns
        self.conns.add(conn)
        if conn.seat is not None:   # (its player has sat down: a joint first hand's
            self.sat.add(conn.seat)  # clock waits for every human seat to have)
        if resume:
            now = time.time()
            for d in self.decisions.values():
                if d.deadline is not None:
                    d.deadline = now + d.timeout   # paused time is not counted
            if self.ready_step is not None:   # the same for a ready step
                self.ready_step["deadline"] = now + self.server.ready_timeout
            if self.deal_step is not None:    # and a seat-value step
                self.deal_step["deadline"] = now + self.server.seat_value_timeout
        if self.rereading is not None:
            conn.early = []   # its welcome comes first, once the hand is back
            self.tell_seat(conn.seat)
            return
        self.greet(conn)
        self.tell_seat(conn.seat)
        if self.open and self.halted is None:
            self.seat_came()
        self.flush()
        if resume:
            self.poke()

    def tell_seat(self, seat: int | None) -> None:
        """Send each connection of ``seat`` how many the seat has open now
        (:class:`~qipai.host.protocol.SeatConns`); nothing for spectators,
        nothing once the table is closed or halted (a halted table's
        connections are told the halt and nothing of the seat after it — a
        welcome that failed halts it, and no count may come without one).
        A connection not welcomed yet (:attr:`Conn.early`) holds it until
        its welcome has gone."""
        if seat is None or not self.open or self.halted is not None:
            return
        mine = [c for c in self.conns if c.seat == seat]
        for c in mine:
            c.send(P.SeatConns(count=len(mine)))

    def detach(self, conn: Conn) -> None:
        """A connection gone; with the last one the table pauses.  The
        seat's other connections are told how many it has left."""
        self.conns.discard(conn)
        if conn.seat is not None and any(c.seat == conn.seat for c in self.conns):
            self.tell_seat(conn.seat)
            self.flush()
        elif conn.seat is not None and self.open and self.halted is None and self.conns:
            self.seat_left()   # the seat's last connection: offline
            self.flush()
        if not self.conns and self._timer is not None:
            self._timer.cancel()   # nothing runs unwatched: no timeout while paused
            self._timer = self._due = None
        if not self.conns:
            self.cancel_ready()
            self.cancel_step()

    @property
    def paused(self) -> bool:
        """No connection watches the table: its bots and clock wait."""
        return not self.conns

    def _bots_may_move(self) -> bool:
        return (self.open and not self.closing and bool(self.conns) and self.halted is None
                and self.rereading is None)

    async def _run_bots(self) -> None:
        loop = asyncio.get_running_loop()
        delay = self.server.bot_delay
        waited = None   # (hand, events) when the bots last waited
        try:
            while self._bots_may_move():
                if self.ready_step is not None or self.deal_step is not None:
                    break   # (its end pokes the bots)
                seats = [s for s in sorted(self.decisions) if s in self.bots or s in self.tuoguan]
                if not seats:
                    break
                # a seat in 托管 is answered at a player's pace, whatever --bot-delay:
                # its player may take it back meanwhile, and an open-ended table
                # whose humans are all in 托管 does not deal hand after hand at the
                # bots' speed for as long as a page stays open
                pause = (max(delay, self.server.tuoguan_delay)
                         if any(s in self.tuoguan for s in seats) else delay)
                if pause > 0 and waited != (self.hand, len(self.table.events)):
                    # --bot-delay: one wait before the bots answer what came up (a
                    # turn, a card every seat is asked about: the bots asked answer
                    # it after the one wait, as players would at once), the same
                    # whatever they hold or decide
                    await asyncio.sleep(pause)
                    if not self._bots_may_move():
                        break
                    waited = (self.hand, len(self.table.events))
                    continue   # (what is pending, read again)
                seat = seats[0]
                bot = self.bot_for(seat)
                decision, hand = self.decisions[seat], self.hand
                try:   # its view only: a snapshot (tuples), safe to read in a thread
                    legal = list(self.table.legal_actions(seat))
                    view = (None if getattr(bot, "blind", False)
                            else self.table.view(seat, events=False))
                except Exception as exc:  # noqa: BLE001 - the engine's or a plugin's
                    self._broken(exc, f"bot seat {seat}'s view")
                    break
                if type(bot) in ON_LOOP:
                    answer = _ask(bot, view, legal, seat, decision.seq)
                else:
                    # another's bot may think for a while (a strong bot: up to 200
                    # ms): off the loop, or every table of the server would wait for
                    # it.  Nothing is applied meanwhile; what it answers is played
                    # below, on the loop, only if its decision is still the open one.
                    busy = self.thinking.get(seat)
                    if busy is not None and not busy.done():
                        answer = BotFault(bot_label(bot), seat, decision.seq, cause=TimeoutError(
                            "still thinking about an earlier decision"))
                    else:
                        task = asyncio.ensure_future(asyncio.to_thread(
                            _ask, bot, view, legal, seat, decision.seq))
                        try:
                            answer = await asyncio.wait_for(asyncio.shield(task), BOT_THINK_S)
                        except asyncio.TimeoutError:
                            self.thinking[seat] = task
                            answer = BotFault(bot_label(bot), seat, decision.seq,
                                              cause=TimeoutError(
                                                  f"no answer within {BOT_THINK_S:g} s"))
                    if not self._bots_may_move():
                        break
                    if self.hand != hand or self.decisions.get(seat) is not decision:
                        continue   # decided meanwhile (a claim, a timeout): read again
                if isinstance(answer, BotFault):   # the table goes on: greedy answers this one
                    self._bot_fault(answer, seat, bot)
                    try:
                        answer = checked_act(self.stand_in_for(seat), view if view is not None
                                             else self.table.view(seat, events=False),
                                             legal, seat, decision.seq)
                    except Exception as exc:  # noqa: BLE001 - greedy's fault is the server's
                        self._broken(exc, f"bot seat {seat}'s decision")
                        break
                action = answer
                done = loop.create_future()
                try:
                    self.play(seat, action, future=done, tuoguan=seat not in self.bots)
                    self.flush()
                    await done
                except Refused as exc:  # Unavailable: try again shortly
                    if self.halted is not None or self.rereading is not None:
                        break   # (the re-read pokes the bots again)
                    self.server.log(f"table {self.id}: bot seat {seat}: {exc.message}")
                    await asyncio.sleep(0.5)
        finally:
            self._bots_running = False
            self._tasks = [t for t in self._tasks if not t.done()]

    def _bot_fault(self, exc: BotFault, seat: int, bot: object) -> None:
        """A seat's bot raised or answered an illegal action: logged (the
        event ``bot_fault``: table, hand, seat, bot_level, bot, decision, what
        it did), once a seat a hand — the table's greedy bot answers this
        decision instead."""
        level = self.levels.get(seat, "tuoguan")
        if (self.hand, seat) in self.faults_told:
            return   # one line a seat a hand: a bot that fails every decision is not 100 lines
        self.faults_told.add((self.hand, seat))
        self.server.events.emit("bot_fault", table=self.id, hand=self.hand, seat=seat,
                                bot_level=level, bot=bot_label(bot), decision=exc.step,
                                error=str(exc))
        self.server.log(f"table {self.id}: bot seat {seat} (level {level}): {exc}; "
                        f"greedy answered this decision")


def _ask(bot: object, view: object, legal: list, seat: int, seq: int) -> object:
    """``bot``'s checked answer (:func:`~qipai.bots.registry.checked_act`),
    or the :class:`BotFault` it made (returned: it crosses the thread)."""
    try:
        return checked_act(bot, view, legal, seat, seq)
    except BotFault as exc:
        return exc
