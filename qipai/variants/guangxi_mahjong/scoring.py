"""广西麻将 settlement: who pays a win (§3), 封胡 (§4), 互包 (§5), kongs (§6).

Win values come from :mod:`.patterns` (per paying seat, in 张); this module
decides who pays them — the 连杠 payer of a 杠开, 封胡 and 互包 liabilities,
several winners on one discard — as pairwise :class:`Payment` s.  Kong fees
are instant payments, made when each kong is declared; :func:`kong_fees` and
:func:`huangzhuang_refunds` are the pure functions the variant plugin calls
for them.  There is no bonus flip in 广西麻将.

Relations (``HandEnd.relations``):

- ``"fenghu"``: ``[giver, taker]`` pairs — the giver fed the taker
  ``fenghu_count`` 碰 and is 封胡 toward him (§4);
- ``"hubao"``: ``[a, b]`` pairs, mutual (§5).

Option ``liability`` selects which of them count (D-GX8).

Choices this module makes where the variant page is silent:

- A 杠开 with a 连杠 payer is paid by that payer alone (three shares), and
  neither 封胡 effect 4 (D-GX8 says so) nor the 互包 zimo rule (D-GX16) adds
  to it.
- Several seats liable toward one zimo winner (a small ``fenghu_count``,
  several 互包 partners, or 封胡 and 互包 together under ``both``): each pays
  all three shares, as §5 says for two 互包 pairs; the others pay nothing.
- 封胡 effect 3 ("A pays B the same amount as C"): A pays the normal amount
  of the win — what C would owe with no liability — even if C owes more
  (D-GX13: each relation on its own; likewise a 互包 partner of the winner
  pays the normal amount when the discarder is 封胡 toward the winner).
- 互包 between two winners of one discard is ignored whatever their amounts
  (§5: 通炮 and "different amounts" both say so); pairs with the discarder
  still apply.
- A winner who is 封胡 toward anyone (under ``fenghu`` or ``both``) is
  refused: he cannot win (§4 effect 1).
- ``Payment.reason``: ``"hu"`` for the normal payment; ``"fenghu"``,
  ``"hubao"`` or ``"liangang"`` (连杠的杠开) when that liability made or
  increased it (several joined by ``+``).  One payment per (payer, payee),
  zero amounts omitted.
"""

from __future__ import annotations

from collections.abc import Sequence

from qipai.core.errors import BadCards
from qipai.core.model import HandEnd, Meld, Payment, Settlement, Term, WinClaim, times, why_total
from qipai.families.mahjong.scoring_kit import (
    Ledger,
    check_hand_end,
    evaluate_winners,
    partners,
    relation_pairs,
)
from qipai.variants.guangxi_mahjong.options import GuangxiOptions
from qipai.variants.guangxi_mahjong.patterns import (
    Evaluation,
    check_chain,
    evaluate,
    first_minggang,
    kong_chain,
)

__all__ = ["KONG_FEE", "gangkai_payer", "huangzhuang_refunds", "kong_fees", "settle"]

#: 张 per kong and per paying seat (§6: 明杠 1 张, 暗杠 1 张 from each of three).
KONG_FEE = 1


# --------------------------------------------------------------------------
# Kongs (§6, D-GX7)


def kong_fees(seat: int, chain: Sequence[Meld], n_players: int = 4) -> list[Payment]:
    """The fee of the **last** kong of ``chain``, declared by ``seat`` (§6).

    Normally a 点杠 (``minggang``) is paid 1 张 by its discarder, a 补杠
    (``jiagang``) 1 张 by the seat that gave the peng, an 暗杠 1 张 by each of
    the other seats.  连杠 (D-GX7): from the chain's first 明杠 (点杠 or 补杠)
    on, every fee of the chain is paid by that 明杠's feeder — 1 张 for a 明杠,
    the three shares (3 张) for an 暗杠; kongs before it are paid normally.
    Summing this over each prefix of a chain gives the chain's fees (seed
    examples: 3, 7, 5 and 2 张).  A 补杠 robbed by 抢杠 never completes, so
    the plugin does not call this for it.

    Args:
        seat: the seat declaring the kongs.
        chain: the kongs ``seat`` has declared so far in this turn, in order,
            the one just declared last; a 明杠's ``from_seat`` is its feeder.
        n_players: seats at the table.

    Returns:
        The payments, reason = the kong's kind (``minggang``, ``jiagang``,
        ``angang``).

    Raises:
        BadCards: a malformed chain (see :func:`.patterns.check_chain`).
    """
    check_chain(seat, chain, n_players)
    last = chain[-1]
    first = first_minggang(chain)
    # An 暗杠 lies face down (D-GX10): its fee names no card, or every seat's
    # view of the payment would show the kind its meld view hides.
    shown = () if last.kind == "angang" else last.cards[:1]
    fee = Term("fee", last.kind, KONG_FEE, cards=shown, rule="§6")
    if first is not None and len(chain) - 1 >= first:
        feeder = chain[first].from_seat
        assert feeder is not None  # check_chain
        why: tuple[Term, ...] = (fee,)
        if len(chain) - 1 > first:  # a later kong of the chain: 连杠, its feeder pays
            shares = n_players - 1 if last.kind == "angang" else 1
            why = (fee, Term("liability", "liangang", shares, "*", rule="§6, D-GX7"))
        return [Payment(feeder, seat, why_total(why), last.kind, why)]
    # Before the chain's first 明杠 only 暗杠 can stand: each other seat pays.
    return [Payment(p, seat, why_total((fee,)), "angang", (fee,))
            for p in range(n_players) if p != seat]


def huangzhuang_refunds(instant: Sequence[Payment]) -> list[Payment]:
    """At 荒庄 every 暗杠 fee is returned; 明杠 fees stand (§6: 荒庄明杠算暗杠不算).

    Args:
        instant: the hand's instant payments.

    Returns:
        One reverse payment (reason ``"angang_refund"``) per 暗杠 fee
        (reason ``"angang"``), whoever paid it (a 连杠 feeder included).
    """
    return [
        Payment(p.payee, p.payer, p.amount, "angang_refund",
                (Term("fee", "angang_refund", p.amount, rule="§6 荒庄明杠算暗杠不算",
                      basis=p.why),))
        for p in instant
        if p.reason == "angang" and p.amount
    ]


# --------------------------------------------------------------------------
# Settlement


def gangkai_payer(claim: WinClaim, options: GuangxiOptions | None = None) -> int | None:
    """The seat that pays a 连杠的杠开 alone (§6), or None if the three pay.

    ``first_kong`` (default): the feeder of the chain's first kong when that
    kong is a 明杠 (点杠 or 补杠).  ``any_minggang``: the feeder of the chain's
    first 明杠, wherever it stands.  None for a win that is not 杠开.

    Raises:
        BadCards: a malformed chain (see :func:`.patterns.kong_chain`).
    """
    options = options or GuangxiOptions()
    if "gangshanghua" not in claim.flags:
        return None
    chain = kong_chain(claim)
    first = first_minggang(chain)
    if first is None or (options.gangkai_liability == "first_kong" and first != 0):
        return None
    return chain[first].from_seat


def _relations(
    end: HandEnd, options: GuangxiOptions
) -> tuple[set[tuple[int, int]], set[frozenset[int]]]:
    """The 封胡 (giver, taker) pairs and the 互包 pairs in force (D-GX8)."""
    fenghu = set(relation_pairs(end, "fenghu"))
    hubao = {frozenset(p) for p in relation_pairs(end, "hubao")}
    if options.liability not in ("fenghu", "both"):
        fenghu = set()
    if options.liability not in ("hubao", "both"):
        hubao = set()
    # both: where A is 封胡 toward B, §4 replaces §5 between A and B.
    hubao -= {frozenset(p) for p in fenghu}
    return fenghu, hubao


def _settle_zimo(
    ledger: Ledger,
    claim: WinClaim,
    ev: Evaluation,
    fenghu: set[tuple[int, int]],
    hubao: set[frozenset[int]],
    options: GuangxiOptions,
) -> None:
    w = claim.seat
    # every payer owes the same share: all three = the share × the payers
    n = len(ev.amounts)
    payer = gangkai_payer(claim, options)
    if payer is not None:  # 连杠的杠开: paid once, by the feeder (D-GX8, D-GX16)
        ledger.add(payer, w, times(ev.why, Term("liability", "liangang", n,
                                                 rule="§6, D-GX7")), "liangang")
        return
    liable = [(g, "fenghu", "§4 effect 4") for g, t in sorted(fenghu) if t == w]
    liable += [(b, "hubao", "§5") for b in partners(w, hubao)]
    if liable:
        for seat, reason, rule in liable:
            why = times(ev.why, Term("liability", reason, n, rule=rule))
            ledger.add(seat, w, why, reason)
        return
    for p in ev.amounts:
        ledger.add(p, w, ev.why, "hu")


def _settle_discard(
    ledger: Ledger,
    evs: dict[int, Evaluation],
    d: int,
    fenghu: set[tuple[int, int]],
    hubao: set[frozenset[int]],
) -> None:
    winners = set(evs)
    # 互包 between two winners of one discard is ignored (通炮, §5).
    hubao = {pair for pair in hubao if not pair <= winners}
    for w in sorted(winners):
        why = evs[w].why
        ledger.add(d, w, why, "hu")
        for g, t in sorted(fenghu):
            if t != w:
                continue
            # effect 2: the 封胡 seat deals in — twice; effect 3: another deals
            # in — the 封胡 seat pays as much as well (the normal amount, D-GX13).
            rule = "§4 effect 2" if g == d else "§4 effect 3, D-GX13"
            ledger.add(g, w, times(why, Term("liability", "fenghu", 1, rule=rule)), "fenghu")
        if frozenset((d, w)) in hubao:  # partners deal in to each other: 3×
            ledger.add(d, w, times(why, Term("liability", "hubao", 2, rule="§5")), "hubao")
        for b in partners(w, hubao):  # the other partner pays the normal amount (D-GX13)
            if b != d:
                ledger.add(b, w, times(why, Term("liability", "hubao", 1, rule="§5, D-GX13")),
                           "hubao")


def settle(end: HandEnd, options: GuangxiOptions | None = None) -> Settlement:
    """Settle the wins of a finished hand (§3–§6, D-GX7, D-GX8).

    Zimo: each other seat pays the winner his share — unless a 连杠 payer
    (§6, :func:`gangkai_payer`) pays all three shares alone, or liable seats
    do: each seat 封胡 toward the winner (effect 4, 包牌) and each 互包 partner
    pays all three shares, and the others nothing.

    Discard (``dianpao``) and 抢杠 (``qianggang``, the kong maker counting as
    the discarder and owing the zimo share × 3, D-GX8): the discarder pays
    each winner his amount; a discarder 封胡 toward the winner pays it twice
    (effect 2); every other seat 封胡 toward the winner pays it as well
    (effect 3); a discarder who is the winner's 互包 partner pays it three
    times; the winner's other 互包 partners pay it as well.  Several winners
    (一炮多响) are each settled so; 互包 between two of them is ignored.

    Args:
        end: the hand's end — ``dealer``, ``how``, ``from_seat`` (discarder /
            kong maker), ``winners`` (one :class:`WinClaim` each, with
            ``kong_chain`` for a 连杠的杠开), ``relations`` (``fenghu``,
            ``hubao``), ``n_players`` (must be 4).
        options: the variant options.

    Returns:
        :class:`Settlement` with pairwise payments (张, summing to zero) and
        the pattern ids per winner; no flips.

    Raises:
        BadCards: a claim that does not win, a winner who is 封胡, a fifth
            copy of a kind, a bad meld, hand size, relation or kong chain, an
            unknown ``how`` or flag, inconsistent seats (zimo with several
            winners, a discard win without another seat as ``from_seat``,
            winners on different tiles), or ``n_players`` other than 4.
    """
    options = options or GuangxiOptions()
    check_hand_end(end, "广西麻将")
    fenghu, hubao = _relations(end, options)
    evs = evaluate_winners(
        end, lambda w: evaluate(w, end.how, end.dealer, end.from_seat, options, end.n_players)
    )
    for g, t in sorted(fenghu):
        if g in evs:
            raise BadCards(f"seat {g} is 封胡 (fenghu) toward seat {t} and cannot win this hand")
    ledger = Ledger()
    if end.how == "zimo":
        (claim,) = end.winners
        _settle_zimo(ledger, claim, evs[claim.seat], fenghu, hubao, options)
    else:
        assert end.from_seat is not None  # checked by evaluate
        _settle_discard(ledger, evs, end.from_seat, fenghu, hubao)
    return Settlement(
        payments=ledger.payments(),
        patterns={seat: ev.patterns for seat, ev in sorted(evs.items())},
    )
