"""An SQLite database another process holds locked for writing (``sqlite3
qipai.db``, then ``BEGIN EXCLUSIVE;``) while the server writes.

The server's writer commits SQLite batches in the event loop; were that
commit to wait for sqlite3's busy timeout (5 s) under an outside write
lock, every table, WebSocket and ``GET /health`` would freeze *in the
loop*, ``--stall-seconds`` blind to it.  The loop's attempt does not wait: a locked database hands the batch to the writer's
thread, which waits for the lock as long as it is held (``GET /health``
says ``stalled`` past ``--stall-seconds``, as on PostgreSQL), and commits it
once the lock goes.

The outside lock is a plain ``sqlite3`` connection of the test (another
connection, or another process than the server's).  Nothing here is timed:
the loop's responsiveness is shown by what it does while the lock is held
(loop turns, ``/health`` answers, a ``pong``), each wait a poll bounded by
``hostkit.PATIENCE``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading

import httpx
from hostkit import PATIENCE, SyncSeat, create, start_server
from test_lock_lost import _acts, _hand_row, _table_row, poll

from qipai.host.store import Store

SEED = 7


@contextlib.contextmanager
def locked(path) -> sqlite3.Connection:
    """Another connection holding ``path``'s write lock (``BEGIN
    EXCLUSIVE``) until the block ends or it is rolled back."""
    outside = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        outside.execute("BEGIN EXCLUSIVE")
        yield outside
    finally:
        if outside.in_transaction:
            outside.execute("ROLLBACK")
        outside.close()


def stored_seqs(path, tid: str) -> list[int]:
    with contextlib.closing(sqlite3.connect(path)) as c:
        return [r[0] for r in c.execute(
            "select seq from qipai_actions where table_id = ? order by seq", (tid,))]


async def turns_until(cond, at_most: int = 10_000) -> bool:
    """Let the loop turn (``asyncio.sleep(0)``) until ``cond()``; whether it
    came within ``at_most`` turns (a bound on a hang, not a time)."""
    for _ in range(at_most):
        if cond():
            return True
        await asyncio.sleep(0)
    return cond()


def test_a_write_waits_for_an_outside_lock_while_the_event_loop_turns(tmp_path):
    """Another connection holds the write lock; a batch is submitted.  The
    batch's wait is seen from the loop (``waiting()`` says ``a write``) and
    the loop keeps turning meanwhile — a heartbeat task ticks — while
    nothing is answered and nothing is stored; a write submitted during the
    wait waits behind it (nothing commits in the loop meanwhile), and so
    does a new table's write.  Once the lock goes everything commits,
    each write answered ``None`` (committed) in submission order, each row
    stored once: the commit never waits inside the loop (no tick,
    ``waiting()`` never seen), nor fails the batch ``database is locked``."""
    path = tmp_path / "q.db"
    store = Store(f"sqlite:///{path}")
    store.create_table(_table_row("a"), _hand_row("a"))
    answered: list = []

    def done(name):
        return lambda exc: answered.append((name, exc))

    async def main() -> None:
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        beat = asyncio.get_running_loop().create_task(heartbeat())
        try:
            with locked(path) as outside:
                store.submit(_acts("a", [0, 1], done("first")))
                # the writer takes the batch, finds the database locked, and waits
                # for it off the loop: the loop sees that wait
                assert await turns_until(lambda: store.waiting() is not None), \
                    f"no wait seen from the loop; answered: {answered}"
                assert store.waiting()[1] == "a write"
                store.submit(_acts("a", [2], done("second")))      # queued behind it
                table = asyncio.get_running_loop().create_task(
                    store.create_table_async(_table_row("b"), _hand_row("b")))
                at = ticks
                # the loop goes on: the heartbeat ticks, while the write still waits
                assert await turns_until(lambda: ticks >= at + 100)
                assert answered == [] and not table.done()
                assert store.waiting() is not None and store.waiting()[1] == "a write"
                assert outside.execute("select count(*) from qipai_actions").fetchone() == (0,)
                outside.execute("ROLLBACK")                        # the lock goes
            assert await store.drain(at_most=PATIENCE)
            await asyncio.wait_for(table, PATIENCE)
        finally:
            beat.cancel()

    try:
        asyncio.run(main())
        assert answered == [("first", None), ("second", None)], answered
        assert stored_seqs(path, "a") == [0, 1, 2]
        assert store.table("b") is not None
        assert store.waiting() is None
    finally:
        store.close()


def test_a_lock_held_past_the_writers_wait_fails_the_batch_whole_not_per_table(
        tmp_path, monkeypatch):
    """The writer's thread waits for the lock at most
    ``SQLITE_LOCK_WAIT_MS`` (here made 1 ms, and the lock is held
    throughout): the batch of two tables then fails, every write answered
    with SQLite's busy error — no table's write is at fault, so it is not
    tried again per table (the loop's attempt and the thread's: two
    transactions, not four).  The writer's connection is kept: once the
    lock goes the next write commits.  None of it waits in the loop."""
    import qipai.host.store.writer as store_mod

    monkeypatch.setattr(store_mod, "SQLITE_LOCK_WAIT_MS", 1)
    path = tmp_path / "q.db"
    store = Store(f"sqlite:///{path}")
    for tid in "ab":
        store.create_table(_table_row(tid), _hand_row(tid))
    answered: list = []
    tries: list = []
    real = store._transaction
    store._transaction = lambda writes, *a, **kw: tries.append(len(writes)) or real(
        writes, *a, **kw)

    async def main() -> None:
        with locked(path):
            store.submit(_acts("a", [0], lambda exc: answered.append(("a", exc))))
            store.submit(_acts("b", [0], lambda exc: answered.append(("b", exc))))
            assert await store.drain(at_most=PATIENCE)
        store.submit(_acts("a", [1], lambda exc: answered.append(("a", exc))))
        assert await store.drain(at_most=PATIENCE)

    try:
        asyncio.run(main())
        assert [k for k, _ in answered] == ["a", "b", "a"], answered
        for _, exc in answered[:2]:
            assert "database is locked" in str(exc), exc     # SQLITE_BUSY
        assert answered[2][1] is None, answered
        assert tries == [2, 2, 1], tries
        assert stored_seqs(path, "a") == [1] and stored_seqs(path, "b") == []
    finally:
        store.close()


def test_a_new_table_waits_for_an_outside_lock_off_the_event_loop(tmp_path):
    """``POST /tables``' write (``create_table_async``) on a locked
    database: the loop turns while it waits, ``waiting()`` names it, and it
    is stored once the lock goes, not failed (``StoreError``, database is
    locked)."""
    path = tmp_path / "q.db"
    store = Store(f"sqlite:///{path}")

    async def main() -> None:
        with locked(path) as outside:
            table = asyncio.get_running_loop().create_task(
                store.create_table_async(_table_row("a"), _hand_row("a")))
            assert await turns_until(lambda: store.waiting() is not None), \
                f"no wait seen from the loop; {table}"
            assert store.waiting()[1] == "a new table's write"
            assert await turns_until(lambda: table.done(), at_most=100) is False
            outside.execute("ROLLBACK")
        await asyncio.wait_for(table, PATIENCE)

    try:
        asyncio.run(main())
        assert store.table("a") is not None and store.waiting() is None
    finally:
        store.close()


def test_an_sqlite_read_runs_off_the_event_loop(tmp_path):
    """A request's read of an SQLite file (:meth:`Store.read`) runs in a
    reader thread: while it waits — here for the test, as it would for an
    odd lock (another connection in ``locking_mode=EXCLUSIVE``; a WAL read
    waits for no ``BEGIN EXCLUSIVE``) — the loop turns and ``waiting()``
    says ``a read``; then it answers."""
    store = Store(f"sqlite:///{tmp_path / 'q.db'}")
    store.create_table(_table_row("a"), _hand_row("a"))
    go = threading.Event()

    def read_when_told() -> dict | None:
        go.wait(PATIENCE)
        return store.table("a")

    async def main() -> dict | None:
        read = asyncio.get_running_loop().create_task(store.read(read_when_told))
        assert await turns_until(lambda: store.waiting() is not None), \
            f"no wait seen from the loop; {read}"
        assert store.waiting()[1] == "a read" and not read.done()
        go.set()
        return await asyncio.wait_for(read, PATIENCE)

    try:
        assert asyncio.run(main())["id"] == "a"
        assert store.waiting() is None
    finally:
        store.close()


def test_health_says_stalled_while_an_outside_lock_holds_an_act_and_the_act_commits_after(
        tmp_path):
    """A real ``qipai serve`` on an SQLite file (``--stall-seconds 1``); a
    seat's act is sent while another process holds the database's write
    lock.  Meanwhile the server answers: ``GET /health`` answers 503
    ``stalled`` ("a write has waited …"), so an SQLite wait is seen, and a
    connection to another table is answered ``pong``, while the act is not
    answered.  Once the lock
    goes the act is acknowledged (stored, not lost), ``/health`` is ``ok``
    again, and the log says both the stall and its end."""
    path = tmp_path / "qipai.db"
    served = start_server(f"sqlite:///{path}", tmp_path, "--stall-seconds", "1",
                          "--seed", str(SEED), "--turn-timeout", "600")
    try:
        t = create(served, "guilin-mahjong", bots=[1, 2, 3])
        other = create(served, "guilin-mahjong", bots=[])     # a table that writes nothing
        s0 = SyncSeat(served, t["id"], t["seats"]["0"], strict=False)
        elsewhere = SyncSeat(served, other["id"], other["seats"]["0"], strict=False)
        elsewhere.until("welcome")
        d = s0.next_decision()
        before = stored_seqs(path, t["id"])
        with locked(path), httpx.Client(base_url=served.url, timeout=PATIENCE) as h:
            s0.send({"type": "act", "hand": d["hand"], "seq": d["seq"],
                     "action": d["legal"][0]})
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
            assert r.json()["status"] == "stalled", r.text
            assert r.json()["message"].startswith("a write has waited"), r.text
            # another table's connection is answered while the write waits (the
            # seat's own pong would come after its act's answer: what its table
            # sends waits for the write)
            elsewhere.send({"type": "ping"})
            assert elsewhere.until("pong")["type"] == "pong"
            assert h.get("/health").json()["status"] == "stalled"     # still waiting
            assert stored_seqs(path, t["id"]) == before      # (a WAL read: not locked)
            early = [m for m in s0.received if m["type"] in ("ack", "error")]
            assert early == [], early          # the act is not answered while it waits
        ack = s0.until("ack", lambda m: m.get("seq") == d["seq"])
        assert ack["seq"] == d["seq"]
        assert not [m for m in s0.received if m["type"] == "error"], s0.received
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as h:
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 200)
            assert r.json()["status"] == "ok", r.text
        after = stored_seqs(path, t["id"])
        assert after[:len(before)] == before and len(after) > len(before), (before, after)
        log = poll(served.log_path.read_text, lambda text: "the stall is over" in text)
        assert "STALLED: a write has waited" in log and "the stall is over" in log, log
        assert "write failed" not in log and "Traceback" not in log, log
    finally:
        served.stop()
