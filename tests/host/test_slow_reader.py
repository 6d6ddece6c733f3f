"""A client that does not read, and one seat opening many connections, do
not grow the server's memory without end (unbounded, 50 connections of
one seat sending resyncs they never read would take the server from 110
to 590 MB in 40 s)."""

from __future__ import annotations

import asyncio


from hostkit import SyncSeat, create, refusal
from qipai.host import seats
from qipai.host import protocol as P
from qipai.host.outbox import CLOSE_TOO_SLOW, MAX_QUEUED_CHARS, Conn


def test_a_connection_past_its_queue_bound_is_closed_and_its_frames_dropped():
    """Frames past MAX_QUEUED_CHARS unread: the queue is dropped, the
    connection closes with 4408 (its writer closes the socket with it), and
    nothing is queued after; frames the writer takes free their room."""
    c = Conn(seat=0)
    frame = "x" * 4096
    k = MAX_QUEUED_CHARS // len(frame)
    for _ in range(k):
        c.put(frame)
    assert c.queued == k * len(frame) and c.close_code is None
    assert c.take() == frame and c.queued == (k - 1) * len(frame)
    c.put(frame)  # back to k frames: still within the bound
    assert c.close_code is None
    c.put(frame + "y")  # one frame over
    assert c.close_code == CLOSE_TOO_SLOW and list(c.outbox) == [None] and c.queued == 0
    c.put("later")
    c.send(P.Pong())
    c.frame()  # what the table frames for it later is not queued: it is closing
    assert list(c.outbox) == [None] and c.queued == 0

    class FakeSocket:
        def __init__(self) -> None:
            self.sent: list[str] = []
            self.closed: int | None = None

        async def send(self, message: dict) -> None:
            self.sent.append(message["text"])

        async def close(self, code: int) -> None:
            self.closed = code

    from qipai.server.socket import _writer

    ws = FakeSocket()
    c = Conn(seat=1)
    c.put("a")
    for _ in range(k + 1):
        c.put(frame)
    asyncio.run(_writer(ws, c))  # type: ignore[arg-type]
    assert ws.sent == [] and ws.closed == CLOSE_TOO_SLOW


def test_a_seat_has_at_most_eight_connections(served):
    """The ninth connection of one seat is refused TooManyConnections and
    closed (4429); another seat, and the seat again once one closed, are
    served."""
    t = create(served, "guilin-mahjong", bots=[2, 3])
    token = t["seats"]["0"]
    open_ = [SyncSeat(served, t["id"], token) for _ in range(seats.MAX_CONNS_PER_SEAT)]
    try:
        for c in open_:
            assert c.until("welcome")["type"] == "welcome"
        m = refusal(served, t["id"], token)
        assert m["code"] == "TooManyConnections" and "seat 0" in m["message"], m
        other = SyncSeat(served, t["id"], t["seats"]["1"])
        assert other.until("welcome")["type"] == "welcome"
        other.close()
        open_.pop().close()
        again = None
        for _ in range(50):  # the server sees the close a moment later
            c = SyncSeat(served, t["id"], token, strict=False)
            first = c.recv()
            if first["type"] != "error":
                again = c
                break
            c.close()
        assert again is not None, "a freed place was never given again"
        open_.append(again)
    finally:
        for c in open_:
            c.close()
