"""``seat_conns``: each connection of a seat is told how many connections the
seat has open at the table — after its own welcome, and again whenever one
of the seat's connections opens or closes — so a player who sees more than
he opened knows someone else holds his seat's link.  A spectator is told
nothing, a seat nothing of another seat, and no connection is told before
its welcome (a connection made while the table re-reads its hand holds it
until the hand is back) nor once the table is halted or closed.

Over a real ``qipai serve`` (both databases) and, for the re-read and the
halt, in process with the store's queue stood in for (``writes_by_hand``).
"""

from __future__ import annotations

import asyncio
import json
import time

from hostkit import SyncSeat, create
from test_stalled_database import writes_by_hand


def counts(c: SyncSeat) -> list[int]:
    """The ``seat_conns`` counts ``c`` was told, in order."""
    return [m["count"] for m in c.received if m["type"] == "seat_conns"]


def barrier(c: SyncSeat) -> None:
    """Ping and read up to the pong: whatever the server sent ``c`` before
    it read the ping has been received."""
    c.send({"type": "ping"}, paced=True)
    c.until("pong")


def until_count(c: SyncSeat, n: int, within: float = 20.0) -> dict:
    """Read until ``c`` is told the count ``n``, failing after ``within`` s
    in all (the table plays on meanwhile: its frames keep coming)."""
    end = time.monotonic() + within
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise AssertionError(f"not told {n} within {within} s: {counts(c)} so far")
        try:
            m = c.recv(timeout=left)
        except TimeoutError:
            continue
        if m["type"] == "seat_conns" and m["count"] == n:
            return m
        assert m["type"] != "error", m


def test_each_connection_of_a_seat_is_told_how_many_the_seat_has_open(served):
    """Two connections on seat 0's token: the first is told 1 after its
    welcome, then 2 when the second opens; the second is told 2 after its
    welcome; a third makes it 3 on all three; as they close the rest are
    told 2, then 1.  Seat 1 is told its own 1 once, nothing of seat 0, and
    the spectator nothing at all."""
    t = create(served, "guilin-mahjong", bots=[2, 3])
    tid, tok = t["id"], t["seats"]["0"]
    watcher = SyncSeat(served, tid, t["spectator_token"])
    other = SyncSeat(served, tid, t["seats"]["1"])
    assert watcher.recv()["type"] == "welcome" and other.recv()["type"] == "welcome"
    until_count(other, 1)
    a = SyncSeat(served, tid, tok)
    assert a.recv()["type"] == "welcome"       # nothing before the welcome
    until_count(a, 1)
    b = SyncSeat(served, tid, tok)
    assert b.recv()["type"] == "welcome"
    until_count(b, 2)
    until_count(a, 2)
    c = SyncSeat(served, tid, tok)
    assert c.recv()["type"] == "welcome"
    for x in (a, b, c):
        until_count(x, 3)
    c.close()
    for x in (a, b):
        until_count(x, 2)
    b.close()
    until_count(a, 1)
    for x in (a, watcher, other):
        barrier(x)   # anything said of seat 0's connections has come by now
    assert counts(a) == [1, 2, 3, 2, 1]
    assert counts(b) == [2, 3, 2] and counts(c) == [3]
    assert counts(other) == [1], "seat 1 is told nothing of seat 0's connections"
    assert counts(watcher) == [], "a spectator is told no count"
    for x in (a, b, c, watcher, other):
        assert x.received[0]["type"] == "welcome", x.received[:3]
        # the message carries the count alone: no seat, no token
        assert all(set(m) == {"type", "count"} for m in x.received
                   if m["type"] == "seat_conns")
    # seat 1 opens a second one: both of its own are told 2
    again = SyncSeat(served, tid, t["seats"]["1"])
    assert again.recv()["type"] == "welcome"
    until_count(again, 2)
    until_count(other, 2)
    for x in (a, watcher, other, again):
        x.close()


def test_a_closed_table_tells_no_count_after_closed(served):
    """Closing the table: each of the seat's connections gets ``closed``
    last — the others closing after it tell no count."""
    t = create(served, "guilin-mahjong", bots=[1, 2, 3])
    a = SyncSeat(served, t["id"], t["seats"]["0"])
    b = SyncSeat(served, t["id"], t["seats"]["0"])
    until_count(a, 2)
    until_count(b, 2)
    served.close(t)
    for x in (a, b):
        x.until("closed")
        try:
            while True:
                x.recv(timeout=5)
        except Exception:  # noqa: BLE001 - the server closes the socket after closed
            pass
        assert x.received[-1]["type"] == "closed", x.received[-3:]
        x.close()


def said_to(c) -> list[dict]:
    """Every message framed for an in-process connection (its outbox)."""
    from qipai.host import protocol as P

    return [m for f in c.outbox if f is not None for m in P.messages(json.loads(f))]


def _reread_held(t):
    """Fail the table's first write so it re-reads its hand, the read held
    until the returned event is set."""
    from qipai.host.store import StoreError

    go = asyncio.Event()
    read = t.store.read

    async def held(*args, **kw):
        await go.wait()
        return await read(*args, **kw)

    t.store.read = held
    return go, StoreError


def test_a_connection_made_while_the_hand_is_reread_is_told_after_its_welcome(tmp_path):
    """A second connection of seat 0 opens while the table re-reads its hand
    after a failed write: the first connection is told 2 at once; the new
    one is told nothing until its welcome, which comes first once the hand
    is back, then its 2.  No other seat is told anything of it."""
    from qipai.host.outbox import Conn

    async def main() -> None:
        async with writes_by_hand(tmp_path) as (t, writes):
            t.server.log = lambda line: None
            go, StoreError = _reread_held(t)
            conns = {s: Conn(seat=s) for s in range(4)}
            spectator = Conn(seat=None)
            for c in (*conns.values(), spectator):
                t.attach(c)
            assert [[m["count"] for m in said_to(c) if m["type"] == "seat_conns"]
                    for c in conns.values()] == [[1]] * 4
            assert not [m for m in said_to(spectator) if m["type"] == "seat_conns"]
            seat = min(t.decisions)
            d = t.decisions[seat]
            t.play(seat, d.legal[0], conn=conns[seat], seq=d.seq)
            writes[0].done(StoreError("the disk is full"))   # the write fails: re-read
            assert t.rereading is not None
            for c in (*conns.values(), spectator):
                c.outbox.clear()
            late = Conn(seat=0)
            t.attach(late)
            t.flush()    # (the WebSocket handler's, after each frame)
            assert said_to(late) == [], "nothing before its welcome"
            assert [m for m in said_to(conns[0]) if m["type"] == "seat_conns"] == \
                [{"type": "seat_conns", "count": 2}]
            go.set()
            await t.settled()
            assert t.halted is None
            told = said_to(late)
            assert told[0]["type"] == "welcome", told
            assert [m for m in told if m["type"] == "seat_conns"] == \
                [{"type": "seat_conns", "count": 2}]
            for c in (*[conns[s] for s in (1, 2, 3)], spectator):
                assert not [m for m in said_to(c) if m["type"] == "seat_conns"]

    asyncio.run(main())


def test_a_connection_never_welcomed_is_told_no_count_when_the_table_halts(tmp_path):
    """Halted (the server lock lost) while a new connection waits for its
    welcome behind a re-read: it is told the halt, then its pong — not the
    count it was held, which would come with no welcome.  Once halted, a
    connection closing tells the seat's others nothing."""
    from qipai.host import protocol as P
    from qipai.host.outbox import Conn
    from qipai.host.store import LockLost

    async def main() -> None:
        async with writes_by_hand(tmp_path) as (t, writes):
            t.server.log = lambda line: None
            go, StoreError = _reread_held(t)
            a, b = Conn(seat=0), Conn(seat=0)
            for c in (a, b, *(Conn(seat=s) for s in (1, 2, 3))):
                t.attach(c)
            seat = min(t.decisions)
            d = t.decisions[seat]
            t.play(seat, d.legal[0], seq=d.seq)
            writes[0].done(StoreError("the disk is full"))
            assert t.rereading is not None
            late = Conn(seat=0)
            t.attach(late)
            late.send(P.Pong())          # answered meanwhile: held to follow its welcome
            t.lock_lost(LockLost("gone"))
            assert [m["type"] for m in said_to(late)] == ["error", "pong"]
            for c in (a, b, late):
                c.outbox.clear()
            t.detach(b)
            t.detach(late)
            assert said_to(a) == [], "a halted table tells no count"
            go.set()
            await asyncio.sleep(0)

    asyncio.run(main())


def test_the_protocol_schema_has_seat_conns():
    """``qipai schema --protocol``: ``SeatConns`` is a server message (and so
    may come in a batch), its one field the count."""
    from click.testing import CliRunner

    from qipai.cli import cli

    out = CliRunner().invoke(cli, ["schema", "--protocol"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    server = {d["$ref"].rsplit("/", 1)[1] for d in doc["properties"]["ServerMessage"]["anyOf"]}
    assert "SeatConns" in server
    props = doc["$defs"]["SeatConns"]["properties"]
    assert set(props) == {"type", "count"} and props["count"]["type"] == "integer"
