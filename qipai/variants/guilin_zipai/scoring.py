"""桂林字牌 win check and settlement (docs/variants/guilin-zipai.md: Winning, 胡数,
醒 bonus flip, Settlement).

A win's 胡数 is the best split of the concealed cards
(:func:`qipai.families.zipai.groups.best_split`) plus the 胡数 of the table
melds (:func:`~qipai.families.zipai.groups.meld_hu`); it must reach the
threshold of ``hu_scale``.  It is converted to 子 (:func:`hu_to_zi`); the
winner then flips for 醒 (:func:`flip`); one share is
``(子 + 中醒数) × 番数`` (``fan`` mode) or ``子 + k + 中醒数`` (``zi`` mode),
and each of the two other players pays one share — the discarder both after
a 放炮 (:func:`settle`).  Cards are kinds 0–19 (x1–x10, d1–d10).

How a caller describes a win (:class:`~qipai.core.model.WinClaim`):

- ``hand``: the concealed cards **before** the winning card; ``melds``: the
  table melds; ``tile``: the winning card; ``how``: ``zimo`` (own draw),
  ``fangpao`` (a discard), ``pinghu`` (another player's drawn card).
- 天胡: flag ``tianhu``, ``how = "zimo"``, the dealer; ``tile`` the 亮张 (or
  None with all 21 dealt cards in ``hand``).
- 地胡: flag ``dihu``, ``how = "fangpao"``, ``from_seat`` = the dealer.
- 三笼五坎: flag ``sanlong_wukan``, ``how = "zimo"``, ``tile`` None (a dealer
  may give his 亮张 as ``tile``: it is merged into the hand).
- D-ZP4, a win right after one's own mandatory 扫/过扫/扫穿: ``how =
  "zimo"``, the new meld among ``melds``, and either ``tile = None`` or flag
  ``after_sao`` with ``tile`` = the drawn card (which lies in that meld and
  is not counted a second time).  Prefer the second form: it tells 海底胡
  which card was won on (§6); with ``tile = None`` a 海底胡 has no card to
  flip and scores no 醒.
- A plain ``zimo`` whose card makes a 扫 or 扫穿 (a pair or 坎 of it in the
  hand, or a 扫/过扫 of it on the table) is read as that mandatory move
  followed by D-ZP4 (§3: 扫 and 扫穿 take the drawn card before any 胡), so
  the card is **not** free to join another group (D-ZP15).

Choices this module makes where the variant page is silent:

- ``patterns`` names the way the hand was won and its bonuses, the source's
  名堂: exactly one of ``pinghu``, ``zimo``, ``fangpao``, ``tianhu``,
  ``sanlong_wukan`` (天胡 and 三笼五坎 replace 自摸), plus ``dihu`` with
  ``fangpao``.  ``fangpao`` is listed because the settlement applies it (the
  discarder pays both shares); ``pinghu`` so that every win names how it was
  won.  The bonuses (番 / +子) are those among ``zimo tianhu dihu
  sanlong_wukan`` (:data:`BONUSES`).
- 三笼五坎 (D-ZP6, D-ZP16) 胡数 = its 扫穿 (12/9) and 坎 (6/3) plus, among the other
  cards, the most 胡数 of disjoint valid groups, leftovers allowed: only
  一二三/壹贰叁 and 二七十/贰柒拾 score there (the other cards hold no three
  identical — those are its 坎), so it is 3 (small) or 6 (big) × the most
  such groups, ``min(n2, min(n1, n3) + min(n7, n10))`` per case.  Four
  identical cards in the hand are read as the 扫穿 placed at the deal.  At
  least 1 子 whatever the 胡数.
- 天胡: the 21 dealt cards are split as one hand (the 亮张 is not a drawn card
  that could 扫; three identical are 坎, four identical the 扫穿 placed at the
  deal, D-ZP6; a 亮张 gone into an initial 扫穿 changes nothing, D-ZP16).
- D-ZP9 with a table meld: a winning card may be the 4th of one's 扫/过扫 (a
  discard or another's draw) or of one's 碰 (any drawn card): the meld then
  scores as 开招 and the hand alone must split.  The 4th of a 坎 in the hand
  is left to ``best_split``.
- Input is checked strictly (money is settled from it): unknown ``how`` or
  flag, flags contradicting ``how`` / seats, malformed melds, a fifth copy,
  four identical concealed cards (except 天胡/三笼五坎), or a wrong number of
  cards raise :class:`~qipai.core.errors.BadCards`.  The number of cards of a
  holding (hand, winning card, melds) is ``21 + max(0, n4 − 1)`` with ``n4``
  its 4-card melds (every take is followed by a discard but the 2nd and
  later 开招/扫穿, §3.2), or one less when ``n4 ≥ 2`` (D-ZP13: a player
  dealt two 扫穿 before his first take; after a 2nd 扫穿 on one's draw).
  天胡 / 三笼五坎: the dealt 21 (dealer) or 20 cards, one more under
  ``two_saochuan = "extra_card"`` with exactly two 扫穿 dealt (D-ZP13; with
  three or more either count is accepted, as the extra card may make a third).
  Flags ``haidi``/``haidipao`` are accepted and ignored (海底胡 is read from
  the stock being empty).
- ``max_flips = 0`` switches 醒 off (海底胡 included).  With an empty stock
  and no winning card (``tile`` None) nothing is flipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.core.checks import check_win_context
from qipai.core.errors import BadCards
from qipai.core.model import (
    Flip, FlipFn, HandEnd, Meld, Payment, Settlement, Term, WinClaim, WinEval, WinReading, bracket,
    times, why_total,
)
from qipai.families.zipai.cards import BIG, CARDS, N_KINDS
from qipai.families.zipai.groups import best_split, group_hu, meld_hu, valid_group
from qipai.variants.guilin_zipai.options import ZipaiOptions, step, threshold

__all__ = [
    "HOWS",
    "BONUSES",
    "KNOWN_FLAGS",
    "N_PLAYERS",
    "Evaluation",
    "hu_to_zi",
    "holding",
    "analyse",
    "evaluate",
    "readings",
    "sanlong_wukan_hu",
    "xing_card",
    "neighbours",
    "flip",
    "share",
    "share_why",
    "hu_term",
    "xing_term",
    "settle",
]

N_PLAYERS = 3
HOWS = ("zimo", "fangpao", "pinghu")
#: The 名堂 that are worth 2番 or +1子 (§4), in the variant page's order.
BONUSES = ("zimo", "tianhu", "dihu", "sanlong_wukan")
#: Context flags a zipai win may carry (``after_sao``: D-ZP4, see the module doc).
KNOWN_FLAGS = frozenset({"tianhu", "dihu", "sanlong_wukan", "after_sao", "haidi", "haidipao"})

_MELD_SIZES = {"chi": 3, "peng": 3, "sao": 3, "guosao": 3, "saochuan": 4, "kaizhao": 4}
_SAO = ("sao", "guosao")


def _tok(kind: int) -> str:
    return CARDS.token(kind) if 0 <= kind < N_KINDS else repr(kind)


def _fmt(cards: Sequence[int]) -> str:
    return " ".join(_tok(c) for c in sorted(cards))


def _check_kinds(cards: Sequence[int], what: str) -> None:
    for c in cards:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < N_KINDS:
            raise BadCards(f"{what}: card kind {c!r} is out of range 0..19")


def _counts(cards: Sequence[int]) -> list[int]:
    out = [0] * N_KINDS
    for c in cards:
        out[c] += 1
    return out


# --------------------------------------------------------------------------
# 胡数 → 子


def hu_to_zi(hu: int, options: ZipaiOptions | None = None) -> int:
    """子 of ``hu`` 胡数 (§7): ``1 + ⌊(胡数 − threshold) / step⌋``, 0 below the
    threshold (not a win).  ``10/3``: 10–12 → 1, 13–15 → 2, 16–18 → 3 …"""
    options = options or ZipaiOptions()
    t = threshold(options)
    if hu < t:
        return 0
    return 1 + (hu - t) // step(options)


# --------------------------------------------------------------------------
# Input checks


def _check_meld(meld: Meld) -> None:
    size = _MELD_SIZES.get(meld.kind)
    if size is None:
        raise BadCards(
            f"unknown meld kind {meld.kind!r}: expected one of {', '.join(_MELD_SIZES)}"
        )
    _check_kinds(meld.cards, f"a {meld.kind} meld")
    if len(meld.cards) != size:
        raise BadCards(f"a {meld.kind} meld has {size} cards, got {_fmt(meld.cards)}")
    if meld.kind == "chi":
        if len(set(meld.cards)) == 1:
            raise BadCards(f"a chi is not three identical cards, got {_fmt(meld.cards)}")
        if not valid_group(meld.cards):
            raise BadCards(f"a chi is a valid 3-card group (§1), got {_fmt(meld.cards)}")
    elif len(set(meld.cards)) != 1:
        raise BadCards(f"a {meld.kind} is {size} identical cards, got {_fmt(meld.cards)}")


def holding(claim: WinClaim) -> list[int]:
    """Every card of the winner (D-ZP12): the concealed hand, the winning card
    (unless it already lies in a meld: flag ``after_sao``) and every table
    meld, face-down 扫/扫穿 included."""
    cards = list(claim.hand)
    if claim.tile is not None and "after_sao" not in claim.flags:
        cards.append(claim.tile)
    for m in claim.melds:
        cards.extend(m.cards)
    return cards


def _check_context(
    claim: WinClaim, how: str, dealer: int, from_seat: int | None, n_players: int
) -> None:
    if n_players != N_PLAYERS:
        raise BadCards(f"桂林字牌 is played by 3 seats, got n_players={n_players}")
    check_win_context(claim, how, HOWS, dealer, from_seat, n_players, KNOWN_FLAGS)
    flags = set(claim.flags)
    if len(flags & {"tianhu", "dihu", "sanlong_wukan", "after_sao"}) > 1:
        raise BadCards(
            "at most one of tianhu, dihu, sanlong_wukan, after_sao applies to a win, got "
            + ", ".join(sorted(flags & {"tianhu", "dihu", "sanlong_wukan", "after_sao"}))
        )
    if "tianhu" in flags and (claim.seat != dealer or how != "zimo"):
        raise BadCards("tianhu (天胡) is the dealer's win on his dealt cards (how = zimo)")
    if "dihu" in flags and (claim.seat == dealer or how != "fangpao" or from_seat != dealer):
        raise BadCards("dihu (地胡) is a win on the dealer's first discard (how = fangpao)")
    if "sanlong_wukan" in flags and how != "zimo":
        raise BadCards("sanlong_wukan (三笼五坎) is a win on the dealt cards (how = zimo)")
    if "after_sao" in flags and how != "zimo":
        raise BadCards("after_sao (D-ZP4) is a win on one's own draw (how = zimo)")
    if claim.tile is None and how != "zimo":
        raise BadCards(f"a {how} win needs the winning card")
    _check_kinds(claim.hand, "the hand")
    if claim.tile is not None:
        _check_kinds([claim.tile], "the winning card")
    for m in claim.melds:
        _check_meld(m)
    held = _counts(holding(claim))
    for kind, n in enumerate(held):
        if n > 4:
            raise BadCards(
                f"seat {claim.seat}'s hand, winning card and melds hold {n} copies of "
                f"{_tok(kind)}; there are only 4"
            )


# --------------------------------------------------------------------------
# Evaluation


class Evaluation(msgspec.Struct, frozen=True):
    """One claim's best reading.

    Attributes:
        seat: the winner.
        how: ``zimo``, ``fangpao`` or ``pinghu``.
        wins: whether it is a win (a split exists and 胡数 ≥ threshold, or a
            三笼五坎).
        hu: 胡数 of the best reading (hand groups + table melds); None when
            the cards do not split at all.
        zi: 子 of ``hu`` (§7; at least 1 for 三笼五坎; 0 when not a win).
        patterns: the 名堂 applied (see the module doc); empty when not a win.
        bonuses: the patterns among :data:`BONUSES` (each 2番 or +1子).
        melds: the table melds as scored (after a 扫/扫穿 that took the drawn
            card, or a D-ZP9 开招).
        groups: the hand's groups as ``best_split`` gives them (``(id,
            cards)``), the pair included as ``("dui", cards)``; for 三笼五坎
            the 坎 only.
    """

    seat: int
    how: str
    wins: bool
    hu: int | None
    zi: int
    patterns: tuple[str, ...]
    bonuses: tuple[str, ...]
    melds: tuple[Meld, ...] = ()
    groups: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def to_wineval(self) -> WinEval:
        """The core :class:`WinEval` answer (patterns only for a win)."""
        return WinEval(wins=self.wins, patterns=self.patterns if self.wins else (), hu=self.hu)


def _split_groups(split) -> tuple[tuple[str, tuple[int, ...]], ...]:
    groups = tuple((g[0], tuple(g[1])) for g in split.groups)
    pair = getattr(split, "pair", None)
    if pair:
        groups += (("dui", tuple(pair)),)
    return groups


def _take_quads(counts: list[int], melds: list[Meld]) -> None:
    """Four identical concealed cards of a dealt hand are its 扫穿 (§3.3 step 1)."""
    for kind in range(N_KINDS):
        if counts[kind] == 4:
            counts[kind] = 0
            melds.append(Meld(kind="saochuan", cards=(kind,) * 4, hidden=4))


def sanlong_wukan_hu(counts: Sequence[int], melds: Sequence[Meld]) -> int | None:
    """胡数 of a 三笼五坎 (D-ZP6), or None if the dealt hand is not one.

    Args:
        counts: 20 counts of the concealed dealt cards, no four identical
            (those are 扫穿 melds).
        melds: the 扫穿 placed at the deal (only ``saochuan``).

    Returns:
        None unless there are three 扫穿, or five 坎 and 扫穿 together;
        otherwise Σ 扫穿 + Σ 坎 + the best 胡数 of disjoint 一二三/二七十
        groups among the other cards (module doc).
    """
    n_sc = sum(1 for m in melds if m.kind == "saochuan")
    kans = [k for k in range(N_KINDS) if counts[k] == 3]
    if n_sc < 3 and n_sc + len(kans) < 5:
        return None
    hu = sum(meld_hu(m) for m in melds)
    hu += sum(meld_hu(Meld(kind="sao", cards=(k,) * 3)) for k in kans)
    rest = [0 if counts[k] == 3 else counts[k] for k in range(N_KINDS)]
    for base in (0, BIG):
        n = [0] + rest[base : base + 10]  # n[1..10]
        groups = min(n[2], min(n[1], n[3]) + min(n[7], n[10]))
        if groups:
            value = meld_hu(Meld(kind="chi", cards=(base, base + 1, base + 2)))
            hu += groups * value
    return hu


def _expected_sizes(n4: int) -> tuple[int, ...]:
    """Holding sizes (hand, winning card, melds) a win can have with ``n4``
    four-card melds: 21 with none; with some, each four holds one card more
    than a group of three, and whether a take that made one was followed by
    a discard (the first, or a D-ZP13 skip) shifts it — so 20 … 21 + n4
    (a hand emptied by a mandatory 扫 is over by more: :func:`_empty_hand_sizes`).
    With no four only 21 is reachable in play."""
    return (21,) if n4 == 0 else tuple(range(20, 22 + n4))


def _empty_hand_sizes(sizes: tuple[int, ...], n4: int) -> tuple[int, ...]:
    """Holding sizes of a claim whose hand is empty, from those of a hand
    that is not (:func:`_expected_sizes`, ``n4`` four-card melds): an empty
    hand has nothing to discard when a discard is due, and each such skip
    leaves the seat one card more over — the mandatory 扫 that emptied it
    (D-ZP18) and, after it, the first 开招 or 扫穿 of the hand (D-ZP20: it
    makes a four, so only with ``n4`` ≥ 1).  Once empty a hand stays empty
    (吃, 碰 and 扫 need hand cards), so no third skip can come."""
    return (*sizes, sizes[-1] + 1, sizes[-1] + 2) if n4 else (*sizes, sizes[-1] + 1)


#: One way to read a win: the hand's counts, the winning card still free to
#: join a group of the hand (None: it lies in a meld or was merged into the
#: hand), and the table melds as scored.
_Reading = tuple[list[int], int | None, list[Meld]]


def analyse(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None = None,
    options: ZipaiOptions | None = None,
    n_players: int = N_PLAYERS,
    every: list[tuple[int, Any, list[Meld], list[int], int | None]] | None = None,
) -> Evaluation:
    """Whether ``claim`` wins, its 胡数, 子 and 名堂 (§4, §5, §7, D-ZP4–D-ZP9).

    See the module doc for how the claim is read.  胡数 = the most over the
    readings of (hand split's 胡数 + Σ meld 胡数); a win needs a reading and
    胡数 ≥ the threshold (三笼五坎: no minimum).  ``every``, if given, receives
    each reading that splits as ``(胡数, best split, melds as scored, hand
    counts, winning card)``, in the order tried (the first with the most
    胡数 is the one kept).

    Raises:
        BadCards: impossible input (module doc).
    """
    options = options or ZipaiOptions()
    _check_context(claim, how, dealer, from_seat, n_players)
    flags = set(claim.flags)
    seat = claim.seat
    if "tianhu" in flags or "sanlong_wukan" in flags:
        counts, melds = _dealt_hand(claim, dealer, options)
        if "sanlong_wukan" in flags:
            return _sanlong_wukan(seat, how, counts, melds, options)
        tried: list[_Reading] = [(counts, None, melds)]
    else:
        counts = _counts(claim.hand)
        _check_play_holding(claim, counts)
        tried = _play_readings(claim, counts, how, from_seat)
    best = _best_reading(tried, how == "zimo", every)
    if best is None:
        return Evaluation(seat, how, False, None, 0, (), ())
    hu, split, ms = best
    zi = hu_to_zi(hu, options)
    if zi == 0:
        return Evaluation(seat, how, False, hu, 0, (), (), tuple(ms), _split_groups(split))
    patterns = _mingtang(flags, how)
    bonuses = tuple(p for p in BONUSES if p in patterns)
    return Evaluation(seat, how, True, hu, zi, patterns, bonuses, tuple(ms), _split_groups(split))


def _dealt_hand(claim: WinClaim, dealer: int,
                options: ZipaiOptions) -> tuple[list[int], list[Meld]]:
    """天胡 / 三笼五坎, a win on the dealt cards: their counts, the 亮张 merged
    in and four identical taken out as the 扫穿 placed at the deal, with
    those 扫穿 (D-ZP6, D-ZP16).

    Raises:
        BadCards: a table meld other than 扫穿, or not the dealt number of
            cards (D-ZP13).
    """
    melds = list(claim.melds)
    counts = _counts(claim.hand)
    if any(m.kind != "saochuan" for m in melds):
        raise BadCards("at the deal only the 扫穿 (saochuan) are on the table")
    if claim.tile is not None:
        counts[claim.tile] += 1
    _take_quads(counts, melds)
    n_sc = len(melds)
    # D-ZP13: the extra card goes to a seat dealt exactly two 扫穿; it
    # may make a third, so three 扫穿 hold the dealt count or one more
    dealt = 21 if claim.seat == dealer else 20
    extra = options.two_saochuan == "extra_card"
    wants = {dealt + 1} if extra and n_sc == 2 else (
        {dealt, dealt + 1} if extra and n_sc >= 3 else {dealt})
    total = len(holding(claim))
    if total not in wants:
        raise BadCards(
            f"seat {claim.seat} was dealt {' or '.join(map(str, sorted(wants)))}"
            f" cards (扫穿 included), got {total}"
        )
    return counts, melds


def _sanlong_wukan(seat: int, how: str, counts: list[int], melds: list[Meld],
                   options: ZipaiOptions) -> Evaluation:
    """A 三笼五坎 claim (D-ZP6, D-ZP16): its 胡数 (:func:`sanlong_wukan_hu`)
    and at least 1 子 whatever the 胡数; its groups are its 坎.  Not a win
    when the dealt hand is not one."""
    hu = sanlong_wukan_hu(counts, melds)
    if hu is None:
        return Evaluation(seat, how, False, None, 0, (), (), tuple(melds))
    zi = max(1, hu_to_zi(hu, options))
    groups = tuple(("kan", (k,) * 3) for k in range(N_KINDS) if counts[k] == 3)
    return Evaluation(seat, how, True, hu, zi, ("sanlong_wukan",), ("sanlong_wukan",),
                      tuple(melds), groups)


def _check_play_holding(claim: WinClaim, counts: list[int]) -> None:
    """A win in play holds no four identical concealed cards (they are a
    扫穿 laid on the table) and as many cards as play can leave with its
    four-card melds (:func:`_expected_sizes`, :func:`_empty_hand_sizes`).

    Raises:
        BadCards: four identical concealed cards, or a wrong number of cards.
    """
    if any(n == 4 for n in counts):
        raise BadCards(
            "four identical concealed cards are a 扫穿 laid on the table, got "
            + _fmt(claim.hand)
        )
    n4 = sum(1 for m in claim.melds if len(m.cards) == 4)
    sizes = _expected_sizes(n4)
    if not claim.hand:
        sizes = _empty_hand_sizes(sizes, n4)
    total = len(holding(claim))
    if total not in sizes:
        raise BadCards(
            f"with {n4} four-card meld(s) a winning holding has "
            f"{' or '.join(map(str, sizes))} cards "
            f"(hand, winning card, melds), got {total}"
        )


def _play_readings(claim: WinClaim, counts: list[int], how: str,
                   from_seat: int | None) -> list[_Reading]:
    """The readings of a win in play: after one's own 扫 (D-ZP4), on one's
    own draw onto one's 扫 (a mandatory 扫穿), or the hand as it is plus
    each 开招 the winning card may make (D-ZP9).

    Raises:
        BadCards: a win after 扫 without the 扫 among the melds (D-ZP4).
    """
    melds = list(claim.melds)
    tile = claim.tile
    if "after_sao" in claim.flags or tile is None:  # D-ZP4
        if not any(m.kind in (*_SAO, "saochuan") for m in melds) or (
            tile is not None
            and not any(m.kind in (*_SAO, "saochuan") and m.cards[0] == tile for m in melds)
        ):
            raise BadCards(
                "a win after 扫 (D-ZP4) needs the 扫/过扫/扫穿 that took the drawn card"
                + (f" ({_tok(tile)})" if tile is not None else "")
                + " among the melds"
            )
        return [(counts, None, melds)]
    if how == "zimo" and any(m.kind in _SAO and m.cards[0] == tile for m in melds):
        # One's own draw on one's 扫 is a mandatory 扫穿, then D-ZP4.  (On a
        # pair or 坎 of the hand, best_split itself forces the 扫 / 扫穿.)
        i = next(i for i, m in enumerate(melds) if m.kind in _SAO and m.cards[0] == tile)
        up = Meld(kind="saochuan", cards=(tile,) * 4, hidden=4)
        return [(counts, None, melds[:i] + [up] + melds[i + 1 :])]
    out: list[_Reading] = [(counts, tile, melds)]
    # D-ZP9: the 4th card of one's 扫 (a card from another player) or
    # of one's 碰 (any drawn card), laid down as a 开招.
    for i, m in enumerate(melds):
        if m.cards[0] != tile:
            continue
        if (m.kind in _SAO and how != "zimo") or (m.kind == "peng" and how != "fangpao"):
            up = Meld(kind="kaizhao", cards=(tile,) * 4,
                      from_seat=None if how == "zimo" else from_seat,
                      claimed=tile)
            out.append((counts, None, melds[:i] + [up] + melds[i + 1 :]))
    return out


def _best_reading(
    tried: list[_Reading],
    self_drawn: bool,
    every: list[tuple[int, Any, list[Meld], list[int], int | None]] | None,
) -> tuple[int, Any, list[Meld]] | None:
    """The reading with the most 胡数 (its hand's best split + Σ meld 胡数),
    the first of equals, as ``(胡数, split, melds)``; None when no reading
    splits.  ``every``: as :func:`analyse` says."""
    best: tuple[int, Any, list[Meld]] | None = None
    for counts, card, ms in tried:
        split = best_split(counts, card, self_drawn)
        if split is None:
            continue
        hu = split.hu + sum(meld_hu(m) for m in ms)
        if every is not None:
            every.append((hu, split, ms, counts, card))
        if best is None or hu > best[0]:
            best = (hu, split, ms)
    return best


def _mingtang(flags: set[str], how: str) -> tuple[str, ...]:
    """The 名堂 of a win (module doc): 天胡 replaces 自摸, 地胡 comes with
    放炮, else the way the hand was won."""
    if "tianhu" in flags:
        return ("tianhu",)
    if "dihu" in flags:
        return ("fangpao", "dihu")
    return (how,)


def readings(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None = None,
    options: ZipaiOptions | None = None,
    n_players: int = N_PLAYERS,
) -> list[WinReading]:
    """Every reading :func:`analyse` considers — the hand as it is, and the
    meld the winning card may make (D-ZP9 开招, a 扫穿 on one's own 扫) — with
    every split of each (the paid one is :func:`best_split`'s; the others
    come from the brute-force enumeration of
    :func:`qipai.families.zipai.reference.every_split`), the one kept marked
    ``paid`` (hook ``qipai_readings``; for explanations, not play).

    Returns:
        One :class:`~qipai.core.model.WinReading` per split (``groups``: the
        table melds, then the hand's groups, each with its 胡数; ``value``:
        the 子 of its 胡数; ``patterns`` empty for a split below the
        threshold); [] if the claim does not win.

    Raises:
        BadCards: as :func:`analyse`.
    """
    from qipai.families.zipai.reference import every_split

    options = options or ZipaiOptions()
    every: list[tuple[int, Any, list[Meld], list[int], int | None]] = []
    ev = analyse(claim, how, dealer, from_seat, options, n_players, every)
    if not ev.wins:
        return []
    if not every:  # 三笼五坎: its 扫穿 and 坎, and the best groups of the rest (D-ZP16)
        groups = tuple(_group_text(m.kind, m.cards) for m in ev.melds) + tuple(
            _group_text(g, cs) for g, cs in ev.groups)
        rest = list(holding(claim))
        for c in [c for m in ev.melds for c in m.cards] + [c for _, cs in ev.groups for c in cs]:
            rest.remove(c)
        shown = sum(meld_hu(m) for m in ev.melds) + sum(group_hu(g, cs) for g, cs in ev.groups)
        if rest:
            groups += (f"rest {CARDS.format(rest)} ({(ev.hu or 0) - shown})",)
        return [WinReading("sanlong_wukan", groups, ev.patterns, ev.zi, ev.hu, True)]
    top = max(e[0] for e in every)
    paid = next(i for i, e in enumerate(every) if e[0] == top)
    plain = {(m.kind, m.cards) for m in claim.melds}
    out = []
    for i, (hu, split, ms, counts, card) in enumerate(every):
        made = [m.kind for m in ms if (m.kind, m.cards) not in plain]
        shape = made[0] if made else "split"
        melds_hu = hu - split.hu
        mine = _split_groups(split)
        splits = [(split, True)] + [(s, False) for s in every_split(counts, card, how == "zimo")
                                    if sorted(_split_groups(s)) != sorted(mine)]
        for s, own in splits:
            total = s.hu + melds_hu
            zi = hu_to_zi(total, options)
            groups = tuple(_group_text(m.kind, m.cards) for m in ms) + tuple(
                _group_text(g, cs) for g, cs in _split_groups(s))
            out.append(WinReading(shape, groups, ev.patterns if zi else (), zi, total,
                                  own and i == paid))
    return out


def _group_text(kind: str, cards: Sequence[int]) -> str:
    """``"kan d3 d3 d3 (6)"``: a group's id, cards and 胡数."""
    return f"{kind} {CARDS.format(cards)} ({group_hu(kind, cards)})"


def evaluate(
    claim: WinClaim,
    how: str,
    dealer: int,
    from_seat: int | None = None,
    options: ZipaiOptions | None = None,
    n_players: int = N_PLAYERS,
) -> WinEval:
    """The win check (the case format's ``win``): :func:`analyse` as a
    :class:`WinEval` — ``wins``, ``patterns`` (the 名堂 applied, module doc)
    and ``hu`` (胡数 of the best reading; also given for a split below the
    threshold, None when the cards do not split).

    Raises:
        BadCards: impossible input (module doc).
    """
    return analyse(claim, how, dealer, from_seat, options, n_players).to_wineval()


# --------------------------------------------------------------------------
# 醒


def _shift(kind: int, d: int) -> int:
    """The card ``d`` numbers from ``kind`` in the same case, wrapping (D-ZP7)."""
    base = BIG if kind >= BIG else 0
    return base + (kind - base + d) % 10


def xing_card(flipped: int, options: ZipaiOptions | None = None) -> int:
    """The 醒 card of a flipped card (§6): ``shang`` 上醒 the next number of
    the same case (x3 → x4, x10 → x1, D-ZP7), ``ben`` 本醒 the card itself,
    ``xia`` 下醒 the previous number (x4 → x3, x1 → x10).

    Raises:
        BadCards: a kind outside 0–19.
    """
    _check_kinds([flipped], "the flipped card")
    mode = (options or ZipaiOptions()).xing_mode
    return _shift(flipped, {"shang": 1, "ben": 0, "xia": -1}[mode])


def neighbours(flipped: int) -> tuple[int, int, int]:
    """上中下 of a flipped card for the 连翻 tests: previous, same, next
    number of its case (wrapping, D-ZP7)."""
    _check_kinds([flipped], "the flipped card")
    return (_shift(flipped, -1), flipped, _shift(flipped, 1))


def flip(
    holding: Sequence[int],
    stock: Sequence[int],
    tile: int | None = None,
    options: ZipaiOptions | None = None,
) -> Flip:
    """The winner's 醒 (§6, D-ZP7, D-ZP8, D-ZP12).

    Turns over ``stock[0]``; 中醒数 += copies of its 醒 card
    (:func:`xing_card`) in ``holding``.  Then, with 上中下 the flipped card's
    previous, same and next card: 真三醒 (3 or 4 copies of one of them held)
    or 假四醒 (4 or more of them held in total) earns the next flip, which
    adds its 中醒数 and is tested the same way, until a flip earns nothing,
    the stock is used up or ``options.max_flips`` flips are made.  海底胡:
    with an empty ``stock`` the winning card ``tile`` is the flipped card (its
    醒 per ``xing_mode``), with no further flip; no ``tile`` either: nothing
    flipped.  ``max_flips = 0``: no 醒 at all.

    Args:
        holding: every card of the winner (D-ZP12: hand, winning card, every
            meld, face-down ones included), kinds.
        stock: what is left to draw, head first.
        tile: the winning card (used for 海底胡; must be in ``holding``).
        options: ``xing_mode``, ``max_flips``.

    Returns:
        :class:`Flip`: the cards used as flipped cards in order (the winning
        card for 海底胡) and the total 中醒数.

    Raises:
        BadCards: a kind outside 0–19, a fifth copy among ``holding`` and
            ``stock``, or a ``tile`` not in ``holding``.
    """
    options = options or ZipaiOptions()
    _check_kinds(holding, "the holding")
    _check_kinds(stock, "the stock")
    held = _counts(holding)
    seen = _counts([*holding, *stock])
    for kind, n in enumerate(seen):
        if n > 4:
            raise BadCards(
                f"the winner's holding and the stock hold {n} copies of {_tok(kind)}; "
                "there are only 4"
            )
    if tile is not None:
        _check_kinds([tile], "the winning card")
        if not held[tile]:
            raise BadCards(f"the winning card {_tok(tile)} is not in the holding")
    limit = options.max_flips
    if limit == 0:
        return Flip(flipped=(), xing=0)
    if not stock:  # 海底胡
        if tile is None:
            return Flip(flipped=(), xing=0)
        got = held[xing_card(tile, options)]
        return Flip(flipped=(tile,), xing=got, each=(got,))
    flipped: list[int] = []
    each: list[int] = []
    for card in stock:
        if limit is not None and len(flipped) >= limit:
            break
        flipped.append(card)
        each.append(held[xing_card(card, options)])
        trio = [held[k] for k in neighbours(card)]
        if not (max(trio) >= 3 or sum(trio) >= 4):  # neither 真三醒 nor 假四醒
            break
    return Flip(flipped=tuple(flipped), xing=sum(each), each=tuple(each))


# --------------------------------------------------------------------------
# Settlement


def share(zi: int, xing: int, n_bonuses: int, options: ZipaiOptions | None = None) -> int:
    """One paying share (§7): ``(子 + 中醒数) × 2^k`` in ``fan`` mode,
    ``子 + k + 中醒数`` in ``zi`` mode, for ``k`` bonuses."""
    options = options or ZipaiOptions()
    if options.bonus_mode == "zi":
        return zi + n_bonuses + xing
    return (zi + xing) * 2**n_bonuses


def hu_term(ev: Evaluation) -> Term:
    """The 胡数 of a win as a breakdown term (§5): ``hu`` ``hushu``, made of
    one ``group`` term per group of the split (``id`` its kind — ``kan``,
    ``bi``, ``dui`` …, ``cards`` its cards, ``value`` its 胡数) and per
    table meld as scored.  For 三笼五坎 (D-ZP6) the 扫穿 and 坎 are its
    ``basis`` (the other cards' best groups are not listed one by one)."""
    melds = tuple(Term("group", m.kind, meld_hu(m), cards=m.cards) for m in ev.melds)
    groups = tuple(Term("group", g, group_hu("kan" if g == "kan" else g, cards), cards=cards)
                   for g, cards in ev.groups)
    hu = ev.hu or 0
    if "sanlong_wukan" in ev.patterns:
        return Term("hu", "hushu", hu, rule="§5, D-ZP6", basis=melds + groups)
    return Term("hu", "hushu", hu, rule="§5", of=groups + melds)


def xing_term(f: Flip) -> Term:
    """The 醒 as one breakdown term (§6): ``xing`` ``xing`` = 中醒数, made of
    one ``flip`` term per flipped card (``cards`` = it, ``value`` = the
    copies of its 醒 card held)."""
    if f.flipped and len(f.each) == len(f.flipped):
        flips = tuple(Term("flip", "xing", n, cards=(c,), rule="§6")
                      for c, n in zip(f.flipped, f.each))
        return Term("xing", "xing", f.xing, rule="§6", of=flips)
    return Term("xing", "xing", f.xing, cards=f.flipped, rule="§6")


def share_why(ev: Evaluation, f: Flip, options: ZipaiOptions | None = None) -> tuple[Term, ...]:
    """One paying share as breakdown terms (§7): ``zi`` (the 子 of the 胡数,
    ``basis`` = :func:`hu_term`) and the 醒 (:func:`xing_term`); ``fan``
    mode ``(子 + 醒) × 2`` per bonus, ``zi`` mode ``子 + 1`` per bonus ``+ 醒``
    (``bonus`` terms, ``id`` = the 名堂).  Totals :func:`share`."""
    options = options or ZipaiOptions()
    zi = Term("zi", "zi", ev.zi, rule=f"§7 hu_scale {options.hu_scale}", basis=(hu_term(ev),))
    xing = xing_term(f)
    if options.bonus_mode == "zi":
        return (zi, *(Term("bonus", b, 1, rule="§4") for b in ev.bonuses), xing)
    head = (zi, xing) if not ev.bonuses else (bracket((zi, xing)),)
    return head + tuple(Term("bonus", b, 2, "*", rule="§4") for b in ev.bonuses)


def settle(end: HandEnd, options: ZipaiOptions | None = None,
           bonus_flip: FlipFn | None = None) -> Settlement:
    """Settle a finished hand's win (§4, §6, §7).

    The one winner's claim is evaluated (:func:`analyse`), flips for 醒
    (:func:`flip` on his whole holding, ``end.stock``, his winning card),
    and one share = ``(子 + 中醒数) × 番数`` (``zi`` mode: ``子 + k +
    中醒数``).  ``fangpao`` (地胡 included): the discarder ``end.from_seat``
    pays both shares in one payment (reason ``"fangpao"``); otherwise each
    of the two other players pays one share (reason ``"hu"``).  The winner
    gains ``2 × share`` either way (seed: 积分 = (子 + 中醒数) × 番数 × 2).

    Args:
        end: ``dealer``, ``how`` (``zimo``/``fangpao``/``pinghu``),
            ``from_seat`` (the discarder or drawer; None or the winner for
            zimo), ``winners`` (exactly one :class:`WinClaim`), ``stock``
            (cards left, head first), ``n_players`` (3).
        options: the variant options.
        bonus_flip: the 醒 (``bonus_flip(holding, tile, stock) -> Flip``):
            the engine gives the ruleset's ``qipai_bonus_flip``, so a house
            plugin's flip is the one paid; None: :func:`flip`.

    Returns:
        :class:`Settlement`: payments (子, sum to zero), ``patterns`` and
        ``xing`` keyed by the winner's seat, ``flipped``.

    Raises:
        BadCards: not exactly one winner, a claim that does not win, a fifth
            copy among the winner's cards and the stock, or any input
            :func:`analyse` refuses.
    """
    options = options or ZipaiOptions()
    if len(end.winners) != 1:
        raise BadCards(f"a 桂林字牌 hand has exactly one winner (D-ZP3), got {len(end.winners)}")
    (claim,) = end.winners
    ev = analyse(claim, end.how, end.dealer, end.from_seat, options, end.n_players)
    if not ev.wins:
        why = "does not split" if ev.hu is None else f"has {ev.hu} 胡数, below {threshold(options)}"
        raise BadCards(f"seat {claim.seat}'s claim is not a win: it {why}")
    tile = claim.tile
    if bonus_flip is None:
        f = flip(holding(claim), list(end.stock), tile, options)
    else:
        f = bonus_flip(holding(claim), tile, list(end.stock))
    why = share_why(ev, f, options)
    amount = why_total(why)
    winner = claim.seat
    if end.how == "fangpao":
        assert end.from_seat is not None  # checked by analyse
        both = times(why, Term("liability", "fangpao", 2, rule="§7"))
        payments: tuple[Payment, ...] = (
            Payment(end.from_seat, winner, why_total(both), "fangpao", both),)
    else:
        payments = tuple(
            Payment(p, winner, amount, "hu", why) for p in range(end.n_players) if p != winner
        )
    return Settlement(
        payments=payments,
        patterns={winner: ev.patterns},
        xing={winner: f.xing},
        flipped=f.flipped,
    )
