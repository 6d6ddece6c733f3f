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


class SitRaises(GreedyBot):
    """Greedy, but its ``sit`` raises: a fault before its first decision."""

    def sit(self, ruleset: Any, seat: int) -> None:
        raise RuntimeError("arena test: no seat for me")


class Exits(GreedyBot):
    """Calls ``sys.exit`` at its first decision (in a pool worker this once
    killed the worker, and the pool waited for its chunk for ever)."""

    def act(self, view: Any, legal: Any) -> Any:
        raise SystemExit(3)


class NotMadeWithSomeSeeds(GreedyBot):
    """Made with the registry's check RNG (``Random(0)``, first draw 0.84),
    but not with a seat's RNG whose first draw is below 0.5."""

    def __init__(self, rng: Any) -> None:
        if rng.random() < 0.5:
            raise RuntimeError("arena test: an unlucky seed")
        super().__init__(rng)
