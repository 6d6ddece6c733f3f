"""``qipai serve --cluster``: many server processes (nodes) on one PostgreSQL.

Every node serves its own tables, committing each action before its ``ack``
as one server does; PostgreSQL is the only thing the nodes share — no
consensus of our own, no broker, and nothing crosses between nodes per
action.  (docs: "Run a cluster".)

* **Nodes.**  A node holds the database's server lock *shared* (no server
  outside the cluster starts beside it) and its own node lock
  (:func:`~qipai.host.store.node_lock_key`) exclusively, both on its
  writer's session, the one every write of it commits on; and a row of
  ``qipai_nodes`` (its id, the address its clients reach it at).  A second
  node with a live node's id is refused at start.
* **Ownership.**  Each table has an ``owner`` node and an ``epoch``.  A node
  plays only its own tables; a new table is the node's that was asked.
* **Takeover.**  Every :data:`SWEEP_S` seconds each node sweeps, in one
  transaction under a cluster-wide transaction lock: a node whose row is
  there but whose node lock is free is dead (PostgreSQL frees a session's
  locks when the session ends: a process killed, a connection cut); its row
  is deleted and its open tables — and any open table whose owner is no
  node's (made outside a cluster, or a node stopped for good) — become the
  sweeper's at ``epoch + 1``; it rebuilds each from the database as at a
  restart (the pending decisions offered again, fresh deadlines) and serves it.
* **Fencing.**  Each batch of a node's group commit reads its tables' owner
  and epoch under a shared row lock and writes nothing of a table that is not
  the node's at the epoch it holds (:mod:`qipai.host.store.fence`): that
  table is dropped and its clients are told ``moved``.  The primary key
  ``(table, hand, seq)`` keeps each table's log linear whatever happens.
* **Routing.**  Any node answers ``GET /tables/{id}`` (its ``node`` and
  ``address``); a WebSocket that reaches a node that does not serve the
  table is sent ``moved`` (the owner's address) and closed (4307); the page
  and ``qipai connect`` reconnect there.  A table handed on is announced to
  its new owner with ``NOTIFY`` (the only cross-node message), and found
  by its sweep anyway.
* **Drain.**  SIGTERM: the node takes no new table, hands each of its tables
  to the least loaded live peer between two actions (its clock and bots stop,
  its writes so far commit, then the move is one more write of the same
  group commit, conditional on the epoch), tells their clients ``moved``, and
  exits once it owns nothing.  A hand goes on at the peer: a rolling restart
  ends none.  With no live peer the tables stay the node's (its restart, or a
  peer's sweep, serves them).
* **Events** (the outbox) of a table are delivered by its owner; a takeover
  takes over the undelivered ones with the table.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from qipai.core.errors import QipaiError
from qipai.host import protocol as P
from qipai.host.offload import Crowded, Stopped
from qipai.host.store import (
    CLUSTER_LOCK_CLASS, StoreError, TableMoved, Write, node_lock_key, nodes, said, tables,
)

if TYPE_CHECKING:
    from qipai.host.match import HostedTable
    from qipai.server.state import Server

#: Seconds between two sweeps of a node (takeover of dead nodes' tables,
#: adoption of tables handed to it): a takeover begins within this long of
#: PostgreSQL freeing the dead node's lock.
SWEEP_S = 0.5
#: The cluster-wide transaction lock every sweep and every node's joining
#: take first (two int4), so no two of them move the same tables at once
#: (a class of its own: no node's lock key can be it).
SWEEP_LOCK = (CLUSTER_LOCK_CLASS, 0)
#: A sweep takes the closed tables no node owns (their undelivered events,
#: their prune) once every this many sweeps, and whenever it finds a node dead.
CLOSED_EVERY = 120
#: The ``NOTIFY`` channel of a cluster's control messages (``adopt NODE TABLE``).
CHANNEL = "qipai_cluster"
#: The close code of a WebSocket told ``moved``.
CLOSE_MOVED = 4307
#: Seconds a drain waits for its handoffs before the node exits anyway
#: (a table not handed on stays the node's: a peer's sweep takes it).
DRAIN_S = 20.0

_OWNED_OPEN = sa.select(tables.c.id).where(tables.c.owner == sa.bindparam("me"),
                                           tables.c.open == sa.true())


def default_node_id(host: str, port: int) -> str:
    """The id of a node started without ``--node-id``: ``HOSTNAME:PORT``
    (the machine's name, the port it listens on)."""
    return f"{socket.gethostname()}:{port}"


class Cluster:
    """This node of a cluster (``Server.cluster``).

    Args:
        server: the node's server (its store opened with ``node=node_id``).
        address: the URL its clients reach it at (``--advertise``), without
            a trailing ``/``.
    """

    def __init__(self, server: Server, address: str) -> None:
        self.server = server
        self.store = server.store
        self.node: str = server.store.node   # type: ignore[assignment]
        self.address = address.rstrip("/")
        #: the live nodes' addresses as the last sweep read them (id → URL)
        self.addresses: dict[str, str] = {self.node: self.address}
        self.draining = False
        #: tables being handed on now (id → set once the table is dropped here)
        self.leaving: dict[str, asyncio.Event] = {}
        #: tables being adopted now (id → the task), so one is adopted once
        self._adopting: dict[str, asyncio.Task] = {}
        #: rulesets being loaded for adoptions (spec → the load), one per spec
        self._loading: dict[str, asyncio.Future] = {}
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="qipai-cluster")
        self._sweeper: asyncio.Task | None = None
        self._sweeps = 0
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        #: tables taken over from dead nodes, handed on, adopted (statistics, /metrics)
        self.taken_over = 0
        self.handed_off = 0
        self.adopted = 0

    # ------------------------------------------------------------ joining

    def join(self) -> list[dict[str, Any]]:
        """(Blocking; the server's start-up, once the node lock is held.)
        Write this node's row, make the open tables this node owned (an
        earlier run of it) and those no node owns this node's at ``epoch +
        1``; answers their rows, to be restored.

        Raises:
            StoreError: the database failed."""
        try:
            with self.store.engine.begin() as c:
                # (nodes starting at once: one at a time, or both would create it)
                c.execute(sa.text("select pg_advisory_xact_lock(:a, :b)"),
                          dict(a=SWEEP_LOCK[0], b=SWEEP_LOCK[1]))
                c.execute(sa.text("create index if not exists qipai_tables_owner "
                                  "on qipai_tables (owner) where open"))
            with self.store.engine.begin() as c:
                c.execute(sa.text("select pg_advisory_xact_lock(:a, :b)"),
                          dict(a=SWEEP_LOCK[0], b=SWEEP_LOCK[1]))
                c.execute(nodes.delete().where(nodes.c.id == self.node))
                now = c.execute(sa.text("select extract(epoch from now())")).scalar()
                c.execute(nodes.insert().values(id=self.node, address=self.address,
                                                started=float(now), draining=False,
                                                pid=os.getpid(), host=socket.gethostname()))
                claimed = self._claim(c, mine=True)
                rows = [dict(r) for r in c.execute(
                    sa.select(tables).where(tables.c.id.in_(list(claimed)))
                    .order_by(tables.c.created, tables.c.id)).mappings()] if claimed else []
                self._read_addresses(c)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot join the cluster: {said(exc)}") from None
        return rows

    def _claim(self, c: Any, mine: bool = False) -> dict[str, int]:
        """(In a sweep's or the join's transaction, under :data:`SWEEP_LOCK`.)
        Make the open tables no node owns — and, ``mine``, those this node's
        id owns — this node's at ``epoch + 1``; answers id → new epoch."""
        # (this node's row is in: its own tables are never orphans)
        orphan = sa.or_(tables.c.owner.is_(None),
                        tables.c.owner.not_in(sa.select(nodes.c.id)))
        if mine:
            orphan = sa.or_(orphan, tables.c.owner == self.node)
        q = (tables.update().where(tables.c.open == sa.true(), orphan)
             .values(owner=self.node, epoch=sa.func.coalesce(tables.c.epoch, 0) + 1)
             .returning(tables.c.id, tables.c.epoch))
        return {r[0]: r[1] for r in c.execute(q)}

    def _read_addresses(self, c: Any) -> None:
        self.addresses = {r[0]: r[1] for r in c.execute(sa.select(nodes.c.id, nodes.c.address))}
        self.addresses[self.node] = self.address

    # ------------------------------------------------------------ running

    def start(self) -> None:
        """(The app's start, in the loop.)  The sweeps and the listener."""
        loop = asyncio.get_running_loop()
        self._sweeper = loop.create_task(self._sweep_loop())
        self._listener = threading.Thread(target=self._listen, args=(loop,), daemon=True,
                                          name="qipai-cluster-listen")
        self._listener.start()

    async def stop(self, leave: bool = True) -> None:
        """(The app's end.)  Stop sweeping and listening; ``leave``: delete
        this node's row (its tables, if it still owns any, are then no
        node's: a peer's next sweep takes them)."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        for task in list(self._adopting.values()):
            task.cancel()
        if leave and self.store.lost is None:
            try:
                await asyncio.get_running_loop().run_in_executor(self._pool, self._leave)
            except Exception as exc:  # noqa: BLE001 - its lock goes with the process anyway
                self.server.log(f"cluster: this node's row was not deleted: {said(exc)}")
        self._pool.shutdown(wait=False)

    def _leave(self) -> None:
        with self.store.engine.begin() as c:
            c.execute(sa.text("select pg_advisory_xact_lock(:a, :b)"),
                      dict(a=SWEEP_LOCK[0], b=SWEEP_LOCK[1]))
            c.execute(nodes.delete().where(nodes.c.id == self.node))

    async def _sweep_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while self.store.lost is None:
            if self.draining:   # leaving: it takes nothing more (its peers sweep)
                await asyncio.sleep(SWEEP_S)
                continue
            try:
                # (a table that could not be restored here is not tried again every sweep)
                held = set(self.server.tables) | set(self._adopting) | set(self.server.refused)
                dead, taken, mine = await loop.run_in_executor(self._pool, self._sweep, held)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the next sweep tries again
                self.server.log_once("sweep", f"cluster: a sweep failed: {said(exc)}")
                await asyncio.sleep(SWEEP_S)
                continue
            if dead or taken:
                self.server.log(f"cluster: took over {len(taken)} table"
                                f"{'s' if len(taken) != 1 else ''}"
                                + (f" of node{'s' if len(dead) != 1 else ''} "
                                   f"{', '.join(dead)} (dead)" if dead else " no node owned"))
                self.server.events.emit("takeover", nodes=dead, tables=len(taken))
            for tid, epoch in taken.items():
                self.taken_over += 1
                self.adopt_soon(tid, epoch)
            for tid, epoch in mine.items():   # handed to this node; not adopted yet
                self.adopt_soon(tid, epoch)
            await asyncio.sleep(SWEEP_S)

    def _sweep(self, held: set[str]) -> tuple[list[str], dict[str, int], dict[str, int]]:
        """(The cluster's thread.)  One sweep: ``(dead nodes, tables taken
        over → epoch, tables this node owns but does not serve — not in
        ``held`` — → epoch)``."""
        with self.store.engine.begin() as c:
            c.execute(sa.text("select pg_advisory_xact_lock(:a, :b)"),
                      dict(a=SWEEP_LOCK[0], b=SWEEP_LOCK[1]))
            others = [r[0] for r in c.execute(sa.select(nodes.c.id)
                                               .where(nodes.c.id != self.node))]
            dead = []
            for node in others:
                a, b = node_lock_key(node)
                # free: its session is gone (held to this transaction's end, so it
                # cannot come back with that id while its tables move)
                if c.execute(sa.text("select pg_try_advisory_xact_lock(:a, :b)"),
                             dict(a=a, b=b)).scalar():
                    dead.append(node)
            if dead:
                c.execute(nodes.delete().where(nodes.c.id.in_(dead)))
            if self.draining:   # SIGTERM came during this sweep: it takes nothing
                return dead, {}, {}
            taken = self._claim(c)
            self._sweeps += 1
            if dead or self._sweeps % CLOSED_EVERY == 1:
                # the closed tables no node owns: this node's, for their undelivered
                # events (delivered by a table's owner) and their prune (--retention)
                # — a scan of the closed tables, so not at every sweep
                c.execute(tables.update().where(
                    tables.c.open == sa.false(),
                    sa.or_(tables.c.owner.is_(None),
                           tables.c.owner.not_in(sa.select(nodes.c.id))))
                    .values(owner=self.node))
            rows = c.execute(sa.select(tables.c.id, tables.c.epoch)
                             .where(tables.c.owner == self.node, tables.c.open == sa.true()))
            mine = {r[0]: r[1] for r in rows if r[0] not in held and r[0] not in taken}
            self._read_addresses(c)
        return dead, taken, mine

    def _listen(self, loop: asyncio.AbstractEventLoop) -> None:
        """(A thread of its own.)  ``LISTEN`` on :data:`CHANNEL`; an ``adopt``
        for this node starts the table's adoption in the loop at once."""
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.store.url.replace("postgresql+psycopg://",
                                                            "postgresql://"),
                                     autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._stop.is_set():
                        for n in conn.notifies(timeout=1.0):
                            parts = n.payload.split(" ")
                            if len(parts) == 3 and parts[0] == "adopt" and parts[1] == self.node:
                                loop.call_soon_threadsafe(self.adopt_soon, parts[2], None)
            except Exception:  # noqa: BLE001 - the sweeps find what a notify would tell
                if self._stop.wait(1.0):
                    return

    def lost(self) -> None:
        """(The loop, once: the node lock is lost — the database connection
        dropped, its session ended.)  The survivors take this node's tables
        over; each connection is told ``moved`` (no address yet) and
        closed, and the node stops (its supervisor restarts it: it rejoins)."""
        for t in list(self.server.tables.values()):
            self._drop(t, None, committed=False)
        self.server.log("cluster: this node lost its lock: its tables go to the other nodes; "
                        "stopping (restart it to rejoin)")
        if self.server.exit_now is not None:
            self.server.exit_now()

    # ------------------------------------------------------------ adopting

    def adopt_soon(self, tid: str, epoch: int | None) -> asyncio.Task | None:
        """(The loop.)  Serve table ``tid`` if the database says it is this
        node's (a takeover, a handoff): the task adopting it (None: served
        already)."""
        if tid in self.server.tables or tid in self.server.refused or self.draining:
            return None
        task = self._adopting.get(tid)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._adopt(tid))
            self._adopting[tid] = task
            task.add_done_callback(lambda _t, i=tid: self._adopting.pop(i, None))
        return task

    async def _adopt(self, tid: str) -> HostedTable | None:
        s = self.server
        row = await self.store.read(self.store.table, tid, capped=False)
        if row is None or not row["open"] or row.get("owner") != self.node:
            return None
        if tid in s.tables:
            return s.tables[tid]
        try:
            await self._ruleset(row["spec"])
            t, made = await s.restore_async(row)
        except (StoreError, Crowded, Stopped) as exc:
            # the database or the loads busy, the server stopping: not the table's
            # fault — the next sweep (or connection) tries again
            s.log_once(f"adopt:{tid}", f"table {tid} not adopted yet: {said(exc)}")
            return None
        except QipaiError as exc:   # not restorable here (versions, plugins, damaged rows)
            s.refused[tid] = exc
            s.log(f"table {tid} not adopted ({type(exc).__name__}): "
                  f"{' '.join(getattr(exc, 'detail', str(exc)).split())}")
            return None
        if made:
            self.adopted += 1
            s.events.emit("table_adopted", table=tid, node=self.node, epoch=row["epoch"])
            t.start()
        return t

    async def _ruleset(self, spec: str) -> Any:
        """The ruleset of ``spec``, loaded once however many adoptions wait
        for it: a takeover adopts tens of tables of one spec at once, and a
        load each would overflow the loads' queue (``Crowded``: those tables
        refused until a later sweep).  Same errors as
        :meth:`~qipai.server.state.Server.ruleset_async`."""
        loading = self._loading.get(spec)
        if loading is None:
            loading = asyncio.ensure_future(self.server.ruleset_async(spec))
            self._loading[spec] = loading
            loading.add_done_callback(lambda _f: self._loading.pop(spec, None))
        return await asyncio.shield(loading)

    async def serving(self, tid: str) -> HostedTable | None:
        """(A WebSocket or request for a table this node does not hold.)
        The table, adopted now if it is this node's in the database; None
        if it is not (or not open)."""
        if tid in self.server.tables:
            return self.server.tables[tid]
        task = self.adopt_soon(tid, None)
        if task is None:
            return self.server.tables.get(tid)
        try:
            return await asyncio.shield(task)
        except Exception:  # noqa: BLE001 - not served here; the caller says where
            return None

    async def owner_of(self, tid: str) -> tuple[str | None, str | None, bool]:
        """``(node, address, open)`` of table ``tid`` as the database holds it
        (node None: no table, or no node serves it now; address None: that
        node is not live)."""
        row = await self.store.read(self.store.table, tid)
        if row is None:
            return None, None, False
        node = row.get("owner")
        return node, self.addresses.get(node) if node else None, bool(row["open"])

    def moved(self, tid: str, node: str | None) -> P.Moved:
        """The ``moved`` message of table ``tid``, now ``node``'s."""
        return P.Moved(table=tid, node=node, address=self.addresses.get(node) if node else None)

    # ------------------------------------------------------------ leaving

    def table_moved(self, t: HostedTable, exc: TableMoved) -> None:
        """(A write of ``t`` found it moved: the fence.)  Drop it here and
        tell its clients where it is."""
        self.server.log(f"table {t.id}: {exc}; dropped here")
        self._drop(t, exc.owner, committed=False)

    def _drop(self, t: HostedTable, node: str | None, committed: bool = True) -> None:
        """Stop serving ``t`` (it is ``node``'s now): halted, forgotten, and
        each connection told ``moved`` and closed.  ``committed``: what its
        connections hold followed from committed writes (a handoff: it is
        sent first); else it is dropped (the fence refused those writes)."""
        s = self.server
        if t.halted is None:
            t.halt("Moving", f"table {t.id} is moving to another node; a moved message follows")
        left = self.leaving.pop(t.id, None)
        if left is not None:
            left.set()
        self.store.fences.pop(t.id, None)
        if s.tables.get(t.id) is t:
            del s.tables[t.id]
        frame = P.encode(self.moved(t.id, node)).decode()
        for c in list(t.conns):
            c.early = None
            if committed:
                c.frame()
            else:
                c.held = []
                c.cuts.clear()
            c.put(frame)
            c.put(None)
            c.close_code = CLOSE_MOVED   # (after the close is queued: put() stops at a code)

    async def hand_off(self, t: HostedTable, to: str) -> bool:
        """Give ``t`` to node ``to`` between two actions: stop it, let its
        writes so far commit, then move it (one more write of the group
        commit, conditional on the epoch this node holds); tell its clients
        ``moved`` and ``to`` to adopt it.  True once moved; False if the
        move was not written (the table stays halted here: the node's exit
        frees it for a peer's sweep)."""
        epoch = self.store.fences.get(t.id)
        if epoch is None or t.halted is not None:
            return False
        t.halt("Moving", f"table {t.id} is moving to node {to}; a moved message follows")
        self.leaving[t.id] = asyncio.Event()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[BaseException | None] = loop.create_future()
        # the peer is told in the same transaction (a NOTIFY is delivered at the commit)
        self.store.submit(Write(t.id, [("handoff", dict(k_table=t.id, k_owner=self.node,
                                                        k_epoch=epoch, owner=to,
                                                        epoch=epoch + 1)),
                                       ("notify", dict(ch=CHANNEL, p=f"adopt {to} {t.id}"))],
                                lambda exc: done.done() or done.set_result(exc)))
        exc = await done
        if isinstance(exc, TableMoved):
            self._drop(t, exc.owner)
            return False
        if exc is not None:
            self.server.log(f"table {t.id} not handed to node {to}: {said(exc)}")
            left = self.leaving.pop(t.id, None)
            if left is not None:
                left.set()
            return False
        self.handed_off += 1
        self.server.events.emit("table_handed_off", table=t.id, node=to, epoch=epoch + 1)
        self._drop(t, to)
        return True

    def _peers(self) -> list[tuple[str, int]]:
        """(The cluster's thread.)  The live peers not draining, each with
        the open tables it owns, least loaded first."""
        with self.store.engine.begin() as c:
            load = (sa.select(sa.func.count()).where(tables.c.owner == nodes.c.id,
                                                     tables.c.open == sa.true())
                    .scalar_subquery())
            rows = c.execute(sa.select(nodes.c.id, load).where(nodes.c.id != self.node,
                                                               nodes.c.draining == sa.false()))
            peers = []
            for node, n in rows:
                a, b = node_lock_key(node)
                # live: its lock is held (taking it for an instant tells: released at once)
                free = c.execute(sa.text("select pg_try_advisory_xact_lock(:a, :b)"),
                                 dict(a=a, b=b)).scalar()
                if not free:
                    peers.append((node, int(n)))
            self._read_addresses(c)
        return sorted(peers, key=lambda p: (p[1], p[0]))

    def _mark_draining(self) -> None:
        with self.store.engine.begin() as c:
            c.execute(nodes.update().where(nodes.c.id == self.node).values(draining=True))

    async def drain(self) -> int:
        """(SIGTERM.)  Take no new table; hand every table to the least
        loaded live peers (spread over them) and wait for the moves (at
        most :data:`DRAIN_S`).  Answers the tables still here."""
        loop = asyncio.get_running_loop()
        self.draining = True
        s = self.server
        try:
            await loop.run_in_executor(self._pool, self._mark_draining)
            peers = await loop.run_in_executor(self._pool, self._peers)
        except Exception as exc:  # noqa: BLE001 - then the tables stay (a sweep frees them)
            s.log(f"cluster: drain: the peers could not be read: {said(exc)}")
            peers = []
        mine = [t for t in s.tables.values() if t.open and t.halted is None]
        if not peers:
            s.log(f"cluster: drain: no live peer; {len(mine)} table"
                  f"{'s' if len(mine) != 1 else ''} stay this node's (its restart, or a "
                  f"peer's sweep once it is gone, serves them)")
            return len(mine)
        load = dict(peers)
        moves = []
        for t in mine:
            to = min(load, key=lambda n: (load[n], n))
            load[to] += 1
            moves.append(loop.create_task(self.hand_off(t, to)))
        t0 = time.monotonic()
        before = self.handed_off
        # not cancelled at the time limit: a move whose write is in flight ends as written
        await asyncio.wait(moves, timeout=DRAIN_S)
        moved = self.handed_off - before   # (counted as each move is written)
        s.log(f"cluster: drain: {moved} of {len(mine)} table{'s' if len(mine) != 1 else ''} "
              f"handed to {', '.join(sorted(load))} in {time.monotonic() - t0:.2f} s")
        return len(mine) - moved

