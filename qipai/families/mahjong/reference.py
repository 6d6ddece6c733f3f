"""Plain brute-force twins of :mod:`qipai.families.mahjong.shapes` and
:mod:`qipai.families.mahjong.shanten`.

The test oracle (and the benchmark baseline) for the fast shape functions:
each one here is written to be obviously correct, not fast — copy the counts,
try every choice, recurse.  Same inputs and results as the fast functions
(count vectors of 34 ints; see the shapes module), but no input checking.

Rule source: docs/variants/mahjong-common.md, "Hand shapes".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations_with_replacement

Set = tuple[str, int]

N_KINDS = 34


def _run_kinds(k: int) -> bool:
    """Whether a run k, k+1, k+2 exists: suited, and all three in one suit."""
    return k < 27 and k % 9 <= 6


def _first_nonzero(c: Sequence[int]) -> int:
    for k in range(N_KINDS):
        if c[k] > 0:
            return k
    return N_KINDS


# --------------------------------------------------------------------------
# Standard shape


def _all_sets(c: list[int]) -> bool:
    """True iff the tiles of ``c`` split into triplets and runs."""
    k = _first_nonzero(c)
    if k == N_KINDS:
        return True
    if c[k] >= 3:
        c[k] -= 3
        ok = _all_sets(c)
        c[k] += 3
        if ok:
            return True
    if _run_kinds(k) and c[k + 1] > 0 and c[k + 2] > 0:
        c[k] -= 1
        c[k + 1] -= 1
        c[k + 2] -= 1
        ok = _all_sets(c)
        c[k] += 1
        c[k + 1] += 1
        c[k + 2] += 1
        if ok:
            return True
    return False


def ref_is_standard(counts: Sequence[int]) -> bool:
    """Try every pair, then every way to peel triplets and runs off the lowest tile."""
    if sum(counts) not in (2, 5, 8, 11, 14):
        return False
    for pair in range(N_KINDS):
        if counts[pair] >= 2:
            c = list(counts)
            c[pair] -= 2
            if _all_sets(c):
                return True
    return False


def _all_readings(c: list[int], sets: list[Set], out: set[tuple[Set, ...]]) -> None:
    k = _first_nonzero(c)
    if k == N_KINDS:
        out.add(tuple(sorted(sets)))
        return
    if c[k] >= 3:
        c[k] -= 3
        _all_readings(c, sets + [("kezi", k)], out)
        c[k] += 3
    if _run_kinds(k) and c[k + 1] > 0 and c[k + 2] > 0:
        c[k] -= 1
        c[k + 1] -= 1
        c[k + 2] -= 1
        _all_readings(c, sets + [("shunzi", k)], out)
        c[k] += 1
        c[k + 1] += 1
        c[k + 2] += 1


def ref_standard_decompositions(counts: Sequence[int]) -> list[tuple[int, tuple[Set, ...]]]:
    """Every (pair, sorted sets) reading, found by trying everything and de-duplicating."""
    if sum(counts) not in (2, 5, 8, 11, 14):
        return []
    found: set[tuple[int, tuple[Set, ...]]] = set()
    for pair in range(N_KINDS):
        if counts[pair] >= 2:
            c = list(counts)
            c[pair] -= 2
            readings: set[tuple[Set, ...]] = set()
            _all_readings(c, [], readings)
            for r in readings:
                found.add((pair, r))
    return sorted(found)


# --------------------------------------------------------------------------
# Seven pairs


def ref_is_qidui(counts: Sequence[int]) -> bool:
    """14 tiles making seven pairs (a kind held four times is two pairs)."""
    return sum(counts) == 14 and sum(n // 2 for n in counts) == 7


def ref_qidui_quads(counts: Sequence[int]) -> int:
    return sum(1 for n in counts if n == 4) if ref_is_qidui(counts) else 0


# --------------------------------------------------------------------------
# Waits


def ref_waits(
    counts: Sequence[int],
    is_win: Callable[[list[int]], bool] = ref_is_standard,
    held: Sequence[int] | None = None,
) -> list[int]:
    """Add each of the 34 kinds in turn and ask ``is_win``."""
    if held is None:
        held = counts
    out = []
    for t in range(N_KINDS):
        if counts[t] >= 4 or held[t] >= 4:
            continue
        c = list(counts)
        c[t] += 1
        if is_win(c):
            out.append(t)
    return out


# --------------------------------------------------------------------------
# Shanten


def ref_shanten_standard(counts: Sequence[int], n_melds: int = 0) -> int:
    """Exhaustive block counting: ``min 2s - 2m - min(t, s - m) - p``.

    Every reading of the tiles as sets (m), partial sets (t: a pair, or two
    tiles of one suit one or two ranks apart), at most one pair of eyes (p)
    and loose tiles is tried by deciding, for the lowest remaining tile, which
    block it belongs to (or that it is loose).  ``s = 4 - n_melds``.
    """
    s = 4 - n_melds
    best = [2 * s]

    def go(c: list[int], m: int, t: int, p: int) -> None:
        k = _first_nonzero(c)
        if k == N_KINDS:
            if m <= s:
                best[0] = min(best[0], 2 * s - 2 * m - min(t, s - m) - p)
            return
        suited = k < 27
        same_suit_1 = suited and k % 9 <= 7
        same_suit_2 = suited and k % 9 <= 6
        # the lowest tile is in a triplet
        if c[k] >= 3:
            c[k] -= 3
            go(c, m + 1, t, p)
            c[k] += 3
        # ... in a run
        if same_suit_2 and c[k + 1] > 0 and c[k + 2] > 0:
            c[k] -= 1
            c[k + 1] -= 1
            c[k + 2] -= 1
            go(c, m + 1, t, p)
            c[k] += 1
            c[k + 1] += 1
            c[k + 2] += 1
        # ... in a pair, as the eyes or as a partial set
        if c[k] >= 2:
            c[k] -= 2
            if p == 0:
                go(c, m, t, 1)
            go(c, m, t + 1, p)
            c[k] += 2
        # ... in a partial run k, k+1
        if same_suit_1 and c[k + 1] > 0:
            c[k] -= 1
            c[k + 1] -= 1
            go(c, m, t + 1, p)
            c[k] += 1
            c[k + 1] += 1
        # ... in a partial run k, k+2
        if same_suit_2 and c[k + 2] > 0:
            c[k] -= 1
            c[k + 2] -= 1
            go(c, m, t + 1, p)
            c[k] += 1
            c[k + 2] += 1
        # ... or loose
        c[k] -= 1
        go(c, m, t, p)
        c[k] += 1

    go(list(counts), 0, 0, 0)
    return best[0]


def ref_shanten_distance(counts: Sequence[int], n_melds: int = 0) -> int:
    """Shanten by its definition: tiles missing from the nearest complete hand, minus one.

    A complete concealed part is ``s = 4 - n_melds`` sets plus a pair; it
    shares ``Σ min(target, counts)`` tiles with the hand, and the hand needs
    ``3s + 2 - shared`` more.  Tried over all targets (without the four-copy
    limit, like :func:`ref_shanten_standard`); sets and pairs sharing no
    tile with the hand are all alike, so one stands for them all.  Cost grows
    as (sets near the hand)^s: use it for ``s <= 2`` or so.
    """
    s = 4 - n_melds
    hand = list(counts)
    all_sets: list[tuple[int, ...]] = [(k, k, k) for k in range(N_KINDS)]
    all_sets += [(k, k + 1, k + 2) for k in range(N_KINDS) if _run_kinds(k)]
    near_sets = [st for st in all_sets if any(hand[k] for k in st)] + [()]
    pairs = [(k, k) for k in range(N_KINDS) if hand[k]] + [()]
    most = 0
    for chosen in combinations_with_replacement(near_sets, s):
        for pair in pairs:
            target = [0] * N_KINDS
            for st in chosen:
                for k in st:
                    target[k] += 1
            for k in pair:
                target[k] += 1
            shared = sum(min(a, b) for a, b in zip(target, hand))
            most = max(most, shared)
    return 3 * s + 2 - most - 1


def ref_shanten_qidui(counts: Sequence[int]) -> int:
    """Seven pairs: 6 - pairs, a kind held four times being two pairs."""
    return 6 - min(7, sum(n // 2 for n in counts))
