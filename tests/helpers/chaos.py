"""A cluster of ``qipai serve --cluster`` nodes under chaos, and clients that
ride it out: shared by the chaos test (``tests/server/test_cluster_chaos.py``)
and the cluster benchmark (``benchmarks/cluster.py``).

* :class:`Node` — one node process (``--cluster --node-id ID`` on a fixed
  port, so a restart answers at the same address): started, SIGKILLed,
  drained (SIGTERM), started again with the same id.  Each start writes its
  own log file.
* :func:`play_seat` — one seat's WebSocket client playing from its own view
  only, as :func:`benchmarks.serve.play_seat` plays (it wins when it may,
  else a random legal action), that also rides out the cluster: it follows
  ``moved`` to the address named (address None: a takeover is under way, it
  asks the same node again shortly), and when its socket drops it tries the
  nodes round-robin, as a proxy in front of them would, resyncing from the
  ``welcome``.  A decision offered again (the same hand and seq, after a
  move) is answered at once with the action chosen before.  What it saw is
  kept in a :class:`SeatLog`: every ``ack`` (for the exactly-once check),
  every ``decide`` with the connection it came on, every connection.
* :func:`check_cluster` — the checks after a run: every ``ack`` a client
  received is a row of ``qipai_actions`` holding the action it sent, each
  finished hand's record replays and sums to zero, no table lost, closed or
  short of its hands.

Times are ``time.perf_counter()`` (CLOCK_MONOTONIC on Linux: one clock for
every process of the machine).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Seconds a client waits before asking again after a refused or failed
#: connection, or a ``moved`` without an address (a takeover under way):
#: a client's back-off, not a test's wait — doubled at each failure in a
#: row up to :data:`RETRY_MAX_S` (each wait drawn in [½, 1] of it), so that
#: hundreds of clients cut at once do not hammer the nodes taking over.
RETRY_S = 0.1
RETRY_MAX_S = 2.0


@dataclass
class Node:
    """One node of the cluster: ``python -m qipai serve --cluster``.

    ``port`` is fixed for the node's life, so a node started again is at
    the same address (its clients' round-robin finds it there)."""

    id: str
    port: int
    db: str
    tmp: Path
    args: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    #: False: the same server without ``--cluster`` (a benchmark's reference)
    cluster: bool = True
    starts: int = 0
    logs: list[Path] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the process (not waiting for it: :meth:`ready`)."""
        self.starts += 1
        log = self.tmp / f"node-{self.id}-{self.starts}.log"
        self.logs.append(log)
        cmd = [sys.executable, "-m", "qipai", "serve", "--db", self.db, "--port", str(self.port),
               *(["--cluster", "--node-id", self.id] if self.cluster else []), *self.args]
        with log.open("w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                         env={**_env(), "PYTHONUNBUFFERED": "1"})

    async def ready(self, patience: float = 60.0) -> None:
        """Wait until ``/health`` answers 200 (raises if the process exits
        or ``patience`` seconds pass)."""
        import httpx

        end = time.monotonic() + patience
        async with httpx.AsyncClient(timeout=2) as http:
            while time.monotonic() < end:
                if self.proc is None or self.proc.poll() is not None:
                    raise RuntimeError(f"node {self.id} exited: {self.log_text()[-2000:]}")
                try:
                    if (await http.get(self.address + "/health")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.05)
        raise RuntimeError(f"node {self.id} did not answer /health in {patience} s")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def term(self) -> None:
        """SIGTERM: a cluster node drains (its tables handed to its peers) and exits."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)

    async def exited(self, patience: float = 60.0) -> int:
        """Wait for the process to exit (a drain); its return code."""
        end = time.monotonic() + patience
        while self.proc.poll() is None:
            if time.monotonic() > end:
                raise RuntimeError(f"node {self.id} did not exit in {patience} s")
            await asyncio.sleep(0.05)
        return self.proc.returncode

    def log_text(self) -> str:
        return "".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    def cpu_s(self) -> float:
        """User + system CPU seconds of the running process."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # let restarts use compiled modules
    return env


def choose(legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Win when possible, else a random legal action (the benchmark's bot)."""
    for a in legal:
        if a["type"] in ("hu", "zimo"):
            return a
    return rng.choice(legal)


@dataclass
class SeatLog:
    """What one seat's client saw.

    Attributes:
        acks: one per ``ack``: ``(hand, seq, action, first_sent, acked, address)``
            — ``first_sent`` the first time an act of that decision was sent
            (perf_counter s), ``acked`` when its ack came, ``address`` the node's.
        decides: one per ``decide``: ``(time, address, connected, hand, seq)``,
            ``connected`` when that connection opened.
        conns: one per connection that was welcomed: ``(address, opened, closed, why)``.
        moved: one per ``moved``: ``(time, from address, to address or None)``.
        errors: every ``error`` message (dicts, with ``at`` the node's address,
            ``t`` when, ``welcomed`` whether it came after the welcome: else the
            node refused the connection), and ``unexpected``: what should
            not happen (an ack of a decision never answered, a decide with no
            legal action, …).
        done: the seat saw the end of its last hand.
    """

    table: str
    seat: int
    acks: list[tuple[int, int, dict[str, Any], float, float, str]] = field(default_factory=list)
    decides: list[tuple[float, str, float, int, int]] = field(default_factory=list)
    conns: list[tuple[str, float, float, str]] = field(default_factory=list)
    moved: list[tuple[float, str, str | None]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    refusals: int = 0
    done: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def ws_url(address: str, path: str) -> str:
    return "ws" + address[len("http"):] + path


class Gate:
    """How far the clients may play: a seat answers no decision of hand
    ``limit`` or later until the limit is raised (the chaos test keeps the
    tables playing until its driver is done with them)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._raised = asyncio.Event()

    def raise_to(self, limit: int) -> None:
        self.limit = max(self.limit, limit)
        self._raised.set()
        self._raised = asyncio.Event()

    async def wait(self, hand: int) -> None:
        while hand >= self.limit:
            await self._raised.wait()


async def play_seat(addresses: list[str], first: str, path: str, hands: int | None,
                    log: SeatLog, start: asyncio.Event, think: float = 0.0,
                    jitter: float = 0.5, seed: str = "", give_up: float = 600.0,
                    gate: Gate | None = None, stop: asyncio.Event | None = None) -> SeatLog:
    """Play one seat (``path``: ``/tables/{id}/ws?token=…``) until hand
    ``hands - 1`` has ended (None: until ``stop`` is set), starting at node
    ``first`` and riding out moves, kills and drains (see the module).
    ``think``: mean seconds before answering a new decision (± ``jitter``).
    ``gate``: decisions of hands at or past its limit wait for it.  Gives
    up (``done`` False) after ``give_up`` seconds."""
    import msgspec
    import websockets

    dec = msgspec.json.Decoder()
    enc = msgspec.json.Encoder()
    rng = random.Random(seed)
    wait = random.Random("think:" + seed)
    chosen: dict[tuple[int, int], dict[str, Any]] = {}
    first_sent: dict[tuple[int, int], float] = {}
    acked: set[tuple[int, int]] = set()
    order = list(addresses)
    at = first
    backoff = RETRY_S
    jitter_rng = random.Random("retry:" + seed)

    async def back_off() -> None:
        nonlocal backoff
        await asyncio.sleep(backoff * (0.5 + 0.5 * jitter_rng.random()))
        backoff = min(RETRY_MAX_S, backoff * 2)
    end = time.monotonic() + give_up
    await start.wait()

    def next_node(after: str) -> str:
        i = order.index(after) if after in order else -1
        return order[(i + 1) % len(order)]

    if stop is not None:
        stop_task = asyncio.ensure_future(stop.wait())

    while not log.done and time.monotonic() < end and not (stop and stop.is_set()):
        try:
            ws = await websockets.connect(ws_url(at, path), max_size=None, compression=None,
                                          open_timeout=5, ping_interval=None)
        except (OSError, asyncio.TimeoutError, websockets.InvalidHandshake):
            log.refusals += 1
            at = next_node(at)
            await back_off()
            continue
        opened = time.perf_counter()
        welcomed = False
        why = "closed"
        go_to: str | None = None
        try:
            if stop is not None:   # stopping: the connection is closed at once
                closer = asyncio.get_running_loop().create_task(_close_on(stop_task, ws))
            async for raw in ws:
                frame = dec.decode(raw)
                for msg in (frame["messages"] if frame["type"] == "batch" else (frame,)):
                    t = msg["type"]
                    if t == "welcome":
                        welcomed = True
                        backoff = RETRY_S
                        if hands is not None and msg["hand"] >= hands:
                            log.done = True
                    elif t == "decide":
                        now = time.perf_counter()
                        h, seq = msg["hand"], msg["seq"]
                        log.decides.append((now, at, opened, h, seq))
                        if hands is not None and h >= hands:
                            log.done = True
                            continue
                        if (h, seq) in acked:
                            log.unexpected.append(f"decide of an acknowledged decision {h}/{seq}")
                            continue
                        action = chosen.get((h, seq))
                        if action is None or action not in msg["legal"]:
                            if not msg["legal"]:
                                log.unexpected.append(f"decide {h}/{seq} with no legal action")
                                continue
                            if gate is not None:
                                await gate.wait(h)
                            if think:
                                await asyncio.sleep(
                                    think * (1.0 + jitter * (2 * wait.random() - 1)))
                            action = choose(msg["legal"], rng)
                            chosen[(h, seq)] = action
                        first_sent.setdefault((h, seq), time.perf_counter())
                        try:
                            await ws.send(enc.encode({"type": "act", "hand": h, "seq": seq,
                                                      "action": action}).decode())
                        except websockets.ConnectionClosed:
                            pass   # closed meanwhile: what came before the close (a moved) is read next
                    elif t == "ack":
                        now = time.perf_counter()
                        key = (msg["hand"], msg["seq"])
                        if key not in chosen:
                            log.unexpected.append(f"ack of {key} never answered")
                            continue
                        if key in acked:
                            log.unexpected.append(f"a second ack of {key}")
                            continue
                        acked.add(key)
                        log.acks.append((key[0], key[1], chosen[key], first_sent[key], now, at))
                    elif t == "hand_ended":
                        if msg["result"] is None:
                            log.unexpected.append(f"hand {msg['hand']} ended without a result")
                        if hands is not None and msg["hand"] >= hands - 1:
                            log.done = True
                    elif t == "moved":   # the server closes next: no need to wait for it
                        log.moved.append((time.perf_counter(), at, msg["address"]))
                        go_to = msg["address"] or at
                        why = "moved"
                        break
                    elif t == "error":
                        log.errors.append({**msg, "at": at, "t": time.perf_counter(),
                                           "welcomed": welcomed})
                        if not welcomed:   # refused at the door (this node cannot serve it now)
                            why = f"refused {msg.get('code')}"
                    elif t == "closed":
                        log.unexpected.append(f"the table was closed: {msg}")
                        log.done = True
                if log.done or why == "moved":
                    break
        except (websockets.ConnectionClosed, OSError):
            if why == "closed":
                why = "dropped"
        finally:
            if stop is not None:
                closer.cancel()
            await ws.close()
        log.conns.append((at, opened, time.perf_counter(), why))
        if log.done or (stop is not None and stop.is_set()):
            break
        if go_to is not None:   # moved: straight there; without an address, shortly here
            if go_to == at or go_to not in order:
                await back_off()
            at = go_to
        else:   # cut (a node killed or gone): the next node at once; refused: shortly
            if why != "dropped" or not welcomed:
                await back_off()
            at = next_node(at)
    if stop is not None:
        stop_task.cancel()
    return log


async def _close_on(stopped: asyncio.Future, ws: Any) -> None:
    await asyncio.shield(stopped)
    await ws.close()


# ------------------------------------------------------------------ checks


def check_cluster(db: str, base: str, logs: list[SeatLog], table_ids: list[str],
                  hands: int) -> dict[str, Any]:
    """After a run: the exactly-once check, the records' and the tables'.

    ``db``: the libpq URL; ``base``: a live node's address (any node
    answers ``GET /tables/{id}/records``).  Returns ``{"acks", "rows",
    "problems", "records", "hands_finished"}``: ``acks`` the clients
    received, ``rows`` of them found in ``qipai_actions`` with the action
    sent (the primary key ``(table, hand, seq)`` holds each once, and no
    row is claimed by two acks), ``records`` finished hands that replay and
    sum to zero, ``hands_finished`` all finished hands, ``aborted`` hands
    with no record that are not their table's last, ``problems`` each
    failed check in a line.  ``hands``: each table finished at least so many."""
    import httpx
    import msgspec
    import psycopg

    from qipai.core.records import decode_record, replay_check

    problems: list[str] = []
    with psycopg.connect(db) as conn:
        stored: dict[tuple[str, int, int], dict[str, Any]] = {}
        for tid, h, seq, action in conn.execute(
                "select table_id, hand, seq, action from qipai_actions where table_id = any(%s)",
                (table_ids,)):
            stored[(tid, h, seq)] = msgspec.json.decode(action)
        rows = {r[0]: r for r in conn.execute(
            "select id, open, owner, epoch, closed from qipai_tables where id = any(%s)",
            (table_ids,))}
        open_hands: dict[str, list[int]] = {}
        for tid, h in conn.execute("select table_id, hand from qipai_hands where record is null "
                                   "and table_id = any(%s)", (table_ids,)):
            open_hands.setdefault(tid, []).append(h)
        last_hand = dict(conn.execute("select table_id, max(hand) from qipai_hands "
                                      "where table_id = any(%s) group by 1", (table_ids,)))
        dup = conn.execute("select count(*) from (select table_id, hand, seq from qipai_actions "
                           "group by 1, 2, 3 having count(*) > 1) d").fetchone()[0]
    if dup:
        problems.append(f"{dup} (table, hand, seq) stored more than once")
    # an ack names its *decision* (``seq``: the number of actions when it was
    # offered); the row is the action's own index — the same for a turn, one
    # of the next few in a claim window, where every seat answers the same
    # decision seq and the answers are stored in the order they came.  The
    # action names its seat, so the row is the first at or after ``seq`` that
    # holds it, within as many rows as the table has seats.
    claimed: dict[tuple[str, int, int], str] = {}
    n_acks = found = 0
    for log in logs:
        for h, seq, action, *_ in log.acks:
            n_acks += 1
            want = _strip(action)
            at = next((i for i in range(seq, seq + 4)
                       if (log.table, h, i) in stored and _strip(stored[log.table, h, i]) == want),
                      None)
            if at is None:
                near = {i: stored.get((log.table, h, i)) for i in range(seq, seq + 4)}
                problems.append(f"lost ack: table {log.table} seat {log.seat} hand {h} decision "
                                f"{seq} was acked {action}; qipai_actions holds {near}")
            elif (log.table, h, at) in claimed:
                problems.append(f"table {log.table} hand {h} seq {at}: acked to seat {log.seat} "
                                f"and to {claimed[log.table, h, at]}")
            else:
                claimed[log.table, h, at] = f"seat {log.seat}"
                found += 1
        for u in log.unexpected:
            problems.append(f"table {log.table} seat {log.seat}: {u}")
    for tid in table_ids:
        r = rows.get(tid)
        if r is None:
            problems.append(f"table {tid} lost: no row")
        elif not r[1]:
            problems.append(f"table {tid} was closed ({r[4]})")
    aborted = 0   # a hand with no record before the table's last: it ended without one
    for tid, hs in open_hands.items():
        for h in hs:
            if h != last_hand.get(tid):
                aborted += 1
                problems.append(f"table {tid} hand {h} has no record, and hand "
                                f"{last_hand.get(tid)} came after it")
    records = finished = 0
    with httpx.Client(base_url=base, timeout=120) as http:
        for tid in table_ids:
            out = http.get(f"/tables/{tid}/records").json()
            got = sorted(h["hand"] for h in out["hands"])
            finished += len(got)
            if got != list(range(len(got))) or len(got) < hands:
                problems.append(f"table {tid}: finished hands {got}, not 0..{hands - 1} "
                                f"(at least)")
            for h in out["hands"]:
                rec = decode_record(h["record"])
                why = replay_check(rec)
                if why is not None:
                    problems.append(f"{tid} hand {h['hand']}: does not replay: {why}")
                elif rec.result is None or sum(rec.result.net) != 0:
                    problems.append(f"{tid} hand {h['hand']}: net does not sum to zero")
                else:
                    records += 1
    return {"acks": n_acks, "rows": found, "problems": problems, "records": records,
            "hands_finished": finished, "aborted": aborted}


def _strip(action: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in action.items() if v is not None}
