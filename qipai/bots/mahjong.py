"""Greedy mahjong: stay as close to ready as possible.

:class:`MahjongStrategy` reads a seat's view and picks the action that keeps
the hand's 向听 (:func:`qipai.families.mahjong.shapes.shanten`) lowest, ties
going to the most live useful tiles (有效牌).  Its search kernel below keeps
each segment's block table interned and the joins of the tables memoised,
so the shanten after each discard and the useful tiles after each tie cost a
few look-ups.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from typing import Any

from qipai.bots.base import seen_kinds
from qipai.core.model import (
    Action, Angang, Chi, Discard, Hu, Jiagang, Minggang, Pass, Peng, Zimo,
)
from qipai.core.table import SeatView
from qipai.families.mahjong import shapes

__all__ = ["MahjongStrategy"]


def _isolation(c: Sequence[int], k: int) -> int:
    """How gladly to let a lone tile go: 2 an isolated honor, 1 an isolated
    terminal, 0 otherwise (a discard tie-break)."""
    if c[k] != 1:
        return 0
    if k >= 27:
        return 2
    rank = k % 9
    if rank not in (0, 8):
        return 0
    base = k - rank
    lone = all(c[j] == 0 for j in range(max(base, k - 2), min(base + 9, k + 3)) if j != k)
    return 1 if lone else 0


def _shanten_of_table(tb: Sequence[int], s: int) -> int:
    """Standard shanten from a joined block table (``tb[p * 5 + m]`` = most
    partial sets with ``m`` sets and ``p`` eyes, -1 if none) with ``s`` sets
    to make — the formula of :func:`~qipai.families.mahjong.shapes.shanten_standard`."""
    best = 2 * s
    for p in range(2):
        for m in range(s + 1):
            t = tb[p * 5 + m]
            if t >= 0:
                v = 2 * s - 2 * m - min(t, s - m) - p
                if v < best:
                    best = v
    return best


# Fast shanten for the bot.  A segment's readings (its block table, capped
# as in :func:`~qipai.families.mahjong.shapes._entries`: t ≤ 4 − m, which
# never changes the formula's result) are interned as small ints, so that
# joining two segments' tables is one dict look-up once seen, and a joined
# table's shanten for each s is one list look-up.  Per segment key (bytes
# of its counts) the tables after taking one tile off (:func:`_seg_minus`)
# and after adding one (:func:`_seg_plus`, only the tiles that could join a
# block: a tile no block can take cannot lower the shanten) are kept too.  The caches are bounded (the
# join memo is emptied when it grows past ``_FAST_LIMIT``); the interned
# tables are few (each is ten numbers in −1..4 reached by real hands).

_TAB_ID: dict[tuple[int, ...], int] = {}
_TAB: list[tuple[int, ...]] = []
_TAB_SH: list[tuple[int, ...]] = []  # table id → shanten for s = 0..4
_SH_S: tuple[list[int], ...] = ([], [], [], [], [])  # [s][table id] → shanten
_SEG_ID: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})  # [runs][key] → table id
_SEG_MINUS: tuple[dict[bytes, Any], dict[bytes, Any]] = ({}, {})
_SEG_PLUS: tuple[dict[bytes, Any], dict[bytes, Any]] = ({}, {})
_JOIN: dict[int, int] = {}
_FAST_LIMIT = 1 << 18
_JK = 1 << 24  # join memo key: a * _JK + b


_INTERN_LOCK = threading.Lock()

# Shanten rows: ``_SROWS[s][a]`` (made on first use, :func:`_row`) is a
# bytearray whose entry ``b`` is 1 + the shanten, with ``s`` sets to make,
# of the join of tables ``a`` and ``b``, or 0 while not yet computed
# (:func:`_fill`).  The interned tables are few (about 140 reached by real
# hands), so a row is a few hundred bytes and a look-up one index; rows grow
# with the tables (:func:`_intern`, under the lock).
_ROWCAP = [256]
_SROWS: tuple[list[bytearray | None], ...] = ([], [], [], [], [])


def _intern(tb: Sequence[int]) -> int:
    """The id of table ``tb`` (new ids under a lock: bots play in threads
    too; a table is in ``_TAB``, ``_TAB_SH``, ``_SH_S`` and ``_SROWS``, and
    every row is long enough for it, before its id is handed out)."""
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
                    _SROWS[s].append(None)
                got = len(_TAB) - 1
                if got >= _ROWCAP[0]:
                    cap = _ROWCAP[0] * 2
                    for rows in _SROWS:
                        for r in rows:
                            if r is not None:
                                r.extend(bytes(cap - len(r)))
                    _ROWCAP[0] = cap
                _TAB_ID[key] = got
    return got


def _row(s: int, a: int) -> bytearray:
    """The shanten row of table ``a`` for ``s`` sets (see ``_SROWS``), made if new."""
    with _INTERN_LOCK:
        r = _SROWS[s][a]
        if r is None:
            r = _SROWS[s][a] = bytearray(_ROWCAP[0])
    return r


def _fill(r: bytearray, a: int, b: int, s: int) -> int:
    """Entry ``b`` of row ``r`` (table ``a``'s, ``s`` sets): 1 + the
    shanten of the join of ``a`` and ``b``, computed and stored."""
    v = r[b] = _SH_S[s][_j(a, b)] + 1
    return v


def _seg(key: bytes, runs: bool) -> int:
    """The interned (capped) block table of one segment's counts ``key``.

    Built from the segment's components (:func:`_components`), whose
    tables do not depend on where in the suit they lie, so a new key costs a
    few joins, not a block-table search."""
    cache = _SEG_ID[runs]
    got = cache.get(key)
    if got is None:
        got = _EMPTY_TAB
        for comp in _components(key, runs):
            got = _j(got, _comp(comp, runs))
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
        tb = shapes._block_table(tuple(comp), runs)
        got = _intern([t if t < 0 or t <= 4 - i % 5 else 4 - i % 5 for i, t in enumerate(tb)])
        if len(cache) < _FAST_LIMIT:
            cache[comp] = got
    return got


_EMPTY_TAB = _intern((0,) + (-1,) * 9)  # no tiles: the one reading p = m = t = 0


def _tjoin(a: int, b: int) -> int:
    """The interned join of tables ``a`` and ``b`` (max-plus over the readings)."""
    if a > b:
        a, b = b, a
    k = a * _JK + b
    got = _JOIN.get(k)
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
        if len(_JOIN) >= _FAST_LIMIT:
            _JOIN.clear()
        _JOIN[k] = got
    return got


def _seg_minus(key: bytes, runs: bool) -> dict[int, tuple[int, bytes]]:
    """Per rank ``o`` held in segment ``key``: (table id, key) with one
    tile of ``o`` taken off."""
    cache = _SEG_MINUS[runs]
    got = cache.get(key)
    if got is None:
        got = {}
        for o, x in enumerate(key):
            if x:
                k2 = key[:o] + bytes((x - 1,)) + key[o + 1:]
                got[o] = (_seg(k2, runs), k2)
        if len(cache) < _FAST_LIMIT:
            cache[key] = got
    return got


def _seg_plus(key: bytes, runs: bool) -> tuple[tuple[int, int], ...]:
    """``(o, table id)`` for each rank ``o`` of segment ``key`` held fewer
    than 4 times that could join a block (held, or for suits a tile within
    two ranks held; any other cannot lower the shanten), with one tile of
    ``o`` added."""
    cache = _SEG_PLUS[runs]
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
            out.append((o, _seg(k2, runs)))
        got = tuple(out)
        if len(cache) < _FAST_LIMIT:
            cache[key] = got
    return got


def _j(a: int, b: int) -> int:
    """:func:`_tjoin`, the memo looked up inline first (the hot path)."""
    got = _JOIN.get(a * _JK + b if a <= b else b * _JK + a)
    return got if got is not None else _tjoin(a, b)


def _keys(c: Sequence[int]) -> list[bytes]:
    return [bytes(c[0:9]), bytes(c[9:18]), bytes(c[18:27]), bytes(c[27:34])]


_RUNS = (True, True, True, False)
_BASE = (0, 9, 18, 27)


_SEG_OF = (0,) * 9 + (1,) * 9 + (2,) * 9 + (3,) * 7  # kind → segment
_OFF = tuple(k - _BASE[g] for k, g in enumerate(_SEG_OF))  # kind → rank in its segment
_HALF = (0, 0, 1, 1, 2)  # count → pairs in it
#: Pair joins of :func:`_pair_joins`, in this order of segment pairs.
_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
#: ``_REST[g][h]``: the index in :data:`_PAIRS` of the two segments that are
#: neither ``g`` nor ``h`` (``g != h``).
_REST = tuple(tuple(_PAIRS.index(tuple(x for x in range(4) if x not in (g, h)))
                    if g != h else -1 for h in range(4)) for g in range(4))


def _pair_joins(ids: Sequence[int]) -> tuple[int, ...]:
    """The joins of each two of the four segments' tables, in :data:`_PAIRS` order."""
    a, b, c, d = ids
    return _j(a, b), _j(a, c), _j(a, d), _j(b, c), _j(b, d), _j(c, d)


def _others_of(ids: Sequence[int], pj: Sequence[int]) -> tuple[int, int, int, int]:
    """For each segment, the join of the other three segments' tables,
    given the pair joins ``pj`` (:func:`_pair_joins`)."""
    a, b, c, d = ids
    return _j(b, pj[5]), _j(a, pj[5]), _j(pj[0], d), _j(pj[0], c)


#: ``(segment ids…, s)`` → (:func:`_pair_joins`, :func:`_others_of`, the
#: others' shanten rows for ``s``) of a hand (:func:`_hand_joins`).
_HAND_JOINS: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...], list[bytearray]]] = {}


def _hand_joins(ids: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], list[bytearray]]:
    """For the four segments' table ids and ``s`` (``ids[4]``): the pair
    joins, each segment's others' join and those joins' shanten rows
    (rows keep their identity as they grow); memoised in ``_HAND_JOINS``."""
    s = ids[4]
    pj = _pair_joins(ids[:4])
    others = _others_of(ids[:4], pj)
    srows = _SROWS[s]
    got = pj, others, [srows[o] or _row(s, o) for o in others]
    if len(_HAND_JOINS) >= _FAST_LIMIT:
        _HAND_JOINS.clear()
    _HAND_JOINS[ids] = got
    return got


def _fast_shanten(c: Sequence[int], n: int) -> int:
    """:func:`~qipai.families.mahjong.shapes.shanten` ``(c, n)`` (counts
    0..4, a hand size that fits ``n``) from the interned tables."""
    k = _keys(c)
    full = _tjoin(_tjoin(_seg(k[0], True), _seg(k[1], True)),
                  _tjoin(_seg(k[2], True), _seg(k[3], False)))
    st = _TAB_SH[full][4 - n]
    if n == 0:
        q = 6 - min(sum(x >> 1 for x in c), 7)
        if q < st:
            return q
    return st


class MahjongStrategy:
    """Greedy mahjong play on 向听 (shanten), generic over mahjong variants.

    * always 胡/自摸;
    * discard the tile leaving the lowest shanten; ties go to the discard
      keeping the most live useful tiles (有效牌, counted against the tiles
      this seat can see), then to an isolated honor, then an isolated
      terminal, then the RNG;
    * 暗杠/蓄杠 when the hand after the kong is no further from ready than
      after the best discard (a 蓄杠 with the fourth copy of one's own 碰 is
      a free exchange);
    * on a discard, 杠 > 碰 > 吃 when the hand after the claim (and its best
      discard) is no further from ready than now; else pass.
    """

    def __init__(self, rng: random.Random, ruleset: Any = None) -> None:
        self.rng = rng
        self.n_kinds = ruleset.cards.n_kinds if ruleset is not None else 34

    def act(self, view: SeatView, legal: Sequence[Action]) -> Action:
        """The decision for the viewer (see the class doc)."""
        actions = legal if type(legal) is list else list(legal)
        turn = False
        for a in actions:
            t = type(a)
            if t is Hu or t is Zimo:
                return a  # the first win offered
            if not turn and isinstance(a, Discard):
                turn = True
        if turn:
            return self._turn(view, actions)
        return self._claim(view, actions)

    # -- turn: kong or discard -------------------------------------------------
    def _turn(self, view: SeatView, actions: list[Action]) -> Action:
        c = [0] * self.n_kinds
        for k in view.hand:
            c[k] += 1
        n = len(view.melds[view.seat])
        s = 4 - n
        keys = (bytes(c[0:9]), bytes(c[9:18]), bytes(c[18:27]), bytes(c[27:34]))
        ids = (_seg(keys[0], True), _seg(keys[1], True), _seg(keys[2], True),
               _seg(keys[3], False), s)
        got = _HAND_JOINS.get(ids)
        if got is None:
            got = _hand_joins(ids)
        pj, others, orows = got
        mins = (_seg_minus(keys[0], True), _seg_minus(keys[1], True),
                _seg_minus(keys[2], True), _seg_minus(keys[3], False))
        srows = _SROWS[s]
        pairs = sum(map(_HALF.__getitem__, c)) if n == 0 else 0
        discards = []
        kongs = []  # the other actions, in order (the kongs are among them)
        after: dict[int, int] = {}
        for a in actions:  # each kind once: the shanten after discarding it
            if not isinstance(a, Discard):
                kongs.append(a)
                continue
            discards.append(a)
            k = a.card
            if k in after:
                continue
            g = _SEG_OF[k]
            tid = mins[g][_OFF[k]][0]
            r = orows[g]
            sh = (r[tid] or _fill(r, others[g], tid, s)) - 1
            if n == 0:
                q = 6 - min(pairs - (1 - c[k] % 2), 7)
                if q < sh:
                    sh = q
            after[k] = sh
        best = min(after.values())
        for a in kongs:
            if isinstance(a, Angang):
                c[a.card] -= 4
                ok = _fast_shanten(c, n + 1) <= best
                c[a.card] += 4
                if ok:
                    return a
            elif isinstance(a, Jiagang) and after.get(a.card, best + 1) <= best:
                return a
        tied = [a for a in discards if after[a.card] == best]
        if len(tied) == 1:
            return tied[0]
        # Ties: the live 有效牌 after each tied discard — the tiles whose
        # addition lowers the shanten, counted against the tiles seen.
        # Discarding k (in segment g) changes segment g only: a tile added
        # to another segment h meets the join of g's table after the
        # discard with ``pj[_REST[g][h]]`` (the two segments that are
        # neither g nor h), one added to g meets ``others[g]``.  A tile
        # improves when its row entry (1 + shanten) is at most ``best``, or
        # (七对 one step closer, ``qd``) when it pairs an odd count.  The
        # live count per (joined others, segment) is kept for the decision.
        seen = seen_kinds(view, len(c))
        lv = [4 - x if x < 4 else 0 for x in seen]
        lvs = (lv[0:9], lv[9:18], lv[18:27], lv[27:34])
        pluses = [None, None, None, None]
        splus = _SEG_PLUS
        jget = _JOIN.get
        cross: dict[int, int] = {}
        cross_of: dict[int, int] = {}
        useful_of: dict[int, int] = {}
        scored = []
        for a in tied:
            k = a.card
            useful = useful_of.get(k)
            if useful is None:
                g = _SEG_OF[k]
                tid, key = mins[g][_OFF[k]]
                qd = n == 0 and 6 - min((pairs if c[k] & 1 else pairs - 1) + 1, 7) < best
                # tiles added to g itself
                o = others[g]
                r = orows[g]
                lvg = lvs[g]
                useful = 0
                plus = splus[g < 3].get(key)
                if plus is None:
                    plus = _seg_plus(key, g < 3)
                for x, p in plus:
                    v = r[p]
                    if (v <= best and (v or _fill(r, o, p, s) <= best)) or (qd and key[x] & 1):
                        useful += lvg[x]
                gk = (tid * 4 + g) * 2 + qd
                cs = cross_of.get(gk)
                if cs is None:
                    cs = 0
                    for h in range(4):
                        if h == g:
                            continue
                        q = pj[_REST[g][h]]
                        x = jget(q * _JK + tid if q <= tid else tid * _JK + q)
                        o = x if x is not None else _tjoin(q, tid)
                        ck = (o * 4 + h) * 2 + qd
                        u = cross.get(ck)
                        if u is None:
                            plus = pluses[h]
                            if plus is None:
                                plus = pluses[h] = _seg_plus(keys[h], _RUNS[h])
                            r = srows[o] or _row(s, o)
                            lvh = lvs[h]
                            kh = keys[h]
                            u = 0
                            for x, p in plus:
                                v = r[p]
                                if (v <= best and (v or _fill(r, o, p, s) <= best)) or (qd and kh[x] & 1):
                                    u += lvh[x]
                            cross[ck] = u
                        cs += u
                    cross_of[gk] = cs
                useful += cs
                useful_of[k] = useful
            scored.append((useful, a))
        # the best (useful, isolation): isolation only among the most useful
        most = max(u for u, _ in scored)
        tops = [(_isolation(c, a.card), a) for u, a in scored if u == most]
        top = max(i for i, _ in tops)
        return self.rng.choice([a for i, a in tops if i == top])

    # -- claims ----------------------------------------------------------------
    def _claim(self, view: SeatView, actions: list[Action]) -> Action:
        passes = [a for a in actions if isinstance(a, Pass)]
        if not any(isinstance(a, (Minggang, Peng, Chi)) for a in actions):
            return passes[0] if passes else actions[0]
        card = view.window[0] if view.window is not None else None
        c = self._counts(view.hand)
        n = len(view.melds[view.seat])
        now = _fast_shanten(c, n)
        best: tuple[int, int, Action] | None = None  # (shanten, preference, action)
        for a in actions:
            if isinstance(a, Minggang):
                c[card] -= 3
                sh, pref = _fast_shanten(c, n + 1), 0
                c[card] += 3
            elif isinstance(a, Peng):
                c[card] -= 2
                sh, pref = self._best_discard(c, n + 1), 1
                c[card] += 2
            elif isinstance(a, Chi):
                used = list(a.cards)
                used.remove(card)
                for k in used:
                    c[k] -= 1
                sh, pref = self._best_discard(c, n + 1), 2
                for k in used:
                    c[k] += 1
            else:
                continue
            if sh <= now and (best is None or (sh, pref) < best[:2]):
                best = (sh, pref, a)
        if best is not None:
            return best[2]
        return passes[0] if passes else actions[0]

    @staticmethod
    def _best_discard(c: list[int], n: int) -> int:
        """The least shanten ``(c − k, n)`` over the kinds ``k`` held (99 if none)."""
        keys = _keys(c)
        s = 4 - n
        ids = (_seg(keys[0], True), _seg(keys[1], True), _seg(keys[2], True),
               _seg(keys[3], False), s)
        got = _HAND_JOINS.get(ids)
        if got is None:
            got = _hand_joins(ids)
        _, others, orows = got
        out = 100  # 1 + the least shanten (a row entry)
        for g in range(4):
            og, r = others[g], orows[g]
            for tid, _ in _seg_minus(keys[g], _RUNS[g]).values():
                v = r[tid] or _fill(r, og, tid, s)
                if v < out:
                    out = v
        out -= 1
        if n == 0 and out < 99:
            pairs = sum(x >> 1 for x in c)
            q = 6 - min(pairs if any(x & 1 for x in c) else pairs - 1, 7)
            if q < out:
                out = q
        return out

    def _counts(self, hand: Sequence[int]) -> list[int]:
        c = [0] * self.n_kinds
        for k in hand:
            c[k] += 1
        return c

