"""The win-shape decision both mahjong variants share (mahjong-common.md,
"Hand shapes"), with the variant's one special shape as a parameter.

A hand wins in shape if it is the standard shape (4 sets + pair, each meld
one set); or, with no melds, seven pairs (a quad counts as two) or the
variant's special 14-tile shape (桂林 烂牌, 广西 十三幺); or every tile,
melds included, is an honor (字一色 wins whatever its grouping — both
seeds).  The fast path reads one segment code per hand
(:func:`~qipai.families.mahjong.shapes.segment_code`); the plain path is
the reference it is tested against.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from qipai.core.model import Meld, WinClaim
from qipai.families.mahjong import shapes
from qipai.families.mahjong.hand_checks import valid_bytes
from qipai.families.mahjong.scoring_kit import all_honors, check_counts, concealed_counts
from qipai.families.mahjong.suit_tables import STANDARD_SUMS, STD_MASK

QIDUI_SHIFT = 12     # segment-code field: every segment all pairs (七对)
LANPAI_SHIFT = 15    # … every segment a 烂牌 pattern (桂林)
SHISANYAO_SHIFT = 21  # … every segment 十三幺 terminals (广西)
HONORS_SHIFT = 18    # … the suits empty: all honors (字一色)


def win_shape(counts: Sequence[int], melds: Sequence[Meld],
              special: Callable[[list[int]], bool], special_shift: int) -> bool:
    """Whether 34 ``counts`` (the concealed tiles **with** the winning tile,
    ``14 - 3 × len(melds)`` of them) and ``melds`` form a winning shape.

    Args:
        special: the variant's special shape on plain counts (烂牌, 十三幺).
        special_shift: the same shape's segment-code field.

    Raises:
        BadCards: a malformed meld, a wrong number of tiles, a fifth copy.
    """
    b = valid_bytes(counts, melds)
    if b is not None:
        return win_shape_bytes(b, melds, special_shift)
    check_counts(counts, melds)
    return win_shape_plain(list(counts), melds, special)


def counts_if_shaped(claim: WinClaim, special_shift: int) -> list[int] | None:
    """The claim's 34 concealed counts with the winning tile, checked; None
    when they have no winning shape (decided fast, before any reading).

    Raises:
        BadCards: as :func:`win_shape`.
    """
    counts = concealed_counts(claim)
    b = valid_bytes(counts, claim.melds)
    if b is None:
        check_counts(counts, claim.melds)
    elif not win_shape_bytes(b, claim.melds, special_shift):
        return None
    return counts


def win_shape_plain(counts: list[int], melds: Sequence[Meld],
                    special: Callable[[list[int]], bool]) -> bool:
    """:func:`win_shape` of checked input, shape by shape (the reference)."""
    if shapes.is_standard(counts):
        return True
    if not melds and (shapes.is_qidui(counts) or special(counts)):
        return True
    return all_honors(counts, melds)


def win_shape_bytes(b: bytes, melds: Sequence[Meld], special_shift: int) -> bool:
    """:func:`win_shape` of a hand already checked, as ``bytes`` of its 34
    counts (each 0–4, no fifth copy with the melds): one segment-code look-up."""
    v = shapes.segment_code(b)
    if v < 0:
        return False
    if v & STD_MASK in STANDARD_SUMS:
        return True
    if not melds:  # 14 tiles: 七对 / the special shape need it in every segment
        return v >> QIDUI_SHIFT & 7 == 4 or v >> special_shift & 7 == 4 \
            or v >> HONORS_SHIFT & 7 == 3
    return v >> HONORS_SHIFT & 7 == 3 and all(c >= 27 for m in melds for c in m.cards)
