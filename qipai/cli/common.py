"""What several commands share: the exit statuses, the one-line error, plugins.

Imported by the command modules of :mod:`qipai.cli` only; nothing below
the command line imports it.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

DEFAULT_VARIANT = "guilin-mahjong"

#: Exit statuses: a replay that differs, bad input (usage, files, records).
EXIT_DIFFERS = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one ``error: …`` line on stderr and exit with ``code``."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


def load_plugin(spec: str) -> Any:
    """A plugin module from a dotted name or a ``.py`` file (QipaiError if neither)."""
    from qipai.core.ruleset import load_plugin as load

    return load(spec)
