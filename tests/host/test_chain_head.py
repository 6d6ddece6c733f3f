"""Issue 36, item 4: the table's chain head in memory is the database's — it
advances with each row built, goes back to the last committed link when a
failed write's hand is read back, and a close chains the unfinished hand's
end."""

from __future__ import annotations

import asyncio

import msgspec

from qipai.core.chain import stored_rows, walk
from qipai.host.store import StoreError
from qipai.host.store.chained import chained_tables


def _walked(url: str) -> list[tuple]:
    return [(t.id, *walk(t.id, t.spec, stored_rows(t.id, t.hands, t.actions)))
            for t in chained_tables(url)]


def test_the_head_follows_the_committed_rows_through_a_failed_write(tmp_path):
    from qipai.host import protocol as P
    from qipai.server.state import Server

    url = f"sqlite:///{tmp_path}/q.db"

    async def main() -> None:
        server = Server(url, seed=7, quiet=True)
        try:
            t, _ = await server.create(P.CreateTable(variant="guilin-mahjong", bots=[]))

            def play(n: int) -> None:
                for _ in range(n):
                    seat = min(t.decisions)
                    t.play(seat, t.decisions[seat].legal[0])

            play(4)
            await t.settled()
            committed = t.chain_head
            [(_, problem, head, checked, _)] = _walked(url)
            assert problem is None and head == committed and checked == 1 + 4
            real = server.store.submit
            writes: list = []
            server.store.submit = writes.append   # held: nothing committed
            play(3)
            assert t.chain_head != committed
            writes[0].done(StoreError("the database went away"))   # every write void
            while t.rereading is not None:
                await asyncio.sleep(0.01)
            assert t.halted is None and len(t.table.actions) == 4
            assert t.chain_head == committed      # read back with the hand
            server.store.submit = real
            play(5)
            await t.settled()
            [(_, problem, head, checked, _)] = _walked(url)
            assert problem is None and head == t.chain_head and checked == 1 + 9
            await t.close()
            [(tid, problem, head, checked, _)] = _walked(url)
            assert problem is None and checked == 1 + 9 + 1   # the unfinished hand's end
            assert head == t.chain_head
            rec = server.store.hands_of(tid)[0]
            assert rec["end_link"] == head and rec["net"] is None
            closed = [e for e in server.store.events_after(0, None, 100, everyone=True)
                      if e["kind"] == "table_closed"]
            assert [msgspec.json.decode(e["body"])["chain"] for e in closed] == [head]
        finally:
            server.store.close()

    asyncio.run(main())
