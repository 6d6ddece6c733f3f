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

**Limits per client address** (the open demo; :func:`address_of`): the
address a request or WebSocket comes from — the one the log names, the
proxy's ``X-Forwarded-For`` only from ``--forwarded-allow-ips`` — may

* ``address_max_tables`` — hold so many open tables it created (those
  being created count; tables restored at a start count to no address);
* ``address_tables_per_minute`` — create so many tables in 60 seconds;
* ``address_max_connections`` — hold so many WebSocket connections,
  seats and spectators of any table.

Defaults (the open demo): a tenth of ``--max-tables`` (at least 4), 10 a
minute, and a tenth of ``--max-connections`` (at least 8) — a player's few
tabs and tables, and no address takes more than a tenth of the server.
``qipai serve --address-max-tables N`` … set them (0: none allowed).  An
IPv6 address counts by its /64 network (one host is given a whole /64).
A loopback client the server was not forwarded (no ``X-Forwarded-For``,
``Forwarded`` or ``X-Real-IP``) is the machine's own — the operator, its
tests, bots and benchmarks — and is not limited (as the admin routes
trust it).  With ``--keys`` every table is made with a key, so the table
limits do not apply (``qipai serve`` refuses them with ``--keys``: use the
per-key ones); ``--address-max-connections`` applies only when given,
since many players may share one address (a NAT, a proxy not trusted).
A refusal is the 429 above without ``key``: ``{"error": "TooManyTables",
"limit": "address_tables_per_minute", "max": 10, "retry_after": 42, …}``.
Counting happens at a connection's admission and a table's creation only;
an address's count is dropped when it falls to 0.
"""

from __future__ import annotations

import collections
import math
import time
import ipaddress
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from qipai.core.errors import QipaiError
from qipai.server import logs
from qipai.server.keys import LIMITS

#: The window of ``tables_per_minute`` (seconds).
MINUTE = 60.0

#: What each limit is, in a refusal's message.
_WHAT = {"max_tables": "open tables", "tables_per_minute": "tables created a minute",
         "max_connections": "WebSocket connections", "max_spectators": "spectator connections",
         "seat_reserve": "spectator connections server-wide (the rest is kept for seats)",
         "address_max_tables": "open tables one client address created",
         "address_tables_per_minute": "tables one client address created a minute",
         "address_max_connections": "WebSocket connections from one client address"}

#: The per-address limits (``qipai serve --address-max-tables N`` …).
ADDRESS_LIMITS = ("address_max_tables", "address_tables_per_minute",
                  "address_max_connections")
#: Their options, in refusals' messages.
_OPTION = {f: "--" + f.replace("_", "-") for f in ADDRESS_LIMITS}


class LimitError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The 429 body of a request over a limit: ``error`` (``TooManyTables``,
    ``TooManyConnections``), ``message``, ``limit`` (the keys file's field:
    ``max_tables``, ``tables_per_minute``, ``max_connections``,
    ``max_spectators``; or ``seat_reserve``, or a per-address limit:
    ``address_max_tables``, ``address_tables_per_minute``,
    ``address_max_connections``), ``key`` (the key's name; absent for a
    server-wide or per-address limit), ``max`` (the limit's value) and, for
    ``tables_per_minute`` and ``address_tables_per_minute``,
    ``retry_after`` (whole seconds until one more is allowed; also the
    ``Retry-After`` header)."""

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


def default_address_limits(max_connections: int, max_tables: int) -> dict[str, int]:
    """The open demo's per-address limits when ``qipai serve`` is not given
    them: a tenth of ``max_tables`` (at least 4) open, 10 tables a minute,
    a tenth of ``max_connections`` (at least 8) connections."""
    return {"address_max_tables": max(4, max_tables // 10),
            "address_tables_per_minute": 10,
            "address_max_connections": max(8, max_connections // 10)}


def address_of(conn: Any) -> str | None:
    """The address a request or WebSocket ``conn`` is counted under for the
    per-address limits: its client address (:func:`qipai.server.logs.client`:
    a trusted proxy's ``X-Forwarded-For``, else the socket's peer), an IPv6
    one as its /64 network (an IPv4-mapped one as the IPv4 address); None —
    not counted — for a loopback client not forwarded
    (:func:`qipai.server.logs.local`: the machine's own) or one not known."""
    host = logs.client(conn)
    if host is None or logs.local(conn):
        return None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host   # (not an IP address: counted as it is)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Quota:
    """One server's per-key and per-address counts and limits, and the
    room kept for seats.

    Args:
        server: the :class:`~qipai.server.state.Server`.
        defaults: each :data:`~qipai.server.keys.LIMITS` field's default
            for a key whose entry does not set it (absent or None: none).
        seat_reserve: the least room kept for seats (None:
            :func:`default_seat_reserve`).
        address: each :data:`ADDRESS_LIMITS` field given (absent or None:
            without keys, :func:`default_address_limits`; with keys, none).
    """

    def __init__(self, server: Any, defaults: dict[str, int | None] | None = None,
                 seat_reserve: int | None = None,
                 address: dict[str, int | None] | None = None) -> None:
        self.server = server
        self.defaults = {f: v for f, v in (defaults or {}).items() if v is not None}
        self.seat_reserve = (seat_reserve if seat_reserve is not None
                             else default_seat_reserve(server.max_connections))
        #: the per-address limits in force (a field absent: none)
        self.address = {} if server.keys is not None else default_address_limits(
            server.max_connections, server.max_tables)
        self.address.update({f: v for f, v in (address or {}).items() if v is not None})
        self.by_address: dict[str, str] = {}   # table id → the address that created it
        self.address_created: dict[str, collections.deque[float]] = {}   # its creation times
        self.address_creating: collections.Counter[str] = collections.Counter()
        self._sweep_at = 1024   # address_created's size that sweeps it
        self.address_conns: collections.Counter[str] = collections.Counter()
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
                message: str, retry_after: int | None = None,
                who: str | None = None) -> LimitReached:
        s = self.server
        self.refusals[key or "", limit] += 1
        if limit in ADDRESS_LIMITS:
            s.log_once(f"limit::{limit}",
                       f"an address ({who}) reached its limit of {_WHAT[limit]} "
                       f"({_OPTION[limit]} {most}): refused {error} (logged once per limit; "
                       f"each refusal is a refused event naming its client, counted in "
                       f"/metrics)")
        else:
            s.log_once(f"limit:{key}:{limit}",
                       f"{'key ' + repr(key) if key else 'the server'} reached its limit of "
                       f"{_WHAT[limit]} ({limit} {most}): refused {error} (logged once per "
                       f"key and limit until the keys are reloaded; counted in /metrics)")
        return LimitReached(LimitError(error=error, message=message, limit=limit, max=most,
                                       key=key, retry_after=retry_after))

    @contextmanager
    def table_for(self, key: str | None, address: str | None = None
                  ) -> Iterator[Callable[[str], None]]:
        """Around a table's creation by ``key`` (None: no key) from
        ``address`` (:func:`address_of`; None: not counted): refused
        :class:`LimitReached` over the key's ``max_tables`` or
        ``tables_per_minute``, or — no key — over the address's; counted as
        open while it is made, and in the minute's count once made.  Yields
        the function that is given the new table's id (its address's)."""
        if key is not None:
            with self._counted(key, self.created, self.creating, self.limits_of(key),
                               "tables_per_minute", "max_tables", lambda: self.tables_of(key),
                               f"key {key!r}", "its limit ({limit} {most})", key):
                yield lambda tid: None
            return
        if address is None or not any(f in self.address for f in ADDRESS_LIMITS[:2]):
            yield lambda tid: None
            return
        if len(self.address_created) > self._sweep_at:   # no creation this minute: out
            gone = time.monotonic() - MINUTE
            self.address_created = {a: d for a, d in self.address_created.items()
                                    if (d and d[-1] > gone) or self.address_creating[a]}
            self._sweep_at = max(1024, 2 * len(self.address_created))
        with self._counted(address, self.address_created, self.address_creating,
                           self.address, "address_tables_per_minute", "address_max_tables",
                           lambda: self.tables_from(address), f"address {address}",
                           "its limit (qipai serve {option} {most})", None):
            yield lambda tid: self._made_from(tid, address)

    def _made_from(self, tid: str, address: str) -> None:
        by = self.by_address
        by[tid] = address
        if len(by) > 2 * len(self.server.tables) + 64:   # closed ones: out
            self.by_address = {k: v for k, v in by.items()
                               if k in self.server.tables and self.server.tables[k].open}

    @contextmanager
    def _counted(self, who: str, created: dict[str, collections.deque[float]],
                 creating: collections.Counter[str], lim: dict[str, int], per_minute: str,
                 at_once: str, have: Callable[[], int], named: str, limit_text: str,
                 key: str | None) -> Iterator[None]:
        """:meth:`table_for`'s count of ``who`` (a key, or an address)."""
        now = time.monotonic()
        made = created.setdefault(who, collections.deque())
        while made and made[0] <= now - MINUTE:
            made.popleft()
        most = lim.get(per_minute)
        if most is not None and len(made) + creating[who] >= most:
            wait = max(1, math.ceil(made[0] + MINUTE - now)) if made else 1
            said = limit_text.format(limit=per_minute, most=most, option=_OPTION.get(per_minute))
            raise self._refuse("TooManyTables", per_minute, most, key,
                               f"{named} created {len(made)} tables in the last minute, "
                               f"{said}: try again in {wait} s", retry_after=wait, who=who)
        most = lim.get(at_once)
        if most is not None:
            n = have() + creating[who]
            if n >= most:
                said = limit_text.format(limit=at_once, most=most, option=_OPTION.get(at_once))
                raise self._refuse("TooManyTables", at_once, most, key,
                                   f"{named} holds {n} open tables, {said}: close one first",
                                   who=who)
        creating[who] += 1
        try:
            yield
        finally:
            creating[who] -= 1
            if not creating[who]:
                del creating[who]
        made.append(time.monotonic())   # (only a table made: an exception skips this)

    def tables_of(self, key: str) -> int:
        """The open tables ``key`` made that this server serves."""
        return sum(1 for t in self.server.tables.values() if t.open and t.key_name == key)

    def tables_from(self, address: str) -> int:
        """The open tables created from ``address`` (since the server started)."""
        by = self.by_address
        return sum(1 for t in self.server.tables.values()
                   if t.open and by.get(t.id) == address)

    def reserve(self) -> int:
        """The connections spectators leave to seated players now (see the module)."""
        s = self.server
        waiting = 0
        for t in s.tables.values():
            if t.open:
                seated = {c.seat for c in t.conns}
                waiting += sum(1 for seat in t.seat_of_hash.values() if seat not in seated)
        return max(self.seat_reserve, min(waiting, s.max_connections // 2))

    def admit(self, table: Any, spectator: bool, address: str | None = None) -> None:
        """A connection to ``table`` (a seat, or ``spectator``) from
        ``address`` (:func:`address_of`; None: not counted): refused
        :class:`LimitReached` over the address's ``address_max_connections``,
        its key's ``max_connections`` or ``max_spectators``, or, a
        spectator, over the room left after the seats' reserve."""
        s = self.server
        key = table.key_name
        if address is not None:
            most = self.address.get("address_max_connections")
            if most is not None and self.address_conns[address] >= most:
                raise self._refuse(
                    "TooManyConnections", "address_max_connections", most, None,
                    f"this address ({address}) holds {self.address_conns[address]} WebSocket "
                    f"connections, its limit (qipai serve --address-max-connections "
                    f"{most}): close one first", who=address)
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

    def attached(self, table: Any, spectator: bool, address: str | None = None) -> None:
        """A connection admitted (:meth:`admit`) is attached to ``table``."""
        self.idle_since.pop(table.id, None)
        self.all_spectators += spectator
        if address is not None:
            self.address_conns[address] += 1
        key = table.key_name
        if key is not None:
            self.conns[key] += 1
            self.spectators[key] += spectator

    def detached(self, table: Any, spectator: bool, address: str | None = None) -> None:
        """A connection :meth:`attached` is gone."""
        self.all_spectators -= spectator
        if address is not None:
            left = self.address_conns[address] - 1
            if left > 0:
                self.address_conns[address] = left
            else:   # (an address's count goes with its last connection)
                del self.address_conns[address]
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
