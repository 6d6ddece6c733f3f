"""The store's reads: each blocks; from the event loop, through
:meth:`Reads.read` (worker threads, capped)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

from qipai.host.offload import Crowded, Stopped
from qipai.host.store.errors import ReadsBusy, StoreError, StoreStopped, said
from qipai.host.store.schema import actions, events, hands, seat_values, tables

_T = TypeVar("_T")

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


@contextmanager
def _reading(what: str) -> Iterator[None]:
    """A database error of a read, as a :class:`StoreError` naming ``what``."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(f"the database did not answer the read of {what}: {said(exc)}"
                         ) from None



class Reads:
    """(A part of :class:`~qipai.host.store.Store`.)  Each read raises
    :class:`~qipai.host.store.errors.StoreError` when the database fails
    it.  They block: from the event loop, call them through :meth:`read`."""

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

    def ping(self) -> None:
        """The most trivial read (``select 1``): whether the database answers."""
        with _reading("a ping"), self.engine.connect() as c:
            c.execute(sa.text("select 1"))

    def table(self, table_id: str) -> dict[str, Any] | None:
        with _reading(f"table {table_id}"), self.engine.connect() as c:
            r = c.execute(sa.select(tables).where(tables.c.id == table_id)).mappings().first()
            return dict(r) if r is not None else None

    def hands_of(self, table_id: str) -> list[dict[str, Any]]:
        with _reading(f"the hands of table {table_id}"), self.engine.connect() as c:
            rows = c.execute(sa.select(hands).where(hands.c.table_id == table_id)
                             .order_by(hands.c.hand)).mappings()
            return [dict(r) for r in rows]

    def seat_values_of(self, table_id: str, hand: int) -> list[dict[str, Any]]:
        """The ``qipai_seat_values`` rows of a hand (``seat``, ``commitment``,
        ``value``), by seat."""
        with _reading(f"the seat values of table {table_id} hand {hand}"), \
                self.engine.connect() as c:
            rows = c.execute(sa.select(seat_values).where(seat_values.c.table_id == table_id,
                                                          seat_values.c.hand == hand)
                             .order_by(seat_values.c.seat)).mappings()
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

    def money_of(self, table_id: str) -> list[Any]:
        """The stored ``money`` (JSON text ``{"net", "house"}``) of each
        finished hand of a table with a stake, in hand order (``GET
        /tables/{id}`` of a table the server does not hold adds them up)."""
        with _reading(f"the hands of table {table_id}"), self.engine.connect() as c:
            rows = c.execute(sa.select(hands.c.money).where(hands.c.table_id == table_id,
                                                            hands.c.money.is_not(None))
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
        first: ``table_id``, ``hand``, ``spec``, ``variant``, ``net`` (JSON),
        ``players`` (JSON, or None: the table's named players)."""
        with _reading("the latest finished hands"), self.engine.connect() as c:
            rows = c.execute(
                sa.select(hands.c.table_id, hands.c.hand, hands.c.net, tables.c.spec,
                          tables.c.variant, tables.c.players)
                .join(tables, tables.c.id == hands.c.table_id)
                .where(hands.c.net.is_not(None))
                .order_by(tables.c.created.desc(), hands.c.table_id, hands.c.hand.desc())
                .limit(limit)).mappings()
            return [dict(r) for r in rows]

    def open_elsewhere(self, node: str, limit: int) -> list[dict[str, Any]]:
        """(A cluster node: ``GET /tables``.)  At most ``limit`` open tables
        other nodes serve, oldest first: each table row with ``hand_rows``,
        its hands' ``(hand, net, commitment)`` in hand order."""
        with _reading("the other nodes' open tables"), self.engine.connect() as c:
            rows = [dict(r) for r in c.execute(
                sa.select(tables).where(tables.c.open == sa.true(),
                                        sa.or_(tables.c.owner.is_(None), tables.c.owner != node))
                .order_by(tables.c.created, tables.c.id).limit(limit)).mappings()]
            by_id: dict[str, list[Any]] = {r["id"]: [] for r in rows}
            if by_id:
                for h in c.execute(sa.select(hands.c.table_id, hands.c.hand, hands.c.net,
                                             hands.c.commitment)
                                   .where(hands.c.table_id.in_(list(by_id)))
                                   .order_by(hands.c.table_id, hands.c.hand)):
                    by_id[h[0]].append((h[1], h[2], h[3]))
            for r in rows:
                r["hand_rows"] = by_id[r["id"]]
            return rows

    def closed_before(self, cutoff: float, limit: int) -> list[str]:
        """The ids of at most ``limit`` closed tables closed before
        ``cutoff`` (``time.time()``; a table closed before the ``closed``
        column existed counts from its creation), oldest first — a cluster
        node's own only (each node prunes what it closed)."""
        when = sa.func.coalesce(tables.c.closed, tables.c.created)
        q = sa.select(tables.c.id).where(tables.c.open == sa.false(), when < cutoff)
        if self.node is not None:   # type: ignore[attr-defined]
            q = q.where(tables.c.owner == self.node)   # type: ignore[attr-defined]
        with _reading("the closed tables"), self.engine.connect() as c:
            rows = c.execute(q.order_by(when, tables.c.id).limit(limit))
            return [r[0] for r in rows]

    # ------------------------------------------------------------ events

    def event_heads(self, now: float, limit: int, keys: list[str] | None = None
                    ) -> tuple[list[dict[str, Any]], float | None]:
        """(The webhook's deliverer.)  The first undelivered event of each
        table (a table's later events wait behind it, even a dead one), of
        those not dead and due (``next_try`` ≤ ``now``): at most ``limit``,
        oldest first; and the earliest ``next_try`` of the heads not due yet
        (None: none).  ``keys``: only the tables of these operator keys
        (those with a webhook of their own, when the server has none);
        None: every table."""
        pending = _routed(events.c.delivered.is_(None), keys)
        if self.node is not None:   # type: ignore[attr-defined]
            # a cluster: a table's events are delivered by its node (its owner's
            # deliverer, in order; a takeover takes them over with the table)
            pending = sa.and_(pending, events.c.table_id.in_(
                sa.select(tables.c.id).where(tables.c.owner == self.node)))  # type: ignore[attr-defined]
        heads = (sa.select(events.c.table_id, sa.func.min(events.c.id).label("id"))
                 .where(pending).group_by(events.c.table_id)
                 .subquery())
        base = (sa.select(events).join(heads, heads.c.id == events.c.id)
                .where(events.c.dead == sa.false()))
        with _reading("the events to deliver"), self.engine.connect() as c:
            rows = [dict(r) for r in c.execute(
                base.where(events.c.next_try <= now).order_by(events.c.id).limit(limit)
            ).mappings()]
            later = c.execute(sa.select(sa.func.min(events.c.next_try))
                              .select_from(events.join(heads, heads.c.id == events.c.id))
                              .where(events.c.dead == sa.false(), events.c.next_try > now)
                              ).scalar()
        return rows, later

    def events_after(self, after: int, key_name: str | None, limit: int,
                     everyone: bool = False) -> list[dict[str, Any]]:
        """(``GET /events``.)  At most ``limit`` events with an id above
        ``after``, in id order: those of ``key_name``'s tables — or of every
        table, ``everyone``."""
        q = sa.select(events).where(events.c.id > after)
        if not everyone:
            q = q.where(events.c.key_name == key_name)
        with _reading("the events"), self.engine.connect() as c:
            return [dict(r) for r in c.execute(q.order_by(events.c.id).limit(limit)).mappings()]

    def dead_events(self, limit: int) -> list[dict[str, Any]]:
        """(``GET /admin/events?dead=1``.)  At most ``limit`` dead events, oldest first."""
        with _reading("the dead events"), self.engine.connect() as c:
            return [dict(r) for r in c.execute(
                sa.select(events).where(events.c.dead == sa.true(),
                                        events.c.delivered.is_(None))
                .order_by(events.c.id).limit(limit)).mappings()]

    def event_counts(self, keys: list[str] | None = None) -> tuple[int, int]:
        """``(pending, dead)``: events not delivered yet, not dead; dead ones
        (``keys``: of these operator keys' tables only, as :meth:`event_heads`)."""
        with _reading("the event counts"), self.engine.connect() as c:
            rows = c.execute(sa.select(events.c.dead, sa.func.count())
                             .where(_routed(events.c.delivered.is_(None), keys))
                             .group_by(events.c.dead)).all()
        counts = {bool(d): n for d, n in rows}
        return counts.get(False, 0), counts.get(True, 0)


def _routed(where: Any, keys: list[str] | None) -> Any:
    """``where``, and of the tables of the operator keys ``keys`` (None: any table)."""
    return where if keys is None else sa.and_(where, events.c.key_name.in_(keys))
