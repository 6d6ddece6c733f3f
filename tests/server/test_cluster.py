"""``qipai serve --cluster``: nodes on one PostgreSQL (:mod:`qipai.server.cluster`).

Real node processes on a throwaway PostgreSQL: routing (any node names a
table's node; a WebSocket at the wrong one is sent ``moved``), takeover of a
SIGKILLed node's tables with every acknowledged action kept, a drain that
hands a table on mid-hand, the fence, and the refusals at start."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import sqlalchemy as sa
from hostkit import PATIENCE, SyncSeat, start_server
from websockets.exceptions import ConnectionClosed

from qipai.host.store import engine_url


@pytest.fixture
def pg_url(pg_cluster) -> str:
    return pg_cluster.create_database()


def node(url, tmp_path, name, *args):
    return start_server(url, tmp_path, "--cluster", "--node-id", name, "--seed", "3",
                        "--bot-delay", "0", *args)


def poll(fn, until, what, patience=PATIENCE):
    end = time.monotonic() + patience
    while True:
        got = fn()
        if until(got):
            return got
        assert time.monotonic() < end, f"{what}: still {got!r}"
        time.sleep(0.05)


def rows(url, sql, **params):
    eng = sa.create_engine(engine_url(url))
    try:
        with eng.connect() as c:
            return c.execute(sa.text(sql), params).all()
    finally:
        eng.dispose()


def play(seat: SyncSeat, n: int) -> list[int]:
    """Answer ``n`` decisions of ``seat`` with its first legal action; the
    acknowledged seqs."""
    acked = []
    for _ in range(n):
        d = seat.next_decision()
        got = seat.ask({"type": "act", "hand": d["hand"], "seq": d["seq"],
                        "action": d["legal"][0]})
        assert got["type"] == "ack", got
        acked.append(d["seq"])
        seat.decide = None
    return acked


def moved_of(served, tid, token) -> dict:
    seat = SyncSeat(served, tid, token, strict=False)
    try:
        msg = seat.recv()
        with pytest.raises(ConnectionClosed) as closed:
            seat.recv()
        assert closed.value.rcvd.code == 4307
        return msg
    finally:
        seat.close()


def test_any_node_names_the_owner_and_the_wrong_node_sends_moved(pg_url, tmp_path):
    a, b = node(pg_url, tmp_path, "a"), node(pg_url, tmp_path, "b")
    try:
        t = a.create(bots=[1, 2, 3])
        assert (t["node"], t["address"]) == ("a", a.url)
        for s in (a, b):
            info = s.info(t["id"])
            assert (info["node"], info["address"]) == ("a", a.url), info
        # the lobby of either node lists every node's open tables, each with its node
        for s in (a, b):
            listed = {x["id"]: x for x in s.http().get("/tables").json()}
            assert listed[t["id"]]["node"] == "a" and listed[t["id"]]["address"] == a.url
            assert listed[t["id"]]["hand"] == 0 and listed[t["id"]]["totals"] == [0, 0, 0, 0]
            assert listed[t["id"]]["levels"] == {"1": "normal", "2": "normal", "3": "normal"}
        msg = moved_of(b, t["id"], t["seats"]["0"])
        assert msg == {"type": "moved", "table": t["id"], "node": "a", "address": a.url}
        # the close goes to the owner: asked of another node, it is sent there
        import httpx

        r = httpx.post(f"{b.url}/tables/{t['id']}/close",
                       headers={"Authorization": f"Bearer {t['admin']}"})
        assert r.status_code == 307 and r.headers["location"] == f"{a.url}/tables/{t['id']}/close"
        assert r.json()["error"] == "Moved" and r.json()["node"] == "a"
    finally:
        a.stop()
        b.stop()


def test_a_killed_nodes_tables_are_taken_over_with_every_ack(pg_url, tmp_path):
    a, b = node(pg_url, tmp_path, "a"), node(pg_url, tmp_path, "b")
    try:
        t = a.create(bots=[1, {"seat": 2, "level": "easy"}, 3])   # a level: the survivor's too
        tid = t["id"]
        closed = a.create(bots=[1, 2, 3])
        a.close(closed)
        seat = SyncSeat(a, tid, t["seats"]["0"])
        acked = play(seat, 3)
        seat.close()
        a.kill()
        info = poll(lambda: b.info(tid), lambda i: i.get("node") == "b", "the takeover")
        # its closed table too: its undelivered events and its prune are node b's now
        assert rows(pg_url, "select owner from qipai_tables where id = :t",
                    t=closed["id"]) == [("b",)]
        assert info["address"] == b.url and info["open"] is True
        assert info["levels"] == {"1": "normal", "2": "easy", "3": "normal"}
        stored = {r[0] for r in rows(pg_url, "select seq from qipai_actions where table_id = :t "
                                     "and hand = 0", t=tid)}
        assert set(acked) <= stored
        (owner, epoch), = rows(pg_url, "select owner, epoch from qipai_tables where id = :t",
                               t=tid)
        assert (owner, epoch) == ("b", 2)
        again = SyncSeat(b, tid, t["seats"]["0"])
        welcome = again.until("welcome")
        assert welcome["hand"] == 0
        more = play(again, 1)
        assert more[0] > max(acked)
        again.close()
        # the dead node's row is gone; it comes back under its id and serves nothing
        assert [r[0] for r in rows(pg_url, "select id from qipai_nodes order by id")] == ["b"]
        a2 = node(pg_url, tmp_path, "a")
        try:
            assert a2.info(tid)["node"] == "b"
            assert moved_of(a2, tid, t["seats"]["0"])["node"] == "b"
        finally:
            a2.stop()
    finally:
        a.stop()
        b.stop()
    assert "Traceback" not in b.log_path.read_text()


def test_sigterm_hands_the_table_on_mid_hand(pg_url, tmp_path):
    a, b = node(pg_url, tmp_path, "a"), node(pg_url, tmp_path, "b")
    try:
        t = a.create(bots=[1, 2, 3])
        tid = t["id"]
        seat = SyncSeat(a, tid, t["seats"]["0"])
        acked = play(seat, 2)
        a.proc.terminate()
        moved = seat.until("moved")
        assert moved == {"type": "moved", "table": tid, "node": "b", "address": b.url}
        seat.close()
        assert a.proc.wait(PATIENCE) == 0
        assert "1 of 1 table handed to b" in a.log_path.read_text()
        again = SyncSeat(b, tid, t["seats"]["0"])
        assert again.until("welcome")["hand"] == 0   # the same hand goes on
        assert play(again, 1)[0] > max(acked)
        again.close()
        (owner, epoch), = rows(pg_url, "select owner, epoch from qipai_tables where id = :t",
                               t=tid)
        assert (owner, epoch) == ("b", 2)
        assert [r[0] for r in rows(pg_url, "select id from qipai_nodes")] == ["b"]
    finally:
        a.stop()
        b.stop()


def knows(n, live: int) -> None:
    """Wait until node ``n``'s last sweep read ``live`` live nodes (and so
    their addresses: a node that started after ``n``'s sweep is not known)."""
    poll(lambda: n.http().get("/metrics").text,
         lambda text: f"qipai_cluster_nodes {float(live)}" in text.splitlines(),
         f"node {n.port} seeing {live} nodes")


def test_the_fence_drops_a_table_moved_underneath(pg_url, tmp_path):
    a, b = node(pg_url, tmp_path, "a"), node(pg_url, tmp_path, "b")
    try:
        knows(a, 2)   # (its moved names b's address only once it read it)
        t = a.create(bots=[1, 2, 3])
        tid = t["id"]
        seat = SyncSeat(a, tid, t["seats"]["0"])
        play(seat, 1)
        d = seat.next_decision()
        before = rows(pg_url, "select count(*) from qipai_actions where table_id = :t", t=tid)
        eng = sa.create_engine(engine_url(pg_url))
        with eng.begin() as c:   # another node's now, behind node a's back
            c.execute(sa.text("update qipai_tables set owner = 'b', epoch = epoch + 1 "
                              "where id = :t"), dict(t=tid))
        eng.dispose()
        seat.send({"type": "act", "hand": d["hand"], "seq": d["seq"], "action": d["legal"][0]})
        seen = []
        while (msg := seat.recv())["type"] != "moved":
            seen.append(msg)
        assert msg["node"] == "b" and msg["address"] == b.url
        assert not [m for m in seen if m["type"] == "ack"], seen   # not acknowledged
        seat.close()
        # nothing of the act was written; node b serves the table from what was
        assert rows(pg_url, "select count(*) from qipai_actions where table_id = :t",
                    t=tid) == before
        again = SyncSeat(b, tid, t["seats"]["0"])
        assert again.until("welcome")["hand"] == 0
        again.close()
        listed = {x["id"]: x for x in a.http().get("/tables").json()}
        assert listed[tid]["node"] == "b"   # no longer node a's
    finally:
        a.stop()
        b.stop()


def test_a_table_made_outside_the_cluster_is_adopted(pg_url, tmp_path):
    single = start_server(pg_url, tmp_path, "--seed", "3")
    t = single.create(bots=[1, 2, 3])
    single.stop()
    a = node(pg_url, tmp_path, "a")
    try:
        assert a.info(t["id"])["node"] == "a"
        seat = SyncSeat(a, t["id"], t["seats"]["0"])
        play(seat, 1)
        seat.close()
    finally:
        a.stop()


def serve_fails(*args: str) -> str:
    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", "0", *args],
                       capture_output=True, text=True, timeout=PATIENCE)
    assert p.returncode != 0, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def test_a_live_nodes_id_and_a_lone_server_are_refused(pg_url, tmp_path):
    a = node(pg_url, tmp_path, "a")
    try:
        line = serve_fails("--cluster", "--node-id", "a", "--db", pg_url)
        assert "node id 'a' is held by a live node" in line and "--node-id" in line
        line = serve_fails("--db", pg_url)   # a server outside the cluster
        assert "in use by another server" in line and "--cluster" in line
    finally:
        a.stop()
    single = start_server(pg_url, tmp_path)
    try:
        line = serve_fails("--cluster", "--node-id", "c", "--db", pg_url)
        assert "outside a cluster" in line
    finally:
        single.stop()


def test_cluster_options_are_checked(tmp_path):
    assert "needs a PostgreSQL --db" in serve_fails("--cluster", "--db",
                                                    f"sqlite:///{tmp_path}/q.db")
    assert "go with --cluster" in serve_fails("--node-id", "x")
    for bad in ("ftp://h/", "http://user@h:1", "http://h:port", "http://h/path"):
        assert "--advertise must be" in serve_fails("--cluster", "--db", "postgresql://x@/y",
                                                    "--advertise", bad)
    # a wildcard address would advertise 127.0.0.1: the players' own machine
    assert "needs --advertise" in serve_fails("--cluster", "--db", "postgresql://x@/y",
                                              "--host", "0.0.0.0", "--open")
