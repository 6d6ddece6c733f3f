"""A cluster's fence: a batch writes only the tables this node owns.

Each table of a cluster (``qipai serve --cluster``, :mod:`qipai.server.cluster`)
has an ``owner`` node and an ``epoch``, +1 at every move (a takeover, a
drain's handoff).  A node keeps the epoch it holds of each of its tables
(:attr:`Fences.fences`); each write transaction of the group commit first
reads the ``owner`` and ``epoch`` of the tables it writes, under a shared row
lock (``SELECT … FOR SHARE``: one statement per batch, whatever its size),
and writes nothing of a table that is no longer this node's at that epoch —
those writes fail with :class:`~qipai.host.store.errors.TableMoved`, the
others commit.  The lock holds until the batch commits: a move (an
``UPDATE`` of those rows) waits for the batch, and a batch that comes after
a move sees it.  So a table's log is written by one node per epoch, and the
primary key ``(table, hand, seq)`` keeps it linear whatever happens.

A dead node's batch cannot commit at all (its session, which held its node
lock, is gone — that is how the survivors know it is dead), so the fence
is what keeps a *live* node from writing a table it no longer owns: one that
handed it on, or one whose view of its tables is stale.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from qipai.host.store.errors import TableMoved
from qipai.host.store.schema import Write, tables

_FENCE = (sa.select(tables.c.id, tables.c.owner, tables.c.epoch)
          .where(tables.c.id.in_(sa.bindparam("ids", expanding=True)))
          .order_by(tables.c.id)
          .with_for_update(read=True))


#: The events lock of a cluster (:meth:`Fences.events_in_order`).
_EVENTS_LOCK = sa.text("select pg_advisory_xact_lock(29027, 2)")   # (CLUSTER_LOCK_CLASS, 2)


class Fences:
    """(A part of :class:`~qipai.host.store.Store`.)  The epochs this node
    holds, and the batch's check of them."""

    def _init_fences(self) -> None:
        #: (A cluster node.)  Table id → the epoch this node holds of it; a
        #: table absent is not fenced (a new table's first write, the
        #: server's own writes).  Changed in the event loop only.
        self.fences: dict[str, int] = {}
        #: Batches whose fence found a moved table (statistics).
        self.fenced_off = 0

    def events_in_order(self, c: Any, writes: list[Write]) -> None:
        """(A cluster node, inside a write transaction, before its first
        write.)  If the batch inserts events, take the cluster's events lock
        (a transaction lock, to the commit): the nodes' event ids then commit
        in increasing order, as one server's do, so ``GET /events?after=ID``
        never skips one committed later under a lower id."""
        if self.node is None:   # type: ignore[attr-defined]
            return
        if any(kind == "event" for w in writes for kind, _ in w.ops):
            c.execute(_EVENTS_LOCK)

    def fenced(self, c: Any, writes: list[Write]) -> dict[str, TableMoved]:
        """(Inside a write transaction, before its first write.)  The tables
        of ``writes`` this node no longer owns at the epoch it holds, each
        with its :class:`TableMoved` — read under a shared row lock held to
        the commit.  Nothing is read outside a cluster or when no write's
        table is fenced."""
        if self.node is None:   # type: ignore[attr-defined]
            return {}
        fences = self.fences
        ids = {w.key for w in writes if w.key in fences}
        if not ids:
            return {}
        found = {r[0]: (r[1], r[2]) for r in c.execute(_FENCE, {"ids": sorted(ids)})}
        moved: dict[str, TableMoved] = {}
        for tid in ids:
            owner, epoch = found.get(tid, (None, None))
            if owner != self.node or epoch != fences.get(tid):   # type: ignore[attr-defined]
                moved[tid] = TableMoved(tid, owner, epoch)
        if moved:
            self.fenced_off += 1
        return moved
