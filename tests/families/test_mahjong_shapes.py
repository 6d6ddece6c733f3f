"""Mahjong hand shapes (qipai.families.mahjong.shapes) against hand-checked
examples and against the brute-force reference (…mahjong.reference).

Rule source: docs/variants/mahjong-common.md, "Hand shapes".
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qipai.core.cards import counts
from qipai.core.errors import BadCards
from qipai.families.mahjong import reference as ref
from qipai.families.mahjong.shanten import shanten, shanten_qidui, shanten_standard
from qipai.families.mahjong.shapes import (
    is_qidui,
    is_standard,
    qidui_quads,
    standard_decompositions,
    waits,
)
from qipai.families.mahjong.tiles import TILES


def C(text: str) -> list[int]:
    return counts(TILES.parse(text), 34)


def K(text: str) -> list[int]:
    return TILES.parse(text)


# --------------------------------------------------------------------------
# Hand-checked examples


FIVE_MIXES = [
    "123m 456m 789p 234s 55s",  # 4 runs + pair
    "123m 456p 789s 999m EE",  # 3 runs + 1 triplet
    "123m 456p 222s 777s 99p",  # 2 runs + 2 triplets
    "789s 111m 555p EEE CC",  # 1 run + 3 triplets
    "111m 999p 555s NNN PP",  # 4 triplets
]


@pytest.mark.parametrize("hand", FIVE_MIXES)
def test_five_basic_mixes_win(hand: str) -> None:
    c = C(hand)
    assert is_standard(c)
    assert shanten_standard(c) == -1
    assert standard_decompositions(c)


def test_one_reading_spelled_out() -> None:
    # 123m 456p 789s 999m EE: only one reading.
    assert standard_decompositions(C("123m 456p 789s 999m EE")) == [
        (27, (("kezi", 8), ("shunzi", 0), ("shunzi", 12), ("shunzi", 24)))
    ]


def test_seven_pairs_that_is_also_standard() -> None:
    c = C("11223344556677m")
    assert is_qidui(c)
    assert qidui_quads(c) == 0
    assert is_standard(c)
    # Three readings: eyes 1m (234 234 567 567), 4m (123 123 567 567),
    # 7m (123 123 456 456).
    assert standard_decompositions(c) == [
        (0, (("shunzi", 1), ("shunzi", 1), ("shunzi", 4), ("shunzi", 4))),
        (3, (("shunzi", 0), ("shunzi", 0), ("shunzi", 4), ("shunzi", 4))),
        (6, (("shunzi", 0), ("shunzi", 0), ("shunzi", 3), ("shunzi", 3))),
    ]


def test_seven_pairs_with_a_quad() -> None:
    c = C("11112233445566m")
    assert is_qidui(c)
    assert qidui_quads(c) == 1
    assert shanten_qidui(c) == -1
    # 11 + 123 123 456 456 as well
    assert is_standard(c)
    assert qidui_quads(C("11112222334455m")) == 2
    assert not is_qidui(C("11223344556678m"))
    assert qidui_quads(C("11223344556678m")) == 0
    assert not is_qidui(C("112233445566m"))  # 12 tiles


def test_nine_gates() -> None:
    base = K("1112345678999m")
    for extra in range(9):
        assert is_standard(counts(base + [extra], 34)), TILES.token(extra)
    assert waits(counts(base, 34)) == list(range(9))
    assert shanten_standard(counts(base, 34)) == 0


def test_waits_on_the_two_ends() -> None:
    # 123 456 789m + 1234p: 1p (11p + 234p) or 4p (123p + 44p).
    c = C("123456789m 1234p")
    assert waits(c) == K("1p 4p") == [9, 12]
    assert shanten_standard(c) == 0


def test_honors_do_not_form_runs() -> None:
    assert not is_standard(C("EEE SSS WWW NCF PP"))
    assert not is_standard(C("123m 456m 789m ESW PP"))
    assert not is_standard(C("123m 456m 789m CFP EE"))
    assert waits(C("123m 456m 789m EE SW")) == []
    assert waits(C("123m 456m 789m EEE S")) == K("S")
    assert waits(C("123m 456m 789m EE CF")) == []


def test_runs_do_not_cross_suits() -> None:
    assert not is_standard(C("89m1p 123s 456s 789s 11p"))
    assert not is_standard(C("9m12p 123s 456s 789s 55p"))
    assert waits(C("123s 456s 789s 55p 9m 1p")) == []


def test_waits_never_make_a_fifth_copy() -> None:
    # 1111m + three runs: only a fifth 1m would finish it.
    c = C("1111m 234p 567p 789s")
    assert waits(c) == []
    assert ref.ref_waits(c) == []
    # Shanten, by the usual convention, does not look at tile availability.
    assert shanten_standard(c) == 0
    # 1112m: waits 2m (111 + 22) and 3m (11 + 123); never 1m.
    assert waits(C("1112m 234p 567p 789s")) == K("2m 3m")


def test_waits_exclude_tiles_all_visible_in_held() -> None:
    # 4 concealed tiles, melds 1111s (kong), 456m, 789p: the 1s wait is dead.
    hand = C("23s 55s")
    assert waits(hand) == K("1s 4s")
    held = C("23s 55s 1111s 456m 789p")
    assert waits(hand, held=held) == K("4s")


def test_waits_with_another_shape() -> None:
    c = C("1122334455667m")
    assert waits(c, is_win=is_qidui) == K("7m")
    # standard: 11 223344 5566 7 ... 1m 4m 7m (and the qidui wait 7m)
    assert waits(c) == K("1m 4m 7m")


def test_small_totals() -> None:
    assert is_standard(C("EE"))  # four melds on the table
    assert is_standard(C("123m EE"))
    assert not is_standard(C("EEE"))
    assert not is_standard(C("123m EEE"))
    assert not is_standard(C("123m 456m 789m 123p 456p EE"))  # 17 tiles
    assert standard_decompositions(C("12m")) == []
    assert waits(C("E")) == K("E")
    assert waits(C("1m 23p 555s 9s"), is_win=is_standard) == []


def test_shanten_examples() -> None:
    assert shanten(C("123m 456p 789s 999m EE")) == -1
    assert shanten(C("123456789m 1234p")) == 0
    # 3 sets + 13s + loose 5s 9s: needs 2s and a pair partner → 1-shanten
    assert shanten_standard(C("123m 456p 789s 13s 5s 9s")) == 1
    # thirteen lone tiles: no partial set at all
    c = C("19m 19p 19s ESWNCFP")
    assert shanten_standard(c) == 8
    assert shanten_qidui(c) == 6
    assert shanten(c) == 6
    # six pairs + two loose: seven pairs is ready, standard is far
    c = C("1199m 1199p 1199s E C")
    assert shanten_qidui(c) == 0
    assert shanten_standard(c) == 3
    assert shanten(c) == 0
    # with melds: 2 on the table, 123m 45p 11s E in hand → ready after E
    c = C("123m 45p 11s E")
    assert shanten_standard(c, n_melds=2) == 0
    assert shanten(c, n_melds=2) == 0
    assert shanten_standard(C("EE"), n_melds=4) == -1
    assert shanten_standard(C("E"), n_melds=4) == 0


def test_shanten_is_still_reached_through_shapes_with_a_warning() -> None:
    from qipai.families.mahjong import shapes

    for name, moved in (("shanten", shanten), ("shanten_standard", shanten_standard),
                        ("shanten_qidui", shanten_qidui)):
        with pytest.warns(DeprecationWarning, match="qipai.families.mahjong.shanten"):
            assert getattr(shapes, name) is moved
    with pytest.raises(AttributeError):
        shapes.no_such_function  # noqa: B018


def test_bad_input_raises() -> None:
    with pytest.raises(BadCards):
        shanten_standard(C("123m 456m 789m 123p"))  # 12 tiles
    with pytest.raises(BadCards):
        shanten_standard(C("123m 45p 11s E"), n_melds=5)
    with pytest.raises(BadCards):
        waits(C("123m 456m 789m 12p"))  # 11 tiles is not 3k+1
    with pytest.raises(BadCards):
        is_standard([0] * 33)
    with pytest.raises(BadCards):
        shanten_qidui(C("112233m"))


# --------------------------------------------------------------------------
# Property tests against the reference

POOLS = [
    list(range(9)),  # one suit: dense, many wins and waits
    list(range(9, 18)) + list(range(27, 34)),  # a suit and the honors
    list(range(18)),  # two suits
    list(range(34)),  # anything
]


@st.composite
def hands(draw: st.DrawFn, total: int, pools: list[list[int]] = POOLS) -> list[int]:
    """A count vector of ``total`` tiles, each kind 0–4, from a random pool."""
    pool = draw(st.sampled_from(pools))
    assert len(pool) * 4 >= total
    c = [0] * 34
    for _ in range(total):
        free = [k for k in pool if c[k] < 4]
        c[draw(st.sampled_from(free))] += 1
    return c


@st.composite
def near_wins(draw: st.DrawFn, n_sets: int, drop: int) -> list[int]:
    """A standard hand of ``n_sets`` sets + a pair, less ``drop`` tiles."""
    while True:
        tiles: list[int] = [draw(st.integers(0, 33))] * 2
        for _ in range(n_sets):
            if draw(st.booleans()):
                tiles += [draw(st.integers(0, 33))] * 3
            else:
                s, r = draw(st.integers(0, 2)), draw(st.integers(0, 6))
                tiles += [9 * s + r, 9 * s + r + 1, 9 * s + r + 2]
        c = counts(tiles, 34)
        if max(c) <= 4:
            break
    for _ in range(drop):
        c[draw(st.sampled_from([k for k in range(34) if c[k]]))] -= 1
    return c


def _readd(pair: int, sets: tuple[tuple[str, int], ...]) -> list[int]:
    c = [0] * 34
    c[pair] += 2
    for name, k in sets:
        if name == "kezi":
            c[k] += 3
        else:
            assert name == "shunzi" and k < 27 and k % 9 <= 6
            c[k] += 1
            c[k + 1] += 1
            c[k + 2] += 1
    return c


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WIN_SIZES = st.one_of(
    hands(14), hands(11), hands(8), near_wins(4, 0), near_wins(3, 0), near_wins(2, 0)
)
WAIT_SIZES = st.one_of(hands(13), hands(10), hands(7), near_wins(4, 1), near_wins(3, 1))


@FAST
@given(WIN_SIZES)
def test_is_standard_matches_reference(c: list[int]) -> None:
    assert is_standard(c) == ref.ref_is_standard(c)
    assert is_qidui(c) == ref.ref_is_qidui(c)
    assert qidui_quads(c) == ref.ref_qidui_quads(c)


@FAST
@given(WIN_SIZES)
def test_decompositions_match_reference_and_readd(c: list[int]) -> None:
    decs = standard_decompositions(c)
    assert decs == ref.ref_standard_decompositions(c)
    assert len(set(decs)) == len(decs)
    assert bool(decs) == is_standard(c)
    for pair, sets in decs:
        assert list(sets) == sorted(sets)
        assert _readd(pair, sets) == c


@pytest.mark.slow
@FAST
@given(WAIT_SIZES, st.data())
def test_waits_match_reference(c: list[int], data: st.DataObject) -> None:
    w = waits(c)
    assert w == ref.ref_waits(c)
    assert all(c[t] < 4 for t in w)
    assert waits(c, is_win=is_qidui) == ref.ref_waits(c, is_win=ref.ref_is_qidui)
    # held = hand + some more visible tiles
    held = [n + data.draw(st.integers(0, 4 - n)) for n in c]
    assert waits(c, held=held) == ref.ref_waits(c, held=held)
    assert waits(c, held=held) == [t for t in w if held[t] < 4]
    if w:
        assert shanten_standard(c, 4 - sum(c) // 3) == 0


@SLOW
@given(
    st.one_of(
        hands(14, POOLS[1:]).map(lambda c: (c, 0)),
        hands(13, POOLS[1:]).map(lambda c: (c, 0)),
        hands(11).map(lambda c: (c, 1)),
        hands(8).map(lambda c: (c, 2)),
        near_wins(4, 1).map(lambda c: (c, 0)),
        near_wins(3, 0).map(lambda c: (c, 1)),
    )
)
def test_shanten_matches_reference(hand: tuple[list[int], int]) -> None:
    c, n_melds = hand
    s = shanten_standard(c, n_melds)
    assert s == ref.ref_shanten_standard(c, n_melds)
    assert (s == -1) == is_standard(c)
    if n_melds == 0:
        assert shanten_qidui(c) == ref.ref_shanten_qidui(c)
        assert shanten(c) == min(s, shanten_qidui(c))
        assert (shanten_qidui(c) == -1) == is_qidui(c)


@SLOW
@given(
    st.one_of(
        hands(8).map(lambda c: (c, 2)),
        hands(5).map(lambda c: (c, 3)),
        hands(7).map(lambda c: (c, 2)),
        hands(4).map(lambda c: (c, 3)),
    )
)
def test_block_shanten_is_the_tile_distance(hand: tuple[list[int], int]) -> None:
    # The block formula equals "tiles missing from the nearest complete hand,
    # minus one" (both ignoring the four-copy limit), checked by its definition.
    c, n_melds = hand
    assert shanten_standard(c, n_melds) == ref.ref_shanten_distance(c, n_melds)
