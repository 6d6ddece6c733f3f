"""The WebSocket loop of ``/tables/{id}/ws``: one seat (or a spectator) per
connection, its messages read, throttled and handed to the hosted table, its
frames written from the connection's outbox."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect

from qipai.host import protocol as P
from qipai.host import trace
from qipai.host.errors import Refused
from qipai.host.outbox import Conn
from qipai.host.replay import shown
from qipai.host.seats import MAX_CONNS_PER_SEAT, MAX_SPECTATORS
from qipai.host.store import token_hash
from qipai.server import logs
from qipai.server.identity import Denied, Seating, looks_signed, verify
from qipai.server.limits import LimitReached, address_of

if TYPE_CHECKING:
    from qipai.host.match import HostedTable
    from qipai.server.state import Server


#: (A cluster.)  Seconds a connection to a table being handed on waits for
#: the move, to be sent where the table went (then ``_admit`` answers).
HANDOFF_WAIT_S = 5.0


async def _writer(ws: WebSocket, conn: Conn) -> None:
    send = ws.send
    sent = 0
    while True:
        frame = conn.take() if conn.outbox else await conn.frames_out()
        if frame is None:
            with contextlib.suppress(Exception):
                await ws.close(conn.close_code or 1000)
            return
        await send({"type": "websocket.send", "text": frame})
        if conn.tr:
            sent += 1
            now = trace.perf_counter()
            for key, e in list(conn.tr.items()):
                if e[trace.FRAME] is not None and e[trace.FRAME] <= sent:
                    e[trace.SENT] = now
                    del conn.tr[key]
                    trace.done(e)
        elif trace.ON:
            sent += 1


def _act_seq(data: str | bytes, cap: int) -> int | None:
    """The ``seq`` of ``data`` if it is a well-formed :class:`~qipai.host.protocol.Act`
    within the size cap, else None (a throttled frame is read only this far)."""
    if len(data) > cap:
        return None
    try:
        msg = P.decode_client(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return msg.seq if isinstance(msg, P.Act) else None


class _Refusal(Exception):
    """A connection refused before it is attached: it is sent
    ``Error(code, message)``, then closed with ``close``."""

    def __init__(self, code: str, message: str, close: int, **fields: object) -> None:
        super().__init__(message)
        self.code, self.message, self.close = code, message, close
        self.fields = fields   # more for its ``refused`` event (a limit: its key and name)


def _admit(ws: WebSocket, s: Server, address: str | None
           ) -> tuple[HostedTable, int | None]:
    """The table and seat (None: a spectator) the connection from
    ``address`` (:func:`~qipai.server.limits.address_of`) is for, or
    :class:`_Refusal` — before anything of the table's state is told."""
    tid = ws.path_params["id"]
    t = s.tables.get(tid)
    if tid in s.refused:
        exc = s.refused[tid]
        raise _Refusal("NotRestored", f"table {tid} is not served "
                                      f"({type(exc).__name__}): {exc}", 4409)
    if t is None or not t.open:
        raise _Refusal("UnknownTable", f"no open table {shown(tid)}", 4404)
    token = ws.query_params.get("token", "")
    if looks_signed(token):   # a seat token the operator signed (JWT)
        try:
            who: int | str | None = verify(s.keys, token, Seating.of_table(t))[0]
        except Denied as d:
            raise _Refusal(d.code, d.message, d.close) from None
    else:
        who = t.who(token_hash(token)) if token else None
    if who is None:
        raise _Refusal("BadToken", "the token is no seat's of this table", 4401)
    if t.halted is not None:   # the server lock lost, or its hand unreadable
        raise _Refusal(t.halted[0], t.halted[1], 4503)
    seat = None if who == "spectator" else int(who)
    most = MAX_CONNS_PER_SEAT if seat is not None else MAX_SPECTATORS
    if sum(1 for c in t.conns if c.seat == seat) >= most:
        raise _Refusal("TooManyConnections",
                       f"{'seat ' + str(seat) if seat is not None else 'spectators'} of this "
                       f"table already {'has' if seat is not None else 'have'} {most} "
                       f"connections open; close one first", 4429)
    try:   # its address's and its key's limits, and the room kept for seats
        s.quota.admit(t, seat is None, address)
    except LimitReached as exc:
        raise _Refusal("TooManyConnections", exc.body.message, 4429, limit=exc.body.limit,
                       key=exc.body.key) from None
    return t, seat


async def table_ws(ws: WebSocket) -> None:
    """``/tables/{id}/ws`` (an upgrade beyond ``--max-connections`` never
    reaches it: :func:`~qipai.server.uvicorn_ws.ws_protocol` answers it)."""
    await ws.accept()
    s: Server = ws.app.state.server
    if s.cluster is not None:
        left = s.cluster.leaving.get(ws.path_params["id"])
        if left is not None:   # being handed on: sent where it went, once it has gone
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(left.wait(), HANDOFF_WAIT_S)
        if ws.path_params["id"] not in s.tables and await _elsewhere(ws, s):
            return
    address = address_of(ws)   # (counted at the connection's admission only)
    try:
        t, seat = _admit(ws, s, address)
    except _Refusal as r:
        s.events.emit("refused", reason=r.code, table=ws.path_params["id"][:64], **r.fields,
                      client=logs.client(ws))
        await ws.send_text(P.encode(P.Error(code=r.code, message=r.message)).decode())
        await ws.close(r.close)
        return
    conn = Conn(seat=seat)
    if trace.ON:
        conn.tr = {}
    writer = asyncio.get_running_loop().create_task(_writer(ws, conn))
    reader = _Reader(s, t, conn, logs.client(ws))
    s.quota.attached(t, seat is None, address)
    try:
        t.attach(conn)   # (inside: a connection is detached whatever happens)
        while True:
            t.flush()   # what the last frame caused (held while a write awaits its commit)
            frame = await ws.receive()
            t_recv = trace.perf_counter() if trace.ON else 0.0
            if frame["type"] == "websocket.disconnect":
                break
            data = frame.get("text")
            if data is None:
                data = frame.get("bytes") or b""
            reader.take(data, t_recv)
    except WebSocketDisconnect:
        pass
    finally:
        reader.cancel()
        t.detach(conn)
        s.quota.detached(t, seat is None, address)
        writer.cancel()


async def _elsewhere(ws: WebSocket, s: Server) -> bool:
    """(A cluster node that does not hold the table.)  Adopt it if the
    database says it is this node's (handed here, taken over); else, if it
    is open, send ``moved`` (its node's address; None while no live node
    serves it) and close (4307).  True when the connection was answered so.

    A table this node owns yet does not serve (a takeover committed between
    the two reads; a node draining) and a read that fails or is refused
    (``ReadsBusy``: every client of a dead node's tables reconnecting at
    once) are answered ``moved`` without an address — come back shortly —
    never ``UnknownTable``: the table may well be open."""
    from qipai.server.cluster import CLOSE_MOVED
    from qipai.server.routes import _TABLE_ID as TABLE_ID

    tid = ws.path_params["id"]
    cluster = s.cluster
    if not TABLE_ID.fullmatch(tid):   # never a table: no read for it (_admit refuses it)
        return False
    try:
        if await cluster.serving(tid) is not None:
            return False
        node, _, is_open = await cluster.owner_of(tid)
        if not is_open:
            return False   # closed or unknown: _admit says which
        if node == cluster.node:
            # made this node's after serving() read it: adopted now; not
            # restorable here: _admit says why; else not served yet
            if tid in s.refused or await cluster.serving(tid) is not None:
                return False
            node = None
    except Exception:  # noqa: BLE001 - a failed read: not known to be unknown
        node = None
    s.events.emit("refused", reason="Moved", table=tid[:64], client=logs.client(ws))
    await ws.send_text(P.encode(cluster.moved(tid, node)).decode())
    await ws.close(CLOSE_MOVED)
    return True


class _Reader:
    """What one connection sends, read: throttled (a token bucket of the
    server's rate and burst), capped in size, decoded and answered; its
    resyncs answered at most once an interval (the server's ``resync_s``)."""

    def __init__(self, s: Server, t: HostedTable, conn: Conn, client: str | None = None) -> None:
        self.t, self.conn, self.client = t, conn, client
        self.events = s.events
        self.rate, self.burst, self.cap = s.rate_per_s, s.burst, s.max_message_bytes
        self.allowance, self.last, self.warned = self.burst, time.monotonic(), 0.0
        self.loop = asyncio.get_running_loop()
        self.every = s.resync_s
        self.resynced = -self.every   # when the last resync was answered (the first: at once)
        self.due: asyncio.TimerHandle | None = None   # a resync's answer waiting for its time

    def refused(self, reason: str) -> None:
        """An act or frame of this connection refused ``reason`` (counted and logged)."""
        self.events.emit("refused", reason=reason, table=self.t.id, seat=self.conn.seat,
                         client=self.client)

    def cancel(self) -> None:
        if self.due is not None:
            self.due.cancel()

    def take(self, data: str | bytes, t_recv: float) -> None:
        """One frame of the client's (``t_recv``: when it came, traced only)."""
        now = time.monotonic()
        if self._throttled(data, now):
            return
        conn, cap = self.conn, self.cap
        size = len(data.encode() if isinstance(data, str) else data)
        if size > cap:
            self.refused("TooLarge")
            conn.send(P.Error(code="TooLarge", message=f"a message is at most "
                                                       f"{cap} bytes; "
                                                       f"this is {size}"))
            return
        try:
            msg = P.decode_client(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.refused("BadMessage")
            conn.send(P.Error(code="BadMessage", message=f"not a client message: {exc}"))
            return
        if isinstance(msg, P.Ping):
            conn.send(P.Pong())
        elif isinstance(msg, P.Resync):
            self._resync(now)
        elif isinstance(msg, (P.SeatCommit, P.SeatReveal)):   # a joint deal's step
            t = self.t
            try:
                if isinstance(msg, P.SeatCommit):
                    t.ask_seat_commit(conn, msg)
                else:
                    t.ask_seat_reveal(conn, msg)
            except Refused as exc:   # told at once: the seat has no welcome yet
                self.refused(exc.code)
                t.step_send(conn, P.Error(code=exc.code, message=exc.message))
                t.flush()
        elif not isinstance(msg, P.Act):   # ready, dissolve, tuoguan
            t = self.t
            try:
                if isinstance(msg, P.Ready):
                    t.ask_ready(conn, msg)
                elif isinstance(msg, P.Dissolve):
                    t.ask_dissolve(conn, msg)
                else:
                    t.ask_tuoguan(conn, msg)
            except Refused as exc:
                self.refused(exc.code)
                conn.send(P.Error(code=exc.code, message=exc.message))
        else:
            t = self.t
            try:
                t.act(conn, msg)
                if conn.tr is not None:
                    e = trace.act(t.id, conn.seat, msg.hand, msg.seq, t_recv)
                    e[trace.APPLIED] = trace.perf_counter()
                    conn.tr[msg.hand, msg.seq] = e
            except Refused as exc:
                self.refused(exc.code)
                conn.send(P.Error(code=exc.code, message=exc.message, seq=msg.seq))

    def _throttled(self, data: str | bytes, now: float) -> bool:
        """Whether the frame is dropped, over the rate (it is then answered:
        a dropped act naming its seq, which the client resends; other
        dropped frames by one summary error a second)."""
        self.allowance = min(self.burst, self.allowance + (now - self.last) * self.rate)
        self.last = now
        if self.allowance >= 1.0:
            self.allowance -= 1.0
            return False
        rate = self.rate
        self.refused("Throttled")
        seq = _act_seq(data, self.cap)
        if seq is not None:
            self.conn.send(P.Error(code="Throttled", seq=seq,
                                   message=f"more than {rate:g} messages a second: "
                                           f"act seq {seq} dropped, not applied; send it "
                                           f"again"))
        elif now - self.warned >= 1.0:
            self.warned = now
            self.conn.send(P.Error(code="Throttled",
                                   message=f"more than {rate:g} messages a second: "
                                           f"dropped"))
        return True

    def _resync(self, now: float) -> None:
        # a welcome is the costliest answer: at most one every `every`
        # seconds; one sooner is answered when that interval is over, and
        # any more meanwhile are folded into that answer, silently: it
        # answers them (a page keeping one resync in flight can still
        # send one while another waits — a welcome the server sent
        # unasked, at a new hand, ends its wait — and must not be told off)
        if self.due is None:
            if now - self.resynced >= self.every:
                self._answer_resync()
            else:
                self.due = self.loop.call_later(self.resynced + self.every - now,
                                                self._answer_resync, True)

    def _answer_resync(self, later: bool = False) -> None:
        t, conn = self.t, self.conn
        self.due, self.resynced = None, time.monotonic()
        if conn not in t.conns:
            return
        if t.halted is not None:   # its hand may hold what is not committed
            conn.send(P.Error(code=t.halted[0], message=t.halted[1]))
        elif t.rereading is not None and conn.early is not None:
            pass   # its first welcome is yet to come: that answers it
        elif t.rereading is not None:   # the same, until it is read back
            conn.send(P.Error(code="Unavailable",
                              message="the table is reading its hand back from the "
                                      "database after a failed write; a welcome "
                                      "follows once it is back"))
        elif t.open:
            t.greet(conn)
        if later:   # (in the loop's receive, flush() frames it)
            t.flush()
