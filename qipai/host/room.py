"""A hosted table as its players know it: the 摊牌 at a hand's end, rooms
of N hands with their 大结算, the 准备 step, the dissolve vote, presence and
托管 (issue 35).

(A part of :class:`~qipai.host.match.HostedTable`.)

- **摊牌** (:func:`showdown_of`): built from the table's final state once
  the hand is over — never from anything a client sent — and sent only in
  ``hand_ended`` and in a welcome's ``last_result``.
- **Rooms**: a table made with ``hands`` (局数) plays that many hands, then
  closes itself (``ended: "finished"``) with its :class:`~P.Tally`, written
  in the same transaction as the last hand's last action.
- **Ready step** (between hands: every room unless made with ``ready:
  false``, an open-ended table made with ``ready: true``, the row's
  ``ready``; a row made before the choice: a room has it, an open-ended
  table not — see :meth:`Room.room_init`): the next hand is dealt and
  written with the last action of the one before, as on every table, then
  waits — no decision offered, no clock, no bot — until every seated,
  online, non-托管 human sent ``ready`` or ``--ready-timeout`` passed.  It
  is not stored: such a table's hand after the first with no action yet *is* in
  its ready step, which a restart begins again (a fresh deadline, nobody
  ready yet) — a player asked once more, nothing else.
- **Dissolve vote** (a room): a seated human proposes, every seated human
  must agree before ``--vote-timeout`` (bots agree; a seat whose vote was
  refused proposes again only after that vote's deadline); passed, the room
  closes at once as a host close does (the hand under way stored
  unfinished), ``ended: "dissolved"``.  A vote is not stored: a restart
  drops it (nothing was decided; it may be proposed again).
- **Presence and 托管**: ``presence`` (online seats, 托管 seats) goes to
  everyone at the table when it changes (a seat's first connection or its
  last one gone, 托管 on or off).  After two consecutive timeouts a seat is
  played by the table's greedy bot (as the bot seats are) until its player
  acts or sends ``tuoguan: false``; a player may turn it on himself.  Each
  move the bot made for him is stored (the action row's ``tuoguan``) and
  listed in the hand's record (``tuoguan``: action indices).  A restart
  rebuilds the flags from the stored moves of the hand before (its record)
  and of the current hand (the seat's last move the bot's, or its last two
  timeouts); a switch with no move since is not kept — safe either way: a seat wrongly out of 托管 has its clock, one
  wrongly in it is played as it would be on a timeout.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import msgspec

from qipai.bots import GreedyBot
from qipai.core.model import Won
from qipai.host import protocol as P
from qipai.host.errors import Refused

#: The most hands a room may have (``POST /tables`` ``hands``: 1 to this).
MAX_ROOM_HANDS = 64
#: Consecutive timeouts after which a seat is put in 托管.
TIMEOUTS_TO_TUOGUAN = 2
#: Seconds a seat's player waits between two 托管 switches of his own (each
#: one tells every connection at the table, and turns the bot on or offers
#: the decision again: switched as fast as the message rate allows, it
#: would flood the table)
TUOGUAN_SWITCH_S = 1.0


def showdown_of(table: Any) -> P.Showdown:
    """The 摊牌 of a finished hand: every seat's concealed hand (sorted) and
    melds as the final state holds them, and its ``won`` events."""
    st = table.state
    return P.Showdown(
        hands=tuple(P.ShownHand(seat=i, hand=tuple(sorted(s.hand)), melds=tuple(s.melds))
                    for i, s in enumerate(st.seats)),
        wins=tuple(e for e in st.events if isinstance(e, Won)))


#: Ways of winning whose ``from_seat`` turned the card up rather than gave
#: it: 自摸, and 字牌's ``pinghu`` (a card another seat drew and showed) —
#: no 点炮 (as :mod:`qipai.text.log` tells the 放炮 seat).
NOT_DIANPAO = ("zimo", "pinghu")


def hand_stats(n: int, net: Any, events: Any) -> list[tuple[int, int, int, int]]:
    """Per seat, what one finished hand adds to a 大结算: ``(wins, dianpao,
    zimo, gain)`` — 点炮 the seat whose card another won on (a ``won`` whose
    ``from_seat`` is another seat, its ``how`` not in :data:`NOT_DIANPAO`:
    a discard, an added kong)."""
    out = [[0, 0, 0, int(net[s]) if net else 0] for s in range(n)]
    for e in events:
        if isinstance(e, Won):
            out[e.seat][0] += 1
            if e.how == "zimo":
                out[e.seat][2] += 1
            elif (e.from_seat is not None and e.from_seat != e.seat
                  and e.how not in NOT_DIANPAO):
                out[e.from_seat][1] += 1
    return [tuple(x) for x in out]  # type: ignore[misc]


class Room:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  See the module
    docstring."""

    def room_init(self, row: dict[str, Any]) -> None:
        hands = row.get("hands")
        #: 局数 (None: an open-ended table)
        self.room_hands: int | None = int(hands) if hands is not None else None
        ready = row.get("ready")
        #: a ready step (准备/继续) before each hand after the first (NULL: a
        #: row made before the choice — a room had one, an open-ended table not)
        self.ready_between: bool = bool(ready) if ready is not None else hands is not None
        #: how it ended (``finished``, ``dissolved``, ``closed``; None: open)
        self.ended: str | None = row.get("ended")
        #: the last finished hand's result and 摊牌 (None before one ends)
        self.last: P.LastResult | None = None
        #: per seat ``[wins, dianpao, zimo, best]`` over the finished hands
        self.stats = [[0, 0, 0, 0] for _ in range(self.n)]
        #: the ready step: ``{"hand", "deadline", "ready": set}`` (None: none)
        self.ready_step: dict[str, Any] | None = None
        self._ready_timer: asyncio.TimerHandle | None = None
        #: the dissolve vote: ``{"by", "deadline", "agreed": set}`` (None: none)
        self.vote: dict[str, Any] | None = None
        self._vote_timer: asyncio.TimerHandle | None = None
        self._dissolving: asyncio.Task | None = None
        #: seat → when it may propose again (a vote of its refused: not before
        #: that vote's deadline — a refusal ends a vote early, and proposing
        #: again at once, again and again, would stall the table)
        self.vote_after: dict[int, float] = {}
        #: seats the table's bot plays for their player (托管)
        self.tuoguan: set[int] = set()
        #: consecutive timeouts per seat
        self.missed: dict[int, int] = {}
        #: the current hand's actions the bot made for a seat in 托管 (indices)
        self.tuoguan_moves: list[int] = []
        #: seat → when its player last switched 托管 himself (time.monotonic())
        self._switched: dict[int, float] = {}
        self._presence: P.Presence | None = None
        self._ready_sent: P.ReadyStep | None = None

    # ------------------------------------------------------------ hands and tallies

    def count_hand(self, net: Any, events: Any) -> None:
        """Add a finished hand's wins, 点炮, 自摸 and gain to :attr:`stats`."""
        for s, (w, d, z, g) in enumerate(hand_stats(self.n, net, events)):
            st = self.stats[s]
            st[0] += w
            st[1] += d
            st[2] += z
            st[3] = max(st[3], g)

    def tally(self, ended: str, totals: Any, hands_done: int) -> P.Tally:
        """The 大结算 (``ended``: how the room ends)."""
        return P.Tally(ended=ended, hands_done=hands_done,  # type: ignore[arg-type]
                       seats=tuple(P.SeatTally(seat=s, total=totals[s], wins=st[0],
                                               dianpao=st[1], zimo=st[2], best=st[3])
                                   for s, st in enumerate(self.stats)))

    def final_tally(self, table: Any) -> P.Tally:
        """(The room's last hand just ended, not yet counted.)  Its 大结算,
        that hand counted."""
        r = table.result
        self.count_hand(r.net, table.events)
        return self.tally("finished", [a + b for a, b in zip(self.totals, r.net)],
                          self.hands_done + 1)

    def room_of(self) -> P.Room:
        return P.Room(hands=self.room_hands, hand=self.hand + 1, done=self.hands_done,
                      ready=self.ready_between)

    def last_hand(self) -> bool:
        """The hand under way is the room's last."""
        return self.room_hands is not None and self.hands_done + 1 >= self.room_hands

    def rebuild_room(self, done: list[dict[str, Any]], acts: list[dict[str, Any]]) -> None:
        """(At a rebuild, the current hand replayed.)  The last result and
        the 大结算 counts from the finished hands' records, 托管 from the
        hand before's record (its ``timeouts`` and ``tuoguan``) and the
        current hand's action rows, the ready step if the hand (after the
        first, on a table with one) has no action yet."""
        from qipai.core.records import Record, apply_steps

        self.stats = [[0, 0, 0, 0] for _ in range(self.n)]
        self.last = None
        want = done if self.room_hands is not None else done[-1:]
        self.tuoguan, self.missed, self.tuoguan_moves = set(), {}, []
        for i, h in enumerate(want):
            rec = msgspec.json.decode(h["record"], type=Record)
            net = msgspec.json.decode(h["net"])
            if self.room_hands is not None:
                self.count_hand(net, rec.events)
            if i == len(want) - 1:
                table = self.table_from_row(h)
                for _ in apply_steps(table, rec.actions):
                    pass
                self.last = P.LastResult(hand=h["hand"], result=table.result,
                                         showdown=showdown_of(table),
                                         money=rec.money if rec.money else None)
                # 托管 and timeouts in a row carry over from the hand before
                raw = msgspec.json.decode(h["record"])
                outs, tgs = set(raw.get("timeouts") or ()), set(raw.get("tuoguan") or ())
                for j, a in enumerate(rec.actions):
                    self._follow(a.seat, j in tgs, j in outs)
        for i, row in enumerate(acts):
            if row.get("tuoguan"):
                self.tuoguan_moves.append(i)
            self._follow(self.table.actions[i].seat, bool(row.get("tuoguan")),
                         bool(row["timeout"]))
        self.cancel_ready()
        self.ready_step = self._ready_sent = None   # (a re-read: the one a failed write began)
        if self.ready_between and self.hand > 0 and not acts:
            self.ready_step = {"hand": self.hand, "ready": set(),
                               "deadline": time.time() + self.server.ready_timeout}

    def _follow(self, seat: int, tuoguan: bool, timeout: bool) -> None:
        """(A rebuild.)  One stored move of ``seat``: the bot's for it in
        托管, a timeout, or its player's own."""
        if seat in self.bots:
            return
        if tuoguan:
            self.tuoguan.add(seat)
        elif timeout:
            self.missed[seat] = self.missed.get(seat, 0) + 1
            if self.missed[seat] >= TIMEOUTS_TO_TUOGUAN:
                self.tuoguan.add(seat)
        else:
            self.missed[seat] = 0
            self.tuoguan.discard(seat)

    # ------------------------------------------------------------ presence

    def humans(self) -> list[int]:
        return [s for s in range(self.n) if s not in self.bots]

    def online(self) -> tuple[int, ...]:
        return tuple(sorted({c.seat for c in self.conns if c.seat is not None}))

    def presence(self) -> P.Presence:
        return P.Presence(online=self.online(), tuoguan=tuple(sorted(self.tuoguan)))

    def tell_presence(self) -> None:
        """Tell everyone at the table who is online and in 托管, if it changed."""
        now = self.presence()
        if now == self._presence or not self.open:
            return
        self._presence = now
        for c in self.conns:
            if c.early is None:
                c.send(now)

    def seat_came(self) -> None:
        """(attach, after its welcome) A connection came."""
        self.tell_presence()
        self.check_ready()
        self.check_step()

    def seat_left(self) -> None:
        """(detach) A connection went."""
        self.tell_presence()
        self.check_ready()
        self.check_step()

    # ------------------------------------------------------------ 托管

    def bot_for(self, seat: int) -> Any:
        """The bot of a bot seat (its level's), or the greedy bot that
        plays a human seat in 托管."""
        bot = self.bot_of.get(seat)
        if bot is None:
            bot = self.bot_of[seat] = GreedyBot(self.bot_rng(seat), self.ruleset)
        return bot

    def stand_in_for(self, seat: int) -> Any:
        """The greedy bot that answers a decision the seat's own bot failed."""
        bot = self.stand_in.get(seat)
        if bot is None:
            bot = self.stand_in[seat] = GreedyBot(self.bot_rng(seat), self.ruleset)
        return bot

    def played(self, seat: int, timeout: bool) -> None:
        """(After a human seat's move.)  A timeout counts toward 托管; a move
        of the player's own takes the seat out of it."""
        if timeout:
            n = self.missed[seat] = self.missed.get(seat, 0) + 1
            if n >= TIMEOUTS_TO_TUOGUAN and seat not in self.tuoguan:
                self.set_tuoguan(seat, True)
        else:
            self.missed[seat] = 0
            if seat in self.tuoguan:   # (the decision he answered is gone: the
                # next one, made after this, has his clock)
                self.set_tuoguan(seat, False, offer=False)

    def set_tuoguan(self, seat: int, on: bool, offer: bool = True) -> None:
        """托管 on or off for ``seat`` (``offer``: a decision he holds,
        offered in 托管 without a clock, is offered again with one)."""
        if on:
            self.tuoguan.add(seat)
        else:
            self.tuoguan.discard(seat)
            self.missed[seat] = 0
            d = self.decisions.get(seat) if offer else None
            if d is not None and d.deadline is None:   # his clock again, from now
                d.deadline = time.time() + d.timeout
                for c in self.conns:
                    if c.seat == seat:
                        c.decided = None
                        self.offer(c)
        self.tell_presence()
        self.check_ready()

    def ask_tuoguan(self, conn: Any, msg: P.Tuoguan) -> None:
        """A client's ``tuoguan``: 托管 on or off for its own seat."""
        seat = self._seated(conn, "托管")
        if msg.on == (seat in self.tuoguan):
            raise Refused("NotNow", f"seat {seat} is {'already' if msg.on else 'not'} in 托管")
        now = time.monotonic()
        if now - self._switched.get(seat, -TUOGUAN_SWITCH_S) < TUOGUAN_SWITCH_S:
            raise Refused("NotNow", f"seat {seat} switched 托管 less than "
                                    f"{TUOGUAN_SWITCH_S:g} s ago: try again in a moment")
        self._switched[seat] = now
        if self.halted is None:   # the operator's event: a write of its own (no move)
            from qipai.host import feed
            from qipai.host.store import Write

            self.store.submit(Write(self.id, [feed.tuoguan(self, self.hand, seat, msg.on,
                                                           "asked")], lambda exc: None))
        self.set_tuoguan(seat, msg.on)
        self.flush()
        self.poke()

    def _seated(self, conn: Any, what: str) -> int:
        if not self.open or self.closing:
            raise Refused("TableClosed", f"table {self.id} is closed")
        if conn.seat is None:
            raise Refused("Spectator", f"a spectator has no {what}")
        self._playable()
        return conn.seat

    def _room_only(self, what: str) -> None:
        if self.room_hands is None:
            raise Refused("NotNow", f"table {self.id} is open-ended (made without hands): "
                                    f"it has no {what}")

    # ------------------------------------------------------------ the ready step

    def begin_ready(self) -> None:
        """(A table with a ready step: its next hand installed, before its
        welcomes.)  Its ready
        step begins — told once the welcomes went (:meth:`check_ready`)."""
        self.cancel_ready()
        self._ready_sent = None
        self.ready_step = {"hand": self.hand, "ready": set(),
                           "deadline": time.time() + self.server.ready_timeout}

    def ready_waiting(self) -> tuple[int, ...]:
        rs = self.ready_step
        if rs is None:
            return ()
        on = set(self.online())
        return tuple(s for s in self.humans()
                     if s in on and s not in self.tuoguan and s not in rs["ready"])

    def ready_msg(self) -> P.ReadyStep:
        rs = self.ready_step
        assert rs is not None
        return P.ReadyStep(hand=rs["hand"], deadline=rs["deadline"],
                           ready=tuple(sorted(rs["ready"])), waiting=self.ready_waiting())

    def arm_ready(self) -> None:
        """The ready step's timer (while the table is watched)."""
        rs = self.ready_step
        if rs is None or self._ready_timer is not None or not self.conns:
            return
        loop = asyncio.get_running_loop()
        self._ready_timer = loop.call_at(loop.time() + max(0.0, rs["deadline"] - time.time()),
                                         self._ready_due)

    def _ready_due(self) -> None:
        self._ready_timer = None
        if self.ready_step is not None and self.open and not self.closing:
            self.end_ready()
            self.flush()

    def cancel_ready(self) -> None:
        if self._ready_timer is not None:
            self._ready_timer.cancel()
            self._ready_timer = None

    def check_ready(self) -> None:
        """The ready step is over once nobody is waited for; else tell its change."""
        if self.ready_step is None or not self.conns:
            return
        if not self.ready_waiting():
            self.end_ready()
        else:
            msg = self.ready_msg()
            if msg != self._ready_sent:
                self._ready_sent = msg
                self._tell_all(msg)

    def end_ready(self) -> None:
        """The hand begins: every human decision gets its whole allowance
        from now; the decisions are offered, the bots and clock go."""
        rs = self.ready_step
        if rs is None:
            return
        self.cancel_ready()
        done = P.ReadyStep(hand=rs["hand"], deadline=rs["deadline"],
                           ready=tuple(sorted(rs["ready"])), waiting=())
        self.ready_step = None
        now = time.time()
        for d in self.decisions.values():
            if d.deadline is not None:
                d.deadline = now + d.timeout
        for c in self.conns:
            if c.early is None:
                c.send(done)
                if c.hand == self.hand:
                    self.offer(c)
        self.poke()

    def ask_ready(self, conn: Any, msg: P.Ready) -> None:
        """A client's ``ready``."""
        seat = self._seated(conn, "ready step")
        if not self.ready_between:
            raise Refused("NotNow", f"table {self.id} was made without a ready step "
                                    f"(ready: false, or open-ended without ready: true)")
        rs = self.ready_step
        if rs is None or msg.hand != rs["hand"]:
            raise Refused("NotNow", f"hand {msg.hand} has no ready step under way"
                          + (f" (hand {rs['hand']}'s is)" if rs is not None else ""))
        if seat in rs["ready"]:
            raise Refused("AlreadyDone", f"seat {seat} is ready for hand {msg.hand} already")
        rs["ready"].add(seat)
        self.check_ready()
        self.flush()

    # ------------------------------------------------------------ the dissolve vote

    def vote_msg(self, outcome: str | None = None, refused_by: int | None = None) -> P.Vote:
        v = self.vote
        assert v is not None
        return P.Vote(by=v["by"], deadline=v["deadline"], agreed=tuple(sorted(v["agreed"])),
                      waiting=tuple(s for s in self.humans() if s not in v["agreed"]),
                      outcome=outcome, refused_by=refused_by)  # type: ignore[arg-type]

    def _tell_all(self, msg: Any) -> None:
        for c in self.conns:
            if c.early is None:
                c.send(msg)

    def ask_dissolve(self, conn: Any, msg: P.Dissolve) -> None:
        """A client's ``dissolve``: propose a vote, or answer the one under way."""
        seat = self._seated(conn, "vote")
        self._room_only("dissolve vote")
        v = self.vote
        if v is None:
            if not msg.agree:
                raise Refused("NotNow", "no dissolve vote is under way to refuse")
            wait = self.vote_after.get(seat, 0.0) - time.time()
            if wait > 0:
                raise Refused("NotNow", f"seat {seat}'s last dissolve vote was refused: it may "
                                        f"propose again in {math.ceil(wait)} s (its deadline)")
            self.vote = v = {"by": seat, "agreed": {seat},
                             "deadline": time.time() + self.server.vote_timeout}
            loop = asyncio.get_running_loop()
            self._vote_timer = loop.call_at(loop.time() + self.server.vote_timeout,
                                            self._vote_due)
            self.server.events.emit("vote", table=self.id, seat=seat, what="proposed")
        elif seat in v["agreed"]:
            raise Refused("AlreadyDone", f"seat {seat} agreed to this vote already")
        elif not msg.agree:
            self._end_vote("refused", seat)
            self.flush()
            return
        else:
            v["agreed"].add(seat)
        if all(s in v["agreed"] for s in self.humans()):
            self._end_vote("passed")
            self.closing = True   # no act, bot move or timeout from now on
            self._dissolving = asyncio.get_running_loop().create_task(self._dissolve())
        else:
            self._tell_all(self.vote_msg())
        self.flush()

    def _vote_due(self) -> None:
        self._vote_timer = None
        if self.vote is not None and self.open and not self.closing:
            self._end_vote("expired")
            self.flush()

    def _end_vote(self, outcome: str, refused_by: int | None = None) -> None:
        if outcome == "refused":
            self.vote_after[self.vote["by"]] = self.vote["deadline"]  # type: ignore[index]
        self._tell_all(self.vote_msg(outcome, refused_by))
        self.server.events.emit("vote", table=self.id, seat=refused_by, what=outcome)
        self.vote = None
        if self._vote_timer is not None:
            self._vote_timer.cancel()
            self._vote_timer = None

    async def _dissolve(self) -> None:
        self.closing = False   # (close() sets it again, its own way)
        try:
            await self.close(ended="dissolved")
        except Exception as exc:  # noqa: BLE001 - the database did not take it: play on
            self.server.log(f"table {self.id}: its dissolve was not written: {exc}")
            self._tell_all(P.Error(code="Unavailable",
                                   message="the room was not dissolved: the database did not "
                                           "take it; propose again"))
            self.flush()
            self.poke()

    def stop_room(self) -> None:
        self.cancel_ready()
        self.cancel_step()
        if self._vote_timer is not None:
            self._vote_timer.cancel()
            self._vote_timer = None
