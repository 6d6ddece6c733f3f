"""The server lock: one server per database.

One server per database: :class:`Store` holds a lock for as long as it is
open — on SQLite an exclusive ``flock`` of the file ``FILE.lock`` beside
the database (``FILE`` its real path: a symlink to it names the same lock
file) and one of the database file itself (taken through any name of the
file: a hard link too; a ``flock`` does not touch SQLite's own POSIX
locks), on PostgreSQL a session advisory lock (:data:`PG_LOCK_KEY`)
held by the writer's own connection, the one connection every write is
committed on — and a second server on the same database fails at start
with :class:`DatabaseInUse` naming the holder.  Both locks go with the
process (a server killed with SIGKILL holds nothing).  The schema is
created under the lock.

A PostgreSQL session lock can also go while the server runs: its backend
terminated (``pg_terminate_backend``), the network dropped (PostgreSQL
ends the session within about 25 s: :data:`KEEPALIVE_IDLE_S`), the
database restarted.  The guarantee: **no write of this server commits in a
transaction that does not hold the lock.**  Every write transaction (each
batch, :meth:`Store.create_table`) runs on the writer's connection, whose
session took the lock at start and never releases it while the store is
held (a session advisory lock goes only with an unlock, which the store
never sends, or with the session itself — and PostgreSQL aborts a
session's open transaction before it releases its locks).  So while a
write commits, its session holds the lock, and no other server can hold
it.  What could break that is a *different* session taking the writer's
place — SQLAlchemy's ``Connection`` silently takes a new connection from
the pool after the old one failed — so the writer never reconnects: each
transaction checks, before its first statement and again just before its
commit, that it runs on the very psycopg connection that took the lock
and that this connection is open (a psycopg connection is one libpq
session; it never reconnects).  That check is in Python: a batch sends
no extra statement.  A transaction that fails because the connection
failed, or that finds it replaced, is rolled back, and the store is
*lost* (:attr:`Store.lost`, a :class:`LockLost`): that batch fails with
``LockLost`` (nothing of it committed), and so does every later write —
except when the connection failed during the commit itself: then whether
the database took the batch is not known, and it fails with
:class:`CommitUnknown` (a ``LockLost``; a restarted server's rows show which).

The lock's watchdog (:meth:`Store.watch`) makes a loss seen when nothing
is written: every :data:`LOCK_CHECK_S` seconds, in a thread of its own, it
asks ``pg_locks`` (on a connection of the pool) whether the writer's
session — its backend pid and start time — still holds the lock; when it
does not, or the check fails twice, or does not answer within
:data:`LOCK_ANSWER_S`, the store is lost too, and the writer's session is
closed (after the batch in flight), so a lock it may still hold goes and
another server can start.  Whoever sees the loss first (the writer or the
watchdog) calls the server's ``on_lost`` once.  A lost store never takes
the lock again by itself (another server may have taken it meanwhile):
the operator restarts the server.  An SQLite ``flock`` cannot be lost
while its descriptor is open: no watchdog.

(A pooler between the server and PostgreSQL must keep a client's session:
with PgBouncer's transaction pooling a session advisory lock means
nothing.  An ``idle_session_timeout`` of the cluster, database or role
would end the writer's session whenever nothing is written for that long:
the writer's session turns it off for itself.)

"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa

from qipai.host.store.errors import DatabaseInUse, LockLost, StoreError, said

#: The PostgreSQL advisory lock key of a server's database (two int4: "qi", "pa").
#: A server outside a cluster holds it exclusively; each node of a cluster
#: holds it shared (so neither kind starts beside the other) and its node's
#: own lock (:func:`node_lock_key`) exclusively.
PG_LOCK_KEY = (0x7169, 0x7061)
#: The first int4 of a node's lock key (:func:`node_lock_key`).
NODE_LOCK_CLASS = 0x716E   # "qn"
#: The first int4 of a cluster's own transaction locks (the schema's creation,
#: the sweeps, the events' order): a class apart from the nodes' keys.
CLUSTER_LOCK_CLASS = 0x7163   # "qc"


def node_lock_key(node: str) -> tuple[int, int]:
    """The advisory lock key of cluster node ``node``: ``(NODE_LOCK_CLASS,
    CRC-32 of its id as a signed int4)``.  Two ids with one CRC would share a
    lock: the second is refused at start as if its id were taken."""
    import zlib

    h = zlib.crc32(node.encode())
    return (NODE_LOCK_CLASS, h - 2**32 if h >= 2**31 else h)

#: Seconds a starting server waits for a lock still held (a server just
#: killed: PostgreSQL ends its session a moment later) before it gives up.
LOCK_WAIT_S = 3.0
#: Seconds between two checks of a running server's PostgreSQL lock (the
#: watchdog, :meth:`Store.watch`).
LOCK_CHECK_S = 2.0
#: Seconds a check may take before the lock counts as lost (a connection
#: that does not answer cannot prove that its session still holds it).
LOCK_ANSWER_S = 10.0
#: TCP keepalive of the writer's session, set on PostgreSQL's side of it
#: (``tcp_keepalives_idle``, ``_interval``, ``_count``; and
#: ``tcp_user_timeout`` to match): a server cut off by the network leaves
#: that session idle, and PostgreSQL would end it — and free the server
#: lock for another server — only when the operating system's keepalive
#: gives up, two hours and more by default.  With these it ends within
#: about ``IDLE + INTERVAL × COUNT`` = 25 seconds of silence.  (Ignored on
#: a Unix-domain socket, which no network cuts.)
KEEPALIVE_IDLE_S = 10
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3

# One row while the writer's session (its backend pid and start time: a pid
# alone could be reused by a later session) holds the server lock, else none.
_LOCK_HELD = sa.text(
    "select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid "
    "where l.pid = :pid and a.backend_start = :start and l.locktype = 'advisory' "
    "and l.granted and l.classid = :a and l.objid = :b and l.objsubid = 2 and l.database = "
    "(select oid from pg_database where datname = current_database())")
# (A cluster node.)  The server lock, shared with the other nodes.
_TAKE_SHARED = sa.text("select pg_try_advisory_lock_shared(:a, :b)")
# Take the server lock in this session; the session's backend pid and start time.
_TAKE_LOCK = sa.text(
    "select pg_try_advisory_lock(:a, :b), pg_backend_pid(), "
    "(select backend_start from pg_stat_activity where pid = pg_backend_pid())")


def _holder() -> str:
    return (f"qipai serve pid {os.getpid()} on {socket.gethostname()} since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}")


def _flock_holder(fd: int, real: str) -> str:
    """Who holds the ``flock`` of the open file ``fd`` (``real``, an SQLite
    database reached under another name, whose lock file names nobody):
    the process ``/proc/locks`` names, if it is readable."""
    st = os.fstat(fd)
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == ident:
                    return (f"pid {parts[4]} holds this database file, {real}, under "
                            f"another of its names: a hard link")
    except OSError:
        pass
    return (f"a process holds this database file, {real}, under another of its names: "
            f"a hard link")


class ServerLock:
    """(A part of :class:`~qipai.host.store.Store`.)  Taking, checking,
    watching and losing the server lock of the store's database."""

    def _init_lock(self) -> None:
        """(The store's ``__init__``, once its engine is made.)  The lock's state."""
        #: the advisory lock this store holds: the server lock, or (a cluster
        #: node, :attr:`node` set) its node's (:func:`node_lock_key`)
        self.lock_key = PG_LOCK_KEY if self.node is None else node_lock_key(self.node)
        self._shared = False      # a cluster node: PG_LOCK_KEY held shared
        self._wraw: Any = None    # PostgreSQL: its psycopg connection (one session, for good)
        self._wsession: tuple[int, Any] | None = None   # its backend (pid, backend_start)
        self._lock_fd: int | None = None   # SQLite: FILE.lock (of the real path), flocked
        self._db_fd: int | None = None     # SQLite: the database file itself, flocked
        #: Set once the server lock is lost (:class:`LockLost`); every write
        #: is refused from then on.  None while the lock is held.
        self.lost: LockLost | None = None
        self._on_lost: Callable[[LockLost], None] | None = None   # given to watch()
        self._told = False        # on_lost was called
        self._watcher: asyncio.Task | None = None
        self._watch_pool: ThreadPoolExecutor | None = None

    def _lock(self) -> None:
        """Take the database's server lock, or raise :class:`DatabaseInUse`
        naming the holder (after :data:`LOCK_WAIT_S`)."""
        end = time.monotonic() + LOCK_WAIT_S
        while True:
            holder = self._try_lock()
            if holder is None:
                return
            if time.monotonic() >= end:
                if self.node is not None and not holder.endswith("outside a cluster"):
                    raise DatabaseInUse(f"node id {self.node!r} is held by a live node of "
                                        f"this cluster ({holder}): give each node its own "
                                        f"--node-id")
                if self.node is not None:
                    raise DatabaseInUse(f"database {self.url!r} is in use by {holder}: stop "
                                        f"it before starting a cluster node on it")
                raise DatabaseInUse(f"database {self.url!r} is in use by another server "
                                    f"({holder}): one qipai serve per database (or start "
                                    f"every server with --cluster)")
            time.sleep(0.1)

    def _try_lock(self) -> str | None:
        """None once the lock is held, else who holds it."""
        if self.dialect == "sqlite":
            return self._try_flock()
        if self.dialect == "postgresql":
            return self._try_advisory_lock()
        return None  # another database: no lock (not a supported URL)

    def _try_flock(self) -> str | None:
        """(SQLite.)  :meth:`_try_lock`: ``flock`` the lock file beside the
        database and the database file itself."""
        import fcntl

        path = self.engine.url.database
        if not path or path == ":memory:":
            return None  # a database of this process alone
        # the file itself, not the name it was given: a symlink to it locks
        # the same lock file (hard links: the flock of the database below)
        real = os.path.realpath(path)
        if self._lock_fd is None:
            try:
                self._lock_fd = os.open(real + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:   # named as the database's, not as a file of ours
                raise StoreError(f"cannot open the database {path}: cannot create its lock "
                                 f"file {real}.lock beside it: "
                                 f"{exc.strerror or exc}") from None
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.lseek(self._lock_fd, 0, os.SEEK_SET)
            return os.read(self._lock_fd, 500).decode(errors="replace").strip() or "unknown"
        if self._db_fd is None:
            try:
                self._db_fd = os.open(real, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                raise StoreError(f"cannot open the database {path}: "
                                 f"{exc.strerror or exc}") from None
        try:
            # the database file's own flock: taken through any of its names (a
            # hard link has another real path, so another lock file).  A flock
            # is independent of SQLite's own POSIX locks on the file (Linux)
            fcntl.flock(self._db_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            return _flock_holder(self._db_fd, real)
        os.ftruncate(self._lock_fd, 0)
        os.pwrite(self._lock_fd, _holder().encode(), 0)
        return None

    def _try_advisory_lock(self) -> str | None:
        """(PostgreSQL.)  :meth:`_try_lock`: the session advisory lock, taken
        on the writer's own connection, whose session then holds it."""
        if self._wconn is None:   # the writer's connection: the lock's session
            self._wconn = self.engine.connect()
            self._wraw = self._wconn.connection.dbapi_connection
        c = self._wconn
        if self.node is not None and not self._shared:
            # a node: the database's lock shared, so no server outside the cluster
            # plays its tables beside it (and none starts while a node runs)
            if not c.execute(_TAKE_SHARED, dict(a=PG_LOCK_KEY[0], b=PG_LOCK_KEY[1])).scalar():
                who = self._holder_of(c, PG_LOCK_KEY)
                c.rollback()
                return f"{who}, a qipai serve outside a cluster"
            self._shared = True
        a, b = self.lock_key
        got, pid, start = c.execute(_TAKE_LOCK, dict(a=a, b=b)).one()
        if got:
            c.execute(sa.text("select set_config('application_name', :n, false)"),
                      dict(n=_holder()[:63]))
            if self._wraw.info.server_version >= 140000:
                # an idle_session_timeout of the cluster, database or role would end
                # this session (and so the lock) whenever nothing is written for that
                # long: the writer's session is exempt (this session only)
                c.execute(sa.text("select set_config('idle_session_timeout', '0', false)"))
            # a network cut ends this session (and frees the lock) in seconds, not hours
            keep = [("tcp_keepalives_idle", KEEPALIVE_IDLE_S),
                    ("tcp_keepalives_interval", KEEPALIVE_INTERVAL_S),
                    ("tcp_keepalives_count", KEEPALIVE_COUNT)]
            if self._wraw.info.server_version >= 120000:   # tcp_user_timeout: 12 on
                keep.append(("tcp_user_timeout", 1000 * (
                    KEEPALIVE_IDLE_S + KEEPALIVE_INTERVAL_S * KEEPALIVE_COUNT)))
            for name, value in keep:
                c.execute(sa.text("select set_config(:n, :v, false)"),
                          dict(n=name, v=str(value)))
            c.commit()
            self._wsession = (pid, start)
            return None
        who = self._holder_of(c, self.lock_key)
        c.rollback()
        return who

    @staticmethod
    def _holder_of(c: Any, key: tuple[int, int]) -> str:
        """Who holds the advisory lock ``key`` (its session's application
        name, backend pid and address), or ``"unknown"``."""
        who = c.execute(sa.text(
            "select a.application_name, a.pid, a.client_addr from pg_locks l "
            "join pg_stat_activity a on a.pid = l.pid "
            "where l.locktype = 'advisory' and l.granted and l.classid = :a "
            "and l.objid = :b and l.objsubid = 2 and l.database = "
            "(select oid from pg_database where datname = current_database())"),
            dict(a=key[0] & 0xFFFFFFFF, b=key[1] & 0xFFFFFFFF)).first()
        if who is None:
            return "unknown"
        return f"{who[0] or 'a client'}; PostgreSQL backend pid {who[1]}" + \
            (f" from {who[2]}" if who[2] else "")

    def _ours(self, c: Any) -> bool:
        """Whether ``c`` (the writer's connection) still runs on the session
        that took the server lock: the same psycopg connection, open.  A
        psycopg connection is one libpq session and never reconnects, but
        SQLAlchemy's ``Connection`` fetches a new one from the pool after it
        was invalidated — a session without the lock.  No statement is sent."""
        if self.dialect != "postgresql":
            return True
        try:
            return (not c.invalidated and c.connection.dbapi_connection is self._wraw
                    and not self._wraw.closed)
        except Exception:  # noqa: BLE001 - a closed Connection: not the lock's session
            return False

    def _still_locked(self, c: Any) -> None:
        """(Inside a write transaction, before anything is sent and again
        before its commit.)  Raise :class:`LockLost` unless the transaction
        runs on the lock's session and the store is not lost."""
        if self.lost is not None:
            raise self.lost
        if not self._ours(c):
            raise self.lose("the writer's connection is no longer the session holding it")

    def check_lock(self) -> str | None:
        """(The watchdog's thread; blocking.)  None while the server lock
        is held — always for SQLite (a ``flock`` stays while its descriptor
        is open) — else why it is not: the writer's session no longer holds
        it (``pg_locks``, asked on a connection of the pool: a connection
        that fails is replaced once), or that check failed (the exception's
        first line)."""
        if self._wsession is None:
            return None
        if self._wraw is None or self._wraw.closed:
            return "the writer's connection, the session holding it, is closed"
        pid, start = self._wsession
        for attempt in (1, 2):
            try:
                with self.engine.connect() as c:
                    a, b = self.lock_key
                    held = c.execute(_LOCK_HELD, dict(pid=pid, start=start,
                                                      a=a & 0xFFFFFFFF, b=b & 0xFFFFFFFF)
                                     ).scalar()
                    c.rollback()
                break
            except Exception as exc:  # noqa: BLE001 - any failure: the lock is not proven held
                if attempt == 2:
                    return f"its check failed: {said(exc)}"
        if held != 1:
            return "the writer's session no longer holds the advisory lock"
        return None

    def lose(self, why: str) -> LockLost:
        """Mark the store lost (idempotent: the first reason stays); returns
        the :class:`LockLost` every later write fails with."""
        if self.lost is None:
            self.lost = LockLost(
                f"the server lock of this database (a PostgreSQL advisory lock) is lost "
                f"({why}): another server may take the database, so this one writes "
                f"nothing more; restart it")
        return self.lost

    def _tell(self) -> None:
        """(The loop.)  Once lost: call the ``on_lost`` given to
        :meth:`watch` — once, whoever saw the loss first (the watchdog, the
        writer, :meth:`create_table`)."""
        if self.lost is not None and not self._told and self._on_lost is not None:
            self._told = True
            self._on_lost(self.lost)

    def _release(self) -> None:
        """(The writer's thread, or close.)  Drop the writer's connection —
        on PostgreSQL closing its session, so a lock it still holds goes and
        another server can start (this one writes nothing more anyway)."""
        c, self._wconn = self._wconn, None
        if c is None:
            return
        try:
            if self.dialect == "postgresql" or self._offloop:
                # closed, not returned to the pool: PostgreSQL's session ends; an
                # SQLite file's connection has the writer's own busy timeout
                c.invalidate()
            else:
                c.close()        # in memory: closing its last connection drops it
        except Exception:  # noqa: BLE001, S110 - a database already gone
            pass

    def watch(self, on_lost: Callable[[LockLost], None], every: float = LOCK_CHECK_S,
              answer_s: float = LOCK_ANSWER_S) -> bool:
        """Start the lock's watchdog in the running loop: every ``every``
        seconds :meth:`check_lock` runs in a thread of its own (never in
        the loop, never in the writer's thread); once the lock is not held,
        or a check takes more than ``answer_s`` seconds, the store is lost
        (:meth:`lose`) and the writer's session is closed.  ``on_lost(error)``
        is called once, in the loop, when the store is lost — by the
        watchdog, or by a write that found the writer's session gone, before
        any tick.  Returns whether a watchdog runs (False for SQLite and an
        in-memory database: nothing to lose)."""
        self._on_lost = on_lost
        self._tell()
        if self._wsession is None or self._watcher is not None:
            return self._watcher is not None
        self._watch_pool = ThreadPoolExecutor(1, thread_name_prefix="qipai-lockwatch")
        self._watcher = asyncio.get_running_loop().create_task(
            self._watch_loop(every, answer_s))
        return True

    async def _watch_loop(self, every: float, answer_s: float) -> None:
        loop = asyncio.get_running_loop()
        while self.lost is None:
            await asyncio.sleep(every)
            if self.lost is not None:
                break
            try:
                why = await asyncio.wait_for(
                    loop.run_in_executor(self._watch_pool, self.check_lock), answer_s)
            except asyncio.TimeoutError:
                why = f"its check did not answer within {answer_s:g} s"
            if why is not None:
                self.lose(why)
                if self._pool is not None:   # after the batch in flight, if any
                    self._pool.submit(self._release)
        self._tell()
