"""Random and greedy players, and helpers that play whole hands with them.

A bot is anything with ``choose(table, seat) -> Action`` returning one of
``table.legal_actions(seat)``.  Bots are hosts of the table, like the CLI:
they read only what the seat may know — its own hand and the public part
of the table (melds shown, discards) — and decide with their own seeded
RNG, so a seed fixes a whole hand (the shuffle and every decision).

* :class:`RandomBot` picks uniformly among the legal actions (but takes a
  win when one is offered, unless told not to).
* :class:`GreedyBot` plays toward a win: per family, a strategy reads the
  hand and picks the action that keeps it closest to ready.  Mahjong uses
  向听 (:func:`qipai.families.mahjong.shapes.shanten`); zipai
  (:class:`ZipaiStrategy`) counts the cards still missing from a split into
  groups and the 胡数 that split would reach (:mod:`qipai.families.zipai.groups`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from qipai.core.model import (
    Action, Angang, Chi, Discard, Hu, Jiagang, Meld, Minggang, Pass, Peng, Zimo,
)
from qipai.families.mahjong import shapes
from qipai.families.zipai import groups as zipai_groups

__all__ = [
    "Bot",
    "RandomBot",
    "GreedyBot",
    "MahjongStrategy",
    "ZipaiStrategy",
    "zipai_splits",
    "BOT_KINDS",
    "make_bots",
    "hand_seed",
    "play_hand",
    "play_hands",
    "run_to_end",
]

#: A hand that takes more decisions than this is an engine bug, not a long hand.
MAX_STEPS = 5000


class Bot(Protocol):
    """A player: picks one of ``table.legal_actions(seat)``."""

    def choose(self, table: Any, seat: int) -> Action: ...


_WIN_TYPES = frozenset({Hu, Zimo})


def _wins(actions: Sequence[Action]) -> list[Action]:
    return [a for a in actions if type(a) is Hu or type(a) is Zimo]


class RandomBot:
    """Uniformly random among the legal actions.

    Args:
        rng: the bot's RNG (default: a fresh unseeded ``random.Random``).
        always_win: take a 胡/自摸 whenever one is offered; without it hands
            rarely end in a win.
    """

    def __init__(self, rng: random.Random | None = None, *, always_win: bool = True) -> None:
        self.rng = rng or random.Random()
        self.always_win = always_win

    def choose(self, table: Any, seat: int) -> Action:
        actions = table.legal_actions(seat)
        if not actions:
            raise ValueError(f"seat {seat} has nothing to decide")
        if self.always_win and not _WIN_TYPES.isdisjoint(map(type, actions)):
            return next(a for a in actions if type(a) in _WIN_TYPES)
        return self.rng.choice(actions)


# --------------------------------------------------------------------------
# Greedy mahjong: stay as close to ready as possible.


def _seen_kinds(table: Any, seat: int, n_kinds: int) -> list[int]:
    """Copies of each kind ``seat`` can see: its hand, every shown meld
    card (a Guilin 暗杠 shows its kind) and every discard."""
    seen = [0] * n_kinds
    for k in table.seats[seat].hand:
        seen[k] += 1
    for i, s in enumerate(table.seats):
        for m in s.melds:
            if i != seat and m.hidden >= len(m.cards):
                continue  # wholly face down: unknown kind
            for k in m.cards:
                seen[k] += 1
        for k in s.discards:
            seen[k] += 1
    return seen


def _near(c: Sequence[int], t: int) -> bool:
    """Whether adding kind ``t`` can join a block of ``c`` (same kind, or a
    suited tile within two ranks): otherwise it cannot lower the 向听."""
    if c[t]:
        return True
    if t >= 27:
        return False
    base = t - t % 9
    return any(c[k] for k in range(max(base, t - 2), min(base + 9, t + 3)))


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


_SEGMENTS = ((0, 9, True), (9, 18, True), (18, 27, True), (27, 34, False))


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

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.shanten = shapes.shanten

    def choose(self, table: Any, seat: int, actions: list[Action]) -> Action:
        wins = _wins(actions)
        if wins:
            return wins[0]
        if any(isinstance(a, Discard) for a in actions):
            return self._turn(table, seat, actions)
        return self._claim(table, seat, actions)

    # -- turn: kong or discard -------------------------------------------------
    def _turn(self, table: Any, seat: int, actions: list[Action]) -> Action:
        s = table.seats[seat]
        c = self._counts(s.hand, table)
        n = len(s.melds)
        discards = [a for a in actions if isinstance(a, Discard)]
        after = {}
        for a in discards:
            c[a.card] -= 1
            after[a.card] = self.shanten(c, n)
            c[a.card] += 1
        best = min(after.values())
        for a in actions:
            if isinstance(a, Angang):
                c[a.card] -= 4
                ok = self.shanten(c, n + 1) <= best
                c[a.card] += 4
                if ok:
                    return a
            elif isinstance(a, Jiagang) and after.get(a.card, best + 1) <= best:
                return a
        tied = [a for a in discards if after[a.card] == best]
        if len(tied) == 1:
            return tied[0]
        seen = _seen_kinds(table, seat, len(c))
        scored = []
        for a in tied:
            c[a.card] -= 1
            useful = self._useful(c, n, best, seen)
            c[a.card] += 1
            scored.append(((useful, _isolation(c, a.card)), a))
        top = max(key for key, _ in scored)
        return self.rng.choice([a for key, a in scored if key == top])

    def _useful(self, c: list[int], n: int, sh: int, seen: Sequence[int]) -> int:
        """Live copies of the kinds that lower the shanten ``sh`` of ``c``."""
        total = 0
        for t in self._improving(c, n, sh):
            live = 4 - seen[t]
            if live > 0:
                total += live
        return total

    def _improving(self, c: list[int], n: int, sh: int) -> list[int]:
        """The kinds ``t`` with ``shanten(c + t) < sh`` (有效牌).

        The hot loop of the bot.  Adding a tile changes one segment (a suit
        or the honors), so the block tables of the other three are joined
        once per segment instead of once per kind; this leans on the block
        tables of :mod:`~qipai.families.mahjong.shapes` (``_block_table``,
        ``_join``), which have no public form yet.
        """
        s = 4 - n
        if max(c) > 4:  # outside the entry tables' range: the plain block tables
            return self._improving_plain(c, n, sh)
        tabs = [shapes._entries(bytes(c[a:b]), runs) for a, b, runs in _SEGMENTS]
        pairs = sum(x >> 1 for x in c)
        out = []
        for g, (a, b, runs) in enumerate(_SEGMENTS):
            others = None
            for t in range(a, b):
                if c[t] >= 4 or not _near(c, t):
                    continue
                if n == 0 and c[t] & 1 and 6 - min(pairs + 1, 7) < sh:
                    out.append(t)  # seven pairs one step closer
                    continue
                if others is None:
                    rest = [tabs[j] for j in range(4) if j != g]
                    others = shapes._join_entries(shapes._join_entries(rest[0], rest[1]),
                                                  rest[2])
                c[t] += 1
                e = shapes._entries(bytes(c[a:b]), runs)
                c[t] -= 1
                if shapes._best_shanten(others, e, s) < sh:
                    out.append(t)
        return out

    def _improving_plain(self, c: list[int], n: int, sh: int) -> list[int]:
        """:meth:`_improving` on the plain block tables (any counts)."""
        s = 4 - n
        tabs = [shapes._block_table(tuple(c[a:b]), runs) for a, b, runs in _SEGMENTS]
        pairs = sum(x >> 1 for x in c)
        out = []
        for g, (a, b, runs) in enumerate(_SEGMENTS):
            others = None
            for t in range(a, b):
                if c[t] >= 4 or not _near(c, t):
                    continue
                if n == 0 and c[t] & 1 and 6 - min(pairs + 1, 7) < sh:
                    out.append(t)  # seven pairs one step closer
                    continue
                if others is None:
                    rest = [tabs[j] for j in range(4) if j != g]
                    others = shapes._join(shapes._join(rest[0], rest[1]), rest[2])
                c[t] += 1
                tb = shapes._join(others, shapes._block_table(tuple(c[a:b]), runs))
                c[t] -= 1
                if _shanten_of_table(tb, s) < sh:
                    out.append(t)
        return out

    # -- claims ----------------------------------------------------------------
    def _claim(self, table: Any, seat: int, actions: list[Action]) -> Action:
        window = table.state.window
        s = table.seats[seat]
        c = self._counts(s.hand, table)
        n = len(s.melds)
        now = self.shanten(c, n)
        best: tuple[int, int, Action] | None = None  # (shanten, preference, action)
        for a in actions:
            if isinstance(a, Minggang):
                c[window.card] -= 3
                sh, pref = self.shanten(c, n + 1), 0
                c[window.card] += 3
            elif isinstance(a, Peng):
                c[window.card] -= 2
                sh, pref = self._best_discard(c, n + 1), 1
                c[window.card] += 2
            elif isinstance(a, Chi):
                used = list(a.cards)
                used.remove(window.card)
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
        passes = [a for a in actions if isinstance(a, Pass)]
        return passes[0] if passes else actions[0]

    def _best_discard(self, c: list[int], n: int) -> int:
        out = 99
        for k in range(len(c)):
            if c[k]:
                c[k] -= 1
                out = min(out, self.shanten(c, n))
                c[k] += 1
        return out

    @staticmethod
    def _counts(hand: Sequence[int], table: Any) -> list[int]:
        c = [0] * table.cards.n_kinds
        for k in hand:
            c[k] += 1
        return c


# --------------------------------------------------------------------------
# Greedy zipai: few cards missing from a win, with enough 胡数.
#
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
                              float(zipai_groups.group_hu("shun", g)), ()))
        partners: dict[int, dict[int, float]] = {}
        for g in valid:
            if k in g:
                rest = list(g)
                rest.remove(k)
                for j, c in ((rest[0], rest[1]), (rest[1], rest[0])):
                    if _ZPOS[j] >= _ZPOS[k]:
                        partners.setdefault(j, {})[c] = float(zipai_groups.group_hu("shun", g))
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


def _by_hu(entry: tuple[int, float]) -> float:
    return -entry[1]


def _zipai_frontier(s: int) -> tuple[tuple[int, float], ...]:
    """The splits of packed state ``s``: ``(key, 胡数)`` with key = groups
    << 5 | partials << 1 | pair, keeping only undominated keys (no other
    with at least as many groups, groups + partials, pair and 胡数)."""
    r = _ZIPAI_MEMO.get(s)
    if r is not None:
        return r
    t = s & _ZCOUNTS
    if not t:
        return _ZIPAI_EMPTY
    k = ((t & -t).bit_length() - 1) // 3
    dead = s >> _ZDEAD
    out: dict[int, float] = {}
    get = out.get
    for delta, move, hu, comps in _ZIPAI_MOVES[k]:
        n = s - delta
        if n & _ZGUARDS != _ZGUARDS:
            continue
        if move == _GROUP:
            for key, v in _zipai_frontier(n):
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
            for key, v in _zipai_frontier(n):
                if (key >> 1) & 15 < _ZB_CAP:
                    key += 2
                v += h
                if v > get(key, -1.0):
                    out[key] = v
        elif move == _PAIR:
            if not s & _ZEYE:
                continue
            for key, v in _zipai_frontier(n):
                if not key & 1 and v > get(key + 1, -1.0):
                    out[key + 1] = v
        else:
            for key, v in _zipai_frontier(n):
                if v > get(key, -1.0):
                    out[key] = v
    keep: list[tuple[int, int, int]] = []
    front: list[tuple[int, float]] = []
    for key, v in sorted(out.items(), key=_by_hu):
        a, ab, e = key >> 5, (key >> 5) + ((key >> 1) & 15), key & 1
        for a2, ab2, e2 in keep:
            if a2 >= a and ab2 >= ab and e2 >= e:
                break
        else:
            keep.append((a, ab, e))
            front.append((key, v))
    r = tuple(front)
    _ZIPAI_MEMO[s] = r
    return r


def _zipai_threshold(options: Any) -> int:
    """The minimum 胡数 of a win: the first number of ``hu_scale`` (10 by default)."""
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

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, table: Any, seat: int, actions: list[Action]) -> Action:
        wins = _wins(actions)
        if wins:
            return wins[0]
        if any(isinstance(a, Discard) for a in actions):
            return self._turn(table, seat, actions)
        if table.state.window is not None:
            return self._claim(table, seat, actions)
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

    def _context(self, table: Any, seat: int, in_play: int | None = None
                 ) -> tuple[list[int], list[int], list[Any], int]:
        s = table.seats[seat]
        c = [0] * _ZN
        for k in s.hand:
            c[k] += 1
        seen = _seen_kinds(table, seat, _ZN)
        if in_play is not None:
            seen[in_play] += 1
        return c, seen, list(s.melds), _zipai_threshold(table.options)

    # -- turn: discard ----------------------------------------------------------
    def _turn(self, table: Any, seat: int, actions: list[Action]) -> Action:
        c, seen, melds, threshold = self._context(table, seat)
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
    def _claim(self, table: Any, seat: int, actions: list[Action]) -> Action:
        card = table.state.window.card
        c, seen, melds, threshold = self._context(table, seat, card)
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


class GreedyBot:
    """Plays toward a win with the strategy of the table's family.

    Families without a strategy play as :class:`RandomBot`.

    Args:
        rng: the bot's RNG, for ties (default: a fresh unseeded one).
    """

    #: family name → strategy class (``choose(table, seat, actions)``).
    STRATEGIES: dict[str, type] = {"mahjong": MahjongStrategy, "zipai": ZipaiStrategy}

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()
        self._fallback = RandomBot(self.rng, always_win=True)
        self._strategies: dict[str, Any] = {}

    def choose(self, table: Any, seat: int) -> Action:
        actions = table.legal_actions(seat)
        if not actions:
            raise ValueError(f"seat {seat} has nothing to decide")
        family = table.ruleset.manifest.family
        strategy = self._strategies.get(family)
        if strategy is None:
            cls = self.STRATEGIES.get(family)
            if cls is None:
                return self._fallback.choose(table, seat)
            strategy = self._strategies[family] = cls(self.rng)
        return strategy.choose(table, seat, actions)


# --------------------------------------------------------------------------
# Playing hands

#: Bot names accepted by :func:`make_bots` (and ``qipai play --bots``).
BOT_KINDS: dict[str, Callable[[random.Random], Bot]] = {
    "greedy": GreedyBot,
    "random": RandomBot,
}


def make_bots(bots: str | Sequence[str | Bot], n: int, seed: int | None) -> list[Bot]:
    """One bot per seat.

    Args:
        bots: a bot name for every seat (``"greedy"``, ``"random"``), or one
            name or bot object per seat.
        n: seats at the table.
        seed: seeds each named bot's RNG (seat by seat); None: unseeded.

    Raises:
        ValueError: an unknown bot name or the wrong number of bots.
    """
    specs = [bots] * n if isinstance(bots, str) else list(bots)
    if len(specs) != n:
        raise ValueError(f"{n} seats need {n} bots, got {len(specs)}")
    out: list[Bot] = []
    for seat, spec in enumerate(specs):
        if not isinstance(spec, str):
            out.append(spec)
            continue
        if spec not in BOT_KINDS:
            raise ValueError(f"unknown bot {spec!r}; bots are: {', '.join(BOT_KINDS)}")
        rng = random.Random(f"qipai-bot:{seed}:{seat}") if seed is not None else random.Random()
        out.append(BOT_KINDS[spec](rng))
    return out


def hand_seed(seed: int, index: int) -> int:
    """The 128-bit seed of hand ``index`` (0-based) in a session seeded ``seed``.

    A BLAKE2b hash of the session seed and the index (issue 10, Leaks): the
    hands' seeds are independent of one another — knowing hand 0's seed
    (written in its record) does not give hand 1's — and the session seed
    itself is written in no record.  (A session seed that is small can be
    guessed from a record: seeded play is for tests and demos; an unseeded
    session deals from the OS's CSPRNG.)
    """
    data = f"{int(seed)}:{int(index)}".encode()
    digest = hashlib.blake2b(data, digest_size=16, person=b"qipai-hand").digest()
    return int.from_bytes(digest, "big")


def run_to_end(table: Any, bots: Sequence[Bot], max_steps: int = MAX_STEPS) -> int:
    """Let ``bots`` (one per seat) decide until the hand is over.

    Returns: the number of decisions applied.

    Raises:
        RuntimeError: nobody has a decision though the hand is not over, or
            the hand takes more than ``max_steps`` decisions (engine bugs).
    """
    steps = 0
    state = table.state  # read directly: this loop runs a few hundred times a hand
    while state.result is None:
        if not state.pending:
            raise RuntimeError("the hand is not over but no seat has a decision")
        seat = min(state.pending)  # table.to_decide()[0]
        table.apply(bots[seat].choose(table, seat))
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"the hand did not end within {max_steps} decisions")
    return steps


def play_hand(ruleset: Any, *, seed: int | None = None, dealer: int | None = None,
              bots: str | Sequence[str | Bot] = "greedy", deal: Any = None) -> Any:
    """Play one hand to the end with bots; return the finished table.

    Args:
        ruleset: a loaded :class:`~qipai.core.ruleset.Ruleset`.
        seed: seeds the shuffle and the bots: the same seed gives the same
            record.  None deals from the OS's CSPRNG (``table.seed`` None,
            the record's ``rng`` ``"os"``) and the bots are unseeded.
        dealer: the dealer's seat (default: the variant's first dealer).
        bots: see :func:`make_bots`.
        deal: an explicit :class:`~qipai.core.model.Deal` instead of a shuffle.
    """
    table = ruleset.table(seed=seed, deal=deal, dealer=dealer)
    run_to_end(table, make_bots(bots, table.n, seed))
    return table


def play_hands(ruleset: Any, hands: int = 1, *, seed: int | None = None,
               bots: str | Sequence[str | Bot] = "greedy",
               dealer: int | None = None) -> Iterator[Any]:
    """Play ``hands`` hands at one table and yield each finished table.

    Each hand's dealer is the previous hand's ``result.next_dealer`` (the
    first: ``dealer``, or the variant's first dealer); hand ``i`` is seeded
    with :func:`hand_seed` ``(seed, i)``; with ``seed`` None every hand is
    dealt from the OS's CSPRNG.
    """
    for i in range(hands):
        table = play_hand(ruleset, seed=None if seed is None else hand_seed(seed, i),
                          dealer=dealer, bots=bots)
        dealer = table.result.next_dealer
        yield table
