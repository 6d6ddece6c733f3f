"""The ASGI app of ``qipai serve``: the HTTP routes (:mod:`qipai.server.routes`)
and the WebSocket loop (:mod:`qipai.server.socket`) in one Starlette app,
served by uvicorn (:mod:`qipai.server.listen`).

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
* ``GET /ready`` — 200 ``{"status": "ready"}`` when the database answers a
  trivial read and the server lock is held, else 503 with the reason
  (:mod:`qipai.server.metrics`); ``GET /metrics`` — Prometheus metrics.
* ``GET /variants``, ``GET /variants/{name}`` — options and the card table;
  ``GET /vocabulary?lang=zh`` — the words of melds, actions, ways of winning
  … (:func:`qipai.text.vocabulary`), as the command line writes them.
* ``POST /tables`` — create a table; ``GET /tables`` — the open tables;
  ``GET /tables/{id}``; ``GET /tables/{id}/records`` — the finished hands'
  records (``qipai replay`` reads the answer); ``POST /tables/{id}/close``
  with ``Authorization: Bearer ADMIN_TOKEN``; ``GET /admin/tables`` and
  ``POST /admin/tables/close`` — the operator's list and bulk close
  (:mod:`qipai.server.admin`).
* ``GET /events?after=ID`` — the operator's events (a long-poll with
  ``wait``); ``GET /admin/events``, ``POST /admin/events/retry`` — the
  webhook's dead events (:mod:`qipai.server.feed`, :mod:`qipai.server.webhook`).
* ``WS /tables/{id}/ws?token=TOKEN`` — one seat (or the spectator) per connection.
* ``GET /`` — the browser page (``qipai/server/static/``: lobby, play, watch,
  replay); ``GET /records`` — the latest finished hands of all tables;
  ``GET /tables/{id}/records/{hand}/replay`` and ``POST /replay`` — a
  finished record replayed step by step (:mod:`qipai.host.replay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from qipai.host import protocol as P
from qipai.host import trace
from qipai.server.admin import admin_tables, close_many
from qipai.server.feed import admin_events, events, retry_events
from qipai.server.guard import OneValueEach
from qipai.server.routes import (
    STATIC, close_table, create_table, finished, get_table, health, list_tables, not_found,
    page, records, replay_posted, replay_stored, variant, variants, vocabulary,
)
from qipai.server.metrics import install, metrics, ready
from qipai.server.socket import table_ws
from qipai.server.state import SHUTDOWN_S, Server


async def _log_stalls(server: Server, every: float = 1.0) -> None:
    """(A task of the app's life.)  :meth:`Server.note_stall` every
    ``every`` seconds, until the lock is lost (that is logged on its own)."""
    while server.store.lost is None:
        await asyncio.sleep(every)
        server.note_stall()


async def _drain_then_exit(server: Server) -> None:
    """(A cluster node's SIGTERM.)  Hand every table to the peers
    (:meth:`~qipai.server.cluster.Cluster.drain`), then stop as SIGTERM
    stops a server."""
    try:
        await server.cluster.drain()
    except Exception as exc:  # noqa: BLE001 - the node stops anyway; a sweep takes the rest
        server.log(f"cluster: the drain failed: {exc}")
    finally:
        server.exit_now()


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
            body = msgspec.json.encode(P.HttpError(
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
        server.store.on_events = server.events_committed
        loop = asyncio.get_running_loop()
        stalls = loop.create_task(_log_stalls(server))
        webhook = None
        if server.webhook is not None:   # --webhook: the deliverer (qipai.server.webhook)
            webhook = loop.create_task(server.webhook.run())
        prunes = None
        if server.retention is not None:   # --retention: closed tables deleted after it
            from qipai.server.retention import prune_loop

            prunes = loop.create_task(prune_loop(server, server.retention))
        if server.keys is not None:   # a key added or revoked takes effect on SIGHUP
            with contextlib.suppress(NotImplementedError, AttributeError):
                loop.add_signal_handler(signal.SIGHUP, server.reload_keys)
        if server.cluster is not None:   # --cluster: sweeps, adoption, SIGTERM drains
            server.cluster.start()
            draining: list[asyncio.Task] = []

            def drain() -> None:
                if draining or server.exit_now is None:   # a second SIGTERM: at once
                    if server.exit_now is not None:
                        server.exit_now()
                    return
                draining.append(loop.create_task(_drain_then_exit(server)))

            with contextlib.suppress(NotImplementedError, AttributeError, RuntimeError):
                loop.add_signal_handler(signal.SIGTERM, drain)
        probe = trace.start()
        yield
        stalls.cancel()
        if webhook is not None:   # what it had in flight is sent again at the next start
            webhook.cancel()
            await asyncio.gather(webhook, return_exceptions=True)
        if prunes is not None:
            prunes.cancel()
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
        if server.cluster is not None:
            # its tables stopped and their writes answered: its row goes (a table it
            # still owns is then no node's, and a peer's sweep serves it)
            await server.cluster.stop()
        server.replays.close()
        server.specs.close()
        server.store.close(abandon=not done)
        if probe is not None:
            probe.cancel()
            trace.dump()

    app = Starlette(routes=[
        Route("/", page),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/health", health),
        Route("/ready", ready),
        Route("/metrics", metrics),   # with --keys: a key
        Route("/records", finished),
        Route("/replay", replay_posted, methods=["POST"]),
        Route("/tables/{id}/records/{hand}/replay", replay_stored),
        Route("/variants", variants),
        Route("/variants/{name}", variant),
        Route("/vocabulary", vocabulary),
        Route("/tables", create_table, methods=["POST"]),
        Route("/tables", list_tables, methods=["GET"]),
        Route("/tables/{id}", get_table),
        Route("/tables/{id}/records", records),
        Route("/tables/{id}/close", close_table, methods=["POST"]),
        Route("/admin/tables", admin_tables, methods=["GET"]),   # qipai.server.admin
        Route("/admin/tables/close", close_many, methods=["POST"]),
        Route("/admin/events", admin_events, methods=["GET"]),   # qipai.server.feed
        Route("/admin/events/retry", retry_events, methods=["POST"]),
        Route("/events", events, methods=["GET"]),
        WebSocketRoute("/tables/{id}/ws", table_ws),
    ], lifespan=lifespan, exception_handlers={404: not_found, 405: not_found},
        middleware=[Middleware(_Stopping), Middleware(OneValueEach)])
    app.state.server = server
    install(server)   # its /metrics registry; the writer observes each batch's commit
    return app
