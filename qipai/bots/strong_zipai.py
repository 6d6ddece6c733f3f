"""The strong bot's zipai play."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from qipai.bots.zipai import ZipaiStrategy
from qipai.core.model import Action
from qipai.core.views import SeatView

__all__ = ["StrongZipai"]


class StrongZipai:
    def __init__(self, rng: random.Random, ruleset: Any = None, budget: int = 1) -> None:
        self.rng = rng
        self.greedy = ZipaiStrategy(rng, ruleset)
        self.budget = budget

    def act(self, view: SeatView, legal: Sequence[Action]) -> Action:
        return self.greedy.act(view, legal)
