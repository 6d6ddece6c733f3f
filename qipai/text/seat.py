"""One seat's view for people: what the terminal player (``qipai play --human``)
and the environments' ``render`` show.

The seat sees only what its view (:meth:`~qipai.core.table.Table.view`)
holds: its own hand, the melds as they lie (face-down cards as ``?``),
every seat's discards, the stock's size and the events as that seat saw
them.  Cards read as ``5p 五筒``; names come from :mod:`qipai.text`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qipai.core import model as m
from qipai.text import ACTIONS, ENDS, ROLES, label
from qipai.text.payments import no_card_win, print_payments

__all__ = ["action_text", "card_text", "cards_text", "event_text", "print_events",
           "show_result", "show_table"]


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
    """``"seat 2"``, or ``"you"`` (``ROLES``' word, as ``qipai connect`` says it) for ``me``."""
    return ROLES["en"]["you"] if seat == me else f"seat {seat}"


def action_text(cards: Any, action: m.Action, window: tuple[int, int, str] | None,
                names: Mapping[str, str] | None = None) -> str:
    """One legal action in words (``discard 5p 五筒``, ``碰 peng 5p 五筒`` …);
    ``names``: the variant's (``Manifest.names``), first."""
    on = f" {card_text(cards, window[0])}" if window is not None else ""
    if isinstance(action, m.Discard):
        return f"discard {card_text(cards, action.card)}"
    if isinstance(action, m.Chi):
        groups = [action.cards, *action.extra]
        return f"{label(ACTIONS, 'chi', names)} " + " + ".join(cards.format(g) for g in groups)
    kind = type(action).__struct_config__.tag
    if isinstance(action, (m.Peng, m.Minggang)):
        return f"{label(ACTIONS, kind, names)}{on}"
    if isinstance(action, (m.Angang, m.Jiagang)):
        return f"{label(ACTIONS, kind, names)} {card_text(cards, action.card)}"
    if isinstance(action, m.Hu):
        return f"{label(ACTIONS, 'hu', names)} — win on{on or ' the card in play'}"
    if isinstance(action, m.Zimo):
        return f"{label(ACTIONS, 'zimo', names)} — {ACTIONS['en']['zimo']}"
    if isinstance(action, m.Pass):
        return f"{label(ACTIONS, 'pass', names)}{' (let' + on + ' go)' if on else ''}"
    return repr(action)


def event_text(cards: Any, e: Any, me: int, at_deal: bool = False) -> str | None:
    """One event of the seat's view in words, or None for one not worth a line.

    ``at_deal``: no card was drawn or discarded before ``e`` (how a win with
    no winning card reads, :func:`qipai.text.payments.no_card_win`)."""
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
        mark = f" {ROLES['zh']['dealer']}" if s == view.dealer else ""
        name = _seat(s, me) + mark
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
        console.print(f"[bold]{label(ENDS, 'huangzhuang')}[/bold]: the stock ran out, nobody won",
                      highlight=False)
    if r.flipped:
        console.print(f"flipped: {cards_text(cards, r.flipped)}", markup=False)
    settle = r.payments[len(r.instant):]
    for title, pays in (("paid during the hand", r.instant), ("settlement", settle)):
        print_payments(console, pays, manifest, title=title)
    console.print(f"you are seat {me}; net: "
                  + " · ".join(f"{_seat(s, me)} {v:+d}" for s, v in enumerate(r.net)),
                  markup=False)
    console.print(f"next dealer: seat {r.next_dealer}", markup=False)


def print_events(console: Any, view: Any, cards: Any, seen: int) -> int:
    """Print the view's events from index ``seen`` on; return the new count."""
    for i, e in enumerate(view.events[seen:], seen):
        at_deal = not any(isinstance(x, (m.Drew, m.Discarded)) for x in view.events[:i])
        line = event_text(cards, e, view.seat, at_deal)
        if line:
            console.print(line, markup=False)
    return len(view.events)

