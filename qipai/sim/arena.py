"""``qipai arena``: duplicate play — every deal played with the challenger in each seat.

What a deal is
    Deal ``i`` (0-based) is hand ``i`` of ``qipai simulate`` with the same
    seed ``S``: the table is seeded :func:`qipai.core.sessions.hand_seed`
    ``(S, i)`` (the same wall) and dealt by seat ``i mod players``.  It is
    played once per challenger and seat ``r`` (a *rotation*): the challenger
    at seat ``r``, the field bot at every other seat (1v3 at the 4-seat
    mahjong variants, 1v2 at 3-seat 桂林字牌).  Each seat's bot RNG is
    seeded from the hand seed and the seat, as :func:`qipai.bots.make_bots`
    seeds it, so a rotation's play depends only on the deal, the seat and
    the bots, never on the worker that played it; the field bots at the
    other seats get the same seeds in every rotation.  The luck of the
    deal is shared by the rotations: averaged over them, what is left is
    the challenger's play (duplicate play, as Mortal's 1v3 arena).

What a file holds
    One row per deal × challenger × rotation (:data:`COLUMNS`, a fixed
    :func:`schema`), sorted by challenger, deal, seat; the file's metadata
    ``qipai.arena`` holds the run's parameters (JSON: format, ruleset,
    challengers, field, deals asked for, seed, players), never the workers
    or the backend.  The writer is simulate's (:mod:`qipai.sim.parquet`):
    the same arguments give a byte-identical file whatever ``--workers`` or
    ``--ray``, and the same file-safety rules (an existing file that is
    not a results file is refused; written beside and renamed; Ctrl-C keeps
    the finished chunks).

Faults
    A bot that raises (in ``act``, ``sit`` or when it is made for a seat)
    or answers an illegal action (:class:`~qipai.bots.registry.BotFault`,
    raised by :func:`~qipai.bots.run_to_end`) ends that rotation: its row has the
    fault's text in ``fault`` (the bot, its seat and the decision),
    ``fault_seat``, and no result (``end``, ``net``, ``challenger_net``
    null).  The summary (:mod:`qipai.sim.report.arena`) leaves such rows
    out of every mean and rate and counts them on a line of their own.

The chunks and backends are simulate's (:func:`~qipai.sim.run.guided_chunks`,
:mod:`qipai.sim.backends`), with :func:`_arena_task` as the task.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from qipai.bots import BadBot, BotFault, bot_factory, make_bots, run_to_end
from qipai.core.extras import installed, require
from qipai.core.sessions import hand_seed
from qipai.sim import BadSimulation
from qipai.sim.backends import _run_pool, _run_ray
from qipai.sim.parquet import _batch, check_replaceable, check_writable, write_parquet
from qipai.sim.rows import _ROWS_ENCODER, RulesetSpec, _ruleset, _warm, parse_rulesets
from qipai.sim.run import Outcome, _guided

__all__ = ["COLUMNS", "DEAL_IN", "FORMAT", "META_KEY", "arena", "arena_row", "check_bots",
           "schema"]

#: Version of the arena's row layout (in the file's metadata).
FORMAT = 1

#: The file's metadata key (a JSON object: :func:`arena`'s parameters).
META_KEY = "qipai.arena"

#: Ways of winning that are a deal-in (点炮) by ``from_seat``: a win on its
#: discard (mahjong ``dianpao``, 字牌 ``fangpao``) or on the tile it added to
#: a kong (``qianggang``, 抢杠: the kong's maker pays as a discarder).  字牌's
#: ``pinghu`` (a win on a card another seat drew and showed) is none.
DEAL_IN = frozenset({"dianpao", "fangpao", "qianggang"})

#: The columns, in order, with their meaning (types: :func:`schema`).
COLUMNS: dict[str, str] = {
    "ruleset": "the ruleset as name(key=value, …) with the options that differ from the defaults",
    "deal": "deal index i, 0-based (hand i of qipai simulate with the same seed)",
    "seed": "the deal's 128-bit seed hand_seed(S, i), in decimal",
    "challenger": "the challenger's bot name, as given",
    "seat": "the challenger's seat in this rotation",
    "dealer": "the dealer's seat (i mod players)",
    "end": "hu (胡) or huangzhuang (荒庄); null at a fault",
    "winners": "winner seats ([] at 荒庄 and at a fault)",
    "how": "the variant's word for the win (zimo, dianpao, fangpao …); null at 荒庄 or a fault",
    "from_seat": "the seat that discarded, made the kong or drew the card won on; null for a "
                 "self-drawn win, at 荒庄 and at a fault",
    "net": "子 per seat over the hand (sums to 0); null at a fault",
    "challenger_net": "net[seat]: the challenger's 子 over the hand; null at a fault",
    "steps": "decisions applied in the hand (up to the fault)",
    "fault": "null, or the fault: which bot at which seat, at which decision, did what",
    "fault_seat": "the seat whose bot faulted; null when none did",
}


def schema() -> Any:
    """The fixed pyarrow schema of an arena file.

    Raises:
        MissingExtra: pyarrow is not installed (extra ``qipai[sim]``).
    """
    pa = require("pyarrow", "sim")
    return pa.schema([
        ("ruleset", pa.string()),
        ("deal", pa.int64()),
        ("seed", pa.string()),
        ("challenger", pa.string()),
        ("seat", pa.int8()),
        ("dealer", pa.int8()),
        ("end", pa.string()),
        ("winners", pa.list_(pa.int8())),
        ("how", pa.string()),
        ("from_seat", pa.int8()),
        ("net", pa.list_(pa.int32())),
        ("challenger_net", pa.int32()),
        ("steps", pa.int32()),
        ("fault", pa.string()),
        ("fault_seat", pa.int8()),
    ])


def arena_row(spec: RulesetSpec, challenger: str, field: str, seed: int, deal: int,
              seat: int) -> dict[str, Any]:
    """Play deal ``deal`` with ``challenger`` at ``seat`` and ``field`` at
    the other seats; its row (:data:`COLUMNS`).  A
    :class:`~qipai.bots.registry.BotFault` is the row's ``fault``, not an
    exception."""
    rs, observer = _ruleset(spec)
    hs = hand_seed(seed, deal)
    n = rs.manifest.players
    dealer = deal % n
    names = [field] * n
    names[seat] = challenger
    observer.last = None
    table = rs.table(seed=hs, dealer=dealer)
    row: dict[str, Any] = {
        "ruleset": spec.spec, "deal": deal, "seed": str(hs), "challenger": challenger,
        "seat": seat, "dealer": dealer, "end": None, "winners": [], "how": None,
        "from_seat": None, "net": None, "challenger_net": None, "steps": 0, "fault": None,
        "fault_seat": None,
    }
    try:
        row["steps"] = run_to_end(table, make_bots(names, n, hs))
    except BotFault as exc:
        row.update(fault=" ".join(str(exc).split()), fault_seat=exc.seat,
                   steps=max(exc.step, 0))
        return row
    except BadBot as exc:  # it could not be made with this seat's RNG: its fault too
        if exc.seat is None:
            raise   # the name does not resolve here (a worker without its module): no play
        row.update(fault=f"seat {exc.seat}: {' '.join(str(exc).split())}", fault_seat=exc.seat)
        return row
    r = table.result
    end = observer.last if r.end == "hu" else None
    if end is not None:
        row["how"], row["from_seat"] = end.how, end.from_seat
    row.update(end=r.end, winners=list(r.winners), net=list(r.net),
               challenger_net=r.net[seat])
    return row


def _arena_rows(task: tuple[RulesetSpec, tuple[str, ...], str, int, int, int]
                ) -> list[dict[str, Any]]:
    """A task's rows: deals ``start`` ≤ i < ``stop``, each with every
    challenger in every seat."""
    spec, challengers, field, seed, start, stop = task
    n = _ruleset(spec)[0].manifest.players
    return [arena_row(spec, c, field, seed, i, r)
            for i in range(start, stop) for c in challengers for r in range(n)]


def _arena_task(task: tuple[RulesetSpec, tuple[str, ...], str, int, int, int]) -> bytes:
    """A worker's task (pool or Ray): :func:`_arena_rows` as MessagePack."""
    return _ROWS_ENCODER.encode(_arena_rows(task))


def check_bots(challengers: Sequence[str], field: str) -> None:
    """Every bot name resolves (:func:`~qipai.bots.registry.bot_factory`),
    and no challenger is given twice.

    Raises:
        BadBot: a name that names no bot (unknown, does not import, no ``act``).
        BadSimulation: no challenger, or one given twice.
    """
    if not challengers:
        raise BadSimulation("give at least one --challenger BOT, e.g. --challenger greedy")
    seen: set[str] = set()
    for c in challengers:
        if isinstance(c, str) and c.strip() in seen:   # (the resolver strips a name)
            raise BadSimulation(f"challenger {c.strip()!r} is given twice")
        seen.add(c.strip() if isinstance(c, str) else repr(c))
    for name in (*challengers, field):
        bot_factory(name)


def arena(ruleset: str | RulesetSpec, challengers: Sequence[str], field: str, deals: int, *,
          seed: int = 0, workers: int = 1, out: str = "arena.parquet",
          ray_address: str | None = None, chunk: int | None = None,
          on_chunk: Callable[[int], None] | None = None) -> Outcome:
    """Play ``deals`` deals of ``ruleset``, each challenger in every seat
    against ``field``, and write the rows to ``out``.

    Args:
        ruleset: a spec string (``guilin-mahjong(hubao=false)``) or a
            :class:`~qipai.sim.rows.RulesetSpec`.
        challengers: bot names (:func:`~qipai.bots.registry.bot_factory`),
            each distinct.
        field: the bot name at the other seats.
        deals: deals to play (≥ 1).
        seed: the seed S (deal ``i`` is hand ``i`` of ``qipai simulate
            --seed S``).
        workers, ray_address, chunk, on_chunk: as
            :func:`qipai.sim.run.simulate` (``chunk``: deals per task);
            ``on_chunk`` gets the deals of each finished chunk.

    Returns: the :class:`~qipai.sim.run.Outcome`, counted in deals
    (``written``: deals in the file; ``asked``: ``deals``).

    Raises:
        BadSimulation: deals, workers or chunk < 1, no challenger or one
            twice, ``out`` not writable or an existing file that is not a
            results file (all before the first deal).
        BadBot: a bot name that names no bot (before the first deal).
        UnknownVariant, BadOption: a bad ruleset.
        MissingExtra, RayUnavailable: as :func:`~qipai.sim.run.simulate`.
    """
    for what, v in (("--deals", deals), ("--workers", workers)):
        if not isinstance(v, int) or v < 1:
            raise BadSimulation(f"{what} must be at least 1, not {v!r}")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise BadSimulation(f"--chunk must be at least 1, not {chunk!r}")
    if not isinstance(seed, int):
        raise BadSimulation(f"--seed must be an integer, not {seed!r}")
    spec = ruleset if isinstance(ruleset, RulesetSpec) else parse_rulesets([ruleset])[0]
    challengers = tuple(challengers)
    check_bots(challengers, field)
    installed("pyarrow", "sim")
    check_writable(out)
    check_replaceable(out)
    if ray_address is None:
        workers = min(workers, -(-deals // chunk) if chunk else deals)
    ranges = (((a, min(a + chunk, deals)) for a in range(0, deals, chunk)) if chunk
              else _guided(deals, workers))
    tasks = ((spec, challengers, field, seed, a, b) for a, b in ranges)
    n = _ruleset(spec)[0].manifest.players
    per_deal = n * len(challengers)
    meta = {"format": FORMAT, "ruleset": spec.spec, "challengers": list(challengers),
            "field": field, "deals": deals, "seed": seed, "players": n}
    sch = schema()
    parts: list[Any] = []
    written = 0
    t0 = time.perf_counter()

    def take(data: Any) -> None:
        nonlocal written
        part = _batch(data, sch)
        parts.append(part)
        written += part.num_rows // per_deal
        if on_chunk is not None:
            on_chunk(part.num_rows // per_deal)

    backend = ("ray" if ray_address is not None else "in-process" if workers == 1
               else f"{workers} processes")
    interrupted = False
    try:
        if ray_address is None:
            _warm([spec])  # built once here: forked workers inherit it
        if ray_address is not None:
            interrupted = _run_ray(tasks, take, ray_address, workers, [spec], _arena_task)
        elif workers == 1:
            for task in tasks:
                take(_arena_rows(task))
        else:
            interrupted = _run_pool(tasks, take, workers, [spec], _arena_task)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - t0
    played = written
    if parts:
        try:
            write_parquet(parts, out, meta, sch=sch, order=("challenger", "deal", "seat"),
                          key=META_KEY)
        except KeyboardInterrupt:
            interrupted, written = True, 0
    return Outcome(written, deals, seconds, interrupted, backend, played)

