"""Closed tables pruned after a retention (``qipai serve --retention``).

By default nothing is deleted: a closed table's hands stay readable (``GET
/tables/{id}/records``, the replays) for ever.  With ``--retention
DURATION`` (``90s``, ``30m``, ``12h``, ``7d``; a bare number is seconds)
a task of the server deletes, every :func:`interval`, the rows of the
tables closed longer ago than that — ``qipai_actions``, ``qipai_hands``,
their ``qipai_events`` (those a webhook delivers — every table's with
``--webhook``, a key's with a webhook of its own — once delivered: an
event not delivered yet is kept, and still sent; the others at once) then
``qipai_tables`` —
:data:`BATCH` tables a transaction, through the
store's writer (a write like any other, in the order submitted; an open
table's rows are never deleted).  Each batch is one ``tables_pruned``
event (``tables``: how many; counted in ``qipai_tables_pruned_total``).
A pruned table is gone: its routes answer 404 ``UnknownTable``, as for a
table that never was.  Without ``--archive`` nothing of it is kept: export
first what must be (``GET /tables/{id}/records``, with a key).  With
``--archive DIR`` (:mod:`qipai.server.archive`) each table of a batch is
first written to its file in ``DIR`` (what ``GET /tables/{id}/records``
answers, and the table's metadata), durably, and only the tables whose
file was written are deleted (each one ``table_archived`` event, counted
in ``qipai_tables_archived_total``); one whose file could not be written
stays, is counted in ``qipai_archive_failures_total``, and is tried again
at the next prune — the failure logged once (``archive_failed``), not at
every prune while it lasts.

SQLite reuses the pages freed by the deletes for later rows, so a server
that creates and closes tables in a loop keeps its file about the size
that one retention's tables take (the file does not shrink by itself:
``VACUUM`` it offline to give the space back).
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import msgspec

from qipai.host.store import LockLost, StoreError, Write

#: Closed tables deleted in one transaction.
BATCH = 200

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """Seconds of ``text``: ``90``, ``90s``, ``30m``, ``12h``, ``7d`` (ValueError if not one)."""
    m = _DURATION.fullmatch(text.strip().lower())
    if m is None or float(m.group(1)) <= 0:
        raise ValueError(f"a duration is a positive number with an optional unit s, m, h "
                         f"or d (90s, 30m, 12h, 7d), not {text!r}")
    return float(m.group(1)) * _UNIT[m.group(2)]


def interval(retention: float) -> float:
    """Seconds between two prunes: a quarter of the retention, between 0.2 s and 60 s."""
    return min(60.0, max(0.2, retention / 4))


async def prune_once(server: Any, retention: float) -> int:
    """Delete the rows of the tables closed more than ``retention`` seconds
    ago, :data:`BATCH` tables a transaction; how many tables were deleted.

    Raises:
        StoreError, LockLost: a read or a write failed (the rest waits for
            the next round)."""
    store = server.store
    done_total = 0
    while True:
        # (not capped: one read at a time, never refused Busy behind the requests' reads)
        ids = await store.read(store.closed_before, time.time() - retention, BATCH,
                               capped=False)
        if not ids:
            return done_total
        asked = len(ids)
        if server.archive is not None:
            ids = await archive_batch(server, ids)
            if not ids:
                return done_total
        fut: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

        def written(exc: BaseException | None, fut: Any = fut) -> None:
            if not fut.done():
                fut.set_result(exc)

        params = {"ids": ids}
        # their events too: those delivered — and those no webhook delivers (GET
        # /events readers had the retention to read them)
        w = server.webhook
        if w is None or not w.active:
            events: tuple[str, dict[str, Any]] = ("prune_events_all", params)
        elif w.url is not None:   # --webhook: every table's are delivered
            events = ("prune_events", params)
        else:                     # the keys with a webhook of their own: theirs
            events = ("prune_events_routed", {"ids": ids, "keys": w.scope()})
        store.submit(Write(f"prune:{ids[0]}", [("prune_actions", params),
                                               ("prune_seat_values", params),
                                               ("prune_hands", params), events,
                                               ("prune_tables", params)], written))
        exc = await fut
        if exc is not None:
            raise exc if isinstance(exc, (LockLost, StoreError)) else StoreError(str(exc))
        server.events.emit("tables_pruned", tables=len(ids), retention_s=retention)
        server.quota.pruned += len(ids)
        done_total += len(ids)
        if asked < BATCH or len(ids) < asked:   # (a table not archived: the next prune)
            return done_total


async def archive_batch(server: Any, ids: list[str]) -> list[str]:
    """Write each closed table of ``ids`` to its archive file
    (:mod:`qipai.server.archive`); the ids of those written, in order (a
    table pruned or reopened meanwhile is left out).  A table not written
    is counted, and the first failure of a run of the same failure logged.

    Raises:
        StoreError, LockLost: a table could not be read."""
    from qipai.server.archive import file_of, metadata, write
    from qipai.server.routes import records_of

    store = server.store
    done = []
    for tid in ids:
        row = await store.read(store.table, tid, capped=False)
        if row is None or row["open"]:   # pruned meanwhile, or open again: not this batch's
            continue
        stored = await store.read(store.hands_of, tid, capped=False)
        records = records_of(row, stored)
        records["archive"] = metadata(row, records)
        path = file_of(server.archive, row)
        try:
            await asyncio.to_thread(write, path, msgspec.json.encode(records))
        except OSError as exc:
            server.quota.archive_failures += 1
            why = f"{type(exc).__name__}: {exc.strerror or exc}"
            if server.archive_failing != why:   # once while the same failure lasts
                server.archive_failing = why
                server.events.emit("archive_failed", table=tid, key=row.get("key_name"),
                                   file=str(path), error=why)
            continue
        server.archive_failing = None
        server.quota.archived += 1
        server.events.emit("table_archived", table=tid, key=row.get("key_name"), file=str(path))
        done.append(tid)
    return done


async def prune_loop(server: Any, retention: float) -> None:
    """(A task of the app's life.)  :func:`prune_once` every
    :func:`interval`, until the store is lost; a failure is logged and
    tried again next round."""
    every = interval(retention)
    while server.store.lost is None:
        try:
            await prune_once(server, retention)
        except LockLost:
            return
        except StoreError as exc:
            server.log(f"closed tables not pruned this round: {exc}")
        await asyncio.sleep(every)
