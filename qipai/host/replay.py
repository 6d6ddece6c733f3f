"""A finished hand's record, replayed step by step for the browser page.

The page cannot run the rules, so the server replays a record and answers
every step's whole table — each seat's concealed hand, melds (face-down
cards included: a replay is after the fact), discards, the stock size —
with the actions and events that led to it.  Only a *finished* record is
replayed (its ``result`` set): an unfinished hand's hidden cards are never
served.  Routes (docs/reference/protocol.md): ``GET
/tables/{id}/records/{hand}/replay`` (a stored finished hand) and ``POST
/replay`` (a record the page was given, e.g. a file dropped on it).

A step ends with an action that produced events; actions that produced
none (passes that did not close a claim window) are carried into the next
step's ``actions``, so stepping never shows a table that did not change.
"""

from __future__ import annotations

from typing import Any

import msgspec

from qipai.core.errors import BadRecord, QipaiError, ReplayDiverged
from qipai.core.model import Action, Event, Meld, Payment, Result

#: The largest record body ``POST /replay`` reads (bytes; ``qipai serve
#: --max-replay-bytes``).  A hand's record is a few KiB: over 300 seeded
#: hands of each variant played by random bots (the longest hands) the
#: largest compact record was 19 KiB (广西麻将; 桂林麻将 18 KiB, 桂林字牌 8 KiB),
#: 45 KiB as a ``qipai play --json`` hand indented by 2 — so 256 KiB leaves
#: room, and bounds the CPU a posted body costs.
MAX_REPLAY_BYTES = 256 * 1024

#: The longest string of a record's that an error may name in full
#: (characters): a longer one is shown cut, with its length.
ECHO_CHARS = 60
#: The longest error message a replay answers (characters).
MAX_MESSAGE_CHARS = 600
#: The longest value each named record field may hold (characters) — far
#: above any real one (a variant name is under 20, a version under 30, a
#: spec with every option under 400, a plugin's dotted name under 100).
FIELD_CHARS = {"variant": 64, "version": 64, "qipai_version": 64, "spec": 2048}
PLUGIN_NAME_CHARS = 256
OPTION_NAME_CHARS = 64


def shown(value: str, limit: int = ECHO_CHARS) -> str:
    """``value`` as an error may echo it: quoted, control, format and other
    unprintable characters escaped (``repr``), cut to ``limit`` characters
    with its full length named — a hostile record's megabyte or terminal
    escape never reaches a client's screen or a log as it is."""
    cut = value[:limit]
    text = repr(cut) if cut.isprintable() else ascii(cut)
    return text if len(value) <= limit else f"{text[:-1]}…{text[-1]} ({len(value):,} characters)"


def _clip(message: str) -> str:
    """An error message made safe to answer: unprintable characters
    escaped, at most :data:`MAX_MESSAGE_CHARS` characters."""
    if not message.isprintable():
        message = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + f"… (cut; {len(message):,} characters)"
    return message


class BadRecordField(BadRecord):
    """A record's string field (``variant``, ``version``, ``qipai_version``,
    ``spec``, a plugin's ``name``, an option's name) is too long for what it
    names or holds unprintable characters; the message names the field and
    shows its value cut (:func:`shown`)."""


def check_fields(record: Any) -> None:
    """Refuse a record whose strings could not be real before anything
    echoes them (a ruleset lookup names an unknown variant, a version
    check names both versions).

    Raises:
        BadRecordField: naming the first bad field.
    """
    def bad(field: str, value: Any, limit: int) -> None:
        if not isinstance(value, str):
            return
        if len(value) > limit:
            raise BadRecordField(f"the record's {field} is {len(value):,} characters, at most "
                                 f"{limit}: {shown(value)}")
        if not value.isprintable():
            raise BadRecordField(f"the record's {field} holds unprintable characters: "
                                 f"{shown(value)}")

    for field, limit in FIELD_CHARS.items():
        bad(field, getattr(record, field), limit)
    for i, plugin in enumerate(record.plugins or ()):
        bad(f"plugins[{i}].name", plugin.name, PLUGIN_NAME_CHARS)
        bad(f"plugins[{i}].sha256", plugin.sha256, 64)
    for key in record.options:
        bad("option name", key, OPTION_NAME_CHARS)


class UnfinishedRecord(BadRecord):
    """The record has no result: a hand in progress (or abandoned) is not
    replayed, so its hidden cards are never shown."""


class ReplaySeat(msgspec.Struct, kw_only=True):
    """One seat at one step: its concealed hand (sorted kinds), melds (every
    card, ``hidden`` telling how many lay face down), discards in order."""

    hand: tuple[int, ...]
    melds: tuple[Meld, ...]
    discards: tuple[int, ...]


class ReplayStep(msgspec.Struct, kw_only=True):
    """The table after step ``index``.

    Attributes:
        index: 0 (the deal, and whatever the variant does before the first
            decision), 1, ….
        actions: the actions of this step (empty for step 0), in order;
            ``first_action`` is the index of ``actions[0]`` in the record.
        events: the events they produced; ``first_event`` their index in
            the record's ``events``.
        turn: the seat to act (None in a claim window or at the end).
        window: the card in play ``(card, owner, source)``, or None.
        stock: cards left to draw.  seats: each seat's cards.
        instant: instant payments so far (kongs, 追牌 …).
    """

    index: int
    first_action: int
    actions: tuple[Action, ...]
    first_event: int
    events: tuple[Event, ...]
    turn: int | None
    window: tuple[int, int, str] | None
    stock: int
    seats: tuple[ReplaySeat, ...]
    instant: tuple[Payment, ...]


class Replayed(msgspec.Struct, kw_only=True):
    """``POST /replay`` and ``GET /tables/{id}/records/{hand}/replay``.

    Attributes:
        variant, spec: the ruleset (``spec`` as ``name(key=value)``).
        players: seats.  dealer: the hand's dealer.
        table, hand: where the record is stored (None for a posted record).
        steps: the table after each step (``steps[0]`` the deal).
        result: the hand's result (the record's; the replay reproduced it).
    """

    variant: str
    spec: str
    players: int
    dealer: int
    table: str | None = None
    hand: int | None = None
    steps: tuple[ReplayStep, ...]
    result: Result


def _step(table: Any, index: int, first_action: int, actions: list[Action],
          first_event: int) -> ReplayStep:
    w = table.window
    return ReplayStep(
        index=index, first_action=first_action, actions=tuple(actions),
        first_event=first_event, events=tuple(table.events[first_event:]),
        turn=table.turn, window=(w.card, w.owner, w.source) if w is not None else None,
        stock=len(table.wall),
        seats=tuple(ReplaySeat(hand=tuple(s.hand), melds=tuple(s.melds),
                               discards=tuple(s.discards)) for s in table.seats),
        instant=tuple(table.instant))


def replay_steps(data: bytes | str | dict[str, Any], plugins: Any = (), table: str | None = None,
                 hand: int | None = None, max_bytes: int = MAX_REPLAY_BYTES) -> Replayed:
    """Replay a finished record and answer the table after every step.

    Args:
        data: the record (JSON text/bytes or a decoded dict; a ``GET
            /tables/{id}/records`` answer or ``qipai play --json`` output
            gives its first hand, as ``qipai replay`` reads it).
        plugins: the house-rule plugins the server runs (the record's stamps
            must name them).
        table, hand: where it is stored, echoed in the answer.
        max_bytes: the largest record text read (bytes).

    Every error's message is safe to show (unprintable
    characters escaped, at most :data:`MAX_MESSAGE_CHARS` characters); the
    answer's ``variant`` is the ruleset's registered name, not the
    record's text.

    Raises:
        BadRecord: not a record (malformed, too large or too deep), or its
            ruleset cannot be set up.
        BadRecordField: a string field too long or unprintable
            (:func:`check_fields`).
        UnfinishedRecord: the record has no result.
        VersionMismatch: made under another qipai or variant version, ruleset
            or plugins (:func:`qipai.core.records.stamp_check`).
        ReplayDiverged: an action is refused on replay, or the replay's
            events or result differ from the record's.
    """
    try:
        return _replay_steps(data, plugins, table, hand, max_bytes)
    except QipaiError as exc:
        message = str(exc)
        safe = _clip(message)
        if safe == message:
            raise
        try:
            clipped = type(exc)(safe)
        except Exception:  # noqa: BLE001 - an error class of another shape
            clipped = BadRecord(safe)
        raise clipped from None


def _replay_steps(data: bytes | str | dict[str, Any], plugins: Any, table: str | None,
                  hand: int | None, max_bytes: int) -> Replayed:
    from qipai.core.records import apply_steps, decode_record, replay, replay_check

    if isinstance(data, (bytes, str)) and len(data) > max_bytes:
        raise BadRecord(f"a record to replay is at most {max_bytes} bytes; "
                        f"this is {len(data)}")
    record = decode_record(data)
    check_fields(record)
    if record.result is None:
        raise UnfinishedRecord("the record has no result: only a finished hand is replayed")
    problem = replay_check(record, plugins=plugins)
    if problem is not None:
        raise ReplayDiverged(f"the record does not replay as recorded: {problem}")
    # a fresh table with no action (replay of a record without actions)
    t = replay(msgspec.structs.replace(record, actions=[]), plugins=plugins)
    steps = [_step(t, 0, 0, [], 0)]
    pending: list[Action] = []
    first_action = 0
    seen = len(t.events)
    last = len(record.actions) - 1
    # (replay_check replayed the record already: apply_steps refuses none)
    for step in apply_steps(t, record.actions):
        i = step.index
        pending.append(record.actions[i])
        if len(t.events) > seen or i == last:
            steps.append(_step(t, len(steps), first_action, pending, seen))
            seen = len(t.events)
            pending, first_action = [], i + 1
    rs = t.ruleset
    return Replayed(variant=rs.name, spec=rs.spec, players=rs.manifest.players,
                    dealer=record.deal.dealer, table=table, hand=hand, steps=tuple(steps),
                    result=record.result)


__all__ = ["replay_steps", "Replayed", "ReplayStep", "ReplaySeat", "UnfinishedRecord",
           "BadRecordField", "check_fields", "shown", "MAX_REPLAY_BYTES"]
