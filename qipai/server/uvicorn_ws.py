"""The subclass of uvicorn's WebSocket protocol that ``qipai serve`` runs.

It alone reaches into uvicorn: it subclasses
``uvicorn.protocols.websockets.websockets_sansio_impl.WebSocketsSansIOProtocol``
(not public API) and overrides its methods and reads its attributes
(``transport``, ``conn``, ``loop``, ``handshake_*``, ``close_*``), because
uvicorn offers no public hook for what it adds: answering the upgrade
requests websockets refuses, counting and capping the open sockets, and
cutting the sockets of clients that read nothing.  ``pyproject.toml`` pins
uvicorn to the versions where that base class has every method overridden
here, and ``tests/server/test_uvicorn_ws.py`` checks it against the
installed uvicorn.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from typing import TYPE_CHECKING, Any

import msgspec

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from qipai.host import protocol as P

if TYPE_CHECKING:
    from qipai.server.state import Server

#: Seconds the server waits for a client to answer its close (a refusal, a
#: closed table) before it closes the socket anyway (uvicorn: 10 s, during
#: which a silent client held a descriptor); a socket still not closed as
#: long again (a client that reads nothing: what is buffered for it never
#: leaves) is cut (``transport.abort``).
WS_CLOSE_S = 2.0
#: Seconds a WebSocket may read nothing of what the server has for it (its
#: write buffer over the high-water mark all the while) before it is cut.
#: Uncut, such a client would hold its socket, its slot and megabytes of
#: the kernel's buffers for ever — even past its table's close, its pings
#: unanswered.
WRITE_STALL_S = 30.0


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets' sans-I/O one, uvicorn's
    default), answering the upgrade requests that websockets refuses while
    reading them: a request line over 8192 bytes (a 20,000-character query
    string) → **414**, a header line over 8192 bytes or more than 128
    headers → **431**, each ``{"error": "TooLarge", "message"}``, then the
    connection is closed.

    Why: uvicorn (0.54) hands the upgrade request to websockets'
    ``ServerProtocol``, which refuses such a request as it parses it and
    queues its refusal — but uvicorn writes a refusal only for a request
    that parsed, so the client got no answer at all and the connection
    hung.  (The HTTP requests themselves are read by h11, which answers a
    request that does not fit ``h11_max_incomplete_event_size`` with 400.)
    Given to uvicorn through its ``ws`` option.

    It also counts :attr:`qipai_server`'s open WebSocket sockets
    (``Server.connections``), from the upgrade until the socket is closed;
    answers an upgrade beyond ``--max-connections`` (this one counted)
    with HTTP 503 ``{"error": "TooManyConnections", "message"}`` and closes
    its socket at once, before the app sees it (its path and token
    unread); closes a socket :data:`WS_CLOSE_S` after the server's close
    frame if the client has not answered it, and cuts one still not closed
    as long again; and cuts a socket whose client has read nothing for
    :data:`WRITE_STALL_S` while the server had frames for it, or that has
    not answered a keepalive ping in time (a cut is a reset: what was
    buffered for the client is dropped).  An upgrade the app refuses with
    an HTTP answer (``websocket.http.response``) ends its handshake, so
    uvicorn logs no error for it."""

    #: The server whose sockets it counts and caps (None: none); set by
    #: :func:`ws_protocol` (not ``server``: uvicorn's protocol has that attribute).
    qipai_server: Server | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.close_timeout = WS_CLOSE_S
        self._stalled: asyncio.TimerHandle | None = None   # writes paused: cut then
        self._ending: asyncio.TimerHandle | None = None    # closing: cut then
        self._lost = False

    def connection_made(self, transport: Any) -> None:
        if self.qipai_server is not None:
            self.qipai_server.connections += 1
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        for timer in (self._stalled, self._ending):
            if timer is not None:
                timer.cancel()
        if self.qipai_server is not None:
            self.qipai_server.connections -= 1
        super().connection_lost(exc)

    # a client that reads nothing: its socket is cut, not waited for
    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stalled is None and not self._lost:
            self._stalled = self.loop.call_later(WRITE_STALL_S, self._cut)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def _cut(self) -> None:
        """Close the socket now, with a reset: what is buffered for the
        client is dropped, not left to the kernel (a closed socket's
        unsent data otherwise stays, FIN-WAIT-1, as long as the client
        keeps its window shut)."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()

    def _end_by(self) -> None:
        """The socket is being closed (or soon: the close timer): cut it
        if it is not closed within twice :data:`WS_CLOSE_S`."""
        if self._ending is None and not self._lost:
            self._ending = self.loop.call_later(2 * WS_CLOSE_S, self._cut)

    def keepalive_timeout(self) -> None:
        # a client that has not answered a ping within ws_ping_timeout
        # reads nothing: cut (reset) now, as a stalled one is — uvicorn's
        # graceful close would leave what the kernel still holds for it
        # in FIN-WAIT-1 for as long as its window stays shut
        super().keepalive_timeout()
        if not self._lost:
            self._cut()

    def handle_close(self, event: Any) -> None:
        super().handle_close(event)
        self._end_by()

    def on_task_complete(self, task: Any) -> None:
        # the app is done with the socket (its close sent — uvicorn hands
        # the app its disconnect at once — or the client gone): no hook
        # on every frame sent is needed to see a close
        super().on_task_complete(task)
        self._end_by()

    def handle_connect(self, event: Any) -> None:
        server = self.qipai_server
        if server is None or server.connections <= server.max_connections:
            super().handle_connect(event)
            return
        server.refused_connection()
        self.handshake_initiated = self.handshake_complete = self.close_sent = True
        _refuse_raw(self.transport, "503", "Service Unavailable", P.HttpError(
            error="TooManyConnections",
            message=f"the server holds as many WebSocket connections as it may (qipai "
                    f"serve --max-connections {server.max_connections}); try again "
                    f"later"))

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.http.response.body" and not message.get("more_body"):
            # the upgrade refused with an HTTP answer (qipai.server.guard) is over: uvicorn
            # (0.54) leaves handshake_complete unset and logs "ASGI callable returned
            # without completing handshake" at ERROR for each — a client's refusal, not
            # the server's error (its wsproto protocol sets it)
            self.handshake_complete = True

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.handshake_initiated:
            # the request was read (uvicorn hands it over whole, before the
            # transport is given this protocol): every later frame goes to
            # uvicorn's own method directly, nothing added per frame
            self.data_received = super().data_received  # type: ignore[method-assign]
            return
        exc = self.conn.handshake_exc
        if exc is None or self.transport.is_closing():
            return
        # websockets refused the request before it was one (no handshake
        # began): its plain-text refusal is queued; answer in the server's
        # own error shape instead, with websockets' status
        queued = b"".join(self.conn.data_to_send())
        status = queued[9:12].decode("ascii", "replace") if queued else "400"
        if status not in ("414", "431"):
            status = "400"
        what = {"414": "the request line (its URL) is over 8192 bytes",
                "431": "a header line is over 8192 bytes, or there are more than 128 "
                       "headers"}.get(status, f"not a WebSocket upgrade request ({exc})")
        reason = {"414": "URI Too Long", "431": "Request Header Fields Too Large"}.get(
            status, "Bad Request")
        _refuse_raw(self.transport, status, reason, P.HttpError(
            error="TooLarge" if status != "400" else "BadMessage", message=what))


def ws_protocol(server: Server | None = None) -> type[WebSocketProtocol]:
    """:class:`WebSocketProtocol` counting and capping ``server``'s sockets
    (uvicorn is given the class, through its ``ws`` option)."""
    return type("WebSocketProtocol", (WebSocketProtocol,), {"qipai_server": server})


def _refuse_raw(transport: Any, status: str, reason: str, error: P.HttpError) -> None:
    """Answer a WebSocket upgrade request with ``error`` as an HTTP response
    of ``status``, then close the socket (:func:`ws_protocol`)."""
    body = msgspec.json.encode(error)
    transport.write(f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                    + body)
    transport.close()
