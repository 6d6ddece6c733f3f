"""桂林麻将 settlement of a win: 翻醒 (§3.3), who pays (§3.4), 互包 (§4).

``score = pattern value × multiplier + 醒数`` per paying seat, in 子.  Pattern
values and multipliers come from :mod:`.patterns`; this module adds the bonus
flip and turns the per-payer amounts into pairwise :class:`Payment` s, moved
or added to by 互包.  Kong and 追牌 payments are instant and not settled here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from qipai.core.errors import BadCards
from qipai.core.model import Flip, FlipFn, HandEnd, Settlement, Term, bracket, times, why_total
from qipai.families.mahjong.scoring_kit import (
    Ledger,
    check_hand_end,
    evaluate_winners,
    partners as _partners,
    relation_pairs,
)
from qipai.families.mahjong.tiles import N_KINDS
from qipai.variants.guilin_mahjong.options import GuilinOptions
from qipai.variants.guilin_mahjong import patterns
from qipai.variants.guilin_mahjong.patterns import Evaluation, evaluate

__all__ = ["xing_neighbours", "flip", "xing_term", "normal_amounts", "normal_why", "settle"]

_HONOR_CYCLE = 7  # 东 南 西 北 中 发 白, cyclic (docs/variants/index.md, Notation)


def xing_neighbours(kind: int) -> tuple[int, ...]:
    """The 上醒 and 下醒 kinds of a flipped tile (§3.3), sorted.

    Suited tile of rank r: ranks r+1 and r−1 in **all three suits** (suit is
    ignored), 9 and 1 being neighbours — six kinds (flip 3m → 2m 4m 2p 4p 2s
    4s).  Honor: its two neighbours in the cycle E S W N C F P, P and E being
    neighbours — two kinds (flip P → E F).  The flipped kind itself is never
    one of them.

    Raises:
        BadCards: ``kind`` outside 0–33.
    """
    if not 0 <= kind < N_KINDS:
        raise BadCards(f"tile kind {kind} is out of range 0..33")
    if kind >= 27:
        h = kind - 27
        return tuple(sorted({27 + (h + 1) % _HONOR_CYCLE, 27 + (h - 1) % _HONOR_CYCLE}))
    r = kind % 9
    ranks = ((r - 1) % 9, (r + 1) % 9)
    return tuple(sorted(suit * 9 + x for suit in range(3) for x in ranks))


def flip(
    holding: Sequence[int],
    stock: Sequence[int],
    options: GuilinOptions | None = None,
    start: int = 0,
) -> Flip:
    """One winner's 翻醒 (§3.3, D-GL6, D-GL8).

    Flips ``stock[start]``; 醒数 of that flip = how many tiles of ``holding``
    are its 上醒 or 下醒 (:func:`xing_neighbours`; the flipped kind itself does
    not count).  While one flip's 醒数 reaches ``options.reflip_at`` (4) the
    next stock tile is flipped too, up to ``options.max_flips`` (2) flips in
    all; the 醒数 add up.  No tile left to flip: no flip, 醒数 0 (D-GL8).

    Args:
        holding: every tile of the winning hand as kinds — concealed tiles,
            the winning tile and all meld tiles, a kong counting 4 (D-GL6;
            :func:`.patterns.holding` builds it).
        stock: what is left of the live wall, head first (kinds).
        options: the variant options (``max_flips``, ``reflip_at``).
        start: index in ``stock`` of the first flip (0: the head).

    Returns:
        :class:`Flip` with the tiles flipped (in order) and the total 醒数 (子
        per paying seat).

    Raises:
        BadCards: a kind outside 0–33, or ``start`` < 0.
    """
    options = options or GuilinOptions()
    if start < 0:
        raise BadCards(f"start must be >= 0, got {start}")
    for c in (*holding, *stock):
        if not 0 <= c < N_KINDS:
            raise BadCards(f"tile kind {c} is out of range 0..33")
    held = Counter(holding)
    flipped: list[int] = []
    each: list[int] = []
    i = start
    while len(flipped) < options.max_flips and i < len(stock):
        tile = stock[i]
        got = sum(held[k] for k in xing_neighbours(tile))
        flipped.append(tile)
        each.append(got)
        i += 1
        if got < options.reflip_at:
            break
    return Flip(flipped=tuple(flipped), xing=sum(each), each=tuple(each))


def xing_term(f: Flip) -> Term:
    """A 翻醒 as one breakdown term: ``xing`` ``fanxing`` = the 醒数, made of
    one ``flip`` term per flipped tile (``cards`` = the tile, ``value`` = its
    醒数, §3.3).  A flip without per-tile 醒数 (a house plugin's) is one
    term with all the flipped tiles."""
    if len(f.each) == len(f.flipped) and f.flipped:
        flips = tuple(Term("flip", "fanxing", n, cards=(t,), rule="§3.3")
                      for t, n in zip(f.flipped, f.each))
        return Term("xing", "fanxing", f.xing, rule="§3.3", of=flips)
    return Term("xing", "fanxing", f.xing, cards=f.flipped, rule="§3.3")


# --------------------------------------------------------------------------
# Settlement


def _hubao_pairs(end: HandEnd, options: GuilinOptions) -> set[frozenset[int]]:
    """The 互包 pairs (§4.1) as seat pairs; empty when ``options.hubao`` is off."""
    pairs = {frozenset(p) for p in relation_pairs(end, "hubao")}
    return pairs if options.hubao else set()


def normal_amounts(
    end: HandEnd, options: GuilinOptions | None = None, bonus_flip: FlipFn | None = None
) -> tuple[dict[int, dict[int, int]], dict[int, Evaluation], dict[int, Flip]]:
    """The amounts owed with no 互包 (D-GL13's "normal amount"), per winner.

    Returns:
        ``(amounts, evaluations, flips)``: ``amounts[winner][payer]`` =
        value × multiplier + 醒数 (子) — the discarder / kong maker alone for
        a discard win, the other three for zimo; the winners' evaluations and
        their flips, keyed by winner seat.  Several winners share the flip
        tiles (D-GL7): each flips from the head of ``end.stock``, through
        ``bonus_flip(holding, tile, stock)`` when given (the ruleset's
        ``qipai_bonus_flip``, as :func:`settle` says), else :func:`flip`.

    Raises:
        BadCards: as :func:`settle`.
    """
    options = options or GuilinOptions()
    check_hand_end(end, "桂林麻将")
    evs = evaluate_winners(
        end, lambda w: evaluate(w, end.how, end.dealer, end.from_seat, options, end.n_players)
    )
    if bonus_flip is None:
        flips = {w.seat: flip(patterns.holding(w), end.stock, options) for w in end.winners}
    else:
        flips = {w.seat: bonus_flip(patterns.holding(w), w.tile, end.stock) for w in end.winners}
    whys = normal_why(evs, flips)
    amounts = {seat: {p: why_total(t) for p, t in by.items()} for seat, by in whys.items()}
    return amounts, evs, flips


def normal_why(evs: dict[int, Evaluation],
               flips: dict[int, Flip]) -> dict[int, dict[int, tuple[Term, ...]]]:
    """The normal amounts as breakdowns: ``[winner][payer]`` = value (its
    patterns, the dealer's share) × each multiplier + 翻醒 (§3.4)."""
    return {
        seat: {p: ev.amount_why(p) + (xing_term(flips[seat]),) for p in ev.payers}
        for seat, ev in evs.items()
    }


def settle(end: HandEnd, options: GuilinOptions | None = None,
           bonus_flip: FlipFn | None = None) -> Settlement:
    """Settle the wins of a finished hand (§3.3, §3.4, §4; D-GL4, D-GL7, D-GL10, D-GL13, D-GL14).

    Normal amounts (:func:`normal_amounts`): each paying seat owes the
    winner ``value × multiplier + 醒数``.  Then 互包 pairs
    (``end.relations["hubao"]``, ignored when ``options.hubao`` is off), each
    pair applied independently and the results added: cases 2 and 4 after a
    zimo (:func:`_zimo_hubao`), cases 1 and 3 (:func:`_dianpao_hubao`) and
    case 5 (:func:`_cowinner_hubao`) after a discard.

    Where the rules are silent this module decides (each case's decisions
    are told beside it); of the whole: ``Payment.reason`` is ``"hubao"``
    when 互包 changed or created the transfer, else ``"hu"``; one Payment
    per (payer, payee), zero omitted.

    Args:
        end: the hand's end — ``dealer``, ``how`` (``zimo``/``dianpao``/
            ``qianggang``; 抢杠胡 is settled as a discard by the kong maker,
            D-GL4), ``from_seat`` (discarder / kong maker; None or the winner
            for zimo), ``winners`` (one :class:`WinClaim` each; several only on
            one discard/robbed tile, all on the same tile), ``stock`` (kinds
            left to flip, head first), ``relations["hubao"]`` (seat pairs),
            ``n_players`` (must be 4).
        options: the variant options.
        bonus_flip: each winner's 翻醒 (``bonus_flip(holding, tile, stock)
            -> Flip``): the engine gives the ruleset's ``qipai_bonus_flip``,
            so a house plugin's flip is the one paid; None: :func:`flip`.

    Returns:
        :class:`Settlement`: pairwise payments (子, sums to zero), pattern ids
        and 醒数 by winner seat, and the stock tiles flipped (D-GL7: the
        winners share them, so this is the longest of their flips).

    Raises:
        BadCards: a claim that does not win, a fifth copy of a kind (within a
            hand, or across the winners' hands, the winning tile and the
            stock), a bad meld or hand size, an unknown ``how`` or flag,
            inconsistent seats (zimo with several winners, a discard win
            without another seat as ``from_seat``, winners on different
            tiles, a bad hubao pair), or ``n_players`` other than 4.
    """
    options = options or GuilinOptions()
    amounts, evs, flips = normal_amounts(end, options, bonus_flip)
    normal = normal_why(evs, flips)
    pairs = _hubao_pairs(end, options)
    ledger = Ledger()
    if end.how == "zimo":
        (winner,) = evs
        _zimo_hubao(ledger, winner, normal[winner], pairs)
    else:
        d = end.from_seat
        assert d is not None  # checked by evaluate
        winners = set(evs)
        for w in sorted(winners):
            _dianpao_hubao(ledger, w, d, normal[w][d], winners, pairs, options.hubao_dealin)
        _cowinner_hubao(ledger, d, normal, amounts, pairs)
    longest = max(flips.values(), key=lambda f: len(f.flipped))
    return Settlement(
        payments=ledger.payments(),
        patterns={seat: ev.patterns for seat, ev in sorted(evs.items())},
        xing={seat: f.xing for seat, f in sorted(flips.items())},
        flipped=tuple(longest.flipped),
    )


def _hubao(factor: int, case: str, terms: tuple[Term, ...]) -> tuple[Term, ...]:
    """``terms`` × ``factor`` as the 互包 liability of §4.2 case ``case``."""
    return times(terms, Term("liability", "hubao", factor, rule=f"§4.2 case {case}"))


def _zimo_hubao(ledger: Ledger, winner: int, owed: dict[int, tuple[Term, ...]],
                pairs: set[frozenset[int]]) -> None:
    """A zimo: each other seat pays ``winner`` its normal amount ``owed[payer]``
    unless the winner has 互包 partners (§4.2):

    2. A wins by zimo with one partner B: B pays twice the sum of the three
       normal amounts; nobody else pays.
    4. A zimo winner with several partners: each partner pays the full case-2
       amount; the non-partners pay nothing.

    Where the rules are silent: a zimo winner with three partners pays as
    case 4 (each partner pays the full doubled amount).
    """
    partners = _partners(winner, pairs)
    if partners:  # cases 2 and 4
        three = tuple(bracket(t) for _, t in sorted(owed.items()))
        for b in partners:
            ledger.add(b, winner, _hubao(2, "2" if len(partners) == 1 else "4", three), "hubao")
    else:
        for payer, why in owed.items():
            ledger.add(payer, winner, why, "hu")


def _dianpao_hubao(ledger: Ledger, w: int, d: int, why: tuple[Term, ...], winners: set[int],
                   pairs: set[frozenset[int]], dealin: str) -> None:
    """D deals in to the winner W: D pays W the normal amount ``why``, and the
    互包 pairs of W and of D add to it (§4.2):

    1. C deals in to A (C not A's partner B, B not a co-winner): B also pays A
       the normal amount C owes A.
    3. ``hubao_dealin="partner_double"`` (default): A deals in to his partner
       B — A pays B twice the normal amount.  ``"literal"``: moreover, when A
       deals in to any W other than B, B pays W twice the normal amount (A
       pays his normal amount).

    Where the rules are silent: under ``"literal"``, D's partner pays the
    winner twice the normal amount even if he is himself a co-winner (D-GL14:
    the letter says anyone but B) or the winner's partner (then on top of
    case 1): every pair is applied independently, as §4.2 says.
    """
    ledger.add(d, w, why, "hu")
    if frozenset((w, d)) in pairs:  # case 3: dealing in to one's partner
        ledger.add(d, w, _hubao(1, "3", why), "hubao")
    for b in _partners(w, pairs):  # case 1
        if b != d and b not in winners:
            ledger.add(b, w, _hubao(1, "1", why), "hubao")
    if dealin == "literal":  # case 3, literal (D-GL10)
        for b in _partners(d, pairs):
            if b != w:  # D-GL14: also when B is a co-winner of the discard
                case = "3 (literal, D-GL10, D-GL14)" if b in winners else "3 (literal, D-GL10)"
                ledger.add(b, w, _hubao(2, case, why), "hubao")


def _cowinner_hubao(ledger: Ledger, d: int, normal: dict[int, dict[int, tuple[Term, ...]]],
                    amounts: dict[int, dict[int, int]], pairs: set[frozenset[int]]) -> None:
    """§4.2 case 5, between co-winners of D's discard:

    5. D deals in to A and B, a pair: if the normal amounts D owes them are
       equal, 互包 between A and B is ignored; otherwise the smaller winner
       pays the larger winner the larger normal amount (case 1 is not applied
       between co-winners).  D's own pairs still apply (case 3).

    Where the rules are silent: with three or more winners, case 5 is applied
    to every pair of co-winners.
    """
    for a, b in sorted(tuple(sorted(p)) for p in pairs):
        if a in normal and b in normal and amounts[a][d] != amounts[b][d]:
            big, small = (a, b) if amounts[a][d] > amounts[b][d] else (b, a)
            ledger.add(small, big, _hubao(1, "5", normal[big][d]), "hubao")
