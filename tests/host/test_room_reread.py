"""A room's hand read back after a failed write (issue 35): the ready step
the failed write began is not kept."""

from __future__ import annotations

import asyncio

from test_stalled_database import SEED

from qipai.core.model import Hu, Zimo
from qipai.host.store import StoreError


def test_a_failed_hand_end_leaves_no_phantom_ready_step(tmp_path):
    """A room's hand ends (the next hand dealt, its ready step begun) in a
    write that fails: the hand is read back as the database holds it — the
    hand before, under way — and no ready step of the hand that never
    began is left (it held back every decision, bot and clock of the hand
    read back)."""
    from qipai.host import protocol as P
    from qipai.server.state import Server

    async def main() -> None:
        server = Server(f"sqlite:///{tmp_path}/q.db", seed=SEED, quiet=True)
        try:
            t, _ = await server.create(P.CreateTable(variant="guilin-mahjong", bots=[],
                                                     hands=2))
            writes: list = []
            server.store.submit = writes.append   # held: nothing committed
            while t.hand == 0:
                seat = min(t.decisions)
                legal = t.decisions[seat].legal
                wins = [a for a in legal if isinstance(a, (Hu, Zimo))]
                t.play(seat, (wins or legal)[0])
            assert t.ready_step is not None and t.ready_step["hand"] == 1
            writes[0].done(StoreError("the database went away"))   # every write void
            while t.rereading is not None:
                await asyncio.sleep(0.01)
            assert t.halted is None and t.hand == 0 and not t.table.actions
            assert t.ready_step is None, t.ready_step
            assert t.decisions   # hand 0's first decision, to be offered
        finally:
            server.store.close()

    asyncio.run(main())
