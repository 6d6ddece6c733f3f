"""Stakes and rake: a hand's result in money, the rake a line of its own.

A table may carry a ``stake`` — money per 子, an integer in the operator's
minor units (分 for 元: a stake of 10 is 0.10 元 a 子) — and a rake rule
(:class:`Rake`): ``percent`` of each winner's gain, at most ``cap`` per
winner per hand.  :func:`money_of` is the one place that turns a hand's
:class:`~qipai.core.model.Result` into money; the host writes its answer
(:class:`Money`) into the hand's record, the ``hand_ended`` event and
message, and ``qipai verify`` recomputes it (:func:`money_problem`).

The rule, exactly (integers only, no variant branch):

* every payment of the result, ``amount`` 子, is ``amount × stake`` in money
  (:class:`MoneyPayment`);
* a seat's gain is its net of the hand in money, ``net[s] × stake`` — a
  *winner* is a seat whose gain is > 0 (whatever made it: a 胡, or only
  instant payments such as kongs);
* each winner pays the house ``min(cap, floor(gain × percent / 100))``
  (rounded down, per winner, the cap per winner per hand), a
  :class:`RakeLine` of its own when it is > 0;
* a seat's money net is its gain minus its rake; ``house`` is the sum of
  the rake lines, and ``sum(net) + house == 0`` always.

A house plugin may compute the rake lines itself (hook ``qipai_rake``,
``firstresult``; None: the rule above).  Its answer is checked
(:func:`check_rake_lines`): each line an int amount ≥ 0 from a seat at the
table, a seat's lines together no more than its gain — else
:class:`~qipai.core.errors.PluginError` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from qipai.core.errors import PluginError, QipaiError

#: A table's stake (minor units per 子): from 1 to this.
MAX_STAKE = 1_000_000
#: A rake's ``percent``: an integer from 0 to this.
MAX_RAKE_PERCENT = 100
#: A rake's ``cap`` (minor units per winner per hand): from 0 to this.
MAX_RAKE_CAP = 1_000_000_000


class BadStake(QipaiError, ValueError):
    """A stake or rake rule that is not an integer within its bounds; the
    message names the field (``stake``, ``rake.percent``, ``rake.cap``)."""


class Rake(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A table's rake rule: ``percent`` (an integer, 0-100) of each winner's
    gain of a hand, rounded down, at most ``cap`` (minor units, ≥ 0) per
    winner per hand."""

    percent: int
    cap: int


class MoneyPayment(msgspec.Struct, frozen=True, kw_only=True):
    """One payment of the result in money: ``zi`` 子 from ``payer`` to
    ``payee``, ``amount`` = ``zi × stake`` minor units, for ``reason``."""

    payer: int
    payee: int
    zi: int
    amount: int
    reason: str = ""


class RakeLine(msgspec.Struct, frozen=True, kw_only=True):
    """The rake one winner pays: ``amount`` minor units from seat ``payer``
    to ``payee`` ``"house"`` (the house account)."""

    payer: int
    amount: int
    payee: Literal["house"] = "house"


class Money(msgspec.Struct, frozen=True, kw_only=True):
    """A hand in money (minor units).

    Attributes:
        stake: minor units per 子.
        rake: the table's rake rule (None: none).
        payments: every payment of the result (:class:`MoneyPayment`), in
            the result's order.
        rake_lines: the rake, one line per winner that pays one
            (:class:`RakeLine`, to ``"house"``).
        net: per seat, its gain minus its rake.
        house: the house's take (the rake lines' sum);
            ``sum(net) + house == 0``.
    """

    stake: int
    rake: Rake | None = None
    payments: tuple[MoneyPayment, ...] = ()
    rake_lines: tuple[RakeLine, ...] = ()
    net: tuple[int, ...] = ()
    house: int = 0


def check_stake(stake: Any, rake: Any = None) -> tuple[int | None, Rake | None]:
    """``(stake, rake)`` checked: ``stake`` None or an int 1..:data:`MAX_STAKE`;
    ``rake`` None, a :class:`Rake` or a ``{"percent", "cap"}`` dict with
    ``percent`` an int 0..:data:`MAX_RAKE_PERCENT` and ``cap`` an int
    0..:data:`MAX_RAKE_CAP`.  A rake without a stake is refused (it would
    take nothing from nothing).

    Raises:
        BadStake: naming the field and the value given.
    """
    if stake is not None and (type(stake) is not int or not 1 <= stake <= MAX_STAKE):
        raise BadStake(f"stake (minor units per 子) must be a whole number from 1 to "
                       f"{MAX_STAKE}, not {stake!r}")
    if rake is None:
        return stake, None
    if isinstance(rake, Rake):
        percent, cap = rake.percent, rake.cap
    elif isinstance(rake, dict):
        extra = set(rake) - {"percent", "cap"}
        if extra:
            raise BadStake(f"rake takes percent and cap only, not {min(extra)!r}")
        if "percent" not in rake or "cap" not in rake:
            raise BadStake(f"rake needs {'percent' if 'percent' not in rake else 'cap'}: "
                           f'{{"percent": P, "cap": C}}')
        percent, cap = rake["percent"], rake["cap"]
    else:
        raise BadStake(f'rake must be an object {{"percent": P, "cap": C}}, not {rake!r}')
    if type(percent) is not int or not 0 <= percent <= MAX_RAKE_PERCENT:
        raise BadStake(f"rake.percent must be a whole number from 0 to {MAX_RAKE_PERCENT}, "
                       f"not {percent!r}")
    if type(cap) is not int or not 0 <= cap <= MAX_RAKE_CAP:
        raise BadStake(f"rake.cap (minor units per winner per hand) must be a whole number "
                       f"from 0 to {MAX_RAKE_CAP}, not {cap!r}")
    if stake is None:
        raise BadStake("rake needs a stake: without one no money is counted")
    return stake, Rake(percent=percent, cap=cap)


def rule_rake(gains: Sequence[int], rake: Rake | None) -> list[RakeLine]:
    """The rake lines of the rule: each seat with ``gains[s] > 0`` pays
    ``min(cap, gains[s] * percent // 100)``, a line when > 0."""
    if rake is None:
        return []
    out = []
    for s, g in enumerate(gains):
        if g > 0:
            a = min(rake.cap, g * rake.percent // 100)
            if a > 0:
                out.append(RakeLine(payer=s, amount=a))
    return out


def check_rake_lines(lines: Any, gains: Sequence[int]) -> list[RakeLine]:
    """``lines`` (a hook's answer: a list of :class:`RakeLine` or of
    ``{"payer", "amount"}`` dicts) checked against ``gains`` (money per
    seat before rake).

    Raises:
        BadStake: not a list of lines; an amount not an int or negative; a
            payer not a seat at the table; a seat's lines together more
            than its gain (a seat that gained nothing pays nothing).
    """
    if not isinstance(lines, (list, tuple)):
        raise BadStake(f"rake lines are a list, not {type(lines).__name__}")
    n = len(gains)
    out: list[RakeLine] = []
    paid = [0] * n
    for i, x in enumerate(lines):
        if isinstance(x, RakeLine):
            payer, amount = x.payer, x.amount
        elif isinstance(x, dict) and set(x) <= {"payer", "amount", "payee"}:
            payer, amount = x.get("payer"), x.get("amount")
            if x.get("payee", "house") != "house":
                raise BadStake(f"rake line {i} is paid to {x['payee']!r}, not the house")
        else:
            raise BadStake(f"rake line {i} is {x!r}, not a RakeLine or {{'payer', 'amount'}}")
        if type(payer) is not int or not 0 <= payer < n:
            raise BadStake(f"rake line {i}'s payer {payer!r} is not a seat (0..{n - 1})")
        if type(amount) is not int:
            raise BadStake(f"rake line {i}'s amount {amount!r} is not an int")
        if amount < 0:
            raise BadStake(f"rake line {i}'s amount {amount} is negative")
        paid[payer] += amount
        if paid[payer] > max(gains[payer], 0):
            raise BadStake(f"rake line {i}: seat {payer} would pay {paid[payer]} in rake, more "
                           f"than its gain {max(gains[payer], 0)}")
        if amount:
            out.append(RakeLine(payer=payer, amount=amount))
    return out


def money_of(result: Any, stake: int, rake: Rake | None = None, hook: Any = None,
             options: Any = None) -> Money:
    """The money of a hand (see the module docstring): ``result`` a
    :class:`~qipai.core.model.Result`, ``stake`` minor units per 子,
    ``rake`` the table's rule.  ``hook``: a ruleset's hook relay — a house
    plugin's ``qipai_rake`` answer, if any, replaces the rule's lines.

    Raises:
        BadStake: ``stake`` or ``rake`` out of bounds.
        PluginError: a ``qipai_rake`` answer refused (:func:`check_rake_lines`).
    """
    check_stake(stake, rake)
    if stake is None:
        raise BadStake("money needs a stake")
    payments = tuple(MoneyPayment(payer=p.payer, payee=p.payee, zi=p.amount,
                                  amount=p.amount * stake, reason=p.reason)
                     for p in result.payments)
    gains = [v * stake for v in result.net]
    lines = None
    if hook is not None and hasattr(hook, "qipai_rake"):
        kwargs = dict(result=result, stake=stake, rake=rake, gains=list(gains), options=options)
        answer = hook.qipai_rake(**kwargs)
        if answer is not None:
            try:
                lines = check_rake_lines(answer, gains)
            except BadStake as exc:
                from qipai.core.dispatch import culprit

                def refused(a: Any) -> bool:
                    try:
                        check_rake_lines(a, gains)
                    except BadStake:
                        return True
                    return False

                raise PluginError("qipai_rake", culprit(hook, "qipai_rake", refused, **kwargs),
                                  str(exc)) from None
    if lines is None:
        lines = rule_rake(gains, rake)
    net = list(gains)
    for line in lines:
        net[line.payer] -= line.amount
    return Money(stake=stake, rake=rake, payments=payments, rake_lines=tuple(lines),
                 net=tuple(net), house=sum(line.amount for line in lines))


def money_problem(money: Money, result: Any, hook: Any = None, options: Any = None
                  ) -> str | None:
    """None if ``money`` (a record's block) is what :func:`money_of` makes of
    ``result`` with its stake and rake (and ``hook``: the record's ruleset's,
    for a house ``qipai_rake``) and sums to zero with the house line; else a
    one-line description of the first difference."""
    total = sum(money.net) + money.house
    if total != 0:
        return f"money net {list(money.net)} and house {money.house} sum to {total}, not 0"
    if result is None:
        return "the record has money but no result"
    try:
        want = money_of(result, money.stake, money.rake, hook=hook, options=options)
    except QipaiError as exc:
        return f"the money cannot be recomputed: {exc}"
    for field in Money.__struct_fields__:
        got, wanted = getattr(money, field), getattr(want, field)
        if got != wanted:
            return (f"the money is not what stake {money.stake} and the rake rule make of "
                    f"the result: {field} is {_json(got)}, not {_json(wanted)}")
    return None


def _json(v: Any, limit: int = 200) -> str:
    text = msgspec.json.encode(v).decode()
    return text if len(text) <= limit else text[:limit] + "…"
