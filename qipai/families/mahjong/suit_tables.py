"""Lookup tables of complete segments, for the fast shape checks.

A *segment* is one suit (9 ranks) or the honors (7 kinds); sets and pairs
never span two segments (see :mod:`qipai.families.mahjong.shapes`).  A
segment's key is ``bytes`` of its counts (``bytes(counts)[0:9]`` …), so a
check costs one ``bytes()`` of the hand and four dict look-ups.

Tables (built on first use, about 40 ms and 3 MB; never at import):

Thread safety: each build runs under :data:`_LOCK` into fresh local dicts,
and only then publishes them into the module's dicts, one ``dict.update``
each (a single C call under the GIL: a reader sees a table empty or
complete, never part of it).  The table a caller tests before using the
others is published last (:data:`COMPLETE` after the other three,
:data:`SEGMENT` after :data:`HONORS_SEGMENT` and after :func:`build`), so a
non-empty sentinel means every table it guards is complete.  The dicts keep
their identity: other modules hold them by reference.

* :data:`COMPLETE` / :data:`HONORS_COMPLETE`: key → ``tiles + 100 × pairs``
  for every segment that splits into sets and at most one pair (0 for the
  empty segment).  Summing the four values gives ``total + 100 × pairs``, so a
  hand is standard iff the sum is one of :data:`STANDARD_SUMS`.
* :data:`WAITS` / :data:`HONORS_WAITS`: key → bitmask of the kinds (bit
  ``r`` = rank ``r`` of the segment) whose addition makes the segment
  complete.

Only counts 0–4 appear in the tables: a miss means "not complete" for a
segment of counts 0–4; callers fall back to the plain algorithm for anything
else.
"""

from __future__ import annotations

import threading
from itertools import pairwise, product

STANDARD_SUMS = frozenset({102, 105, 108, 111, 114})
"""``total + 100 × pairs`` of a standard hand: one pair, 2–14 tiles."""

COMPLETE: dict[bytes, int] = {}
HONORS_COMPLETE: dict[bytes, int] = {}
WAITS: dict[bytes, int] = {}
HONORS_WAITS: dict[bytes, int] = {}
_LOCK = threading.RLock()
"""Held while a table is built (re-entrant: :func:`build_segments` calls :func:`build`)."""


def _fill(complete: dict[bytes, int], waits: dict[bytes, int], n: int,
          sets: list[tuple[int, ...]]) -> None:
    """Every segment of ``n`` kinds made of up to four of ``sets`` and at
    most one pair, each count at most 4, into ``complete`` (key → tiles +
    100 × pairs), and the waits of the segments one tile short of one.

    A segment is an int here, byte ``r`` (from the top) the count of rank
    ``r``, so its key is ``v.to_bytes(n, "big")``; adding a set adds an int,
    and "a count above 4" is one mask test (counts stay below 128, so no
    byte carries into the next)."""
    unit = [1 << (8 * (n - 1 - r)) for r in range(n)]
    over = sum(123 << (8 * r) for r in range(n))  # a count c > 4 iff c + 123 ≥ 128
    high = sum(0x80 << (8 * r) for r in range(n))
    set_values = sorted({sum(unit[k] for k in st) for st in sets})
    pair_values = [2 * u for u in unit]
    found: dict[int, int] = {}
    level = {0}
    for n_sets in range(5):
        for v in level:
            found[v] = 3 * n_sets
            for pv in pair_values:
                w = v + pv
                if not (w + over) & high:
                    found[w] = 3 * n_sets + 102
        if n_sets < 4:
            level = {w for v in level for sv in set_values
                     if not ((w := v + sv) + over) & high}
    shorts: dict[int, int] = {}
    for v, value in found.items():
        complete[v.to_bytes(n, "big")] = value
        for r, x in enumerate(v.to_bytes(n, "big")):
            if x:
                short = v - unit[r]
                shorts[short] = shorts.get(short, 0) | (1 << r)
    for short, mask in shorts.items():
        waits[short.to_bytes(n, "big")] = mask


def build() -> None:
    """Fill the tables (idempotent, thread-safe: see the module docstring)."""
    if COMPLETE:
        return
    with _LOCK:
        if COMPLETE:  # another thread built them while this one waited
            return
        suit_sets = [(r, r + 1, r + 2) for r in range(7)] + [(r, r, r) for r in range(9)]
        honor_sets = [(r, r, r) for r in range(7)]
        complete: dict[bytes, int] = {}
        waits: dict[bytes, int] = {}
        honors_complete: dict[bytes, int] = {}
        honors_waits: dict[bytes, int] = {}
        _fill(complete, waits, 9, suit_sets)
        _fill(honors_complete, honors_waits, 7, honor_sets)
        HONORS_WAITS.update(honors_waits)
        HONORS_COMPLETE.update(honors_complete)
        WAITS.update(waits)
        COMPLETE.update(complete)  # last: the sentinel readers test


# --------------------------------------------------------------------------
# Segment codes: every shape a variant's win check asks about, in one look-up
#
# ``SEGMENT[key]`` (suits) / ``HONORS_SEGMENT[key]`` (honors) is the sum of
#   COMPLETE's value, or NOT_COMPLETE (bits 0–11: summed over the four
#   segments it stays below 4096);
#   EVEN  if every count is 0, 2 or 4 (七对 needs it of every segment);
#   LAN   if every count is 0 or 1 and, in a suit, the ranks held differ by 3
#         or more, for the honors at least 5 held (烂牌 needs it of every segment);
#   EMPTY for the empty suit (字一色 needs it of the three suits);
#   YAO   if only the terminals (suits) are held, each once or twice, or every
#         honor once or twice (十三幺 needs it of every segment).
# A suit missing from SEGMENT is none of these; an honor key missing from
# HONORS_SEGMENT counts NOT_COMPLETE.  Each flag field holds a count 0..4.

NOT_COMPLETE = 1000
EVEN = 1 << 12
LAN = 1 << 15
EMPTY = 1 << 18
YAO = 1 << 21
FIELD = 7  # mask of one count field after shifting
STD_MASK = (1 << 12) - 1
SEGMENT: dict[bytes, int] = {}
HONORS_SEGMENT: dict[bytes, int] = {}


def _flag_keys(n: int, honors: bool) -> dict[bytes, int]:
    flags: dict[bytes, int] = {}

    def add(c: list[int], bit: int) -> None:
        k = bytes(c)
        flags[k] = flags.get(k, 0) | bit

    for c in product((0, 2, 4), repeat=n):
        if sum(c) <= 14:
            add(list(c), EVEN)
    for mask in range(1 << n):
        ranks = [r for r in range(n) if mask >> r & 1]
        c = [1 if mask >> r & 1 else 0 for r in range(n)]
        if honors:
            if len(ranks) >= 5:
                add(c, LAN)
        elif all(b - a >= 3 for a, b in pairwise(ranks)):
            add(c, LAN)
    if honors:
        for mask in range(1 << n):
            add([2 if mask >> r & 1 else 1 for r in range(n)], YAO)
    else:
        for a in (1, 2):
            for b in (1, 2):
                add([a] + [0] * (n - 2) + [b], YAO)
        add([0] * n, EMPTY)
    return flags


def build_segments() -> None:
    """Fill :data:`SEGMENT` and :data:`HONORS_SEGMENT` (idempotent,
    thread-safe: see the module docstring; :func:`build` first)."""
    if SEGMENT:
        return
    with _LOCK:
        if SEGMENT:
            return
        build()
        built = []
        for complete, honors, n in ((COMPLETE, False, 9), (HONORS_COMPLETE, True, 7)):
            flags = _flag_keys(n, honors)
            built.append({key: complete.get(key, NOT_COMPLETE) + flags.get(key, 0)
                          for key in set(complete) | set(flags)})
        HONORS_SEGMENT.update(built[1])
        SEGMENT.update(built[0])  # last: the sentinel readers test
