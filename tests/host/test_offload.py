"""``qipai.host.offload``: calls off the event loop, capped exactly.

The cap of the server's database reads and replays: ``workers`` run,
``waiting`` more queue, the next is refused at once.  The count holds a
call until its thread is done with it — a cancelled request whose thread
still waits for the database keeps its place, so a burst cannot pass the
cap."""

from __future__ import annotations

import asyncio
import threading

import pytest

from qipai.host.offload import Crowded, Offload, Stopped, Waits


def test_a_burst_beyond_the_cap_is_refused_exactly_and_cancelled_calls_count_while_they_run():
    async def main() -> None:
        off = Offload("t", workers=2, waiting=3)
        gate = threading.Event()
        started = threading.Semaphore(0)

        def blocked(i: int) -> int:
            started.release()
            gate.wait(30)   # a database that does not answer (bounded for the test)
            return i

        # a burst of 10 at once: 5 accepted (2 run, 3 queue), 5 refused at once
        tasks = [asyncio.ensure_future(off.run(blocked, i, what=f"call {i}")) for i in range(10)]
        await asyncio.sleep(0)   # every task runs up to its first await
        refused = [t for t in tasks if t.done()]
        assert refused == tasks[5:] and all(isinstance(t.exception(), Crowded) for t in refused)
        assert "2 run and 3 wait" in str(refused[0].exception())
        assert off.waits.oldest() is not None and len(off.waits) == 5
        for _ in range(2):
            assert started.acquire(timeout=30)   # the two workers are in their calls
        running, queued = tasks[:2], tasks[2:5]   # the pool takes them in order
        # a queued call cancelled: dropped, its place free at once
        queued[0].cancel()
        await asyncio.sleep(0.05)
        assert len(off.waits) == 4
        # a running call cancelled: its thread still waits, so it still counts
        running[0].cancel()
        await asyncio.sleep(0.05)
        assert len(off.waits) == 4
        one_more = asyncio.ensure_future(off.run(blocked, 99))
        await asyncio.sleep(0)
        assert not one_more.done()               # 4 + 1 = the cap: accepted
        with pytest.raises(Crowded):
            await off.run(blocked, 100)         # the sixth is refused
        # uncapped: accepted even when full (a call the server itself needs)
        needed = asyncio.ensure_future(off.run(blocked, 7, capped=False))
        await asyncio.sleep(0)
        assert not needed.done() and len(off.waits) == 6
        gate.set()
        assert await asyncio.gather(*queued[1:], running[1], one_more, needed) == [3, 4, 1, 99, 7]
        for _ in range(50):
            if not len(off.waits):
                break
            await asyncio.sleep(0.02)
        assert len(off.waits) == 0 and off.waits.oldest() is None
        off.close()

    asyncio.run(main())


def test_waits_name_the_oldest_and_a_full_one_begins_nothing():
    w = Waits()
    a = w.begin("a write")
    b = w.begin("a read")
    assert w.oldest()[1] == "a write" and len(w) == 2
    assert w.begin("a third", at_most=2) is None and len(w) == 2
    w.end(a)
    assert w.oldest()[1] == "a read"
    w.end(b)
    w.end(b)   # twice: nothing
    assert w.oldest() is None and len(w) == 0


def test_a_failing_call_raises_its_own_error_and_ends():
    async def main() -> None:
        off = Offload("t", workers=1, waiting=0)

        def bad() -> None:
            raise ValueError("no such row")

        with pytest.raises(ValueError, match="no such row"):
            await off.run(bad)
        for _ in range(50):
            if not len(off.waits):
                break
            await asyncio.sleep(0.02)
        assert len(off.waits) == 0
        assert await off.run(lambda: 5) == 5    # the place is free again
        off.close()

    asyncio.run(main())


def test_a_closed_offload_makes_no_call_and_says_so():
    """After :meth:`Offload.close` a call is refused :class:`Stopped` (no new
    pool is made that nothing would close), and a call still queued when
    it closed raises :class:`Stopped`, not a bare ``CancelledError`` (which
    a caller takes for its own task cancelled); a caller's task cancelled
    still raises ``CancelledError``."""
    async def main() -> None:
        off = Offload("t", workers=1, waiting=2)
        gate = threading.Event()
        started = threading.Event()

        def blocked() -> str:
            started.set()
            gate.wait(30)
            return "done"

        running = asyncio.ensure_future(off.run(blocked))
        queued = asyncio.ensure_future(off.run(blocked, what="a read"))
        mine = asyncio.ensure_future(off.run(blocked))
        await asyncio.sleep(0)
        assert started.wait(30)
        mine.cancel()
        with pytest.raises(asyncio.CancelledError):
            await mine
        off.close()
        with pytest.raises(Stopped, match="a read was not made"):
            await queued
        with pytest.raises(Stopped, match="closed"):
            await off.run(lambda: 1)
        assert off._pool is None
        gate.set()
        assert await running == "done"   # a call in its thread finishes

    asyncio.run(main())
