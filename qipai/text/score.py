"""A scored hand for people: what ``qipai score`` prints (:class:`qipai.calc.Score`).

The verdict, every reading the win check considered with the one paid
marked, the patterns, 胡数, the bonus flip and the payments; names are the
variant's (``Manifest.names``) and :mod:`qipai.text`'s.
"""

from __future__ import annotations

from typing import Any

from qipai.text import how_label
from qipai.text.payments import print_payments

__all__ = ["print_score"]


def _name(names: dict[str, str], pid: str) -> str:
    zh = names.get(pid)
    return f"{zh} {pid}" if zh else pid


def print_score(console: Any, s: Any) -> None:
    """Print a :class:`~qipai.calc.Score` for people (rich)."""
    from rich.table import Table as RichTable

    from qipai.core.ruleset import load

    rs = load(s.variant)
    cards = rs.cards
    names = dict(rs.manifest.names)
    # A win with no winning card (三笼五坎 …) is no 自摸 (guilin-zipai §4),
    # though it is paid as one: its how is not printed as if it were.
    how_on = ("no winning card (paid as a zimo: each other seat pays)" if s.tile is None else
              f"{how_label(s.how, names)} on {s.tile} {cards.chinese(cards.parse(s.tile)[0])}")
    src = f" from seat {s.from_seat}" if s.from_seat is not None else ""
    verdict = "[bold green]wins[/]" if s.wins else "[bold red]does not win[/]"
    console.print(f"[bold]{rs.manifest.title} {s.variant}[/] · seat {s.seat} {verdict} · "
                  f"{how_on}{src} · dealer seat {s.dealer}")
    kinds = sorted(cards.parse(s.hand))
    console.print(f"hand   {s.hand}   "
                  f"{' '.join(cards.chinese(k) for k in kinds)}", markup=False)
    for m in s.melds:
        console.print(f"meld   {m}", markup=False)
    if s.flags:
        console.print(f"flags  {', '.join(_name(names, f) for f in s.flags)}", markup=False)
    if not s.wins:
        console.print(s.note, markup=False)
        return
    if s.readings:
        rule = ("the split with the most 胡数 is paid" if s.hu is not None else
                "D-M4: the reading that pays the winner most is paid; on a tie the larger "
                "value before multipliers, then a special shape")
        grid = RichTable(title=f"readings considered ({rule})", title_justify="left",
                         box=None, pad_edge=False, header_style="bold")
        grid.add_column("#", justify="right")
        grid.add_column("shape")
        grid.add_column("groups", overflow="fold")
        grid.add_column("patterns", overflow="fold")
        if s.hu is not None:
            grid.add_column("胡数", justify="right")
        grid.add_column("value", justify="right")
        grid.add_column("")
        for i, r in enumerate(s.readings, 1):
            row = [str(i), r.shape, "  ".join(r.groups),
                   ", ".join(r.patterns) or "— (below the minimum)"]
            if s.hu is not None:
                row.append(str(r.hu))
            row += [str(r.value), "← paid" if r.paid else ""]
            grid.add_row(*row, style="bold" if r.paid else None)
        console.print(grid)
    console.print(f"patterns  {', '.join(_name(names, p) for p in s.patterns) or '—'}",
                  markup=False)
    if s.hu is not None:
        console.print(f"胡数      {s.hu}", markup=False)
    if s.value is not None:
        console.print(f"value     {s.value} (the reading paid, before the bonus flip and "
                      f"liabilities)", markup=False)
    if s.xing is not None:
        if not s.flip:
            console.print("醒        not flipped (give --flip CARDS: the stock, head first)",
                          markup=False)
        else:
            flipped = " ".join(s.flipped) or "nothing (the stock is empty)"
            console.print(f"醒        flipped {flipped} → 醒数 {s.xing}", markup=False)
    _print_payments(console, rs, s)
    console.print("net       " + " · ".join(f"seat {i} {v:+d}" for i, v in enumerate(s.net)),
                  markup=False)


def _print_payments(console: Any, rs: Any, s: Any) -> None:
    print_payments(console, s.payments, rs.manifest, title="payments")
