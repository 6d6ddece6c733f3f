"""The store's commit path alone: batches of action writes through ``Store.submit``.

Run: ``uv run python benchmarks/commit.py [--db postgresql|sqlite]
[--writes 14] [--batches 2000] [--busy] [--against REF] [--json]``.

No server, no WebSocket, no game: ``--tables`` tables are created, then
``--batches`` times ``--writes`` writes (one ``qipai_actions`` row each,
each of another table, as the server's group commit gathers them) are
submitted at once and awaited (``Store.drain``), so every batch commits
exactly that many.  Measured over the batches, per action:

* wall time (a batch's submit to its last ``done``),
* the writer's thread's CPU (``/proc/self/task/TID/stat``: user + system;
  PostgreSQL only — SQLite commits in the event loop),
* the event loop's thread's CPU (what the server's loop pays for the
  writer: the hand-off, the callbacks; for SQLite the commit itself),
* the database's CPU: the PostgreSQL cluster's processes (``serve.py``'s
  :func:`db_cpu_s`).

``--busy``: a thread of this process keeps the GIL busy (pure Python,
giving it up at once after each 50 µs, idle 15 % of the time), as a
loaded server's event loop does: a writer's thread that gives the GIL up
(each wait for the database) must then wait to get it back.

``--against REF`` runs the same with the code of git commit REF (a
temporary worktree, on ``PYTHONPATH``) right after, on a database of its
own, and prints this checkout's figures over REF's.  A benchmark: it
asserts nothing.  The database: a throwaway PostgreSQL cluster with
PostgreSQL's default durability (``fsync``, ``synchronous_commit``), as
``serve.py`` uses, or an SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def thread_cpu_s(tid: int) -> float:
    """User + system CPU seconds of thread ``tid`` of this process."""
    f = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _busy(stop: threading.Event) -> None:
    while not stop.is_set():
        for _ in range(17):
            end = time.perf_counter() + 0.00005
            while time.perf_counter() < end:
                pass
            time.sleep(0)      # gives the GIL up (and, uncontended, takes it back)
        time.sleep(0.00015)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One run on a fresh database with the ``qipai`` on ``sys.path``."""
    from serve import db_cpu_s

    from qipai.host.store import Store, Write, action_params  # noqa: F401

    tmp = Path(tempfile.mkdtemp(prefix="qipai-bench-commit-"))
    cluster = None
    if args.db == "postgresql":
        from pgcluster import Cluster

        cluster = Cluster.start(durable=True)
        url = cluster.create_database("qipai_commit")
    else:
        url = f"sqlite:///{tmp / 'commit.db'}"
    store = Store(url)
    stop = threading.Event()
    try:
        ids = [f"t{i:05d}" for i in range(args.tables)]
        for t in ids:
            store.create_table(
                dict(id=t, spec="bench", variant="bench", options="{}", plugins="[]",
                     stamp="{}", qipai_version="0", variant_version="0", rng="os", seed=None,
                     bots="[]", tokens="{}", spectator_hash="0" * 64, admin_hash="0" * 64,
                     open=True, created=time.time()),
                dict(table_id=t, hand=1, deal="{}", seed=None, commitment="0" * 64,
                     salt="0" * 64))
        action = '{"type":"discard","seat":1,"tile":"5m"}'
        seq = dict.fromkeys(ids, 0)
        failed: list[BaseException] = []

        def done(exc: BaseException | None) -> None:
            if exc is not None:
                failed.append(exc)

        async def main() -> dict[str, Any]:
            n = 0
            walls = []

            async def batch() -> None:
                nonlocal n
                t0 = time.perf_counter()
                for _ in range(args.writes):
                    t = ids[n % len(ids)]
                    n += 1
                    seq[t] += 1
                    row = dict(table_id=t, hand=1, seq=seq[t], action=action, timeout=False,
                               tuoguan=False, link="ab" * 32)
                    store.submit(Write(t, [("action", row)], done))
                await store.drain()
                walls.append(time.perf_counter() - t0)

            for _ in range(50):     # warm: connections, prepared statements, caches
                await batch()
            walls.clear()
            writer = next((t.native_id for t in threading.enumerate()
                           if t.name.startswith("qipai-writer")), None)
            loop_tid = threading.get_native_id()
            w0 = thread_cpu_s(writer) if writer else 0.0
            l0, d0, b0 = thread_cpu_s(loop_tid), db_cpu_s(cluster), store.batches
            for _ in range(args.batches):
                await batch()
            w1 = thread_cpu_s(writer) if writer else 0.0
            l1, d1 = thread_cpu_s(loop_tid), db_cpu_s(cluster)
            acts = args.batches * args.writes
            walls.sort()
            return {
                "batches": store.batches - b0, "actions": acts,
                "wall_ms_per_batch_p50": round(statistics.median(walls) * 1000, 3),
                "wall_ms_per_batch_p99": round(walls[int(0.99 * len(walls))] * 1000, 3),
                "writer_cpu_us_per_action": round((w1 - w0) * 1e6 / acts, 1)
                if writer else None,
                "loop_cpu_us_per_action": round((l1 - l0) * 1e6 / acts, 1),
                "db_cpu_us_per_action": round((d1 - d0) * 1e6 / acts, 1)
                if d0 is not None else None,
                "failed": len(failed),
            }

        if args.busy:
            threading.Thread(target=_busy, args=(stop,), daemon=True).start()
        out = asyncio.run(main())
    finally:
        stop.set()
        store.close()
        if cluster is not None:
            cluster.stop()
    out.update(db=args.db, writes=args.writes, busy=args.busy)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", choices=("postgresql", "sqlite"), default="postgresql")
    ap.add_argument("--writes", type=int, default=14,
                    help="writes per batch (default 14: the paced serve run's mean on "
                         "PostgreSQL)")
    ap.add_argument("--batches", type=int, default=2000)
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--busy", action="store_true",
                    help="a thread keeps the GIL busy, as a loaded server's loop does")
    ap.add_argument("--against", metavar="REF",
                    help="also run the code of git commit REF, right after, and print ratios")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:    # the --against run: the reference's qipai is first on sys.path
        print(json.dumps(measure(args)))
        return
    here = measure(args)
    out: dict[str, Any] = {"this checkout": here}
    if args.against:
        from serve import checkout

        ref = checkout(args.against)
        try:
            cmd = [sys.executable, __file__, "--child", "--db", args.db, "--writes",
                   str(args.writes), "--batches", str(args.batches), "--tables",
                   str(args.tables), *(["--busy"] if args.busy else [])]
            env = dict(os.environ, PYTHONPATH=str(ref))
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            out[args.against] = json.loads(done.stdout.splitlines()[-1])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref)],
                           capture_output=True)
        there = out[args.against]
        out["ratios"] = {k: round(here[k] / there[k], 3) if here[k] and there[k] else None
                         for k in ("wall_ms_per_batch_p50", "wall_ms_per_batch_p99",
                                   "writer_cpu_us_per_action", "loop_cpu_us_per_action",
                                   "db_cpu_us_per_action")}
    if args.json:
        print(json.dumps(out))
        return
    for name, r in out.items():
        if name == "ratios":
            print(f"this checkout / {args.against}: " + ", ".join(
                f"{k} × {v}" for k, v in r.items()))
            continue
        print(f"{name} — {r['db']}, {r['writes']} writes a batch"
              f"{', GIL busy' if r['busy'] else ''}: {r['batches']} batches, "
              f"{r['actions']} actions; a batch p50 {r['wall_ms_per_batch_p50']} ms, "
              f"p99 {r['wall_ms_per_batch_p99']} ms; CPU per action: writer's thread "
              f"{r['writer_cpu_us_per_action']} µs, loop's {r['loop_cpu_us_per_action']} µs, "
              f"database {r['db_cpu_us_per_action']} µs; failed writes {r['failed']}")


if __name__ == "__main__":
    main()
