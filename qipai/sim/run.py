"""``qipai simulate``: many bot hands per ruleset, one Parquet row per hand.

What a hand is
    Hand ``i`` (0-based) of every ruleset is dealt and played from the seed
    :func:`qipai.core.sessions.hand_seed` ``(S, i)`` (a BLAKE2b hash of the
    simulation seed ``S`` and ``i``): the shuffle and the bots' RNGs come from
    it, exactly as :func:`qipai.bots.play_hand` plays it.  Hands are
    independent: the dealer is **not** passed on by the variant's rules
    (连庄) but rotates, hand ``i`` dealt by seat ``i mod players``, so every
    seat deals equally often and a hand does not depend on the one before.
    Rulesets share the seeds: hand ``i`` of ``guilin-mahjong`` and of
    ``guilin-mahjong(hubao=false)`` start from the same shuffle (common
    random numbers: the rulesets are compared on the same deals).

What a file holds
    One row per hand with the columns of :data:`COLUMNS` (a fixed schema, see
    :func:`schema`), sorted by ruleset, then hand index; the file's key-value
    metadata ``qipai.simulate`` holds the run's parameters (JSON: format,
    rulesets, hands asked for, bots, seed), never the workers, the backend
    or a time.  The writer's settings are fixed (zstd, one row group per
    65,536 rows, statistics on), so the same rulesets, N, bots and seed give
    a byte-identical file whatever ``--workers`` or ``--ray``, with the same
    pyarrow version.

Decisions (``--decisions``)
    With a recorder (``qipai.env``'s
    :class:`~qipai.env.policy.DecisionRecorder`, given by the caller: this
    package does not import the environments), every decision of the
    recorder's seats is also written, to a second file
    (:data:`DECISION_COLUMNS`, sorted by ruleset, hand and step, metadata
    ``qipai.decisions``), under the same rules: the same bytes whatever the
    workers, ``.part`` then renamed, an existing file replaced only when it
    is an earlier decisions file.  The bots decide as without it.

Backends
    ``workers == 1``: in this process.  ``workers > 1``: a
    :mod:`multiprocessing` pool of that many processes.  ``ray``: the chunks
    as Ray tasks (``ray.init(address=…)``, or a local instance with
    ``workers`` CPUs), Ray being the optional extra ``qipai[ray]``; the
    cluster's workers need qipai installed.

Ctrl-C stops the run: the chunks already finished are written (a valid
file, fewer rows) and :class:`Outcome` says how many hands.  Before any
chunk finished (warming up, starting the workers or Ray, playing the first
chunk) nothing is written; a Ctrl-C while the file is being written stops
the write and leaves no partial file (the temporary ``OUT.part`` is
removed; a file already at ``OUT`` stays as it was).

This module runs a simulation; a hand's row is :mod:`qipai.sim.rows`, the
backends :mod:`qipai.sim.backends`, the writing :mod:`qipai.sim.parquet`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from qipai.bots.registry import BadBot, bot_factory
from qipai.core.extras import installed
from qipai.sim import BadSimulation
from qipai.sim.backends import (
    _run_pool, _run_ray, import_ray, probe_ray_address, ray_target, start_ray,
)
from qipai.sim.parquet import (
    DECISIONS_KEY, PARQUET_MAGIC, _batch, _decision_batch, check_replaceable, check_writable,
    file_head, write_parquet,
)
from qipai.sim.rows import (
    _DECISIONS_DECODER, COLUMNS, DECISION_COLUMNS, DECISIONS_FORMAT, FORMAT, RulesetSpec,
    _play_rows, _ruleset, _warm, decision_schema, hand_row, parse_rulesets, play_chunk, schema,
)

# The simulation's public names, wherever they live (the command imports them from here).
__all__ = ["COLUMNS", "DECISION_COLUMNS", "FORMAT", "decision_schema", "PARQUET_MAGIC", "Outcome", "RulesetSpec", "check_writable",
           "chunks", "file_head", "guided_chunks", "hand_row", "import_ray", "parse_rulesets",
           "play_chunk", "probe_ray_address", "ray_target", "schema", "simulate", "start_ray",
           "write_parquet"]


def chunks(hands: int, size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges of at most ``size`` hands covering ``range(hands)``."""
    return [(a, min(a + size, hands)) for a in range(0, hands, size)]


def guided_chunks(hands: int, workers: int, most: int = 50) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges covering ``range(hands)`` that shrink towards
    the end: each takes an eighth of a worker's share of the hands left (at
    most ``most``, at least one).  Early tasks are large (a task's overhead
    stays far below its hands' play); the last ones are single hands, so the
    workers finish within about a hand of each other instead of one idling
    through the other's last large chunk."""
    return list(_guided(hands, workers, most))


def _guided(hands: int, workers: int, most: int = 50) -> Iterator[tuple[int, int]]:
    """:func:`guided_chunks` one range at a time (a run of 10**12 hands
    cannot list its tasks first)."""
    a = 0
    while a < hands:
        size = max(1, min(most, (hands - a) // (8 * workers)))
        yield (a, a + size)
        a += size


# --------------------------------------------------------------------------
# running


class Outcome(msgspec.Struct):
    """What a run did.

    Attributes:
        written: hands in the file written (0: no file written).
        asked: hands asked for (hands × rulesets).
        seconds: the time playing took.
        interrupted: Ctrl-C (or SIGTERM) stopped the run.
        backend: ``in-process``, ``K processes`` or ``ray``.
        played: hands of the chunks that finished; more than ``written``
            only when Ctrl-C stopped the write.
        decisions: rows in the decisions file written (``decisions=``; 0:
            none written).
    """

    written: int
    asked: int
    seconds: float
    interrupted: bool
    backend: str
    played: int = 0
    decisions: int = 0

    @property
    def hands_per_s(self) -> float:
        return self.written / self.seconds if self.seconds > 0 else 0.0


def simulate(rulesets: Sequence[RulesetSpec], hands: int, *, bots: str = "greedy",
             seed: int = 0, workers: int = 1, out: str = "results.parquet",
             ray_address: str | None = None, chunk: int | None = None,
             on_chunk: Callable[[int], None] | None = None, decisions: str | None = None,
             recorder: Any = None) -> Outcome:
    """Play ``hands`` hands of each ruleset and write them to ``out``.

    Args:
        rulesets: from :func:`parse_rulesets`.
        hands: hands per ruleset (≥ 1).
        bots: the bot name at every seat (``"greedy"``, ``"random"``, a
            level, ``module:Class``, a ``qipai.bots`` entry point:
            :func:`~qipai.bots.registry.bot_factory`); recorded in the file's
            metadata.  Each worker process (or Ray task) resolves the name
            itself, so ``module:Class`` must import there too.
        seed: the simulation seed S (any int).
        workers: worker processes (≥ 1; never more than the tasks: one
            per chunk of hands); with Ray, the CPUs of a local instance.
        out: the Parquet file to write.
        ray_address: None: no Ray; ``""``: a local Ray instance; else the
            address given to ``ray.init``.
        chunk: hand indices per task, each task playing them under every
            ruleset (default: :func:`guided_chunks`, at most 50 indices,
            shrinking to one towards the end); does not change the file.
        on_chunk: called with the number of hands of each finished chunk.
        decisions: also write every decision of the ``recorder``'s seats to
            this Parquet file (:data:`DECISION_COLUMNS`, sorted by ruleset,
            hand, step; metadata ``qipai.decisions``: the run's parameters,
            the seats, each ruleset's observation shape and action count),
            written after ``out`` under the same rules.
        recorder: with ``decisions``, what encodes them:
            :class:`qipai.env.policy.DecisionRecorder` ``(seats)`` (the
            environment's encoding; ``qipai simulate --decisions`` makes it).
            It changes no decision: ``out`` is the same with or without.

    Returns: the :class:`Outcome`; on Ctrl-C ``interrupted`` is set and the
    finished chunks are written; none finished, or Ctrl-C during the write:
    no file is written (``written`` 0; see the module doc).

    Raises:
        BotFault: a bot raised or answered an illegal action (``hand`` and
            ``ruleset`` on it say where); no file is written.
        BadSimulation: hands, workers or chunk < 1, a bad bot name, ``out``
            not writable or an existing file that is not Parquet
            (:func:`check_replaceable`; both checked before the first hand);
            the same for ``decisions`` (an existing file must be an earlier
            decisions file), ``decisions`` the same file as ``out``, or
            ``decisions`` without a ``recorder``, or a recorded seat not at a
            ruleset's table.
        MissingExtra: pyarrow (``qipai[sim]``) or Ray (``qipai[ray]``) missing.
        RayUnavailable: ``ray.init`` failed, or Ray's workers did not start
            (see :func:`start_ray`).
    """
    _check_arguments(hands, workers, bots, seed, chunk)
    if ray_address is None:  # no more worker processes than tasks (a process idle from the start)
        workers = min(workers, -(-hands // chunk) if chunk else hands)
    installed("pyarrow", "sim")  # imported later, while the workers play
    # A task plays its hand indices under every ruleset (see _play_rows): a
    # run stopped early has the same hands of each.
    # Made as they are handed out: the pool's feeder blocks on a full pipe,
    # Ray keeps RAY_IN_FLIGHT submitted, so --hands 10**12 starts at once.
    ranges = (((a, min(a + chunk, hands)) for a in range(0, hands, chunk)) if chunk
              else _guided(hands, workers))
    meta = {"format": FORMAT, "rulesets": [s.spec for s in rulesets], "hands": hands,
            "bots": bots, "seed": seed}
    check_writable(out)
    check_replaceable(out)
    if decisions is not None:
        dmeta = _check_decisions(decisions, out, recorder, rulesets, meta)
    else:
        recorder = None
    tasks = ((tuple(rulesets), bots, seed, a, b, recorder) for a, b in ranges)
    parts: list[Any] = []  # record batches, one per finished chunk
    dparts: list[Any] = []  # the decisions' record batches, likewise
    written = 0
    t0 = time.perf_counter()

    def take(data: Any) -> None:
        nonlocal written
        if recorder is not None:  # rows and decisions
            rows, made = _DECISIONS_DECODER.decode(data) if isinstance(data, bytes) else data
            data = rows
            dparts.append(_decision_batch(made))
        part = _batch(data)
        parts.append(part)
        written += part.num_rows
        if on_chunk is not None:
            on_chunk(part.num_rows)

    backend = ("ray" if ray_address is not None else "in-process" if workers == 1
               else f"{workers} processes")
    interrupted = _play(tasks, take, rulesets, workers, ray_address)
    seconds = time.perf_counter() - t0
    played = written
    n_decisions = 0
    if parts:
        done = False  # the results file is in place
        try:
            write_parquet(parts, out, meta)
            done = True
            if recorder is not None:
                write_parquet(dparts, decisions, dmeta, decisions=True)
                n_decisions = sum(p.num_rows for p in dparts)
        except KeyboardInterrupt:  # during a write: that file is not written
            interrupted = True
            written = written if done else 0
    return Outcome(written, hands * len(rulesets), seconds, interrupted, backend, played,
                   n_decisions)


def _check_decisions(path: str, out: str, recorder: Any, rulesets: Sequence[RulesetSpec],
                     meta: dict[str, Any]) -> dict[str, Any]:
    """Refuse a decisions file :func:`simulate` cannot write (its
    ``Raises``); the file's metadata."""
    import os

    if recorder is None:
        raise BadSimulation("decisions need a recorder: qipai.env.policy.DecisionRecorder(seats)")
    if os.path.abspath(path) == os.path.abspath(out) or (
            os.path.exists(path) and os.path.exists(out) and os.path.samefile(path, out)):
        raise BadSimulation(f"--decisions {path} is the results file (--out); give it another "
                            f"name")
    check_writable(path)
    check_replaceable(path, DECISIONS_KEY)
    shapes = {}
    for spec in rulesets:
        rs, _ = _ruleset(spec)
        try:
            recorder.check(rs)
        except (ValueError, LookupError) as exc:  # a seat not at the table; no encoding
            raise BadSimulation(str(exc)) from None
        shapes[spec.spec] = recorder.describe(rs)
    seats = None if recorder.seats is None else list(recorder.seats)
    return {**meta, "format": DECISIONS_FORMAT, "seats": seats, "encoding": shapes}


def _check_arguments(hands: Any, workers: Any, bots: Any, seed: Any, chunk: Any) -> None:
    """Refuse what :func:`simulate` cannot run (its ``Raises``), before any work."""
    if not isinstance(hands, int) or hands < 1:
        raise BadSimulation(f"--hands must be at least 1, not {hands!r}")
    if not isinstance(workers, int) or workers < 1:
        raise BadSimulation(f"--workers must be at least 1, not {workers!r}")
    try:
        bot_factory(bots)   # here; each worker resolves the name again (it must import there)
    except BadBot as exc:
        raise BadSimulation(f"--bots: {exc}") from None
    if not isinstance(seed, int):
        raise BadSimulation(f"--seed must be an integer, not {seed!r}")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise BadSimulation(f"--chunk must be at least 1, not {chunk!r}")


def _play(tasks: Iterable[Any], take: Callable[[Any], None], rulesets: Sequence[RulesetSpec],
          workers: int, ray_address: str | None) -> bool:
    """Play the tasks on the backend asked for, each finished one handed to
    ``take``; True if Ctrl-C stopped the run."""
    try:
        if ray_address is None:
            # Built here, once: forked workers inherit them.
            _warm(rulesets)
        if ray_address is not None:
            return _run_ray(tasks, take, ray_address, workers, rulesets)
        if workers == 1:
            for task in tasks:
                take(_play_rows(task))
            return False
        return _run_pool(tasks, take, workers, rulesets)
    except KeyboardInterrupt:  # warming up, starting the workers, in-process play
        return True
