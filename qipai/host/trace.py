"""Where an action's round trip goes inside ``qipai serve`` (a debugging aid).

Off unless the environment variable ``QIPAI_SERVE_TRACE`` names a file when
the server starts (``benchmarks/serve.py --trace`` sets it).  Then the
server notes, for every ``act`` it accepts, the times (``time.perf_counter``
seconds: ``CLOCK_MONOTONIC``, the same clock in every process of the
machine) at which it was

* ``recv`` — read from the WebSocket (uvicorn handed the frame to the app),
* ``applied`` — checked, applied to the table and handed to the group commit,
* ``committed`` — its write committed (the writer called back),
* ``framed`` — its ``ack`` put into the connection's outbox as a frame,
* ``sent`` — that frame handed to the transport;

and, with them, every writer batch (start, seconds, writes), every garbage
collection (start, seconds, CPU seconds of the thread, generation) and every event-loop stall (a 1 ms
probe timer late by more than 2 ms: when, how late).  At shutdown it
writes one JSON object per line to the file: ``{"kind": "act", "table",
"seat", "hand", "seq", "recv", "applied", "committed", "framed", "sent"}``,
``{"kind": "batch", "t", "s", "n"}``, ``{"kind": "gc", "t", "s", "cpu", "gen"}``,
``{"kind": "lag", "t", "s"}``, and every 10 s a census of the objects the
collector tracks (``{"kind": "heap", "t", "n", "top"}``: the 12 commonest types).  Nothing of this reaches a client, and the
protocol is the same with it on.
"""

from __future__ import annotations

import asyncio
import gc
import os
from time import perf_counter, thread_time
from typing import Any

#: The file the trace goes to (None: tracing is off).
PATH: str | None = os.environ.get("QIPAI_SERVE_TRACE") or None
ON: bool = PATH is not None

# act entries: [table, seat, hand, seq, recv, applied, committed, framed, sent, frame_no, i];
# a finished one becomes a tuple at _acts[i] (a tuple of numbers and strings is
# not tracked by the GC: the trace does not add to the collector's work)
RECV, APPLIED, COMMITTED, FRAMED, SENT, FRAME = 4, 5, 6, 7, 8, 9
_acts: list[Any] = []
_other: list[Any] = []   # tuples (untracked), a heap census a dict
_gc_start = _gc_cpu = 0.0


def act(table: str, seat: int, hand: int, seq: int, recv: float) -> list[Any]:
    """A new act entry (the caller fills in the later stages)."""
    e = [table, seat, hand, seq, recv, None, None, None, None, None, len(_acts)]
    _acts.append(e)
    return e


def done(e: list[Any]) -> None:
    """``e`` is complete (sent)."""
    _acts[e[-1]] = tuple(e)


def batch(start: float, seconds: float, n: int) -> None:
    _other.append(("batch", start, seconds, n))


def _gc(phase: str, info: dict[str, Any]) -> None:
    global _gc_start, _gc_cpu
    if phase == "start":
        _gc_start, _gc_cpu = perf_counter(), thread_time()
    else:
        _other.append(("gc", _gc_start, perf_counter() - _gc_start, thread_time() - _gc_cpu,
                       info.get("generation")))


async def _probe() -> None:
    import collections

    next_heap = perf_counter() + 10.0
    while True:
        if perf_counter() > next_heap:
            objs = gc.get_objects()
            top = collections.Counter(type(o).__name__ for o in objs).most_common(12)
            _other.append({"kind": "heap", "t": perf_counter(), "n": len(objs), "top": top})
            del objs
            next_heap = perf_counter() + 10.0
        t = perf_counter()
        await asyncio.sleep(0.001)
        late = perf_counter() - t - 0.001
        if late > 0.002:
            _other.append(("lag", t, late))


def start() -> asyncio.Task | None:
    """Start the GC hook and the loop probe (in the running loop)."""
    if not ON:
        return None
    gc.callbacks.append(_gc)
    return asyncio.get_running_loop().create_task(_probe())


def dump() -> None:
    """Write what was noted to :data:`PATH`."""
    if not ON:
        return
    import msgspec

    keys = ("table", "seat", "hand", "seq", "recv", "applied", "committed", "framed", "sent")
    with open(PATH, "wb") as f:  # type: ignore[arg-type]
        for e in _acts:
            f.write(msgspec.json.encode({"kind": "act", **dict(zip(keys, e))}) + b"\n")
        fields = {"batch": ("t", "s", "n"), "gc": ("t", "s", "cpu", "gen"), "lag": ("t", "s")}
        for o in _other:
            if isinstance(o, tuple):
                o = {"kind": o[0], **dict(zip(fields[o[0]], o[1:]))}
            f.write(msgspec.json.encode(o) + b"\n")
