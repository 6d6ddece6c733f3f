"""Helpers for the server tests: start a real ``qipai serve`` and talk to it.

:func:`start_server` runs ``python -m qipai serve`` (or the test launcher
``dealt_serve.py``) as a subprocess on 127.0.0.1 with a free port;
:class:`SyncSeat` (``websockets``' sync client) and :class:`Client` (its
asyncio client) are one real WebSocket connection each, keeping every text
frame as it came (``raw``) and every message in order (``received``).  The
adversarial tests' ``hostile.Conn`` is a :class:`SyncSeat` that is not
``strict``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import websockets

from qipai.cli.connect import auto_choice
from qipai.host.protocol import messages

#: How long a test waits for a server or a message before it fails (not a
#: timing assertion: only an upper bound on a hang).
PATIENCE = 60.0
HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    """A running server: its process, base URL, database and log."""

    proc: subprocess.Popen
    port: int
    db: str
    args: list[str]
    log: Any
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=PATIENCE)

    def create(self, variant: str = "guilin-mahjong", bots: list[int] = ()) -> dict[str, Any]:
        """``POST /tables``; its answer (asserted 201)."""
        with self.http() as h:
            r = h.post("/tables", json={"variant": variant, "bots": list(bots)})
        assert r.status_code == 201, r.text
        return r.json()

    def info(self, tid: str) -> dict[str, Any]:
        with self.http() as h:
            return h.get(f"/tables/{tid}").json()

    def close(self, t: dict[str, Any]) -> None:
        """Close table ``t`` (a :meth:`create` answer: its admin token)."""
        with self.http() as h:
            r = h.post(f"/tables/{t['id']}/close",
                       headers={"Authorization": f"Bearer {t['admin']}"})
        assert r.status_code == 200, r.text

    def alive(self) -> bool:
        try:
            with self.http() as h:
                return self.proc.poll() is None and h.get("/health").status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        """SIGTERM (SIGKILL after 15 s)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def start_server(db: str, tmp_path: Any, *args: str, port: int | None = None,
                 deals: Path | None = None) -> Served:
    """Start ``qipai serve --db DB ARGS`` and wait until ``/health`` answers.

    ``deals``: a JSON file of deals, served by ``dealt_serve.py`` (the k-th
    table created is dealt the k-th deal).  The server's output goes to
    ``Served.log_path`` in ``tmp_path``.  Without ``port`` the server binds
    port 0 and the port its banner announces is used, so servers started at
    once (pytest-xdist workers) never race for a port."""
    port = port or 0
    if deals is None:
        cmd = [sys.executable, "-m", "qipai"]
    else:
        cmd = [sys.executable, str(HERE / "dealt_serve.py"), str(deals)]
    cmd += ["serve", "--port", str(port), "--db", db, *args]
    log_path = Path(tmp_path) / f"server-{time.monotonic_ns()}.log"
    log = log_path.open("w+")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # let later starts use compiled modules
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    served = Served(proc, port, db, list(args), log, log_path)
    end = time.monotonic() + PATIENCE
    while time.monotonic() < end:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the server exited ({proc.returncode}): {log.read()}")
        if served.port == 0:
            served.port = announced_port(log_path)
            if served.port == 0:
                time.sleep(0.05)
                continue
        try:
            if httpx.get(served.url + "/health", timeout=2).status_code == 200:
                return served
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    served.stop()
    raise RuntimeError("the server did not answer /health")


def announced_port(log_path: Path) -> int:
    """The port ``qipai serve``'s banner in ``log_path`` names (0 before the banner)."""
    found = re.search(r"qipai serve on http://127\.0\.0\.1:(\d+)", log_path.read_text())
    return int(found.group(1)) if found else 0


class _Received:
    """What one connection was sent: ``raw`` every text frame as it came,
    ``received`` every message in order (a ``batch`` frame's messages one by
    one), ``decide`` the latest decision.

    ``strict``: :meth:`until` fails on an ``error`` it was not waiting for
    (a well-behaved client's tests); not strict, an error is a message like
    any other (the adversarial tests look at errors themselves)."""

    strict = True

    def _setup(self, strict: bool | None) -> None:
        self.raw: list[str] = []
        self.received: list[dict[str, Any]] = []
        self.queued: list[dict[str, Any]] = []     # a batch frame's messages not read yet
        self.decide: dict[str, Any] | None = None  # the latest decision
        self.answered: set[int] = set()            # decisions a test has answered (its seqs)
        if strict is not None:
            self.strict = strict

    def _frame(self, text: Any) -> None:
        assert isinstance(text, str), "the server sends text frames"
        self.raw.append(text)
        self.queued = messages(json.loads(text))
        assert self.queued, "a batch is never empty"

    def _next(self) -> dict[str, Any]:
        msg = self.queued.pop(0)
        self.received.append(msg)
        if msg["type"] == "decide":
            self.decide = msg
        return msg

    def _wanted(self, msg: dict[str, Any], kind: str, pred: Any) -> bool:
        if msg["type"] == kind and (pred is None or pred(msg)):
            return True
        if self.strict and msg["type"] == "error" and kind != "error":
            raise AssertionError(f"refused: {msg}")
        return False


class SyncSeat(_Received):
    """One seat's (or the spectator's) connection, synchronous
    (``websockets.sync``); ``token`` None sends no token at all; ``options``
    go to ``websockets.sync.client.connect`` (``ping_interval``, ``max_queue``…)."""

    def __init__(self, served: Served, table: str, token: str | None,
                 strict: bool | None = None, **options: Any) -> None:
        from websockets.sync.client import connect

        q = f"?token={token}" if token is not None else ""
        self.ws = connect(served.ws(f"/tables/{table}/ws{q}"), **{
            "max_size": None, "open_timeout": PATIENCE, "compression": None,
            "legacy": True, **options})
        self._setup(strict)
        self._last_send = 0.0

    def recv(self, timeout: float = PATIENCE) -> dict[str, Any]:
        """The next message (raises ``TimeoutError`` after ``timeout`` s)."""
        if not self.queued:
            self._frame(self.ws.recv(timeout=timeout))
        return self._next()

    def until(self, kind: str, pred: Any = None) -> dict[str, Any]:
        """Read until a ``kind`` message (and ``pred(msg)``) comes."""
        while not self._wanted(msg := self.recv(), kind, pred):
            pass
        return msg

    #: :meth:`send`'s default pace
    paced = False

    def send(self, obj: Any, paced: bool | None = None) -> None:
        """Send one frame; ``paced`` (default :attr:`paced`): no faster than the
        server's per-connection rate (``qipai.server.state.RATE_PER_S``), as a
        well-behaved client — a throttled frame may be dropped without an answer."""
        if self.paced if paced is None else paced:
            from qipai.server.state import RATE_PER_S

            wait = self._last_send + 1.25 / RATE_PER_S - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_send = time.monotonic()
        self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    def ask(self, obj: Any, retry_throttled: bool = True) -> dict[str, Any]:
        """Send ``obj`` (paced); the next ``error`` or ``ack`` (other messages
        are kept).  A ``Throttled`` answer means the message was dropped
        unread: it is sent again a little later, as a client should."""
        self.send(obj, paced=True)
        while True:
            msg = self.recv()
            if msg["type"] == "error" and msg["code"] == "Throttled" and retry_throttled:
                time.sleep(0.25)
                self.send(obj, paced=True)
                continue
            if msg["type"] in ("error", "ack"):
                return msg

    def next_decision(self) -> dict[str, Any]:
        while self.decide is None:
            self.recv()
        return self.decide

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - a killed server's socket, or one it closed
            pass


def refusal(served: Served, table: str, token: str | None) -> dict[str, Any]:
    """Connect with ``token`` and read the one ``error`` the server answers
    before it closes (asserted an error; the connection is closed)."""
    c = SyncSeat(served, table, token, strict=False)
    try:
        msg = c.recv()
        assert msg["type"] == "error", (token, msg)
        msg["raw"] = c.raw
        return msg
    finally:
        c.close()


class Client(_Received):
    """One WebSocket connection, asyncio (``websockets``)."""

    def __init__(self, ws: Any, strict: bool | None = False) -> None:
        self.ws = ws
        self._setup(strict)

    @classmethod
    async def connect(cls, served: Served, table: str, token: str) -> Client:
        ws = await websockets.connect(served.ws(f"/tables/{table}/ws?token={token}"),
                                      max_size=None)
        return cls(ws)

    async def recv(self) -> dict[str, Any]:
        """The next message (a ``batch`` frame's messages one by one)."""
        if not self.queued:
            self._frame(await asyncio.wait_for(self.ws.recv(), PATIENCE))
        return self._next()

    async def until(self, kind: str, pred: Any = None) -> dict[str, Any]:
        """Read until a message of type ``kind`` (and ``pred(msg)``) comes."""
        while not self._wanted(msg := await self.recv(), kind, pred):
            pass
        return msg

    async def send(self, obj: Any) -> None:
        await self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    async def close(self) -> None:
        await self.ws.close()


#: A deterministic player (win, else pass a claim, else discard the highest
#: card): the terminal client's own choice, so tests play as ``qipai connect --auto``.
choose = auto_choice


def create(served: Served, variant: str = "guilin-mahjong", bots: list[int] = ()) -> dict[str, Any]:
    return served.create(variant, bots)


def action_json(action: Any) -> dict[str, Any]:
    import msgspec

    return json.loads(msgspec.json.encode(action))
