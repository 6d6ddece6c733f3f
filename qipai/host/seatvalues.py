"""A hosted table's joint deals: the seat-value step before each hand
(issue 36; the deal function is :mod:`qipai.core.joint`).

(A part of :class:`~qipai.host.match.HostedTable`.)

On a table with seat values on (``qipai serve --seat-values``, or
``"seat_values": true`` in ``POST /tables``) each hand is dealt as follows.

- :meth:`SeatValues.joint_hand` (called by ``new_hand``) draws the server
  seed; the hand's row is written with it (``server_seed``) — as every
  hand's row is, with the last action of the hand before (or the table) —
  and with a *provisional* deal: the deal function of the server seed and
  no seat value, which is never shown (and is the deal if nobody
  contributes).  A table without human seats deals it at once.
- The step: :class:`~qipai.host.protocol.SeatValues` is sent instead of a
  ``welcome`` (nobody sees the provisional hand); no decision is offered,
  no clock or bot runs.  Phase ``commit``: each human seat sends
  :class:`~qipai.host.protocol.SeatCommit`; when every human seat has
  committed, or ``--seat-value-timeout`` passed, phase ``reveal``.  Every
  human seat is waited for, online or not (a dropped connection, a slow
  start, a reload must not cost a player his say in the deal), except one
  offline *and* in 托管 (its player is away, the bot plays it: the table
  does not stall each hand for him; it counts empty).  The commit phase
  has no clock (:meth:`clockless`; its deadline is set afresh when the
  clock starts) while no human seat is online — a spectator alone must not get the hand dealt
  from the server seed alone — and, before the table's first hand, until
  every human seat has connected once (:attr:`sat`: everyone has sat
  down, as a real table waits for its players; a table whose players never
  all come waits, and its operator may close it).  Phase ``reveal``:
  each committed seat sends :class:`~qipai.host.protocol.SeatReveal`; when
  every committed seat revealed, or the deadline passed, the hand is dealt
  (a committed seat is waited for even offline, so that a reload can still
  reveal; one that revealed no matching value by the deadline is
  *withheld*).
- Every commitment and value is written through the group commit
  (``qipai_seat_values``) before anyone is told of it; the deal rewrites
  the hand's row (deal, seed, commitment, salt, ``joint``) with its
  ``hand_started`` event.  Then everyone is welcomed to the dealt hand (a
  room's ready step begins then).
- A restart (or a re-read after a failed write, or a cluster node's
  takeover) mid-step restores the commitments and values stored and asks
  again with a fresh deadline — in ``reveal`` phase if any value is
  stored, else in ``commit``.  Who has sat down is not stored: after a
  restart before the first hand's deal, a seat has sat once it has
  committed (stored) or connects again — a player who came and went
  before committing is waited for again, without a clock, as before he came.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec

from qipai.core import chain
from qipai.core.fair import commitment, new_salt
from qipai.core.joint import (
    Joint, SeatValue, hex32, joint_table, new_server_seed, seed_commitment, seeded_server_seed,
    used_values, value_commitment,
)
from qipai.core.table import Table
from qipai.host import feed
from qipai.host import protocol as P
from qipai.host.errors import Refused
from qipai.host.store import Write

#: default of ``qipai serve --seat-value-timeout`` (seconds per phase).
SEAT_VALUE_TIMEOUT = 5.0


class SeatValues:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  See the module docstring."""

    @property
    def rng_shown(self) -> str:
        """What deals this table's hands, as its welcome, ``GET
        /tables/{id}`` and ``table_created`` say: ``"joint"`` with seat
        values on (as its records say), else its ``rng`` (``"os"``,
        ``"seeded"``)."""
        return "joint" if self.seat_values_on else self.rng_kind

    def seat_values_init(self, row: dict[str, Any]) -> None:
        #: joint deals on this table
        self.seat_values_on: bool = bool(row.get("seat_values"))
        #: hand → the server seed drawn by new_hand, until installed
        self._server_seeds: dict[int, bytes] = {}
        #: the current hand's server seed (None: not a joint deal)
        self.server_seed: bytes | None = None
        #: the current hand's Joint once dealt (None: not joint, or in the step)
        self.joint: Joint | None = None
        #: the step under way: ``{"hand", "phase", "deadline", "commits":
        #: {seat: hex}, "values": {seat: hex}}`` (None: none)
        self.deal_step: dict[str, Any] | None = None
        self._step_timer: asyncio.TimerHandle | None = None
        self._step_sent: tuple | None = None
        #: the commit phase has no clock (:meth:`clockless`): no human seat
        #: is online, or the first hand's players have not all sat down
        self._step_paused = False
        #: the human seats that have connected at least once (since this
        #: server loaded the table; and, rebuilt in the first hand's step,
        #: those with a stored commitment): the first hand's clock starts
        #: once every human seat is in it — everyone has sat down
        self.sat: set[int] = set()

    # ------------------------------------------------------------ dealing

    def joint_hand(self, index: int, dealer: int | None) -> tuple[Table, int]:
        """(new_hand, seat values on.)  Draw hand ``index``'s server seed
        (kept until installed) and deal its provisional table: no seat value."""
        if self.seed is not None:   # a seeded (test) server: reproducible
            from qipai.core.sessions import hand_seed

            server = seeded_server_seed(hand_seed(self.seed, index))
        else:
            server = new_server_seed()
        self._server_seeds[index] = server
        table = joint_table(self.ruleset, server, index, [None] * self.n, dealer)
        return table, table.seed

    def needs_step(self) -> bool:
        return any(s not in self.bots for s in range(self.n))

    def joint_columns(self, index: int) -> dict[str, Any]:
        """The hand row's joint columns (hand_row): the server seed, and the
        Joint when it is dealt at once (no human seat)."""
        server = self._server_seeds.get(index)
        if server is None:
            return {}
        out: dict[str, Any] = {"server_seed": server.hex()}
        if not self.needs_step():
            out["joint"] = msgspec.json.encode(self._joint_of(index, server, {}, {})).decode()
        return out

    def _joint_of(self, index: int, server: bytes, commits: dict[int, str],
                  values: dict[int, str], final: bool = True) -> Joint:
        """The Joint of a hand: ``final`` (dealt) — a committed seat without a
        value is withheld; not final (a hand closed in its step) — nobody is."""
        seats = []
        for s in range(self.n):
            c = commits.get(s)
            v = values.get(s)
            seats.append(SeatValue(commitment=c, value=v,
                                   withheld=final and c is not None and v is None))
        return Joint(hand=index, server_seed=server.hex(),
                     server_commitment=seed_commitment(server), seats=seats)

    def install_joint(self, index: int) -> None:
        """(install.)  Take the hand's server seed; begin its step, or (no
        human seat) it is dealt."""
        self.cancel_step()
        self.deal_step = None
        self._step_sent = None
        self._step_paused = False
        self.server_seed = self._server_seeds.pop(index, None)
        self._server_seeds.clear()
        self.joint = None
        if self.server_seed is None:
            return
        if self.needs_step():
            self.deal_step = {"hand": index, "phase": "commit", "commits": {}, "values": {},
                              "deadline": time.time() + self.server.seat_value_timeout}
        else:
            self.joint = self._joint_of(index, self.server_seed, {}, {})

    def rebuild_joint(self, row: dict[str, Any]) -> None:
        """(A rebuild, after install and the room's.)  The stored joint
        parts of the current hand: dealt (its ``joint``) or in its step —
        restored from its seat-value rows, asked again with a fresh deadline."""
        self.cancel_step()
        self.deal_step = None
        self._step_sent = None
        self._step_paused = False
        self.server_seed = bytes.fromhex(row["server_seed"]) if row.get("server_seed") else None
        self.joint = None
        if self.server_seed is None:
            return
        if row.get("joint"):
            self.joint = msgspec.json.decode(row["joint"], type=Joint)
            return
        rows = row.get("seat_value_rows") or []
        commits = {int(r["seat"]): r["commitment"] for r in rows}
        self.sat |= set(commits)   # (a seat that committed has sat down)
        values = {int(r["seat"]): r["value"] for r in rows if r["value"] is not None}
        self.deal_step = {"hand": row["hand"], "phase": "reveal" if values else "commit",
                          "commits": commits, "values": values,
                          "deadline": time.time() + self.server.seat_value_timeout}
        self.ready_step = None   # (a room's begins once dealt)

    def joint_record(self) -> Joint | None:
        """The current hand's Joint for its record (in the step: its
        provisional deal's — the commitments so far, no value)."""
        if self.joint is not None:
            return self.joint
        if self.server_seed is None:
            return None
        st = self.deal_step or {"commits": {}, "values": {}}
        return self._joint_of(self.hand, self.server_seed, st["commits"], {}, final=False)

    def joint_stored(self, index: int, row: dict[str, Any]) -> None:
        """(stored(): the current hand's row.)  Its seat-value rows, if in its step."""
        if row.get("server_seed") and not row.get("joint"):
            row["seat_value_rows"] = self.store.seat_values_of(self.id, index)

    # ------------------------------------------------------------ the step

    def step_waiting(self) -> tuple[int, ...]:
        st = self.deal_step
        if st is None:
            return ()
        if st["phase"] == "commit":
            # every human seat, online or not, until the deadline — but one
            # offline in 托管: its player is away and the bot plays it, and
            # the table does not stall each hand for him (it counts empty)
            on = set(self.online())
            return tuple(s for s in self.humans() if s not in st["commits"]
                         and (s in on or s not in self.tuoguan))
        # a committed seat is waited for offline too (until the deadline): a
        # reload or a reconnection must not cost it its value
        return tuple(s for s in sorted(st["commits"]) if s not in st["values"])

    def step_unseated(self) -> tuple[int, ...]:
        """The first hand's commit phase: the human seats that have not sat
        down yet (never connected, no commitment) — its clock starts once
        there is none."""
        st = self.deal_step
        if st is None or st["phase"] != "commit" or st["hand"] != 0:
            return ()
        return tuple(s for s in self.humans() if s not in self.sat and s not in st["commits"])

    def clockless(self) -> bool:
        """The commit phase has no clock now: no human seat is online, or
        the first hand's players have not all sat down (its deadline is
        set afresh when it starts, :meth:`_no_clock`)."""
        st = self.deal_step
        if st is None or st["phase"] != "commit":
            return False
        on = set(self.online())
        return not any(s in on for s in self.humans()) or bool(self.step_unseated())

    def step_msg(self, seat: int | None) -> P.SeatValues:
        st = self.deal_step
        assert st is not None and self.server_seed is not None
        return P.SeatValues(table=self.id, hand=st["hand"], seat=seat, phase=st["phase"],
                            deadline=None if self.clockless() else st["deadline"],
                            server_commitment=seed_commitment(self.server_seed),
                            commitments={str(s): c for s, c in sorted(st["commits"].items())},
                            revealed=tuple(sorted(st["values"])), waiting=self.step_waiting(),
                            unseated=self.step_unseated())

    def step_send(self, conn: Any, msg: Any) -> None:
        """Send ``conn`` a message of the step: not held for a welcome
        (a connection in the step has none yet)."""
        if conn.direct:
            conn.put(P.encode(msg).decode())
        else:
            conn.held.append(msg)

    def step_welcome(self, conn: Any) -> None:
        """(welcome, in the step.)  The step instead of the welcome; what
        the connection is sent meanwhile follows the welcome at the deal."""
        if conn.early is None:
            conn.early = []
        self._no_clock()   # (its deadline as it stands with this connection)
        self.step_send(conn, self.step_msg(conn.seat))

    def _tell_step(self) -> None:
        m = self.step_msg(None)
        key = (m.phase, m.deadline, tuple(m.commitments), m.revealed, m.waiting, m.unseated)
        if key == self._step_sent:
            return
        self._step_sent = key
        for c in self.conns:
            self.step_send(c, self.step_msg(c.seat))

    def _no_clock(self) -> bool:
        """The commit phase without a clock (:meth:`clockless`): it waits,
        its timer off; its deadline starts afresh when the clock does —
        else a spectator watching (or every player away a moment) would
        deal the hand from the server seed alone, which the server could
        have chosen, and a first hand would be dealt before a player who
        had not sat down yet had his say."""
        st = self.deal_step
        if st is None or st["phase"] != "commit":
            return False
        if not self.clockless():
            if self._step_paused:
                self._step_paused = False
                st["deadline"] = time.time() + self.server.seat_value_timeout
            return False
        self._step_paused = True
        self.cancel_step()
        return True

    def arm_step(self) -> None:
        st = self.deal_step
        if st is None or self._step_timer is not None or not self.conns:
            return
        if self._no_clock():
            return
        loop = asyncio.get_running_loop()
        self._step_timer = loop.call_at(loop.time() + max(0.0, st["deadline"] - time.time()),
                                        self._step_due)

    def cancel_step(self) -> None:
        if getattr(self, "_step_timer", None) is not None:
            self._step_timer.cancel()
            self._step_timer = None

    def _step_due(self) -> None:
        self._step_timer = None
        if (self.deal_step is not None and self.open and not self.closing
                and self.halted is None and self.rereading is None
                and not self._no_clock()):
            self._advance()
            self.flush()

    def check_step(self) -> None:
        """Advance the step once nobody is waited for; else tell its change."""
        if (self.deal_step is None or not self.conns or self.halted is not None
                or self.rereading is not None or self.closing):
            return
        if self._no_clock():
            self._tell_step()
            return
        if not self.step_waiting():
            self._advance()
        else:
            self._tell_step()
            self.arm_step()

    def _advance(self) -> None:
        st = self.deal_step
        if st["phase"] == "commit":
            self.cancel_step()
            st["phase"] = "reveal"
            st["deadline"] = time.time() + self.server.seat_value_timeout
            if self.step_waiting():
                self._tell_step()
                self.arm_step()
                return
        self._deal_joint()

    def _deal_joint(self) -> None:
        """Every value is in (or its deadline passed): deal the hand from
        them, write it with its ``hand_started`` event, welcome everyone."""
        st = self.deal_step
        self.cancel_step()
        index = st["hand"]
        joint = self._joint_of(index, self.server_seed, st["commits"], st["values"])
        # the first hand's dealer is drawn from the joint seed too (the variant's
        # first-dealer rule, after the shuffle), so the server's seed alone
        # does not pick it; a later hand's is the rules' next dealer
        table = joint_table(self.ruleset, self.server_seed, index, used_values(joint.seats),
                            None if index == 0 else self.table.dealer)
        salt = new_salt()
        commit = commitment(table.deal, salt)
        # the hand row's link covers its commitment, which the deal replaces:
        # chained again from the same ``prev`` (nothing was chained after it
        # during the step), so the journal holds the deal actually played
        prev = self._chain_next = self.chain_start   # (install keeps it as the hand's prev)
        link = None            # (prev None: the hand's row has no link — made before links)
        if prev is not None:
            self.chain_head = link = chain.hand_link(prev, self.id, index, commit)
        ops = [("deal_hand", dict(deal=msgspec.json.encode(table.deal).decode(),
                                  seed=str(table.seed), commitment=commit, salt=salt.hex(),
                                  joint=msgspec.json.encode(joint).decode(),
                                  link=link, k_table=self.id, k_hand=index)),
               feed.hand_started(self, index, table, commit, self.joint_started(joint))]
        ends: list = []
        self._submit(ops, ends)
        self.server.events.emit("joint_deal", table=self.id, hand=index,
                                withheld=[i for i, s in enumerate(joint.seats) if s.withheld])
        server = self.server_seed
        self.install(index, table, salt, commit, int(table.seed))
        self.server_seed, self.joint = server, joint
        ends.append(self._now())
        if self.ready_between and index > 0:
            self.begin_ready()
        self.sync()
        self.check_ready()
        self.poke()

    def started_ops(self, index: int, table: Any, commit: str) -> list:
        """The ``hand_started`` event of a hand just dealt (new_hand): none
        while its seat-value step is to come (written at its deal)."""
        if index in self._server_seeds:
            if self.needs_step():
                return []
            return [feed.hand_started(self, index, table, commit, self.joint_started(
                self._joint_of(index, self._server_seeds[index], {}, {})))]
        return [feed.hand_started(self, index, table, commit)]

    def step_closed(self) -> None:
        """(The table closes.)  A step under way ends undealt: its
        connections, which have no welcome, are told from now on."""
        if self.deal_step is None:
            return
        self.cancel_step()
        self.deal_step = None
        for c in self.conns:
            c.early = None

    def joint_started(self, joint: Joint | None) -> dict[str, Any] | None:
        """The ``hand_started`` event's joint parts: the server commitment and
        each seat's commitment (no value, no seed)."""
        if joint is None:
            return None
        return {"server_commitment": joint.server_commitment,
                "commitments": [s.commitment for s in joint.seats]}

    def _submit(self, ops: list, ends: list | None = None) -> None:
        """Hand ``ops`` to the group commit as an action is: what is sent
        after waits for its commit; a failed write re-reads the hand."""
        import functools

        for c in self.conns:
            if c.held and (not c.cuts or c.cuts[-1][1] < len(c.held)):
                c.cuts.append((self.submitted, len(c.held)))
        self.submitted += 1
        ends = [] if ends is None else ends
        self.store.submit(Write(self.id, ops, functools.partial(
            self._written, self.epoch, None, self.hand, None, None, ends)))

    def _step_for(self, conn: Any, hand: int, what: str) -> tuple[int, dict[str, Any]]:
        seat = self._seated(conn, what)
        st = self.deal_step
        if st is None or hand != st["hand"]:
            raise Refused("NotNow", f"hand {hand} has no seat-value step under way"
                          + (f" (hand {st['hand']}'s is)" if st is not None else
                             " (it is dealt)" if hand == self.hand else ""))
        return seat, st

    def ask_seat_commit(self, conn: Any, msg: P.SeatCommit) -> None:
        """A client's ``seat_commit``."""
        seat, st = self._step_for(conn, msg.hand, "seat value")
        try:
            hex32(msg.commitment, "a seat commitment")
        except ValueError as exc:
            raise Refused("BadValue", str(exc)) from None
        if seat in st["commits"]:
            raise Refused("AlreadyDone", f"seat {seat} committed to its value for hand "
                                         f"{msg.hand} already")
        if st["phase"] != "commit":
            raise Refused("NotNow", f"hand {msg.hand}'s commitments are closed: the values "
                                    f"are being revealed")
        c = msg.commitment.lower()
        st["commits"][seat] = c
        self._submit([("seat_commit", dict(table_id=self.id, hand=msg.hand, seat=seat,
                                           commitment=c, value=None))])
        self.check_step()
        self.flush()

    def ask_seat_reveal(self, conn: Any, msg: P.SeatReveal) -> None:
        """A client's ``seat_reveal``."""
        seat, st = self._step_for(conn, msg.hand, "seat value")
        try:
            value = hex32(msg.value, "a seat value")
        except ValueError as exc:
            raise Refused("BadValue", str(exc)) from None
        if seat in st["values"]:
            raise Refused("AlreadyDone", f"seat {seat} revealed its value for hand "
                                         f"{msg.hand} already")
        if st["phase"] != "reveal":
            raise Refused("NotNow", f"hand {msg.hand}'s values are revealed once every "
                                    f"commitment is in: send seat_commit first")
        c = st["commits"].get(seat)
        if c is None:
            raise Refused("NotNow", f"seat {seat} committed to no value for hand {msg.hand}: "
                                    f"it has nothing to reveal (its value counts empty)")
        if value_commitment(value) != c:
            raise Refused("BadReveal", f"the SHA-256 of that value is "
                                       f"{value_commitment(value)}, not seat {seat}'s "
                                       f"commitment {c}: refused (without the right value "
                                       f"by the deadline the seat counts as withheld)")
        v = value.hex()
        st["values"][seat] = v
        self._submit([("seat_reveal", dict(k_table=self.id, k_hand=msg.hand, k_seat=seat,
                                           value=v))])
        self.check_step()
        self.flush()
