"""``qipai connect``'s settlement in money (a table with a stake): each
payment in 子 and 元, the rake lines to the house, nets, the house's take."""

from __future__ import annotations

import msgspec

from qipai.cli.connect import _money_lines, _yuan
from qipai.core.model import Payment, Result
from qipai.core.money import Rake, money_of


class _P:
    def seat(self, s: int) -> str:
        return f"seat {s}"


def test_the_money_lines():
    r = Result(end="hu", winners=(0,), net=(90, -30, -30, -30),
               payments=tuple(Payment(s, 0, 30) for s in (1, 2, 3)), instant=(), patterns={},
               xing={}, flipped=(), next_dealer=0)
    m = msgspec.to_builtins(money_of(r, 5, Rake(percent=10, cap=40)))
    lines = _money_lines(_P(), m, [410, -150, -150, -150])
    assert lines[0] == "   money: 0.05 元 a 子, rake 10% of each winner's gain, at most 0.40 元 a hand"
    assert "   seat 1 → seat 0: 30 子 = 1.50 元" in lines
    assert "   seat 0 → house: rake 0.40 元" in lines
    assert lines[-2].endswith("seat 0 4.10 元, seat 1 -1.50 元, seat 2 -1.50 元, "
                              "seat 3 -1.50 元 · house 0.40 元")
    assert _money_lines(_P(), None, None) == []
    assert _yuan(-5) == "-0.05 元" and _yuan(12345) == "123.45 元"
