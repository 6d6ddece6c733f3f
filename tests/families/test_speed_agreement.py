"""The fast paths answer exactly what the plain references answer.

Every table-driven or short-cut path is compared with its plain twin on a
seeded corpus: random hands, complete hands of every 桂林 shape, near
misses (a complete hand with one tile swapped), with and without melds.
No timings here: ``benchmarks/run.py`` measures, this only checks answers.
"""

from __future__ import annotations

import random

import pytest

from qipai.bots import play_hand
from qipai.core import table as table_module
from qipai.core.cards import counts
from qipai.core.errors import BadCards
from qipai.core.model import Meld, WinClaim
from qipai.core.ruleset import load
from qipai.families.mahjong import reference as ref
from qipai.families.mahjong import shanten as shanten_mod
from qipai.families.mahjong import shapes
from qipai.families.mahjong.hand_checks import valid_bytes
from qipai.families.mahjong.scoring_kit import check_counts
from qipai.variants.guilin_mahjong import patterns as guilin

SEED = 20240605


def _complete(rng: random.Random) -> list[int]:
    """A random complete 14-tile hand of one of the 桂林 shapes."""
    while True:
        c = [0] * 34
        kind = rng.random()
        if kind < 0.15:  # 七对 / 豪华七对
            for k in rng.sample(range(34), 7):
                c[k] += 2
            if rng.random() < 0.3:
                a, b = (k for k in range(34) if c[k]).__next__(), None
                c[a] += 2
                b = next(k for k in range(33, -1, -1) if c[k] == 2)
                c[b] -= 2
        elif kind < 0.25:  # 烂牌 / 七星烂
            honors = rng.sample(range(27, 34), rng.choice((5, 6, 7)))
            for k in honors:
                c[k] = 1
            need = 14 - len(honors)
            picks: list[int] = []
            for suit in rng.sample(range(3), 3):
                ranks = rng.choice([(0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (0, 3, 7),
                                    (1, 4, 8), (0, 5, 8), (0, 3, 8)])
                picks += [suit * 9 + r for r in ranks]
            if len(picks) < need:
                continue
            for k in rng.sample(picks, need):
                c[k] = 1
        elif kind < 0.32:  # 字一色, any grouping
            for k in rng.choices(range(27, 34), k=14):
                c[k] += 1
        else:  # standard
            c[rng.randrange(34)] += 2
            for _ in range(4):
                if rng.random() < 0.6:
                    suit, start = rng.randrange(3), rng.randrange(7)
                    for k in range(suit * 9 + start, suit * 9 + start + 3):
                        c[k] += 1
                else:
                    c[rng.randrange(34)] += 3
        if max(c) <= 4 and sum(c) == 14:
            return c


def _near(rng: random.Random, c: list[int]) -> list[int]:
    c = list(c)
    old = rng.choice([k for k in range(34) if c[k]])
    new = rng.choice([k for k in range(34) if k != old and c[k] < 4])
    c[old] -= 1
    c[new] += 1
    return c


def _random(rng: random.Random, size: int = 14) -> list[int]:
    deck = [k for k in range(34) for _ in range(4)]
    return counts(rng.sample(deck, size), 34)


@pytest.fixture(scope="module")
def corpus14() -> list[list[int]]:
    rng = random.Random(SEED)
    out = []
    for _ in range(1500):
        done = _complete(rng)
        out += [done, _near(rng, done), _random(rng)]
    return out


def _minus_one(rng: random.Random, c: list[int]) -> list[int]:
    c = list(c)
    c[rng.choice([k for k in range(34) if c[k]])] -= 1
    return c


def test_is_standard_and_qidui_agree_with_the_reference(corpus14):
    for c in corpus14:
        assert shapes.is_standard(c) == ref.ref_is_standard(c), c
        assert shapes.is_qidui(c) == ref.ref_is_qidui(c), c
        assert shapes.qidui_quads(c) == ref.ref_qidui_quads(c), c


def test_is_standard_beyond_the_tables():
    """Counts outside 0..4 and other sizes take the plain path, same answers."""
    rng = random.Random(SEED + 1)
    for _ in range(300):
        c = [0] * 34
        for k in rng.choices(range(34), k=rng.choice((2, 5, 8, 11, 14, 13, 17))):
            c[k] += 1
        if rng.random() < 0.3:
            c[rng.randrange(34)] = 5
        assert shapes.is_standard(c) == ref.ref_is_standard(c), c


def test_standard_waits_agree_with_the_reference(corpus14):
    rng = random.Random(SEED + 2)
    for c in corpus14:
        hand = _minus_one(rng, c)
        assert shapes.waits(hand) == ref.ref_waits(hand), hand
        held = list(hand)
        held[rng.randrange(34)] = 4
        held = [max(a, b) for a, b in zip(held, hand)]
        assert shapes.waits(hand, held=held) == ref.ref_waits(hand, held=held), hand


def test_mahjong_library_confirms_standard_and_seven_pairs(corpus14):
    agari = pytest.importorskip("mahjong.agari").Agari()
    yaojiu = [0, 8, 9, 17, 18, 26, *range(27, 34)]
    for c in corpus14:
        kokushi = all(c[k] for k in yaojiu) and sum(c[k] for k in yaojiu) == 14
        if not kokushi:  # riichi's 七対子 wants seven different pairs: no 豪华
            qidui = shapes.is_qidui(c) and 4 not in c
            assert agari.is_agari(c) == (shapes.is_standard(c) or qidui), c


def _random_melds(rng: random.Random, n: int) -> list[Meld]:
    melds = []
    for _ in range(n):
        r = rng.random()
        if r < 0.4:
            suit, start = rng.randrange(3), rng.randrange(7)
            k = suit * 9 + start
            melds.append(Meld("chi", (k, k + 1, k + 2)))
        elif r < 0.8:
            melds.append(Meld("peng", (rng.randrange(34),) * 3))
        else:
            melds.append(Meld(rng.choice(("angang", "minggang")), (rng.randrange(34),) * 4))
    return melds


def _honest(c: list[int], melds: list[Meld]) -> bool:
    total = list(c)
    for m in melds:
        for k in m.cards:
            total[k] += 1
    return max(total) <= 4


def test_guilin_win_shape_agrees_with_the_plain_shapes(corpus14):
    for c in corpus14:
        want = guilin._is_win_shape_plain(list(c), ())
        assert guilin.is_win_shape(c) == want, c
        assert guilin.is_win_shape_bytes(bytes(c)) == want, c
    rng = random.Random(SEED + 3)
    for _ in range(3000):
        n = rng.randrange(1, 5)
        melds = _random_melds(rng, n)
        size = 14 - 3 * n
        base = _complete(rng) if rng.random() < 0.5 else _random(rng)
        tiles = [k for k in range(34) for _ in range(base[k])][:size]
        if rng.random() < 0.2:  # all honors: 字一色 with melds
            tiles = rng.choices(range(27, 34), k=size)
            melds = [Meld("peng", (rng.randrange(27, 34),) * 3) for _ in range(n)]
        c = counts(tiles, 34)
        if not _honest(c, melds):
            with pytest.raises(BadCards):
                guilin.is_win_shape(c, melds)
            continue
        assert guilin.is_win_shape(c, melds) == guilin._is_win_shape_plain(c, melds)


def test_guilin_waits_agree_with_the_plain_loop(corpus14):
    rng = random.Random(SEED + 4)
    for c in corpus14[:1500]:
        hand = _minus_one(rng, c)
        tiles = [k for k in range(34) for _ in range(hand[k])]
        want = ref.ref_waits(hand, is_win=lambda x: guilin._is_win_shape_plain(x, ()))
        assert guilin.waits(tiles) == want, tiles


def test_valid_bytes_never_passes_what_the_full_check_rejects():
    rng = random.Random(SEED + 5)
    for _ in range(3000):
        n = rng.randrange(0, 5)
        melds = _random_melds(rng, n)
        c = _random(rng, 14 - 3 * n + rng.choice((0, 0, 0, 1, -1)))
        if rng.random() < 0.1:
            c[rng.randrange(34)] = rng.choice((-1, 5))
        if rng.random() < 0.05:
            melds.append(Meld("chi", (3, 4, 6)))
        try:
            check_counts(c, melds)
            ok = True
        except BadCards:
            ok = False
        try:
            b = valid_bytes(c, melds)
        except BadCards:
            assert not ok
            continue
        if b is not None:
            assert ok and b == bytes(c)


def test_guilin_evaluate_rejects_exactly_the_hands_without_a_reading(corpus14):
    rng = random.Random(SEED + 6)
    for c in corpus14[:3000]:
        tiles = [k for k in range(34) for _ in range(c[k])]
        rng.shuffle(tiles)
        claim = WinClaim(seat=1, hand=tuple(sorted(tiles[:13])), tile=tiles[13])
        ev = guilin.evaluate(claim, "zimo", 0, None)
        assert (ev is None) == (guilin._readings(list(c), ()) == []), c


@pytest.mark.parametrize("variant", ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"])
@pytest.mark.parametrize("bots", ["random", "greedy"])
def test_resolved_hooks_play_the_same_hands_as_pluggy(variant, bots, monkeypatch):
    rs = load(variant)
    seeds = range(12)
    fast = [play_hand(rs, seed=s, bots=bots) for s in seeds]
    monkeypatch.setattr(table_module, "resolved_hooks", lambda ruleset: ruleset.hook)
    slow = [play_hand(rs, seed=s, bots=bots) for s in seeds]
    for a, b in zip(fast, slow):
        assert a.state.actions == b.state.actions
        assert a.state.events == b.state.events
        assert a.result == b.result


@pytest.mark.slow
def test_shanten_agrees_with_the_reference(corpus14):
    rng = random.Random(SEED + 7)
    for c in corpus14[:1500]:
        hand = _minus_one(rng, c)
        assert shanten_mod.shanten_standard(hand) == ref.ref_shanten_standard(hand), hand
        assert shanten_mod.shanten_standard(c) == ref.ref_shanten_standard(c), c
    for _ in range(300):  # with melds: fewer concealed tiles
        n = rng.randrange(1, 5)
        hand = _random(rng, 3 * (4 - n) + rng.choice((1, 2)))
        assert shanten_mod.shanten_standard(hand, n) == ref.ref_shanten_standard(hand, n), hand


def test_plain_context_never_passes_what_check_context_rejects():
    from qipai.families.mahjong.scoring_kit import check_context

    for seat in (-1, 0, 1, 3, 4, None, True):
        for dealer in (-1, 0, 2, 4):
            for how in ("zimo", "dianpao", "qianggang", "other"):
                for from_seat in (None, -1, 0, 1, 2, 4, 1.0):
                    claim = WinClaim(seat=seat, hand=(), tile=0)
                    try:
                        check_context(claim, how, dealer, from_seat, 4, ("tianhu",))
                        ok = True
                    except (BadCards, TypeError):
                        ok = False
                    if guilin._plain_context(seat, how, dealer, from_seat, 4):
                        assert ok, (seat, dealer, how, from_seat)


def _shisanyao(rng: random.Random) -> list[int]:
    yaojiu = [0, 8, 9, 17, 18, 26, *range(27, 34)]
    c = [0] * 34
    for k in yaojiu:
        c[k] = 1
    c[rng.choice(yaojiu)] += 1
    return c


def test_guangxi_win_shape_agrees_with_the_plain_shapes(corpus14):
    from qipai.variants.guangxi_mahjong import patterns as guangxi

    rng = random.Random(SEED + 9)
    extra = []
    for _ in range(200):
        k = _shisanyao(rng)
        extra += [k, _near(rng, k)]
    for c in corpus14 + extra:
        want = guangxi._is_win_shape_plain(list(c), ())
        assert guangxi.is_win_shape(c) == want, c
        assert guangxi.is_win_shape_bytes(bytes(c)) == want, c
    for _ in range(2000):
        n = rng.randrange(1, 5)
        melds = _random_melds(rng, n)
        base = _complete(rng) if rng.random() < 0.5 else _random(rng)
        tiles = [k for k in range(34) for _ in range(base[k])][:14 - 3 * n]
        if rng.random() < 0.2:
            tiles = rng.choices(range(27, 34), k=14 - 3 * n)
            melds = [Meld("peng", (rng.randrange(27, 34),) * 3) for _ in range(n)]
        c = counts(tiles, 34)
        if _honest(c, melds):
            assert guangxi.is_win_shape(c, melds) == guangxi._is_win_shape_plain(c, melds)


def test_zipai_hand_packing_from_chunks_agrees_with_the_loop():
    from qipai.families.zipai import groups

    rng = random.Random(SEED + 10)
    for _ in range(3000):
        c = [rng.choice((0, 0, 0, 1, 1, 2, 3)) for _ in range(20)]
        fast = groups._Hand(c)
        plain = groups._Hand.__new__(groups._Hand)
        h = list(c)
        plain.kans = [k for k in range(20) if h[k] == 3]
        plain.kan_hu = sum(groups._KAN[k] for k in plain.kans)
        plain.base = groups._GUARDS + sum(h[k] << (3 * k) for k in range(20) if 0 < h[k] < 3)
        plain.n = sum(h[k] for k in range(20) if 0 < h[k] < 3)
        assert (list(fast.h), fast.kans, fast.kan_hu, fast.base, fast.n) == \
            (h, plain.kans, plain.kan_hu, plain.base, plain.n), c
    for bad in ([0] * 19, [4] + [0] * 19, [-1] + [0] * 19):
        with pytest.raises(BadCards):
            groups._Hand(bad)


def test_wide_int_buffers_take_the_plain_path(corpus14):
    """``bytes()`` of an array of wide ints is its raw memory, not its counts:
    such inputs must not reach the tables."""
    from array import array

    from qipai.variants.guangxi_mahjong import patterns as guangxi

    for c in corpus14[:600]:
        wide = array("q", c)
        assert shapes.is_standard(wide) == ref.ref_is_standard(c)
        assert shapes.is_qidui(wide) == ref.ref_is_qidui(c)
        assert shanten_mod.shanten(wide) == shanten_mod.shanten(c)
        assert guilin.is_win_shape(wide) == guilin.is_win_shape(c)
        assert guangxi.is_win_shape(wide) == guangxi.is_win_shape(c)
        assert valid_bytes(wide, ()) is None
