"""Bad input at every public boundary: a QipaiError (naming what was
wrong) or a valid result, never a raw exception; an impossible deal is
refused; and a table refused an action is unchanged."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qipai.core.errors import BadCards, BadOption, BadRecord, IllegalAction, QipaiError
from qipai.core.model import ACTION_TYPES, Chi, Deal, Discard, Meld
from qipai.core.records import decode_record, record_of, replay
from qipai.core.ruleset import load
from qipai.core.table import Table

VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]
RS = {name: load(name) for name in VARIANTS}
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class Idx:
    """A host's integer type (numpy's, say): an int only through __index__."""

    def __init__(self, v: int) -> None:
        self.v = v

    def __index__(self) -> int:
        return self.v


def _dealt(name: str, seed: int = 3) -> Deal:
    return Table(RS[name], seed=seed).state.deal


# ------------------------------------------------------------------ regressions

@pytest.mark.parametrize("make", [
    lambda s: Chi(s, cards=None), lambda s: Chi(s, cards=(1, 2, 3), extra=5),
    lambda s: Chi(s, cards=(1, 2, 3), extra=(5,)), lambda s: Chi(s, cards="abc"),
    lambda s: Discard(s, None), lambda s: Discard(s, True), lambda s: Discard(None, 1),
])
def test_malformed_actions_are_refused_and_leave_the_table(make):
    t = Table(RS["guilin-mahjong"], seed=1)
    seat = t.to_decide()[0]
    before = t.snapshot()
    with pytest.raises(IllegalAction):
        t.apply(make(seat))
    assert t.snapshot() == before


def test_an_index_type_is_the_int_it_is_in_actions():
    t = Table(RS["guilin-mahjong"], seed=1)
    seat = t.to_decide()[0]
    legal = next(a for a in t.legal_actions(seat) if isinstance(a, Discard))
    t.apply(Discard(Idx(seat), Idx(legal.card)))
    assert t.state.actions[-1] == legal and type(t.state.actions[-1].card) is int


@pytest.mark.parametrize("options", [[1], "hubao=false", 5, ("a", 1)])
def test_load_refuses_options_that_are_not_a_dict(options):
    with pytest.raises(BadOption, match="dict"):
        load("guilin-mahjong", options=options)


def test_option_integers_beyond_64_bits_are_refused_at_load():
    rs = RS["guilin-mahjong"]
    ints = [k for k, v in rs.options_dict().items() if type(v) is int]
    assert ints
    with pytest.raises(BadOption, match=ints[0]):
        load("guilin-mahjong", options={ints[0]: 2**70})


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"format": 1, "variant": "guilin-mahjong", "deal": '
                                  + "[" * 100_000 + "]" * 100_000 + "}"])
def test_deeply_nested_records_are_refused(text):
    with pytest.raises(BadRecord, match="nested"):
        decode_record(text)


def test_deeply_nested_dict_record_is_refused():
    obj: object = []
    for _ in range(100_000):
        obj = [obj]
    with pytest.raises(BadRecord, match="nested"):
        decode_record({"format": 1, "variant": "guilin-mahjong", "deal": obj})


def test_a_real_record_still_decodes_and_replays():
    t = Table(RS["guilin-zipai"], seed=5)
    while not t.over:
        seat = t.to_decide()[0]
        t.apply(t.legal_actions(seat)[0])
    rec = decode_record(msgspec.json.encode(record_of(t)))
    assert replay(rec).state.result == t.state.result


@pytest.mark.parametrize("kwargs", [
    {"seed": [1]}, {"seed": "x"}, {"seed": 1.5}, {"seed": True}, {"seed": 2**300},
    {"rng": "x"}, {"rng": 5}, {"dealer": True}, {"dealer": 9},
])
def test_table_arguments_are_checked(kwargs):
    with pytest.raises(QipaiError):
        Table(RS["guilin-mahjong"], **kwargs)


def test_a_large_seed_snapshots_and_restores():
    rs = RS["guilin-mahjong"]
    t = Table(rs, seed=2**70)
    assert Table(rs, seed=2**70).state.deal == t.state.deal
    u = Table.restore(rs, t.snapshot())
    assert u.seed == 2**70 and u.snapshot() == t.snapshot()


@pytest.mark.parametrize("field,value", [("hands", 5), ("wall", None), ("hands", None),
                                         ("shown", 5), ("dealer", "0"), ("dealer", None)])
def test_malformed_deals_are_bad_cards(field, value):
    d = _dealt("guilin-mahjong")
    with pytest.raises(BadCards):
        Table(RS["guilin-mahjong"], deal=msgspec.structs.replace(d, **{field: value}))


@pytest.mark.parametrize("name", VARIANTS)
def test_a_deal_must_be_the_whole_deck(name):
    rs, d = RS[name], _dealt(name)
    Table(rs, deal=d)  # the real deal is fine
    for wall in [(), d.wall[: len(d.wall) // 2]]:
        with pytest.raises(BadCards, match="deck"):
            Table(rs, deal=msgspec.structs.replace(d, wall=wall))
    with pytest.raises(BadCards, match="deck"):  # one card short
        Table(rs, deal=msgspec.structs.replace(d, wall=d.wall[1:]))
    # a short stock is allowed only when asked for
    Table(rs, deal=msgspec.structs.replace(d, wall=d.wall[:5]), partial=True)


def test_true_among_the_cards_is_refused():
    d = _dealt("guilin-mahjong")
    hands = list(d.hands)
    hands[1] = (True,) + hands[1][1:]
    with pytest.raises(BadCards, match="True"):
        Table(RS["guilin-mahjong"], deal=msgspec.structs.replace(d, hands=tuple(hands)))


def test_shown_cards_must_be_in_the_dealers_hand():
    rs, d = RS["guilin-zipai"], _dealt("guilin-zipai")
    not_held = next(k for k in range(rs.cards.n_kinds) if k not in d.hands[d.dealer])
    for shown in [(not_held,), ("x",), (True,), (d.shown[0], d.shown[0], d.shown[0], d.shown[0],
                                                  d.shown[0])]:
        with pytest.raises(BadCards):
            Table(rs, deal=msgspec.structs.replace(d, shown=shown))
    rm = RS["guilin-mahjong"]
    dm = _dealt("guilin-mahjong")
    other = next(k for k in range(rm.cards.n_kinds) if k not in dm.hands[dm.dealer])
    with pytest.raises(BadCards, match="shown"):
        Table(rm, deal=msgspec.structs.replace(dm, shown=(other,)))


def test_a_deal_of_index_integers_is_the_deal_of_ints():
    rs, d = RS["guilin-mahjong"], _dealt("guilin-mahjong")
    host = Deal(Idx(d.dealer), tuple(tuple(Idx(c) for c in h) for h in d.hands),
                tuple(Idx(c) for c in d.wall))
    assert Table(rs, deal=host).snapshot()[24:] == Table(rs, deal=d).snapshot()[24:]


def test_a_numpy_deal_if_numpy_is_there():
    np = pytest.importorskip("numpy")
    rs, d = RS["guilin-mahjong"], _dealt("guilin-mahjong")
    host = Deal(np.int64(d.dealer), tuple(tuple(np.int8(c) for c in h) for h in d.hands),
                tuple(np.int16(c) for c in d.wall))
    assert Table(rs, deal=host).state.deal == d


@pytest.mark.parametrize("melds,discards", [
    ([[(1, 1, 1)], [], [], []], None), ([[5], [], [], []], None),
    (None, 5), (None, [[1], [], [], 7]), (None, [["1m"], [], [], []]),
    ([[Meld("peng", None)], [], [], []], None),
])
def test_from_position_checks_melds_and_discards(melds, discards):
    rs = RS["guilin-mahjong"]
    hands = [rs.parse(h) for h in ["123m456m789m1p2p3p5s", "123s", "456s", "789s"]]
    with pytest.raises(BadCards):
        Table.from_position(rs, dealer=0, hands=hands, melds=melds, discards=discards)


def test_a_flipped_byte_in_a_snapshot_is_refused():
    rs = RS["guilin-mahjong"]
    t = Table(rs, seed=4)
    snap = t.snapshot()
    for i in range(0, len(snap), max(1, len(snap) // 200)):
        bad = bytearray(snap)
        bad[i] ^= 0x01
        with pytest.raises(BadRecord):
            Table.restore(rs, bytes(bad))
    with pytest.raises(BadRecord):
        Table.restore(rs, "text")
    assert Table.restore(rs, snap).snapshot() == snap


# ------------------------------------------------------------------ fuzz

ints = st.one_of(st.integers(-3, 40), st.integers(), st.booleans(), st.none(),
                 st.floats(allow_nan=False), st.text(max_size=3))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5))
junk = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4),
                                                 st.dictionaries(st.text(max_size=4), c,
                                                                 max_size=4)), max_leaves=12)
groups = st.one_of(st.tuples(ints, ints, ints), st.lists(ints, max_size=4), ints)


@st.composite
def actions(draw):
    kind = draw(st.sampled_from(sorted(ACTION_TYPES)))
    cls = ACTION_TYPES[kind]
    seat = draw(ints)
    if cls is Chi:
        return Chi(seat, draw(groups), draw(st.one_of(st.tuples(), st.lists(groups, max_size=2),
                                                      ints)))
    if "card" in cls.__struct_fields__:
        return cls(seat, draw(ints))
    return cls(seat)


def _played(name: str, seed: int, steps: int) -> Table:
    t = Table(RS[name], seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if t.over:
            break
        seat = rng.choice(t.to_decide())
        t.apply(rng.choice(t.legal_actions(seat)))
    return t


@FUZZ
@given(name=st.sampled_from(VARIANTS), seed=st.integers(0, 50), steps=st.integers(0, 30),
       action=st.one_of(actions(), junk))
def test_fuzz_actions(name, seed, steps, action):
    t = _played(name, seed, steps)
    before = t.snapshot()
    try:
        t.apply(action)
    except QipaiError:
        assert t.snapshot() == before
    else:  # taken: it was one of the seat's legal actions, as ints
        done = t.state.actions[-1]
        assert type(done.seat) is int
        assert done in Table.restore(t.ruleset, before).legal_actions(done.seat)


@FUZZ
@given(text=st.one_of(st.text(max_size=12), junk))
def test_fuzz_notation(text):
    for rs in RS.values():
        try:
            kinds = rs.parse(text)
        except QipaiError:
            continue
        assert all(type(k) is int and 0 <= k < rs.cards.n_kinds for k in kinds)


@FUZZ
@given(name=st.sampled_from(VARIANTS), options=st.one_of(junk, st.dictionaries(
    st.sampled_from(["hubao", "max_flips", "first_dealer", "base", "x"]), scalars, max_size=3)),
       spec=st.one_of(st.none(), st.text(max_size=20)))
def test_fuzz_options(name, options, spec):
    try:
        rs = load(spec if spec is not None else name, options=options)
    except QipaiError:
        return
    t = Table(rs, seed=1)
    Table.restore(rs, t.snapshot())  # every accepted option survives a snapshot


@FUZZ
@given(name=st.sampled_from(VARIANTS), seed=st.integers(0, 1000),
       mutate=st.sampled_from(["none", "drop", "dup", "swap", "junk", "shown", "dealer"]),
       where=st.integers(0, 200), value=ints)
def test_fuzz_deals(name, seed, mutate, where, value):
    rs, d = RS[name], _dealt(name, seed)
    hands = [list(h) for h in d.hands]
    wall = list(d.wall)
    shown = list(d.shown)
    if mutate == "drop" and wall:
        wall.pop(where % len(wall))
    elif mutate == "dup":
        wall.append(wall[where % len(wall)])
    elif mutate == "swap":
        hands[where % len(hands)][0] = value
    elif mutate == "junk":
        wall[where % len(wall)] = value
    elif mutate == "shown":
        shown = [value]
    elif mutate == "dealer":
        d = msgspec.structs.replace(d, dealer=value)
    deal = Deal(d.dealer, tuple(map(tuple, hands)), tuple(wall), tuple(shown))
    try:
        t = Table(rs, deal=deal)
    except QipaiError:
        return
    cards = sorted(c for h in t.state.deal.hands for c in h) + []
    assert sorted(cards + list(t.state.deal.wall)) == sorted(rs.deck())


@FUZZ
@given(name=st.sampled_from(VARIANTS), seed=st.integers(0, 50), steps=st.integers(0, 40),
       path=st.lists(st.integers(0, 50), min_size=1, max_size=4), value=junk)
def test_fuzz_records(name, seed, steps, path, value):
    t = _played(name, seed, steps)
    obj = msgspec.to_builtins(record_of(t))
    node = obj  # replace one nested field by junk
    for step in path[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node)[step % len(node)]]
        elif isinstance(node, list) and node:
            node = node[step % len(node)]
    if isinstance(node, dict) and node:
        node[sorted(node)[path[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[path[-1] % len(node)] = value
    try:
        rec = decode_record(msgspec.json.encode(obj))
        replay(rec)
    except QipaiError:
        pass


@FUZZ
@given(name=st.sampled_from(VARIANTS), seed=st.integers(0, 50), steps=st.integers(0, 30),
       where=st.integers(0, 10**6), bit=st.integers(0, 7), cut=st.booleans())
def test_fuzz_snapshots(name, seed, steps, where, bit, cut):
    rs = RS[name]
    t = _played(name, seed, steps)
    snap = t.snapshot()
    bad = bytearray(snap)
    if cut:
        bad = bad[: where % len(bad)]
    else:
        bad[where % len(bad)] ^= 1 << bit
    with pytest.raises(BadRecord):
        Table.restore(rs, bytes(bad))
    assert Table.restore(rs, snap).snapshot() == snap
