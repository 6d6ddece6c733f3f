"""The operator's routes over many tables (docs/reference/protocol.md, "Admin").

* ``GET /admin/tables`` — the open tables this server serves, each
  ``{"id", "spec", "variant", "key", "created", "hands_done", "players",
  "bots", "levels", "connected", "spectators", "named", "idle_seconds", "halted"}``
  (``key``: the operator key that made it, null for an open demo's;
  ``created``: its ``time.time()``; ``connected``: the seats with a
  connection; ``spectators``: spectator connections; ``named``: seat →
  ``{"player", "name"}``; ``idle_seconds``: how long it has had no
  connection, 0 while it has one; ``halted``: the code it is halted with,
  or null), oldest first.  Filters: ``?key=NAME`` (the tables of that key;
  ``?key=`` those made without one), ``?idle_seconds=N`` (idle at least N
  seconds).
* ``POST /admin/tables/close`` — ``{"ids": [ID, …]}`` (at most
  :data:`MAX_IDS`), or the filters of the list as a body (``{"key":
  NAME}``, ``{"idle_seconds": N}``, both, or ``{"all": true}``): closes each
  such table as ``POST /tables/{id}/close`` does (its unfinished hand
  stored, its players told), all at once; answers ``{"closed": [{"id",
  "totals"}], "failed": [{"id", "error", "message"}], "unknown": [ID]}``.

Who: with ``--keys``, any operator key (as ``GET /tables`` and the
per-table close: a key sees and closes every table; ``?key=`` narrows to
one key's); the open demo serves them to a client on a loopback address
only (403 ``NotLoopback`` to any other), since anyone could reach it — and
not to a request a proxy forwarded (``X-Forwarded-For``, ``Forwarded``,
``X-Real-IP``): behind a proxy on the same host every request comes from
loopback.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from qipai.host.replay import shown
from qipai.host.store import LockLost, StoreError
from qipai.server import logs
from qipai.server.routes import _body, _error, _json, _key_or_refusal, _whole

#: The most ids one bulk close names.
MAX_IDS = 10_000


class CloseMany(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``POST /admin/tables/close``'s body."""

    ids: list[str] | None = None
    key: str | None = None
    idle_seconds: float | None = None
    all: bool = False


def _who(request: Request, what: str) -> Response | None:
    """None if the request may use the admin routes, else its refusal."""
    s = request.app.state.server
    if s.keys is not None:
        refusal = _key_or_refusal(request, what)
        return refusal if isinstance(refusal, Response) else None
    # a request a proxy forwards comes from the proxy's (loopback) address, whoever sent
    # it: one that says it was forwarded is not a local client's
    if logs.local(request):
        return None
    s.log_once("admin-not-loopback", "an admin route was asked from a non-loopback address "
                                     "of an open demo, or through a proxy: refused 403 "
                                     "NotLoopback (logged once)")
    return _error("NotLoopback", f"{what}: an open demo (no --keys) serves the admin routes "
                                 f"to a loopback client only, asking it directly (not through "
                                 f"a proxy)", 403)


def _item(s: Any, t: Any, now: float) -> dict[str, Any]:
    return {"id": t.id, "spec": t.ruleset.spec, "variant": t.ruleset.name, "key": t.key_name,
            "created": t.row["created"], "hands_done": t.hands_done, "players": t.n,
            "bots": list(t.bots), "levels": {str(k): v for k, v in sorted(t.levels.items())},
            "connected": sorted({c.seat for c in t.conns if c.seat is not None}),
            "spectators": sum(1 for c in t.conns if c.seat is None),
            "named": {str(k): v for k, v in sorted(t.named.items())},
            "idle_seconds": round(s.quota.idle_seconds(t, now), 3),
            "halted": t.halted[0] if t.halted is not None else None}


def _chosen(s: Any, key: str | None, idle: float | None) -> list[Any]:
    now = time.time()
    out = [t for t in s.tables.values() if t.open
           and (key is None or (t.key_name or "") == key)
           and (idle is None or s.quota.idle_seconds(t, now) >= idle)]
    return sorted(out, key=lambda t: (t.row["created"], t.id))


async def admin_tables(request: Request) -> Response:
    """``GET /admin/tables``."""
    refusal = _who(request, "GET /admin/tables")
    if refusal is not None:
        return refusal
    s = request.app.state.server
    q = request.query_params
    idle = None
    if "idle_seconds" in q:
        idle = _whole(q["idle_seconds"])
        if idle is None:
            return _error("BadMessage", f"idle_seconds must be a whole number written in "
                                        f"ASCII digits, not {shown(q['idle_seconds'])}", 400)
    now = time.time()
    return _json([_item(s, t, now) for t in _chosen(s, q.get("key"), idle)])


async def close_many(request: Request) -> Response:
    """``POST /admin/tables/close``."""
    refusal = _who(request, "POST /admin/tables/close")
    if refusal is not None:
        return refusal
    s = request.app.state.server
    body = await _body(request)
    if isinstance(body, Response):
        return body
    try:
        ask = msgspec.json.decode(body or b"{}", type=CloseMany)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return _error("BadMessage", f'not a close request ({{"ids": [ID, …]}}, or the '
                                    f'filters "key", "idle_seconds", "all"): {exc}', 400)
    unknown: list[str] = []
    if ask.ids is not None:
        if ask.key is not None or ask.idle_seconds is not None or ask.all:
            return _error("BadMessage", '"ids" or the filters ("key", "idle_seconds", '
                                        '"all"), not both', 400)
        if len(ask.ids) > MAX_IDS:
            return _error("TooLarge", f"at most {MAX_IDS} ids at once", 413)
        chosen = []
        for tid in dict.fromkeys(ask.ids):
            t = s.tables.get(tid)
            if t is None or not t.open:
                unknown.append(tid)
            else:
                chosen.append(t)
    elif ask.key is None and ask.idle_seconds is None and not ask.all:
        return _error("BadMessage", 'say which tables: {"ids": [ID, …]}, or the filters '
                                    '"key", "idle_seconds", or {"all": true}', 400)
    else:
        chosen = _chosen(s, ask.key, ask.idle_seconds)
    if s.store.lost is not None and chosen:
        from qipai.host.errors import LOCK_LOST

        return _error("LockLost", LOCK_LOST, 503)
    outcomes = await asyncio.gather(*(_close(t) for t in chosen))
    closed = [o for o in outcomes if "totals" in o]
    failed = [o for o in outcomes if "totals" not in o]
    s.log(f"POST /admin/tables/close: {len(closed)} table(s) closed"
          + (f", {len(failed)} not" if failed else "")
          + (f", {len(unknown)} unknown" if unknown else ""))
    return _json({"closed": closed, "failed": failed, "unknown": unknown})


async def _close(t: Any) -> dict[str, Any]:
    """Close ``t`` as ``POST /tables/{id}/close`` does; its outcome."""
    if t.halted is not None and t.halted[0] == "InternalError":
        return {"id": t.id, "error": "InternalError", "message": t.halted[1]}
    try:
        await t.close()
    except LockLost as exc:
        return {"id": t.id, "error": "LockLost", "message": str(exc)}
    except StoreError as exc:
        return {"id": t.id, "error": "Unavailable", "message": str(exc)}
    return {"id": t.id, "totals": list(t.totals)}
