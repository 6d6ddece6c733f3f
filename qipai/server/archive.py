"""Closed tables archived before their prune (``qipai serve --archive DIR``).

With ``--retention`` and ``--archive DIR``, the prune
(:mod:`qipai.server.retention`) first writes each closed table it is
about to delete to one file, ``DIR/<YYYY-MM-DD>/<table id>.json`` (the
UTC day of its close; of its creation for a table closed before closes
were dated): what ``GET /tables/{id}/records`` answers — every finished
hand's record with its chain, money and joint-deal fields, which ``qipai
verify FILE`` checks — and, under ``"archive"``, the table's metadata
(:func:`metadata`: its rules, players, totals, how it ended; never a
token, a token's hash or a key).

Each file is written to a temporary file in the same folder, flushed to
disk (``fsync``), renamed over ``<table id>.json`` and the folder flushed
too: a process killed mid-write leaves at most a ``.<table id>.*.tmp``
file, never a half ``.json``, and a table's rows are deleted only after
its file is durable.  A table whose file cannot be written (disk full,
permission) is not deleted: it is tried again at the next prune.

In a cluster each node archives the tables it prunes, so ``DIR`` must be
one storage every node writes (a shared volume), or each node's own.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec

#: The characters of a table id that may not name a file (replaced by ``_``).
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class BadArchive(Exception):
    """``--archive DIR`` is not a folder this process can write into."""


def check_dir(path: str) -> Path:
    """``path`` as the archive's folder: an existing folder this process
    can write a file into (tried: a file made and removed).

    Raises:
        BadArchive: it is missing, not a folder, or not writable."""
    p = Path(path)
    if not p.exists():
        raise BadArchive(f"--archive {path}: no such folder (make it first)")
    if not p.is_dir():
        raise BadArchive(f"--archive {path}: not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".qipai-probe.", suffix=".tmp", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BadArchive(f"--archive {path}: cannot write into it: "
                         f"{exc.strerror or exc}") from None
    return p


def file_of(root: Path, row: dict[str, Any]) -> Path:
    """Where table ``row``'s archive file goes: ``root/<YYYY-MM-DD>/<id>.json``."""
    when = row.get("closed") or row["created"]
    day = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%d")
    name = _UNSAFE.sub("_", row["id"])[:64] or "_"   # (the server's ids are safe already)
    return root / day / f"{name}.json"


def _json(text: Any, default: Any = None) -> Any:
    return msgspec.json.decode(text) if text else default


def metadata(row: dict[str, Any], records: dict[str, Any]) -> dict[str, Any]:
    """The archive's ``"archive"`` object of stored table ``row`` (its
    records: :func:`qipai.server.routes.records_of`): who made it and
    played, its rules, its totals and how it ended.  Never its tokens'
    hashes or the server seed."""
    players = _json(row.get("players"), {})
    bots = _json(row.get("bots"), [])
    return {
        "archived": time.time(),
        "key": row.get("key_name"),
        "created": row["created"],
        "closed": row.get("closed"),
        "variant": row["variant"],
        "spec": row["spec"],
        "options": _json(row["options"], {}),
        "plugins": _json(row["plugins"], []),
        "qipai_version": row["qipai_version"],
        "variant_version": row["variant_version"],
        "rng": row["rng"],
        "bots": bots,
        "bot_levels": _json(row.get("bot_levels"), {}),
        "players": {s: {"player": p.get("player"), "name": p.get("name")}
                    for s, p in sorted(players.items(), key=lambda i: int(i[0]))},
        "seats": len(bots) + len(_json(row["tokens"], {})),
        "hands_done": len(records["hands"]),
        "total": records["total"],
        "room_hands": row.get("hands"),
        "ended": row.get("ended"),
        "stake": row.get("stake"),
        "rake": _json(row.get("rake")),
        "seat_values": bool(row.get("seat_values")),
    }


def write(path: Path, body: bytes) -> None:
    """(A worker thread.)  ``body`` to ``path`` durably and atomically:
    a temporary file in its folder, fsync, rename, the folder fsync'd.

    Raises:
        OSError: it could not be written (nothing is left at ``path`` but
            what was there)."""
    folder = path.parent
    made = not folder.is_dir()
    folder.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)
    if made:   # the new day's folder's entry in the archive's root
        _fsync_dir(folder.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
