"""The messages of the game server's WebSocket protocol (and its HTTP bodies).

Every message is a msgspec Struct of a tagged union (field ``type``), sent
as one JSON text frame; the server sends what one change causes for a
connection as one frame: the message itself, or a :class:`Batch` of them.  A client sends :data:`ClientMessage`; the server
sends :data:`ServerMessage`.  ``qipai schema --protocol`` prints their JSON
Schema, with the per-seat view's (:class:`~qipai.core.views.SeatView`).
The flow, the errors and the guarantees are described in
docs/reference/protocol.md.

This module needs only msgspec and the core: a client can import it
without the server's dependencies.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec

from qipai.core.model import Action, Event, Meld, Result, Won
from qipai.core.money import Money, Rake
from qipai.core.records import plain_schema
from qipai.core.views import SeatView

#: The largest client message the server reads (bytes of one frame);
#: a larger one is answered ``TooLarge`` and dropped.
MAX_MESSAGE_BYTES = 4096

#: Every error code a client may receive (``Error.code``).
ErrorCode = Literal[
    "BadMessage",     # not JSON, not an object, an unknown "type", a malformed field
    "TooLarge",       # the frame is larger than MAX_MESSAGE_BYTES
    "Throttled",      # more messages than the rate allows: dropped
    "BadToken",       # the token is no seat's (nor the spectator's) of this table, or a
                      # signed seat token (JWT) that does not verify
    "BadKey",         # a signed seat token names no key of the server's (kid), or one
                      # that cannot sign (revoked, or no signing secret)
    "ExpiredToken",   # a signed seat token past its exp
    "WrongTable",     # a signed seat token of another table, or of a table another key made
    "WrongPlayer",    # a signed seat token naming another player than the seat's
    "TooManyConnections",  # the seat (or the spectators) has as many connections open
                           # as a table allows (at connect: closed with code 4429)
    "UnknownTable",   # no open table of that id
    "NotRestored",    # the table is stored under another qipai/variant version or
                      # plugins: this server does not play it (at connect)
    "Spectator",      # a spectator sent an action
    "WrongSeat",      # the action names another seat than the connection's
    "NotYourTurn",    # the seat has nothing to decide now
    "StaleSeq",       # seq is not the one of the seat's current decision
    "IllegalAction",  # the seat decides, but this action is not among its legal ones
    "HandOver",       # the hand the action was meant for is over
    "TableClosed",    # the host closed the table
    "Unavailable",    # the database did not take the action: not applied, try again
    "LockLost",       # the server lost its database lock: not applied (or, its
                      # commit cut off, not acknowledged: the message says which),
                      # nothing is written any more (not worth retrying until restarted)
    "InternalError",  # the server or a plugin failed on the action: not applied; the
                      # table takes none until the server is restarted
    "NotNow",         # a ready, dissolve or tuoguan message out of place: no ready
                      # step, no vote, 托管 already as asked, a bot seat (nothing changed)
    "AlreadyDone",    # the seat already answered this ready step or this vote, or
                      # sent its seat commitment / value already
    "BadValue",       # a seat commitment or value that is not 64 hex digits (32 bytes)
    "BadReveal",      # a seat value whose SHA-256 is not the seat's commitment
    "Moving",         # (a cluster) the table is being handed to another node: not
                      # applied; a moved message follows — act again there
]


# ----------------------------------------------------------------- client → server


class Act(msgspec.Struct, tag="act", forbid_unknown_fields=True):
    """Play ``action`` (one of the seat's ``Decide.legal``) for decision
    ``seq`` of hand ``hand``.

    ``hand`` and ``seq`` are those of the :class:`Decide` being answered
    (an action for a hand that is over is refused ``HandOver``): an action
    sent twice, or for a decision already taken by timeout, is refused
    ``StaleSeq`` and never applied twice.  Answered by :class:`Ack` (after
    the action is committed to the database) or :class:`Error`.
    """

    hand: int
    seq: int
    action: Action


class Resync(msgspec.Struct, tag="resync", forbid_unknown_fields=True):
    """Ask for the full current view again (answered by a :class:`Welcome`)."""


class Ping(msgspec.Struct, tag="ping", forbid_unknown_fields=True):
    """Keep-alive; answered by :class:`Pong`."""


class Ready(msgspec.Struct, tag="ready", forbid_unknown_fields=True):
    """准备/继续: the seat has read hand ``hand - 1``'s end and is ready for
    hand ``hand`` (the one the :class:`ReadyStep` names).  Refused
    ``NotNow`` outside a ready step (or for another hand), ``AlreadyDone``
    when sent twice, ``Spectator`` from a spectator."""

    hand: int


class Dissolve(msgspec.Struct, tag="dissolve", forbid_unknown_fields=True):
    """解散房间 (a room only): propose (no vote under way, ``agree`` true)
    or answer the vote under way (``agree`` true or false).  Every seated
    human must agree before the vote's deadline (bots agree); a refusal or
    the deadline ends it.  Refused ``Spectator``, ``NotNow`` (an open-ended
    table, or a refusal with no vote under way), ``AlreadyDone`` (the seat
    answered already)."""

    agree: bool = True


class Tuoguan(msgspec.Struct, tag="tuoguan", forbid_unknown_fields=True):
    """托管: ``on`` true lets the table's bot play the seat until the player
    acts or sends ``on`` false.  Refused ``Spectator``, ``NotNow`` when the
    seat is already as asked."""

    on: bool


class SeatCommit(msgspec.Struct, tag="seat_commit", forbid_unknown_fields=True):
    """A joint deal (:mod:`qipai.core.joint`): the seat's commitment for hand
    ``hand``, ``commitment`` = hex SHA-256 of its secret 32-byte value (64
    hex digits), sent while the :class:`SeatValues` step asks for
    commitments.  Refused ``BadValue`` (not 64 hex digits), ``AlreadyDone``
    (sent before), ``NotNow`` (no step, another hand, or the reveals have
    begun); nothing changed."""

    hand: int
    commitment: str


class SeatReveal(msgspec.Struct, tag="seat_reveal", forbid_unknown_fields=True):
    """A joint deal: the seat's value for hand ``hand`` (64 hex digits), sent
    once the :class:`SeatValues` step asks for reveals.  Refused
    ``BadValue`` (not 64 hex digits), ``BadReveal`` (its SHA-256 is not the
    seat's commitment: the seat counts as withheld unless it sends the
    right value before the deadline), ``AlreadyDone``, ``NotNow`` (no step,
    another hand, the commitments still asked, no commitment of the seat's)."""

    hand: int
    value: str


ClientMessage = Union[Act, Resync, Ping, Ready, Dissolve, Tuoguan, SeatCommit, SeatReveal]


# ----------------------------------------------------------------- server → client


class ShownHand(msgspec.Struct, kw_only=True):
    """摊牌: one seat's hand as the hand ended — its concealed cards
    (sorted kinds) and its melds, face-down cards shown."""

    seat: int
    hand: tuple[int, ...]
    melds: tuple[Meld, ...]


class Showdown(msgspec.Struct, kw_only=True):
    """Every seat's hand at the end of a hand (:class:`ShownHand`, by seat)
    and its wins (the ``won`` events: winner, how, the winning card and
    whom it came from).  Sent only once the hand is over."""

    hands: tuple[ShownHand, ...]
    wins: tuple[Won, ...]


class LastResult(msgspec.Struct, kw_only=True):
    """The last finished hand: its index, result and 摊牌."""

    hand: int
    result: Result | None
    showdown: Showdown
    #: the hand in money (a table with a stake; :class:`~qipai.core.money.Money`)
    money: Money | None = None


class Room(msgspec.Struct, kw_only=True):
    """A room of ``hands`` hands (局数; None: open-ended, played until the
    host closes it): ``hand`` is the current one counted from 1 (第 k/N 局),
    ``done`` the finished ones."""

    hands: int | None
    hand: int
    done: int
    #: a ready step (:class:`ReadyStep`) begins each hand after the first
    ready: bool = False


class ReadyStep(msgspec.Struct, tag="ready_step", kw_only=True):
    """准备/继续 (a table made with a ready step, :attr:`Room.ready`: every
    room unless made with ``ready: false``): hand ``hand`` is dealt (its ``welcome`` came)
    and waits for the seats ``waiting`` (human seats online and not in 托管)
    to send :class:`Ready` before ``deadline`` (Unix time); ``ready`` are
    those that did.  No :class:`Decide` is sent, no bot moves and no clock
    runs meanwhile.  Sent when the step begins and at each change;
    ``waiting`` empty: it is over (the hand's decisions follow)."""

    hand: int
    deadline: float
    ready: tuple[int, ...]
    waiting: tuple[int, ...]


class Vote(msgspec.Struct, tag="vote", kw_only=True):
    """解散房间: a dissolve vote: ``by`` proposed it, ``agreed`` agree,
    ``waiting`` have not answered, before ``deadline``.  ``outcome``:
    None while under way, then ``"passed"`` (the room ends: a :class:`Tally`
    follows), ``"refused"`` (``refused_by`` refused) or ``"expired"``."""

    by: int
    deadline: float
    agreed: tuple[int, ...]
    waiting: tuple[int, ...]
    outcome: Literal["passed", "refused", "expired"] | None = None
    refused_by: int | None = None


class Presence(msgspec.Struct, tag="presence", kw_only=True):
    """Which seats have a connection (``online``) and which are played by the
    table's bot for their player (``tuoguan``, 托管): sent to everyone at the
    table when either changes.  Bot seats are never listed."""

    online: tuple[int, ...]
    tuoguan: tuple[int, ...]


class SeatTally(msgspec.Struct, kw_only=True):
    """One seat's 大结算: ``total`` net, hands ``wins``, ``dianpao`` (点炮:
    times it dealt the winning discard in), ``zimo`` (自摸 wins) and
    ``best`` (its biggest gain in one hand, 0 if none)."""

    seat: int
    total: int
    wins: int
    dianpao: int
    zimo: int
    best: int
    #: ``total`` in money after the rake (minor units; a table with a stake, else None)
    money: int | None = None


class Tally(msgspec.Struct, tag="tally", kw_only=True):
    """大结算: the room is over — ``ended`` ``"finished"`` (its last hand
    played), ``"dissolved"`` (a vote passed) or ``"closed"`` (the host) —
    after ``hands_done`` hands; one :class:`SeatTally` per seat.  A
    :class:`Closed` follows and the connection is closed."""

    ended: Literal["finished", "dissolved", "closed"]
    hands_done: int
    seats: tuple[SeatTally, ...]
    #: a table with a stake: minor units per 子, and the house's take over
    #: the room (its rake lines' sum); None otherwise
    stake: int | None = None
    house: int | None = None


class SeatValues(msgspec.Struct, tag="seat_values", kw_only=True):
    """A joint deal's step before hand ``hand`` (:mod:`qipai.core.joint`),
    sent to everyone at the table when it begins and as it changes, and
    instead of a ``welcome`` while it is under way (the welcome comes when
    the hand is dealt).  ``phase``: ``"commit"`` (send
    :class:`SeatCommit`) or ``"reveal"`` (send :class:`SeatReveal`), until
    ``deadline`` (Unix time; None: the commit phase has no clock yet — no
    human seat is online, or before the table's first hand the players in
    ``unseated`` have not come: it waits for them, and its deadline starts
    when they have); ``server_commitment``: hex SHA-256 of the server's
    secret seed (revealed in the hand's record); ``commitments``: the
    seats' commitments so far (``{"0": hex}``, public: they hide the
    values); ``revealed``: seats whose value is in; ``waiting``: seats the
    step waits for; ``unseated``: (the first hand's commit phase) the human
    seats that have not sat down yet — never connected.  ``seat``: the
    connection's seat (None: a spectator); ``table``: the table id."""

    table: str
    hand: int
    seat: int | None
    phase: Literal["commit", "reveal"]
    deadline: float | None
    server_commitment: str
    commitments: dict[str, str]
    revealed: tuple[int, ...]
    waiting: tuple[int, ...]
    unseated: tuple[int, ...] = ()


class Welcome(msgspec.Struct, tag="welcome", kw_only=True):
    """The full current view: sent on connect, on :class:`Resync`, and at the
    start of every hand.  Afterwards the connection gets only deltas
    (:class:`Events`) until the next hand.

    Attributes:
        table: the table id.  seat: the connection's seat, None for a spectator.
        hand: the hand's index at this table (0, 1, …).
        spec: the ruleset spec (``guilin-mahjong(hubao=False)``).
        players: seats at the table.  bots: the seats the server plays.
        rng: what dealt the hand: ``"os"`` (the OS's CSPRNG),
            ``"seeded"`` (a server started with ``--seed``: tests and demos
            only, the deal is predictable) or ``"joint"`` (seat values on:
            the server seed and the seats' values, docs "A deal nobody can
            choose").  seeded: the server was started with ``--seed``.
        commitment: hex SHA-256 commitment to the hand's deal (the deal and
            salt are revealed in the hand's record; ``qipai verify``).
        totals: running net (子) per seat over the finished hands.
        view: the seat's view (a spectator's: ``seat`` -1, no hand, only
            public information; concealed cards are never in it).
        next_event: the index of the next event of the hand (the first
            :class:`Events` delta starts there).
        names: the named seats' names (``{"0": "阿明"}``, public to everyone
            at the table; a seat absent: nobody named).  player: the
            operator's id of this connection's own player (None: a spectator,
            or a seat nobody named); another seat's player id is never sent.
    """

    table: str
    seat: int | None
    hand: int
    spec: str
    players: int
    bots: tuple[int, ...]
    rng: str | None
    seeded: bool
    commitment: str
    totals: tuple[int, ...]
    view: SeatView
    next_event: int
    names: dict[str, str] = {}
    player: str | None = None
    #: the room: hand k of N (:class:`Room`)
    room: Room | None = None
    #: the last finished hand, with its 摊牌 (None before the first ends)
    last_result: LastResult | None = None
    #: the ready step under way (:class:`ReadyStep`), else None
    ready_step: ReadyStep | None = None
    #: the dissolve vote under way (:class:`Vote`), else None
    vote: Vote | None = None
    #: who is online and who is in 托管 (:class:`Presence`)
    presence: Presence | None = None
    #: the table's stake (minor units per 子) and rake rule; None: no money
    stake: int | None = None
    rake: Rake | None = None
    #: running net in money per seat after the rake (a table with a stake)
    money_totals: tuple[int, ...] | None = None


class Events(msgspec.Struct, tag="events", kw_only=True):
    """New events of ``hand`` as the connection may see them (redacted:
    another seat's unshown draw is ``card: null``), ``first`` being the
    index of ``events[0]`` in the hand's event stream: a client that sees
    a gap sends :class:`Resync`."""

    hand: int
    first: int
    events: tuple[Event, ...]


class Decide(msgspec.Struct, tag="decide", kw_only=True):
    """The seat must decide: answer one of ``legal`` with ``Act(seq=seq)``
    before ``deadline`` (Unix time, seconds) or the server plays the
    default action for it (a claim: pass; a turn: see the protocol page),
    recorded as a timeout.  ``timeout`` is the allowance in seconds."""

    hand: int
    seq: int
    legal: tuple[Action, ...]
    deadline: float
    timeout: float
    seeded: bool


class Ack(msgspec.Struct, tag="ack", kw_only=True):
    """The action of decision ``seq`` is committed and applied."""

    hand: int
    seq: int


class HandEnded(msgspec.Struct, tag="hand_ended", kw_only=True):
    """Hand ``hand`` is over: its result, the running totals, and where its
    record (with the deal and salt revealed) is: ``GET records``."""

    hand: int
    result: Result | None
    totals: tuple[int, ...]
    records: str
    #: 摊牌: every seat's hand as it ended (:class:`Showdown`)
    showdown: Showdown | None = None
    #: the hand in money (a table with a stake: each payment × stake, the
    #: rake lines to the house, net per seat; :class:`~qipai.core.money.Money`)
    money: Money | None = None
    #: running net in money per seat after the rake (a table with a stake)
    money_totals: tuple[int, ...] | None = None


class Closed(msgspec.Struct, tag="closed", kw_only=True):
    """The host closed the table; the connection is closed after this."""

    totals: tuple[int, ...]


class SeatConns(msgspec.Struct, tag="seat_conns", kw_only=True):
    """How many connections the seat has open at the table now, this one
    included (``count`` ≥ 1): sent to each of the seat's connections when one
    of them opens (after its welcome) or closes.  Anyone holding the seat's
    token can open one — and see the seat's hand and act for it — so a
    player who sees more than he opened knows his link is in other hands.
    Never sent to spectators, and never about another seat."""

    count: int


class Pong(msgspec.Struct, tag="pong"):
    """Answer to :class:`Ping`."""


class Error(msgspec.Struct, tag="error", kw_only=True):
    """A refused message: nothing was applied, nothing written; the
    connection and the table go on.  ``seq`` echoes the refused
    :class:`Act`'s, if any."""

    code: ErrorCode
    message: str
    seq: int | None = None


class Moved(msgspec.Struct, tag="moved", kw_only=True):
    """(A cluster, ``qipai serve --cluster``.)  This node does not serve the
    table (any more): another node does.  The connection is closed after
    this (code 4307).  Reconnect with the same path and token to
    ``address`` (``http://host:port`` → ``ws://host:port/tables/{id}/ws``):
    the welcome there gives the hand as it is — every acknowledged action
    is in it; an act not acknowledged was not applied.  ``address`` None: no
    live node serves it yet (its node died and a survivor is taking it
    over): reconnect to the same node in a moment."""

    table: str
    node: str | None
    address: str | None


ServerMessage = Union[Welcome, Events, Decide, Ack, HandEnded, Closed, SeatConns, Pong, Error,
                      ReadyStep, Vote, Presence, Tally, SeatValues, Moved]


class Batch(msgspec.Struct, tag="batch", kw_only=True):
    """Several messages in one frame, to be read in order as if each had
    come in a frame of its own (never nested, never empty).  The server
    sends what one change causes for a connection together — e.g. an
    ``ack``, the ``events`` it caused and the next ``decide``."""

    messages: tuple[ServerMessage, ...]


#: What one server frame holds.
ServerFrame = Union[Welcome, Events, Decide, Ack, HandEnded, Closed, SeatConns, Pong, Error,
                    ReadyStep, Vote, Presence, Tally, SeatValues, Moved, Batch]


def messages(frame: Any) -> list[Any]:
    """The messages of a decoded server frame (a dict, or a Struct), in order:
    a batch's ``messages``, else the frame itself."""
    kind = frame.get("type") if isinstance(frame, dict) else None
    if kind == "batch":
        return list(frame["messages"])
    if isinstance(frame, Batch):
        return list(frame.messages)
    return [frame]


# ----------------------------------------------------------------- HTTP bodies


class Player(msgspec.Struct, forbid_unknown_fields=True):
    """One named player of :class:`CreateTable`: ``seat`` (a human seat),
    ``player`` (the operator's account id: 1-128 characters, no control
    character; private to the operator and that seat) and ``name`` (shown to
    everyone at the table: 1-32 characters, not only spaces, no control
    character)."""

    seat: int
    player: str
    name: str


class BotSeat(msgspec.Struct, forbid_unknown_fields=True):
    """A bot seat of :class:`CreateTable` with its level: ``{"seat": 1,
    "level": "hard"}``; the levels are the server's (``easy``, ``normal``,
    ``hard`` and any the operator adds with ``qipai serve --bot``); a bare
    seat number is ``normal``."""

    seat: int
    level: str = "normal"


class CreateTable(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /tables`` body, a JSON object: the ruleset spec (a registered
    name or its Chinese title, with options), the seats the server's bots
    play and the named players (:class:`Player`; a human seat not named is
    anonymous).  ``{}`` is the defaults (``guilin-mahjong``, every seat
    human, nobody named); an empty body is refused ``BadMessage``."""

    variant: str = "guilin-mahjong"
    #: the bot seats: a seat number (level ``normal``) or a :class:`BotSeat`
    #: with its level, mixed freely: ``[1, {"seat": 2, "level": "hard"}]``
    bots: list[int | BotSeat] = []
    players: list[Player] = []
    #: 局数: a room of this many hands (1-64; outside: ``BadOption``), with a
    #: final :class:`Tally`; None: an open-ended table (played until closed)
    hands: int | None = None
    #: a ready step (准备/继续, :class:`ReadyStep`) between hands: the next
    #: hand waits for every seated human's :class:`Ready` or the deadline.
    #: None: yes for a room (``hands`` given), no for an open-ended table
    #: (its next hand dealt at once).  Not a bool: ``BadMessage``
    ready: bool | None = None
    #: money per 子 in minor units (1 to 1,000,000; e.g. 分): every payment
    #: is also given in money; absent: the server's ``--stake`` (none by
    #: default), null: no money.  Out of bounds or not an int: ``BadStake``
    stake: Any = msgspec.UNSET
    #: ``{"percent": P, "cap": C}``: P (0-100) percent of each winner's
    #: gain of a hand, rounded down, at most C minor units per winner per
    #: hand, to the house; absent: the server's ``--rake-percent/--rake-cap``,
    #: null: none.  Needs a stake; bad: ``BadStake``
    rake: Any = msgspec.UNSET
    #: joint deals (:mod:`qipai.core.joint`): each hand dealt from the
    #: server's seed and every human seat's value; None: the server's
    #: default (``qipai serve --seat-values``)
    seat_values: bool | None = None


class Created(msgspec.Struct, kw_only=True):
    """``POST /tables`` answer: one token per human seat (``{"0": TOKEN}``),
    the spectator's token and link, the admin token that closes the table,
    and the named players (``{"0": {"player": "u-123", "name": "阿明"}}``):
    a named seat's token is bound to its player."""

    id: str
    seats: dict[str, str]
    spectator: str
    spectator_token: str
    admin: str
    ws: str
    players: dict[str, dict[str, str]] = {}
    #: (A cluster.)  The node that serves the table and the address its
    #: clients reach it at (``ws`` is a path there); None outside a cluster.
    node: str | None = None
    address: str | None = None


class TableInfo(msgspec.Struct, kw_only=True):
    """``GET /tables/{id}`` (and each item of ``GET /tables``).  ``connected``:
    the seats with a connection; ``watched``: any connection, a spectator's
    too (an unwatched table is paused)."""

    id: str
    spec: str
    variant: str
    players: int
    bots: tuple[int, ...]
    hand: int
    hands_done: int
    #: the hand's dealer; None while a joint deal's seat-value step is under
    #: way (the first hand's dealer is drawn with its deal: the provisional
    #: one would tell something of the deal if every seat withheld)
    dealer: int | None
    rng: str | None
    commitment: str
    totals: tuple[int, ...]
    open: bool
    connected: tuple[int, ...] = ()
    #: a connection (seat or spectator) is attached; False: the table is
    #: paused — its bots and clock wait for the first connection
    watched: bool = False
    #: the named seats' names (``{"0": "阿明"}``); never their player ids
    names: dict[str, str] = {}
    #: each bot seat's level (``{"1": "hard"}``; a table made before
    #: levels: ``normal`` at each)
    levels: dict[str, str] = {}
    #: a room's hand count (局数; None: open-ended)
    hands: int | None = None
    #: a ready step (准备/继续) between its hands (``POST /tables`` ``ready``)
    ready: bool = False
    #: how it ended: ``"finished"``, ``"dissolved"``, ``"closed"`` (None: open)
    ended: str | None = None
    #: 大结算 (:class:`Tally`), once a room has ended
    tally: Tally | None = None
    #: the table's stake (minor units per 子) and rake rule; None: no money
    stake: int | None = None
    rake: Rake | None = None
    #: ``totals`` in money after the rake, per seat, and the house's take
    #: (a table with a stake; else None)
    money_totals: tuple[int, ...] | None = None
    house: int | None = None
    #: (A cluster.)  The node that serves the table and its address (None
    #: outside a cluster; ``address`` None: no live node serves it now)
    node: str | None = None
    address: str | None = None


class HttpError(msgspec.Struct, kw_only=True):
    """Every HTTP error body: ``{"error": CODE, "message": …}``."""

    error: str
    message: str


_DECODER = msgspec.json.Decoder(ClientMessage)
_ENCODER = msgspec.json.Encoder()


def decode_client(data: bytes | str) -> Any:
    """One client message from a frame.

    An unknown field is refused inside an ``act``'s ``action`` too (the
    action classes of :mod:`qipai.core.model` take none from a client:
    ``{"type": "discard", "seat": 0, "card": 5, "x": 1}`` is not an action).

    Raises:
        msgspec.DecodeError / msgspec.ValidationError: not a client message
        (the server answers ``BadMessage`` naming the problem).
    """
    msg = _DECODER.decode(data)
    if type(msg) is Act:
        action = msgspec.json.decode(data).get("action")  # well-formed: decoded above
        cls = type(msg.action)
        extra = set(action) - {cls.__struct_config__.tag_field, *cls.__struct_fields__}
        if extra:
            raise msgspec.ValidationError(f"Object contains unknown field `{min(extra)}` - at "
                                          f"`$.action`")
    return msg


def encode(msg: Any) -> bytes:
    """A message as JSON bytes."""
    return _ENCODER.encode(msg)


def schema() -> dict[str, Any]:
    """The JSON Schema of the protocol: ``ClientMessage``, ``ServerMessage``,
    ``ServerFrame`` (a message or a ``batch`` of them: what one frame holds)
    and ``SeatView`` (the per-seat view), sharing one ``$defs``."""
    (client, server, frame, view), defs = msgspec.json.schema_components(
        [ClientMessage, ServerMessage, ServerFrame, SeatView])
    return plain_schema({"$schema": "https://json-schema.org/draft/2020-12/schema",
                         "title": "qipai serve protocol",
                         "properties": {"ClientMessage": client, "ServerMessage": server,
                                        "ServerFrame": frame, "SeatView": view},
                         "$defs": defs})
