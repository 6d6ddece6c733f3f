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

if TYPE_CHECKING:
    from qipai.server.state import Server



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


async def table_ws(ws: WebSocket) -> None:
    """``/tables/{id}/ws`` (an upgrade beyond ``--max-connections`` never
    reaches it: :func:`~qipai.server.uvicorn_ws.ws_protocol` answers it)."""
    await ws.accept()
    s: Server = ws.app.state.server
    t = s.tables.get(ws.path_params["id"])

    async def refuse(code: str, message: str, close: int) -> None:
        await ws.send_text(P.encode(P.Error(code=code, message=message)).decode())
        await ws.close(close)

    if ws.path_params["id"] in s.refused:
        exc = s.refused[ws.path_params["id"]]
        return await refuse("NotRestored", f"table {ws.path_params['id']} is not served "
                                           f"({type(exc).__name__}): {exc}", 4409)
    if t is None or not t.open:
        return await refuse("UnknownTable", f"no open table {shown(ws.path_params['id'])}", 4404)
    token = ws.query_params.get("token", "")
    who = t.who(token_hash(token)) if token else None
    if who is None:   # before anything of the table's state is told
        return await refuse("BadToken", "the token is no seat's of this table", 4401)
    if t.halted is not None:   # the server lock lost, or its hand unreadable
        return await refuse(t.halted[0], t.halted[1], 4503)
    seat = None if who == "spectator" else int(who)
    most = MAX_CONNS_PER_SEAT if seat is not None else MAX_SPECTATORS
    if sum(1 for c in t.conns if c.seat == seat) >= most:
        return await refuse("TooManyConnections",
                            f"{'seat ' + str(seat) if seat is not None else 'spectators'} of this "
                            f"table already {'has' if seat is not None else 'have'} {most} "
                            f"connections open; close one first", 4429)
    conn = Conn(seat=seat)
    if trace.ON:
        conn.tr = {}
    writer = asyncio.get_running_loop().create_task(_writer(ws, conn))
    rate, burst, cap = s.rate_per_s, s.burst, s.max_message_bytes
    allowance, last, warned = burst, time.monotonic(), 0.0
    loop = asyncio.get_running_loop()
    every = s.resync_s
    resynced = -every   # when the last resync was answered (the first: at once)
    due: asyncio.TimerHandle | None = None   # a resync's answer waiting for its time

    def answer_resync(later: bool = False) -> None:
        nonlocal resynced, due
        due, resynced = None, time.monotonic()
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
            now = time.monotonic()
            allowance = min(burst, allowance + (now - last) * rate)
            last = now
            if allowance < 1.0:
                # a dropped act is answered, naming its seq (the client resends
                # it); other dropped frames get one summary error a second
                seq = _act_seq(data, cap)
                if seq is not None:
                    conn.send(P.Error(code="Throttled", seq=seq,
                                      message=f"more than {rate:g} messages a second: "
                                              f"act seq {seq} dropped, not applied; send it "
                                              f"again"))
                elif now - warned >= 1.0:
                    warned = now
                    conn.send(P.Error(code="Throttled",
                                      message=f"more than {rate:g} messages a second: "
                                              f"dropped"))
                continue
            allowance -= 1.0
            size = len(data.encode() if isinstance(data, str) else data)
            if size > cap:
                conn.send(P.Error(code="TooLarge", message=f"a message is at most "
                                                           f"{cap} bytes; "
                                                           f"this is {size}"))
                continue
            try:
                msg = P.decode_client(data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                conn.send(P.Error(code="BadMessage", message=f"not a client message: {exc}"))
                continue
            if isinstance(msg, P.Ping):
                conn.send(P.Pong())
            elif isinstance(msg, P.Resync):
                # a welcome is the costliest answer: at most one every `every`
                # seconds; one sooner is answered when that interval is over, and
                # any more meanwhile are folded into that answer, silently: it
                # answers them (a page keeping one resync in flight can still
                # send one while another waits — a welcome the server sent
                # unasked, at a new hand, ends its wait — and must not be told off)
                if due is None:
                    if now - resynced >= every:
                        answer_resync()
                    else:
                        due = loop.call_later(resynced + every - now, answer_resync, True)
            else:
                try:
                    t.act(conn, msg)
                    if conn.tr is not None:
                        e = trace.act(t.id, conn.seat, msg.hand, msg.seq, t_recv)
                        e[trace.APPLIED] = trace.perf_counter()
                        conn.tr[msg.hand, msg.seq] = e
                except Refused as exc:
                    conn.send(P.Error(code=exc.code, message=exc.message, seq=msg.seq))
    except WebSocketDisconnect:
        pass
    finally:
        if due is not None:
            due.cancel()
        t.detach(conn)
        writer.cancel()
