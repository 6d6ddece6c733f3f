"""What a seat may know of the table: THE seat view and spectator view.

Every view of a table is built here, and every redaction with it: another
seat's concealed cards, the cards of its face-down melds and its unshown
draws never leave in a view or an event stream (docs: concepts/views).
:func:`seat_view` is :meth:`Table.view <qipai.core.table.Table.view>`;
:func:`public_view` is what a spectator sees; :func:`seen_events` is the
event stream as one of them sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from qipai.core.errors import IllegalAction
from qipai.core.model import Action, Drew, Event, Meld, Melded, Payment, Result

if TYPE_CHECKING:  # pragma: no cover
    from qipai.core.table import Table

#: The viewer of a spectator's view (:func:`public_view`): no seat.
SPECTATOR = -1


class MeldView(msgspec.Struct, frozen=True):
    """A meld as one seat sees it: cards it may not see are None."""

    kind: str
    cards: tuple[int | None, ...]
    from_seat: int | None = None


class SeatView(msgspec.Struct, frozen=True):
    """What one seat may know of the table.

    Attributes:
        seat: the viewer.  dealer, turn: seats.
        hand: the viewer's concealed cards (sorted kinds).
        hand_sizes: concealed cards by seat.
        melds: by seat, each meld with hidden cards as None.
        discards: by seat.
        stock: cards left to draw.
        window: the card in play, its owner and source, or None.
        legal: the viewer's legal actions now.
        instant: instant payments made so far.
        events: the event stream as the viewer sees it.
        result: the result once the hand is over.
    """

    seat: int
    dealer: int
    turn: int | None
    hand: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    melds: tuple[tuple[MeldView, ...], ...]
    discards: tuple[tuple[int, ...], ...]
    stock: int
    window: tuple[int, int, str] | None
    legal: tuple[Action, ...]
    instant: tuple[Payment, ...]
    events: tuple[Event, ...]
    result: Result | None


def meld_view(meld: Meld, visible: bool, face_down_kinds: dict[str, str] | None = None) -> MeldView:
    """The meld with its first ``meld.hidden`` cards hidden (None) unless
    ``visible``; a meld wholly face down shows the kind ``face_down_kinds``
    gives for its own (``Manifest.face_down_kinds``), if any."""
    if visible or not meld.hidden:
        return MeldView(meld.kind, tuple(meld.cards), meld.from_seat)
    cards = tuple(None if i < meld.hidden else c for i, c in enumerate(meld.cards))
    return MeldView(_shown_kind(meld, face_down_kinds), cards, meld.from_seat)


def _shown_kind(meld: Meld, face_down_kinds: dict[str, str] | None) -> str:
    if face_down_kinds and meld.hidden >= len(meld.cards):
        return face_down_kinds.get(meld.kind, meld.kind)
    return meld.kind


def redact(event: Event, viewer: int, face_down_kinds: dict[str, str] | None = None) -> Event:
    """``event`` as ``viewer`` may see it: another's unshown draw has card
    None; another's face-down meld cards are None (the spelling views use:
    docs/concepts/views), and a wholly face-down meld shows the kind
    ``face_down_kinds`` gives (see :func:`meld_view`)."""
    if isinstance(event, Drew) and event.seat != viewer and not event.shown:
        return msgspec.structs.replace(event, card=None)
    if isinstance(event, Melded) and event.seat != viewer and event.meld.hidden:
        m = event.meld
        cards = tuple(None if i < m.hidden else c for i, c in enumerate(m.cards))
        claimed = None if m.claimed is not None and m.hidden >= len(m.cards) else m.claimed
        return msgspec.structs.replace(event, meld=msgspec.structs.replace(
            m, kind=_shown_kind(m, face_down_kinds), cards=cards, claimed=claimed))
    return event


def seat_view(table: Table, seat: int, *, events: bool = True,
              instant: bool = True) -> SeatView:
    """What ``seat`` may see: its own hand, others' sizes, visible melds,
    discards, the stock size, its legal actions and its event stream.

    ``events=False`` leaves the event stream out (``events`` is ``()``):
    the state alone, which is what a bot decides on
    (:mod:`qipai.bots`), without redacting the whole stream each turn.
    ``instant=False`` leaves the instant payments out too (``instant`` is
    ``()``): a view whose cost does not grow with the hand (an
    environment's observation).

    Raises:
        IllegalAction: ``seat`` is not a seat of the table.
    """
    if type(seat) is not int or not 0 <= seat < table.n:
        raise IllegalAction(f"seat {seat!r} is not a seat at this table (0..{table.n - 1})")
    return _view(table, seat, events, instant)


def public_view(table: Table) -> SeatView:
    """What a spectator may see (seat :data:`SPECTATOR`): no concealed
    hand, no legal action, every seat's hidden meld cards and unshown draws
    redacted."""
    return _view(table, SPECTATOR, True, True)


def seen_events(table: Table, viewer: int, first: int = 0) -> tuple[Event, ...]:
    """The events of ``table`` from index ``first`` on as ``viewer`` (a
    seat, or :data:`SPECTATOR`) may see them (:func:`redact`): a view's
    event stream, or what a host sends a connection as the hand goes on."""
    fdk = table.face_down_kinds
    events = table.state.events
    return tuple([redact(e, viewer, fdk) for e in (events[first:] if first else events)])


def _view(table: Table, seat: int, events: bool, instant: bool) -> SeatView:
    st = table.state
    w = st.window
    fdk = table.face_down_kinds
    seats = st.seats
    return SeatView(
        seat=seat,
        dealer=st.dealer,
        turn=st.turn,
        hand=tuple(sorted(seats[seat].hand)) if seat != SPECTATOR else (),
        hand_sizes=tuple([len(s.hand) for s in seats]),
        melds=tuple([tuple([meld_view(m, i == seat, fdk) for m in s.melds]) if s.melds else ()
                     for i, s in enumerate(seats)]),
        discards=tuple([tuple(s.discards) for s in seats]),
        stock=len(st.wall),
        window=(w.card, w.owner, w.source) if w is not None else None,
        legal=tuple(st.pending.get(seat, ())),
        instant=tuple(st.instant) if instant else (),
        events=seen_events(table, seat) if events else (),
        result=st.result,
    )
