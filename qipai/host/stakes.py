"""A hosted table's stake and rake (issue 36): each finished hand's money
(:func:`qipai.core.money.money_of`), written into its record, its
``hand_ended`` event and message, and the ``money`` column of its hand row;
the running money totals and the house's take, for ``GET /tables/{id}``,
the welcome and a room's 大结算.

(A part of :class:`~qipai.host.match.HostedTable`.)  A table without a
stake (``stake`` NULL: today's tables, and every table made before stakes)
has no money anywhere: its records, events and messages are as before.
"""

from __future__ import annotations

from typing import Any

import msgspec

from qipai.core.money import Money, Rake, check_stake, money_of
from qipai.host import protocol as P


class Stakes:
    """(A part of :class:`~qipai.host.match.HostedTable`.)  See the module
    docstring."""

    def money_init(self, row: dict[str, Any]) -> None:
        rake = row.get("rake")
        #: minor units per 子 (None: no money) and the rake rule (None: none)
        self.stake, self.rake = check_stake(
            row.get("stake"), msgspec.json.decode(rake, type=Rake) if rake else None)
        #: running net in money per seat after the rake, and the house's take
        self.money_totals = [0] * self.n  # type: ignore[attr-defined]
        self.house = 0

    def hand_money(self, result: Any) -> Money | None:
        """The money of a finished hand (None: the table has no stake).
        Raises PluginError: a house ``qipai_rake`` answered nonsense."""
        if self.stake is None or result is None:
            return None
        rs = self.ruleset  # type: ignore[attr-defined]
        return money_of(result, self.stake, self.rake, hook=rs.hook, options=rs.options)

    def count_money(self, money: Money | None) -> None:
        """Add a finished hand's money to the running totals."""
        if money is not None:
            self.money_totals = [a + b for a, b in zip(self.money_totals, money.net)]
            self.house += money.house

    def money_after(self, money: Money | None) -> list[int] | None:
        """The money totals once ``money`` is added (not stored)."""
        if money is None:
            return None
        return [a + b for a, b in zip(self.money_totals, money.net)]

    @staticmethod
    def money_row(money: Money | None) -> dict[str, Any]:
        """The ``finish_hand`` parameter of a hand's money (``{}``: none)."""
        if money is None:
            return {}
        return {"money": msgspec.json.encode({"net": list(money.net),
                                              "house": money.house}).decode()}

    def rebuild_money(self, done: list[dict[str, Any]]) -> None:
        """(At a rebuild.)  The money totals from the finished hands' rows."""
        self.money_totals = [0] * self.n  # type: ignore[attr-defined]
        self.house = 0
        for h in done:
            if h.get("money"):
                m = msgspec.json.decode(h["money"])
                self.money_totals = [a + b for a, b in zip(self.money_totals, m["net"])]
                self.house += m["house"]

    def money_tally(self, tally: P.Tally, money: Money | None = None) -> P.Tally:
        """``tally`` with each seat's total in money and the house's take
        (``money``: a last hand not yet counted); as is without a stake."""
        if self.stake is None:
            return tally
        totals = self.money_after(money) or self.money_totals
        house = self.house + (money.house if money is not None else 0)
        seats = tuple(msgspec.structs.replace(s, money=totals[s.seat]) for s in tally.seats)
        return msgspec.structs.replace(tally, seats=seats, stake=self.stake, house=house)

    def money_info(self) -> dict[str, Any]:
        """``TableInfo``'s money fields (all None without a stake)."""
        if self.stake is None:
            return {}
        return dict(stake=self.stake, rake=self.rake, money_totals=tuple(self.money_totals),
                    house=self.house)
