"""Load on ``qipai serve``: many tables, four WebSocket clients each, real database.

Run: ``uv run python benchmarks/serve.py [--db sqlite|postgresql] [--tables 200]
[--hands 1] [--json]``.

What it does, as a host would see it:

1. Starts a database: a SQLite file in a temporary folder, or (``--db
   postgresql``) a throwaway PostgreSQL cluster (initdb + pg_ctl on a unix
   socket, PostgreSQL's default durability: ``fsync`` and
   ``synchronous_commit`` on; see ``tests/host/pgcluster.py``).
2. Starts ``python -m qipai serve`` as a subprocess on 127.0.0.1 (a free port),
   OS-CSPRNG deals, a turn timeout long enough that no timeout fires.
3. Creates ``--tables`` tables over HTTP (no server bots: every seat is a
   client) and opens one real WebSocket per seat (``websockets``), spread
   over ``--procs`` client processes.
4. Every client plays as a bot from its own view only: it wins when it may,
   else picks a legal action at random (a seeded RNG per seat), at once
   (the server saturated: every table always has an act in flight) or
   after ``--think-ms`` (a load below saturation).  Each table plays
   ``--hands`` hands.
5. Measures, for every action: the round trip from sending the ``act`` to
   receiving its ``ack`` (the server acknowledges only after the action is
   committed to the database).  Throughput is acknowledged actions divided
   by the wall time from the first ``act`` sent to the last ``ack``
   received, all tables playing at once.  Peak memory is the server
   process's peak resident set (``VmHWM`` in ``/proc/PID/status``).
   CPU: the server process's (user + system, ``/proc/PID/stat``) and the
   client processes' own, each per acknowledged action — robust to other
   load on the machine, unlike the wall figures.
6. Checks every stored record: ``GET /tables/{id}/records`` gives ``--hands``
   finished hands per table, each replays (``replay_check``) and its net
   sums to zero.

This is a benchmark, not a test: it asserts nothing about time; it exits 1
only when a record fails its check or a client was refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def choose(legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Win when possible, else a random legal action."""
    for a in legal:
        if a["type"] in ("hu", "zimo"):
            return a
    return rng.choice(legal)


async def play_seat(url: str, hands: int, seed: str, lat: list[float],
                    errors: list[str], start: asyncio.Event,
                    think: float = 0.0) -> tuple[float, float]:
    """One seat: connect, answer every decision, until ``hands`` hands ended.
    Returns (first send, last ack) as perf_counter times."""
    import msgspec
    import websockets

    dec = msgspec.json.Decoder()
    rng = random.Random(seed)
    sent_at: dict[int, float] = {}
    first = last = 0.0
    async with websockets.connect(url, max_size=None, compression=None) as ws:
        await start.wait()
        done = 0
        while done < hands:
            frame = dec.decode(await ws.recv())
            for msg in (frame["messages"] if frame["type"] == "batch" else (frame,)):
                t = msg["type"]
                if t == "decide":
                    if think:
                        await asyncio.sleep(think)
                    act = {"type": "act", "hand": msg["hand"], "seq": msg["seq"],
                           "action": choose(msg["legal"], rng)}
                    now = time.perf_counter()
                    if not first:
                        first = now
                    sent_at[msg["seq"]] = now
                    await ws.send(msgspec.json.encode(act).decode())
                elif t == "ack":
                    now = time.perf_counter()
                    lat.append(now - sent_at.pop(msg["seq"]))
                    last = now
                elif t == "hand_ended":
                    done += 1
                    sent_at.clear()
                elif t == "error":
                    errors.append(f"{seed}: {msg}")
                    if msg.get("seq") is not None:
                        sent_at.pop(msg["seq"], None)
    return first, last


def client_proc(urls: list[str], hands: int, conn: Any, go: Any, think: float = 0.0) -> None:
    """A client process: all its seats at once; sends back latencies and times."""

    async def main() -> dict[str, Any]:
        lat: list[float] = []
        errors: list[str] = []
        start = asyncio.Event()
        tasks = [asyncio.create_task(play_seat(u, hands, f"seat-{i}-{u[-8:]}", lat, errors,
                                               start, think))
                 for i, u in enumerate(urls)]
        await asyncio.sleep(0)
        conn.send("connected")
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        c0 = time.process_time()
        start.set()
        spans = await asyncio.gather(*tasks, return_exceptions=True)
        cpu = time.process_time() - c0
        bad = [repr(s) for s in spans if isinstance(s, BaseException)]
        ok = [s for s in spans if not isinstance(s, BaseException)]
        return {"lat": lat, "errors": errors + bad, "cpu": cpu,
                "first": min((s[0] for s in ok if s[0]), default=0.0),
                "last": max((s[1] for s in ok), default=0.0)}

    # the processes share one clock: perf_counter is CLOCK_MONOTONIC on Linux
    try:
        import uvloop   # the server's loop too, when installed (uvicorn picks it)
    except ImportError:
        conn.send(asyncio.run(main()))
    else:
        conn.send(uvloop.run(main()))


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_db(kind: str, tmp: Path) -> tuple[str, Any]:
    if kind == "sqlite":
        return f"sqlite:///{tmp / 'bench.db'}", None
    sys.path.insert(0, str(ROOT / "tests" / "host"))
    from pgcluster import Cluster

    cluster = Cluster.start(durable=True)
    return cluster.create_database("qipai_bench"), cluster


def wait_health(base: str, proc: subprocess.Popen, log: Path) -> None:
    import httpx

    end = time.monotonic() + 60
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited: {log.read_text()}")
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not answer /health")


def check_records(base: str, ids: list[str], hands: int) -> list[str]:
    import httpx

    from qipai.core.records import decode_record, replay_check

    problems = []
    with httpx.Client(base_url=base, timeout=120) as http:
        for tid in ids:
            out = http.get(f"/tables/{tid}/records").json()
            if len(out["hands"]) < hands:
                problems.append(f"{tid}: {len(out['hands'])} finished hands, not {hands}")
            for h in out["hands"]:
                rec = decode_record(h["record"])
                why = replay_check(rec)
                if why is not None:
                    problems.append(f"{tid} hand {h['hand']}: does not replay: {why}")
                if rec.result is None or sum(rec.result.net) != 0:
                    problems.append(f"{tid} hand {h['hand']}: net does not sum to zero")
    return problems


def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    tmp = Path(tempfile.mkdtemp(prefix="qipai-bench-serve-"))
    db, cluster = start_db(args.db, tmp)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp / "server.log"
    prof = ["-m", "cProfile", "-o", str(Path(args.profile).resolve())] if args.profile else []
    if args.pyinstrument:
        prof = ["-m", "pyinstrument", "-r", "text", "-p", "show_all=false",
                "-o", str(Path(args.pyinstrument).resolve())]
    proc = subprocess.Popen(
        [sys.executable, *prof, "-m", "qipai", "serve", "--port", str(port), "--db", db,
         "--turn-timeout", "3600"],
        stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=tmp)
    try:
        wait_health(base, proc, log)
        ids, urls = [], []
        with httpx.Client(base_url=base, timeout=60) as http:
            for _ in range(args.tables):
                r = http.post("/tables", json={"variant": args.variant, "bots": []})
                r.raise_for_status()
                t = r.json()
                ids.append(t["id"])
                urls += [f"ws://127.0.0.1:{port}/tables/{t['id']}/ws?token={tok}"
                         for _, tok in sorted(t["seats"].items())]
        rss_idle = peak_rss_mb(proc.pid)
        # tables stay together in one process: a table's four seats share a client loop
        per = -(-args.tables // args.procs)
        seats = len(urls) // args.tables
        go = mp.Event()
        pipes, procs = [], []
        for i in range(args.procs):
            part = urls[i * per * seats:(i + 1) * per * seats]
            if not part:
                continue
            a, b = mp.Pipe()
            p = mp.Process(target=client_proc, args=(part, args.hands, b, go,
                                                     args.think_ms / 1000))
            p.start()
            pipes.append(a)
            procs.append(p)
        for a in pipes:
            assert a.recv() == "connected"
        cpu0 = cpu_s(proc.pid)
        go.set()
        outs = [a.recv() for a in pipes]
        cpu1 = cpu_s(proc.pid)
        for p in procs:
            p.join()
        peak = peak_rss_mb(proc.pid)
        lat = sorted(x for o in outs for x in o["lat"])
        errors = [e for o in outs for e in o["errors"]]
        first = min(o["first"] for o in outs if o["first"])
        last = max(o["last"] for o in outs)
        problems = check_records(base, ids, args.hands)
    finally:
        proc.send_signal(signal.SIGINT)   # uvicorn's graceful stop (a profile is written)
        try:
            proc.wait(300 if prof else 20)   # a profiler writes its report at exit
        except subprocess.TimeoutExpired:
            proc.kill()
        if cluster is not None:
            cluster.stop()

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    return {
        "db": args.db, "variant": args.variant, "tables": args.tables, "hands": args.hands,
        "think_ms": args.think_ms,
        "clients": len(urls), "client_procs": args.procs,
        "actions": len(lat), "seconds": round(last - first, 3),
        "actions_per_s": round(len(lat) / (last - first), 1) if lat else 0.0,
        "p50_ms": round(pct(0.50), 2), "p99_ms": round(pct(0.99), 2),
        "mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else float("nan"),
        "server_cpu_s": round(cpu1 - cpu0, 2),
        "server_cpu_ms_per_action": round((cpu1 - cpu0) * 1000 / len(lat), 3) if lat else None,
        "client_cpu_s": round(sum(o["cpu"] for o in outs), 2),
        "client_cpu_ms_per_action": (round(sum(o["cpu"] for o in outs) * 1000 / len(lat), 3)
                                     if lat else None),
        "load_avg_1m": os.getloadavg()[0],
        "peak_mb": round(peak, 1), "idle_mb": round(rss_idle, 1),
        "cpus": os.cpu_count(), "errors": errors[:20], "n_errors": len(errors),
        "record_problems": problems[:20], "records_ok": not problems,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--hands", type=int, default=1, help="hands each table plays")
    ap.add_argument("--variant", default="guilin-mahjong")
    ap.add_argument("--procs", type=int, default=1,
                    help="client processes (the clients' own CPU competes with the server's)")
    ap.add_argument("--think-ms", type=float, default=0.0,
                    help="each client waits this long before answering a decision (an offered "
                         "load below saturation; 0: answer at once, the server saturated)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--pyinstrument", metavar="FILE", help="run the server under pyinstrument "
                    "(the bench group), write its text report to FILE")
    ap.add_argument("--profile", metavar="FILE", help="run the server under cProfile, "
                    "write its stats to FILE (slows it down)")
    args = ap.parse_args()
    out = run(args)
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"qipai serve, {out['db']}: {out['tables']} tables × {out['hands']} hand(s) of "
              f"{out['variant']}, {out['clients']} WebSocket clients in "
              f"{out['client_procs']} process(es), think time {out['think_ms']:g} ms")
        print(f"  {out['actions']} acknowledged actions in {out['seconds']} s: "
              f"{out['actions_per_s']} actions/s")
        print(f"  act → ack round trip: p50 {out['p50_ms']} ms, p99 {out['p99_ms']} ms, "
              f"mean {out['mean_ms']} ms")
        print(f"  server CPU {out['server_cpu_s']} s while playing: "
              f"{out['server_cpu_ms_per_action']} ms per action "
              f"(1-min load average at the end {out['load_avg_1m']:.1f} on {out['cpus']} cores)")
        print(f"  client CPU {out['client_cpu_s']} s ({out['client_procs']} process(es)): "
              f"{out['client_cpu_ms_per_action']} ms per action")
        print(f"  server peak RSS {out['peak_mb']} MB (after creating the tables: "
              f"{out['idle_mb']} MB)")
        print(f"  records: {'all replay and sum to zero' if out['records_ok'] else 'PROBLEMS'}"
              f"; refused messages: {out['n_errors']}")
        for p in out["record_problems"] + out["errors"]:
            print("   ", p)
    if out["record_problems"] or out["n_errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
