"""Blocking calls of the server run off the event loop, a bounded number at once.

The server's event loop runs every table; a call that blocks it (a
database read that waits for a lock, a large replay) holds up every table,
connection and ``GET /health``.  :class:`Offload` runs such calls in a few
worker threads and lets a bounded number more wait their turn; the next
one is refused at once (:class:`Crowded`) instead of queued without end.

The count is exact: a call counts from the moment it is accepted until its
thread is done with it — a call whose request was cancelled while its
thread still waits for the database keeps counting (it still holds a
thread), and one cancelled before it started stops counting at once.  It
also records since when each accepted call has waited (:class:`Waits`,
``GET /health``'s ``stalled``).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from qipai.core.errors import QipaiError

_T = TypeVar("_T")


class Crowded(QipaiError):
    """As many calls as an :class:`Offload` takes run or wait already."""


class Stopped(QipaiError):
    """The :class:`Offload` is closed (the server stops): a call after
    :meth:`~Offload.close`, or one still queued when it closed, is not made."""


class Waits:
    """What waits now, each since when: ``begin(what)`` → a key,
    ``end(key)``.  Thread-safe (a call may end in a worker thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: dict[int, tuple[float, str]] = {}   # key → (time.monotonic(), what)
        self._keys = itertools.count()

    def begin(self, what: str, at_most: int | None = None) -> int | None:
        """A key for ``what``, waiting from now; None (nothing begun) when
        ``at_most`` wait already."""
        with self._lock:
            if at_most is not None and len(self._since) >= at_most:
                return None
            key = next(self._keys)
            self._since[key] = (time.monotonic(), what)
            return key

    def end(self, key: int) -> None:
        with self._lock:
            self._since.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._since)

    def oldest(self) -> tuple[float, str] | None:
        """``(time.monotonic() when it began, what)`` of the oldest wait, or None."""
        with self._lock:
            return min(self._since.values(), default=None)


class Offload:
    """``workers`` threads named ``name``; at most ``workers + waiting``
    calls accepted at once (running or queued); :attr:`waits` holds each
    accepted call until its thread is done with it."""

    def __init__(self, name: str, workers: int, waiting: int) -> None:
        self.name, self.workers, self.waiting = name, int(workers), int(waiting)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.waits = Waits()

    async def run(self, fn: Callable[..., _T], *args: Any, what: str = "a call",
                  capped: bool = True) -> _T:
        """``fn(*args)`` in a worker thread; the loop waits without blocking.
        ``what`` names the call in :attr:`waits`; ``capped=False``: accepted
        even when full (a call the server itself needs, not a request's).

        Raises:
            Crowded: ``workers + waiting`` calls are accepted already.
            Stopped: the offload is closed, or closed while the call was
                queued (it was not made).
            Whatever ``fn`` raises."""
        key = self.waits.begin(what, self.workers + self.waiting if capped else None)
        if key is None:
            raise Crowded(f"{self.name}: {self.workers} run and {self.waiting} wait already")
        with self._lock:
            if self._closed:   # no new pool that nothing would close
                self.waits.end(key)
                raise self._stopped(what)
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix=self.name)
            pool = self._pool
        try:
            fut = pool.submit(fn, *args)
        except BaseException:
            self.waits.end(key)
            raise
        fut.add_done_callback(lambda _f, key=key: self.waits.end(key))
        # cancelled (the request gone): a queued call is dropped (and ends), a
        # running one runs on in its thread, counted until it returns
        try:
            return await asyncio.wrap_future(fut)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if fut.cancelled() and self._closed and not (task and task.cancelling()):
                # dropped from the queue by close(), not this task cancelled
                raise self._stopped(what) from None
            raise

    def _stopped(self, what: str) -> Stopped:
        return Stopped(f"{self.name}: closed, the server is stopping: {what} was not made")

    def close(self) -> None:
        """Drop the queued calls and let the threads go, waiting for none
        (a thread still in a call may wait for a database that does not
        answer; the process's end ends it)."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
