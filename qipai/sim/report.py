"""``qipai report``: what a ``qipai simulate`` file says, per ruleset.

Read with DuckDB.  Per ruleset (in the order the simulation was given them):

* hands; 荒庄 rate; win rate of each seat and of the dealer (share of
  hands the seat is among the winners);
* share of each way of winning (of the hands won) and of each pattern (of
  the wins: a hand with two winners counts two wins; a pattern counts once
  per win), each named in Chinese, then by its id (``清一色 qingyise``,
  :func:`pattern_text`);
* 子 moved per hand — Σ over seats of max(net, 0), every seat's gain (the
  winners', and a kong fee's in a hand nobody won) —
  mean, 50th/90th/99th percentiles (linear interpolation, as
  ``quantile_cont``) and maximum; instant payments (kongs …) per hand;
* each seat's mean net (子 per hand); mean 胡数 and 醒 of a win where the
  variant has them.

Rates carry a 95 % Wilson score interval (:func:`wilson`); means a normal
interval, mean ± 1.96 · s/√n (:func:`mean_ci`).  With two or more rulesets,
each later one is compared with the first (see :func:`differences`).
Both play the same deals (hand ``i`` has the same seed in every ruleset), so
where both have the same hands and seats the differences are *paired* on
the hand index: a rate of hands (荒庄, a seat's or the dealer's wins) with
Newcombe's interval for paired proportions (:func:`newcombe_paired`), a
per-hand mean (money moved, each seat's net) as the mean of the per-hand
differences.  Shares of the hands won or of the wins (ways of winning,
patterns) have a denominator of their own in each ruleset and keep
Newcombe's hybrid score interval for independent samples
(:func:`newcombe`), conservative here; so do rates of hands, and Welch's
interval means, when the hands are not the same.

The pairing holds across variants too: it needs the same hands and seats,
and a seed deals the same cards in ``guilin-mahjong`` and
``guangxi-mahjong`` (the same 136 tiles, shuffled and dealt alike: checked
on the deals, ``tests/test_report_variants.py``).  Were a variant to deal
otherwise from a seed, its pairs would be two independent hands: the paired
intervals stay right, merely no narrower than the independent ones.

Ways of winning and patterns are each variant's own (:attr:`RulesetSummary.variant`):

* within one variant (``guilin-mahjong`` and ``guilin-mahjong(hubao=false)``)
  one that only one ruleset has never happened in the other: there it is
  0 % of the hands won or of the wins, shown with its interval
  (``0.0 % [0.0, 1.3]``), and the difference is computed as for any other;
* across variants of one family (``guilin-mahjong`` and
  ``guangxi-mahjong``) only those both have are compared — 七对 ``qidui``
  and 七小对 ``qixiaodui`` are each one variant's;
* across families (mahjong and 字牌) none is, nor 胡数 or 醒: the same id
  can be another thing (字牌's ``pinghu`` is a way of winning, mahjong's a
  pattern; 字牌 counts its 醒 otherwise).

A line under the heading says so (:func:`notes`).  ``—`` means *no such
figure*: in a ruleset's column, a way of winning or pattern not seen under
any ruleset of its variant in the file (another variant's, or one its own
variant never showed: the file does not list what a variant could score),
胡数 and 醒 in a variant without them, a seat a 3-seat game has not, a
share of wins when there are none; in the difference column, no difference.
Within one variant a way of winning or pattern one ruleset showed is
``0.0 %`` with its interval in the others, never ``—``.
"""

from __future__ import annotations

import base64
import contextlib
import html as html_lib
import io
import json
import math
import os
import secrets
import stat
from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.sim import BadSimulation, require

__all__ = ["Z", "Figure", "Summary", "markdown", "mean_ci", "newcombe", "newcombe_paired",
           "notes", "pattern_names",
           "pattern_text", "print_report", "summarize", "table_rows", "welch", "wilson",
           "write_html"]

#: The normal quantile of a two-sided 95 % interval.
Z = 1.959963984540054


def wilson(x: int, n: int, z: float = Z) -> tuple[float, float]:
    """Wilson score interval of a proportion ``x / n`` (``(0, 1)`` for n = 0)."""
    if n <= 0:
        return (0.0, 1.0)
    p = x / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z / d * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe(x1: int, n1: int, x2: int, n2: int, z: float = Z) -> tuple[float, float]:
    """Newcombe's hybrid score interval (his method 10) of ``x2/n2 − x1/n1``."""
    p1, p2 = (x1 / n1 if n1 else 0.0), (x2 / n2 if n2 else 0.0)
    l1, u1 = wilson(x1, n1, z)
    l2, u2 = wilson(x2, n2, z)
    d = p2 - p1
    return (d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2),
            d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2))


def newcombe_paired(both: int, only1: int, only2: int, neither: int,
                    z: float = Z) -> tuple[float, float]:
    """Newcombe's interval (his method 10 for paired data) of ``p2 − p1``,
    the difference of two proportions measured on the same ``n`` units:
    ``both`` units count in both, ``only1`` in the first alone, ``only2`` in
    the second alone, ``neither`` in none (``p1 = (both + only1) / n``,
    ``p2 = (both + only2) / n``).

    From each proportion's Wilson interval, joined with the correlation φ of
    the two counts (its numerator ``both · neither − only1 · only2`` less
    ``n/2`` when positive, not below 0; φ = 0 when a margin is empty).
    Source: R. G. Newcombe, "Improved confidence intervals for the
    difference between binomial proportions based on paired data",
    *Statistics in Medicine* 17 (1998) 2635–2650, method 10.  ``(0, 0)``
    for n = 0.

    Raises:
        ValueError: a negative count.
    """
    if min(both, only1, only2, neither) < 0:
        raise ValueError(f"counts must be ≥ 0, not {(both, only1, only2, neither)}")
    n = both + only1 + only2 + neither
    if n == 0:
        return (0.0, 0.0)
    x1, x2 = both + only1, both + only2
    p1, p2 = x1 / n, x2 / n
    l1, u1 = wilson(x1, n, z)
    l2, u2 = wilson(x2, n, z)
    margins = x1 * (n - x1) * x2 * (n - x2)
    if margins == 0:
        phi = 0.0
    else:
        num = both * neither - only1 * only2
        if num > 0:
            num = max(num - n / 2, 0.0)
        phi = num / math.sqrt(margins)
    d = p2 - p1
    lo = (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    hi = (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2
    return (d - math.sqrt(max(lo, 0.0)), d + math.sqrt(max(hi, 0.0)))


def mean_ci(mean: float, sd: float | None, n: int, z: float = Z) -> tuple[float, float]:
    """``mean ± z · sd / √n``; ``(nan, nan)`` when n < 2 (no spread to
    estimate: printed ``n/a``, never a zero-width interval)."""
    if n < 2 or sd is None:
        return (math.nan, math.nan)
    half = z * sd / math.sqrt(n)
    return (mean - half, mean + half)


def welch(m1: float, s1: float | None, n1: int, m2: float, s2: float | None, n2: int,
          z: float = Z) -> tuple[float, float]:
    """Normal interval of ``m2 − m1`` with Welch's standard error;
    ``(nan, nan)`` when either side has fewer than 2 hands (see :func:`mean_ci`)."""
    d = m2 - m1
    if n1 < 2 or n2 < 2 or s1 is None or s2 is None:
        return (math.nan, math.nan)
    half = z * math.sqrt(s1 * s1 / n1 + s2 * s2 / n2)
    return (d - half, d + half)


class Figure(msgspec.Struct):
    """One line of the report for one ruleset.

    ``kind`` ``"rate"``: ``x`` of ``n``, ``value`` = x/n, ``ci`` Wilson.
    ``kind`` ``"mean"``: ``value`` the mean of ``n`` values, ``sd`` their
    sample standard deviation, ``ci`` the normal interval.
    """

    key: str
    label: str
    kind: str
    value: float
    n: int
    ci: tuple[float, float]
    x: int = 0
    sd: float | None = None


class RulesetSummary(msgspec.Struct):
    """Everything the report says about one ruleset."""

    ruleset: str
    hands: int
    figures: list[Figure]
    moved_percentiles: dict[str, float]
    moved_max: int
    hands_won: int
    wins: int
    #: The variant the ruleset is of (the rows' ``variant``: ``guilin-mahjong``
    #: for ``guilin-mahjong(hubao=False)``) and its family (``mahjong``,
    #: ``zipai``; ``""`` when the variant is not installed here).
    variant: str = ""
    family: str = ""
    #: The ids the variant's payment breakdowns use (``Manifest.names``'s
    #: keys: its patterns among them); empty when it is not installed here.
    named: tuple[str, ...] = ()

    def get(self, key: str) -> Figure | None:
        return next((f for f in self.figures if f.key == key), None)

    def denominator(self, key: str) -> int:
        """What a rate ``key`` is a share of: hands won (``how:…``), wins
        (``pattern:…``), else hands."""
        if key.startswith("how:"):
            return self.hands_won
        if key.startswith("pattern:"):
            return self.wins
        return self.hands


class Summary(msgspec.Struct):
    """A whole report: the rulesets in the simulation's order and the run's metadata."""

    meta: dict[str, Any]
    rulesets: list[RulesetSummary]
    #: Per later ruleset, per mean figure (``moved``, ``instant``, ``netS``):
    #: (mean, sd, n) of the per-hand difference (this − first) over the same
    #: hand indices, when both have the same hands and seats.
    paired: dict[str, dict[str, tuple[float, float | None, int]]] = {}
    #: Per later ruleset, per rate of hands (``huangzhuang``, ``dealer``,
    #: ``seatS``): the hands counted in both, in the first alone, in this
    #: one alone, in neither — over the same hand indices (as ``paired``).
    paired_rates: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    #: Pattern id → its Chinese name (see :func:`pattern_names`).
    pattern_names: dict[str, str] = {}


def _manifests(variants: list[str]) -> dict[str, Any]:
    """Each installed variant's manifest; a variant not installed here is
    left out (its ids and family unknown)."""
    from qipai.core.errors import QipaiError
    from qipai.core.ruleset import load

    out = {}
    for v in variants:
        try:
            out[v] = load(v).manifest
        except QipaiError:
            pass
    return out


def pattern_names(variants: list[str], ids: list[str]) -> dict[str, str]:
    """The Chinese name of each pattern id, from the variants' manifests
    (``Manifest.names``: ``qingyise`` → ``清一色``).  Variants that name an
    id differently give both, ``碰碰胡/对对胡``; an id no installed variant
    names is left out (shown as the id alone)."""
    names = [m.names for m in _manifests(variants).values()]
    out = {}
    for p in ids:
        got = list(dict.fromkeys(n[p] for n in names if n.get(p)))
        if got:
            out[p] = "/".join(got)
    return out


def variant_families(variants: list[str]) -> dict[str, str]:
    """Each installed variant's family (``Manifest.family``: ``mahjong``,
    ``zipai``); a variant not installed here is left out."""
    return {v: m.family for v, m in _manifests(variants).items()}


def variant_ids(variants: list[str]) -> dict[str, tuple[str, ...]]:
    """Each installed variant's named ids (``Manifest.names``'s keys,
    sorted): the patterns it can score among them; a variant not installed
    here is left out."""
    return {v: tuple(sorted(m.names)) for v, m in _manifests(variants).items()}


def pattern_text(pattern: str, names: dict[str, str]) -> str:
    """A pattern as the report shows it: Chinese first, then the id
    (``清一色 qingyise``); the id alone when it has no Chinese name."""
    return f"{names[pattern]} {pattern}" if names.get(pattern) else pattern


# --------------------------------------------------------------------------
# reading


def _connect(path: str) -> Any:
    """A DuckDB connection with view ``h`` over ``path`` (rows and ``moved``,
    ``instant_moved``), and the file's ``qipai.simulate`` metadata.

    Raises:
        BadSimulation: no such file, not Parquet, or not a simulate output
            (no or bad ``qipai.simulate`` metadata — its rulesets not a list
            of strings —, another format, a column of
            :func:`~qipai.sim.run.schema` missing or of another type, rows
            that are not as simulate writes them).
    """
    pq = require("pyarrow.parquet", "sim")
    duckdb = require("duckdb", "sim")
    from qipai.sim.run import FORMAT, schema

    if not path:
        raise BadSimulation("no file given: name a qipai simulate output (results.parquet)")
    if os.path.isdir(path):
        raise BadSimulation(f"{path}: is a directory, not a qipai simulate output")
    if not os.path.isfile(path):
        raise BadSimulation(f"{path}: no such file")
    try:
        got = pq.read_schema(path)
    except Exception as exc:  # pyarrow's ArrowInvalid and friends
        raise BadSimulation(f"{path}: not a Parquet file ({' '.join(str(exc).split())})") \
            from None
    meta_raw = got.metadata or {}
    if b"qipai.simulate" not in meta_raw:
        raise BadSimulation(f"{path}: not a qipai simulate output (no qipai.simulate metadata)")
    try:
        meta = json.loads(meta_raw[b"qipai.simulate"])
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise BadSimulation(f"{path}: not a qipai simulate output (its qipai.simulate metadata "
                            f"is not the JSON object simulate writes)")
    if meta.get("format") != FORMAT:
        raise BadSimulation(f"{path}: a simulate file of format {meta.get('format')!r}; this "
                            f"qipai reads format {FORMAT}")
    rulesets = meta.get("rulesets", [])
    if not isinstance(rulesets, list) or not all(isinstance(r, str) for r in rulesets):
        raise BadSimulation(f"{path}: not a qipai simulate output (its metadata's rulesets "
                            f"are {_shown(rulesets)}, not a list of ruleset strings)")
    for field in schema():
        i = got.get_field_index(field.name)
        if i < 0:
            raise BadSimulation(f"{path}: not a qipai simulate output (no column {field.name})")
        if got.field(i).type != field.type:
            raise BadSimulation(f"{path}: not a qipai simulate output (column {field.name} is "
                                f"{got.field(i).type}, not {field.type})")
    asked = meta.get("hands")
    if type(asked) is not int or asked < 1:
        raise BadSimulation(f"{path}: not a qipai simulate output (its metadata's hands is "
                            f"{_shown(asked)}, not a number of hands >= 1)")
    con = duckdb.connect()
    try:
        con.read_parquet(path).create_view("t")
        _check_rows(con, path, rulesets)
    except duckdb.Error as exc:
        raise _unreadable(path, exc) from None
    con.execute("""
        CREATE VIEW h AS SELECT *,
            list_sum(list_transform(net, lambda x: greatest(x, 0))) AS moved,
            coalesce(list_sum(list_transform(instant, lambda p: p.amount)), 0) AS instant_moved
        FROM t""")
    return con, meta


def _shown(value: Any, most: int = 60) -> str:
    """``repr(value)``, clipped to ``most`` characters, for a message."""
    text = repr(value)
    return text if len(text) <= most else text[:most - 1] + "…"


def _unreadable(path: str, exc: Exception) -> BadSimulation:
    """A file whose data does not read (a damaged page …), as one line."""
    return BadSimulation(f"{path}: its rows do not read "
                         f"({_shown(' '.join(str(exc).split()), 200)})")


def _check_rows(con: Any, path: str, rulesets: Sequence[str] = ()) -> None:
    """Every row as simulate writes it: its ruleset one of the metadata's
    ``rulesets``, and rows of every one of those, within a ruleset one number
    of seats (``net``'s length, at least 2, no null in it), nets summing to
    0 (the money a hand moves only changes hands), the dealer and every
    winner a seat, an ``end``, and each hand index once (a file joined from
    two runs holds some twice, and would pair hands of different deals).

    Raises:
        BadSimulation: the first row that is not, named by ruleset and hand
            and saying what is wrong with it.
    """
    listed = ", ".join(rulesets) or "none"
    other = con.execute("SELECT ruleset, min(hand) FROM t WHERE ruleset IS NULL OR NOT "
                        "list_contains(?, ruleset) GROUP BY ruleset ORDER BY ruleset "
                        "LIMIT 1", [list(rulesets)]).fetchone()
    if other is not None:
        raise BadSimulation(f"{path}: not as qipai simulate writes it: hand {other[1]} is "
                            f"of ruleset {other[0]!r}, which its metadata does not list "
                            f"({listed})")
    held = {r for (r,) in con.execute("SELECT DISTINCT ruleset FROM t").fetchall()}
    empty = [r for r in rulesets if r not in held]
    if held and empty:
        raise BadSimulation(f"{path}: not as qipai simulate writes it: its metadata lists "
                            f"{empty[0]!r} but no row is of it (simulate writes the same hands "
                            f"for every ruleset)")
    bad = con.execute("""
        WITH s AS (SELECT ruleset, max(len(net)) AS seats FROM t GROUP BY ruleset)
        SELECT t.ruleset, t.hand, len(t.net), s.seats, t.dealer, t.winners, t."end",
               len(list_filter(t.net, lambda x: x IS NULL))
        FROM t JOIN s USING (ruleset)
        WHERE t.net IS NULL OR len(t.net) != s.seats OR s.seats < 2 OR t.dealer IS NULL
           OR t.dealer < 0 OR t.dealer >= s.seats OR t.winners IS NULL
           OR len(list_filter(t.winners, lambda w: w IS NULL OR w < 0 OR w >= s.seats)) > 0
           OR t."end" IS NULL OR len(list_filter(t.net, lambda x: x IS NULL)) > 0
           OR list_sum(t.net) != 0
        ORDER BY t.ruleset, t.hand LIMIT 1""").fetchone()
    if bad is not None:
        r, hand, n, seats, dealer, winners, end, nulls = bad
        net = con.execute("SELECT net FROM t WHERE ruleset = ? AND hand = ? LIMIT 1",
                          [r, hand]).fetchone()[0]
        if end is None:
            what = "no end"
        elif net is None:
            what = "no net"
        elif nulls:
            what = f"{nulls} null net(s) in {net}"
        elif n != seats:
            what = f"a net of {n} seats, {net}, where other hands of {r} have {seats}"
        elif seats < 2:
            what = f"a net of {n} seat, {net}: a hand has at least 2"
        elif dealer is None or not 0 <= dealer < seats:
            what = f"dealer {dealer}, not a seat (0..{seats - 1})"
        elif winners is None:
            what = "no winners list"
        elif any(w is None or not 0 <= w < seats for w in winners):
            what = f"winners {winners}: not all seats (0..{seats - 1})"
        else:
            what = f"nets {net} summing to {sum(net)}, not 0 (money only changes hands)"
        raise BadSimulation(f"{path}: not as qipai simulate writes it: hand {hand} of {r} has "
                            f"{what}")
    twice = con.execute("""
        SELECT ruleset, hand, count(*) FROM t GROUP BY ruleset, hand HAVING count(*) > 1
        ORDER BY ruleset, hand LIMIT 1""").fetchone()
    if twice is not None:
        r, hand, k = twice
        raise BadSimulation(f"{path}: not as qipai simulate writes it: hand {hand} of {r} is in "
                            f"it {k} times (a file joined from several runs?); each hand index "
                            f"is one hand")


_HOW = {"zimo": "自摸 zimo", "dianpao": "点炮 dianpao", "qianggang": "抢杠 qianggang",
        "fangpao": "放炮 fangpao", "pinghu": "平胡 pinghu"}


def summarize(path: str) -> Summary:
    """Read a ``qipai simulate`` file and compute every figure of the report.

    Raises:
        BadSimulation: see :func:`_connect`; an empty file; rows that are
            not as simulate writes them (:func:`_check_rows`) or do not
            read (a damaged data page).
        MissingExtra: pyarrow or DuckDB missing (extra ``qipai[sim]``).
    """
    con, meta = _connect(path)
    duckdb = require("duckdb", "sim")
    try:
        return _summarize(path, con, meta)
    except duckdb.Error as exc:  # a page that reads only when its rows are needed
        raise _unreadable(path, exc) from None


def _summarize(path: str, con: Any, meta: dict[str, Any]) -> Summary:
    def rows(sql: str) -> list[tuple[Any, ...]]:
        return con.execute(sql).fetchall()

    base = {r[0]: r[1:] for r in rows("""
        SELECT ruleset, count(*), count(*) FILTER (WHERE "end" = 'huangzhuang'),
               count(*) FILTER (WHERE "end" = 'hu'),
               count(*) FILTER (WHERE list_contains(winners, dealer)),
               coalesce(sum(len(winners)), 0), max(len(net)),
               avg(moved), stddev_samp(moved),
               quantile_cont(moved, [0.5, 0.9, 0.99]), max(moved),
               avg(instant_moved), stddev_samp(instant_moved), any_value(variant)
        FROM h GROUP BY ruleset""")}
    if not base:
        raise BadSimulation(f"{path}: holds no hands")
    order = [r for r in meta.get("rulesets", []) if r in base] + \
        sorted(r for r in base if r not in meta.get("rulesets", []))
    seat_wins: dict[str, dict[int, int]] = {}
    for r, s, c in rows("SELECT ruleset, s, count(*) FROM (SELECT ruleset, unnest(winners) AS s "
                        "FROM h) GROUP BY ALL"):
        seat_wins.setdefault(r, {})[s] = c
    hows: dict[str, list[tuple[str, int]]] = {}
    for r, how, c in rows("""SELECT ruleset, how, count(*) FROM h WHERE "end" = 'hu'
                             GROUP BY ALL ORDER BY ruleset, count(*) DESC, how"""):
        hows.setdefault(r, []).append((how, c))
    pats: dict[str, list[tuple[str, int]]] = {}
    for r, p, c in rows("""
            SELECT ruleset, p, count(*) FROM (
                SELECT ruleset, unnest(list_distinct(ps)) AS p
                FROM (SELECT ruleset, unnest(patterns) AS ps FROM h))
            GROUP BY ALL ORDER BY ruleset, count(*) DESC, p"""):
        pats.setdefault(r, []).append((p, c))
    variants = [v for (v,) in rows("SELECT DISTINCT variant FROM h ORDER BY variant")]
    names = pattern_names(variants, sorted({p for ps in pats.values() for p, _ in ps}))
    families = variant_families(variants)
    ids = variant_ids(variants)
    nets: dict[str, dict[int, tuple[float, float | None, int]]] = {}
    for r, i, m, sd, c in rows("""
            SELECT ruleset, i, avg(x), stddev_samp(x), count(x) FROM (
                SELECT ruleset, generate_subscripts(net, 1) AS i, unnest(net) AS x FROM h)
            GROUP BY ALL"""):
        nets.setdefault(r, {})[i - 1] = (m, sd, c)
    extra: dict[str, dict[str, tuple[float, float | None, int]]] = {}
    for col in ("hu", "xing"):
        for r, m, sd, c in rows(f"""
                SELECT ruleset, avg(x), stddev_samp(x), count(x) FROM (
                    SELECT ruleset, unnest({col}) AS x FROM h)
                WHERE x IS NOT NULL GROUP BY ALL"""):
            extra.setdefault(r, {})[col] = (m, sd, c)

    out = []
    for r in order:
        (n, hz, hu, dealer_wins, wins, players, moved_m, moved_sd, moved_q, moved_max,
         inst_m, inst_sd, variant) = base[r]

        def rate(key: str, label: str, x: int, of: int) -> Figure:
            return Figure(key, label, "rate", x / of if of else 0.0, of, wilson(x, of), x=x)

        def mean(key: str, label: str, m: float, sd: float | None, k: int) -> Figure:
            return Figure(key, label, "mean", m, k, mean_ci(m, sd, k), sd=sd)

        figs = [rate("huangzhuang", "荒庄 huangzhuang (of hands)", hz, n),
                rate("dealer", "dealer 庄 wins (of hands)", dealer_wins, n)]
        figs += [rate(f"seat{s}", f"seat {s} wins (of hands)", seat_wins.get(r, {}).get(s, 0), n)
                 for s in range(players)]
        figs += [rate(f"how:{how}", f"win by {_HOW.get(how, how)} (of hands won)", c, hu)
                 for how, c in hows.get(r, [])]
        figs += [rate(f"pattern:{p}", f"pattern {pattern_text(p, names)} (of wins)", c, wins)
                 for p, c in pats.get(r, [])]
        figs.append(mean("moved", "子 moved per hand (mean)", moved_m, moved_sd, n))
        figs.append(mean("instant", "instant payments 子 per hand (mean)", inst_m, inst_sd, n))
        figs += [mean(f"net{s}", f"seat {s} net 子 per hand (mean)", *nets[r][s])
                 for s in range(players)]
        for col, label in (("hu", "胡数 hu of a win (mean)"), ("xing", "醒 xing of a win (mean)")):
            if col in extra.get(r, {}):
                figs.append(mean(col, label, *extra[r][col]))
        q = dict(zip(("p50", "p90", "p99"), moved_q))
        out.append(RulesetSummary(r, n, figs, q, moved_max, hu, wins, variant=variant,
                                  family=families.get(variant, ""), named=ids.get(variant, ())))
    paired, paired_rates = _paired(con, base, order)
    return Summary(meta, out, paired, paired_rates=paired_rates, pattern_names=names)


def _paired(con: Any, base: dict[str, Any], order: list[str]
            ) -> tuple[dict[str, dict[str, tuple[float, float | None, int]]],
                       dict[str, dict[str, tuple[int, int, int, int]]]]:
    """Paired differences against the first ruleset, for each later one
    with the same hands (the same indices and seeds) and seats: of the
    per-hand means (:attr:`Summary.paired`) and the rates of hands
    (:attr:`Summary.paired_rates`)."""
    out: dict[str, dict[str, tuple[float, float | None, int]]] = {}
    rates: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    if len(order) < 2:
        return out, rates
    first = order[0]
    players = base[first][5]
    indicators = [("huangzhuang", "{t}.\"end\" = 'huangzhuang'"),
                  ("dealer", "list_contains({t}.winners, {t}.dealer)")]
    indicators += [(f"seat{s}", f"list_contains({{t}}.winners, {s})") for s in range(players)]
    cells = ", ".join(
        f"count(*) FILTER (WHERE ({x.format(t='a')}) AND ({x.format(t='b')})), "
        f"count(*) FILTER (WHERE ({x.format(t='a')}) AND NOT ({x.format(t='b')})), "
        f"count(*) FILTER (WHERE NOT ({x.format(t='a')}) AND ({x.format(t='b')}))"
        for _, x in indicators)
    for other in order[1:]:
        if base[other][0] != base[first][0] or base[other][5] != players:
            continue  # different hands or seats: Welch
        joined, *counts = con.execute(
            f"""SELECT count(*), {cells} FROM h a JOIN h b ON a.hand = b.hand AND a.seed = b.seed
                WHERE a.ruleset = ? AND b.ruleset = ?""", [first, other]).fetchone()
        if joined != base[first][0]:
            continue
        rates[other] = {key: (counts[3 * i], counts[3 * i + 1], counts[3 * i + 2],
                              joined - counts[3 * i] - counts[3 * i + 1] - counts[3 * i + 2])
                        for i, (key, _) in enumerate(indicators)}
        d: dict[str, tuple[float, float | None, int]] = {}
        m1, s1, m2, s2, c = con.execute("""
            SELECT avg(b.moved - a.moved), stddev_samp(b.moved - a.moved),
                   avg(b.instant_moved - a.instant_moved),
                   stddev_samp(b.instant_moved - a.instant_moved), count(*)
            FROM h a JOIN h b ON a.hand = b.hand AND a.seed = b.seed
            WHERE a.ruleset = ? AND b.ruleset = ?""", [first, other]).fetchone()
        d["moved"], d["instant"] = (m1, s1, c), (m2, s2, c)
        for i, m, sd, c in con.execute("""
                SELECT i, avg(y - x), stddev_samp(y - x), count(*) FROM (
                    SELECT generate_subscripts(a.net, 1) AS i, unnest(a.net) AS x,
                           unnest(b.net) AS y
                    FROM h a JOIN h b ON a.hand = b.hand AND a.seed = b.seed
                    WHERE a.ruleset = ? AND b.ruleset = ?)
                GROUP BY i""", [first, other]).fetchall():
            d[f"net{i - 1}"] = (m, sd, c)
        out[other] = d
    return out, rates


# --------------------------------------------------------------------------
# printing


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


def _own(key: str) -> bool:
    """A share of the hands won or of the wins (``how:…``, ``pattern:…``):
    its variant's own ways of winning and patterns."""
    return key.startswith(("how:", "pattern:"))


def _same_game(a: RulesetSummary, b: RulesetSummary) -> bool:
    """Two variants of one family (both installed): a way of winning or a
    pattern they both have is the same thing in each."""
    return bool(a.family) and a.family == b.family


def _never_seen(summary: Summary, rs: RulesetSummary, key: str) -> bool:
    """Whether way of winning or pattern ``key``, which ``rs`` lacks, is 0
    of its hands won or wins — it could happen under ``rs`` and never did —
    rather than no figure of ``rs``: another ruleset of its variant shows
    it; or one of another variant of its family does, and it is a way of
    winning (the family's flow makes them) or a pattern ``rs``'s variant
    names (:attr:`RulesetSummary.named`).  Only the ids a variant names
    are known to it: the file does not list what a variant could score."""
    for o in summary.rulesets:
        if o.get(key) is None:
            continue
        if o.variant == rs.variant:
            return True
        if _same_game(o, rs) and (key.startswith("how:")
                                  or key.removeprefix("pattern:") in rs.named):
            return True
    return False


def differences(summary: Summary) -> list[dict[str, tuple[float, tuple[float, float]]]]:
    """For each ruleset after the first: per figure key, (difference, interval)
    against the first (this − first; rates as proportions).

    When both rulesets have the same hands and seats (paired: they share
    their deals): the rates of hands (荒庄, the dealer's and each seat's
    wins) with Newcombe's interval for paired proportions
    (:func:`newcombe_paired`), the per-hand means (money moved, instant
    payments, each seat's net) as the mean of the per-hand differences with
    its normal interval.  Shares of hands won or of wins (ways of winning,
    patterns), and everything when the hands differ: Newcombe's interval
    for independent samples (conservative when paired) and Welch's.

    A way of winning or a pattern that only one of the two has: when the
    other could have it (:func:`_never_seen`: within one variant always;
    across variants of one family a way of winning, or a pattern the
    other's variant names) it is 0 of the other's hands won or wins, a
    difference like any other; else it is the one variant's own, no
    difference.  Across families (mahjong and
    字牌) no way of winning, pattern, 胡数 or 醒 gets a difference, not
    even one both have: the same id can be another thing (字牌's
    ``pinghu`` is a way of winning, mahjong's a pattern; its 醒 is counted
    otherwise).  A seat only one has (3 and 4 seats), a mean only one has
    (胡数, 醒): no difference."""
    if len(summary.rulesets) < 2:
        return []
    first = summary.rulesets[0]
    out = []
    for other in summary.rulesets[1:]:
        d: dict[str, tuple[float, tuple[float, float]]] = {}
        keys = [f.key for f in first.figures] + [f.key for f in other.figures]
        for key in dict.fromkeys(keys):
            a, b = first.get(key), other.get(key)
            kind = (a or b).kind
            if key in summary.paired_rates.get(other.ruleset, {}):
                both, only1, only2, neither = summary.paired_rates[other.ruleset][key]
                d[key] = ((only2 - only1) / (both + only1 + only2 + neither),
                          newcombe_paired(both, only1, only2, neither))
            elif key in ("hu", "xing") and not _same_game(first, other):
                continue  # 胡数, 醒: each game counts its own
            elif _own(key):
                if other.variant != first.variant and not _same_game(first, other):
                    continue
                if a is None and not _never_seen(summary, first, key) or \
                        b is None and not _never_seen(summary, other, key):
                    continue  # one variant's own
                x1, n1 = (a.x, a.n) if a else (0, first.denominator(key))
                x2, n2 = (b.x, b.n) if b else (0, other.denominator(key))
                if n1 and n2:
                    d[key] = (x2 / n2 - x1 / n1, newcombe(x1, n1, x2, n2))
            elif kind == "rate":  # a seat only one has (3 and 4 seats): no difference
                if a is not None and b is not None and a.n and b.n:
                    d[key] = (b.x / b.n - a.x / a.n, newcombe(a.x, a.n, b.x, b.n))
            elif key in summary.paired.get(other.ruleset, {}):
                m, sd, n = summary.paired[other.ruleset][key]
                d[key] = (m, mean_ci(m, sd, n))
            elif a is not None and b is not None:
                d[key] = (b.value - a.value, welch(a.value, a.sd, a.n, b.value, b.sd, b.n))
        out.append(d)
    return out


def notes(summary: Summary) -> list[str]:
    """A line for each other variant than the first's (one however many of
    its rulesets follow): how it is compared (see :func:`differences`); and
    one for each ruleset with the first's seats not paired with it on the
    hands (they hold other hands)."""
    if len(summary.rulesets) < 2:
        return []
    first = summary.rulesets[0]
    out = []
    said = {first.variant}
    seats = _seats(first)
    for o in summary.rulesets[1:]:
        if o.ruleset not in summary.paired and _seats(o) == seats:
            out.append(f"note: {o.ruleset} and {first.ruleset} do not hold the same hands "
                       f"({o.hands} and {first.hands} hands; simulate writes the same hands "
                       f"for every ruleset: was the file edited?): their differences are not "
                       f"paired on the hands, and their intervals are wider")
        if o.variant in said:  # one line a variant, however many of its rulesets
            continue
        said.add(o.variant)
        if _same_game(first, o):
            out.append(f"note: {o.variant} is another variant than {first.variant}: each has "
                       f"its own patterns, and a difference is given only for those both can "
                       f"score (— : no such figure)")
        else:
            out.append(f"note: {o.variant} ({o.family or 'not installed'}) is another game than "
                       f"{first.variant} ({first.family or 'not installed'}): ways of winning, "
                       f"patterns, 胡数 and 醒 are each game's own and get no difference, even "
                       f"under the same name (— : no such figure)")
    return out


def _seats(rs: RulesetSummary) -> int:
    """The seats of ``rs``'s hands: its figures ``net0`` … ``netS``."""
    return sum(1 for f in rs.figures if f.key.startswith("net") and f.key[3:].isdigit())


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


def _game(rs: RulesetSummary) -> str:
    """The game a ruleset is of: its family, or its variant when that is
    not installed here."""
    return rs.family or rs.variant


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


# --------------------------------------------------------------------------
# HTML


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
    over the hands, one panel per ruleset)."""
    require("matplotlib", "sim")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    con, _ = _connect(path)
    out: dict[str, Any] = {}
    names = [rs.ruleset for rs in summary.rulesets]
    # pattern frequencies
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
    out["patterns"] = fig
    # money moved
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
    out["moved"] = fig
    # cumulative net by seat
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.6), squeeze=False,
                             sharey=True)
    for ax, r in zip(axes[0], names):
        nets = [n for (n,) in con.execute("SELECT net FROM h WHERE ruleset = ? ORDER BY hand",
                                          [r]).fetchall()]
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
    fig.suptitle("cumulative net by seat (dealer rotates)")
    out["net"] = fig
    return out


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
              "net": "Cumulative net by seat"}
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
