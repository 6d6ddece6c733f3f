"""A hand, event by event, for people: what ``qipai play`` and ``qipai replay`` print.

:func:`log_lines` is the hand as plain lines (a draw and the discard right
after it share one); :func:`print_hand` adds each winner's hand, the
settlement grid and the payments on a rich console; :func:`print_total`
sums a session.  Cards read as ``5p(五筒)``; names come from
:mod:`qipai.text`.
"""

from __future__ import annotations

from typing import Any

from qipai.text import MELDS, ROLES, WAYS, end_label, how_label, meld_label, role_label, word
from qipai.text.payments import no_card_win, print_payments

__all__ = ["card_text", "hand_text", "log_lines", "meld_text", "print_hand", "print_total"]


def card_text(cards: Any, kind: int | None) -> str:
    """One card as ``5p(五筒)``; ``?`` if unknown."""
    if kind is None or kind < 0:
        return "?"
    return f"{cards.token(kind)}({cards.chinese(kind)})"


def hand_text(cards: Any, kinds: Any) -> str:
    """A hand in compact notation, with tile glyphs where the cards have them."""
    kinds = sorted(kinds)
    text = cards.format(kinds) or "—"
    glyph = getattr(cards, "glyph", None) or cards.chinese
    if kinds:
        text += "  " + "".join(glyph(k) for k in kinds)
    return text


def meld_text(cards: Any, meld: Any, names: Any = None) -> str:
    """A meld as ``碰 peng 555p from seat 2`` (``names``: the variant's, first)."""
    name = meld_label(meld.kind, names)
    src = f" from seat {meld.from_seat}" if meld.from_seat is not None else ""
    return f"{name} {cards.format(meld.cards)}{src}"


def _payments(payments: Any) -> str:
    return "; ".join(f"seat {p.payer} → seat {p.payee} {p.amount}"
                     + (f" ({p.reason})" if p.reason else "") for p in payments)


def log_lines(table: Any) -> list[str]:
    """The hand, event by event, as readable lines (a draw and the discard
    right after it share a line)."""
    from qipai.core import model as m

    cards = table.cards
    names = table.ruleset.manifest.names
    deal = table.deal
    events = table.events
    # The deal comes from the dealt order: the engine emits no ``Dealt`` event.
    unit = "tiles" if table.ruleset.manifest.family == "mahjong" else "cards"
    lines = [f"deal — dealer seat {deal.dealer}, {len(deal.wall)} {unit} in the stock"]
    for seat, hand in enumerate(deal.hands):
        mark = f" {ROLES['zh']['dealer']}" if seat == deal.dealer else "  "
        lines.append(f"  seat {seat}{mark} {hand_text(cards, hand)}")
    i = 0
    while i < len(events):
        e = events[i]
        nxt = events[i + 1] if i + 1 < len(events) else None
        if isinstance(e, m.Dealt):
            if e.shown:
                lines.append(f"shown at the deal: {' '.join(card_text(cards, k) for k in e.shown)}")
        elif isinstance(e, m.Drew):
            what = "draws" + (" from the tail" if e.tail else "") + (" (shown)" if e.shown else "")
            line = f"seat {e.seat}: {what} {card_text(cards, e.card)}"
            if isinstance(nxt, m.Discarded) and nxt.seat == e.seat:
                line += f", discards {card_text(cards, nxt.card)}"
                i += 1
            lines.append(line)
        elif isinstance(e, m.Discarded):
            lines.append(f"seat {e.seat}: discards {card_text(cards, e.card)}")
        elif isinstance(e, m.Melded):
            claimed = f" on {card_text(cards, e.meld.claimed)}" if e.meld.claimed is not None \
                and e.meld.kind != "jiagang" else ""
            lines.append(f"seat {e.seat}: {meld_text(cards, e.meld, names)}{claimed}")
        elif isinstance(e, m.Paid):
            lines.append(f"    paid at once: {_payments(e.payments)}")
        elif isinstance(e, m.Marked) and e.what == "jiagang":
            kong, rob = word(MELDS, "jiagang", names), word(WAYS, "qianggang", names)
            lines.append(f"seat {e.seats[0]}: adds {card_text(cards, e.card)} to a peng "
                         f"({kong}) — open to {rob}")
        elif isinstance(e, m.Marked):
            about = f" on {card_text(cards, e.card)}" if e.card is not None else ""
            seats = f" — seats {', '.join(map(str, e.seats))}" if e.seats else ""
            lines.append(f"notice: {e.what}{seats}{about}")
        elif isinstance(e, m.Won):
            src = f" from seat {e.from_seat}" if e.from_seat is not None else ""
            pats = f" — {', '.join(e.patterns)}" if e.patterns else ""
            if e.card is None:  # 三笼五坎 …: won on the cards as they are
                played = any(isinstance(x, (m.Drew, m.Discarded)) for x in events[:i])
                lines.append(f"seat {e.seat} wins {no_card_win(not played)}{src}{pats}")
            else:
                lines.append(f"seat {e.seat} wins: {how_label(e.how, names)} on "
                             f"{card_text(cards, e.card)}{src}{pats}")
        elif isinstance(e, m.Flipped):
            xing = ", ".join(f"seat {s}: {x}" for s, x in sorted(e.xing.items()))
            lines.append(f"翻醒 flipped {' '.join(card_text(cards, k) for k in e.cards) or 'nothing'}"
                         f" — 醒 {xing or 'none'}")
        elif isinstance(e, m.Ended):
            end = end_label(e.end)
            lines.append(f"end: {end}; next dealer seat {e.next_dealer}")
        else:  # an event kind this log does not know yet
            lines.append(f"{type(e).__name__}: {e}")
        i += 1
    return lines


def print_hand(console: Any, table: Any, index: int) -> None:
    from rich.rule import Rule
    from rich.table import Table as RichTable

    from qipai.core.model import Won, net_of

    cards = table.cards
    r = table.result
    dealt = f"seed {table.seed}" if table.seed is not None else "rng os"
    console.print(Rule(f"hand {index} · dealer seat {table.dealer} · {dealt}"))
    for line in log_lines(table):
        console.print(line, markup=False)
    wins = {e.seat: e for e in table.events if isinstance(e, Won)}
    for seat in r.winners:
        won = wins.get(seat)
        s = table.seats[seat]
        concealed = list(s.hand)
        if won is not None and won.card in concealed:  # shown after the "+", once
            concealed.remove(won.card)
        console.print(f"[bold]seat {seat} wins[/bold]", end=" ")
        last = card_text(cards, won.card if won else None)
        console.print(f"hand {hand_text(cards, concealed)} + {last}", markup=False)
        for meld in s.melds:
            console.print(f"    meld {meld_text(cards, meld, table.ruleset.manifest.names)}",
                          markup=False)
        pats = r.patterns.get(seat, ())
        xing = f" · 醒 {r.xing[seat]}" if seat in r.xing else ""
        console.print(f"    patterns: {', '.join(pats) or '—'}{xing}", markup=False)
    if r.flipped:
        console.print(f"flipped: {' '.join(card_text(cards, k) for k in r.flipped)}", markup=False)
    instant = net_of(r.instant, table.n)
    settle = [a - b for a, b in zip(r.net, instant)]
    from_seats = {w.from_seat for w in wins.values()
                  if w.from_seat is not None and w.how not in ("pinghu", "zimo")}
    grid = RichTable(title=f"settlement, hand {index} ({r.end})", title_justify="left")
    for col in ("seat", "role", "instant", "win", "net"):
        grid.add_column(col, justify="right" if col not in ("seat", "role") else "left")
    for seat in range(table.n):
        role = " ".join(role_label(x) for x, on in (("dealer", seat == table.dealer),
                                                     ("winner", seat in r.winners),
                                                     ("dealt_in", seat in from_seats)) if on)
        grid.add_row(str(seat), role, f"{instant[seat]:+d}", f"{settle[seat]:+d}",
                     f"[bold]{r.net[seat]:+d}[/bold]")
    console.print(grid)
    print_payments(console, r.payments, table.ruleset.manifest,
                   title=f"payments, hand {index} (instant first)")


def print_total(console: Any, tables: list[Any]) -> None:
    from rich.table import Table as RichTable

    n = tables[0].n
    grid = RichTable(title="total", title_justify="left", show_footer=True)
    total = [0] * n
    for t in tables:
        total = [a + b for a, b in zip(total, t.result.net)]
    grid.add_column("hand", footer="total")
    grid.add_column("dealer")
    grid.add_column("end")
    grid.add_column("winners")
    for seat in range(n):
        grid.add_column(f"seat {seat}", justify="right", footer=f"{total[seat]:+d}")
    for i, t in enumerate(tables, 1):
        r = t.result
        grid.add_row(str(i), str(t.dealer), r.end,
                     ", ".join(map(str, r.winners)) or "—", *(f"{x:+d}" for x in r.net))
    console.print(grid)

