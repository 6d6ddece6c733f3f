"""Chaos on a cluster (``qipai serve --cluster``, issue 37): two nodes on one
PostgreSQL, 20 tables of 桂林麻将 with every seat a real WebSocket client
playing from its own view (``tests/helpers/chaos.py``), while a driver
SIGKILLs a node three times (starting it again with the same ``--node-id``
each time) and drains one with SIGTERM once.

The clients do what a client behind a proxy does: they follow ``moved``,
and when their socket drops they try the nodes round-robin and resync from
the ``welcome``.  Afterwards: every ``ack`` a client received is a row of
``qipai_actions`` holding the action it sent, and no row is acknowledged
twice; every finished hand's record replays and sums to zero, and ``qipai
verify --db`` holds every table's chain; every table finished its hands (none
aborted by the drain, none lost or closed).

The driver waits on events — acknowledged actions counted by the clients,
lines in the nodes' logs, ``/health``, the process's exit — never on a
clock.  A gate keeps the tables playing until it is done: the clients may
play at most two hands past the last event, so every event lands on tables
in the middle of their hands.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

import httpx
import psycopg
import pytest
from chaos import Gate, Node, SeatLog, check_cluster, play_seat
from hostkit import PATIENCE, free_port

pytestmark = pytest.mark.slow

TABLES = 20
#: the driver's events, in order: (what, node).  Each kill leaves every open
#: table with the survivor, so the next event's victim holds them all.
PLAN = [("kill", "a"), ("kill", "b"), ("kill", "a"), ("drain", "b")]
#: hands each table plays: two past the last event
HANDS = len(PLAN) + 2
#: acknowledged actions (all tables) between two events
STEP = 1500
#: a client's mean think time (s): a claim window waits for three answers
THINK = 0.01
#: an upper bound on a hang of the whole run (not a timing assertion)
RUN_PATIENCE = 300.0


async def until(what: str, cond, patience: float = PATIENCE) -> None:
    """Poll ``cond()`` until it holds (fails after ``patience`` seconds)."""
    end = time.monotonic() + patience
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"waited {patience} s for {what}")
        await asyncio.sleep(0.05)


def owned(db: str, node: str) -> int:
    with psycopg.connect(db) as c:
        return c.execute("select count(*) from qipai_tables where open and owner = %s",
                         (node,)).fetchone()[0]


def count(pattern: str, node: Node) -> int:
    return len(re.findall(pattern, node.log_text()))


async def chaos(db: str, tmp_path) -> None:
    nodes = {n: Node(n, free_port(), db, tmp_path, ["--turn-timeout", "3600"]) for n in "ab"}
    try:
        for n in nodes.values():
            n.start()
        for n in nodes.values():
            await n.ready()
        addresses = [n.address for n in nodes.values()]
        seats: list[tuple[str, str, SeatLog]] = []
        ids: list[str] = []
        async with httpx.AsyncClient(timeout=PATIENCE) as http:
            for i in range(TABLES):   # half made at each node: that node's
                node = list(nodes.values())[i % 2]
                r = await http.post(node.address + "/tables",
                                    json={"variant": "guilin-mahjong", "bots": []})
                assert r.status_code == 201, r.text
                t = r.json()
                assert (t["node"], t["address"]) == (node.id, node.address)
                ids.append(t["id"])
                seats += [(t["address"], f"/tables/{t['id']}/ws?token={tok}",
                           SeatLog(t["id"], int(s))) for s, tok in sorted(t["seats"].items())]
        start = asyncio.Event()
        gate = Gate(2)
        clients = [asyncio.create_task(play_seat(addresses, first, path, HANDS, log, start,
                                                 THINK, seed=f"seat-{i}", gate=gate,
                                                 give_up=RUN_PATIENCE))
                   for i, (first, path, log) in enumerate(seats)]
        logs = [log for _, _, log in seats]

        def acks() -> int:
            return sum(len(log.acks) for log in logs)

        start.set()
        for done, (what, victim_id) in enumerate(PLAN):
            mark = acks() + STEP
            await until(f"{STEP} more acks before event {done}", lambda: acks() >= mark)
            victim = nodes[victim_id]
            survivor = next(n for n in nodes.values() if n is not victim)
            assert owned(db, victim.id) > 0, f"node {victim.id} serves no table to {what}"
            if what == "kill":
                before = count(rf"took over \d+ tables? of node {victim.id} \(dead\)", survivor)
                victim.kill()
                await until(f"node {survivor.id} to take over node {victim.id}'s tables",
                            lambda: count(rf"took over \d+ tables? of node {victim.id} "
                                          rf"\(dead\)", survivor) > before)
            else:
                victim.term()
                assert await victim.exited(PATIENCE) == 0
                handed = re.findall(r"cluster: drain: (\d+) of (\d+) tables? handed",
                                    victim.log_text())
                assert handed and handed[-1][0] == handed[-1][1] != "0", victim.log_text()
            victim.start()   # the same --node-id, at the same address
            await victim.ready()
            gate.raise_to(done + 3)
        gate.raise_to(HANDS)
        await asyncio.wait_for(asyncio.gather(*clients), RUN_PATIENCE)
        not_done = [f"table {log.table} seat {log.seat}" for log in logs if not log.done]
        assert not not_done, f"clients that did not finish: {not_done}"

        result = await asyncio.to_thread(check_cluster, db, nodes["a"].address, logs, ids,
                                         HANDS)
        assert not result["problems"], "\n".join(result["problems"][:50])
        assert result["rows"] == result["acks"] > 0
        assert result["records"] == result["hands_finished"] >= TABLES * HANDS
        assert result["aborted"] == 0
        # no node refused a client of an open table at the door (UnknownTable,
        # NotRestored…): a client less patient than these would give up; once
        # welcomed, an act is refused only Moving (its table moving on)
        door = [(log.table, e["code"], e["at"]) for log in logs for e in log.errors
                if not e["welcomed"]]
        assert not door, f"refused at the door: {door[:20]} ({len(door)})"
        assert {e["code"] for log in logs for e in log.errors} <= {"Moving"}
        # every seat was moved or cut at least once and rode it out
        assert all(len(log.conns) > 1 for log in logs)
        verify = subprocess.run([sys.executable, "-m", "qipai", "verify", "--db", db],
                                capture_output=True, text=True)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        for n in nodes.values():
            assert "Traceback" not in n.log_text(), n.log_text()
    finally:
        for n in nodes.values():
            n.kill()


def test_a_cluster_rides_out_kills_and_a_drain(pg_cluster, tmp_path):
    asyncio.run(chaos(pg_cluster.create_database(), tmp_path))
