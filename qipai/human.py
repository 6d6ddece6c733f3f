"""Play one seat yourself against bots in the terminal (``qipai play --human SEAT``).

The seat is shown only what it may see — the table's per-seat view
(:meth:`~qipai.core.table.Table.view`): its own hand, the melds as they lie
(face-down cards as ``?``), every seat's discards, the stock's size and the
events as that seat saw them.  Its legal actions are listed with numbers; a
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

from qipai.core import model as m
from qipai.explain import no_card_win

__all__ = ["Quit", "action_text", "event_text", "play_human"]


class Quit(Exception):
    """The player left (``q``, or the end of input); ``why`` says which."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def card_text(cards: Any, kind: int | None) -> str:
    """``5p 五筒``; ``?`` for a card the seat may not see."""
    if kind is None or kind < 0:
        return "?"
    return f"{cards.token(kind)} {cards.chinese(kind)}"


def cards_text(cards: Any, kinds: Sequence[int | None]) -> str:
    """Cards in notation with their Chinese names: ``123m 一万 二万 三万``."""
    known = sorted(k for k in kinds if k is not None)
    hidden = len(kinds) - len(known)
    text = cards.format(known) if known else ""
    if known:
        text += "  " + " ".join(cards.chinese(k) for k in known)
    return (text + " ?" * hidden).strip() or "—"


def _seat(seat: int, me: int) -> str:
    return "you" if seat == me else f"seat {seat}"


def action_text(cards: Any, action: m.Action, window: tuple[int, int, str] | None) -> str:
    """One legal action in words (``discard 5p 五筒``, ``碰 peng 5p 五筒`` …)."""
    on = f" {card_text(cards, window[0])}" if window is not None else ""
    if isinstance(action, m.Discard):
        return f"discard {card_text(cards, action.card)}"
    if isinstance(action, m.Chi):
        groups = [action.cards, *action.extra]
        return "吃 chi " + " + ".join(cards.format(g) for g in groups)
    if isinstance(action, m.Peng):
        return f"碰 peng{on}"
    if isinstance(action, m.Minggang):
        return f"明杠 minggang{on}"
    if isinstance(action, m.Angang):
        return f"暗杠 angang {card_text(cards, action.card)}"
    if isinstance(action, m.Jiagang):
        return f"加杠 jiagang {card_text(cards, action.card)}"
    if isinstance(action, m.Hu):
        return f"胡 hu — win on{on or ' the card in play'}"
    if isinstance(action, m.Zimo):
        return "自摸 zimo — win on your own draw"
    if isinstance(action, m.Pass):
        return f"过 pass{' (let' + on + ' go)' if on else ''}"
    return repr(action)


def event_text(cards: Any, e: Any, me: int, at_deal: bool = False) -> str | None:
    """One event of the seat's view in words, or None for one not worth a line.

    ``at_deal``: no card was drawn or discarded before ``e`` (how a win with
    no winning card reads, :func:`qipai.explain.no_card_win`)."""
    who = _seat(getattr(e, "seat", -1), me)
    if isinstance(e, m.Dealt):
        shown = f"; shown: {cards_text(cards, e.shown)}" if e.shown else ""
        return f"deal: dealer seat {e.dealer}, {e.stock} left in the stock{shown}"
    if isinstance(e, m.Drew):
        how = " from the tail" if e.tail else ""
        what = card_text(cards, e.card) if e.card is not None else "a card"
        return f"{who} drew {what}{how}{' (shown to all)' if e.shown else ''}"
    if isinstance(e, m.Discarded):
        return f"{who} discarded {card_text(cards, e.card)}"
    if isinstance(e, m.Melded):
        src = f" from seat {e.meld.from_seat}" if e.meld.from_seat is not None else ""
        return f"{who} laid {e.meld.kind} {cards_text(cards, e.meld.cards)}{src}"
    if isinstance(e, m.Paid):
        return "paid at once: " + "; ".join(
            f"seat {p.payer} → seat {p.payee} {p.amount} ({p.reason})" for p in e.payments)
    if isinstance(e, m.Marked):
        about = f" on {card_text(cards, e.card)}" if e.card is not None else ""
        seats = f" (seats {', '.join(map(str, e.seats))})" if e.seats else ""
        return f"notice: {e.what}{seats}{about}"
    if isinstance(e, m.Won):
        src = f" from seat {e.from_seat}" if e.from_seat is not None else ""
        pats = f" — {', '.join(e.patterns)}" if e.patterns else ""
        if e.card is None:  # 三笼五坎 …: won on the cards as they are
            return f"{who} won {no_card_win(at_deal)}{src}{pats}"
        return f"{who} won ({e.how}) on {card_text(cards, e.card)}{src}{pats}"
    if isinstance(e, m.Flipped):
        xing = ", ".join(f"seat {s}: {x}" for s, x in sorted(e.xing.items())) or "none"
        return f"flipped {cards_text(cards, e.cards)} — 醒 {xing}"
    if isinstance(e, m.Ended):
        return None  # the settlement follows
    return f"{type(e).__name__}"


def show_table(console: Any, view: Any, cards: Any, n_players: int) -> None:
    """The seat's hand, every seat's melds and discards, the card in play."""
    from rich.table import Table as RichTable

    me = view.seat
    grid = RichTable(box=None, pad_edge=False, show_header=True, header_style="bold")
    grid.add_column("seat")
    grid.add_column("cards", justify="right")
    grid.add_column("melds", overflow="fold")
    grid.add_column("discards", overflow="fold")
    for s in range(n_players):
        name = ("you" if s == me else f"seat {s}") + (" 庄" if s == view.dealer else "")
        melds = "; ".join(f"{mv.kind} {cards_text(cards, mv.cards)}" for mv in view.melds[s])
        discards = " ".join(cards.token(k) for k in view.discards[s])
        grid.add_row(name, str(view.hand_sizes[s]), melds or "—", discards or "—")
    console.print(grid)
    console.print(f"stock: {view.stock} left", markup=False)
    if view.window is not None:
        card, owner, source = view.window
        console.print(f"in play: {card_text(cards, card)} — {source} of {_seat(owner, me)}",
                      markup=False)
    console.print(f"[bold]your hand[/bold]: {cards_text(cards, view.hand)}", highlight=False)


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


def show_result(console: Any, view: Any, cards: Any, manifest: Any) -> None:
    """The settlement of a finished hand, as the seat's view holds it."""
    r = view.result
    me = view.seat
    if r.end == "hu":
        for w in r.winners:
            pats = ", ".join(r.patterns.get(w, ())) or "—"
            xing = f" · 醒 {r.xing[w]}" if w in r.xing else ""
            console.print(f"[bold]{_seat(w, me)} won[/bold] · patterns {pats}{xing}",
                          highlight=False)
    else:
        console.print("[bold]荒庄 huangzhuang[/bold]: the stock ran out, nobody won",
                      highlight=False)
    if r.flipped:
        console.print(f"flipped: {cards_text(cards, r.flipped)}", markup=False)
    from qipai.explain import print_payments

    settle = r.payments[len(r.instant):]
    for title, pays in (("paid during the hand", r.instant), ("settlement", settle)):
        print_payments(console, pays, manifest, title=title)
    console.print(f"you are seat {me}; net: "
                  + " · ".join(f"{_seat(s, me)} {v:+d}" for s, v in enumerate(r.net)),
                  markup=False)
    console.print(f"next dealer: seat {r.next_dealer}", markup=False)


def _print_events(console: Any, view: Any, cards: Any, seen: int) -> int:
    """Print the view's events from index ``seen`` on; return the new count."""
    for i, e in enumerate(view.events[seen:], seen):
        at_deal = not any(isinstance(x, (m.Drew, m.Discarded)) for x in view.events[:i])
        line = event_text(cards, e, view.seat, at_deal)
        if line:
            console.print(line, markup=False)
    return len(view.events)


def play_human(ruleset: Any, seat: int, *, seed: int | None = None, hands: int = 1,
               bots: str = "greedy", console: Any = None,
               read: Callable[[str], str] | None = None) -> list[Any]:
    """Play ``hands`` hands with a person at ``seat`` and bots elsewhere.

    Args:
        ruleset: a loaded ruleset.
        seat: the person's seat (0 … players − 1).
        seed: seeds the deals and the bots (hand i: ``bots.hand_seed(seed, i)``);
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

    from qipai.bots import hand_seed, make_bots
    from qipai.core.errors import BadOption

    n = ruleset.manifest.players
    if not 0 <= seat < n:
        raise BadOption(f"--human {seat}: {ruleset.manifest.title} has seats 0 to {n - 1}")
    console = console or Console(highlight=False)
    read = read or (lambda prompt: console.input(prompt))
    cards = ruleset.cards
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
                seen = _print_events(console, view, cards, seen)
                legal = list(view.legal)
                if len(legal) == 1:
                    console.print(f"only move: {action_text(cards, legal[0], view.window)}",
                                  markup=False)
                    table.apply(legal[0])
                    continue
                show_table(console, view, cards, n)
                k = choose(console, [action_text(cards, a, view.window) for a in legal], read)
                table.apply(legal[k])
        except Quit as q:
            q.tables = done  # type: ignore[attr-defined]
            raise
        view = table.view(seat)
        _print_events(console, view, cards, seen)
        console.print(Rule("settlement"))
        show_result(console, view, cards, ruleset.manifest)
        done.append(table)
        dealer = table.result.next_dealer
    return done
