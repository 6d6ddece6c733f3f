"""The failure every conformance check raises, and the guard layered over a checked variant.

:class:`Guard` checks a variant's hook answers as they are returned, so a
bug is named at its hook instead of surfacing later as a crash in the
engine; :func:`settlement_problem` is the zero-sum check it shares with the
``zero_sum`` property and the ``settle`` cases.  Below the registry (which
layers the guard over every variant it loads), the properties and the
checkers, so all three can use it.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from qipai.core.errors import QipaiError
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Payment, Settlement
from qipai.core.table import Table


class PropertyFailure(QipaiError, AssertionError):
    """A generic invariant that does not hold; the message names it.

    A :class:`~qipai.core.errors.QipaiError`, so that the engine passes it
    through as it is (as it does a variant refusing bad input) when a
    :class:`Guard` raises it from inside a hook, rather than blaming the
    Guard as a plugin with a bug.

    ``table`` is the finished table when the hand could still be played to
    its end (so the other properties can be checked on it), else None;
    ``prop`` the property it breaks when not the one being checked (a
    :class:`Guard` finding a settlement that does not sum to zero in play)."""

    def __init__(self, message: str, table: Table | None = None, prop: str = "") -> None:
        super().__init__(message)
        self.table = table
        self.prop = prop



def settlement_problem(payments: Sequence[Payment], n_players: int) -> str | None:
    """Why ``payments`` do not sum to zero over the table's seats, or None.

    Transfers between seats always sum to zero; money leaves the table only
    through a payment that names a seat the table does not have (a payer
    or payee outside ``0 .. n_players-1``), which this names.
    """
    net = [0] * n_players
    off: list[str] = []
    for p in payments:
        for role, seat, sign in (("payer", p.payer, -1), ("payee", p.payee, 1)):
            if type(seat) is int and 0 <= seat < n_players:
                net[seat] += sign * p.amount
            else:
                off.append(f"{p.payer}->{p.payee} {p.amount} ({p.reason or 'no reason'}): "
                           f"{role} {seat!r} is not a seat")
    if sum(net) == 0 and not off:
        return None
    return (f"settlement does not sum to zero over the {n_players} seats: net {net}"
            + (f"; {'; '.join(off)}" if off else ""))


class Guard:
    """A conformance-only plugin the runner layers over the variant it checks:
    it checks hook answers as the variant returns them, so a bug is named at
    its hook instead of surfacing later as a crash in the engine."""

    @hookimpl(wrapper=True)
    def qipai_settle(self, end: Any, options: Any) -> Generator[None, Settlement, Settlement]:
        settlement = yield
        problem = settlement_problem(settlement.payments, end.n_players)
        if problem:
            raise PropertyFailure(f"qipai_settle: {problem}", prop="zero_sum")
        return settlement


GUARD = Guard()
