"""Bots: greedy and random players, and hands played to the end with them."""

from __future__ import annotations

import random

import msgspec
import pytest

from qipai.bots import (
    GreedyBot, RandomBot, hand_seed, make_bots, play_hand, play_hands, run_to_end,
)
from qipai.core.cards import counts
from qipai.core.model import (
    Angang, Chi, Deal, Discard, Hu, Jiagang, Minggang, Pass, Peng, Zimo,
)
from qipai.core.records import record_of, replay_check
from qipai.core.ruleset import load
from qipai.families.mahjong.shapes import shanten
from qipai.families.mahjong.tiles import TILES


@pytest.fixture(scope="module")
def rs():
    return load("guilin-mahjong")


def deal_with(dealer_hand: str, others: tuple[str, str, str] = ("", "", ""),
              wall_head: str = "") -> Deal:
    """A deal where seat 0 deals ``dealer_hand`` (14 tiles); seats 1-3 get
    ``others`` filled up to 13 from the rest; the stock starts ``wall_head``."""
    pool = [k for k in range(34) for _ in range(4)]
    hands = [TILES.parse(dealer_hand)] + [TILES.parse(h) for h in others]
    head = TILES.parse(wall_head)
    for k in [k for h in hands for k in h] + head:
        pool.remove(k)
    random.Random(0).shuffle(pool)
    for h in hands[1:]:
        while len(h) < 13:
            h.append(pool.pop())
    return Deal(dealer=0, hands=tuple(tuple(h) for h in hands), wall=tuple(head + pool))


# -------------------------------------------------------------------- whole hands


def test_500_greedy_hands_end_zero_sum_replay_and_mostly_win(rs):
    wins = 0
    for seed in range(500):
        table = play_hand(rs, seed=seed, bots="greedy")
        assert table.over, seed
        r = table.result
        assert sum(r.net) == 0, (seed, r.net)
        assert r.end in ("hu", "huangzhuang")
        assert (r.end == "hu") == bool(r.winners), seed
        assert replay_check(record_of(table)) is None, seed
        wins += r.end == "hu"
    assert wins > 250, f"only {wins} of 500 greedy hands ended in a win"


def test_50_random_hands_end_zero_sum(rs):
    for seed in range(50):
        table = play_hand(rs, seed=seed, bots="random")
        assert table.over
        assert sum(table.result.net) == 0
        assert table.to_decide() == []


def test_same_seed_same_record_other_seed_other_record(rs):
    def rec(seed, bots):
        return msgspec.json.encode(record_of(play_hand(rs, seed=seed, bots=bots)))

    for bots in ("greedy", "random"):
        assert rec(11, bots) == rec(11, bots)
        assert rec(11, bots) != rec(12, bots)


def test_play_hand_without_seed_picks_and_keeps_one(rs):
    table = play_hand(rs)
    assert isinstance(table.seed, int)
    again = play_hand(rs, seed=table.seed)
    assert record_of(again) == record_of(table)


def test_play_hand_honours_dealer_and_deal(rs):
    assert play_hand(rs, seed=5, dealer=2).state.dealer == 2
    deal = deal_with("123456789m 123p EE")
    table = play_hand(rs, seed=1, deal=deal)
    assert table.state.deal == deal and table.over


def test_play_hands_passes_the_deal_by_next_dealer(rs):
    tables = list(play_hands(rs, 6, seed=3, bots="greedy"))
    assert len(tables) == 6
    for before, after in zip(tables, tables[1:]):
        assert after.state.dealer == before.result.next_dealer
    seeds = [t.seed for t in tables]
    assert seeds[0] == 3 and len(set(seeds)) == 6
    assert seeds == [hand_seed(3, i) for i in range(6)]
    # the session is reproducible
    again = list(play_hands(rs, 6, seed=3, bots="greedy"))
    assert [record_of(t) for t in again] == [record_of(t) for t in tables]


def test_make_bots_mixes_and_checks(rs):
    mine = RandomBot(random.Random(1))
    bots = make_bots(["greedy", "random", mine, "greedy"], 4, seed=1)
    assert isinstance(bots[0], GreedyBot) and isinstance(bots[1], RandomBot)
    assert bots[2] is mine
    table = rs.table(seed=4)
    run_to_end(table, bots)
    assert table.over
    with pytest.raises(ValueError, match="unknown bot 'clever'"):
        make_bots("clever", 4, seed=1)
    with pytest.raises(ValueError, match="4 seats need 4 bots"):
        make_bots(["greedy"], 4, seed=1)


# -------------------------------------------------------------------- decisions


def test_bots_take_a_win_when_offered(rs):
    table = rs.table(deal=deal_with("123456789m 123p EE"))  # 天胡
    assert Zimo(0) in table.legal_actions(0)
    assert GreedyBot(random.Random(0)).choose(table, 0) == Zimo(0)
    assert RandomBot(random.Random(0)).choose(table, 0) == Zimo(0)
    picks = {RandomBot(random.Random(i), always_win=False).choose(table, 0) for i in range(200)}
    assert Zimo(0) in picks and len(picks) > 1
    assert picks <= set(table.legal_actions(0))


def test_greedy_discards_toward_ready(rs):
    e = TILES.parse("E")[0]
    # 123m 456m 789p 11s 45s + 东: dropping 东 leaves a ready hand (3s/6s).
    table = rs.table(deal=deal_with("123456m 789p 1145s E"))
    assert GreedyBot(random.Random(0)).choose(table, 0) == Discard(0, e)


def test_greedy_breaks_ties_by_useful_tiles(rs):
    # Dropping 5p or 2p both leave a ready hand; 23p waits on 1p and 4p,
    # 35p only on 4p, so 5p goes.
    p5 = TILES.parse("5p")[0]
    table = rs.table(deal=deal_with("123m 456m 789m 235p 11s"))
    for seed in range(8):
        assert GreedyBot(random.Random(seed)).choose(table, 0) == Discard(0, p5)


def test_greedy_breaks_ties_by_isolated_honor(rs):
    # 东, 5p and 2p all keep the shanten; 2p keeps fewer useful tiles, and of
    # 东 and 5p (same useful tiles) the lone honor goes first.
    e = TILES.parse("E")[0]
    table = rs.table(deal=deal_with("123m 456m 11s 235p 79s E"))
    for seed in range(8):
        assert GreedyBot(random.Random(seed)).choose(table, 0) == Discard(0, e)


def test_greedy_angang_when_it_keeps_the_shanten(rs):
    m1 = TILES.parse("1m")[0]
    table = rs.table(deal=deal_with("1111m 456m 789p 11s 45s"))
    assert Angang(0, m1) in table.legal_actions(0)
    assert GreedyBot(random.Random(0)).choose(table, 0) == Angang(0, m1)


def test_useful_tiles_match_a_plain_shanten_count():
    """The bot's fast 有效牌 search (segment tables) against shanten itself."""
    from qipai.bots import MahjongStrategy

    strategy = MahjongStrategy(random.Random(0))
    rng = random.Random(5)
    deck = [k for k in range(34) for _ in range(4)]
    for _ in range(400):
        rng.shuffle(deck)
        n = rng.choice([0, 0, 1, 2, 3])
        c = counts(deck[:13 - 3 * n], 34)
        sh = shanten(c, n)
        want = []
        for t in range(34):
            if c[t] < 4:
                c[t] += 1
                if shanten(c, n) < sh:
                    want.append(t)
                c[t] -= 1
        assert sorted(strategy._improving(c, n, sh)) == want, (c, n)


def test_greedy_falls_back_to_random_for_other_families():
    class Manifest:
        family = "zipai"

    class Ruleset:
        manifest = Manifest()

    class FakeTable:
        ruleset = Ruleset()

        def legal_actions(self, seat):
            return [Pass(seat), Hu(seat)] if seat == 0 else [Pass(seat), Chi(seat, (1, 2, 3))]

    bot = GreedyBot(random.Random(0))
    assert bot.choose(FakeTable(), 0) == Hu(0)
    assert {bot.choose(FakeTable(), 1) for _ in range(40)} == {Pass(1), Chi(1, (1, 2, 3))}


def _best_after_discard(c, n):
    best = 99
    for k in range(34):
        if c[k]:
            c[k] -= 1
            best = min(best, shanten(c, n))
            c[k] += 1
    return best


def _claim_shanten(c, n, card, action):
    c = list(c)
    if isinstance(action, Minggang):
        c[card] -= 3
        return shanten(c, n + 1)
    if isinstance(action, Peng):
        c[card] -= 2
    else:
        used = list(action.cards)
        used.remove(card)
        for k in used:
            c[k] -= 1
    return _best_after_discard(c, n + 1)


def test_greedy_decisions_follow_the_shanten_rules(rs):
    """Over real hands, every greedy decision is checked against an
    independent count: discards keep the least shanten, claims and kongs
    never raise it, passes only when every claim would."""
    claims_seen = passes_seen = 0
    for seed in range(25):
        table = rs.table(seed=seed)
        bots = make_bots("greedy", 4, seed)
        while not table.over:
            seat = table.to_decide()[0]
            legal = table.legal_actions(seat)
            act = bots[seat].choose(table, seat)
            assert act in legal
            s = table.seats[seat]
            c, n = counts(s.hand, 34), len(s.melds)
            if any(isinstance(a, (Hu, Zimo)) for a in legal):
                assert isinstance(act, (Hu, Zimo))
            elif isinstance(act, Discard):
                best = _best_after_discard(c, n)
                after = list(c)
                after[act.card] -= 1
                assert shanten(after, n) == best, (seed, act)
                for a in legal:  # a kong that keeps the shanten would have been made
                    if isinstance(a, Angang):
                        after = list(c)
                        after[a.card] -= 4
                        assert shanten(after, n + 1) > best, (seed, a)
                    elif isinstance(a, Jiagang):
                        after = list(c)
                        after[a.card] -= 1
                        assert shanten(after, n) > best, (seed, a)
            elif isinstance(act, Angang):
                after = list(c)
                after[act.card] -= 4
                assert shanten(after, n + 1) <= _best_after_discard(c, n)
            elif isinstance(act, Jiagang):
                after = list(c)
                after[act.card] -= 1
                assert shanten(after, n) <= _best_after_discard(c, n)
            elif table.state.window is not None:
                card = table.state.window.card
                now = shanten(c, n)
                offered = [a for a in legal if isinstance(a, (Peng, Minggang, Chi))]
                if isinstance(act, Pass):
                    passes_seen += bool(offered)
                    assert all(_claim_shanten(c, n, card, a) > now for a in offered), (seed, legal)
                else:
                    claims_seen += 1
                    assert _claim_shanten(c, n, card, act) <= now, (seed, act)
            table.apply(act)
    assert claims_seen and passes_seen  # both branches were exercised
