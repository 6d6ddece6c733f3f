"""The rules that make 推倒胡 itself: what wins, and what a win is worth.

Everything here is a plain function on tiles (kinds 0–33); the hooks in
``plugin.py`` only call them.  The shapes come from qipai's mahjong kit.
"""

from __future__ import annotations

from collections.abc import Sequence

from qipai.core.model import Meld, Term, WinClaim, why_total
from qipai.families.mahjong import shapes
from qipai.families.mahjong.scoring_kit import (
    check_context,
    check_counts,
    concealed_counts,
    one_suit,
    waits_for,
)
from qipai_tuidaohu.options import TuidaohuOptions

#: Pattern ids, as the case files and the settlement name them.
PINGHU, QIDUI, QINGYISE = "pinghu", "qidui", "qingyise"


# start-win-shape
def win_shape(counts: Sequence[int], melds: Sequence[Meld], options: TuidaohuOptions) -> str | None:
    """The shape a complete hand wins as: ``"qidui"`` (seven pairs, no
    melds), ``"pinghu"`` (four sets and a pair, melds counting as sets), or
    None.  A hand that is both is read as 七对, which pays more."""
    if options.qidui and not melds and shapes.is_qidui(counts):
        return QIDUI
    if shapes.is_standard(counts):
        return PINGHU
    return None
# end-win-shape


# start-patterns
def patterns(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
             options: TuidaohuOptions) -> tuple[str, ...] | None:
    """The pattern ids of a win (its shape, then 清一色 if one suit), or None
    when the hand does not win.

    Raises:
        BadCards: an impossible hand (wrong size, a fifth copy, a bad meld,
            a context that cannot happen).
    """
    check_context(claim, how, dealer, from_seat, n_players=4)
    counts = concealed_counts(claim)
    check_counts(counts, claim.melds)
    shape = win_shape(counts, claim.melds, options)
    if shape is None:
        return None
    if one_suit(counts, claim.melds):
        return (shape, QINGYISE)
    return (shape,)
# end-patterns


# start-value
def value_why(pattern_ids: Sequence[str], options: TuidaohuOptions) -> tuple[Term, ...]:
    """What each payer pays, as the payment's breakdown: the stake, × 2 for
    七对 and × 2 for 清一色."""
    why = [Term("stake", "stake", options.stake)]
    for pid in pattern_ids:
        if pid in (QIDUI, QINGYISE):
            why.append(Term("multiplier", pid, 2, "*"))
    return tuple(why)


def value(pattern_ids: Sequence[str], options: TuidaohuOptions) -> int:
    """What each payer pays: the total of :func:`value_why`."""
    return why_total(value_why(pattern_ids, options))
# end-value


def waits(hand: Sequence[int], melds: Sequence[Meld], options: TuidaohuOptions) -> list[int]:
    """The kinds that complete a 13-tile hand (less three per meld)."""
    return waits_for(hand, melds, lambda c, ms: win_shape(c, ms, options) is not None)
