"""``qipai play --human SEAT``: the command side of :mod:`qipai.human`."""

from __future__ import annotations

from typing import Any

import click


def play_as_human(rs: Any, seat: int, *, seed: int | None, hands: int, bots: str,
                  as_json: bool) -> None:
    """Run :func:`qipai.human.play_human` on the terminal; the end of input or
    ``q`` ends the session with a message (exit status 0).

    Raises:
        BadOption: ``--json`` with ``--human``, or a seat not at the table.
    """
    from rich.console import Console

    from qipai.core.errors import BadOption
    from qipai.human import Quit, play_human

    if as_json:
        raise BadOption("--human plays in the terminal; it has no --json output")
    console = Console(highlight=False)
    try:
        play_human(rs, seat, seed=seed, hands=hands, bots=bots, console=console)
    except Quit as q:
        console.print(f"\n{q.why}: the hand is left unfinished. Goodbye.", markup=False)
        return
    click.echo("Goodbye.")
