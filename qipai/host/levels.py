"""The bot levels a server offers its clients: a bot seat's ``level``.

A client making a table (``POST /tables``) chooses each bot seat's level
by name, among those of the server's :class:`BotLevels` only: by default
``easy`` / ``normal`` / ``hard`` (:data:`qipai.bots.registry.LEVELS`:
random, greedy, strong); the operator maps a level to another bot, or adds
a name, with ``qipai serve --bot NAME=BOT`` (``hard=mypkg.bots:MyBot``,
``pro=mypkg:Pro``).  Every bot is resolved here, when the server starts
(:func:`~qipai.bots.registry.bot_factory`): a client's words never reach
the resolver, so a client can never make the server import a module.

A table keeps its bot seats' levels in its row (``qipai_tables.bot_levels``);
a row without them (made before levels) is ``normal`` at every bot seat.
A level a restarted server (or the node that takes a table over) no longer
offers is played by ``normal``, and logged.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qipai.bots.registry import LEVELS, BadBot, bot_factory, bot_label
from qipai.core.errors import QipaiError

__all__ = ["DEFAULT_LEVEL", "BadLevel", "BotLevels", "parse_bot_options"]

#: A bot seat's level when the client names none (and a row made before levels).
DEFAULT_LEVEL = "normal"

#: What a level's name may be: short, plain, safe in a log line and a page.
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")


class BadLevel(QipaiError, ValueError):
    """A level this server does not offer, or a bad ``--bot NAME=BOT``."""


def parse_bot_options(options: Sequence[str]) -> dict[str, str]:
    """``qipai serve --bot NAME=BOT`` options → ``{NAME: BOT}``.

    Raises:
        BadLevel: not ``NAME=BOT``, a NAME that is not 1-32 of ``a-z 0-9 _ -``
            starting with a letter, or a NAME given twice.
    """
    out: dict[str, str] = {}
    for opt in options:
        name, eq, bot = opt.partition("=")
        name, bot = name.strip(), bot.strip()
        if not eq or not bot:
            raise BadLevel(f"--bot {opt!r}: write NAME=BOT, e.g. --bot hard=mypkg.bots:MyBot")
        if not _NAME.fullmatch(name):
            raise BadLevel(f"--bot {opt!r}: a level's name is 1 to 32 of a-z, 0-9, _ and -, "
                           f"starting with a letter")
        if name in out:
            raise BadLevel(f"--bot {name}=… given twice")
        out[name] = bot
    return out


class BotLevels:
    """The levels a server offers → the bots that play them.

    Args:
        operator: ``{level: bot name}`` from ``--bot`` (:func:`parse_bot_options`);
            each replaces a default level or adds one.

    Raises:
        BadLevel: an operator's bot that does not resolve (the resolver's
            words: unknown, not importable, no ``act``).  A default level
            whose bot is missing (``hard`` before a strong bot is installed)
            is not offered instead: :attr:`missing` says why.
    """

    def __init__(self, operator: Mapping[str, str] | None = None) -> None:
        self._factories: dict[str, Callable[[random.Random], Any]] = {}
        #: level → its bot's name (what the log says plays it)
        self.bot_names: dict[str, str] = {}
        #: default levels not offered → why (their bot did not resolve)
        self.missing: dict[str, str] = {}
        operator = dict(operator or {})
        for level, bot in {**LEVELS, **operator}.items():
            try:   # a default level by its own name: the resolver says what it lacks
                self._factories[level] = bot_factory(bot if level in operator else level)
            except BadBot as exc:
                if level in operator:
                    raise BadLevel(f"--bot {level}={bot}: {exc}") from None
                self.missing[level] = str(exc)
                continue
            self.bot_names[level] = bot
        if DEFAULT_LEVEL not in self._factories:  # (normal is greedy unless mapped)
            raise BadLevel(f"level {DEFAULT_LEVEL!r} has no bot: {self.missing[DEFAULT_LEVEL]}")

    @property
    def names(self) -> list[str]:
        """The levels offered, in order (the defaults first)."""
        return list(self._factories)

    def check(self, level: Any) -> str:
        """``level`` if offered.

        Raises:
            BadLevel: not a string, or not one of :attr:`names` (the
                message lists them, and why a default one is missing).
        """
        if isinstance(level, str) and level in self._factories:
            return level
        why = f" ({self.missing[level]})" if isinstance(level, str) and level in self.missing \
            else ""
        raise BadLevel(f"level {level!r} is not offered by this server{why}; levels are: "
                       f"{', '.join(self.names)}")

    def make(self, level: str, rng: random.Random, ruleset: Any, seat: int) -> Any:
        """A bot of ``level`` (:data:`DEFAULT_LEVEL`'s if not offered) for
        ``seat`` at ``ruleset``: made with ``rng``, seated (``sit``).

        Raises:
            BadBot: the bot could not be made, or its ``sit`` raised.
        """
        factory = self._factories.get(level) or self._factories[DEFAULT_LEVEL]
        bot = factory(rng)
        sit = getattr(bot, "sit", None)
        if sit is not None:
            try:
                sit(ruleset, seat)
            except (Exception, SystemExit) as exc:  # an operator's bot: not the table's end
                raise BadBot(f"bot {bot_label(bot)} could not sit at seat {seat} "
                             f"({type(exc).__name__}: {exc})", level) from None
        return bot

    def describe(self) -> str:
        """One line for the server's start: each level and its bot."""
        return ", ".join([f"{lv}={self.bot_names[lv]}" for lv in self.names]
                         + [f"{lv} not offered ({why})" for lv, why in self.missing.items()])

