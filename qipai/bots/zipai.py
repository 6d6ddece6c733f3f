"""Greedy zipai (桂林字牌): few cards missing from a win, with enough 胡数.

:class:`ZipaiStrategy` values a hand by its best split into groups,
partials, a pair and loose cards (:func:`zipai_splits`), searched by
:func:`_zipai_frontier` on the hand packed into one int.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from qipai.bots.base import seen_kinds
from qipai.core.model import Action, Chi, Discard, Hu, Meld, Pass, Peng, Zimo
from qipai.core.views import SeatView
from qipai.families.zipai import groups as zipai_groups

__all__ = ["ZipaiStrategy", "zipai_splits", "zipai_threshold"]


def _wins(actions: Sequence[Action]) -> list[Action]:
    return [a for a in actions if type(a) is Hu or type(a) is Zimo]


# A concealed hand (its 坎 aside) is packed into one int, 3 bits per kind
# (a count 0–2 under a guard bit, as in :mod:`qipai.families.zipai.groups`),
# plus a flag "a pair is wanted" (bit 61) and, from bit 62 on, the kinds
# whose four copies the seat has all seen (no card can complete a partial
# with them).  The kinds are packed in the order x1 d1 x2 d2 … x10 d10
# (:data:`_ZPOS`), which keeps most groups and partials within a few places
# and the search small.  :func:`_zipai_frontier` splits the hand, first
# place first, into complete groups, partials, a pair and loose cards, and
# keeps for every (groups, partials, pair) count the most 胡数, dominated
# counts pruned.

_ZN = 20
_ZPOS = [2 * (k % 10) + k // 10 for k in range(_ZN)]  # kind -> packing place
_ZGUARDS = sum(4 << (3 * k) for k in range(_ZN))
_ZCOUNTS = sum(3 << (3 * k) for k in range(_ZN))
_ZEYE = 1 << 61
_ZDEAD = 62
_ZB_CAP = 7  # partials counted at most (a hand never uses more)
_GROUP, _PARTIAL, _PAIR, _LOOSE = range(4)


def _zipai_moves() -> list[list[tuple[int, int, float, tuple[tuple[int, float], ...]]]]:
    """Per place (:data:`_ZPOS`) of a kind ``k``, the first place left:
    ``(delta, move, 胡数, completions)``, kinds given by their places.

    Moves: a complete non-identical group with ``k`` first (its 胡数); a
    partial — two cards of a valid group, ``(k, j)`` with ``j`` not before
    ``k`` — with the cards completing it, each with the group's 胡数, best
    first (a pair's own third card counts ``碰 + (坎 − 碰) / 3``: 4 big, 5/3
    small, since a 碰 from two opponents is likelier than one's own 扫);
    ``k k`` kept as the pair; ``k`` left loose.  Three identical cards never
    reach the search: they are a 坎.
    """
    valid = [(a, b, c) for a in range(_ZN) for b in range(a, _ZN) for c in range(b, _ZN)
             if not a == b == c and zipai_groups.valid_group((a, b, c))]
    unit = [1 << (3 * _ZPOS[k]) for k in range(_ZN)]
    first = sorted(range(_ZN), key=_ZPOS.__getitem__)
    out = []
    for k in first:
        moves: list[tuple[int, int, float, tuple[tuple[int, float], ...]]] = []
        for g in valid:
            if min(g, key=_ZPOS.__getitem__) == k:
                moves.append((sum(unit[j] for j in g), _GROUP,
                              float(zipai_groups.group_hu("bi", g)), ()))
        partners: dict[int, dict[int, float]] = {}
        for g in valid:
            if k in g:
                rest = list(g)
                rest.remove(k)
                for j, c in ((rest[0], rest[1]), (rest[1], rest[0])):
                    if _ZPOS[j] >= _ZPOS[k]:
                        partners.setdefault(j, {})[c] = float(zipai_groups.group_hu("bi", g))
        peng = zipai_groups.group_hu("peng", (k, k, k))
        kan = zipai_groups.group_hu("kan", (k, k, k))
        partners.setdefault(k, {})[k] = peng + (kan - peng) / 3
        for j, comps in sorted(partners.items()):
            best_first = tuple(sorted(((_ZPOS[c], h) for c, h in comps.items()),
                                      key=lambda ch: (-ch[1], ch[0])))
            moves.append((unit[k] + unit[j], _PARTIAL, 0.0, best_first))
        moves.append((2 * unit[k], _PAIR, 0.0, ()))
        moves.append((unit[k], _LOOSE, 0.0, ()))
        out.append(moves)
    return out


_ZIPAI_MOVES = _zipai_moves()
_ZIPAI_MEMO: dict[int, tuple[tuple[int, float], ...]] = {}
_ZIPAI_MEMO_LIMIT = 1 << 16
_ZIPAI_EMPTY: tuple[tuple[int, float], ...] = ((0, 0.0),)


#: The sort key of a frontier's entries: most 胡数 first (``reverse=True``;
#: a stable sort, so entries of equal 胡数 keep their order).
_HU = itemgetter(1)


def _zipai_frontier(s: int) -> tuple[tuple[int, float], ...]:
    """The splits of packed state ``s``: ``(key, 胡数)`` with key = groups
    << 5 | partials << 1 | pair, keeping only undominated keys (no other
    with at least as many groups, groups + partials, pair and 胡数)."""
    r = _ZIPAI_MEMO.get(s)
    if r is not None:
        return r
    t = s & _ZCOUNTS
    if not t:
        _ZIPAI_MEMO[s] = _ZIPAI_EMPTY  # found inline next time
        return _ZIPAI_EMPTY
    k = ((t & -t).bit_length() - 1) // 3
    dead = s >> _ZDEAD
    out: dict[int, float] = {}
    get = out.get
    memo = _ZIPAI_MEMO.get  # the children's memo hits, inline
    for delta, move, hu, comps in _ZIPAI_MOVES[k]:
        n = s - delta
        if n & _ZGUARDS != _ZGUARDS:
            continue
        if move == _GROUP:
            child = memo(n)
            if child is None:
                child = _zipai_frontier(n)
            if not out:  # the first move: its keys are distinct, its 胡数 ≥ 0
                out = {key + 32: v + hu for key, v in child}
                get = out.get
                continue
            for key, v in child:
                key += 32
                v += hu
                if v > get(key, -1.0):
                    out[key] = v
        elif move == _PARTIAL:
            for c, h in comps:
                if not dead >> c & 1:
                    break
            else:
                continue  # every card that would complete it is gone
            child = memo(n)
            if child is None:
                child = _zipai_frontier(n)
            for key, v in child:
                if (key >> 1) & 15 < _ZB_CAP:
                    key += 2
                v += h
                if v > get(key, -1.0):
                    out[key] = v
        elif move == _PAIR:
            if not s & _ZEYE:
                continue
            child = memo(n)
            if child is None:
                child = _zipai_frontier(n)
            for key, v in child:
                if not key & 1 and v > get(key + 1, -1.0):
                    out[key + 1] = v
        else:
            child = memo(n)
            if child is None:
                child = _zipai_frontier(n)
            if not out:
                out = dict(child)
                get = out.get
                continue
            for key, v in child:
                if v > get(key, -1.0):
                    out[key] = v
    r = _undominated(out)
    _ZIPAI_MEMO[s] = r
    return r


def _undominated(out: dict[int, float]) -> tuple[tuple[int, float], ...]:
    """The entries ``(key, 胡数)`` of ``out`` that no other dominates (at
    least as many groups, groups + partials, pair and 胡数), most 胡数 first."""
    keep: list[tuple[int, int, int]] = []
    front: list[tuple[int, float]] = []
    for key, v in sorted(out.items(), key=_HU, reverse=True):
        a, ab, e = key >> 5, (key >> 5) + ((key >> 1) & 15), key & 1
        for a2, ab2, e2 in keep:
            if a2 >= a and ab2 >= ab and e2 >= e:
                break
        else:
            keep.append((a, ab, e))
            front.append((key, v))
    return tuple(front)


def zipai_threshold(options: Any) -> int:
    """The minimum 胡数 of a win under a ruleset's ``options``: the first
    number of ``hu_scale`` (10 by default, and for options without it)."""
    scale = str(getattr(options, "hu_scale", "10/3"))
    head = scale.split("/", 1)[0]
    return int(head) if head.isdigit() else 10


def zipai_splits(c: Sequence[int], seen: Sequence[int] | None = None, *,
                 pending_discard: bool = False) -> list[tuple[int, float]]:
    """The undominated splits of a zipai hand: ``(d, 胡数)`` pairs.

    Args:
        c: the concealed hand, 20 counts (a count of 3 is a 坎).
        seen: copies of each kind the seat can see (a partial that only
            kinds seen four times would complete does not count); None:
            nothing seen.
        pending_discard: ``c`` still holds a card to discard (its best
            discard is taken as made).

    Returns:
        For each undominated split, ``d`` — the cards still missing from a
        win in shape (1: ready) — and the estimated 胡数 of the hand's part:
        坎, complete groups and the partials' best completions (table melds
        not included).  ``[]`` when the hand is empty, or holds only 坎 with
        a discard due.
    """
    h = sum(c)
    s = _ZGUARDS
    kans = 0
    base = 0.0
    for k in range(_ZN):
        n = c[k]
        if n >= 3:
            kans += 1
            base += zipai_groups.group_hu("kan", (k, k, k))
        elif n:
            s += n << (3 * _ZPOS[k])
    if s == _ZGUARDS and (pending_discard or h == 0):
        return []
    t = h if pending_discard else h + 1  # cards of the hand when it wins
    need_all = t // 3 - kans
    eye = t % 3 == 2
    if seen is not None:
        dead = 0
        for k in range(_ZN):
            if seen[k] >= 4:
                dead |= 1 << _ZPOS[k]
        s |= dead << _ZDEAD
    if eye:
        s |= _ZEYE
    if len(_ZIPAI_MEMO) > _ZIPAI_MEMO_LIMIT:
        _ZIPAI_MEMO.clear()
    out = []
    for key, v in _zipai_frontier(s):
        need = need_all - (key >> 5)
        b = (key >> 1) & 15
        d = 2 * need - (b if b < need else need)
        if eye and not key & 1:
            d += 1
        out.append((d, base + v))
    return out


class ZipaiStrategy:
    """Greedy zipai play (桂林字牌): few cards from a win with enough 胡数.

    The estimate of a concealed hand (after its discard) with ``h`` cards:
    a win needs ``h + 1`` cards in valid groups — ``G = (h + 1) // 3`` of
    them, and a pair when ``(h + 1) % 3 == 2`` (after a 开招/扫穿 without a
    discard).  Its 坎 are fixed groups.  The other cards are split every way
    (:func:`_zipai_frontier`) into ``a`` complete groups, ``b`` partials (two
    cards of a valid group that a card not all seen yet would complete), a
    pair and loose cards.  The cards still missing are ``d = 2·(G − a) −
    min(b, G − a)`` (+1 when a pair is wanted and not kept); ``d = 1`` is
    ready.  The split's 胡数 are the table melds' and the 坎's
    (:func:`~qipai.families.zipai.groups.meld_hu`, 坎 6/3), the complete
    groups' (一二三/二七十 3, 壹贰叁/贰柒拾 6) and each partial's best
    completion (a pair 4 big, 5/3 small).  Score of the split::

        −d − 0.3 · (threshold − 胡数 when short) + 0.02 · min(胡数, threshold + 9)

    and a hand's value is its best split's score.  A hand ready in shape
    (d = 1) is then checked exactly (:func:`~qipai.families.zipai.groups.waits`,
    with the 胡数 minimum): if it wins on some card not all seen it scores
    ``READY`` (−1, above every hand that is not ready) plus 0.03 per live
    winning card (12 at most); if not, it loses half a card.

    Decisions:

    * 胡/自摸 whenever offered;
    * discard the card whose removal leaves the best value (the engine never
      offers a card of a 坎); ties go to the RNG;
    * 碰 or 吃 (with its 下伙) when the hand after it and its best discard
      is worth more than the hand now; else pass.  A 碰 after which nothing
      could be discarded is never taken.
    """

    #: Score lost per 胡数 short of the minimum, and gained per 胡数 (capped).
    SHORT = 0.3
    MORE = 0.02
    #: A hand that wins on some card not all seen: above any hand that is not
    #: ready, plus a little per live winning card (at most 12 counted).
    READY = -1.0
    OUT = 0.03
    #: Lost by a hand ready in shape that no live card completes with the
    #: 胡数 minimum.
    DEAD_READY = 0.5

    def __init__(self, rng: random.Random, ruleset: Any = None) -> None:
        self.rng = rng
        self.threshold = zipai_threshold(ruleset.options if ruleset is not None else None)

    def act(self, view: SeatView, legal: Sequence[Action]) -> Action:
        """The decision for the viewer (see the class doc)."""
        actions = list(legal)
        wins = _wins(actions)
        if wins:
            return wins[0]
        if any(isinstance(a, Discard) for a in actions):
            return self._turn(view, actions)
        if view.window is not None:
            return self._claim(view, actions)
        passes = [a for a in actions if isinstance(a, Pass)]
        return passes[0] if passes else actions[0]

    # -- the estimate ----------------------------------------------------------
    def value(self, c: list[int], melds: Sequence[Any], seen: Sequence[int], threshold: int,
              *, pending_discard: bool = False) -> float:
        """The value of concealed counts ``c`` with table ``melds`` (higher is
        better; see the class doc).  ``seen``: copies of each kind the seat
        can see.  ``pending_discard``: ``c`` still holds the card to discard
        (its best discard is taken as made)."""
        splits = zipai_splits(c, seen, pending_discard=pending_discard)
        if not splits:
            return -99.0  # nothing left that could be discarded
        base = sum(zipai_groups.meld_hu(m) for m in melds)
        best, ready = -99.0, False
        short, more, cap = self.SHORT, self.MORE, threshold + 9
        for d, v in splits:
            if d == 1:
                ready = True
            hu = base + v
            score = -d + more * (hu if hu < cap else cap)
            if hu < threshold:
                score -= short * (threshold - hu)
            if score > best:
                best = score
        if not ready:
            return best
        if pending_discard:  # a discard may leave it ready: look at each exactly
            best = -99.0
            for k in range(_ZN):
                if 0 < c[k] < 3:
                    c[k] -= 1
                    best = max(best, self.value(c, melds, seen, threshold))
                    c[k] += 1
            return best
        live = sum(4 - seen[k] for k in zipai_groups.waits(c, list(melds), threshold))
        if live > 0:
            return self.READY + self.OUT * min(live, 12)
        return best - self.DEAD_READY

    def _context(self, view: SeatView, in_play: int | None = None
                 ) -> tuple[list[int], list[int], list[Any], int]:
        c = [0] * _ZN
        for k in view.hand:
            c[k] += 1
        seen = seen_kinds(view, _ZN)
        if in_play is not None:
            seen[in_play] += 1
        # the viewer's own melds, all cards shown to it
        melds = [Meld(m.kind, m.cards, m.from_seat) for m in view.melds[view.seat]]
        return c, seen, melds, self.threshold

    # -- turn: discard ----------------------------------------------------------
    def _turn(self, view: SeatView, actions: list[Action]) -> Action:
        c, seen, melds, threshold = self._context(view)
        scored = []
        for a in actions:
            if isinstance(a, Discard):
                c[a.card] -= 1
                scored.append((self.value(c, melds, seen, threshold), a))
                c[a.card] += 1
        top = max(v for v, _ in scored)
        tied = [a for v, a in scored if v >= top - 1e-9]
        return tied[0] if len(tied) == 1 else self.rng.choice(tied)

    # -- claims: 碰, 吃 --------------------------------------------------------
    def _claim(self, view: SeatView, actions: list[Action]) -> Action:
        card = view.window[0]
        c, seen, melds, threshold = self._context(view, card)
        best = self.value(c, melds, seen, threshold)
        pick: Action | None = None
        for a in actions:
            after = list(c)
            if isinstance(a, Peng):
                after[card] -= 2
                laid = [Meld("peng", (card,) * 3)]
            elif isinstance(a, Chi):
                used = list(a.cards)
                used.remove(card)
                for g in (used, *a.extra):
                    for k in g:
                        after[k] -= 1
                laid = [Meld("chi", tuple(g)) for g in (a.cards, *a.extra)]
            else:
                continue
            v = self.value(after, melds + laid, seen, threshold, pending_discard=True)
            if v > best + 1e-9:
                best, pick = v, a
        if pick is not None:
            return pick
        passes = [a for a in actions if isinstance(a, Pass)]
        return passes[0] if passes else actions[0]
