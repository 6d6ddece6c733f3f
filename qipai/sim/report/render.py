"""The report as text: one table of figures, for a terminal (rich) or as Markdown.

:func:`table_rows` gives the cells; :func:`print_report` lays them out on
a console of any width (nothing cut: a narrow console gets each interval
under its value, the columns spread over several tables), :func:`markdown`
as a Markdown table for docs.
"""

from __future__ import annotations

import math
from typing import Any

from qipai.sim.report.stats import wilson
from qipai.sim.report.summary import (
    Figure, RulesetSummary, Summary, _game, _never_seen, _own, differences, notes,
)


def _num(x: float, digits: int, sign: str) -> str:
    """``x`` with ``digits`` decimals (``sign`` "+": always signed); a value
    that rounds to zero prints as 0, never -0."""
    r = round(x, digits)
    return f"{(0.0 if r == 0 else r):{sign}.{digits}f}"


def _fmt(fig: Figure, value: float | None = None, ci: tuple[float, float] | None = None,
         diff: bool = False) -> str:
    v = fig.value if value is None else value
    lo, hi = fig.ci if ci is None else ci
    if math.isnan(lo) or math.isnan(hi):  # one hand: no interval (mean_ci)
        sign = "+" if diff or fig.key.startswith("net") else ""
        return f"{_num(v, 2, sign)} [n/a]"
    if fig.kind == "rate":
        sign = "+" if diff else ""
        unit = " pp" if diff else " %"
        return (f"{_num(100 * v, 1, sign)}{unit} "
                f"[{_num(100 * lo, 1, sign)}, {_num(100 * hi, 1, sign)}]")
    sign = "+" if diff or fig.key.startswith("net") else ""
    return f"{_num(v, 2, sign)} [{_num(lo, 2, sign)}, {_num(hi, 2, sign)}]"


def _label(summary: Summary, key: str) -> str:
    for rs in summary.rulesets:
        f = rs.get(key)
        if f is not None:
            return f.label
    return key


#: The order of the table's rows by kind of figure (:func:`_row_rank`).
_ROW_ORDER = ("huangzhuang", "dealer", "seat", "how:", "pattern:", "moved", "instant", "net",
              "hu", "xing")


def _row_rank(key: str) -> int:
    """Where figure ``key`` goes among the table's rows: 荒庄, the dealer's
    and the seats' wins, ways of winning, patterns, 子 moved, instant
    payments, the seats' nets, 胡数, 醒 — whichever ruleset has it first."""
    for i, kind in enumerate(_ROW_ORDER):
        if key == kind or (kind in ("seat", "net") and key.startswith(kind)
                           and key[len(kind):].isdigit()) or (kind.endswith(":")
                                                              and key.startswith(kind)):
            return i
    return len(_ROW_ORDER)


def table_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """The report's table as text: the header (figure, each ruleset, each
    later ruleset − the first) and one row of cells per figure, as the
    terminal, ``--markdown`` and ``--html`` show it.

    Rows go by kind of figure (:func:`_row_rank`), so a seat only a later
    ruleset has (a 4-seat mahjong after a 3-seat 字牌) sits with the other
    seats.  With rulesets of several games (a mahjong and 字牌) a way of
    winning or pattern has a row per game that shows it, the game after the
    label (``pattern 平胡 pinghu (of wins; zipai)``), ``—`` in the other
    games' columns: one id is another thing in each."""
    diffs = differences(summary)
    rulesets = summary.rulesets
    first = rulesets[0]
    head = ["figure"] + [rs.ruleset for rs in rulesets] + \
        [f"{o.ruleset} − {first.ruleset}" for o in rulesets[1:]]
    body = [["hands"] + [str(rs.hands) for rs in rulesets] + [""] * len(diffs)]
    games = list(dict.fromkeys(_game(rs) for rs in rulesets))
    keys = sorted(dict.fromkeys(f.key for rs in rulesets for f in rs.figures), key=_row_rank)
    for key in keys:
        groups: list[str | None] = [None]
        if len(games) > 1 and _own(key):
            groups = [g for g in games
                      if any(_game(rs) == g and rs.get(key) is not None for rs in rulesets)]
        for g in groups:
            mine = [rs for rs in rulesets if g is None or _game(rs) == g]
            proto = next(f for f in (rs.get(key) for rs in mine) if f is not None)
            label = _label(summary, key) if g is None else \
                f"{proto.label[:-1]}; {g})" if proto.label.endswith(")") else f"{proto.label} ({g})"
            body.append([label]
                        + [_cell(summary, rs, key, proto) if rs in mine else "—" for rs in rulesets]
                        + [_fmt(proto, d[key][0], d[key][1], diff=True)
                           if key in d and first in mine else "—" for d in diffs])
        if key == "moved":
            body.append(["子 moved per hand p50 / p90 / p99 / max"]
                        + [" / ".join(f"{rs.moved_percentiles[p]:g}" for p in ("p50", "p90", "p99"))
                           + f" / {rs.moved_max}" for rs in rulesets]
                        + [""] * len(diffs))
    return head, body


def _cell(summary: Summary, rs: RulesetSummary, key: str, proto: Figure) -> str:
    """Ruleset ``rs``'s cell of figure ``key``: its value and interval; a way
    of winning or pattern it lacks but could have (:func:`_never_seen`) is
    0 of its hands won or wins; ``—``, no such figure, for another
    variant's own pattern or another game's way of winning or pattern,
    胡数 or 醒 in mahjong, a seat it has not, or nothing to count (no
    wins)."""
    f = rs.get(key)
    if f is not None:
        return _fmt(f)
    n = rs.denominator(key)
    if _own(key) and n and _never_seen(summary, rs, key):
        return _fmt(Figure(key, proto.label, "rate", 0.0, n, wilson(0, n), x=0))
    return "—"


def _heading(summary: Summary) -> str:
    m = summary.meta
    return (f"{m.get('bots')} bots · seed {m.get('seed')} · {m.get('hands')} hands asked per "
            f"ruleset")


TITLE = "per ruleset: value [95 % interval]"


#: The narrowest the figure column of a narrow table gets (its labels wrap
#: at spaces), unless the console is too narrow for it and one more column.
LABEL_MIN = 20


def print_report(console: Any, summary: Summary) -> None:
    """Print the report's tables on a rich ``console``.

    One table of :func:`table_rows` when it fits the console's width.  When
    it does not (an 80-column terminal, a pipe: rich's default width), a
    narrow layout: each value's interval on a line of its own under it,
    ruleset names broken before their options, a line between rows; and
    when even that is too wide (three rulesets or more), the columns are
    spread over several tables, each with the figure column.  Nothing is
    cut: a value or interval is never broken or elided — on a console too
    narrow for the labels beside one column, the tables are printed as wide
    as they must be (the terminal wraps the lines).  Above the tables,
    the :func:`notes` (rulesets of other variants than the first)."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.text import Text

    console.print(f"[bold]qipai report[/bold] · {_heading(summary)}")
    for line in notes(summary):
        console.print(Text(line))
    head, body = table_rows(summary)
    columns = list(zip(*([head] + body)))
    natural = sum(max(cell_len(c) for c in col) + 3 for col in columns) + 1
    if natural <= console.width:
        console.print(_rich_table(TITLE, head, body))
        return
    n = len(summary.rulesets)
    first = summary.rulesets[0].ruleset
    heads = [_spec_lines(h) for h in head[1:n + 1]] + \
        [_diff_lines(o.ruleset, first) for o in summary.rulesets[1:]]
    # the percentiles row: at most one line per column less wide than the units
    units = [[_units(row[i]) for row in body] for i in range(1, len(head))]
    widths = [max(cell_len(x) for x in [*h, *(u for cell in col for u in cell if " / " not in u)])
              for h, col in zip(heads, units)]
    # at least its longest word; less than LABEL_MIN if that is what lets
    # the widest column fit beside it
    label = max([min(LABEL_MIN, console.width - max(widths) - 7)]
                + [cell_len(w) for row in body for w in row[0].split()])

    # narrower than the labels' longest word beside one column (under about
    # 32 columns): the tables are made that wide, their lines running past
    # the edge (the terminal wraps them) rather than cutting a value
    width = max(console.width, label + 3 + max(widths) + 3 + 1)

    def fits(group: list[int]) -> bool:
        return label + 3 + sum(widths[i] + 3 for i in group) + 1 <= width

    everything = list(range(len(widths)))
    groups = [everything] if fits(everything) else \
        _pack(everything[:n], fits) + _pack(everything[n:], fits)
    if width > console.width:
        console = Console(file=console.file, width=width, highlight=False,
                          color_system=console.color_system, force_terminal=console.is_terminal)
    for k, group in enumerate(groups):
        title = TITLE if k == 0 else (f"differences from {first}: value [95 % interval]"
                                      if group[0] >= n else "per ruleset, continued")
        cells = [["\n".join(_fill(u, widths[i])) for i, u in
                  ((i, units[i][r]) for i in group)] for r in range(len(body))]
        console.print(_rich_table(title, [head[0]] + ["\n".join(heads[i]) for i in group],
                                  [[row[0]] + c for row, c in zip(body, cells)],
                                  narrow=[label] + [widths[i] for i in group]))


def _rich_table(title: str, head: list[str], body: list[list[str]],
                narrow: list[int] | None = None) -> Any:
    """A rich table of the cells; ``narrow``: the narrow layout, with these
    column widths (the figure column's the least it wraps to)."""
    from rich.table import Table as RichTable
    from rich.text import Text

    # Text, not markup: a cell such as "3.00 [n/a]" or a label with "[…]" is
    # shown as it is, never read as a style tag and dropped.
    grid = RichTable(title=Text(title), title_justify="left", show_lines=narrow is not None)
    head = [Text(h) for h in head]
    for i, h in enumerate(head):
        if narrow is None:
            grid.add_column(h, justify="left" if i == 0 else "right")
        elif i == 0:
            grid.add_column(h, justify="left", min_width=narrow[0], overflow="fold")
        else:  # the cells are already broken into lines that fit
            grid.add_column(h, justify="right", no_wrap=True, min_width=narrow[i])
    for row in body:
        grid.add_row(*(Text(c) for c in row))
    return grid


def _pack(columns: list[int], fits: Any) -> list[list[int]]:
    """``columns`` in order, in as few groups that ``fits`` as it takes."""
    groups: list[list[int]] = []
    for c in columns:
        if groups and fits(groups[-1] + [c]):
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _units(cell: str) -> list[str]:
    """A cell's parts that a narrow table never breaks: a value and its
    interval; any other cell whole (:func:`_fill` breaks the percentiles)."""
    value, bracket, interval = cell.partition(" [")
    if bracket:
        return [value, "[" + interval]
    return [cell]


def _fill(units: list[str], width: int) -> list[str]:
    """Lines of at most ``width`` cells: the units, and a percentiles cell
    (``a / b / c / d``) broken after a slash."""
    from rich.cells import cell_len

    if len(units) != 1 or " / " not in units[0]:
        return units
    parts = units[0].split(" / ")
    lines = parts[:1]
    for i, part in enumerate(parts[1:], 2):
        joined = f"{lines[-1]} / {part}"
        if cell_len(joined if i == len(parts) else f"{joined} /") <= width:
            lines[-1] = joined
        else:
            lines[-1] += " /"
            lines.append(part)
    return lines


def _spec_lines(spec: str) -> list[str]:
    """A ruleset's name, then its options, a line each: ``guilin-mahjong``,
    ``(hubao=False)``."""
    name, paren, options = spec.partition("(")
    if not paren:
        return [spec]
    opts = options.split(", ")
    return [name] + [("(" if i == 0 else "") + o + ("," if i < len(opts) - 1 else "")
                     for i, o in enumerate(opts)]


def _diff_lines(other: str, first: str) -> list[str]:
    lines = _spec_lines(first)
    return _spec_lines(other) + [f"− {lines[0]}"] + lines[1:]


def markdown(summary: Summary) -> str:
    """The report's table as a Markdown (MyST / GitHub) table, for docs;
    after the :func:`notes`, a paragraph each, when there are any."""
    head, body = table_rows(summary)
    before = "".join(f"{n}\n\n" for n in notes(summary))

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    rule = "|---|" + "---:|" * (len(head) - 1)
    return before + "\n".join([line([f"`{h}`" if 0 < i <= len(summary.rulesets) else h
                             for i, h in enumerate(head)]), rule]
                     + [line(r) for r in body]) + "\n"
