"""The strong bot: it decides on the view alone, always legally, the same
way for the same seed; its budget; its defence."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from qipai.bots import GreedyBot, decide, make_bots, play_hand
from qipai.bots.registry import bot_factory
from qipai.bots.strong import StrongBot
from qipai.conformance.properties import hidden_shuffled
from qipai.core.model import Discard, Pass, Peng
from qipai.core.records import record_of
from qipai.core.ruleset import load
from qipai.core.views import MeldView, SeatView
from qipai.families.mahjong.tiles import TILES

VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 10**6),
       steps=st.integers(0, 120), shuffle=st.integers(0, 10**6),
       field=st.sampled_from(["greedy", "strong", "random"]))
def test_strong_answers_legally_from_the_view_alone(variant, seed, steps, shuffle, field):
    """At a random position of each variant, the strong bot answers one of
    the legal actions, and the same answer at a table that differs only in
    what the seat cannot see (others' concealed cards, the stock)."""
    rs = load(variant)
    table = rs.table(seed=seed)
    players = make_bots(field, table.n, seed, rs)
    run = 0
    while not table.over and run < steps:
        seat = table.to_decide()[0]
        table.apply(decide(players[seat], table, seat))
        run += 1
    if table.over:
        return
    seat = table.to_decide()[0]
    other = hidden_shuffled(table, seat, random.Random(shuffle))
    a, b = (StrongBot(random.Random(shuffle), rs) for _ in range(2))
    got = decide(a, table, seat)
    assert got in table.legal_actions(seat)
    assert got == decide(b, other, seat)


@pytest.mark.parametrize("variant", VARIANTS)
def test_strong_same_seed_same_record(variant):
    rs = load(variant)
    one = record_of(play_hand(rs, seed=11, bots="strong"))
    two = record_of(play_hand(rs, seed=11, bots="strong"))
    assert one == two
    assert play_hand(rs, seed=11, bots="strong").over


def test_strong_is_a_builtin_and_the_hard_level():
    assert isinstance(bot_factory("strong")(random.Random(0)), StrongBot)
    assert isinstance(bot_factory("hard")(random.Random(0)), StrongBot)


@pytest.mark.parametrize("variant", VARIANTS)
def test_budget_zero_plays_as_the_greedy_bot(variant):
    rs = load(variant)
    strong = [StrongBot(random.Random(f"s{i}"), rs, budget=0) for i in range(rs.table(seed=0).n)]
    greedy = [GreedyBot(random.Random(f"s{i}"), rs) for i in range(len(strong))]
    a, b = rs.table(seed=5), rs.table(seed=5)
    while not a.over:
        seat = a.to_decide()[0]
        x, y = decide(strong[seat], a, seat), decide(greedy[seat], b, seat)
        assert x == y
        a.apply(x)
        b.apply(y)


@pytest.mark.parametrize("budget", [-1, 1.5, "2", None])
def test_a_bad_budget_is_refused(budget):
    with pytest.raises(ValueError, match="budget"):
        StrongBot(random.Random(0), budget=budget)


def test_strong_needs_the_rules_before_it_acts():
    with pytest.raises(ValueError, match="no ruleset"):
        StrongBot(random.Random(0)).act(None, [Discard(0, 0)])
    with pytest.raises(ValueError, match="no legal action"):
        StrongBot(random.Random(0), load("guilin-mahjong")).act(None, [])


def _far_hand_against_a_ready_opponent(opponent_discards: str) -> tuple[SeatView, list]:
    """Seat 0 holds 14 scattered tiles (far from ready); seat 1 has three
    honor pengs and six discards (ready more often than not)."""
    t = TILES.parse
    hand = tuple(sorted(t("1m5m9m2p6p3s7s4m8p1s5s9p3p8s")))
    e, s, w = t("ESW")
    melds = ((), (MeldView("peng", (e,) * 3, 2), MeldView("peng", (s,) * 3, 2),
                  MeldView("peng", (w,) * 3, 3)), (), ())
    discards = (tuple(t("1p2s")), tuple(t(opponent_discards)), tuple(t("9s1p")), tuple(t("7p2m")))
    view = SeatView(seat=0, dealer=0, turn=0, hand=hand, hand_sizes=(14, 4, 13, 13),
                    melds=melds, discards=discards, stock=40, window=None, legal=(),
                    instant=(), events=(), result=None)
    return view, [Discard(0, k) for k in sorted(set(hand))]


def test_far_from_ready_it_discards_the_ready_opponents_tile():
    """The greedy bot lets 9m go (best for its own hand); the strong bot,
    far from ready against a seat with three pengs, discards 4m, which that
    seat discarded itself (现物)."""
    rs = load("guilin-mahjong")
    view, legal = _far_hand_against_a_ready_opponent("NCFP5s4m")
    assert GreedyBot(random.Random(0), rs).act(view, legal) == Discard(0, TILES.parse("9m")[0])
    assert StrongBot(random.Random(0), rs).act(view, legal) == Discard(0, TILES.parse("4m")[0])


def test_without_a_threat_it_plays_for_its_hand():
    """The same hand with nobody threatening (no melds, few discards): the
    strong bot discards as the greedy bot does."""
    rs = load("guilin-mahjong")
    view, legal = _far_hand_against_a_ready_opponent("4m")
    view = SeatView(**{**{f: getattr(view, f) for f in view.__struct_fields__},
                       "melds": ((), (), (), ()), "hand_sizes": (14, 13, 13, 13)})
    assert StrongBot(random.Random(0), rs).act(view, legal) == \
        GreedyBot(random.Random(0), rs).act(view, legal)


def test_under_fenghu_it_claims_nothing_and_plays_safe():
    """Guangxi: seat 1 took three 碰 from seat 0's discards, so seat 0 is
    封胡 toward it and cannot win this hand.  The greedy bot still 碰s a
    tile that keeps its hand as near ready; the strong bot passes, and on its
    turn discards the tile seat 1 discarded itself."""
    rs = load("guangxi-mahjong")
    t = TILES.parse
    e, s, w, five = t("ESW5p")
    melds = ((), tuple(MeldView("peng", (k,) * 3, 0) for k in (e, s, w)), (), ())
    hand = tuple(sorted(t("1m2m3m4p5p7s8s9s2p2p3s4s6m")))
    base = dict(seat=0, dealer=0, hand_sizes=(13, 4, 13, 13), melds=melds,
                discards=((), tuple(t("6m3s")), tuple(t("4m")), ()), stock=40,
                instant=(), events=(), result=None)
    claim = SeatView(turn=2, hand=hand, window=(t("2p")[0], 2, "discard"), legal=(), **base)
    legal = [Peng(0), Pass(0)]
    assert GreedyBot(random.Random(0), rs).act(claim, legal) == Peng(0)
    assert StrongBot(random.Random(0), rs).act(claim, legal) == Pass(0)
    turn = SeatView(turn=0, hand=tuple(sorted(hand + (five,))), window=None, legal=(), **base)
    discards = [Discard(0, k) for k in sorted(set(turn.hand))]
    assert StrongBot(random.Random(0), rs).act(turn, discards) in (
        Discard(0, t("6m")[0]), Discard(0, t("3s")[0]))
