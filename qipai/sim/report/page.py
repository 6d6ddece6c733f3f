"""The report as an HTML page: the table and matplotlib charts drawn from the file.

:func:`charts` draws the figures (pattern frequencies, money moved,
cumulative net by seat), :func:`write_html` writes one self-contained page
(the PNGs embedded) and :func:`is_report_page` tells a page it wrote, which
``qipai report --html`` may replace, from any other file.
"""

from __future__ import annotations

import base64
import contextlib
import html as html_lib
import io
import os
import secrets
import stat
from typing import Any

from qipai.core.extras import require
from qipai.sim import BadSimulation
from qipai.sim.report.render import table_rows
from qipai.sim.report.stats import wilson
from qipai.sim.report.summary import (
    Figure, RulesetSummary, Summary, _connect, _game, _never_seen, differences, notes,
    pattern_text,
)


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode()


#: Fonts with Chinese characters, the first installed one drawing the
#: patterns' names in the charts (matplotlib's own DejaVu has none).
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei",
             "WenQuanYi Zen Hei", "Droid Sans Fallback", "AR PL UMing CN", "SimHei",
             "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "Arial Unicode MS")


def _cjk_font() -> list[str]:
    """``[the first of CJK_FONTS installed]``, or ``[]``: then the charts
    give the pattern ids alone (no boxes for missing characters)."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next(([f] for f in CJK_FONTS if f in installed), [])


def charts(summary: Summary, path: str) -> dict[str, Any]:
    """The report's matplotlib figures: ``patterns`` (share of wins per
    pattern with its interval, 0 where the table shows ``0.0 %``; the
    patterns as :func:`pattern_text` where a font of :data:`CJK_FONTS` is
    installed, else their ids; rulesets of different families — a mahjong
    and 字牌 — on rows of their own, the family after the name, as one id
    is another thing in each), ``moved``
    (distribution of 子 moved per hand), ``net`` (cumulative net by seat
    over the hands, one panel per ruleset, with the noise band of
    :func:`noise_band`) and, with two rulesets or more, ``differences``
    (:func:`paired_points`: each later ruleset − the first, paired on the
    hands, with its 95 % interval)."""
    require("matplotlib", "sim")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    con, _ = _connect(path)
    names = [rs.ruleset for rs in summary.rulesets]
    out = {"patterns": _patterns_chart(plt, matplotlib, summary),
           "moved": _moved_chart(plt, con, names), "net": _net_chart(plt, con, names)}
    points = paired_points(summary)
    if points:
        out["differences"] = _differences_chart(plt, points)
    return out


def paired_points(summary: Summary) -> list[tuple[str, str, float, tuple[float, float]]]:
    """What the ``differences`` chart draws: per later ruleset, per mean
    figure paired on the hands (子 moved, instant payments, each seat's
    net: :attr:`Summary.paired`), ``(ruleset, label, later − first,
    95 % interval)`` — the mean of the per-hand differences, mean ± 1.96 ·
    sd/√n (:func:`~qipai.sim.report.summary.differences`, the table's
    difference column).  Empty with one ruleset or none paired."""
    out = []
    for other, d in zip(summary.rulesets[1:], differences(summary)):
        paired = summary.paired.get(other.ruleset, {})
        for f in other.figures:
            if f.key in paired and f.key in d:
                value, ci = d[f.key]
                out.append((other.ruleset, f.label.replace(" (mean)", ""), value, ci))
    return out


def _differences_chart(plt: Any, points: list[tuple[str, str, float, tuple[float, float]]]
                       ) -> Any:
    """Each paired difference of a mean with its interval, a row each, 0 marked."""
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(points) + 1.2))
    ys = list(range(len(points)))
    for r in dict.fromkeys(p[0] for p in points):
        mine = [(y, p) for y, p in zip(ys, points) if p[0] == r]
        ax.errorbar([p[2] for _, p in mine], [y for y, _ in mine], fmt="o", capsize=3,
                    xerr=[[max(0.0, p[2] - p[3][0]) for _, p in mine],
                          [max(0.0, p[3][1] - p[2]) for _, p in mine]], label=r)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(ys, [p[1].replace("子", "zi") for p in points])
    ax.invert_yaxis()
    ax.set_xlabel("later ruleset − the first (zi per hand; paired on the hands, 95 % interval)")
    ax.set_title("paired differences from the first ruleset")
    ax.legend(fontsize="small")
    return fig


def noise_band(nets: list[list[int]]) -> tuple[float, list[float]]:
    """The noise band of a cumulative-net chart: ``(sd, half)`` with ``sd``
    the sample standard deviation of the seats' nets per hand (all seats
    together) and ``half[k] = 1.96 · sd · √(k + 1)``, the half-width of the
    95 % band around 0 that a seat's cumulative net after ``k + 1`` hands
    stays in when it only has luck (independent hands of mean 0).  A seat
    whose line leaves it plays (or sits) better than luck says."""
    import math

    from qipai.sim.report.stats import Z

    xs = [x for n in nets for x in n]
    if len(xs) < 2:
        return 0.0, [0.0] * len(nets)
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return sd, [Z * sd * math.sqrt(k + 1) for k in range(len(nets))]


def _patterns_chart(plt: Any, matplotlib: Any, summary: Summary) -> Any:
    """The share of wins per pattern, each ruleset's bars with their intervals."""
    game = _game
    keys = list(dict.fromkeys((game(rs), f.key) for rs in summary.rulesets for f in rs.figures
                              if f.key.startswith("pattern:")))
    # each game's rulesets side by side on its rows, slot j of its own
    members: dict[str, list[RulesetSummary]] = {}
    for rs in summary.rulesets:
        members.setdefault(game(rs), []).append(rs)
    games = len(members) > 1
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(3, len(keys)) + 1))
    height = 0.8 / max(len(m) for m in members.values())
    for rs in summary.rulesets:
        j = members[game(rs)].index(rs)
        ys, vs, errs = [], [], [[], []]
        for i, (g, key) in enumerate(keys):
            f = rs.get(key)
            if g != game(rs):
                continue
            if f is None:
                if not (rs.wins and _never_seen(summary, rs, key)):
                    continue
                f = Figure(key, "", "rate", 0.0, rs.wins, wilson(0, rs.wins), x=0)
            ys.append(i + j * height)
            vs.append(100 * f.value)
            # max(0, …): at a rate of 0 or 1 rounding can put the bound a hair past it
            errs[0].append(max(0.0, 100 * (f.value - f.ci[0])))
            errs[1].append(max(0.0, 100 * (f.ci[1] - f.value)))
        ax.barh(ys, vs, height=height, xerr=errs, label=rs.ruleset, capsize=2)
    cjk = _cjk_font()
    ax.set_yticks([i + height * (len(members[g]) - 1) / 2 for i, (g, _) in enumerate(keys)],
                  [pattern_text(k.split(":", 1)[1], summary.pattern_names if cjk else {})
                   + (f" ({g})" if games else "") for g, k in keys],
                  fontfamily=[*matplotlib.rcParams["font.family"], *cjk])
    ax.invert_yaxis()
    ax.set_xlabel("% of wins (95 % Wilson interval)")
    ax.set_title("pattern frequencies")
    ax.legend(loc="lower right", fontsize="small")
    return fig


def _moved_chart(plt: Any, con: Any, names: list[str]) -> Any:
    """The distribution of 子 moved per hand, a line per ruleset."""
    fig, ax = plt.subplots(figsize=(8, 4))
    data = {r: [v for (v,) in con.execute("SELECT moved FROM h WHERE ruleset = ?", [r]).fetchall()]
            for r in names}
    top = max((max(v) for v in data.values() if v), default=1)
    step = max(1, int(top) // 60 + 1)
    bins = list(range(0, int(top) + step + 1, step))  # the last edge past the largest
    for r in names:
        if data[r]:
            ax.hist(data[r], bins=bins, histtype="step", label=r, linewidth=1.4,
                    weights=[1 / len(data[r])] * len(data[r]))
    ax.set_yscale("log")
    ax.set_xlabel("zi moved in a hand (sum of the seats' gains)")
    ax.set_ylabel(f"share of hands per bin of {bins[1] - bins[0]} (log)")
    ax.set_title("distribution of payments")
    ax.legend(fontsize="small")
    return fig


def _net_chart(plt: Any, con: Any, names: list[str]) -> Any:
    """Each seat's cumulative net over the hands, a panel per ruleset, over
    the grey noise band ±1.96·sd·√n (:func:`noise_band`)."""
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.6), squeeze=False,
                             sharey=True)
    for ax, r in zip(axes[0], names):
        nets = [n for (n,) in con.execute("SELECT net FROM h WHERE ruleset = ? ORDER BY hand",
                                          [r]).fetchall()]
        _, half = noise_band(nets)
        if nets:
            # not in the legend (the seats'): the title says what it is
            ax.fill_between(range(len(nets)), [-h for h in half], half, color="0.85",
                            linewidth=0)
        for s in range(len(nets[0]) if nets else 0):
            acc, line = 0, []
            for n in nets:
                acc += n[s]
                line.append(acc)
            ax.plot(line, label=f"seat {s}", linewidth=1)
        ax.set_title(r, fontsize="medium")
        ax.set_xlabel("hand")
        if nets:
            ax.legend(fontsize="small")  # each panel: the rulesets may seat 3 or 4
    axes[0][0].set_ylabel("cumulative net (zi)")
    fig.suptitle("cumulative net by seat (dealer rotates; grey: luck alone, ±1.96·sd·√n)")
    return fig


#: What every page :func:`write_html` writes holds in its first bytes: an
#: existing file is replaced only when it holds it (:func:`is_report_page`).
PAGE_MARK = b"<title>qipai report</title>"


def is_report_page(path: str) -> bool:
    """Whether the file ``path`` is empty or a page :func:`write_html`
    wrote (its first 512 bytes hold :data:`PAGE_MARK`): a page that
    ``report --html`` may replace.  False for a file that cannot be read
    and for anything but a regular file (a FIFO or a terminal is not
    read: that could wait for ever)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    return not head or PAGE_MARK in head


def write_html(summary: Summary, path: str, html_path: str) -> None:
    """Write a self-contained HTML page: the report table and the charts
    (PNG, base64-embedded).

    Raises:
        BadSimulation: ``html_path`` has no file name (empty, or ending with
            a slash) or cannot be written (nothing is left behind).
    """
    if not html_path or html_path.endswith(("/", os.sep)):
        raise BadSimulation(f"cannot write {html_path!r}: no file name")
    import matplotlib.pyplot as plt

    figs = charts(summary, path)
    esc = html_lib.escape
    head, body = table_rows(summary)
    table = "<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>" + "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in body) + \
        "</table>"
    titles = {"patterns": "Pattern frequencies", "moved": "Distribution of payments",
              "net": "Cumulative net by seat (grey: the noise band ±1.96·sd·√n)",
              "differences": "Paired differences from the first ruleset (95 % intervals)"}
    imgs = "".join(f'<h2>{esc(titles.get(name, name))}</h2>'
                   f'<img alt="{esc(titles.get(name, name))}" '
                   f'src="data:image/png;base64,{_png(fig)}">' for name, fig in figs.items())
    for fig in figs.values():
        plt.close(fig)
    m = summary.meta
    remarks = "".join(f'<p class="note">{esc(n)}</p>' for n in notes(summary))
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>qipai report</title><style>
body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 0.2em 0.6em; }}
td {{ text-align: right; white-space: nowrap; }}
td:first-child {{ text-align: left; }} img {{ max-width: 100%; }}
p.note {{ background: #fff6d5; padding: 0.3em 0.6em; }}
</style></head><body><h1>qipai report</h1>
<p>{esc(str(m.get('bots')))} bots · seed {esc(str(m.get('seed')))} ·
{esc(str(m.get('hands')))} hands asked per ruleset · 95 % intervals (Wilson; for differences of
rates Newcombe's, paired on the hands for rates of hands; normal for means,
differences paired on the hands)</p>{remarks}{table}{imgs}</body></html>
"""
    target = os.path.abspath(html_path)
    tmp = None
    try:  # a temporary file of its own beside the page, never a file of the user's
        name = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}."
                            f"{os.getpid()}.{secrets.token_hex(4)}.part")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        tmp = name
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
        os.replace(tmp, html_path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        raise BadSimulation(f"cannot write {html_path}: {exc.strerror or exc}") from None
