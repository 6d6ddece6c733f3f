"""A hosted table: hand after hand of one ruleset, its seats, bots and clocks.

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
finished hands' net.  A table plays until the host closes it.

Watched: a table plays only while at least one connection (a seat or the
spectator) is attached.  With none — an all-bot table nobody watches, every
player gone, a table just restored — it *pauses*: its bots do not move and
its clock does not run, so no default action is played for an absent seat
and nothing is written.  The first connection resumes it, every open
decision with a fresh deadline (the whole allowance again, as after a
restart).  (A choice where issue 12 was silent: an unwatched table would
otherwise play bots, or time out absent seats, forever.)
"""

from __future__ import annotations

import asyncio
import collections
import functools
import random
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import msgspec

from qipai.bots import GreedyBot, decide, hand_seed
from qipai.core.errors import IllegalAction, QipaiError
from qipai.core.model import Action, Deal
from qipai.core.records import record_of
from qipai.core.table import SeatView, Table, meld_view, redact
from qipai.core.timeouts import default_action
from qipai.host import protocol as P
from qipai.host import trace
from qipai.host.store import (CommitUnknown, LockLost, StoreError, StoreStopped, Write,
                              action_params, said)
from qipai.core.fair import commitment, committed, new_salt

#: What a client is told once the server lock is lost.  The reason (the
#: database's own words, which may name its host and user) goes to the
#: server's log only (:meth:`~qipai.server.state.Server.lock_lost`).
LOCK_LOST = ("the server lost its database lock (the server's log says why): another server "
             "may take the database, so this one takes no action and writes nothing any "
             "more; restart it")
#: What an ``act`` is told whose write failed with the lock's connection
#: during its commit itself (:class:`~qipai.host.store.CommitUnknown`):
#: whether the database took it is not known (a restarted server shows which).
IN_FLIGHT_LOST = ("not acknowledged: the server lost its database lock during this action's "
                  "commit, so whether the database took it is not known (a restarted "
                  "server's welcome shows which). " + LOCK_LOST)
#: What an ``act`` is told whose write failed with the lock lost before its
#: commit was sent (waiting in the queue, or on a statement): not taken.
NOT_TAKEN_LOST = "not applied: " + LOCK_LOST
#: What ``act`` and ``play`` are refused while a table re-reads its hand.
REREADING = ("table {id} is reading its hand back from the database after a failed write; "
             "try again shortly")

#: The errors of stored rows that do not read (decoded or converted):
#: :class:`DamagedTable` at restore.
UNREADABLE = (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, KeyError,
              IndexError)

_ACTION = msgspec.json.Decoder(Action)
_DEAL = msgspec.json.Decoder(Deal)


class DamagedTable(QipaiError):
    """A table's stored rows do not read or replay (the database is
    damaged): its message says where (hand, action) and what kind of error,
    which clients may be told; :attr:`detail` is the error's own words for
    the server's log only — an illegal action's reason may name a card a
    seat holds or does not hold."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


class Refused(Exception):
    """A client message refused with ``code`` (an :data:`~qipai.host.protocol.ErrorCode`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Decision:
    """One seat's open decision (``legal`` is the table's own pending list)."""

    seq: int
    legal: list[Action]
    deadline: float | None  # None for a bot seat
    timeout: float


#: The most characters of frames a connection may have waiting unread
#: (:attr:`Conn.queued`): about 150 welcomes of a long hand, far more than
#: a client that reads ever lags.
MAX_QUEUED_CHARS = 1 << 20
#: The WebSocket close code of a connection dropped for not reading its
#: frames (:meth:`Conn.put`).
CLOSE_TOO_SLOW = 4408
#: The most connections one seat may have open at once (a player's
#: devices and tabs); one more is refused ``TooManyConnections`` (close 4429).
MAX_CONNS_PER_SEAT = 8
#: The most spectator connections of one table (as :data:`MAX_CONNS_PER_SEAT`).
MAX_SPECTATORS = 64


@dataclass(eq=False)
class Conn:
    """One WebSocket connection: a seat, or a spectator (``seat`` None).

    :meth:`send` only holds a message; the table frames what is held once
    every write submitted before it was sent is committed
    (:meth:`HostedTable.flush`, :meth:`release`) and puts the frame (a
    ``str``; None: close the socket) in ``outbox``, which the connection's
    writer task empties (:meth:`frames_out`).  Once the table is halted
    (``direct``) a message is framed at once: nothing said after the halt
    depends on a write, and a write that hangs must not hold it."""

    seat: int | None
    outbox: collections.deque = field(default_factory=collections.deque)
    wake: asyncio.Future | None = None  # the writer waits on it while outbox is empty
    hand: int = -1          # the hand its last Welcome was of
    sent: int = 0           # events of that hand it has been sent
    decided: int | None = None  # seq of the last Decide it was sent
    held: list = field(default_factory=list)  # messages not yet framed
    #: ``(w, n)``: ``held[:n]`` was sent before the table's write ``w`` was
    #: submitted, so it may be framed once its writes before ``w`` are committed.
    cuts: collections.deque = field(default_factory=collections.deque)
    direct: bool = False    # its table is halted: frame every message at once
    tr: dict | None = None  # (hand, seq) → its act's trace entry (QIPAI_SERVE_TRACE only)
    frames: int = 0         # frames put in the outbox (traced only)
    #: Attached while its table re-read its hand: what it is sent before its
    #: first welcome (a pong, a refusal), held to follow that welcome.
    early: list | None = None
    #: Characters of the frames in ``outbox`` (what the client has not read
    #: yet); past :data:`MAX_QUEUED_CHARS` the connection is closed
    #: (:data:`CLOSE_TOO_SLOW`) and its queue dropped.
    queued: int = 0
    #: The close code its writer closes the socket with (None: 1000).
    close_code: int | None = None

    def send(self, msg: Any) -> None:
        if self.early is not None:
            self.early.append(msg)
        elif self.direct:
            self.put(P.encode(msg).decode())
        else:
            self.held.append(msg)

    def release(self, committed: int) -> None:
        """Frame what was held before write ``committed`` was submitted
        (the table's writes before it are committed; see :attr:`cuts`)."""
        n = 0
        cuts = self.cuts
        while cuts and cuts[0][0] <= committed:
            n = cuts.popleft()[1]
        if not n:
            return
        rest, self.held = self.held[n:], self.held[:n]
        self.frame()
        self.held = rest
        self.cuts = collections.deque((w, k - n) for w, k in cuts)

    def put(self, frame: str | None) -> None:
        """Queue ``frame`` for the writer (None: close the socket).

        A client that does not read its socket (or not fast enough) must
        not grow the server's memory: once the frames waiting for it pass
        :data:`MAX_QUEUED_CHARS` they are dropped and the connection is
        closed with :data:`CLOSE_TOO_SLOW` (it may reconnect: its welcome
        gives the hand as it is).  Nothing is queued after a close."""
        if self.close_code is not None or (self.outbox and self.outbox[-1] is None):
            return  # closing: nothing more is sent
        if frame is not None:
            self.queued += len(frame)
            if self.queued > MAX_QUEUED_CHARS:
                self.outbox.clear()
                self.queued = 0
                self.close_code = CLOSE_TOO_SLOW
                frame = None
        self.outbox.append(frame)
        wake = self.wake
        if wake is not None:
            self.wake = None
            if not wake.done():
                wake.set_result(None)

    def take(self) -> str | None:
        """(The writer.)  The next frame of a non-empty outbox."""
        frame = self.outbox.popleft()
        if frame is not None:
            self.queued -= len(frame)
        return frame

    async def frames_out(self) -> str | None:
        """(The writer.)  The next frame, waiting while there is none."""
        while not self.outbox:
            self.wake = asyncio.get_running_loop().create_future()
            await self.wake
        return self.take()

    def frame(self) -> None:
        """Put what is held in the outbox as one frame."""
        msgs = self.held
        if not msgs:
            return
        self.held = []
        self.cuts = collections.deque()   # nothing held: no cut (release() keeps its own)
        one = msgs[0] if len(msgs) == 1 else P.Batch(messages=tuple(msgs))
        self.put(P.encode(one).decode())
        if trace.ON:
            self.frames += 1
            if self.tr:
                now = trace.perf_counter()
                for e in self.tr.values():
                    if e[trace.COMMITTED] is not None and e[trace.FRAMED] is None:
                        e[trace.FRAMED], e[trace.FRAME] = now, self.frames


def public_view(table: Table) -> SeatView:
    """What a spectator may see: no concealed hand, another seat's hidden
    melds and unshown draws redacted for everyone (``seat`` -1)."""
    st = table.state
    w = st.window
    fdk = dict(getattr(table.ruleset.manifest, "face_down_kinds", ()))
    return SeatView(
        seat=-1, dealer=st.dealer, turn=st.turn, hand=(),
        hand_sizes=tuple(len(s.hand) for s in st.seats),
        melds=tuple(tuple(meld_view(m, False, fdk) for m in s.melds) for s in st.seats),
        discards=tuple(tuple(s.discards) for s in st.seats),
        stock=len(st.wall),
        window=(w.card, w.owner, w.source) if w is not None else None,
        legal=(), instant=tuple(st.instant),
        events=tuple(redact(e, -1, fdk) for e in st.events),
        result=st.result,
    )


class HostedTable:
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
        self.rng_kind: str = row["rng"]
        self.seed: int | None = int(row["seed"]) if row["seed"] is not None else None
        self._fdk = dict(getattr(ruleset.manifest, "face_down_kinds", ()))
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
        self.players = {s: GreedyBot(random.Random(f"qipai-serve:{self.seed}:{s}")
                                     if self.seed is not None else None, self.ruleset)
                        for s in self.bots}
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

    # ------------------------------------------------------------ hands

    def new_hand(self, index: int, dealer: int | None) -> tuple[Table, bytes, str, int | None]:
        """A freshly dealt hand ``index`` (not installed): the OS's CSPRNG,
        or the seeded table's :func:`~qipai.bots.hand_seed`."""
        seed = hand_seed(self.seed, index) if self.seed is not None else None
        table = Table(self.ruleset, seed=seed, dealer=dealer, ask_all=True)
        salt = new_salt()
        return table, salt, commitment(table.state.deal, salt), seed

    def hand_row(self, index: int, table: Table, salt: bytes, commit: str,
                 seed: int | None) -> dict[str, Any]:
        return dict(table_id=self.id, hand=index,
                    deal=msgspec.json.encode(table.state.deal).decode(),
                    seed=str(seed) if seed is not None else None,
                    commitment=commit, salt=salt.hex())

    def install(self, index: int, table: Table, salt: bytes, commit: str,
                seed: int | None) -> None:
        self.hand, self.table, self.salt, self.commitment = index, table, salt, commit
        self.hand_seed = seed
        self.timeouts = []
        self.decisions = {}
        self.answered: dict[int, int] = {}  # seat → seq of its last decision taken
        self.refresh_decisions()

    def table_from_row(self, hand: dict[str, Any]) -> Table:
        """The hand's table from its stored deal, before any action."""
        table = Table(self.ruleset, deal=_DEAL.decode(hand["deal"]), ask_all=True)
        table.seed = int(hand["seed"]) if hand["seed"] is not None else None
        table.state.rng = self.rng_kind
        return table

    def rebuild(self) -> None:
        """The current hand again from the database, read here (blocking:
        the server's start-up; after a failed write, :meth:`reread`).

        Raises:
            StoreError: the database failed the read.
            QipaiError: no hand is stored.
            DamagedTable: the stored rows do not read or replay."""
        self.rebuild_from(*self.stored())

    def stored(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(Blocking: a worker thread's, or the start-up's.)  The table's
        hand rows and its current hand's action rows."""
        hands = self.store.hands_of(self.id)
        if not hands:
            raise QipaiError(f"table {self.id} has no hand stored; the database is damaged")
        return hands, self.store.actions_of(self.id, hands[-1]["hand"])

    def rebuild_from(self, hands: list[dict[str, Any]], acts: list[dict[str, Any]]) -> None:
        """The current hand again from its rows (:meth:`stored`): its
        deal, then every stored action in ``seq`` order.

        Raises:
            DamagedTable: a row does not read (not JSON, not an action, a
                bad deal or salt) or an action does not replay."""
        where = ["the finished hands' results"]
        try:
            self._rebuild_from(hands, acts, where)
        except (QipaiError, *UNREADABLE) as exc:
            raise DamagedTable(
                f"table {self.id}: its stored rows do not replay at {where[0]} "
                f"({type(exc).__name__}; the server's log says why); the database is damaged",
                f"its stored rows do not replay at {where[0]}: {said(exc)}") from None

    def _rebuild_from(self, hands: list[dict[str, Any]], acts: list[dict[str, Any]],
                      where: list[str]) -> None:
        done = [h for h in hands if h["net"] is not None]
        self.totals = [0] * self.n
        for h in done:
            for i, x in enumerate(msgspec.json.decode(h["net"])):
                self.totals[i] += x
        self.hands_done = len(done)
        current = hands[-1]
        where[0] = f"hand {current['hand']}'s deal"
        salt = bytes.fromhex(current["salt"])
        if commitment(_DEAL.decode(current["deal"]), salt) != current["commitment"]:
            raise QipaiError("its deal and salt are not what its commitment was made of")
        table = self.table_from_row(current)
        self.install(current["hand"], table, salt,
                     current["commitment"], int(current["seed"]) if current["seed"] else None)
        for i, row in enumerate(acts):
            where[0] = f"hand {current['hand']}'s action {i}"
            if row["seq"] != i:
                raise QipaiError(f"table {self.id} hand {current['hand']}: stored action "
                                 f"{row['seq']} follows {i - 1}; the database is damaged")
            action = _ACTION.decode(row["action"])
            taken = self.decisions.get(action.seat)
            table.apply(action)
            if taken is not None:
                self.answered[action.seat] = taken.seq
            if row["timeout"]:
                self.timeouts.append(i)
            self.refresh_decisions()
        self.committed_now()
        if table.over:  # pragma: no cover - the next hand is stored with the last action
            raise QipaiError(f"table {self.id}: hand {self.hand} is over but has no next hand")

    def record(self) -> dict[str, Any]:
        """The current hand's record (the record format, as a dict): stamped,
        deal and salt revealed (:func:`qipai.core.fair.committed`), with
        its timeouts."""
        rec = committed(record_of(self.table), self.salt)
        assert rec.commitment == self.commitment
        rec.timeouts = list(self.timeouts)
        return msgspec.to_builtins(rec)

    # ------------------------------------------------------------ decisions

    def refresh_decisions(self) -> None:
        """Give every seat whose pending list is new a new decision."""
        st = self.table.state
        now = time.time()
        fresh: dict[int, Decision] = {}
        for seat, legal in st.pending.items():
            old = self.decisions.get(seat)
            if old is not None and old.legal is legal:
                fresh[seat] = old
                continue
            allow = self.server.claim_timeout if st.window is not None else self.server.turn_timeout
            fresh[seat] = Decision(len(st.actions), legal,
                                   None if seat in self.bots else now + allow, allow)
        self.decisions = fresh

    # ------------------------------------------------------------ tokens and connections

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
        if resume:
            now = time.time()
            for d in self.decisions.values():
                if d.deadline is not None:
                    d.deadline = now + d.timeout   # paused time is not counted
        if self.rereading is not None:
            conn.early = []   # its welcome comes first, once the hand is back
            self.tell_seat(conn.seat)
            return
        self.greet(conn)
        self.tell_seat(conn.seat)
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
        if not self.conns and self._timer is not None:
            self._timer.cancel()   # nothing runs unwatched: no timeout while paused
            self._timer = self._due = None

    @property
    def paused(self) -> bool:
        """No connection watches the table: its bots and clock wait."""
        return not self.conns

    def view_of(self, seat: int | None) -> SeatView:
        return public_view(self.table) if seat is None else self.table.view(seat)

    def greet(self, conn: Conn) -> None:
        """:meth:`welcome` ``conn`` outside :meth:`play` (a new connection,
        a resync, the hand read back): a view that does not build halts the
        table (:meth:`_broken`).  (Inside ``play`` the error is ``play``'s:
        what the action caused stays held.)"""
        try:
            self.welcome(conn)
        except Exception as exc:  # noqa: BLE001 - a fault of the view (a plugin's state)
            self._broken(exc, "welcoming a connection")

    def welcome(self, conn: Conn) -> None:
        """Send ``conn`` the full view (and its decision, if any); what it
        was sent before its first welcome (:attr:`Conn.early`) follows."""
        early, conn.early = conn.early, None
        conn.send(self._welcome_for(conn.seat))
        conn.hand, conn.sent, conn.decided = self.hand, len(self.table.state.events), None
        self.offer(conn)
        if early:
            conn.held.extend(early)

    def _welcome_for(self, seat: int | None) -> P.Welcome:
        """The welcome of ``seat`` (None: a spectator) now, made once per
        state: the state is the table object, the hand, its actions (their
        count and the last one, by identity: a hand read back is other
        objects), its events and the totals; anything a welcome shows changes
        one of them.  Connections of one seat, and all spectators, resyncing
        at the same state get the one welcome — building it (the view, every
        event redacted) is what a resync costs."""
        st = self.table.state
        objects = (self.table, st.actions[-1] if st.actions else None)   # by identity
        values = (self.hand, len(st.actions), len(st.events), tuple(self.totals),
                  self.commitment)
        old = self._welcome_key
        if not (old and all(a is b for a, b in zip(old[0], objects)) and old[1] == values):
            self._welcome_key, self._welcomes = (objects, values), {}
        msg = self._welcomes.get(seat)
        if msg is None:
            msg = self._welcomes[seat] = P.Welcome(
                table=self.id, seat=seat, hand=self.hand, spec=self.ruleset.spec,
                players=self.n, bots=self.bots, rng=self.rng_kind,
                seeded=self.rng_kind == "seeded", commitment=self.commitment,
                totals=tuple(self.totals), view=self.view_of(seat), next_event=len(st.events))
        return msg

    def offer(self, conn: Conn) -> None:
        if conn.seat is None:
            return
        d = self.decisions.get(conn.seat)
        if d is not None and d.seq != conn.decided:
            conn.send(P.Decide(hand=self.hand, seq=d.seq, legal=tuple(d.legal),
                               deadline=d.deadline or 0.0, timeout=d.timeout,
                               seeded=self.rng_kind == "seeded"))
            conn.decided = d.seq

    def sync(self) -> None:
        """Send every connection what it has not seen of the current hand."""
        events = self.table.state.events
        fdk = self._fdk
        made: dict[tuple[int, int], P.Events] = {}  # (viewer, first) → the delta
        for conn in list(self.conns):
            if conn.hand != self.hand:
                self.welcome(conn)
                continue
            if conn.sent < len(events):
                viewer = -1 if conn.seat is None else conn.seat
                msg = made.get((viewer, conn.sent))
                if msg is None:
                    msg = made[viewer, conn.sent] = P.Events(
                        hand=self.hand, first=conn.sent,
                        events=tuple(redact(e, viewer, fdk) for e in events[conn.sent:]))
                conn.send(msg)
                conn.sent = len(events)
            self.offer(conn)

    def flush(self) -> None:
        """Frame every connection's held messages — unless a write of the
        table awaits its commit (then the commit flushes)."""
        if self.uncommitted:
            return
        for conn in list(self.conns):
            if conn.held:
                try:
                    conn.frame()
                except Exception as exc:  # noqa: BLE001 - a message that does not encode
                    conn.held = []
                    self._broken(exc, "sending what the table said")

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
             future: asyncio.Future | None = None) -> None:
        """Apply ``action`` of ``seat``, submit it to the group commit and
        prepare what the connections are told (held until it is committed).

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
        index = len(table.state.actions)
        taken = self.decisions.get(seat)
        start = len(table.state.events)
        listed = action in table.state.pending.get(seat, ())
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
        try:   # the action is applied in memory: until it is submitted, nothing may fail
            # what it caused must reach the seats: an event a plugin made that does
            # not encode would fail at its commit, in the store's writer
            P.encode(P.Events(hand=hand, first=start, events=tuple(table.state.events[start:])))
            ops = [("action", action_params(self.id, hand, index, table.state.actions[-1],
                                            timeout))]
            nxt = None
            if table.over:
                rec = self.record()
                ops.append(("finish_hand", dict(
                    record=msgspec.json.encode(rec).decode(),
                    net=msgspec.json.encode(list(table.result.net)).decode(),
                    k_table=self.id, k_hand=hand)))
                nxt = self.new_hand(hand + 1, table.result.next_dealer)
                ops.append(("hand", self.hand_row(hand + 1, *nxt)))
        except Exception as exc:  # noqa: BLE001 - the next deal's plugins, the record's encoding
            raise self._broken(exc, f"writing seat {seat}'s {action!r}") from None
        for c in self.conns:   # what is held so far waits for the writes before this one
            if c.held and (not c.cuts or c.cuts[-1][1] < len(c.held)):
                c.cuts.append((self.submitted, len(c.held)))
        self.submitted += 1
        ends: list = []   # a hand ended: what info() shows once this write commits
        self.store.submit(Write(self.id, ops, functools.partial(
            self._written, self.epoch, conn, hand, seq, future, ends)))
        if taken is not None:
            self.answered[seat] = taken.seq
        marks = [(c, len(c.held)) for c in self.conns]   # what this write causes: after
        if conn is not None:
            conn.send(P.Ack(hand=hand, seq=seq))
        try:   # submitted: the action counts (it is answered at its commit), the rest may fail
            self.refresh_decisions()
            self.sync()
            if nxt is not None:
                result = table.result
                self.totals = [a + b for a, b in zip(self.totals, result.net)]
                self.hands_done += 1
                ended = P.HandEnded(hand=hand, result=result, totals=tuple(self.totals),
                                    records=f"/tables/{self.id}/records")
                for c in list(self.conns):
                    c.send(ended)
                self.install(hand + 1, *nxt)
                ends.append(self._now())
                self.sync()
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
        written; the restarted server offers its decision again).  (A
        choice where issue 12 was silent: retrying would only fail again —
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

    def _written(self, epoch: int, conn: Conn | None, hand: int, seq: int | None,
                 future: asyncio.Future | None, ends: list, exc: BaseException | None) -> None:
        """A write of this table is committed (``exc`` None) or failed;
        ``ends``: what :meth:`info` shows once it is committed, if it ended a hand.
        (Called by the store's writer: an error here — framing what the write
        caused — halts this table, :meth:`_broken`, and never reaches the writer.)"""
        try:
            self._written_now(epoch, conn, hand, seq, future, ends, exc)
        except Exception as err:  # noqa: BLE001 - the writer serves every table
            self._broken(err, "answering a write" if exc is None else "answering a failed write")

    def _written_now(self, epoch: int, conn: Conn | None, hand: int, seq: int | None,
                     future: asyncio.Future | None, ends: list,
                     exc: BaseException | None) -> None:
        if exc is None:
            if trace.ON and conn is not None and conn.tr is not None:
                e = conn.tr.get((hand, seq))
                if e is not None:
                    e[trace.COMMITTED] = trace.perf_counter()
            if future is not None and not future.done():
                future.set_result(None)
            if epoch == self.epoch:
                self.committed += 1
                if ends:
                    self.shown = ends[0]
                if self.uncommitted:   # what was held before a later write: framed now
                    for c in self.conns:
                        c.release(self.committed)
            if not self.uncommitted:
                self.flush()
            return
        lost = isinstance(exc, LockLost)
        if epoch == self.epoch:
            # the first failed write: it and every later write of the table are void
            self.epoch += 1
            if not lost:   # a lost lock is logged once, by the server
                self.server.log(f"table {self.id}: write failed, re-reading the hand: "
                                f"{said(exc)}")
            later = self.store.cancel(self.id)
            self.submitted = self.committed = 0
            for c in self.conns:
                # nothing of an uncommitted action may be seen (what an
                # earlier, committed write caused was framed at its commit)
                c.held = []
                c.cuts.clear()
            if lost or self.halted is not None:
                # halted for good: nothing is served from its hand again (GET
                # /tables/{id} reads the database), so it is not read back — a
                # read that would hold a reader thread of a database that may
                # not answer.  (A halt's own message went out at once: direct.)
                if self.halted is None:
                    self.lock_lost(exc)   # before the server's own call: once
            else:
                # the table in memory holds what the database may not: it takes
                # nothing until the hand is read back (off the loop: the database
                # that failed the write may not answer the read either)
                task = asyncio.get_running_loop().create_task(self.reread())
                self.rereading = task
                task.add_done_callback(self._reread_over)
                self._tasks.append(task)
            for w in later:      # queued, never sent: certainly not taken
                w.done((self.store.lost or exc) if lost else exc)   # (epoch now stale)
        if conn is not None:
            conn.send(P.Error(code="LockLost", seq=seq,
                              message=IN_FLIGHT_LOST if isinstance(exc, CommitUnknown)
                              else NOT_TAKEN_LOST) if lost
                      else P.Error(code="Unavailable", seq=seq,
                                   message="the database did not take the action; it was not "
                                           "applied"))
        if future is not None and not future.done():
            future.set_exception(Refused("LockLost", LOCK_LOST) if lost else
                                 Refused("Unavailable", "the database did not take the action"))
        self.flush()
        self.poke()

    async def reread(self) -> None:
        """(A task, after a failed write.)  Read the hand back from the
        database without blocking the loop (:meth:`Store.read`, never
        refused ``Busy``), rebuild it, welcome every connection again and
        let the clock and bots go on; a read that fails, or rows that do not
        replay, halt the table (:meth:`_unreadable`)."""
        try:
            try:
                rows = await self.store.read(self.stored, capped=False)
                self.rebuild_from(*rows)
            except asyncio.CancelledError:
                raise    # the server stops: the table is restored from its rows
            except StoreStopped:
                return   # the same (the store closed first)
            except Exception as err:  # noqa: BLE001 - the database cannot be read either
                self.rereading = None
                self._unreadable(err)
                return
        finally:
            if self.rereading is asyncio.current_task():
                self.rereading = None
        for c in list(self.conns):
            self.greet(c)
            if self.halted is not None:   # what was held said so: again
                c.send(P.Error(code=self.halted[0], message=self.halted[1]))
        self.flush()
        self.poke()

    def _reread_over(self, task: asyncio.Task) -> None:
        """(The re-read task's done callback.)  :attr:`rereading` is
        cleared by :meth:`reread` itself before it welcomes the
        connections; this clears it too should the task end without
        running (cancelled before its first step)."""
        if self.rereading is task:
            self.rereading = None

    def _unreadable(self, err: Exception) -> None:
        """A failed write, and the hand cannot be re-read to put the table
        back: the table in memory may hold actions the database does not,
        so it stops (:meth:`halt`) and its connections are closed, each
        told why (an operator restarts the server once the database is back)."""
        why = (f"table {self.id}: after a failed write its hand could not be re-read from the "
               f"database; it is not served until the server is restarted")
        # the database's words (they may name its host and user) go to the log only
        self.server.log(f"{why} ({getattr(err, 'detail', None) or said(err)})")
        told = f"{why} (the server's log says why)"
        self.halt("Unavailable", told)
        for c in list(self.conns):
            c.early = None    # the refusal is all it gets
            c.held = [P.Error(code="Unavailable", message=told)]
            c.frame()
            c.put(None)   # the writer closes the socket

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

    # ------------------------------------------------------------ clocks and bots

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
        self._arm()
        if not self._bots_running and any(s in self.bots for s in self.decisions):
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
                or self.rereading is not None):
            return   # closed, halted, re-reading or paused (the next poke re-arms)
        now = time.time()
        for seat, d in sorted(self.decisions.items()):
            if d.deadline is not None and d.deadline <= now:
                try:
                    self.play(seat, default_action(self.table, seat), timeout=True)
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

    def _bots_may_move(self) -> bool:
        return (self.open and not self.closing and bool(self.conns) and self.halted is None
                and self.rereading is None)

    async def _run_bots(self) -> None:
        loop = asyncio.get_running_loop()
        delay = self.server.bot_delay
        waited = None   # (hand, events) when the bots last waited
        try:
            while self._bots_may_move():
                seats = [s for s in sorted(self.decisions) if s in self.bots]
                if not seats:
                    break
                if delay > 0 and waited != (self.hand, len(self.table.state.events)):
                    # --bot-delay: one wait before the bots answer what came up (a
                    # turn, a card every seat is asked about: the bots asked answer
                    # it after the one wait, as players would at once), the same
                    # whatever they hold or decide
                    await asyncio.sleep(delay)
                    if not self._bots_may_move():
                        break
                    waited = (self.hand, len(self.table.state.events))
                    continue   # (what is pending, read again)
                seat = seats[0]
                try:
                    action = decide(self.players[seat], self.table, seat)  # its view only
                except Exception as exc:  # noqa: BLE001 - a bot's fault, or the view's
                    self._broken(exc, f"bot seat {seat}'s decision")
                    break
                done = loop.create_future()
                try:
                    self.play(seat, action, future=done)
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

    async def settled(self) -> None:
        """Wait until no write of the table awaits its commit and its hand
        is not being re-read."""
        while self.uncommitted or self.rereading is not None:
            await asyncio.sleep(0.002)

    async def close(self) -> None:
        """Close the table: no more actions or hands; an unfinished hand's
        record (deal and salt revealed, no result) is stored, and the
        server no longer holds the table (``Server.tables``): what is asked
        of it later is read from the database.

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
            await self._close()
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

    async def _close(self) -> None:
        try:
            await self.settled()
            if self.halted is not None:   # its hand in memory may not be the database's
                raise StoreError(f"table {self.id} was not closed: {self.halted[1]}")
            rec = self.record()
            done = asyncio.get_running_loop().create_future()

            def written(exc: BaseException | None) -> None:
                if not done.done():
                    done.set_result(exc)

            self.store.submit(Write(self.id, [
                ("finish_hand", dict(record=msgspec.json.encode(rec).decode(),
                                     k_table=self.id, k_hand=self.hand)),
                ("close", dict(k_table=self.id))], written))
            exc = await done
            if isinstance(exc, LockLost):   # logged once, by the server
                raise LockLost(f"table {self.id} was not closed: {LOCK_LOST}")
            if exc is not None:
                self.server.log(f"table {self.id}: its close was not written: {said(exc)}")
                raise StoreError(f"table {self.id} was not closed: the database did not take "
                                 f"it (the server's log says why); try again")
        finally:
            self.closing = False
        self.open = False
        closed = P.Closed(totals=tuple(self.totals))
        for conn in list(self.conns):
            conn.send(closed)
            conn.frame()
            conn.put(None)  # the writer closes the socket
        self.stop()
        # no longer served: out of the server's memory (each closed table
        # held about 25 KB until the server stopped, and /health counted it);
        # the database answers for it from now on
        if self.server.tables.get(self.id) is self:
            del self.server.tables[self.id]

    def stop(self) -> None:
        """Stop the clock and the tasks (server shutdown; the table stays
        open in the database)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due = None
        for t in self._tasks:
            t.cancel()

    # ------------------------------------------------------------ info

    def _now(self) -> tuple[int, int, int, str, tuple[int, ...]]:
        """The hand, hands done, dealer, commitment and totals now."""
        return (self.hand, self.hands_done, self.table.state.dealer, self.commitment,
                tuple(self.totals))

    def committed_now(self) -> None:
        """What the table holds now is committed (made, or read back):
        :meth:`info` shows it."""
        self.shown = self._now()

    def info(self) -> P.TableInfo:
        """``GET /tables/{id}``: the hand, totals and commitment as
        committed — a hand that ended in a write not yet committed shows
        once it is (a write that fails takes nothing back that was shown)."""
        hand, done, dealer, commitment, totals = self.shown or self._now()
        return P.TableInfo(
            id=self.id, spec=self.ruleset.spec, variant=self.ruleset.name, players=self.n,
            bots=self.bots, hand=hand, hands_done=done,
            dealer=dealer, rng=self.rng_kind, commitment=commitment,
            totals=totals, open=self.open,
            connected=tuple(sorted({c.seat for c in self.conns if c.seat is not None})),
            watched=bool(self.conns))
