"""``qipai simulate``: many bot hands per ruleset, one Parquet row per hand.

What a hand is
    Hand ``i`` (0-based) of every ruleset is dealt and played from the seed
    :func:`qipai.bots.hand_seed` ``(S, i)`` (a BLAKE2b hash of the
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
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from qipai.bots import BOT_KINDS, hand_seed, make_bots, run_to_end
from qipai.core.hookspecs import hookimpl
from qipai.sim import BadSimulation, RayUnavailable, installed, require

__all__ = ["COLUMNS", "FORMAT", "Outcome", "RulesetSpec", "chunks", "hand_row", "import_ray",
           "guided_chunks", "parse_rulesets", "play_chunk", "probe_ray_address", "ray_target", "schema",
           "simulate", "start_ray", "write_parquet"]

#: Version of the row layout (in the file's metadata).
FORMAT = 1

#: The columns, in order, with their meaning (types: :func:`schema`).
COLUMNS: dict[str, str] = {
    "ruleset": "the ruleset as name(key=value, …) with the options that differ from the defaults",
    "variant": "the variant's name",
    "hand": "hand index i, 0-based",
    "seed": "the hand's 128-bit seed hand_seed(S, i), in decimal",
    "dealer": "the dealer's seat (i mod players)",
    "end": "hu (胡) or huangzhuang (荒庄)",
    "winners": "winner seats ([] at 荒庄)",
    "how": "the variant's word for the win (zimo, dianpao, qianggang, pinghu, fangpao …); "
           "null at 荒庄",
    "from_seat": "the seat that discarded, made the kong or drew the card won on; null for a "
                 "self-drawn win and at 荒庄",
    "patterns": "per winner (same order as winners), the pattern ids settled",
    "hu": "per winner, its 胡数 (zipai); null items where the variant has none (mahjong)",
    "xing": "per winner, its 醒 counted; null items where none was flipped for it",
    "net": "子 per seat over the hand, instant payments included (sums to 0)",
    "instant": "the instant payments (kongs, 追牌 …): payer, payee, amount 子, reason",
    "settlement": "the settlement's payments: payer, payee, amount 子, reason",
    "steps": "decisions applied in the hand",
}


def schema() -> Any:
    """The fixed pyarrow schema of a simulation file.

    Raises:
        MissingExtra: pyarrow is not installed (extra ``qipai[sim]``).
    """
    pa = require("pyarrow", "sim")
    payment = pa.struct([("payer", pa.int8()), ("payee", pa.int8()), ("amount", pa.int32()),
                         ("reason", pa.string())])
    return pa.schema([
        ("ruleset", pa.string()),
        ("variant", pa.string()),
        ("hand", pa.int64()),
        ("seed", pa.string()),
        ("dealer", pa.int8()),
        ("end", pa.string()),
        ("winners", pa.list_(pa.int8())),
        ("how", pa.string()),
        ("from_seat", pa.int8()),
        ("patterns", pa.list_(pa.list_(pa.string()))),
        ("hu", pa.list_(pa.int32())),
        ("xing", pa.list_(pa.int32())),
        ("net", pa.list_(pa.int32())),
        ("instant", pa.list_(payment)),
        ("settlement", pa.list_(payment)),
        ("steps", pa.int32()),
    ])


class RulesetSpec(msgspec.Struct, frozen=True):
    """A ruleset to simulate: its normalised spec string, name and options."""

    spec: str
    name: str
    options: dict[str, Any]


def parse_rulesets(specs: Sequence[str]) -> list[RulesetSpec]:
    """Load each spec once to check it; the normalised specs, in order.

    Raises:
        UnknownVariant, BadOption: as :func:`qipai.core.ruleset.load`.
        BadSimulation: no ruleset, or one given twice (after normalising:
            ``guilin-mahjong(hubao=true)`` is ``guilin-mahjong``).
    """
    from qipai.core.ruleset import load

    if not specs:
        raise BadSimulation("give at least one ruleset, e.g. guilin-mahjong")
    out: list[RulesetSpec] = []
    for text in specs:
        rs = load(text)
        spec = RulesetSpec(rs.spec, rs.name, rs.options_dict())
        if any(s.spec == spec.spec for s in out):
            raise BadSimulation(f"ruleset {spec.spec!r} is given twice")
        out.append(spec)
    return out


# --------------------------------------------------------------------------
# one hand


class _SettleObserver:
    """Keeps the last :class:`~qipai.core.model.HandEnd` settled (a hook
    wrapper that changes nothing), so a row can give each winner's 胡数."""

    def __init__(self) -> None:
        self.last: Any = None

    @hookimpl(wrapper=True)
    def qipai_settle(self, end: Any, options: Any) -> Any:
        self.last = end
        return (yield)


_LOADED: dict[str, tuple[Any, _SettleObserver]] = {}


def _ruleset(spec: RulesetSpec) -> tuple[Any, _SettleObserver]:
    got = _LOADED.get(spec.spec)
    if got is None:
        from qipai.core.ruleset import load

        observer = _SettleObserver()
        got = (load(spec.name, dict(spec.options), plugins=[observer]), observer)
        _LOADED[spec.spec] = got
    return got


def _payments(payments: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"payer": p.payer, "payee": p.payee, "amount": p.amount, "reason": p.reason}
            for p in payments]


def hand_row(spec: RulesetSpec, bots: str, seed: int, index: int) -> dict[str, Any]:
    """Play hand ``index`` of ``spec`` and return its row (:data:`COLUMNS`)."""
    rs, observer = _ruleset(spec)
    hs = hand_seed(seed, index)
    n = rs.manifest.players
    dealer = index % n
    observer.last = None
    table = rs.table(seed=hs, dealer=dealer)
    steps = run_to_end(table, make_bots(bots, n, hs))
    r = table.result
    how = from_seat = None
    hu: dict[int, int | None] = {}
    end = observer.last if r.end == "hu" else None
    if end is not None:
        how, from_seat = end.how, end.from_seat
        for claim in end.winners:
            hu[claim.seat] = rs.win_check(claim, end.how, end.dealer, end.from_seat).hu
    n_settle = len(r.instant)
    return {
        "ruleset": spec.spec, "variant": spec.name, "hand": index, "seed": str(hs),
        "dealer": dealer, "end": r.end, "winners": list(r.winners), "how": how,
        "from_seat": from_seat,
        "patterns": [list(r.patterns.get(w, ())) for w in r.winners],
        "hu": [hu.get(w) for w in r.winners],
        "xing": [r.xing.get(w) for w in r.winners],
        "net": list(r.net), "instant": _payments(r.instant),
        "settlement": _payments(r.payments[n_settle:]), "steps": steps,
    }


def play_chunk(spec: RulesetSpec, bots: str, seed: int, start: int,
               stop: int) -> list[dict[str, Any]]:
    """Rows of hands ``start`` ≤ i < ``stop`` of ``spec`` (a worker's task)."""
    return [hand_row(spec, bots, seed, i) for i in range(start, stop)]


def _play_rows(task: tuple[tuple[RulesetSpec, ...], str, int, int, int]
               ) -> list[dict[str, Any]]:
    """A task's rows: hands ``start`` ≤ i < ``stop`` of every ruleset.  One
    worker plays the same deals of all the rulesets: the bots' caches,
    filled by a deal under one ruleset, serve it under the others (the
    rulesets often play alike), and a run stopped early holds the same hands
    of each."""
    specs, bots, seed, start, stop = task
    return [row for spec in specs for row in play_chunk(spec, bots, seed, start, stop)]


_ROWS_ENCODER = msgspec.msgpack.Encoder()
_ROWS_DECODER = msgspec.msgpack.Decoder(list[dict[str, Any]])


def _play_task(task: tuple[tuple[RulesetSpec, ...], str, int, int, int]) -> bytes:
    """A worker's task (pool or Ray): :func:`_play_rows` as MessagePack.

    The parent turns each task's rows into an Arrow record batch as it
    arrives (:func:`_batch`): the workers never import pyarrow (about 0.6 s
    of CPU a process), and the parent's import and conversions run while the
    workers play, instead of before them."""
    return _ROWS_ENCODER.encode(_play_rows(task))


def _batch(rows: list[dict[str, Any]] | bytes) -> Any:
    """Rows (or a worker's MessagePack of them) as a record batch of :func:`schema`."""
    pa = require("pyarrow", "sim")
    if isinstance(rows, bytes):
        rows = _ROWS_DECODER.decode(rows)
    try:
        return pa.RecordBatch.from_pylist(rows, schema=_schema())
    except (pa.ArrowInvalid, OverflowError):
        raise BadSimulation(_too_large(rows)) from None


def _too_large(rows: list[dict[str, Any]]) -> str:
    """Why rows do not fit :func:`schema`: the first hand with a number past
    its column's integers (an option's amounts set beyond any table's)."""
    limit = 2**31 - 1
    for row in rows:
        nums = [*row["net"], *(p["amount"] for p in (*row["instant"], *row["settlement"]))]
        if any(abs(x) > limit for x in nums):
            return (f"hand {row['hand']} of {row['ruleset']} moved more 子 than a results file "
                    f"holds (net {row['net']}; at most {limit:,} a seat or a payment): lower "
                    f"the ruleset's amounts")
    return "the hands' rows do not fit the results file's columns (a variant's answers?)"


_SCHEMA: Any = None


def _schema() -> Any:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = schema()
    return _SCHEMA


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
# writing


def write_parquet(rows: Sequence[Any], path: str, meta: dict[str, Any]) -> None:
    """Write ``rows`` sorted by (ruleset, hand) to ``path`` with fixed settings.

    ``rows``: row dicts (:data:`COLUMNS`) or Arrow record batches of
    :func:`schema` (what the workers send).  Written to a temporary file
    beside ``path`` and renamed, so ``path`` is either the old file or the
    whole new one.

    Raises:
        BadSimulation: ``path`` cannot be written (no such directory, no
            permission …); nothing is left behind.
        KeyboardInterrupt: Ctrl-C during the write (the temporary file is
            removed; ``path`` is as it was).
    """
    pa = require("pyarrow", "sim")
    pq = require("pyarrow.parquet", "sim")
    sch = _schema()
    batches = [r if isinstance(r, pa.RecordBatch) else None for r in rows]
    dicts = [r for r, b in zip(rows, batches) if b is None]
    parts = [b for b in batches if b is not None]
    if dicts:
        parts.append(pa.RecordBatch.from_pylist(dicts, schema=sch))
    table = pa.Table.from_batches(parts, schema=sch)
    # Arrow orders strings by their UTF-8 bytes: the code points' order, as sorted().
    table = table.sort_by([("ruleset", "ascending"), ("hand", "ascending")]).combine_chunks()
    table = table.replace_schema_metadata({"qipai.simulate": json.dumps(meta, sort_keys=True)})
    tmp = f"{path}.part"
    renaming = False
    try:
        pq.write_table(table, tmp, compression="zstd", compression_level=3,
                       row_group_size=65536, use_dictionary=True, write_statistics=True,
                       version="2.6", data_page_version="1.0", store_schema=True)
        renaming = True
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise BadSimulation(f"cannot write {path}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        if renaming and not os.path.exists(tmp):
            return  # it came after the rename: the whole file is in place
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def check_writable(path: str) -> None:
    """Fail early, before any hand is played, when ``path`` cannot be written.

    A file is created in the directory and removed again (the mode bits
    alone do not tell: root ignores them, /proc refuses new files), so a
    run cannot play every hand and then fail to write.

    Raises:
        BadSimulation: ``path`` has no file name (empty, or ending with a
            slash), is a directory, or its directory is missing or does
            not take new files.
    """
    if not path or path.endswith(("/", os.sep)):
        raise BadSimulation(f"cannot write {path!r}: no file name")
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise BadSimulation(f"cannot write {path}: it is a directory")
    if not os.path.isdir(d):
        raise BadSimulation(f"cannot write {path}: no directory {d}")
    if not os.access(d, os.W_OK | os.X_OK) or (os.path.exists(path)
                                                and not os.access(path, os.W_OK)):
        raise BadSimulation(f"cannot write {path}: permission denied")
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".qipai-", suffix=".part", dir=d)
    except OSError as exc:
        raise BadSimulation(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    os.remove(probe)


#: The first and last four bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"


def file_head(path: str) -> bytes:
    """The first bytes of file ``path`` (as many as :data:`PARQUET_MAGIC`;
    fewer for a shorter file, none for an empty one).

    Raises:
        BadSimulation: the file cannot be read to tell what it holds.
    """
    try:
        with open(path, "rb") as f:
            return f.read(len(PARQUET_MAGIC))
    except OSError as exc:
        raise BadSimulation(f"cannot tell what {path} holds: {exc.strerror or exc}") from None


def check_replaceable(path: str) -> None:
    """Fail early when ``path`` is a file that a run must not replace: one
    that exists, is not empty and is not an earlier run's results — a
    Parquet file (``PAR1``) whose metadata has ``qipai.simulate`` —, such as
    ``--out README.md`` or another tool's Parquet file by mistake.  An
    earlier run's file is replaced, as documented; so is an empty one.

    Raises:
        BadSimulation: ``path`` holds something else, or cannot be read to
            tell.
    """
    if not os.path.isfile(path):
        return
    head = file_head(path)
    if not head:
        return
    if head != PARQUET_MAGIC:
        raise BadSimulation(f"will not replace {path}: it exists and is not a Parquet file "
                            f"(give another output file, or remove it first)")
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except Exception:  # noqa: BLE001 - any unreadable footer: not a results file
        meta = {}
    if b"qipai.simulate" not in meta:
        raise BadSimulation(f"will not replace {path}: it is a Parquet file qipai simulate did "
                            f"not write (give another output file, or remove it first)")


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
    """

    written: int
    asked: int
    seconds: float
    interrupted: bool
    backend: str
    played: int = 0

    @property
    def hands_per_s(self) -> float:
        return self.written / self.seconds if self.seconds > 0 else 0.0


def _warm(rulesets: Sequence[RulesetSpec]) -> None:
    """Build the rulesets and their lazy tables (win shapes …) in this process."""
    for spec in rulesets:
        rs, _ = _ruleset(spec)
        rs.table(seed=0, dealer=0)


def _worker_init(rulesets: Sequence[RulesetSpec] = ()) -> None:
    """A pool worker: Ctrl-C is the parent's to handle; SIGTERM (what
    ``Pool.terminate`` sends) ends it, whatever handler the parent had.  The
    rulesets are built once per worker, before its first task (free under
    ``fork``, which inherits the parent's; a ``spawn`` or ``forkserver``
    worker builds its own here)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _block_signals(False)  # blocked while the pool started (_run_pool)
    _warm(rulesets)


def _block_signals(block: bool) -> None:
    """Block (or unblock) SIGINT and SIGTERM in this thread, where the OS can."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK if block else signal.SIG_UNBLOCK,
                               {signal.SIGINT, signal.SIGTERM})


def simulate(rulesets: Sequence[RulesetSpec], hands: int, *, bots: str = "greedy",
             seed: int = 0, workers: int = 1, out: str = "results.parquet",
             ray_address: str | None = None, chunk: int | None = None,
             on_chunk: Callable[[int], None] | None = None) -> Outcome:
    """Play ``hands`` hands of each ruleset and write them to ``out``.

    Args:
        rulesets: from :func:`parse_rulesets`.
        hands: hands per ruleset (≥ 1).
        bots: ``"greedy"`` or ``"random"`` at every seat.
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

    Returns: the :class:`Outcome`; on Ctrl-C ``interrupted`` is set and the
    finished chunks are written; none finished, or Ctrl-C during the write:
    no file is written (``written`` 0; see the module doc).

    Raises:
        BadSimulation: hands, workers or chunk < 1, an unknown bot, ``out``
            not writable or an existing file that is not Parquet
            (:func:`check_replaceable`; both checked before the first hand).
        MissingExtra: pyarrow (``qipai[sim]``) or Ray (``qipai[ray]``) missing.
        RayUnavailable: ``ray.init`` failed, or Ray's workers did not start
            (see :func:`start_ray`).
    """
    if not isinstance(hands, int) or hands < 1:
        raise BadSimulation(f"--hands must be at least 1, not {hands!r}")
    if not isinstance(workers, int) or workers < 1:
        raise BadSimulation(f"--workers must be at least 1, not {workers!r}")
    if bots not in BOT_KINDS:
        raise BadSimulation(f"unknown bots {bots!r}; bots are: {', '.join(BOT_KINDS)}")
    if not isinstance(seed, int):
        raise BadSimulation(f"--seed must be an integer, not {seed!r}")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise BadSimulation(f"--chunk must be at least 1, not {chunk!r}")
    if ray_address is None:  # no more worker processes than tasks (a process idle from the start)
        workers = min(workers, -(-hands // chunk) if chunk else hands)
    installed("pyarrow", "sim")  # imported later, while the workers play
    # A task plays its hand indices under every ruleset (see _play_rows): a
    # run stopped early has the same hands of each.
    # Made as they are handed out: the pool's feeder blocks on a full pipe,
    # Ray keeps RAY_IN_FLIGHT submitted, so --hands 10**12 starts at once.
    ranges = (((a, min(a + chunk, hands)) for a in range(0, hands, chunk)) if chunk
              else _guided(hands, workers))
    tasks = ((tuple(rulesets), bots, seed, a, b) for a, b in ranges)
    meta = {"format": FORMAT, "rulesets": [s.spec for s in rulesets], "hands": hands,
            "bots": bots, "seed": seed}
    check_writable(out)
    check_replaceable(out)
    parts: list[Any] = []  # record batches, one per finished chunk
    written = 0
    interrupted = False
    t0 = time.perf_counter()

    def take(data: Any) -> None:
        nonlocal written
        part = _batch(data)
        parts.append(part)
        written += part.num_rows
        if on_chunk is not None:
            on_chunk(part.num_rows)

    backend = ("ray" if ray_address is not None else "in-process" if workers == 1
               else f"{workers} processes")
    try:
        if ray_address is None:
            # Built here, once: forked workers inherit them.
            _warm(rulesets)
        if ray_address is not None:
            interrupted = _run_ray(tasks, take, ray_address, workers, rulesets)
        elif workers == 1:
            for task in tasks:
                take(_play_rows(task))
        else:
            interrupted = _run_pool(tasks, take, workers, rulesets)
    except KeyboardInterrupt:  # warming up, starting the workers, in-process play
        interrupted = True
    seconds = time.perf_counter() - t0
    played = written
    if parts:
        try:
            write_parquet(parts, out, meta)
        except KeyboardInterrupt:
            interrupted, written = True, 0
    return Outcome(written, hands * len(rulesets), seconds, interrupted, backend, played)


def _run_pool(tasks: Iterable[Any], take: Callable[[Any], None], workers: int,
              rulesets: Sequence[RulesetSpec]) -> bool:
    """The tasks on a process pool; True if Ctrl-C stopped it."""
    import gc
    import multiprocessing

    # Forked workers share the parent's heap (tables, memos) copy-on-write;
    # frozen, the workers' garbage collector does not touch (and so copy)
    # every page of it.  SIGINT and SIGTERM are blocked meanwhile, in the
    # parent and so in the workers it forks: a Ctrl-C then (the terminal
    # sends it to every process of the group) or a SIGTERM of
    # Pool.terminate reaches a worker only once its initializer has set
    # what they do there, instead of the parent's handler raising
    # KeyboardInterrupt in it (a traceback); the parent gets it when the
    # pool is whole, to terminate it.
    _block_signals(True)
    gc.freeze()
    try:
        pool = multiprocessing.get_context().Pool(workers, initializer=_worker_init,
                                                  initargs=(list(rulesets),))
    except BaseException:
        _block_signals(False)
        raise
    finally:
        gc.unfreeze()
    try:
        _block_signals(False)  # a Ctrl-C held back arrives here
        for part in pool.imap_unordered(_play_task, tasks):
            take(part)
        pool.close()
        pool.join()
    except KeyboardInterrupt:
        pool.terminate()
        pool.join()
        return True
    return False


#: Seconds the workers of a Ray instance get to run a first task before
#: :func:`start_ray` gives up with :class:`RayUnavailable` (a worker that
#: cannot start is otherwise retried by Ray forever: the run would hang).
RAY_WORKER_TIMEOUT_S = 120.0

#: Ray's switch for its ``uv run`` hook (see :func:`import_ray`).
RAY_UV_HOOK = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"


def import_ray(local: bool) -> Any:
    """Import Ray; for a ``local`` instance, with its ``uv run`` hook off.

    Ray (2.43 and later) sees a driver started by ``uv run`` and gives its
    workers a runtime environment that runs ``uv run …`` again in a copy of
    the project; on a local instance those workers start slowly or never
    (the copy's environment lacks the extras, e.g. Ray itself), and the run
    hangs.  A local instance's workers need nothing but this interpreter, so
    unless the user has set it, :data:`RAY_UV_HOOK` is set to ``0`` before
    Ray is imported (Ray reads it once, when imported).  For a cluster the
    variable is left alone: the hook is how a ``uv run`` driver ships the
    project to nodes that lack it.

    Raises:
        MissingExtra: Ray is not installed (extra ``qipai[ray]``).
    """
    if local:
        os.environ.setdefault(RAY_UV_HOOK, "0")
    return require("ray", "ray")


def _ray_ready(rulesets: Sequence[RulesetSpec]) -> int:
    """A Ray worker's first task: build the rulesets (as a pool worker's
    initializer does) and say which process it is."""
    _warm(rulesets)
    return os.getpid()


#: How long to wait for a TCP answer at a ``HOST:PORT`` Ray address before
#: ``ray.init`` (seconds): see :func:`probe_ray_address`.
RAY_PROBE_S = 5.0

_HOST_PORT = re.compile(r"^(?:ray://)?(\[[^\]]+\]|[^:/\[\]\s]+):(\d{1,5})$")


def probe_ray_address(address: str, timeout: float = RAY_PROBE_S, where: str = "") -> None:
    """For a ``HOST:PORT`` or ``ray://HOST:PORT`` address, check that
    something answers there (a TCP connection) before ``ray.init`` is asked:
    Ray itself retries a cluster that is not there for about 14 minutes.
    Other addresses (``auto``, ``local`` …) are left to Ray.  ``where``:
    how the message names the cluster (default ``at ADDRESS``).

    Raises:
        RayUnavailable: nothing answers at HOST:PORT within ``timeout``
            seconds (refused, unreachable, no such host), or PORT is not
            1..65535.  (Something that answers but is not Ray is left to
            Ray, which retries it for as long.)
    """
    m = _HOST_PORT.match(address.strip())
    if m is None:
        return
    host, port = m.group(1).strip("[]"), int(m.group(2))
    where = where or f"at {address}"
    if not 0 < port < 65536:
        raise RayUnavailable(f"Ray {where} did not start: {port} is not a port (1..65535)",
                             address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as exc:
        why = exc.strerror or (type(exc).__name__ if not str(exc) else str(exc))
        if isinstance(exc, (TimeoutError, socket.timeout)):
            why = f"no answer within {timeout:g} s"
        raise RayUnavailable(f"Ray {where} did not start: nothing answers at "
                             f"{m.group(1)}:{port} ({why}); is a cluster running there "
                             f"(ray start --head)?", address) from None


def ray_target(address: str) -> str:
    """The address ``ray.init`` connects to for ``address``: the
    ``RAY_ADDRESS`` environment variable when it is set and ``address`` is
    ``""`` (no address: a local instance otherwise) or ``"auto"`` — Ray's
    own rule —, else ``address``.  ``""``: a new local instance."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    return env if env and address.strip() in ("", "auto") else address


def start_ray(address: str, workers: int, rulesets: Sequence[RulesetSpec] = (),
              timeout: float | None = None) -> bool:
    """Connect to Ray and check that its workers start.

    ``address``: ``""`` for a new local instance with ``workers`` CPUs, else
    the address for ``ray.init`` (``auto``, ``ray://host:10001`` …); with
    ``RAY_ADDRESS`` set, ``""`` and ``auto`` are that address
    (:func:`ray_target`).  If Ray
    is already initialised in this process it is used as it is.  Then
    ``workers`` tasks build the ``rulesets`` on Ray's workers, waited for at
    most ``timeout`` seconds (default :data:`RAY_WORKER_TIMEOUT_S`).

    Returns: True if this call started Ray (the caller shuts it down).

    ``ray.init`` installs Ray's own SIGTERM handler (it exits at once); a
    handler the caller had installed (``qipai simulate``'s, which keeps the
    finished chunks) is put back once ``ray.init`` returns, and a SIGTERM
    that Ray's handler took during ``ray.init`` is handed to it (a local
    node half started then may leave processes until the interpreter
    exits: ``qipai simulate`` exits next).  A ``HOST:PORT`` address is
    probed first (:func:`probe_ray_address`).

    Raises:
        MissingExtra: Ray is not installed.
        RayUnavailable: ``ray.init`` failed (no cluster at the address; a
            local node timing out while it starts its agents on a loaded
            machine), or no task finished in time: the workers did not
            start (Ray is shut down again if this call started it).
    """
    given, address = address, ray_target(address)
    ray = import_ray(not address)
    where = (f"at {address}" + (" (RAY_ADDRESS)" if address != given else "")
             if address else "(a local instance)")
    started = not ray.is_initialized()
    if started:
        if address:
            probe_ray_address(address, where=where)
        kwargs: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
        main = threading.current_thread() is threading.main_thread()
        mine = signal.getsignal(signal.SIGTERM) if main else None
        ours = callable(mine)  # a handler of the caller's, not SIG_DFL / SIG_IGN
        try:
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, **kwargs)
        except SystemExit:  # Ray's SIGTERM handler, during ray.init
            if not ours:
                raise
            with contextlib.suppress(Exception):
                ray.shutdown()
            signal.signal(signal.SIGTERM, mine)
            mine(signal.SIGTERM, None)  # the caller's handler decides (it raises, as a rule)
            raise RayUnavailable(f"Ray {where} did not start: SIGTERM", address or None) \
                from None
        except Exception as exc:  # Ray raises bare Exception / ConnectionError here
            raise RayUnavailable(f"Ray {where} did not start: "
                                 f"{' '.join(str(exc).split())}", address or None) from None
        finally:
            if ours:
                signal.signal(signal.SIGTERM, mine)
    limit = RAY_WORKER_TIMEOUT_S if timeout is None else timeout
    ready = ray.remote(num_cpus=1)(_ray_ready)
    refs = [ready.remote(list(rulesets)) for _ in range(workers)]
    try:
        done, _ = ray.wait(refs, num_returns=len(refs), timeout=limit)
        if not done:
            raise RayUnavailable(
                f"Ray {where} started but its workers ran no task within {limit:g} s "
                f"(they did not start; Ray's logs, e.g. /tmp/ray/session_latest/logs/"
                f"raylet.out, say why; a driver under `uv run` with {RAY_UV_HOOK}=1 "
                f"gives workers that start through uv)")
        ray.get(done)
    except BaseException as exc:
        if started:
            ray.shutdown()
        if isinstance(exc, ray.exceptions.RayError):
            raise RayUnavailable(f"Ray {where} could not run a task: "
                                 f"{' '.join(str(exc).split())[:300]}") from None
        raise
    return started


#: Ray tasks submitted and not yet collected, at most (the next are
#: submitted as these finish).
RAY_IN_FLIGHT = 1024


def _run_ray(tasks: Iterable[Any], take: Callable[[Any], None], address: str,
             workers: int, rulesets: Sequence[RulesetSpec]) -> bool:
    """The tasks as Ray tasks, at most :data:`RAY_IN_FLIGHT` submitted at a
    time; True if Ctrl-C stopped it."""
    started = start_ray(address, workers, rulesets)
    ray = import_ray(not ray_target(address))
    remote = ray.remote(num_cpus=1)(_play_task)
    todo = iter(tasks)
    pending: list[Any] = []
    try:
        pending += [remote.remote(t) for t in itertools.islice(todo, RAY_IN_FLIGHT)]
        while pending:
            # the next finished task, and any others finished meanwhile
            done, pending = ray.wait(pending, num_returns=1)
            if pending:
                more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                done += more
            pending += [remote.remote(t) for t in itertools.islice(todo, len(done))]
            for part in ray.get(done):
                take(part)
    except KeyboardInterrupt:
        # not force=True: killing a worker whose task is just finishing can
        # abort the driver (Ray's "Tried to complete task that was not
        # pending"); a local instance is shut down next anyway
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
        return True
    except ray.exceptions.RayError as exc:  # e.g. a worker that died
        raise RayUnavailable(f"Ray could not run the tasks: "
                             f"{' '.join(str(exc).split())[:300]}") from None
    finally:
        if started:
            ray.shutdown()
    return False
