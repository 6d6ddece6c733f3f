"""Shanten (向听): how many tiles a hand is from ready — the one engine.

Rule source: docs/variants/mahjong-common.md, "Hand shapes".  The hands are
count vectors as in :mod:`qipai.families.mahjong.shapes` (34 counts of the
concealed tiles; melds on the table are not in them).

Public: :func:`shanten` (the standard shape and, without melds, seven
pairs), :func:`shanten_standard` and :func:`shanten_qidui`.

Block counting: read the concealed tiles as m sets, t partial sets (搭子:
a pair, two adjacent ranks, or two ranks one apart) and at most one pair
taken as the eyes (p = 0 or 1); the remaining tiles are loose.  With
s = 4 - n_melds sets still to make,
    shanten = 2s - 2m - min(t, s - m) - p,
minimised over all readings: each missing set costs two tiles, a partial
set one, the eyes one.  Like the usual definition, it ignores whether the
needed tiles are still available (a partial set waiting on a fifth copy
still counts).  Sets and partials never span two segments (a suit, or the
honors), so a hand's readings are the max-plus join of its four segments'
block tables (:func:`_block_table`, :func:`_join_plain`).

The incremental front.  For counts 0..4 (every real hand) the same block
tables, capped at t ≤ 4 − m (the formula only uses ``min(t, s − m)`` with
s ≤ 4, so the cap never changes a result), are interned as small ints:
joining two tables (:func:`join`) is one memo look-up once seen, a joined
table's shanten for each s one list look-up.  :func:`shanten_standard`
joins the four segment tables (:func:`segment_table`); a player that asks
the shanten of many hands one tile apart (the greedy bot,
:mod:`qipai.bots.mahjong`) keeps the joins of the segments it does not
touch (:func:`hand_joins`) and reads one segment's tables after a tile
taken off (:func:`segment_minus`) or added (:func:`segment_plus`) against
them in a row of shanten values (:func:`shanten_row`, :func:`fill_row`).
The memos are module-level and bounded; a reader may look them up inline
(:data:`JOIN_MEMO` with :data:`JOIN_KEY`, :data:`SEGMENT_PLUS`,
:data:`HAND_JOINS`, :data:`SHANTEN_ROWS`) but only these functions write
them.  Segments are numbered 0–3 (m, p, s, honors: :data:`SEGMENT_OF`,
:data:`RANK_IN_SEGMENT`, :data:`SEGMENT_RUNS`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from qipai.core.errors import BadCards
from qipai.families.mahjong.shapes import _COUNTS_0_TO_4, _as_bytes, _check_len

__all__ = [
    "shanten",
    "shanten_qidui",
    "shanten_standard",
    # the incremental front (see the module doc)
    "HAND_JOINS",
    "JOIN_KEY",
    "JOIN_MEMO",
    "RANK_IN_SEGMENT",
    "REST_PAIR",
    "SEGMENT_OF",
    "SEGMENT_PLUS",
    "SEGMENT_RUNS",
    "SHANTEN_ROWS",
    "counts_shanten",
    "fill_row",
    "hand_joins",
    "join",
    "segment_keys",
    "segment_minus",
    "segment_plus",
    "segment_table",
    "shanten_row",
]


# --------------------------------------------------------------------------
# Block tables (any counts)

_NO = -1  # table entry: no reading with these (p, m)
_MAX_M = 4


@lru_cache(maxsize=1 << 16)
def _block_table(rest: tuple[int, ...], runs: bool) -> tuple[int, ...]:
    """Best readings of one segment's tiles ``rest`` (lowest rank first).

    Returns a flat table ``tb[p * 5 + m]`` = the most partial sets over all
    readings with ``m`` sets and ``p`` eyes (``_NO`` if none).  ``runs``:
    whether consecutive ranks may form runs and partial runs (False for
    honors).  Memoised on the remaining ranks, so it is a dynamic programme
    over suffixes shared by all calls.
    """
    i = 0
    n_r = len(rest)
    while i < n_r and rest[i] == 0:
        i += 1
    if i == n_r:
        tb = [_NO] * 10
        tb[0] = 0
        return tuple(tb)
    rest = rest[i:]
    n = rest[0]
    best = [_NO] * 10

    def take(sub: tuple[int, ...], dm: int, dt: int, dp: int) -> None:
        tb = _block_table(sub, runs)
        for p in range(2 - dp):
            for m in range(_MAX_M + 1 - dm):
                t = tb[p * 5 + m]
                if t != _NO:
                    k = (p + dp) * 5 + m + dm
                    best[k] = max(best[k], t + dt)

    def minus(*ks: int, by: int = 1) -> tuple[int, ...]:
        out = list(rest)
        for k in ks:
            out[k] -= by
        return tuple(out)

    has1 = runs and len(rest) > 1 and rest[1] > 0
    has2 = runs and len(rest) > 2 and rest[2] > 0
    if n >= 3:
        take(minus(0, by=3), 1, 0, 0)  # triplet
    if has1 and has2:
        take(minus(0, 1, 2), 1, 0, 0)  # run
    if n >= 2:
        two = minus(0, by=2)
        take(two, 0, 0, 1)  # eyes
        take(two, 0, 1, 0)  # pair as a partial set
    if has1:
        take(minus(0, 1), 0, 1, 0)  # two adjacent ranks
    if has2:
        take(minus(0, 2), 0, 1, 0)  # two ranks one apart
    take(minus(0), 0, 0, 0)  # a loose tile
    return tuple(best)


def _join_plain(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The max-plus join of two block tables: the readings of both
    segments' tiles together (uncapped)."""
    out = [_NO] * 10
    for pa in range(2):
        for ma in range(_MAX_M + 1):
            ta = a[pa * 5 + ma]
            if ta == _NO:
                continue
            for pb in range(2 - pa):
                for mb in range(_MAX_M + 1 - ma):
                    tb = b[pb * 5 + mb]
                    if tb != _NO:
                        k = (pa + pb) * 5 + ma + mb
                        out[k] = max(out[k], ta + tb)
    return out


def _concealed_sets(counts: Sequence[int], n_melds: int) -> int:
    """Check the hand size for shanten and return s = sets still to make."""
    _check_len(counts)
    if not 0 <= n_melds <= 4:
        raise BadCards(f"n_melds must be 0..4, got {n_melds}")
    s = 4 - n_melds
    total = sum(counts)
    if total != 3 * s + 1 and total != 3 * s + 2:
        raise BadCards(
            f"shanten with {n_melds} melds needs {3 * s + 1} or {3 * s + 2} "
            f"concealed tiles, got {total}"
        )
    return s


def _shanten_of_table(tb: Sequence[int], s: int) -> int:
    """Standard shanten from a joined block table (``tb[p * 5 + m]`` = most
    partial sets with ``m`` sets and ``p`` eyes, -1 if none) with ``s`` sets
    to make: the formula above, minimised over the readings."""
    best = 2 * s
    for p in range(2):
        for m in range(s + 1):
            t = tb[p * 5 + m]
            if t >= 0:
                v = 2 * s - 2 * m - min(t, s - m) - p
                if v < best:
                    best = v
    return best


# --------------------------------------------------------------------------
# Interned tables (counts 0..4) and the incremental front
#
# A segment's readings (its block table, capped at t ≤ 4 − m) are interned
# as small ints, so that joining two segments' tables is one dict look-up
# once seen, and a joined table's shanten for each s is one list look-up.
# Per segment key (bytes of its counts) the tables after taking one tile off
# (:func:`segment_minus`) and after adding one (:func:`segment_plus`, only
# the tiles that could join a block: no other can lower the shanten) are
# kept too.  The caches are bounded (the join memo is emptied when it grows
# past ``_FAST_LIMIT``); the interned tables are few (each is ten numbers
# in −1..4 reached by real hands).

_TAB_ID: dict[tuple[int, ...], int] = {}
_TAB: list[tuple[int, ...]] = []
_TAB_SH: list[tuple[int, ...]] = []  # table id → shanten for s = 0..4
_SH_S: tuple[list[int], ...] = ([], [], [], [], [])  # [s][table id] → shanten
_SEG_ID: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})  # [runs][key] → table id
_SEG_MINUS: tuple[dict[bytes, Any], dict[bytes, Any]] = ({}, {})
SEGMENT_PLUS: tuple[dict[bytes, Any], dict[bytes, Any]] = ({}, {})
JOIN_MEMO: dict[int, int] = {}
_FAST_LIMIT = 1 << 18
JOIN_KEY = 1 << 24  # join memo key: a * JOIN_KEY + b


_INTERN_LOCK = threading.Lock()

# Shanten rows: ``SHANTEN_ROWS[s][a]`` (made on first use, :func:`shanten_row`)
# is a bytearray whose entry ``b`` is 1 + the shanten, with ``s`` sets to
# make, of the join of tables ``a`` and ``b``, or 0 while not yet computed
# (:func:`fill_row`).  The interned tables are few (about 140 reached by real
# hands), so a row is a few hundred bytes and a look-up one index; rows grow
# with the tables (:func:`_intern`, under the lock).
_ROWCAP = [256]
SHANTEN_ROWS: tuple[list[bytearray | None], ...] = ([], [], [], [], [])


def _intern(tb: Sequence[int]) -> int:
    """The id of table ``tb`` (new ids under a lock: bots play in threads
    too; a table is in ``_TAB``, ``_TAB_SH``, ``_SH_S`` and
    ``SHANTEN_ROWS``, and every row is long enough for it, before its id is
    handed out)."""
    key = tuple(tb)
    got = _TAB_ID.get(key)
    if got is None:
        with _INTERN_LOCK:
            got = _TAB_ID.get(key)
            if got is None:
                sh = tuple(_shanten_of_table(key, s) for s in range(5))
                _TAB.append(key)
                _TAB_SH.append(sh)
                for s, v in enumerate(sh):
                    _SH_S[s].append(v)
                    SHANTEN_ROWS[s].append(None)
                got = len(_TAB) - 1
                if got >= _ROWCAP[0]:
                    cap = _ROWCAP[0] * 2
                    for rows in SHANTEN_ROWS:
                        for r in rows:
                            if r is not None:
                                r.extend(bytes(cap - len(r)))
                    _ROWCAP[0] = cap
                _TAB_ID[key] = got
    return got


def shanten_row(s: int, a: int) -> bytearray:
    """The shanten row of table ``a`` for ``s`` sets (see ``SHANTEN_ROWS``),
    made if new."""
    with _INTERN_LOCK:
        r = SHANTEN_ROWS[s][a]
        if r is None:
            r = SHANTEN_ROWS[s][a] = bytearray(_ROWCAP[0])
    return r


def fill_row(r: bytearray, a: int, b: int, s: int) -> int:
    """Entry ``b`` of row ``r`` (table ``a``'s, ``s`` sets): 1 + the
    shanten of the join of ``a`` and ``b``, computed and stored."""
    v = r[b] = _SH_S[s][join(a, b)] + 1
    return v


def segment_table(key: bytes, runs: bool) -> int:
    """The interned (capped) block table of one segment's counts ``key``.

    Built from the segment's components (:func:`_components`), whose
    tables do not depend on where in the suit they lie, so a new key costs a
    few joins, not a block-table search."""
    cache = _SEG_ID[runs]
    got = cache.get(key)
    if got is None:
        got = _EMPTY_TAB
        for comp in _components(key, runs):
            got = join(got, _comp(comp, runs))
        if len(cache) < _FAST_LIMIT:
            cache[key] = got
    return got


def _components(key: bytes, runs: bool) -> list[bytes]:
    """The parts of a segment no block spans: for a suit, the stretches of
    held ranks split where two ranks in a row are empty (a run or a partial
    spans three ranks at most); for the honors, each kind held."""
    if not runs:
        return [bytes((x,)) for x in key if x]
    return [part.strip(b"\0") for part in key.split(b"\0\0") if part.strip(b"\0")]


_COMP_ID: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})


def _comp(comp: bytes, runs: bool) -> int:
    cache = _COMP_ID[runs]
    got = cache.get(comp)
    if got is None:
        tb = _block_table(tuple(comp), runs)
        got = _intern([t if t < 0 or t <= 4 - i % 5 else 4 - i % 5 for i, t in enumerate(tb)])
        if len(cache) < _FAST_LIMIT:
            cache[comp] = got
    return got


_EMPTY_TAB = _intern((0,) + (-1,) * 9)  # no tiles: the one reading p = m = t = 0


def _tjoin(a: int, b: int) -> int:
    """The interned join of tables ``a`` and ``b`` (max-plus over the readings)."""
    if a > b:
        a, b = b, a
    k = a * JOIN_KEY + b
    got = JOIN_MEMO.get(k)
    if got is None:
        x, y = _TAB[a], _TAB[b]
        out = [-1] * 10
        for pa in range(2):
            for ma in range(5):
                ta = x[pa * 5 + ma]
                if ta < 0:
                    continue
                for pb in range(2 - pa):
                    for mb in range(5 - ma):
                        tb = y[pb * 5 + mb]
                        if tb >= 0:
                            m = ma + mb
                            i = (pa + pb) * 5 + m
                            t = ta + tb
                            if t > 4 - m:
                                t = 4 - m
                            if t > out[i]:
                                out[i] = t
        got = _intern(out)
        if len(JOIN_MEMO) >= _FAST_LIMIT:
            JOIN_MEMO.clear()
        JOIN_MEMO[k] = got
    return got


def segment_minus(key: bytes, runs: bool) -> dict[int, tuple[int, bytes]]:
    """Per rank ``o`` held in segment ``key``: (table id, key) with one
    tile of ``o`` taken off."""
    cache = _SEG_MINUS[runs]
    got = cache.get(key)
    if got is None:
        got = {}
        for o, x in enumerate(key):
            if x:
                k2 = key[:o] + bytes((x - 1,)) + key[o + 1:]
                got[o] = (segment_table(k2, runs), k2)
        if len(cache) < _FAST_LIMIT:
            cache[key] = got
    return got


def segment_plus(key: bytes, runs: bool) -> tuple[tuple[int, int], ...]:
    """``(o, table id)`` for each rank ``o`` of segment ``key`` held fewer
    than 4 times that could join a block (held, or for suits a tile within
    two ranks held; any other cannot lower the shanten), with one tile of
    ``o`` added."""
    cache = SEGMENT_PLUS[runs]
    got = cache.get(key)
    if got is None:
        out = []
        size = len(key)
        for o, x in enumerate(key):
            if x >= 4:
                continue
            if not x and not (runs and any(key[j] for j in range(max(0, o - 2),
                                                                 min(size, o + 3)))):
                continue
            k2 = key[:o] + bytes((x + 1,)) + key[o + 1:]
            out.append((o, segment_table(k2, runs)))
        got = tuple(out)
        if len(cache) < _FAST_LIMIT:
            cache[key] = got
    return got


def join(a: int, b: int) -> int:
    """:func:`_tjoin`, the memo looked up inline first (the hot path)."""
    got = JOIN_MEMO.get(a * JOIN_KEY + b if a <= b else b * JOIN_KEY + a)
    return got if got is not None else _tjoin(a, b)


def segment_keys(c: Sequence[int]) -> list[bytes]:
    """The four segments' counts of ``c`` (m, p, s, honors) as bytes keys."""
    return [bytes(c[0:9]), bytes(c[9:18]), bytes(c[18:27]), bytes(c[27:34])]


#: segment → whether its kinds form runs (the suits do, the honors not)
SEGMENT_RUNS = (True, True, True, False)
_BASE = (0, 9, 18, 27)

SEGMENT_OF = (0,) * 9 + (1,) * 9 + (2,) * 9 + (3,) * 7  # kind → segment
#: kind → its rank in its segment
RANK_IN_SEGMENT = tuple(k - _BASE[g] for k, g in enumerate(SEGMENT_OF))
#: Pair joins of :func:`_pair_joins`, in this order of segment pairs.
_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
#: ``REST_PAIR[g][h]``: the index in :data:`_PAIRS` of the two segments that are
#: neither ``g`` nor ``h`` (``g != h``).
REST_PAIR = tuple(tuple(_PAIRS.index(tuple(x for x in range(4) if x not in (g, h)))
                    if g != h else -1 for h in range(4)) for g in range(4))


def _pair_joins(ids: Sequence[int]) -> tuple[int, ...]:
    """The joins of each two of the four segments' tables, in :data:`_PAIRS` order."""
    a, b, c, d = ids
    return join(a, b), join(a, c), join(a, d), join(b, c), join(b, d), join(c, d)


def _others_of(ids: Sequence[int], pj: Sequence[int]) -> tuple[int, int, int, int]:
    """For each segment, the join of the other three segments' tables,
    given the pair joins ``pj`` (:func:`_pair_joins`)."""
    a, b, c, d = ids
    return join(b, pj[5]), join(a, pj[5]), join(pj[0], d), join(pj[0], c)


#: ``(segment ids…, s)`` → (:func:`_pair_joins`, :func:`_others_of`, the
#: others' shanten rows for ``s``) of a hand (:func:`hand_joins`).
HAND_JOINS: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...], list[bytearray]]] = {}


def hand_joins(ids: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], list[bytearray]]:
    """For the four segments' table ids and ``s`` (``ids[4]``): the pair
    joins, each segment's others' join and those joins' shanten rows
    (rows keep their identity as they grow); memoised in ``HAND_JOINS``."""
    s = ids[4]
    pj = _pair_joins(ids[:4])
    others = _others_of(ids[:4], pj)
    srows = SHANTEN_ROWS[s]
    got = pj, others, [srows[o] or shanten_row(s, o) for o in others]
    if len(HAND_JOINS) >= _FAST_LIMIT:
        HAND_JOINS.clear()
    HAND_JOINS[ids] = got
    return got


def counts_shanten(c: Sequence[int], n: int) -> int:
    """:func:`shanten` ``(c, n)`` for counts 0..4 and a hand size that fits
    ``n``, unchecked (the caller's hands are real ones)."""
    k = segment_keys(c)
    full = _tjoin(_tjoin(segment_table(k[0], True), segment_table(k[1], True)),
                  _tjoin(segment_table(k[2], True), segment_table(k[3], False)))
    st = _TAB_SH[full][4 - n]
    if n == 0:
        q = 6 - min(sum(x >> 1 for x in c), 7)
        if q < st:
            return q
    return st

def _hand_table(b: bytes) -> int:
    """The interned table of a whole hand, ``b`` its 34 counts (0..4) as bytes."""
    return _tjoin(_tjoin(segment_table(b[0:9], True), segment_table(b[9:18], True)),
                  _tjoin(segment_table(b[18:27], True), segment_table(b[27:34], False)))


# --------------------------------------------------------------------------
# Shanten

def shanten_standard(counts: Sequence[int], n_melds: int = 0) -> int:
    """Standard-shape shanten (向听) of the concealed tiles.

    -1 = complete (4 sets + pair with the melds), 0 = ready (听牌) or one
    discard from ready, 1 = one useful tile short of that, …; at most 8.
    Partial sets waiting on a tile whose copies are all held still count
    (the usual convention;
    :func:`~qipai.families.mahjong.shapes.waits` gives the real waits).

    Args:
        counts: count vector of the concealed tiles: ``3 * (4 - n_melds) + 1``
            or ``+ 2`` of them.
        n_melds: sets already on the table (chi/peng/kong), 0..4.

    Raises:
        BadCards: wrong vector length, ``n_melds`` outside 0..4, or a hand
            size that does not fit ``n_melds``.

    Rule: docs/variants/mahjong-common.md, "Hand shapes" (the standard shape).
    """
    s = _concealed_sets(counts, n_melds)
    b = _as_bytes(counts)
    if b is not None and not b.strip(_COUNTS_0_TO_4):
        return _TAB_SH[_hand_table(b)][s]
    tb = _block_table(tuple(counts[0:9]), True)
    tb = _join_plain(tb, _block_table(tuple(counts[9:18]), True))
    tb = _join_plain(tb, _block_table(tuple(counts[18:27]), True))
    tb = _join_plain(tb, _block_table(tuple(counts[27:34]), False))
    return _shanten_of_table(tb, s)



def shanten_qidui(counts: Sequence[int]) -> int:
    """Seven-pairs shanten: ``6 - pairs`` with ``pairs = Σ count // 2``.

    A kind held four times is two pairs (as in :func:`is_qidui`), so no
    adjustment for fewer than seven distinct kinds is needed: any loose tile
    can still be paired.  -1 iff :func:`is_qidui` (for 14 tiles).  Only
    meaningful without melds.

    Raises:
        BadCards: wrong vector length, or a total other than 13 or 14.

    Rule: docs/variants/guilin-mahjong.md / docs/variants/guangxi-mahjong.md, 七对 family.
    """
    _check_len(counts)
    total = 0
    pairs = 0
    for n in counts:
        total += n
        pairs += n >> 1
    if total != 13 and total != 14:
        raise BadCards(f"seven-pairs shanten needs 13 or 14 tiles, got {total}")
    return 6 - min(pairs, 7)


def shanten(counts: Sequence[int], n_melds: int = 0) -> int:
    """Shanten over the standard shape and, without melds, seven pairs.

    ``min(shanten_standard(counts, n_melds), shanten_qidui(counts))`` when
    ``n_melds == 0``, else the standard shanten alone.

    Raises:
        BadCards: as :func:`shanten_standard`.
    """
    st = shanten_standard(counts, n_melds)
    if n_melds == 0:
        return min(st, shanten_qidui(counts))
    return st
