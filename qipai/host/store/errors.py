"""The store's errors: every one a :class:`StoreError` (a
:class:`~qipai.core.errors.QipaiError`)."""

from __future__ import annotations

from qipai.core.errors import QipaiError


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


class TableMoved(StoreError):
    """(A cluster.)  The table is no longer this node's at the epoch it
    holds: another node took it over, or this node handed it on.  A write
    of it found so (the batch's fence) wrote nothing of that table; the
    node drops the table and tells its clients ``moved``."""

    def __init__(self, table: str, owner: str | None, epoch: int | None) -> None:
        super().__init__(f"table {table} is served by node {owner} now (epoch {epoch})")
        self.table, self.owner, self.epoch = table, owner, epoch


class StoreStopped(StoreError):
    """The store is closed (the server stops): a read is not made."""


class ReadsBusy(StoreError):
    """:data:`READERS` reads run and :data:`READ_WAITING` more wait for the
    database already (it is slow or not answering): this one is refused at
    once instead of queued."""



def said(exc: BaseException) -> str:
    """An error in one line for a message: its class and its first line."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"

