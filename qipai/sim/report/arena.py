"""What a ``qipai arena`` file says: each challenger's result against the field, paired on the deals.

The statistic
    Per challenger and deal, the *per-deal statistic* is the challenger's
    mean ``challenger_net`` (子) over its rotations of that deal that
    finished (a rotation with a bot's fault is left out; a deal none of
    whose rotations finished is left out).  Every rotation of a deal plays
    the same wall, so the deal's luck is shared by the seats and cancels in
    this mean.  The mean 子 per hand is the mean of the per-deal statistics
    over the deals, with the normal interval mean ± 1.96 · sd / √n (sd the
    sample standard deviation of the per-deal statistics, n the deals;
    :func:`~qipai.sim.report.stats.mean_ci`): the deals are independent
    (each its own seed), the rotations of a deal are not, so the deal is
    the unit.

    The field as its own challenger scores exactly 0: its rotations are one
    and the same table (every seat's bot seeded from the deal and the
    seat), whose nets sum to 0.  A challenger's mean is therefore directly
    its advantage over the field, in 子 per hand.

    The rates (win, 点炮 deal-in, 自摸, 荒庄) are per-deal statistics the
    same way (the share of the deal's finished rotations in which it
    happened to the challenger), with the same normal interval over the
    deals (a rate that never varies has a zero-width interval).  Win: the
    challenger's seat is among the winners; 点炮: a win on its discard or
    kong (:data:`~qipai.sim.arena.DEAL_IN`) with ``from_seat`` its seat; 自摸:
    it won by ``zimo``; 荒庄: nobody won.

    Per seat: the challenger's net at that seat over the deals (normal
    interval) and its wins there (Wilson interval: one rotation per deal,
    the deals independent).

    With several challengers, each pair is compared on the deals both
    have: the mean of the per-deal differences (later − earlier, in the
    order given) with its normal interval — paired, so much narrower than
    the two intervals side by side.

Ratings
    Where openskill is installed (it comes with the extra ``qipai[sim]``),
    every challenger and the field get a Weng–Lin (Plackett–Luce) rating:
    each finished rotation, in the file's deal order, is a match of the
    challenger against the field, won by whoever ends the hand ahead (the
    challenger's net > 0, < 0; a draw at 0).  The field is one player
    across the challengers, so their ratings share a scale.  A rating
    depends on the order of the matches and carries no interval of its
    own: it is a ladder for many bots at a glance; the paired mean above
    is the measure of strength.

Faults
    Rows whose ``fault`` is set are counted per challenger (those of the
    challenger's own seat, and those of a field bot) and left out of every
    figure above; the first fault's text is kept for the report.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.core.extras import require
from qipai.sim import BadSimulation
from qipai.sim.report.stats import Z, mean_ci, wilson

__all__ = ["ArenaSummary", "ChallengerSummary", "PairDifference", "Rating", "SeatSummary", "Stat",
           "arena_markdown", "arena_rows", "arena_tables", "is_arena_file", "print_arena",
           "ratings", "summarize_arena"]


class Stat(msgspec.Struct):
    """A mean over ``n`` units (deals), its sample sd and 95 % interval."""

    value: float
    n: int
    ci: tuple[float, float]
    sd: float | None = None


class SeatSummary(msgspec.Struct):
    """The challenger at one seat: its net (normal interval) and wins (Wilson)."""

    seat: int
    net: Stat
    wins: int
    win: Stat


class ChallengerSummary(msgspec.Struct):
    """One challenger against the field.

    Attributes:
        name: its bot name.
        deals: deals with a per-deal statistic (at least one finished rotation).
        rotations: finished rotations (rows without a fault).
        faults: rows with a fault; ``own_faults`` those of the challenger's seat.
        first_fault: the first fault's text (by deal, seat), or None.
        net: mean 子 per hand (the per-deal statistic's mean).
        win, deal_in, zimo, huangzhuang: rates as per-deal statistics.
        seats: the per-seat breakdown.
    """

    name: str
    deals: int
    rotations: int
    faults: int
    own_faults: int
    first_fault: str | None
    net: Stat
    win: Stat
    deal_in: Stat
    zimo: Stat
    huangzhuang: Stat
    seats: list[SeatSummary]


class PairDifference(msgspec.Struct):
    """``later − earlier`` (challengers in the order given), paired on the deals both have."""

    earlier: str
    later: str
    diff: Stat


class Rating(msgspec.Struct):
    """A bot's openskill rating: ``mu``, ``sigma`` and the ordinal ``mu − 3·sigma``."""

    name: str
    mu: float
    sigma: float
    ordinal: float


class ArenaSummary(msgspec.Struct):
    """Everything the arena report says: the metadata and each challenger;
    ``ratings`` (best first) empty where openskill is not installed."""

    meta: dict[str, Any]
    ruleset: str
    field: str
    players: int
    deals: int
    challengers: list[ChallengerSummary]
    differences: list[PairDifference]
    ratings: list[Rating] = []


def ratings(rows: Sequence[dict[str, Any]], challengers: Sequence[str],
            field: str) -> list[Rating]:
    """The challengers' and the field's openskill ratings from the rows
    (see the module doc), best ordinal first; ``[]`` where openskill is not
    installed.  A challenger named like the field is rated as the field."""
    import importlib.util

    if importlib.util.find_spec("openskill") is None:
        return []
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    players = {name: model.rating(name=name) for name in (field, *challengers)}
    order = {c: i for i, c in enumerate(challengers)}
    done = [r for r in rows if r["fault"] is None]
    done.sort(key=lambda r: (r["deal"], order[r["challenger"]], r["seat"]))
    for r in done:
        c = r["challenger"]
        if c == field:
            continue  # the field against itself: every rotation a draw by construction
        net = r["challenger_net"]
        ranks = [0, 0] if net == 0 else [0, 1] if net > 0 else [1, 0]
        [[players[c]], [players[field]]] = model.rate([[players[c]], [players[field]]],
                                                      ranks=ranks)
    out = [Rating(n, p.mu, p.sigma, p.ordinal()) for n, p in players.items()]
    return sorted(out, key=lambda x: -x.ordinal)


def is_arena_file(path: str) -> bool:
    """Whether ``path`` is a Parquet file whose metadata has ``qipai.arena``
    (False for anything unreadable: :func:`summarize_arena` says why)."""
    pq = require("pyarrow.parquet", "sim")
    from qipai.sim.arena import META_KEY

    try:
        return META_KEY.encode() in (pq.read_schema(path).metadata or {})
    except Exception:  # noqa: BLE001 - not Parquet, no file: not an arena file
        return False


def arena_rows(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The metadata and the rows of an arena file.

    Raises:
        BadSimulation: no such file, not Parquet, not an arena file (no or
            bad ``qipai.arena`` metadata, another format, a column missing
            or of another type), or a row of a challenger the metadata does
            not list.
    """
    pq = require("pyarrow.parquet", "sim")
    from qipai.sim.arena import FORMAT, META_KEY, schema

    if not os.path.isfile(path):
        raise BadSimulation(f"{path}: no such file")
    try:
        got = pq.read_schema(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow's ArrowInvalid and friends
        raise BadSimulation(f"{path}: not a Parquet file ({' '.join(str(exc).split())})") \
            from None
    raw = (got.metadata or {}).get(META_KEY.encode())
    if raw is None:
        raise BadSimulation(f"{path}: not a qipai arena output (no {META_KEY} metadata)")
    try:
        meta = json.loads(raw)
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise BadSimulation(f"{path}: an arena file this qipai cannot read (its {META_KEY} "
                            f"metadata is not a format-{FORMAT} JSON object)")
    challengers = meta.get("challengers")
    if not isinstance(challengers, list) or not all(isinstance(c, str) for c in challengers) \
            or not isinstance(meta.get("players"), int):
        raise BadSimulation(f"{path}: not a qipai arena output (its metadata's challengers or "
                            f"players are not as arena writes them)")
    for field in schema():
        i = got.get_field_index(field.name)
        if i < 0 or got.field(i).type != field.type:
            raise BadSimulation(f"{path}: not a qipai arena output (no column {field.name} "
                                f"of type {field.type})")
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001 - a damaged page
        raise BadSimulation(f"{path}: its rows do not read ({' '.join(str(exc).split())[:200]})"
                            ) from None
    for r in rows:
        if r["challenger"] not in challengers:
            raise BadSimulation(f"{path}: deal {r['deal']} is of challenger {r['challenger']!r}, "
                                f"which its metadata does not list")
    return meta, rows


def _stat(values: Sequence[float]) -> Stat:
    n = len(values)
    if n == 0:
        return Stat(math.nan, 0, (math.nan, math.nan))
    m = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return Stat(m, n, mean_ci(m, sd, n), sd)


def _challenger(name: str, rows: list[dict[str, Any]], players: int) -> tuple[
        ChallengerSummary, dict[int, float]]:
    """A challenger's summary, and its per-deal statistic by deal."""
    from qipai.sim.arena import DEAL_IN

    by_deal: dict[int, list[dict[str, Any]]] = {}
    faults = own = 0
    first = None
    for r in rows:
        if r["fault"] is not None:
            faults += 1
            own += r["fault_seat"] == r["seat"]
            first = first or f"deal {r['deal']}: {r['fault']}"
            continue
        by_deal.setdefault(r["deal"], []).append(r)

    def per_deal(f: Any) -> dict[int, float]:
        return {d: math.fsum(f(r) for r in rs) / len(rs) for d, rs in by_deal.items()}

    def won(r: dict[str, Any]) -> bool:
        return r["seat"] in r["winners"]

    stat = per_deal(lambda r: r["challenger_net"])
    rates = {
        "win": per_deal(lambda r: float(won(r))),
        "deal_in": per_deal(lambda r: float(r["how"] in DEAL_IN and r["from_seat"] == r["seat"]
                                            and not won(r))),
        "zimo": per_deal(lambda r: float(won(r) and r["how"] == "zimo")),
        "huangzhuang": per_deal(lambda r: float(r["end"] == "huangzhuang")),
    }
    seats = []
    for s in range(players):
        at = [r for rs in by_deal.values() for r in rs if r["seat"] == s]
        x = sum(won(r) for r in at)
        seats.append(SeatSummary(
            s, _stat([r["challenger_net"] for r in at]), x,
            Stat(x / len(at) if at else math.nan, len(at), wilson(x, len(at)))))
    order = sorted(stat)
    out = ChallengerSummary(
        name, len(stat), sum(len(rs) for rs in by_deal.values()), faults, own, first,
        _stat([stat[d] for d in order]),
        *(_stat([rates[k][d] for d in order]) for k in ("win", "deal_in", "zimo",
                                                        "huangzhuang")),
        seats=seats)
    return out, stat


def summarize_arena(path: str) -> ArenaSummary:
    """Read an arena file and compute every figure (see the module doc).

    Raises:
        BadSimulation: see :func:`arena_rows`; a file with no rows.
        MissingExtra: pyarrow missing (extra ``qipai[sim]``).
    """
    meta, rows = arena_rows(path)
    if not rows:
        raise BadSimulation(f"{path}: holds no deals")
    players = meta["players"]
    names = list(meta["challengers"])
    sums, stats = [], {}
    for c in names:
        mine = [r for r in rows if r["challenger"] == c]
        s, stats[c] = _challenger(c, mine, players)
        sums.append(s)
    diffs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = sorted(set(stats[a]) & set(stats[b]))
            diffs.append(PairDifference(a, b, _stat([stats[b][d] - stats[a][d]
                                                     for d in common])))
    return ArenaSummary(meta, meta.get("ruleset", ""), meta.get("field", ""), players,
                        len({r["deal"] for r in rows}), sums, diffs,
                        ratings(rows, names, meta.get("field", "")))


# --------------------------------------------------------------------------
# text


def _mean(s: Stat, signed: bool = True) -> str:
    sign = "+" if signed else ""
    if s.n == 0:
        return "—"
    if math.isnan(s.ci[0]):
        return f"{s.value:{sign}.2f} [n/a]"
    return f"{s.value:{sign}.2f} [{s.ci[0]:{sign}.2f}, {s.ci[1]:{sign}.2f}]"


def _rate(s: Stat) -> str:
    if s.n == 0:
        return "—"
    if math.isnan(s.ci[0]):
        return f"{100 * s.value:.1f} % [n/a]"
    return f"{100 * s.value:.1f} % [{100 * max(s.ci[0], 0):.1f}, {100 * min(s.ci[1], 1):.1f}]"


def arena_tables(summary: ArenaSummary) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's tables as text: (title, header, rows) for the
    challengers, the per-seat breakdown and, with several challengers,
    their paired differences."""
    main = ((f"{summary.ruleset}: challengers against a field of {summary.field} "
             f"({summary.deals} deals, each in {summary.players} seats; 95 % intervals)"),
            ["challenger", "deals", "子 per hand", "win", "点炮 deal-in", "自摸 zimo",
             "荒庄", "faults"],
            [[c.name, str(c.deals), _mean(c.net), _rate(c.win), _rate(c.deal_in), _rate(c.zimo),
              _rate(c.huangzhuang),
              f"{c.faults} ({c.own_faults} its own)" if c.faults else "0"]
             for c in summary.challengers])
    seats = ("per seat: the challenger's 子 per hand and win rate at each seat",
             ["challenger", "seat", "子 per hand", "win"],
             [[c.name, str(s.seat), _mean(s.net), _rate(s.win)]
              for c in summary.challengers for s in c.seats])
    out = [main, seats]
    if summary.differences:
        out.append(("paired differences on the same deals (later − earlier)",
                    ["challengers", "deals", "Δ 子 per hand"],
                    [[f"{d.later} − {d.earlier}", str(d.diff.n), _mean(d.diff)]
                     for d in summary.differences]))
    if summary.ratings:
        out.append((("openskill ratings (Plackett–Luce; each rotation a match against "
                     "the field; best first)"),
                    ["bot", "mu", "sigma", "ordinal mu − 3σ"],
                    [[r.name + (" (field)" if r.name == summary.field else ""),
                      f"{r.mu:.2f}", f"{r.sigma:.2f}", f"{r.ordinal:.2f}"]
                     for r in summary.ratings]))
    return out


def _notes(summary: ArenaSummary) -> list[str]:
    lines = [(f"seed {summary.meta.get('seed')} · {summary.meta.get('deals')} deals asked · "
              f"per-deal statistic: the challenger's mean net over its rotations of the deal; "
              f"interval mean ± {Z:.2f}·sd/√deals")]
    lines += [f"faults of {c.name}: {c.faults} rotations left out ({c.own_faults} its own); "
              f"first: {c.first_fault}" for c in summary.challengers if c.faults]
    return lines


def print_arena(console: Any, summary: ArenaSummary) -> None:
    """Print the arena report with rich: the tables of :func:`arena_tables`
    and a line per challenger with faults."""
    from rich.table import Table

    for title, head, body in arena_tables(summary):
        t = Table(title=title, title_justify="left")
        names = max((len(row[0]) for row in body), default=0)
        for i, h in enumerate(head):
            # fold, never an ellipsis: a narrow terminal wraps a cell, cuts nothing
            t.add_column(h, justify="left" if i == 0 else "right", overflow="fold",
                         min_width=min(names, 24) if i == 0 else None)
        for row in body:
            # an interval under its value when the cell must wrap
            t.add_row(*(c.replace(" [", "\n[", 1) if console.width < 120 else c for c in row))
        # wider than the console when its columns cannot fold further (a long
        # bot name in 80 columns, as a pipe or a log is): whole lines, which
        # the terminal wraps, not lines cut at the width (the faults column was lost)
        console.print(t, crop=False)
    for line in _notes(summary):
        console.print(line)


def arena_markdown(summary: ArenaSummary) -> str:
    """The arena report as Markdown tables (for docs)."""
    out = []
    for title, head, body in arena_tables(summary):
        out.append(f"**{title}**\n")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---" for _ in head) + "|")
        out += ["| " + " | ".join(row) + " |" for row in body]
        out.append("")
    out += [f"{line}\n" for line in _notes(summary)]
    return "\n".join(out) + "\n"
