"""The operator's events over HTTP (docs/reference/protocol.md, "Events").

* ``GET /events?after=ID[&wait=SECONDS][&limit=N]`` — the events with an
  id above ``after`` (0: from the first), in id order, at most ``limit``
  (default and most :data:`MAX_EVENTS`): ``{"events": [{"id", "kind",
  "table", "created", "data"}, …], "last": ID}`` (``last``: the last id
  listed, else ``after``; ask again with ``after=last``).  With ``wait``
  (at most :data:`MAX_WAIT` seconds) and none yet, the answer waits until
  one is committed or ``wait`` passes (a long-poll).  With ``--keys`` a key
  sees its own tables' events only; the open demo answers a loopback
  client only (as the admin routes).
* ``GET /admin/events`` — ``{"pending", "dead", "events"}``: the counts
  (with a webhook, of the events one delivers: every table's with
  ``--webhook``, else those of the keys with a webhook of their own), and
  with ``?dead=1`` the dead events (each with ``attempts`` and ``error``;
  of any webhook), oldest first, at most :data:`MAX_EVENTS`.
* ``POST /admin/events/retry`` — every dead event pending again (its
  attempts back to 0), sent first in its table's order:
  ``{"retried": N}``.

Bad input: ``after``, ``wait`` or ``limit`` not a whole number → 400
``BadMessage`` naming it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from qipai.host.replay import shown
from qipai.host.store import LockLost, ReadsBusy, StoreError
from qipai.server.admin import _who
from qipai.server.routes import _error, _json, _whole
from qipai.server.webhook import Envelope, envelope

#: The most events one answer lists.
MAX_EVENTS = 500
#: The longest long-poll (seconds).
MAX_WAIT = 60
#: (A cluster.)  Seconds a long-poll waits before it reads again: the events
#: the other nodes commit wake no long-poll of this node's.
POLL_CLUSTER_S = 0.5


#: What each query parameter of ``GET /events`` is (its refusal says so).
_WHAT = {"after": "an event id", "wait": "seconds", "limit": "events"}


def _number(q: Any, name: str, default: int, most: int | None = None) -> int | Response:
    if name not in q:
        return default
    n = _whole(q[name])
    if n is None:
        return _error("BadMessage", f"{name} must be a whole number ({_WHAT[name]}) written in "
                                    f"ASCII digits, without a sign or leading zeros, at most 18 "
                                    f"of them, not {shown(q[name])}", 400)
    return min(n, most) if most is not None else n


def _unavailable(exc: StoreError) -> Response:
    if isinstance(exc, ReadsBusy):
        return _error("Unavailable", str(exc), 503)
    return _error("Unavailable", "the database did not answer the read of the events (the "
                                 "server's log says why); try again shortly", 503)


async def events(request: Request) -> Response:
    """``GET /events``."""
    refusal = _who(request, "GET /events")
    if refusal is not None:
        return refusal
    s = request.app.state.server
    q = request.query_params
    after = _number(q, "after", 0)
    wait = _number(q, "wait", 0, MAX_WAIT)
    limit = _number(q, "limit", MAX_EVENTS, MAX_EVENTS)
    for v in (after, wait, limit):
        if isinstance(v, Response):
            return v
    assert isinstance(after, int) and isinstance(wait, int) and isinstance(limit, int)
    key = None
    if s.keys is not None:
        from qipai.server.routes import _key_or_refusal

        key = _key_or_refusal(request, "GET /events")
    store = s.store
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    while True:
        signal = s.events_signal()   # taken before the read: nothing committed is missed
        try:
            rows = await store.read(store.events_after, after, key, max(1, limit),
                                    s.keys is None)
        except StoreError as exc:
            s.log(f"GET /events: {exc}")
            return _unavailable(exc)
        left = end - loop.time()
        if rows or left <= 0:
            break
        if s.cluster is not None:   # the other nodes' events wake nobody here: read again
            left = min(left, POLL_CLUSTER_S)
        try:
            await asyncio.wait_for(signal.wait(), left)
        except TimeoutError:
            pass
    listed = [envelope(r) for r in rows]
    return _json({"events": listed, "last": listed[-1].id if listed else after})


async def admin_events(request: Request) -> Response:
    """``GET /admin/events``."""
    refusal = _who(request, "GET /admin/events")
    if refusal is not None:
        return refusal
    s = request.app.state.server
    q = request.query_params
    dead = q.get("dead", "0")
    if dead not in ("0", "1"):
        return _error("BadMessage", f"dead must be 0 or 1, not {shown(dead)}", 400)
    store = s.store
    w = s.webhook
    scope = w.scope() if w is not None and w.active else None   # those a webhook delivers
    try:
        pending, n_dead = await store.read(store.event_counts, scope)
        rows = await store.read(store.dead_events, MAX_EVENTS) if dead == "1" else []
    except StoreError as exc:
        s.log(f"GET /admin/events: {exc}")
        return _unavailable(exc)
    return _json({"pending": pending, "dead": n_dead,
                  "events": [_dead(r) for r in rows]})


class _Dead(Envelope, kw_only=True):
    attempts: int
    error: str | None


def _dead(row: dict[str, Any]) -> _Dead:
    e = envelope(row)
    return _Dead(**{f: getattr(e, f) for f in e.__struct_fields__},
                 attempts=int(row["attempts"]), error=row["error"])


async def retry_events(request: Request) -> Response:
    """``POST /admin/events/retry``."""
    refusal = _who(request, "POST /admin/events/retry")
    if refusal is not None:
        return refusal
    s = request.app.state.server
    store = s.store
    if store.lost is not None:
        from qipai.host.errors import LOCK_LOST

        return _error("LockLost", LOCK_LOST, 503)
    try:
        _, n_dead = await store.read(store.event_counts)
    except StoreError as exc:
        return _unavailable(exc)
    from qipai.server.webhook import WRITE_KEY
    from qipai.host.store import Write

    done = asyncio.get_running_loop().create_future()
    store.submit(Write(WRITE_KEY, [("events_retry", {})],
                       lambda exc: done.done() or done.set_result(exc)))
    exc = await done
    if isinstance(exc, LockLost):
        from qipai.host.errors import LOCK_LOST

        return _error("LockLost", LOCK_LOST, 503)
    if exc is not None:
        s.log(f"POST /admin/events/retry: not written: {exc}")
        return _error("Unavailable", "the database did not take the retry (the server's log "
                                     "says why); try again", 503)
    if s.webhook is not None:
        s.webhook.poke()
    s.log(f"POST /admin/events/retry: {n_dead} dead event(s) pending again")
    return _json({"retried": n_dead})

