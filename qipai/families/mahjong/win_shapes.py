"""The win-shape decision both mahjong variants share (docs/variants/mahjong-common.md,
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
from qipai.families.mahjong import shapes, suit_tables
from qipai.families.mahjong.hand_checks import valid_bytes
from qipai.families.mahjong.scoring_kit import all_honors, check_counts, concealed_counts
from qipai.families.mahjong.suit_tables import FIELD, NOT_COMPLETE, STANDARD_SUMS, STD_MASK

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


_PARITY = bytes([0, 1, 0, 1, 0]) + bytes(251)  # translate table: count → odd?


def segment_codes(b: bytes) -> tuple[int, int, int, int]:
    """The four segment codes of a checked hand (``bytes`` of 34 counts,
    each 0–4): suits 0–2 from ``SEGMENT``, honors from ``HONORS_SEGMENT``,
    ``NOT_COMPLETE`` (no flag) for a key the tables do not hold."""
    if not suit_tables.SEGMENT:
        suit_tables.build_segments()
    g = suit_tables.SEGMENT.get
    return (g(b[0:9], NOT_COMPLETE), g(b[9:18], NOT_COMPLETE), g(b[18:27], NOT_COMPLETE),
            suit_tables.HONORS_SEGMENT.get(b[27:34], NOT_COMPLETE))


def step_waits(counts: bytes, codes: tuple[int, int, int, int], add: int, remove: int,
               melds: Sequence[Meld], special_shift: int
               ) -> tuple[bytes, tuple[int, int, int, int], frozenset[int]] | None:
    """A hand one tile in (``add``, a draw) and one out (``remove``, a
    discard): its new counts, :func:`segment_codes` and
    :func:`shape_waits_bytes`, with only the segments of the two kinds
    looked up again.

    Args:
        counts: ``bytes`` of the 34 counts of the hand before.
        codes: its :func:`segment_codes`.
        add, remove: kinds (0–33).
        melds, special_shift: as :func:`shape_waits_bytes`.

    Returns:
        ``(counts, codes, waits)`` of the new hand, or None when ``add``
        would be a fifth copy or ``remove`` is not held.
    """
    if not suit_tables.SEGMENT:
        suit_tables.build_segments()
    b = bytearray(counts)
    b[add] += 1
    if b[add] > 4 or not b[remove]:
        return None
    b[remove] -= 1
    new = bytes(b)
    c = list(codes)
    sa, sr = add // 9, remove // 9  # 3: the honors
    c[sa] = _SEGMENT_TABLES[sa].get(new[sa * 9:sa * 9 + 9], NOT_COMPLETE)
    if sr != sa:
        c[sr] = _SEGMENT_TABLES[sr].get(new[sr * 9:sr * 9 + 9], NOT_COMPLETE)
    after = (c[0], c[1], c[2], c[3])
    return new, after, shape_waits_bytes(new, melds, special_shift, after)


def shape_waits_bytes(b: bytes, melds: Sequence[Meld], special_shift: int,
                      codes: tuple[int, int, int, int] | None = None) -> frozenset[int]:
    """The kinds ``t`` for which :func:`win_shape_bytes` holds on ``b`` plus
    one ``t`` — the shape waits of a hand, from the same tables.

    Args:
        b: ``bytes`` of the 34 counts (each 0–4) of a checked concealed hand
            of ``13 - 3 × len(melds)`` tiles, the winning tile not included.
        melds: the hand's melds.
        special_shift: the variant's special shape's segment-code field.
        codes: ``segment_codes(b)`` when the caller keeps them (see
            :func:`step_waits`); computed when None.

    Returns:
        A frozenset of kinds; a kind with four copies in ``b`` is never in it.
        It is exact: ``t in shape_waits_bytes(b, …)`` iff
        ``win_shape_bytes(b + t, …)`` (checked in ``tests/families/test_fast_paths.py``),
        so a flow may skip a win check whose tile is not in it.
    """
    if codes is None:
        codes = segment_codes(b)
    elif not suit_tables.SEGMENT:  # codes from elsewhere: the tables are still needed
        suit_tables.build_segments()
    v = codes[0] + codes[1] + codes[2] + codes[3]
    # Fields of the sum: segments not complete (× NOT_COMPLETE: complete
    # segments sum below it), segments with the special / 七对 / empty flag.
    incomplete = (v & STD_MASK) // NOT_COMPLETE
    honors_only = v >> HONORS_SHIFT & FIELD == 3
    odd = b"" if melds else b.translate(_PARITY)
    n_special = 0 if melds else v >> special_shift & FIELD
    if incomplete > 1 and not honors_only and n_special < 3 and odd.count(1) != 1:
        return _NO_WAITS  # the common case: far from any winning shape
    out: set[int] = set()
    # Standard: the tile completes one segment; the others are complete
    # already; exactly one pair in all.
    if incomplete <= 1:
        std = (codes[0] & STD_MASK, codes[1] & STD_MASK, codes[2] & STD_MASK, codes[3] & STD_MASK)
        pairs_all = sum(x // 100 for x in std if x < NOT_COMPLETE)
        for seg in range(4):
            if incomplete and std[seg] < NOT_COMPLETE:
                continue
            key = b[seg * 9:seg * 9 + 9] if seg < 3 else b[27:34]
            mask = (suit_tables.WAITS if seg < 3 else suit_tables.HONORS_WAITS).get(key, 0)
            if not mask:
                continue
            others = pairs_all - (std[seg] // 100 if std[seg] < NOT_COMPLETE else 0)
            if others + ((sum(key) + 1) % 3 == 2) != 1:
                continue
            base = seg * 9
            out.update(base + r for r in _RANKS_OF_MASK[mask] if key[r] < 4)
    candidates: set[int] = set()
    if honors_only:  # 字一色 (any shape): the tile must be an honor
        candidates.update(range(27, 34))
    if not melds:
        if odd.count(1) == 1:  # 七对: six pairs and one odd count
            candidates.add(odd.index(1))
        if n_special == 4:
            candidates.update(range(34))
        elif n_special == 3:  # the tile goes to the one segment without the flag
            seg = next(i for i in range(4) if not codes[i] >> special_shift & FIELD)
            candidates.update(range(seg * 9, seg * 9 + (9 if seg < 3 else 7)))
    for t in candidates:
        if t not in out and b[t] < 4:
            c = bytearray(b)
            c[t] += 1
            if win_shape_bytes(bytes(c), melds, special_shift):
                out.add(t)
    return frozenset(out)


_NO_WAITS: frozenset[int] = frozenset()
#: The code table of each segment (``b[27:36]`` of 34 counts is the honors' 7).
_SEGMENT_TABLES = (suit_tables.SEGMENT, suit_tables.SEGMENT, suit_tables.SEGMENT,
                   suit_tables.HONORS_SEGMENT)
_RANKS_OF_MASK = tuple(tuple(r for r in range(9) if m >> r & 1) for m in range(512))
