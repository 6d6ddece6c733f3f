"""The webhook deliverer (``qipai serve --webhook URL``, and each operator
key's own webhook in the keys file): the operator's events
(:mod:`qipai.host.feed`), read from the database's outbox (``qipai_events``)
and POSTed to the operator, at least once, in order per table.

* **Where.**  An event of a table created with key K goes to K's webhook
  (its entry's ``webhook``, signed with its ``webhook_secret``,
  :mod:`qipai.server.keys`) if K has one, else to ``--webhook`` (signed
  with ``QIPAI_WEBHOOK_SECRET``) if given, else nowhere: it is read from
  ``GET /events`` only (as every event of a server without a webhook).
  The address is chosen at each attempt, so a key's webhook changed in the
  keys file takes effect at the reload (SIGHUP): its tables' events not yet
  delivered go to the new one — due at once, with attempts of their own
  (:meth:`Deliverer.rerouted`; one in flight to the old address then, if
  that attempt fails, too); a dead one waits for the retry as before.

* **At least once.**  An event is marked delivered (a write of the group
  commit) only after the webhook answered 2xx; a server killed between
  the two sends it again once restarted.  Every POST carries the event's
  id (``X-Qipai-Event-Id``, also the body's ``id``): the receiver credits
  an id once and answers 2xx to a repeat.
* **In order per table.**  Only the first undelivered event of a table is
  ever sent (:meth:`~qipai.host.store.Reads.event_heads`), one at a time;
  its table's later events wait until it is delivered — or, dead, until
  ``POST /admin/events/retry`` (then it is sent first).  Other tables are
  not held up: up to :data:`CONCURRENCY` tables' events are in flight at
  once.
* **Retries.**  A non-2xx answer, a connection refused or dropped, or no
  answer within ``timeout`` seconds, is retried after an exponential
  backoff with jitter: attempt *n* waits between half and all of
  ``min(backoff · 2^(n-1), BACKOFF_MAX)`` seconds.  After ``max_attempts``
  attempts the event is *dead*: counted in ``/metrics``
  (``qipai_events_dead``), listed by ``GET /admin/events?dead=1``, sent
  again after ``POST /admin/events/retry``.
* **Bounded.**  The events stay in the database; at most a batch of heads
  (:data:`BATCH`) is read at a time, and an answer's body is never read.
  Play never waits for the deliverer: it runs as a task of its own, and
  its writes are a few rows of the group commit.
* **Signed.**  ``X-Qipai-Signature: t=TIMESTAMP,v1=HEX``, HEX the
  HMAC-SHA256 (key: the key's ``webhook_secret``, or ``QIPAI_WEBHOOK_SECRET``
  for ``--webhook``) of ``f"{TIMESTAMP}.{BODY}"`` (TIMESTAMP Unix seconds,
  BODY the request's bytes).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
import time
from typing import Any

import msgspec

from qipai.host.store import StoreError, Write, said
from qipai.server.hookurl import check_url, shown_url

__all__ = ["Deliverer", "Envelope", "check_url", "envelope", "shown_url", "signature"]

#: Tables whose head event may be in flight at once.
CONCURRENCY = 8
#: The most head events read from the database at a time.
BATCH = 64
#: The longest wait between two attempts (seconds).
BACKOFF_MAX = 600.0
#: Seconds between two looks at the database when nothing woke the
#: deliverer (a new event wakes it at once; this covers anything missed).
POLL_S = 1.0
#: Seconds between two counts of the pending and dead events (``/metrics``).
COUNT_S = 2.0
#: The write key of the deliverer's own writes (no table id looks like it).
WRITE_KEY = "~webhook"
#: The delivery lag histogram's buckets (seconds, commit to a 2xx answer).
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
               300.0, 3600.0)


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``X-Qipai-Signature`` header of ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


class Envelope(msgspec.Struct):
    """What is POSTed (and what ``GET /events`` lists): ``id``, ``kind``,
    ``table``, ``created`` (``time.time()`` of its commit), ``data``."""

    id: int
    kind: str
    table: str
    created: float
    data: msgspec.Raw


def envelope(row: dict[str, Any]) -> Envelope:
    return Envelope(id=int(row["id"]), kind=row["kind"], table=row["table_id"],
                    created=float(row["created"]), data=msgspec.Raw(row["body"].encode()))


_ENC = msgspec.json.Encoder()


class Deliverer:
    """The webhooks' deliverer of one server (see the module docstring);
    :meth:`run` is its task.  ``url`` and ``secret``: ``--webhook`` and
    ``QIPAI_WEBHOOK_SECRET`` (None: no server-wide webhook; the keys' own,
    ``server.keys.webhooks``, are read at each round).  Counts for
    ``/metrics``: :attr:`delivered`, :attr:`failed`, :attr:`pending`,
    :attr:`dead`; :attr:`lag` (a histogram, set by
    :func:`qipai.server.metrics.install`)."""

    def __init__(self, server: Any, url: str | None, secret: bytes | None,
                 max_attempts: int = 12, backoff: float = 1.0, timeout: float = 10.0) -> None:
        self.server = server
        self.url = url
        self.secret = secret
        self.max_attempts = int(max_attempts)
        self.backoff = float(backoff)
        self.timeout = float(timeout)
        self.delivered = 0      #: events delivered (a 2xx)
        self.failed = 0         #: attempts that failed
        self.pending = 0        #: events not delivered nor dead (last counted)
        self.dead = 0           #: dead events (last counted)
        self.lag: Any = None    #: the lag histogram (``observe(seconds)``)
        self.wake = asyncio.Event()
        self.inflight: set[str] = set()    # tables whose head is being sent
        self._tasks: set[asyncio.Task] = set()
        self._counted = 0.0

    def poke(self) -> None:
        """(The loop.)  Look at the database again now (new events, a retry)."""
        self.wake.set()

    def _own(self) -> dict[str, tuple[str, bytes]]:
        keys = self.server.keys
        return keys.webhooks if keys is not None else {}

    def route(self, key_name: str | None) -> tuple[str, bytes] | None:
        """Where an event of a table of ``key_name`` goes now: ``(URL,
        secret)`` — the key's own webhook, else ``--webhook`` — or None."""
        own = self._own().get(key_name) if key_name is not None else None
        if own is not None:
            return own
        if self.url is not None and self.secret is not None:
            return self.url, self.secret
        return None

    def scope(self) -> list[str] | None:
        """The keys whose tables' events are delivered (those with a webhook
        of their own), or None: every table's (a server-wide ``--webhook``)."""
        return None if self.url is not None else sorted(self._own())

    @property
    def active(self) -> bool:
        """Whether any event has somewhere to go (``--webhook`` or a key's own)."""
        return self.url is not None or bool(self._own())

    def rerouted(self, before: dict[str, tuple[str, bytes]]) -> None:
        """(The loop; the keys were reloaded.)  Each key whose events' address
        changed from what ``before`` (the keys' webhooks until now) made
        it: one log line, and its tables' pending events due now with
        attempts of their own (a write; a dead one stays dead)."""
        now = self._own()
        ops = []
        for name in sorted(set(before) | set(now)):
            old = before.get(name) or (self.url, self.secret)
            new = now.get(name) or (self.url, self.secret)
            if old == new:
                continue
            if name in now:
                where = f"its own webhook {shown_url(now[name][0])}"
            elif self.url is not None:
                where = "the server's --webhook"
            else:
                where = "no webhook (read from GET /events only)"
            self.server.log(f"webhook: key {name!r}: its tables' events not yet delivered now "
                            f"go to {where}")
            if new[0] is not None:
                ops.append(("events_due", {"k_key": name}))
        if ops:
            self.server.store.submit(Write(WRITE_KEY, ops, lambda exc: self.poke()))

    async def run(self) -> None:
        import httpx

        from qipai.core.stamps import qipai_version

        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout), follow_redirects=False,
            headers={"user-agent": f"qipai/{qipai_version()} webhook"})
        store = self.server.store
        try:
            while store.lost is None:
                self.wake.clear()
                try:
                    later = await self._round()
                except StoreError as exc:
                    self.server.log_once("webhook-read", f"webhook: the database did not "
                                         f"answer the events' read: {exc} (logged once; "
                                         f"tried again every second)")
                    later = time.time() + POLL_S
                except Exception as exc:  # noqa: BLE001 - the deliverer must not die
                    self.server.log(f"webhook: the deliverer failed: {said(exc)}; "
                                    f"tried again in a second")
                    later = time.time() + POLL_S
                wait = POLL_S if later is None else max(0.0, min(POLL_S, later - time.time()))
                try:
                    await asyncio.wait_for(self.wake.wait(), wait)
                except TimeoutError:
                    pass
        finally:
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.client.aclose()

    async def _round(self) -> float | None:
        """Start sending each due head event of a table not in flight;
        the next ``next_try`` of a head not due yet (None: none)."""
        store = self.server.store
        if not self.active:   # (keys without webhooks, none server-wide: until a reload)
            self.pending = self.dead = 0
            return None
        scope = self.scope()
        now = time.time()
        if now - self._counted >= COUNT_S:
            self._counted = now
            self.pending, self.dead = await store.read(store.event_counts, scope, capped=False)
        if len(self.inflight) >= CONCURRENCY:
            return None
        rows, later = await store.read(store.event_heads, now, BATCH + len(self.inflight),
                                       scope, capped=False)
        loop = asyncio.get_running_loop()
        for row in rows:
            if len(self.inflight) >= CONCURRENCY:
                break
            tid = row["table_id"]
            if tid in self.inflight:
                continue
            self.inflight.add(tid)
            task = loop.create_task(self._send(row))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return later

    async def _send(self, row: dict[str, Any]) -> None:
        """POST one event; write what came of it; free its table."""
        import httpx

        tid = row["table_id"]
        try:
            key = row.get("key_name")
            to = self.route(key)
            if to is None:   # (its key's webhook gone since the read)
                return
            url, secret = to
            whose = (f"webhook of key {key!r}" if key is not None and key in self._own()
                     else "webhook")
            body = _ENC.encode(envelope(row))
            attempts = int(row["attempts"]) + 1
            ts = int(time.time())
            headers = {"content-type": "application/json",
                       "x-qipai-event-id": str(row["id"]), "x-qipai-event-kind": row["kind"],
                       "x-qipai-signature": signature(secret, ts, body)}
            error = None
            try:
                async with self.client.stream("POST", url, content=body,
                                              headers=headers) as r:
                    if not 200 <= r.status_code < 300:
                        error = f"HTTP {r.status_code}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"[:300] or type(exc).__name__
            now = time.time()
            if error is None:
                op = ("event_sent", dict(k_id=row["id"], delivered=now, attempts=attempts))
            elif self.route(key) != to:
                # its key's webhook changed (a reload) while it was sent to the old
                # one: due at once at the new address, with attempts of its own
                self.failed += 1
                op = ("event_failed", dict(k_id=row["id"], attempts=0, next_try=now,
                                           dead=False, error=error))
            else:
                self.failed += 1
                dead = attempts >= self.max_attempts
                step = min(BACKOFF_MAX, self.backoff * 2 ** (attempts - 1))
                op = ("event_failed", dict(k_id=row["id"], attempts=attempts,
                                           next_try=now + step / 2 + random.uniform(0, step / 2),
                                           dead=dead, error=error))
                if attempts == 1:
                    self.server.log_once(f"webhook-failing:{whose}",
                                         f"{whose}: event {row['id']} not delivered ({error}); "
                                         f"retried with backoff (logged once)")
                if dead:
                    self.server.log(f"{whose}: event {row['id']} ({row['kind']}) of table "
                                    f"{tid} is dead after {attempts} attempts ({error}); its "
                                    f"table's later events wait: POST /admin/events/retry "
                                    f"sends it again")
            if await self.write([op]) is None and error is None:
                self.delivered += 1
                if self.lag is not None:
                    self.lag.observe(max(0.0, now - float(row["created"])))
        finally:
            self.inflight.discard(tid)
            self.wake.set()

    async def write(self, ops: list[tuple[str, dict[str, Any]]]) -> BaseException | None:
        """Submit ``ops`` to the group commit and wait for it: None once
        committed, else the error (logged once: the event is sent again)."""
        done = asyncio.get_running_loop().create_future()

        def written(exc: BaseException | None) -> None:
            if not done.done():
                done.set_result(exc)

        self.server.store.submit(Write(WRITE_KEY, ops, written))
        exc = await done
        if exc is not None:
            self.server.log_once("webhook-write", f"webhook: a delivery's state was not "
                                 f"written: {said(exc)} (the event is sent again; logged "
                                 f"once)")
            await asyncio.sleep(POLL_S)
        return exc
