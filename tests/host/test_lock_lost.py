"""The server lock lost while a server runs (PostgreSQL: the session holding
the advisory lock is terminated): the server writes nothing more — every
act is refused ``LockLost``, ``GET /health`` is 503 ``lock-lost``, the log
says so once — and a second server can then take the database.

Real PostgreSQL (the session's throwaway cluster, ``pgcluster.py``), a real
``qipai serve``; the waits are polls bounded by ``hostkit.PATIENCE``, never
timed assertions."""

from __future__ import annotations

import asyncio
import contextlib
import time

import msgspec
import psycopg
import pytest
import sqlalchemy as sa

from hostkit import PATIENCE, SyncSeat, action_json, choose, create, refusal, start_server
from qipai.bots import hand_seed
from qipai.core.model import Action
from qipai.core.ruleset import load
from qipai.core.table import Table
from qipai.host.store import PG_LOCK_KEY, DatabaseInUse, LockLost, Store, Write, engine_url

SEED = 7


def counts(url: str) -> tuple[int, int, int]:
    """Rows of qipai_tables, qipai_hands, qipai_actions (a connection of its own)."""
    eng = sa.create_engine(engine_url(url))
    try:
        with eng.connect() as c:
            return tuple(c.execute(sa.text(f"select count(*) from {t}")).scalar()
                         for t in ("qipai_tables", "qipai_hands", "qipai_actions"))
    finally:
        eng.dispose()


def lock_holders(url: str) -> list[int]:
    """The backend pids holding the server lock of ``url``'s database."""
    with psycopg.connect(url, autocommit=True) as c:
        return [r[0] for r in c.execute(
            "select pid from pg_locks where locktype = 'advisory' and granted "
            "and classid = %s and objid = %s and objsubid = 2 and database = "
            "(select oid from pg_database where datname = current_database())",
            PG_LOCK_KEY).fetchall()]


def terminate_lock(url: str) -> int:
    """``pg_terminate_backend`` on the one session holding the lock; its pid."""
    pids = lock_holders(url)
    assert len(pids) == 1, pids
    with psycopg.connect(url, autocommit=True) as c:
        assert c.execute("select pg_terminate_backend(%s)", (pids[0],)).fetchone()[0] is True
    return pids[0]


def poll(what, until, patience: float = PATIENCE):
    """``what()`` again every 0.1 s until ``until(value)``; the value (an
    upper bound on a hang only, not a timing assertion)."""
    end = time.monotonic() + patience
    while True:
        value = what()
        if until(value) or time.monotonic() > end:
            return value
        time.sleep(0.1)


@pytest.fixture
def pg_url(pg_cluster) -> str:
    return pg_cluster.create_database()


def play_one(seats: list[SyncSeat], local: Table) -> dict:
    """The first deciding seat's action, acknowledged (so committed); the act."""
    seat = local.to_decide()[0]
    c = seats[seat]
    d = c.next_decision()
    mine = msgspec.convert(choose(d["legal"]), Action)
    act = {"type": "act", "hand": 0, "seq": d["seq"], "action": action_json(mine)}
    c.send(act)
    c.until("ack", lambda m: m["seq"] == d["seq"])
    local.apply(mine)
    c.decide = None
    return act


@pytest.mark.slow   # two server starts, a watchdog period or two
def test_lock_lost_refuses_every_write_and_a_second_server_takes_the_database(pg_url, tmp_path):
    first = start_server(pg_url, tmp_path, "--seed", str(SEED))
    try:
        t = create(first, "guilin-mahjong")     # every seat human: nothing moves by itself
        rs = load("guilin-mahjong")
        local = Table(rs, seed=hand_seed(SEED, 0), ask_all=True)
        seats = [SyncSeat(first, t["id"], t["seats"][str(s)], strict=False) for s in range(4)]
        for c in seats:
            c.until("welcome")
        play_one(seats, local)
        before = counts(pg_url)
        assert before == (1, 1, 1)
        with first.http() as h:
            assert h.get("/health").json()["status"] == "ok"

        terminate_lock(pg_url)
        with first.http() as h:
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
            assert r.status_code == 503, r.text
            body = r.json()
            assert body["status"] == "lock-lost" and body["db"] == "postgresql"
            assert "lock" in body["message"] and "restart" in body["message"]

            # an act for the open decision is refused, typed, with its seq
            seat = local.to_decide()[0]
            c = seats[seat]
            d = c.next_decision()
            mine = msgspec.convert(choose(d["legal"]), Action)
            c.send({"type": "act", "hand": 0, "seq": d["seq"], "action": action_json(mine)})
            err = c.until("error", lambda m: m.get("seq") == d["seq"])
            assert err["code"] == "LockLost", err
            assert "Traceback" not in err["message"]
            assert not [m for m in c.received if m["type"] == "ack" and m["seq"] == d["seq"]]
            # every connection was told once, without a seq
            for s in seats:
                told = [m for m in s.received if m["type"] == "error" and m.get("seq") is None]
                if not told:
                    told = [s.until("error", lambda m: m.get("seq") is None)]
                assert [m["code"] for m in told] == ["LockLost"], told

            # nor a table, nor a close, nor a new connection
            r = h.post("/tables", json={"variant": "guilin-mahjong"})
            assert r.status_code == 503 and r.json()["error"] == "LockLost", r.text
            r = h.post(f"/tables/{t['id']}/close",
                       headers={"Authorization": f"Bearer {t['admin']}"})
            assert r.status_code == 503 and r.json()["error"] == "LockLost", r.text
            assert refusal(first, t["id"], t["seats"]["0"])["code"] == "LockLost"
            # a resync shows nothing the database does not hold: refused too
            c.send({"type": "resync"})
            assert c.until("error", lambda m: m.get("seq") is None)["code"] == "LockLost"
            assert h.get(f"/tables/{t['id']}").status_code == 200   # reads still answer
        assert counts(pg_url) == before                              # nothing written
        assert lock_holders(pg_url) == []                           # not taken again

        # the lock is free: a second server takes the database and plays on
        second = start_server(pg_url, tmp_path, "--seed", str(SEED))
        try:
            assert len(lock_holders(pg_url)) == 1
            seats2 = [SyncSeat(second, t["id"], t["seats"][str(s)]) for s in range(4)]
            for s2 in seats2:
                s2.until("welcome")
            play_one(seats2, local)
            assert counts(pg_url) == (1, 1, 2)
            # the first server still writes nothing, its health still says so
            c.received.clear()
            c.send({"type": "act", "hand": 0, "seq": d["seq"], "action": action_json(mine)})
            assert c.until("error", lambda m: m.get("seq") == d["seq"])["code"] == "LockLost"
            with first.http() as h:
                assert h.get("/health").status_code == 503
            assert counts(pg_url) == (1, 1, 2)
            for s2 in seats2:
                s2.close()
        finally:
            second.stop()
        for s in seats:
            s.close()
    finally:
        first.stop()
    log = first.log_path.read_text()
    assert log.count("LOCK LOST") == 1, log
    assert "Traceback" not in log, log


# ------------------------------------------------------------------ the Store alone


def _write(key: str, done) -> Write:
    return Write(key, [("close", dict(k_table=key, closed=0.0))], done)


def test_watchdog_sees_a_terminated_lock_session_and_the_store_refuses_writes(pg_url):
    store = Store(pg_url)
    try:
        assert store.check_lock() is None and store.lost is None
        seen: list[LockLost] = []
        results: list[BaseException | None] = []

        async def main() -> None:
            assert store.watch(seen.append, every=0.05) is True
            store.submit(_write("t", results.append))   # while held: committed
            await store.drain()
            assert results == [None]
            terminate_lock(pg_url)
            for _ in range(int(PATIENCE / 0.05)):
                if seen:
                    break
                await asyncio.sleep(0.05)
            store.submit(_write("t", results.append))
            await store.drain()

        asyncio.run(main())
        assert len(seen) == 1 and seen[0] is store.lost
        assert "no longer holds" in str(seen[0]) or "connection failed" in str(seen[0])
        assert isinstance(results[1], LockLost)
        with pytest.raises(LockLost):
            store.create_table({}, {})
    finally:
        store.close()
    assert lock_holders(pg_url) == []


def test_watchdog_counts_a_check_that_does_not_answer_as_lost(pg_url, monkeypatch):
    store = Store(pg_url)
    try:
        monkeypatch.setattr(store, "check_lock", lambda: time.sleep(1.0))
        seen: list[LockLost] = []

        async def main() -> None:
            store.watch(seen.append, every=0.01, answer_s=0.05)
            for _ in range(int(PATIENCE / 0.05)):
                if seen:
                    break
                await asyncio.sleep(0.05)

        asyncio.run(main())
        assert len(seen) == 1 and "did not answer" in str(seen[0])
    finally:
        store.close()


def test_sqlite_has_no_watchdog(tmp_path):
    """A flock cannot be lost while its descriptor is open: nothing to watch."""
    store = Store(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        async def main() -> bool:
            return store.watch(lambda exc: None, every=0.01)

        assert asyncio.run(main()) is False
        assert store.check_lock() is None and store.lost is None
    finally:
        store.close()


def test_watchdog_keeps_a_held_lock(pg_url):
    """A held lock is not declared lost: five checks go by (counted, not
    slept for), each finds it held."""
    store = Store(pg_url)
    try:
        checks = []
        real = store.check_lock

        def counted():
            checks.append(real())
            return checks[-1]

        store.check_lock = counted

        async def main() -> None:
            store.watch(lambda exc: None, every=0.01)
            for _ in range(int(PATIENCE / 0.01)):
                if len(checks) >= 5:
                    break
                await asyncio.sleep(0.01)

        asyncio.run(main())
        assert checks[:5] == [None] * 5 and store.lost is None
    finally:
        store.close()


@pytest.mark.slow
def test_lock_lost_while_bots_play_stops_every_write(pg_url, tmp_path):
    """An all-bot table writing all the time: the loss stops it cleanly (its
    writes in flight commit or fail, none after), no stack trace."""
    first = start_server(pg_url, tmp_path, "--seed", str(SEED))
    try:
        t = create(first, "guilin-mahjong", bots=[0, 1, 2, 3])
        spec = SyncSeat(first, t["id"], t["spectator_token"], strict=False)
        spec.until("welcome")
        spec.until("events")                  # the bots play
        poll(lambda: counts(pg_url)[2], lambda n: n >= 20)
        terminate_lock(pg_url)
        told = spec.until("error")            # framed once its writes in flight are done
        assert told["code"] == "LockLost" and told.get("seq") is None, told
        after = counts(pg_url)
        with first.http() as h:
            assert h.get("/health").status_code == 503
        second = start_server(pg_url, tmp_path, "--seed", str(SEED))   # takes the lock
        second.stop()
        assert counts(pg_url) == after        # the first wrote nothing after telling
        # the restored table replays from its rows (second start): the rows are whole
        assert lock_holders(pg_url) == []
        spec.close()
    finally:
        first.stop()
    log = first.log_path.read_text()
    assert log.count("LOCK LOST") == 1 and "Traceback" not in log, log


# ------------------------------------------------------------------ no write without the lock
#
# The writer's own connection holds the lock: a write commits only on the
# session holding it.  These call the Store directly and never let the
# watchdog tick (its interval is an hour): what refuses the writes is the
# writer itself.


def _table_row(tid: str) -> dict:
    return dict(id=tid, spec="guilin-mahjong", variant="guilin-mahjong", options="{}",
                plugins="[]", stamp="{}", qipai_version="0", variant_version="0", rng="os",
                seed=None, bots="[]", tokens="{}", spectator_hash="0" * 64,
                admin_hash="0" * 64, open=True, created=0.0)


def _hand_row(tid: str) -> dict:
    return dict(table_id=tid, hand=0, deal="{}", seed=None, commitment="0" * 64, salt="0")


def _acts(tid: str, seqs, done) -> Write:
    return Write(tid, [("action", dict(table_id=tid, hand=0, seq=s, action="{}", timeout=False))
                       for s in seqs], done)


def _counted_checks(store: Store) -> list:
    """Replace the store's watchdog check by one that records each call."""
    calls: list = []
    real = store.check_lock
    store.check_lock = lambda: calls.append(1) or real()
    return calls


def test_the_writers_next_batch_after_the_lock_session_ends_commits_nothing(pg_url):
    """The lock's session is terminated; the very next batch — two tables,
    so the per-table retry runs too, which would once have reconnected — is
    refused LockLost, before any watchdog tick, and commits nothing."""
    store = Store(pg_url)
    try:
        assert lock_holders(pg_url) == [store._wraw.info.backend_pid]   # the writer's session
        store.create_table(_table_row("a"), _hand_row("a"))
        store.create_table(_table_row("b"), _hand_row("b"))
        seen: list[LockLost] = []
        results: list[BaseException | None] = []
        checks = _counted_checks(store)

        async def main() -> None:
            assert store.watch(seen.append, every=3600.0) is True
            store.submit(_acts("a", [0], results.append))    # held: committed
            await store.drain()
            assert results == [None] and counts(pg_url) == (2, 2, 1)
            terminate_lock(pg_url)
            store.submit(_acts("a", [1, 2], results.append))
            store.submit(_acts("b", [0], results.append))
            await store.drain()
            store.submit(_acts("b", [1], results.append))     # and later ones too
            await store.drain()

        asyncio.run(main())
        assert checks == []                                   # the watchdog never ran a check
        assert len(results) == 4 and all(isinstance(r, LockLost) for r in results[1:]), results
        assert counts(pg_url) == (2, 2, 1)                    # nothing of them committed
        assert len(seen) == 1 and seen[0] is store.lost       # the server is told, once
        assert "writer's connection failed" in str(store.lost)
        with pytest.raises(LockLost):
            store.create_table(_table_row("c"), _hand_row("c"))
        assert counts(pg_url) == (2, 2, 1)
    finally:
        store.close()
    assert lock_holders(pg_url) == []


def test_a_silently_replaced_writer_connection_commits_nothing(pg_url, monkeypatch):
    """SQLAlchemy's Connection takes a new pooled connection after its own
    was invalidated: a session without the lock, which meanwhile a second
    server took.  The first server's write is refused before its commit
    (nothing of it lands); the second server's commits."""
    import qipai.host.store.lock as store_mod

    monkeypatch.setattr(store_mod, "LOCK_WAIT_S", PATIENCE)
    first = Store(pg_url)
    second = None
    try:
        first.create_table(_table_row("a"), _hand_row("a"))
        locked = first._wraw
        first._wconn.invalidate()       # the lock's session ends; the Connection object stays
        assert first._wconn is not None
        second = Store(pg_url)          # the lock is free: a second server takes it
        assert lock_holders(pg_url) == [second._wraw.info.backend_pid]
        got: list[BaseException | None] = []

        async def write(store: Store, seq: int) -> None:
            store.submit(_acts("a", [seq], got.append))
            await store.drain()

        asyncio.run(write(first, 0))
        assert isinstance(got[0], LockLost), got
        assert "no longer the session holding it" in str(got[0])
        assert first._wconn is None and locked.closed
        asyncio.run(write(second, 1))
        assert got[1] is None
        assert [r["seq"] for r in second.actions_of("a", 0)] == [1]   # only the second's
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_second_server_cannot_take_the_database_while_the_writer_holds_the_lock(
        pg_url, monkeypatch):
    """Every session of the first server but its writer's is terminated (its
    readers, its watchdog's): the writer's session still holds the lock, so
    a second server is refused, and the first writes on."""
    import qipai.host.store.lock as store_mod

    monkeypatch.setattr(store_mod, "LOCK_WAIT_S", 0.3)
    first = Store(pg_url)
    try:
        first.create_table(_table_row("a"), _hand_row("a"))
        assert first.open_tables() and first.check_lock() is None   # pooled sessions in use
        writer = first._wraw.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as c:
            others = [r[0] for r in c.execute(
                "select pid from pg_stat_activity where datname = current_database() "
                "and pid <> pg_backend_pid() and pid <> %s", (writer,)).fetchall()]
            assert others                                     # there were some to end
            for pid in others:
                c.execute("select pg_terminate_backend(%s)", (pid,))
        assert lock_holders(pg_url) == [writer]
        with pytest.raises(DatabaseInUse) as refused:
            Store(pg_url)
        assert f"backend pid {writer}" in str(refused.value)
        got: list[BaseException | None] = []

        async def write() -> None:
            first.submit(_acts("a", [0], got.append))
            await first.drain()

        asyncio.run(write())
        assert got == [None] and counts(pg_url) == (1, 1, 1)
        assert first.check_lock() is None and first.lost is None   # its check reconnects
    finally:
        first.close()


def test_a_loss_seen_by_the_watchdog_releases_the_writers_lock(pg_url, monkeypatch):
    """The watchdog counts a check that fails as a loss even if the writer's
    session still holds the lock: that session is then closed, so the lock
    is free for another server, and no later write commits."""
    store = Store(pg_url)
    try:
        store.create_table(_table_row("a"), _hand_row("a"))
        monkeypatch.setattr(store, "check_lock", lambda: "a test's reason")
        seen: list[LockLost] = []
        got: list[BaseException | None] = []

        async def main() -> None:
            store.watch(seen.append, every=0.01)
            for _ in range(int(PATIENCE / 0.01)):
                if seen:
                    break
                await asyncio.sleep(0.01)
            store.submit(_acts("a", [0], got.append))
            await store.drain()

        asyncio.run(main())
        assert len(seen) == 1 and "a test's reason" in str(seen[0])
        assert isinstance(got[0], LockLost) and counts(pg_url) == (1, 1, 0)
        assert poll(lambda: lock_holders(pg_url), lambda h: h == []) == []
        Store(pg_url).close()          # another server can start
    finally:
        store.close()


# ------------------------------------------------------------------ an operator's session limits


def _dbname(url: str) -> str:
    return url.split("@/", 1)[1].split("?", 1)[0]


def _pids(url: str) -> set[int]:
    with psycopg.connect(url, autocommit=True) as c:
        return {r[0] for r in c.execute(
            "select pid from pg_stat_activity where datname = current_database() "
            "and pid <> pg_backend_pid()").fetchall()}


def test_an_idle_session_timeout_does_not_end_the_writers_session(pg_cluster, pg_url):
    """The database's ``idle_session_timeout`` (PostgreSQL 14+) ends every
    session idle that long — the writer's too, once nothing is written for
    that long, and with it the lock: an idle server would halt.  The writer's
    session exempts itself: after another session of the database was ended
    by the timeout, the writer's still holds the lock and commits."""
    with psycopg.connect(pg_cluster.url(), autocommit=True) as c:
        if c.info.server_version < 140000:
            pytest.skip("idle_session_timeout is PostgreSQL 14+")
        c.execute(f'alter database "{_dbname(pg_url)}" set idle_session_timeout = \'200ms\'')
    store = Store(pg_url)
    try:
        store.create_table(_table_row("a"), _hand_row("a"))
        writer = store._wraw.info.backend_pid
        idle = psycopg.connect(pg_url, autocommit=True)   # a session the timeout applies to
        try:
            other = idle.info.backend_pid
            assert poll(lambda: _pids(pg_url), lambda p: other not in p) >= {writer}
            assert other not in _pids(pg_url)               # the timeout did end it
        finally:
            idle.close()
        assert lock_holders(pg_url) == [writer]
        assert store.check_lock() is None and store.lost is None
        got: list[BaseException | None] = []

        async def write() -> None:
            store.submit(_acts("a", [0], got.append))
            await store.drain()

        asyncio.run(write())
        assert got == [None] and counts(pg_url) == (1, 1, 1)
    finally:
        store.close()


@pytest.mark.slow   # its own cluster, listening on 127.0.0.1
def test_the_writers_session_ends_within_seconds_of_a_network_cut(tmp_path):
    """Over TCP, the writer's session (the lock's) has PostgreSQL's side of
    its keepalive set to 10 s idle, then 3 probes 5 s apart, and a 25 s
    user timeout (:data:`KEEPALIVE_IDLE_S` …): a server cut off by the
    network leaves the session idle, and PostgreSQL ends it — freeing the
    lock for another server — once the probes go unanswered, instead of
    after the operating system's default of two hours and more (another
    session of the same server keeps the OS's defaults: on Linux 7200 s
    idle)."""
    from pgcluster import Cluster

    from qipai.host.store import KEEPALIVE_COUNT, KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S

    with Cluster.start(tcp=True) as cluster:
        name = _dbname(cluster.create_database())
        store = Store(cluster.tcp_url(name))
        try:
            c = store._wconn
            got = {n: c.execute(sa.text(f"show {n}")).scalar() for n in (
                "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count",
                "tcp_user_timeout")}
            c.rollback()
            # SHOW gives these in their base units: seconds, and ms for the user timeout
            assert got == {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5",
                           "tcp_keepalives_count": "3", "tcp_user_timeout": "25000"}, got
            assert (KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT) == (10, 5, 3)
            with store.engine.connect() as other:   # the OS's default (Linux: 7200)
                idle = other.execute(sa.text("show tcp_keepalives_idle")).scalar()
                assert int(idle) > 60, idle
            assert store.check_lock() is None
        finally:
            store.close()


def test_a_read_after_its_pooled_session_was_ended_is_answered(pg_cluster, pg_url):
    """A pooled connection whose session the database ended while it waited
    (here ``idle_session_timeout``; a restart does the same) is replaced
    when taken out: the read answers (a server's HTTP read was a 500)."""
    with psycopg.connect(pg_cluster.url(), autocommit=True) as c:
        if c.info.server_version < 140000:
            pytest.skip("idle_session_timeout is PostgreSQL 14+")
        c.execute(f'alter database "{_dbname(pg_url)}" set idle_session_timeout = \'200ms\'')
    store = Store(pg_url)
    try:
        store.create_table(_table_row("a"), _hand_row("a"))
        with store.engine.connect() as c:            # the pool's one reader connection
            pooled = c.connection.dbapi_connection.info.backend_pid
        assert poll(lambda: _pids(pg_url), lambda p: pooled not in p) == \
            {store._wraw.info.backend_pid}           # ended by the timeout, the writer not
        assert store.table("a")["id"] == "a"
        assert [h["hand"] for h in store.hands_of("a")] == [0]
    finally:
        store.close()


def test_one_tables_bad_write_fails_that_table_only_and_the_store_keeps_its_lock(pg_url):
    """A statement error (here a primary-key violation) in one table's write
    is that table's failure: the batch is retried per table, the other
    table's write commits on the same session, the store is not lost."""
    store = Store(pg_url)
    try:
        store.create_table(_table_row("a"), _hand_row("a"))
        store.create_table(_table_row("b"), _hand_row("b"))
        writer = store._wraw
        got: dict[str, list] = {"a": [], "b": []}

        async def main() -> None:
            store.submit(_acts("a", [0], got["a"].append))
            await store.drain()
            store.submit(_acts("a", [0], got["a"].append))       # seq 0 again: refused
            store.submit(_acts("b", [0], got["b"].append))
            await store.drain()
            store.submit(_acts("a", [1], got["a"].append))       # and the table goes on
            await store.drain()

        asyncio.run(main())
        assert got["a"][0] is None and got["a"][2] is None
        assert isinstance(got["a"][1], sa.exc.IntegrityError), got
        assert got["b"] == [None]
        assert store.lost is None and store.check_lock() is None
        assert store._wraw is writer and lock_holders(pg_url) == [writer.info.backend_pid]
        assert counts(pg_url) == (2, 2, 3)
    finally:
        store.close()


def _freeze(cluster, sig) -> None:
    """Send ``sig`` (SIGSTOP, SIGCONT) to the cluster's postmaster and every
    backend: a database that answers nothing, as behind a dropped network."""
    import os

    pm = int((cluster.data / "postmaster.pid").read_text().split()[0])
    pids = [pm]
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pm:
                pids.append(int(d))
    for pid in pids:
        os.kill(pid, sig)


@contextlib.contextmanager
def frozen_later(tmp_path):
    """A PostgreSQL cluster of its own and a server on it, with an all-bot
    table writing; yields ``(served, freeze, its spectator)``, ``freeze()``
    stopping every PostgreSQL process (a database that answers nothing).  Leaving the
    block, SIGTERM must stop the server (a hang bound, not a timing); then
    the cluster goes on, the lock must be free and the log say ``LOCK
    LOST`` without a traceback."""
    import signal

    from pgcluster import Cluster

    cluster = Cluster.start()
    frozen = []
    try:
        url = cluster.create_database()
        served = start_server(url, tmp_path)
        try:
            t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])
            spectator = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
            spectator.until("events")                    # the bots play, so they write

            def freeze() -> None:
                _freeze(cluster, signal.SIGSTOP)
                frozen.append(True)

            yield served, freeze, spectator
            served.proc.terminate()
            assert served.proc.wait(PATIENCE) is not None  # (a hang bound, not a timing)
        finally:
            if frozen:
                _freeze(cluster, signal.SIGCONT)
            served.stop()
        assert poll(lambda: lock_holders(url), lambda h: h == []) == []
        log = served.log_path.read_text()
        assert "LOCK LOST" in log and "Traceback" not in log, log
    finally:
        cluster.stop()


@pytest.mark.slow   # its own cluster; the watchdog's 10 s answer limit
def test_sigterm_stops_a_server_whose_write_hangs_on_a_database_that_answers_nothing(tmp_path):
    """The database stops answering (every PostgreSQL process stopped) while
    a bot table writes: the write in flight never returns, the watchdog's
    check gets no answer, the store is lost (503).  SIGTERM then stops the
    server: its shutdown does not wait for that write, which could last as
    long as the database hangs (a dropped network: until TCP gives up).
    Nothing of the hung write was acknowledged, and the process's end ends
    its sessions.  The spectator is told ``LockLost`` and still answered:
    what it is sent does not wait behind the hung write."""
    with frozen_later(tmp_path) as (served, freeze, spectator):
        freeze()
        with served.http() as h:
            # the hung write may first show as ``stalled`` (it waits as
            # long as the watchdog's answer limit); ``lock-lost`` follows
            seen = []
            r = poll(lambda: h.get("/health"),
                     lambda r: seen.append(r.json()["status"]) or r.json()["status"] == "lock-lost")
            assert r.status_code == 503 and r.json()["status"] == "lock-lost", r.text
            assert set(seen) <= {"ok", "stalled", "lock-lost"}, seen
        told = spectator.until("error", lambda m: m.get("seq") is None)
        assert told["code"] == "LockLost", told
        spectator.send({"type": "ping"})
        spectator.until("pong")


@pytest.mark.slow   # a server start, a stall of a second or more
def test_health_says_stalled_while_a_write_waits_for_the_database_then_ok_again(pg_url, tmp_path):
    """Another session holds the actions table locked (as a stuck migration
    or a hung backend would): the writer's insert waits, nothing commits, and
    the watchdog sees the lock still held.  ``GET /health`` answers 503
    ``stalled`` once the write has waited longer than ``--stall-seconds``,
    and the log says so in one line; when the other session lets go, the
    write commits, ``/health`` is ``ok`` again, the log says the stall is
    over, and the bots play on — nothing lost, nothing doubled."""
    served = start_server(pg_url, tmp_path, "--stall-seconds", "1", "--seed", str(SEED))
    blocker = psycopg.connect(pg_url)
    try:
        t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])
        spectator = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
        spectator.until("events")                      # the bots play, so they write
        blocker.execute("LOCK TABLE qipai_actions IN ACCESS EXCLUSIVE MODE")
        with served.http() as h:
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
            assert r.status_code == 503 and r.json()["status"] == "stalled", r.text
            assert "--stall-seconds 1" in r.json()["message"]
            blocker.rollback()                         # the lock goes: the write commits
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 200)
            assert r.json()["status"] == "ok", r.text
            assert served.alive()
        # the log says so too, once each: stalled, then over
        log = poll(served.log_path.read_text, lambda t: "the stall is over" in t)
        stalled = [x for x in log.splitlines() if "STALLED" in x]
        assert len(stalled) == 1 and "--stall-seconds 1" in stalled[0], log
        assert "STALLED: a write has waited" in stalled[0], log
        assert log.count("the stall is over") == 1, log
        assert log.index("STALLED") < log.index("the stall is over")
        assert "Traceback" not in log, log
        before = counts(pg_url)[2]
        assert poll(lambda: counts(pg_url)[2], lambda n: n > before) > before   # plays on
        assert lock_holders(pg_url) != []
    finally:
        blocker.close()
        served.stop()
    log = served.log_path.read_text()
    assert "LOCK LOST" not in log and "Traceback" not in log, log


@pytest.mark.slow   # a server start, a stall of a second or more
def test_requests_that_wait_for_a_stalled_database_hold_up_nothing_else(pg_url, tmp_path):
    """Another session holds the tables locked: a ``POST /tables`` (it waits
    for the writer) and reads of the database (``GET /records``) wait —
    and meanwhile the event loop answers everything else: ``GET /health``
    says ``stalled`` within a few seconds, the open tables list — were the
    create's wait or a read in the loop, the whole server would answer
    nothing until the database did.  Reads
    beyond the waiting cap are refused at once, typed ``Busy``.  Once the
    lock goes, the waiting requests are answered and nothing is lost."""
    import threading

    import httpx

    from qipai.host.store import READ_WAITING, READERS

    served = start_server(pg_url, tmp_path, "--stall-seconds", "1", "--seed", str(SEED))
    blocker = psycopg.connect(pg_url)
    answers: dict[str, list[httpx.Response]] = {"create": [], "records": []}

    def ask(kind: str) -> None:
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as c:
            r = (c.post("/tables", json={"variant": "guilin-mahjong"}) if kind == "create"
                 else c.get("/records"))
            answers[kind].append(r)

    try:
        t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])
        spectator = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
        spectator.until("events")                      # the bots play, so they write
        blocker.execute("LOCK TABLE qipai_actions, qipai_hands, qipai_tables "
                        "IN ACCESS EXCLUSIVE MODE")
        waiting = [threading.Thread(target=ask, args=("create",))]
        waiting += [threading.Thread(target=ask, args=("records",))
                    for _ in range(READERS + READ_WAITING + 3)]
        for w in waiting:
            w.start()
        # the loop answers at once (5 s: a loop held up by a waiting request
        # would answer nothing until the database did — a ReadTimeout here)
        with httpx.Client(base_url=served.url, timeout=5.0) as h:
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
            assert r.json()["status"] == "stalled", r.text
            listed = h.get("/tables")
            assert listed.status_code == 200 and t["id"] in [x["id"] for x in listed.json()]
            busy = poll(lambda: [a for a in answers["records"] if a.status_code == 503],
                        lambda b: len(b) >= 3)
            assert len(busy) >= 3 and all(a.json()["error"] == "Busy" for a in busy), busy
            assert "try again" in busy[0].json()["message"]
            assert answers["create"] == []                # still waiting for the database
            assert all(a.status_code == 503 for a in answers["records"])   # none read
            blocker.rollback()                            # the lock goes
            for w in waiting:
                w.join(PATIENCE)
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 200)
            assert r.json()["status"] == "ok", r.text
        [made] = answers["create"]
        assert made.status_code == 201, made.text
        done = [a for a in answers["records"] if a.status_code == 200]
        assert len(done) == len(waiting) - 1 - len(busy)
        assert all(isinstance(a.json(), list) for a in done)
        with served.http() as h:
            assert made.json()["id"] in [x["id"] for x in h.get("/tables").json()]
        before = counts(pg_url)[2]
        assert poll(lambda: counts(pg_url)[2], lambda n: n > before) > before   # plays on
    finally:
        blocker.close()
        served.stop()


def test_a_read_the_database_fails_is_a_store_error_naming_it(pg_url):
    """A read the database fails (here its table is renamed away by another
    session) raises StoreError naming what was read — the server answers it
    503 ``Unavailable`` — not SQLAlchemy's error; the store reads again once
    the table is back.  ``read()`` from the loop gives the same (its thread)."""
    from qipai.host.store import StoreError

    store = Store(pg_url)
    other = psycopg.connect(pg_url, autocommit=True)
    try:
        store.create_table(_table_row("a"), _hand_row("a"))
        other.execute("ALTER TABLE qipai_hands RENAME TO qipai_hands_away")
        with pytest.raises(StoreError, match="did not answer the read of the hands of table a"
                                             ".*ProgrammingError") as e:
            store.hands_of("a")
        assert not isinstance(e.value, sa.exc.SQLAlchemyError)
        with pytest.raises(StoreError, match="the hands of table a"):
            asyncio.run(store.read(store.hands_of, "a"))
        other.execute("ALTER TABLE qipai_hands_away RENAME TO qipai_hands")
        assert [h["hand"] for h in asyncio.run(store.read(store.hands_of, "a"))] == [0]
    finally:
        other.close()
        store.close()
