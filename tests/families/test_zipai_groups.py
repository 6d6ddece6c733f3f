"""Zipai notation (qipai.families.zipai.cards), groups and the 胡数 search
(…zipai.groups) against hand-checked examples and against the brute-force
reference (…zipai.reference).

Rule source: docs/variants/guilin-zipai.md, "Cards and groups", "Winning"
(D-ZP5, D-ZP9) and "胡数" (the table).  Every expected value below is worked out by hand in the
comment next to it.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from qipai.core.cards import counts
from qipai.core.errors import BadCards, BadNotation
from qipai.core.model import Meld
from qipai.families.zipai import groups as G
from qipai.families.zipai import reference as ref
from qipai.families.zipai.cards import CARDS, is_big, kind_of, number
from qipai.families.zipai.groups import (
    GROUP_HU,
    Split,
    best_split,
    group_hu,
    hand_hu,
    meld_hu,
    valid_group,
    waits,
)


def C(text: str) -> list[int]:
    return counts(CARDS.parse(text), 20)


def K(text: str) -> int:
    (k,) = CARDS.parse(text)
    return k


def Ks(text: str) -> tuple[int, ...]:
    return tuple(CARDS.parse(text))


def M(kind: str, text: str) -> Meld:
    return Meld(kind, Ks(text))


# --------------------------------------------------------------------------
# Notation


def test_card_system_attributes() -> None:
    assert (CARDS.name, CARDS.n_kinds, CARDS.copies) == ("zipai", 20, 4)


def test_parse_tokens() -> None:
    # Canonical index: x1..x10 = 0..9, d1..d10 = 10..19.
    assert CARDS.parse("x1 x2 x3 d10") == [0, 1, 2, 19]
    assert CARDS.parse("x10,d1 , D5  X7") == [9, 10, 14, 6]
    assert CARDS.parse("") == []


def test_parse_chinese() -> None:
    assert CARDS.parse("一 二 三 十") == [0, 1, 2, 9]
    assert CARDS.parse("壹 贰 叁 肆 伍 陆 柒 捌 玖 拾") == list(range(10, 20))
    # traditional forms of the big numerals
    assert CARDS.parse("貳 參 陸") == [11, 12, 15]
    # 小/大 prefixes; 大三 is the big three
    assert CARDS.parse("小三 大三 大叁") == [2, 12, 12]
    # one Chinese numeral is one card, so they may run together
    assert CARDS.parse("二七十，贰柒拾") == [1, 6, 9, 11, 16, 19]


def test_parse_kinds_and_lists() -> None:
    assert CARDS.parse([0, 19, 5]) == [0, 19, 5]
    assert CARDS.parse(["x1 x2", "d3"]) == [0, 1, 12]
    with pytest.raises(BadNotation, match="20"):
        CARDS.parse([20])
    with pytest.raises(BadNotation):
        CARDS.parse([-1])


@pytest.mark.parametrize("bad, named, why", [
    ("x11", "x11", "a card is x1–x10"), ("x0", "x0", "a card is"), ("y3", "y3", "a card is"),
    ("x1x2", "x1x2", "latin cards are separated by spaces"), ("d", "d", "a card is"),
    ("小叁", "小叁", "小 with a big numeral"), ("三y", "y", "a card is"), ("1m", "1m", "a card is")])
def test_parse_names_the_bad_part_and_its_position(bad: str, named: str, why: str) -> None:
    """The message names the part that is not a card and where it starts
    (1-based, in the whole text): after Chinese numerals that read, only
    what follows them."""
    text = f"x1 {bad} d2"
    with pytest.raises(BadNotation) as e:
        CARDS.parse(text)
    msg = str(e.value)
    assert msg.startswith(f"bad card {named!r} at position {text.index(named) + 1} of {text!r}: ")
    assert why in msg


def test_format_token_chinese() -> None:
    assert CARDS.format([19, 0, 1, 10]) == "x1 x2 d1 d10"
    assert CARDS.format_seq([19, 0, 1]) == "d10 x1 x2"
    assert CARDS.token(9) == "x10" and CARDS.token(10) == "d1"
    assert CARDS.chinese(0) == "一" and CARDS.chinese(9) == "十"
    assert CARDS.chinese(11) == "贰" and CARDS.chinese(19) == "拾"
    every = list(range(20))
    assert CARDS.parse(CARDS.format(every)) == every
    assert CARDS.parse(" ".join(CARDS.chinese(k) for k in every)) == every


def test_helpers() -> None:
    assert [number(k) for k in (0, 9, 10, 19)] == [1, 10, 1, 10]
    assert [is_big(k) for k in (0, 9, 10, 19)] == [False, False, True, True]
    assert kind_of(7, True) == K("d7") and kind_of(7, False) == K("x7")


# --------------------------------------------------------------------------
# Valid groups (§1)

VALID = [
    "x3 x3 x3",  # three identical
    "d10 d10 d10",
    "x1 x2 x3",  # 一二三
    "d1 d2 d3",  # 壹贰叁
    "x2 x7 x10",  # 二七十
    "d2 d7 d10",  # 贰柒拾
    "x5 x5 d5",  # 小小大
    "d5 d5 x5",  # 大大小
    "x10 d10 d10",
    "x4 x5 x6",  # consecutive, small
    "d7 d8 d9",  # consecutive, big
    "x8 x9 x10",  # highest run
    "x6 x4 x5",  # order does not matter
]
INVALID = [
    "x9 x10 x1",  # no wrap from 10 to 1
    "d9 d10 d1",
    "d2 d7 x10",  # 二七十 must be one case
    "x2 x7 d10",
    "x4 d5 x6",  # runs are one case
    "x1 d2 d3",
    "x1 x1 x2",  # two identical + a neighbour
    "x5 d5 x6",
    "x1 x3 x5",
    "x2 x7 x9",
    "x3 x4",  # not 3 cards
    "x3 x3 x3 x3",
]


@pytest.mark.parametrize("cards", VALID)
def test_valid_groups(cards: str) -> None:
    assert valid_group(CARDS.parse(cards))
    assert ref.ref_valid_group(CARDS.parse(cards))


@pytest.mark.parametrize("cards", INVALID)
def test_invalid_groups(cards: str) -> None:
    assert not valid_group(CARDS.parse(cards))
    assert not ref.ref_valid_group(CARDS.parse(cards))


def test_valid_group_agrees_with_reference_on_every_triple() -> None:
    for a in range(20):
        for b in range(a, 20):
            for c in range(b, 20):
                assert valid_group((c, a, b)) == ref.ref_valid_group((a, b, c)), (a, b, c)


def test_number_of_valid_groups() -> None:
    # By hand: 20 identical, 2 cases × (8 runs + 二七十) = 18, 10 numbers × 2
    # (小小大, 大大小) = 20; 一二三/壹贰叁 are among the runs: 58 in all.
    n = sum(valid_group((a, b, c)) for a in range(20) for b in range(a, 20) for c in range(b, 20))
    assert n == 58


# --------------------------------------------------------------------------
# The 胡数 table (§5), group by group and as table melds

TABLE_ROWS = [
    # (group id, cards, 胡数)  — §5 big | small
    ("peng", "d3 d3 d3", 3),
    ("peng", "x3 x3 x3", 1),
    ("kan", "d9 d9 d9", 6),
    ("kan", "x9 x9 x9", 3),
    ("sao", "d4 d4 d4", 6),
    ("sao", "x4 x4 x4", 3),
    ("guosao", "d4 d4 d4", 6),
    ("guosao", "x4 x4 x4", 3),
    ("kaizhao", "d8 d8 d8 d8", 9),
    ("kaizhao", "x8 x8 x8 x8", 6),
    ("saochuan", "d1 d1 d1 d1", 12),
    ("saochuan", "x1 x1 x1 x1", 9),
    ("chi", "d1 d2 d3", 6),  # 壹贰叁
    ("chi", "x1 x2 x3", 3),  # 一二三
    ("chi", "d2 d7 d10", 6),  # 贰柒拾
    ("chi", "x2 x7 x10", 3),  # 二七十
    ("chi", "d2 d3 d4", 0),  # any other run
    ("chi", "x8 x9 x10", 0),
    ("chi", "d5 d5 x5", 0),  # 大大小
    ("chi", "x5 x5 d5", 0),  # 小小大
    ("bi", "x3 x2 x1", 3),  # the same values in hand
    ("bi", "d10 d7 d2", 6),
    ("bi", "x4 x5 x6", 0),
    ("bi", "d6 x6 x6", 0),
    ("dui", "d10 d10", 0),
]


@pytest.mark.parametrize("kind,cards,hu", TABLE_ROWS)
def test_group_hu_table(kind: str, cards: str, hu: int) -> None:
    assert group_hu(kind, CARDS.parse(cards)) == hu


@pytest.mark.parametrize(
    "kind,cards,hu", [r for r in TABLE_ROWS if r[0] not in ("bi", "dui", "kan")]
)
def test_meld_hu_table(kind: str, cards: str, hu: int) -> None:
    assert meld_hu(M(kind, cards)) == hu
    assert ref.ref_meld_hu(M(kind, cards)) == hu


def test_group_hu_table_constant() -> None:
    assert GROUP_HU == {
        "peng": (3, 1),
        "kan": (6, 3),
        "sao": (6, 3),
        "guosao": (6, 3),
        "kaizhao": (9, 6),
        "saochuan": (12, 9),
        "yiersan": (6, 3),
        "erqishi": (6, 3),
    }


@pytest.mark.parametrize(
    "kind,cards",
    [
        ("peng", "x3 x3 x4"),  # not identical
        ("peng", "x3 x3"),  # too few
        ("kaizhao", "x3 x3 x3"),  # a 开招 is four
        ("chi", "x3 x3 x3"),  # a 吃 is never three identical
        ("chi", "x9 x10 x1"),  # not a group
        ("dui", "x1 x2"),
        ("shun", "x4 x5 x6"),  # not an id: the rules name no 顺 (a valid group is a bi)
        ("long", "x1 x1 x1 x1"),  # unknown group id
    ],
)
def test_group_hu_rejects(kind: str, cards: str) -> None:
    with pytest.raises(BadCards):
        group_hu(kind, CARDS.parse(cards))


# --------------------------------------------------------------------------
# best_split: hand-checked holdings


def S(hand: str, card: str | None, self_drawn: bool = False) -> Split | None:
    c = C(hand)
    k = None if card is None else K(card)
    got = best_split(c, k, self_drawn)
    # the oracle must agree on the 胡数 (the groups may differ on a tie)
    want = ref.ref_best_split(c, k, self_drawn)
    assert (got is None) == (want is None)
    if got is not None:
        assert want is not None and got.hu == want.hu
        assert hand_hu(c, k, self_drawn) == got.hu
    else:
        assert hand_hu(c, k, self_drawn) == -1
    return got


def g(kind: str, cards: str) -> tuple[str, tuple[int, ...]]:
    return (kind, tuple(sorted(CARDS.parse(cards))))


def test_kan_in_hand_big_and_small() -> None:
    # 坎 d3 (6) + the run x4 x5 x6 (0): 6 cards, no pair.
    s = S("d3 d3 d3 x4 x5", "x6")
    assert s == Split((g("bi", "x4 x5 x6"), g("kan", "d3 d3 d3")), None, 6)
    # the same with a small 坎: 3
    s = S("x3 x3 x3 d4 d5", "d6")
    assert s is not None and s.hu == 3


def test_peng_on_another_players_card() -> None:
    # d8 d8 + d8 discarded = 碰 (big 3) + x4 x5 x6 (0).  No other reading: a
    # 6-card holding has no pair and d8 has no x8 to mix with.
    s = S("d8 d8 x4 x5 x6", "d8")
    assert s == Split((g("bi", "x4 x5 x6"), g("peng", "d8 d8 d8")), None, 3)
    s = S("x8 x8 d4 d5 d6", "x8")
    assert s is not None and s.hu == 1  # small 碰


def test_pair_completed_by_own_card_counts_kan() -> None:
    # D-ZP5: one's own card on a pair makes a 坎/扫: d8 6, x8 3.
    assert S("d8 d8 x4 x5 x6", "d8", self_drawn=True) == Split(
        (g("bi", "x4 x5 x6"), g("kan", "d8 d8 d8")), None, 6
    )
    s = S("x8 x8 d4 d5 d6", "x8", self_drawn=True)
    assert s is not None and s.hu == 3


def test_runs_with_value_in_hand() -> None:
    # Each: the run (value from §5) + the pair x5 x5 (0).
    assert S("d1 d2 x5 x5", "d3").hu == 6  # 壹贰叁
    assert S("x1 x2 x5 x5", "x3").hu == 3  # 一二三
    assert S("d2 d7 x5 x5", "d10").hu == 6  # 贰柒拾
    assert S("x2 x7 x5 x5", "x10").hu == 3  # 二七十
    assert S("x2 x10 d5 d5", "x7") == Split((g("bi", "x2 x7 x10"),), (14, 14), 3)


def test_groups_worth_nothing() -> None:
    # A plain run + pair x9: wins, 0 胡数.
    assert S("x4 x5 x9 x9", "x6") == Split((g("bi", "x4 x5 x6"),), (8, 8), 0)
    # 大大小 d5 d5 x5 + pair x9: 0.
    assert S("d5 d5 x9 x9", "x5") == Split((g("bi", "d5 d5 x5"),), (8, 8), 0)
    # a lone pair
    assert S("x3", "x3") == Split((), (2, 2), 0)


def test_kaizhao_when_the_kan_cannot_stay_whole() -> None:
    # x6 x6 x6 x4 x4 + x6 discarded.  Kept whole: 坎 + {x4 x4 x6} — not a group.
    # As 开招 (small 6) + pair x4 x4: 6.
    assert S("x6 x6 x6 x4 x4", "x6") == Split((g("kaizhao", "x6 x6 x6 x6"),), (3, 3), 6)
    # big: 开招 9
    assert S("d6 d6 d6 x4 x4", "d6").hu == 9


def test_saochuan_on_own_card() -> None:
    # One's own 4th card of a 坎 is a compulsory 扫穿: d6 12 (+ pair x4), x6 9.
    assert S("d6 d6 d6 x4 x4", "d6", self_drawn=True) == Split(
        (g("saochuan", "d6 d6 d6 d6"),), (3, 3), 12
    )
    assert S("x6 x6 x6 d4 d4", "x6", self_drawn=True).hu == 9


def test_rules_example_kan_d9_and_d7_d8() -> None:
    # D-ZP9's example: 坎 d9 d9 d9 and d7 d8, + d9 (another player's).
    # Kept whole: 坎 6 + d7 d8 d9 0 = 6.  As 开招: 9, but d7 d8 are left
    # over, neither a pair nor a group, so that reading is not a split at
    # all: the answer is 6, not 9.
    s = S("d9 d9 d9 d7 d8", "d9")
    assert s == Split((g("bi", "d7 d8 d9"), g("kan", "d9 d9 d9")), None, 6)
    # On his own draw it is a compulsory 扫穿 and d7 d8 alone do not split.
    assert S("d9 d9 d9 d7 d8", "d9", self_drawn=True) is None


def test_dzp9_both_readings_valid_kan_kept_wins() -> None:
    # 坎 d1 + d2 d3 x4 d4 d4, + d1 discarded:
    #   kept whole: 坎 6 + 壹贰叁 6 + d4 d4 x4 0 = 12;
    #   开招 9 + {d2 d3 x4 d4 d4}: d2 d3 d4 leaves x4 d4, d4 d4 x4 leaves
    #   d2 d3, pair d4 leaves d2 d3 x4 — no split.  Only the first reading.
    s = S("d1 d1 d1 d2 d3 x4 d4 d4", "d1")
    assert s is not None and s.hu == 12
    assert g("kan", "d1 d1 d1") in s.groups and g("bi", "d1 d2 d3") in s.groups
    # 坎 d1 + d2 d3 d4 x4 x4, + d1:
    #   kept whole: 坎 6 + 壹贰叁 6 + x4 x4 d4 0 = 12;
    #   开招 9 + d2 d3 d4 0 + pair x4 x4 = 9.  Both split; 12 is used.
    s = S("d1 d1 d1 d2 d3 d4 x4 x4", "d1")
    assert s == Split(
        (g("bi", "x4 x4 d4"), g("kan", "d1 d1 d1"), g("bi", "d1 d2 d3")), None, 12
    )


def test_dzp9_both_readings_valid_kaizhao_wins() -> None:
    # 坎 d9 + x9 x9 d6 d7 d8, + d9 discarded:
    #   kept whole: 坎 6 + x9 x9 d9 0 + d6 d7 d8 0 = 6;
    #   开招 9 + d6 d7 d8 0 + pair x9 x9 = 9.  Both split; 9 is used.
    s = S("d9 d9 d9 x9 x9 d6 d7 d8", "d9")
    assert s == Split((g("bi", "d6 d7 d8"), g("kaizhao", "d9 d9 d9 d9")), (8, 8), 9)


def test_dzp9_kaizhao_only_reading_by_count() -> None:
    # 坎 d9 + d6 d7 d8, + d9: 7 cards.  Kept whole leaves 4 cards with the
    # card (no split of 4); 开招 (4) + d6 d7 d8 = 9.
    assert S("d9 d9 d9 d6 d7 d8", "d9") == Split(
        (g("bi", "d6 d7 d8"), g("kaizhao", "d9 d9 d9 d9")), None, 9
    )


def test_dzp9_tie_keeps_the_kan() -> None:
    # 坎 x1 + x2 x3 x4 d4 d4, + x1:
    #   kept whole: 坎 3 + 一二三 3 + d4 d4 x4 0 = 6;
    #   开招 6 + x2 x3 x4 0 + pair d4 d4 = 6.  A tie: the 坎 is kept (documented).
    s = S("x1 x1 x1 x2 x3 x4 d4 d4", "x1")
    assert s == Split((g("kan", "x1 x1 x1"), g("bi", "x1 x2 x3"), g("bi", "x4 d4 d4")), None, 6)


def test_kan_is_never_broken_for_a_run() -> None:
    # x1 x2 x2 x2 + x3: x1 x2 x3 + pair x2 x2 would fit, but x2 x2 x2 is a
    # 坎 of the hand: 坎 + {x1, x3} is no split.
    assert S("x1 x2 x2 x2", "x3") is None
    assert S("x1 x2 x2 x2", "x3", self_drawn=True) is None
    # nor for a 大大小: 坎 x5 + d5 + d5 → 坎 3 + pair d5, never x5 x5 d5 + x5 d5
    assert S("x5 x5 x5 d5", "d5") == Split((g("kan", "x5 x5 x5"),), (14, 14), 3)
    # x3 x3 x3 x4 x5 x4 x5 + x6 (8 cards: two groups + a pair).  Broken, it
    # would split: pair x3 x3 + x3 x4 x5 + x4 x5 x6.  Kept whole: 坎 + x4 x5 x6
    # + x4 x5 left over, not a pair — no split at all.
    assert S("x3 x3 x3 x4 x5 x4 x5", "x6") is None


def test_pair_plus_card_need_not_be_peng() -> None:
    # x2 x2 x7 x10 + x2 from another player: 碰 x2 (1) leaves x7 x10 — no;
    # 二七十 (3) + pair x2 x2 = 3.
    assert S("x2 x2 x7 x10", "x2") == Split((g("bi", "x2 x7 x10"),), (1, 1), 3)
    # x5 x5 x4 x6 + x5: 碰 leaves x4 x6 — no; x4 x5 x6 + pair x5 = 0.
    assert S("x5 x5 x4 x6", "x5") == Split((g("bi", "x4 x5 x6"),), (4, 4), 0)


def test_own_card_on_a_pair_is_a_compulsory_sao() -> None:
    # The same two holdings on one's own card: the three stay together, so
    # what is left (x7 x10; x4 x6) does not split.
    assert S("x2 x2 x7 x10", "x2", self_drawn=True) is None
    assert S("x5 x5 x4 x6", "x5", self_drawn=True) is None
    # d5 d5 x1 x2 x3 + d5: another's card 碰 3 + 一二三 3 = 6; own card 坎 6 + 3 = 9.
    assert S("d5 d5 x1 x2 x3", "d5").hu == 6
    assert S("d5 d5 x1 x2 x3", "d5", self_drawn=True).hu == 9


def test_best_of_several_readings() -> None:
    # x1 x1 x2 x2 x3 x3 x4 + x4 (8 cards: two groups + a pair).  Pairs tried:
    #   x1 x1 → x2 x3 x4 ×2 = 0;   x4 x4 → 一二三 ×2 = 6;
    #   x2 x2 or x3 x3 → an x1 without its x2 or x3 — no.   Best: 6.
    s = S("x1 x1 x2 x2 x3 x3 x4", "x4")
    assert s == Split((g("bi", "x1 x2 x3"), g("bi", "x1 x2 x3")), (3, 3), 6)
    # x1 x2 x3 x1 x2 + d2 d7 d10 + x3 (9 cards, no pair):
    #   一二三 ×2 (3+3) + 贰柒拾 (6) = 12, the only reading.
    assert S("x1 x2 x3 x1 x2 d2 d7 d10", "x3").hu == 12
    # d1 d2 d3 d4 d5 + d6: 壹贰叁 (6) + d4 d5 d6 (0) = 6, the only reading.
    assert S("d1 d2 d3 d4 d5", "d6").hu == 6
    # x2 x2 d2 d2 x7 x8 x9 x10 + x10 (9 cards): d2 needs d2 d2 x2 (d1 d3 d7
    # absent), leaving x2 x7 x8 x9 x10 x10: 二七十 3 + x8 x9 x10 0.  Total 3.
    assert S("x2 x2 d2 d2 x7 x8 x9 x10", "x10").hu == 3


def test_hand_alone() -> None:
    # D-ZP4, card None: x1 x2 x3 (3) + pair d5 = 3; 坎 d1 (6) + pair x5 = 6.
    assert S("x1 x2 x3 d5 d5", None).hu == 3
    assert S("d1 d1 d1 x5 x5", None) == Split((g("kan", "d1 d1 d1"),), (4, 4), 6)
    assert S("", None) == Split((), None, 0)
    assert S("x1 x2", None) is None


def test_sizes_that_cannot_split() -> None:
    # 3k+1 cards never split into 3s and at most one pair.
    assert S("x1 x2 x3", "x4") is None
    assert S("x1 x1 x2 x2 x3 x3", "d9") is None


def test_bad_hands() -> None:
    with pytest.raises(BadCards, match="扫穿"):
        best_split(C("x1 x1 x1 x1 x2"), K("x3"))
    with pytest.raises(BadCards):
        best_split([0] * 19, 0)
    with pytest.raises(BadCards):
        best_split(C("x1 x2"), 20)
    with pytest.raises(BadCards):
        waits(C("x1 x1 x1 x1"))


def test_result_does_not_depend_on_the_memo() -> None:
    hand, card = C("x1 x1 x1 x2 x3 x4 d4 d4"), K("x1")
    first = best_split(hand, card, False)
    G._MEMO.clear()
    assert best_split(hand, card, False) == first


# --------------------------------------------------------------------------
# waits


def test_waits_hand_only() -> None:
    # x1 x2 d5 d5 (4 cards) + c = 5: one group + the pair.
    #   x1 x2 c: c = x3 (一二三, 3) with pair d5;  d5 d5 c + pair from x1 x2: no.
    hand = C("x1 x2 d5 d5")
    assert waits(hand, min_hu=0) == [K("x3")]
    assert waits(hand, min_hu=3) == [K("x3")]
    assert waits(hand, min_hu=4) == []
    # melds: 扫 d10 (6) → 9 < 10; + 碰 d4 (3) → 12 ≥ 10
    sao = M("sao", "d10 d10 d10")
    assert waits(hand, [sao]) == []
    assert waits(hand, [sao, M("peng", "d4 d4 d4")]) == [K("x3")]


def test_waits_skip_a_kind_all_visible() -> None:
    # x3 would win (above), but 碰 x3 + 吃 x3 x4 x5 show all four x3.
    hand = C("x1 x2 d5 d5")
    assert waits(hand, [M("peng", "x3 x3 x3")], min_hu=0) == [K("x3")]
    assert waits(hand, [M("peng", "x3 x3 x3"), M("chi", "x3 x4 x5")], min_hu=0) == []


def test_waits_kan_in_hand() -> None:
    # d6 d6 d6 x4 x4 + c (6 cards, two groups):
    #   c = x4: 坎 6 + 碰 x4 1 = 7;  c = d4: 坎 6 + x4 x4 d4 0 = 6;
    #   c = d6: kept whole leaves x4 x4 d6 — no; 开招 9 + pair x4 = 9.
    hand = C("d6 d6 d6 x4 x4")
    assert waits(hand, min_hu=0) == [K("x4"), K("d4"), K("d6")]
    assert waits(hand, min_hu=7) == [K("x4"), K("d6")]
    assert waits(hand, min_hu=9) == [K("d6")]
    assert waits(hand, min_hu=10) == []


def test_waits_fourth_card_of_a_table_sao() -> None:
    # Hand x1 x2 x3 d5 d5 alone: 一二三 3 + pair = 3; 扫 d9 on the table 6.
    #   c = d5: 碰 3 + 3 + 6 = 12;  c = x5: d5 d5 x5 0 + 3 + 6 = 9;
    #   c = d9 (D-ZP9): the 扫 becomes a 开招 (9), the hand alone 3: 12.
    hand = C("x1 x2 x3 d5 d5")
    sao = M("sao", "d9 d9 d9")
    assert waits(hand, [sao]) == [K("d5"), K("d9")]
    assert waits(hand, [sao], min_hu=0) == [K("x5"), K("d5"), K("d9")]
    assert waits(hand, [M("guosao", "d9 d9 d9")]) == [K("d5"), K("d9")]


def test_waits_fourth_card_of_a_table_peng_only_when_drawn() -> None:
    # Same hand, 碰 d9 (3): alone 3 + 3 = 6;  c = d5: 3 + 3 + 3 = 9 < 10.
    # A drawn d9 makes the 碰 a 开招 (D-ZP9): 9 + 3 = 12; a discarded one cannot.
    hand = C("x1 x2 x3 d5 d5")
    peng = M("peng", "d9 d9 d9")
    assert waits(hand, [peng]) == []
    assert waits(hand, [peng], drawn=True) == [K("d9")]


# --------------------------------------------------------------------------
# Properties: order independence, agreement with the reference

_GROUPS = [
    tuple(sorted((a, b, c)))
    for a in range(20)
    for b in range(a, 20)
    for c in range(b, 20)
    if ref.ref_valid_group((a, b, c))
]


@st.composite
def holdings(draw: st.DrawFn, max_groups: int = 3) -> tuple[list[int], int | None, bool]:
    """A hand + winning card, mostly built from valid groups (so that many
    win), sometimes with a card too many or too few; no kind 4 times in the
    hand."""
    cards: list[int] = []
    for _ in range(draw(st.integers(0, max_groups))):
        cards.extend(draw(st.sampled_from(_GROUPS)))
    if draw(st.booleans()):
        k = draw(st.integers(0, 19))
        cards += [k, k]
    if draw(st.integers(0, 3)) == 0:
        cards.append(draw(st.integers(0, 19)))
    if cards and draw(st.integers(0, 3)) == 0:
        cards.pop(draw(st.integers(0, len(cards) - 1)))
    cards = draw(st.permutations(cards))
    card = None
    if cards and draw(st.integers(0, 5)) > 0:
        card = cards.pop()
    hand = counts(cards, 20)
    assume(max(hand) <= 3 and (card is None or hand[card] <= 3))
    return hand, card, draw(st.booleans())


def _check_split(hand: list[int], card: int | None, s: Split) -> None:
    """The split uses exactly hand + card, every group is valid and scored."""
    used = [k for _, cards in s.groups for k in cards] + list(s.pair or ())
    whole = [k for k in range(20) for _ in range(hand[k])] + ([card] if card is not None else [])
    assert sorted(used) == sorted(whole)
    for kind, cards in s.groups:
        if len(cards) == 3:
            assert valid_group(cards)
    assert s.pair is None or s.pair[0] == s.pair[1]
    assert s.hu == sum(group_hu(kind, cards) for kind, cards in s.groups)
    for k in range(20):  # a 坎 of the hand is in one identical group
        if hand[k] == 3:
            assert any(cards[0] == cards[-1] == k and len(cards) >= 3 for _, cards in s.groups)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(holdings())
def test_agrees_with_reference(h: tuple[list[int], int | None, bool]) -> None:
    hand, card, self_drawn = h
    got = best_split(hand, card, self_drawn)
    want = ref.ref_best_split(hand, card, self_drawn)
    assert (got is None) == (want is None)
    if got is not None:
        assert want is not None and got.hu == want.hu
        _check_split(hand, card, got)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(holdings(max_groups=6))
def test_agrees_with_reference_larger(h: tuple[list[int], int | None, bool]) -> None:
    hand, card, self_drawn = h
    got = best_split(hand, card, self_drawn)
    want = ref.ref_best_split(hand, card, self_drawn)
    assert (got is None) == (want is None)
    if got is not None:
        assert want is not None and got.hu == want.hu
        _check_split(hand, card, got)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(holdings(max_groups=6), st.randoms(use_true_random=False))
def test_order_independent(h: tuple[list[int], int | None, bool], rnd: random.Random) -> None:
    hand, card, self_drawn = h
    cards = [k for k in range(20) for _ in range(hand[k])]
    first = best_split(counts(cards, 20), card, self_drawn)
    rnd.shuffle(cards)
    G._MEMO.clear()
    again = best_split(counts(CARDS.parse(CARDS.format_seq(cards)), 20), card, self_drawn)
    assert again == first


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(holdings(max_groups=2), st.integers(0, 12), st.booleans())
def test_waits_agree_with_reference(
    h: tuple[list[int], int | None, bool], min_hu: int, drawn: bool
) -> None:
    hand, card, _ = h
    if card is not None:
        hand = list(hand)
        if hand[card] < 3:
            hand[card] += 1
    melds = [M("sao", "d9 d9 d9"), M("peng", "x2 x2 x2")]
    melds = [m for m in melds if hand[m.cards[0]] == 0]
    assert waits(hand, melds, min_hu, drawn=drawn) == ref.ref_waits(hand, melds, min_hu, drawn)
