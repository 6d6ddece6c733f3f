"""The HTTP and WebSocket routes of ``qipai serve`` (Starlette, served by uvicorn).

Routes (docs/reference/protocol.md):

* ``GET /health`` — ``{"status": "ok", "tables": N, "refused": K, "db": "sqlite"}``;
  **503** ``{"status": "lock-lost", …, "message"}`` once the server lock is
  lost (:class:`~qipai.host.store.LockLost`: every act is then refused
  ``LockLost``, nothing more is written; restart the server); **503**
  ``{"status": "halted", …, "halted": N, "message"}`` while N tables are
  halted because their hand could not be read back after a failed write,
  or an internal error (of the server or a plugin) stopped them
  (restart the server once the cause is fixed); **503**
  ``{"status": "stalled", …, "message"}`` while a write has waited for the
  database longer than ``stall_s`` (nothing commits, so no act is
  acknowledged, until the database answers; then ``ok`` again).
* ``GET /variants``, ``GET /variants/{name}`` — options and the card table.
* ``POST /tables`` — create a table; ``GET /tables`` — the open tables;
  ``GET /tables/{id}``; ``GET /tables/{id}/records`` — the finished hands'
  records (``qipai replay`` reads the answer); ``POST /tables/{id}/close``
  with ``Authorization: Bearer ADMIN_TOKEN``.
* ``WS /tables/{id}/ws?token=TOKEN`` — one seat (or the spectator) per connection.
* ``GET /`` — the browser page (``qipai/host/static/``: lobby, play, watch,
  replay); ``GET /records`` — the latest finished hands of all tables;
  ``GET /tables/{id}/records/{hand}/replay`` and ``POST /replay`` — a
  finished record replayed step by step (:mod:`qipai.host.replay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
import secrets
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.middleware import Middleware
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from qipai.core.errors import QipaiError
from qipai.host import protocol as P
from qipai.host import trace
from qipai.host.game import (
    LOCK_LOST, MAX_CONNS_PER_SEAT, MAX_SPECTATORS, UNREADABLE, Conn, DamagedTable, HostedTable,
    Refused,
)
from qipai.host.offload import Crowded, Offload, Stopped
from qipai.host.replay import MAX_REPLAY_BYTES, replay_steps, shown
from qipai.host.store import (
    LockLost, ReadsBusy, Store, StoreError, StoreStopped, said, token_hash,
)

#: The largest HTTP request body read (bytes; ``qipai serve --max-body-bytes``).
MAX_BODY_BYTES = 64 * 1024
#: Client messages per second a connection may send (a token bucket of
#: RATE_BURST): more are dropped — each dropped ``act`` answered by a
#: ``Throttled`` error with its ``seq``, other frames by one such error a
#: second (``qipai serve --rate``, ``--burst``).
RATE_PER_S = 100.0
RATE_BURST = 200.0
#: A connection's ``resync`` is answered (a ``welcome``: the whole view,
#: the costliest message to build) at most once in this many seconds
#: (``qipai serve --resync-interval``); one sent sooner is answered when the
#: interval is over, and any more meanwhile are folded into that answer.
#: Before, only the message rate bounded them: 64 spectators sending
#: ``resync`` at 100 a second made the server build thousands of welcomes a
#: second and slowed every other table.  The page sends one after each
#: delta, at most one in flight: it redraws at most this often (0.1 s: a lag
#: a player does not notice; 0.5 s left the board behind the bots' moves).  A welcome is also
#: made once per state and seat and resent to every connection resyncing at
#: that state (``HostedTable._welcome_for``): with both, 64 spectators
#: resyncing as fast as they may raised another table's ping p95 from 1.0 to
#: 6 ms (13 ms with no interval at all), where it had been 218 ms.
RESYNC_S = 0.1
#: Seconds a write or a read may wait for the database before ``GET
#: /health`` answers 503 ``stalled`` (``qipai serve --stall-seconds``).  A
#: PostgreSQL batch commits, and a read answers, in milliseconds; one
#: waiting this long means the database (or the writer's session alone: a
#: lock held by another session, a hung backend) is not answering, while
#: the watchdog, which asks another session whether the writer's still
#: holds the lock, sees nothing wrong.
STALL_S = 10.0
#: Seconds the server's shutdown (SIGTERM, Ctrl-C) waits for requests still
#: answering, and then again for writes still committing, before it stops
#: anyway: on a database that does not answer either may wait as long as it
#: does.  Nothing of a write given up on was acknowledged, and the
#: process's end rolls it back, or it committed (a restart replays it).
SHUTDOWN_S = 5.0
#: Replays (``POST /replay``, ``GET /tables/{id}/records/{hand}/replay``)
#: run at once, each in a worker thread off the event loop (a 256 KiB
#: body costs tens of ms of CPU that would otherwise stall every table);
#: up to :data:`REPLAY_WAITING` more wait their turn, and more than that
#: are answered 503 ``Busy``.
REPLAY_WORKERS = 1
REPLAY_WAITING = 8
#: A ruleset spec not loaded yet (``POST /tables``, ``GET /variants/{name}``)
#: is loaded in a worker thread (a few ms of CPU each, which in the event
#: loop held up every table: 150 distinct specs a second raised another
#: table's median ping from 0.7 to 68 ms), one at a time; up to
#: :data:`SPEC_WAITING` more wait, and more than that are answered 503
#: ``Busy``.  The last :data:`SPEC_CACHE` specs loaded (as written) are
#: answered from memory, in the loop.
SPEC_WORKERS = 1
SPEC_WAITING = 16
SPEC_CACHE = 64
#: Open tables a server holds at most (``qipai serve --max-tables``): a
#: ``POST /tables`` beyond it is answered 503 ``TooManyTables``.  Anyone who
#: reaches the server may create a table, each held in memory and replayed
#: at every start; before, nothing bounded them (5,000 made in 8.5 s took
#: the server from 51 to 160 MB).  Tables restored at start count, and are
#: all served even beyond it.
MAX_TABLES = 1000
#: WebSocket connections a server holds at once (``qipai serve
#: --max-connections``), counted from the upgrade until the socket is
#: closed (a connection the server has closed but whose client has not
#: answered the close yet included): one more upgrade is answered HTTP 503
#: ``TooManyConnections`` and its socket closed at once.  Each holds a file
#: descriptor, and a process that runs out of them accepts nothing — no
#: player, no ``GET /health`` — while the connections last (before, 250
#: spectator connections, which anyone may make by creating tables, did
#: that to a server limited to 256 descriptors).  The default,
#: :func:`default_max_connections`, keeps :data:`FD_RESERVE` descriptors
#: for HTTP requests and the database.
MAX_CONNECTIONS = 4096
FD_RESERVE = 256
#: Seconds the server waits for a client to answer its close (a refusal, a
#: closed table) before it closes the socket anyway (uvicorn: 10 s, during
#: which a silent client held a descriptor); a socket still not closed as
#: long again (a client that reads nothing: what is buffered for it never
#: leaves) is cut (``transport.abort``).
WS_CLOSE_S = 2.0
#: Seconds a WebSocket may read nothing of what the server has for it (its
#: write buffer over the high-water mark all the while) before it is cut.
#: Before, such a client held its socket, its slot and megabytes of the
#: kernel's buffers for ever — even past its table's close, its pings
#: unanswered.
WRITE_STALL_S = 30.0
#: The log says at most once in this many seconds how many connections the
#: limit refused (a client reconnecting in a loop wrote 9,000 lines in 5 s).
REFUSALS_LOG_S = 60.0


def descriptor_room() -> int | None:
    """The process's descriptor limit (``ulimit -n``, the soft
    ``RLIMIT_NOFILE``) less :data:`FD_RESERVE`; None if unlimited or
    unknown (not a POSIX system)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY else soft - FD_RESERVE


def default_max_connections() -> int:
    """:data:`MAX_CONNECTIONS`, or :func:`descriptor_room` when that is
    lower — at least 16."""
    room = descriptor_room()
    return MAX_CONNECTIONS if room is None else max(16, min(MAX_CONNECTIONS, room))


#: What a table id may be in a path: the server makes 12 hex digits; any
#: other id is answered ``UnknownTable`` without asking the database.
_TABLE_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
#: The WebSocket transport's frame cap (bytes): a larger frame closes the
#: connection (code 1009).  At least the message cap.
MAX_FRAME_BYTES = 1024 * 1024


class RestoreRefused(QipaiError):
    """A stored table cannot be restored under this server's ``--plugin``
    options (another house-rule set than it was made with)."""


class Server:
    """The server's state: the store, the hosted tables, the settings.

    Args:
        db: a database URL (``sqlite:///qipai.db``, ``postgresql://…``).
        turn_timeout: seconds a seat has for a turn.  claim_timeout: for a
            claim window (default: ``turn_timeout``).
        seed: a server seed (tests and demos: every table's hand ``i`` is
            dealt from ``hand_seed(seed, i)``, and says so); None: the OS's CSPRNG.
        plugins: house-rule plugin specs (``MODULE`` or ``FILE.py``) every table uses.
        rate_per_s, burst: the per-connection throttle (messages a second, and
            the bucket's size; :data:`RATE_PER_S`, :data:`RATE_BURST`).
        max_message_bytes: the largest client message read (bytes;
            :data:`qipai.host.protocol.MAX_MESSAGE_BYTES`).
        max_body_bytes: the largest HTTP body read (bytes; :data:`MAX_BODY_BYTES`).
        max_replay_bytes: the largest ``POST /replay`` body read (bytes;
            :data:`qipai.host.replay.MAX_REPLAY_BYTES`).

        allow_version_mismatch: restore a table made under another qipai
            version (``--allow-version-mismatch``: knowingly, after an
            upgrade); the variant version, ruleset and plugins must still match.
        stall_s: seconds a write or a read may wait for the database
            before ``GET /health`` answers 503 ``stalled`` (:data:`STALL_S`).
        resync_s: a connection's ``resync`` is answered at most once in this
            many seconds (:data:`RESYNC_S`).
        max_tables: open tables at most; ``POST /tables`` beyond is refused
            (:class:`TooManyTables`, :data:`MAX_TABLES`).
        max_connections: WebSocket connections at once, server-wide
            (:data:`MAX_CONNECTIONS`; counted by :func:`ws_protocol`, the
            protocol ``qipai serve`` runs); one more upgrade is answered
            HTTP 503 ``TooManyConnections`` (None:
            :func:`default_max_connections`; a larger one than
            :func:`descriptor_room` is logged as such at start).
        bot_delay: seconds the bots wait before answering what came up — a
            bot's turn, or a card the bots are asked about in a window (one
            wait for all of them) — (0: at once), so people can follow a
            table where bots play; the same wait every time, whatever the
            bots hold or decide.

    An open table that cannot be restored — made under another qipai or
    variant version, ruleset or house-plugin source (``VersionMismatch``,
    :mod:`qipai.core.stamps`), with other ``--plugin`` options
    (:class:`RestoreRefused`), or not replaying from its rows — does not
    stop the server: it is logged in one line, kept in :attr:`refused`
    (its id → the error), left untouched in the database, and its
    endpoints answer that error; the other tables are served.

    Raises:
        StoreError: the database cannot be opened, or it failed a read of
            an open table being restored (nothing is served, the lock is
            released).
    """

    def __init__(self, db: str, turn_timeout: float = 30.0, claim_timeout: float | None = None,
                 seed: int | None = None, plugins: tuple[str, ...] = (),
                 quiet: bool = False, rate_per_s: float = RATE_PER_S,
                 burst: float = RATE_BURST, max_message_bytes: int = P.MAX_MESSAGE_BYTES,
                 max_body_bytes: int = MAX_BODY_BYTES,
                 allow_version_mismatch: bool = False,
                 max_replay_bytes: int = MAX_REPLAY_BYTES, stall_s: float = STALL_S,
                 resync_s: float = RESYNC_S, max_tables: int = MAX_TABLES,
                 bot_delay: float = 0.0, max_connections: int | None = None) -> None:
        from qipai.core.ruleset import load_plugin

        self.db_url = db
        self.turn_timeout = float(turn_timeout)
        self.claim_timeout = float(claim_timeout if claim_timeout is not None else turn_timeout)
        self.seed = seed
        self.plugin_specs = list(plugins)
        self.plugins = [load_plugin(p) for p in plugins]
        self.quiet = quiet
        self.allow_version_mismatch = allow_version_mismatch
        self.rate_per_s, self.burst = float(rate_per_s), float(burst)
        self.max_message_bytes, self.max_body_bytes = int(max_message_bytes), int(max_body_bytes)
        self.max_replay_bytes = int(max_replay_bytes)
        self.stall_s = float(stall_s)
        self.resync_s = float(resync_s)
        self.max_tables = int(max_tables)
        self.max_connections = int(max_connections if max_connections is not None
                                   else default_max_connections())
        self.connections = 0   # WebSocket sockets open now (ws_protocol counts them)
        self.refusals_log_s = REFUSALS_LOG_S
        self._refusals = 0   # refused over the limit since the last line about them
        self._refusals_timer: asyncio.TimerHandle | None = None
        room = descriptor_room()
        if room is not None and self.max_connections > room:
            given = (f"--max-connections {self.max_connections} is" if max_connections is not None
                     else f"the least --max-connections, {self.max_connections}, is")
            self.log(f"{given} more than the descriptor limit leaves room for (ulimit -n "
                     f"{room + FD_RESERVE}, less {FD_RESERVE} for HTTP and the database): the "
                     f"server may run out of descriptors before the limit; raise ulimit -n")
        self.bot_delay = float(bot_delay)
        self._creating = 0   # POST /tables accepted and not done (counted as open)
        self._stalled: float | None = None   # time.monotonic() the logged stall began
        self.replays = Offload("qipai-replay", REPLAY_WORKERS, REPLAY_WAITING)
        self.specs = Offload("qipai-ruleset", SPEC_WORKERS, SPEC_WAITING)
        #: (spec as written, with the house plugins) → its ruleset, the latest
        #: SPEC_CACHE loaded (the oldest goes first)
        self._rulesets: dict[tuple[str, bool], Any] = {}
        from qipai.core.stamps import qipai_version

        self.qipai_version = qipai_version()
        self.store = Store(db)
        self.tables: dict[str, HostedTable] = {}
        #: Open tables of the database this server does not play: id → why.
        self.refused: dict[str, QipaiError] = {}
        for row in self.store.open_tables():
            try:
                self.restore(row)
            except StoreError:
                # the database failed a read: not this table's fault, and refusing
                # it until a restart would leave it unserved; the server does not start
                self.store.close()
                raise
            except QipaiError as exc:
                self.refused[row["id"]] = exc
                why = getattr(exc, "detail", str(exc))   # DamagedTable: its own words
                self.log(f"table {row['id']} not restored ({type(exc).__name__}): "
                         f"{' '.join(why.split())}")

    def lock_lost(self, exc: LockLost) -> None:
        """(The store, in the loop, once: its lock's watchdog or its writer
        saw the loss.)  The server lock is lost: one log line, and every
        table halts (``LockLost``)."""
        self.log(f"LOCK LOST: {exc}")
        for t in self.tables.values():
            t.lock_lost(exc)

    def note_stall(self) -> tuple[float, str] | None:
        """``(seconds, what)`` of the oldest wait for the database
        (:meth:`Store.waiting`: a write, a new table's write or a read)
        when it is longer than :attr:`stall_s` (``GET /health``'s
        ``stalled``), else None.  Logs one line when a stall is first seen
        so (by ``/health`` or the app's once-a-second check), and one when
        nothing has waited that long any more — so an operator who reads
        only the log sees both.  (Whether the waits then succeeded or
        failed, each failure says in its own line.)"""
        oldest = self.store.waiting()
        now = time.monotonic()
        if oldest is None or now - oldest[0] <= self.stall_s:
            if self._stalled is not None:
                self.log(f"the stall is over after at most {now - self._stalled:.0f} s: nothing "
                         f"has waited longer than --stall-seconds {self.stall_s:g} for the "
                         f"database since")
                self._stalled = None
            return None
        since, what = oldest
        if self._stalled is None:
            self._stalled = since
            self.log(f"STALLED: {what} has waited {now - since:.0f} s for the database (more "
                     f"than --stall-seconds {self.stall_s:g}); while a write waits nothing "
                     f"commits and no act is acknowledged")
        return now - since, what

    def log(self, message: str) -> None:
        if not self.quiet:
            print(f"qipai serve: {message}", file=sys.stderr, flush=True)

    def refused_connection(self) -> None:
        """(In the loop.)  A connection refused over :attr:`max_connections`:
        logged at once if none was in the last :attr:`refusals_log_s`
        seconds, else counted into one line that many seconds on; a
        line says when that long passed with none refused."""
        self._refusals += 1
        if self._refusals_timer is None:
            self._refusals = 0
            self.log(f"the limit of WebSocket connections is reached (--max-connections "
                     f"{self.max_connections}): new ones are refused (TooManyConnections) "
                     f"until some close; the refusals are counted in at most one line every "
                     f"{self.refusals_log_s:g} s")
            self._refusals_timer = asyncio.get_running_loop().call_later(
                self.refusals_log_s, self._refusals_line)

    def _refusals_line(self) -> None:
        if self._refusals:
            self.log(f"{self._refusals} more connections refused over --max-connections "
                     f"{self.max_connections} in the last {self.refusals_log_s:g} s "
                     f"({self.connections} open now)")
            self._refusals = 0
            self._refusals_timer = asyncio.get_running_loop().call_later(
                self.refusals_log_s, self._refusals_line)
        else:
            self.log(f"no connection refused over --max-connections {self.max_connections} "
                     f"in the last {self.refusals_log_s:g} s ({self.connections} open now)")
            self._refusals_timer = None

    # ---------------------------------------------------------------- tables

    def ruleset(self, spec: str, house: bool = True) -> Any:
        """The ruleset of ``spec`` (with the server's house plugins, unless
        not ``house``: the variant's own, as ``GET /variants`` shows it).
        Blocking (the loop: :meth:`ruleset_async`)."""
        from qipai.core.ruleset import load_cached

        return load_cached(spec, plugins=self.plugins if house else ())

    async def ruleset_async(self, spec: str, house: bool = True) -> Any:
        """:meth:`ruleset`, in the loop: one of the last :data:`SPEC_CACHE`
        loaded at once, any other loaded in a worker thread (:attr:`specs`).

        Raises:
            UnknownVariant, BadOption: as :meth:`ruleset` (not kept).
            Crowded: :data:`SPEC_WORKERS` loads run and :data:`SPEC_WAITING` wait.
            Stopped: the server is stopping."""
        key = (spec, house)
        rs = self._rulesets.get(key)
        if rs is not None:
            return rs
        rs = await self.specs.run(self.ruleset, spec, house, what="a ruleset's load")
        if key not in self._rulesets and len(self._rulesets) >= SPEC_CACHE:
            del self._rulesets[next(iter(self._rulesets))]
        self._rulesets[key] = rs
        return rs

    def restore(self, row: dict[str, Any]) -> HostedTable:
        """Serve the open table of ``row`` again (its current hand rebuilt).

        Raises:
            RestoreRefused, VersionMismatch: made under other plugins or versions.
            DamagedTable: its row or its hand's rows do not read or replay.
            StoreError: the database failed a read."""
        try:
            return self._restore(row)
        except QipaiError:   # (some are ValueErrors too)
            raise
        except UNREADABLE as exc:
            raise DamagedTable(
                f"table {row.get('id')}: its stored table row does not read "
                f"({type(exc).__name__}; the server's log says why); the database is damaged",
                f"its stored table row does not read: {said(exc)}") from None

    def _restore(self, row: dict[str, Any]) -> HostedTable:
        stored = msgspec.json.decode(row["plugins"])
        if stored != self.plugin_specs:
            raise RestoreRefused(f"table {row['id']} was made with house plugins {stored}; "
                                 f"this server has {self.plugin_specs}: start it with the same "
                                 f"--plugin options")
        from qipai.core.stamps import Stamp, check, stamp_of

        rs = self.ruleset(row["spec"])
        made = msgspec.json.decode(row["stamp"], type=Stamp)
        check(f"table {row['id']}", {"qipai_version": made.qipai_version, "version": made.version,
                                    "spec": made.spec, "plugins": made.plugins}, stamp_of(rs),
              self.allow_version_mismatch)
        t = HostedTable(self, row, rs)
        t.rebuild()
        self.tables[t.id] = t
        return t

    async def create(self, body: P.CreateTable) -> tuple[HostedTable, P.Created]:
        """A new table (validated before anything is written; the loop waits
        for its commit without blocking, :meth:`Store.create_table_async`).

        Raises:
            TooManyTables: :attr:`max_tables` tables are open already.
            QipaiError: an unknown variant, a bad option, bad bot seats.
            LockLost, StoreError: the database did not take it.
        """
        open_now = self.open_tables()
        if open_now >= self.max_tables:
            raise TooManyTables(
                f"this server holds {open_now} open tables, its limit (qipai serve "
                f"--max-tables {self.max_tables}): no table is made until one is closed")
        self._creating += 1
        try:
            return await self._create(body)
        finally:
            self._creating -= 1

    def open_tables(self) -> int:
        """The open tables counted against :attr:`max_tables`: those served
        (halted ones too), those not restored (:attr:`refused`: still open in
        the database) and those being created."""
        return sum(1 for t in self.tables.values() if t.open) + len(self.refused) + \
            self._creating

    async def _create(self, body: P.CreateTable) -> tuple[HostedTable, P.Created]:
        from qipai.core.stamps import stamp_of

        rs = await self.ruleset_async(body.variant)
        n = rs.manifest.players
        bots = body.bots
        if any(type(b) is not int or not 0 <= b < n for b in bots) or len(set(bots)) != len(bots):
            raise BadBots(f"bots must be distinct seats of {rs.name} (0..{n - 1}), not {bots}")
        tid = secrets.token_hex(6)
        seat_tokens = {str(s): secrets.token_urlsafe(24) for s in range(n) if s not in bots}
        spectator, admin = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        row = dict(id=tid, spec=rs.spec, variant=rs.name,
                   options=msgspec.json.encode(rs.options_dict()).decode(),
                   plugins=msgspec.json.encode(self.plugin_specs).decode(),
                   stamp=msgspec.json.encode(stamp_of(rs)).decode(),
                   qipai_version=self.qipai_version, variant_version=rs.manifest.version,
                   rng="seeded" if self.seed is not None else "os",
                   seed=str(self.seed) if self.seed is not None else None,
                   bots=msgspec.json.encode(sorted(bots)).decode(),
                   tokens=msgspec.json.encode({s: token_hash(t) for s, t in seat_tokens.items()}
                                              ).decode(),
                   spectator_hash=token_hash(spectator), admin_hash=token_hash(admin),
                   open=True, created=time.time())
        t = HostedTable(self, row, rs)
        hand = t.new_hand(0, None)
        await self.store.create_table_async(row, t.hand_row(0, *hand))
        t.install(0, *hand)
        t.committed_now()
        self.tables[tid] = t
        if self.store.lost is not None:   # lost while the loop awaited the commit:
            t.lock_lost(self.store.lost)  # lock_lost() did not see this table yet
        else:
            t.start()
        return t, P.Created(id=tid, seats=seat_tokens,
                            spectator=f"/tables/{tid}/ws?token={spectator}",
                            spectator_token=spectator, admin=admin, ws=f"/tables/{tid}/ws")


class TooManyTables(QipaiError):
    """``POST /tables``: the server holds ``--max-tables`` open tables already."""


class BadBots(QipaiError, ValueError):
    """``POST /tables``: the bot seats are not distinct seats of the variant."""


# -------------------------------------------------------------------- HTTP helpers

_ENC = msgspec.json.Encoder()


def _json(obj: Any, status: int = 200) -> Response:
    return Response(_ENC.encode(obj), status_code=status, media_type="application/json")


def _error(code: str, message: str, status: int) -> Response:
    return _json(P.HttpError(error=code, message=message), status)


def _server(request: Request | WebSocket) -> Server:
    return request.app.state.server


async def health(request: Request) -> Response:
    s = _server(request)
    counts = {"tables": len(s.tables), "refused": len(s.refused), "connections": s.connections,
              "db": s.store.dialect}
    lost = s.store.lost
    if lost is not None:
        return _json({"status": "lock-lost", **counts, "message": LOCK_LOST}, 503)
    halted = sorted(t.id for t in s.tables.values() if t.halted is not None)
    if halted:   # a hand not read back after a failed write, or an internal error
        shown_ids = ", ".join(halted[:5]) + (f" and {len(halted) - 5} more" if len(halted) > 5
                                             else "")
        why = sorted({"after a failed write the hand could not be read back from the database"
                      if s.tables[i].halted[0] != "InternalError" else  # type: ignore[index]
                      "an internal error (of the server or a plugin) stopped it"
                      for i in halted})
        return _json({"status": "halted", **counts, "halted": len(halted),
                      "message": f"{len(halted)} table(s) take no action until the server is "
                                 f"restarted ({shown_ids}): {'; '.join(why)} (the server's log "
                                 f"says why); restart the server once the cause is fixed"}, 503)
    stall = s.note_stall()
    if stall is not None:
        waited, what = stall
        return _json({"status": "stalled", **counts,
                      "message": f"{what} has waited {waited:.0f} s for the database (more than "
                                 f"--stall-seconds {s.stall_s:g}): while a write waits nothing "
                                 f"commits and no act is acknowledged"}, 503)
    return _json({"status": "ok", **counts})


def _lost(s: Server) -> Response | None:
    """The typed 503 answer of a write once the server lock is lost
    (:data:`~qipai.host.game.LOCK_LOST`: the reason is in the log)."""
    return None if s.store.lost is None else _error("LockLost", LOCK_LOST, 503)


def _unread(s: Server, exc: StoreError) -> Response:
    """The typed 503 answer of a read the database failed (``Unavailable``:
    the database's own words, which may name its host and user, go to the
    server's log, not to the client) or that too many reads wait before
    (``Busy``, :class:`ReadsBusy`)."""
    if isinstance(exc, ReadsBusy):
        return _error("Busy", str(exc), 503)
    if isinstance(exc, StoreStopped):
        return _error("Unavailable", str(exc), 503)
    s.log(f"a read failed: {exc}")
    return _error("Unavailable", "the database did not answer the read (the server's log "
                                 "says why); try again shortly", 503)


def _table_id(request: Request | WebSocket) -> str | None:
    """The path's table id if it can be one (:data:`_TABLE_ID`), else None."""
    tid = request.path_params["id"]
    return tid if _TABLE_ID.fullmatch(tid) else None


def _no_table(request: Request | WebSocket) -> Response:
    return _error("UnknownTable", f"no table {shown(request.path_params['id'])}", 404)


def _refused(s: Server, tid: str) -> Response | None:
    """The typed 409 answer for a table this server refused to restore."""
    exc = s.refused.get(tid)
    if exc is None:
        return None
    return _error(type(exc).__name__, f"table {tid} is not served: {exc}", 409)


def _no_spec_load(exc: Crowded | Stopped) -> Response:
    """503 for a ruleset load not taken (:meth:`Server.ruleset_async`): too
    many waiting (``Busy``), or the server stopping (``Unavailable``)."""
    if isinstance(exc, Crowded):
        return _error("Busy", f"{SPEC_WORKERS} ruleset load runs and {SPEC_WAITING} wait "
                              f"already: try again shortly", 503)
    return _error("Unavailable", str(exc), 503)


async def variants(request: Request) -> Response:
    from qipai.core.ruleset import available

    s = _server(request)
    out = []
    for name in sorted(available()):
        try:
            rs = await s.ruleset_async(name, house=False)
        except (Crowded, Stopped) as exc:
            return _no_spec_load(exc)
        except Exception:  # noqa: BLE001 - a broken plugin does not hide the others
            continue
        m = rs.manifest
        out.append({"name": name, "title": m.title, "family": m.family, "players": m.players,
                    "version": m.version, "options": rs.options_dict()})
    return _json(out)


async def variant(request: Request) -> Response:
    name = request.path_params["name"]
    if len(name) > 64 or not name.isprintable():
        return _error("UnknownVariant", f"no variant {shown(name)}", 404)
    try:
        rs = await _server(request).ruleset_async(name, house=False)
    except (Crowded, Stopped) as exc:
        return _no_spec_load(exc)
    except QipaiError as exc:
        return _error(type(exc).__name__, str(exc), 404)
    m = rs.manifest
    cards = m.cards
    glyph = getattr(cards, "glyph", None)
    table = [{"kind": k, "notation": cards.token(k), "chinese": cards.chinese(k),
              "glyph": glyph(k) if glyph else None} for k in range(cards.n_kinds)]
    return _json({"name": rs.name, "title": m.title, "family": m.family, "players": m.players,
                  "version": m.version, "options": rs.options_dict(),
                  "options_schema": msgspec.json.schema(m.options_type),
                  "names": dict(m.names),
                  "cards": {"system": cards.name, "copies": cards.copies, "kinds": table}})


async def _body(request: Request, cap: int | None = None) -> bytes | Response:
    cap = cap or _server(request).max_body_bytes
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return _error("TooLarge", f"a request body is at most {cap} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def create_table(request: Request) -> Response:
    body = await _body(request)
    if isinstance(body, Response):
        return body
    if not body.strip():
        return _error("BadMessage", 'the body is empty: a table request is a JSON object, '
                                    '{"variant": "guilin-mahjong", "bots": [1, 2, 3]} '
                                    '({} for the defaults)', 400)
    try:
        spec = msgspec.json.decode(body, type=P.CreateTable)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return _error("BadMessage", f"not a table request: {exc}", 400)
    lost = _lost(_server(request))
    if lost is not None:
        return lost
    s = _server(request)
    try:
        _, created = await s.create(spec)
    except LockLost:
        return _error("LockLost", LOCK_LOST, 503)
    except TooManyTables as exc:
        return _error("TooManyTables", str(exc), 503)
    except (Crowded, Stopped) as exc:
        return _no_spec_load(exc)
    except StoreError as exc:
        s.log(f"a new table was not written: {exc}")   # the database's words: log only
        return _error("Unavailable", "the database did not take the table (the server's log "
                                     "says why); try again shortly", 503)
    except QipaiError as exc:
        return _error(type(exc).__name__, str(exc), 400)
    return _json(created, 201)


async def list_tables(request: Request) -> Response:
    """The tables this server plays: open and not halted (a halted table's
    hand in memory may not be the database's; ``GET /tables/{id}`` reads it)."""
    return _json([t.info() for t in _server(request).tables.values()
                  if t.open and t.halted is None])


def _table(request: Request) -> HostedTable | None:
    return _server(request).tables.get(request.path_params["id"])


async def get_table(request: Request) -> Response:
    s = _server(request)
    t = _table(request)
    if t is not None and t.halted is None:
        return _json(t.info())
    refused = _refused(s, request.path_params["id"])
    if refused is not None:
        return refused
    stored = await _stored(s, request)
    if isinstance(stored, Response):
        return stored
    row, done, totals = stored
    out = {"id": row["id"], "spec": row["spec"], "variant": row["variant"],
           "players": len(totals), "bots": msgspec.json.decode(row["bots"]),
           "rng": row["rng"], "open": bool(row["open"]), "hands_done": done, "totals": totals}
    if t is not None and t.halted is not None:
        # halted: what the database holds, not the hand in memory (it may hold
        # actions the database does not), and why it is not played
        out["halted"], out["message"] = t.halted
    return _json(out)


async def _stored(s: Server, request: Request
                  ) -> Response | tuple[dict[str, Any], int, list[int]]:
    """The path's table as the database holds it: ``(row, hands done,
    totals)`` — the totals one per seat (0 each before a hand is done) —
    or the error answer (``UnknownTable``, or the read failed)."""
    tid = _table_id(request)
    if tid is None:
        return _no_table(request)
    try:
        row = await s.store.read(s.store.table, tid)
        if row is None:
            return _no_table(request)
        nets = await s.store.read(s.store.nets_of, row["id"])
    except StoreError as exc:
        return _unread(s, exc)
    # every seat is a bot's or has a token (POST /tables)
    seats = len(msgspec.json.decode(row["bots"])) + len(msgspec.json.decode(row["tokens"]))
    totals = [0] * seats
    for net in nets:
        totals = [a + b for a, b in zip(totals, msgspec.json.decode(net))]
    return row, len(nets), totals


async def records(request: Request) -> Response:
    s = _server(request)
    tid = _table_id(request)
    if tid is None:
        return _no_table(request)
    try:
        if await s.store.read(s.store.table, tid) is None:
            return _no_table(request)
        stored = await s.store.read(s.store.hands_of, tid)
    except StoreError as exc:
        return _unread(s, exc)
    hands, total = [], None
    for h in stored:
        if h["net"] is None:  # unfinished (or abandoned at close): not a finished hand
            continue
        rec = msgspec.json.decode(h["record"])
        net = msgspec.json.decode(h["net"])
        total = net if total is None else [a + b for a, b in zip(total, net)]
        hands.append({"hand": h["hand"], "record": rec})
    return _json({"table": tid, "hands": hands, "total": total})


async def finished(request: Request) -> Response:
    """``GET /records``: the latest finished hands (``?limit=N``, at most 500)."""
    limit = _whole(request.query_params.get("limit", "50"))
    if limit is None:
        return _error("BadMessage", f"limit must be a whole number written in ASCII digits, "
                                    f"not {shown(request.query_params['limit'])}", 400)
    limit = max(1, min(500, limit))
    s = _server(request)
    store = s.store
    try:
        rows = await store.read(store.finished_hands, limit)
    except StoreError as exc:
        return _unread(s, exc)
    return _json([{"table": r["table_id"], "hand": r["hand"], "spec": r["spec"],
                   "variant": r["variant"], "net": msgspec.json.decode(r["net"])} for r in rows])


_WHOLE = re.compile(r"0|[1-9][0-9]{0,17}")


def _whole(text: str) -> int | None:
    """``text`` as a whole number if it is one written in ASCII digits,
    without sign, spaces, underscores or leading zeros (``int()`` also
    reads ``"٣"``, ``" 3"``, ``"+3"`` and ``"1_0"``), else None."""
    return int(text) if _WHOLE.fullmatch(text) else None


def _replay_json(server: Server, data: bytes, table: str | None, hand: int | None) -> bytes:
    """The replay's JSON answer (run in a worker thread)."""
    return msgspec.json.encode(replay_steps(data, plugins=server.plugins, table=table, hand=hand,
                                            max_bytes=server.max_replay_bytes))


async def _replayed(server: Server, data: bytes, table: str | None = None,
                    hand: int | None = None) -> Response:
    """Replay ``data`` in a worker thread (:data:`REPLAY_WORKERS` at once,
    :data:`REPLAY_WAITING` more queued, the next answered 503 ``Busy``), so
    that a large record does not stall the event loop and every table."""
    try:
        body = await server.replays.run(_replay_json, server, data, table, hand, what="a replay")
    except Crowded:
        return _error("Busy", f"{REPLAY_WORKERS} replay runs and {REPLAY_WAITING} wait "
                              f"already: try again shortly", 503)
    except QipaiError as exc:
        return _error(type(exc).__name__, str(exc), 400)
    return Response(body, media_type="application/json")


async def replay_stored(request: Request) -> Response:
    """``GET /tables/{id}/records/{hand}/replay``: a stored finished hand,
    step by step (an unfinished hand is 404, its cards never served)."""
    s = _server(request)
    tid = _table_id(request)
    if tid is None:
        return _no_table(request)
    try:
        if await s.store.read(s.store.table, tid) is None:
            return _no_table(request)
    except StoreError as exc:
        return _unread(s, exc)
    hand = _whole(request.path_params["hand"])
    if hand is None:
        return _error("UnknownHand", f"a hand is a whole number written in ASCII digits "
                                     f"(0, 1, …), not {shown(request.path_params['hand'])}", 404)
    try:
        stored = await s.store.read(s.store.hands_of, tid)
    except StoreError as exc:
        return _unread(s, exc)
    for h in stored:
        if h["hand"] == hand and h["net"] is not None:
            return await _replayed(s, h["record"].encode(), tid, hand)
    return _error("UnknownHand", f"table {tid} has no finished hand {hand}", 404)


async def replay_posted(request: Request) -> Response:
    """``POST /replay``: a record in the body (at most ``--max-replay-bytes``)."""
    s = _server(request)
    body = await _body(request, s.max_replay_bytes)
    if isinstance(body, Response):
        return body
    return await _replayed(s, body)


#: The page's files (index.html, page.css, page.js), served under /static.
_STATIC = Path(__file__).with_name("static")


async def page(request: Request) -> Response:
    """``GET /``: the browser page."""
    return Response((_STATIC / "index.html").read_bytes(), media_type="text/html; charset=utf-8")


async def close_table(request: Request) -> Response:
    """``POST /tables/{id}/close``; a table closed already (by this server
    or an earlier one: it is no longer held) answers as its close did, so
    a client that lost the first answer may ask again."""
    s = _server(request)
    t = _table(request)
    refused = _refused(s, request.path_params["id"])
    if refused is not None:
        return refused
    auth = request.headers.get("authorization", "")
    token = auth[7:] if auth.lower().startswith("bearer ") else ""
    if t is None:
        stored = await _stored(s, request)
        if isinstance(stored, Response):
            return stored
        row, _, totals = stored
        if not _admin(token, row["admin_hash"]):
            return _bad_admin()
        if row["open"]:   # open in the database yet not served: not this server's
            return _error("UnknownTable", f"no open table {shown(row['id'])} is served here",
                          404)
        return _json({"id": row["id"], "open": False, "totals": totals})
    if not _admin(token, t.admin_hash):
        return _bad_admin()
    lost = _lost(s)
    if lost is not None:
        return lost
    if t.halted is not None and t.halted[0] == "InternalError":   # not worth retrying
        return _error("InternalError", t.halted[1], 503)
    try:
        await t.close()
    except LockLost as exc:
        return _error("LockLost", str(exc), 503)
    except StoreError as exc:   # its message names no database detail (logged)
        return _error("Unavailable", str(exc), 503)
    return _json({"id": t.id, "open": False, "totals": t.totals})


def _admin(token: str, admin_hash: str) -> bool:
    """Whether ``token`` is the table's admin token (compared in constant time)."""
    return bool(token) and secrets.compare_digest(token_hash(token), admin_hash)


def _bad_admin() -> Response:
    return _error("BadToken", "closing a table needs its admin token "
                              "(Authorization: Bearer ADMIN)", 403)


# -------------------------------------------------------------------- WebSocket


async def _writer(ws: WebSocket, conn: Conn) -> None:
    send = ws.send
    sent = 0
    while True:
        frame = conn.take() if conn.outbox else await conn.frames_out()
        if frame is None:
            with contextlib.suppress(Exception):
                await ws.close(conn.close_code or 1000)
            return
        await send({"type": "websocket.send", "text": frame})
        if conn.tr:
            sent += 1
            now = trace.perf_counter()
            for key, e in list(conn.tr.items()):
                if e[trace.FRAME] is not None and e[trace.FRAME] <= sent:
                    e[trace.SENT] = now
                    del conn.tr[key]
                    trace.done(e)
        elif trace.ON:
            sent += 1


def _act_seq(data: str | bytes, cap: int) -> int | None:
    """The ``seq`` of ``data`` if it is a well-formed :class:`~qipai.host.protocol.Act`
    within the size cap, else None (a throttled frame is read only this far)."""
    if len(data) > cap:
        return None
    try:
        msg = P.decode_client(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return msg.seq if isinstance(msg, P.Act) else None


async def table_ws(ws: WebSocket) -> None:
    """``/tables/{id}/ws`` (an upgrade beyond ``--max-connections`` never
    reaches it: :func:`ws_protocol` answers it)."""
    await ws.accept()
    s = _server(ws)
    t = s.tables.get(ws.path_params["id"])

    async def refuse(code: str, message: str, close: int) -> None:
        await ws.send_text(P.encode(P.Error(code=code, message=message)).decode())
        await ws.close(close)

    if ws.path_params["id"] in s.refused:
        exc = s.refused[ws.path_params["id"]]
        return await refuse("NotRestored", f"table {ws.path_params['id']} is not served "
                                           f"({type(exc).__name__}): {exc}", 4409)
    if t is None or not t.open:
        return await refuse("UnknownTable", f"no open table {shown(ws.path_params['id'])}", 4404)
    token = ws.query_params.get("token", "")
    who = t.who(token_hash(token)) if token else None
    if who is None:   # before anything of the table's state is told
        return await refuse("BadToken", "the token is no seat's of this table", 4401)
    if t.halted is not None:   # the server lock lost, or its hand unreadable
        return await refuse(t.halted[0], t.halted[1], 4503)
    seat = None if who == "spectator" else int(who)
    most = MAX_CONNS_PER_SEAT if seat is not None else MAX_SPECTATORS
    if sum(1 for c in t.conns if c.seat == seat) >= most:
        return await refuse("TooManyConnections",
                            f"{'seat ' + str(seat) if seat is not None else 'spectators'} of this "
                            f"table already {'has' if seat is not None else 'have'} {most} "
                            f"connections open; close one first", 4429)
    conn = Conn(seat=seat)
    if trace.ON:
        conn.tr = {}
    writer = asyncio.get_running_loop().create_task(_writer(ws, conn))
    rate, burst, cap = s.rate_per_s, s.burst, s.max_message_bytes
    allowance, last, warned = burst, time.monotonic(), 0.0
    loop = asyncio.get_running_loop()
    every = s.resync_s
    resynced = -every   # when the last resync was answered (the first: at once)
    due: asyncio.TimerHandle | None = None   # a resync's answer waiting for its time

    def answer_resync(later: bool = False) -> None:
        nonlocal resynced, due
        due, resynced = None, time.monotonic()
        if conn not in t.conns:
            return
        if t.halted is not None:   # its hand may hold what is not committed
            conn.send(P.Error(code=t.halted[0], message=t.halted[1]))
        elif t.rereading is not None and conn.early is not None:
            pass   # its first welcome is yet to come: that answers it
        elif t.rereading is not None:   # the same, until it is read back
            conn.send(P.Error(code="Unavailable",
                              message="the table is reading its hand back from the "
                                      "database after a failed write; a welcome "
                                      "follows once it is back"))
        elif t.open:
            t.greet(conn)
        if later:   # (in the loop's receive, flush() frames it)
            t.flush()

    try:
        t.attach(conn)   # (inside: a connection is detached whatever happens)
        while True:
            t.flush()   # what the last frame caused (held while a write awaits its commit)
            frame = await ws.receive()
            t_recv = trace.perf_counter() if trace.ON else 0.0
            if frame["type"] == "websocket.disconnect":
                break
            data = frame.get("text")
            if data is None:
                data = frame.get("bytes") or b""
            now = time.monotonic()
            allowance = min(burst, allowance + (now - last) * rate)
            last = now
            if allowance < 1.0:
                # a dropped act is answered, naming its seq (the client resends
                # it); other dropped frames get one summary error a second
                seq = _act_seq(data, cap)
                if seq is not None:
                    conn.send(P.Error(code="Throttled", seq=seq,
                                      message=f"more than {rate:g} messages a second: "
                                              f"act seq {seq} dropped, not applied; send it "
                                              f"again"))
                elif now - warned >= 1.0:
                    warned = now
                    conn.send(P.Error(code="Throttled",
                                      message=f"more than {rate:g} messages a second: "
                                              f"dropped"))
                continue
            allowance -= 1.0
            size = len(data.encode() if isinstance(data, str) else data)
            if size > cap:
                conn.send(P.Error(code="TooLarge", message=f"a message is at most "
                                                           f"{cap} bytes; "
                                                           f"this is {size}"))
                continue
            try:
                msg = P.decode_client(data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                conn.send(P.Error(code="BadMessage", message=f"not a client message: {exc}"))
                continue
            if isinstance(msg, P.Ping):
                conn.send(P.Pong())
            elif isinstance(msg, P.Resync):
                # a welcome is the costliest answer: at most one every `every`
                # seconds; one sooner is answered when that interval is over, and
                # any more meanwhile are folded into that answer, silently: it
                # answers them (a page keeping one resync in flight can still
                # send one while another waits — a welcome the server sent
                # unasked, at a new hand, ends its wait — and must not be told off)
                if due is None:
                    if now - resynced >= every:
                        answer_resync()
                    else:
                        due = loop.call_later(resynced + every - now, answer_resync, True)
            else:
                try:
                    t.act(conn, msg)
                    if conn.tr is not None:
                        e = trace.act(t.id, conn.seat, msg.hand, msg.seq, t_recv)
                        e[trace.APPLIED] = trace.perf_counter()
                        conn.tr[msg.hand, msg.seq] = e
                except Refused as exc:
                    conn.send(P.Error(code=exc.code, message=exc.message, seq=msg.seq))
    except WebSocketDisconnect:
        pass
    finally:
        if due is not None:
            due.cancel()
        t.detach(conn)
        writer.cancel()


# -------------------------------------------------------------------- the app


async def _not_found(request: Request, exc: Exception) -> Response:
    """An unknown path (``/static/../app.py`` too) or method: a typed JSON
    error, like every other refusal, not Starlette's plain text."""
    status = getattr(exc, "status_code", 404)
    if status == 405:
        return _error("BadMethod", f"{request.method} is not served at {request.url.path}", 405)
    return _error("NotFound", f"nothing is served at {request.url.path}", 404)


async def _log_stalls(server: Server, every: float = 1.0) -> None:
    """(A task of the app's life.)  :meth:`Server.note_stall` every
    ``every`` seconds, until the lock is lost (that is logged on its own)."""
    while server.store.lost is None:
        await asyncio.sleep(every)
        server.note_stall()


class _Stopping:
    """(ASGI middleware.)  An HTTP request still unanswered when the
    server's shutdown gives up on it (:data:`SHUTDOWN_S`: uvicorn then
    cancels it — a request waiting for a database that does not answer,
    or any other still running, such as a slow upload or a long replay)
    is answered 503 ``Unavailable`` saying so, instead of a traceback in
    the log and a dropped connection.  (uvicorn logs ``Cancel N running
    task(s), timeout graceful shutdown exceeded`` then.)"""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            if started:
                raise
            body = _ENC.encode(P.HttpError(
                error="Unavailable",
                message=f"the server is stopping and this request was not answered within "
                        f"{SHUTDOWN_S:g} s (it may have waited for a database that does not "
                        f"answer); a table being created may or may not exist once the "
                        f"server is back"))
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})


def create_app(server: Server) -> Starlette:
    """The Starlette app serving ``server`` (its tables' clocks and bots
    start with the app)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):  # type: ignore[no-untyped-def]
        for t in server.tables.values():
            t.start()
        # the modules, rulesets and restored tables live as long as the server:
        # out of the collector's sight, a full collection no longer scans them
        gc.collect()
        gc.freeze()
        server.store.watch(server.lock_lost)   # told of a lost lock; PostgreSQL: its watchdog
        stalls = asyncio.get_running_loop().create_task(_log_stalls(server))
        probe = trace.start()
        yield
        stalls.cancel()
        for t in server.tables.values():
            t.stop()
        # every write answered — unless the store is lost, or SHUTDOWN_S passes: a
        # write hung on a database that stopped answering would hold the shutdown
        # as long as it hangs (nothing of it was acknowledged)
        done = await server.store.drain(until_lost=True, at_most=SHUTDOWN_S)
        if not done and server.store.lost is None:
            server.log(f"shutting down with a write still waiting for the database after "
                       f"{SHUTDOWN_S:g} s: nothing of it was acknowledged; it commits or not, "
                       f"and a restart replays what did")
        server.replays.close()
        server.specs.close()
        server.store.close(abandon=not done)
        if probe is not None:
            probe.cancel()
            trace.dump()

    app = Starlette(routes=[
        Route("/", page),
        Mount("/static", StaticFiles(directory=_STATIC), name="static"),
        Route("/health", health),
        Route("/records", finished),
        Route("/replay", replay_posted, methods=["POST"]),
        Route("/tables/{id}/records/{hand}/replay", replay_stored),
        Route("/variants", variants),
        Route("/variants/{name}", variant),
        Route("/tables", create_table, methods=["POST"]),
        Route("/tables", list_tables, methods=["GET"]),
        Route("/tables/{id}", get_table),
        Route("/tables/{id}/records", records),
        Route("/tables/{id}/close", close_table, methods=["POST"]),
        WebSocketRoute("/tables/{id}/ws", table_ws),
    ], lifespan=lifespan, exception_handlers={404: _not_found, 405: _not_found},
        middleware=[Middleware(_Stopping)])
    app.state.server = server
    return app


def ws_protocol(server: Server | None = None) -> type:
    """uvicorn's WebSocket protocol (websockets' sans-I/O one, uvicorn's
    default), answering the upgrade requests that websockets refuses while
    reading them: a request line over 8192 bytes (a 20,000-character query
    string) → **414**, a header line over 8192 bytes or more than 128
    headers → **431**, each ``{"error": "TooLarge", "message"}``, then the
    connection is closed.

    Why: uvicorn (0.54) hands the upgrade request to websockets'
    ``ServerProtocol``, which refuses such a request as it parses it and
    queues its refusal — but uvicorn writes a refusal only for a request
    that parsed, so the client got no answer at all and the connection
    hung.  (The HTTP requests themselves are read by h11, which answers a
    request that does not fit ``h11_max_incomplete_event_size`` with 400.)
    Given to uvicorn through its ``ws`` option.

    It also counts ``server``'s open WebSocket sockets
    (``Server.connections``), from the upgrade until the socket is closed;
    answers an upgrade beyond ``--max-connections`` (this one counted)
    with HTTP 503 ``{"error": "TooManyConnections", "message"}`` and closes
    its socket at once, before the app sees it (its path and token
    unread); closes a socket :data:`WS_CLOSE_S` after the server's close
    frame if the client has not answered it, and cuts one still not closed
    as long again; and cuts a socket whose client has read nothing for
    :data:`WRITE_STALL_S` while the server had frames for it, or that has
    not answered a keepalive ping in time (a cut is a reset: what was
    buffered for the client is dropped)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class WebSocketProtocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.close_timeout = WS_CLOSE_S
            self._stalled: asyncio.TimerHandle | None = None   # writes paused: cut then
            self._ending: asyncio.TimerHandle | None = None    # closing: cut then
            self._lost = False

        def connection_made(self, transport: Any) -> None:
            if server is not None:
                server.connections += 1
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            self._lost = True
            for timer in (self._stalled, self._ending):
                if timer is not None:
                    timer.cancel()
            if server is not None:
                server.connections -= 1
            super().connection_lost(exc)

        # a client that reads nothing: its socket is cut, not waited for
        def pause_writing(self) -> None:
            super().pause_writing()
            if self._stalled is None and not self._lost:
                self._stalled = self.loop.call_later(WRITE_STALL_S, self._cut)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None

        def _cut(self) -> None:
            """Close the socket now, with a reset: what is buffered for the
            client is dropped, not left to the kernel (a closed socket's
            unsent data otherwise stays, FIN-WAIT-1, as long as the client
            keeps its window shut)."""
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()

        def _end_by(self) -> None:
            """The socket is being closed (or soon: the close timer): cut it
            if it is not closed within twice :data:`WS_CLOSE_S`."""
            if self._ending is None and not self._lost:
                self._ending = self.loop.call_later(2 * WS_CLOSE_S, self._cut)

        def keepalive_timeout(self) -> None:
            # a client that has not answered a ping within ws_ping_timeout
            # reads nothing: cut (reset) now, as a stalled one is — uvicorn's
            # graceful close would leave what the kernel still holds for it
            # in FIN-WAIT-1 for as long as its window stays shut
            super().keepalive_timeout()
            if not self._lost:
                self._cut()

        def handle_close(self, event: Any) -> None:
            super().handle_close(event)
            self._end_by()

        def on_task_complete(self, task: Any) -> None:
            # the app is done with the socket (its close sent — uvicorn hands
            # the app its disconnect at once — or the client gone): no hook
            # on every frame sent is needed to see a close
            super().on_task_complete(task)
            self._end_by()

        def handle_connect(self, event: Any) -> None:
            if server is None or server.connections <= server.max_connections:
                super().handle_connect(event)
                return
            server.refused_connection()
            self.handshake_initiated = self.handshake_complete = self.close_sent = True
            _refuse_raw(self.transport, "503", "Service Unavailable", P.HttpError(
                error="TooManyConnections",
                message=f"the server holds as many WebSocket connections as it may (qipai "
                        f"serve --max-connections {server.max_connections}); try again "
                        f"later"))

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.handshake_initiated:
                # the request was read (uvicorn hands it over whole, before the
                # transport is given this protocol): every later frame goes to
                # uvicorn's own method directly, nothing added per frame
                self.data_received = super().data_received  # type: ignore[method-assign]
                return
            exc = self.conn.handshake_exc
            if exc is None or self.transport.is_closing():
                return
            # websockets refused the request before it was one (no handshake
            # began): its plain-text refusal is queued; answer in the server's
            # own error shape instead, with websockets' status
            queued = b"".join(self.conn.data_to_send())
            status = queued[9:12].decode("ascii", "replace") if queued else "400"
            if status not in ("414", "431"):
                status = "400"
            what = {"414": "the request line (its URL) is over 8192 bytes",
                    "431": "a header line is over 8192 bytes, or there are more than 128 "
                           "headers"}.get(status, f"not a WebSocket upgrade request ({exc})")
            reason = {"414": "URI Too Long", "431": "Request Header Fields Too Large"}.get(
                status, "Bad Request")
            _refuse_raw(self.transport, status, reason, P.HttpError(
                error="TooLarge" if status != "400" else "BadMessage", message=what))

    return WebSocketProtocol


def _refuse_raw(transport: Any, status: str, reason: str, error: P.HttpError) -> None:
    """Answer a WebSocket upgrade request with ``error`` as an HTTP response
    of ``status``, then close the socket (:func:`ws_protocol`)."""
    body = _ENC.encode(error)
    transport.write(f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                    + body)
    transport.close()


#: The listening socket's backlog (uvicorn's default, which it sets again).
BACKLOG = 2048


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound to ``host:port`` and listening — made
    before the database is opened and anything is announced, so that a port
    in use fails first, in one line, with nothing written; :func:`run` hands
    it to uvicorn.  Made as uvicorn makes its own (``Config.bind_socket``):
    IPv6 for a host with a ``:``, ``SO_REUSEADDR`` (a restart binds while
    the last run's connections are in TIME_WAIT).

    Raises:
        OSError: the address cannot be listened on (in use, not this
            machine's, a privileged port, a host name that does not resolve).
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # listening now, not once uvicorn starts: on Linux two SO_REUSEADDR
        # sockets may both be bound to a port none of them listens on, and the
        # first to listen has it — only a listening socket holds the port
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


class RepeatsFilter(logging.Filter):
    """A logging filter letting one warning (or lesser record) of each
    message (its format string) through every ``every`` seconds; the next
    one let through says how many were held back.  Errors all pass (a
    server's or a plugin's failure is never held back).  On uvicorn's own
    logger (:func:`run`), which writes a warning for every malformed request
    a client sends ("Invalid HTTP request received.": 500 garbage requests,
    500 lines in 0.6 s)."""

    def __init__(self, every: float = REFUSALS_LOG_S) -> None:
        super().__init__()
        self.every = every
        self.seen: dict[Any, tuple[float, int]] = {}   # message → (last let through, held back)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        now = time.monotonic()
        key = record.msg if isinstance(record.msg, str) else type(record.msg)
        last, held = self.seen.get(key, (None, 0))
        if last is not None and now - last < self.every:
            self.seen[key] = (last, held + 1)
            return False
        if held:
            record.msg = (f"{record.getMessage()} ({held} more like it in the "
                          f"{now - last:.0f} s before were not logged)")
            record.args = None
        if len(self.seen) >= 1000:   # messages of their own, one at a time: forget them
            self.seen.clear()
        self.seen[key] = (now, 0)
        return True


def run(sock: socket.socket, server: Server, log_level: str = "warning") -> None:
    """Serve ``server`` with uvicorn on ``sock`` (:func:`listen`) until
    interrupted; uvicorn closes the socket at its shutdown.  Exits with
    status 3 (uvicorn's startup failure) if the server did not start."""
    import uvicorn

    config = uvicorn.Config(create_app(server), log_level=log_level, access_log=False,
                            ws_max_size=max(MAX_FRAME_BYTES, server.max_message_bytes),
                            ws=ws_protocol(server), lifespan="on", backlog=BACKLOG,
                            # a request still waiting for a database that does not answer
                            # is cancelled then, so SIGTERM stops the server (SHUTDOWN_S)
                            timeout_graceful_shutdown=SHUTDOWN_S)
    # (uvicorn's Config has just configured its loggers)
    logging.getLogger("uvicorn.error").addFilter(RepeatsFilter())
    userver = uvicorn.Server(config)
    try:
        userver.run(sockets=[sock])   # as uvicorn.run, on our socket
    except KeyboardInterrupt:
        pass
    if not userver.started:
        sys.exit(3)
