"""Scoring helpers shared by the mahjong variants (桂林麻将, 广西麻将).

What every mahjong variant's win check and settlement does the same way:

- input checks — a well-formed meld, the hand size, no fifth copy
  (docs/variants/mahjong-common.md: such input is rejected with a clear error), the win's
  context (``how``, seats, flags that contradict ``how``) and a finished
  hand's consistency (one zimo winner, several winners on one tile);
- views of a winning hand — the concealed counts, every tile held
  (:func:`holding`), one suit / all honors;
- waits of any win-shape test;
- D-M4 — the reading that pays the winner most (:func:`best_reading`);
- settlement plumbing — standing relations read from a :class:`HandEnd`,
  every winner evaluated, and the pairwise :class:`Ledger` that sums
  transfers per (payer, payee).

Tiles are kinds 0–33 (:mod:`qipai.families.mahjong.tiles`); "counts" is a
list of 34 ints holding the concealed tiles **with** the winning tile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import msgspec

from qipai.core.checks import check_win_context
from qipai.core.errors import BadCards
from qipai.core.model import (
    HandEnd, Meld, Payment, Term, WinClaim, WinEval, WinReading, bracket, why_total,
)
from qipai.families.mahjong import shapes
from qipai.families.mahjong.tiles import N_KINDS, TILES, suit_of

__all__ = [
    "HOWS",
    "KNOWN_FLAGS",
    "KONGS",
    "MELD_SIZES",
    "NAMES",
    "SHAPE_RANK",
    "Ledger",
    "Reading",
    "all_honors",
    "as_wineval",
    "best_reading",
    "check_context",
    "check_counts",
    "check_hand_end",
    "check_meld",
    "concealed_counts",
    "evaluate_winners",
    "holding",
    "one_suit",
    "ordered",
    "reading_groups",
    "partners",
    "relation_pairs",
    "waits_for",
    "win_readings",
]

T = TypeVar("T")

#: How a mahjong hand is won (the case format's ``win``: ``how``).
HOWS = ("zimo", "dianpao", "qianggang")
#: Context flags a win may carry (the case format's ``win``: ``flags``).
KNOWN_FLAGS = frozenset(
    {"gangshanghua", "gangshangpao", "haidi", "haidipao", "quanqiupao", "tianhu", "dihu", "renhu"}
)
#: Tiles in each meld kind (docs/variants/mahjong-common.md, "A hand, step by step").
MELD_SIZES = {"chi": 3, "peng": 3, "minggang": 4, "jiagang": 4, "angang": 4}
#: The three kongs.
KONGS = frozenset({"minggang", "jiagang", "angang"})
#: D-M4 last tie-break: a special shape (七对 family, 烂牌, 十三幺) over
#: 字一色's any-shape reading over the standard one.
SHAPE_RANK = {"standard": 0, "ziyise": 1, "qidui": 2, "lanpai": 2, "shisanyao": 2}


#: Chinese names of the breakdown ids both mahjong variants use (a variant's
#: ``Manifest.names`` adds its own and may rename).
NAMES = {
    "pinghu": "平胡", "pengpenghu": "碰碰胡", "qingyise": "清一色", "ziyise": "字一色",
    "quanqiuren": "全求人", "menqing": "门清", "qianggang": "抢杠", "gangshanghua": "杠上花",
    "gangshangpao": "杠上炮", "tianhu": "天胡", "dihu": "地胡", "hubao": "互包",
    "minggang": "点杠", "jiagang": "蓄杠", "angang": "暗杠", "hu": "胡", "zimo": "自摸",
}


# --------------------------------------------------------------------------
# A win's reading


class Reading(msgspec.Struct, frozen=True):
    """What every variant's evaluation of a win holds: the reading kept (D-M4).

    A variant subclasses it with what its values need.

    Attributes:
        seat: the winner.
        how: ``"zimo"``, ``"dianpao"`` or ``"qianggang"``.
        from_seat: the discarder / robbed kong's maker (None for zimo).
        shape: the reading — ``"standard"`` or a special shape of
            :data:`SHAPE_RANK` (``"qidui"`` is the whole 七对 family,
            ``"ziyise"`` 字一色's any-shape reading).
        value_patterns: value pattern ids of the reading (the variant page's order).
        multipliers: multiplier ids applied.
        patterns: every id the settlement applies (the case format's ``win`` →
            ``patterns``).
    """

    seat: int
    how: str
    from_seat: int | None
    shape: str
    value_patterns: tuple[str, ...]
    multipliers: tuple[str, ...]
    patterns: tuple[str, ...]

    def to_wineval(self) -> WinEval:
        """The core :class:`WinEval` answer of this win."""
        return WinEval(wins=True, patterns=self.patterns)


def as_wineval(reading: Reading | None) -> WinEval:
    """``reading`` as the core :class:`WinEval`; ``wins=False`` for None."""
    return WinEval(wins=False) if reading is None else reading.to_wineval()


# --------------------------------------------------------------------------
# Input checks


def check_meld(meld: Meld) -> None:
    """Raise :class:`BadCards` unless ``meld`` is a well-formed mahjong meld.

    ``chi``: three consecutive tiles of one suit; ``peng``: three of a kind;
    ``minggang``/``jiagang``/``angang``: four of a kind.
    """
    size = MELD_SIZES.get(meld.kind)
    if size is None:
        raise BadCards(f"unknown meld kind {meld.kind!r}: expected one of {', '.join(MELD_SIZES)}")
    cards = sorted(meld.cards)
    in_range = all(0 <= c < N_KINDS for c in cards)

    def text() -> str:  # for the messages only
        return TILES.format(cards) if in_range else repr(meld.cards)

    if len(cards) != size or not in_range:
        raise BadCards(f"a {meld.kind} meld has {size} tiles, got {text()}")
    if meld.kind == "chi":
        ok = (
            suit_of(cards[0]) < 3
            and suit_of(cards[0]) == suit_of(cards[2])
            and cards[1] == cards[0] + 1
            and cards[2] == cards[0] + 2
        )
        if not ok:
            raise BadCards(f"a chi is three consecutive tiles of one suit, got {text()}")
    elif len(set(cards)) != 1:
        raise BadCards(f"a {meld.kind} is {size} tiles of one kind, got {text()}")


def check_counts(counts: Sequence[int], melds: Sequence[Meld]) -> None:
    """Size, range and fifth-copy check of a concealed part plus melds.

    Args:
        counts: 34 counts of the concealed tiles with the winning tile:
            ``14 - 3 × len(melds)`` tiles.
        melds: the winner's melds (each checked by :func:`check_meld`).

    Raises:
        BadCards: naming what is wrong.
    """
    if len(counts) != N_KINDS:
        raise BadCards(f"counts must have {N_KINDS} entries, got {len(counts)}")
    if any(c < 0 for c in counts):
        raise BadCards("counts must not be negative")
    if len(melds) > 4:
        raise BadCards(f"a hand has at most 4 melds, got {len(melds)}")
    for m in melds:
        check_meld(m)
    want = 14 - 3 * len(melds)
    if sum(counts) != want:
        raise BadCards(
            f"with {len(melds)} meld(s) the concealed part and the winning tile are "
            f"{want} tiles, got {sum(counts)}"
        )
    total = list(counts)
    for m in melds:
        for c in m.cards:
            total[c] += 1
    for kind, n in enumerate(total):
        if n > 4:
            raise BadCards(
                f"the hand, winning tile and melds hold {n} copies of {TILES.token(kind)}; "
                "there are only 4"
            )


# Per flag: (the ``how`` it needs, who may win with it, what it means).  Who:
# "dealer" / "non-dealer"; "from dealer" adds that the card is the dealer's.
_FLAG_RULES: dict[str, tuple[str, str, str]] = {
    "gangshanghua": ("zimo", "", "gangshanghua (杠上花) is a zimo on one's own kong replacement"),
    "gangshangpao": ("dianpao", "", "gangshangpao (杠上炮) is a win on a discard (how = dianpao)"),
    "haidi": ("zimo", "", "haidi (海底) is a zimo on the wall's last tile"),
    "haidipao": ("dianpao", "", "haidipao (海底炮) is a win on the last discard (how = dianpao)"),
    "quanqiupao": ("dianpao", "", "quanqiupao (全求人反冲) is a win on a discard (how = dianpao)"),
    "tianhu": ("zimo", "dealer", "tianhu (天胡) is the dealer's zimo on the dealt tiles"),
    "dihu": ("zimo", "non-dealer", "dihu (地胡) is a non-dealer's zimo on his first draw"),
    "renhu": (
        "dianpao",
        "non-dealer from dealer",
        "renhu (人胡) is a non-dealer's win on the dealer's first discard",
    ),
}


def check_context(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None,
    n_players: int,
    checked: Iterable[str] = (),
) -> None:
    """Raise :class:`BadCards` if a win's context is impossible.

    Always checked: ``how`` is one of :data:`HOWS`; the winner and the dealer
    are seats; a zimo has no other ``from_seat``, a discard / robbed-kong win
    has another seat as ``from_seat``; every flag is one of
    :data:`KNOWN_FLAGS`.  For each flag named in ``checked`` that the claim
    carries, also that it fits ``how`` and the seats (杠上花 by zimo with a kong
    among the melds, 杠上炮/海底炮/全求人反冲 on a discard, 海底 by zimo, 天胡 the
    dealer's zimo, 地胡 a non-dealer's zimo, 人胡 a non-dealer on the dealer's
    discard); a variant names the flags it gives a meaning to.
    """
    check_win_context(claim, how, HOWS, dealer, from_seat, n_players, KNOWN_FLAGS)
    flags = set(claim.flags)
    for flag in sorted(flags & set(checked)):
        need, who, meaning = _FLAG_RULES[flag]
        dealer_ok = {
            "": True,
            "dealer": claim.seat == dealer,
            "non-dealer": claim.seat != dealer,
            "non-dealer from dealer": claim.seat != dealer and from_seat == dealer,
        }[who]
        if how != need or not dealer_ok:
            raise BadCards(meaning)
    if "gangshanghua" in flags and "gangshanghua" in set(checked):
        if not any(m.kind in KONGS for m in claim.melds):
            raise BadCards("gangshanghua (杠上花) needs a kong among the winner's melds")


# --------------------------------------------------------------------------
# Views of a winning hand


def concealed_counts(claim: WinClaim) -> list[int]:
    """34 counts of ``claim.hand`` plus ``claim.tile`` (the concealed part).

    Raises:
        BadCards: no winning tile, or a kind outside 0–33.
    """
    if claim.tile is None:
        raise BadCards(f"seat {claim.seat}'s win has no winning tile")
    out = [0] * N_KINDS
    for c in (*claim.hand, claim.tile):
        if not 0 <= c < N_KINDS:
            raise BadCards(f"tile kind {c} is out of range 0..33")
        out[c] += 1
    return out


def holding(claim: WinClaim) -> list[int]:
    """Every tile of the winning hand: concealed, the winning tile and each
    meld's tiles (a kong gives 4), as a list of kinds."""
    tiles = list(claim.hand)
    if claim.tile is not None:
        tiles.append(claim.tile)
    for m in claim.melds:
        tiles.extend(m.cards)
    return tiles


def all_honors(counts: Sequence[int], melds: Sequence[Meld]) -> bool:
    """Every tile, melds included, is an honor (字一色)."""
    return not any(counts[:27]) and all(c >= 27 for m in melds for c in m.cards)


def one_suit(counts: Sequence[int], melds: Sequence[Meld]) -> bool:
    """Every tile, melds included, is of one suit and none is an honor (清一色)."""
    suits = {suit_of(k) for k in range(N_KINDS) if counts[k]}
    suits |= {suit_of(c) for m in melds for c in m.cards}
    return len(suits) == 1 and 3 not in suits


def ordered(ids: Iterable[str], order: tuple[str, ...]) -> tuple[str, ...]:
    """The ids of ``ids`` that occur in ``order``, in that order, once each."""
    got = set(ids)
    return tuple(i for i in order if i in got)


def waits_for(
    hand: Sequence[int],
    melds: Sequence[Meld],
    is_win_shape: Callable[[list[int], Sequence[Meld]], bool],
) -> list[int]:
    """The kinds that complete ``hand`` with ``melds`` under ``is_win_shape``.

    Args:
        hand: the concealed kinds, ``13 - 3 × len(melds)`` tiles.
        melds: the melds.
        is_win_shape: the variant's shape test ``(counts with the tile, melds)``.

    Returns:
        Sorted distinct kinds; a kind whose four copies are all in the hand
        and melds is not a wait (the case format's ``waits``).

    Raises:
        BadCards: a kind out of range, a bad meld, a wrong size, a fifth copy.
    """
    counts = [0] * N_KINDS
    for c in hand:
        if not 0 <= c < N_KINDS:
            raise BadCards(f"tile kind {c} is out of range 0..33")
        counts[c] += 1
    held = list(counts)
    for m in melds:
        check_meld(m)
        for c in m.cards:
            held[c] += 1
    want = 13 - 3 * len(melds)
    if sum(counts) != want:
        raise BadCards(
            f"with {len(melds)} meld(s) a waiting hand has {want} tiles, got {sum(counts)}"
        )
    for kind, n in enumerate(held):
        if n > 4:
            raise BadCards(
                f"the hand and melds hold {n} copies of {TILES.token(kind)}; there are only 4"
            )
    return shapes.waits(counts, is_win=lambda c: is_win_shape(c, melds), held=held)


def best_reading(
    readings: Iterable[T],
    total: Callable[[T], int],
    value: Callable[[T], int],
    shape: Callable[[T], str],
) -> T | None:
    """D-M4: the reading that pays the winner most.

    Ties go to the larger pattern value before multipliers, then to a special
    shape over the standard one (:data:`SHAPE_RANK`), then to the first given.

    Args:
        readings: the evaluated readings of one hand.
        total: what a reading pays the winner in all.
        value: its pattern value before multipliers.
        shape: its shape id (a key of :data:`SHAPE_RANK`).

    Returns:
        The best reading, or None if there is none.
    """
    best: tuple[tuple[int, int, int], T] | None = None
    for r in readings:
        key = (total(r), value(r), SHAPE_RANK[shape(r)])
        if best is None or key > best[0]:
            best = (key, r)
    return None if best is None else best[1]


# --------------------------------------------------------------------------
# Settlement plumbing


def check_hand_end(end: HandEnd, title: str) -> None:
    """Raise :class:`BadCards` unless ``end`` is a consistent finished hand.

    Four seats; at least one winner, no seat twice; a zimo has one winner;
    the winners of one discard / robbed kong win on the same tile; no fifth
    copy across the winners' hands and melds, the winning tile (one physical
    tile, however many win on it) and the stock.

    Args:
        end: the finished hand.
        title: the variant's name for messages (``"桂林麻将"``).
    """
    n = end.n_players
    if n != 4:
        raise BadCards(f"{title} is played by 4 seats, got n_players={n}")
    if not end.winners:
        raise BadCards("a settlement needs at least one winner")
    seats = [w.seat for w in end.winners]
    if len(set(seats)) != len(seats):
        raise BadCards(f"a seat is listed twice among the winners {seats}")
    if end.how == "zimo" and len(seats) != 1:
        raise BadCards(f"a zimo has one winner, got {len(seats)}")
    if end.how != "zimo":
        tiles = {w.tile for w in end.winners}
        if len(tiles) != 1:
            raise BadCards("the winners of one discard / robbed kong must win on the same tile")
    seen = [0] * N_KINDS
    tiles_once: set[int] = set()
    for w in end.winners:
        for c in (*w.hand, *(c for m in w.melds for c in m.cards)):
            if not 0 <= c < N_KINDS:
                raise BadCards(f"tile kind {c} is out of range 0..33")
            seen[c] += 1
        if w.tile is not None:
            tiles_once.add(w.tile)
    for c in (*tiles_once, *end.stock):
        if not 0 <= c < N_KINDS:
            raise BadCards(f"tile kind {c} is out of range 0..33")
        seen[c] += 1
    for kind, k in enumerate(seen):
        if k > 4:
            raise BadCards(
                f"the winners' hands, the winning tile and the stock hold {k} copies of "
                f"{TILES.token(kind)}; there are only 4"
            )


def relation_pairs(end: HandEnd, name: str) -> list[tuple[int, int]]:
    """The seat pairs of the relation ``end.relations[name]``, in the given order.

    Raises:
        BadCards: an entry that is not two different seats of the table.
    """
    out: list[tuple[int, int]] = []
    for pair in end.relations.get(name, []):
        if len(pair) != 2 or pair[0] == pair[1] or not all(0 <= s < end.n_players for s in pair):
            raise BadCards(f"a {name} relation is two different seats, got {pair!r}")
        out.append((pair[0], pair[1]))
    return out


def partners(seat: int, pairs: Iterable[frozenset[int]]) -> list[int]:
    """The seats paired with ``seat`` in unordered ``pairs``, sorted."""
    return sorted(s for pair in pairs if seat in pair for s in pair if s != seat)


def evaluate_winners(end: HandEnd, evaluate: Callable[[WinClaim], T | None]) -> dict[int, T]:
    """Each winner's evaluation, keyed by seat.

    Raises:
        BadCards: a claimed win that does not win (naming the hand), or what
            ``evaluate`` raises.
    """
    evs: dict[int, T] = {}
    for w in end.winners:
        ev = evaluate(w)
        if ev is None:
            melds = " ".join(f"{m.kind} {TILES.format(m.cards)}" for m in w.melds)
            raise BadCards(
                f"seat {w.seat}'s hand {TILES.format(w.hand)}"
                f"{' + ' + melds if melds else ''} does not win on "
                f"{TILES.token(w.tile) if w.tile is not None else 'no tile'}"
            )
        evs[w.seat] = ev
    return evs


class Ledger:
    """Sums transfers per (payer, payee) into pairwise :class:`Payment` s.

    Each transfer is given as its breakdown (:class:`~qipai.core.model.Term`
    s, a sum of products) and its amount is what the breakdown totals; a
    pair's payment has the sum of its transfers' amounts and, as ``why``,
    their breakdowns one after the other (joined by ``+``).  Its reason is
    the reasons other than ``default`` that contributed, joined by ``+`` in
    the order first added, or ``default`` when none did.  Zero totals are
    omitted.
    """

    def __init__(self, default: str = "hu") -> None:
        self.default = default
        self.amount: dict[tuple[int, int], int] = {}
        self.reasons: dict[tuple[int, int], list[str]] = {}
        self.why: dict[tuple[int, int], list[Term]] = {}

    def add(self, payer: int, payee: int, why: Sequence[Term], reason: str = "") -> None:
        """Add the transfer ``why`` (its total, 子/张) from ``payer`` to
        ``payee`` (not the same seat)."""
        if payer == payee:
            raise BadCards(f"seat {payer} cannot pay itself")
        amount = why_total(why)
        key = (payer, payee)
        self.amount[key] = self.amount.get(key, 0) + amount
        terms = self.why.setdefault(key, [])
        if why and why[0].op != "+":
            why = (bracket(why),)
        terms.extend(why)
        seen = self.reasons.setdefault(key, [])
        if reason and reason != self.default and reason not in seen:
            seen.append(reason)

    def payments(self) -> tuple[Payment, ...]:
        """One payment per (payer, payee) with a non-zero total, sorted."""
        return tuple(
            Payment(payer, payee, amt, "+".join(self.reasons[(payer, payee)]) or self.default,
                    tuple(self.why[(payer, payee)]))
            for (payer, payee), amt in sorted(self.amount.items())
            if amt
        )


# --------------------------------------------------------------------------
# Every reading, for explanations (hook ``qipai_readings``)


def reading_groups(
    shape: str, detail: tuple[int, tuple[tuple[str, int], ...]] | None,
    counts: Sequence[int], melds: Sequence[Meld],
) -> tuple[str, ...]:
    """A reading's groups as text: the melds (``"peng 555p"``), then for the
    standard shape each concealed set (``"123m"``, ``"EEE"``) and the pair;
    七对 its seven pairs (a quad as two); any other shape its tiles.

    Args:
        shape: the reading's shape id (:data:`SHAPE_RANK`).
        detail: the standard decomposition ``(pair kind, sets)`` as
            :func:`~qipai.families.mahjong.shapes.standard_decompositions`
            gives it; None for the other shapes.
        counts: 34 counts of the concealed tiles with the winning tile.
        melds: the winner's melds.
    """
    out = [f"{m.kind} {TILES.format(m.cards)}" for m in melds]
    if shape == "standard" and detail is not None:
        pair, sets = detail
        for kind, start in sets:
            out.append(TILES.format([start, start + 1, start + 2] if kind == "shunzi"
                                    else [start] * 3))
        out.append(TILES.format([pair, pair]))
    elif shape == "qidui":
        for k in range(N_KINDS):
            out.extend([TILES.format([k, k])] * (counts[k] // 2))
    else:
        out.append(TILES.format([k for k in range(N_KINDS) for _ in range(counts[k])]))
    return tuple(out)


def win_readings(
    evaluations: Sequence[Reading], details: Sequence[object], best: Reading | None,
    counts: Sequence[int], melds: Sequence[Meld], total: Callable[[Reading], int],
) -> list[WinReading]:
    """Every evaluated reading as a core :class:`WinReading`, the one
    :func:`best_reading` kept (``best``) marked ``paid``.

    Args:
        evaluations: the variant's evaluation of each reading.
        details: per reading, the standard decomposition or None
            (:func:`reading_groups`).
        best: the reading kept (D-M4).
        counts, melds: the winning hand (concealed with the tile; melds).
        total: what a reading pays the winner in all.
    """
    return [
        WinReading(shape=e.shape, groups=reading_groups(e.shape, d, counts, melds),  # type: ignore[arg-type]
                   patterns=e.patterns, value=total(e), paid=e is best)
        for e, d in zip(evaluations, details)
    ]
