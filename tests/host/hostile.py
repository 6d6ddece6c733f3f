"""Helpers of the adversarial server tests: a real ``qipai serve`` subprocess,
a plain synchronous WebSocket client (``websockets.sync``) that keeps every
frame it was sent, byte for byte, and a look at every database row.

Self-contained on purpose (the protocol page is the contract): it speaks
only HTTP and the WebSocket protocol of docs/reference/protocol.md.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from pgcluster import sqlalchemy_url
from qipai.host.protocol import messages

#: Upper bound on waiting for a server or a message (a hang guard, not a timing assertion).
PATIENCE = 60.0
HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``qipai serve`` (or the test launcher ``dealt_serve.py``) on 127.0.0.1."""

    def __init__(self, db: str, tmp_path: Path, *args: str, deals: Path | None = None) -> None:
        self.db, self.port = db, free_port()
        if deals is None:
            cmd = [sys.executable, "-m", "qipai"]
        else:
            cmd = [sys.executable, str(HERE / "dealt_serve.py"), str(deals)]
        cmd += ["serve", "--port", str(self.port), "--db", db, *args]
        self.log_path = tmp_path / f"server-{self.port}.log"
        self.log = self.log_path.open("w")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)   # let later starts use compiled modules
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        end = time.monotonic() + PATIENCE
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_path.read_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server did not answer /health")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=PATIENCE)

    def create(self, variant: str = "guilin-mahjong", bots: list[int] = ()) -> dict[str, Any]:
        with self.http() as h:
            r = h.post("/tables", json={"variant": variant, "bots": list(bots)})
        assert r.status_code == 201, r.text
        return r.json()

    def info(self, tid: str) -> dict[str, Any]:
        with self.http() as h:
            return h.get(f"/tables/{tid}").json()

    def close(self, t: dict[str, Any]) -> None:
        """Close table ``t`` (its admin token)."""
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

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Conn:
    """One WebSocket connection; ``raw`` holds every text frame received."""

    def __init__(self, server: Server, tid: str, token: str | None) -> None:
        from websockets.sync.client import connect

        q = f"?token={token}" if token is not None else ""
        self.ws = connect(f"ws://127.0.0.1:{server.port}/tables/{tid}/ws{q}",
                          max_size=None, open_timeout=PATIENCE, compression=None,
                          legacy=True)
        self.raw: list[str] = []
        self.queued: list[dict[str, Any]] = []     # a batch frame's messages not read yet
        self.decide: dict[str, Any] | None = None   # the latest unanswered decision
        self._last_send = 0.0

    def recv(self, timeout: float = PATIENCE) -> dict[str, Any]:
        """The next message, decoded (a ``batch`` frame's messages one by
        one; raises ``TimeoutError`` after ``timeout`` s)."""
        if not self.queued:
            text = self.ws.recv(timeout=timeout)
            assert isinstance(text, str), "the server sends text frames"
            self.raw.append(text)
            self.queued = messages(json.loads(text))
            assert self.queued, "a batch is never empty"
        msg = self.queued.pop(0)
        if msg["type"] == "decide":
            self.decide = msg
        return msg

    def until(self, kind: str, pred: Any = None) -> dict[str, Any]:
        while True:
            msg = self.recv()
            if msg["type"] == kind and (pred is None or pred(msg)):
                return msg

    def send(self, obj: Any, paced: bool = True) -> None:
        """Send one frame; ``paced``: no faster than the server's per-connection
        rate (``qipai.host.app.RATE_PER_S``), as a well-behaved client — a
        throttled frame may be dropped without an answer."""
        if paced:
            from qipai.host.app import RATE_PER_S

            wait = self._last_send + 1.25 / RATE_PER_S - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_send = time.monotonic()
        self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    def ask(self, obj: Any, retry_throttled: bool = True) -> dict[str, Any]:
        """Send ``obj``; the next ``error`` or ``ack`` (other messages are kept).

        A ``Throttled`` answer means the message was dropped unread (a
        conductor playing every seat at full speed goes over the per-connection
        rate): it is sent again a little later, as a client should.
        """
        self.send(obj)
        while True:
            msg = self.recv()
            if msg["type"] == "error" and msg["code"] == "Throttled" and retry_throttled:
                time.sleep(0.25)
                self.send(obj)
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
        except Exception:  # noqa: BLE001 - a connection the server already closed
            pass


def act(decision: dict[str, Any], action: dict[str, Any], **over: Any) -> dict[str, Any]:
    msg = {"type": "act", "hand": decision["hand"], "seq": decision["seq"], "action": action}
    msg.update(over)
    return msg


def db_rows(db_url: str) -> dict[str, list[tuple]]:
    """Every row of every table of the database, sorted (a comparable picture)."""
    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.connect() as c:
            names = sorted(sa.inspect(c).get_table_names())
            meta = sa.MetaData()
            meta.reflect(c, only=names)
            return {n: sorted(tuple(r) for r in c.execute(sa.select(meta.tables[n])))
                    for n in names}
    finally:
        engine.dispose()


_DEADLINE = re.compile(r'"deadline":[0-9.e+-]+')
_COMMIT = re.compile(r'"commitment":"[0-9a-f]{64}"')


def split_frames(raw: list[str]) -> list[str]:
    """Every message of the frames as its own JSON text, in order: a frame
    that is one message as it came (byte for byte), a ``batch`` frame's
    messages each encoded again as the server encodes (msgspec: compact,
    keys in order) — which messages share a frame depends on when the
    database commits, not on the deal."""
    import msgspec

    out = []
    for text in raw:
        if text.startswith('{"type":"batch"'):
            out += [msgspec.json.encode(m).decode() for m in json.loads(text)["messages"]]
        else:
            out.append(text)
    return out


def normalise(raw: list[str], table_id: str) -> list[str]:
    """The messages of the frames (:func:`split_frames`) with what differs by
    design between two tables blanked: the table id, the deal commitment
    (a hash of a different deal), the deadline (a clock); ``Throttled``
    answers (they depend on how fast the test sends) left out."""
    out = []
    for text in split_frames(raw):
        if '"code":"Throttled"' in text:   # the conductor's own pace, not the deal
            continue
        text = text.replace(table_id, "TABLE")
        text = _COMMIT.sub('"commitment":"C"', text)
        out.append(_DEADLINE.sub('"deadline":0', text))
    return out
