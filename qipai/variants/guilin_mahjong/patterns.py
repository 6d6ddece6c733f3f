"""桂林麻将 win check and pattern values (docs/variants/guilin-mahjong.md:
Winning hands, Pattern value, Multipliers).

A hand is read in every way it wins — each standard decomposition, the 七对
family, 烂牌/七星烂 and 字一色's any-shape rule — and :func:`evaluate` keeps
the reading that pays the winner most (D-M4).  Tiles are kinds 0–33
(``qipai.families.mahjong.tiles``); "counts" is a list of 34 ints; values are
in 子.

Pattern ids (page §1, §3.2): value patterns ``pinghu lanpai
qixing_lanpai qidui haohua_qidui pengpenghu qingyise ziyise quanqiuren``;
multipliers ``menqing qianggang gangshangpao gangshanghua``; ``tianhu dihu``
carry no value and only switch 门清 off (D-GL5).

Choices this module makes where the variant page is silent:

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

from collections.abc import Sequence
from typing import Any

from qipai.core.model import Meld, Term, WinClaim, WinEval, WinReading, bracket, why_total
from qipai.families.mahjong import shapes
from qipai.families.mahjong.win_shapes import LANPAI_SHIFT, counts_if_shaped, win_shape, win_shape_bytes, win_shape_plain
from qipai.families.mahjong.scoring_kit import (  # HOWS, KNOWN_FLAGS: re-exported
    HOWS,  # noqa: F401
    KNOWN_FLAGS,  # noqa: F401
    Reading,
    all_honors as _all_honors,
    as_wineval,
    best_reading,
    check_context,
    check_meld,
    concealed_counts,
    holding,
    one_suit as _one_suit,
    ordered as _ordered,
    waits_for,
    win_readings,
)
from qipai.families.mahjong.tiles import N_KINDS
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
    "is_win_shape_bytes",
    "lanpai",
    "value_terms",
    "evaluate",
    "readings",
    "win_eval",
    "waits",
]

#: Value patterns in the variant page's order (the order patterns are listed in).
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

#: The context flags (the case format's ``win``) Guilin gives a meaning to and
#: checks against ``how``; the others of ``KNOWN_FLAGS`` (haidi, haidipao,
#: quanqiupao, renhu) are accepted and ignored.
_CHECKED_FLAGS = ("gangshanghua", "gangshangpao", "tianhu", "dihu")

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


class Evaluation(Reading, frozen=True):
    """One winner's best reading (D-M4) and what it is worth.

    Attributes (besides those of :class:`~qipai.families.mahjong.scoring_kit.Reading`):
        dealer: the dealer's seat.
        switches: ``tianhu``/``dihu`` when flagged.
        multiplier: the product of the multipliers (1, 2, 4, …).
        base: pattern value before multipliers (子) owed by each paying seat:
            the discarder / kong maker for a discard win, the other seats for
            zimo.  Only 平胡/烂牌 differ per payer (dealer bonus).

    ``shape`` is ``"standard"``, ``"qidui"`` (七对 family), ``"lanpai"``
    (烂牌/七星烂) or ``"ziyise"`` (字一色 any shape); ``multipliers`` are each
    ×2; ``patterns`` lists the value patterns, then the multipliers, then the
    switches.
    """

    dealer: int
    switches: tuple[str, ...]
    multiplier: int
    base: dict[int, int]
    base_why: dict[int, tuple[Term, ...]] = {}

    def amount_why(self, payer: int) -> tuple[Term, ...]:
        """``value × multiplier`` owed by ``payer`` as breakdown terms: the
        value's terms (bracketed when several and multiplied) and one ``multiplier`` term
        ×2 per multiplier (§3.2, D-GL3); totals :meth:`amount_from`."""
        terms = self.base_why[payer]
        head = terms if len(terms) == 1 or not self.multipliers else (bracket(terms),)
        return head + tuple(Term("multiplier", m, 2, "*", rule="§3.2") for m in self.multipliers)

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
    return win_shape(counts, melds, _special, LANPAI_SHIFT)


def _special(counts: list[int]) -> bool:
    """桂林's special 14-tile shape: 烂牌 (七星烂 included)."""
    return lanpai(counts) is not None


def _is_win_shape_plain(counts: list[int], melds: Sequence[Meld]) -> bool:
    """:func:`is_win_shape` of checked input, shape by shape (the reference)."""
    return win_shape_plain(counts, melds, _special)


def is_win_shape_bytes(b: bytes, melds: Sequence[Meld] = ()) -> bool:
    """:func:`is_win_shape` of a hand already checked, given as ``bytes`` of
    its 34 counts (each 0–4; ``14 - 3 × len(melds)`` tiles, no fifth copy with
    the melds): the form a simulator keeps its hands in.  One segment-code
    look-up (``shapes.segment_code``); no input check."""
    return win_shape_bytes(b, melds, LANPAI_SHIFT)


def _readings(counts: list[int], melds: Sequence[Meld]) -> list[tuple[str, tuple[str, ...], Any]]:
    """Every winning reading: (shape, value patterns, the standard
    decomposition ``(pair, sets)`` or None)."""
    qingyise = _one_suit(counts, melds)
    ziyise = _all_honors(counts, melds)
    colour = (["qingyise"] if qingyise else []) + (["ziyise"] if ziyise else [])
    no_chi = all(m.kind != "chi" for m in melds)
    out: list[tuple[str, tuple[str, ...], Any]] = []
    for pair, sets in shapes.standard_decompositions(counts):
        ids = list(colour)
        if no_chi and all(kind == "kezi" for kind, _ in sets):
            ids.append("pengpenghu")
        if len(melds) == 4:  # D-GL1: any kong counts; the single tile was paired
            ids.append("quanqiuren")
        if not ids:
            ids.append("pinghu")
        out.append(("standard", _ordered(ids, VALUE_PATTERNS), (pair, sets)))
    if not melds:
        if shapes.is_qidui(counts):
            seven = "haohua_qidui" if shapes.qidui_quads(counts) else "qidui"
            out.append(("qidui", _ordered([seven, *colour], VALUE_PATTERNS), None))
        n_honors = lanpai(counts)
        if n_honors is not None:
            out.append(("lanpai", ("qixing_lanpai",) if n_honors == 7 else ("lanpai",), None))
    if ziyise:
        out.append(("ziyise", ("ziyise",), None))
    return out


def value_terms(ids: tuple[str, ...], payer: int, seat: int, dealer: int,
                zimo: bool) -> tuple[Term, ...]:
    """The pattern value (子) of ``ids`` owed by ``payer`` as breakdown terms
    (§3.1 table): one ``pattern`` term per value pattern (the 35-class add
    up, 叠加), and for 平胡/烂牌 with the dealer involved (the winner or the
    payer) a ``dealer`` term ``zhuang`` with the dealer bonus (the table's
    dealer column minus the plain one: 2).  Their sum is the value."""
    out: list[Term] = []
    for pid in ids:
        if pid in _DEALER_BONUS:
            plain_d, dealer_d, plain_z, dealer_z = _DEALER_BONUS[pid]
            plain, with_d = (plain_z, dealer_z) if zimo else (plain_d, dealer_d)
            out.append(Term("pattern", pid, plain, rule="§3.1"))
            if dealer in (seat, payer):
                out.append(Term("dealer", "zhuang", with_d - plain, rule="§3.1"))
        else:
            out.append(Term("pattern", pid, _FLAT[pid][1 if zimo else 0], rule="§3.1"))
    return tuple(out)


# --------------------------------------------------------------------------
# Evaluation


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
    if claim.flags or not _plain_context(claim.seat, how, dealer, from_seat, n_players):
        check_context(claim, how, dealer, from_seat, n_players, _CHECKED_FLAGS)
    got = _evaluations(claim, how, dealer, from_seat, n_players)
    if got is None:
        return None
    return _best(got[0])


def _best(evs: list[Evaluation]) -> Evaluation | None:
    # D-M4: sum over payers of value × multiplier, then value, then shape.
    return best_reading(
        evs, total=Evaluation.total, value=lambda e: sum(e.base.values()), shape=lambda e: e.shape
    )


def _evaluations(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                 n_players: int) -> tuple[list[Evaluation], list[Any], list[int]] | None:
    """Every winning reading of a checked claim, evaluated: (evaluations,
    their standard decompositions or None, the concealed counts), or None
    when it does not win (:func:`evaluate`'s body before D-M4)."""
    counts = counts_if_shaped(claim, LANPAI_SHIFT)
    if counts is None:
        return None
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

    evs = []
    for shape, ids, _detail in readings:
        menqing = not claim.melds and not switches and shape in ("standard", "ziyise")
        mults = _ordered((["menqing"] if menqing else []) + common, MULTIPLIERS)
        why = {p: value_terms(ids, p, seat, dealer, zimo) for p in payers}  # type: ignore[misc]
        evs.append(
            Evaluation(
                seat=seat,
                how=how,
                dealer=dealer,
                from_seat=None if zimo else from_seat,
                shape=shape,
                value_patterns=ids,
                multipliers=mults,
                switches=switches,
                patterns=ids + mults + switches,
                multiplier=2 ** len(mults),
                base={p: why_total(t) for p, t in why.items()},
                base_why=why,
            )
        )
    return evs, [r[2] for r in readings], counts


def readings(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None,
    options: GuilinOptions | None = None,
    n_players: int = 4,
) -> list[WinReading]:
    """Every reading :func:`evaluate` considers, the one it keeps marked
    ``paid`` (hook ``qipai_readings``; for explanations, not play).

    Returns:
        One :class:`~qipai.core.model.WinReading` per reading (``value``: what
        it pays the winner before 醒 and 互包, 子); [] if the hand does not win.

    Raises:
        BadCards: as :func:`evaluate`.
    """
    del options
    check_context(claim, how, dealer, from_seat, n_players, _CHECKED_FLAGS)
    got = _evaluations(claim, how, dealer, from_seat, n_players)
    if got is None:
        return []
    evs, details, counts = got
    return win_readings(evs, details, _best(evs), counts, claim.melds, Evaluation.total)


def _plain_context(seat: int, how: str, dealer: int, from_seat: int | None,
                   n_players: int) -> bool:
    """True only for a context ``check_context`` certainly accepts when the
    claim has no flags (seats that are ints in range, ``from_seat`` fitting
    ``how``); False sends the caller to the full check."""
    if type(seat) is not int or type(dealer) is not int:
        return False
    if not (0 <= seat < n_players and 0 <= dealer < n_players):
        return False
    if how == "zimo":
        return from_seat is None or from_seat == seat
    if how == "dianpao" or how == "qianggang":
        return type(from_seat) is int and 0 <= from_seat < n_players and from_seat != seat
    return False


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
    return as_wineval(evaluate(claim, how, dealer, from_seat, options, n_players))


def waits(hand: Sequence[int], melds: Sequence[Meld] = ()) -> list[int]:
    """The kinds that complete ``hand`` with ``melds`` into a Guilin win.

    Args:
        hand: the concealed kinds, ``13 - 3 × len(melds)`` tiles.
        melds: the melds.

    Returns:
        Sorted distinct kinds; a kind whose four copies are all in the hand
        and melds is not a wait (the case format's ``waits``).

    Raises:
        BadCards: as :func:`is_win_shape` (a fifth copy, a bad size, a bad meld).
    """
    return waits_for(hand, melds, _is_win_shape_checked)


def _is_win_shape_checked(counts: list[int], melds: Sequence[Meld]) -> bool:
    """:func:`is_win_shape` for ``waits_for``, which has checked the hand and
    melds and only adds a tile with a copy left (so no check can fail)."""
    return is_win_shape_bytes(bytes(counts), melds)


#: The segment-code field of this variant's special 14-tile shape, for
#: ``win_shapes.shape_waits_bytes``: with it the mahjong flow keeps each
#: seat's shape waits and skips win checks that cannot succeed.
SHAPE_SHIFT = LANPAI_SHIFT
