"""桂林字牌: decisions taken where the rules are silent (docs/variants/guilin-zipai.md).

D-ZP20: a seat whose hand a mandatory 扫 emptied plays on (D-ZP18), and
when the fourth copy then comes to it — a 开招 on another's card, or a 扫穿
on its own draw, its first of the hand, so a discard is due — it has
nothing to discard and is one card more over.  The next card any seat
could be asked to win on is then checked against a holding two cards over,
a size the win check must allow (3 hands in 20,000 of random self-play
reach it).  The seat may still win with a card that makes another of
its melds a four (D-ZP9).

D-ZP21: with ``two_saochuan = "extra_card"`` the extra stock cards go in
turn order from the dealer, not from seat 0.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from qipai.conformance.properties import cards_in_play, dealt_cards
from qipai.core.errors import BadCards
from qipai.core.model import Hu, Meld, Melded, Pass, WinClaim, Won
from qipai.core.ruleset import load
from qipai.core.table import Table
from qipai.families.zipai.cards import CARDS
from qipai.variants.guilin_zipai.scoring import analyse

P = CARDS.parse


def _table(melds: list[str], wall: str) -> Table:
    """Seat 0 holds x6 x6 and ``melds`` (a 碰 of x10 among them); the dealer,
    seat 2, has discarded; seats 1 and 2 hold the rest of the deck less the
    stock ``wall`` (a fixed shuffle)."""
    rs = load("guilin-zipai")
    m0 = [Meld(m.split(":")[0], tuple(P(m.split(":")[1]))) for m in melds]
    w = P(wall)
    used = Counter(P("x6 x6")) + Counter(c for m in m0 for c in m.cards) + Counter(w)
    rest = sorted((Counter({k: 4 for k in range(20)}) - used).elements())
    random.Random(0).shuffle(rest)
    t = Table.from_position(rs, dealer=2, hands=[P("x6 x6"), rest[:20], rest[20:41]], wall=w,
                            melds=[m0, [], []])
    t.apply(t.legal_actions(2)[0])  # the dealer's discard
    return t


def _play(t: Table, take_wins: bool) -> None:
    """Every seat passes what it may pass (seat 0 takes a win if
    ``take_wins``); a seat that must act takes its first action."""
    while not t.over:
        s = t.to_decide()[0]
        acts = t.legal_actions(s)
        win = next((a for a in acts if type(a) is Hu), None) if s == 0 and take_wins else None
        t.apply(win or (Pass(s) if Pass(s) in acts else acts[0]))


def _kinds(t: Table, seat: int) -> list[str]:
    return [e.meld.kind for e in t.events if type(e) is Melded and e.seat == seat]


LOW = ["chi:x2 x3 x4", "chi:d2 d3 d4", "chi:x7 x8 x9", "chi:d7 d8 d9", "peng:x10 x10 x10",
       "chi:d4 d5 d6"]  # 胡数 1 (the small 碰), every run 0 (§5)


@pytest.mark.parametrize("wall", ["x6 x6 x5 d5 x9",        # 开招 on seat 1's draw of x6
                                  "x6 x5 d5 x6 x9 x4"])    # 扫穿 on seat 0's own draw
def test_a_seat_two_over_is_asked_and_the_hand_goes_on(wall):
    t = _table(LOW, wall)
    _play(t, take_wins=True)  # raised BadCards ("… got 23") on the next card before
    assert _kinds(t, 0)[:1] == ["sao"] and _kinds(t, 0)[1] in ("kaizhao", "saochuan")
    s0 = t.state.seats[0]
    assert not s0.hand or t.result.end == "hu"
    assert sum(t.result.net) == 0
    set_up = Counter(c for m in LOW for c in P(m.split(":")[1]))  # melds given, not dealt
    assert cards_in_play(t) == dealt_cards(t) + set_up  # every card once, where the rules put it


def test_a_seat_two_over_wins_with_a_card_that_makes_a_four():
    """x6 x6 扫 on seat 0's draw of x6 (hand empty: 4 胡, no win), seat 1's
    x6 → 开招 (7 胡, no win; his first, nothing to discard: two over), seat
    1's x10 → the 碰 of x10 becomes a four: a win at 胡 priority (D-ZP9), 平胡.
    By hand (§5, §6, §7): 开招 small 6 + 6 = 12 胡 → 子 1 + ⌊(12 − 10)/3⌋ = 1.
    Stock left d5 x9: flip d5 → 上醒 d6, held once (chi d4 d5 d6) → 1; d4 d5 d6
    held 2 + 1 + 1 = 4 → 假四醒, flip x9 → 醒 x10, held 4 (the four) → 4 → 真三醒,
    but the stock is spent: 中醒 5.  Share (1 + 5) × 1; 平胡: each other seat
    pays one share → (12, −6, −6)."""
    t = _table(LOW, "x6 x6 x10 d5 x9")
    _play(t, take_wins=True)
    assert _kinds(t, 0) == ["sao", "kaizhao"]
    won = [e for e in t.events if type(e) is Won]
    assert [(e.seat, e.how, CARDS.token(e.card)) for e in won] == [(0, "pinghu", "x10")]
    assert t.result.net == (12, -6, -6)
    assert t.result.xing == {0: 5}
    assert len(t.state.seats[0].hand) + sum(len(m.cards) for m in t.state.seats[0].melds) == 23


def test_the_win_check_bounds_an_empty_hand():
    """The sizes the win check takes for an empty hand: with a four on the
    table up to two cards over the usual 21 + fours (D-ZP18, D-ZP20), not
    three; with none, one (D-ZP18 alone)."""
    melds = [Meld(k, tuple(P(c))) for k, c in (
        ("chi", "x2 x3 x4"), ("chi", "d2 d3 d4"), ("chi", "x7 x8 x9"), ("chi", "d7 d8 d9"),
        ("peng", "x10 x10 x10"), ("chi", "d4 d5 d6"), ("kaizhao", "x6 x6 x6 x6"))]
    claim = WinClaim(seat=0, hand=(), melds=tuple(melds), tile=P("x5")[0])
    assert not analyse(claim, "pinghu", 2, 1).wins  # 23 cards: asked, no win
    extra = Meld("chi", tuple(P("d1 x1 x1")))  # 26 cards with one four: three over
    with pytest.raises(BadCards, match="got 26"):
        analyse(WinClaim(seat=0, hand=(), melds=(*melds, extra), tile=P("x5")[0]),
                "pinghu", 2, 1)


def test_extra_cards_for_two_saochuan_go_in_turn_order_from_the_dealer():
    """D-ZP21 (D-ZP13, ``two_saochuan = "extra_card"``): seats 0 and 2 are
    each dealt exactly two 扫穿 and seat 1 deals; the stock's first card
    goes to seat 2 (the dealer's next seat), the second to seat 0 — as
    cards are dealt, from the dealer — not seat 0 first."""
    from qipai.core.model import Deal, Drew

    rest = [k for k in range(4, 20) for _ in range(4)]  # x1–x4 are the 扫穿
    # one of each of x5 … d6 to seats 0 and 2, the dealer 21 others, the stock the rest
    s0 = list(range(4, 16))
    s2 = list(range(4, 16))
    for k in s0 + s2:
        rest.remove(k)
    s1 = [k for k in range(4, 20)] + [16, 17, 18, 19, 4]
    for k in s1:
        rest.remove(k)
    wall = sorted(rest)  # x6, x7, … : the first two differ
    deal = Deal(dealer=1, hands=(tuple([0] * 4 + [1] * 4 + s0), tuple(s1),
                                 tuple([2] * 4 + [3] * 4 + s2)), wall=tuple(wall))
    rs = load("guilin-zipai(two_saochuan=extra_card)")
    t = rs.table(deal=deal)
    drawn = [(e.seat, e.card) for e in t.events if type(e) is Drew]
    assert drawn[:2] == [(2, wall[0]), (0, wall[1])], drawn
    assert len(t.state.seats[2].hand) == 13 and len(t.state.seats[0].hand) == 13
