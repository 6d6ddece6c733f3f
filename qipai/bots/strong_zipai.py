"""The strong bot's zipai play (桂林字牌): the greedy strategy's estimate,
less what a discard may cost.

:class:`StrongZipai` values each discard as the greedy
:class:`~qipai.bots.zipai.ZipaiStrategy` does (cards missing from a win,
胡数), then subtracts its **danger** converted to the estimate's units:
per opponent, the chance he is ready (:data:`P_READY`, by his melds and
discards), times the chance the card is one he wins on (:data:`P_WAIT`: a
kind he discarded himself is almost never one, a kind the viewer sees more
copies of is less likely), times a 放炮's cost (the discarder pays both
shares).  The danger only separates discards the estimate rates nearly
alike; claims and wins are the greedy strategy's, with one change to the
estimate: a hand short of the 胡数 minimum loses twice as much per 胡数
missing (:attr:`StrongZipai.SHORT`).  The tables are measured
on 150 greedy self-play hands.
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

    #: The estimate's loss per 胡数 short of the minimum (the greedy
    #: strategy's is 0.3): a hand that could not win for want of 胡数 is
    #: worth less; 0.45 to 0.9 all beat 0.3 by about 0.1 子 a hand in
    #: duplicate matches against the greedy bot (600 deals), 0.6 kept.
    SHORT = 0.6
    #: A 放炮's usual cost (子: the discarder pays both shares).
    DEALIN = 6.0
    #: Discards whose estimate is within this of the best count as near
    #: alike (0.02 is one 胡数, 0.03 one live winning card) ...
    NEAR = 0.025
    #: ... and the safest of them replaces the best when safer by this (子).
    SAFER = 0.05

    def __init__(self, rng: random.Random, ruleset: Any = None, budget: int = 1) -> None:
        self.rng = rng
        self.greedy = ZipaiStrategy(rng, ruleset)
        self.budget = budget
        if budget > 0:
            self.greedy.SHORT = self.SHORT

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
        near = [k for v, k in scored if v >= top - self.NEAR]
        low = min(danger[k] for k in near)
        tied = [k for v, k in scored if v >= top - 1e-9]
        if low < min(danger[k] for k in tied) - self.SAFER:
            tied = [k for k in near if danger[k] == low]
        k = tied[0] if len(tied) == 1 else self.rng.choice(tied)
        return next(a for a in actions if a.card == k)
