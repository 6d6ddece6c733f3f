"""``GET /metrics`` (Prometheus, with prometheus-client) and ``GET /ready``.

The counts are the server's :class:`~qipai.host.events.Events` (plain
integers the authority adds to) and its state, read when ``/metrics`` is
scraped by a collector of this server's own registry (never the process's
global one); the one instrument observed on the way is the histogram of the
group commit's batches (:attr:`~qipai.host.store.writer.GroupCommit.on_batch`:
one ``observe`` a batch, not an action).

Metrics (``qipai_`` first):

* ``qipai_tables_open`` (gauge) — the open tables served;
* ``qipai_connections`` (gauge) — the WebSocket connections open;
* ``qipai_tables_created_total``, ``qipai_tables_closed_total``,
  ``qipai_actions_total`` (applied), ``qipai_hands_total`` (ended, committed),
  ``qipai_timeouts_total`` (decisions that timed out) — counters;
* ``qipai_refusals_total{reason="…"}`` — acts, frames and connections
  refused, by the code the client was sent (``IllegalAction``, ``StaleSeq``,
  ``Throttled``, ``BadToken``, ``TooManyConnections`` …);
* ``qipai_commit_seconds`` (histogram) — each group-commit batch's commit;
* with ``--keys``, per operator key (:mod:`qipai.server.limits`):
  ``qipai_key_tables_open{key}``, ``qipai_key_connections{key}``,
  ``qipai_key_spectators{key}`` (gauges) and
  ``qipai_limit_refusals_total{key,limit}`` (``key`` empty for the
  server-wide ``seat_reserve``);
* ``qipai_tables_pruned_total`` — closed tables deleted after ``--retention``;
  with ``--archive`` (:mod:`qipai.server.archive`), ``qipai_tables_archived_total``
  (written to their file first) and ``qipai_archive_failures_total`` (files
  not written: the table is kept and tried again);
* with ``--webhook`` or a key's own webhook (:mod:`qipai.server.webhook`;
  of every webhook together): ``qipai_events_pending``,
  ``qipai_events_dead`` (gauges, counted every 2 s),
  ``qipai_events_delivered_total``, ``qipai_event_attempts_failed_total``
  (counters) and ``qipai_event_lag_seconds`` (histogram: commit to the
  webhook's 2xx);
* with ``--cluster`` (:mod:`qipai.server.cluster`): ``qipai_cluster_nodes``
  (gauge: the live nodes as the last sweep read them),
  ``qipai_cluster_taken_over_total`` (tables taken from dead nodes or no
  node), ``qipai_cluster_handed_off_total`` (given to a peer by a drain),
  ``qipai_cluster_adopted_total`` (tables this node began to serve after a
  takeover or a handoff) and ``qipai_cluster_fenced_batches_total``
  (batches whose fence found a table moved).

``/metrics`` is open (no key) for now.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

from qipai.host.errors import LOCK_LOST
from qipai.host.store import ReadsBusy, StoreError
from qipai.server.routes import _json, _key_or_refusal

#: The commit histogram's buckets (seconds): an SQLite WAL commit takes
#: tens of microseconds, a PostgreSQL one a millisecond or more, a stalled
#: one seconds.
COMMIT_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                  0.25, 0.5, 1.0, 2.5, 10.0)


class _Counts(Collector):
    """The server's counts and gauges, read at each scrape."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def collect(self) -> Iterator[Metric]:
        s = self.server
        e = s.events
        yield GaugeMetricFamily("qipai_tables_open", "Open tables this server serves.",
                                value=sum(1 for t in s.tables.values() if t.open))
        yield GaugeMetricFamily("qipai_connections", "WebSocket connections open.",
                                value=s.connections)
        for name, doc, value in (
                ("qipai_tables_created", "Tables created.", e.created),
                ("qipai_tables_closed", "Tables closed.", e.closed),
                ("qipai_actions", "Actions applied (submitted to the group commit).", e.actions),
                ("qipai_hands", "Hands ended (committed).", e.hands),
                ("qipai_timeouts", "Decisions that timed out (the default action played).",
                 e.timeouts)):
            yield CounterMetricFamily(name, doc, value=value)
        refusals = CounterMetricFamily("qipai_refusals", "Acts, frames and connections refused, "
                                       "by the code the client was sent.", labels=["reason"])
        for reason, n in sorted(e.refusals.items()):
            refusals.add_metric([reason], n)
        yield refusals
        q = s.quota
        for what, values in q.samples().items():
            g = GaugeMetricFamily(f"qipai_key_{what}" + ("_open" if what == "tables" else ""),
                                  f"Per operator key: its {what}"
                                  + (" open." if what == "tables" else " open."),
                                  labels=["key"])
            for key, n in sorted(values.items()):
                g.add_metric([key], n)
            yield g
        limited = CounterMetricFamily("qipai_limit_refusals", "Requests refused over a limit, "
                                      "by key and limit.", labels=["key", "limit"])
        for (key, limit), n in sorted(q.refusals.items()):
            limited.add_metric([key, limit], n)
        yield limited
        yield CounterMetricFamily("qipai_tables_pruned", "Closed tables deleted after the "
                                  "retention.", value=q.pruned)
        if s.archive is not None:
            yield CounterMetricFamily("qipai_tables_archived", "Closed tables written to the "
                                      "archive before their prune.", value=q.archived)
            yield CounterMetricFamily("qipai_archive_failures", "Archive files not written "
                                      "(each table each prune; the table is kept).",
                                      value=q.archive_failures)
        c = s.cluster
        if c is not None:
            yield GaugeMetricFamily("qipai_cluster_nodes", "Live nodes of the cluster, as this "
                                    "node's last sweep read them.", value=len(c.addresses))
            for name, doc, value in (
                    ("qipai_cluster_taken_over", "Tables taken over from dead nodes (or no "
                     "node's).", c.taken_over),
                    ("qipai_cluster_handed_off", "Tables handed to a peer by a drain.",
                     c.handed_off),
                    ("qipai_cluster_adopted", "Tables this node began to serve after a "
                     "takeover or a handoff.", c.adopted),
                    ("qipai_cluster_fenced_batches", "Group-commit batches whose fence found "
                     "a table moved to another node.", s.store.fenced_off)):
                yield CounterMetricFamily(name, doc, value=value)
        w = s.webhook
        if w is not None and w.active:
            yield GaugeMetricFamily("qipai_events_pending", "Events not yet delivered to the "
                                    "webhook (nor dead), as last counted.", value=w.pending)
            yield GaugeMetricFamily("qipai_events_dead", "Events the webhook did not take "
                                    "after --webhook-max-attempts (POST /admin/events/retry).",
                                    value=w.dead)
            yield CounterMetricFamily("qipai_events_delivered", "Events delivered to the "
                                      "webhook (a 2xx answer).", value=w.delivered)
            yield CounterMetricFamily("qipai_event_attempts_failed", "Webhook attempts that "
                                      "failed (not 2xx, no answer, a dropped connection).",
                                      value=w.failed)


def install(server: Any) -> CollectorRegistry:
    """``server``'s registry (its counts, the commit histogram observed by
    its store's writer), kept as ``server.metrics``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Counts(server))
    commits = Histogram("qipai_commit_seconds", "Seconds each group-commit batch took to "
                        "commit.", buckets=COMMIT_BUCKETS, registry=registry)
    server.store.on_batch = commits.observe
    if server.webhook is not None:
        from qipai.server.webhook import LAG_BUCKETS

        server.webhook.lag = Histogram(
            "qipai_event_lag_seconds", "Seconds from an event's commit to the webhook's 2xx "
            "answer.", buckets=LAG_BUCKETS, registry=registry)
    server.metrics = registry
    return registry


async def metrics(request: Request) -> Response:
    """``GET /metrics``: the Prometheus text format; with ``--keys``, for an
    operator key only (401 ``NoKey``/``BadKey``, as the other operator routes)."""
    refusal = _key_or_refusal(request, "GET /metrics")
    if isinstance(refusal, Response):
        return refusal
    server = request.app.state.server
    return Response(generate_latest(server.metrics), media_type=CONTENT_TYPE_LATEST)


def _not_ready(status: str, message: str) -> Response:
    return _json({"status": status, "message": message}, 503)


async def ready(request: Request) -> Response:
    """``GET /ready``: 200 ``{"status": "ready"}`` when the database answers
    a trivial read and the server lock is held; else 503 with ``status``
    ``lock-lost``, ``db`` or ``busy`` and a ``message``."""
    s = request.app.state.server
    store = s.store
    if store.lost is not None:
        return _not_ready("lock-lost", LOCK_LOST)
    try:
        await store.read(store.ping)
        why = await store.read(store.check_lock)   # PostgreSQL asks pg_locks; SQLite: None
    except StoreError as exc:
        if isinstance(exc, ReadsBusy):
            return _not_ready("busy", str(exc))
        s.log(f"/ready: the database did not answer: {exc}")
        return _not_ready("db", "the database did not answer a trivial read (the server's "
                                "log says why)")
    if store.lost is not None:
        return _not_ready("lock-lost", LOCK_LOST)
    if why is not None:
        return _not_ready("lock-lost", f"the server lock is not held: {why}")
    return _json({"status": "ready", "db": store.dialect})
