"""A hosted table's journal: its hands and actions in the database, and
the table rebuilt from them (at start, and after a failed write).

Every change is handed to the store's group commit
(:meth:`~qipai.host.store.Store.submit`); a write's answer
(:meth:`Journal._written`) frames what it caused, or — a failed write —
drops what was held, answers each refused ``act`` ``Unavailable`` and puts
the table back by re-reading the hand from the database
(:meth:`Journal.reread`: off the event loop on PostgreSQL; meanwhile the
table takes no action, its clock and bots wait, and a new connection is
welcomed once it is back), then sends every connection a fresh ``welcome``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import msgspec

from qipai.core import chain
from qipai.core.errors import QipaiError, ReplayDiverged
from qipai.core.fair import commitment
from qipai.core.model import Action, Deal
from qipai.core.records import apply_steps
from qipai.core.table import Table
from qipai.host import protocol as P
from qipai.host import trace
from qipai.host.errors import (
    IN_FLIGHT_LOST, LOCK_LOST, NOT_TAKEN_LOST, DamagedTable, Refused,
)
from qipai.host.outbox import Conn
from qipai.host.store import CommitUnknown, LockLost, StoreStopped, TableMoved, said

#: The errors of stored rows that do not read (decoded or converted):
#: :class:`DamagedTable` at restore.
UNREADABLE = (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, KeyError,
              IndexError)

_ACTION = msgspec.json.Decoder(Action)
_DEAL = msgspec.json.Decoder(Deal)



class Journal:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  The hand's rows,
    its rebuild from them, and the answers of its writes.

    The journal's chain (:mod:`qipai.core.chain`): :attr:`chain_head` is
    the table's last link, advanced in the event loop as each row is built
    (one SHA-256 per row, no read) and put back from the rows at a
    rebuild; :attr:`chain_start` the current hand's ``prev`` (None: its
    row was made before links)."""

    def chain_init(self, spec: str) -> None:
        """(A new table object.)  Its chain at its genesis."""
        self.chain_head: str = chain.genesis(self.id, spec)
        self.chain_start: str | None = None
        self._chain_next: str | None = None   # the next installed hand's prev

    def hand_row(self, index: int, table: Table, salt: bytes, commit: str,
                 seed: int | None) -> dict[str, Any]:
        """The ``qipai_hands`` row of a new hand, chained after the head
        (the head advances: the row is written next)."""
        prev = self.chain_head
        self.chain_head = chain.hand_link(prev, self.id, index, commit)
        self._chain_next = prev
        return dict(table_id=self.id, hand=index,
                    deal=msgspec.json.encode(table.deal).decode(),
                    seed=str(seed) if seed is not None else None,
                    commitment=commit, salt=salt.hex(), link=self.chain_head,
                    **self.joint_columns(index))

    def chain_action(self, hand: int, seq: int, action: Any, timeout: bool,
                     tuoguan: bool) -> str:
        """An action row's link; the head advances to it."""
        self.chain_head = chain.action_link(self.chain_head, self.id, hand, seq, action,
                                            timeout, tuoguan)
        return self.chain_head

    @staticmethod
    def money_link(money: Any) -> dict[str, Any] | None:
        """A hand's money as its end link covers it (None: no stake)."""
        return chain.money_body(money)

    def chain_of(self, head: str) -> chain.Chain | None:
        """The current hand's :class:`~qipai.core.chain.Chain` ending at
        ``head`` (its end link), for its record; None when its row has no link."""
        if self.chain_start is None:
            return None
        return chain.Chain(table=self.id, hand=self.hand, prev=self.chain_start, head=head)

    def _chain_restore(self, hands: list[dict[str, Any]], acts: list[dict[str, Any]]) -> None:
        """(A rebuild, the current hand installed.)  The head is the last
        link stored — the rows in chain order (the hands', each hand's end,
        the current hand's actions) —, or the genesis when none has one."""
        head = chain.genesis(self.id, self.row["spec"])
        start = None
        for h in hands:
            if h.get("link") is not None:
                start, head = head, h["link"]
            elif h is hands[-1]:
                start = None
            if h.get("end_link") is not None:
                head = h["end_link"]
        for a in acts:
            if a.get("link") is not None:
                head = a["link"]
        if not (chain.is_link(head) and (start is None or chain.is_link(start))):
            # (the next row would be chained to it: refused here, not at the next action)
            raise QipaiError(f"its last chain link {str(head)[:70]!r} is not a link "
                             f"(64 lowercase hex digits)")
        self.chain_head, self.chain_start = head, start
        self._chain_next = start   # (a seat-value step's deal chains its row again)

    def table_from_row(self, hand: dict[str, Any]) -> Table:
        """The hand's table from its stored deal, before any action."""
        table = Table(self.ruleset, deal=_DEAL.decode(hand["deal"]), ask_all=True)
        table.set_origin(int(hand["seed"]) if hand["seed"] is not None else None,
                         "joint" if hand.get("server_seed") else self.rng_kind)
        return table

    def rebuild(self) -> None:
        """The current hand again from the database, read here (blocking:
        the server's start-up; after a failed write, :meth:`reread`).

        Raises:
            StoreError: the database failed the read.
            QipaiError: no hand is stored.
            DamagedTable: the stored rows do not read or replay."""
        self.rebuild_from(*self.stored())

    def stored(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(Blocking: a worker thread's, or the start-up's.)  The table's
        hand rows and its current hand's action rows."""
        hands = self.store.hands_of(self.id)
        if not hands:
            raise QipaiError(f"table {self.id} has no hand stored; the database is damaged")
        self.joint_stored(hands[-1]["hand"], hands[-1])
        return hands, self.store.actions_of(self.id, hands[-1]["hand"])

    def rebuild_from(self, hands: list[dict[str, Any]], acts: list[dict[str, Any]]) -> None:
        """The current hand again from its rows (:meth:`stored`): its
        deal, then every stored action in ``seq`` order.

        Raises:
            DamagedTable: a row does not read (not JSON, not an action, a
                bad deal or salt) or an action does not replay."""
        where = ["the finished hands' results"]
        try:
            self._rebuild_from(hands, acts, where)
        except (QipaiError, *UNREADABLE) as exc:
            raise DamagedTable(
                f"table {self.id}: its stored rows do not replay at {where[0]} "
                f"({type(exc).__name__}; the server's log says why); the database is damaged",
                f"its stored rows do not replay at {where[0]}: {said(exc)}") from None

    def _rebuild_from(self, hands: list[dict[str, Any]], acts: list[dict[str, Any]],
                      where: list[str]) -> None:
        done = [h for h in hands if h["net"] is not None]
        self.totals = [0] * self.n
        for h in done:
            for i, x in enumerate(msgspec.json.decode(h["net"])):
                self.totals[i] += x
        self.hands_done = len(done)
        self.rebuild_money(done)
        current = hands[-1]
        where[0] = f"hand {current['hand']}'s deal"
        salt = bytes.fromhex(current["salt"])
        if commitment(_DEAL.decode(current["deal"]), salt) != current["commitment"]:
            raise QipaiError("its deal and salt are not what its commitment was made of")
        table = self.table_from_row(current)
        self.install(current["hand"], table, salt,
                     current["commitment"], int(current["seed"]) if current["seed"] else None)
        try:
            for step in apply_steps(table, self._stored_actions(current["hand"], acts, where)):
                # the decisions are still those before this action until refreshed
                taken = self.decisions.get(step.action.seat)
                if taken is not None:
                    self.answered[step.action.seat] = taken.seq
                if acts[step.index]["timeout"]:
                    self.timeouts.append(step.index)
                self.refresh_decisions()
        except ReplayDiverged as exc:
            # the table's own refusal names what is wrong with the stored row
            raise exc.refused or exc from None
        where[0] = "its chain's last link"
        self._chain_restore(hands, acts)
        self.rebuild_room(done, acts)
        self.rebuild_joint(current)
        self.committed_now()
        if table.over:  # pragma: no cover - the next hand is stored with the last action
            raise QipaiError(f"table {self.id}: hand {self.hand} is over but has no next hand")

    def _stored_actions(self, hand: int, acts: list[dict[str, Any]],
                        where: list[str]) -> Iterator[Action]:
        """The stored action rows decoded one by one, each just before it is
        applied, so a damaged row is named where it stands (``where``)."""
        for i, row in enumerate(acts):
            where[0] = f"hand {hand}'s action {i}"
            if row["seq"] != i:
                raise QipaiError(f"table {self.id} hand {hand}: stored action "
                                 f"{row['seq']} follows {i - 1}; the database is damaged")
            yield _ACTION.decode(row["action"])

    def _written(self, epoch: int, conn: Conn | None, hand: int, seq: int | None,
                 future: asyncio.Future | None, ends: list, exc: BaseException | None) -> None:
        """A write of this table is committed (``exc`` None) or failed;
        ``ends``: what :meth:`info` shows once it is committed, if it ended a hand.
        (Called by the store's writer: an error here — framing what the write
        caused — halts this table, :meth:`_broken`, and never reaches the writer.)"""
        try:
            self._written_now(epoch, conn, hand, seq, future, ends, exc)
        except Exception as err:  # noqa: BLE001 - the writer serves every table
            self._broken(err, "answering a write" if exc is None else "answering a failed write")

    def _written_now(self, epoch: int, conn: Conn | None, hand: int, seq: int | None,
                     future: asyncio.Future | None, ends: list,
                     exc: BaseException | None) -> None:
        if exc is None:
            if trace.ON and conn is not None and conn.tr is not None:
                e = conn.tr.get((hand, seq))
                if e is not None:
                    e[trace.COMMITTED] = trace.perf_counter()
            if future is not None and not future.done():
                future.set_result(None)
            if epoch == self.epoch:
                self.committed += 1
                if ends:
                    self.shown = ends[0]
                    if len(ends) > 1:   # the hand's end, committed
                        hand_, end, net = ends[1]
                        self.server.events.emit("hand_ended", table=self.id,
                                                key=self.key_name, hand=hand_,
                                                end=end, net=net)
                if self.uncommitted:   # what was held before a later write: framed now
                    for c in self.conns:
                        c.release(self.committed)
            if not self.uncommitted:
                self.flush()
            return
        if isinstance(exc, TableMoved):   # (a cluster) another node's now: dropped here
            self.moved_away(exc, conn, seq, future)
            return
        lost = isinstance(exc, LockLost)
        if epoch == self.epoch:
            # the first failed write: it and every later write of the table are void
            self.epoch += 1
            if not lost:   # a lost lock is logged once, by the server
                self.server.log(f"table {self.id}: write failed, re-reading the hand: "
                                f"{said(exc)}")
            later = self.store.cancel(self.id)
            self.submitted = self.committed = 0
            for c in self.conns:
                # nothing of an uncommitted action may be seen (what an
                # earlier, committed write caused was framed at its commit)
                c.held = []
                c.cuts.clear()
            if lost or self.halted is not None:
                # halted for good: nothing is served from its hand again (GET
                # /tables/{id} reads the database), so it is not read back — a
                # read that would hold a reader thread of a database that may
                # not answer.  (A halt's own message went out at once: direct.)
                if self.halted is None:
                    self.lock_lost(exc)   # before the server's own call: once
            else:
                # the table in memory holds what the database may not: it takes
                # nothing until the hand is read back (off the loop: the database
                # that failed the write may not answer the read either)
                task = asyncio.get_running_loop().create_task(self.reread())
                self.rereading = task
                task.add_done_callback(self._reread_over)
                self._tasks.append(task)
            for w in later:      # queued, never sent: certainly not taken
                w.done((self.store.lost or exc) if lost else exc)   # (epoch now stale)
        if conn is not None:
            conn.send(P.Error(code="LockLost", seq=seq,
                              message=IN_FLIGHT_LOST if isinstance(exc, CommitUnknown)
                              else NOT_TAKEN_LOST) if lost
                      else P.Error(code="Unavailable", seq=seq,
                                   message="the database did not take the action; it was not "
                                           "applied"))
        if future is not None and not future.done():
            future.set_exception(Refused("LockLost", LOCK_LOST) if lost else
                                 Refused("Unavailable", "the database did not take the action"))
        self.flush()
        self.poke()

    def moved_away(self, exc: TableMoved, conn: Conn | None, seq: int | None,
                   future: asyncio.Future | None) -> None:
        """(A cluster node.)  A write of this table found it another node's
        (the batch's fence, :mod:`qipai.host.store.fence`): nothing of it was
        written.  The first such answer drops the table here — its queued
        writes cancelled, its connections told ``moved`` and closed
        (:meth:`~qipai.server.cluster.Cluster.table_moved`); the act is
        answered ``Moving`` (not applied)."""
        cluster = getattr(self.server, "cluster", None)
        if not getattr(self, "gone", False):
            self.gone = True
            self.epoch += 1   # what was in flight is void
            for w in self.store.cancel(self.id):
                w.done(exc)
            if cluster is not None:
                cluster.table_moved(self, exc)
        if future is not None and not future.done():
            future.set_exception(Refused("Moving", str(exc)))

    async def reread(self) -> None:
        """(A task, after a failed write.)  Read the hand back from the
        database without blocking the loop (:meth:`Store.read`, never
        refused ``Busy``), rebuild it, welcome every connection again and
        let the clock and bots go on; a read that fails, or rows that do not
        replay, halt the table (:meth:`_unreadable`)."""
        try:
            try:
                rows = await self.store.read(self.stored, capped=False)
                self.rebuild_from(*rows)
            except asyncio.CancelledError:
                raise    # the server stops: the table is restored from its rows
            except StoreStopped:
                return   # the same (the store closed first)
            except Exception as err:  # noqa: BLE001 - the database cannot be read either
                self.rereading = None
                self._unreadable(err)
                return
        finally:
            if self.rereading is asyncio.current_task():
                self.rereading = None
        for c in list(self.conns):
            self.greet(c)
            if self.halted is not None:   # what was held said so: again
                c.send(P.Error(code=self.halted[0], message=self.halted[1]))
        self.flush()
        self.poke()

    def _reread_over(self, task: asyncio.Task) -> None:
        """(The re-read task's done callback.)  :attr:`rereading` is
        cleared by :meth:`reread` itself before it welcomes the
        connections; this clears it too should the task end without
        running (cancelled before its first step)."""
        if self.rereading is task:
            self.rereading = None

    def _unreadable(self, err: Exception) -> None:
        """A failed write, and the hand cannot be re-read to put the table
        back: the table in memory may hold actions the database does not,
        so it stops (:meth:`halt`) and its connections are closed, each
        told why (an operator restarts the server once the database is back)."""
        why = (f"table {self.id}: after a failed write its hand could not be re-read from the "
               f"database; it is not served until the server is restarted")
        # the database's words (they may name its host and user) go to the log only
        self.server.log(f"{why} ({getattr(err, 'detail', None) or said(err)})")
        told = f"{why} (the server's log says why)"
        self.halt("Unavailable", told)
        for c in list(self.conns):
            c.early = None    # the refusal is all it gets
            c.held = [P.Error(code="Unavailable", message=told)]
            c.frame()
            c.put(None)   # the writer closes the socket
