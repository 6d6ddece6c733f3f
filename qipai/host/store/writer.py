"""The writer: group commit of every change, in the order submitted.

:meth:`Store.submit` as a :class:`Write` (an action, and at a hand's end the
record and the next hand with it); one writer commits everything that is
waiting in one transaction, in the order submitted, while the next changes
queue up — in a thread of its own for PostgreSQL (a commit waits for the
disk), in the event loop itself for SQLite (a WAL commit does not).  Each
write's ``done`` is called (in the event loop) only after its transaction
committed — the server acknowledges an action
only then — or with the error if it failed: a failed batch is retried one
table at a time, so one table's bad write fails only that table's writes.
URLs: ``sqlite:///FILE`` (the default, ``sqlite:///qipai.db``) or
``postgresql://…`` (psycopg 3).

SQLite's commit in the loop waits for no lock: the writer's connection has
a busy timeout of 0 there.  When another connection holds the database's
write lock — ``sqlite3 qipai.db``, then ``BEGIN EXCLUSIVE;`` (or ``BEGIN
IMMEDIATE;``, or any write not yet committed), another program, a backup
tool writing — the loop's attempt fails at once with ``SQLITE_BUSY``
("database is locked"), rolled back, nothing of it written (the first
insert is refused; a failed commit is rolled back too), and the *whole*
batch goes to the writer's thread, which waits for the lock
(:data:`SQLITE_LOCK_WAIT_MS`, in effect as long as it is held) and commits
it once it goes; busy is not a table's bad write, so it is not retried per
table.  Meanwhile the loop serves every table, connection and ``GET
/health``, the wait counts in :meth:`Store.waiting` (``a write``), so
``qipai serve --stall-seconds`` reports it as it does a PostgreSQL wait
(``/health`` 503 ``stalled``, one log line), and nothing commits in the
loop: the next batch, and a new table's write, go to the thread behind it
(writes commit in the order submitted; the writer's connection is used by
one thread at a time).  No act is acknowledged until its batch commits;
none is refused because of the lock.  (A commit waiting in the loop for
sqlite3's 5 s busy timeout would freeze every table and ``/health``, no
stall seen, and then fail the batch.)  A request's read of an SQLite
file runs in a reader thread, as PostgreSQL's (a WAL read waits for no
writer; an odd lock could make it wait).  An in-memory database (one per
thread, which nobody else can lock) does everything in the loop.

Durability: PostgreSQL commits with its defaults (``fsync``,
``synchronous_commit`` on).  SQLite runs in WAL mode with
``synchronous=NORMAL``: a committed transaction survives the server
process being killed at any moment (it is in the WAL file, which the OS
holds), but a power loss or an OS crash can lose the last transactions
before a checkpoint (SQLite's documented trade-off for that mode).  The
WAL is checkpointed by the store's thread about once a second
(:data:`CHECKPOINT_S`), not inside a commit, so the fsync of a checkpoint
never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

from qipai.host import trace
from qipai.host.offload import Waits
from qipai.host.store.errors import CommitUnknown, LockLost, StoreError, TableMoved, said
from qipai.host.store.schema import _INSERT_ACTION, _STATEMENTS, Write, actions

_T = TypeVar("_T")

#: Milliseconds the writer's thread waits for an SQLite write lock another
#: connection holds (the writer's connection's ``PRAGMA busy_timeout``
#: there): SQLite's largest, about 24.8 days — in effect as long as the lock
#: is held, as a PostgreSQL write waits for a lock.  The loop's own attempt
#: waits for none (``busy_timeout`` 0, see :meth:`Store._commit_sqlite`).
SQLITE_LOCK_WAIT_MS = 2**31 - 1


class _Busy(Exception):
    """(SQLite, the loop's attempt, which waits for no lock.)  Another
    connection holds the database's write lock (``SQLITE_BUSY``): the
    transaction was rolled back — nothing of it is written — and the
    writer's connection is kept; the writes are made again in the writer's
    thread, which waits for the lock."""


def _is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` (a SQLAlchemy error) is SQLite's ``SQLITE_BUSY`` or
    one of its extended codes ("database is locked": another connection
    holds a lock this statement needs)."""
    orig = getattr(exc, "orig", None)
    if not isinstance(orig, sqlite3.OperationalError):
        return False
    code = getattr(orig, "sqlite_errorcode", None)
    return (code & 0xFF) == 5 if code is not None else "database is locked" in str(orig)


#: Seconds between two SQLite WAL checkpoints while the server writes
#: (``PRAGMA wal_checkpoint(PASSIVE)``, in the store's thread, never in the
#: event loop; SQLite's own automatic checkpoint is off).
CHECKPOINT_S = 1.0


def _unnest_insert(table: sa.Table, dialect: sa.Dialect) -> tuple[tuple[str, ...], str]:
    """(PostgreSQL.)  ``(columns, sql)``: one ``INSERT`` of any number of
    rows of ``table`` — every column of it, in ``columns``' order — whose
    parameters are one array per column (psycopg's ``%b``: sent in binary),
    unnested by the server into rows.  One statement, whatever the row
    count: one Bind and Execute, its text always the same (psycopg prepares
    it once), where an ``executemany`` sends a statement per row and
    SQLAlchemy processes each row's parameters in Python.  A string column's
    array is cast to ``text[]``, not to its ``varchar(n)`` (an explicit cast
    would cut a value that is too long; the insert's own assignment refuses
    it, as a plain ``INSERT`` does)."""
    cols = tuple(table.c.keys())
    casts = ["TEXT" if isinstance(table.c[k].type, sa.String)
             else table.c[k].type.compile(dialect=dialect) for k in cols]
    return cols, (f"INSERT INTO {table.name} ({', '.join(cols)}) SELECT * FROM unnest("
                  + ", ".join(f"%b::{t}[]" for t in casts) + ")")


def _scalar_default(column: sa.Column) -> Any:
    """The value ``column`` gets when an insert does not name it: its
    Python-side scalar default, else None (NULL)."""
    d = column.default
    return d.arg if d is not None and d.is_scalar else None


class GroupCommit:
    """(A part of :class:`~qipai.host.store.Store`.)  Submitting writes,
    committing them in batches on the writer's connection, and a new
    table's write."""

    def _init_writer(self) -> None:
        """(The store's ``__init__``, once its engine is made.)  The writer's state."""
        self._queue: list[Write] = []
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task | None = None
        self._pool: ThreadPoolExecutor | None = None   # the writer's thread
        #: The writer's own connection, kept open.  On PostgreSQL it is made
        #: at start and holds the server lock: never replaced (a new
        #: connection would be a session without the lock).
        self._wconn: Any = None
        self._busy = False        # a batch is being committed
        #: SQLite on a file (connections any thread may use): the loop's commit
        #: waits for no lock, a locked database's writes wait in the writer's
        #: thread, reads run in reader threads.  An in-memory database (one per
        #: thread, which nobody else can lock) does everything in the loop.
        self._offloop = self.dialect == "sqlite" and isinstance(self.engine.pool,
                                                                sa.pool.QueuePool)
        #: SQLite: the writer's work handed to its thread and not done yet (while
        #: there is any, the next write goes there too, behind it: the writer's
        #: connection is never used in the loop and the thread at once)
        self._handed: list[Future[Any]] = []
        self._wwaits: bool | None = None   # SQLite: the writer's busy timeout is the
        #                                    thread's (True), the loop's 0 (False), unset
        #: SQLite writes (batches, new tables) the loop found locked by another
        #: connection, made in the writer's thread instead (statistics)
        self.waited = 0
        #: what waits for the writer's thread now: the batch in flight, a new table
        self._writing = Waits()
        self._ckpt: Any = None    # the running checkpoint (a future), SQLite only
        self._ckpt_at = 0.0       # when the last one started (time.monotonic)
        self._ckpt_conn: Any = None   # the checkpointer's own connection (its thread's)
        #: ``qipai_events`` rows committed so far (any thread adds; read in the loop)
        self.events_written = 0
        self._events_told = 0
        #: Called in the loop after a commit that wrote events (the webhook's
        #: deliverer and ``GET /events`` wake on it); None: nobody listens.
        self.on_events: Callable[[], None] | None = None
        path = self.engine.url.database if self.dialect == "sqlite" else None
        # a file database (URI filenames are refused, _check_url): checkpoints to run
        self._ckpt_path = path if path and path != ":memory:" else None
        self.batches = 0          # transactions committed by the writer (statistics)
        #: called (in the loop) with each batch's commit time in seconds, once a batch
        #: (the server's metrics: a histogram's observe)
        self.on_batch: Callable[[float], None] | None = None
        #: PostgreSQL: the one statement that inserts a run of action rows
        #: (:func:`_unnest_insert`), and its columns, each with the value a row
        #: that does not name it gets (the column's default, else NULL); None elsewhere
        self._insert_actions: str | None = None
        self._action_cols: list[tuple[str, Any]] = []
        if self.dialect == "postgresql":
            order, self._insert_actions = _unnest_insert(actions, self.engine.dialect)
            self._action_cols = [(k, _scalar_default(actions.c[k])) for k in order]

    def submit(self, write: Write) -> None:
        """Queue ``write`` for the writer (started in the running loop on
        first use); ``write.done`` is called once it is committed or failed."""
        self._queue.append(write)
        if self._writer is None:
            self._wake = asyncio.Event()
            self._writer_pool()
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())
        assert self._wake is not None
        self._wake.set()

    def _writer_pool(self) -> ThreadPoolExecutor:
        """The writer's thread (made on first use for SQLite)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="qipai-writer")
        return self._pool

    def _in_thread(self) -> bool:
        """(The loop.)  Whether work of the writer's connection is in, or
        queued for, the writer's thread (a future is done only once its
        call has returned)."""
        if self._handed:
            self._handed = [f for f in self._handed if not f.done()]
        return bool(self._handed)

    def _hand_off(self, fn: Callable[..., _T], *args: Any) -> Future[_T]:
        """(The loop.)  ``fn(*args)`` in the writer's thread, after what is
        there already; tracked by :meth:`_in_thread`."""
        fut = self._writer_pool().submit(fn, *args)
        self._handed.append(fut)
        return fut

    def cancel(self, key: str) -> list[Write]:
        """Take the queued (not yet committing) writes of ``key`` out of the
        queue; returns them (their ``done`` will not be called)."""
        out = [w for w in self._queue if w.key == key]
        if out:
            self._queue = [w for w in self._queue if w.key != key]
            for w in out:
                w.cancelled = True
        return out

    async def drain(self, until_lost: bool = False, at_most: float | None = None) -> bool:
        """Wait until every write submitted so far is committed or failed —
        or, ``until_lost``, until the store is lost (the server's shutdown:
        a write still in flight on a database that stopped answering may
        never return, and nothing of it is acknowledged anyway), or
        ``at_most`` seconds.  True when nothing is left in flight."""
        end = None if at_most is None else time.monotonic() + at_most
        while self._queue or self._busy or len(self._writing):
            if until_lost and self.lost is not None:
                return False
            if end is not None and time.monotonic() >= end:
                return False
            await asyncio.sleep(0.001)
        return True

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wake is not None
        while True:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            batch, self._queue = self._queue, []
            self._busy = True
            key = self._writing.begin("a write")
            t0 = time.perf_counter()
            try:
                if self.lost is not None:
                    failed = {w.key: self.lost for w in batch}   # the lock is gone: no write
                elif self._offloop:
                    failed = await self._commit_sqlite(batch)
                elif self.dialect == "sqlite":   # in memory: nobody else can lock it
                    failed = self._commit(batch)
                else:
                    failed = await loop.run_in_executor(self._pool, self._commit, batch)
            except asyncio.CancelledError:
                # close() of a lost store with a batch in flight: the server stops, so
                # its writes are not answered (answering fails would rebuild every
                # table from a database that may not answer)
                raise
            except BaseException as exc:  # noqa: BLE001 - never leave a write unanswered
                failed = {w.key: exc for w in batch}
            finally:
                self._busy = False
                self._writing.end(key)
            took = time.perf_counter() - t0
            if trace.ON:
                trace.batch(t0, took, len(batch))
            if self.on_batch is not None:
                self.on_batch(took)
            self.batches += 1
            self._tell()   # the writer found the lock lost: the server halts first
            if self.events_written != self._events_told:
                self.tell_events()
            for w in batch:
                if not w.cancelled:
                    try:
                        w.done(failed.get(w.key))
                    except Exception as exc:  # noqa: BLE001 - the writer serves every table
                        # (the server's callbacks catch their own: this is a last guard)
                        print(f"qipai serve: a write's callback failed: {said(exc)}",
                              file=sys.stderr, flush=True)
            if self._ckpt_path is not None and self._ckpt is None:
                now = time.monotonic()
                if now - self._ckpt_at >= CHECKPOINT_S:
                    self._ckpt_at = now
                    self._ckpt = loop.run_in_executor(self._pool, self._checkpoint)
                    self._ckpt.add_done_callback(self._checkpointed)

    def tell_events(self) -> None:
        """(The loop.)  Events were committed: call :attr:`on_events`."""
        self._events_told = self.events_written
        if self.on_events is not None:
            try:
                self.on_events()
            except Exception as exc:  # noqa: BLE001 - the writer serves every table
                print(f"qipai serve: telling of new events failed: {said(exc)}",
                      file=sys.stderr, flush=True)

    async def _commit_sqlite(self, batch: list[Write]) -> dict[str, BaseException]:
        """(The writer, in the loop; an SQLite file.)  :meth:`_commit` of
        ``batch``.  WAL with ``synchronous=NORMAL``: a commit does not wait
        for the disk, so it is made here, in the loop (no thread hop, no GIL
        contention) — with a busy timeout of 0, so that it waits for no lock
        either.  When another connection holds the write lock (``sqlite3
        qipai.db``, ``BEGIN EXCLUSIVE;``) that attempt is rolled back at once,
        nothing of it written, and the whole batch goes to the writer's
        thread, which waits for the lock (:data:`SQLITE_LOCK_WAIT_MS`) while
        the loop runs on and :meth:`waiting` shows the wait; the next batch
        waits for this one.  A batch that fails otherwise is retried per
        table there too.  While the thread has work of the writer's (a
        batch, a new table), the batch goes there, behind it: writes commit
        in the order submitted, on one connection used by one thread at a
        time."""
        whole = True
        if not self._in_thread():
            try:
                self._transaction(batch, wait=False)
                return {}
            except _Busy:
                self.waited += 1
            except Exception:  # noqa: BLE001 - retried per table, in the writer's thread
                whole = False
        return await asyncio.wrap_future(self._hand_off(self._commit, batch, whole))

    def _checkpoint(self) -> None:
        """(The store's thread.)  Copy the WAL's committed pages into the
        database file without blocking the writer (``PASSIVE``); the GIL is
        released while SQLite works and syncs."""
        if self._ckpt_conn is None:
            import sqlite3

            self._ckpt_conn = sqlite3.connect(self._ckpt_path, isolation_level=None)
        self._ckpt_conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _checkpointed(self, fut: Any) -> None:
        self._ckpt = None
        if not fut.cancelled() and fut.exception() is not None:   # pragma: no cover
            self._ckpt_conn = None     # a broken connection: a new one next time

    def _ckpt_close(self) -> None:
        if self._ckpt_conn is not None:
            self._ckpt_conn.close()
            self._ckpt_conn = None

    def _commit(self, batch: list[Write], whole: bool = True) -> dict[str, BaseException]:
        """(The writer: its thread, or the loop for an in-memory SQLite
        database.)  Commit ``batch`` in one transaction (not tried when not
        ``whole``: it failed already); if that fails, each table's writes
        in a transaction of their own — unless the lock is lost: then every
        write fails with :class:`LockLost` and the writer's session is
        closed; or SQLite was still locked by another connection after
        :data:`SQLITE_LOCK_WAIT_MS`: then every write fails with that error
        (no table's write is at fault).  Returns the error of each table
        whose writes failed."""
        if self.lost is None and whole:
            try:
                return dict(self._transaction(batch))
            except CommitUnknown as exc:   # the batch may be in: nothing is retried
                self._release()
                return {w.key: exc for w in batch}
            except Exception as exc:  # noqa: BLE001 - retried per table below
                if _is_busy(exc):      # still locked: retrying per table would wait again
                    return {w.key: exc for w in batch}
        by_key: dict[str, list[Write]] = {}
        for w in batch:
            by_key.setdefault(w.key, []).append(w)
        failed: dict[str, BaseException] = {}
        for key, writes in by_key.items():
            if self.lost is not None:
                failed[key] = self.lost
                continue
            try:
                failed.update(self._transaction(writes))
            except CommitUnknown as exc:   # these may be in
                failed[key] = exc
            except Exception as exc:  # noqa: BLE001 - that table's writes fail
                failed[key] = self.lost if self.lost is not None else exc
        if self.lost is not None:
            self._release()
        return failed

    def _transaction(self, writes: list[Write], wait: bool = True) -> dict[str, TableMoved]:
        """One transaction of ``writes`` on the writer's connection.  On
        PostgreSQL it commits only on the session holding the server lock:
        checked before the first statement and before the commit (no
        statement added); a connection that failed (not that session any
        more) loses the store and raises :class:`LockLost`.  On SQLite,
        ``wait``: for a lock another connection holds, up to
        :data:`SQLITE_LOCK_WAIT_MS` (a worker thread's); not ``wait`` (the
        loop's): for none — another connection's lock raises :class:`_Busy`
        at once, the transaction rolled back (nothing written).  Else the
        database's error (SQLAlchemy's), the transaction rolled back.
        Returns the tables a cluster node's fence found moved
        (:meth:`~qipai.host.store.fence.Fences.fenced`): nothing of them
        was written, the rest committed."""
        if self._wconn is None:
            if self.dialect == "postgresql":   # released: the lock's session is gone
                raise self.lose("the writer's connection is closed")
            self._wconn = self.engine.connect()
            self._wwaits = None
        c = self._wconn
        committing = False
        try:
            if self._offloop and self._wwaits is not wait:
                # (a PRAGMA starts no transaction; sent only when the mode changes)
                c.connection.dbapi_connection.execute(
                    f"PRAGMA busy_timeout = {SQLITE_LOCK_WAIT_MS if wait else 0}")
                self._wwaits = wait
            evs = 0   # events inserted
            with c.begin():
                self._still_locked(c)
                moved = self.fenced(c, writes)   # (a cluster node; else nothing is read)
                self.events_in_order(c, writes)
                run: list[dict[str, Any]] = []   # consecutive action rows: one statement
                for w in writes:
                    if moved and w.key in moved:   # another node's now: nothing of it
                        continue
                    for kind, params in w.ops:
                        if kind == "action":
                            run.append(params)
                            continue
                        if run:
                            self._insert_run(c, run)
                            run = []
                        if kind == "event":
                            evs += 1
                        c.execute(_STATEMENTS[kind], params)
                if run:
                    self._insert_run(c, run)
                self._still_locked(c)   # the commit is sent on the lock's session
                committing = True       # leaving the block sends it
            if evs:
                self.events_written += evs
            return moved
        except LockLost:
            raise
        except Exception as exc:
            if self.dialect == "postgresql":
                if not self._ours(c):   # never reconnected: that would be a session unlocked
                    lost = self.lose(f"the writer's connection failed: {said(exc)}")
                    if committing:       # during the commit: taken or not, nobody knows
                        raise CommitUnknown(str(lost)) from None
                    raise lost from None
                raise                  # the session holds on (a bad row): rolled back
            if not wait and _is_busy(exc):   # another connection's lock: rolled back
                raise _Busy() from exc
            try:
                if self._offloop:   # (nor pooled: its busy timeout is the writer's)
                    c.invalidate()
                c.close()      # a broken connection is not used again
            except Exception:  # noqa: BLE001, S110 - already broken
                pass
            self._wconn = None
            raise

    def _insert_run(self, c: Any, rows: list[dict[str, Any]]) -> None:
        """Insert consecutive ``qipai_actions`` rows (dicts of
        :func:`~qipai.host.store.schema.action_params`; a column a row does
        not name gets its default, else NULL) in the transaction open on
        ``c``.  On PostgreSQL as one statement of one array per column
        (:func:`_unnest_insert`), sent through SQLAlchemy's connection all the
        same (its errors, its invalidation of a connection that failed); on
        SQLite, SQLAlchemy's ``executemany`` (a statement per row costs no
        round trip there)."""
        if self._insert_actions is None:
            c.execute(_INSERT_ACTION, rows)
            return
        c.exec_driver_sql(self._insert_actions,
                          tuple([r.get(k, d) for r in rows] for k, d in self._action_cols))

    # -------------------------------------------------------------- writes

    def create_table(self, row: dict[str, Any], first_hand: dict[str, Any],
                     events: Any = ()) -> None:
        """Insert a table and its first hand (one transaction, on the
        writer's connection: on PostgreSQL in the writer's thread, after the
        batch in flight; on SQLite in the caller's, waiting for a lock
        another connection holds — not while the loop writes), waiting for
        it — outside the event loop; in the loop, :meth:`create_table_async`.
        It counts in :meth:`waiting` while it waits.

        Raises:
            LockLost: the server lock is lost (nothing is written).
            StoreError: the database did not take it."""
        w = self._table_write(row, first_hand, events)
        key = self._writing.begin("a new table's write")
        try:
            with self._creating():
                if self._pool is not None and self.dialect == "postgresql":
                    self._pool.submit(self._commit_one, w).result()
                else:
                    self._transaction([w])
        finally:
            self._writing.end(key)

    async def create_table_async(self, row: dict[str, Any], first_hand: dict[str, Any],
                                 events: Any = ()) -> None:
        """:meth:`create_table` from the event loop, which it does not block:
        on PostgreSQL the loop awaits the writer's thread (a database that
        does not answer holds up this request, not the loop; it counts in
        :meth:`waiting`, and :meth:`close` does not wait for it once the
        store is lost).  An SQLite file's write is made in the loop, as a
        batch is, waiting for no lock; when another connection holds the
        write lock, or the writer's thread has a write of its own, in the
        writer's thread instead (behind it), as PostgreSQL's.  Same errors."""
        w = self._table_write(row, first_hand, events)
        key: int | None = self._writing.begin("a new table's write")
        try:
            with self._creating():
                thread = self.dialect == "postgresql" and self._pool is not None
                if self._offloop:
                    thread = self._in_thread()
                    if not thread:
                        try:
                            self._transaction([w], wait=False)
                        except _Busy:
                            self.waited += 1
                            thread = True
                if thread:
                    # its wait ends when the writer's thread is done, not when this
                    # request is (the write holds the thread as long as it waits)
                    fut = self._hand_off(self._commit_one, w)
                    fut.add_done_callback(lambda _f, k=key: self._writing.end(k))
                    key = None
                    await asyncio.wrap_future(fut)
                elif not self._offloop:
                    self._transaction([w])
        finally:
            if key is not None:
                self._writing.end(key)
            if self.events_written != self._events_told:
                self.tell_events()

    def _table_write(self, row: dict[str, Any], first_hand: dict[str, Any],
                     events: Any = ()) -> Write:
        if self.lost is not None:
            raise LockLost(str(self.lost))
        return Write(row.get("id", ""), [("table", row), ("hand", first_hand),
                                         *events], lambda exc: None)

    @contextmanager
    def _creating(self) -> Iterator[None]:
        try:
            yield
        except LockLost as exc:
            self._tell()
            raise LockLost(str(exc)) from None
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"the database did not take the table: {said(exc)}") from None

    def _commit_one(self, w: Write) -> None:
        """(The writer's thread.)  ``w`` alone, in one transaction."""
        try:
            self._transaction([w])
        finally:
            if self.lost is not None:
                self._release()
