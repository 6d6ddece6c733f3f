"""What leaves a hosted table for its connections.

A :class:`Conn` holds what it is sent until the table's writes before it
are committed, then frames it into its outbox, which the connection's
writer task empties (:mod:`qipai.server.socket`); :class:`Outbox` (a part
of :class:`~qipai.host.match.HostedTable`) builds what each connection is
told: welcomes, event deltas, decisions.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field
from typing import Any

import msgspec

from qipai.core.views import SeatView
from qipai.core.views import SPECTATOR, public_view, seen_events
from qipai.host import protocol as P
from qipai.host import trace

#: The most characters of frames a connection may have waiting unread
#: (:attr:`Conn.queued`): about 150 welcomes of a long hand, far more than
#: a client that reads ever lags.
MAX_QUEUED_CHARS = 1 << 20
#: The WebSocket close code of a connection dropped for not reading its
#: frames (:meth:`Conn.put`).
CLOSE_TOO_SLOW = 4408


@dataclass(eq=False)
class Conn:
    """One WebSocket connection: a seat, or a spectator (``seat`` None).

    :meth:`send` only holds a message; the table frames what is held once
    every write submitted before it was sent is committed
    (:meth:`Outbox.flush`, :meth:`release`) and puts the frame (a
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


class Outbox:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  The views,
    welcomes, deltas and decisions each connection is sent."""

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
        was sent before its first welcome (:attr:`Conn.early`) follows.
        (In a seat-value step: the step instead, the welcome at the deal.)"""
        if self.deal_step is not None:
            self.step_welcome(conn)
            return
        early, conn.early = conn.early, None
        msg = self._welcome_for(conn.seat)
        conn.send(msgspec.structs.replace(   # what changes without a move: made each time
            msg, presence=self.presence(),
            ready_step=self.ready_msg() if self.ready_step is not None else None,
            vote=self.vote_msg() if self.vote is not None else None))
        conn.hand, conn.sent, conn.decided = self.hand, len(self.table.events), None
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
        table = self.table
        actions, events = table.actions, table.events
        objects = (table, actions[-1] if actions else None)   # by identity
        values = (self.hand, len(actions), len(events), tuple(self.totals),
                  self.commitment)
        old = self._welcome_key
        if not (old and all(a is b for a, b in zip(old[0], objects)) and old[1] == values):
            self._welcome_key, self._welcomes = (objects, values), {}
        msg = self._welcomes.get(seat)
        if msg is None:
            msg = self._welcomes[seat] = P.Welcome(
                table=self.id, seat=seat, hand=self.hand, spec=self.ruleset.spec,
                players=self.n, bots=self.bots, rng=self.rng_shown,
                seeded=self.rng_kind == "seeded", commitment=self.commitment,
                totals=tuple(self.totals), view=self.view_of(seat), next_event=len(events),
                names=self.names(),
                player=self.named[seat]["player"] if seat in self.named else None,
                room=self.room_of(), last_result=self.last, stake=self.stake, rake=self.rake,
                money_totals=tuple(self.money_totals) if self.stake is not None else None)
        return msg

    def offer(self, conn: Conn) -> None:
        if conn.seat is None or self.ready_step is not None or self.deal_step is not None:
            return   # (a ready or seat-value step: the hand's decisions wait for its end)
        d = self.decisions.get(conn.seat)
        if d is not None and d.seq != conn.decided:
            conn.send(P.Decide(hand=self.hand, seq=d.seq, legal=tuple(d.legal),
                               deadline=d.deadline or 0.0, timeout=d.timeout,
                               seeded=self.rng_kind == "seeded"))
            conn.decided = d.seq

    def sync(self) -> None:
        """Send every connection what it has not seen of the current hand."""
        table = self.table
        events = table.events
        made: dict[tuple[int, int], P.Events] = {}  # (viewer, first) → the delta
        for conn in list(self.conns):
            if conn.hand != self.hand:
                self.welcome(conn)   # (in a seat-value step: the step)
                continue
            if conn.sent < len(events):
                viewer = SPECTATOR if conn.seat is None else conn.seat
                msg = made.get((viewer, conn.sent))
                if msg is None:
                    msg = made[viewer, conn.sent] = P.Events(
                        hand=self.hand, first=conn.sent,
                        events=seen_events(table, viewer, conn.sent))
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
