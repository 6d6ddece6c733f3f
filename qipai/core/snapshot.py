"""The snapshot format: a table's whole state as bytes, and back.

A snapshot is :data:`SNAPSHOT_MAGIC`, a 16-byte blake2b digest of the
payload, then the payload: msgpack ``[state, seed, stamp]`` — the
:class:`~qipai.core.model.TableState`, the table's seed (one beyond 64 bits
written as its decimal text) and the :class:`~qipai.core.stamps.Stamp`
naming the qipai version, variant version, ruleset spec and house plugins
it was made under.  :meth:`Table.snapshot <qipai.core.table.Table.snapshot>`
and :meth:`Table.restore <qipai.core.table.Table.restore>` use it.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from qipai.core.errors import BadRecord
from qipai.core.model import TableState
from qipai.core.stamps import Stamp, check as check_stamp, stamp_of

#: The first bytes of every snapshot (format 3: with a digest and a
#: version stamp; format 2 had no stamp and is refused).
SNAPSHOT_MAGIC = b"QPSNAP3\n"
_DIGEST = 16
_PAYLOAD = msgspec.msgpack.Decoder(tuple[TableState, int | str | None, Stamp])


def encode(state: TableState, seed: int | None, stamp: Stamp) -> bytes:
    """The snapshot of ``state`` dealt from ``seed`` (None: none), made
    under ``stamp``."""
    if seed is not None and not -2**63 <= seed < 2**64:
        seed = str(seed)
    payload = msgspec.msgpack.encode([state, seed, stamp])
    return SNAPSHOT_MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload


def decode(ruleset: Any, data: Any,
           allow_version_mismatch: bool = False) -> tuple[TableState, int | None, Stamp]:
    """The state and seed in the snapshot ``data`` of a table of
    ``ruleset``, and the stamp ``ruleset`` runs under now.

    The snapshot must have been made under ``ruleset``'s variant version,
    spec and house plugins, and under this qipai version unless
    ``allow_version_mismatch`` (:mod:`qipai.core.stamps`).

    Raises:
        VersionMismatch: made under another qipai version, variant
            version, ruleset or house plugins; names what differs.
        BadRecord: not a snapshot, a snapshot altered since it was made
            (the digest does not match), one of another variant or
            options, or one of an older qipai (without version stamps).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise BadRecord(f"not a snapshot: expected bytes, not {type(data).__name__}")
    data = bytes(data)
    head = len(SNAPSHOT_MAGIC)
    if data.startswith(b"QPSNAP2\n"):
        raise BadRecord("the snapshot was made by an older qipai (snapshot format 2, "
                        "without version stamps); restore it there, or replay the "
                        "hand's record")
    if not data.startswith(SNAPSHOT_MAGIC) or len(data) < head + _DIGEST:
        raise BadRecord(f"not a snapshot of a {ruleset.name} table (no qipai snapshot header)")
    digest, payload = data[head:head + _DIGEST], data[head + _DIGEST:]
    if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != digest:
        raise BadRecord("the snapshot is corrupt: its digest does not match its contents")
    state_type = ruleset.manifest.state_type
    try:
        state, seed, stamp = _PAYLOAD.decode(payload)
        if state_type is not None and state.extra is not None:
            state.extra = msgspec.convert(state.extra, state_type)
        if isinstance(seed, str):
            seed = int(seed)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError) as exc:
        raise BadRecord(f"not a snapshot of a {ruleset.name} table: {exc}") from None
    if state.variant != ruleset.name or \
            msgspec.json.encode(state.options) != msgspec.json.encode(ruleset.options_dict()):
        raise BadRecord(f"the snapshot is of {state.variant} with options {state.options}, "
                        f"not of {ruleset.spec}")
    running = stamp_of(ruleset)
    check_stamp("the snapshot", msgspec.structs.asdict(stamp), running, allow_version_mismatch)
    return state, seed, running
