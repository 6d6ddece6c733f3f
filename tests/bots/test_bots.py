"""Bots: greedy and random players, and hands played to the end with them
(桂林麻将 and 桂林字牌)."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from qipai.bots import (
    GreedyBot, RandomBot, ZipaiStrategy, decide, hand_seed, make_bots, play_hand, play_hands,
    run_to_end, zipai_splits,
)
from qipai.bots.base import seen_kinds
from qipai.conformance.properties import hidden_shuffled
from qipai.core.cards import counts
from qipai.core.model import (
    Angang, Chi, Deal, Discard, Hu, Jiagang, Meld, Minggang, Pass, Peng, Zimo,
)
from qipai.core.records import record_of, replay_check
from qipai.core.ruleset import load
from qipai.core.table import Table
from qipai.families.mahjong.shanten import counts_shanten, shanten
from qipai.families.mahjong.tiles import TILES
from qipai.families.zipai import groups as zipai_groups
from qipai.families.zipai.cards import CARDS


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


@pytest.mark.slow
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


def test_play_hand_without_seed_deals_from_the_os(rs):
    # no small seed is picked (and recorded); the record replays
    from qipai.core.records import replay_check

    table = play_hand(rs)
    assert table.seed is None and table.state.rng == "os"
    assert replay_check(record_of(table)) is None


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
    # hand 0 is not dealt from the session seed itself (no record holds it)
    assert 3 not in seeds and len(set(seeds)) == 6 and all(0 <= s < 2**128 for s in seeds) \
        and max(seeds) >= 2**64  # 128-bit seeds
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


def test_random_bot_draws_as_random_choice_does(rs):
    """RandomBot draws with ``rng.choice``: the same seed picks the same
    actions as ``choice`` itself (so a seed keeps playing the same hand)."""
    table = rs.table(seed=3)
    seat = table.to_decide()[0]
    actions = table.legal_actions(seat)
    assert len(actions) > 2
    for seed in range(300):
        bot = RandomBot(random.Random(seed), always_win=False)
        mirror = random.Random(seed)
        for _ in range(5):
            assert bot.choose(table, seat) == mirror.choice(actions)


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


def test_greedy_falls_back_to_random_for_other_families():
    class Manifest:
        family = "dominoes"  # no strategy for this family

    class Ruleset:
        manifest = Manifest()

    def legal(seat):
        return [Pass(seat), Hu(seat)] if seat == 0 else [Pass(seat), Chi(seat, (1, 2, 3))]

    bot = GreedyBot(random.Random(0), Ruleset())
    assert bot.act(None, legal(0)) == Hu(0)
    assert {bot.act(None, legal(1)) for _ in range(40)} == {Pass(1), Chi(1, (1, 2, 3))}


def test_greedy_bot_needs_the_rules_before_it_acts(rs):
    table = rs.table(seed=3)
    seat = table.to_decide()[0]
    with pytest.raises(ValueError, match="no ruleset"):
        GreedyBot(random.Random(0)).act(table.view(seat), table.legal_actions(seat))
    with pytest.raises(ValueError, match="no legal action"):
        RandomBot(random.Random(0)).act(None, [])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]),
       seed=st.integers(0, 10**6), steps=st.integers(0, 80), shuffle=st.integers(0, 10**6),
       kind=st.sampled_from(["greedy", "random"]))
def test_bots_cannot_peek(variant, seed, steps, shuffle, kind):
    """A bot deciding for a seat at two tables that differ only in what the
    seat cannot see (others' concealed cards, the stock) gets equal views
    and, with equal RNGs, makes the same decision: it decides on the view."""
    rs = load(variant)
    table = rs.table(seed=seed)
    players = make_bots("greedy", table.n, seed)
    run = 0
    while not table.over and run < steps:
        seat = table.to_decide()[0]
        table.apply(players[seat].choose(table, seat))
        run += 1
    if table.over:
        return
    seat = table.to_decide()[0]
    other = hidden_shuffled(table, seat, random.Random(shuffle))
    assert table.view(seat) == other.view(seat)
    a, b = (make_bots(kind, table.n, shuffle)[seat] for _ in range(2))
    for bot in (a, b):
        bot.sit(rs, seat)
    assert decide(a, table, seat) == decide(b, other, seat)
    assert a.act(table.view(seat), table.legal_actions(seat)) == \
        b.act(other.view(seat), other.legal_actions(seat))


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


def _live_useful(c, n, k, best, seen):
    """Live copies (4 less those ``seen``) of the kinds that, added to ``c``
    less one ``k``, bring its shanten below ``best`` (有效牌)."""
    after = list(c)
    after[k] -= 1
    total = 0
    for t in range(34):
        if after[t] < 4:
            after[t] += 1
            if shanten(after, n) < best:
                total += max(4 - seen[t], 0)
            after[t] -= 1
    return total


def test_greedy_decisions_follow_the_shanten_rules(rs):
    """Over real hands, every greedy decision is checked against an
    independent count: discards keep the least shanten and, among the
    discards that do, the most live useful tiles; claims and kongs never
    raise it, passes only when every claim would."""
    claims_seen = passes_seen = ties_seen = 0
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
                tied = set()
                for a in legal:
                    if isinstance(a, Discard):
                        after = list(c)
                        after[a.card] -= 1
                        if shanten(after, n) == best:
                            tied.add(a.card)
                if len(tied) > 1:
                    seen = seen_kinds(table.view(seat), 34)
                    useful = {k: _live_useful(c, n, k, best, seen) for k in tied}
                    assert useful[act.card] == max(useful.values()), (seed, act, useful)
                    ties_seen += len(set(useful.values())) > 1
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
    assert claims_seen and passes_seen and ties_seen  # every branch was exercised


# -------------------------------------------------------------------- zipai (桂林字牌)


@pytest.fixture(scope="module")
def zp():
    return load("guilin-zipai")


def Z(text: str) -> list[int]:
    return CARDS.parse(text)


def zipai_pool(*used: list[int]) -> list[int]:
    """The 80 cards less ``used``, in a fixed shuffled order."""
    pool = [k for k in range(20) for _ in range(4)]
    for cards in used:
        for k in cards:
            pool.remove(k)
    random.Random(7).shuffle(pool)
    return pool


def zipai_position(zp, hands: dict[int, str], melds: dict[int, list[str]] | None = None,
                   wall_head: str = "") -> Table:
    """A mid-hand table, dealer seat 0: the given seats hold ``hands`` (and
    ``melds`` as 吃 groups); the others get 20 cards from the rest."""
    melds = melds or {}
    given = {s: Z(h) for s, h in hands.items()}
    laid = {s: [Meld("chi", tuple(Z(g))) for g in gs] for s, gs in melds.items()}
    pool = zipai_pool(*given.values(), *(m.cards for ms in laid.values() for m in ms),
                      Z(wall_head))
    full = []
    for seat in range(3):
        if seat in given:
            full.append(given[seat])
        else:
            full.append(pool[:20])
            pool = pool[20:]
    table = Table.from_position(zp, dealer=0, hands=full, wall=Z(wall_head) + pool,
                                melds=[laid.get(s, []) for s in range(3)])
    table.state.pending = {}
    return table


def test_greedy_plays_zipai_with_the_zipai_strategy(zp):
    assert GreedyBot.STRATEGIES["zipai"] is ZipaiStrategy
    table = zp.table(seed=1)
    bot = GreedyBot(random.Random(0))
    seat = table.to_decide()[0]
    assert bot.choose(table, seat) in table.legal_actions(seat)
    assert isinstance(bot._strategy, ZipaiStrategy)


def test_zipai_greedy_discards_the_loose_card(zp):
    # 一二三 壹贰叁 四五六 肆伍陆 ×2 柒捌玖, the pair 拾拾 and a lone 九: without
    # the 九 the hand waits on 拾 (碰: 3 + 6 + 3 = 12 胡).
    dealer = Z("x1 x2 x3 d1 d2 d3 x4 x5 x6 d4 d5 d6 d4 d5 d6 d7 d8 d9 d10 d10 x9")
    pool = zipai_pool(dealer)
    deal = Deal(dealer=0, hands=(tuple(dealer), tuple(pool[:20]), tuple(pool[20:40])),
                wall=tuple(pool[40:]), shown=(Z("d10")[0],))
    table = zp.table(deal=deal)
    assert table.to_decide() == [0]
    for seed in range(6):
        assert GreedyBot(random.Random(seed)).choose(table, 0) == Discard(0, Z("x9")[0])


def test_zipai_greedy_pengs_into_a_ready_hand_and_takes_wins(zp):
    # Seat 1: 一二三 壹贰叁 四五六 肆伍陆 柒捌玖 (9 胡), 拾拾, 七八 and a spare 一.
    # 碰 拾 (3 胡) and dropping the 一 leaves 七八 waiting on 六/九 with 12 胡.
    table = zipai_position(zp, {1: "x1 x2 x3 d1 d2 d3 x4 x5 x6 d4 d5 d6 d7 d8 d9 d10 d10 x7 x8 x1"})
    d10 = Z("d10")[0]
    table.open_window(d10, 2, "discard")
    assert Peng(1) in table.legal_actions(1)
    assert GreedyBot(random.Random(0)).choose(table, 1) == Peng(1)
    # With 二七十 (3 胡) for the 拾拾 and the 一, it wins on a 九 seat 2 draws
    # (平胡 is optional: offered with a pass).
    table = zipai_position(zp, {1: "x1 x2 x3 d1 d2 d3 x4 x5 x6 d4 d5 d6 d7 d8 d9 x7 x8 x2 x7 x10"},
                           wall_head="x9")
    table.draw(2)
    assert Hu(1) in table.legal_actions(1) and Pass(1) in table.legal_actions(1)
    assert GreedyBot(random.Random(0)).choose(table, 1) == Hu(1)


def test_zipai_peng_that_empties_the_hand_is_not_offered(zp):
    # Seat 1 has 18 cards in six 0-胡 吃 and holds 陆陆: a 碰 of 陆 would leave
    # nothing to discard, so it is not legal (the guilin-zipai §3.1 rule for 吃, applied to
    # 碰 — families/zipai/flow.py can_peng).
    melds = ["x3 x4 x5", "x6 x7 x8", "d3 d4 d5", "d7 d8 d9", "x9 x9 d9", "x10 d10 d10"]
    table = zipai_position(zp, {1: "d6 d6"}, {1: melds}, wall_head="d6")
    table.draw(2)
    assert Peng(1) not in table.legal_actions(1)


def _ready_by_search(c: list[int], seen: list[int]) -> bool:
    """Some card not all seen completes ``c`` into groups (and one pair when
    the size asks for it), 胡数 aside: :func:`best_split` on another
    player's card."""
    return any(c[x] < 4 and seen[x] < 4
               and zipai_groups.best_split(c, x, self_drawn=False) is not None
               for x in range(20))


def test_zipai_splits_ready_matches_best_split():
    """d = 1 in the fast split search exactly when best_split finds a live
    card that completes the hand, over random hands of the sizes play makes
    and random kinds seen four times (sizes without a pair; with a pair to
    make, nothing dead: the search does not ask whether a 钓 card is live)."""
    rng = random.Random(11)
    deck = [k for k in range(20) for _ in range(4)]
    valid = [g for g in ((a, b, c) for a in range(20) for b in range(a, 20) for c in range(b, 20))
             if zipai_groups.valid_group(g)]
    checked = ready = 0
    while checked < 500:
        size = rng.choice([2, 4, 5, 7, 8, 10, 11, 13, 14, 16, 17, 20])
        if checked % 2:
            rng.shuffle(deck)
            c = counts(deck[:size], 20)
        else:  # groups (and a pair), less one card: often ready
            cards = [k for _ in range((size + 1) // 3) for k in rng.choice(valid)]
            if (size + 1) % 3 == 2:
                cards += [rng.randrange(20)] * 2
            cards.remove(rng.choice(cards))
            c = counts(cards, 20)
        if max(c) >= 4:
            continue
        seen = list(c)
        if (size + 1) % 3 == 0:
            for k in rng.sample(range(20), rng.choice([0, 0, 2, 5])):
                seen[k] = 4
        splits = zipai_splits(c, seen)
        assert splits and min(d for d, _ in splits) >= 1, c
        fast = min(d for d, _ in splits) == 1
        assert fast == _ready_by_search(c, seen), (c, seen)
        checked += 1
        ready += fast
    assert 100 < ready < 400  # both answers were exercised


def test_zipai_splits_see_dead_partials_and_pending_discards():
    c = counts(Z("x2 x7"), 20)
    assert zipai_splits(c) == [(1, 3.0)]  # 二七 waits on 十 for 二七十, 3 胡
    seen = list(c)
    seen[Z("x10")[0]] = 4  # every 十 is in sight
    assert min(d for d, _ in zipai_splits(c, seen)) == 2
    c = counts(Z("x2 x7 d4 d4 d4"), 20)  # a 坎 (6 胡) aside
    assert (1, 9.0) in zipai_splits(c)
    c[Z("d10")[0]] += 1  # one card more, to discard: the 拾 goes
    assert min(d for d, _ in zipai_splits(c, pending_discard=True)) == 1
    assert zipai_splits(counts(Z("x1 x1 x1"), 20), pending_discard=True) == []
    assert zipai_splits([0] * 20) == []


def test_zipai_greedy_wins_far_more_often_than_random(zp):
    def rate(bots):
        return sum(play_hand(zp, seed=s, bots=bots).result.end == "hu" for s in range(40)) / 40

    greedy, rand = rate("greedy"), rate("random")
    assert greedy >= 0.75 and greedy >= 2 * rand, (greedy, rand)
    # One greedy seat against two random ones wins most hands.
    hero = others = 0
    for s in range(30):
        seat = s % 3
        bots = ["random"] * 3
        bots[seat] = "greedy"
        r = play_hand(zp, seed=100 + s, bots=bots).result
        hero += r.winners == (seat,)
        others += bool(r.winners) and r.winners != (seat,)
    assert hero > 2 * others, (hero, others)


def test_zipai_greedy_same_seed_same_record(zp):
    def rec(seed):
        return msgspec.json.encode(record_of(play_hand(zp, seed=seed, bots="greedy")))

    assert rec(21) == rec(21) and rec(21) != rec(22)


def _after_claim(c, melds, card, act):
    """Counts and melds after a 碰 or 吃 (with its 下伙) of ``card``."""
    c = list(c)
    if isinstance(act, Peng):
        c[card] -= 2
        return c, melds + [Meld("peng", (card,) * 3)]
    used = list(act.cards)
    used.remove(card)
    for k in used + [k for g in act.extra for k in g]:
        c[k] -= 1
    return c, melds + [Meld("chi", tuple(g)) for g in (act.cards, *act.extra)]


def _live_ready(c, melds, seen, threshold):
    return any(4 - seen[k] > 0 for k in zipai_groups.waits(c, melds, threshold))


def test_zipai_greedy_decisions_follow_its_estimate(zp):
    """Over real hands: wins always taken; the discard is one of the best by
    the strategy's value, and leaves a hand that wins on a live card whenever
    some discard does (checked with groups.waits); claims only when they
    raise the value, never a 碰 that leaves nothing to discard."""
    claims = passes = 0
    for seed in range(20):
        table = zp.table(seed=seed)
        bots = make_bots("greedy", 3, seed)
        while not table.over:
            seat = table.to_decide()[0]
            legal = table.legal_actions(seat)
            act = bots[seat].choose(table, seat)
            assert act in legal
            strategy = bots[seat]._strategy
            assert isinstance(strategy, ZipaiStrategy)
            if any(isinstance(a, (Hu, Zimo)) for a in legal):
                assert isinstance(act, (Hu, Zimo))
                table.apply(act)
                continue
            window = table.state.window
            c, seen, melds, th = strategy._context(table.view(seat), window.card if window else None)
            if isinstance(act, Discard):
                def after(card):
                    c2 = list(c)
                    c2[card] -= 1
                    return c2

                values = {a.card: strategy.value(after(a.card), melds, seen, th)
                          for a in legal if isinstance(a, Discard)}
                assert values[act.card] == pytest.approx(max(values.values())), (seed, act)
                if any(_live_ready(after(k), melds, seen, th) for k in values):
                    assert _live_ready(after(act.card), melds, seen, th), (seed, act)
            elif window is not None:
                now = strategy.value(c, melds, seen, th)
                worth = {}
                for a in legal:
                    if isinstance(a, (Peng, Chi)):
                        c2, m2 = _after_claim(c, melds, window.card, a)
                        worth[a] = strategy.value(c2, m2, seen, th, pending_discard=True)
                if isinstance(act, Pass):
                    passes += bool(worth)
                    assert all(v <= now + 1e-9 for v in worth.values()), (seed, worth, now)
                else:
                    claims += 1
                    assert worth[act] > now and worth[act] == max(worth.values()), (seed, act)
                    c2, _ = _after_claim(c, melds, window.card, act)
                    assert any(0 < n < 3 for n in c2), (seed, act)  # a card to discard
            table.apply(act)
        assert sum(table.result.net) == 0
    assert claims and passes


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.sampled_from([0, 0, 1, 2, 3, 4]),
       extra=st.integers(1, 2))
def test_fast_shanten_is_shanten(seed, n, extra):
    """The shanten the bot asks (unchecked, on the interned segment tables)
    equals shanten, and its best discard the least shanten over discards."""
    from qipai.bots.mahjong import MahjongStrategy

    deck = [k for k in range(34) for _ in range(4)]
    random.Random(seed).shuffle(deck)
    c = counts(deck[:3 * (4 - n) + extra], 34)
    assert counts_shanten(c, n) == shanten(c, n)
    if extra == 2:
        assert MahjongStrategy._best_discard(c, n) == _best_after_discard(c, n)
