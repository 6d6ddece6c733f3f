"""Deals of 桂林字牌 that tests in several folders replay (imported as
``zipai_deals``: tests/helpers/ is on the path through tests/conftest.py)."""

from __future__ import annotations

from qipai.core.model import Deal
from qipai.families.zipai.cards import CARDS


def sanlong_wukan_deal() -> Deal:
    """guilin-zipai.md §3.3 step 1, D-ZP6: seat 2 is dealt five 坎 (x1 x3 x5
    x7 x9) and wins 三笼五坎 at the deal, before any draw — no winning card;
    seat 1 deals (21 cards), the stock's head is x3."""
    hands = ["d1 d1 d1 d3 d3 d3 d5 d5 d5 d7 d7 d7 d9 d9 d9 x2 x6 d2 d6 d10",
             "x2 x2 x4 x4 x6 x6 x8 x8 x10 x10 d2 d2 d4 d4 d6 d6 d8 d8 d10 d10 x1",
             "x1 x1 x1 x3 x3 x3 x5 x5 x5 x7 x7 x7 x9 x9 x9 x4 x8 d4 d8 x10"]
    wall = "x3 d2 x2 x4 x5 x6 x7 x8 x9 x10 d1 d3 d4 d5 d6 d7 d8 d9 d10"
    return Deal(dealer=1, hands=tuple(tuple(CARDS.parse(h)) for h in hands),
                wall=tuple(CARDS.parse(wall)))
