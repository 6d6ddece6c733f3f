"""Zipai groups and the 胡数 search: which splits win, and for how many 胡.

Rule source: docs/variants/guilin-zipai.md, "Cards and groups", "Winning"
(D-ZP5, D-ZP9) and "胡数" (the table).

Kinds are ints 0–19 (``x1``–``x10`` = 0–9, ``d1``–``d10`` = 10–19, see
:mod:`qipai.families.zipai.cards`).  A *count vector* is 20 ints, one per
kind, holding the **concealed** cards only: table melds are never in it.

Valid 3-card groups (一坒, §1), as multisets:

* three identical (a 坎 in hand, a 碰 made with the winning card);
* ``x1 x2 x3`` 一二三, ``d1 d2 d3`` 壹贰叁 (runs with a 胡数 value);
* ``x2 x7 x10`` 二七十, ``d2 d7 d10`` 贰柒拾;
* one number in both cases, 2 + 1 (大大小 ``d5 d5 x5``, 小小大 ``x5 x5 d5``);
* three consecutive numbers of one case, no wrap (``x4 x5 x6``; never
  ``x9 x10 x1``).

Group ids used by :func:`group_hu` and in :class:`Split` (pinyin, as on the
variant page and :class:`qipai.core.model.Meld`): ``kan`` 坎, ``peng`` 碰,
``sao`` 扫, ``guosao`` 过扫, ``kaizhao`` 开招, ``saochuan`` 扫穿 (identical
cards), ``chi`` 吃 (a table meld of non-identical cards), ``bi`` 一坒 (any
valid group of non-identical cards in the hand: runs, 一二三, 二七十 and
大大小/小小大 — the source's word for a valid group, §1; it names no kind of
them apart), ``dui`` 一对 (the pair).

The search (:func:`best_split`) is the hot path of every zipai win check
and wait list.  A 坎 never takes part in it (it is a fixed group), so every
searched kind holds at most 2 cards, 3 for the one kind a 碰 can be made
of.  The remaining cards are packed into one int, 3 bits per kind: a count
0–3 in the low two bits under a guard bit that is always set.  Taking a group
out is one subtraction; a kind that runs short clears its own guard bit (it
cannot borrow from its neighbour), so legality is one mask comparison.  The
best 胡数 of each packed state is memoised across calls (the state says
everything: which cards remain, and whether the pair is still to come).

The plain brute-force twin is :mod:`qipai.families.zipai.reference` (the
test oracle): it tries every partition of the cards.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from msgspec import Struct

from qipai.core.errors import BadCards
from qipai.core.model import Meld

__all__ = [
    "GROUP_HU",
    "Group",
    "Split",
    "best_split",
    "group_hu",
    "hand_hu",
    "meld_hu",
    "valid_group",
    "waits",
]

N_KINDS = 20
COPIES = 4

Group = tuple[str, tuple[int, ...]]
"""``(group id, sorted kinds)``, e.g. ``("kan", (18, 18, 18))``."""

# --------------------------------------------------------------------------
# The 胡数 table (§5)

GROUP_HU: dict[str, tuple[int, int]] = {
    "peng": (3, 1),
    "kan": (6, 3),
    "sao": (6, 3),
    "guosao": (6, 3),
    "kaizhao": (9, 6),
    "saochuan": (12, 9),
    "yiersan": (6, 3),  # 壹贰叁 6 / 一二三 3
    "erqishi": (6, 3),  # 贰柒拾 6 / 二七十 3
}
"""§5: row id -> (胡数 if big 大写, 胡数 if small 小写).  Any group not in a
row (other runs, 大大小/小小大, the pair) is worth 0."""

_IDENTICAL_SIZE = {"peng": 3, "kan": 3, "sao": 3, "guosao": 3, "kaizhao": 4, "saochuan": 4}

# Non-identical groups that score: sorted kinds -> 胡数.
_RUN_HU: dict[tuple[int, ...], int] = {
    (0, 1, 2): GROUP_HU["yiersan"][1],
    (10, 11, 12): GROUP_HU["yiersan"][0],
    (1, 6, 9): GROUP_HU["erqishi"][1],
    (11, 16, 19): GROUP_HU["erqishi"][0],
}


def _value(row: str, kind: int) -> int:
    big, small = GROUP_HU[row]
    return big if kind >= 10 else small


_PENG = [_value("peng", k) for k in range(N_KINDS)]
_KAN = [_value("kan", k) for k in range(N_KINDS)]
_KAIZHAO = [_value("kaizhao", k) for k in range(N_KINDS)]
_SAOCHUAN = [_value("saochuan", k) for k in range(N_KINDS)]


def _non_identical_groups() -> list[tuple[int, int, int]]:
    """Every valid group of non-identical cards, as sorted kinds (§1)."""
    out = []
    for base in (0, 10):
        for i in range(8):  # runs n, n+1, n+2 for n = 1..8: no wrap
            out.append((base + i, base + i + 1, base + i + 2))
        out.append((base + 1, base + 6, base + 9))  # 二七十 / 贰柒拾
    for k in range(10):  # one number, both cases, 2 + 1
        out.append((k, k, k + 10))
        out.append((k, k + 10, k + 10))
    return out


_VALID: frozenset[tuple[int, ...]] = frozenset(
    _non_identical_groups() + [(k, k, k) for k in range(N_KINDS)]
)


# --------------------------------------------------------------------------
# Single groups


def valid_group(cards: Iterable[int]) -> bool:
    """True iff ``cards`` (3 kinds, any order) form a valid 3-card group (§1)."""
    return tuple(sorted(cards)) in _VALID


def group_hu(kind: str, cards: Iterable[int]) -> int:
    """胡数 of one group (§5).

    Args:
        kind: ``peng kan sao guosao`` (3 identical), ``kaizhao saochuan``
            (4 identical), ``chi`` or ``bi`` (a valid group of
            non-identical cards: 吃 meld or 一坒 in hand — the same value),
            or ``dui`` (一对, 2 identical, worth 0).
        cards: the group's kinds, any order.

    Returns:
        The 胡数: identical groups by the table and the cards' case; 一二三
        / 二七十 3, 壹贰叁 / 贰柒拾 6, any other group 0.

    Raises:
        BadCards: unknown ``kind``, or cards that do not make that group.
    """
    cs = tuple(sorted(cards))
    size = _IDENTICAL_SIZE.get(kind)
    if size is not None:
        if len(cs) != size or cs[0] != cs[-1] or not 0 <= cs[0] < N_KINDS:
            raise BadCards(f"a {kind} is {size} identical cards, got {list(cs)}")
        return _value(kind, cs[0])
    if kind == "chi" or kind == "bi":
        if cs not in _VALID or cs[0] == cs[2]:
            raise BadCards(f"a {kind} is a valid group of non-identical cards, got {list(cs)}")
        return _RUN_HU.get(cs, 0)
    if kind == "dui":
        if len(cs) != 2 or cs[0] != cs[1] or not 0 <= cs[0] < N_KINDS:
            raise BadCards(f"a pair is 2 identical cards, got {list(cs)}")
        return 0
    raise BadCards(f"unknown group kind {kind!r}")


def meld_hu(meld: Meld) -> int:
    """胡数 of a table meld (``chi peng sao guosao kaizhao saochuan``).

    A 吃 meld scores by its cards (一二三 3 … ); each 下伙 group is a meld of
    its own and scores the same way.
    """
    return group_hu(meld.kind, meld.cards)


# --------------------------------------------------------------------------
# Packed states
#
# Field j (bits 3j .. 3j+2) holds kind j's count in bits 0–1 and a guard in
# bit 2; field 20 holds the "pair still to come" flag.  Every field of a
# legal state has its guard set.

_FLAG = 1 << 60
_GUARDS = sum(4 << (3 * j) for j in range(N_KINDS + 1))
_COUNT_BITS = sum(3 << (3 * j) for j in range(N_KINDS))


def _unit(k: int) -> int:
    return 1 << (3 * k)


def _transitions(k: int) -> list[tuple[int, int, str, tuple[int, ...]]]:
    """Every way to take a group containing kind ``k`` when ``k`` is the
    lowest kind left: ``(delta, 胡数, group id, cards)``.

    Since no lower kind is left, each group holding ``k`` has ``k`` as its
    lowest card: the pair, the 碰 (count 3 only arises from a pair in hand
    plus the winning card), both-case groups with the big card of the same
    number, runs upward, and 二七十 from the 2.
    """
    out: list[tuple[int, int, str, tuple[int, ...]]] = []
    u = _unit(k)
    out.append((2 * u + _FLAG, 0, "dui", (k, k)))
    out.append((3 * u, _PENG[k], "peng", (k, k, k)))
    for g in _non_identical_groups():
        if g[0] == k:
            delta = sum(_unit(j) for j in g)
            out.append((delta, _RUN_HU.get(g, 0), "bi", g))
    # Try the scoring groups first: the first optimum found is the one
    # reported, so ties go the same way every time.
    out.sort(key=lambda t: -t[1])
    return out


_TRANS = [_transitions(k) for k in range(N_KINDS)]
_TRANS_FAST = [tuple((d, h) for d, h, _, _ in ts) for ts in _TRANS]

_MEMO: dict[int, int] = {}
_MEMO_LIMIT = 1 << 16


def _best(s: int) -> int:
    """Most 胡数 of the packed state ``s`` split into groups (and the pair
    if flagged), or -1 if it does not split."""
    r = _MEMO.get(s)
    if r is not None:
        return r
    t = s & _COUNT_BITS
    if not t:
        return -1 if s & _FLAG else 0
    k = ((t & -t).bit_length() - 1) // 3
    best = -1
    for delta, hu in _TRANS_FAST[k]:
        n = s - delta
        if n & _GUARDS == _GUARDS:
            v = _best(n)
            if v >= 0 and v + hu > best:
                best = v + hu
    _MEMO[s] = best
    return best


def _walk(s: int, groups: list[Group]) -> tuple[int, int] | None:
    """Append the groups of an optimal split of ``s``; return the pair."""
    pair = None
    target = _best(s)
    while s & _COUNT_BITS:
        t = s & _COUNT_BITS
        k = ((t & -t).bit_length() - 1) // 3
        for delta, hu, gid, cards in _TRANS[k]:
            n = s - delta
            if n & _GUARDS == _GUARDS:
                v = _best(n)
                if v >= 0 and v + hu == target:
                    if gid == "dui":
                        pair = (k, k)
                    else:
                        groups.append((gid, cards))
                    s = n
                    target = v
                    break
        else:  # pragma: no cover - _best(s) >= 0 guarantees a step
            raise AssertionError("no optimal step")
    return pair


# --------------------------------------------------------------------------
# The hand


class Split(Struct, frozen=True):
    """The best split of a winning hand.

    Attributes:
        groups: the hand's groups ``(id, sorted kinds)``, sorted by cards:
            ``kan`` (a 坎 of the hand, or a pair completed by one's own
            card), ``peng`` (a pair completed by another's card),
            ``kaizhao`` (D-ZP9: a 坎 completed by another's card),
            ``saochuan`` (a 坎 completed by one's own card), ``bi`` (一坒).
        pair: the pair (2 identical kinds) or None.
        hu: 胡数 of these groups (table melds not included).
    """

    groups: tuple[Group, ...]
    pair: tuple[int, int] | None
    hu: int


def _checked_counts(counts: Sequence[int]) -> list[int]:
    if len(counts) != N_KINDS:
        raise BadCards(f"a zipai count vector has 20 entries, got {len(counts)}")
    h = list(counts)
    for k, n in enumerate(h):
        if n == 4:
            raise BadCards(
                f"four identical cards (kind {k}) in the hand: they are laid down as 扫穿"
            )
        if not 0 <= n <= 3:
            raise BadCards(f"kind {k} held {n} times; a count is 0..3")
    return h


class _Hand:
    """A hand prepared for the search: its 坎 taken out, the rest packed."""

    __slots__ = ("base", "h", "kan_hu", "kans", "n")

    def __init__(self, counts: Sequence[int]) -> None:
        try:
            b = bytes(counts)
        except (TypeError, ValueError):
            b = b""
        if len(b) == N_KINDS and not b.strip(_COUNTS_0_TO_3):
            self._from_chunks(b)
            return
        h = _checked_counts(counts)
        self.h = h
        self.kans = [k for k in range(N_KINDS) if h[k] == 3]
        self.kan_hu = sum(_KAN[k] for k in self.kans)
        base = _GUARDS
        n = 0
        for k in range(N_KINDS):
            c = h[k]
            if c and c < 3:
                base += c << (3 * k)
                n += c
        self.base = base
        self.n = n

    def _from_chunks(self, b: bytes) -> None:
        """The same fields as the loop of ``__init__``, from four look-ups of
        five kinds each (counts already known to be 0..3)."""
        if not _CHUNKS:
            _build_chunks()
        c0 = _CHUNKS[0][b[0:5]]
        c1 = _CHUNKS[1][b[5:10]]
        c2 = _CHUNKS[2][b[10:15]]
        c3 = _CHUNKS[3][b[15:20]]
        self.h = b  # read by index only, like the list of the plain path
        self.kans = c0[2] + c1[2] + c2[2] + c3[2]
        self.kan_hu = c0[3] + c1[3] + c2[3] + c3[3]
        self.base = _GUARDS + c0[0] + c1[0] + c2[0] + c3[0]
        self.n = c0[1] + c1[1] + c2[1] + c3[1]

    def options(self, card: int | None, self_drawn: bool) -> list[tuple[int, int, int]]:
        """The readings to search: ``(fixed 胡数, packed rest, replaced)``.

        ``fixed`` is the 胡数 of the groups outside the search; ``replaced``
        is -1, or the kind whose 坎 became four (``saochuan`` if
        ``self_drawn`` else ``kaizhao``), or ``20 + kind`` for a pair forced
        into a 坎 by one's own card.  The packed rest is -1 if its size
        cannot split (3k+1 cards).
        """
        if card is None:
            return [(self.kan_hu, _flagged(self.base, self.n), -1)]
        if not 0 <= card < N_KINDS:
            raise BadCards(f"card kind {card} is out of range 0..19")
        c = self.h[card]
        u = 1 << (3 * card)
        if c == 3:
            four = self.kan_hu - _KAN[card]
            if self_drawn:
                # One's own 4th card of a 坎 is a compulsory 扫穿 (or, in a
                # dealt hand, an initial 扫穿): it cannot join another group
                # (D-ZP15).
                return [(four + _SAOCHUAN[card], _flagged(self.base, self.n), card)]
            # D-ZP9: the 坎 stays whole and the card joins a group, or the
            # four is laid as 开招.  Ties go to the first (坎 kept).
            return [
                (self.kan_hu, _flagged(self.base + u, self.n + 1), -1),
                (four + _KAIZHAO[card], _flagged(self.base, self.n), card),
            ]
        if c == 2 and self_drawn:
            # One's own card on a pair: a compulsory 扫 (or a 坎 of a dealt
            # hand), worth a 坎 (D-ZP5); never split (D-ZP15).
            return [(self.kan_hu + _KAN[card], _flagged(self.base - 2 * u, self.n - 2), 20 + card)]
        return [(self.kan_hu, _flagged(self.base + u, self.n + 1), -1)]


_COUNTS_0_TO_3 = bytes(range(4))
# _CHUNKS[i][bytes of kinds 5i..5i+4] = (packed counts 1–2, their number,
# the 坎 kinds, their 胡数): the pieces _Hand adds up.
_CHUNKS: list[dict[bytes, tuple[int, int, list[int], int]]] = []


_CHUNKS_LOCK = threading.Lock()


def _build_chunks() -> None:
    """Fill :data:`_CHUNKS` once, thread-safe: built into a local list under
    a lock, then published by one slice assignment (a reader sees no chunk
    or all four, each complete)."""
    with _CHUNKS_LOCK:
        if not _CHUNKS:
            _CHUNKS[:] = _chunks()


def _chunks() -> list[dict[bytes, tuple[int, int, list[int], int]]]:
    chunks = []
    for pos in range(4):
        table = {}
        for code in range(4 ** 5):
            cs = [(code >> (2 * i)) & 3 for i in range(5)]
            packed = n = kan_hu = 0
            kans = []
            for i, c in enumerate(cs):
                k = pos * 5 + i
                if c == 3:
                    kans.append(k)
                    kan_hu += _KAN[k]
                elif c:
                    packed += c << (3 * k)
                    n += c
            table[bytes(cs)] = (packed, n, kans, kan_hu)
        chunks.append(table)
    return chunks


def _flagged(s: int, n: int) -> int:
    r = n % 3
    if r == 1:
        return -1
    return s + _FLAG if r == 2 else s


def _prune() -> None:
    if len(_MEMO) > _MEMO_LIMIT:
        _MEMO.clear()


def _options_hu(opts: list[tuple[int, int, int]]) -> tuple[int, int]:
    """Best total 胡数 over the readings and the index of the reading (-1)."""
    best = -1
    which = -1
    for i, (fixed, s, _) in enumerate(opts):
        if s < 0:
            continue
        v = _best(s)
        if v >= 0 and v + fixed > best:
            best = v + fixed
            which = i
    return best, which


def hand_hu(counts: Sequence[int], card: int | None = None, self_drawn: bool = True) -> int:
    """胡数 of :func:`best_split` without building the split; -1 if none."""
    _prune()
    return _options_hu(_Hand(counts).options(card, self_drawn))[0]


def best_split(
    counts: Sequence[int], card: int | None = None, self_drawn: bool = True
) -> Split | None:
    """The split of the hand plus the winning card with the most 胡数 (§4).

    All the cards must go into valid 3-card groups and at most one pair (2
    identical cards).  Rules applied:

    * a 坎 (three identical in ``counts``) is a fixed group, 坎 6/3, never
      split or combined otherwise;
    * ``card`` the 4th of a 坎, another player's card (``self_drawn``
      False): D-ZP9 — either the 坎 stays whole and the card joins another
      group, or the four score as 开招 9/6; the better reading is used (on a
      tie, the 坎 kept whole);
    * ``card`` the 4th of a 坎, one's own card: that is a compulsory 扫穿
      (12/9) and the four stay together;
    * ``card`` on a pair of the hand: from another player it may make a 碰
      (3/1) or join any other group (碰 is optional); one's own card makes a
      compulsory 扫 (or, for the dealer's 亮张 in 天胡, a 坎 of the dealt
      hand): the three stay together and score as 坎 6/3 (D-ZP5);
    * 一二三/二七十 score 3, 壹贰叁/贰柒拾 6, every other group and the
      pair 0.

    Args:
        counts: the concealed hand **before** the winning card (20 counts).
        card: the winning card, or None to test the hand alone (D-ZP4, after
            a 扫/扫穿 on one's own draw).
        self_drawn: whether ``card`` is the player's own (his draw, or the
            天胡 亮张) rather than another player's discard or draw.

    Returns:
        The best :class:`Split` (胡数 of the hand's groups only; the caller
        adds the table melds' :func:`meld_hu`), or None if the cards do not
        split.  The result depends only on the counts: the same for any
        order of the same cards.

    Raises:
        BadCards: not 20 counts, a count outside 0..3 (four identical cards
            in the hand are laid down as 扫穿 and never reach here), or a
            card kind outside 0..19.
    """
    _prune()
    hand = _Hand(counts)
    opts = hand.options(card, self_drawn)
    best, which = _options_hu(opts)
    if which < 0:
        return None
    _, s, replaced = opts[which]
    groups: list[Group] = []
    for k in hand.kans:
        if k == replaced:
            gid = "saochuan" if self_drawn else "kaizhao"
            groups.append((gid, (k, k, k, k)))
        else:
            groups.append(("kan", (k, k, k)))
    if replaced >= 20:
        k = replaced - 20
        groups.append(("kan", (k, k, k)))
    pair = _walk(s, groups)
    groups.sort(key=lambda g: g[1])
    return Split(tuple(groups), pair, best)


# --------------------------------------------------------------------------
# Waits


def waits(
    counts: Sequence[int],
    melds: Sequence[Meld] = (),
    min_hu: int = 10,
    *,
    drawn: bool = False,
) -> list[int]:
    """The kinds another player's card may be for this hand to win on it.

    A kind ``c`` is listed when fewer than 4 of it are visible to the player
    (hand + melds) and either

    * ``best_split(counts, c, self_drawn=False)`` exists and its 胡数 plus
      the melds' 胡数 reaches ``min_hu``; or
    * (D-ZP9) ``c`` is the 4th card of a table 扫/过扫 — or, with ``drawn``
      (the card drawn from the stock by another player), of a table 碰 —
      laid as a 开招, the hand alone splits, and the 胡数 with that meld
      counted as 开招 reaches ``min_hu``.

    The 胡数 is that of a win on another player's card.  A win on one's own
    draw may be worth more (a pair completed counts 坎 instead of 碰, a 坎
    completed is a 扫穿 instead of a 开招), so a kind missing here for want
    of 胡数 can still win by 自摸.

    Args:
        counts: the concealed hand (20 counts).
        melds: the player's table melds.
        min_hu: the minimum 胡数 (``hu_scale`` threshold, 10 or 15).
        drawn: the card is another player's draw (平胡), not a discard.

    Returns:
        Sorted kinds.

    Raises:
        BadCards: as :func:`best_split`, or a meld that is not a valid group,
            or more than 4 copies of a kind in hand and melds.
    """
    _prune()
    hand = _Hand(counts)
    visible = list(hand.h)
    meld_total = 0
    upgrade = [0] * N_KINDS  # extra 胡数 of a table meld made 开招 by kind c
    for m in melds:
        meld_total += meld_hu(m)
        for k in m.cards:
            visible[k] += 1
        k = m.cards[0]
        if m.kind in ("sao", "guosao") or (drawn and m.kind == "peng"):
            upgrade[k] = max(upgrade[k], _KAIZHAO[k] - meld_hu(m))
    for k, n in enumerate(visible):
        if n > COPIES:
            raise BadCards(f"kind {k} is held {n} times in hand and melds")
    alone = -2  # not computed yet
    out = []
    for c in range(N_KINDS):
        if visible[c] >= COPIES:
            continue
        best = _options_hu(hand.options(c, False))[0]
        if best >= 0:
            best += meld_total
        if upgrade[c]:
            if alone == -2:
                alone = _options_hu(hand.options(None, False))[0]
            if alone >= 0:
                best = max(best, alone + meld_total + upgrade[c])
        if best >= 0 and best >= min_hu:
            out.append(c)
    return out
