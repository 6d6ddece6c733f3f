"""Random and greedy players, and helpers that play whole hands with them.

A bot (:class:`Bot`) is anything with ``act(view, legal) -> Action``: given
a seat's view (:class:`~qipai.core.table.SeatView`, what
:meth:`Table.view(seat) <qipai.core.table.Table.view>` gives — the same
redacted view a server client gets, docs/concepts/views) and the seat's
legal actions, it returns one of them.  A bot never sees the table itself,
so it cannot read another seat's concealed cards or the stock: the same
bot sits behind the server (:mod:`qipai.host`), the simulator
(:mod:`qipai.sim`) and an environment.  It decides with its own seeded RNG,
so a seed fixes a whole hand (the shuffle and every decision).
:func:`decide` asks a bot for a seat's decision at a table (what
:func:`run_to_end` does each turn).

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
import threading
from operator import itemgetter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from qipai.core.model import (
    Action, Angang, Chi, Discard, Hu, Jiagang, Meld, Minggang, Pass, Peng, Zimo,
)
from qipai.core.table import SeatView
from qipai.families.mahjong import shapes
from qipai.families.zipai import groups as zipai_groups

__all__ = [
    "Bot",
    "decide",
    "seat_bots",
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
    """A player: picks one of a seat's legal actions from the seat's view.

    ``act(view, legal) -> Action``:

    * ``view`` — the seat's :class:`~qipai.core.table.SeatView`
      (``table.view(seat)``; its ``events`` may be left out,
      ``table.view(seat, events=False)``, as :func:`decide` does).  It
      holds no other seat's concealed cards, no face-down meld card and not
      the stock's order (docs/concepts/views), so a bot cannot peek.
    * ``legal`` — the seat's legal actions (``table.legal_actions(seat)``,
      the same as ``view.legal``); the bot returns one of them.

    Optional parts a host uses when the bot has them:

    * ``sit(ruleset, seat)`` — called once when the bot takes a seat, before
      its first ``act``: the rules of the table (public: every player knows
      the house rules) and its seat.  :class:`GreedyBot` needs it (its
      strategy follows the ruleset's family and options).
    * ``blind = True`` (a class attribute) — the bot decides on ``legal``
      alone; a host may pass ``view=None`` and save building the view
      (:class:`RandomBot`).

    The same bot object serves the server (:mod:`qipai.host` bot seats), the
    simulator (:mod:`qipai.sim`, through :func:`run_to_end`) and an
    environment.  ``choose(table, seat)`` on the bots here is a shortcut for
    :func:`decide` ``(bot, table, seat)``, kept for tests and scripts.
    """

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action: ...


def seat_bots(ruleset: Any, bots: Sequence[Any]) -> None:
    """Tell each bot (one per seat, in seat order) its table's ruleset and
    its seat: ``bot.sit(ruleset, seat)`` for the bots that have ``sit``."""
    for seat, bot in enumerate(bots):
        sit = getattr(bot, "sit", None)
        if sit is not None:
            sit(ruleset, seat)


def decide(bot: Any, table: Any, seat: int) -> Action:
    """``bot``'s decision for ``seat`` at ``table``: ``bot.act(view, legal)``
    with the seat's view (events left out; None for a ``blind`` bot) and
    legal actions.  The bot must have been seated (:func:`seat_bots`) if
    it needs the rules.

    Raises:
        ValueError: the seat has nothing to decide.
    """
    legal = table.legal_actions(seat)
    if not legal:
        raise ValueError(f"seat {seat} has nothing to decide")
    view = None if getattr(bot, "blind", False) else table.view(seat, events=False)
    return bot.act(view, legal)


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

    #: Decides on the legal actions alone: hosts may pass ``view=None``.
    blind = True

    def __init__(self, rng: random.Random | None = None, *, always_win: bool = True) -> None:
        self.rng = rng or random.Random()
        self.always_win = always_win

    def sit(self, ruleset: Any, seat: int) -> None:
        """Nothing to learn: any rules, any seat."""

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action:
        """One of ``legal``: a win if offered (``always_win``), else uniform.

        Raises:
            ValueError: ``legal`` is empty.
        """
        if not legal:
            raise ValueError("nothing to decide: no legal action")
        if self.always_win and not _WIN_TYPES.isdisjoint(map(type, legal)):
            return next(a for a in legal if type(a) in _WIN_TYPES)
        return self.rng.choice(legal)

    def choose(self, table: Any, seat: int) -> Action:
        """:func:`decide` ``(self, table, seat)`` (a shortcut for tests and scripts)."""
        return decide(self, table, seat)


# --------------------------------------------------------------------------
# Greedy mahjong: stay as close to ready as possible.


def _seen_kinds(view: SeatView, n_kinds: int) -> list[int]:
    """Copies of each kind the viewer can see: its hand, every shown meld
    card and every discard.  A meld partly face down whose shown cards are
    all one kind (a Guilin 暗杠 shows its top tile) counts every card as
    that kind; a meld wholly face down (a 广西 暗杠, a zipai 扫) counts none."""
    seen = [0] * n_kinds
    for k in view.hand:
        seen[k] += 1
    for melds in view.melds:
        for m in melds:
            cards = m.cards
            if None in cards:
                shown = [k for k in cards if k is not None]
                if not shown or any(k != shown[0] for k in shown):
                    cards = shown  # unknown kinds: only the shown ones count
                else:
                    cards = [shown[0]] * len(cards)
            for k in cards:
                seen[k] += 1
    for ds in view.discards:
        for k in ds:
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


# Fast shanten for the bot.  A segment's readings (its block table, capped
# as in :func:`~qipai.families.mahjong.shapes._entries`: t ≤ 4 − m, which
# never changes the formula's result) are interned as small ints, so that
# joining two segments' tables is one dict look-up once seen, and a joined
# table's shanten for each s is one list look-up.  Per segment key (bytes
# of its counts) the tables after taking one tile off (:func:`_seg_minus`)
# and after adding one (:func:`_seg_plus`, only the tiles that could join a
# block: the ``_near`` filter) are kept too.  The caches are bounded (the
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
#: (others' table, s, shanten, seven-pairs flag, segment), segment key → 有效牌 there
_IMPROVE: dict[tuple[int, bytes], tuple[int, ...]] = {}
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
    two ranks held: the ``_near`` filter), with one tile of ``o`` added."""
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


def _others(ids: Sequence[int]) -> tuple[int, int, int, int]:
    """For each segment, the join of the other three segments' tables."""
    a, b, c, d = ids
    get = _JOIN.get
    ab = get(a * _JK + b if a <= b else b * _JK + a)
    if ab is None:
        ab = _tjoin(a, b)
    cd = get(c * _JK + d if c <= d else d * _JK + c)
    if cd is None:
        cd = _tjoin(c, d)
    out = []
    for x, y in ((b, cd), (a, cd), (ab, d), (ab, c)):
        z = get(x * _JK + y if x <= y else y * _JK + x)
        out.append(z if z is not None else _tjoin(x, y))
    return out[0], out[1], out[2], out[3]


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
    """:func:`_others` given the pair joins ``pj`` (:func:`_pair_joins`)."""
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


def _improve_segment(og: int, key: bytes, g: int, s: int, sh: int, qidui: bool,
                     mk: tuple[int, bytes]) -> tuple[int, ...]:
    """The kinds of segment ``g`` (counts ``key``) whose addition lowers the
    shanten ``sh`` with the other segments' joined table ``og`` and ``s``
    sets to make (or, ``qidui``, that pair an odd count: 七对 one step
    closer); memoised in ``_IMPROVE`` under ``mk``."""
    base = _BASE[g]
    got = tuple(base + o for o, tid in _seg_plus(key, _RUNS[g])
                if (qidui and key[o] & 1) or _TAB_SH[_j(og, tid)][s] < sh)
    if len(_IMPROVE) >= _FAST_LIMIT:
        _IMPROVE.clear()
    _IMPROVE[mk] = got
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
        # Ties: the live 有效牌 after each tied discard (:meth:`_improving`).
        # Discarding k (in segment g) changes segment g only: a tile added
        # to another segment h meets the join of g's table after the
        # discard with ``pj[_REST[g][h]]`` (the two segments that are
        # neither g nor h), one added to g meets ``others[g]``.  A tile
        # improves when its row entry (1 + shanten) is at most ``best``, or
        # (七对 one step closer, ``qd``) when it pairs an odd count.  The
        # live count per (joined others, segment) is kept for the decision.
        seen = _seen_kinds(view, len(c))
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

    def _useful(self, c: list[int], n: int, sh: int, seen: Sequence[int]) -> int:
        """Live copies of the kinds that lower the shanten ``sh`` of ``c``."""
        total = 0
        for t in self._improving(c, n, sh):
            live = 4 - seen[t]
            if live > 0:
                total += live
        return total

    def _improving(self, c: list[int], n: int, sh: int) -> list[int]:
        """The kinds ``t`` with ``shanten(c + t) < sh`` (有效牌), ascending."""
        keys = _keys(c)
        return self._improving_fast(c, n, sh, keys, [_seg(k, r) for k, r in zip(keys, _RUNS)])

    @staticmethod
    def _improving_fast(c: list[int], n: int, sh: int, keys: Sequence[bytes],
                        ids: Sequence[int]) -> list[int]:
        """:meth:`_improving` given ``c``'s segment keys and table ids.

        The hot loop of the bot.  Adding a tile changes one segment (a suit
        or the honors): per segment, the other three are joined once and
        each tile that could join a block costs one join look-up
        (:func:`_seg_plus`)."""
        s = 4 - n
        others = _others(ids)
        qidui = n == 0 and 6 - min(sum(x >> 1 for x in c) + 1, 7) < sh
        tag = (s * 8 + sh) * 2 + qidui
        memo = _IMPROVE
        out: list[int] = []
        for g in range(4):
            mk = (others[g] * 64 + tag) * 4 + g, keys[g]
            got = memo.get(mk)
            if got is None:
                base, og, key = _BASE[g], others[g], keys[g]
                got = tuple(base + o for o, tid in _seg_plus(key, _RUNS[g])
                            if (qidui and key[o] & 1) or _TAB_SH[_j(og, tid)][s] < sh)
                if len(memo) >= _FAST_LIMIT:
                    memo.clear()
                memo[mk] = got
            out += got
        return out

    def _improving_plain(self, c: list[int], n: int, sh: int) -> list[int]:
        """:meth:`_improving` on the plain block tables (any counts): the
        reference the fast search is tested against."""
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

    def __init__(self, rng: random.Random, ruleset: Any = None) -> None:
        self.rng = rng
        self.threshold = _zipai_threshold(ruleset.options if ruleset is not None else None)

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
        seen = _seen_kinds(view, _ZN)
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


class GreedyBot:
    """Plays toward a win with the strategy of the ruleset's family.

    It must learn the rules before it acts: ``GreedyBot(rng, ruleset)``, or
    :meth:`sit` (which :func:`run_to_end`, :func:`seat_bots` and the server
    call).  Families without a strategy play as :class:`RandomBot`.

    Args:
        rng: the bot's RNG, for ties (default: a fresh unseeded one).
        ruleset: the table's :class:`~qipai.core.ruleset.Ruleset` (or set
            later by :meth:`sit`).
    """

    #: family name → strategy class (``cls(rng, ruleset)``, then
    #: ``act(view, legal)``).
    STRATEGIES: dict[str, type] = {"mahjong": MahjongStrategy, "zipai": ZipaiStrategy}

    def __init__(self, rng: random.Random | None = None, ruleset: Any = None) -> None:
        self.rng = rng or random.Random()
        self._fallback = RandomBot(self.rng, always_win=True)
        self.ruleset: Any = None
        self._strategy: Any = None
        if ruleset is not None:
            self.sit(ruleset, 0)

    def sit(self, ruleset: Any, seat: int) -> None:
        """Play by ``ruleset`` (any seat: the seat is read from each view)."""
        if ruleset is self.ruleset:
            return
        self.ruleset = ruleset
        cls = self.STRATEGIES.get(ruleset.manifest.family)
        self._strategy = cls(self.rng, ruleset) if cls is not None else self._fallback

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action:
        """One of ``legal``, chosen by the family's strategy from ``view``.

        Raises:
            ValueError: ``legal`` is empty, or the bot was never seated (no
                ruleset: give one or call :meth:`sit`).
        """
        if not legal:
            raise ValueError("nothing to decide: no legal action")
        if self._strategy is None:
            raise ValueError("GreedyBot has no ruleset: give GreedyBot(rng, ruleset) "
                             "or call sit(ruleset, seat) first")
        return self._strategy.act(view, legal)

    def choose(self, table: Any, seat: int) -> Action:
        """:func:`decide` ``(self, table, seat)``, seated at ``table``'s
        ruleset first (a shortcut for tests and scripts)."""
        self.sit(table.ruleset, seat)
        return decide(self, table, seat)


# --------------------------------------------------------------------------
# Playing hands

#: Bot names accepted by :func:`make_bots` (and ``qipai play --bots``).
BOT_KINDS: dict[str, Callable[[random.Random], Bot]] = {
    "greedy": GreedyBot,
    "random": RandomBot,
}


def make_bots(bots: str | Sequence[str | Bot], n: int, seed: int | None,
              ruleset: Any = None) -> list[Bot]:
    """One bot per seat.

    Args:
        bots: a bot name for every seat (``"greedy"``, ``"random"``), or one
            name or bot object per seat.
        n: seats at the table.
        seed: seeds each named bot's RNG (seat by seat); None: unseeded.
        ruleset: if given, every bot is seated at it (:func:`seat_bots`),
            ready to ``act``; else :func:`run_to_end` seats them.

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
    if ruleset is not None:
        seat_bots(ruleset, out)
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

    Each bot is seated first (:func:`seat_bots`), then asked
    ``act(view, legal)`` for its seat's decisions (the view without its
    event stream; None for a ``blind`` bot), the lowest pending seat first.

    Returns: the number of decisions applied.

    Raises:
        RuntimeError: nobody has a decision though the hand is not over, or
            the hand takes more than ``max_steps`` decisions (engine bugs).
    """
    seat_bots(table.ruleset, bots)
    steps = 0
    state = table.state  # read directly: this loop runs a few hundred times a hand
    view = table.view
    acts = [(b.act, getattr(b, "blind", False)) for b in bots]
    while state.result is None:
        pending = state.pending
        if not pending:
            raise RuntimeError("the hand is not over but no seat has a decision")
        seat = min(pending)  # table.to_decide()[0]
        act, blind = acts[seat]
        legal = list(pending[seat])
        table.apply(act(None if blind else view(seat, events=False), legal))
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
