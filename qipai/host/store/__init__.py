"""The server's database (SQLite or PostgreSQL, SQLAlchemy Core), in rooms:

* :mod:`~qipai.host.store.schema` — the three tables and a :class:`Write`;
* :mod:`~qipai.host.store.lock` — one server per database (the server lock),
  or one lock per node of a cluster;
* :mod:`~qipai.host.store.fence` — a cluster's fence: each batch writes only
  the tables this node still owns at the epoch it holds;
* :mod:`~qipai.host.store.writer` — group commit, durability;
* :mod:`~qipai.host.store.reads` — reads off the event loop;
* :mod:`~qipai.host.store.errors` — :class:`StoreError` and its kinds.

:class:`Store` is one server's open database: all of them at once.
URLs: ``sqlite:///FILE`` (the default, ``sqlite:///qipai.db``) or
``postgresql://…`` (psycopg 3).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa

from qipai.host.offload import Offload
from qipai.host.store.errors import (
    CommitUnknown, DatabaseInUse, LockLost, ReadsBusy, StoreError, StoreStopped, TableMoved,
    said,
)
from qipai.host.store.fence import Fences
from qipai.host.store.lock import (
    KEEPALIVE_COUNT, KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, LOCK_ANSWER_S, LOCK_CHECK_S,
    CLUSTER_LOCK_CLASS, LOCK_WAIT_S, NODE_LOCK_CLASS, PG_LOCK_KEY, ServerLock, node_lock_key,
)
from qipai.host.store.reads import READ_WAITING, READERS, Reads
from qipai.host.store.schema import (
    Write, action_params, actions, event_params, events, hands, metadata, nodes, tables,
    token_hash, upgrade,
)
from qipai.host.store.writer import CHECKPOINT_S, SQLITE_LOCK_WAIT_MS, GroupCommit

__all__ = [
    "CHECKPOINT_S", "KEEPALIVE_COUNT", "KEEPALIVE_IDLE_S", "KEEPALIVE_INTERVAL_S",
    "LOCK_ANSWER_S", "LOCK_CHECK_S", "LOCK_WAIT_S", "PG_LOCK_KEY", "READERS", "READ_WAITING",
    "SQLITE_LOCK_WAIT_MS", "URLS", "CommitUnknown", "DatabaseInUse", "LockLost", "ReadsBusy",
    "CLUSTER_LOCK_CLASS", "NODE_LOCK_CLASS", "Store", "StoreError", "StoreStopped", "TableMoved", "Write",
    "node_lock_key", "nodes", "action_params", "actions", "engine_url",
    "event_params", "events",
    "hands", "metadata", "said", "tables", "token_hash",
]

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


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")     # a killed process loses no committed write
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    # no checkpoint inside a commit (it would stall the event loop on an fsync):
    # the store's checkpointer runs them in its thread (Store._checkpoint)
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.close()



class Store(ServerLock, Fences, GroupCommit, Reads):
    """The database of one server, holding its server lock while open.

    On PostgreSQL the lock is held by the writer's own connection, the one
    every write is committed on (see :mod:`qipai.host.store.lock`); while the
    server runs, :meth:`watch` checks it every :data:`LOCK_CHECK_S`
    seconds.  Once it is lost, :attr:`lost` is set and every write is
    refused with :class:`LockLost`; the store does not take the lock again.

    Raises:
        StoreError: the URL is not a database SQLAlchemy can open, or the
            database cannot be reached.
        DatabaseInUse: another server holds the database.
    """

    def __init__(self, url: str, node: str | None = None) -> None:
        self.url = url
        #: A cluster node's id (``qipai serve --cluster``; PostgreSQL only);
        #: None: the one server of its database.
        self.node = node
        _check_url(url)
        if node is not None and not engine_url(url).startswith("postgresql"):
            raise StoreError(f"cannot use database {url!r} for a cluster: the nodes of a "
                             f"cluster share one PostgreSQL database (postgresql://…)")
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
        #: the ``table.column`` names an older database gained when opened
        self.upgraded: list[str] = []
        if self.dialect == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        self._init_writer()
        self._init_lock()
        self._init_fences()
        self._reads = Offload("qipai-reader", READERS, READ_WAITING)   # PostgreSQL's reads
        try:
            self._lock()
            # the schema, under the lock (two servers starting at once never race on it)
            if self._wconn is not None:
                if self.node is not None:   # the nodes of a cluster share it: one at a time
                    self._wconn.execute(sa.text("select pg_advisory_xact_lock(:a, :b)"),
                                        dict(a=CLUSTER_LOCK_CLASS, b=1))
                metadata.create_all(self._wconn)
                self.upgraded = upgrade(self._wconn)
                self._wconn.commit()
            else:
                with self.engine.begin() as conn:
                    metadata.create_all(conn)
                    self.upgraded = upgrade(conn)
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

