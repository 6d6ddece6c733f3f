"""Bots for the arena tests, loaded by ``module:Class`` (``arena_bots:…``;
tests/helpers/ is on the path through tests/conftest.py)."""

from __future__ import annotations

from typing import Any

from qipai.bots import GreedyBot


class Greedy(GreedyBot):
    """The greedy bot under another name: it must play exactly as ``greedy``."""


class FaultsAtSeatTwo(GreedyBot):
    """Greedy, but raises at its third decision when it sits at seat 2."""

    def __init__(self, rng: Any) -> None:
        super().__init__(rng)
        self.asked = 0

    def act(self, view: Any, legal: Any) -> Any:
        self.asked += 1
        if view.seat == 2 and self.asked == 3:
            raise RuntimeError("arena test: seat 2 gives up")
        return super().act(view, legal)


class Illegal:
    """Answers something that is never a legal action."""

    def act(self, view: Any, legal: Any) -> Any:
        return "not an action"


class NoAct:
    """A class without act: refused by name."""
