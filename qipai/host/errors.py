"""What a hosted table refuses, and the words clients are told when it stops."""

from __future__ import annotations

from qipai.core.errors import QipaiError

#: What a client is told once the server lock is lost.  The reason (the
#: database's own words, which may name its host and user) goes to the
#: server's log only (:meth:`~qipai.server.state.Server.lock_lost`).
LOCK_LOST = ("the server lost its database lock (the server's log says why): another server "
             "may take the database, so this one takes no action and writes nothing any "
             "more; restart it")
#: What an ``act`` is told whose write failed with the lock's connection
#: during its commit itself (:class:`~qipai.host.store.CommitUnknown`):
#: whether the database took it is not known (a restarted server shows which).
IN_FLIGHT_LOST = ("not acknowledged: the server lost its database lock during this action's "
                  "commit, so whether the database took it is not known (a restarted "
                  "server's welcome shows which). " + LOCK_LOST)
#: What an ``act`` is told whose write failed with the lock lost before its
#: commit was sent (waiting in the queue, or on a statement): not taken.
NOT_TAKEN_LOST = "not applied: " + LOCK_LOST
#: What ``act`` and ``play`` are refused while a table re-reads its hand.
REREADING = ("table {id} is reading its hand back from the database after a failed write; "
             "try again shortly")


class DamagedTable(QipaiError):
    """A table's stored rows do not read or replay (the database is
    damaged): its message says where (hand, action) and what kind of error,
    which clients may be told; :attr:`detail` is the error's own words for
    the server's log only — an illegal action's reason may name a card a
    seat holds or does not hold."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


class Refused(Exception):
    """A client message refused with ``code`` (an :data:`~qipai.host.protocol.ErrorCode`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
