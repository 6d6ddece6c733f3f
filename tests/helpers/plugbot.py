"""Bots loaded by name in the tests of pluggable bots (``plugbot:FirstBot`` …):
a module outside qipai, as a user's package would be.  Importable in the
test process (tests/helpers is on ``sys.path``) and, with ``PYTHONPATH`` set
to tests/helpers, in a server or worker process."""

from __future__ import annotations

import random
import threading
from typing import Any

#: Decisions :class:`FirstBot` made in this process (a test counts them).
CALLS: list[int] = []


class FirstBot:
    """Always the first legal action (a deterministic stand-in for a user's bot)."""

    blind = True

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, view: Any, legal: list[Any]) -> Any:
        CALLS.append(len(legal))
        return legal[0]


class RaisingBot:
    """Raises at its first decision."""

    blind = True

    def act(self, view: Any, legal: list[Any]) -> Any:
        raise RuntimeError("plugbot gave up")


class IllegalBot:
    """Answers something that is never a legal action."""

    blind = True

    def act(self, view: Any, legal: list[Any]) -> Any:
        return "nonsense"


class NoAct:
    """Not a bot: no act method."""


def make_first(rng: random.Random) -> FirstBot:
    """A factory function (``plugbot:make_first``)."""
    return FirstBot(rng)


#: The threads :class:`ThreadBot` decided in (a served table asks such a bot
#: off the event loop's thread).
THREADS: list[str] = []


class ThreadBot(FirstBot):
    """:class:`FirstBot` that notes the thread of each decision."""

    def act(self, view: Any, legal: list[Any]) -> Any:
        import threading

        THREADS.append(threading.current_thread().name)
        return super().act(view, legal)


class SitRaisingBot(FirstBot):
    """:class:`FirstBot` whose ``sit`` raises."""

    def sit(self, ruleset: Any, seat: int) -> None:
        raise RuntimeError("plugbot will not sit")


class ExitingBot:
    """Calls ``sys.exit`` at its first decision."""

    blind = True

    def act(self, view: Any, legal: list[Any]) -> Any:
        raise SystemExit(3)


#: Set to let every :class:`HangingBot` decision return (a test's cleanup).
RELEASE = threading.Event()


class HangingBot(FirstBot):
    """:class:`FirstBot` that does not answer until :data:`RELEASE` is set
    (a bot stuck in a loop, as a served table sees it)."""

    def act(self, view: Any, legal: list[Any]) -> Any:
        RELEASE.wait()
        return super().act(view, legal)
