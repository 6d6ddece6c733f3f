"""A fast "certainly valid" test of a winning hand, ahead of the full checks.

The variants check every hand they score (money is settled from it) with
:func:`qipai.families.mahjong.scoring_kit.check_counts`.  In play every hand
is valid, so :func:`valid_bytes` answers the common case cheaply: it returns
the counts as ``bytes`` when the hand is *certainly* valid, and None when it
cannot tell; the caller then runs the full check, which raises with its
message (or passes, and the caller takes its plain path).  It never accepts a
hand the full check would reject.
"""

from __future__ import annotations

from collections.abc import Sequence

from qipai.core.model import Meld
from qipai.families.mahjong.scoring_kit import check_meld

COUNTS_0_TO_4 = bytes(range(5))
"""``b.strip(COUNTS_0_TO_4)`` is empty iff every count of ``b`` is 0..4."""

_GOOD_MELDS: set[Meld] = set()
_MAX_GOOD_MELDS = 1 << 14


def check_meld_once(m: Meld) -> None:
    """:func:`~qipai.families.mahjong.scoring_kit.check_meld` (raises
    ``BadCards`` for a malformed meld), skipped for a meld equal to one that
    passed."""
    try:
        if m in _GOOD_MELDS:
            return
    except TypeError:  # unhashable fields: check it, do not keep it
        check_meld(m)
        return
    check_meld(m)
    if len(_GOOD_MELDS) < _MAX_GOOD_MELDS:
        _GOOD_MELDS.add(m)


def valid_bytes(counts: Sequence[int], melds: Sequence[Meld]) -> bytes | None:
    """``bytes(counts)`` if ``counts`` (34 counts of the concealed part with
    the winning tile) and ``melds`` certainly pass ``check_counts``, else None.

    Raises:
        BadCards: a malformed meld (from :func:`check_meld`).
    """
    if len(counts) != 34 or len(melds) > 4:
        return None
    try:
        b = bytes(counts)
    except (TypeError, ValueError):
        return None
    if len(b) != 34 or b.strip(COUNTS_0_TO_4) or sum(b) != 14 - 3 * len(melds):
        return None
    if melds:
        held = bytearray(b)
        for m in melds:
            check_meld_once(m)
        try:
            for m in melds:
                for c in m.cards:
                    held[c] += 1
        except (TypeError, IndexError, ValueError):
            return None
        if max(held) > 4:
            return None
    return b
