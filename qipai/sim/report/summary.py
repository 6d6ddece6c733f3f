"""What a ``qipai simulate`` file says: every figure of the report per ruleset, the differences.

:func:`summarize` reads the file with DuckDB (:func:`_connect` refuses what
simulate did not write) into a :class:`Summary`; :func:`differences`
compares each later ruleset with the first, :func:`notes` says how rulesets
of other variants are compared.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.core.extras import require
from qipai.sim import BadSimulation
from qipai.sim.report.stats import mean_ci, newcombe, newcombe_paired, welch, wilson


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
            :func:`~qipai.sim.rows.schema` missing or of another type, rows
            that are not as simulate writes them).
    """
    pq = require("pyarrow.parquet", "sim")
    duckdb = require("duckdb", "sim")
    from qipai.sim.rows import FORMAT, schema

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

    out = [_ruleset_summary(r, base[r], seat_wins.get(r, {}), hows.get(r, []), pats.get(r, []),
                            nets.get(r, {}), extra.get(r, {}), names, families, ids)
           for r in order]
    paired, paired_rates = _paired(con, base, order)
    return Summary(meta, out, paired, paired_rates=paired_rates, pattern_names=names)


def _ruleset_summary(r: str, base: Sequence[Any], seat_wins: dict[int, int],
                     hows: list[tuple[str, int]], pats: list[tuple[str, int]],
                     nets: dict[int, tuple[float, float | None, int]],
                     extra: dict[str, tuple[float, float | None, int]], names: dict[str, str],
                     families: dict[str, str], ids: dict[str, tuple[str, ...]]
                     ) -> RulesetSummary:
    """The figures of ruleset ``r`` from :func:`_summarize`'s queries (its
    row of ``base``, and its part of each other query)."""
    (n, hz, hu, dealer_wins, wins, players, moved_m, moved_sd, moved_q, moved_max,
     inst_m, inst_sd, variant) = base

    def rate(key: str, label: str, x: int, of: int) -> Figure:
        return Figure(key, label, "rate", x / of if of else 0.0, of, wilson(x, of), x=x)

    def mean(key: str, label: str, m: float, sd: float | None, k: int) -> Figure:
        return Figure(key, label, "mean", m, k, mean_ci(m, sd, k), sd=sd)

    figs = [rate("huangzhuang", "荒庄 huangzhuang (of hands)", hz, n),
            rate("dealer", "dealer 庄 wins (of hands)", dealer_wins, n)]
    figs += [rate(f"seat{s}", f"seat {s} wins (of hands)", seat_wins.get(s, 0), n)
             for s in range(players)]
    figs += [rate(f"how:{how}", f"win by {_HOW.get(how, how)} (of hands won)", c, hu)
             for how, c in hows]
    figs += [rate(f"pattern:{p}", f"pattern {pattern_text(p, names)} (of wins)", c, wins)
             for p, c in pats]
    figs.append(mean("moved", "子 moved per hand (mean)", moved_m, moved_sd, n))
    figs.append(mean("instant", "instant payments 子 per hand (mean)", inst_m, inst_sd, n))
    figs += [mean(f"net{s}", f"seat {s} net 子 per hand (mean)", *nets[s])
             for s in range(players)]
    for col, label in (("hu", "胡数 hu of a win (mean)"), ("xing", "醒 xing of a win (mean)")):
        if col in extra:
            figs.append(mean(col, label, *extra[col]))
    q = dict(zip(("p50", "p90", "p99"), moved_q))
    return RulesetSummary(r, n, figs, q, moved_max, hu, wins, variant=variant,
                          family=families.get(variant, ""), named=ids.get(variant, ()))


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
# comparing


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


def _game(rs: RulesetSummary) -> str:
    """The game a ruleset is of: its family, or its variant when that is
    not installed here."""
    return rs.family or rs.variant
