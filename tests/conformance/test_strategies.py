"""The Hypothesis strategies exported from ``qipai.conformance``, used the way
a variant author would: property tests of a variant's rules."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

import qipai.conformance as qc
from qipai.conformance import strategies as qst
from qipai.conformance.properties import check_conservation, view_leak
from qipai.core.ruleset import load
from qipai.families.mahjong import shapes
from qipai.families.mahjong.scoring_kit import check_meld, holding
from qipai.families.zipai.cards import CARDS

GUANGXI = load("guangxi-mahjong")


def test_strategies_are_exported_from_the_package():
    assert qc.winning_hands is qst.winning_hands and qc.strategies is qst


@given(qst.hands(CARDS, size=21))
def test_hands_respect_the_copy_limit(hand):
    assert len(hand) == 21 and max(Counter(hand).values()) <= CARDS.copies


@given(qst.melds())
def test_melds_are_well_formed(meld):
    check_meld(meld)
    assert (meld.from_seat is None) == (meld.kind == "angang")


@given(qst.winning_hands(qidui=True))
def test_winning_hands_are_complete_and_never_hold_a_fifth_copy(claim):
    assert max(Counter(holding(claim)).values()) <= 4
    counts = [0] * 34
    for t in (*claim.hand, claim.tile):
        counts[t] += 1
    assert shapes.is_standard(counts) or (not claim.melds and shapes.is_qidui(counts))


@settings(deadline=None)
@given(qst.winning_hands(meld_kinds=("chi", "peng")))
def test_guangxi_wins_every_standard_hand_by_self_draw(claim):
    assert GUANGXI.win_check(claim, "zimo", dealer=claim.seat).wins


@settings(deadline=None)
@given(qst.waiting_hands(max_melds=2))
def test_the_winning_tile_is_among_the_waits(claim):
    assert claim.tile in GUANGXI.waits(list(claim.hand), claim.melds)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]).flatmap(
    lambda name: qst.tables(load(name), max_steps=80)))
def test_tables_conserve_cards_and_views_do_not_leak(table):
    if not table.over:  # at the end the winning card may be in no hand (zipai)
        check_conservation(table)
    for seat in range(table.n):
        assert view_leak(table, seat) is None


@settings(max_examples=20, deadline=None)
@given(qst.deals(GUANGXI))
def test_deals_are_full_decks(deal):
    cards = [c for h in deal.hands for c in h] + list(deal.wall)
    assert Counter(cards) == Counter(GUANGXI.deck())
