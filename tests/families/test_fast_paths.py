"""The recently added speed paths answer exactly what the plain paths answer.

Covered: the shape waits of :mod:`qipai.families.mahjong.win_shapes`
(``shape_waits_bytes``, ``segment_codes``, ``step_waits``) against a brute
force over the 34 kinds; the variants' ``SHAPE_SHIFT`` waits against their
``evaluate`` (a win is never outside the waits); the mahjong flow's
shortcuts (``hand_entry``, ``entry_after_discard``,
``qipai_window_actions``) against play with them switched off, against
``qipai_claim_actions`` seat by seat at played and at set-up positions,
and its kept hand entries against a fresh count; and the
table's fast paths (``Table.apply``'s listed-instance look-up,
``resolved_hooks``, the generated hook callers, skipping
``qipai_resolve_claims`` when everyone passed).

Every corpus is seeded; nothing here measures time (``benchmarks/`` does).
"""

from __future__ import annotations

import random
from itertools import combinations

import msgspec
import pytest
from pluggy import HookCallError

from qipai.bots import make_bots, play_hand, run_to_end
from qipai.core import table as table_module
from qipai.core.errors import IllegalAction
from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Chi, Discard, Hu, Marked, Meld, Melded, Pass, Peng, WinClaim, Window, Zimo,
)
from qipai.core.ruleset import load
from qipai.core.table import Table
from qipai.families.mahjong import shapes, suit_tables
from qipai.families.mahjong.flow import MahjongFlow
from qipai.families.mahjong.win_shapes import (
    LANPAI_SHIFT, SHISANYAO_SHIFT, segment_codes, shape_waits_bytes, step_waits,
    win_shape_bytes, win_shape_plain,
)
from qipai.variants.guangxi_mahjong import patterns as guangxi
from qipai.variants.guilin_mahjong import patterns as guilin
from test_speed_agreement import _near  # a near miss: one tile swapped for another kind

SEED = 20240611
VARIANTS = ("guilin-mahjong", "guangxi-mahjong")
SHIFTS = {"lanpai": LANPAI_SHIFT, "shisanyao": SHISANYAO_SHIFT}
SPECIAL = {LANPAI_SHIFT: guilin._special, SHISANYAO_SHIFT: guangxi._special}
YAOJIU = (0, 8, 9, 17, 18, 26, *range(27, 34))
#: rank sets of one suit a 烂牌 allows (pairwise at least 3 apart), by size
LAN_RANKS = {n: [s for s in combinations(range(9), n)
                 if all(b - a >= 3 for a, b in zip(s, s[1:]))] for n in range(4)}


# --------------------------------------------------------------------------
# Corpus helpers (counts are lists of 34; melds are qipai Melds)


def _deck_counts(rng: random.Random, n: int) -> list[int]:
    """``n`` tiles off the top of a shuffled 136-tile deck."""
    deck = [k for k in range(34) for _ in range(4)]
    rng.shuffle(deck)
    c = [0] * 34
    for k in deck[:n]:
        c[k] += 1
    return c


def _sets(rng: random.Random, n: int, honors: bool = False) -> list[tuple[int, int, int]]:
    out = []
    for _ in range(n):
        if not honors and rng.random() < 0.55:
            k = rng.randrange(3) * 9 + rng.randrange(7)
            out.append((k, k + 1, k + 2))
        else:
            k = rng.randrange(27, 34) if honors else rng.randrange(34)
            out.append((k, k, k))
    return out


def _standard(rng: random.Random, honors: bool = False) -> tuple[list[int], list[tuple[int, ...]]]:
    """A complete standard hand (4 sets + pair) and its sets."""
    while True:
        c = [0] * 34
        c[rng.randrange(27, 34) if honors else rng.randrange(34)] += 2
        sets = _sets(rng, 4, honors)
        for s in sets:
            for k in s:
                c[k] += 1
        if max(c) <= 4:
            return c, sets


def _qidui(rng: random.Random, quad: bool) -> list[int]:
    c = [0] * 34
    kinds = rng.sample(range(34), 6 if quad else 7)
    for k in kinds:
        c[k] = 2
    if quad:
        c[kinds[0]] = 4  # a quad counts as two pairs
    return c


def _lanpai(rng: random.Random) -> list[int]:
    """14 distinct tiles, suited ranks pairwise ≥ 3 apart in a suit, ≥ 5 honors."""
    honors = rng.choice((5, 6, 7))
    sizes = [3, 3, 3]
    for _ in range(9 - (14 - honors)):
        i = rng.choice([i for i in range(3) if sizes[i]])
        sizes[i] -= 1
    c = [0] * 34
    for k in rng.sample(range(27, 34), honors):
        c[k] = 1
    for suit, n in enumerate(sizes):
        for r in rng.choice(LAN_RANKS[n]):
            c[suit * 9 + r] = 1
    assert sum(c) == 14 and guilin.lanpai(c) == honors
    return c


def _shisanyao(rng: random.Random) -> list[int]:
    c = [0] * 34
    for k in YAOJIU:
        c[k] = 1
    c[rng.choice(YAOJIU)] += 1
    return c


def _ziyise(rng: random.Random) -> list[int]:
    """14 honors, any grouping."""
    while True:
        c = [0] * 34
        for k in rng.choices(range(27, 34), k=14):
            c[k] += 1
        if max(c) <= 4:
            return c


def _minus_one(rng: random.Random, c: list[int]) -> list[int]:
    c = list(c)
    c[rng.choice([k for k in range(34) if c[k]])] -= 1
    return c


def _meld_of(rng: random.Random, s: tuple[int, ...], spare: bool) -> Meld:
    """Set ``s`` as a claimed meld (a triplet may become a kong if ``spare``)."""
    src = rng.choice((1, 2, 3))
    if s[0] != s[1]:
        return Meld("chi", s, from_seat=src, claimed=rng.choice(s))
    k = s[0]
    r = rng.random()
    if spare and r < 0.2:
        return Meld("minggang", (k,) * 4, from_seat=src, claimed=k)
    if spare and r < 0.35:
        return Meld("angang", (k,) * 4, hidden=3)
    return Meld("peng", (k,) * 3, from_seat=src, claimed=k)


def _honest(c: list[int], melds: tuple[Meld, ...]) -> bool:
    total = list(c)
    for m in melds:
        for k in m.cards:
            total[k] += 1
    return max(total) <= 4 and min(c) >= 0


def _melded(rng: random.Random, n: int) -> tuple[list[int], tuple[Meld, ...]]:
    """A concealed part of ``14 - 3n`` tiles with ``n`` melds, near a win."""
    while True:
        r = rng.random()
        if r < 0.55:  # a complete standard hand with n of its sets laid down
            c, sets = _standard(rng)
            chosen = rng.sample(range(4), n)
            melds = []
            for i in chosen:
                for k in sets[i]:
                    c[k] -= 1
                melds.append(_meld_of(rng, sets[i], spare=c[sets[i][0]] == 0))
        elif r < 0.8:  # all honors, melds included (字一色 with melds)
            melds = [_meld_of(rng, s, spare=True) for s in _sets(rng, n, honors=True)]
            c = [0] * 34
            for k in rng.choices(range(27, 34), k=14 - 3 * n):
                c[k] += 1
        elif r < 0.9:  # honor melds, a suited concealed part
            melds = [_meld_of(rng, s, spare=True) for s in _sets(rng, n, honors=True)]
            c = _deck_counts(rng, 14 - 3 * n)
        else:  # random melds, random tiles
            melds = [_meld_of(rng, s, spare=True) for s in _sets(rng, n)]
            c = _deck_counts(rng, 14 - 3 * n)
        melds = tuple(melds)
        if _honest(c, melds):
            return c, melds


def _corpus(seed: int, size: int) -> list[tuple[list[int], tuple[Meld, ...]]]:
    """13-tile hands (``13 - 3 × melds`` concealed) of every kind: random,
    complete-minus-one of every shape, near misses, with melds."""
    rng = random.Random(seed)
    makers = [
        lambda: _standard(rng)[0], lambda: _standard(rng, honors=True)[0],
        lambda: _qidui(rng, False), lambda: _qidui(rng, True),
        lambda: _lanpai(rng), lambda: _shisanyao(rng), lambda: _ziyise(rng),
    ]
    out: list[tuple[list[int], tuple[Meld, ...]]] = []
    for i in range(size):
        done = makers[i % len(makers)]()
        out.append((_minus_one(rng, done), ()))
        out.append((_minus_one(rng, _near(rng, done)), ()))  # a near miss
        out.append((_deck_counts(rng, 13), ()))
        c, melds = _melded(rng, 1 + i % 4)
        out.append((_minus_one(rng, c), melds))
        if i % 3 == 0:
            c, melds = _melded(rng, 1 + i % 4)
            out.append((_minus_one(rng, _near(rng, c)), melds))
    return [(c, m) for c, m in out if _honest(c, m)]


@pytest.fixture(scope="module")
def corpus() -> list[tuple[list[int], tuple[Meld, ...]]]:
    return _corpus(SEED, 900)


def _plus(b: bytes, t: int) -> bytes:
    c = bytearray(b)
    c[t] += 1
    return bytes(c)


def _brute(b: bytes, melds: tuple[Meld, ...], shift: int) -> frozenset[int]:
    return frozenset(t for t in range(34)
                     if b[t] < 4 and win_shape_bytes(_plus(b, t), melds, shift))


# --------------------------------------------------------------------------
# 1. win_shapes: shape_waits_bytes, segment_codes, step_waits


@pytest.mark.parametrize("special", sorted(SHIFTS))
def test_shape_waits_equal_the_brute_force(corpus, special):
    shift = SHIFTS[special]
    seen = {"qidui": 0, "special": 0, "honors": 0, "honors_melds": 0, "standard_melds": 0,
            "lanpai_other": 0}
    for c, melds in corpus:
        b = bytes(c)
        want = _brute(b, melds, shift)
        got = shape_waits_bytes(b, melds, shift)
        assert got == want, (c, melds, special)
        assert shape_waits_bytes(b, melds, shift, segment_codes(b)) == want, (c, melds)
        assert type(got) is frozenset
        for t in want:
            full = _plus(b, t)
            if melds:
                if not any(full[:27]):
                    seen["honors_melds"] += 1
                elif shapes.is_standard(list(full)):
                    seen["standard_melds"] += 1
                continue
            if shapes.is_standard(list(full)):
                continue
            if shapes.is_qidui(list(full)):
                seen["qidui"] += 1
            elif not any(full[:27]):
                seen["honors"] += 1
            elif special == "lanpai" and guilin.lanpai(list(full)) is not None:
                seen["special"] += 1
            elif special == "shisanyao" and guangxi.is_shisanyao(list(full)):
                seen["special"] += 1
        # a 烂牌 completion is no win for 广西, a 十三幺 one none for 桂林
        if not melds and special == "shisanyao":
            for t in range(34):
                if b[t] < 4 and guilin.lanpai(list(_plus(b, t))) is not None:
                    assert t not in got or shapes.is_standard(list(_plus(b, t)))
                    seen["lanpai_other"] += 1
    # the corpus really holds waits of every kind (else this passes vacuously)
    for key in ("qidui", "special", "honors", "honors_melds", "standard_melds"):
        assert seen[key] >= 20, (special, seen)
    if special == "shisanyao":
        assert seen["lanpai_other"] >= 20, seen


def test_brute_force_waits_agree_with_the_plain_shapes(corpus):
    """The brute force's ``win_shape_bytes`` agrees with the shape-by-shape
    reference, so the waits above are checked against plain shapes."""
    for c, melds in corpus[::3]:
        b = bytes(c)
        for shift, special in SPECIAL.items():
            plain = frozenset(t for t in range(34) if b[t] < 4 and win_shape_plain(
                list(_plus(b, t)), melds, special))
            assert shape_waits_bytes(b, melds, shift) == plain, (c, melds, shift)


def test_segment_codes_are_the_table_look_ups(corpus):
    suit_tables.build_segments()
    nc = suit_tables.NOT_COMPLETE
    for c, _ in corpus[::2]:
        for b in (bytes(c), _plus(bytes(c), c.index(max(c)))):
            codes = segment_codes(b)
            seg = suit_tables.SEGMENT
            assert codes == (seg.get(b[0:9], nc), seg.get(b[9:18], nc), seg.get(b[18:27], nc),
                             suit_tables.HONORS_SEGMENT.get(b[27:34], nc))
            v = shapes.segment_code(b)
            if v >= 0:
                assert sum(codes) == v, c
            else:
                assert any(b[s * 9:s * 9 + 9] not in suit_tables.SEGMENT for s in range(3))


def _step_case(rng: random.Random) -> tuple[list[int], tuple[Meld, ...]]:
    r = rng.random()
    if r < 0.4:
        return _deck_counts(rng, 13), ()
    if r < 0.7:
        done = rng.choice((_standard(rng)[0], _qidui(rng, rng.random() < 0.3), _lanpai(rng),
                           _shisanyao(rng), _ziyise(rng)))
        return _minus_one(rng, done), ()
    c, melds = _melded(rng, rng.randrange(1, 5))
    return _minus_one(rng, c), melds


@pytest.mark.parametrize("shift", sorted(SHIFTS.values()))
def test_step_waits_equal_a_fresh_count(shift):
    """Draw/discard chains through ``step_waits`` stay equal to counting the
    hand afresh; None exactly for a fifth copy or a tile not held."""
    rng = random.Random(SEED + shift)
    stepped = nones = nonempty = 0
    for _ in range(250):
        c, melds = _step_case(rng)
        b = bytes(c)
        codes = segment_codes(b)
        for _ in range(20):
            add = rng.randrange(34)
            held = [k for k in range(34) if b[k]]
            remove = rng.choice(held) if rng.random() < 0.85 or not held else rng.randrange(34)
            out = step_waits(b, codes, add, remove, melds, shift)
            after = bytearray(b)
            after[add] += 1
            if after[add] > 4 or not after[remove]:
                assert out is None, (list(b), add, remove)
                nones += 1
                continue
            after[remove] -= 1
            new = bytes(after)
            assert out is not None, (list(b), add, remove)
            assert out == (new, segment_codes(new), shape_waits_bytes(new, melds, shift))
            assert out[2] == _brute(new, melds, shift)
            b, codes = out[0], out[1]
            stepped += 1
            nonempty += bool(out[2])
    assert stepped > 3000 and nones > 100 and nonempty > 100, (stepped, nones, nonempty)


def test_step_waits_none_cases():
    c = [0] * 34
    for k in (0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 27):  # 13 tiles, four 1m
        c[k] += 1
    b = bytes(c)
    codes = segment_codes(b)
    for shift in SHIFTS.values():
        assert step_waits(b, codes, 0, 5, (), shift) is None  # a fifth 1m
        assert step_waits(b, codes, 0, 0, (), shift) is None  # draw a fifth, discard it
        assert step_waits(b, codes, 9, 30, (), shift) is None  # 30 (N) not held
        assert step_waits(b, codes, 9, 10, (), shift) is None  # 10 (2p) not held
        # a kind drawn and thrown at once: the same hand again
        same = step_waits(b, codes, 30, 30, (), shift)
        assert same == (b, codes, shape_waits_bytes(b, (), shift))
        ok = step_waits(b, codes, 9, 27, (), shift)
        new = _plus(b, 9)
        new = new[:27] + b"\x00" + new[28:]
        assert ok == (new, segment_codes(new), shape_waits_bytes(new, (), shift))
    # the input is never changed
    assert b == bytes(c)


# --------------------------------------------------------------------------
# 2. the variants' shape waits (their SHAPE_SHIFT) bound evaluate's wins


@pytest.mark.parametrize("patterns", [guilin, guangxi], ids=["guilin", "guangxi"])
def test_evaluate_never_wins_outside_the_shape_waits(corpus, patterns):
    shift = LANPAI_SHIFT if patterns is guilin else SHISANYAO_SHIFT
    assert patterns.SHAPE_SHIFT == shift
    wins = outside = inside_no_win = 0
    hands = corpus[::2]
    for c, melds in hands:
        b = bytes(c)
        waits = shape_waits_bytes(b, melds, patterns.SHAPE_SHIFT)
        assert shape_waits_bytes(b, melds, patterns.SHAPE_SHIFT, segment_codes(b)) == waits
        total = list(c)
        for m in melds:
            for k in m.cards:
                total[k] += 1
        hand = tuple(k for k in range(34) for _ in range(c[k]))
        for t in range(34):
            if total[t] >= 4:  # a fifth copy: not a hand of the game
                continue
            claim = WinClaim(seat=0, hand=hand, melds=melds, tile=t)
            for how, src in (("zimo", None), ("dianpao", 2)):
                ev = patterns.evaluate(claim, how, 0, src, None)
                if ev is not None:
                    wins += 1
                    assert t in waits, (c, melds, t, how)
                elif t in waits:
                    inside_no_win += 1
                else:
                    outside += 1
    assert wins >= 500 and outside > 10 * wins, (wins, outside)


# --------------------------------------------------------------------------
# 3. the flow's shortcuts play the same hands as the flow without them

PLAN = [("random", s) for s in range(40)] + [("greedy", s) for s in range(15)]


def _flows(ruleset) -> list[MahjongFlow]:
    return [p for p in ruleset.pm.get_plugins() if isinstance(p, MahjongFlow)]


def _record(t) -> tuple:
    return t.state.actions, t.state.events, t.result


@pytest.mark.parametrize("variant", VARIANTS)
def test_flow_shortcuts_play_the_same_hands(variant, monkeypatch):
    fast_rs = load(variant)
    assert [f.shape_shift for f in _flows(fast_rs)] == [SHIFTS["lanpai" if "guilin" in variant
                                                               else "shisanyao"]]
    fast = [play_hand(fast_rs, seed=s, bots=b) for b, s in PLAN]
    assert any(t.result.end == "hu" for t in fast)
    assert any(type(a) in (Chi, Peng) for t in fast for a in t.state.actions)
    assert any(type(a) is Hu for t in fast for a in t.state.actions)
    assert any(type(a) is Zimo for t in fast for a in t.state.actions)
    # the shortcuts were taken: every table kept shape waits
    assert all(isinstance(t.scratch.get("mahjong.waits"), list)
               and any(t.scratch["mahjong.waits"]) for t in fast)

    # no shape waits (every win check asked), the window shortcut still on
    for flow in _flows(fast_rs):
        monkeypatch.setattr(flow, "shape_shift", None)
    no_waits = [play_hand(load(variant), seed=s, bots=b) for b, s in PLAN]
    assert all(t.scratch.get("mahjong.waits") is False for t in no_waits)

    # neither: qipai_window_actions answers None, seat by seat
    calls = []

    @hookimpl(trylast=True)
    def no_window_actions(self, table, window):
        calls.append(window.card)
        return None

    monkeypatch.setattr(MahjongFlow, "qipai_window_actions", no_window_actions)
    slow_rs = load(variant)
    for flow in _flows(slow_rs):
        monkeypatch.setattr(flow, "shape_shift", None)
    slow = [play_hand(slow_rs, seed=s, bots=b) for b, s in PLAN]
    assert calls, "the slow run did not use the disabled window hook"

    for (bots, seed), a, b, c in zip(PLAN, fast, no_waits, slow):
        assert _record(a) == _record(c), (variant, bots, seed)
        assert _record(a) == _record(b), (variant, bots, seed)


# --------------------------------------------------------------------------
# 4. qipai_window_actions against qipai_claim_actions, seat by seat


def _in_view(table) -> list[int]:
    """Copies of each kind in hands, melds and discards."""
    c = [0] * 34
    for s in table.state.seats:
        for k in s.hand:
            c[k] += 1
        for m in s.melds:
            for k in m.cards:
                c[k] += 1
        for k in s.discards:
            c[k] += 1
    return c


def _check_entries(table, shift: int) -> int:
    """Every kept hand entry (``scratch["mahjong.waits"]``) is what counting
    its hand afresh gives; returns how many there were."""
    cache = table.scratch.get("mahjong.waits")
    if not cache:
        return 0
    kept = 0
    for seat, entry in enumerate(cache):
        if entry is None:
            continue
        kept += 1
        hand, melds, counts, waits, codes, kinds, four = entry
        assert list(kinds) == sorted(set(hand)), (seat, hand, kinds)
        c = bytearray(34)
        for k in hand:
            c[k] += 1
        held = list(c)
        for m in melds:
            for k in m.cards:
                held[k] += 1
        assert four == {k for k in range(34) if held[k] == 4}, (seat, hand, melds, four)
        assert counts == bytes(c) and hand == sorted(hand), (seat, hand)
        assert codes == segment_codes(counts), (seat, hand)
        assert waits == _brute(counts, tuple(melds), shift), (seat, hand, melds)
    return kept


def _probe(table, flow: MahjongFlow, w: Window, own: bool, first: bool) -> dict:
    """``flow.qipai_window_actions`` against ``qipai_claim_actions`` seat by
    seat (and against ``claims`` with every win checked); the window
    actions asked ``first`` (before the seats' entries are made) or last."""
    key = "mahjong.answers.qipai_claim_actions"

    def window_actions():
        if own:
            return flow.qipai_window_actions(table, w)
        assert flow.qipai_window_actions(table, w) is None  # 广西 wraps the claims
        table.scratch[key] = True  # the shortcut itself, as if the flow answered alone
        try:
            return flow.qipai_window_actions(table, w)
        finally:
            table.scratch[key] = False

    got = window_actions() if first else None
    want = {}
    for s in range(4):
        acts = flow.qipai_claim_actions(table, s, w)
        # the same with no shortcut at all: every win checked
        assert acts == ([] if s == w.owner else flow.claims(table, s, w, True)), (s, w)
        if acts:
            want[s] = acts
    if not first:
        got = window_actions()
    assert got == want, w
    if own:
        assert {s: table.hook.qipai_claim_actions(table=table, seat=s, window=w)
                for s in want} == want
    return want


@pytest.mark.parametrize("variant", VARIANTS)
def test_window_actions_equal_claim_actions_seat_by_seat(variant, monkeypatch):
    rs = load(variant)
    shift = SHIFTS["lanpai" if "guilin" in variant else "shisanyao"]
    rng = random.Random(SEED + 4)
    own = variant == "guilin-mahjong"  # 广西 wraps qipai_claim_actions (封胡)
    flow = next(p for p in rs.pm.get_plugins() if isinstance(p, MahjongFlow))
    steps = []
    step = flow.entry_after_discard

    def counted(table, seat, drawn, card):  # count the entries derived by a step
        old = (table.scratch.get("mahjong.waits") or [None] * 4)[seat]
        step(table, seat, drawn, card)
        new = (table.scratch.get("mahjong.waits") or [None] * 4)[seat]
        steps.append(new is not old)

    monkeypatch.setattr(flow, "entry_after_discard", counted)
    probes = nonempty = hus = entries = 0
    for kind, seed in [("random", s) for s in range(8)] + [("greedy", s) for s in range(10)]:
        table = rs.table(seed=seed)
        bots = make_bots(kind, 4, seed)
        state = table.state
        while state.result is None:
            seat = min(state.pending)
            if state.window is None and seat == state.turn:
                entries += _check_entries(table, shift)
                before = table.snapshot()
                seen = _in_view(table)
                kinds = sorted(set(state.seats[seat].hand))
                spare = [k for k in range(34) if seen[k] < 4]
                windows = [Window(k, seat, "discard", {}) for k in kinds]
                windows += [Window(k, seat, src, {}) for k in rng.sample(spare, min(3, len(spare)))
                            for src in ("discard", "jiagang")]
                # on the table as played, and on a copy with nothing kept yet
                copy = Table.restore(rs, before) if len(state.actions) % 4 == 0 else None
                for i, w in enumerate(windows):
                    where = (seed, kind, len(state.actions), w)
                    try:
                        want = _probe(table, flow, w, own, first=i % 2 == 0)
                        if copy is not None:
                            assert _probe(copy, flow, w, own, first=i == 0) == want
                    except AssertionError as exc:
                        raise AssertionError(f"{where}: {exc}") from exc
                    probes += 1
                    nonempty += bool(want)
                    hus += any(type(a) is Hu for acts in want.values() for a in acts)
                assert table.snapshot() == before, (seed, len(state.actions))
                entries += _check_entries(table, shift)
            table.apply(bots[seat].choose(table, seat))
        # probing changed nothing: the hand is the one played without probes
        assert _record(table) == _record(play_hand(load(variant), seed=seed, bots=kind))
    assert probes > 1000 and nonempty > 100 and hus >= 50, (probes, nonempty, hus)
    assert entries > 1000 and sum(steps) > 100, (entries, sum(steps))


@pytest.mark.parametrize("variant", VARIANTS)
def test_hand_entries_and_window_actions_on_set_positions(corpus, variant):
    """Seat 0 holds a corpus hand (melds too), seat 3 deals and holds the
    turn: seat 0's hand entry has the brute-force shape waits, and windows
    of seat 3's discards (seat 0 next: 吃 too) get the same actions from
    the window shortcut as seat by seat."""
    rs = load(variant)
    shift = SHIFTS["lanpai" if "guilin" in variant else "shisanyao"]
    own = variant == "guilin-mahjong"
    flow = next(p for p in rs.pm.get_plugins() if isinstance(p, MahjongFlow))
    rng = random.Random(SEED + 5)
    waited = hus = 0
    for c, melds in corpus[::5]:
        rest = [k for k in range(34)
                for _ in range(4 - c[k] - sum(m.cards.count(k) for m in melds))]
        rng.shuffle(rest)
        hand = [k for k in range(34) for _ in range(c[k])]
        table = Table.from_position(rs, dealer=3, hands=[hand, rest[:13], rest[13:26], rest[26:40]],
                                    wall=rest[40:], melds=[list(melds), [], [], []])
        entry = flow.hand_entry(table, 0, table.state.seats[0].hand)
        want = _brute(bytes(c), melds, shift)
        assert entry is not None and entry[3] == want, (c, melds)
        assert _check_entries(table, shift) >= 1  # the dealer's too, from his turn
        waited += bool(want)
        left = sorted(set(rest[26:]))  # the card comes from the dealer's hand or the stock
        for k in sorted(want) + rng.sample(left, min(3, len(left))):
            if k in want and k not in left:
                continue
            for src in ("discard", "jiagang"):
                got = _probe(table, flow, Window(k, 3, src, {}), own, first=rng.random() < 0.5)
                hus += Hu(0) in got.get(0, ())
    assert waited > 300 and hus > 300, (waited, hus)


# --------------------------------------------------------------------------
# 5. the table's fast paths


def _turn_table(rs, want=lambda t, seat: True, seeds=range(200)):
    """A fresh table at the first turn position of some seed where ``want``."""
    for seed in seeds:
        t = rs.table(seed=seed)
        bots = make_bots("random", 4, seed)
        while t.state.result is None:
            seat = min(t.state.pending)
            if t.state.window is None and want(t, seat):
                return t, seat
            t.apply(bots[seat].choose(t, seat))
    raise AssertionError("no such position")  # pragma: no cover


def test_apply_records_the_listed_instance():
    rs = load("guilin-mahjong")
    t, seat = _turn_table(rs)
    listed = {a.card: a for a in t.state.pending[seat] if type(a) is Discard}
    k = next(iter(listed))
    fresh = Discard(seat, k)
    assert fresh == listed[k] and fresh is not listed[k]
    t.apply(fresh)
    assert t.state.actions[-1] is listed[k]


@pytest.mark.parametrize("odd", [True, 1.0])
def test_apply_never_records_a_non_int_card(odd):
    rs = load("guilin-mahjong")
    # 1 (2m) held: the action equals a listed one, which is recorded
    t, seat = _turn_table(rs, lambda t, s: 1 in t.state.seats[s].hand)
    listed = next(a for a in t.state.pending[seat] if a == Discard(seat, 1))
    t.apply(Discard(seat, odd))
    assert t.state.actions[-1] is listed
    assert type(t.state.actions[-1].card) is int
    text = msgspec.json.encode(t.state.actions)
    assert b"true" not in text and b"1.0" not in text
    assert msgspec.json.decode(msgspec.json.encode(t.state.actions[-1])) == \
        {"type": "discard", "seat": seat, "card": 1}
    # 1 not held: refused, the table unchanged
    t, seat = _turn_table(rs, lambda t, s: 1 not in t.state.seats[s].hand)
    before = t.snapshot()
    with pytest.raises(IllegalAction):
        t.apply(Discard(seat, odd))
    assert t.snapshot() == before


def _chi_position(rs):
    """A table where some seat may chi, and that seat."""
    for seed in range(300):
        t = rs.table(seed=seed)
        bots = make_bots("random", 4, seed)
        while t.state.result is None:
            for s, acts in t.state.pending.items():
                if any(type(a) is Chi for a in acts):
                    return t, s
            seat = min(t.state.pending)
            t.apply(bots[seat].choose(t, seat))
    raise AssertionError("no chi in 300 hands")  # pragma: no cover


def test_apply_canonicalises_a_chi_or_refuses_it():
    rs = load("guilin-mahjong")
    t, seat = _chi_position(rs)
    snap = t.snapshot()
    chis = [a for a in t.state.pending[seat] if type(a) is Chi]
    for chi in chis:
        a, b, c = chi.cards
        for odd in (Chi(seat, [a, b, c]), Chi(seat, (c, a, b)), Chi(seat, [b, c, a]),
                    Chi(seat, (c, b, a))):
            u = Table.restore(rs, snap)
            listed = next(x for x in u.state.pending[seat] if x == chi)
            u.apply(odd)
            assert u.state.actions[-1] is listed
            assert type(listed.cards) is tuple and list(listed.cards) == sorted(listed.cards)
            assert b"true" not in msgspec.json.encode(u.state.actions)
        # the same cards with a bool: recorded as ints, or refused
        if a == 1 or b == 1 or c == 1:
            u = Table.restore(rs, snap)
            u.apply(Chi(seat, tuple(True if x == 1 else x for x in (c, b, a))))
            assert u.state.actions[-1] == chi
            assert b"true" not in msgspec.json.encode(u.state.actions)
    # not a chi of this window: refused, nothing changed
    u = Table.restore(rs, snap)
    card = u.state.window.card
    held = u.state.seats[seat].hand
    bad = [Chi(seat, [card, card, card]), Chi(seat, (33, 32, 31)), Chi(seat, [card, 40, 41]),
           Chi(seat, (card, True, False)), Chi(seat, (1.5, card, card))]
    bad += [Chi(seat, (k, k + 1, k + 2)) for k in range(25) if k // 9 == (k + 2) // 9
            and card not in (k, k + 1, k + 2) and k in held]
    for x in bad:
        with pytest.raises(IllegalAction):
            u.apply(x)
        assert u.snapshot() == snap


def test_illegal_actions_leave_the_table_unchanged():
    rs = load("guilin-mahjong")
    t, seat = _turn_table(rs, lambda t, s: t.state.turn == s and s in (0, 1))
    before = t.snapshot()
    hand = t.state.seats[seat].hand
    other = (seat + 1) % 4
    missing = next(k for k in range(34) if k not in hand)
    for bad in (Discard(other, hand[0]), Discard(seat, missing), Discard(seat, 34),
                Discard(seat, -1), Discard(seat, None), Discard(bool(seat), hand[0]),
                Discard(4, hand[0]), Discard(seat, str(hand[0])), Pass(seat), Hu(seat),
                Peng(seat), "discard", None):
        with pytest.raises(IllegalAction):
            t.apply(bad)
        assert t.snapshot() == before, bad
    # still playable: a legal discard goes through
    t.apply(Discard(seat, hand[0]))
    assert t.snapshot() != before


class _DealerZero:
    @hookimpl(tryfirst=True)
    def qipai_next_dealer(self, table, end, winners, from_seat):
        return 0


def test_resolved_hooks_are_shared_until_the_plugins_change():
    rs = load("guilin-mahjong")
    seed = next(s for s in range(100) if rs.table(seed=s).state.dealer != 0
                and play_hand(load("guilin-mahjong"), seed=s, bots="random").result.next_dealer)
    t1, t2 = rs.table(seed=seed), rs.table(seed=seed + 1)
    assert t1.hook is t2.hook is table_module.resolved_hooks(rs)
    kw = dict(end="huangzhuang", winners=[], from_seat=None)
    dealer = t1.state.dealer
    assert t1.hook.qipai_next_dealer(table=t1, **kw) == dealer  # resolved now

    plugin = _DealerZero()
    rs.pm.register(plugin)
    fresh = table_module.resolved_hooks(rs)
    assert fresh is not t1.hook
    assert table_module.resolved_hooks(rs) is fresh  # shared again
    t3 = rs.table(seed=seed)
    assert t3.hook is fresh
    assert t3.hook.qipai_next_dealer(table=t3, **kw) == 0
    assert rs.hook.qipai_next_dealer(table=t1, **kw) == 0  # pluggy sees the plugin
    # the table made before keeps the callers it resolved
    assert t1.hook.qipai_next_dealer(table=t1, **kw) == dealer
    # and plays its hand to the end as before; the new table ends with dealer 0
    run_to_end(t1, make_bots("random", 4, seed))
    run_to_end(t3, make_bots("random", 4, seed))
    plain = play_hand(load("guilin-mahjong"), seed=seed, bots="random")
    assert t1.result == plain.result
    assert t3.state.actions == plain.state.actions
    assert t3.result.next_dealer == 0

    rs.pm.unregister(plugin)
    again = table_module.resolved_hooks(rs)
    assert again is not fresh and again is not t1.hook
    t4 = rs.table(seed=seed)
    assert t4.hook.qipai_next_dealer(table=t4, **kw) == dealer


def _window_table(variant: str):
    t, seat = _turn_table(load(variant))
    return t, Window(t.state.seats[seat].hand[0], seat, "discard", {})


@pytest.mark.filterwarnings("ignore:Argument.*cannot be found in this hook call")
def test_direct_hook_caller_missing_argument():
    """``qipai_claim_priority`` (firstresult, the flow's one implementation)
    is that implementation itself: a missing argument is a TypeError."""
    t, w = _window_table("guilin-mahjong")
    assert t.hook.only("qipai_claim_priority") is not None
    assert t.hook.qipai_claim_priority(table=t, window=w, action=Peng(1)) == \
        t.ruleset.hook.qipai_claim_priority(table=t, window=w, action=Peng(1)) == 2
    with pytest.raises((HookCallError, TypeError), match="action"):
        t.hook.qipai_claim_priority(table=t, window=w)
    with pytest.raises(HookCallError, match="action"):  # pluggy's own caller agrees
        t.ruleset.hook.qipai_claim_priority(table=t, window=w)


def test_compiled_hook_callers_missing_argument():
    # not firstresult (one implementation): the generated caller
    t, w = _window_table("guilin-mahjong")
    caller = t.hook.qipai_instant_payments
    assert caller is not t.ruleset.hook.qipai_instant_payments and callable(caller)
    assert t.hook.only("qipai_instant_payments") is not None
    with pytest.raises(HookCallError, match="event"):
        caller(table=t)
    with pytest.raises(HookCallError, match="table"):
        caller(event=Marked("huangzhuang"))
    meld = Meld("angang", (5,) * 4, hidden=3)
    ev = Melded(0, meld)
    assert caller(table=t, event=ev) == t.ruleset.hook.qipai_instant_payments(table=t, event=ev)
    # firstresult, two implementations (the flow's and 广西's): generated too
    g, gw = _window_table("guangxi-mahjong")
    explain = g.hook.qipai_explain_illegal
    assert len(g.ruleset.hook.qipai_explain_illegal.get_hookimpls()) == 2
    assert explain is not g.ruleset.hook.qipai_explain_illegal
    with pytest.raises(HookCallError, match="action"):
        explain(table=g)
    missing = next(k for k in range(34) if k not in g.state.seats[gw.owner].hand)
    for a in (Peng(gw.owner), Discard(gw.owner, missing), Hu((gw.owner + 1) % 4)):
        assert explain(table=g, action=a) == g.ruleset.hook.qipai_explain_illegal(table=g, action=a)


class _Recorder:
    """Logs ``qipai_resolve_claims`` and ``qipai_apply_claims`` calls in
    order, answering None so the flow decides (the table calls the two
    back to back for one window)."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    @hookimpl(tryfirst=True)
    def qipai_resolve_claims(self, table, window, declared):
        self.log.append(("resolve", window, dict(declared)))
        return None

    @hookimpl(tryfirst=True)
    def qipai_apply_claims(self, table, window, taken):
        self.log.append(("apply", window, dict(window.declared), list(taken)))
        return None


@pytest.mark.parametrize("variant", VARIANTS)
def test_resolve_claims_is_skipped_when_everyone_passes(variant):
    rec = _Recorder()
    rs = load(variant, plugins=[rec])
    plain_rs = load(variant)
    all_pass = with_claims = resolves = 0
    for seed in range(40):
        rec.log.clear()
        t = play_hand(rs, seed=seed, bots="random")
        assert _record(t) == _record(play_hand(plain_rs, seed=seed, bots="random"))
        prev = None
        for entry in rec.log:
            if entry[0] == "resolve":
                declared = entry[2]
                assert declared and any(type(a) is not Pass for a in declared.values()), declared
                resolves += 1
            else:
                _, window, declared, taken = entry
                claimed = any(type(a) is not Pass for a in declared.values())
                asked = prev is not None and prev[0] == "resolve" and prev[1] is window
                assert asked == claimed, (seed, declared)
                if claimed:
                    assert prev[2] == declared
                    with_claims += 1
                else:
                    assert taken == []
                    all_pass += bool(declared)
            prev = entry
    assert resolves == with_claims > 0 and all_pass > 0, (resolves, with_claims, all_pass)


# --------------------------------------------------------------------------
# review regressions: the shortcuts honour the flow's extension points


def _flow_of(rs) -> MahjongFlow:
    return next(p for p in rs.pm.get_plugins() if isinstance(p, MahjongFlow))


def test_a_reserve_override_is_honoured(monkeypatch):
    """A flow whose ``reserve`` keeps 14 tiles back ends every hand with 14
    in the stock (the shortcuts read the reserve through the flow)."""
    rs = load("guilin-mahjong")
    monkeypatch.setattr(_flow_of(rs), "reserve", lambda table: 14)
    ends = [play_hand(rs, seed=s, bots="random") for s in range(12)]
    assert all(t.result.end == "huangzhuang" for t in ends if len(t.state.wall) >= 14)
    assert [len(t.state.wall) for t in ends if t.result.end == "huangzhuang"]
    assert {len(t.state.wall) for t in ends if t.result.end == "huangzhuang"} == {14}


def test_a_subclass_override_of_claim_actions_is_asked(monkeypatch):
    """A MahjongFlow subclass overriding qipai_claim_actions is asked seat by
    seat: the window shortcut must not answer for it."""
    from qipai.variants.guilin_mahjong import patterns as guilin_patterns
    from qipai.variants.guilin_mahjong import plugin as guilin_plugin

    class NoChiFlow(MahjongFlow):
        @hookimpl(trylast=True)
        def qipai_claim_actions(self, table, seat, window):
            acts = [a for a in super().qipai_claim_actions(table, seat, window)
                    if type(a) is not Chi]
            return [] if len(acts) == 1 else acts

    flow = NoChiFlow(guilin_plugin.MANIFEST, patterns=guilin_patterns, angang_hidden=3)
    monkeypatch.setattr(guilin_plugin, "QIPAI_BASE_PLUGINS", [flow])
    rs = load("guilin-mahjong")
    assert _flow_of(rs) is flow
    tables = [play_hand(rs, seed=s, bots="random") for s in range(25)]
    assert not any(type(a) is Chi for t in tables for a in t.state.actions)
    assert any(type(a) is Peng for t in tables for a in t.state.actions)


def test_a_subclass_override_of_wins_turns_the_skip_off(monkeypatch):
    from qipai.variants.guilin_mahjong import patterns as guilin_patterns
    from qipai.variants.guilin_mahjong import plugin as guilin_plugin

    calls = []

    class CountingFlow(MahjongFlow):
        def wins(self, table, claim, how, owner):
            calls.append(how)
            return super().wins(table, claim, how, owner)

    flow = CountingFlow(guilin_plugin.MANIFEST, patterns=guilin_patterns, angang_hidden=3)
    monkeypatch.setattr(guilin_plugin, "QIPAI_BASE_PLUGINS", [flow])
    rs = load("guilin-mahjong")
    table = play_hand(rs, seed=5, bots="random")
    discards = sum(type(a) is Discard for a in table.state.actions)
    assert table.scratch.get("mahjong.waits") is False  # no shape waits kept
    assert calls.count("dianpao") >= 2 * discards  # every other seat asked on each discard


@pytest.mark.parametrize("source", ["discard", "jiagang"])
def test_a_fifth_copy_in_play_is_refused(source):
    """A card of a kind the claimer already holds four of cannot be in play:
    asking about it raises BadCards, as the full check does."""
    from qipai.core.errors import BadCards

    rs = load("guilin-mahjong")
    p = rs.parse
    table = Table.from_position(
        rs, dealer=0,
        hands=[p("123m456m789m1122p3p"), p("5555p123s456s789s"), p("2468m2468p2468s9s"),
               p("EEESSSWWWNNNC")],
        wall=p("9p9p9p"))
    five = p("5p")[0]
    with pytest.raises(BadCards, match="5 copies of 5p"):
        table.claim_options(1, five, 0, source)


def test_step_waits_builds_its_tables_in_a_fresh_interpreter():
    """step_waits given codes kept from elsewhere (here: computed in this
    process) must build the look-up tables it needs itself."""
    import subprocess
    import sys

    # 123456789m 11p 3s E; draw 3s (20), discard E (27): 123456789m 11p 33s
    # waits on 1p or 3s (a set of either pair).
    before = bytes([1] * 9 + [2] + [0] * 8 + [0, 0, 1] + [0] * 6 + [1] + [0] * 6)
    codes = segment_codes(before)
    code = (
        "from qipai.families.mahjong import suit_tables\n"
        "from qipai.families.mahjong.win_shapes import step_waits, LANPAI_SHIFT\n"
        "assert not suit_tables.SEGMENT\n"
        f"new, codes, waits = step_waits({before!r}, {codes!r}, 20, 27, (), LANPAI_SHIFT)\n"
        "print(sorted(waits))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[9, 20]"
    assert sorted(step_waits(before, codes, 20, 27, (), LANPAI_SHIFT)[2]) == [9, 20]
