"""Stakes and rake (qipai.core.money): any hand's money sums to zero with the
house line, the rake is within its cap and the winner's gain, integers only;
bad stakes and bad hook answers are refused by name; the record's money block
is checked by ``qipai verify``."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qipai.core.errors import PluginError
from qipai.core.model import Payment, Result, net_of
from qipai.core.money import (
    MAX_RAKE_CAP, MAX_STAKE, BadStake, Money, Rake, RakeLine, check_rake_lines, check_stake,
    money_of, money_problem,
)


def result_of(payments: list[Payment], n: int) -> Result:
    return Result(end="hu", winners=(0,), net=tuple(net_of(payments, n)),
                  payments=tuple(payments), instant=(), patterns={}, xing={}, flipped=(),
                  next_dealer=0)


@st.composite
def results(draw: st.DrawFn) -> Result:
    n = draw(st.integers(2, 4))
    seat = st.integers(0, n - 1)
    pays = draw(st.lists(st.builds(lambda a, b, x: Payment(payer=a, payee=b, amount=x),
                                   seat, seat, st.integers(0, 500)), max_size=8))
    return result_of(pays, n)


rakes = st.none() | st.builds(Rake, percent=st.integers(0, 100), cap=st.integers(0, MAX_RAKE_CAP))


@settings(max_examples=300, deadline=None)
@given(results(), st.integers(1, MAX_STAKE), rakes)
def test_money_sums_to_zero_with_the_house_and_the_rake_is_bounded(result, stake, rake):
    m = money_of(result, stake, rake)
    assert sum(m.net) + m.house == 0
    assert m.house == sum(line.amount for line in m.rake_lines)
    assert all(type(v) is int for v in (*m.net, m.house))
    for p, mp in zip(result.payments, m.payments, strict=True):
        assert (mp.payer, mp.payee, mp.zi, mp.amount) == (p.payer, p.payee, p.amount,
                                                          p.amount * stake)
    gains = [v * stake for v in result.net]
    for line in m.rake_lines:
        assert line.payee == "house" and type(line.amount) is int
        assert 0 < line.amount <= gains[line.payer]
        assert rake is not None and line.amount <= rake.cap
        assert line.amount == min(rake.cap, gains[line.payer] * rake.percent // 100)
    assert money_problem(m, result) is None
    # and it survives JSON as a record holds it
    assert msgspec.json.decode(msgspec.json.encode(m), type=Money) == m


def test_the_rule_rounds_down_per_winner_and_caps_per_winner():
    r = result_of([Payment(1, 0, 7), Payment(2, 0, 7), Payment(3, 2, 20)], 4)
    # net 子: [14, -7, 13, -20]; stake 10: gains [140, -70, 130, -200]
    m = money_of(r, 10, Rake(percent=3, cap=4))
    assert [(x.payer, x.amount) for x in m.rake_lines] == [(0, 4), (2, 3)]  # 4.2→4 capped 4; 3.9→3
    assert m.net == (136, -70, 127, -200) and m.house == 7
    assert money_of(r, 10).rake_lines == () and money_of(r, 10).house == 0


@pytest.mark.parametrize("stake, rake, field", [
    (0, None, "stake"), (MAX_STAKE + 1, None, "stake"), (1.5, None, "stake"),
    (True, None, "stake"), ("10", None, "stake"),
    (10, {"percent": 101, "cap": 1}, "rake.percent"), (10, {"percent": -1, "cap": 1}, "rake.percent"),
    (10, {"percent": 2.5, "cap": 1}, "rake.percent"), (10, {"percent": 5, "cap": -1}, "rake.cap"),
    (10, {"percent": 5, "cap": "9"}, "rake.cap"), (10, {"percent": 5}, "cap"),
    (10, {"percent": 5, "cap": 1, "x": 1}, "'x'"), (10, [5, 1], "rake"),
    (None, {"percent": 5, "cap": 1}, "stake"),
])
def test_bad_stakes_and_rakes_are_refused_by_name(stake, rake, field):
    with pytest.raises(BadStake, match=field.replace(".", r"\.")):
        check_stake(stake, rake)


def test_good_stakes_pass():
    assert check_stake(None) == (None, None)
    assert check_stake(1, {"percent": 0, "cap": 0}) == (1, Rake(0, 0))
    assert check_stake(MAX_STAKE, Rake(100, MAX_RAKE_CAP)) == (MAX_STAKE, Rake(100, MAX_RAKE_CAP))


@pytest.mark.parametrize("lines, words", [
    ([{"payer": 0, "amount": -1}], "negative"),
    ([{"payer": 0, "amount": 1.5}], "not an int"),
    ([{"payer": 0, "amount": 141}], "more than its gain"),
    ([{"payer": 1, "amount": 1}], "more than its gain"),
    ([{"payer": 4, "amount": 1}], "not a seat"),
    ([{"payer": 0, "amount": 1, "payee": 2}], "not the house"),
    ("x", "a list"),
])
def test_bad_rake_lines_are_refused(lines, words):
    with pytest.raises(BadStake, match=words):
        check_rake_lines(lines, [140, -70, 130, -200])


class _Caller:
    def __init__(self, answer):
        self.answer = answer

    def __call__(self, **kwargs):
        return self.answer

    def get_hookimpls(self):
        return []


class _Relay:
    def __init__(self, answer):
        self.qipai_rake = _Caller(answer)


def test_a_house_hook_replaces_the_rule_and_is_checked():
    r = result_of([Payment(1, 0, 7), Payment(2, 0, 7), Payment(3, 2, 20)], 4)
    m = money_of(r, 10, Rake(3, 4), hook=_Relay([RakeLine(payer=2, amount=100)]))
    assert m.rake_lines == (RakeLine(payer=2, amount=100),) and m.net[2] == 30
    assert money_of(r, 10, Rake(3, 4), hook=_Relay(None)).house == 7   # None: the rule
    with pytest.raises(PluginError, match="qipai_rake.*more than its gain"):
        money_of(r, 10, None, hook=_Relay([{"payer": 1, "amount": 1}]))


def test_an_edited_money_block_is_named():
    r = result_of([Payment(1, 0, 7)], 2)
    m = money_of(r, 10, Rake(10, 100))
    assert money_problem(m, r) is None
    moved = msgspec.structs.replace(m, net=(m.net[0] + 1, m.net[1] - 1))
    assert "not what stake 10" in money_problem(moved, r)
    unbalanced = msgspec.structs.replace(m, house=m.house + 1)
    assert "sum to 1, not 0" in money_problem(unbalanced, r)
