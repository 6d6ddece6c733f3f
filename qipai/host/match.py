"""The authority: a hosted table, hand after hand of one ruleset.

A :class:`HostedTable` owns the current hand's :class:`~qipai.core.table.Table`
(made with ``ask_all=True``, so no claim window shows who could claim) and
the connections watching it.  Every change goes through :meth:`HostedTable.play`,
which is synchronous: the action is applied and handed to the store's
group commit (:meth:`~qipai.host.store.Store.submit`).  Everything it causes
for the connections (the ``ack``, the events, the next decisions) is *held*
until every write of the table so far is committed: a connection never sees
an action, nor anything that follows from it, before the action is in the
database.  Then each connection gets what it holds as one frame (one
message, or a ``batch`` of them in order); its writer task sends it, so
nothing here awaits.  A failed write drops what was held, answers each
refused ``act`` ``Unavailable`` and puts the table back by re-reading the
hand from the database (:meth:`HostedTable.reread`: off the event loop on
PostgreSQL; meanwhile the table takes no action, its clock and bots wait,
and a new connection is welcomed once it is back), then sends every
connection a fresh ``welcome``.  Once the
server lock is lost (:class:`~qipai.host.store.LockLost`) every table is
*halted* (:meth:`HostedTable.halt`): :meth:`~HostedTable.play` refuses
``LockLost`` before applying anything, clocks and bots stop, writes in
flight fail (the hand is rebuilt from what was committed).

Decisions: every seat with pending actions has a *decision* — a ``seq``
(the number of actions the hand had when the decision was offered), its
legal list and, for a human seat, a deadline.  A client answers with that
``seq``; anything else is ``StaleSeq``, so an action is never applied twice.
A seat whose deadline passes gets :func:`qipai.core.timeouts.default_action`,
recorded in the hand's ``timeouts``.

Hands: the first dealer comes from the variant; each next hand's dealer is
the previous result's ``next_dealer``.  Running totals are the sum of the
finished hands' net.  An open-ended table plays until the host closes it;
a room (made with ``hands``) closes itself after its last hand, its last
action and its close written together (:mod:`~qipai.host.room`: the 摊牌,
the ready step, the dissolve vote, presence and 托管).

Its parts: :mod:`~qipai.host.outbox` (what connections are told),
:mod:`~qipai.host.clock` (decisions and deadlines), :mod:`~qipai.host.seats`
(tokens, connections, bots), :mod:`~qipai.host.journal` (the database rows
and the rebuild from them), :mod:`~qipai.host.room` (rooms, 准备, 托管),
:mod:`~qipai.host.seatvalues` (joint deals: the seat-value step before a hand).
"""

from __future__ import annotations

import asyncio
import functools
import random
import traceback
import time
from typing import Any

import msgspec

from qipai.bots import BadBot, GreedyBot
from qipai.core import chain
from qipai.core.errors import IllegalAction
from qipai.core.fair import commitment, committed, new_salt
from qipai.core.model import Action
from qipai.core.records import plain, record_of
from qipai.core.sessions import hand_seed
from qipai.core.table import Table
from qipai.host import feed
from qipai.host import protocol as P
from qipai.host.clock import Clock, Decision
from qipai.host.errors import LOCK_LOST, REREADING, Refused
from qipai.host.journal import Journal
from qipai.host.levels import DEFAULT_LEVEL
from qipai.host.outbox import Conn, Outbox
from qipai.host.room import TIMEOUTS_TO_TUOGUAN, Room, showdown_of
from qipai.host.seats import Seats
from qipai.host.seatvalues import SeatValues
from qipai.host.stakes import Stakes
from qipai.host.store import LockLost, StoreError, TableMoved, Write, action_params, said


class HostedTable(Journal, Clock, Seats, Outbox, Room, Stakes, SeatValues):
    """One table of the server (see the module docstring).

    Attributes:
        id: the table id.  ruleset: its ruleset.  n: seats.  bots: bot seats.
        hand: the current hand's index.  table: its Table.  totals: running net.
    """

    def __init__(self, server: Any, row: dict[str, Any], ruleset: Any) -> None:
        self.server = server
        self.store = server.store
        self.id: str = row["id"]
        self.row = row
        self.ruleset = ruleset
        self.n: int = ruleset.manifest.players
        self.bots: tuple[int, ...] = tuple(msgspec.json.decode(row["bots"], type=list[int]))
        self.seat_of_hash: dict[str, int] = {
            h: int(s) for s, h in msgspec.json.decode(row["tokens"], type=dict[str, str]).items()}
        seats = sorted([*self.bots, *self.seat_of_hash.values()])
        if seats != list(range(self.n)):   # (a damaged row: ValueError, DamagedTable at restore)
            raise ValueError(f"its bot seats {list(self.bots)} and token seats "
                             f"{sorted(self.seat_of_hash.values())} are not each seat once "
                             f"(0..{self.n - 1})")
        self.spectator_hash: str = row["spectator_hash"]
        self.admin_hash: str = row["admin_hash"]
        #: the operator key that made it (None: an open demo's table, or one
        #: made before keys were stored)
        self.key_name: str | None = row.get("key_name")
        #: the named players: seat → ``{"player": id, "name": shown}`` (the
        #: operator's; a seat absent: nobody named)
        self.named: dict[int, dict[str, str]] = {
            int(s): p for s, p in msgspec.json.decode(row.get("players") or "{}",
                                                      type=dict[str, dict[str, str]]).items()}
        self.rng_kind: str = row["rng"]
        self.seed: int | None = int(row["seed"]) if row["seed"] is not None else None
        self.open = True
        self.conns: set[Conn] = set()
        self.decisions: dict[int, Decision] = {}
        self.totals = [0] * self.n
        self.hands_done = 0
        #: :meth:`info`'s hand, hands done, dealer, commitment and totals:
        #: the committed state (None: not made yet)
        self.shown: tuple | None = None
        self.hand = 0
        self.table: Table = None  # type: ignore[assignment]
        self.salt = b""
        self.commitment = ""
        self.hand_seed: int | None = None
        self.timeouts: list[int] = []
        #: each bot seat's level (:mod:`qipai.host.levels`; a row made
        #: before levels: normal at each)
        stored = msgspec.json.decode(row.get("bot_levels") or "{}", type=dict[str, str])
        self.levels: dict[int, str] = {s: stored.get(str(s), DEFAULT_LEVEL) for s in self.bots}
        #: a seat's bot thread still running after it ran out of time (seats.BOT_THINK_S)
        self.thinking: dict[int, asyncio.Future] = {}
        #: (hand, seat) whose bot fault was logged (once a seat a hand)
        self.faults_told: set[tuple[int, int]] = set()
        offered = getattr(server, "bot_levels", None)
        self.bot_of = {}
        for s in self.bots:
            rng = self.bot_rng(s)
            if offered is not None and self.levels[s] not in offered.names:
                server.log(f"table {self.id}: bot seat {s}: level {self.levels[s]!r} is not "
                           f"offered by this server (qipai serve --bot); {DEFAULT_LEVEL} "
                           f"plays it")
            try:
                self.bot_of[s] = (offered.make(self.levels[s], rng, self.ruleset, s)
                                  if offered is not None else GreedyBot(rng, self.ruleset))
            except BadBot as exc:   # an operator's bot that could not be made: the table goes on
                server.log(f"table {self.id}: bot seat {s}: {exc}; greedy plays it")
                self.bot_of[s] = GreedyBot(rng, self.ruleset)
        #: greedy bots that answer for a bot seat whose own bot failed a decision
        self.stand_in: dict[int, Any] = {}
        self._started = False
        self._timer: asyncio.TimerHandle | None = None
        self._due: float | None = None
        self._tasks: list[asyncio.Task] = []
        self._bots_running = False
        #: the welcomes made for the state :attr:`_welcome_key` names, by
        #: viewing seat (None: the spectators): resent, not made again, while
        #: nothing changed — a resync is the costliest answer (see welcome)
        self._welcomes: dict[int | None, P.Welcome] = {}
        self._welcome_key: tuple = ()
        self.submitted = 0      # writes submitted since the last failed one
        self.committed = 0      # of those, committed (in order)
        self.epoch = 0          # +1 at every failed write (its later writes are void)
        self.closing = False
        #: the outcome of a close under way (:meth:`close`), which a second
        #: close awaits instead of answering before anything is written
        self._closed: asyncio.Future[None] | None = None
        #: ``(code, message)`` every play is refused with once halted
        #: (:meth:`halt`: the server lock lost, the hand unreadable after a
        #: failed write, an internal error in :meth:`play`); None while it plays.
        self.halted: tuple[str, str] | None = None
        #: The re-read of the hand after a failed write (:meth:`reread`),
        #: while it runs; None otherwise.
        self.rereading: asyncio.Task | None = None
        self.chain_init(row["spec"])
        self.room_init(row)
        self.money_init(row)
        self.seat_values_init(row)

    # ------------------------------------------------------------ hands

    def new_hand(self, index: int, dealer: int | None) -> tuple[Table, bytes, str, int | None]:
        """A freshly dealt hand ``index`` (not installed): the OS's CSPRNG,
        or the seeded table's :func:`~qipai.core.sessions.hand_seed`."""
        if self.seat_values_on:   # a joint deal: provisional until its step ends
            table, seed = self.joint_hand(index, dealer)
            salt = new_salt()
            return table, salt, commitment(table.deal, salt), seed
        seed = hand_seed(self.seed, index) if self.seed is not None else None
        table = Table(self.ruleset, seed=seed, dealer=dealer, ask_all=True)
        salt = new_salt()
        return table, salt, commitment(table.deal, salt), seed

    def install(self, index: int, table: Table, salt: bytes, commit: str,
                seed: int | None) -> None:
        self.hand, self.table, self.salt, self.commitment = index, table, salt, commit
        self.hand_seed = seed
        self.chain_start = self._chain_next
        self.timeouts = []
        self.tuoguan_moves = []
        self.decisions = {}
        self.answered: dict[int, int] = {}  # seat → seq of its last decision taken
        self.refresh_decisions()
        self.install_joint(index)

    def record(self, head: str | None = None, money: Any = None) -> dict[str, Any]:
        """The current hand's record (the record format, as a dict): stamped,
        deal and salt revealed (:func:`qipai.core.fair.committed`), with
        its timeouts (and ``money``, the hand's in a table with a stake) and,
        ``head`` given (the hand's end link), its chain."""
        rec = committed(record_of(self.table), self.salt)
        assert rec.commitment == self.commitment
        rec.timeouts = list(self.timeouts)
        rec.joint = self.joint_record()   # a joint deal's parts (None: not one)
        if money is not None:
            rec.money = money
        where = self.chain_of(head) if head is not None else None
        if where is not None:
            rec.chain = where
        out = plain(rec)
        if self.tuoguan_moves:   # (only then: a record of a hand without 托管 is as before)
            out["tuoguan"] = list(self.tuoguan_moves)
        return out

    # ------------------------------------------------------------ playing

    def check(self, seat: int | None, msg: P.Act) -> Decision:
        """The decision ``msg`` answers, or :class:`Refused`."""
        if not self.open or self.closing:
            raise Refused("TableClosed", f"table {self.id} is closed")
        if seat is None:
            raise Refused("Spectator", "a spectator cannot act")
        if msg.action.seat != seat:
            raise Refused("WrongSeat", f"this connection holds seat {seat}, "
                                       f"not seat {msg.action.seat}")
        if msg.hand != self.hand:
            raise Refused("HandOver" if msg.hand < self.hand else "StaleSeq",
                          f"hand {msg.hand} is over; this is hand {self.hand}"
                          if msg.hand < self.hand else f"there is no hand {msg.hand} yet")
        if self.ready_step is not None:   # nothing is offered before it ends
            raise Refused("NotNow", f"hand {self.hand}'s ready step is under way: its "
                                    f"decisions are offered once it ends")
        if self.deal_step is not None:   # not dealt yet
            raise Refused("NotNow", f"hand {self.hand}'s seat-value step is under way: it "
                                    f"is dealt, and its decisions offered, once it ends")
        d = self.decisions.get(seat)
        if d is None:
            if msg.seq <= self.answered.get(seat, -1):
                raise Refused("StaleSeq", f"decision {msg.seq} of seat {seat} is already taken")
            raise Refused("NotYourTurn", f"seat {seat} has nothing to decide now")
        if msg.seq != d.seq:
            raise Refused("StaleSeq", f"seq {msg.seq} is not seat {seat}'s current "
                                      f"decision ({d.seq})")
        return d

    @property
    def uncommitted(self) -> int:
        """Writes of the table submitted and not yet committed."""
        return self.submitted - self.committed

    def _playable(self) -> None:
        """Raise :class:`Refused` if the table takes no action now: its
        :attr:`halted` code, or ``Unavailable`` while its hand is re-read."""
        if self.halted is not None:
            raise Refused(*self.halted)
        if self.rereading is not None:
            raise Refused("Unavailable", REREADING.format(id=self.id))

    def play(self, seat: int, action: Action, timeout: bool = False,
             conn: Conn | None = None, seq: int | None = None,
             future: asyncio.Future | None = None, tuoguan: bool = False) -> None:
        """Apply ``action`` of ``seat``, submit it to the group commit and
        prepare what the connections are told (held until it is committed).

        ``tuoguan``: the table's bot plays for a seat in 托管 (recorded so).
        ``conn`` and ``seq``: the acting connection gets ``Ack(seq)`` first,
        or ``Error(Unavailable, seq)`` if the write fails.  ``future``, if
        given, gets None once committed, or :class:`Refused` ``Unavailable``.

        Raises:
            Refused: ``IllegalAction`` (the table unchanged, nothing written);
                the table's :attr:`halted` code (``LockLost``: nothing applied);
                ``InternalError``: a plugin or the server failed on the action
                before its write was submitted — nothing written, the table
                halted (:meth:`_broken`; a failure after the submit halts it
                too, and the action, submitted, is answered at its commit).
        """
        self._playable()
        table = self.table
        hand = self.hand
        index = len(table.actions)
        taken = self.decisions.get(seat)
        start = len(table.events)
        listed = action in table.pending.get(seat, ())
        try:
            table.apply(action)
        except IllegalAction as exc:
            if listed:   # a legal action refused: a hook raised it (the engine lets a
                # QipaiError through unwrapped) — its words may tell of concealed cards
                raise self._broken(exc, f"seat {seat}'s {action!r}") from None
            raise Refused("IllegalAction", exc.reason) from None
        except Exception as exc:  # noqa: BLE001 - a plugin's fault (PluginError), or ours
            raise self._broken(exc, f"seat {seat}'s {action!r}") from None
        if timeout:
            self.timeouts.append(index)
        elif tuoguan:
            self.tuoguan_moves.append(index)
        try:   # the action is applied in memory: until it is submitted, nothing may fail
            # what it caused must reach the seats: an event a plugin made that does
            # not encode would fail at its commit, in the store's writer
            P.encode(P.Events(hand=hand, first=start, events=tuple(table.events[start:])))
            link = self.chain_action(hand, index, table.actions[-1], timeout, tuoguan)
            ops = [("action", action_params(self.id, hand, index, table.actions[-1],
                                            timeout, tuoguan, link))]
            # the operator's events (qipai.host.feed), in the same transaction
            if timeout:
                ops.append(feed.timeout(self, hand, seat, index))
            if seat not in self.bots and not tuoguan:
                if timeout:
                    if (self.missed.get(seat, 0) + 1 >= TIMEOUTS_TO_TUOGUAN
                            and seat not in self.tuoguan):
                        ops.append(feed.tuoguan(self, hand, seat, True, "timeouts"))
                elif seat in self.tuoguan:
                    ops.append(feed.tuoguan(self, hand, seat, False, "played"))
            nxt = None
            tally = None   # the room's last hand ended: its 大结算
            money = None   # the hand in money: a table with a stake
            if table.over:
                money = self.hand_money(table.result)
                self.chain_head = end = chain.end_link(self.chain_head, self.id, hand,
                                                       list(table.result.net),
                                                       self.money_link(money))
                rec = self.record(end, money)
                ops.append(("finish_hand", dict(
                    record=msgspec.json.encode(rec).decode(),
                    net=msgspec.json.encode(list(table.result.net)).decode(),
                    end_link=end, k_table=self.id, k_hand=hand, **self.money_row(money))))
                after = [a + b for a, b in zip(self.totals, table.result.net)]
                ops.append(feed.hand_ended(self, hand, table.result, rec, after,
                                           money, self.money_after(money)))
                if self.last_hand():   # the room is over: it closes in the same write
                    tally = self.money_tally(self.final_tally(table), money)
                    ops.append(("close", dict(k_table=self.id, closed=time.time(),
                                              ended="finished",
                                              tally=msgspec.json.encode(tally).decode())))
                    ops.append(feed.table_closed(self, "finished", self.hands_done + 1,
                                                 after, tally, end))
                else:
                    nxt = self.new_hand(hand + 1, table.result.next_dealer)
                    ops.append(("hand", self.hand_row(hand + 1, *nxt)))
                    ops.extend(self.started_ops(hand + 1, nxt[0], nxt[2]))
        except Exception as exc:  # noqa: BLE001 - the next deal's plugins, the record's encoding
            raise self._broken(exc, f"writing seat {seat}'s {action!r}") from None
        for c in self.conns:   # what is held so far waits for the writes before this one
            if c.held and (not c.cuts or c.cuts[-1][1] < len(c.held)):
                c.cuts.append((self.submitted, len(c.held)))
        self.submitted += 1
        ends: list = []   # a hand ended: what info() shows once this write commits
        answer = functools.partial(self._written, self.epoch, conn, hand, seq, future, ends)
        if tally is not None:
            self.closing = True   # no act, bot move or timeout from now on
            answer = functools.partial(self._room_written, answer)
        self.store.submit(Write(self.id, ops, answer))
        self.server.events.applied()
        if taken is not None:
            self.answered[seat] = taken.seq
        marks = [(c, len(c.held)) for c in self.conns]   # what this write causes: after
        if conn is not None:
            conn.send(P.Ack(hand=hand, seq=seq))
        try:   # submitted: the action counts (it is answered at its commit), the rest may fail
            if seat not in self.bots and not tuoguan:
                self.played(seat, timeout)   # 托管: a timeout counts, a move of his own ends it
            self.refresh_decisions()
            self.sync()
            if table.over:
                result = table.result
                self.totals = [a + b for a, b in zip(self.totals, result.net)]
                self.count_money(money)
                self.hands_done += 1
                if tally is None:
                    self.count_hand(result.net, table.events)
                showdown = showdown_of(table)   # 摊牌: the hand is over
                self.last = P.LastResult(hand=hand, result=result, showdown=showdown,
                                         money=money)
                ended = P.HandEnded(hand=hand, result=result, totals=tuple(self.totals),
                                    records=f"/tables/{self.id}/records", showdown=showdown,
                                    money=money,
                                    money_totals=tuple(self.money_totals)
                                    if money is not None else None)
                for c in list(self.conns):
                    c.send(ended)
                if nxt is not None:
                    self.install(hand + 1, *nxt)
                    if self.ready_between and self.deal_step is None:
                        self.begin_ready()   # (after a seat-value step: at its deal)
                ends.append(self._now())
                ends.append((hand, result.end, list(result.net)))   # logged at its commit
                if nxt is not None:
                    self.sync()
                    self.check_ready()
                    self.check_step()
                else:
                    for c in list(self.conns):
                        c.send(tally)
        except Exception as exc:  # noqa: BLE001 - a plugin's view or legal list, or ours
            for c, n in marks:   # half of what it caused may be held: only the acks stay
                c.held[n:] = [m for m in c.held[n:] if isinstance(m, P.Ack)]
            self._broken(exc, f"what follows seat {seat}'s {action!r}")
            return
        self.poke()

    def _broken(self, exc: BaseException, what: str) -> Refused:
        """An unexpected error while playing — a plugin's fault
        (:class:`~qipai.core.errors.PluginError`, the engine's wrapping of
        a hook that raised or answered nonsense, or anything raised by the
        next hand's deal) or the server's own: the table in memory can no
        longer be trusted to be the database's, so it is halted
        (``InternalError``, until the server restarts and replays what was
        committed), every connection told at once; the traceback goes to
        the server's log only (a plugin's words may tell of concealed
        cards).  Returns the :class:`Refused` for an action that failed
        before its write was submitted (not applied: nothing of it is
        written; the restarted server offers its decision again).  (Not
        retried: retrying would only fail again —
        a bot or a timeout in a loop — and a half-applied hand must never
        be served.)"""
        detail = "".join(traceback.format_exception(exc)).rstrip()
        self.server.log(f"table {self.id}: halted: {what} failed:\n{detail}")
        told = (f"table {self.id} stopped on an internal error (a fault of the server or of "
                f"a plugin, not of the players); it takes no action until the server is "
                f"restarted (the server's log says why)")
        if self.halted is None:
            self.halt_and_tell("InternalError", told)
        return Refused("InternalError", f"the action was not applied: {told}")

    def halt(self, code: str, message: str) -> None:
        """Stop the table for good (until the server restarts): every later
        play is refused ``Refused(code, message)`` before anything is
        applied, its clock and bots stop, a new connection does not resume it."""
        self.halted = (code, message)
        self._started = False   # poke() starts nothing again
        for c in self.conns:
            c.direct = True     # what is said from now on waits for no write
        self.stop()

    def lock_lost(self, exc: BaseException) -> None:
        """The server lock is lost: halt the table (``LockLost``) and tell
        every connection (its held messages are sent once the writes still
        in flight have failed).  Clients are told :data:`LOCK_LOST`, not
        ``exc``'s reason (the server logs that).  Once only: a table halted
        already (a write of it saw the loss first) is not told again."""
        if self.halted is not None and self.halted[0] == "LockLost":
            return
        self.halt_and_tell("LockLost", LOCK_LOST)

    def halt_and_tell(self, code: str, message: str) -> None:
        """:meth:`halt`, then tell every connection ``Error(code, message)``
        once — a connection not welcomed yet (a re-read) is told now, then
        what it was answered meanwhile."""
        self.halt(code, message)
        for c in self.conns:
            early, c.early = c.early, None
            c.send(P.Error(code=code, message=message))
            for m in early or ():
                if not isinstance(m, P.SeatConns):   # a count comes after a welcome only
                    c.send(m)
        self.flush()

    def act(self, conn: Conn, msg: P.Act) -> None:
        """A client's :class:`~qipai.host.protocol.Act`: checked, played and
        acknowledged once committed, or :class:`Refused` — ``Unavailable``
        while the hand is re-read, before anything about the act is checked
        (a refusal such as ``StaleSeq`` would tell of actions the database
        may not have)."""
        self._playable()
        self.check(conn.seat, msg)
        self.play(conn.seat, msg.action, conn=conn, seq=msg.seq)  # type: ignore[arg-type]

    # ------------------------------------------------------------ closing

    async def settled(self) -> None:
        """Wait until no write of the table awaits its commit and its hand
        is not being re-read."""
        while self.uncommitted or self.rereading is not None:
            await asyncio.sleep(0.002)

    async def close(self, ended: str = "closed") -> None:
        """Close the table: no more actions or hands; an unfinished hand's
        record (deal and salt revealed, no result) is stored, and the
        server no longer holds the table (``Server.tables``): what is asked
        of it later is read from the database.  ``ended``: ``"closed"`` (the
        host) or ``"dissolved"`` (a room's vote passed); a room's
        :class:`~qipai.host.protocol.Tally` is stored and sent first.

        Raises:
            LockLost: the server lock was lost (the table stays open).
            StoreError: the database did not take it, or the table is halted
                (the table stays open); the message names no database detail
                (the server's log has it).
        """
        if not self.open:
            return
        if self._closed is not None:   # a close under way: its outcome is this one's
            await asyncio.shield(self._closed)
            return
        self.closing = True     # no act, bot move or timeout from now on
        self._closed = closed = asyncio.get_running_loop().create_future()
        try:
            await self._close(ended)
        except asyncio.CancelledError:
            closed.cancel()
            raise
        except BaseException as exc:
            closed.set_exception(exc)
            closed.exception()   # retrieved: no warning when nobody else waits
            raise
        else:
            closed.set_result(None)
        finally:
            self._closed = None

    async def _close(self, ended: str) -> None:
        tally = None
        try:
            await self.settled()
            if self.halted is not None:   # its hand in memory may not be the database's
                raise StoreError(f"table {self.id} was not closed: {self.halted[1]}")
            # the unfinished hand's end (no net): the head moves once it is written
            end = chain.end_link(self.chain_head, self.id, self.hand, None)
            rec = self.record(end)
            if self.room_hands is not None:
                tally = self.money_tally(self.tally(ended, self.totals, self.hands_done))
            done = asyncio.get_running_loop().create_future()

            def written(exc: BaseException | None) -> None:
                if not done.done():
                    done.set_result(exc)

            self.store.submit(Write(self.id, [
                ("finish_hand", dict(record=msgspec.json.encode(rec).decode(),
                                     end_link=end, k_table=self.id, k_hand=self.hand)),
                ("close", dict(k_table=self.id, closed=time.time(), ended=ended,
                               tally=msgspec.json.encode(tally).decode() if tally else None)),
                feed.table_closed(self, ended, self.hands_done, self.totals, tally, end),
            ], written))
            exc = await done
            if isinstance(exc, LockLost):   # logged once, by the server
                raise LockLost(f"table {self.id} was not closed: {LOCK_LOST}")
            if isinstance(exc, TableMoved):   # (a cluster) another node's now: dropped here
                self.moved_away(exc, None, None, None)
                raise StoreError(f"table {self.id} was not closed: it is served by node "
                                 f"{exc.owner} now; close it there")
            if exc is not None:
                self.server.log(f"table {self.id}: its close was not written: {said(exc)}")
                raise StoreError(f"table {self.id} was not closed: the database did not take "
                                 f"it (the server's log says why); try again")
            self.chain_head = end
        finally:
            self.closing = False
        self.closed_now(ended, tally)

    def _room_written(self, answer: Any, exc: BaseException | None) -> None:
        """The write of a room's last action (its close too) is committed
        (the room ends: ``finished``) or failed (re-read as any write)."""
        answer(exc)
        if exc is None and self.halted is None:
            self.closing = False
            self.closed_now("finished", None)
        elif exc is not None:
            self.closing = False

    def closed_now(self, ended: str, tally: P.Tally | None) -> None:
        """The close is committed: tell everyone (``tally`` first, if any),
        close the connections, forget the table."""
        self.open = False
        self.ended = ended
        self.step_closed()   # (a seat-value step's connections have no welcome)
        self.stop_room()
        self.server.events.emit("table_closed", table=self.id, key=self.key_name,
                                hands=self.hands_done, totals=list(self.totals), ended=ended)
        closed = P.Closed(totals=tuple(self.totals))
        for conn in list(self.conns):
            if tally is not None:
                conn.send(tally)
            conn.send(closed)
            conn.frame()
            conn.put(None)  # the writer closes the socket
        self.stop()
        # no longer served: out of the server's memory (each closed table
        # held about 25 KB until the server stopped, and /health counted it);
        # the database answers for it from now on
        if self.server.tables.get(self.id) is self:
            del self.server.tables[self.id]

    # ------------------------------------------------------------ info

    def _now(self) -> tuple[int, int, int, str, tuple[int, ...], dict[str, Any]]:
        """The hand, hands done, dealer, commitment, totals and money now."""
        return (self.hand, self.hands_done, self.table.dealer, self.commitment,
                tuple(self.totals), self.money_info())

    def committed_now(self) -> None:
        """What the table holds now is committed (made, or read back):
        :meth:`info` shows it."""
        self.shown = self._now()

    def bot_rng(self, seat: int) -> random.Random:
        """A bot's RNG at ``seat``: from the server seed at a seeded table."""
        return (random.Random(f"qipai-serve:{self.seed}:{seat}") if self.seed is not None
                else random.Random())

    def info(self) -> P.TableInfo:
        """``GET /tables/{id}``: the hand, totals and commitment as
        committed — a hand that ended in a write not yet committed shows
        once it is (a write that fails takes nothing back that was shown)."""
        hand, done, dealer, commitment, totals, money = self.shown or self._now()
        if self.deal_step is not None and hand == self.deal_step["hand"]:
            dealer = None   # not dealt yet: the provisional deal's dealer is not shown
        return P.TableInfo(
            id=self.id, spec=self.ruleset.spec, variant=self.ruleset.name, players=self.n,
            bots=self.bots, hand=hand, hands_done=done,
            dealer=dealer, rng=self.rng_shown, commitment=commitment,
            totals=totals, open=self.open,
            connected=tuple(sorted({c.seat for c in self.conns if c.seat is not None})),
            watched=bool(self.conns), names=self.names(), hands=self.room_hands,
            ready=self.ready_between,
            levels={str(s): lv for s, lv in sorted(self.levels.items())},
            ended=self.ended, **money, **self.where())

    def where(self) -> dict[str, Any]:
        """(A cluster.)  The serving node and its address (the server's
        ``where``); empty outside a cluster."""
        where = getattr(self.server, "where", None)
        return where() if where is not None else {}

    def names(self) -> dict[str, str]:
        """The named seats' names, ``{"0": "阿明"}`` (public at the table)."""
        return {str(s): p["name"] for s, p in sorted(self.named.items())}
