"""Playing whole hands with bots: one bot per seat by name
(:func:`make_bots`), a hand played to its end (:func:`run_to_end`,
:func:`play_hand`), and hands one after another at one table
(:func:`play_hands`), each seeded from its place in the session
(:func:`qipai.core.sessions.hand_seed`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from qipai.bots.base import Bot, RandomBot, seat_bots
from qipai.bots.greedy import GreedyBot
from qipai.bots.strong import StrongBot
from qipai.bots.registry import BUILTIN, BadBot, BotFault, bot_factory, bot_label
from qipai.core.sessions import hand_seed

__all__ = ["BOT_KINDS", "MAX_STEPS", "BadBot", "BotFault", "make_bots", "play_hand", "play_hands",
           "run_to_end"]

#: A hand that takes more decisions than this is an engine bug, not a long hand.
MAX_STEPS = 5000

#: The built-in bots by name (:data:`qipai.bots.registry.BUILTIN`); any
#: other name :func:`~qipai.bots.registry.bot_factory` takes (``module:Class``,
#: a ``qipai.bots`` entry point, a level) works wherever these do.
BOT_KINDS: dict[str, Callable[[random.Random], Bot]] = BUILTIN
BOT_KINDS.update({"greedy": GreedyBot, "random": RandomBot, "strong": StrongBot})


def make_bots(bots: str | Sequence[str | Bot], n: int, seed: int | None,
              ruleset: Any = None) -> list[Bot]:
    """One bot per seat.

    Args:
        bots: a bot name for every seat (``"greedy"``, ``"random"``,
            ``module:Class``, an entry point: :func:`~qipai.bots.registry.bot_factory`),
            or one name or bot object per seat.
        n: seats at the table.
        seed: seeds each named bot's RNG (seat by seat); None: unseeded.
        ruleset: if given, every bot is seated at it (:func:`~qipai.bots.seat_bots`),
            ready to ``act``; else :func:`run_to_end` seats them.

    Raises:
        BadBot: a name that names no bot (a ValueError), or a bot that could
            not be made for a seat (its ``seat`` says which).
        BotFault: a bot's ``sit`` raised (with ``ruleset``).
        ValueError: the wrong number of bots.
    """
    specs = [bots] * n if isinstance(bots, str) else list(bots)
    if len(specs) != n:
        raise ValueError(f"{n} seats need {n} bots, got {len(specs)}")
    out: list[Bot] = []
    for seat, spec in enumerate(specs):
        if not isinstance(spec, str):
            out.append(spec)
            continue
        rng = random.Random(f"qipai-bot:{seed}:{seat}") if seed is not None else random.Random()
        factory = _factory(spec)
        try:
            out.append(factory(rng))
        except BadBot as exc:  # made once when named, not with this seat's RNG
            exc.seat = seat
            raise
    if ruleset is not None:
        seat_bots(ruleset, out)
    return out


_FACTORIES: dict[str, Callable[[random.Random], Any]] = {}


def _factory(name: str) -> Callable[[random.Random], Any]:
    """:func:`~qipai.bots.registry.bot_factory`, kept per name (an imported
    class is checked once, not once a hand)."""
    got = _FACTORIES.get(name)
    if got is None:
        got = _FACTORIES[name] = bot_factory(name)
    return got


def run_to_end(table: Any, bots: Sequence[Bot], max_steps: int = MAX_STEPS) -> int:
    """Let ``bots`` (one per seat) decide until the hand is over.

    Each bot is seated first (:func:`~qipai.bots.seat_bots`), then asked
    ``act(view, legal)`` for its seat's decisions (the view without its
    event stream; None for a ``blind`` bot), the lowest pending seat first.

    Returns: the number of decisions applied.

    Raises:
        BotFault: a bot raised (in ``sit`` too) or answered an illegal action
            (the table is as it was before that decision).
        RuntimeError: nobody has a decision though the hand is not over, or
            the hand takes more than ``max_steps`` decisions (engine bugs).
    """
    seat_bots(table.ruleset, bots)
    steps = 0
    view = table.view
    acts = [(b.act, getattr(b, "blind", False)) for b in bots]
    while table.result is None:
        pending = table.pending
        if not pending:
            raise RuntimeError("the hand is not over but no seat has a decision")
        seat = min(pending)  # table.to_decide()[0]
        act, blind = acts[seat]
        legal = list(pending[seat])
        try:
            a = act(None if blind else view(seat, events=False), legal)
        except (Exception, SystemExit) as exc:  # (checked_act's: a sys.exit is the bot's too)
            raise BotFault(bot_label(bots[seat]), seat, steps, cause=exc) from exc
        if a not in legal:
            raise BotFault(bot_label(bots[seat]), seat, steps, answer=a)
        table.apply(a)
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"the hand did not end within {max_steps} decisions")
    return steps


def play_hand(ruleset: Any, *, seed: int | None = None, dealer: int | None = None,
              bots: str | Sequence[str | Bot] = "greedy", deal: Any = None) -> Any:
    """Play one hand to the end with bots; return the finished table.

    Args:
        ruleset: a loaded :class:`~qipai.core.ruleset.Ruleset`.
        seed: seeds the shuffle and the bots: the same seed gives the same
            record.  None deals from the OS's CSPRNG (``table.seed`` None,
            the record's ``rng`` ``"os"``) and the bots are unseeded.
        dealer: the dealer's seat (default: the variant's first dealer).
        bots: see :func:`make_bots`.
        deal: an explicit :class:`~qipai.core.model.Deal` instead of a shuffle.
    """
    table = ruleset.table(seed=seed, deal=deal, dealer=dealer)
    run_to_end(table, make_bots(bots, table.n, seed))
    return table


def play_hands(ruleset: Any, hands: int = 1, *, seed: int | None = None,
               bots: str | Sequence[str | Bot] = "greedy",
               dealer: int | None = None) -> Iterator[Any]:
    """Play ``hands`` hands at one table and yield each finished table.

    Each hand's dealer is the previous hand's ``result.next_dealer`` (the
    first: ``dealer``, or the variant's first dealer); hand ``i`` is seeded
    with :func:`~qipai.core.sessions.hand_seed` ``(seed, i)``; with ``seed``
    None every hand is dealt from the OS's CSPRNG.
    """
    for i in range(hands):
        table = play_hand(ruleset, seed=None if seed is None else hand_seed(seed, i),
                          dealer=dealer, bots=bots)
        dealer = table.result.next_dealer
        yield table
