"""The server's state: its settings, the store and the tables it hosts.

:class:`Server` creates tables (``POST /tables``) and restores the open ones
of the database at start; the routes (:mod:`qipai.server.routes`) and the
socket loop (:mod:`qipai.server.socket`) reach it as ``app.state.server``.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from qipai.core.errors import BadOption, QipaiError
from qipai.core.money import check_stake
from qipai.host import feed
from qipai.host import protocol as P
from qipai.host.errors import DamagedTable
from qipai.host.events import Events
from qipai.server import logs
from qipai.host.journal import UNREADABLE
from qipai.host.levels import DEFAULT_LEVEL, BadLevel, BotLevels
from qipai.host.match import HostedTable
from qipai.host.offload import Offload
from qipai.host.replay import MAX_REPLAY_BYTES
from qipai.host.room import MAX_ROOM_HANDS
from qipai.host.seats import TUOGUAN_DELAY
from qipai.host.seatvalues import SEAT_VALUE_TIMEOUT
from qipai.host.store import LockLost, Store, StoreError, said, token_hash
from qipai.server.identity import check_players
from qipai.server.keys import Keys
from qipai.server.limits import Quota

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
#: The message rate alone would let 64 spectators sending ``resync`` at 100
#: a second make the server build thousands of welcomes a second and slow
#: every other table.  The page sends one after each delta, at most one in
#: flight: it redraws at most this often (0.1 s: a lag a player does not
#: notice; 0.5 s left the board behind the bots' moves).  A welcome is also
#: made once per state and seat and resent to every connection resyncing at
#: that state (``HostedTable._welcome_for``): with both, 64 spectators
#: resyncing as fast as they may raise another table's ping p95 from 1.0 to
#: 6 ms (13 ms with no interval at all; 218 ms with neither).
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
#: at every start (5,000 made in 8.5 s take an unbounded server from 51 to
#: 160 MB).  Tables restored at start count, and are
#: all served even beyond it.
MAX_TABLES = 1000
#: WebSocket connections a server holds at once (``qipai serve
#: --max-connections``), counted from the upgrade until the socket is
#: closed (a connection the server has closed but whose client has not
#: answered the close yet included): one more upgrade is answered HTTP 503
#: ``TooManyConnections`` and its socket closed at once.  Each holds a file
#: descriptor, and a process that runs out of them accepts nothing — no
#: player, no ``GET /health`` — while the connections last (250 spectator
#: connections, which anyone may make by creating tables, would do that to
#: a server limited to 256 descriptors).  The default,
#: :func:`default_max_connections`, keeps :data:`FD_RESERVE` descriptors
#: for HTTP requests and the database.
MAX_CONNECTIONS = 4096
FD_RESERVE = 256
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

class RestoreRefused(QipaiError):
    """A stored table cannot be restored under this server's ``--plugin``
    options (another house-rule set than it was made with)."""


class Server:
    """The server's state: the store, the hosted tables, the settings.

    :attr:`lobby` (``qipai serve --lobby``, set after it is made): with
    keys, ``GET /tables`` lists the open tables to anyone (their names,
    never a token), for the page's lobby; False: it needs a key.

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
            (:data:`MAX_CONNECTIONS`; counted by :func:`~qipai.server.uvicorn_ws.ws_protocol`, the
            protocol ``qipai serve`` runs); one more upgrade is answered
            HTTP 503 ``TooManyConnections`` (None:
            :func:`default_max_connections`; a larger one than
            :func:`descriptor_room` is logged as such at start).
        bot_delay: seconds the bots wait before answering what came up — a
            bot's turn, or a card the bots are asked about in a window (one
            wait for all of them) — (0: at once), so people can follow a
            table where bots play; the same wait every time, whatever the
            bots hold or decide.
        ready_timeout: seconds a room's ready step (准备) waits for its
            players before the next hand begins anyway.  vote_timeout:
            seconds a dissolve vote (解散房间) waits for its answers.
        tuoguan_delay: seconds the table's bot waits before it answers for
            a seat in 托管 (at least ``bot_delay``; :data:`~qipai.host.seats.TUOGUAN_DELAY`).
        bot_levels: the levels a client may give a bot seat and their bots
            (``qipai serve --bot``; default: easy, normal, hard —
            :class:`~qipai.host.levels.BotLevels`).

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

    #: ``--lobby``: ``GET /tables`` needs no key (see the class docstring)
    lobby: bool = False
    #: ``--stake`` and ``--rake-percent``/``--rake-cap``: a table's stake
    #: (minor units per 子) and rake rule when ``POST /tables`` gives none
    stake: int | None = None
    rake: Any = None
    #: ``--seat-values``: tables deal joint deals unless ``POST /tables``
    #: says otherwise (:mod:`qipai.host.seatvalues`)
    seat_values: bool = False
    #: ``--seat-value-timeout``: seconds each phase of a seat-value step waits
    seat_value_timeout: float = SEAT_VALUE_TIMEOUT

    def __init__(self, db: str, turn_timeout: float = 30.0, claim_timeout: float | None = None,
                 seed: int | None = None, plugins: tuple[str, ...] = (),
                 quiet: bool = False, rate_per_s: float = RATE_PER_S,
                 burst: float = RATE_BURST, max_message_bytes: int = P.MAX_MESSAGE_BYTES,
                 max_body_bytes: int = MAX_BODY_BYTES,
                 allow_version_mismatch: bool = False,
                 max_replay_bytes: int = MAX_REPLAY_BYTES, stall_s: float = STALL_S,
                 resync_s: float = RESYNC_S, max_tables: int = MAX_TABLES,
                 bot_delay: float = 0.0, max_connections: int | None = None,
                 keys: Keys | None = None, ready_timeout: float = 30.0,
                 vote_timeout: float = 60.0, tuoguan_delay: float = TUOGUAN_DELAY,
                 node: str | None = None, advertise: str | None = None,
                 bot_levels: BotLevels | None = None) -> None:
        from qipai.core.ruleset import load_plugin

        self.db_url = db
        #: The operator keys (``--keys FILE``); None: the open demo.
        self.keys = keys
        self._logged: set[str] = set()   # what :meth:`log_once` said since the keys' last load
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
        #: what happens at the tables, counted and logged (``/metrics``, the log)
        self.events = Events()
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
        self.ready_timeout = float(ready_timeout)
        self.vote_timeout = float(vote_timeout)
        self.tuoguan_delay = float(tuoguan_delay)
        #: the levels a bot seat may have and the bots that play them
        #: (``qipai serve --bot``; :mod:`qipai.host.levels`)
        self.bot_levels = bot_levels if bot_levels is not None else BotLevels()
        #: limits per key and the room kept for seats (:mod:`qipai.server.limits`;
        #: ``qipai serve`` sets its defaults)
        self.quota = Quota(self)
        #: seconds a closed table is kept before its rows are deleted (None:
        #: for ever; ``qipai serve --retention``, :mod:`qipai.server.retention`)
        self.retention: float | None = None
        #: the folder closed tables are archived to before their prune (None: they
        #: are deleted only; ``qipai serve --archive``, :mod:`qipai.server.archive`)
        self.archive: Path | None = None
        self.archive_failing: str | None = None   # the archive failure logged last
        self._creating = 0   # POST /tables accepted and not done (counted as open)
        self._stalled: float | None = None   # time.monotonic() the logged stall began
        self.replays = Offload("qipai-replay", REPLAY_WORKERS, REPLAY_WAITING)
        self.specs = Offload("qipai-ruleset", SPEC_WORKERS, SPEC_WAITING)
        #: (spec as written, with the house plugins) → its ruleset, the latest
        #: SPEC_CACHE loaded (the oldest goes first)
        self._rulesets: dict[tuple[str, bool], Any] = {}
        from qipai.core.stamps import qipai_version

        self.qipai_version = qipai_version()
        self.store = Store(db, node=node)
        #: This node of a cluster (``--cluster``, :mod:`qipai.server.cluster`); None: the
        #: one server of its database.
        self.cluster: Any = None
        #: (Set by :func:`qipai.server.listen.run`.)  Ends the server as SIGTERM does.
        self.exit_now: Any = None
        if self.store.upgraded:
            self.log(f"the database was made by an older qipai: added the columns "
                     f"{', '.join(self.store.upgraded)}")
        #: The webhooks' deliverer (``qipai serve --webhook``, or ``--keys``: a
        #: key's own webhook; None: neither).
        self.webhook: Any = None
        self._events_signal: asyncio.Event | None = None
        self.tables: dict[str, HostedTable] = {}
        #: Open tables of the database this server does not play: id → why.
        self.refused: dict[str, QipaiError] = {}
        if node is not None:
            from qipai.server.cluster import Cluster

            self.cluster = Cluster(self, advertise or "http://127.0.0.1")
            try:
                # this node's tables of an earlier run, and those no node owns
                rows = self.cluster.join()
            except StoreError:
                self.store.close()
                raise
        else:
            rows = self.store.open_tables()
        for row in rows:
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

    def events_committed(self) -> None:
        """(The store's writer, in the loop: :attr:`Store.on_events`.)  New
        events are committed: wake the deliverer and the long-polls."""
        if self.webhook is not None:
            self.webhook.poke()
        signal, self._events_signal = self._events_signal, None
        if signal is not None:
            signal.set()

    def events_signal(self) -> asyncio.Event:
        """(The loop.)  An event set when the next events are committed."""
        if self._events_signal is None:
            self._events_signal = asyncio.Event()
        return self._events_signal

    def lock_lost(self, exc: LockLost) -> None:
        """(The store, in the loop, once: its lock's watchdog or its writer
        saw the loss.)  The server lock is lost: one log line, and every
        table halts (``LockLost``)."""
        self.log(f"LOCK LOST: {exc}")
        for t in self.tables.values():
            t.lock_lost(exc)
        if self.cluster is not None:
            # a node: its tables are free for the survivors, who take them over within
            # seconds; its clients are sent on (moved, no address yet: their next try
            # finds the new owner) and the node stops, to be restarted and rejoin
            self.cluster.lost()

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
        if self.quiet:
            return
        if logs.json_on():
            logs.line(message)
        else:
            print(f"qipai serve: {message}", file=sys.stderr, flush=True)

    def log_once(self, what: str, message: str) -> None:
        """Log ``message`` the first time ``what`` happens (again after a keys reload)."""
        if what not in self._logged:
            self._logged.add(what)
            self.log(message)

    def reload_keys(self) -> None:
        """(SIGHUP.)  Read the keys file again; one that no longer parses
        keeps the keys held, and says so in one line."""
        from qipai.server.keys import BadKeysFile

        if self.keys is None:
            return
        before = dict(self.keys.webhooks)
        try:
            n = self.keys.reload()
        except BadKeysFile as exc:
            self.log(f"keys not reloaded, the {len(self.keys.by_hash)} held stay: {exc}")
            return
        self._logged = set()
        self.log(f"keys reloaded from {self.keys.path}: {n} key{'s' if n != 1 else ''}")
        if self.webhook is not None:   # a key's webhook changed: its pending events follow
            self.webhook.rerouted(before)

    def refused_connection(self) -> None:
        """(In the loop.)  A connection refused over :attr:`max_connections`:
        logged at once if none was in the last :attr:`refusals_log_s`
        seconds, else counted into one line that many seconds on; a
        line says when that long passed with none refused."""
        self._refusals += 1
        self.events.refusals["TooManyConnections"] += 1   # logged in its own lines
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
        t = self._made(row, self.ruleset(row["spec"]))
        t.rebuild()
        return self._served(t, row)

    def _made(self, row: dict[str, Any], rs: Any) -> HostedTable:
        """The table of a stored ``row`` (``rs``: its spec's ruleset), not
        rebuilt yet, once its plugins and versions are this server's."""
        stored = msgspec.json.decode(row["plugins"])
        if stored != self.plugin_specs:
            raise RestoreRefused(f"table {row['id']} was made with house plugins {stored}; "
                                 f"this server has {self.plugin_specs}: start it with the same "
                                 f"--plugin options")
        from qipai.core.stamps import Stamp, check, stamp_of

        made = msgspec.json.decode(row["stamp"], type=Stamp)
        check(f"table {row['id']}", {"qipai_version": made.qipai_version, "version": made.version,
                                    "spec": made.spec, "plugins": made.plugins}, stamp_of(rs),
              self.allow_version_mismatch)
        return HostedTable(self, row, rs)

    def _served(self, t: HostedTable, row: dict[str, Any]) -> HostedTable:
        if self.cluster is not None:   # the epoch this node holds it at: its writes' fence
            self.store.fences[t.id] = row["epoch"]
        self.refused.pop(t.id, None)
        self.tables[t.id] = t
        return t

    async def restore_async(self, row: dict[str, Any]) -> tuple[HostedTable, bool]:
        """:meth:`restore` from the event loop (a cluster's takeover or
        handoff): the ruleset and the rows read off the loop, the hand
        rebuilt in it.  Answers the table and whether it was made by this
        call (False: it was served meanwhile, and that one is answered).
        Same errors."""
        try:
            t = self._made(row, await self.ruleset_async(row["spec"]))
            t.rebuild_from(*await self.store.read(t.stored, capped=False))
        except QipaiError:
            raise
        except UNREADABLE as exc:
            raise DamagedTable(
                f"table {row.get('id')}: its stored rows do not read "
                f"({type(exc).__name__}; the server's log says why); the database is damaged",
                f"its stored rows do not read: {said(exc)}") from None
        if t.id in self.tables:   # served meanwhile (made here, adopted by another call)
            return self.tables[t.id], False
        return self._served(t, row), True

    async def create(self, body: P.CreateTable, key_name: str | None = None
                     ) -> tuple[HostedTable, P.Created]:
        """A new table (validated before anything is written; the loop waits
        for its commit without blocking, :meth:`Store.create_table_async`).

        Raises:
            TooManyTables: :attr:`max_tables` tables are open already.
            QipaiError: an unknown variant, a bad option, bad bot seats.
            LockLost, StoreError: the database did not take it.
        """
        if self.cluster is not None and self.cluster.draining:
            raise Draining(f"this node ({self.cluster.node}) is draining (stopping): it makes "
                           f"no new table; ask another node of the cluster")
        open_now = self.open_tables()
        if open_now >= self.max_tables:
            raise TooManyTables(
                f"this server holds {open_now} open tables, its limit (qipai serve "
                f"--max-tables {self.max_tables}): no table is made until one is closed")
        self._creating += 1
        try:
            return await self._create(body, key_name)
        finally:
            self._creating -= 1

    def open_tables(self) -> int:
        """The open tables counted against :attr:`max_tables`: those served
        (halted ones too), those not restored (:attr:`refused`: still open in
        the database) and those being created."""
        return sum(1 for t in self.tables.values() if t.open) + len(self.refused) + \
            self._creating

    async def _create(self, body: P.CreateTable, key_name: str | None
                      ) -> tuple[HostedTable, P.Created]:
        from qipai.core.stamps import stamp_of

        rs = await self.ruleset_async(body.variant)
        n = rs.manifest.players
        levels = {b.seat: b.level for b in body.bots if isinstance(b, P.BotSeat)}
        bots = [b.seat if isinstance(b, P.BotSeat) else b for b in body.bots]
        if any(type(b) is not int or not 0 <= b < n for b in bots) or len(set(bots)) != len(bots):
            raise BadBots(f"bots must be distinct seats of {rs.name} (0..{n - 1}), not {bots}")
        for seat, level in levels.items():   # only the levels offered: never a module name
            try:
                self.bot_levels.check(level)
            except BadLevel as exc:
                raise BadBots(f"bot seat {seat}: {exc}") from None
        levels = {str(s): levels.get(s, DEFAULT_LEVEL) for s in sorted(bots)}
        players = check_players(body.players, n, bots)
        hands = body.hands
        if hands is not None and (type(hands) is not int or not 1 <= hands <= MAX_ROOM_HANDS):
            raise BadOption(f"hands (局数) must be a whole number from 1 to {MAX_ROOM_HANDS}, "
                            f"not {hands!r}")
        ready = body.ready if body.ready is not None else hands is not None
        stake, rake = check_stake(   # (BadStake, naming the field)
            self.stake if body.stake is msgspec.UNSET else body.stake,
            self.rake if body.rake is msgspec.UNSET else body.rake)
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
                   bot_levels=msgspec.json.encode(levels).decode() if levels else None,
                   tokens=msgspec.json.encode({s: token_hash(t) for s, t in seat_tokens.items()}
                                              ).decode(),
                   spectator_hash=token_hash(spectator), admin_hash=token_hash(admin),
                   open=True, created=time.time(), key_name=key_name,
                   players=msgspec.json.encode(players).decode() if players else None,
                   closed=None, hands=hands, ready=ready, ended=None, tally=None, stake=stake,
                   rake=msgspec.json.encode(rake).decode() if rake is not None else None,
                   seat_values=(body.seat_values if body.seat_values is not None
                                else self.seat_values),
                   owner=self.cluster.node if self.cluster is not None else None,
                   epoch=1 if self.cluster is not None else None)
        t = HostedTable(self, row, rs)
        hand = t.new_hand(0, None)
        await self.store.create_table_async(row, t.hand_row(0, *hand), [
            feed.table_created(t), *t.started_ops(0, hand[0], hand[2])])
        t.install(0, *hand)
        t.committed_now()
        self._served(t, row)
        if self.store.lost is not None:   # lost while the loop awaited the commit:
            t.lock_lost(self.store.lost)  # lock_lost() did not see this table yet
        else:
            t.start()
        self.events.emit("table_created", table=tid, variant=rs.spec, bots=sorted(bots),
                         levels=levels,
                         key=key_name, named=len(players), hands=hands)
        return t, P.Created(id=tid, seats=seat_tokens,
                            spectator=f"/tables/{tid}/ws?token={spectator}",
                            spectator_token=spectator, admin=admin, ws=f"/tables/{tid}/ws",
                            players=players, **self.where())

    def where(self, node: str | None = None) -> dict[str, str | None]:
        """(A cluster.)  ``{"node", "address"}`` of ``node`` (default: this
        node) for an answer; empty outside a cluster."""
        c = self.cluster
        if c is None:
            return {}
        node = c.node if node is None else node
        return {"node": node, "address": c.addresses.get(node) if node else None}


class Draining(QipaiError):
    """``POST /tables`` to a cluster node that is draining (SIGTERM)."""


class TooManyTables(QipaiError):
    """``POST /tables``: the server holds ``--max-tables`` open tables already."""


class BadBots(QipaiError, ValueError):
    """``POST /tables``: the bot seats are not distinct seats of the
    variant, or a seat's level is not one this server offers."""

