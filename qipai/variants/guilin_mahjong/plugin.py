"""桂林麻将 ``guilin-mahjong`` — the variant plugin (docs/variants/guilin-mahjong.md).

Registered under the entry-point group ``qipai.variants``.  The common
mahjong flow comes from :class:`qipai.families.mahjong.flow.MahjongFlow`
(``QIPAI_BASE_PLUGINS``); this module answers what Guilin decides: the
manifest and options, the win check (烂牌, 七星烂, 字一色 any shape …),
waits, 翻醒, settlement with 互包, instant payments (kongs §2, 追牌 §5 D-GL11),
the 互包 relation (§4.1, D-GL9) and dealer rotation (§6, D-GL12).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Discarded, Flip, FlipFn, HandEnd, Meld, Melded, Payment, Settlement, Term, why_total,
)
from qipai.core.ruleset import Manifest
from qipai.families.mahjong import scoring_kit
from qipai.families.mahjong.flow import MahjongFlow, MahjongState, merged_pairs, pairs_reaching
from qipai.families.mahjong.tiles import TILES
from qipai.variants.guilin_mahjong import patterns, scoring
from qipai.variants.guilin_mahjong.options import GuilinOptions

NAME = "guilin-mahjong"
VERSION = "1"


class GuilinState(MahjongState):
    """Guilin's bookkeeping on top of the family's.

    Attributes:
        zhuipai_run: the current run of same-kind discards, as (seat, kind)
            pairs (追牌, D-GL11).
        zhuipai_open: whether a 追牌 can still form (``first_round``: only
            the hand's opening discards).
    """

    zhuipai_run: list[list[int]] = msgspec.field(default_factory=list)
    zhuipai_open: bool = True


#: Chinese names of the payment breakdown ids (guilin-mahjong.md §1–§5).
NAMES = {**scoring_kit.NAMES, "lanpai": "烂牌", "qixing_lanpai": "七星烂", "qidui": "七对",
         "haohua_qidui": "豪华七对", "qianggang": "抢杠胡", "zhuang": "庄家", "fanxing": "翻醒",
         "zhuipai": "追牌"}
MANIFEST = Manifest(name=NAME, title="桂林麻将", players=4, cards=TILES,
                    options_type=GuilinOptions, family="mahjong", version=VERSION,
                    state_type=GuilinState, relations=("hubao",), names=NAMES)
QIPAI_BASE_PLUGINS = [MahjongFlow(MANIFEST, patterns=patterns, angang_hidden=3)]


# ---------------------------------------------------------------- winning


@hookimpl
def qipai_bonus_flip(holding: Sequence[int], tile: int | None, stock: Sequence[int],
                     options: GuilinOptions) -> Flip:
    """翻醒 §3.3: neighbours across suits, honor cycle, re-flip at ≥ reflip_at."""
    return scoring.flip(list(holding), list(stock), options)


@hookimpl
def qipai_settle(end: HandEnd, options: GuilinOptions, bonus_flip: FlipFn) -> Settlement:
    """§3.4 and §4: value × multipliers + 醒数 per payer, then 互包; the
    翻醒 through ``bonus_flip`` (the ruleset's ``qipai_bonus_flip``)."""
    return scoring.settle(end, options, bonus_flip)


# ---------------------------------------------------------------- relations, payments


@hookimpl
def qipai_relations(table: Any) -> dict[str, list[list[int]]]:
    """互包 pairs (§4.1, D-GL9): one seat claimed the other's discards 3 times
    (吃, 碰, 点杠), in either direction; plus the pairs standing at the start."""
    claims = table.extra.claims
    if not table.relations and max(map(max, claims)) < 3:
        return {}  # no standing relation, no pair with 3 claims yet
    rel = {k: [list(g) for g in v] for k, v in table.relations.items()}
    if not table.options.hubao:
        rel.pop("hubao", None)
        return rel
    pairs = merged_pairs(rel.get("hubao", []), pairs_reaching(claims, 3))
    if pairs:
        rel["hubao"] = pairs
    return rel


KONG_FEES = {"jiagang": 1, "angang": 2}


@hookimpl
def qipai_instant_payments(table: Any, event: Any) -> list[Payment]:
    """Kong payments (§2: 蓄杠 1 from each, 暗杠 2 from each, 点杠 3 from the
    discarder) and 追牌 (§5, D-GL11)."""
    kind = type(event)  # event classes are final: a type test is exact
    if kind is Melded:
        out = kong_payments(event.seat, event.meld)
        if event.meld.from_seat is not None and event.meld.kind in ("chi", "peng", "minggang"):
            table.extra.zhuipai_run = []
            if table.options.zhuipai == "first_round":
                table.extra.zhuipai_open = False
        return out
    if kind is Discarded and table.state.extra.zhuipai_open:
        return zhuipai(table, event)
    return []


def kong_payments(seat: int, meld: Meld) -> list[Payment]:
    """The instant fee of a kong meld made by ``seat`` (§2), as payments (子)."""
    if meld.kind in KONG_FEES:
        why = (Term("fee", meld.kind, KONG_FEES[meld.kind], cards=meld.cards[:1], rule="§2"),)
        return [Payment(p, seat, why_total(why), meld.kind, why) for p in range(4) if p != seat]
    if meld.kind == "minggang":
        why = (Term("fee", "minggang", 3, cards=meld.cards[:1], rule="§2"),)
        return [Payment(meld.from_seat, seat, why_total(why), "minggang", why)]
    return []


def zhuipai(table: Any, event: Discarded) -> list[Payment]:
    """追牌 (D-GL11): four consecutive same-kind discards by the four seats in
    turn order, no claim between; the first discarder pays each other seat
    ``zhuipai_amount`` 子 when the fourth is made.  ``first_round``: only the
    dealer's opening discard can start the run."""
    opts = table.options
    st = table.extra
    if opts.zhuipai == "off" or not st.zhuipai_open:
        return []
    run = st.zhuipai_run
    if run and run[-1][1] == event.card and (run[-1][0] + 1) % 4 == event.seat:
        run.append([event.seat, event.card])
    elif opts.zhuipai == "first_round" and run:
        st.zhuipai_open = False
        st.zhuipai_run = []
        return []
    else:
        if opts.zhuipai == "first_round" and event.seat != table.state.dealer:
            st.zhuipai_open = False
            return []
        st.zhuipai_run = run = [[event.seat, event.card]]
    if len(run) < 4:
        return []
    payer = run[0][0]
    st.zhuipai_run = []
    if opts.zhuipai == "first_round":
        st.zhuipai_open = False
    amount = opts.zhuipai_amount
    if amount <= 0:
        return []
    why = (Term("fee", "zhuipai", amount, cards=(event.card,), rule="§5, D-GL11"),)
    return [Payment(payer, p, why_total(why), "zhuipai", why) for p in range(4) if p != payer]


@hookimpl
def qipai_next_dealer(table: Any, end: str, winners: Sequence[int],
                      from_seat: int | None) -> int:
    """D-GL12: ``winner`` — the winner deals, the discarder after 一炮多响, the
    dealer again after 荒庄; ``next_unless_dealer_wins`` — the dealer keeps
    the deal by winning or 荒庄, else the next seat deals."""
    dealer = table.state.dealer
    if table.options.dealer_rotation == "next_unless_dealer_wins":
        if end != "hu" or dealer in winners:
            return dealer
        return (dealer + 1) % 4
    if end != "hu":
        return dealer
    if len(winners) == 1:
        return winners[0]
    return from_seat if from_seat is not None else dealer
