"""The strong bot: the greedy strategies, changed where the seat's view
says a discard is dangerous (:mod:`qipai.bots.strong_mahjong`,
:mod:`qipai.bots.strong_zipai`; docs/concepts/bots.md)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from qipai.bots.base import RandomBot, decide
from qipai.bots.strong_mahjong import StrongMahjong
from qipai.bots.strong_zipai import StrongZipai
from qipai.core.model import Action
from qipai.core.views import SeatView

__all__ = ["DEFAULT_BUDGET", "StrongBot"]

#: The default budget: see :class:`StrongBot`.
DEFAULT_BUDGET = 1


class StrongBot:
    """A stronger player than :class:`~qipai.bots.GreedyBot`, from the
    seat's view alone.

    Args:
        rng: the bot's RNG (ties, samples; default: a fresh unseeded one).
        ruleset: the table's rules (or set later by :meth:`sit`).
        budget: how much work a decision may take: 0 plays exactly as the
            greedy bot (the same decisions from the same RNG); 1 (the
            default) adds the danger weighing (a few table look-ups per
            discard: about twice the greedy bot's time per decision).  An
            int >= 0; larger budgets are accepted and play as 1 (no sampled
            look-ahead is built: docs/concepts/bots.md says why).

    Raises:
        ValueError: a budget that is not an int >= 0.
    """

    STRATEGIES: dict[str, type] = {"mahjong": StrongMahjong, "zipai": StrongZipai}

    def __init__(self, rng: random.Random | None = None, ruleset: Any = None, *,
                 budget: int = DEFAULT_BUDGET) -> None:
        if type(budget) is not int or budget < 0:
            raise ValueError(f"StrongBot budget must be an int >= 0, got {budget!r}")
        self.rng = rng or random.Random()
        self.budget = budget
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
        self._strategy = cls(self.rng, ruleset, self.budget) if cls is not None \
            else self._fallback

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action:
        """One of ``legal``, from ``view`` (see the class doc).

        Raises:
            ValueError: ``legal`` is empty, or the bot was never seated.
        """
        if not legal:
            raise ValueError("nothing to decide: no legal action")
        if self._strategy is None:
            raise ValueError("StrongBot has no ruleset: give StrongBot(rng, ruleset) "
                             "or call sit(ruleset, seat) first")
        return self._strategy.act(view, legal)

    def choose(self, table: Any, seat: int) -> Action:
        """:func:`~qipai.bots.decide` ``(self, table, seat)``, seated at
        ``table``'s ruleset first (a shortcut for tests and scripts)."""
        self.sit(table.ruleset, seat)
        return decide(self, table, seat)
