"""An upgrade request too large for the WebSocket handshake — a 20,000-character
query string, a header line over 8 KiB — gets an answer at once (414 / 431,
the server's JSON error, the connection closed), not a connection that hangs
(uvicorn would drop websockets' refusal: ``qipai.server.uvicorn_ws.ws_protocol``).

A real ``qipai serve``, raw sockets (no client library would send these)."""

from __future__ import annotations

import json
import socket

import pytest

from hostkit import PATIENCE, create, start_server

KEY = "dGhlIHNhbXBsZSBub25jZQ=="   # RFC 6455's sample key


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("long")
    s = start_server(f"sqlite:///{tmp / 'qipai.db'}", tmp, "--seed", "1")
    yield s
    s.stop()


def exchange(served, request: bytes) -> bytes:
    """Send ``request``; everything the server answers until it closes the
    connection (``PATIENCE`` bounds a hang: a timeout fails the test)."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=PATIENCE) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):   # b"": the server closed the connection
            chunks.append(chunk)
    return b"".join(chunks)


def upgrade(path: str, extra: str = "") -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\n"
            f"Sec-WebSocket-Version: 13\r\n{extra}\r\n").encode()


def status_and_body(answer: bytes) -> tuple[int, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower(), head
    return status, json.loads(body)


def test_a_20000_character_websocket_url_is_answered_414(served):
    t = create(served)
    answer = exchange(served, upgrade(f"/tables/{t['id']}/ws?token=" + "a" * 20_000))
    status, body = status_and_body(answer)
    assert status == 414
    assert body["error"] == "TooLarge" and "8192 bytes" in body["message"], body
    assert len(answer) < 1000   # the URL is not echoed


def test_a_header_line_over_8_kib_is_answered_431(served):
    t = create(served)
    answer = exchange(served, upgrade(f"/tables/{t['id']}/ws?token=x",
                                      "X-Padding: " + "p" * 9000 + "\r\n"))
    status, body = status_and_body(answer)
    assert status == 431 and body["error"] == "TooLarge", body


def test_a_websocket_url_just_under_the_limit_still_connects(served):
    """The limit is websockets' 8192-byte request line: a long but fitting
    URL is read, and refused by the server for its token, as any bad token."""
    t = create(served)
    path = f"/tables/{t['id']}/ws?token=" + "a" * 7_000
    with socket.create_connection(("127.0.0.1", served.port), timeout=PATIENCE) as s:
        s.sendall(upgrade(path))
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
    assert got.startswith(b"HTTP/1.1 101 "), got[:200]


def test_a_long_plain_http_url_is_answered(served):
    answer = exchange(served, f"GET /tables/{'a' * 20_000} HTTP/1.1\r\nHost: x\r\n"
                              f"Connection: close\r\n\r\n".encode())
    status, body = status_and_body(answer)
    assert status == 404 and body["error"] in ("UnknownTable", "NotFound"), body
