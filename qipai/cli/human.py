"""``qipai play --human SEAT``: play one seat yourself against bots in the terminal.

The seat is shown only what it may see — the table's per-seat view
(:meth:`~qipai.core.table.Table.view`): its own hand, the melds as they lie
(face-down cards as ``?``), every seat's discards, the stock's size and the
events as that seat saw them (:mod:`qipai.text.seat`).  Its legal actions are listed with numbers; a
line that is not one of them is refused with the reason and asked again.
The other seats are bots (:mod:`qipai.bots`).  At the end of the hand the
settlement is shown: who won how, the patterns, the flip, each payment.

Choices of this interface: a seat with exactly one legal action plays it
without being asked (the line says so); ``q`` quits; the end of input
(EOF) ends the session with a message, leaving the hand unfinished.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

__all__ = ["Quit", "play_as_human", "play_human"]


class Quit(Exception):
    """The player left (``q``, or the end of input); ``why`` says which."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def choose(console: Any, options: Sequence[str], read: Callable[[str], str]) -> int:
    """Ask for one of ``options`` by number (1-based) until one is given;
    return its index.  Raises :class:`Quit` on ``q`` or the end of input."""
    for i, text in enumerate(options, 1):
        console.print(f"  [bold]{i}[/bold]  {text}", highlight=False)
    while True:
        try:
            line = read(f"your choice (1–{len(options)}, q to quit): ")
        except EOFError:
            raise Quit("the input ended") from None
        text = line.strip()
        if text.lower() in ("q", "quit", "exit"):
            raise Quit("you quit")
        if not text.isdigit():
            console.print(f"[red]refused[/red]: {text!r} is not a number — type the number "
                          f"of an action, 1 to {len(options)}", highlight=False)
            continue
        k = int(text)
        if not 1 <= k <= len(options):
            console.print(f"[red]refused[/red]: {k} is not one of the actions — choose "
                          f"1 to {len(options)}", highlight=False)
            continue
        return k - 1


def play_human(ruleset: Any, seat: int, *, seed: int | None = None, hands: int = 1,
               bots: str = "greedy", console: Any = None,
               read: Callable[[str], str] | None = None) -> list[Any]:
    """Play ``hands`` hands with a person at ``seat`` and bots elsewhere.

    Args:
        ruleset: a loaded ruleset.
        seat: the person's seat (0 … players − 1).
        seed: seeds the deals and the bots (hand i: ``hand_seed(seed, i)``);
            None deals from the OS's CSPRNG.
        bots: who plays the other seats (``greedy`` or ``random``).
        console: a rich ``Console`` (default: a new one).
        read: reads one line after printing its prompt (default: the
            console's ``input``); raises EOFError at the end of input.

    Returns:
        The finished tables.

    Raises:
        Quit: the person quit or the input ended (the tables finished so
            far are in ``Quit.tables``).
        BadOption: ``seat`` is not a seat of the variant.
    """
    from rich.console import Console
    from rich.rule import Rule

    from qipai.bots import make_bots
    from qipai.core.errors import BadOption
    from qipai.core.sessions import hand_seed
    from qipai.text.seat import action_text, print_events, show_result, show_table

    n = ruleset.manifest.players
    if not 0 <= seat < n:
        raise BadOption(f"--human {seat}: {ruleset.manifest.title} has seats 0 to {n - 1}")
    console = console or Console(highlight=False)
    read = read or (lambda prompt: console.input(prompt))
    cards = ruleset.cards
    names = ruleset.manifest.names
    done: list[Any] = []
    dealer = None
    for i in range(hands):
        table = ruleset.table(seed=None if seed is None else hand_seed(seed, i), dealer=dealer)
        players = make_bots(bots, n, None if seed is None else hand_seed(seed, i))
        console.print(Rule(f"{ruleset.manifest.title} · hand {i + 1} · you are seat {seat}"))
        seen = 0
        try:
            while not table.over:
                who = table.to_decide()[0]
                if who != seat:
                    table.apply(players[who].choose(table, who))
                    continue
                view = table.view(seat)
                seen = print_events(console, view, cards, seen)
                legal = list(view.legal)
                if len(legal) == 1:
                    console.print(f"only move: {action_text(cards, legal[0], view.window, names)}",
                                  markup=False)
                    table.apply(legal[0])
                    continue
                show_table(console, view, cards, n)
                offered = [action_text(cards, a, view.window, names) for a in legal]
                k = choose(console, offered, read)
                table.apply(legal[k])
        except Quit as q:
            q.tables = done  # type: ignore[attr-defined]
            raise
        view = table.view(seat)
        print_events(console, view, cards, seen)
        console.print(Rule("settlement"))
        show_result(console, view, cards, ruleset.manifest)
        done.append(table)
        dealer = table.result.next_dealer
    return done


def play_as_human(rs: Any, seat: int, *, seed: int | None, hands: int, bots: str,
                  as_json: bool) -> None:
    """Run :func:`play_human` on the terminal; the end of input or
    ``q`` ends the session with a message (exit status 0).

    Raises:
        BadOption: ``--json`` with ``--human``, or a seat not at the table.
    """
    from rich.console import Console

    from qipai.core.errors import BadOption

    if as_json:
        raise BadOption("--human plays in the terminal; it has no --json output")
    console = Console(highlight=False)
    try:
        play_human(rs, seat, seed=seed, hands=hands, bots=bots, console=console)
    except Quit as q:
        console.print(f"\n{q.why}: the hand is left unfinished. Goodbye.", markup=False)
        return
    click.echo("Goodbye.")
