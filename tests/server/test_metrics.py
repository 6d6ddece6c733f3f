"""``GET /metrics`` (Prometheus) and ``GET /ready`` of a real server: a hand
played by three bots and one scripted seat moves the counters and the
commit histogram; ``/ready`` is 200, and 503 once the server lock is lost
(PostgreSQL).  Waits are polls bounded by ``hostkit.PATIENCE``."""

from __future__ import annotations

import time

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from hostkit import PATIENCE, SyncSeat, choose, create, start_server
from qipai.host.store import PG_LOCK_KEY


def scrape(served) -> dict[tuple[str, tuple], float]:
    """``/metrics`` as ``{(sample name, sorted labels): value}``."""
    with served.http() as h:
        r = h.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(r.text) for s in fam.samples}


def play_hand(served, tid: str, token: str) -> SyncSeat:
    """Seat 0 answers every decision with :func:`choose` until the hand ends."""
    c = SyncSeat(served, tid, token, strict=False)
    while True:
        msg = c.recv()
        if msg["type"] == "decide":
            c.send({"type": "act", "hand": msg["hand"], "seq": msg["seq"],
                    "action": choose(msg["legal"])})
        elif msg["type"] == "hand_ended":
            return c


@pytest.fixture
def served(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--seed", "11")
    yield s
    s.stop()


def test_metrics_count_a_hand_played(served):
    before = scrape(served)
    assert before[("qipai_tables_open", ())] == 0
    assert before[("qipai_actions_total", ())] == 0
    assert before[("qipai_commit_seconds_count", ())] == 0
    t = create(served, "guilin-mahjong", bots=[1, 2, 3])
    c = play_hand(served, t["id"], t["seats"]["0"])
    # a refused act: counted by its reason
    c.send("not json")
    c.until("error", lambda m: m["code"] == "BadMessage")
    m = scrape(served)
    assert m[("qipai_tables_open", ())] == 1
    assert m[("qipai_connections", ())] == 1
    assert m[("qipai_tables_created_total", ())] == 1
    assert m[("qipai_actions_total", ())] > 4
    assert m[("qipai_hands_total", ())] >= 1
    assert m[("qipai_refusals_total", (("reason", "BadMessage"),))] == 1
    # one observation a batch: at least one, at most one an action and a table
    n = m[("qipai_commit_seconds_count", ())]
    assert 1 <= n <= m[("qipai_actions_total", ())] + 1
    assert m[("qipai_commit_seconds_sum", ())] > 0
    assert m[("qipai_commit_seconds_bucket", (("le", "+Inf"),))] == n
    c.close()
    served.close(t)
    m = scrape(served)
    assert m[("qipai_tables_open", ())] == 0
    assert m[("qipai_tables_closed_total", ())] == 1


def test_ready(served):
    with served.http() as h:
        r = h.get("/ready")
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "ready"


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_ready_is_503_once_the_lock_is_lost(served):
    """The session holding the advisory lock terminated: ``/ready`` answers
    503 (its own check of the lock, or the watchdog's)."""
    with psycopg.connect(served.db, autocommit=True) as c:
        pids = [r[0] for r in c.execute(
            "select pid from pg_locks where locktype = 'advisory' and granted "
            "and classid = %s and objid = %s and objsubid = 2 and database = "
            "(select oid from pg_database where datname = current_database())",
            PG_LOCK_KEY).fetchall()]
        assert len(pids) == 1, pids
        c.execute("select pg_terminate_backend(%s)", (pids[0],))
    end = time.monotonic() + PATIENCE
    with served.http() as h:
        while (r := h.get("/ready")).status_code == 200 and time.monotonic() < end:
            time.sleep(0.1)
    assert r.status_code == 503, r.text
    assert r.json()["status"] == "lock-lost", r.text
