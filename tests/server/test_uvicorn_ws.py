"""The one subclass of a uvicorn internal (:mod:`qipai.server.uvicorn_ws`)
still fits the installed uvicorn: every method it overrides exists on the
base class, its own helpers shadow none of the base's, and the attributes it
reads are there.  When this fails after a uvicorn upgrade, the range pinned
in ``pyproject.toml`` (the ``serve`` extra) is what to revisit."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("uvicorn")

from uvicorn.config import Config  # noqa: E402
from uvicorn.protocols.websockets.websockets_sansio_impl import (  # noqa: E402
    WebSocketsSansIOProtocol,
)
from uvicorn.server import ServerState  # noqa: E402

from qipai.server.uvicorn_ws import WebSocketProtocol  # noqa: E402


def _own_methods() -> dict[str, object]:
    return {n: v for n, v in vars(WebSocketProtocol).items() if callable(v)}


def test_each_override_exists_on_the_base_class():
    overrides = [n for n in _own_methods() if not n.startswith("_") or n == "__init__"]
    assert overrides, "the subclass overrides nothing: the test reads the wrong class"
    missing = [n for n in overrides if not callable(getattr(WebSocketsSansIOProtocol, n, None))]
    assert not missing, f"uvicorn's WebSocketsSansIOProtocol has no {missing}"


def test_its_own_helpers_shadow_nothing_of_the_base_class():
    helpers = [n for n in _own_methods() if n.startswith("_") and not n.startswith("__")]
    assert helpers
    shadowed = [n for n in helpers if hasattr(WebSocketsSansIOProtocol, n)]
    assert not shadowed, f"uvicorn's base class has {shadowed} too"


def test_the_attributes_it_reads_are_set_by_the_base_class():
    async def asgi(scope, receive, send):  # pragma: no cover - never called
        pass

    async def made():
        return WebSocketsSansIOProtocol(config=Config(app=asgi), server_state=ServerState(),
                                        app_state={})

    base = asyncio.run(made())
    for name in ("close_timeout", "loop", "conn", "handshake_initiated", "handshake_complete",
                 "close_sent"):
        assert hasattr(base, name), name
    # its own state shadows none of the base's
    for name in ("_stalled", "_ending", "_lost", "qipai_server"):
        assert not hasattr(base, name), name
    # the refusal read back from websockets' ServerProtocol
    assert hasattr(base.conn, "handshake_exc") and callable(base.conn.data_to_send)
