"""The server's database: one SQLAlchemy Core schema for SQLite and PostgreSQL.

Three tables:

* ``qipai_tables`` — one row per hosted table: the ruleset spec, the
  house plugins, the qipai and variant versions, the RNG kind (and the
  server seed of a seeded table), the bot seats, the SHA-256 hashes of the
  seat, spectator and admin tokens (never the tokens), open or closed.
* ``qipai_hands`` — one row per hand: its deal (JSON), the commitment and
  the secret salt, the seed of a seeded hand; once over, its record (JSON,
  deal and salt revealed) and its net per seat.
* ``qipai_actions`` — every accepted action: ``(table_id, hand, seq)`` is
  the primary key, so an action can never be stored twice; ``timeout``
  says the server played it for a seat that did not answer in time.

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

Writes are grouped (group commit): the server hands every change to
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
none is refused because of the lock.  Before, the commit waited in the
loop for sqlite3's 5 s busy timeout — every table and ``/health`` frozen,
no stall seen — and then failed the batch.  A request's read of an SQLite
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
import hashlib
import os
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
import sqlalchemy as sa

from qipai.core.errors import QipaiError
from qipai.host import trace
from qipai.host.offload import Crowded, Offload, Stopped, Waits

metadata = sa.MetaData()

tables = sa.Table(
    "qipai_tables", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("variant", sa.String(100), nullable=False),
    sa.Column("options", sa.Text, nullable=False),          # JSON object
    sa.Column("plugins", sa.Text, nullable=False),          # JSON list of plugin specs
    sa.Column("stamp", sa.Text, nullable=False),            # JSON qipai.core.stamps.Stamp
    sa.Column("qipai_version", sa.String(50), nullable=False),
    sa.Column("variant_version", sa.String(50), nullable=False),
    sa.Column("rng", sa.String(10), nullable=False),        # "os" | "seeded"
    sa.Column("seed", sa.Text),                             # the server seed (decimal), seeded only
    sa.Column("bots", sa.Text, nullable=False),             # JSON list of seats
    sa.Column("tokens", sa.Text, nullable=False),           # JSON {seat: sha256 hex}
    sa.Column("spectator_hash", sa.String(64), nullable=False),
    sa.Column("admin_hash", sa.String(64), nullable=False),
    sa.Column("open", sa.Boolean, nullable=False, default=True),
    sa.Column("created", sa.Float, nullable=False),
)

hands = sa.Table(
    "qipai_hands", metadata,
    sa.Column("table_id", sa.String(32), sa.ForeignKey("qipai_tables.id"), primary_key=True),
    sa.Column("hand", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("deal", sa.Text, nullable=False),             # JSON Deal
    sa.Column("seed", sa.Text),                             # the hand's seed (decimal), seeded only
    sa.Column("commitment", sa.String(64), nullable=False),
    sa.Column("salt", sa.String(128), nullable=False),
    sa.Column("record", sa.Text),                           # JSON Record once over
    sa.Column("net", sa.Text),                              # JSON list once over
)

actions = sa.Table(
    "qipai_actions", metadata,
    sa.Column("table_id", sa.String(32), primary_key=True),
    sa.Column("hand", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("action", sa.Text, nullable=False),           # JSON Action
    sa.Column("timeout", sa.Boolean, nullable=False, default=False),
    sa.ForeignKeyConstraint(["table_id", "hand"], ["qipai_hands.table_id", "qipai_hands.hand"]),
)


# The hot path's statements, built once: a statement with bound parameters
# keeps one cache key, so SQLAlchemy compiles it once, not per action.
_INSERT_ACTION = actions.insert()
_INSERT_HAND = hands.insert()
_UPDATE_HAND = (hands.update()
                .where(hands.c.table_id == sa.bindparam("k_table"),
                       hands.c.hand == sa.bindparam("k_hand")))
_CLOSE_TABLE = (tables.update().where(tables.c.id == sa.bindparam("k_table"))
                .values(open=False))
_encode = msgspec.json.Encoder().encode

#: Operations a :class:`Write` may hold: (kind, parameters).
_STATEMENTS = {"action": _INSERT_ACTION, "finish_hand": _UPDATE_HAND, "hand": _INSERT_HAND,
               "close": _CLOSE_TABLE, "table": tables.insert()}


@dataclass(eq=False)
class Write:
    """One change of one table, committed as a unit (with others in a batch).

    Attributes:
        key: the table id (a failed batch is retried per key).
        ops: ``(kind, params)`` in order: ``"action"`` (a ``qipai_actions``
            row), ``"finish_hand"`` (``record``, ``net``, ``k_table``,
            ``k_hand``), ``"hand"`` (a ``qipai_hands`` row), ``"close"``
            (``k_table``).
        done: called in the event loop once committed (``None``) or failed
            (the exception); not called for a cancelled write.
    """

    key: str
    ops: list[tuple[str, dict[str, Any]]]
    done: Callable[[BaseException | None], None]
    cancelled: bool = field(default=False)


def action_params(table_id: str, hand: int, seq: int, action: Any,
                  timeout: bool) -> dict[str, Any]:
    """The ``qipai_actions`` row of one action (``action`` a msgspec Struct)."""
    return dict(table_id=table_id, hand=hand, seq=seq, action=_encode(action).decode(),
                timeout=timeout)


class StoreError(QipaiError):
    """The database cannot be used (bad URL, unreachable, a failed write)."""


class DatabaseInUse(StoreError):
    """Another server holds the database (one server per database: two would
    replay and play the same tables)."""


class LockLost(StoreError):
    """The running server lost its database lock (PostgreSQL: the session
    holding the advisory lock ended, or its connection failed or stopped
    answering): another server may take the database, so this one writes
    nothing more.  Not retried: restart the server."""


class CommitUnknown(LockLost):
    """The lock is lost (:class:`LockLost`) and the connection failed during
    this batch's commit itself: the database may have taken it or not (a
    restarted server's rows show which).  Every other ``LockLost`` write
    failed before its commit was sent: certainly not taken."""


class StoreStopped(StoreError):
    """The store is closed (the server stops): a read is not made."""


class ReadsBusy(StoreError):
    """:data:`READERS` reads run and :data:`READ_WAITING` more wait for the
    database already (it is slow or not answering): this one is refused at
    once instead of queued."""


#: PostgreSQL reads (a closed table, a table's records, the latest hands,
#: a table's hand re-read after a failed write) that run at once, each in a
#: worker thread off the event loop (:class:`~qipai.host.offload.Offload`),
#: so that a read waiting for the database (a table locked by another
#: session, a hung backend) holds up no table, no connection and no ``GET
#: /health``; up to :data:`READ_WAITING` more wait their turn, and a
#: request's read beyond that is refused :class:`ReadsBusy` (the count is
#: exact: a read counts until its thread is done with it, even once its
#: request is gone).  The same for an SQLite file: a WAL read waits for no
#: writer, not even another process's ``BEGIN EXCLUSIVE``, but a lock of an
#: odd kind (another connection in ``locking_mode=EXCLUSIVE``, a recovery of
#: the WAL) would make it wait for sqlite3's busy timeout (5 s); an
#: in-memory SQLite database (one per thread) is read in the loop.
READERS = 4
READ_WAITING = 32

_T = TypeVar("_T")


def said(exc: BaseException) -> str:
    """An error in one line for a message: its class and its first line."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


@contextmanager
def _reading(what: str) -> Iterator[None]:
    """A database error of a read, as a :class:`StoreError` naming ``what``."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(f"the database did not answer the read of {what}: {said(exc)}"
                         ) from None


#: The PostgreSQL advisory lock key of a server's database (two int4: "qi", "pa").
PG_LOCK_KEY = (0x7169, 0x7061)
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


def token_hash(token: str) -> str:
    """The SHA-256 hex digest of a token (what the database keeps)."""
    return hashlib.sha256(token.encode()).hexdigest()


def engine_url(url: str) -> str:
    """``url`` with PostgreSQL's driver made psycopg 3 (``postgresql+psycopg``)."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


#: What a database URL may be (the error of any other names it).
URLS = "a database URL is sqlite:///FILE or postgresql://USER@HOST/DB"


def _check_url(url: str) -> None:
    """Refuse, before anything is opened, a URL that is not SQLite's or
    PostgreSQL's, an SQLite URI filename (``sqlite:///file:x.db?uri=true``:
    the lock beside the file would be another's), and an SQLite file whose
    folder does not exist (SQLite would not create it; it is named, not the
    lock file beside the database).

    Raises:
        StoreError: naming the URL and what is wrong with it.
    """
    try:
        u = sa.engine.make_url(engine_url(url))
    except sa.exc.ArgumentError:
        raise StoreError(f"cannot use database {url!r}: not a database URL ({URLS})") from None
    backend = u.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(f"cannot use database {url!r}: {URLS}, not {backend}") from None
    path = u.database
    if backend == "sqlite" and ((path or "").startswith("file:") or "uri" in u.query):
        # SQLite opens a URI filename as the file it names, which the server's
        # one-server lock (FILE.lock of the real path) would not see: a second
        # server on the plain path would play the same tables
        raise StoreError(f"cannot use database {url!r}: SQLite URI filenames (file:…, uri=…) "
                         f"are not taken; give the file's path: sqlite:///FILE")
    if backend != "sqlite" or not path or path == ":memory:":
        return
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        why = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise StoreError(f"cannot open the database {path}: folder {folder} {why}")


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


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")     # a killed process loses no committed write
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    # no checkpoint inside a commit (it would stall the event loop on an fsync):
    # the store's checkpointer runs them in its thread (Store._checkpoint)
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.close()


#: Seconds between two SQLite WAL checkpoints while the server writes
#: (``PRAGMA wal_checkpoint(PASSIVE)``, in the store's thread, never in the
#: event loop; SQLite's own automatic checkpoint is off).
CHECKPOINT_S = 1.0


class Store:
    """The database of one server, holding its server lock while open.

    On PostgreSQL the lock is held by the writer's own connection, the one
    every write is committed on (see the module docstring); while the
    server runs, :meth:`watch` checks it every :data:`LOCK_CHECK_S`
    seconds.  Once it is lost, :attr:`lost` is set and every write is
    refused with :class:`LockLost`; the store does not take the lock again.

    Raises:
        StoreError: the URL is not a database SQLAlchemy can open, or the
            database cannot be reached.
        DatabaseInUse: another server holds the database.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        _check_url(url)
        try:
            # PostgreSQL: a pooled connection (reads, the watchdog's check) may have
            # been ended while it waited in the pool (idle_session_timeout, a
            # restart): pinged when taken out, and replaced, so a read does not fail
            eurl = engine_url(url)
            # SQLite: the writer's connection is used in the loop and, while another
            # connection holds the write lock, in the writer's thread — never in both
            # at once (Store._in_thread); SQLAlchemy sets this itself for a file, an
            # in-memory database never leaves the loop
            kw: dict[str, Any] = ({"connect_args": {"check_same_thread": False}}
                                  if eurl.startswith("sqlite") else {})
            self.engine = sa.create_engine(eurl, future=True,
                                           pool_pre_ping=eurl.startswith("postgresql"), **kw)
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
            raise StoreError(f"cannot use database {url!r}: {exc} ({URLS})") from None
        self.dialect = self.engine.dialect.name
        if self.dialect == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        self._queue: list[Write] = []
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task | None = None
        self._pool: ThreadPoolExecutor | None = None   # the writer's thread
        #: The writer's own connection, kept open.  On PostgreSQL it is made
        #: at start and holds the server lock: never replaced (a new
        #: connection would be a session without the lock).
        self._wconn: Any = None
        self._wraw: Any = None    # PostgreSQL: its psycopg connection (one session, for good)
        self._wsession: tuple[int, Any] | None = None   # its backend (pid, backend_start)
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
        path = self.engine.url.database if self.dialect == "sqlite" else None
        # a file database (URI filenames are refused, _check_url): checkpoints to run
        self._ckpt_path = path if path and path != ":memory:" else None
        self.batches = 0          # transactions committed by the writer (statistics)
        self._lock_fd: int | None = None   # SQLite: FILE.lock (of the real path), flocked
        self._db_fd: int | None = None     # SQLite: the database file itself, flocked
        #: Set once the server lock is lost (:class:`LockLost`); every write
        #: is refused from then on.  None while the lock is held.
        self.lost: LockLost | None = None
        self._on_lost: Callable[[LockLost], None] | None = None   # given to watch()
        self._told = False        # on_lost was called
        self._watcher: asyncio.Task | None = None
        self._watch_pool: ThreadPoolExecutor | None = None
        self._reads = Offload("qipai-reader", READERS, READ_WAITING)   # PostgreSQL's reads
        try:
            self._lock()
            # the schema, under the lock (two servers starting at once never race on it)
            if self._wconn is not None:
                metadata.create_all(self._wconn)
                self._wconn.commit()
            else:
                metadata.create_all(self.engine)
        except DatabaseInUse:
            self.close()
            raise
        except sa.exc.SQLAlchemyError as exc:
            self.close()
            raise StoreError(f"cannot open database {url!r}: {said(exc)}") from None
        except BaseException:
            self.close()
            raise
        if self._wconn is not None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="qipai-writer")

    # -------------------------------------------------------------- the lock

    def _lock(self) -> None:
        """Take the database's server lock, or raise :class:`DatabaseInUse`
        naming the holder (after :data:`LOCK_WAIT_S`)."""
        end = time.monotonic() + LOCK_WAIT_S
        while True:
            holder = self._try_lock()
            if holder is None:
                return
            if time.monotonic() >= end:
                raise DatabaseInUse(f"database {self.url!r} is in use by another server "
                                    f"({holder}): one qipai serve per database")
            time.sleep(0.1)

    def _try_lock(self) -> str | None:
        """None once the lock is held, else who holds it."""
        if self.dialect == "sqlite":
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
        if self.dialect == "postgresql":
            if self._wconn is None:   # the writer's connection: the lock's session
                self._wconn = self.engine.connect()
                self._wraw = self._wconn.connection.dbapi_connection
            c = self._wconn
            got, pid, start = c.execute(_TAKE_LOCK, dict(a=PG_LOCK_KEY[0],
                                                         b=PG_LOCK_KEY[1])).one()
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
            who = c.execute(sa.text(
                "select a.application_name, a.pid, a.client_addr from pg_locks l "
                "join pg_stat_activity a on a.pid = l.pid "
                "where l.locktype = 'advisory' and l.granted and l.classid = :a "
                "and l.objid = :b and l.objsubid = 2 and l.database = "
                "(select oid from pg_database where datname = current_database())"),
                dict(a=PG_LOCK_KEY[0], b=PG_LOCK_KEY[1])).first()
            c.rollback()
            if who is None:
                return "unknown"
            return f"{who[0] or 'a client'}; PostgreSQL backend pid {who[1]}" + \
                (f" from {who[2]}" if who[2] else "")
        return None  # another database: no lock (not a supported URL)

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
                    held = c.execute(_LOCK_HELD, dict(pid=pid, start=start, a=PG_LOCK_KEY[0],
                                                      b=PG_LOCK_KEY[1])).scalar()
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

    def close(self, abandon: bool = False) -> None:
        """Stop the watchdog and the writer, close the writer's session (the
        lock goes with it) and the pool.  A check or a read in flight is not
        waited for, nor, once the store is lost (or ``abandon``: the
        server's shutdown gave up waiting), a batch or a new table's write
        in flight: on a database that stopped answering either may never
        return (the process's end ends their sessions)."""
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self._watch_pool is not None:
            self._watch_pool.shutdown(wait=False)
            self._watch_pool = None
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None
        self._reads.close()
        stuck = (self.lost is not None or abandon) and len(self._writing) > 0
        if self._pool is not None:
            if self._ckpt_conn is not None:
                self._pool.submit(self._ckpt_close)
            self._pool.submit(self._release)   # after the batch in flight, if any
            self._pool.shutdown(wait=not stuck)
            self._pool = None
        if not stuck:   # (else the writer's thread may still use its connection)
            self._release()
        if self._lock_fd is not None:
            os.close(self._lock_fd)       # the flock goes with the descriptor
            self._lock_fd = None
        self.engine.dispose()
        if self._db_fd is not None:
            # after SQLite's connections are closed: closing a descriptor of the
            # file drops every POSIX lock the process holds on it, SQLite's too
            os.close(self._db_fd)
            self._db_fd = None

    # -------------------------------------------------------------- group commit

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

    def waiting(self) -> tuple[float, str] | None:
        """The oldest wait for the database now — ``(time.monotonic() when
        it began, what)``, ``what`` being ``"a write"`` (the batch being
        committed), ``"a new table's write"`` or ``"a read"`` — or None when
        nothing waits.  (A write or read that waits for the database does so
        in a worker thread — PostgreSQL's always, an SQLite file's once the
        loop's attempt found another connection's lock — so the loop can
        ask while it waits.)"""
        return min(filter(None, (self._writing.oldest(), self._reads.waits.oldest())),
                   default=None)

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
            t0 = trace.perf_counter() if trace.ON else 0.0
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
            if trace.ON:
                trace.batch(t0, trace.perf_counter() - t0, len(batch))
            self.batches += 1
            self._tell()   # the writer found the lock lost: the server halts first
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
                self._transaction(batch)
                return {}
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
                self._transaction(writes)
            except CommitUnknown as exc:   # these may be in
                failed[key] = exc
            except Exception as exc:  # noqa: BLE001 - that table's writes fail
                failed[key] = self.lost if self.lost is not None else exc
        if self.lost is not None:
            self._release()
        return failed

    def _transaction(self, writes: list[Write], wait: bool = True) -> None:
        """One transaction of ``writes`` on the writer's connection.  On
        PostgreSQL it commits only on the session holding the server lock:
        checked before the first statement and before the commit (no
        statement added); a connection that failed (not that session any
        more) loses the store and raises :class:`LockLost`.  On SQLite,
        ``wait``: for a lock another connection holds, up to
        :data:`SQLITE_LOCK_WAIT_MS` (a worker thread's); not ``wait`` (the
        loop's): for none — another connection's lock raises :class:`_Busy`
        at once, the transaction rolled back (nothing written).  Else the
        database's error (SQLAlchemy's), the transaction rolled back."""
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
            with c.begin():
                self._still_locked(c)
                run: list[dict[str, Any]] = []   # consecutive action rows: one executemany
                for w in writes:
                    for kind, params in w.ops:
                        if kind == "action":
                            run.append(params)
                            continue
                        if run:
                            c.execute(_INSERT_ACTION, run)
                            run = []
                        c.execute(_STATEMENTS[kind], params)
                if run:
                    c.execute(_INSERT_ACTION, run)
                self._still_locked(c)   # the commit is sent on the lock's session
                committing = True       # leaving the block sends it
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

    # -------------------------------------------------------------- writes

    def create_table(self, row: dict[str, Any], first_hand: dict[str, Any]) -> None:
        """Insert a table and its first hand (one transaction, on the
        writer's connection: on PostgreSQL in the writer's thread, after the
        batch in flight; on SQLite in the caller's, waiting for a lock
        another connection holds — not while the loop writes), waiting for
        it — outside the event loop; in the loop, :meth:`create_table_async`.
        It counts in :meth:`waiting` while it waits.

        Raises:
            LockLost: the server lock is lost (nothing is written).
            StoreError: the database did not take it."""
        w = self._table_write(row, first_hand)
        key = self._writing.begin("a new table's write")
        try:
            with self._creating():
                if self._pool is not None and self.dialect == "postgresql":
                    self._pool.submit(self._commit_one, w).result()
                else:
                    self._transaction([w])
        finally:
            self._writing.end(key)

    async def create_table_async(self, row: dict[str, Any], first_hand: dict[str, Any]) -> None:
        """:meth:`create_table` from the event loop, which it does not block:
        on PostgreSQL the loop awaits the writer's thread (a database that
        does not answer holds up this request, not the loop; it counts in
        :meth:`waiting`, and :meth:`close` does not wait for it once the
        store is lost).  An SQLite file's write is made in the loop, as a
        batch is, waiting for no lock; when another connection holds the
        write lock, or the writer's thread has a write of its own, in the
        writer's thread instead (behind it), as PostgreSQL's.  Same errors."""
        w = self._table_write(row, first_hand)
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

    def _table_write(self, row: dict[str, Any], first_hand: dict[str, Any]) -> Write:
        if self.lost is not None:
            raise LockLost(str(self.lost))
        return Write(row.get("id", ""), [("table", row), ("hand", first_hand)], lambda exc: None)

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

    # -------------------------------------------------------------- reads
    #
    # Each read raises StoreError when the database fails it.  They block:
    # from the event loop, call them through read().

    async def read(self, fn: Callable[..., _T], *args: Any, capped: bool = True) -> _T:
        """``fn(*args)`` — one of this store's reads — from the event loop
        without blocking it: in a worker thread (:data:`READERS` at once,
        counted in :meth:`waiting`) — on PostgreSQL and on an SQLite file;
        an in-memory SQLite database is read in the loop.  ``capped=False``:
        never refused :class:`ReadsBusy` (a read the server needs, such as a
        hand re-read after a failed write).

        Raises:
            ReadsBusy: :data:`READERS` reads run and :data:`READ_WAITING`
                wait already.
            StoreStopped: the store is closed (the server stops).
            StoreError: the database failed the read."""
        if self.dialect != "postgresql" and not self._offloop:
            return fn(*args)
        try:
            return await self._reads.run(fn, *args, what="a read", capped=capped)
        except Stopped:
            raise StoreStopped("the server is stopping: the read was not made") from None
        except Crowded:
            raise ReadsBusy(f"{READERS} reads run and {READ_WAITING} wait for the database "
                            f"already: it is slow or not answering; try again shortly") from None

    def open_tables(self) -> list[dict[str, Any]]:
        with _reading("the open tables"), self.engine.connect() as c:
            rows = c.execute(sa.select(tables).where(tables.c.open == sa.true())
                             .order_by(tables.c.created, tables.c.id)).mappings()
            return [dict(r) for r in rows]

    def table(self, table_id: str) -> dict[str, Any] | None:
        with _reading(f"table {table_id}"), self.engine.connect() as c:
            r = c.execute(sa.select(tables).where(tables.c.id == table_id)).mappings().first()
            return dict(r) if r is not None else None

    def hands_of(self, table_id: str) -> list[dict[str, Any]]:
        with _reading(f"the hands of table {table_id}"), self.engine.connect() as c:
            rows = c.execute(sa.select(hands).where(hands.c.table_id == table_id)
                             .order_by(hands.c.hand)).mappings()
            return [dict(r) for r in rows]

    def nets_of(self, table_id: str) -> list[Any]:
        """The stored ``net`` (JSON text) of each finished hand of the
        table, in hand order — not the records (``GET /tables/{id}`` of a
        table the server does not hold adds them up)."""
        with _reading(f"the hands of table {table_id}"), self.engine.connect() as c:
            rows = c.execute(sa.select(hands.c.net).where(hands.c.table_id == table_id,
                                                          hands.c.net.is_not(None))
                             .order_by(hands.c.hand))
            return [r[0] for r in rows]

    def actions_of(self, table_id: str, hand: int) -> list[dict[str, Any]]:
        with _reading(f"the actions of table {table_id} hand {hand}"), \
                self.engine.connect() as c:
            rows = c.execute(sa.select(actions).where(actions.c.table_id == table_id,
                                                      actions.c.hand == hand)
                             .order_by(actions.c.seq)).mappings()
            return [dict(r) for r in rows]

    def finished_hands(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest ``limit`` finished hands of every table, newest table
        first: ``table_id``, ``hand``, ``spec``, ``variant``, ``net`` (JSON)."""
        with _reading("the latest finished hands"), self.engine.connect() as c:
            rows = c.execute(
                sa.select(hands.c.table_id, hands.c.hand, hands.c.net, tables.c.spec,
                          tables.c.variant)
                .join(tables, tables.c.id == hands.c.table_id)
                .where(hands.c.net.is_not(None))
                .order_by(tables.c.created.desc(), hands.c.table_id, hands.c.hand.desc())
                .limit(limit)).mappings()
            return [dict(r) for r in rows]
