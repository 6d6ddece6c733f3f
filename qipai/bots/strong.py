"""The strong bot: the greedy strategies, changed where the seat's view
says a discard is dangerous (:mod:`qipai.bots.strong_mahjong`,
:mod:`qipai.bots.strong_zipai`; docs/concepts/bots.md)."""

from __future__ import annotations

import random
from typing import Any

from qipai.bots.greedy import GreedyBot
from qipai.bots.strong_mahjong import StrongMahjong
from qipai.bots.strong_zipai import StrongZipai

__all__ = ["DEFAULT_BUDGET", "StrongBot"]

#: The default budget: see :class:`StrongBot`.
DEFAULT_BUDGET = 1


class StrongBot(GreedyBot):
    """A stronger player than :class:`~qipai.bots.GreedyBot`, from the
    seat's view alone: the greedy bot's seating and asking, with the strong
    strategies (``sit``, ``act`` and ``choose`` as there).

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
        ValueError: a budget that is not an int >= 0; ``act`` as
            :meth:`GreedyBot.act <qipai.bots.GreedyBot.act>`.
    """

    STRATEGIES: dict[str, type] = {"mahjong": StrongMahjong, "zipai": StrongZipai}

    def __init__(self, rng: random.Random | None = None, ruleset: Any = None, *,
                 budget: int = DEFAULT_BUDGET) -> None:
        if type(budget) is not int or budget < 0:
            raise ValueError(f"StrongBot budget must be an int >= 0, got {budget!r}")
        self.budget = budget
        super().__init__(rng, ruleset)

    def _make(self, cls: type, ruleset: Any) -> Any:
        return cls(self.rng, ruleset, self.budget)
