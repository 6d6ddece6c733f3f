"""What several commands share: the exit statuses, the one-line error, plugins.

Imported by the command modules of :mod:`qipai.cli` only; nothing below
the command line imports it.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

DEFAULT_VARIANT = "guilin-mahjong"

#: Exit statuses: a replay that differs, bad input (usage, files, records);
#: a bot that raised or answered an illegal action (``qipai play``, ``simulate``).
EXIT_DIFFERS = 1
EXIT_BOT = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one ``error: …`` line on stderr and exit with ``code``."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


def load_plugin(spec: str) -> Any:
    """A plugin module from a dotted name or a ``.py`` file (QipaiError if neither)."""
    from qipai.core.ruleset import load_plugin as load

    return load(spec)


def bot_names(text: str, n: int | None = None, option: str = "--bots") -> str | list[str]:
    """``--bots`` of a command: one bot name for every seat, or a comma list
    of one per seat (``greedy,mypkg.bots:MyBot,random,greedy``; a
    ``module:Class`` has a colon, never a comma).  Each name is resolved
    (:func:`qipai.bots.registry.bot_factory`) now, before any hand.

    Returns: the one name (a str), or the list of ``n`` names.

    A name that names no bot (the resolver's words), or a list that is
    not ``n`` long, is one ``error:`` line, exit status 2 (:func:`fail`).
    """
    from qipai.bots.registry import BadBot, bot_factory

    names = [b.strip() for b in text.split(",")]
    if len(names) > 1 and n is not None and len(names) != n:
        fail(f"{option}: {len(names)} bots for {n} seats: give one name for every seat, "
             f"or one per seat")
    for name in dict.fromkeys(names):
        try:
            bot_factory(name)
        except BadBot as exc:
            fail(f"{option}: {exc}")
    return names[0] if len(names) == 1 else names
