"""推倒胡 ``tuidaohu`` — the variant plugin, registered in ``qipai.variants``.

The play itself (deal, draws, discards, 吃/碰/杠 claims, 抢杠, 荒庄) is qipai's
common mahjong flow, :class:`~qipai.families.mahjong.flow.MahjongFlow`, listed
in ``QIPAI_BASE_PLUGINS``.  This module answers what 推倒胡 decides: the
manifest, the win check, the waits, no bonus flip, and the settlement.
"""

from __future__ import annotations

# start-manifest
from collections.abc import Sequence

from qipai.core.errors import BadCards
from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Flip, HandEnd, Meld, Payment, Settlement, WinClaim, WinEval, why_total,
)
from qipai.core.ruleset import Manifest
from qipai.families.mahjong.flow import MahjongFlow, MahjongState
from qipai.families.mahjong.scoring_kit import check_hand_end
from qipai.families.mahjong.tiles import TILES
from qipai_tuidaohu import rules
from qipai_tuidaohu.options import TuidaohuOptions

MANIFEST = Manifest(name="tuidaohu", title="推倒胡", players=4, cards=TILES,
                    options_type=TuidaohuOptions, family="mahjong", version="1",
                    state_type=MahjongState)

# The common mahjong flow; 暗杠 lie fully face down (angang_hidden=4).
QIPAI_BASE_PLUGINS = [MahjongFlow(MANIFEST, angang_hidden=4)]
# end-manifest


# start-win-check
@hookimpl
def qipai_win_check(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                    options: TuidaohuOptions) -> WinEval:
    """Standard shapes and 七对 win, by discard, self-draw or robbing a kong."""
    found = rules.patterns(claim, how, dealer, from_seat, options)
    return WinEval(wins=found is not None, patterns=found or ())


@hookimpl
def qipai_waits(hand: Sequence[int], melds: Sequence[Meld],
                options: TuidaohuOptions) -> list[int]:
    return rules.waits(hand, melds, options)
# end-win-check


# start-bonus-flip
@hookimpl
def qipai_bonus_flip(holding: Sequence[int], tile: int | None, stock: Sequence[int],
                     options: TuidaohuOptions) -> Flip:
    """推倒胡 has no bonus flip."""
    return Flip(flipped=(), xing=0)
# end-bonus-flip


# start-settle
@hookimpl
def qipai_settle(end: HandEnd, options: TuidaohuOptions) -> Settlement:
    """A self-draw: each other seat pays the winner.  A discard (or a robbed
    kong): the discarder pays each winner.  The amount is the stake,
    doubled for 七对 and for 清一色."""
    check_hand_end(end, "推倒胡")
    payments, found = [], {}
    for w in end.winners:
        ids = rules.patterns(w, end.how, end.dealer, end.from_seat, options)
        if ids is None:
            raise BadCards(f"seat {w.seat}'s hand does not win")
        found[w.seat] = ids
        why = rules.value_why(ids, options)
        payers = [s for s in range(end.n_players) if s != w.seat] \
            if end.how == "zimo" else [end.from_seat]
        payments += [Payment(p, w.seat, why_total(why), end.how, why) for p in payers]
    return Settlement(payments=tuple(payments), patterns=found)
# end-settle
