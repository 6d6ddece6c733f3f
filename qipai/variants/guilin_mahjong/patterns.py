"""桂林麻将 win check and pattern values (guilin-mahjong.md §1, §3.1, §3.2).

A hand is read in every way it wins — each standard decomposition, the 七对
family, 烂牌/七星烂 and 字一色's any-shape rule — and :func:`evaluate` keeps
the reading that pays the winner most (D-M4).  Tiles are kinds 0–33
(``qipai.families.mahjong.tiles``); "counts" is a list of 34 ints; values are
in 子.

Pattern ids (rules file §1, §3.2): value patterns ``pinghu lanpai
qixing_lanpai qidui haohua_qidui pengpenghu qingyise ziyise quanqiuren``;
multipliers ``menqing qianggang gangshangpao gangshanghua``; ``tianhu dihu``
carry no value and only switch 门清 off (D-GL5).

Choices this module makes where the rules file is silent:

- ``tianhu``/``dihu`` are listed in ``patterns`` whenever flagged, even on a
  reading that takes no 门清 anyway (七对, 烂牌 …).
- 全求人 is read on the standard shape only (four melds, the single tile
  paired), so it stacks with 碰碰胡 when every meld is a peng/kong.  字一色's
  any-shape reading is 字一色 alone; a standard all-honor hand is also 碰碰胡
  and is preferred as it pays more.
- 豪华七对 is 70/30 whatever the number of quads ("one or more", §1).
- D-M4 ties after "larger value before multipliers": 七对 family / 烂牌 over
  字一色-any-shape over standard (only the first step can matter in practice).
- Input is checked strictly (money is settled from it): a wrong hand size, a
  malformed meld, a fifth copy, an unknown flag, or a flag that contradicts
  ``how`` (杠上花 not a zimo or without a kong meld, 杠上炮 not on a discard,
  天胡 not the dealer's zimo, 地胡 not a non-dealer's zimo) raises
  :class:`~qipai.core.errors.BadCards`.  Flags with no Guilin meaning
  (``haidi haidipao quanqiupao renhu``) are accepted and ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from qipai.core.errors import BadCards
from qipai.core.model import Meld, WinClaim, WinEval
from qipai.families.mahjong import shapes
from qipai.families.mahjong.tiles import N_KINDS, TILES, suit_of
from qipai.variants.guilin_mahjong.options import GuilinOptions

__all__ = [
    "VALUE_PATTERNS",
    "MULTIPLIERS",
    "SWITCHES",
    "Evaluation",
    "check_meld",
    "concealed_counts",
    "holding",
    "is_win_shape",
    "lanpai",
    "evaluate",
    "win_eval",
    "waits",
]

#: Value patterns in the rules file's order (the order patterns are listed in).
VALUE_PATTERNS = (
    "pinghu",
    "lanpai",
    "qixing_lanpai",
    "qidui",
    "haohua_qidui",
    "pengpenghu",
    "qingyise",
    "ziyise",
    "quanqiuren",
)
#: Multipliers (翻倍, §3.2), each ×2, multiplied together (D-GL3).
MULTIPLIERS = ("menqing", "qianggang", "gangshangpao", "gangshanghua")
#: Flags listed as patterns that only switch 门清 off (D-GL5).
SWITCHES = ("tianhu", "dihu")

HOWS = ("zimo", "dianpao", "qianggang")
#: Context flags a win may carry (CONFORMANCE.md ``win``); those without a
#: Guilin meaning (haidi, haidipao, quanqiupao, renhu) are accepted and ignored.
KNOWN_FLAGS = frozenset(
    {"gangshanghua", "gangshangpao", "haidi", "haidipao", "quanqiupao", "tianhu", "dihu", "renhu"}
)

_MELD_SIZES = {"chi": 3, "peng": 3, "minggang": 4, "jiagang": 4, "angang": 4}
_KONGS = frozenset({"minggang", "jiagang", "angang"})

# The 35-class (§3.1 last two rows): (by discard, by zimo from each payer).
_FLAT = {
    "qixing_lanpai": (35, 15),
    "qidui": (35, 15),
    "pengpenghu": (35, 15),
    "qingyise": (35, 15),
    "ziyise": (35, 15),
    "quanqiuren": (35, 15),
    "haohua_qidui": (70, 30),
}
# 平胡/烂牌 carry the dealer bonus: (discard, discard with the dealer involved,
# zimo share of a non-dealer, zimo share when the winner or payer is dealer).
_DEALER_BONUS = {"pinghu": (5, 7, 2, 4), "lanpai": (8, 10, 3, 5)}

# D-M4 tie-break: a special shape over the standard one.
_SHAPE_RANK = {"standard": 0, "ziyise": 1, "qidui": 2, "lanpai": 2}


class Evaluation(msgspec.Struct, frozen=True):
    """One winner's best reading (D-M4) and what it is worth.

    Attributes:
        seat: the winner.
        how: ``"zimo"``, ``"dianpao"`` or ``"qianggang"``.
        dealer: the dealer's seat.
        from_seat: the discarder / robbed kong's maker (None for zimo).
        shape: the reading kept — ``"standard"``, ``"qidui"`` (七对 family),
            ``"lanpai"`` (烂牌/七星烂) or ``"ziyise"`` (字一色 any shape).
        value_patterns: value pattern ids of the reading (rules file order).
        multipliers: multiplier ids applied (each ×2).
        switches: ``tianhu``/``dihu`` when flagged.
        patterns: every id the settlement applies: value patterns, then
            multipliers, then switches (CONFORMANCE.md ``win`` → ``patterns``).
        multiplier: the product of the multipliers (1, 2, 4, …).
        base: pattern value before multipliers (子) owed by each paying seat:
            the discarder / kong maker for a discard win, the other seats for
            zimo.  Only 平胡/烂牌 differ per payer (dealer bonus).
    """

    seat: int
    how: str
    dealer: int
    from_seat: int | None
    shape: str
    value_patterns: tuple[str, ...]
    multipliers: tuple[str, ...]
    switches: tuple[str, ...]
    patterns: tuple[str, ...]
    multiplier: int
    base: dict[int, int]

    @property
    def payers(self) -> tuple[int, ...]:
        """The seats that pay this win, in seat order."""
        return tuple(sorted(self.base))

    def value_from(self, payer: int) -> int:
        """Pattern value (子, before multipliers, no 醒) that ``payer`` owes.

        Raises:
            KeyError: ``payer`` does not pay this win.
        """
        return self.base[payer]

    def amount_from(self, payer: int) -> int:
        """``value × multiplier`` (子, 醒 not included) that ``payer`` owes."""
        return self.base[payer] * self.multiplier

    def total(self) -> int:
        """What the winner receives before 醒 and 互包 (子)."""
        return sum(self.base.values()) * self.multiplier

    def to_wineval(self) -> WinEval:
        """The core :class:`WinEval` answer of this win."""
        return WinEval(wins=True, patterns=self.patterns)


# --------------------------------------------------------------------------
# Input checks


def check_meld(meld: Meld) -> None:
    """Raise :class:`BadCards` unless ``meld`` is a well-formed mahjong meld.

    ``chi``: three consecutive tiles of one suit; ``peng``: three of a kind;
    ``minggang``/``jiagang``/``angang``: four of a kind.
    """
    size = _MELD_SIZES.get(meld.kind)
    if size is None:
        raise BadCards(f"unknown meld kind {meld.kind!r}: expected one of {', '.join(_MELD_SIZES)}")
    cards = sorted(meld.cards)
    text = TILES.format(cards) if all(0 <= c < N_KINDS for c in cards) else repr(meld.cards)
    if len(cards) != size or not all(0 <= c < N_KINDS for c in cards):
        raise BadCards(f"a {meld.kind} meld has {size} tiles, got {text}")
    if meld.kind == "chi":
        ok = (
            suit_of(cards[0]) < 3
            and suit_of(cards[0]) == suit_of(cards[2])
            and cards[1] == cards[0] + 1
            and cards[2] == cards[0] + 2
        )
        if not ok:
            raise BadCards(f"a chi is three consecutive tiles of one suit, got {text}")
    elif len(set(cards)) != 1:
        raise BadCards(f"a {meld.kind} is {size} tiles of one kind, got {text}")


def _check_counts(counts: Sequence[int], melds: Sequence[Meld]) -> None:
    """Size, range and fifth-copy check of a concealed part plus melds."""
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
    """Every tile of the winning hand (D-GL6): concealed, the winning tile and
    each meld's tiles (a kong gives 4), as a list of kinds."""
    tiles = list(claim.hand)
    if claim.tile is not None:
        tiles.append(claim.tile)
    for m in claim.melds:
        tiles.extend(m.cards)
    return tiles


# --------------------------------------------------------------------------
# Shapes


def lanpai(counts: Sequence[int]) -> int | None:
    """烂牌 check of a concealed 14-tile hand (§1).

    Args:
        counts: 34 counts, the winning tile included.

    Returns:
        The number of honors (5–7; 7 = 七星烂) if the hand is 14 distinct
        tiles whose ranks in each suit differ pairwise by at least 3 (no
        wrap: 1 and 9 may go together) with at least 5 of the 7 honors;
        otherwise None.
    """
    if len(counts) != N_KINDS or sum(counts) != 14 or any(c not in (0, 1) for c in counts):
        return None
    for suit in range(3):
        ranks = [r for r in range(9) if counts[suit * 9 + r]]
        if any(b - a < 3 for a, b in zip(ranks, ranks[1:])):
            return None
    honors = sum(counts[27:])
    return honors if honors >= 5 else None


def _all_honors(counts: Sequence[int], melds: Sequence[Meld]) -> bool:
    return not any(counts[:27]) and all(c >= 27 for m in melds for c in m.cards)


def _one_suit(counts: Sequence[int], melds: Sequence[Meld]) -> bool:
    suits = {suit_of(k) for k in range(N_KINDS) if counts[k]}
    suits |= {suit_of(c) for m in melds for c in m.cards}
    return len(suits) == 1 and 3 not in suits


def is_win_shape(counts: Sequence[int], melds: Sequence[Meld] = ()) -> bool:
    """Whether the concealed part plus melds form a Guilin winning shape.

    Shape only (no pattern values): the standard shape (4 sets + pair, each
    meld one set); with no melds also 七对/豪华七对 and 烂牌/七星烂; and
    字一色's any-shape rule — every tile, melds included, an honor wins
    whatever its grouping (§1).

    Args:
        counts: 34 counts of the concealed tiles **with** the winning tile:
            ``14 - 3 × len(melds)`` tiles.
        melds: the winner's melds.

    Raises:
        BadCards: a malformed meld, a wrong number of tiles, or a fifth copy
            of a kind among the counts and the melds.
    """
    _check_counts(counts, melds)
    counts = list(counts)
    if shapes.is_standard(counts):
        return True
    if not melds and (shapes.is_qidui(counts) or lanpai(counts) is not None):
        return True
    return _all_honors(counts, melds)


def _ordered(ids: Iterable[str], order: tuple[str, ...]) -> tuple[str, ...]:
    got = set(ids)
    return tuple(i for i in order if i in got)


def _readings(counts: list[int], melds: Sequence[Meld]) -> list[tuple[str, tuple[str, ...]]]:
    """Every winning reading: (shape, value patterns)."""
    qingyise = _one_suit(counts, melds)
    ziyise = _all_honors(counts, melds)
    colour = (["qingyise"] if qingyise else []) + (["ziyise"] if ziyise else [])
    no_chi = all(m.kind != "chi" for m in melds)
    out: list[tuple[str, tuple[str, ...]]] = []
    for _pair, sets in shapes.standard_decompositions(counts):
        ids = list(colour)
        if no_chi and all(kind == "kezi" for kind, _ in sets):
            ids.append("pengpenghu")
        if len(melds) == 4:  # D-GL1: any kong counts; the single tile was paired
            ids.append("quanqiuren")
        if not ids:
            ids.append("pinghu")
        out.append(("standard", _ordered(ids, VALUE_PATTERNS)))
    if not melds:
        if shapes.is_qidui(counts):
            seven = "haohua_qidui" if shapes.qidui_quads(counts) else "qidui"
            out.append(("qidui", _ordered([seven, *colour], VALUE_PATTERNS)))
        n_honors = lanpai(counts)
        if n_honors is not None:
            out.append(("lanpai", ("qixing_lanpai",) if n_honors == 7 else ("lanpai",)))
    if ziyise:
        out.append(("ziyise", ("ziyise",)))
    return out


def _value(ids: tuple[str, ...], payer: int, seat: int, dealer: int, zimo: bool) -> int:
    """Pattern value (子) of ``ids`` owed by ``payer`` (§3.1 table)."""
    total = 0
    for pid in ids:
        if pid in _DEALER_BONUS:
            plain_d, dealer_d, plain_z, dealer_z = _DEALER_BONUS[pid]
            with_dealer = dealer in (seat, payer)
            if zimo:
                total += dealer_z if with_dealer else plain_z
            else:
                total += dealer_d if with_dealer else plain_d
        else:
            total += _FLAT[pid][1 if zimo else 0]
    return total


# --------------------------------------------------------------------------
# Evaluation


def _check_context(
    claim: WinClaim, how: str, dealer: int, from_seat: int | None, n_players: int
) -> None:
    if how not in HOWS:
        raise BadCards(f"how must be one of {', '.join(HOWS)}, got {how!r}")
    for name, s in (("seat", claim.seat), ("dealer", dealer)):
        if not 0 <= s < n_players:
            raise BadCards(f"{name} {s} is not a seat of {n_players}")
    if how == "zimo":
        if from_seat not in (None, claim.seat):
            raise BadCards(f"a zimo is drawn by the winner, not seat {from_seat}")
    elif from_seat is None or not 0 <= from_seat < n_players or from_seat == claim.seat:
        raise BadCards(f"a {how} win needs another seat as from_seat, got {from_seat}")
    flags = set(claim.flags)
    unknown = flags - KNOWN_FLAGS
    if unknown:
        raise BadCards(f"unknown flag(s) {', '.join(sorted(unknown))}")
    if "gangshanghua" in flags:
        if how != "zimo":
            raise BadCards("gangshanghua (杠上花) is a zimo on one's own kong replacement")
        if not any(m.kind in _KONGS for m in claim.melds):
            raise BadCards("gangshanghua (杠上花) needs a kong among the winner's melds")
    if "gangshangpao" in flags and how != "dianpao":
        raise BadCards("gangshangpao (杠上炮) is a win on a discard (how = dianpao)")
    if "tianhu" in flags and (claim.seat != dealer or how != "zimo"):
        raise BadCards("tianhu (天胡) is the dealer's zimo on the dealt tiles (D-GL5)")
    if "dihu" in flags and (claim.seat == dealer or how != "zimo"):
        raise BadCards("dihu (地胡) is a non-dealer's zimo on his first draw (D-GL5)")


def evaluate(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None,
    options: GuilinOptions | None = None,
    n_players: int = 4,
) -> Evaluation | None:
    """Whether ``claim`` wins and, if so, its best reading (D-M4).

    Readings: every standard decomposition (碰碰胡 when it has no run and no
    chi meld), the 七对 family (concealed only; 豪华七对 replaces 七对), 烂牌
    (七星烂 replaces it), 字一色 any shape; 清一色/字一色 hold on any reading
    whose tiles allow them; 全求人 on the standard reading with four melds.
    Values of the 35-class add up (叠加); 平胡/烂牌 count only when none holds
    (§3.1).  Multipliers ×2 each, multiplied (D-GL3): 门清 (no meld of any
    kind, D-GL2; not with 天胡/地胡/烂牌/七星烂/七对/豪华七对), 抢杠胡
    (``how == "qianggang"``, D-GL4), 杠上炮 and 杠上花 (``claim.flags``).

    The reading kept pays the winner most (sum over payers of value ×
    multiplier; 醒 is the same for every reading); ties go to the larger
    value before multipliers, then to a special shape (七对 family, 烂牌)
    over 字一色-any-shape over standard.

    Args:
        claim: the winner's hand before the winning tile, melds, tile, flags.
        how: ``"zimo"``, ``"dianpao"`` or ``"qianggang"``.
        dealer: the dealer's seat.
        from_seat: the discarder / robbed kong's maker; None (or the winner)
            for zimo.
        options: the variant options (no option changes the win check).
        n_players: seats at the table (4).

    Returns:
        The :class:`Evaluation`, or None when the hand does not win.

    Raises:
        BadCards: impossible input — a fifth copy of a kind among hand, tile
            and melds, a malformed meld, a wrong hand size, no winning tile,
            an unknown ``how`` or flag, or flags that contradict ``how``
            (杠上花 not by zimo or without a kong, 杠上炮 not on a discard,
            天胡/地胡 not a zimo of the dealer / a non-dealer).
    """
    del options  # no Guilin option changes the value of a win
    _check_context(claim, how, dealer, from_seat, n_players)
    counts = concealed_counts(claim)
    _check_counts(counts, claim.melds)
    readings = _readings(counts, claim.melds)
    if not readings:
        return None
    flags = set(claim.flags)
    zimo = how == "zimo"
    seat = claim.seat
    payers = [p for p in range(n_players) if p != seat] if zimo else [from_seat]
    common = []
    if how == "qianggang":
        common.append("qianggang")
    common += [f for f in ("gangshangpao", "gangshanghua") if f in flags]
    switches = _ordered(flags, SWITCHES)

    best: tuple[tuple[int, int, int], Evaluation] | None = None
    for shape, ids in readings:
        menqing = not claim.melds and not switches and shape in ("standard", "ziyise")
        mults = _ordered((["menqing"] if menqing else []) + common, MULTIPLIERS)
        multiplier = 2 ** len(mults)
        base = {p: _value(ids, p, seat, dealer, zimo) for p in payers}
        value = sum(base.values())
        key = (value * multiplier, value, _SHAPE_RANK[shape])
        if best is None or key > best[0]:
            ev = Evaluation(
                seat=seat,
                how=how,
                dealer=dealer,
                from_seat=None if zimo else from_seat,
                shape=shape,
                value_patterns=ids,
                multipliers=mults,
                switches=switches,
                patterns=ids + mults + switches,
                multiplier=multiplier,
                base=base,  # type: ignore[arg-type]
            )
            best = (key, ev)
    assert best is not None
    return best[1]


def win_eval(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None,
    options: GuilinOptions | None = None,
    n_players: int = 4,
) -> WinEval:
    """:func:`evaluate` as the core :class:`WinEval` (``wins=False`` if no win).

    Raises:
        BadCards: as :func:`evaluate`.
    """
    ev = evaluate(claim, how, dealer, from_seat, options, n_players)
    return WinEval(wins=False) if ev is None else ev.to_wineval()


def waits(hand: Sequence[int], melds: Sequence[Meld] = ()) -> list[int]:
    """The kinds that complete ``hand`` with ``melds`` into a Guilin win.

    Args:
        hand: the concealed kinds, ``13 - 3 × len(melds)`` tiles.
        melds: the melds.

    Returns:
        Sorted distinct kinds; a kind whose four copies are all in the hand
        and melds is not a wait (CONFORMANCE.md ``waits``).

    Raises:
        BadCards: as :func:`is_win_shape` (a fifth copy, a bad size, a bad meld).
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
