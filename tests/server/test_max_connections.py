"""``qipai serve --max-connections N``: the WebSocket connections a server
holds at once, from the upgrade until the socket is closed.  One more
upgrade is answered HTTP 503 ``TooManyConnections`` (naming the limit)
before its path or token is looked at, and its socket closed at once; once
one closes a new one is welcomed; ``/health`` counts them; the log says
when the limit is reached, in one line however many are refused.  A client
that does not answer the server's close (a refusal after the upgrade, such
as ``UnknownTable``) holds its socket, and counts, at most ``WS_CLOSE_S``.

Unbounded server-wide (8 a seat and 64 spectators a table, and anyone may
create tables), 250 spectator connections would take every file
descriptor of a server limited to 256, after which it would accept
nothing — no player, not even ``GET /health`` — while they lasted."""

from __future__ import annotations

import json
import resource
import socket
import time

import pytest
from websockets.exceptions import InvalidStatus

from hostkit import PATIENCE, SyncSeat, refusal, start_server
from qipai.server import state, uvicorn_ws


def over_the_limit(s, table: str, token: str) -> dict:
    """Connect; the upgrade must be refused with 503: its JSON body."""
    with pytest.raises(InvalidStatus) as refused:
        SyncSeat(s, table, token, strict=False)
    assert refused.value.response.status_code == 503
    return json.loads(refused.value.response.body)


def health(s) -> dict:
    with s.http() as h:
        return h.get("/health").json()


def poll(what, until):
    end = time.monotonic() + PATIENCE   # a bound on a hang, not a timing
    while not until(value := what()) and time.monotonic() < end:
        time.sleep(0.05)
    return value


def test_connections_beyond_the_limit_are_refused(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3",
                     "--max-connections", "3")
    try:
        t = s.create(bots=[2, 3])
        held = [SyncSeat(s, t["id"], token, strict=False)
                for token in (t["seats"]["0"], t["seats"]["1"], t["spectator_token"])]
        for c in held:
            assert c.until("welcome")
        assert health(s)["connections"] == 3
        # one more — whatever its table or token — is refused before the upgrade
        for table, token in ((t["id"], t["seats"]["0"]), ("nosuchtable", "x")) * 10:
            body = over_the_limit(s, table, token)
            assert body["error"] == "TooManyConnections", body
            assert "--max-connections 3" in body["message"]
        # qipai connect says so in one line, in the server's words
        import subprocess
        import sys

        url = s.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
        res = subprocess.run([sys.executable, "-m", "qipai", "connect", url],
                             capture_output=True, text=True, timeout=PATIENCE)
        assert res.returncode != 0 and res.stdout == "", (res.returncode, res.stdout)
        shown = url.replace(t["seats"]["0"], "…")   # the token is not echoed
        assert res.stderr.strip().splitlines() == [
            f"error: {shown}: TooManyConnections: the server holds as many WebSocket "
            f"connections as it may (qipai serve --max-connections 3); try again later"], \
            res.stderr
        # HTTP is served all the while, and the refused are not counted
        assert poll(lambda: health(s), lambda h: h["connections"] == 3) == {
            "status": "ok", "tables": 1, "refused": 0, "connections": 3, "db": "sqlite"}
        held.pop().close()    # the spectator leaves: room for one
        assert poll(lambda: health(s)["connections"], lambda n: n == 2) == 2
        again = SyncSeat(s, t["id"], t["spectator_token"], strict=False)
        assert again.until("welcome")
        again.close()
        for c in held:
            c.close()
        assert poll(lambda: health(s)["connections"], lambda n: n == 0) == 0
        assert refusal(s, "nosuchtable", "x")["code"] == "UnknownTable"
    finally:
        s.stop()
    log = s.log_path.read_text()
    # twenty refusals, one line
    assert log.count("new ones are refused (TooManyConnections)") == 1, log
    assert "the limit of WebSocket connections is reached (--max-connections 3)" in log, log


def test_a_client_that_never_answers_the_close_is_let_go(tmp_path):
    """A refusal after the upgrade (UnknownTable) whose client never answers
    the server's close: the socket is closed WS_CLOSE_S later (uvicorn
    waited 10 s), and counts until then."""
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--max-connections", "5")
    try:
        raw = socket.create_connection(("127.0.0.1", s.port))
        raw.sendall(b"GET /tables/nosuchtable/ws?token=x HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    b"Sec-WebSocket-Version: 13\r\n\r\n")
        raw.settimeout(PATIENCE)
        got = b""
        while b"UnknownTable" not in got:
            got += raw.recv(4096)
        assert got.startswith(b"HTTP/1.1 101"), got
        assert health(s)["connections"] == 1    # closing, not answered: still held
        # never answered: the server closes the socket on its own
        while raw.recv(4096):
            pass
        raw.close()
        assert poll(lambda: health(s)["connections"], lambda n: n == 0) == 0
    finally:
        s.stop()


def test_the_protocol_waits_ws_close_s_for_an_answer_to_its_close():
    """(uvicorn's own wait is 10 s.)"""
    import asyncio

    from uvicorn.config import Config
    from uvicorn.server import ServerState

    async def asgi(scope, receive, send):  # pragma: no cover - never called
        pass

    async def made():
        return uvicorn_ws.ws_protocol()(config=Config(app=asgi), server_state=ServerState(),
                                        app_state={})

    assert asyncio.run(made()).close_timeout == uvicorn_ws.WS_CLOSE_S < 10


def test_a_limit_above_the_descriptors_is_logged(tmp_path):
    room = state.descriptor_room()
    if room is None:
        pytest.skip("no descriptor limit here")
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path,
                     "--max-connections", str(room + 1))
    s.stop()
    assert f"--max-connections {room + 1} is more than the descriptor limit" in \
        s.log_path.read_text()


@pytest.mark.parametrize("soft, expected", [
    (1024, 1024 - state.FD_RESERVE),            # a common default ulimit -n
    (260, 16),                                # hardly any: at least 16
    (1 << 20, state.MAX_CONNECTIONS),           # plenty: the default cap
    (resource.RLIM_INFINITY, state.MAX_CONNECTIONS),
])
def test_the_default_limit_keeps_descriptors_for_the_rest(monkeypatch, soft, expected):
    monkeypatch.setattr(resource, "getrlimit", lambda what: (soft, resource.RLIM_INFINITY))
    assert state.default_max_connections() == expected


def test_refusals_are_logged_in_one_line_a_period(tmp_path, capsys):
    """The first refusal is logged at once; those after it within
    ``refusals_log_s`` in one line at its end; a period with none says so
    (and the next refusal is logged at once again)."""
    import asyncio

    s = state.Server(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        s.refusals_log_s = 0.05
        s.max_connections, s.connections = 3, 4

        def lines() -> list[str]:
            return [x for x in capsys.readouterr().err.splitlines() if "refused" in x]

        async def until(pred) -> list[str]:
            got: list[str] = []
            for _ in range(2000):   # a bound on a hang, not a timing
                got += lines()
                if pred(got):
                    return got
                await asyncio.sleep(0.01)
            return got

        async def go():
            for _ in range(5):
                s.refused_connection()
            first = lines()
            assert len(first) == 1 and "is reached (--max-connections 3)" in first[0], first
            more = await until(lambda g: len(g) >= 2)
            assert "4 more connections refused over --max-connections 3" in more[0], more
            assert "no connection refused over --max-connections 3" in more[1], more
            s.refused_connection()
            assert "new ones are refused" in lines()[0]
            await until(lambda g: len(g) >= 1)   # its period ends

        asyncio.run(go())
    finally:
        s.store.close()


@pytest.mark.slow
def test_a_client_that_reads_nothing_is_cut(tmp_path):
    """A spectator of an all-bot table that never reads: once what the
    server has for it stays unread WRITE_STALL_S (or its keepalive ping goes
    unanswered), its socket is reset, its slot and the kernel's buffers
    freed.  A spectator who reads is untouched meanwhile, and still served.

    The reader reads by construction, whatever the test thread's pace: its
    client takes every frame off the socket as it comes (no queue bound)
    and answers the server's pings from its own thread; it sends no
    keepalive pings of its own, whose 20 s answer a loaded machine could
    miss.  The test waits on the server's count of connections, bounded
    only against a hang."""
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3")
    try:
        t = s.create(bots=[0, 1, 2, 3])
        sock = silent_spectator(s, t)
        reader = create_reader(s)
        assert poll(lambda: health(s)["connections"], lambda n: n == 2) == 2
        end = time.monotonic() + uvicorn_ws.WRITE_STALL_S + 90   # a bound on a hang only
        while health(s)["connections"] != 1 and time.monotonic() < end:
            time.sleep(0.5)
        assert health(s)["connections"] == 1
        reader.send({"type": "ping"})   # the reader is still served
        assert reader.until("pong")["type"] == "pong"
        reader.close()
        assert_reset(sock)
    finally:
        s.stop()


@pytest.mark.slow
def test_a_client_that_answers_no_ping_is_cut(tmp_path):
    """A spectator that never reads, of a table with little to send (seat 0
    is a player who never comes, so the bots soon wait for it): no write
    stall, but its pings go unanswered, and at uvicorn's keepalive timeout
    (ping every 20 s, 20 s to answer) its socket is reset, as a stalled
    one is: closed gracefully, what the kernel holds for it would stay
    (FIN-WAIT-1) for as long as its window is shut."""
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3")
    try:
        t = s.create(bots=[1, 2, 3])
        sock = silent_spectator(s, t)
        assert poll(lambda: health(s)["connections"], lambda n: n == 1) == 1
        end = time.monotonic() + 40 + 90   # the keepalive's 40 s, and a bound on a hang
        while health(s)["connections"] != 0 and time.monotonic() < end:
            time.sleep(1)
        assert health(s)["connections"] == 0
        assert_reset(sock)
    finally:
        s.stop()


def silent_spectator(s, t: dict) -> socket.socket:
    """A raw socket upgraded to table ``t``'s WebSocket as a spectator, with
    a small receive buffer; the caller never reads it (its answer and the
    frames after it stay unread)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", s.port))
    sock.sendall(f"GET /tables/{t['id']}/ws?token={t['spectator_token']} HTTP/1.1\r\n"
                 f"Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 f"Sec-WebSocket-Version: 13\r\n\r\n".encode())
    return sock


def assert_reset(sock: socket.socket) -> None:
    """Reading ``sock`` to its end meets a reset, not an orderly close."""
    sock.settimeout(PATIENCE)
    with pytest.raises(ConnectionResetError):
        while sock.recv(1 << 16):
            pass
    sock.close()


def create_reader(s) -> SyncSeat:
    """A spectator of a new all-bot table whose client reads every frame as
    it comes (``max_queue=None``) and sends no keepalive pings."""
    t = s.create(bots=[0, 1, 2, 3])
    c = SyncSeat(s, t["id"], t["spectator_token"], strict=False,
                 ping_interval=None, max_queue=None)
    c.until("welcome")
    return c
