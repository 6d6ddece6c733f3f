"""ASGI middleware of ``qipai serve`` that refuses a request before any
route sees it: a query parameter given twice (``?token=bad&token=GOOD``)
is answered **400** ``BadMessage`` naming it, on every HTTP route and on the
WebSocket upgrade (which is then refused with that HTTP answer, never
accepted) — so no route ever picks one of two values.  So is an
``Authorization`` header given twice (a proxy in front may check one, the
server would take the other).  Each such refusal is a ``refused`` event
(reason ``BadMessage``, its path and client address: counted in
``qipai_refusals_total``, logged)."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import parse_qsl

import msgspec

from qipai.host import protocol as P
from qipai.host.replay import shown


def repeated(query_string: bytes) -> list[str]:
    """The names given more than once in ``query_string``, in order."""
    try:
        text = query_string.decode("latin-1")
    except UnicodeDecodeError:   # (latin-1 decodes any bytes)
        return []
    names = Counter(k for k, _ in parse_qsl(text, keep_blank_values=True))
    return [k for k, n in names.items() if n > 1]


async def deny(scope: Any, receive: Any, send: Any, status: int, error: P.HttpError,
               headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    """Answer an HTTP request, or refuse a WebSocket upgrade, with ``status``
    and the JSON ``error`` (uvicorn's ``websocket.http.response`` extension;
    without it the upgrade is closed 1008)."""
    body = msgspec.json.encode(error)
    head = [(b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()), *headers]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()   # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": head})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


def _refused(scope: Any) -> None:
    """Emit the ``refused`` event of a request this middleware refuses
    (the server is the app's, which Starlette puts in the scope)."""
    server = getattr(getattr(scope.get("app"), "state", None), "server", None)
    if server is not None:
        client = scope.get("client")
        server.events.emit("refused", reason="BadMessage", path=scope.get("path", "")[:128],
                           client=client[0] if client else None)


class OneValueEach:
    """(ASGI middleware.)  A query parameter, or the ``Authorization``
    header, given twice → 400 ``BadMessage``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            twice = repeated(scope.get("query_string", b""))
            if twice:
                _refused(scope)
                names = ", ".join(shown(k) for k in twice[:5])
                await deny(scope, receive, send, 400, P.HttpError(
                    error="BadMessage",
                    message=f"query parameter {names} given more than once: each "
                            f"parameter is given at most once"))
                return
            if sum(1 for k, _ in scope.get("headers", ()) if k == b"authorization") > 1:
                _refused(scope)
                await deny(scope, receive, send, 400, P.HttpError(
                    error="BadMessage",
                    message="the Authorization header is given more than once: send one"))
                return
        await self.app(scope, receive, send)
