"""Game records: a versioned envelope that replays to the same hand.

A record holds everything needed to play the hand again — the variant and
its options, the dealt order (hands and stock; chance is recorded as data,
so replay never re-seeds), the starting relations and every decision — plus
the events and result it produced, so :func:`replay_check` can say where a
re-run first differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from qipai.core.errors import BadRecord, QipaiError, ReplayDiverged
from qipai.core.model import Action, Deal, Event, Result

FORMAT_VERSION = 1


class Record(msgspec.Struct, kw_only=True):
    """One hand, replayable.

    Attributes:
        format: record format version (:data:`FORMAT_VERSION`).
        variant: registered variant name.  version: the variant's version.
        options: every option of the ruleset (a dict).
        seed: the seed that made the deal, if any (informative only).
        deal: the dealt order — dealer, hands by seat, stock head first.
        relations: standing relations at the start of the hand.
        actions: every decision, in order.
        events: every event the hand produced.
        result: how it ended (None if unfinished).
    """

    format: int = FORMAT_VERSION
    variant: str
    version: str = "0"
    options: dict[str, Any] = {}
    seed: int | None = None
    deal: Deal
    relations: dict[str, list[list[int]]] = {}
    actions: list[Action] = []
    events: list[Event] = []
    result: Result | None = None


def record_of(table: Any) -> Record:
    """The record of a table (finished or not)."""
    st = table.state
    return Record(
        variant=st.variant, version=table.ruleset.manifest.version, options=dict(st.options),
        seed=table.seed, deal=st.deal, relations=st.start_relations,
        actions=list(st.actions), events=list(st.events), result=st.result,
    )


def decode_record(data: bytes | str | dict[str, Any]) -> Record:
    """A :class:`Record` from JSON text/bytes or a decoded dict.

    A JSON object with a ``"record"`` key (one hand of ``qipai play --json``
    output) or a ``"hands"`` list (the first hand is taken) is accepted too.

    Raises:
        BadRecord: not JSON, not a record, or of an unknown format version.
    """
    try:
        obj = msgspec.json.decode(data) if isinstance(data, (bytes, str)) else data
    except msgspec.DecodeError as exc:
        raise BadRecord(f"not a JSON record: {exc}") from None
    if isinstance(obj, dict) and "hands" in obj and isinstance(obj["hands"], list) and obj["hands"]:
        if len(obj["hands"]) != 1:
            raise BadRecord(f"a play output of {len(obj['hands'])} hands holds that many "
                            f"records; give one (qipai replay checks them all)")
        obj = obj["hands"][0]
    if isinstance(obj, dict) and "record" in obj:
        obj = obj["record"]
    if not isinstance(obj, dict):
        raise BadRecord("not a record: expected a JSON object")
    fmt = obj.get("format")
    if fmt != FORMAT_VERSION:
        raise BadRecord(f"unknown record format {fmt!r}; this qipai reads format {FORMAT_VERSION}")
    try:
        return msgspec.convert(obj, Record, str_keys=True)
    except msgspec.ValidationError as exc:
        raise BadRecord(f"malformed record: {exc}") from None


def load_record(path: str | Path) -> Record:
    """Read a record from a JSON file (see :func:`decode_record`)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadRecord(f"cannot read {path}: {exc.strerror}") from None
    return decode_record(data)


def replay(record: Record, plugins: Any = ()) -> Any:
    """Play the record's actions again on a fresh table; return the table.

    Raises:
        BadRecord: the variant or options are unknown, or the deal is impossible.
        ReplayDiverged: an action is refused on replay.
    """
    from qipai.core.ruleset import load
    from qipai.core.table import Table

    try:
        ruleset = load(record.variant, record.options, plugins=plugins)
        if record.version != ruleset.manifest.version:
            raise BadRecord(f"the record was made with {record.variant} version "
                            f"{record.version}; this is version {ruleset.manifest.version}")
        table = Table(ruleset, deal=record.deal, seed=record.seed, relations=record.relations)
    except QipaiError as exc:
        raise BadRecord(f"record cannot be set up: {exc}") from None
    for i, action in enumerate(record.actions):
        try:
            table.apply(action)
        except QipaiError as exc:
            raise ReplayDiverged(f"action {i} ({msgspec.json.encode(action).decode()}) "
                                 f"is refused on replay: {exc}") from None
    return table


def replay_check(record: Record, plugins: Any = ()) -> str | None:
    """Replay ``record``; None if events and result are identical, else a
    one-line description of the first difference.

    Raises:
        BadRecord: see :func:`replay`.
    """
    table = replay(record, plugins=plugins)
    got = table.state.events
    for i, (a, b) in enumerate(zip(record.events, got)):
        if a != b:
            enc = msgspec.json.encode
            return f"event {i} differs: recorded {enc(a).decode()}, replayed {enc(b).decode()}"
    if len(got) != len(record.events):
        return f"recorded {len(record.events)} events, replay gave {len(got)}"
    if table.state.result != record.result:
        enc = msgspec.json.encode
        return f"result differs: recorded {enc(record.result).decode()}, " \
               f"replayed {enc(table.state.result).decode()}"
    return None
