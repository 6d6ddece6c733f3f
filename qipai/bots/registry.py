"""Bots by name: the built-in ones, ``module:Class``, and the ``qipai.bots``
entry points — one resolver for every place a user names a bot (``qipai
play``, ``simulate``, ``arena``, the server's bot seats, the environments'
opponents).

A bot name is one of

* a built-in bot: :data:`BUILTIN` (``random``, ``greedy`` …, and the
  operator levels ``easy`` / ``normal`` / ``hard`` of :data:`LEVELS`);
* ``module:Class`` (or ``module:function``): imported, then called as
  ``Class(rng)`` with the seat's seeded :class:`random.Random` when it takes
  an argument, else ``Class()``;
* the name of an entry point in the group ``qipai.bots`` of an installed
  package (``[project.entry-points."qipai.bots"] mybot = "pkg.mod:MyBot"``),
  loaded and called the same way.

The object made must have a callable ``act(view, legal)``
(:class:`~qipai.bots.base.Bot`).  A bad name is refused by
:func:`bot_factory` with :class:`BadBot` before any hand is dealt; a bot
that raises or answers an illegal action while it plays is reported by
:func:`checked_act` as :class:`BotFault`, naming the bot and the decision.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import random
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Any

from qipai.core.errors import QipaiError
from qipai.core.model import Action

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "LEVELS", "BadBot", "BotFault", "bot_factory",
           "bot_label", "checked_act", "known_bots"]

#: The entry-point group a package registers its bots in.
ENTRY_POINT_GROUP = "qipai.bots"

#: Built-in bot name → ``factory(rng) -> bot``; filled by :mod:`qipai.bots.play`
#: (the bots live above this module).
BUILTIN: dict[str, Callable[[random.Random], Any]] = {}

#: Operator levels → built-in bot names (the server's bot seats).
LEVELS: dict[str, str] = {"easy": "random", "normal": "greedy", "hard": "strong"}


class BadBot(QipaiError, ValueError):
    """A bot name that names no bot: unknown, not importable, not callable,
    or making an object without ``act``.  ``name`` is the name given;
    ``seat`` the seat whose bot could not be made, when one was being made
    for a seat (:func:`~qipai.bots.make_bots`), else None."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name
        self.seat: int | None = None


class BotFault(QipaiError, RuntimeError):
    """A bot raised, or answered an action that was not one of its legal ones.

    Attributes:
        bot: the bot's label (:func:`bot_label`).
        seat: the seat it decided for.
        step: the decision's index in the hand (0-based), or -1 if unknown.
        answer: what it returned (None when it raised).
        cause: the exception it raised (None when it answered illegally).
    """

    def __init__(self, bot: str, seat: int, step: int, answer: Any = None,
                 cause: BaseException | None = None) -> None:
        where = f"bot {bot} at seat {seat}" + (f", decision {step}" if step >= 0 else "")
        if cause is not None:
            why = f"raised {type(cause).__name__}: {cause}"
        else:
            why = f"answered {answer!r}, which is not one of its legal actions"
        super().__init__(f"{where}: {why}")
        self.bot, self.seat, self.step, self.answer, self.cause = bot, seat, step, answer, cause

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses a process (a simulate worker's, a Ray task's) as its message
        # and attributes; the cause and an answer that does not pickle stay
        # behind (the message names them).
        state = {**self.__dict__, "cause": None}
        try:
            pickle.dumps(self.answer)
        except Exception:  # noqa: BLE001 - whatever a bot answered
            state["answer"] = None
        return (_revived_fault, (str(self),), state)


def _revived_fault(message: str) -> BotFault:
    fault = BotFault.__new__(BotFault)
    Exception.__init__(fault, message)
    return fault


def known_bots() -> list[str]:
    """Every name :func:`bot_factory` takes without ``:`` — the built-in
    bots, the levels and the installed ``qipai.bots`` entry points."""
    eps = [ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)]
    # a level whose bot is not installed (hard before the strong bot) is no name it takes
    names = list(BUILTIN) + [lv for lv, bot in LEVELS.items()
                             if lv not in BUILTIN and (bot in BUILTIN or bot in eps)]
    names += [n for n in eps if n not in names]
    return names


def _load_target(name: str) -> Any:
    if ":" in name:
        mod_name, _, attr = name.partition(":")
        if not mod_name or not attr:
            raise BadBot(f"bot {name!r}: write module:Class, e.g. mypkg.bots:MyBot", name)
        try:
            mod = importlib.import_module(mod_name)
        except Exception as exc:  # ImportError, or the module's own error
            raise BadBot(f"bot {name!r}: module {mod_name!r} does not import "
                         f"({type(exc).__name__}: {exc})", name) from None
        target: Any = mod
        for part in attr.split("."):
            if not hasattr(target, part):
                raise BadBot(f"bot {name!r}: module {mod_name!r} has no {attr!r}", name)
            target = getattr(target, part)
        return target
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                return ep.load()
            except Exception as exc:
                raise BadBot(f"bot {name!r}: its entry point {ep.value!r} does not load "
                             f"({type(exc).__name__}: {exc})", name) from None
    raise BadBot(f"unknown bot {name!r}; bots are: {', '.join(known_bots())}, "
                 f"or module:Class", name)


def _takes_rng(target: Any) -> bool:
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return True
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return bool(params)


def bot_factory(name: str) -> Callable[[random.Random], Any]:
    """``factory(rng) -> bot`` for the bot called ``name`` (see the module
    doc); the factory of an imported class is checked once by making one
    bot with a throwaway RNG.

    Raises:
        BadBot: not a string, unknown, does not import, not callable, or what
            it makes has no callable ``act``.
    """
    if not isinstance(name, str) or not name.strip():
        raise BadBot(f"a bot name must be a non-empty string, not {name!r}", str(name))
    name = name.strip()
    level = name if name in LEVELS and name not in BUILTIN else None
    name = LEVELS[name] if level is not None else name
    if name in BUILTIN:
        return BUILTIN[name]
    if level is not None and ":" not in name and name not in known_bots():
        raise BadBot(f"level {level!r} is played by the bot {name!r}, which is not installed; "
                     f"bots are: {', '.join(known_bots())}, or module:Class", level)
    target = _load_target(name)
    if not callable(target):
        raise BadBot(f"bot {name!r} is a {type(target).__name__}, not a class or function", name)
    if inspect.isclass(target) and not callable(getattr(target, "act", None)):
        raise BadBot(f"bot {name!r}: class {target.__name__} has no act(view, legal) method",
                     name)
    takes = _takes_rng(target)

    def make(rng: random.Random) -> Any:
        try:
            bot = target(rng) if takes else target()
        except Exception as exc:
            raise BadBot(f"bot {name!r} could not be made ({type(exc).__name__}: {exc})",
                         name) from None
        if not callable(getattr(bot, "act", None)):
            raise BadBot(f"bot {name!r} made a {type(bot).__name__} without "
                         f"an act(view, legal) method", name)
        if not hasattr(bot, "qipai_name"):
            try:
                bot.qipai_name = name
            except (AttributeError, TypeError):
                pass
        return bot

    make(random.Random(0))  # refused now, not at the first hand
    return make


def bot_label(bot: Any) -> str:
    """How messages name ``bot``: the name it was made from, else its class."""
    return getattr(bot, "qipai_name", None) or type(bot).__name__


def checked_act(bot: Any, view: Any, legal: Sequence[Action], seat: int,
                step: int = -1) -> Action:
    """``bot.act(view, legal)``, checked: the answer must be one of ``legal``.

    Raises:
        BotFault: the bot raised (anything but KeyboardInterrupt; a
            ``sys.exit`` in a bot is its fault too: it must not end a server,
            nor a pool worker, which would leave the pool waiting for ever),
            or answered something not in ``legal``.
    """
    try:
        a = bot.act(view, legal)
    except (Exception, SystemExit) as exc:
        raise BotFault(bot_label(bot), seat, step, cause=exc) from exc
    if a not in legal:
        raise BotFault(bot_label(bot), seat, step, answer=a)
    return a
