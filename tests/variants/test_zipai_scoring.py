"""桂林字牌 scoring: options, 胡数 → 子, win check, 醒 and settlement.

Expectations are computed by hand from 《桂林字牌玩法规则》 and
docs/variants/guilin-zipai.md ("Winning" and bonuses, "胡数", "醒", "Settlement"); the reasoning is in
the comments.  胡数 values used throughout ("胡数"): 碰 big 3 / small 1; 坎, 扫
big 6 / small 3; 开招 9 / 6; 扫穿 12 / 9; 壹贰叁, 贰柒拾 6; 一二三, 二七十 3;
every other group 0.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qipai.core.errors import BadCards
from qipai.core.model import HandEnd, Meld, WinClaim, net_of
from qipai.families.zipai.cards import CARDS
from qipai.variants.guilin_zipai.options import ZipaiOptions, step, threshold
from qipai.variants.guilin_zipai.scoring import (
    analyse,
    evaluate,
    flip,
    holding,
    hu_to_zi,
    neighbours,
    settle,
    share,
    xing_card,
)

# ----------------------------------------------------------------- helpers


def k(text: str) -> int:
    (kind,) = CARDS.parse(text)
    return kind


def ks(text: str) -> list[int]:
    return CARDS.parse(text)


def meld(kind: str, cards: str, frm: int | None = None) -> Meld:
    cs = tuple(ks(cards))
    return Meld(kind=kind, cards=cs, from_seat=frm, claimed=cs[0] if frm is not None else None)


def claim(seat: int, hand: str, tile: str | None, melds=(), flags=()) -> WinClaim:
    return WinClaim(seat=seat, hand=tuple(ks(hand)), melds=tuple(melds),
                    tile=None if tile is None else k(tile), flags=tuple(flags))


def end(how: str, winner: WinClaim, dealer: int = 0, frm: int | None = None,
        stock: str = "") -> HandEnd:
    return HandEnd(dealer=dealer, how=how, from_seat=frm, winners=(winner,),
                   stock=tuple(ks(stock)), n_players=3)


def net(s) -> list[int]:
    return net_of(s.payments, 3)


def pairwise(s) -> dict[tuple[int, int], int]:
    out: dict[tuple[int, int], int] = {}
    for p in s.payments:
        out[(p.payer, p.payee)] = out.get((p.payer, p.payee), 0) + p.amount
    return out


NO_XING = ZipaiOptions(max_flips=0)

# ----------------------------------------------------------------- test hands
#
# A family of winning holdings of 21 cards with a chosen 胡数: the hand
# "x4 x5 d4 d5 d6" plus the card x6 splits only as x4 x5 x6 + d4 d5 d6 (two
# plain runs, 0 胡), and five table melds carry the 胡数.  No meld shares a
# kind with the hand, so the hand part stays 0 whatever the melds.

HAND = "x4 x5 d4 d5 d6"
TILE = "x6"
MENU = {
    "sao_d1": (meld("sao", "d1 d1 d1"), 6),
    "sao_d3": (meld("sao", "d3 d3 d3"), 6),
    "sao_d10": (meld("sao", "d10 d10 d10"), 6),
    "peng_d2": (meld("peng", "d2 d2 d2", 0), 3),
    "peng_d7": (meld("peng", "d7 d7 d7", 0), 3),
    "peng_x1": (meld("peng", "x1 x1 x1", 2), 1),
    "peng_x2": (meld("peng", "x2 x2 x2", 2), 1),
    "chi_x789": (meld("chi", "x7 x8 x9", 0), 0),
    "chi_x8910": (meld("chi", "x8 x9 x10", 0), 0),
    "chi_d789": (meld("chi", "d7 d8 d9", 0), 0),
}
COMBOS = {
    9: ("sao_d1", "peng_d2", "chi_x789", "chi_x8910", "chi_d789"),  # 6+3
    10: ("sao_d1", "peng_d2", "peng_x1", "chi_x789", "chi_d789"),  # 6+3+1
    12: ("sao_d1", "peng_d2", "peng_d7", "chi_x789", "chi_x8910"),  # 6+3+3
    13: ("sao_d1", "peng_d2", "peng_d7", "peng_x1", "chi_x789"),  # 6+3+3+1
    14: ("sao_d1", "sao_d3", "peng_x1", "peng_x2", "chi_x789"),  # 6+6+1+1
    15: ("sao_d1", "sao_d3", "peng_d2", "chi_x789", "chi_x8910"),  # 6+6+3
    16: ("sao_d1", "sao_d3", "peng_d2", "peng_x1", "chi_x789"),  # 6+6+3+1
    17: ("sao_d1", "sao_d3", "peng_d2", "peng_x1", "peng_x2"),  # 6+6+3+1+1
    18: ("sao_d1", "sao_d3", "peng_d2", "peng_d7", "chi_x789"),  # 6+6+3+3
    19: ("sao_d1", "sao_d3", "peng_d2", "peng_d7", "peng_x1"),  # 6+6+3+3+1
    20: ("sao_d1", "sao_d3", "sao_d10", "peng_x1", "peng_x2"),  # 6+6+6+1+1
}


def hu_claim(hu: int, seat: int = 1, flags=()) -> WinClaim:
    names = COMBOS[hu]
    assert sum(MENU[n][1] for n in names) == hu  # the comment arithmetic above
    return claim(seat, HAND, TILE, [MENU[n][0] for n in names], flags)


# ----------------------------------------------------------------- options


def test_options_defaults_and_helpers():
    o = ZipaiOptions()
    assert (o.hu_scale, o.bonus_mode, o.xing_mode, o.max_flips) == ("10/3", "fan", "shang", None)
    assert (o.first_dealer, o.fangpao_bihu, o.xiahuo) == (0, True, True)
    assert (o.guozhang, o.own_discard_bars_chi, o.two_saochuan) == (
        "joint", False, "skip_discard")
    assert [(threshold(ZipaiOptions(hu_scale=s)), step(ZipaiOptions(hu_scale=s)))
            for s in ("10/3", "10/5", "15/3", "15/5")] == [(10, 3), (10, 5), (15, 3), (15, 5)]
    assert threshold() == 10 and step() == 3


@pytest.mark.parametrize("bad", [
    {"hu_scale": "10/4"}, {"bonus_mode": "double"}, {"xing_mode": "up"}, {"max_flips": -1},
    {"first_dealer": 3}, {"guozhang": "both"}, {"two_saochuan": "no"}, {"nonsense": 1},
])
def test_options_refuse_bad_values(bad):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(bad, ZipaiOptions)


# ----------------------------------------------------------------- 胡数 → 子 (§7)

# (hu_scale, 胡数, 子): 子 = 1 + ⌊(胡数 − threshold) / step⌋, 0 below threshold.
ZI_TABLE = [
    ("10/3", 9, 0), ("10/3", 10, 1), ("10/3", 12, 1), ("10/3", 13, 2), ("10/3", 15, 2),
    ("10/3", 16, 3), ("10/3", 18, 3), ("10/3", 19, 4),
    ("10/5", 9, 0), ("10/5", 10, 1), ("10/5", 14, 1), ("10/5", 15, 2), ("10/5", 19, 2),
    ("10/5", 20, 3), ("10/5", 24, 3),
    ("15/3", 14, 0), ("15/3", 15, 1), ("15/3", 17, 1), ("15/3", 18, 2), ("15/3", 20, 2),
    ("15/3", 21, 3),
    ("15/5", 14, 0), ("15/5", 15, 1), ("15/5", 19, 1), ("15/5", 20, 2), ("15/5", 24, 2),
    ("15/5", 25, 3),
]


@pytest.mark.parametrize("scale,hu,zi", ZI_TABLE)
def test_hu_to_zi(scale, hu, zi):
    assert hu_to_zi(hu, ZipaiOptions(hu_scale=scale)) == zi


def test_hu_to_zi_zero_and_default():
    assert hu_to_zi(0) == 0
    assert hu_to_zi(10) == 1


# The same boundaries on real holdings, through the win check and settlement.
# Settled as 平胡 (seat 1 wins on seat 2's draw) with 醒 off: each other seat
# pays 子, the winner gets 2 子.
BOUNDARIES = [
    ("10/3", 9, 0), ("10/3", 10, 1), ("10/3", 12, 1), ("10/3", 13, 2), ("10/3", 15, 2),
    ("10/3", 16, 3),
    ("10/5", 9, 0), ("10/5", 14, 1), ("10/5", 15, 2), ("10/5", 19, 2), ("10/5", 20, 3),
    ("15/3", 14, 0), ("15/3", 15, 1), ("15/3", 17, 1), ("15/3", 18, 2),
    ("15/5", 14, 0), ("15/5", 15, 1), ("15/5", 19, 1), ("15/5", 20, 2),
]


@pytest.mark.parametrize("scale,hu,zi", BOUNDARIES)
def test_boundaries_on_holdings(scale, hu, zi):
    opts = ZipaiOptions(hu_scale=scale, max_flips=0)
    c = hu_claim(hu)
    ev = evaluate(c, "pinghu", 0, 2, opts)
    assert ev.hu == hu
    assert ev.wins == (zi > 0)
    if zi == 0:
        assert ev.patterns == ()
        with pytest.raises(BadCards):
            settle(end("pinghu", c, frm=2, stock="x3"), opts)
        return
    assert ev.patterns == ("pinghu",)
    s = settle(end("pinghu", c, frm=2, stock="x3"), opts)
    assert pairwise(s) == {(0, 1): zi, (2, 1): zi}
    assert net(s) == [-zi, 2 * zi, -zi]
    assert s.xing == {1: 0} and s.flipped == ()


def test_below_threshold_reports_hu_and_no_split_reports_none():
    ev = evaluate(hu_claim(9), "fangpao", 0, 2)
    assert (ev.wins, ev.hu, ev.patterns) == (False, 9, ())
    # The card x9 does not fit "x4 x5 d4 d5 d6": no split at all.
    c = claim(1, HAND, "x9", [MENU[n][0] for n in COMBOS[10]])
    ev = evaluate(c, "fangpao", 0, 2)
    assert (ev.wins, ev.hu) == (False, None)


# ----------------------------------------------------------------- win check details


def test_patterns_name_the_way_of_winning():
    c = hu_claim(13)
    assert evaluate(c, "zimo", 0, None).patterns == ("zimo",)
    assert evaluate(c, "zimo", 0, 1).patterns == ("zimo",)  # from = the drawer himself
    assert evaluate(c, "pinghu", 0, 2).patterns == ("pinghu",)
    assert evaluate(c, "fangpao", 0, 2).patterns == ("fangpao",)
    dihu = hu_claim(13, flags=("dihu",))
    assert set(evaluate(dihu, "fangpao", 0, 0).patterns) == {"fangpao", "dihu"}


def test_d_zp5_pair_completed_is_peng_from_others_kan_on_own_draw():
    # Hand x4 x5 x6 d3 d3 + card d3: x4 x5 x6 and d3 d3 d3 (d1, d2 are all on
    # the table, so no 壹贰叁).  Melds: 扫 d1 6 + 碰 d2 3 + 碰 x1 1 = 10.
    melds = [MENU[n][0] for n in ("sao_d1", "peng_d2", "peng_x1", "chi_x789", "chi_d789")]
    c = claim(1, "x4 x5 x6 d3 d3", "d3", melds)
    # Another's card: the three d3 are a 碰, 3 → 13.
    assert evaluate(c, "pinghu", 0, 2).hu == 13
    assert evaluate(c, "fangpao", 0, 2).hu == 13
    # Own draw: a compulsory 扫, worth a 坎, 6 → 16.
    assert evaluate(c, "zimo", 0, None).hu == 16


def test_d_zp9_fourth_card_of_a_kan_in_hand():
    # Hand d9 d9 d9 x4 x5 x6 x7 x7 + d9.  The 坎 kept whole leaves the 4th d9
    # with nothing to join; as 开招 (9) the rest is x4 x5 x6 + pair x7 x7.
    # Melds: 碰 d2 3 + 碰 x1 1 + d4 d5 d6 + x8 x9 x10 = 4.
    melds = [meld("peng", "d2 d2 d2", 0), meld("peng", "x1 x1 x1", 2),
             meld("chi", "d4 d5 d6", 0), meld("chi", "x8 x9 x10", 0)]
    c = claim(1, "d9 d9 d9 x4 x5 x6 x7 x7", "d9", melds)
    assert evaluate(c, "pinghu", 0, 2).hu == 9 + 4
    assert evaluate(c, "fangpao", 0, 2).hu == 9 + 4
    # Own draw on one's 坎: a compulsory 扫穿, 12 → 16.
    assert evaluate(c, "zimo", 0, None).hu == 12 + 4


def test_d_zp9_rules_example_kan_kept_whole():
    # 坎 d9 d9 d9 and d7 d8 + d9 → 坎 6 + d7 d8 d9 (§4 D-ZP9).
    # Melds: 扫 d1 6 + 碰 x1 1 + x4 x5 x6 + 碰 d2 3 = 10; hand part 6 → 16.
    melds = [meld("sao", "d1 d1 d1"), meld("peng", "x1 x1 x1", 2),
             meld("chi", "x4 x5 x6", 0), meld("peng", "d2 d2 d2", 0)]
    c = claim(1, "d9 d9 d9 d7 d8 x7 x8 x9", "d9", melds)
    ev = analyse(c, "pinghu", 0, 2)
    assert ev.hu == 16 and ev.wins
    assert ("kan", (k("d9"),) * 3) in ev.groups


def _sao_table(kind: str, from_seat: int | None = None):
    # Hand x1 x2 x3 d4 d5 d6 d8 d8 (一二三 3, run 0, pair) + the x5 meld +
    # 碰 d2 3 + x7 x8 x9 + 碰 d10 3.
    return [meld(kind, "x5 x5 x5", from_seat), meld("peng", "d2 d2 d2", 0),
            meld("chi", "x7 x8 x9", 0), meld("peng", "d10 d10 d10", 2)]


def test_d_zp9_fourth_card_of_a_table_sao():
    c = claim(1, "x1 x2 x3 d4 d5 d6 d8 d8", "x5", _sao_table("sao"))
    # The card x5 fits no group of the hand; as the 4th of the 扫 it is a 开招
    # (6): 3 + 0 + 6 + 3 + 0 + 3 = 15.
    assert evaluate(c, "pinghu", 0, 2).hu == 15
    assert evaluate(c, "fangpao", 0, 2).hu == 15
    # One's own draw on one's 扫 is a compulsory 扫穿 (9), then D-ZP4: 18.
    ev = analyse(c, "zimo", 0, None)
    assert ev.hu == 18 and any(m.kind == "saochuan" for m in ev.melds)


def test_d_zp9_fourth_card_of_a_table_peng():
    c = claim(1, "x1 x2 x3 d4 d5 d6 d8 d8", "x5", _sao_table("peng", 2))
    # A drawn card (anyone's) on one's 碰 may make a 开招: 6 + 3 + 3 + 3 = 15.
    assert evaluate(c, "pinghu", 0, 2).hu == 15
    assert evaluate(c, "zimo", 0, None).hu == 15
    # A discard does not 开招 a 碰: the x5 cannot be used, no split.
    ev = evaluate(c, "fangpao", 0, 2)
    assert (ev.wins, ev.hu) == (False, None)


def test_d_zp4_win_after_sao_three_ways():
    # Drew x5 onto the pair x5 x5: compulsory 扫 (3); the hand alone then is
    # x1 x2 x3 (3) + d4 d5 d6 (0) + 坎 d8 (6); melds 碰 d2 3 + x7 x8 x9 + 碰 d10 3.
    # 3 + 0 + 6 + 3 + 3 + 0 + 3 = 18 → 3 子.
    rest = [meld("peng", "d2 d2 d2", 0), meld("chi", "x7 x8 x9", 0),
            meld("peng", "d10 d10 d10", 2)]
    hand = "x1 x2 x3 d4 d5 d6 d8 d8 d8"
    after = claim(1, hand, "x5", [meld("sao", "x5 x5 x5"), *rest], ("after_sao",))
    no_tile = claim(1, hand, None, [meld("sao", "x5 x5 x5"), *rest])
    plain = claim(1, hand + " x5 x5", "x5", rest)
    for c in (after, no_tile, plain):
        ev = evaluate(c, "zimo", 0, None)
        assert (ev.wins, ev.hu, ev.patterns) == (True, 18, ("zimo",))
        assert sorted(holding(c)).count(k("x5")) == 3  # the drawn card counted once
    # 海底胡 with 本醒: the winning card x5 is flipped, 醒 x5, held 3 times.
    ben = ZipaiOptions(xing_mode="ben")
    for c in (after, plain):
        s = settle(end("zimo", c), ben)
        assert s.flipped == (k("x5"),) and s.xing == {1: 3}
        # (3 子 + 3 醒) × 2 (自摸) = 12 from each other seat.
        assert net(s) == [-12, 24, -12]
    # Without the card the 海底胡 has nothing to flip (documented).
    s = settle(end("zimo", no_tile), ben)
    assert s.flipped == () and s.xing == {1: 0}


def test_after_sao_needs_the_sao_meld():
    rest = [meld("peng", "d2 d2 d2", 0), meld("chi", "x7 x8 x9", 0),
            meld("peng", "d10 d10 d10", 2), meld("sao", "x5 x5 x5")]
    c = claim(1, "x1 x2 x3 d4 d5 d6 d8 d8 d8", "x6", rest, ("after_sao",))
    with pytest.raises(BadCards):
        evaluate(c, "zimo", 0, None)


def test_two_initial_saochuan_before_first_take():
    # D-ZP13: a non-dealer dealt two 扫穿 (x5, d4) holds 20 cards until his
    # first take.  A discard x9 onto his 坎 x9 is a 开招 (6) and wins:
    # 9 + 12 + 6 + 一二三 3 + 壹贰叁 6 + d7 d8 d9 0 = 36 → 1 + 26 // 3 = 9 子.
    melds = [meld("saochuan", "x5 x5 x5 x5"), meld("saochuan", "d4 d4 d4 d4")]
    c = claim(1, "x9 x9 x9 x1 x2 x3 d1 d2 d3 d7 d8 d9", "x9", melds)
    ev = evaluate(c, "fangpao", 0, 2)
    assert (ev.wins, ev.hu) == (True, 36)
    s = settle(end("fangpao", c, frm=2, stock="x7"), NO_XING)
    assert net(s) == [0, 18, -18]


# ----------------------------------------------------------------- 天胡, 三笼五坎

TIANHU_HAND = "d10 d10 d1 d2 d3 x1 x2 x3 x4 x5 x6 x7 x8 x9 d4 d5 d6 d7 d8 d9"


def test_tianhu():
    # Dealer's 21: 坎 d10 (the 亮张 d10 on his pair: a 坎 of the dealt hand, 6)
    # + 壹贰叁 6 + 一二三 3 + four plain runs = 15 → 2 子 (10/3).
    c = claim(0, TIANHU_HAND, "d10", (), ("tianhu",))
    ev = evaluate(c, "zimo", 0, None)
    assert (ev.wins, ev.hu, ev.patterns) == (True, 15, ("tianhu",))  # not also zimo
    # The same 21 cards all in the hand.
    c2 = claim(0, TIANHU_HAND + " d10", None, (), ("tianhu",))
    assert evaluate(c2, "zimo", 0, None) == ev
    # Flip x9: 上醒 x10, not held; 上中下 x8 x9 x10 held 1 + 1 + 0 → no re-flip.
    s = settle(end("zimo", c, stock="x9 x10"))
    assert s.flipped == (k("x9"),) and s.xing == {0: 0}
    # (2 + 0) × 2 (天胡) = 4 from each other seat.
    assert pairwise(s) == {(1, 0): 4, (2, 0): 4}
    assert s.patterns == {0: ("tianhu",)}


def test_tianhu_must_be_the_dealer_on_his_deal():
    c = claim(1, TIANHU_HAND, "d10", (), ("tianhu",))
    with pytest.raises(BadCards):
        evaluate(c, "zimo", 0, None)
    with pytest.raises(BadCards):
        evaluate(claim(0, TIANHU_HAND, "d10", (), ("tianhu",)), "fangpao", 0, 1)


SANLONG_5KAN = "x1 x1 x1 d2 d2 d2 x5 x5 x5 d9 d9 d9 x8 x8 x8 x2 x3 x7 x10 d1"


def test_sanlong_wukan_five_kan():
    # Five 坎: x1 3 + d2 6 + x5 3 + d9 6 + x8 3 = 21.  The other cards x2 x3
    # x7 x10 d1 do not split; their best groups: 二七十 (3) — x1 is in a 坎, so
    # no 一二三; x3 and d1 are left over.  24 胡 → 1 + 14 // 3 = 5 子.
    c = claim(1, SANLONG_5KAN, None, (), ("sanlong_wukan",))
    ev = evaluate(c, "zimo", 0, None)
    assert (ev.wins, ev.hu, ev.patterns) == (True, 24, ("sanlong_wukan",))
    # Flip d4: 上醒 d5 not held; d3 d4 d5 not held → one flip, 0 醒.
    s = settle(end("zimo", c, stock="d4 x9"))
    assert s.flipped == (k("d4"),) and s.xing == {1: 0}
    # (5 + 0) × 2 = 10 from each other seat.
    assert net(s) == [-10, 20, -10]
    # 15/5: 1 + 9 // 5 = 2 子 → 4 each.
    s = settle(end("zimo", c, stock="d4"), ZipaiOptions(hu_scale="15/5"))
    assert net(s) == [-4, 8, -4]


def test_sanlong_wukan_three_saochuan():
    # 扫穿 x3 9 + d4 12 + d5 12 = 33; others x1 x2 x7 x10 d2 d7 d10 x9:
    # 二七十 3 (一二三 lacks its x3) + 贰柒拾 6 = 9 → 42 胡 → 1 + 32 // 3 = 11 子.
    melds = [meld("saochuan", "x3 x3 x3 x3"), meld("saochuan", "d4 d4 d4 d4"),
             meld("saochuan", "d5 d5 d5 d5")]
    c = claim(2, "x1 x2 x7 x10 d2 d7 d10 x9", None, melds, ("sanlong_wukan",))
    ev = analyse(c, "zimo", 0, None)
    assert (ev.wins, ev.hu, ev.zi) == (True, 42, 11)
    # The 扫穿 left in the hand are read as placed at the deal: same answer.
    c2 = claim(2, "x3 x3 x3 x3 d4 d4 d4 d4 d5 d5 d5 d5 x1 x2 x7 x10 d2 d7 d10 x9", None,
               (), ("sanlong_wukan",))
    assert analyse(c2, "zimo", 0, None).hu == 42
    # zi mode: 11 + 1 (bonus) + 醒; flip x10 → 上醒 x1 held 1; x9 x10 x1 held
    # 1 + 1 + 1 = 3 → no re-flip.  Share 13.
    s = settle(end("zimo", c, stock="x10 d1"), ZipaiOptions(bonus_mode="zi"))
    assert s.xing == {2: 1} and s.flipped == (k("x10"),)
    assert net(s) == [-13, -13, 26]


def test_sanlong_wukan_needs_five_kan():
    four = "x1 x1 x1 d2 d2 d2 x5 x5 x5 d9 d9 d9 x8 x8 x2 x3 x7 x10 d1 d6"
    ev = evaluate(claim(1, four, None, (), ("sanlong_wukan",)), "zimo", 0, None)
    assert not ev.wins
    with pytest.raises(BadCards):
        settle(end("zimo", claim(1, four, None, (), ("sanlong_wukan",))))
    # A dealt hand is 20 cards for a non-dealer.
    with pytest.raises(BadCards):
        evaluate(claim(1, SANLONG_5KAN + " d6", None, (), ("sanlong_wukan",)), "zimo", 0, None)


# ----------------------------------------------------------------- 醒 (§6)


def test_xing_modes_seed_examples():
    # 上醒: 翻出小三, 小四 is the 醒.  本醒: 翻出小四, 小四.  下醒: 翻出小四, 小三.
    assert xing_card(k("x3"), ZipaiOptions(xing_mode="shang")) == k("x4")
    assert xing_card(k("x4"), ZipaiOptions(xing_mode="ben")) == k("x4")
    assert xing_card(k("x4"), ZipaiOptions(xing_mode="xia")) == k("x3")
    assert xing_card(k("d3")) == k("d4")  # default 上醒; the case is kept


def test_flip_each_mode():
    held = ks("x3 x4 x4 d1 d1 d1 d9")
    # 上醒, flip x3: 醒 x4, held 2.  上中下 x2 x3 x4 held 0 + 1 + 2 = 3 → stop.
    f = flip(held, ks("x3 d5"), None, ZipaiOptions(xing_mode="shang"))
    assert (f.flipped, f.xing) == ((k("x3"),), 2)
    # 本醒, flip x4: 醒 x4, held 2.  x3 x4 x5 held 1 + 2 + 0 = 3 → stop.
    f = flip(held, ks("x4 d5"), None, ZipaiOptions(xing_mode="ben"))
    assert (f.flipped, f.xing) == ((k("x4"),), 2)
    # 下醒, flip x4: 醒 x3, held 1.
    f = flip(held, ks("x4 d5"), None, ZipaiOptions(xing_mode="xia"))
    assert (f.flipped, f.xing) == ((k("x4"),), 1)


def test_zhen_san_xing():
    # Seed: 翻出小四, three 小五 held → flip again.  上醒 x5: 3.  Then d1: 上醒
    # d2 held 1; d10 d1 d2 held 0 + 0 + 1 → stop.  Total 4.
    f = flip(ks("x5 x5 x5 d2 d9 d9"), ks("x4 d1 x8"))
    assert (f.flipped, f.xing) == ((k("x4"), k("d1")), 4)
    # 真三醒 on the flipped card itself (three x4) with 下醒: 醒 x3 not held.
    f = flip(ks("x4 x4 x4 d6"), ks("x4 d5 x1"), None, ZipaiOptions(xing_mode="xia"))
    # flip x4: 0, re-flip (x4 × 3); flip d5: 醒 d4 0; d4 d5 d6 held 1 → stop.
    assert (f.flipped, f.xing) == ((k("x4"), k("d5")), 0)


def test_jia_si_xing():
    # Seed: 翻出小四, 小三 小四 小五 held 4 in all (1 + 2 + 1, none three) → again.
    # 上醒 x5: 1.  Then d6: 上醒 d7 held 1; d5 d6 d7 held 0 + 0 + 1 → stop.
    f = flip(ks("x3 x4 x4 x5 d7"), ks("x4 d6 x1"))
    assert (f.flipped, f.xing) == ((k("x4"), k("d6")), 2)
    # Three of the 上中下 is neither 真三醒 nor 假四醒.
    f = flip(ks("x3 x4 x5 d7"), ks("x4 d6"))
    assert (f.flipped, f.xing) == ((k("x4"),), 1)


def test_haidi_winning_card_is_flipped_without_reflip():
    # Seed: 胡小四 → 翻醒牌 is 小四; 海底胡不连翻.  Holding with three x5: 上醒 x5
    # counts 3 and, although x3 x4 x5 is a 真三醒, nothing more is flipped.
    held = ks("x4 x5 x5 x5 d1 d1")
    f = flip(held, [], k("x4"))
    assert (f.flipped, f.xing) == ((k("x4"),), 3)
    assert flip(held, [], k("x4"), ZipaiOptions(xing_mode="ben")).xing == 1
    assert flip(held, [], k("x4"), ZipaiOptions(xing_mode="xia")).xing == 0
    # No winning card, no stock: nothing to flip.
    assert flip(held, [], None) == flip(held, (), None)
    assert flip(held, [], None).flipped == ()


def test_reflip_chain_max_flips_and_stock_end():
    held = ks("x5 x5 x5 d3 d3 d3")
    # x4: 醒 x5 3, 真三醒; d2: 醒 d3 3, 真三醒; x9: 醒 x10 0, x8 x9 x10 held 0 → stop.
    f = flip(held, ks("x4 d2 x9 x1"))
    assert (f.flipped, f.xing) == ((k("x4"), k("d2"), k("x9")), 6)
    f = flip(held, ks("x4 d2 x9 x1"), None, ZipaiOptions(max_flips=2))
    assert (f.flipped, f.xing) == ((k("x4"), k("d2")), 6)
    f = flip(held, ks("x4 d2 x9 x1"), None, ZipaiOptions(max_flips=1))
    assert (f.flipped, f.xing) == ((k("x4"),), 3)
    # The stock ends during 连翻.
    f = flip(held, ks("x4"))
    assert (f.flipped, f.xing) == ((k("x4"),), 3)
    # max_flips = 0: no 醒, 海底胡 included.
    assert flip(held, ks("x4"), None, ZipaiOptions(max_flips=0)).flipped == ()
    assert flip(ks("x4 x5"), [], k("x4"), ZipaiOptions(max_flips=0)).xing == 0


def test_wrap_within_case():
    # D-ZP7: x10's next is x1, x1's previous is x10; d10's next is d1, never x1.
    assert xing_card(k("x10")) == k("x1")
    assert xing_card(k("x1"), ZipaiOptions(xing_mode="xia")) == k("x10")
    assert xing_card(k("d10")) == k("d1")
    assert neighbours(k("x10")) == (k("x9"), k("x10"), k("x1"))
    assert neighbours(k("d1")) == (k("d10"), k("d1"), k("d2"))
    # Flip x10 with x1 x1 d1 held: 上醒 x1 → 2.  x9 x10 x1 held 2 → stop.
    f = flip(ks("x1 x1 d1 d5"), ks("x10 d4"))
    assert (f.flipped, f.xing) == ((k("x10"),), 2)
    # Flip d10: 上醒 d1 → 1 (the x1 do not count).
    assert flip(ks("x1 x1 d1 d5"), ks("d10 d4")).xing == 1
    # 真三醒 across the wrap: flip x10 with three x1 held → flip again.
    f = flip(ks("x1 x1 x1 d5"), ks("x10 d7 d8"))
    assert (f.flipped, f.xing) == ((k("x10"), k("d7")), 3)


def test_flip_input_checks():
    with pytest.raises(BadCards):
        flip(ks("x1 x1 x1"), ks("x1 x1"))  # five x1 among holding and stock
    with pytest.raises(BadCards):
        flip(ks("x1 x2"), [], k("x3"))  # the winning card is in the holding
    with pytest.raises(BadCards):
        flip([25], [])


# ----------------------------------------------------------------- settlement (§7)

# hu_claim(13) holds x4 x5 x6 d4 d5 d6, d1×3, d2×3, d7×3, x1×3, x7 x8 x9.
# Flip x3: 上醒 x4 held 1; x2 x3 x4 held 0 + 0 + 1 → one flip, 中醒 1.
STOCK_1_XING = "x3 d8"


def test_formula_zimo():
    # Seed: 积分 = (子 + 中醒数) × 番数 × 2.  13 胡 → 2 子, 中醒 1, 自摸 2番:
    # share (2 + 1) × 2 = 6, each other seat pays 6, the winner gets 12.
    s = settle(end("zimo", hu_claim(13), stock=STOCK_1_XING))
    assert s.xing == {1: 1} and s.flipped == (k("x3"),)
    assert s.patterns == {1: ("zimo",)}
    assert pairwise(s) == {(0, 1): 6, (2, 1): 6}
    assert net(s)[1] == (2 + 1) * 2 * 2
    assert share(2, 1, 1) == 6


def test_pinghu_each_pays_one_share():
    # 平胡 has no bonus: share 2 + 1 = 3 from each; the drawer pays no more.
    s = settle(end("pinghu", hu_claim(13), frm=2, stock=STOCK_1_XING))
    assert net(s) == [-3, 6, -3] and s.patterns == {1: ("pinghu",)}


def test_fangpao_discarder_pays_both_shares():
    # 放炮者出两家分数: seat 2 pays 2 × 3, seat 0 nothing.
    s = settle(end("fangpao", hu_claim(13), frm=2, stock=STOCK_1_XING))
    assert pairwise(s) == {(2, 1): 6}
    assert net(s) == [0, 6, -6]
    assert s.patterns == {1: ("fangpao",)}


def test_dihu_double_and_discarder_pays_both():
    # 地胡: the dealer's first discard; 2番, and the dealer pays both shares:
    # 2 × (2 + 1) × 2 = 12.
    c = hu_claim(13, flags=("dihu",))
    s = settle(end("fangpao", c, dealer=0, frm=0, stock=STOCK_1_XING))
    assert pairwise(s) == {(0, 1): 12}
    assert set(s.patterns[1]) == {"fangpao", "dihu"}
    # zi mode: share 2 + 1 + 1 = 4, the dealer pays 8.
    s = settle(end("fangpao", c, dealer=0, frm=0, stock=STOCK_1_XING),
               ZipaiOptions(bonus_mode="zi"))
    assert pairwise(s) == {(0, 1): 8}


def test_dihu_checks():
    c = hu_claim(13, flags=("dihu",))
    with pytest.raises(BadCards):  # not the dealer's discard
        evaluate(c, "fangpao", 0, 2)
    with pytest.raises(BadCards):  # not a discard
        evaluate(c, "pinghu", 0, 0)
    with pytest.raises(BadCards):  # the dealer himself
        evaluate(hu_claim(13, seat=0, flags=("dihu",)), "fangpao", 0, 1)


def test_zi_mode():
    # zi mode: share = 子 + k + 中醒 = 2 + 1 + 1 = 4 for a 自摸; 3 for 平胡.
    zi = ZipaiOptions(bonus_mode="zi")
    s = settle(end("zimo", hu_claim(13), stock=STOCK_1_XING), zi)
    assert net(s) == [-4, 8, -4]
    s = settle(end("pinghu", hu_claim(13), frm=0, stock=STOCK_1_XING), zi)
    assert net(s) == [-3, 6, -3]


def test_haidi_in_settlement():
    # Empty stock: the winning card x6 is the flipped card; 上醒 x7 held 1
    # (the chi x7 x8 x9).  fangpao: 2 × (2 + 1).
    s = settle(end("fangpao", hu_claim(13), frm=0))
    assert s.flipped == (k("x6"),) and s.xing == {1: 1}
    assert net(s) == [-6, 6, 0]


def test_settle_input_checks():
    c = hu_claim(13)
    with pytest.raises(BadCards):  # two winners
        settle(HandEnd(dealer=0, how="fangpao", from_seat=2, winners=(c, hu_claim(13, 0)),
                       n_players=3))
    with pytest.raises(BadCards):  # no winner
        settle(HandEnd(dealer=0, how="zimo", from_seat=None, winners=(), n_players=3))
    with pytest.raises(BadCards):  # 4 seats
        settle(HandEnd(dealer=0, how="zimo", from_seat=None, winners=(c,)))
    with pytest.raises(BadCards):  # the discarder is the winner
        settle(end("fangpao", c, frm=1))
    with pytest.raises(BadCards):  # fifth x3 with the stock
        settle(end("zimo", c, stock="x3 x3 x3 x3 x3"))
    with pytest.raises(BadCards):
        settle(end("dianpao", c, frm=2))


@pytest.mark.parametrize("bad", [
    # a fifth d1 (the 扫 d1 and two in the hand + one more via the meld menu)
    lambda: claim(1, "x4 x5 d1 d1 d6", "x6", [MENU[n][0] for n in COMBOS[10]]),
    # 20 cards: one short
    lambda: claim(1, "x4 x5 d4 d5", "x6", [MENU[n][0] for n in COMBOS[10]]),
    # 22 cards with no four-card meld
    lambda: claim(1, HAND + " d8", "x6", [MENU[n][0] for n in COMBOS[10]]),
    # four identical in the concealed hand
    lambda: claim(1, "x4 x4 x4 x4 x5", "x6", [MENU[n][0] for n in COMBOS[10]]),
    # malformed melds
    lambda: claim(1, HAND, TILE, [meld("chi", "x1 x2 x4", 0), *[MENU[n][0] for n in COMBOS[10]][1:]]),
    lambda: claim(1, HAND, TILE, [meld("peng", "x1 x1 d1", 0), *[MENU[n][0] for n in COMBOS[10]][1:]]),
    lambda: claim(1, HAND, TILE, [meld("chi", "x3 x3 x3", 0), *[MENU[n][0] for n in COMBOS[10]][1:]]),
    lambda: claim(1, HAND, TILE, [meld("gang", "x3 x3 x3 x3"), *[MENU[n][0] for n in COMBOS[10]][1:]]),
    # unknown flag
    lambda: hu_claim(10, flags=("gangshanghua",)),
])
def test_win_input_checks(bad):
    with pytest.raises(BadCards):
        evaluate(bad(), "pinghu", 0, 2)


def test_how_and_from_checks():
    c = hu_claim(13)
    for how, frm in (("zimo", 2), ("pinghu", None), ("pinghu", 1), ("fangpao", 5), ("hu", 2)):
        with pytest.raises(BadCards):
            evaluate(c, how, 0, frm)
    with pytest.raises(BadCards):  # a win on another's card needs the card
        evaluate(claim(1, HAND, None, [MENU[n][0] for n in COMBOS[10]]), "pinghu", 0, 2)


# ----------------------------------------------------------------- property: sums to zero

WINNING = [h for h in COMBOS if h >= 10]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hu=st.sampled_from(WINNING),
    seat=st.integers(0, 2),
    dealer=st.integers(0, 2),
    how=st.sampled_from(["zimo", "pinghu", "fangpao"]),
    off=st.integers(1, 2),
    scale=st.sampled_from(["10/3", "10/5", "15/3", "15/5"]),
    bonus=st.sampled_from(["fan", "zi"]),
    mode=st.sampled_from(["shang", "ben", "xia"]),
    max_flips=st.one_of(st.none(), st.integers(0, 3)),
    dihu=st.booleans(),
    data=st.data(),
)
def test_settle_sums_to_zero(hu, seat, dealer, how, off, scale, bonus, mode, max_flips, dihu,
                             data):
    opts = ZipaiOptions(hu_scale=scale, bonus_mode=bonus, xing_mode=mode, max_flips=max_flips)
    frm = None if how == "zimo" else (seat + off) % 3
    flags = ()
    if dihu and how == "fangpao" and seat != dealer:
        frm, flags = dealer, ("dihu",)
    c = hu_claim(hu, seat, flags)
    # The stock: any order of any of the cards the winner does not hold.
    left = [kind for kind in range(20) for _ in range(4 - holding(c).count(kind))]
    # (empty: 海底胡, the winning card is flipped).
    size = data.draw(st.integers(0, 19))
    stock = data.draw(st.permutations(left).map(lambda p: p[:size]))
    hend = HandEnd(dealer=dealer, how=how, from_seat=frm, winners=(c,), stock=tuple(stock),
                   n_players=3)
    if hu < threshold(opts):
        with pytest.raises(BadCards):
            settle(hend, opts)
        return
    s = settle(hend, opts)
    n = net(s)
    assert sum(n) == 0
    f = flip(holding(c), stock, c.tile, opts)
    assert s.xing == {seat: f.xing} and s.flipped == f.flipped
    k_bonus = 1 if how == "zimo" or flags else 0
    zi = hu_to_zi(hu, opts)
    one = (zi + f.xing) * 2**k_bonus if bonus == "fan" else zi + k_bonus + f.xing
    assert n[seat] == 2 * one > 0
    for p in range(3):
        if p == seat:
            continue
        if how == "fangpao":
            assert n[p] == (-2 * one if p == frm else 0)
        else:
            assert n[p] == -one


# ----------------------------------------------------------------- why


def test_why_of_dihu_fangpao_is_the_computation():
    # 地胡 on the dealer's discard, 13 胡 (6 + 3 + 3 + 1 + 0 from the melds, the
    # hand's two runs 0) → 2 子 (10/3: 13–15 → 2), 中醒 1 (flip x3: 上醒 x4 held
    # once), 2番 for 地胡; the dealer pays both shares: 2 × (2 + 1) × 2 = 12.
    from qipai.core.model import Term, format_why, why_total

    c = hu_claim(13, flags=("dihu",))
    s = settle(end("fangpao", c, dealer=0, frm=0, stock=STOCK_1_XING))
    (p,) = s.payments
    assert (p.payer, p.payee, p.amount, why_total(p.why)) == (0, 1, 12, 12)
    fangpao, share_ = p.why
    assert fangpao == Term("liability", "fangpao", 2, rule="§7")
    assert share_.op == "*" and share_.value == 6
    bracket_, dihu = share_.of
    assert dihu == Term("bonus", "dihu", 2, "*", rule="§4")
    zi, xing = bracket_.of
    assert (zi.kind, zi.value) == ("zi", 2)
    (hu,) = zi.basis
    assert (hu.kind, hu.value) == ("hu", 13)
    groups = sorted((g.id, g.value) for g in hu.of)
    assert groups == sorted([("bi", 0), ("bi", 0), ("sao", 6), ("peng", 3), ("peng", 3),
                             ("peng", 1), ("chi", 0)])
    assert xing == Term("xing", "xing", 1, rule="§6",
                        of=(Term("flip", "xing", 1, cards=(k("x3"),), rule="§6"),))
    text = format_why(p.why, {"fangpao": "放炮", "dihu": "地胡"})
    assert text.startswith("放炮 fangpao 2 × ((zi 2 [hushu 13 (") and text.endswith(
        "+ xing 1 (1)) × 地胡 dihu 2)")


def test_why_of_zi_mode_adds_one_zi_per_bonus():
    # bonus_mode zi: share = 子 + k + 中醒 = 2 + 1 + 1 = 4 for 13 胡 自摸 with 中醒 1.
    from qipai.core.model import why_total

    s = settle(end("zimo", hu_claim(13), stock=STOCK_1_XING), ZipaiOptions(bonus_mode="zi"))
    for p in s.payments:
        assert p.amount == 4 == why_total(p.why)
        assert [(t.kind, t.id, t.value, t.op) for t in p.why] == [
            ("zi", "zi", 2, "+"), ("bonus", "zimo", 1, "+"), ("xing", "xing", 1, "+")]
