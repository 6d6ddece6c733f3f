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

#: The largest record body ``POST /replay`` reads (bytes).  A hosted hand's
#: record is a few KiB (a long zipai hand with breakdowns about 20 KiB).
MAX_REPLAY_BYTES = 1024 * 1024


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
    st = table.state
    w = st.window
    return ReplayStep(
        index=index, first_action=first_action, actions=tuple(actions),
        first_event=first_event, events=tuple(st.events[first_event:]),
        turn=st.turn, window=(w.card, w.owner, w.source) if w is not None else None,
        stock=len(st.wall),
        seats=tuple(ReplaySeat(hand=tuple(s.hand), melds=tuple(s.melds),
                               discards=tuple(s.discards)) for s in st.seats),
        instant=tuple(st.instant))


def replay_steps(data: bytes | str | dict[str, Any], plugins: Any = (), table: str | None = None,
                 hand: int | None = None) -> Replayed:
    """Replay a finished record and answer the table after every step.

    Args:
        data: the record (JSON text/bytes or a decoded dict; a ``GET
            /tables/{id}/records`` answer or ``qipai play --json`` output
            gives its first hand, as ``qipai replay`` reads it).
        plugins: the house-rule plugins the server runs (the record's stamps
            must name them).
        table, hand: where it is stored, echoed in the answer.

    Raises:
        BadRecord: not a record (malformed, too large or too deep), or its
            ruleset cannot be set up.
        UnfinishedRecord: the record has no result.
        VersionMismatch: made under another qipai or variant version, ruleset
            or plugins (:func:`qipai.core.records.stamp_check`).
        ReplayDiverged: an action is refused on replay, or the replay's
            events or result differ from the record's.
    """
    from qipai.core.records import decode_record, replay, replay_check

    if isinstance(data, (bytes, str)) and len(data) > MAX_REPLAY_BYTES:
        raise BadRecord(f"a record to replay is at most {MAX_REPLAY_BYTES} bytes; "
                        f"this is {len(data)}")
    record = decode_record(data)
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
    seen = len(t.state.events)
    for i, action in enumerate(record.actions):
        try:
            t.apply(action)
        except QipaiError as exc:  # pragma: no cover - replay_check replayed it already
            raise ReplayDiverged(f"action {i} is refused on replay: {exc}") from None
        pending.append(action)
        if len(t.state.events) > seen or i == len(record.actions) - 1:
            steps.append(_step(t, len(steps), first_action, pending, seen))
            seen = len(t.state.events)
            pending, first_action = [], i + 1
    rs = t.ruleset
    return Replayed(variant=record.variant, spec=rs.spec, players=rs.manifest.players,
                    dealer=record.deal.dealer, table=table, hand=hand, steps=tuple(steps),
                    result=record.result)


__all__ = ["replay_steps", "Replayed", "ReplayStep", "ReplaySeat", "UnfinishedRecord",
           "MAX_REPLAY_BYTES"]
