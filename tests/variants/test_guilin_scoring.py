"""桂林麻将 scoring: options, win check, 翻醒, settlement and 互包.

Expectations are computed by hand from the source (《桂林麻將遊戲規則》: 牌型得分表,
翻倍, 互包 cases 1–5, 翻醒) and docs/variants/guilin-mahjong.md.
"""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qipai.core.errors import BadCards
from qipai.core.model import HandEnd, Meld, WinClaim, net_of
from qipai.families.mahjong.tiles import TILES
from qipai.variants.guilin_mahjong.options import GuilinOptions
from qipai.variants.guilin_mahjong.patterns import (
    evaluate,
    is_win_shape,
    lanpai,
    waits,
    win_eval,
)
from qipai.variants.guilin_mahjong.scoring import flip, normal_amounts, settle, xing_neighbours

# ----------------------------------------------------------------- helpers


def k(text: str) -> int:
    (kind,) = TILES.parse(text)
    return kind


def ks(text: str) -> list[int]:
    return TILES.parse(text)


def counts_of(text: str) -> list[int]:
    c = [0] * 34
    for t in ks(text):
        c[t] += 1
    return c


def meld(kind: str, tiles: str, frm: int | None = None) -> Meld:
    cards = tuple(ks(tiles))
    claimed = cards[0] if frm is not None else None
    return Meld(kind=kind, cards=cards, from_seat=frm, claimed=claimed)


def claim(seat: int, hand: str, tile: str, melds=(), flags=()) -> WinClaim:
    return WinClaim(seat=seat, hand=tuple(ks(hand)), melds=tuple(melds), tile=k(tile),
                    flags=tuple(flags))


def end(how: str, winners, dealer: int = 0, frm: int | None = None, stock: str = "",
        hubao=()) -> HandEnd:
    return HandEnd(dealer=dealer, how=how, from_seat=frm, winners=tuple(winners),
                   stock=tuple(ks(stock)), relations={"hubao": [list(p) for p in hubao]})


def net(s) -> list[int]:
    return net_of(s.payments, 4)


def pairwise(s) -> dict[tuple[int, int], int]:
    return {(p.payer, p.payee): p.amount for p in s.payments}


LITERAL = GuilinOptions(hubao_dealin="literal")

# Hands used across the tests (hand before the winning tile, tile, melds).
# 平胡, not 门清 (a chi of 345p from the previous seat): 123m 456m 789s 55s + chi.
PINGHU = ("123m456m789s5s", "5s", (meld("chi", "345p", 3),))
# 烂牌: 147m 258p 369s + E S W N C (5 honors).
LANPAI = ("147m258p369sESWN", "C", ())
# 七星烂: 147m 25p 36s + all seven honors.
QIXING = ("147m25p36sESWNCF", "P", ())
# 清一色 with a chi (no 门清): 11 234 456 789m + chi 123m.
QINGYISE = ("2344567891m", "1m", (meld("chi", "123m", 3),))
# 碰碰胡 with a peng of E: 111m 999p 555s 77s.
PENGPENGHU = ("111m999p555s7s", "7s", (meld("peng", "EEE", 2),))
# 字一色 any shape: peng E + SS WW NN CC FF P (not a standard shape).
ZIYISE = ("SSWWNNCCFF", "P", (meld("peng", "EEE", 2),))
# 全求人: four melds, the single 5s paired.
QUANQIUREN = ("5s", "5s", (meld("chi", "123m", 3), meld("chi", "456p", 3),
                           meld("peng", "777s", 2), meld("chi", "789m", 3)))
# 七对: 11 33m 22 44p 66s EE CC.
QIDUI = ("1133m2244p66sEEC", "C", ())
# 豪华七对: 1111m 33 44p 66s EE CC.
HAOHUA = ("1111m3344p66sEEC", "C", ())


def one(seat: int, spec, flags=()) -> WinClaim:
    hand, tile, melds = spec
    return claim(seat, hand, tile, melds, flags)


# ----------------------------------------------------------------- options


def test_options_defaults_follow_section_7():
    o = GuilinOptions()
    assert (o.hubao, o.hubao_dealin, o.max_flips, o.reflip_at) == (True, "partner_double", 2, 4)
    assert (o.zhuipai, o.zhuipai_amount, o.dealer_rotation, o.reserve_tiles) == (
        "first_round", 1, "winner", 0)
    assert msgspec.convert({"hubao_dealin": "literal"}, GuilinOptions).hubao_dealin == "literal"


@pytest.mark.parametrize("bad", [
    {"hubao_dealin": "both"},
    {"zhuipai": "never"},
    {"dealer_rotation": "random"},
    {"max_flips": -1},
    {"reflip_at": 0},
    {"no_such_option": 1},
    {"hubao": "yes"},
])
def test_options_reject_bad_values(bad):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(bad, GuilinOptions)


# ----------------------------------------------------------------- shapes


def test_lanpai_counts_honors():
    assert lanpai(counts_of("147m258p369sESWNC")) == 5
    assert lanpai(counts_of("149m258p369sESWNC")) == 5  # 1 and 9 go together (149)
    assert lanpai(counts_of("147m25p36sESWNCFP")) == 7
    assert lanpai(counts_of("147m25p369sESWNCF")) == 6


@pytest.mark.parametrize("hand", [
    "147m258p359sESWNC",  # 3s and 5s only 2 apart
    "147m258p369sESWNN",  # a pair
    "1478m25p36sESWNC",  # four in a suit
    "147m258p369sESWN",  # 13 tiles
])
def test_not_lanpai(hand):
    assert lanpai(counts_of(hand)) is None


def test_is_win_shape():
    assert is_win_shape(counts_of("123m456m789s55s345p"))
    assert is_win_shape(counts_of("11223344556677m"))  # 七对 (and standard)
    assert is_win_shape(counts_of("1133m2244p66sEECC"))  # 七对 only
    assert is_win_shape(counts_of("147m258p369sESWNC"))  # 烂牌
    assert is_win_shape(counts_of("EEESSWWNNCCFFP"))  # 字一色, any shape
    assert is_win_shape(counts_of("SSWWNNCCFFP"), [meld("peng", "EEE", 2)])
    assert not is_win_shape(counts_of("EEESSWWNNCCFF9m"))  # one suited tile


def test_waits_include_special_shapes():
    assert waits(ks("147m258p369sESWN")) == ks("CFP")  # 烂牌 with a fifth honor
    assert waits(ks("1133m2244p66sEEC")) == ks("C")  # 七对
    # 字一色 any shape: every honor kind not used up.
    assert waits(ks("SSWWNNCCFF"), [meld("peng", "EEE", 2)]) == ks("ESWNCFP")
    # a kind whose four copies are held is not a wait
    assert waits(ks("SSWWNNCCFF"), [meld("jiagang", "EEEE", 2)]) == ks("SWNCFP")


def test_fifth_copy_is_rejected():
    with pytest.raises(BadCards, match="5 copies of 1m"):
        evaluate(claim(0, "1111m234p567p999s", "1m"), "zimo", 0, None)
    with pytest.raises(BadCards, match="5 copies of E"):
        evaluate(claim(0, "E234p567p999s", "9s", [meld("jiagang", "EEEE", 1)]), "zimo", 0, None)


def test_bad_inputs_are_rejected():
    with pytest.raises(BadCards, match="14 tiles"):
        evaluate(claim(0, "123m456m789s", "5s"), "zimo", 0, None)
    with pytest.raises(BadCards, match="chi"):
        evaluate(claim(0, "123m456m789s5s", "5s", [meld("chi", "135p", 3)]), "zimo", 0, None)
    with pytest.raises(BadCards, match="how"):
        evaluate(one(0, PINGHU), "ron", 0, 1)
    with pytest.raises(BadCards, match="from_seat"):
        evaluate(one(0, PINGHU), "dianpao", 0, None)
    with pytest.raises(BadCards, match="gangshanghua"):
        evaluate(one(0, PINGHU, ["gangshanghua"]), "zimo", 0, None)  # no kong
    with pytest.raises(BadCards, match="unknown flag"):
        evaluate(one(0, PINGHU, ["lucky"]), "zimo", 0, None)


def test_not_a_win():
    assert evaluate(claim(0, "123m456m789s5s", "6s", [meld("chi", "345p", 3)]),
                    "zimo", 0, None) is None
    assert not win_eval(claim(0, "123m456m789s5s", "6s", [meld("chi", "345p", 3)]),
                        "zimo", 0, None).wins
    with pytest.raises(BadCards, match="does not win"):
        settle(end("zimo", [claim(0, "123m456m789s5s", "6s", [meld("chi", "345p", 3)])]))


# ----------------------------------------------------------------- 牌型得分表


@pytest.mark.parametrize("spec, pattern, dealer_zimo, dealer_dp, other_zimo, other_dp", [
    # cells of the source's 牌型得分表: 庄家自摸 (each), 庄家点炮, 闲家自摸
    # (from each non-dealer, from the dealer), 闲家点炮 (discarder not the dealer).
    (PINGHU, "pinghu", 4, 7, (2, 4), 5),
    (LANPAI, "lanpai", 5, 10, (3, 5), 8),
    (QINGYISE, "qingyise", 15, 35, (15, 15), 35),
    (ZIYISE, "ziyise", 15, 35, (15, 15), 35),
    (PENGPENGHU, "pengpenghu", 15, 35, (15, 15), 35),
    (QUANQIUREN, "quanqiuren", 15, 35, (15, 15), 35),
    (QIXING, "qixing_lanpai", 15, 35, (15, 15), 35),
    (QIDUI, "qidui", 15, 35, (15, 15), 35),
    (HAOHUA, "haohua_qidui", 30, 70, (30, 30), 70),
])
def test_score_table(spec, pattern, dealer_zimo, dealer_dp, other_zimo, other_dp):
    # dealer (seat 0) wins by zimo: each pays the same
    s = settle(end("zimo", [one(0, spec)], dealer=0))
    assert s.patterns == {0: (pattern,)}
    assert net(s) == [3 * dealer_zimo, -dealer_zimo, -dealer_zimo, -dealer_zimo]
    # dealer wins on seat 2's discard
    s = settle(end("dianpao", [one(0, spec)], dealer=0, frm=2))
    assert net(s) == [dealer_dp, 0, -dealer_dp, 0]
    # non-dealer seat 1 wins by zimo: non-dealers pay the first figure, the dealer the second
    plain, from_dealer = other_zimo
    s = settle(end("zimo", [one(1, spec)], dealer=0))
    assert net(s) == [-from_dealer, 2 * plain + from_dealer, -plain, -plain]
    assert sum(-x for x in net(s) if x < 0) == {"pinghu": 8, "lanpai": 11}.get(
        pattern, 3 * plain)
    # non-dealer seat 1 wins on non-dealer seat 3's discard
    s = settle(end("dianpao", [one(1, spec)], dealer=0, frm=3))
    assert net(s) == [0, other_dp, 0, -other_dp]
    assert s.payments[0].reason == "hu"


@pytest.mark.parametrize("spec, amount", [(PINGHU, 7), (LANPAI, 10), (QIDUI, 35)])
def test_dealer_bonus_when_the_discarder_is_dealer(spec, amount):
    # 若两方任一家是庄, 则多给2子 — only 平胡 and 烂牌 carry the bonus
    s = settle(end("dianpao", [one(1, spec)], dealer=3, frm=3))
    assert net(s) == [0, amount, 0, -amount]


# ----------------------------------------------------------------- 叠加 and D-M4


def test_seed_example_qingyise_qidui_gangshangpao_140():
    s = settle(end("dianpao", [claim(1, "1122335577994m", "4m", flags=["gangshangpao"])],
                   dealer=0, frm=2))
    assert net(s) == [0, 140, -140, 0]
    assert set(s.patterns[1]) == {"qingyise", "qidui", "gangshangpao"}
    assert s.xing == {1: 0} and s.flipped == ()


def test_stacking_qingyise_qidui_by_zimo_is_30_each():
    s = settle(end("zimo", [claim(1, "1122335577994m", "4m")], dealer=0))
    assert net(s) == [-30, 90, -30, -30]


def test_stacking_qingyise_haohua_qidui_105():
    ev = evaluate(claim(1, "1111223355779m", "9m"), "dianpao", 0, 2)
    assert set(ev.patterns) == {"qingyise", "haohua_qidui"}
    assert ev.amount_from(2) == 105


def test_d_m4_tie_prefers_seven_pairs():
    # 11223344556677m: 清一色 + 七对 (70), not 清一色 × 门清 (35 × 2).
    ev = evaluate(claim(1, "1122334455667m", "7m"), "dianpao", 0, 2)
    assert set(ev.patterns) == {"qingyise", "qidui"}
    assert ev.amount_from(2) == 70 and ev.multiplier == 1


def test_d_m4_seven_pairs_beat_pinghu_menqing():
    ev = evaluate(claim(1, "112233m445566p7s", "7s"), "dianpao", 0, 2)
    assert ev.patterns == ("qidui",)


def test_d_m4_pengpenghu_reading_wins():
    # 111222333m + 789p + 55s: three runs 123m or three triplets — 碰碰胡 is not
    # possible (789p is a run), so 平胡 × 门清; with 999p instead it is 碰碰胡 × 门清.
    assert evaluate(claim(1, "111222333m789p5s", "5s"), "dianpao", 0, 2).patterns == (
        "pinghu", "menqing")
    ev = evaluate(claim(1, "111222333m999p5s", "5s"), "dianpao", 0, 2)
    assert ev.patterns == ("pengpenghu", "menqing") and ev.amount_from(2) == 70


def test_ziyise_stacks_with_pengpenghu_and_qidui():
    ev = evaluate(claim(1, "EEESSSWWWNNNC", "C"), "dianpao", 0, 2)
    assert ev.patterns == ("pengpenghu", "ziyise", "menqing") and ev.amount_from(2) == 140
    ev = evaluate(claim(1, "EESSWWNNCCFFP", "P"), "dianpao", 0, 2)
    assert ev.patterns == ("qidui", "ziyise") and ev.amount_from(2) == 70
    # any shape, concealed: 字一色 × 门清
    ev = evaluate(claim(1, "EEESSWWNNCCFF", "P"), "dianpao", 0, 2)
    assert ev.patterns == ("ziyise", "menqing") and ev.amount_from(2) == 70


def test_quanqiuren_with_pengs_is_also_pengpenghu():
    melds = [meld("peng", "111m", 3), meld("peng", "999p", 2),
             meld("angang", "EEEE"), meld("minggang", "5555s", 2)]
    ev = evaluate(claim(1, "C", "C", melds), "zimo", 0, None)
    assert ev.patterns == ("pengpenghu", "quanqiuren")  # D-GL1: kongs count
    assert ev.base == {0: 30, 2: 30, 3: 30}


# ----------------------------------------------------------------- multipliers


def test_menqing_pinghu_zimo_8_each():
    s = settle(end("zimo", [claim(0, "123456m789p2355s", "4s")], dealer=0, stock="N N 3p"))
    assert s.patterns == {0: ("pinghu", "menqing")}
    assert s.xing == {0: 0} and s.flipped == (k("N"),)
    assert net(s) == [24, -8, -8, -8]


def test_qianggang_and_menqing_multiply():
    # D-GL3 ×2×2; D-GL4 the kong maker pays as the discarder (dealer → 7)
    s = settle(end("qianggang", [claim(1, "123456m789p2355s", "4s")], dealer=0, frm=2))
    assert set(s.patterns[1]) == {"pinghu", "menqing", "qianggang"}
    assert net(s) == [0, 20, -20, 0]
    s = settle(end("qianggang", [claim(1, "123456m789p2355s", "4s")], dealer=0, frm=0))
    assert net(s) == [-28, 28, 0, 0]


def test_gangshanghua_after_angang_has_no_menqing():
    # D-GL2: 暗杠 breaks 门清
    c = claim(1, "123456m2355s", "4s", [meld("angang", "9999p")], ["gangshanghua"])
    s = settle(end("zimo", [c], dealer=0))
    assert s.patterns == {1: ("pinghu", "gangshanghua")}
    assert net(s) == [-8, 16, -4, -4]


def test_tianhu_dihu_switch_menqing_off():
    s = settle(end("zimo", [claim(0, "123456m789p2355s", "4s", flags=["tianhu"])], dealer=0))
    assert s.patterns == {0: ("pinghu", "tianhu")}
    assert net(s) == [12, -4, -4, -4]
    s = settle(end("zimo", [claim(2, "123456m789p2355s", "4s", flags=["dihu"])], dealer=0))
    assert s.patterns == {2: ("pinghu", "dihu")}
    assert net(s) == [-4, -2, 8, -2]


def test_no_menqing_for_lanpai_and_qidui():
    assert evaluate(one(1, LANPAI), "dianpao", 0, 2).patterns == ("lanpai",)
    assert evaluate(one(1, QIDUI), "dianpao", 0, 2).patterns == ("qidui",)
    assert evaluate(one(1, HAOHUA), "dianpao", 0, 2).patterns == ("haohua_qidui",)
    assert evaluate(one(1, QIXING), "dianpao", 0, 2).patterns == ("qixing_lanpai",)


# ----------------------------------------------------------------- 翻醒


def test_xing_neighbours():
    assert set(xing_neighbours(k("3m"))) == set(ks("2m4m2p4p2s4s"))  # suit ignored
    assert set(xing_neighbours(k("9s"))) == set(ks("8m1m8p1p8s1s"))  # 9 ↔ 1
    assert set(xing_neighbours(k("1p"))) == set(ks("9m2m9p2p9s2s"))
    assert set(xing_neighbours(k("P"))) == set(ks("EF"))  # 白–东
    assert set(xing_neighbours(k("E"))) == set(ks("SP"))
    assert set(xing_neighbours(k("N"))) == set(ks("WC"))


def test_flip_counts_neighbours_not_the_flipped_kind():
    f = flip(ks("333m2m4p2s9s"), ks("3m 5m"))
    assert f.flipped == (k("3m"),) and f.xing == 3  # 2m 4p 2s; 3 < 4: no re-flip
    f = flip(ks("333m2m4p22s9s"), ks("3m 5m"))  # 4 → flip 5m: 4p
    assert f.flipped == tuple(ks("3m 5m")) and f.xing == 5


def test_flip_again_at_four_and_at_most_twice():
    hand = ks("2m2p4s4s 5m5m5m5m 6p")
    f = flip(hand, ks("3s 4p 1m"))  # 3s: 2m 2p 4s 4s = 4 → flip 4p: 5m×4 = 4 → stop at 2
    assert f.flipped == (k("3s"), k("4p")) and f.xing == 8
    f = flip(hand, ks("3s 9m"))  # second flip 9m: none
    assert f.flipped == tuple(ks("3s 9m")) and f.xing == 4
    f = flip(hand, ks("3s"))  # nothing left for the second flip
    assert f.flipped == (k("3s"),) and f.xing == 4
    f = flip(hand, [])  # D-GL8
    assert f.flipped == () and f.xing == 0
    f = flip(hand, ks("3s 4p 1m"), GuilinOptions(max_flips=3))
    assert f.flipped == tuple(ks("3s 4p 1m")) and f.xing == 10
    f = flip(hand, ks("3s 4p"), GuilinOptions(reflip_at=5))
    assert f.flipped == (k("3s"),)


def test_flip_counts_meld_tiles_kong_four():
    c = claim(1, "123m456m2355s", "4s", [meld("minggang", "EEEE", 3)])
    s = settle(end("dianpao", [c], dealer=0, frm=3, stock="P S"))
    # flip P: neighbours E (4, the kong) and F: 4 → flip S: E and W: 4 more = 8
    assert s.flipped == tuple(ks("P S")) and s.xing == {1: 8}
    assert net(s) == [0, 13, 0, -13]  # 平胡 5 + 8 醒


def test_xing_paid_by_each_payer_on_zimo():
    # dealer 平胡 自摸, not 门清: (4 + 醒) from each
    s = settle(end("zimo", [one(0, PINGHU)], dealer=0, stock="5p"))
    # flip 5p: 4s/6s/4p/6p/4m/6m in 123m 456m 789s 55s + 345p: 4m 6m 4p → 3
    assert s.xing == {0: 3}
    assert net(s) == [21, -7, -7, -7]


def test_several_winners_share_the_flips():
    # D-GL7: both flip stock[0]; only the one reaching 4 flips stock[1]
    a = claim(1, "1133m2244p66sEEC", "C")  # 七对, holds 22 44p
    b = claim(2, "123m456m789sC", "C", [meld("chi", "345p", 1)])
    s = settle(end("dianpao", [a, b], dealer=0, frm=3, stock="3p 7m 8m"))
    # flip 3p: neighbours 2x 4x — a: 22p 44p = 4 → flips 7m: 66s = 2; b: 2m 4m 4p = 3
    assert s.flipped == tuple(ks("3p 7m"))
    assert s.xing == {1: 6, 2: 3}
    assert pairwise(s) == {(3, 1): 41, (3, 2): 8}


# ----------------------------------------------------------------- 互包


def test_hubao_case_2_seed_24():
    c = claim(0, "123m456m789s5s", "5s", [meld("chi", "345p", 3)])
    s = settle(end("zimo", [c], dealer=0, hubao=[[0, 1]]))
    assert net(s) == [24, -24, 0, 0]
    assert s.payments[0].reason == "hubao"
    # 互包 off: the pair is ignored
    s = settle(end("zimo", [c], dealer=0, hubao=[[0, 1]]), GuilinOptions(hubao=False))
    assert net(s) == [12, -4, -4, -4]


def test_hubao_case_2_non_dealer_with_xing():
    # B pays (2 + 4 + 2 + 3 醒 × 3) × 2 = 34 for a non-dealer 平胡 自摸 with 3 醒
    s = settle(end("zimo", [one(1, PINGHU)], dealer=0, stock="5p", hubao=[[1, 3]]))
    assert s.xing == {1: 3}
    assert net(s) == [0, 34, 0, -34]


def test_hubao_case_4_both_partners_pay_24():
    s = settle(end("zimo", [one(1, PINGHU)], dealer=1, hubao=[[0, 1], [1, 2]]))
    assert net(s) == [-24, 48, -24, 0]


def test_hubao_case_1_partner_pays_as_much():
    s = settle(end("dianpao", [one(1, PINGHU)], dealer=0, frm=3, hubao=[[1, 2]]))
    assert pairwise(s) == {(3, 1): 5, (2, 1): 5}
    # the discarder is himself the winner's partner: he pays double (case 3),
    # the other partner the normal amount (case 1)
    s = settle(end("dianpao", [one(1, PINGHU)], dealer=0, frm=3, hubao=[[1, 2], [1, 3]]))
    assert pairwise(s) == {(3, 1): 10, (2, 1): 5}


def test_hubao_case_3_default_reading():
    # A = 1 deals in to his partner B = 2: A pays twice
    s = settle(end("dianpao", [one(2, PINGHU)], dealer=0, frm=1, hubao=[[1, 2]]))
    assert pairwise(s) == {(1, 2): 10}
    # A deals in to an outsider: 互包 changes nothing
    s = settle(end("dianpao", [one(3, PINGHU)], dealer=0, frm=1, hubao=[[1, 2]]))
    assert pairwise(s) == {(1, 3): 5}


def test_hubao_case_3_literal_reading():
    s = settle(end("dianpao", [one(3, PINGHU)], dealer=0, frm=1, hubao=[[1, 2]]), LITERAL)
    assert pairwise(s) == {(1, 3): 5, (2, 3): 10}
    s = settle(end("dianpao", [one(2, PINGHU)], dealer=0, frm=1, hubao=[[1, 2]]), LITERAL)
    assert pairwise(s) == {(1, 2): 10}


def test_hubao_case_5_different_amounts_35_5_35():
    a = claim(1, "1133m2244p66sEEC", "C")  # 七对 35
    b = claim(2, "123m456m789sC", "C", [meld("chi", "345p", 1)])  # 平胡 5
    s = settle(end("dianpao", [a, b], dealer=0, frm=3, hubao=[[1, 2]]))
    assert pairwise(s) == {(3, 1): 35, (3, 2): 5, (2, 1): 35}
    assert net(s) == [0, 70, -30, -40]
    assert s.patterns == {1: ("qidui",), 2: ("pinghu",)}


def test_hubao_case_5_equal_amounts_ignore_the_pair():
    a = claim(1, "234p567p789pC", "C", [meld("chi", "123s", 0)])
    b = claim(2, "123m456m789sC", "C", [meld("chi", "345p", 1)])
    s = settle(end("dianpao", [a, b], dealer=0, frm=3, hubao=[[1, 2]]))
    assert pairwise(s) == {(3, 1): 5, (3, 2): 5}


def test_hubao_case_5_discarder_partner_still_doubles():
    a = claim(1, "1133m2244p66sEEC", "C")
    b = claim(2, "123m456m789sC", "C", [meld("chi", "345p", 1)])
    s = settle(end("dianpao", [a, b], dealer=0, frm=3, hubao=[[1, 2], [2, 3]]))
    assert pairwise(s) == {(3, 1): 35, (3, 2): 10, (2, 1): 35}


def test_hubao_qianggang_kong_maker_is_the_discarder():
    # D-GL4 / D-M8: robbing partner 2's 蓄杠 — 5 × 门清 2 × 抢杠 2 = 20, doubled
    c = claim(1, "123456m789p2355s", "4s")
    s = settle(end("qianggang", [c], dealer=0, frm=2, hubao=[[1, 2]]))
    assert pairwise(s) == {(2, 1): 40}
    s = settle(end("qianggang", [c], dealer=0, frm=2, hubao=[[1, 3]]))
    assert pairwise(s) == {(2, 1): 20, (3, 1): 20}


def test_pairs_without_the_winner_change_nothing_on_zimo():
    s = settle(end("zimo", [one(1, PINGHU)], dealer=0, hubao=[[2, 3]]))
    assert net(s) == [-4, 8, -2, -2]


def test_settle_rejects_inconsistent_ends():
    with pytest.raises(BadCards, match="one winner"):
        settle(end("zimo", [one(1, PINGHU), one(2, PINGHU)], dealer=0))
    with pytest.raises(BadCards, match="same tile"):
        settle(end("dianpao", [one(1, PINGHU), one(2, QIDUI)], dealer=0, frm=3))
    with pytest.raises(BadCards, match="hubao"):
        settle(end("zimo", [one(1, PINGHU)], dealer=0, hubao=[[1, 1]]))
    with pytest.raises(BadCards, match="copies"):  # 5s ×2 in the hand, ×3 in the stock
        settle(end("zimo", [one(1, PINGHU)], dealer=0, stock="5s 5s 5s"))


# ----------------------------------------------------------------- property: zero sum

SEATS = range(4)
RUN_STARTS = [s * 9 + r for s in range(3) for r in range(7)]
GOOD_RANKS = [c for n in range(4) for c in itertools.combinations(range(9), n)
              if all(b - a >= 3 for a, b in zip(c, c[1:]))]


def _take(pool: list[int], tiles: list[int]) -> bool:
    for t in tiles:
        pool[t] -= 1
    if min(pool) < 0:
        for t in tiles:
            pool[t] += 1
        return False
    return True


@st.composite
def standard_hand(draw, pool, x):
    """A standard hand containing the winning tile x; some sets become melds."""
    forced = [("pair", [x, x])]
    forced.append(("kezi", [x, x, x]))
    if x < 27:
        forced += [("shunzi", [s, s + 1, s + 2]) for s in range(x - 2, x + 1)
                   if s in RUN_STARTS and s // 9 == x // 9]
    kind, group = draw(st.sampled_from(forced))
    rest = list(group)
    rest.remove(x)  # the winning tile is taken from the pool already
    if not _take(pool, rest):
        return None
    sets: list[tuple[str, list[int]]] = []
    if kind != "pair":
        sets.append((kind, group))
    pair = group if kind == "pair" else None
    while len(sets) < 4 or pair is None:
        opts = []
        if len(sets) < 4:
            opts += [("kezi", [t] * 3) for t in range(34) if pool[t] >= 3]
            opts += [("shunzi", [s, s + 1, s + 2]) for s in RUN_STARTS
                     if min(pool[s], pool[s + 1], pool[s + 2]) >= 1]
        if pair is None:
            opts += [("pair", [t, t]) for t in range(34) if pool[t] >= 2]
        if not opts:
            return None
        kind2, g = draw(st.sampled_from(opts))
        _take(pool, g)
        if kind2 == "pair":
            pair = g
        else:
            sets.append((kind2, g))
    concealed = list(pair)
    melds = []
    for i, (kind2, g) in enumerate(sets):
        if x in g and i == 0 and kind != "pair":
            concealed += g  # the group with the winning tile stays concealed
            continue
        if not draw(st.booleans()):
            concealed += g
        elif kind2 == "shunzi":
            melds.append(Meld("chi", tuple(g), from_seat=0, claimed=g[0]))
        else:
            mk = draw(st.sampled_from(["peng", "minggang", "jiagang", "angang"]))
            if mk != "peng" and _take(pool, [g[0]]):
                melds.append(Meld(mk, tuple([g[0]] * 4), from_seat=None if mk == "angang" else 0))
            else:
                melds.append(Meld("peng", tuple(g), from_seat=0, claimed=g[0]))
    concealed.remove(x)
    return concealed, melds


@st.composite
def qidui_hand(draw, pool, x):
    if not _take(pool, [x]):
        return None
    pairs = [x]
    while len(pairs) < 7:
        opts = [t for t in range(34) if pool[t] >= 2]
        if not opts:
            return None
        t = draw(st.sampled_from(opts))
        _take(pool, [t, t])
        pairs.append(t)
    hand = [t for t in pairs for _ in range(2)]
    hand.remove(x)
    return hand, []


@st.composite
def lanpai_hand(draw, pool, x):
    honors_needed = draw(st.integers(5, 7))
    sizes = draw(st.sampled_from(
        {5: [(3, 3, 3)], 6: [(3, 3, 2), (3, 2, 3), (2, 3, 3)],
         7: [(3, 3, 1), (3, 1, 3), (1, 3, 3), (3, 2, 2), (2, 3, 2), (2, 2, 3)]}[honors_needed]))
    tiles = []
    for suit, size in enumerate(sizes):
        opts = [c for c in GOOD_RANKS if len(c) == size
                and (x // 9 != suit or x >= 27 or x % 9 in c)
                and all(pool[suit * 9 + r] >= 1 or suit * 9 + r == x for r in c)]
        if not opts:
            return None
        tiles += [suit * 9 + r for r in draw(st.sampled_from(opts))]
    hopts = [c for c in itertools.combinations(range(27, 34), honors_needed)
             if (x < 27 or x in c) and all(pool[h] >= 1 or h == x for h in c)]
    if not hopts or (x not in tiles and x < 27):
        return None
    tiles += list(draw(st.sampled_from(hopts)))
    tiles.remove(x)
    if not _take(pool, tiles):
        return None
    return tiles, []


@st.composite
def winning_end(draw):
    pool = [4] * 34
    dealer = draw(st.sampled_from(SEATS))
    how = draw(st.sampled_from(["zimo", "dianpao", "qianggang"]))
    if how == "zimo":
        seats = [draw(st.sampled_from(SEATS))]
        frm = draw(st.sampled_from([None, seats[0]]))
    else:
        frm = draw(st.sampled_from(SEATS))
        others = [s for s in SEATS if s != frm]
        seats = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
    x = draw(st.integers(0, 33))
    pool[x] -= 1
    winners = []
    for seat in seats:
        shape = draw(st.sampled_from(["standard", "standard", "qidui", "lanpai"]))
        maker = {"standard": standard_hand, "qidui": qidui_hand, "lanpai": lanpai_hand}[shape]
        got = draw(maker(pool, x))
        if got is None:
            got = draw(standard_hand(pool, x))
        if got is None:
            continue
        hand, melds = got
        flags = []
        if how == "zimo" and any(m.kind in ("minggang", "jiagang", "angang") for m in melds):
            if draw(st.booleans()):
                flags.append("gangshanghua")
        if how == "dianpao" and draw(st.booleans()):
            flags.append("gangshangpao")
        if how == "zimo" and not melds and draw(st.booleans()):
            flags.append("tianhu" if seat == dealer else "dihu")
        winners.append(WinClaim(seat=seat, hand=tuple(hand), melds=tuple(melds), tile=x,
                                flags=tuple(flags)))
    if not winners:
        return None
    left = [t for t in range(34) for _ in range(pool[t])]
    stock = draw(st.lists(st.sampled_from(left), max_size=4)) if left else []
    stock = [t for t in stock if _take(pool, [t])]
    hubao = draw(st.lists(st.sampled_from(list(itertools.combinations(SEATS, 2))),
                          unique=True, max_size=4))
    options = GuilinOptions(
        hubao=draw(st.booleans()),
        hubao_dealin=draw(st.sampled_from(["partner_double", "literal"])),
        max_flips=draw(st.integers(0, 3)),
        reflip_at=draw(st.integers(1, 5)),
    )
    return HandEnd(dealer=dealer, how=how, from_seat=frm, winners=tuple(winners),
                   stock=tuple(stock), relations={"hubao": [list(p) for p in hubao]}), options


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(winning_end())
def test_settle_sums_to_zero(case):
    if case is None:
        return
    e, options = case
    s = settle(e, options)
    assert sum(net_of(s.payments, 4)) == 0
    assert all(p.amount > 0 and p.payer != p.payee for p in s.payments)
    assert len({(p.payer, p.payee) for p in s.payments}) == len(s.payments)
    winners = {w.seat for w in e.winners}
    assert set(s.patterns) == winners == set(s.xing)
    assert s.flipped == e.stock[: len(s.flipped)]
    amounts, _, _ = normal_amounts(e, options)
    net = net_of(s.payments, 4)
    if not options.hubao or not e.relations["hubao"]:
        # no 互包: every winner gets exactly his normal amounts
        for w in winners:
            assert net[w] == sum(amounts[w].values())
    # every winner ends up ahead, by at least his normal amounts unless he pays
    # a co-winner (互包 case 5 / literal case 3)
    for w in winners:
        assert net[w] > 0 or len(winners) > 1


# ----------------------------------------------------------------- why


def test_why_of_the_seed_example_140():
    # §3.2 seed: 清一色 + 七对 + 杠上炮 = (35 + 35) × 2 = 140; nothing to flip (D-GL8).
    from qipai.core.model import Term, format_why

    s = settle(end("dianpao", [claim(1, "1122335577994m", "4m", flags=["gangshangpao"])],
                   dealer=0, frm=2))
    (p,) = s.payments
    assert p.why == (
        Term("sum", "", 70, of=(Term("pattern", "qidui", 35, rule="§3.1"),
                                Term("pattern", "qingyise", 35, rule="§3.1"))),
        Term("multiplier", "gangshangpao", 2, "*", rule="§3.2"),
        Term("xing", "fanxing", 0, rule="§3.3"),
    )
    from qipai.variants.guilin_mahjong.plugin import NAMES

    assert format_why(p.why, NAMES) == (
        "(七对 qidui 35 + 清一色 qingyise 35) × 杠上炮 gangshangpao 2 + 翻醒 fanxing 0")


def test_why_of_hubao_case_2_names_the_rule_and_the_dealer_share():
    # §4.2 case 2: B (seat 3) pays (2 + 4 + 2 + 3 醒 × 3) × 2 = 34 for a
    # non-dealer 平胡 自摸; the dealer (seat 0) owes 2 + 2 (§3.1), flip 5p: 醒 3.
    from qipai.core.model import Term, why_total

    s = settle(end("zimo", [one(1, PINGHU)], dealer=0, stock="5p", hubao=[[1, 3]]))
    (p,) = s.payments
    assert (p.payer, p.payee, p.amount, p.reason) == (3, 1, 34, "hubao")
    hubao, three = p.why
    assert hubao == Term("liability", "hubao", 2, rule="§4.2 case 2")
    xing = Term("xing", "fanxing", 3, rule="§3.3",
                of=(Term("flip", "fanxing", 3, cards=(k("5p"),), rule="§3.3"),))
    pinghu = Term("pattern", "pinghu", 2, rule="§3.1")
    zhuang = Term("dealer", "zhuang", 2, rule="§3.1")
    assert [t.of for t in three.of] == [(pinghu, zhuang, xing), (pinghu, xing), (pinghu, xing)]
    assert [why_total(t.of) for t in three.of] == [7, 5, 5]


def test_why_of_kong_fees_and_zhuipai():
    # §2: 暗杠 2 from each other seat, 点杠 3 from the discarder.
    from qipai.core.model import Term
    from qipai.variants.guilin_mahjong.plugin import kong_payments

    pays = kong_payments(1, meld("angang", "7s7s7s7s"))
    assert [(p.payer, p.amount) for p in pays] == [(0, 2), (2, 2), (3, 2)]
    assert all(p.why == (Term("fee", "angang", 2, cards=(k("7s"),), rule="§2"),) for p in pays)
    (p,) = kong_payments(1, meld("minggang", "9m9m9m9m", 0))
    assert (p.payer, p.amount, p.why) == (0, 3, (Term("fee", "minggang", 3, cards=(k("9m"),),
                                                      rule="§2"),))


def test_hubao_literal_liability_cites_the_decision_that_applies():
    # guilin-mahjong.md §4.2 case 3: the literal reading is D-GL10's option;
    # D-GL14 is only the co-winner case (B himself won on the discard too).
    # A = seat 1 deals in to the outsider seat 3: B = seat 2 pays 2 × 5.
    s = settle(end("dianpao", [one(3, PINGHU)], dealer=0, frm=1, hubao=[[1, 2]]), LITERAL)
    (b,) = [p for p in s.payments if p.payer == 2]
    assert (b.payee, b.amount, b.why[0].id, b.why[0].value) == (3, 10, "hubao", 2)
    assert b.why[0].rule == "§4.2 case 3 (literal, D-GL10)"
    # hubao/case3-literal-partner-cowinner: seats 2 (B) and 3 both win on A's
    # 5s; B, a co-winner, still pays seat 3 twice the normal 5 (D-GL14).
    w2 = claim(2, "123m456m789s5s", "5s", [meld("chi", "345p", 1)])
    w3 = claim(3, "123p456p789m5s", "5s", [meld("chi", "678s", 2)])
    s = settle(end("dianpao", [w2, w3], dealer=0, frm=1, hubao=[[1, 2]]), LITERAL)
    (b,) = [p for p in s.payments if p.payer == 2]
    assert (b.payee, b.amount) == (3, 10)
    assert b.why[0].rule == "§4.2 case 3 (literal, D-GL10, D-GL14)"
