"""``qipai play --human SEAT``: play one seat yourself against bots in the terminal.

The seat is shown only what it may see — the table's per-seat view
(:meth:`~qipai.core.table.Table.view`): its own hand, the melds as they lie
(face-down cards as ``?``), every seat's discards, the stock's size and the
events as that seat saw them (:mod:`qipai.text.seat`).  Its legal actions are listed,
numbered from 1; the answer is a number, a card to discard (``W``, ``3m``,
``三万``) or an action's word (``peng``, ``胡``, ``过``), read as ``qipai
connect`` reads it (:mod:`qipai.text.answer`); a line that names no action,
or more than one, is refused with a one-line hint and asked again.
The other seats are bots (:mod:`qipai.bots`).  At the end of the hand the
settlement is shown: who won how, the patterns, the flip, each payment.

Choices of this interface: with ``auto_pass`` (the default, as the
commercial apps do) a decision with exactly one legal answer — a claim
window where the only answer is 过, or a forced move — is played without
asking (the line says so); without it the seat is asked at every claim
window, even one where it may only pass.  ``q``, the end of input (EOF)
and Ctrl-C end the session with a one-line message, leaving the hand
unfinished.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

__all__ = ["Quit", "play_as_human", "play_human"]

#: The language of the words this client adds (:data:`qipai.text.CLIENT`):
#: the one the seat's view is printed in (:mod:`qipai.text.seat`).
LANG = "en"


class Quit(Exception):
    """The player left (``q``, the end of input, or Ctrl-C); ``why`` says which."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def choose(console: Any, options: Sequence[str], read: Callable[[str], str],
           legal: Sequence[Any] = (), cards: Any = None, names: Any = None) -> int:
    """Ask for one of ``options`` (numbered from 1) until one is given;
    return its index.  With ``legal`` (the actions ``options`` describe, as
    :mod:`qipai.core.model` actions or their JSON) a card or an action's
    word is taken too (:func:`qipai.text.answer.pick`).  Raises
    :class:`Quit` on ``q``, the end of input or Ctrl-C."""
    import msgspec
    from rich.markup import escape

    from qipai.text.answer import BadAnswer, leaves, pick, say

    as_json = [msgspec.to_builtins(a) if not isinstance(a, dict) else a for a in legal] or \
        [{"type": "?"} for _ in options]
    for i, text in enumerate(options, 1):
        console.print(f"  [bold]{i}[/bold]  {text}", highlight=False)
    while True:
        try:
            line = read(say(LANG, "prompt", n=len(options)) + ": ")
        except EOFError:
            raise Quit(say(LANG, "input_ended")) from None
        except KeyboardInterrupt:
            raise Quit(say(LANG, "interrupted")) from None
        if leaves(line):
            raise Quit(say(LANG, "quit"))
        try:
            return pick(line, as_json, cards, names, LANG)
        except BadAnswer as bad:
            console.print(f"[red]refused[/red]: {escape(str(bad))}", highlight=False,
                          soft_wrap=True)   # one line, however narrow the terminal


def play_human(ruleset: Any, seat: int, *, seed: int | None = None, hands: int = 1,
               bots: Any = "greedy", console: Any = None,
               read: Callable[[str], str] | None = None, auto_pass: bool = True) -> list[Any]:
    """Play ``hands`` hands with a person at ``seat`` and bots elsewhere.

    Args:
        ruleset: a loaded ruleset.
        seat: the person's seat (0 … players − 1).
        seed: seeds the deals and the bots (hand i: ``hand_seed(seed, i)``);
            None deals from the OS's CSPRNG.
        bots: who plays the other seats: a bot name for all, or one per seat
            (the person's entry ignored); see :func:`qipai.bots.make_bots`.
        console: a rich ``Console`` (default: a new one).
        read: reads one line after printing its prompt (default: the
            console's ``input``); raises EOFError at the end of input.
        auto_pass: play a decision with one legal answer (a pass-only
            claim window, a forced move) without asking; False asks the
            seat at every claim window (the table asks every seat,
            ``ask_all``; the bots' pass-only windows are passed for them,
            so they play as they would otherwise).

    Returns:
        The finished tables.

    Raises:
        Quit: the person quit or the input ended (the tables finished so
            far are in ``Quit.tables``).
        BadOption: ``seat`` is not a seat of the variant.
        BotFault: a bot raised or answered an illegal action (its name,
            seat and decision in the message).
    """
    from rich.console import Console
    from rich.rule import Rule

    from qipai.bots import checked_act, make_bots
    from qipai.core.errors import BadOption
    from qipai.core.model import Pass
    from qipai.core.sessions import hand_seed
    from qipai.text.answer import say
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
        table = ruleset.table(seed=None if seed is None else hand_seed(seed, i), dealer=dealer,
                              ask_all=not auto_pass)
        players = make_bots(bots, n, None if seed is None else hand_seed(seed, i),
                            ruleset=ruleset)
        console.print(Rule(f"{ruleset.manifest.title} · hand {i + 1} · you are seat {seat}"))
        seen = 0
        try:
            while not table.over:
                who = table.to_decide()[0]
                if who != seat:
                    only = table.legal_actions(who)
                    if not auto_pass and len(only) == 1 and isinstance(only[0], Pass):
                        table.apply(only[0])   # asked only because every seat is (ask_all)
                    else:
                        legal = list(only)
                        bot = players[who]
                        view = None if getattr(bot, "blind", False) else table.view(
                            who, events=False)
                        table.apply(checked_act(bot, view, legal, who, len(table.actions)))
                    continue
                view = table.view(seat)
                seen = print_events(console, view, cards, seen)
                legal = list(view.legal)
                if len(legal) == 1 and auto_pass:
                    only = action_text(cards, legal[0], view.window, names)
                    console.print(say(LANG, "only_move", action=only), markup=False)
                    table.apply(legal[0])
                    continue
                show_table(console, view, cards, n)
                offered = [action_text(cards, a, view.window, names) for a in legal]
                k = choose(console, offered, read, legal, cards, names)
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


def play_as_human(rs: Any, seat: int, *, seed: int | None, hands: int, bots: Any,
                  as_json: bool, auto_pass: bool = True) -> None:
    """Run :func:`play_human` on the terminal; the end of input or
    ``q`` ends the session with a message (exit status 0); ``auto_pass``:
    see :func:`play_human`.

    Raises:
        BadOption: ``--json`` with ``--human``, or a seat not at the table.
    """
    from rich.console import Console

    from qipai.core.errors import BadOption

    if as_json:
        raise BadOption("--human plays in the terminal; it has no --json output")
    console = Console(highlight=False)
    try:
        play_human(rs, seat, seed=seed, hands=hands, bots=bots, console=console,
                   auto_pass=auto_pass)
    except Quit as q:
        from qipai.text.answer import say

        console.print("\n" + say(LANG, "unfinished", why=q.why), markup=False)
        return
    click.echo("Goodbye.")
