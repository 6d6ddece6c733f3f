"""Game records: a versioned envelope that replays to the same hand.

A record holds everything needed to play the hand again — the variant and
its options, the dealt order (hands and stock; chance is recorded as data,
so replay never re-seeds), the starting relations and every decision — plus
the events and result it produced, so :func:`replay_check` can say where a
re-run first differs.  Playing a hand again is one loop, :func:`apply_steps`,
whose steps :func:`replay_steps` gives for a record and :func:`replay` runs
to the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec
from msgspec import UNSET, UnsetType

from qipai.core.chain import Chain
from qipai.core.errors import BadRecord, QipaiError, ReplayDiverged
from qipai.core.model import Action, Deal, Event, Payment, Result
from qipai.core.joint import Joint
from qipai.core.money import Money
from qipai.core.stamps import PluginStamp

#: The record format this qipai writes.  2: payments carry ``why`` (their
#: breakdown, :class:`~qipai.core.model.Term`).
FORMAT_VERSION = 2
#: The formats it reads: 1 (payments without ``why``; replayed and compared
#: without it) and 2.
READ_FORMATS = (1, 2)


class Record(msgspec.Struct, kw_only=True):
    """One hand, replayable.

    Attributes:
        format: record format version (:data:`FORMAT_VERSION` when written;
            any of :data:`READ_FORMATS` is read).
        variant: registered variant name.  version: the variant's version.
        options: every option of the ruleset (a dict).
        seed: the seed whose shuffle made the deal, if any; None for an
            explicit deal.  :func:`replay_check` deals from it again and
            reports a deal that differs.
        deal: the dealt order — dealer, hands by seat, stock head first.
        relations: standing relations at the start of the hand.
        actions: every decision, in order.
        events: every event the hand produced.
        result: how it ended (None if unfinished).
        partial: the deal is not the whole deck (a test position; see
            ``Table(partial=True)``); replay allows it again.
        ask_all: the table asked every seat at every claim window
            (``Table(ask_all=True)``); default False (older records).
        rng: what dealt the hand — ``"seeded"`` (a seed, for tests and
            demos), ``"os"`` (the OS's CSPRNG), ``"host"`` (a host's RNG);
            None for an explicit deal or an older record.  ``"seeded"``
            goes with its ``seed``, the others with none (``qipai verify``
            fails a record where they disagree, :mod:`qipai.core.fair`).
        commitment: hex SHA-256 of the deal's canonical bytes and ``salt``,
            published by a host at the deal (:mod:`qipai.core.fair`); None
            when the hand was not committed.
        salt: the commitment's secret salt, revealed after the hand (64 hex
            digits = 32 bytes); None when not committed.
        timeouts: indices into ``actions`` of the actions a host made for a
            seat that did not answer in time (its default action); empty
            when none (or not hosted).
        qipai_version: the qipai version that made the record (None: an
            older record, made before version stamps).
        spec: the ruleset spec, ``name(key=value, …)`` with the options
            that differ from the defaults (None: an older record).
        joint: a joint deal's parts (``rng`` ``"joint"``,
            :mod:`qipai.core.joint`): the server seed and its commitment,
            each seat's commitment, value and whether it withheld; ``seed``
            is then the deal seed made of them.  None: not a joint deal
            (left out of the JSON, :func:`plain`).
        plugins: the house-rule plugins the hand was played with, in
            registration order, each its name and source SHA-256 (None: an
            older record; ``[]``: none).  See :mod:`qipai.core.stamps` for
            how a replay under other versions is refused.
        money: the hand in money (:class:`~qipai.core.money.Money`: each
            payment × the table's stake, the rake lines to the house, net
            per seat and the house's take), when its table had a stake;
            absent otherwise (and in older records) — not written then,
            so a record without money is byte for byte as before.
        chain: where the hand stands in its table's tamper-evident journal
            (:class:`~qipai.core.chain.Chain`: ``table``, ``hand``,
            ``prev``, ``head``) — a hosted hand's; absent otherwise (and in
            a record made before links), so a record without it is as before.
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
    partial: bool = False
    ask_all: bool = False
    rng: Literal["seeded", "os", "host", "joint"] | None = None
    commitment: str | None = None
    salt: str | None = None
    timeouts: list[int] = []
    qipai_version: str | None = None
    spec: str | None = None
    plugins: list[PluginStamp] | None = None
    joint: Joint | None = None
    money: Money | None | msgspec.UnsetType = msgspec.UNSET
    chain: Chain | UnsetType = UNSET


#: The largest record text :func:`decode_record` reads (bytes), and the
#: deepest nesting it accepts (a record of format 2, its payments' breakdowns
#: included, nests about 15 levels).
MAX_RECORD_BYTES = 64 * 1024 * 1024
MAX_RECORD_DEPTH = 32


def _depth_problem(data: bytes | str) -> str | None:
    """Why ``data`` is too large or too deeply nested to decode, or None.

    Brackets inside JSON strings are skipped (escapes honoured)."""
    if len(data) > MAX_RECORD_BYTES:
        return f"a record is at most {MAX_RECORD_BYTES} bytes; this is {len(data)}"
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if text.count("[") + text.count("{") <= MAX_RECORD_DEPTH:
        return None
    depth = 0
    for m in _BRACKETS.finditer(_STRINGS.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_RECORD_DEPTH:
                return f"a record is nested at most {MAX_RECORD_DEPTH} deep"
        else:
            depth -= 1
    return None


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def _object_depth(obj: Any, limit: int = MAX_RECORD_DEPTH) -> bool:
    """True when the decoded ``obj`` nests deeper than ``limit``."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list, tuple)):
            if d > limit:
                return True
            stack.extend((v, d + 1) for v in (o.values() if isinstance(o, dict) else o))
    return False


def record_of(table: Any) -> Record:
    """The record of a table (finished or not), stamped with the qipai
    version, ruleset spec and house plugins it runs under.  A host adds
    ``commitment``/``salt`` with :func:`qipai.core.fair.committed` and
    ``timeouts`` itself."""
    from qipai.core.stamps import qipai_version

    st = table.state
    rs = table.ruleset
    return Record(
        qipai_version=qipai_version(), spec=rs.spec, plugins=list(rs.plugin_stamps),
        variant=st.variant, version=table.ruleset.manifest.version, options=dict(st.options),
        seed=table.seed, deal=st.deal, relations=st.start_relations,
        actions=list(st.actions), events=list(st.events), result=st.result,
        partial=bool(getattr(table, "partial", False)),
        ask_all=st.ask_all, rng=st.rng,
    )


def plain(record: Record) -> dict[str, Any]:
    """``record`` as plain builtins for JSON, without ``joint`` when it is
    None (a record of a deal that is not joint reads as before it existed)."""
    out = msgspec.to_builtins(record)
    if out.get("joint") is None:
        out.pop("joint", None)
    return out


def decode_record(data: bytes | str | dict[str, Any]) -> Record:
    """A :class:`Record` from JSON text/bytes or a decoded dict.

    A JSON object with a ``"record"`` key (one hand of ``qipai play --json``
    output) or a ``"hands"`` list (the first hand is taken) is accepted too.

    Raises:
        BadRecord: not JSON, not a record, of an unknown format version, or
            larger than :data:`MAX_RECORD_BYTES` or nested deeper than
            :data:`MAX_RECORD_DEPTH`.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
    if isinstance(data, (bytes, str)):
        problem = _depth_problem(data)
        if problem:
            raise BadRecord(f"not a record: {problem}")
    elif not isinstance(data, dict):
        raise BadRecord(f"not a record: expected JSON text or a dict, not {type(data).__name__}")
    elif _object_depth(data):
        raise BadRecord(f"not a record: a record is nested at most {MAX_RECORD_DEPTH} deep")
    try:
        obj = msgspec.json.decode(data) if isinstance(data, (bytes, str)) else data
    except (msgspec.DecodeError, RecursionError) as exc:
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
    if "format" not in obj:
        raise BadRecord(f"not a record: no format (a record names its format version, "
                        f"\"format\": {max(READ_FORMATS)}; this qipai reads formats "
                        f"{', '.join(map(str, sorted(READ_FORMATS)))})")
    if fmt not in READ_FORMATS or type(fmt) is not int:
        raise BadRecord(f"unknown record format {fmt!r}; this qipai reads formats "
                        f"{', '.join(map(str, READ_FORMATS))}")
    try:
        return msgspec.convert(obj, Record, str_keys=True)
    except (msgspec.ValidationError, RecursionError) as exc:
        raise BadRecord(f"malformed record: {exc}") from None


def load_record(path: str | Path) -> Record:
    """Read a record from a JSON file (see :func:`decode_record`)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadRecord(f"cannot read {path}: {exc.strerror}") from None
    return decode_record(data)


def stamp_check(record: Record, plugins: Any = (), allow_version_mismatch: bool = False,
                ruleset: Any = None) -> Any:
    """Load the record's ruleset with ``plugins`` and check the record was
    made under it: the same variant version, ruleset spec and house plugins,
    and the same qipai version unless ``allow_version_mismatch``
    (:mod:`qipai.core.stamps`).  A record without stamps (older) is checked
    for its variant version only.  Returns the ruleset.

    Raises:
        VersionMismatch: naming everything that differs.
        UnknownVariant, BadOption: the record's variant or options cannot be loaded.
    """
    from qipai.core.ruleset import load_cached
    from qipai.core.stamps import check, stamp_of

    if ruleset is None:
        ruleset = load_cached(record.variant, record.options, plugins=plugins)
    recorded = {"qipai_version": record.qipai_version, "version": record.version,
                "spec": record.spec, "plugins": record.plugins}
    check("the record", recorded, stamp_of(ruleset), allow_version_mismatch)
    return ruleset


class Step(NamedTuple):
    """One step of playing a hand again (:func:`replay_steps`,
    :func:`apply_steps`).

    Attributes:
        table: the table after the step — the same live table at every
            step of one replay, so read it before asking for the next.
        index: the action's index in the actions replayed; -1 for the
            table as dealt.
        action: the action applied (the table's listed instance, as
            :meth:`Table.apply <qipai.core.table.Table.apply>` records
            it); None for the table as dealt.
        first_event: the index of the first event the action caused in
            ``table.events`` (it caused ``table.events[first_event:]``).
    """

    table: Any
    index: int
    action: Action | None
    first_event: int


def replay_steps(record: Record, plugins: Any = (), allow_version_mismatch: bool = False,
                 ruleset: Any = None) -> Iterator[Step]:
    """The steps of playing the record's actions again on a fresh table:
    first the table as dealt (index -1), then the table after each action
    (:func:`apply_steps`).  Errors come as the steps are asked for.

    ``plugins``: the house-rule plugins the record was played with (they
    must be the ones its stamps name).  ``allow_version_mismatch``: replay a
    record made under another qipai version (the variant version, ruleset
    and plugins must still match).  ``ruleset``: replay on this loaded
    ruleset instead of loading the record's variant and options by name (a
    variant given as a plugin object has no registry name); its stamps are
    checked the same way.

    Raises:
        VersionMismatch: made under another qipai version (unless allowed),
            variant version, ruleset or house plugins (:func:`stamp_check`).
        BadRecord: the variant or options are unknown, or the deal is impossible.
        ReplayDiverged: an action is refused on replay.
    """
    table = _dealt(record, plugins, allow_version_mismatch, ruleset)
    yield Step(table, -1, None, 0)
    yield from apply_steps(table, record.actions)


def apply_steps(table: Any, actions: Iterable[Action]) -> Iterator[Step]:
    """Apply ``actions`` to ``table`` in order, a :class:`Step` after each:
    the one loop that plays a hand again, for a record (:func:`replay_steps`)
    as for a host rebuilding a hand from its stored deal and actions.

    Raises:
        ReplayDiverged: an action is refused (named by its index and JSON,
            with the table's reason; the table's error is its ``refused``);
            the steps before it were given.
    """
    for i, action in enumerate(actions):
        first = len(table.events)
        try:
            table.apply(action)
        except QipaiError as exc:
            diverged = ReplayDiverged(f"action {i} ({msgspec.json.encode(action).decode()}) "
                                      f"is refused on replay: {exc}")
            diverged.refused = exc
            raise diverged from None
        yield Step(table, i, table.actions[-1], first)


def replay(record: Record, plugins: Any = (), allow_version_mismatch: bool = False,
           ruleset: Any = None) -> Any:
    """Play the record's actions again on a fresh table; return the table
    (the last of :func:`replay_steps`, whose arguments and errors these are).
    """
    table = None
    for step in replay_steps(record, plugins, allow_version_mismatch, ruleset):
        table = step.table
    return table


def _dealt(record: Record, plugins: Any, allow_version_mismatch: bool, ruleset: Any) -> Any:
    """The record's table as dealt, its ruleset's stamps checked (see
    :func:`replay_steps`)."""
    from qipai.core.errors import VersionMismatch
    from qipai.core.ruleset import load_cached
    from qipai.core.table import Table

    try:
        if ruleset is None:
            ruleset = load_cached(record.variant, record.options, plugins=plugins)
        stamp_check(record, allow_version_mismatch=allow_version_mismatch, ruleset=ruleset)
    except VersionMismatch:
        raise
    except QipaiError as exc:
        raise BadRecord(f"record cannot be set up: {exc}") from None
    try:
        table = Table(ruleset, deal=record.deal, seed=record.seed, relations=record.relations,
                      partial=record.partial,
                      ask_all=record.ask_all)
        # the table keeps the record's seed and what dealt the recorded hand
        # (not the replay), so its record is the record
        table.set_origin(record.seed, record.rng)
    except QipaiError as exc:
        raise BadRecord(f"record cannot be set up: {exc}") from None
    return table


def seed_problem(record: Record, ruleset: Any) -> str | None:
    """None if ``record`` carries no seed or its seed deals its deal (the
    same shuffle for the record's dealer), else a one-line description.

    A seed written beside a deal it did not make (a stacked deal) would
    otherwise replay as identical: the deal is replayed as recorded.
    ``ruleset``: the record's loaded ruleset.
    """
    if record.seed is None:
        return None
    from qipai.core.table import Table

    try:
        derived = Table(ruleset, seed=record.seed, dealer=record.deal.dealer).state.deal
    except QipaiError as exc:
        return f"seed {record.seed} deals no deal: {exc}"
    if derived != record.deal:
        return f"the deal is not the one seed {record.seed} deals"
    return None


def replay_check(record: Record, plugins: Any = (),
                 allow_version_mismatch: bool = False, ruleset: Any = None) -> str | None:
    """Replay ``record``; None if events and result are identical (and a
    seed it carries deals its deal, :func:`seed_problem`), else a one-line
    description of the first difference.  ``ruleset``: as :func:`replay`.

    Raises:
        BadRecord, VersionMismatch: see :func:`replay`.
    """
    table = replay(record, plugins=plugins, allow_version_mismatch=allow_version_mismatch,
                   ruleset=ruleset)
    problem = seed_problem(record, table.ruleset)
    if problem is not None:
        return problem
    got = table.state.events
    result = table.state.result
    if record.format < 2:  # format 1: payments had no breakdown; compare without it
        got = [without_why(e) for e in got]
        result = without_why(result)
    for i, (a, b) in enumerate(zip(record.events, got)):
        if a != b:
            return f"event {i} differs{first_difference(a, b)}"
    if len(got) != len(record.events):
        return f"recorded {len(record.events)} events, replay gave {len(got)}"
    if result != record.result:
        return f"result differs{first_difference(record.result, result)}"
    return None


def first_difference(recorded: Any, replayed: Any, limit: int = 200) -> str:
    """Where two values (Structs, lists, dicts, scalars) first differ, as
    text: ``" at payments[3].why[0].value: recorded 9, replayed 7"`` (each
    value as JSON, cut to ``limit`` characters); ``""`` when they are equal."""

    def walk(a: Any, b: Any, path: str) -> tuple[str, Any, Any] | None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in list(a) + [k for k in b if k not in a]:
                if a.get(key, _MISSING) != b.get(key, _MISSING):
                    return walk(a.get(key, _MISSING), b.get(key, _MISSING),
                                f"{path}.{key}" if path else str(key))
            return None
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    return walk(x, y, f"{path}[{i}]")
            if len(a) != len(b):
                return (f"{path} length" if path else "length", len(a), len(b))
            return None
        return None if a == b else (path, a, b)

    def show(v: Any) -> str:
        text = "absent" if v is _MISSING else msgspec.json.encode(v).decode()
        return text if len(text) <= limit else text[:limit] + "…"

    found = walk(msgspec.to_builtins(recorded), msgspec.to_builtins(replayed), "")
    if found is None:
        return ""
    path, a, b = found
    return f"{' at ' + path if path else ''}: recorded {show(a)}, replayed {show(b)}"


_MISSING = object()


def without_why(obj: Any) -> Any:
    """``obj`` (an event, a :class:`~qipai.core.model.Result` or None) with
    every payment's ``why`` emptied, as a format-1 record holds it."""
    from qipai.core.model import Paid

    def bare(ps: Any) -> tuple[Payment, ...]:
        return tuple(msgspec.structs.replace(p, why=()) for p in ps)

    if isinstance(obj, Paid):
        return Paid(payments=bare(obj.payments))
    if isinstance(obj, Result):
        return msgspec.structs.replace(obj, payments=bare(obj.payments),
                                       instant=bare(obj.instant))
    return obj


#: A Sphinx cross-reference in a docstring (``:class:`Term```, ``:func:`~x.y```).
_ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")


def plain_schema(doc: Any) -> Any:
    """``doc``, a JSON Schema made by msgspec from our structs, with each
    ``description`` (a docstring) read as plain text: a Sphinx
    cross-reference becomes its target (``:class:`Term``` → ```Term```)
    and a double-backquoted literal single-backquoted — what ``qipai
    schema`` prints and the docs show.  Returns a new dict; ``doc`` is not
    changed."""
    if isinstance(doc, dict):
        return {k: (_ROLE.sub(r"`\1`", v).replace("``", "`")
                    if k == "description" and isinstance(v, str) else plain_schema(v))
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [plain_schema(v) for v in doc]
    return doc


def record_schema() -> dict[str, Any]:
    """The JSON Schema of a game record (:class:`Record`, the current
    format), descriptions in plain text (:func:`plain_schema`)."""
    return plain_schema(msgspec.json.schema(Record))
