"""广西麻将 win check, pattern values and multipliers (docs/variants/guangxi-mahjong.md:
Patterns and values, Multipliers and special wins).

A hand is read in every way it wins — each standard decomposition, the 七对
family, 十三幺 and 字一色's any-shape rule — and :func:`evaluate` keeps the
reading that pays the winner most (D-M4).  Values are in 张, per paying seat.

Pattern ids: value patterns ``pinghu pengpenghu qingyise ziyise quanqiuren
qixiaodui qidadui chaohaohua_qidui chaochaohaohua_qidui shisanyao`` (§2);
multipliers ``menqing haidi haidipao gangshanghua gangshangpao quanqiupao
qianggang tianhu dihu renhu`` (§3).

How a win is priced (the share = what one paying seat owes before any
liability, §4–§6 being :mod:`.scoring`'s business):

1. Value patterns of the reading (平胡 only when there is none); the value is
   the largest one's × 2^(k−1) for k patterns (§2, D-GX9), from the zimo
   column on a zimo or 抢杠, else the dianpao column.  The 七对 family
   patterns exclude each other; 全求人 (four 碰/明杠/补杠, won by discard or
   抢杠, D-GX6) supersedes 对对胡 (D-GX4).
2. 杠冲 / 全求人反冲 (a discard win): 平胡 becomes 9 (12 when the winner is
   门清); any other value is doubled.  The two never stack (D-GX1: equal
   values, so 杠冲 is the one applied and listed when both are flagged).
3. Otherwise 门清 (no 吃, 碰 or 明杠/补杠 — 暗杠 keeps it; not for the 七对
   family and 十三幺, D-GX3) turns a value v into ⌊4v/3⌋ on a zimo or 抢杠,
   and on a discard win only with ``menqing_on_dianpao`` (D-GX5).
4. ×2 each for 海底, 海底炮, 天胡, 地胡, 人胡; ×2^n for 杠开 after a chain of n
   kongs (``claim.kong_chain``; without it a chain of one).
5. 抢杠: the kong maker owes the share × 3 (门清 applied before, D-GX5).

Choices this module makes where the variant page is silent:

- 门清 is applied to the pattern value (step 3) before the doublings of step
  4, and rounded down once there: ⌊4v/3⌋.  With the default table a zimo
  value is always a multiple of 3, so only ``menqing_on_dianpao`` (平胡 by
  discard: 2 → 2, so 门清 is then not listed) or a host's own ``values`` can
  round.
- A multiplier is listed in ``patterns`` only when it changes the amount
  (the case format: 门清 on a discard win is not listed); in practice that is
  whenever it applies and the value is not 0.
- 全求人's zimo column (the rules give "—") is used only on a 抢杠 win; its
  default is in :mod:`.options`.
- D-M4 ties: the larger value before multipliers, then a special shape
  (七对 family, 十三幺) over 字一色-any-shape over the standard reading.
- Input is checked strictly (money is settled from it): a wrong hand size, a
  malformed meld, a fifth copy, an unknown flag or one that contradicts
  ``how`` or the seats (杠开/海底/天胡/地胡 not a zimo, 杠冲/海底炮/全求人反冲/人胡
  not a discard, 天胡 not the dealer, 地胡/人胡 the dealer, 人胡 not on the
  dealer's discard), a meld claimed from the winner himself, and for 杠开 a
  kong chain that is not made of the winner's kongs or whose 明杠 has no
  feeder, raise :class:`~qipai.core.errors.BadCards`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from qipai.core.errors import BadCards
from qipai.core.model import Meld, Term, WinClaim, WinReading, bracket, why_total
from qipai.families.mahjong import shapes
from qipai.families.mahjong.win_shapes import SHISANYAO_SHIFT, counts_if_shaped, win_shape, win_shape_bytes, win_shape_plain
from qipai.families.mahjong.scoring_kit import (
    KNOWN_FLAGS,
    KONGS,
    Reading,
    all_honors,
    best_reading,
    check_context,
    check_meld,
    one_suit,
    ordered,
    waits_for,
    win_readings,
)
from qipai.families.mahjong.tiles import N_KINDS, TILES
from qipai.variants.guangxi_mahjong.options import DEFAULT_VALUES, GuangxiOptions

__all__ = [
    "MULTIPLIERS",
    "QIDUI_FAMILY",
    "VALUE_PATTERNS",
    "Evaluation",
    "check_chain",
    "evaluate",
    "first_minggang",
    "is_menqing",
    "is_shisanyao",
    "is_win_shape",
    "is_win_shape_bytes",
    "kong_chain",
    "waits",
]

#: Value patterns (§2), in the variant page's order.
VALUE_PATTERNS = tuple(DEFAULT_VALUES)
#: Multipliers and special wins (§3), in the variant page's order.
MULTIPLIERS = (
    "menqing",
    "haidi",
    "haidipao",
    "gangshanghua",
    "gangshangpao",
    "quanqiupao",
    "qianggang",
    "tianhu",
    "dihu",
    "renhu",
)
#: The 七对 family by number of quads (0–3).
QIDUI_FAMILY = ("qixiaodui", "qidadui", "chaohaohua_qidui", "chaochaohaohua_qidui")

#: ×2 each when flagged.
_DOUBLES = ("haidi", "haidipao", "tianhu", "dihu", "renhu")
#: 杠冲 / 全求人反冲 (D-GX1: one of them applies).
_CHONG = ("gangshangpao", "quanqiupao")
#: What a 平胡 pays under 杠冲 / 全求人反冲: plain, 门清 (§3, seed: 9 张, 门清 12 张).
#: D-GX15: fixed — a custom ``values`` entry for 平胡 does not change it.
_CHONG_PINGHU = (9, 12)
#: The two 明杠 (from another seat's tile): their feeder pays a 连杠 (D-GX7).
_MINGGANG = ("minggang", "jiagang")
#: Claimed sets (全求人: 碰, 明杠, 补杠 — D-GX6).
_CLAIMED = frozenset({"peng", "minggang", "jiagang"})
#: 十三幺's kinds: 1m 9m 1p 9p 1s 9s and the seven honors.
_YAOJIU = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


class Evaluation(Reading, frozen=True):
    """One winner's best reading (D-M4) and what it is worth (张).

    Attributes (besides those of :class:`~qipai.families.mahjong.scoring_kit.Reading`):
        value: the pattern value before multipliers (zimo column on a zimo or
            抢杠, else dianpao column; combined as §2 says).
        share: the value after multipliers, per paying seat: what each of the
            three others owes on a zimo, the discarder on a discard, and one
            zimo share on a 抢杠 (the kong maker owes three of them).
        amounts: payer → what he owes with no liability: the three others
            ``share`` each on a zimo; the discarder ``share`` on a discard;
            the kong maker ``3 × share`` on a 抢杠.
        why: one payer's amount as breakdown terms (:func:`amount_why`;
            every payer owes the same).

    ``shape`` is ``"standard"``, ``"qidui"`` (七对 family), ``"shisanyao"`` or
    ``"ziyise"`` (字一色 any shape); ``multipliers`` lists those that change
    this win's amount; ``patterns`` = ``value_patterns + multipliers``.
    """

    value: int
    share: int
    amounts: dict[int, int]
    why: tuple[Term, ...] = ()

    def total(self) -> int:
        """What the winner receives with no liability (张)."""
        return sum(self.amounts.values())


# --------------------------------------------------------------------------
# Shapes and hand facts


def is_shisanyao(counts: Sequence[int]) -> bool:
    """十三幺: 14 concealed tiles, each of 1m 9m 1p 9p 1s 9s E S W N C F P
    at least once, nothing else (so exactly one of them is paired)."""
    if len(counts) != N_KINDS or sum(counts) != 14:
        return False
    return all(counts[k] >= 1 for k in _YAOJIU) and sum(counts[k] for k in _YAOJIU) == 14


def is_menqing(melds: Sequence[Meld]) -> bool:
    """门清 (§1): no 吃, 碰 or 明杠/补杠 — every meld, if any, is an 暗杠."""
    return all(m.kind == "angang" for m in melds)


def is_win_shape(counts: Sequence[int], melds: Sequence[Meld] = ()) -> bool:
    """Whether the concealed part plus melds form a 广西麻将 winning shape.

    Shape only: the standard shape (4 sets + pair, each meld one set); with
    no melds also the 七对 family and 十三幺; and 字一色 — every tile, melds
    included, an honor wins whatever its grouping (§2: 可不用组成对子，刻子，杠).

    Args:
        counts: 34 counts of the concealed tiles **with** the winning tile.
        melds: the winner's melds.

    Raises:
        BadCards: a malformed meld, a wrong number of tiles, a fifth copy.
    """
    return win_shape(counts, melds, _special, SHISANYAO_SHIFT)


def _special(counts: list[int]) -> bool:
    """广西's special 14-tile shape: 十三幺."""
    return is_shisanyao(counts)


def _is_win_shape_plain(counts: list[int], melds: Sequence[Meld]) -> bool:
    """:func:`is_win_shape` of checked input, shape by shape (the reference)."""
    return win_shape_plain(counts, melds, _special)


def is_win_shape_bytes(b: bytes, melds: Sequence[Meld] = ()) -> bool:
    """:func:`is_win_shape` of a hand already checked, given as ``bytes`` of
    its 34 counts (each 0–4; ``14 - 3 × len(melds)`` tiles, no fifth copy with
    the melds).  One segment-code look-up (``shapes.segment_code``)."""
    return win_shape_bytes(b, melds, SHISANYAO_SHIFT)


def check_chain(seat: int, chain: Sequence[Meld], n_players: int = 4) -> None:
    """Raise :class:`BadCards` unless ``chain`` is a kong chain of ``seat``.

    1 to 4 kongs (``minggang``/``jiagang``/``angang``, each well formed);
    every 明杠 (点杠, 补杠) names its feeder — the discarder or the peng's
    giver — as ``from_seat``, another seat of the table.
    """
    if not 0 <= seat < n_players:
        raise BadCards(f"seat {seat} is not a seat of {n_players}")
    if not 1 <= len(chain) <= 4:
        raise BadCards(f"a kong chain holds 1 to 4 kongs, got {len(chain)}")
    for m in chain:
        check_meld(m)
        if m.kind not in KONGS:
            raise BadCards(f"a kong chain holds only kongs, got a {m.kind}")
        if m.kind in _MINGGANG and (
            m.from_seat is None or not 0 <= m.from_seat < n_players or m.from_seat == seat
        ):
            raise BadCards(
                f"the {m.kind} {TILES.token(m.cards[0])} of seat {seat}'s kong chain needs "
                f"another seat as from_seat (its feeder), got {m.from_seat}"
            )


def kong_chain(claim: WinClaim, n_players: int = 4) -> tuple[Meld, ...]:
    """The kongs that led to a 杠开 win, in order (连杠, D-GX7).

    ``claim.kong_chain`` when given — each of its kongs must be one of the
    winner's kong melds — else a chain of one: the last kong among
    ``claim.melds`` (the case format's ``kong_chain``); ``()`` if the winner has no kong.

    Raises:
        BadCards: as :func:`check_chain`, or a chain kong the winner does not
            hold.
    """
    if not claim.kong_chain:
        kongs = [m for m in claim.melds if m.kind in KONGS]
        chain: tuple[Meld, ...] = (kongs[-1],) if kongs else ()
        if chain:
            check_chain(claim.seat, chain, n_players)
        return chain
    chain = tuple(claim.kong_chain)
    check_chain(claim.seat, chain, n_players)
    held = Counter((m.kind, m.cards[0]) for m in claim.melds if m.kind in KONGS)
    missing = Counter((m.kind, m.cards[0]) for m in chain) - held
    if missing:
        kind, tile = next(iter(missing))
        raise BadCards(
            f"seat {claim.seat}'s kong chain has a {kind} of {TILES.token(tile)} that is not "
            "among his melds"
        )
    return chain


def first_minggang(chain: Sequence[Meld]) -> int | None:
    """Index of the chain's first 明杠 (点杠 or 补杠), None if it has none."""
    for i, m in enumerate(chain):
        if m.kind in _MINGGANG:
            return i
    return None


# --------------------------------------------------------------------------
# Readings and their values


def _readings(
    counts: list[int], melds: Sequence[Meld], how: str
) -> list[tuple[str, tuple[str, ...], Any]]:
    """Every winning reading: (shape, value pattern ids, the standard
    decomposition ``(pair, sets)`` or None)."""
    colour = (["qingyise"] if one_suit(counts, melds) else []) + (
        ["ziyise"] if all_honors(counts, melds) else []
    )
    # 全求人: four claimed sets, won by discard (抢杠 counting as one, D-GX6).
    quanqiuren = how != "zimo" and len(melds) == 4 and all(m.kind in _CLAIMED for m in melds)
    no_chi = all(m.kind != "chi" for m in melds)
    out: list[tuple[str, tuple[str, ...], Any]] = []
    for pair, sets in shapes.standard_decompositions(counts):
        ids = list(colour)
        if quanqiuren:  # D-GX4: supersedes 对对胡
            ids.append("quanqiuren")
        elif no_chi and all(kind == "kezi" for kind, _ in sets):
            ids.append("pengpenghu")
        out.append(("standard", ordered(ids or ["pinghu"], VALUE_PATTERNS), (pair, sets)))
    if not melds:
        if shapes.is_qidui(counts):
            family = QIDUI_FAMILY[shapes.qidui_quads(counts)]
            out.append(("qidui", ordered([family, *colour], VALUE_PATTERNS), None))
        if is_shisanyao(counts):
            out.append(("shisanyao", ("shisanyao",), None))
    if "ziyise" in colour:
        out.append(("ziyise", ("ziyise",), None))
    return out


def value_terms(ids: tuple[str, ...], zimo: bool, options: GuangxiOptions) -> tuple[Term, ...]:
    """§2 as breakdown terms: the largest pattern's value, then ×2 for each
    other pattern (D-GX9; ``pattern`` terms, the factor 2 each)."""
    values = [options.value(pid, zimo) for pid in ids]
    top = max(range(len(ids)), key=lambda i: (values[i], -i))
    head = Term("pattern", ids[top], values[top], rule="§2")
    return (head, *(Term("pattern", pid, 2, "*", rule="§2, D-GX9")
                     for i, pid in enumerate(ids) if i != top))


def _value(ids: tuple[str, ...], zimo: bool, options: GuangxiOptions) -> int:
    """§2: the largest value × 2^(k−1) for k patterns (平胡 alone: its value)."""
    return why_total(value_terms(ids, zimo, options))


def share_why(value: tuple[Term, ...], pinghu: bool, active: frozenset[str],
              chain: int) -> tuple[Term, ...]:
    """The per-seat share of a reading worth ``value`` (its terms, see
    :func:`value_terms`) with multipliers ``active``, as breakdown terms.

    杠冲 / 全求人反冲 on 平胡: one ``pattern`` term of the fixed figure 9 (12
    with 门清; the 平胡 value it replaces as its ``basis``, D-GX15); on
    another value: ×2.  门清 otherwise: ⌊4v/3⌋ written ``(v + 门清 ⌊v/3⌋)``
    (the same integer).  Then ×2 per 海底/海底炮/天胡/地胡/人胡 and
    ×2^chain for 杠开 (§3, D-GX5, D-GX7)."""
    chong = next((m for m in _CHONG if m in active), None)
    v = why_total(value)
    if chong is not None:
        if pinghu:
            fixed = _CHONG_PINGHU[1 if "menqing" in active else 0]
            basis = value + ((Term("multiplier", "menqing", fixed - _CHONG_PINGHU[0],
                                   rule="D-GX5: 9 → 12"),) if "menqing" in active else ())
            terms: list[Term] = [Term("pattern", chong, fixed, rule="§3, D-GX15", basis=basis)]
        else:  # D-GX5: no 门清 on other 杠冲/反冲 values
            terms = [*value, Term("multiplier", chong, 2, "*", rule="§3")]
    elif "menqing" in active:
        terms = [bracket((*value, Term("multiplier", "menqing", v // 3,
                                        rule="§3 ×4/3, D-GX5")))]
    else:
        terms = list(value)
    for m in _DOUBLES:
        if m in active:
            terms.append(Term("multiplier", m, 2, "*", rule="§3"))
    if "gangshanghua" in active:
        terms.append(Term("multiplier", "gangshanghua", 2**chain, "*", rule="§3, D-GX7"))
    return tuple(terms)


def amount_why(value: tuple[Term, ...], pinghu: bool, active: frozenset[str],
               chain: int) -> tuple[Term, ...]:
    """What one payer owes as terms: the share, ×3 for the kong maker of a 抢杠."""
    share = share_why(value, pinghu, active, chain)
    if "qianggang" in active:
        return (*share, Term("multiplier", "qianggang", 3, "*", rule="§3, D-GX8"))
    return share


def _share(value: tuple[Term, ...], pinghu: bool, active: frozenset[str], chain: int) -> int:
    return why_total(share_why(value, pinghu, active, chain))


def _amount(value: tuple[Term, ...], pinghu: bool, active: frozenset[str], chain: int) -> int:
    return why_total(amount_why(value, pinghu, active, chain))


# --------------------------------------------------------------------------
# Evaluation


def evaluate(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
             options: GuangxiOptions | None = None, n_players: int = 4) -> Evaluation | None:
    """Whether ``claim`` wins and, if so, its best reading (D-M4) and value.

    See the module docstring for the pricing.  The reading kept pays the
    winner most; ties go to the larger value before multipliers, then to a
    special shape.

    Args:
        claim: the winner's hand before the winning tile, melds, tile, flags
            and, for 杠开, ``kong_chain``.
        how: ``"zimo"``, ``"dianpao"`` or ``"qianggang"``.
        dealer: the dealer's seat.
        from_seat: the discarder / robbed kong's maker; None (or the winner)
            for zimo.
        options: the variant options (``values``, ``menqing_on_dianpao``).
        n_players: seats at the table (4).

    Returns:
        The :class:`Evaluation`, or None when the hand does not win
        (:func:`~qipai.families.mahjong.scoring_kit.as_wineval` turns it
        into the core ``WinEval``).

    Raises:
        BadCards: impossible input (see the module docstring).
    """
    got = _evaluations(claim, how, dealer, from_seat, options, n_players)
    return None if got is None else _best(got[0])


def _best(evs: list[Evaluation]) -> Evaluation | None:
    return best_reading(evs, total=Evaluation.total, value=lambda e: e.value,
                        shape=lambda e: e.shape)


def readings(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
             options: GuangxiOptions | None = None, n_players: int = 4) -> list[WinReading]:
    """Every reading :func:`evaluate` considers, the one it keeps marked
    ``paid`` (hook ``qipai_readings``; for explanations, not play).

    Returns:
        One :class:`~qipai.core.model.WinReading` per reading (``value``: what
        it pays the winner with no liability, 张); [] if the hand does not win.

    Raises:
        BadCards: as :func:`evaluate`.
    """
    got = _evaluations(claim, how, dealer, from_seat, options, n_players)
    if got is None:
        return []
    evs, details, counts = got
    return win_readings(evs, details, _best(evs), counts, claim.melds, Evaluation.total)


def _evaluations(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                 options: GuangxiOptions | None, n_players: int,
                 ) -> tuple[list[Evaluation], list[Any], list[int]] | None:
    """Every winning reading, evaluated: (evaluations, their standard
    decompositions or None, the concealed counts), or None when the hand
    does not win (:func:`evaluate` before D-M4)."""
    options = options or GuangxiOptions()
    check_context(claim, how, dealer, from_seat, n_players, KNOWN_FLAGS)
    others = [p for p in range(n_players) if p != claim.seat]
    for m in claim.melds:
        if m.from_seat is not None and m.from_seat not in others:
            raise BadCards(f"seat {claim.seat}'s {m.kind} cannot come from seat {m.from_seat}")
    counts = counts_if_shaped(claim, SHISANYAO_SHIFT)
    if counts is None:
        return None
    readings = _readings(counts, claim.melds, how)
    if not readings:
        return None
    flags = set(claim.flags)
    zimo = how == "zimo"
    chain = len(kong_chain(claim, n_players)) if "gangshanghua" in flags else 0
    common = {f for f in (*_DOUBLES, "gangshanghua") if f in flags}
    chong = next((f for f in _CHONG if f in flags), None)  # D-GX1
    if chong:
        common.add(chong)
    if how == "qianggang":
        common.add("qianggang")
    menqing_counts = how != "dianpao" or options.menqing_on_dianpao or chong is not None
    payers = others if zimo else [from_seat]

    evs = []
    for shape, ids, _detail in readings:
        active = set(common)
        if menqing_counts and is_menqing(claim.melds) and shape in ("standard", "ziyise"):
            active.add("menqing")
        vterms = value_terms(ids, zimo or how == "qianggang", options)
        value = why_total(vterms)
        pinghu = ids == ("pinghu",)
        full = frozenset(active)
        why = amount_why(vterms, pinghu, full, chain)
        amount = why_total(why)
        # List a multiplier only if it changes the amount (the case format's ``win``).
        listed = [m for m in active if _amount(vterms, pinghu, full - {m}, chain) != amount]
        mults = ordered(listed, MULTIPLIERS)
        evs.append(
            Evaluation(
                seat=claim.seat,
                how=how,
                from_seat=None if zimo else from_seat,
                shape=shape,
                value_patterns=ids,
                multipliers=mults,
                patterns=ids + mults,
                value=value,
                share=_share(vterms, pinghu, full, chain),
                amounts={p: amount for p in payers},  # type: ignore[misc]
                why=why,
            )
        )
    return evs, [r[2] for r in readings], counts


def waits(hand: Sequence[int], melds: Sequence[Meld] = ()) -> list[int]:
    """Sorted kinds that complete ``hand`` + ``melds`` into :func:`is_win_shape`
    (see :func:`~qipai.families.mahjong.scoring_kit.waits_for`)."""
    return waits_for(hand, melds, is_win_shape)


#: The segment-code field of this variant's special 14-tile shape, for
#: ``win_shapes.shape_waits_bytes``: with it the mahjong flow keeps each
#: seat's shape waits and skips win checks that cannot succeed.
SHAPE_SHIFT = SHISANYAO_SHIFT
