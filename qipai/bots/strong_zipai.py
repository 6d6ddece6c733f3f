"""The strong bot's zipai play (桂林字牌): the greedy strategy, with the
safest card where it would draw lots.

:class:`StrongZipai` values each discard as the greedy
:class:`~qipai.bots.zipai.ZipaiStrategy` does (cards missing from a win,
胡数).  Where several discards value alike — the greedy strategy draws lots
among them — it discards the one of least **danger**: per opponent, the
chance he is ready (:data:`P_READY`, by his melds and discards), times the
chance the card is one he wins on (:data:`P_WAIT`: a kind he discarded
himself is almost never one, a kind the viewer sees more copies of is less
likely), times a 放炮's cost (the discarder pays both shares).  Claims and
wins are the greedy strategy's.  The tables are measured on 150 greedy
self-play hands.

Tried and dropped, in duplicate matches against the greedy bot: danger
weighed against the estimate (fewer deal-ins, fewer wins: −0.07 子 a hand);
danger choosing among discards up to one 胡数 apart (−0.03 to 0); a hand
short of the 胡数 minimum losing twice the greedy's 0.3 per 胡数 missing
(+0.1 子 a hand on one set of deals, −0.08 on another).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from qipai.bots.base import seen_kinds
from qipai.bots.zipai import ZipaiStrategy
from qipai.core.model import Action, Discard
from qipai.core.views import SeatView

__all__ = ["P_READY", "P_WAIT", "StrongZipai"]

#: P(an opponent is ready) by his melds (row, 0..4, 4 = 4 or more, face-down
#: 扫 included) and his discards // 2 (column, 0..2, 2 = 4 or more).
P_READY: tuple[tuple[float, ...], ...] = (
    (0.02, 0.05, 0.10),
    (0.13, 0.29, 0.35),
    (0.26, 0.35, 0.45),
    (0.45, 0.53, 0.67),
    (0.60, 0.77, 0.85),
)

#: P(a card is a winning card of a ready opponent): by whether he discarded
#: that kind (``gen``) or not (``new``), and the copies the viewer sees (1..4).
P_WAIT: dict[str, float] = {
    "gen1": 0.0, "gen2": 0.0, "gen3": 0.008, "gen4": 0.017,
    "new1": 0.146, "new2": 0.113, "new3": 0.084, "new4": 0.041,
}


class StrongZipai:
    """Strong zipai play (see the module doc).

    Args:
        rng: ties.
        ruleset: the table's rules.
        budget: 0 plays as the greedy strategy; 1 or more weighs danger.
    """

    #: A 放炮's usual cost (子: the discarder pays both shares).
    DEALIN = 6.0
    def __init__(self, rng: random.Random, ruleset: Any = None, budget: int = 1) -> None:
        self.rng = rng
        self.greedy = ZipaiStrategy(rng, ruleset)
        self.budget = budget

    def act(self, view: SeatView, legal: Sequence[Action]) -> Action:
        """The decision for the viewer (see the module doc)."""
        if self.budget <= 0 or not any(type(a) is Discard for a in legal) \
                or any(type(a) is not Discard for a in legal):
            return self.greedy.act(view, legal)
        return self._turn(view, list(legal))

    def danger(self, view: SeatView, kinds: Sequence[int]) -> dict[int, float]:
        """Expected 放炮 cost (子) of discarding each of ``kinds``."""
        seen = seen_kinds(view, 20)
        out = dict.fromkeys(kinds, 0.0)
        for o in range(len(view.melds)):
            if o == view.seat:
                continue
            pr = P_READY[min(len(view.melds[o]), 4)][min(len(view.discards[o]) // 2, 2)]
            gone = view.discards[o]
            for k in kinds:
                key = ("gen" if k in gone else "new") + str(min(max(seen[k], 1), 4))
                out[k] += pr * P_WAIT[key] * self.DEALIN
        return out

    def _turn(self, view: SeatView, actions: list[Action]) -> Action:
        g = self.greedy
        c, seen, melds, threshold = g._context(view)
        kinds = sorted({a.card for a in actions})
        danger = self.danger(view, kinds)
        scored = []
        for k in kinds:
            c[k] -= 1
            v = g.value(c, melds, seen, threshold)
            c[k] += 1
            scored.append((v, k))
        top = max(v for v, _ in scored)
        tied = [k for v, k in scored if v >= top - 1e-9]
        if len(tied) > 1:
            low = min(danger[k] for k in tied)
            tied = [k for k in tied if danger[k] == low]
        k = tied[0] if len(tied) == 1 else self.rng.choice(tied)
        return next(a for a in actions if a.card == k)
