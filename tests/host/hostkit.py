"""Helpers for the server tests: start a real ``qipai serve`` and talk to it.

:func:`start_server` runs ``python -m qipai serve`` as a subprocess on
127.0.0.1 with a free port; :class:`Client` is one real WebSocket
connection (the ``websockets`` library) that keeps what it was sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

from qipai.host.client import auto_choice
from qipai.host.protocol import messages

#: How long a test waits for a server or a message before it fails (not a
#: timing assertion: only an upper bound on a hang).
PATIENCE = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    """A running server: its process, base URL and database."""

    proc: subprocess.Popen
    port: int
    db: str
    args: list[str]
    log: Any

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=PATIENCE)

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def start_server(db: str, tmp_path: Any, *args: str, port: int | None = None) -> Served:
    """Start ``qipai serve --db DB ARGS`` and wait until ``/health`` answers."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "qipai", "serve", "--port", str(port), "--db", db, *args]
    log = open(tmp_path / f"server-{port}-{time.monotonic_ns()}.log", "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    served = Served(proc, port, db, list(args), log)
    end = time.monotonic() + PATIENCE
    while time.monotonic() < end:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the server exited ({proc.returncode}): {log.read()}")
        try:
            if httpx.get(served.url + "/health", timeout=2).status_code == 200:
                return served
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    served.stop()
    raise RuntimeError("the server did not answer /health")


@dataclass
class Client:
    """One WebSocket connection and everything it received (decoded JSON)."""

    ws: Any
    received: list[dict[str, Any]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    queued: list[dict[str, Any]] = field(default_factory=list)  # a frame's messages not read yet

    @classmethod
    async def connect(cls, served: Served, table: str, token: str) -> Client:
        ws = await websockets.connect(served.ws(f"/tables/{table}/ws?token={token}"),
                                      max_size=None)
        return cls(ws)

    async def recv(self) -> dict[str, Any]:
        """The next message (a ``batch`` frame's messages one by one)."""
        if not self.queued:
            text = await asyncio.wait_for(self.ws.recv(), PATIENCE)
            self.raw.append(text)
            self.queued = messages(json.loads(text))
        msg = self.queued.pop(0)
        self.received.append(msg)
        return msg

    async def until(self, kind: str, pred: Any = None) -> dict[str, Any]:
        """Read until a message of type ``kind`` (and ``pred(msg)``) comes."""
        while True:
            msg = await self.recv()
            if msg["type"] == kind and (pred is None or pred(msg)):
                return msg

    async def send(self, obj: Any) -> None:
        await self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    async def close(self) -> None:
        await self.ws.close()


#: A deterministic player (win, else pass a claim, else discard the highest
#: card): the terminal client's own choice, so tests play as ``qipai connect --auto``.
choose = auto_choice


def create(served: Served, variant: str = "guilin-mahjong", bots: list[int] = ()) -> dict[str, Any]:
    with served.http() as http:
        r = http.post("/tables", json={"variant": variant, "bots": list(bots)})
        assert r.status_code == 201, r.text
        return r.json()


class SyncSeat:
    """One seat's connection for a conductor (``websockets``' sync client)."""

    def __init__(self, served: Served, table: str, token: str) -> None:
        from websockets.sync.client import connect

        self.ws = connect(served.ws(f"/tables/{table}/ws?token={token}"), max_size=None,
                          open_timeout=PATIENCE).__enter__()
        self.received: list[dict[str, Any]] = []
        self.queued: list[dict[str, Any]] = []
        self.decide: dict[str, Any] | None = None
        self.answered: set[int] = set()

    def recv(self) -> dict[str, Any]:
        """The next message (a ``batch`` frame's messages one by one)."""
        if not self.queued:
            self.queued = messages(json.loads(self.ws.recv(timeout=PATIENCE)))
        msg = self.queued.pop(0)
        self.received.append(msg)
        if msg["type"] == "decide":
            self.decide = msg
        return msg

    def until(self, kind: str, pred: Any = None) -> dict[str, Any]:
        """Read until a ``kind`` message (and ``pred``); an error fails."""
        while True:
            msg = self.recv()
            if msg["type"] == kind and (pred is None or pred(msg)):
                return msg
            if msg["type"] == "error" and kind != "error":
                raise AssertionError(f"refused: {msg}")

    def send(self, obj: Any) -> None:
        self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - a killed server's socket
            pass


def action_json(action: Any) -> dict[str, Any]:
    import msgspec

    return json.loads(msgspec.json.encode(action))
