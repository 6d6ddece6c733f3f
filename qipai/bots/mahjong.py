"""Greedy mahjong: stay as close to ready as possible.

:class:`MahjongStrategy` reads a seat's view and picks the action that keeps
the hand's 向听 (:func:`qipai.families.mahjong.shanten.shanten`) lowest, ties
going to the most live useful tiles (有效牌).  It asks the shanten's
incremental front (:mod:`qipai.families.mahjong.shanten`): the segments a
discard or a draw does not touch are joined once per hand, so the shanten
after each discard and the useful tiles after each tie cost a few look-ups.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from qipai.bots.base import seen_kinds
from qipai.core.model import (
    Action, Angang, Chi, Discard, Hu, Jiagang, Minggang, Pass, Peng, Zimo,
)
from qipai.core.views import SeatView
from qipai.families.mahjong.shanten import (
    HAND_JOINS, JOIN_KEY, JOIN_MEMO, RANK_IN_SEGMENT, REST_PAIR, SEGMENT_OF, SEGMENT_PLUS,
    SEGMENT_RUNS, SHANTEN_ROWS, counts_shanten, fill_row, hand_joins, join, segment_keys,
    segment_minus, segment_plus, segment_table, shanten_row,
)

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


_HALF = (0, 0, 1, 1, 2)  # count → pairs in it


def _shanten_after_discards(
    actions: list[Action], c: list[int], n: int, mins: Sequence[Any], others: Sequence[int],
    orows: Sequence[bytearray], pairs: int,
) -> tuple[dict[int, int], list[Action], list[Action]]:
    """Per kind offered as a discard, the shanten of the hand ``c`` (``n``
    melds) after discarding it; and the discards and the other actions (the
    kongs among them), each in their order.  ``mins``, ``others`` and
    ``orows``: each segment's tables less one tile, the join of the other
    segments and its shanten row; ``pairs``: the pairs held (七对, no melds)."""
    s = 4 - n
    discards = []
    kongs = []
    after: dict[int, int] = {}
    for a in actions:  # each kind once
        if not isinstance(a, Discard):
            kongs.append(a)
            continue
        discards.append(a)
        k = a.card
        if k in after:
            continue
        g = SEGMENT_OF[k]
        tid = mins[g][RANK_IN_SEGMENT[k]][0]
        r = orows[g]
        sh = (r[tid] or fill_row(r, others[g], tid, s)) - 1
        if n == 0:
            q = 6 - min(pairs - (1 - c[k] % 2), 7)
            if q < sh:
                sh = q
        after[k] = sh
    return after, discards, kongs


def _live_useful(
    view: SeatView, tied: list[Action], best: int, c: list[int], n: int, keys: Sequence[bytes],
    mins: Sequence[Any], pj: Sequence[int], others: Sequence[int], orows: Sequence[bytearray],
    pairs: int,
) -> list[tuple[int, Action]]:
    """``(live 有效牌, discard)`` for each tied discard (shanten ``best``
    after it): the live copies, against what the seat has seen, of the tiles
    whose addition lowers the shanten.  Arguments as
    :func:`_shanten_after_discards`, with ``keys`` the segments' counts and
    ``pj`` the joins of each two segments (:func:`~qipai.families.mahjong.shanten.hand_joins`).

    Discarding k (in segment g) changes segment g only: a tile added to
    another segment h meets the join of g's table after the discard with
    ``pj[REST_PAIR[g][h]]`` (the two segments that are neither g nor h), one
    added to g meets ``others[g]``.  The count per (joined others, segment)
    is kept for the decision: tied discards share most of them."""
    s = 4 - n
    srows = SHANTEN_ROWS[s]
    seen = seen_kinds(view, len(c))
    lv = [4 - x if x < 4 else 0 for x in seen]
    lvs = (lv[0:9], lv[9:18], lv[18:27], lv[27:34])
    pluses: list[Any] = [None, None, None, None]
    jget = JOIN_MEMO.get
    cross: dict[int, int] = {}
    cross_of: dict[int, int] = {}
    useful_of: dict[int, int] = {}
    scored = []
    for a in tied:
        k = a.card
        useful = useful_of.get(k)
        if useful is None:
            g = SEGMENT_OF[k]
            tid, key = mins[g][RANK_IN_SEGMENT[k]]
            qd = n == 0 and 6 - min((pairs if c[k] & 1 else pairs - 1) + 1, 7) < best
            plus = SEGMENT_PLUS[g < 3].get(key)
            if plus is None:
                plus = segment_plus(key, g < 3)
            useful = _segment_useful(plus, orows[g], others[g], s, best, lvs[g], key, qd)
            gk = (tid * 4 + g) * 2 + qd
            cs = cross_of.get(gk)
            if cs is None:
                cs = 0
                for h in range(4):
                    if h == g:
                        continue
                    q = pj[REST_PAIR[g][h]]
                    x = jget(q * JOIN_KEY + tid if q <= tid else tid * JOIN_KEY + q)
                    o = x if x is not None else join(q, tid)
                    ck = (o * 4 + h) * 2 + qd
                    u = cross.get(ck)
                    if u is None:
                        plus = pluses[h]
                        if plus is None:
                            plus = pluses[h] = segment_plus(keys[h], SEGMENT_RUNS[h])
                        r = srows[o] or shanten_row(s, o)
                        u = cross[ck] = _segment_useful(plus, r, o, s, best, lvs[h], keys[h], qd)
                    cs += u
                cross_of[gk] = cs
            useful += cs
            useful_of[k] = useful
        scored.append((useful, a))
    return scored


def _segment_useful(plus: Sequence[tuple[int, int]], r: bytearray, o: int, s: int, best: int,
                    lv: Sequence[int], key: bytes, qd: bool) -> int:
    """Live copies of the tiles of one segment (``plus``: its tiles that
    could join a block, with the segment's table after each) that lower the
    shanten below ``best`` against the other segments' join ``o`` (its row
    ``r``: 1 + the shanten), or, ``qd``, that pair an odd count (七对 one
    step closer).  ``lv``: the live copies of the segment's kinds; ``key``:
    its counts."""
    u = 0
    for x, p in plus:
        v = r[p]
        if (v <= best and (v or fill_row(r, o, p, s) <= best)) or (qd and key[x] & 1):
            u += lv[x]
    return u


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
        ids = (segment_table(keys[0], True), segment_table(keys[1], True),
               segment_table(keys[2], True), segment_table(keys[3], False), s)
        got = HAND_JOINS.get(ids)
        if got is None:
            got = hand_joins(ids)
        pj, others, orows = got
        mins = (segment_minus(keys[0], True), segment_minus(keys[1], True),
                segment_minus(keys[2], True), segment_minus(keys[3], False))
        pairs = sum(map(_HALF.__getitem__, c)) if n == 0 else 0
        after, discards, kongs = _shanten_after_discards(actions, c, n, mins, others, orows, pairs)
        best = min(after.values())
        for a in kongs:
            if isinstance(a, Angang):
                c[a.card] -= 4
                ok = counts_shanten(c, n + 1) <= best
                c[a.card] += 4
                if ok:
                    return a
            elif isinstance(a, Jiagang) and after.get(a.card, best + 1) <= best:
                return a
        tied = [a for a in discards if after[a.card] == best]
        if len(tied) == 1:
            return tied[0]
        scored = _live_useful(view, tied, best, c, n, keys, mins, pj, others, orows, pairs)
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
        now = counts_shanten(c, n)
        best: tuple[int, int, Action] | None = None  # (shanten, preference, action)
        for a in actions:
            if isinstance(a, Minggang):
                c[card] -= 3
                sh, pref = counts_shanten(c, n + 1), 0
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
        keys = segment_keys(c)
        s = 4 - n
        ids = (segment_table(keys[0], True), segment_table(keys[1], True),
               segment_table(keys[2], True), segment_table(keys[3], False), s)
        got = HAND_JOINS.get(ids)
        if got is None:
            got = hand_joins(ids)
        _, others, orows = got
        out = 100  # 1 + the least shanten (a row entry)
        for g in range(4):
            og, r = others[g], orows[g]
            for tid, _ in segment_minus(keys[g], SEGMENT_RUNS[g]).values():
                v = r[tid] or fill_row(r, og, tid, s)
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

