"""Writing a simulation file: rows as Arrow record batches, one Parquet file with fixed settings.

The writer's settings are fixed (zstd, one row group per 65,536 rows,
statistics on), so the same rows give a byte-identical file with the same
pyarrow version; the file is written beside its path and renamed.  Before
any hand is played, :func:`check_writable` and :func:`check_replaceable`
refuse a path that cannot be written or holds something a run must not
replace.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from typing import Any

from qipai.core.extras import require
from qipai.sim import BadSimulation
from qipai.sim.rows import _ROWS_DECODER, _schema, decision_schema


def _batch(rows: list[dict[str, Any]] | bytes, sch: Any = None) -> Any:
    """Rows (or a worker's MessagePack of them) as a record batch of
    ``sch`` (default: simulate's :func:`schema`)."""
    pa = require("pyarrow", "sim")
    if isinstance(rows, bytes):
        rows = _ROWS_DECODER.decode(rows)
    try:
        return pa.RecordBatch.from_pylist(rows, schema=sch or _schema())
    except (pa.ArrowInvalid, OverflowError):
        raise BadSimulation(_too_large(rows)) from None


def _decision_batch(decisions: Sequence[Sequence[Any]]) -> Any:
    """Decisions (:func:`~qipai.sim.rows.hand_row`'s tuples) as a record
    batch of :func:`~qipai.sim.rows.decision_schema`: the observations and
    masks (bytes) laid end to end as the list columns' values."""
    pa = require("pyarrow", "sim")
    np = require("numpy", "sim")
    cols = list(zip(*decisions)) if decisions else [()] * 9

    def lists(blobs: Sequence[bytes], dtype: Any, typ: Any) -> Any:
        offsets = np.zeros(len(blobs) + 1, np.int32)
        np.cumsum([len(b) for b in blobs], out=offsets[1:])
        values = np.frombuffer(b"".join(blobs), dtype)
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, typ))

    sch = decision_schema()
    arrays = [pa.array(cols[0], pa.string()), pa.array(cols[1], pa.int64()),
              pa.array(cols[2], pa.string()), pa.array(cols[3], pa.int8()),
              pa.array(cols[4], pa.int32()), lists(cols[5], np.uint8, pa.uint8()),
              lists(cols[6], np.int8, pa.int8()), pa.array(cols[7], pa.int16()),
              pa.array(cols[8], pa.int32())]
    return pa.RecordBatch.from_arrays(arrays, schema=sch)


def _too_large(rows: list[dict[str, Any]]) -> str:
    """Why rows do not fit :func:`schema`: the first hand with a number past
    its column's integers (an option's amounts set beyond any table's)."""
    limit = 2**31 - 1
    for row in rows:
        nums = [*(row["net"] or ()),
                *(p["amount"] for p in (*row.get("instant", ()), *row.get("settlement", ())))]
        if any(abs(x) > limit for x in nums):
            where = (f"hand {row['hand']}" if "hand" in row
                     else f"deal {row.get('deal')} (seat {row.get('seat')})")
            return (f"{where} of {row['ruleset']} moved more 子 than a results file "
                    f"holds (net {row['net']}; at most {limit:,} a seat or a payment): lower "
                    f"the ruleset's amounts")
    return "the hands' rows do not fit the results file's columns (a variant's answers?)"


#: The metadata keys of the results files a run may replace: simulate's
#: and arena's (:func:`check_replaceable`); a decisions file's key.
RESULTS_KEY, DECISIONS_KEY = "qipai.simulate", "qipai.decisions"
RESULTS_KEYS = (RESULTS_KEY, "qipai.arena")


def write_parquet(rows: Sequence[Any], path: str, meta: dict[str, Any], *, sch: Any = None,
                  order: Sequence[str] = ("ruleset", "hand"),
                  key: str = RESULTS_KEY, decisions: bool = False) -> None:
    """Write ``rows`` sorted by ``order`` to ``path`` with fixed settings.

    ``rows``: row dicts (:data:`COLUMNS`) or Arrow record batches of
    ``sch`` (default :func:`schema`: what simulate's workers send).
    ``meta`` is stored as JSON under the file's metadata ``key``.  With
    ``decisions``: record batches of :func:`~qipai.sim.rows.decision_schema`,
    sorted by (ruleset, hand, step), ``meta`` under :data:`DECISIONS_KEY`.
    Written to a temporary file beside ``path`` and renamed, so ``path`` is
    either the old file or the whole new one.

    Raises:
        BadSimulation: ``path`` cannot be written (no such directory, no
            permission …); nothing is left behind.
        KeyboardInterrupt: Ctrl-C during the write (the temporary file is
            removed; ``path`` is as it was).
    """
    pa = require("pyarrow", "sim")
    pq = require("pyarrow.parquet", "sim")
    if decisions:
        sch, order, key = decision_schema(), ("ruleset", "hand", "step"), DECISIONS_KEY
    sch = sch or _schema()
    batches = [r if isinstance(r, pa.RecordBatch) else None for r in rows]
    dicts = [r for r, b in zip(rows, batches) if b is None]
    parts = [b for b in batches if b is not None]
    if dicts:
        parts.append(pa.RecordBatch.from_pylist(dicts, schema=sch))
    table = pa.Table.from_batches(parts, schema=sch)
    # Arrow orders strings by their UTF-8 bytes: the code points' order, as sorted().
    table = table.sort_by([(c, "ascending") for c in order]).combine_chunks()
    table = table.replace_schema_metadata({key: json.dumps(meta, sort_keys=True)})
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


def check_replaceable(path: str, keys: str | Sequence[str] = RESULTS_KEYS) -> None:
    """Fail early when ``path`` is a file that a run must not replace: one
    that exists, is not empty and is not an earlier run's file of its kind —
    a Parquet file (``PAR1``) whose metadata has one of ``keys``
    (:data:`RESULTS_KEYS` — ``qipai.simulate`` or ``qipai.arena`` — for
    results, :data:`DECISIONS_KEY` ``qipai.decisions`` for decisions) —,
    such as ``--out README.md``, another tool's Parquet file or a results
    file given as ``--decisions`` by mistake.  An earlier run's file is
    replaced, as documented; so is an empty one.

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
    if isinstance(keys, str):
        keys = (keys,)
    if not any(k.encode() in meta for k in keys):
        what = ("a decisions file of qipai simulate --decisions" if keys == (DECISIONS_KEY,)
                else "the results of qipai simulate or qipai arena")   # (one may be the other)
        raise BadSimulation(f"will not replace {path}: it is a Parquet file but not {what} "
                            f"(give another output file, or remove it first)")
