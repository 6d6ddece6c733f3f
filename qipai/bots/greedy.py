"""The greedy bot: plays toward a win with its family's strategy
(:class:`~qipai.bots.mahjong.MahjongStrategy`,
:class:`~qipai.bots.zipai.ZipaiStrategy`), and as the random bot where its
family has none."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from qipai.bots.base import RandomBot, decide
from qipai.bots.mahjong import MahjongStrategy
from qipai.bots.zipai import ZipaiStrategy
from qipai.core.model import Action
from qipai.core.views import SeatView

__all__ = ["GreedyBot"]


class GreedyBot:
    """Plays toward a win with the strategy of the ruleset's family.

    It must learn the rules before it acts: ``GreedyBot(rng, ruleset)``, or
    :meth:`sit` (which :func:`~qipai.bots.run_to_end`, :func:`~qipai.bots.seat_bots` and the server
    call).  Families without a strategy play as :class:`~qipai.bots.RandomBot`.

    Args:
        rng: the bot's RNG, for ties (default: a fresh unseeded one).
        ruleset: the table's :class:`~qipai.core.ruleset.Ruleset` (or set
            later by :meth:`sit`).
    """

    #: family name → strategy class (``cls(rng, ruleset)``, then
    #: ``act(view, legal)``).
    STRATEGIES: dict[str, type] = {"mahjong": MahjongStrategy, "zipai": ZipaiStrategy}

    def __init__(self, rng: random.Random | None = None, ruleset: Any = None) -> None:
        self.rng = rng or random.Random()
        self._fallback = RandomBot(self.rng, always_win=True)
        self.ruleset: Any = None
        self._strategy: Any = None
        if ruleset is not None:
            self.sit(ruleset, 0)

    def sit(self, ruleset: Any, seat: int) -> None:
        """Play by ``ruleset`` (any seat: the seat is read from each view)."""
        if ruleset is self.ruleset:
            return
        self.ruleset = ruleset
        cls = self.STRATEGIES.get(ruleset.manifest.family)
        self._strategy = self._make(cls, ruleset) if cls is not None else self._fallback

    def _make(self, cls: type, ruleset: Any) -> Any:
        """The family's strategy for ``ruleset`` (a subclass passes more)."""
        return cls(self.rng, ruleset)

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action:
        """One of ``legal``, chosen by the family's strategy from ``view``.

        Raises:
            ValueError: ``legal`` is empty, or the bot was never seated (no
                ruleset: give one or call :meth:`sit`).
        """
        if not legal:
            raise ValueError("nothing to decide: no legal action")
        if self._strategy is None:
            name = type(self).__name__
            raise ValueError(f"{name} has no ruleset: give {name}(rng, ruleset) "
                             "or call sit(ruleset, seat) first")
        return self._strategy.act(view, legal)

    def choose(self, table: Any, seat: int) -> Action:
        """:func:`~qipai.bots.decide` ``(self, table, seat)``, seated at ``table``'s
        ruleset first (a shortcut for tests and scripts)."""
        self.sit(table.ruleset, seat)
        return decide(self, table, seat)

