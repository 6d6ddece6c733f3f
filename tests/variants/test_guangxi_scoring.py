"""广西麻将 scoring: options, patterns and values, settlement, 封胡, 互包, kongs.

Every expectation is worked out by hand from 《广西麻将游戏》 and
docs/variants/guangxi-mahjong.md (D-GX numbers in the comments).  Values are
in 张 per paying seat: ``dianpao`` = what the discarder pays, ``zimo`` = what
each of the three others pays.  Seats: the dealer is 0 unless said otherwise.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qipai.core.errors import BadCards
from qipai.core.model import HandEnd, Meld, Payment, Term, WinClaim, WinEval, net_of
from qipai.families.mahjong.scoring_kit import as_wineval
from qipai.families.mahjong.tiles import TILES
from qipai.variants.guangxi_mahjong.options import DEFAULT_VALUES, GuangxiOptions
from qipai.variants.guangxi_mahjong.patterns import evaluate, is_shisanyao, is_win_shape, waits
from qipai.variants.guangxi_mahjong.scoring import (
    gangkai_payer,
    huangzhuang_refunds,
    kong_fees,
    settle,
)

# ----------------------------------------------------------------- building hands


def tiles(text: str) -> list[int]:
    return TILES.parse(text)


def tile(text: str) -> int:
    (kind,) = TILES.parse(text)
    return kind


def M(kind: str, text: str, frm: int | None = None) -> Meld:
    """A meld; a kong/peng may be written as one tile ("7s")."""
    cards = tiles(text)
    if len(cards) == 1:
        cards = cards * (3 if kind in ("peng",) else 4)
    return Meld(kind, tuple(cards), from_seat=frm, claimed=cards[0] if frm is not None else None)


class Hand(msgspec.Struct, frozen=True):
    hand: str
    tile: str
    melds: tuple[Meld, ...] = ()

    def at(self, seat: int, *flags: str, chain: tuple[Meld, ...] = ()) -> WinClaim:
        return WinClaim(seat=seat, hand=tuple(tiles(self.hand)), melds=self.melds,
                        tile=tile(self.tile), flags=flags, kong_chain=chain)


def ev(h: Hand, how: str, seat: int = 1, frm: int | None = None, *flags: str,
       dealer: int = 0, options: GuangxiOptions | None = None, chain=()):
    if frm is None and how != "zimo":
        frm = 3 if seat != 3 else 2
    return evaluate(h.at(seat, *flags, chain=chain), how, dealer, frm, options)


def done(how: str, *claims: WinClaim, frm: int | None = None, dealer: int = 0,
         fenghu=(), hubao=()) -> HandEnd:
    return HandEnd(dealer=dealer, how=how, from_seat=frm, winners=claims,
                   relations={"fenghu": [list(p) for p in fenghu],
                              "hubao": [list(p) for p in hubao]})


def paid(s) -> dict[tuple[int, int], int]:
    """(payer, payee) -> amount of a settlement."""
    return {(p.payer, p.payee): p.amount for p in s.payments}


HUBAO = GuangxiOptions(liability="hubao")
BOTH = GuangxiOptions(liability="both")
OFF = GuangxiOptions(liability="off")

# 平胡 with a chi (not 门清): 123m 456m 789s 55s + chi 345p.
PINGHU = Hand("123m456m78s55s", "9s", (M("chi", "345p", 0),))
# The same for seat 0 (its chi from seat 3).
PINGHU0 = Hand("123m456m78s55s", "9s", (M("chi", "345p", 3),))
# 平胡 all concealed (门清): 123m 456m 789s 55s 234p, waiting 2p/5p.
PINGHU_MQ = Hand("123m456m789s55s34p", "2p")
# 平胡 with an 暗杠 (still 门清, §1): 123m 456m 55s 234p + 暗杠 7s.
PINGHU_ANGANG = Hand("123m456m55s34p", "2p", (M("angang", "7s"),))
# 对对胡 with a peng (not 门清): 111m 999p 555s 77s + peng E.
PENGPENG = Hand("111m999p555s7s", "7s", (M("peng", "E", 2),))
# 对对胡 all concealed: 111m 999p 555s EEE 77s.
PENGPENG_MQ = Hand("111m999p555sEEE7s", "7s")
# 清一色 with a chi: 11 234 456 789m + chi 123m.
QINGYISE = Hand("2344567891m", "1m", (M("chi", "123m", 0),))
# 字一色, no shape: peng E + SS WW NN CC FF PP.
ZIYISE = Hand("SSWWNNCCFF", "P", (M("peng", "E", 2),))
# 字一色 all concealed, no shape: EE SS WW NN CC FF P + E = EEE SS WW NN CC FF P.
ZIYISE_MQ = Hand("EESSWWNNCCFFP", "E")
# 字一色 that is also a standard hand (对对胡): peng E + SSS WWW NNN CC.
ZIYISE_PENGPENG = Hand("SSSWWWNNNC", "C", (M("peng", "E", 2),))
# 全求人: four pengs, the single 5s paired by the winning tile.
QUANQIUREN = Hand("5s", "5s", (M("peng", "1m", 2), M("peng", "9p", 3), M("peng", "E", 0),
                               M("peng", "C", 2)))
# 清一色全求人: four pengs of 条, waiting on 5s.
QINGYISE_QUANQIUREN = Hand("5s", "5s", (M("peng", "1s", 2), M("peng", "2s", 3),
                                        M("peng", "7s", 0), M("peng", "9s", 2)))
# 七对 family (concealed, no 门清: D-GX3).
QIXIAODUI = Hand("1133m2244p66sEEC", "C")
QIDADUI = Hand("1111m3344p66sEEC", "C")
CHAOHAOHUA = Hand("1111m4444p66sEEC", "C")
CHAOCHAOHAOHUA = Hand("1111m4444p6666sC", "C")
# 清一色 七小对: 11 22 33 44 55 77 99m (no standard reading: 77 99 form no set).
QINGYISE_QIDUI = Hand("1122335577994m", "4m")
# 十三幺: the 13 terminals and honors, 1m paired.
SHISANYAO = Hand("19m19p19sESWNCFP", "1m")


# ----------------------------------------------------------------- options


def test_options_defaults_follow_section_7():
    o = GuangxiOptions()
    assert (o.liability, o.gangkai_liability, o.fenghu_count) == ("fenghu", "first_kong", 3)
    assert (o.menqing_on_dianpao, o.reserve_tiles) == (False, 0)
    assert o.values == DEFAULT_VALUES
    # §2 table, (dianpao, zimo)
    assert o.value("pinghu", False) == 2 and o.value("pinghu", True) == 3
    assert o.value("chaochaohaohua_qidui", False) == 96


def test_options_values_override_one_pattern_keeps_the_rest():
    o = msgspec.convert({"values": {"ziyise": [24, 16]}}, GuangxiOptions)
    assert o.value("ziyise", False) == 24 and o.value("ziyise", True) == 16
    assert o.value("qingyise", False) == 9
    # 字一色 (no shape) by discard now pays 24.
    assert ev(ZIYISE, "dianpao", options=o).amounts == {3: 24}


@pytest.mark.parametrize("bad, word", [
    ({"values": {"no_such": [1, 2]}}, "no_such"),
    ({"values": {"menqing": [1, 2]}}, "menqing"),  # a multiplier has no value
    ({"values": {"pinghu": [-1, 3]}}, "pinghu"),
    ({"values": {"pinghu": [1]}}, "values"),
    ({"liability": "sometimes"}, "liability"),
    ({"gangkai_liability": "never"}, "gangkai_liability"),
    ({"fenghu_count": 0}, "fenghu_count"),
    ({"reserve_tiles": -1}, "reserve_tiles"),
    ({"hubao": True}, "hubao"),
])
def test_options_reject_bad_values_naming_them(bad, word):
    with pytest.raises(msgspec.ValidationError, match=word):
        msgspec.convert(bad, GuangxiOptions)


def test_options_direct_construction_is_checked_too():
    with pytest.raises(ValueError, match="bogus"):
        GuangxiOptions(values={"bogus": (1, 1)})


# ----------------------------------------------------------------- shapes


def counts_of(text: str) -> list[int]:
    c = [0] * 34
    for t in tiles(text):
        c[t] += 1
    return c


def test_shapes():
    assert is_shisanyao(counts_of("119m19p19sESWNCFP"))
    assert not is_shisanyao(counts_of("129m19p19sESWNCFP"))
    assert is_win_shape(counts_of("19m19p19sESWNCFPP"))  # 十三幺
    assert is_win_shape(counts_of("1133m2244p66sEECC"))  # 七对
    assert is_win_shape(counts_of("EESSWWNNCCFFPE"))  # 字一色, no shape
    assert not is_win_shape(counts_of("EESSWWNNCCFF1mE"))
    assert is_win_shape(counts_of("SSWWNNCCFFP"), [M("peng", "E", 2)])


def test_waits():
    # 十三幺 13-sided wait.
    assert waits(tiles("19m19p19sESWNCFP")) == sorted(tiles("19m19p19sESWNCFP"))
    # 七对 single wait on C (and no standard wait).
    assert waits(tiles("1133m2244p66sEEC")) == [tile("C")]
    # 平胡 two-sided wait 2p/5p.
    assert waits(tiles("123m456m789s55s34p")) == tiles("25p")


# ----------------------------------------------------------------- pattern values (§2)


@pytest.mark.parametrize("h, ids, dianpao, zimo", [
    # Not 门清 (a chi / peng), so the table value stands on both.
    (PINGHU, ["pinghu"], 2, 3),
    (PENGPENG, ["pengpenghu"], 9, 6),
    (QINGYISE, ["qingyise"], 9, 6),
    (ZIYISE, ["ziyise"], 18, 12),
    # 七对 family and 十三幺 take no 门清 (D-GX3).
    (QIXIAODUI, ["qixiaodui"], 12, 8),
    (QIDADUI, ["qidadui"], 24, 16),
    (CHAOHAOHUA, ["chaohaohua_qidui"], 48, 32),
    (CHAOCHAOHAOHUA, ["chaochaohaohua_qidui"], 96, 64),
    (SHISANYAO, ["shisanyao"], 48, 32),
])
def test_pattern_values_dianpao_and_zimo(h, ids, dianpao, zimo):
    d = ev(h, "dianpao", seat=1, frm=3)
    assert list(d.patterns) == ids and d.amounts == {3: dianpao}
    z = ev(h, "zimo")
    assert list(z.patterns) == ids and z.amounts == {0: zimo, 2: zimo, 3: zimo}
    assert z.total() == 3 * zimo


def test_quanqiuren_by_discard_only():
    # 全求人 18 by discard; it supersedes 对对胡 (D-GX4: not 18 × 2).
    d = ev(QUANQIUREN, "dianpao")
    assert d.patterns == ("quanqiuren",) and d.share == 18
    # By zimo it is no 全求人 (§2): 对对胡 6 from each.
    z = ev(QUANQIUREN, "zimo")
    assert z.patterns == ("pengpenghu",) and z.share == 6


def test_quanqiuren_with_a_jiagang_or_minggang_but_not_a_chi_or_angang():
    # D-GX6: a 补杠 counts as claimed; a 明杠 too.
    jia = Hand("5s", "5s", (M("peng", "1m", 2), M("jiagang", "9p", 3), M("peng", "E", 0),
                            M("minggang", "C", 2)))
    assert ev(jia, "dianpao").patterns == ("quanqiuren",)
    # An 暗杠 is not claimed: 对对胡 9.
    an = Hand("5s", "5s", (M("peng", "1m", 2), M("angang", "9p"), M("peng", "E", 0),
                           M("peng", "C", 2)))
    assert ev(an, "dianpao").patterns == ("pengpenghu",)
    # With a chi: nothing but 平胡 2.
    chi = Hand("5s", "5s", (M("peng", "1m", 2), M("chi", "789p", 0), M("peng", "E", 0),
                            M("peng", "C", 2)))
    assert ev(chi, "dianpao").patterns == ("pinghu",)


# ----------------------------------------------------------------- combining (§2)


def test_combining_qingyise_quanqiuren_36():
    # Seed: 全求人 18 → 清一色全求人 18 × 2 = 36.
    d = ev(QINGYISE_QUANQIUREN, "dianpao")
    assert sorted(d.patterns) == ["qingyise", "quanqiuren"] and d.share == 36


def test_combining_haidi_6_and_haidi_pengpenghu_12():
    # Seed: 海底 6 = 平胡 zimo 3 × 2; 海底对对胡 = 对对胡 zimo 6 × 2 = 12.
    a = ev(PINGHU, "zimo", 1, None, "haidi")
    assert a.patterns == ("pinghu", "haidi") and a.share == 6
    b = ev(PENGPENG, "zimo", 1, None, "haidi")
    assert b.patterns == ("pengpenghu", "haidi") and b.share == 12
    assert b.total() == 36


def test_combining_largest_times_two_per_extra_pattern():
    # 清一色 七小对 by discard: max(9, 12) × 2 = 24; by zimo max(6, 8) × 2 = 16.
    assert ev(QINGYISE_QIDUI, "dianpao").share == 24
    z = ev(QINGYISE_QIDUI, "zimo")
    assert sorted(z.patterns) == ["qingyise", "qixiaodui"] and z.share == 16
    # 字一色 + 对对胡 (standard reading) 18 × 2 = 36 beats 字一色 alone (no shape) 18.
    d = ev(ZIYISE_PENGPENG, "dianpao")
    assert sorted(d.patterns) == ["pengpenghu", "ziyise"] and d.share == 36


def test_best_reading_qidui_over_standard():
    # 11223344556677m: 清一色 + 七小对 (12 × 2 = 24) or standard 清一色 (9).
    h = Hand("1122334455667m", "7m")
    d = ev(h, "dianpao")
    assert sorted(d.patterns) == ["qingyise", "qixiaodui"] and d.share == 24
    # zimo: 七对 8 × 2 = 16 against standard 清一色 6 × 4/3 (门清) = 8.
    assert ev(h, "zimo").share == 16


# ----------------------------------------------------------------- 门清 (§3, D-GX5)


def test_menqing_zimo_three_becomes_four():
    z = ev(PINGHU_MQ, "zimo")
    assert z.patterns == ("pinghu", "menqing") and z.share == 4 and z.total() == 12
    # 对对胡 concealed: 6 → 8.
    assert ev(PENGPENG_MQ, "zimo").share == 8
    # 字一色 without shape, concealed: 12 → 16 (门清 is not barred for it).
    assert ev(ZIYISE_MQ, "zimo").share == 16


def test_angang_keeps_menqing():
    z = ev(PINGHU_ANGANG, "zimo")
    assert z.patterns == ("pinghu", "menqing") and z.share == 4


def test_menqing_not_on_discard_and_not_listed():
    # the case format: a multiplier that does not change the value is not listed.
    d = ev(PINGHU_MQ, "dianpao")
    assert d.patterns == ("pinghu",) and d.share == 2


def test_menqing_on_dianpao_option_rounds_down():
    o = GuangxiOptions(menqing_on_dianpao=True)
    # 平胡 2 → ⌊8/3⌋ = 2: unchanged, so not listed.
    d = ev(PINGHU_MQ, "dianpao", options=o)
    assert d.patterns == ("pinghu",) and d.share == 2
    # 对对胡 9 → 12, listed.
    d = ev(PENGPENG_MQ, "dianpao", options=o)
    assert d.patterns == ("pengpenghu", "menqing") and d.share == 12
    # With a custom table: 平胡 dianpao 5 → ⌊20/3⌋ = 6.
    o5 = GuangxiOptions(menqing_on_dianpao=True, values={"pinghu": (5, 3)})
    assert ev(PINGHU_MQ, "dianpao", options=o5).share == 6


def test_no_menqing_for_qidui_family_and_shisanyao():
    assert ev(QIXIAODUI, "zimo").patterns == ("qixiaodui",)
    assert ev(SHISANYAO, "zimo").patterns == ("shisanyao",)


# ----------------------------------------------------------------- 杠冲 / 全求人反冲 (§3)


@pytest.mark.parametrize("flag", ["gangshangpao", "quanqiupao"])
def test_gangchong_and_fanchong_pinghu_9_menqing_12(flag):
    # Seed: 推倒胡算9张（门清12张）.
    d = ev(PINGHU, "dianpao", 1, 3, flag)
    assert d.patterns == ("pinghu", flag) and d.amounts == {3: 9}
    d = ev(PINGHU_MQ, "dianpao", 1, 3, flag)
    assert d.patterns == ("pinghu", "menqing", flag) and d.amounts == {3: 12}


@pytest.mark.parametrize("flag", ["gangshangpao", "quanqiupao"])
def test_gangchong_other_patterns_double(flag):
    # Seed: 若是其他牌型累积 * 2 — 对对胡 9 × 2, 七小对 12 × 2, 全求人 18 × 2.
    assert ev(PENGPENG, "dianpao", 1, 3, flag).share == 18
    assert ev(QIXIAODUI, "dianpao", 1, 3, flag).share == 24
    assert ev(QUANQIUREN, "dianpao", 1, 3, flag).share == 36
    # D-GX5: no 门清 on other 杠冲 values, even with the option.
    o = GuangxiOptions(menqing_on_dianpao=True)
    d = ev(PENGPENG_MQ, "dianpao", 1, 3, flag, options=o)
    assert d.share == 18 and "menqing" not in d.patterns


def test_gangchong_and_fanchong_do_not_stack():
    # D-GX1: one of them (equal values; 杠冲 listed).
    d = ev(PINGHU, "dianpao", 1, 3, "gangshangpao", "quanqiupao")
    assert d.patterns == ("pinghu", "gangshangpao") and d.share == 9


def test_haidipao_doubles_gangchong():
    # §3: a 平胡 杠冲 on the last discard pays 18.
    d = ev(PINGHU, "dianpao", 1, 3, "gangshangpao", "haidipao")
    assert d.share == 18
    assert ev(PINGHU, "dianpao", 1, 3, "haidipao").share == 4


# ----------------------------------------------------------------- 抢杠 (§3, D-GX8)


def test_qianggang_kong_maker_pays_zimo_value_times_three():
    # 平胡 with a chi: zimo value 3 × 3 = 9, from the kong maker alone.
    q = ev(PINGHU, "qianggang", 1, 2)
    assert q.patterns == ("pinghu", "qianggang") and q.share == 3 and q.amounts == {2: 9}
    # 门清 before ×3: 4 × 3 = 12.
    q = ev(PINGHU_MQ, "qianggang", 1, 2)
    assert q.patterns == ("pinghu", "menqing", "qianggang") and q.amounts == {2: 12}
    # 全求人 counts on a 抢杠 (D-GX6), with its zimo column (12, see options): 36.
    q = ev(QUANQIUREN, "qianggang", 1, 2)
    assert q.patterns == ("quanqiuren", "qianggang") and q.amounts == {2: 36}
    s = settle(done("qianggang", PINGHU.at(1), frm=2))
    assert paid(s) == {(2, 1): 9}


def test_robbing_a_quanqiuren_buggang_is_qianggang_only():
    # D-GX14: 全求人反冲 needs a discard; robbing the 补杠 of a seat in 全求人
    # is paid as 抢杠 alone (zimo value × 3 = 9), and the flag is refused there.
    assert ev(PINGHU, "qianggang", 1, 2).amounts == {2: 9}
    with pytest.raises(BadCards, match="quanqiupao"):
        ev(PINGHU, "qianggang", 1, 2, "quanqiupao")


def test_gangchong_pinghu_figure_ignores_custom_values():
    # D-GX15: the 杠冲/反冲 平胡 figure (9, 门清 12) is the source's, whatever
    # ``values`` says for 平胡; other values still follow ``values``.
    opts = GuangxiOptions(values={"pinghu": (5, 10)})
    assert ev(PINGHU, "dianpao", 1, 3, "gangshangpao", options=opts).share == 9
    assert ev(PINGHU, "dianpao", 1, 3, "quanqiupao", options=opts).share == 9
    assert ev(PINGHU_MQ, "dianpao", 1, 3, "gangshangpao", options=opts).share == 12
    assert ev(PINGHU, "dianpao", 1, 3, options=opts).share == 5


# ----------------------------------------------------------------- 天胡 地胡 人胡 海底 杠开


def test_tianhu_dihu_renhu_double():
    # 天胡: the dealer's concealed 平胡 zimo 4 (门清) × 2 = 8 from each.
    t = ev(PINGHU_MQ, "zimo", 0, None, "tianhu")
    assert t.patterns == ("pinghu", "menqing", "tianhu") and t.amounts == {1: 8, 2: 8, 3: 8}
    # 地胡: non-dealer, 平胡 with a chi: 3 × 2 = 6.
    assert ev(PINGHU, "zimo", 2, None, "dihu").share == 6
    # 人胡: on the dealer's first discard: 2 × 2 = 4.
    r = ev(PINGHU, "dianpao", 1, 0, "renhu")
    assert r.patterns == ("pinghu", "renhu") and r.amounts == {0: 4}


def test_gangshanghua_times_two_per_kong_of_the_chain():
    # 123m 456m 99s + 补杠 7s (from 0) + 暗杠 5p: 平胡, not 门清 (a 补杠).
    h = Hand("123m456m9s", "9s", (M("jiagang", "7s", 0), M("angang", "5p")))
    chain = (M("jiagang", "7s", 0), M("angang", "5p"))
    # A chain of two: 3 × 2² = 12 from each share.
    g = ev(h, "zimo", 1, None, "gangshanghua", chain=chain)
    assert g.patterns == ("pinghu", "gangshanghua") and g.share == 12
    # No kong_chain: a chain of one (the last kong among the melds): 3 × 2 = 6.
    assert ev(h, "zimo", 1, None, "gangshanghua").share == 6
    # 海底 on the replacement (D-M6): 3 × 2² × 2 = 24.
    assert ev(h, "zimo", 1, None, "gangshanghua", "haidi", chain=chain).share == 24


def test_gangshanghua_after_angang_chain_keeps_menqing():
    # Two 暗杠 in a chain: 平胡 3 → 门清 4 → × 2² = 16.
    h = Hand("123m456m9s", "9s", (M("angang", "7s"), M("angang", "5p")))
    g = ev(h, "zimo", 1, None, "gangshanghua", chain=(M("angang", "7s"), M("angang", "5p")))
    assert g.patterns == ("pinghu", "menqing", "gangshanghua") and g.share == 16


# ----------------------------------------------------------------- input checks


def test_impossible_input_is_refused():
    with pytest.raises(BadCards, match="haidi"):
        ev(PINGHU, "dianpao", 1, 3, "haidi")
    with pytest.raises(BadCards, match="haidipao"):
        ev(PINGHU, "zimo", 1, None, "haidipao")
    with pytest.raises(BadCards, match="renhu"):
        ev(PINGHU, "dianpao", 1, 2, "renhu")  # not the dealer's discard
    with pytest.raises(BadCards, match="tianhu"):
        ev(PINGHU, "zimo", 1, None, "tianhu")  # not the dealer
    with pytest.raises(BadCards, match="gangshanghua"):
        ev(PINGHU, "zimo", 1, None, "gangshanghua")  # no kong
    with pytest.raises(BadCards, match="unknown flag"):
        ev(PINGHU, "zimo", 1, None, "lucky")
    with pytest.raises(BadCards, match="5 copies"):
        ev(Hand("1111m456m789s55s2p", "1m"), "zimo")
    h = Hand("123m456m9s", "9s", (M("jiagang", "7s", 0), M("angang", "5p")))
    with pytest.raises(BadCards, match="not among his melds"):
        ev(h, "zimo", 1, None, "gangshanghua", chain=(M("angang", "6p"),))
    with pytest.raises(BadCards, match="feeder"):
        ev(h, "zimo", 1, None, "gangshanghua", chain=(M("jiagang", "7s"),))
    with pytest.raises(BadCards, match="cannot come from seat 1"):
        ev(Hand("123m456m78s55s", "9s", (M("chi", "345p", 1),)), "zimo", 1)
    with pytest.raises(BadCards, match="does not win"):
        settle(done("zimo", Hand("123m456m789s55s35p", "9p").at(1)))
    with pytest.raises(BadCards, match="one winner"):
        settle(done("zimo", PINGHU.at(1), PINGHU_MQ.at(2)))


# ----------------------------------------------------------------- plain settlement


def test_as_wineval_for_the_win_check_hook():
    assert as_wineval(ev(PINGHU_MQ, "zimo")) == WinEval(wins=True, patterns=("pinghu", "menqing"))
    assert as_wineval(ev(Hand("123m456m789s55s35p", "9p"), "zimo")) == WinEval(wins=False)


def test_settle_zimo_and_dianpao():
    s = settle(done("zimo", PENGPENG.at(1)))
    assert paid(s) == {(0, 1): 6, (2, 1): 6, (3, 1): 6}
    assert s.patterns == {1: ("pengpenghu",)} and s.xing == {} and s.flipped == ()
    s = settle(done("dianpao", PENGPENG.at(1), frm=3))
    assert paid(s) == {(3, 1): 9} and s.payments[0].reason == "hu"


# ----------------------------------------------------------------- 封胡 (§4)

# B = 1 claimed three pengs from A = 2: A is 封胡 toward B.  C = 3, D = 0.
B_HAND = Hand("555s7s", "7s", (M("peng", "1m", 2), M("peng", "9p", 2), M("peng", "E", 2)))
FENGHU = [(2, 1)]


def test_fenghu_effect_1_cannot_win():
    with pytest.raises(BadCards, match="封胡"):
        settle(done("dianpao", PINGHU.at(2), frm=3, fenghu=FENGHU))
    # With liability off (or hubao alone) 封胡 is not in force.
    assert paid(settle(done("dianpao", PINGHU.at(2), frm=3, fenghu=FENGHU), OFF)) == {(3, 2): 2}


def test_fenghu_effect_2_dealing_in_pays_twice():
    # B's 对对胡 by discard is 9; A deals in: 9 × 2 = 18.
    s = settle(done("dianpao", B_HAND.at(1), frm=2, fenghu=FENGHU))
    assert paid(s) == {(2, 1): 18} and s.payments[0].reason == "fenghu"


def test_fenghu_effect_3_another_deals_in_a_pays_the_same():
    s = settle(done("dianpao", B_HAND.at(1), frm=3, fenghu=FENGHU))
    assert paid(s) == {(3, 1): 9, (2, 1): 9}


def test_fenghu_effect_4_zimo_a_pays_all_three_shares():
    # 对对胡 zimo 6 a share: A pays 18, C and D nothing (包牌).
    s = settle(done("zimo", B_HAND.at(1), fenghu=FENGHU))
    assert paid(s) == {(2, 1): 18}
    # Options hubao / off: 封胡 is ignored, each pays 6.
    for o in (HUBAO, OFF):
        assert paid(settle(done("zimo", B_HAND.at(1), fenghu=FENGHU), o)) == {
            (0, 1): 6, (2, 1): 6, (3, 1): 6}


def test_fenghu_does_not_add_to_a_liangang_gangkai():
    # D-GX8: a 杠开 whose chain starts with a 补杠 of seat 0's peng is paid by 0
    # alone; the seat 封胡 toward the winner (2) adds nothing.
    h = Hand("123m456m9s", "9s", (M("jiagang", "7s", 0), M("angang", "5p")))
    w = h.at(1, "gangshanghua", chain=(M("jiagang", "7s", 0), M("angang", "5p")))
    s = settle(done("zimo", w, fenghu=FENGHU))
    assert paid(s) == {(0, 1): 36} and s.payments[0].reason == "liangang"


def test_fenghu_qianggang_counts_as_discard():
    # D-GX8: 平胡 (chi) robbed from the kong maker: zimo 3 × 3 = 9.
    # Kong maker 2 is 封胡 toward the winner 1: 18.
    assert paid(settle(done("qianggang", PINGHU.at(1), frm=2, fenghu=FENGHU))) == {(2, 1): 18}
    # Kong maker 3; seat 2 封胡 toward 1 pays as much as the kong maker: 9.
    assert paid(settle(done("qianggang", PINGHU.at(1), frm=3, fenghu=FENGHU))) == {
        (3, 1): 9, (2, 1): 9}


# ----------------------------------------------------------------- 互包 (§5)

# A = 0 and B = 1 are 互包 partners; C = 2, D = 3.
AB = [(0, 1)]


def test_hubao_other_partner_pays_the_same_amount():
    # C deals in to A's 平胡 (2): C pays 2 and B pays 2 as well.
    s = settle(done("dianpao", PINGHU0.at(0), frm=2, hubao=AB), HUBAO)
    assert paid(s) == {(2, 0): 2, (1, 0): 2}
    assert {p.reason for p in s.payments} == {"hu", "hubao"}


def test_hubao_zimo_partner_pays_all_three_shares():
    # A wins 平胡 by zimo (3 a share): B pays 9, C and D nothing.
    s = settle(done("zimo", PINGHU0.at(0), hubao=AB), HUBAO)
    assert paid(s) == {(1, 0): 9}


def test_hubao_partners_dealing_in_pay_three_times():
    # B deals in to A's 平胡 2: 3 × 2 = 6.
    assert paid(settle(done("dianpao", PINGHU0.at(0), frm=1, hubao=AB), HUBAO)) == {(1, 0): 6}


def test_hubao_two_pairs_zimo_both_pay_three_shares():
    # A–B and B–C, B zimo 平胡 (3 a share): A and C each pay 9 (seed: AC要各给B3个子).
    s = settle(done("zimo", PINGHU.at(1), hubao=[(0, 1), (1, 2)]), HUBAO)
    assert paid(s) == {(0, 1): 9, (2, 1): 9}
    assert net_of(list(s.payments), 4) == [-9, 18, -9, 0]


def test_hubao_tongpao_is_ignored():
    # D (3) deals in to both A (0, 平胡 2) and B (1, 清一色 9) on 2p: only D pays.
    a = PINGHU_MQ.at(0)
    b = Hand("1334455667899p", "2p").at(1)
    s = settle(done("dianpao", a, b, frm=3, hubao=AB), HUBAO)
    assert paid(s) == {(3, 0): 2, (3, 1): 9}
    assert s.patterns == {0: ("pinghu",), 1: ("qingyise",)}
    # Same with equal amounts (two 平胡 on 2p): still only D pays.
    b2 = Hand("789m123s456s99s34p", "2p").at(1)
    s = settle(done("dianpao", a, b2, frm=3, hubao=AB), HUBAO)
    assert paid(s) == {(3, 0): 2, (3, 1): 2}


def test_hubao_ignored_under_fenghu_liability():
    assert paid(settle(done("zimo", PINGHU0.at(0), hubao=AB))) == {
        (1, 0): 3, (2, 0): 3, (3, 0): 3}


def test_both_fenghu_replaces_hubao_between_the_same_seats():
    # Seat 2 is 封胡 toward 1 and they are also 互包; 0–1 are 互包 too.
    # B (1) zimo 对对胡, 6 a share: 2 pays 18 once (封胡, not again for 互包),
    # 0 pays 18 (互包), 3 nothing.
    s = settle(done("zimo", B_HAND.at(1), fenghu=FENGHU, hubao=[(1, 2), (0, 1)]), BOTH)
    assert paid(s) == {(2, 1): 18, (0, 1): 18}
    # 3 deals in to 1: 3 pays 9, 2 pays 9 (effect 3), 0 pays 9 (互包).
    s = settle(done("dianpao", B_HAND.at(1), frm=3, fenghu=FENGHU, hubao=[(1, 2), (0, 1)]), BOTH)
    assert paid(s) == {(3, 1): 9, (2, 1): 9, (0, 1): 9}


# ----------------------------------------------------------------- 一炮多响


def test_yipao_duoxiang_each_winner_settled():
    # 3 deals in 2p to seat 0 (平胡 门清, 2) and seat 1 (清一色, 9); seat 2 is
    # 封胡 toward seat 1 and pays seat 1 as much as the discarder (effect 3).
    a = PINGHU_MQ.at(0)
    b = Hand("1334455667899p", "2p").at(1)
    s = settle(done("dianpao", a, b, frm=3, fenghu=FENGHU))
    assert paid(s) == {(3, 0): 2, (3, 1): 9, (2, 1): 9}


# ----------------------------------------------------------------- kongs (§6, D-GX7)


def fees_of_chain(seat: int, chain) -> list[Payment]:
    """All the fees of a chain: kong_fees over each prefix."""
    return [p for i in range(1, len(chain) + 1) for p in kong_fees(seat, chain[:i])]


def test_single_kong_fees():
    fee = lambda kind: (Term("fee", kind, 1, cards=(4,), rule="§6"),)  # noqa: E731 (5m = 4)
    assert kong_fees(1, [M("minggang", "5m", 3)]) == [Payment(3, 1, 1, "minggang",
                                                              fee("minggang"))]
    assert kong_fees(1, [M("jiagang", "5m", 2)]) == [Payment(2, 1, 1, "jiagang", fee("jiagang"))]
    hidden = (Term("fee", "angang", 1, rule="§6"),)  # an 暗杠 lies face down: no card (D-GX10)
    assert kong_fees(1, [M("angang", "5m")]) == [
        Payment(0, 1, 1, "angang", hidden), Payment(2, 1, 1, "angang", hidden),
        Payment(3, 1, 1, "angang", hidden)]


def test_liangang_fee_why_names_the_chain():
    # §6 / D-GX7: an 暗杠 after the chain's 补杠 fed by seat 0 is paid by 0 alone,
    # 1 张 × the three shares.
    chain = [M("jiagang", "1m", 0), M("angang", "2m")]
    (p,) = kong_fees(1, chain)
    assert (p.payer, p.payee, p.amount) == (0, 1, 3)
    assert p.why == (Term("fee", "angang", 1, rule="§6"),  # no card: D-GX10
                     Term("liability", "liangang", 3, "*", rule="§6, D-GX7"))


# B = 1; A = 0, C = 2, D = 3 each gave B a peng.
def test_liangang_example_1_three_bugang_a_pays_3():
    chain = [M("jiagang", "1m", 0), M("jiagang", "2m", 2), M("jiagang", "3m", 3)]
    fees = fees_of_chain(1, chain)
    assert net_of(fees, 4) == [-3, 3, 0, 0]
    assert all(p.payer == 0 for p in fees)


def test_liangang_example_2_bugang_then_two_angang_a_pays_7():
    chain = [M("jiagang", "1m", 0), M("angang", "2m"), M("angang", "3m")]
    # 1 + 3 + 3 = 7.
    assert net_of(fees_of_chain(1, chain), 4) == [-7, 7, 0, 0]


def test_liangang_example_3_angang_then_two_bugang_and_angang_a_pays_5():
    chain = [M("angang", "4m"), M("jiagang", "1m", 0), M("jiagang", "2m", 2), M("angang", "3m")]
    # The first 暗杠 is paid normally (1 each); then A pays 1 + 1 + 3 = 5.
    after = [p for i in range(2, 5) for p in kong_fees(1, chain[:i])]
    assert net_of(after, 4) == [-5, 5, 0, 0]
    assert net_of(fees_of_chain(1, chain), 4) == [-6, 8, -1, -1]


def test_liangang_example_4_angang_then_two_bugang_a_pays_2():
    chain = [M("angang", "4m"), M("jiagang", "1m", 0), M("jiagang", "2m", 2)]
    after = [p for i in range(2, 4) for p in kong_fees(1, chain[:i])]
    assert net_of(after, 4) == [-2, 2, 0, 0]


def test_kong_fee_input_checks():
    with pytest.raises(BadCards, match="feeder"):
        kong_fees(1, [M("jiagang", "1m")])
    with pytest.raises(BadCards, match="only kongs"):
        kong_fees(1, [M("peng", "1m", 0)])
    with pytest.raises(BadCards, match="1 to 4"):
        kong_fees(1, [])


def test_huangzhuang_returns_angang_fees_only():
    # Example 3's fees: 暗杠 1 from 0, 2, 3; 补杠 1 + 1 from 0; 暗杠 3 from 0.
    chain = [M("angang", "4m"), M("jiagang", "1m", 0), M("jiagang", "2m", 2), M("angang", "3m")]
    fees = fees_of_chain(1, chain)
    refunds = huangzhuang_refunds(fees)
    assert all(p.reason == "angang_refund" and p.payer == 1 for p in refunds)
    assert sorted((p.payee, p.amount) for p in refunds) == [(0, 1), (0, 3), (2, 1), (3, 1)]
    # The two 补杠 stand: A −2, B +2.
    assert net_of(fees + refunds, 4) == [-2, 2, 0, 0]
    assert huangzhuang_refunds([Payment(3, 1, 1, "minggang")]) == []


# ----------------------------------------------------------------- 连杠的杠开 payer (§6)

H2 = Hand("123m456m9s", "9s", (M("jiagang", "7s", 0), M("angang", "5p")))


def test_gangkai_first_kong_minggang_feeder_pays_all_three():
    # Chain 补杠 (from 0), 暗杠: 3 × 2² = 12 a share; seat 0 pays 36.
    w = H2.at(1, "gangshanghua", chain=(M("jiagang", "7s", 0), M("angang", "5p")))
    assert gangkai_payer(w) == 0
    assert paid(settle(done("zimo", w))) == {(0, 1): 36}


def test_gangkai_first_kong_angang_three_pay():
    # Chain 暗杠, 补杠 (from 0): first kong an 暗杠 → each pays 12.
    w = H2.at(1, "gangshanghua", chain=(M("angang", "5p"), M("jiagang", "7s", 0)))
    assert gangkai_payer(w) is None
    assert paid(settle(done("zimo", w))) == {(0, 1): 12, (2, 1): 12, (3, 1): 12}
    # gangkai_liability = any_minggang: the 补杠's feeder pays all: 36.
    o = GuangxiOptions(gangkai_liability="any_minggang")
    assert gangkai_payer(w, o) == 0
    assert paid(settle(done("zimo", w), o)) == {(0, 1): 36}


def test_gangkai_single_diangang_its_discarder_pays():
    # 点杠 of seat 3's 8m, then 杠开: 平胡 3 × 2 = 6 a share; seat 3 pays 18.
    h = Hand("123m456p789s5s", "5s", (M("minggang", "8m", 3),))
    s = settle(done("zimo", h.at(1, "gangshanghua")))
    assert paid(s) == {(3, 1): 18}
    assert s.patterns == {1: ("pinghu", "gangshanghua")}


def test_gangkai_without_liangang_payer_follows_fenghu_effect_4():
    # Chain of one 暗杠 (门清): 4 × 2 = 8 a share; seat 2 封胡 toward 1 pays 24.
    h = Hand("123m456p789s5s", "5s", (M("angang", "8m"),))
    s = settle(done("zimo", h.at(1, "gangshanghua"), fenghu=FENGHU))
    assert paid(s) == {(2, 1): 24}


# ----------------------------------------------------------------- property: sums to zero


# Every set: the 21 runs and the 34 triplets.
GROUPS = [(k, k + 1, k + 2) for k in range(27) if k % 9 <= 6] + [(k, k, k) for k in range(34)]


@st.composite
def winning_hands(draw, n_winners: int):
    """``n_winners`` standard hands, all completed by the same tile t (each
    pairs it with the one t in his hand), that together hold no fifth copy;
    some sets laid down as chi/peng or made kongs."""
    used = [0] * 34
    t = draw(st.sampled_from(range(34)))
    used[t] += 1 + n_winners  # the winning tile, and one t in each hand
    seats = draw(st.permutations(range(4)))[:n_winners]
    out = []
    for seat in seats:
        sets: list[tuple[int, ...]] = []
        melds: list[Meld] = []
        hand = [t]
        for _ in range(4):
            fit = [g for g in GROUPS if all(used[c] + g.count(c) <= 4 for c in g)]
            g = draw(st.sampled_from(fit))
            for c in g:
                used[c] += 1
            sets.append(g)
        others = [s for s in range(4) if s != seat]
        for g in sets:
            lay = draw(st.sampled_from(["hand", "meld", "kong"]))
            if lay == "meld" and g[0] != g[1]:  # a chi, from the previous seat
                melds.append(Meld("chi", tuple(g), from_seat=(seat - 1) % 4, claimed=g[0]))
            elif lay == "meld":
                melds.append(Meld("peng", tuple(g), from_seat=draw(st.sampled_from(others)),
                                  claimed=g[0]))
            elif lay == "kong" and g[0] == g[1] and used[g[0]] < 4:
                used[g[0]] += 1
                kind = draw(st.sampled_from(["angang", "minggang", "jiagang"]))
                frm = None if kind == "angang" else draw(st.sampled_from(others))
                melds.append(Meld(kind, (g[0],) * 4, from_seat=frm,
                                  claimed=None if frm is None else g[0]))
            else:
                hand.extend(g)
        out.append(WinClaim(seat=seat, hand=tuple(sorted(hand)), melds=tuple(melds), tile=t))
    return out


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_settle_sums_to_zero(data):
    n = data.draw(st.integers(1, 3))
    claims = data.draw(winning_hands(n))
    winners = {c.seat for c in claims}
    if n == 1:
        how = data.draw(st.sampled_from(["zimo", "dianpao", "qianggang"]))
    else:
        how = data.draw(st.sampled_from(["dianpao", "qianggang"]))
    frm = None
    if how != "zimo":
        rest = [s for s in range(4) if s not in winners]
        if not rest:
            return
        frm = data.draw(st.sampled_from(rest))
    if how == "zimo" and data.draw(st.booleans()) and any(m.kind in ("minggang", "jiagang",
                                                                       "angang")
                                                          for m in claims[0].melds):
        claims = [msgspec.structs.replace(claims[0], flags=("gangshanghua",))]
    pair = st.tuples(st.integers(0, 3), st.integers(0, 3)).filter(lambda p: p[0] != p[1])
    fenghu = data.draw(st.lists(pair, max_size=3))
    hubao = data.draw(st.lists(pair, max_size=3))
    options = GuangxiOptions(
        liability=data.draw(st.sampled_from(["fenghu", "hubao", "both", "off"])),
        gangkai_liability=data.draw(st.sampled_from(["first_kong", "any_minggang"])),
        menqing_on_dianpao=data.draw(st.booleans()),
    )
    end = done(how, *claims, frm=frm, fenghu=fenghu, hubao=hubao)
    if options.liability in ("fenghu", "both") and any(g in winners for g, _ in fenghu):
        with pytest.raises(BadCards, match="封胡"):
            settle(end, options)
        return
    s = settle(end, options)
    net = net_of(list(s.payments), 4)
    assert sum(net) == 0
    assert set(s.patterns) == winners
    for p in s.payments:
        assert p.amount > 0 and p.payee in winners and p.payer != p.payee
    # No liability and no 连杠 payer: each winner receives his evaluation's total.
    if options.liability == "off" and all(gangkai_payer(c, options) is None for c in claims):
        for c in claims:
            e = evaluate(c, how, 0, frm, options)
            assert net[c.seat] == e.total()


# ----------------------------------------------------------------- why


def test_why_names_fenghu_effect_2_and_menqing():
    from qipai.core.model import Term, why_total
    from qipai.variants.guangxi_mahjong.scoring import settle as gx_settle

    # 平胡 by discard (2 张) from a seat 封胡 toward the winner: effect 2, twice.
    c = WinClaim(seat=1, hand=tuple(TILES.parse("123m456m789s5s")), tile=TILES.parse("5s")[0],
                 melds=(Meld("chi", tuple(TILES.parse("345p")), from_seat=0, claimed=None),))
    s = gx_settle(HandEnd(dealer=0, how="dianpao", from_seat=0, winners=(c,),
                          relations={"fenghu": [[0, 1]]}))
    (p,) = s.payments
    assert (p.payer, p.amount, p.reason) == (0, 4, "fenghu")
    assert p.why == (Term("pattern", "pinghu", 2, rule="§2"),
                     Term("liability", "fenghu", 1, rule="§4 effect 2"),
                     Term("pattern", "pinghu", 2, "*", rule="§2"))
    # 门清 平胡 自摸: 3 → ⌊4 × 3 / 3⌋ = 4 from each, written (3 + 门清 1).
    c = WinClaim(seat=1, hand=tuple(TILES.parse("123m456m789s345p5s")),
                 tile=TILES.parse("5s")[0])
    s = gx_settle(HandEnd(dealer=0, how="zimo", from_seat=None, winners=(c,)))
    for p in s.payments:
        assert p.amount == 4 == why_total(p.why)
        assert p.why == (Term("sum", "", 4, of=(Term("pattern", "pinghu", 3, rule="§2"),
                                                 Term("multiplier", "menqing", 1,
                                                      rule="§3 ×4/3, D-GX5"))),)


def test_an_angang_fee_does_not_show_the_face_down_kind_to_other_seats():
    # break11: the 暗杠 fee's why named its card (Term cards=(kind,)), so the
    # payers' views (Paid events, view.instant) showed the kind D-GX10 hides
    # while their view of the meld showed (None, None, None, None).
    # guangxi-mahjong --seed 13: seat 2 declares an 暗杠, each other seat pays 1.
    import msgspec

    from qipai.bots import play_hands
    from qipai.core.model import Paid
    from qipai.core.ruleset import load

    t = next(play_hands(load("guangxi-mahjong"), 1, seed=13))
    (angang,) = [m for m in t.seats[2].melds if m.kind == "angang"]
    fees = [p for e in t.events if isinstance(e, Paid) for p in e.payments
            if p.reason == "angang"]
    assert sorted(p.payer for p in fees) == [0, 1, 3]
    for viewer in (0, 1, 3):
        v = t.view(viewer)
        assert [m.cards for m in v.melds[2] if m.kind == "angang"] == [(None,) * 4]
        seen = [p for p in v.instant if p.reason == "angang"] + [
            p for e in v.events if isinstance(e, Paid) for p in e.payments
            if p.reason == "angang"]
        assert seen and all(not term.cards for p in seen for term in p.why), viewer
    assert angang.cards[0] not in [c for p in fees for term in p.why for c in term.cards]
    assert msgspec.json.encode(fees)  # still a well-formed breakdown
