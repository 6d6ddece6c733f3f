"""Hand shapes on count vectors: win checks and waits.

Rule source: docs/variants/mahjong-common.md, "Hand shapes".

Every function takes a **count vector**: a sequence of 34 ints, one per kind
(the index of docs/variants/index.md, Notation: 0–8 = 1m–9m, 9–17 = 1p–9p, 18–26 = 1s–9s,
27–33 = E S W N C F P), each 0–4.  Build one with
``qipai.core.cards.counts(kinds, 34)``.  The vector holds only the
*concealed* tiles: melds already on the table are not in it (each meld is one
set, so a hand with ``n`` melds has ``3 * (4 - n) + 1`` or ``+ 2`` concealed
tiles).

Shapes:

* standard (平胡 shape): sets + exactly one pair.  A set is a run
  (顺子, ``("shunzi", first_kind)`` = kinds ``k, k+1, k+2`` of one suit) or a
  triplet (刻子, ``("kezi", kind)``).  Honors never form runs; runs never
  cross suits.
* seven pairs (七对): 14 concealed tiles, every count even; a kind held four
  times counts as two pairs (豪华七对 family, docs/variants/guilin-mahjong.md and
  docs/variants/guangxi-mahjong.md).

These functions are the hot path of every mahjong variant.  They do not
validate the copy limit (a fifth copy is rejected where hands are built, see
``qipai.core.cards.check_copies``); they raise :class:`BadCards` only for a
vector that is not 34 long or a hand size the function cannot interpret, as
each docstring says.

A deliberately plain brute-force twin of each function lives in
:mod:`qipai.families.mahjong.reference` (the test oracle).

Speed: for counts 0–4 the standard shape and its waits come from the
per-segment tables of :mod:`~qipai.families.mahjong.suit_tables` (one
look-up per suit on ``bytes`` of its counts) and seven pairs from one
integer test; anything else takes the plain algorithms kept below.
``tests/families/test_speed_agreement.py`` checks both against the reference.

Shanten lives in :mod:`qipai.families.mahjong.shanten`; ``shanten``,
``shanten_standard`` and ``shanten_qidui`` are still reached here, with a
:class:`DeprecationWarning`.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from qipai.core.errors import BadCards
from qipai.families.mahjong import suit_tables as _tables

__all__ = [
    "Set",
    "is_qidui",
    "is_standard",
    "qidui_quads",
    "standard_decompositions",
    "waits",
]

Set = tuple[str, int]
"""``("shunzi", k)``: the run k, k+1, k+2; ``("kezi", k)``: three of k."""

N_KINDS = 34
HONOR_BASE = 27
_SUIT_BASES = (0, 9, 18)


def _check_len(counts: Sequence[int]) -> None:
    if len(counts) != N_KINDS:
        raise BadCards(f"a count vector has 34 entries, got {len(counts)}")


def _as_bytes(counts: Sequence[int]) -> bytes | None:
    """``bytes(counts)`` for the table fast paths, or None when the counts
    are not 34 ints 0..255 (negative, too large, or a buffer of wider ints
    such as numpy's): those take the plain path."""
    try:
        b = bytes(counts)
    except (TypeError, ValueError):
        return None
    return b if len(b) == N_KINDS else None


# --------------------------------------------------------------------------
# Standard shape: per-segment checks (no allocation)
#
# A segment is one suit (9 ranks) or the honors (7 kinds).  The tiles split
# into sets + one pair iff exactly one segment holds 3j+2 tiles and splits
# into sets + a pair, and every other segment holds 3j tiles and splits into
# sets alone: sets and pairs never span two segments.


def _suit_sets(c: Sequence[int], base: int, pair: int) -> bool:
    """True iff the 9 ranks ``c[base:base+9]``, less two tiles of kind
    ``pair`` (-1: none), split into runs and triplets.

    Greedy from the lowest rank: the tiles left at a rank after serving the
    runs begun one and two ranks lower must start ``left % 3`` new runs (three
    equal runs are the same tiles as three triplets, so fewer than three runs
    per rank suffice) and the rest are triplets.
    """
    r1 = r2 = 0  # runs begun at the previous rank / two ranks back
    for k in range(base, base + 9):
        left = c[k] - r1 - r2
        if k == pair:
            left -= 2
        if left < 0:
            return False
        r2 = r1
        r1 = left % 3
    return r1 == 0 and r2 == 0  # no run may begin at rank 8 or 9


def _suit_sets_pair(c: Sequence[int], base: int) -> bool:
    """True iff the suit ``c[base:base+9]`` splits into sets + one pair.

    Only pair ranks ``p`` with ``2p ≡ Σ rank·count (mod 3)`` can work (a set
    adds 0 mod 3 to that sum: 3r or 3r+3), which skips two thirds of the
    candidates.
    """
    w = 0
    for r in range(9):
        w += r * c[base + r]
    for p in range((2 * w) % 3, 9, 3):
        if c[base + p] >= 2 and _suit_sets(c, base, base + p):
            return True
    return False


def _honors_ok(c: Sequence[int], with_pair: bool) -> bool:
    """True iff the honors are triplets (+ exactly one pair if ``with_pair``)."""
    pairs = 0
    for k in range(HONOR_BASE, N_KINDS):
        n = c[k]
        if n == 2:
            pairs += 1
        elif n != 0 and n != 3:
            return False
    return pairs == (1 if with_pair else 0)


def _segment_ok(c: Sequence[int], seg: int, with_pair: bool) -> bool:
    if seg == 3:
        return _honors_ok(c, with_pair)
    base = _SUIT_BASES[seg]
    if with_pair:
        return _suit_sets_pair(c, base)
    return _suit_sets(c, base, -1)


def _segment_totals(c: Sequence[int]) -> tuple[int, int, int, int]:
    return sum(c[0:9]), sum(c[9:18]), sum(c[18:27]), sum(c[27:34])


def is_standard(counts: Sequence[int]) -> bool:
    """True iff the concealed tiles split into sets (runs/triplets) + exactly one pair.

    Rule: docs/variants/mahjong-common.md, "Hand shapes" — the standard shape
    is 4 sets + 1 pair, melds counting as sets; ``counts`` is the concealed
    part, so its total must be ``3k + 2`` with ``k`` in 0..4 (2, 5, 8, 11 or
    14 tiles).  Any other total gives False.

    Args:
        counts: count vector (34 ints, 0–4).

    Raises:
        BadCards: ``counts`` does not have 34 entries.
    """
    _check_len(counts)
    # Fast path: four table look-ups (suit_tables); a miss is final only when
    # every count is 0..4, the range the tables cover.
    b = _as_bytes(counts)
    if b is not None:
        if not _COMPLETE:
            _tables.build()
        v = (_COMPLETE.get(b[0:9], -999) + _COMPLETE.get(b[9:18], -999)
             + _COMPLETE.get(b[18:27], -999) + _HONORS_COMPLETE.get(b[27:34], -999))
        if v >= 0:
            return v in _STANDARD_SUMS
        if not b.strip(_COUNTS_0_TO_4):
            return False
    return _is_standard_plain(counts)


_COMPLETE = _tables.COMPLETE
_HONORS_COMPLETE = _tables.HONORS_COMPLETE
_STANDARD_SUMS = _tables.STANDARD_SUMS
_COUNTS_0_TO_4 = bytes(range(5))


def _is_standard_plain(counts: Sequence[int]) -> bool:
    """:func:`is_standard` without tables, for any counts (segment greedy)."""
    totals = _segment_totals(counts)
    total = totals[0] + totals[1] + totals[2] + totals[3]
    if total % 3 != 2 or total > 14:
        return False
    pair_seg = -1
    for seg in range(4):
        r = totals[seg] % 3
        if r == 1:
            return False
        if r == 2:
            if pair_seg >= 0:
                return False
            pair_seg = seg
    for seg in range(4):
        if totals[seg] and not _segment_ok(counts, seg, seg == pair_seg):
            return False
    return True


def segment_code(b: bytes) -> int:
    """The summed :mod:`~qipai.families.mahjong.suit_tables` segment codes of a hand.

    Args:
        b: ``bytes`` of a count vector whose counts are all 0..4 (the caller
            has checked the hand).

    Returns:
        -1 when a suit is none of the shapes the codes know (so the hand is
        neither standard nor 七对, 烂牌, 十三幺 or 字一色); else the sum, whose
        fields a variant reads: ``code & STD_MASK in STANDARD_SUMS`` is
        :func:`is_standard`; ``code >> 12 & 7 == 4`` with 14 tiles is
        :func:`is_qidui`; ``code >> 15 & 7 == 4`` 烂牌's tile pattern;
        ``code >> 18 & 7 == 3`` no suited tile; ``code >> 21 & 7 == 4`` with
        14 tiles 十三幺.
    """
    if not _SEGMENT:
        _tables.build_segments()
    g = _SEGMENT.get
    v = g(b[0:9])
    if v is None:
        return -1
    w = g(b[9:18])
    if w is None:
        return -1
    x = g(b[18:27])
    if x is None:
        return -1
    return v + w + x + _HONORS_SEGMENT.get(b[27:34], _tables.NOT_COMPLETE)


_SEGMENT = _tables.SEGMENT
_HONORS_SEGMENT = _tables.HONORS_SEGMENT


def standard_decompositions(counts: Sequence[int]) -> list[tuple[int, tuple[Set, ...]]]:
    """Every distinct reading of the concealed tiles as one pair + sets.

    Rule: docs/variants/mahjong-common.md, "Hand shapes" (a hand read in
    several ways is scored by its best reading, D-M4 — this lists them).

    Returns:
        ``[(pair_kind, sets), ...]`` with ``sets`` a sorted tuple of
        :data:`Set`; the list is sorted and holds no two equal readings (equal
        as multisets).  ``[]`` when :func:`is_standard` is False, including
        for totals other than 2, 5, 8, 11, 14.

    Raises:
        BadCards: ``counts`` does not have 34 entries.
    """
    if not is_standard(counts):
        return []
    c = list(counts)
    out: list[tuple[int, tuple[Set, ...]]] = []
    sets: list[Set] = []

    def sets_from(i: int, pair: int) -> None:
        # Sets holding the lowest remaining kind i all *start* at i: some
        # number of triplets t (0 or 1 with at most 4 copies) and then exactly
        # c[i] - 3t runs.  Choosing t fixes the multiset at i, so each reading
        # is produced once.
        while i < N_KINDS and c[i] == 0:
            i += 1
        if i == N_KINDS:
            out.append((pair, tuple(sorted(sets))))
            return
        n = c[i]
        can_run = i < HONOR_BASE and i % 9 <= 6
        for trips in range(n // 3 + 1):
            runs = n - 3 * trips
            if runs and not (can_run and c[i + 1] >= runs and c[i + 2] >= runs):
                continue
            c[i] = 0
            sets.extend([("kezi", i)] * trips)
            if runs:
                c[i + 1] -= runs
                c[i + 2] -= runs
                sets.extend([("shunzi", i)] * runs)
            sets_from(i + 1, pair)
            del sets[len(sets) - trips - runs :]
            c[i] = n
            if runs:
                c[i + 1] += runs
                c[i + 2] += runs

    for pair in range(N_KINDS):
        if c[pair] >= 2:
            c[pair] -= 2
            sets_from(0, pair)
            c[pair] += 2
    out.sort()
    return out


# --------------------------------------------------------------------------
# Seven pairs


def is_qidui(counts: Sequence[int]) -> bool:
    """True iff the hand is seven pairs: 14 tiles, every count 0, 2 or 4.

    A kind held four times counts as two pairs (豪华七对 family).  Rule:
    docs/variants/guilin-mahjong.md / docs/variants/guangxi-mahjong.md, 七对 patterns (shape listed in
    docs/variants/mahjong-common.md, "Hand shapes").  Melds make it impossible, so the
    caller checks there are none.

    Raises:
        BadCards: ``counts`` does not have 34 entries.
    """
    _check_len(counts)
    b = _as_bytes(counts)
    if b is not None:  # every count 0..255: test all low bits at once
        return not int.from_bytes(b, "little") & _LOW_BITS and sum(b) == 14
    total = 0
    for n in counts:
        if n & 1:
            return False
        total += n
    return total == 14


_LOW_BITS = int.from_bytes(b"\x01" * N_KINDS, "little")


def qidui_quads(counts: Sequence[int]) -> int:
    """Number of kinds held four times in a seven-pairs hand (豪华 count).

    0 when :func:`is_qidui` is False.

    Raises:
        BadCards: ``counts`` does not have 34 entries.
    """
    if not is_qidui(counts):
        return 0
    return sum(1 for n in counts if n == 4)


# --------------------------------------------------------------------------
# Waits


def waits(
    counts: Sequence[int],
    is_win: Callable[[list[int]], bool] = is_standard,
    held: Sequence[int] | None = None,
) -> list[int]:
    """The kinds that would complete a hand of ``3k + 1`` concealed tiles.

    Args:
        counts: count vector of the concealed hand (total 1, 4, 7, 10 or 13).
        is_win: the win test applied to ``counts`` plus one tile (a fresh
            list it may read but must not keep); default :func:`is_standard`.
            Any shape function of this module or a variant's own works.
        held: counts of the tiles this player can see as used up — hand plus
            melds (default: ``counts``).  A kind with 4 copies in ``held``
            cannot be drawn and is never a wait (nor is one with 4 copies
            in ``counts``), so a wait never makes a fifth copy.

    Returns:
        Sorted kinds ``t`` such that ``is_win(counts + one t)`` is True.

    Raises:
        BadCards: ``counts`` or ``held`` does not have 34 entries, or the
            total of ``counts`` is not ``3k + 1``.

    Rule: docs/variants/mahjong-common.md, "Hand shapes".
    """
    _check_len(counts)
    if held is None:
        held = counts
    else:
        _check_len(held)
    totals = _segment_totals(counts)
    total = totals[0] + totals[1] + totals[2] + totals[3]
    if total % 3 != 1:
        raise BadCards(f"waits need a hand of 3k+1 tiles, got {total}")
    c = list(counts)
    if is_win is is_standard:
        try:
            b = bytes(c)
        except (TypeError, ValueError):
            b = None
        if b is not None and not b.strip(_COUNTS_0_TO_4):
            return _standard_waits_table(b, held, total)
        return _standard_waits(c, held, totals)
    out = []
    for t in range(N_KINDS):
        if c[t] >= 4 or held[t] >= 4:
            continue
        c[t] += 1
        if is_win(c):
            out.append(t)
        c[t] -= 1
    return out


_RANKS_OF_MASK = tuple(tuple(r for r in range(9) if m >> r & 1) for m in range(512))


def _standard_waits_table(b: bytes, held: Sequence[int], total: int) -> list[int]:
    """:func:`waits` for :func:`is_standard` from the tables (counts 0..4).

    The winning tile goes into one segment, which must then be complete
    (its ``WAITS`` mask); every other segment must already be complete, and
    the hand must end with exactly one pair.
    """
    if total > 13:
        return []
    if not _COMPLETE:
        _tables.build()
    keys = (b[0:9], b[9:18], b[18:27], b[27:34])
    vals = (_COMPLETE.get(keys[0]), _COMPLETE.get(keys[1]), _COMPLETE.get(keys[2]),
            _HONORS_COMPLETE.get(keys[3]))
    missing = vals.count(None)
    if missing > 1:
        return []
    out: list[int] = []
    for seg in range(4):
        if missing and vals[seg] is not None:
            continue
        key = keys[seg]
        mask = (_WAITS if seg < 3 else _HONORS_WAITS).get(key, 0)
        if not mask:
            continue
        pairs = 1 if (sum(key) + 1) % 3 == 2 else 0
        for o in range(4):
            if o != seg:
                pairs += vals[o] // 100  # type: ignore[operator]
        if pairs != 1:
            continue
        base = seg * 9
        for r in _RANKS_OF_MASK[mask]:
            if held[base + r] < 4:
                out.append(base + r)
    return out


_WAITS = _tables.WAITS
_HONORS_WAITS = _tables.HONORS_WAITS


def _standard_waits(c: list[int], held: Sequence[int], totals: tuple[int, ...]) -> list[int]:
    """:func:`waits` for :func:`is_standard`, segment by segment.

    The winning tile goes into one segment; every other segment must already
    be complete as it stands, and the wait must touch a held tile (same kind,
    or within two ranks in its suit), since it ends in a pair, a triplet or a
    run with tiles of the hand.
    """
    total = totals[0] + totals[1] + totals[2] + totals[3]
    if total > 13:
        return []
    mods = [n % 3 for n in totals]
    out: list[int] = []
    for seg in range(4):
        # After adding a tile to seg, exactly one segment must be ≡ 2 (mod 3)
        # and the others ≡ 0.
        if mods[seg] == 0:
            continue
        after = [m if s != seg else (m + 1) % 3 for s, m in enumerate(mods)]
        if after.count(2) != 1 or after.count(1) != 0:
            continue
        if not all(_segment_ok(c, s, after[s] == 2) for s in range(4) if s != seg and totals[s]):
            continue
        with_pair = after[seg] == 2
        if seg == 3:
            lo, hi = HONOR_BASE, N_KINDS
        else:
            lo = _SUIT_BASES[seg]
            hi = lo + 9
        for t in range(lo, hi):
            if c[t] >= 4 or held[t] >= 4:
                continue
            if seg == 3:
                near = c[t] > 0
            else:
                near = False
                for k in range(max(lo, t - 2), min(hi, t + 3)):
                    if c[k]:
                        near = True
                        break
            if not near:
                continue
            c[t] += 1
            ok = _segment_ok(c, seg, with_pair)
            c[t] -= 1
            if ok:
                out.append(t)
    return out


_MOVED_TO_SHANTEN = frozenset({"shanten", "shanten_qidui", "shanten_standard"})


def __getattr__(name: str) -> Any:
    """The shanten functions, moved to :mod:`qipai.families.mahjong.shanten`
    (imported on first use, so this module does not import that one)."""
    if name in _MOVED_TO_SHANTEN:
        warnings.warn(f"qipai.families.mahjong.shapes.{name} moved to "
                      f"qipai.families.mahjong.shanten.{name}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("qipai.families.mahjong.shanten"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
