"""Limits per operator key, and the room kept for seated players
(docs/howto/host-a-table.md, "Limits").

With ``--keys``, each key has four limits (:data:`~qipai.server.keys.LIMITS`),
counted over the tables it made (``HostedTable.key_name``):

* ``max_tables`` — its tables open at once (those being created count);
* ``tables_per_minute`` — tables it created in the last 60 seconds;
* ``max_connections`` — WebSocket connections to its tables (seats and
  spectators);
* ``max_spectators`` — spectator connections to its tables.

A key's entry in the keys file sets its own (``qipai keys new NAME
--max-tables N …``, ``qipai keys limit NAME …``); a limit it does not set
is the server's default (``qipai serve --key-max-tables N …``; unset: no
limit of that kind but the server-wide ones).  A reload of the keys file
(SIGHUP) applies new limits at once (what is open stays open; the next
creation or connection is counted against them).  The server-wide limits
(``--max-tables``, ``--max-connections``) hold whatever a key allows.

A request over a key's limit changes nothing and is answered **429**
:class:`LimitError` — ``{"error": "TooManyTables", "message", "limit":
"tables_per_minute", "key": "alice", "max": 10}`` (and ``Retry-After``
for ``tables_per_minute``) — or, for a WebSocket, an ``error``
``TooManyConnections`` naming the limit, then close code 4429.  Each
refusal is counted (``qipai_limit_refusals_total{key,limit}``), emitted
as a ``refused`` event with the key and the limit (rate-limited in the
log) and said in one log line once per key and limit until the keys are
reloaded.

**Room for seats** (every server, the open demo too): spectators, of all
tables together, may hold at most ``max_connections − reserve``
connections, where ``reserve`` is the human seats of open tables that have
no connection now, at least ``--seat-reserve`` (default: a tenth of
``--max-connections``, rounded down) and at most half of
``--max-connections``.  Spectators can therefore never take the last
connections from seated players: a player of any table still connects
when one client has opened every spectator connection it may.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from qipai.core.errors import QipaiError
from qipai.server.keys import LIMITS

#: The window of ``tables_per_minute`` (seconds).
MINUTE = 60.0

#: What each limit is, in a refusal's message.
_WHAT = {"max_tables": "open tables", "tables_per_minute": "tables created a minute",
         "max_connections": "WebSocket connections", "max_spectators": "spectator connections",
         "seat_reserve": "spectator connections server-wide (the rest is kept for seats)"}


class LimitError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The 429 body of a request over a limit: ``error`` (``TooManyTables``,
    ``TooManyConnections``), ``message``, ``limit`` (the keys file's field:
    ``max_tables``, ``tables_per_minute``, ``max_connections``,
    ``max_spectators``; or ``seat_reserve``), ``key`` (the key's name;
    absent for a server-wide limit), ``max`` (the limit's value) and, for
    ``tables_per_minute``, ``retry_after`` (whole seconds until one more
    is allowed; also the ``Retry-After`` header)."""

    error: str
    message: str
    limit: str
    max: int
    key: str | None = None
    retry_after: int | None = None


class LimitReached(QipaiError):
    """A request over a limit (:attr:`body` is its answer)."""

    def __init__(self, body: LimitError) -> None:
        super().__init__(body.message)
        self.body = body


def default_seat_reserve(max_connections: int) -> int:
    """The default ``--seat-reserve``: a tenth of ``max_connections`` (rounded down)."""
    return max_connections // 10


class Quota:
    """One server's per-key counts and limits, and the room kept for seats.

    Args:
        server: the :class:`~qipai.server.state.Server`.
        defaults: each :data:`~qipai.server.keys.LIMITS` field's default
            for a key whose entry does not set it (absent or None: none).
        seat_reserve: the least room kept for seats (None:
            :func:`default_seat_reserve`).
    """

    def __init__(self, server: Any, defaults: dict[str, int | None] | None = None,
                 seat_reserve: int | None = None) -> None:
        self.server = server
        self.defaults = {f: v for f, v in (defaults or {}).items() if v is not None}
        self.seat_reserve = (seat_reserve if seat_reserve is not None
                             else default_seat_reserve(server.max_connections))
        self.created: dict[str, collections.deque[float]] = {}   # key → creation times
        self.creating: collections.Counter[str] = collections.Counter()
        self.conns: collections.Counter[str] = collections.Counter()
        self.spectators: collections.Counter[str] = collections.Counter()
        self.all_spectators = 0
        #: refusals over a limit: (key or "", limit) → count
        self.refusals: collections.Counter[tuple[str, str]] = collections.Counter()
        #: table id → time.time() its last connection left (absent: watched, or
        #: none since the server started: :attr:`started`)
        self.idle_since: dict[str, float] = {}
        self.started = time.time()
        self.pruned = 0   # closed tables deleted (:mod:`qipai.server.retention`)
        self.archived = 0   # closed tables written to --archive (:mod:`qipai.server.archive`)
        self.archive_failures = 0   # archive files not written (each try of each table)

    # ------------------------------------------------------------- limits

    def limits_of(self, key: str) -> dict[str, int]:
        """The limits of ``key``: its entry's, else the server's defaults."""
        keys = self.server.keys
        own = keys.limits.get(key, {}) if keys is not None else {}
        return {**self.defaults, **own}

    def _refuse(self, error: str, limit: str, most: int, key: str | None,
                message: str, retry_after: int | None = None) -> LimitReached:
        s = self.server
        self.refusals[key or "", limit] += 1
        s.log_once(f"limit:{key}:{limit}",
                   f"{'key ' + repr(key) if key else 'the server'} reached its limit of "
                   f"{_WHAT[limit]} ({limit} {most}): refused {error} (logged once per key "
                   f"and limit until the keys are reloaded; counted in /metrics)")
        return LimitReached(LimitError(error=error, message=message, limit=limit, max=most,
                                       key=key, retry_after=retry_after))

    @contextmanager
    def table_for(self, key: str | None) -> Iterator[None]:
        """Around a table's creation by ``key`` (None: no key — nothing
        counted): refused :class:`LimitReached` over ``max_tables`` or
        ``tables_per_minute``; counted as open while it is made, and in the
        minute's count once made."""
        if key is None:
            yield
            return
        lim = self.limits_of(key)
        now = time.monotonic()
        made = self.created.setdefault(key, collections.deque())
        while made and made[0] <= now - MINUTE:
            made.popleft()
        most = lim.get("tables_per_minute")
        if most is not None and len(made) + self.creating[key] >= most:
            wait = max(1, math.ceil(made[0] + MINUTE - now)) if made else 1
            raise self._refuse("TooManyTables", "tables_per_minute", most, key,
                               f"key {key!r} created {len(made)} tables in the last minute, "
                               f"its limit (tables_per_minute {most}): try again in {wait} s",
                               retry_after=wait)
        most = lim.get("max_tables")
        if most is not None:
            have = self.tables_of(key) + self.creating[key]
            if have >= most:
                raise self._refuse("TooManyTables", "max_tables", most, key,
                                   f"key {key!r} holds {have} open tables, its limit "
                                   f"(max_tables {most}): close one first")
        self.creating[key] += 1
        try:
            yield
        finally:
            self.creating[key] -= 1
        made.append(time.monotonic())   # (only a table made: an exception skips this)

    def tables_of(self, key: str) -> int:
        """The open tables ``key`` made that this server serves."""
        return sum(1 for t in self.server.tables.values() if t.open and t.key_name == key)

    def reserve(self) -> int:
        """The connections spectators leave to seated players now (see the module)."""
        s = self.server
        waiting = 0
        for t in s.tables.values():
            if t.open:
                seated = {c.seat for c in t.conns}
                waiting += sum(1 for seat in t.seat_of_hash.values() if seat not in seated)
        return max(self.seat_reserve, min(waiting, s.max_connections // 2))

    def admit(self, table: Any, spectator: bool) -> None:
        """A connection to ``table`` (a seat, or ``spectator``): refused
        :class:`LimitReached` over its key's ``max_connections`` or
        ``max_spectators``, or, a spectator, over the room left after the
        seats' reserve."""
        s = self.server
        key = table.key_name
        if spectator:
            reserve = self.reserve()
            room = s.max_connections - reserve
            # (s.connections counts this one already, from its upgrade)
            if s.connections > room:
                raise self._refuse(
                    "TooManyConnections", "seat_reserve", room, None,
                    f"spectators may hold {room} of the server's {s.max_connections} "
                    f"WebSocket connections (qipai serve --max-connections); the other "
                    f"{reserve} are kept for seated players: try again later")
        if key is None or s.keys is None:
            return
        lim = self.limits_of(key)
        most = lim.get("max_connections")
        if most is not None and self.conns[key] >= most:
            raise self._refuse("TooManyConnections", "max_connections", most, key,
                               f"the tables of key {key!r} hold {self.conns[key]} WebSocket "
                               f"connections, its limit (max_connections {most}): close one "
                               f"first")
        most = lim.get("max_spectators")
        if spectator and most is not None and self.spectators[key] >= most:
            raise self._refuse("TooManyConnections", "max_spectators", most, key,
                               f"the tables of key {key!r} hold {self.spectators[key]} "
                               f"spectator connections, its limit (max_spectators {most}): "
                               f"close one first")

    def attached(self, table: Any, spectator: bool) -> None:
        """A connection admitted (:meth:`admit`) is attached to ``table``."""
        self.idle_since.pop(table.id, None)
        self.all_spectators += spectator
        key = table.key_name
        if key is not None:
            self.conns[key] += 1
            self.spectators[key] += spectator

    def detached(self, table: Any, spectator: bool) -> None:
        """A connection :meth:`attached` is gone."""
        self.all_spectators -= spectator
        key = table.key_name
        if key is not None:
            self.conns[key] -= 1
            self.spectators[key] -= spectator
        if not table.conns and table.open:
            self.idle_since[table.id] = time.time()
            if len(self.idle_since) > 2 * len(self.server.tables) + 64:   # closed ones: out
                self.idle_since = {k: v for k, v in self.idle_since.items()
                                   if k in self.server.tables}

    def idle_seconds(self, table: Any, now: float) -> float:
        """Seconds ``table`` has had no connection (0 while it has one)."""
        if table.conns:
            return 0.0
        return max(0.0, now - self.idle_since.get(table.id, max(self.started,
                                                                table.row["created"])))

    # ------------------------------------------------------------ metrics

    def samples(self) -> dict[str, dict[str, int]]:
        """Per-key gauges for ``/metrics``: ``tables`` (open), ``connections``,
        ``spectators``, each key name → N (keys with none: 0 when configured)."""
        s = self.server
        names = set(s.keys.by_hash.values()) if s.keys is not None else set()
        tables: collections.Counter[str] = collections.Counter(
            t.key_name for t in s.tables.values() if t.open and t.key_name is not None)
        names |= set(tables) | {k for k, n in self.conns.items() if n}
        return {"tables": {k: tables[k] for k in names},
                "connections": {k: self.conns[k] for k in names},
                "spectators": {k: self.spectators[k] for k in names}}



def refusal(server: Any, exc: LimitReached, client: str | None = None) -> Any:
    """The HTTP 429 answer of ``exc`` (``Retry-After`` for
    ``tables_per_minute``), its ``refused`` event emitted (with the
    request's ``client`` address)."""
    from starlette.responses import Response

    b = exc.body
    server.events.emit("refused", reason=b.error, limit=b.limit, key=b.key, client=client)
    r = Response(msgspec.json.encode(b), status_code=429, media_type="application/json")
    if b.retry_after is not None:
        r.headers["Retry-After"] = str(b.retry_after)
    return r
