"""Player identity (docs/reference/protocol.md, "Players"): the named players
of ``POST /tables`` checked, and the seat tokens an operator signs itself —
JWTs — verified.

A signed seat token is a JWT whose header's ``kid`` names one of the
server's operator keys (:mod:`qipai.server.keys`) and whose claims are
``table`` (the table id), ``seat`` (a human seat of it, a whole number),
``player`` (the operator's id of the player) and ``exp`` (seconds since the
epoch; required), ``name`` optional.  It is signed with that key's signing
material: HS256 with its secret, or EdDSA with the private key of its
public key.  The algorithm is the key's, never the token's header's (a
token saying ``none``, or HS256 for an EdDSA key, is refused).

It is accepted wherever a seat token is (``/tables/{id}/ws?token=``, the
records and replays of its table) when:

* the key is in the keys file (revoked: gone after SIGHUP) and signs
  (``BadKey``, 401), the signature and claims verify (``BadToken``, 401),
  ``exp`` is not past (:data:`LEEWAY` seconds of clock skew allowed;
  ``ExpiredToken``, 401);
* the table is the token's and was made with that key (``WrongTable``, 403);
* the seat is a human seat of it (``WrongSeat``, 403) and, if the seat has
  a named player, the ``player`` claim is his (``WrongPlayer``, 403).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from qipai.core.errors import QipaiError
from qipai.host import protocol as P

if TYPE_CHECKING:
    from qipai.host.match import HostedTable
    from qipai.server.keys import Keys

#: Seconds a signed seat token's ``exp`` may be past (clocks of the
#: operator's backend and the server differ a little).
LEEWAY = 30
#: The longest player id and name (characters).
MAX_PLAYER = 128
MAX_NAME = 32
#: The longest token read as a JWT (bytes): a longer one is refused unread.
MAX_JWT = 4096


class Denied(Exception):
    """A token refused: ``code`` (``BadToken``, ``BadKey``, ``ExpiredToken``,
    ``WrongTable``, ``WrongSeat``, ``WrongPlayer``), ``message``, the HTTP
    ``status`` (401, 403) and the WebSocket close code (4401, 4403)."""

    def __init__(self, code: str, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status
        self.close = 4403 if status == 403 else 4401


class BadPlayers(QipaiError, ValueError):
    """``POST /tables``: the named players are not valid; the message says which and why."""


@dataclass
class Seating:
    """What a table says of its seats: its id, the key that made it, its
    human seats and its named players (seat → ``{"player", "name"}``)."""

    id: str
    key_name: str | None
    humans: frozenset[int]
    named: dict[int, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of_table(cls, t: HostedTable) -> Seating:
        return cls(t.id, t.key_name, frozenset(t.seat_of_hash.values()), t.named)

    @classmethod
    def of_row(cls, row: dict[str, Any]) -> Seating:
        """Of a stored ``qipai_tables`` row (an open table or a closed one)."""
        tokens = msgspec.json.decode(row["tokens"], type=dict[str, str])
        named = msgspec.json.decode(row.get("players") or "{}", type=dict[str, dict[str, str]])
        return cls(row["id"], row.get("key_name"), frozenset(int(s) for s in tokens),
                   {int(s): p for s, p in named.items()})


def _text(value: str, what: str, most: int) -> str | None:
    """Why ``value`` is not a valid ``what`` (None: it is)."""
    if not value.strip():
        return f"{what} is empty"
    if len(value) > most:
        return f"{what} is longer than {most} characters"
    if not value.isprintable():
        return f"{what} holds a control (or other unprintable) character"
    return None


def check_players(players: list[P.Player], n: int, bots: list[int]) -> dict[str, dict[str, str]]:
    """The named players of a ``POST /tables`` as stored (``{"0": {"player",
    "name"}}``), or :class:`BadPlayers` saying which entry is wrong and why:
    a seat that is not one of the ``n`` seats, a bot's, named twice, a
    player at two seats, or a
    ``player`` (1-:data:`MAX_PLAYER` characters) or ``name``
    (1-:data:`MAX_NAME`) that is empty, too long or holds a control
    character."""
    out: dict[str, dict[str, str]] = {}
    for i, p in enumerate(players):
        where = f"players[{i}]"
        if not 0 <= p.seat < n:
            raise BadPlayers(f"{where}: seat {p.seat} is not a seat of this table (0..{n - 1})")
        if p.seat in bots:
            raise BadPlayers(f"{where}: seat {p.seat} is a bot's (named players sit at human "
                             f"seats)")
        if str(p.seat) in out:
            raise BadPlayers(f"{where}: seat {p.seat} is named twice")
        why = _text(p.player, "player", MAX_PLAYER) or _text(p.name, "name", MAX_NAME)
        if why is not None:
            raise BadPlayers(f"{where} (seat {p.seat}): {why}")
        twice = next((s for s, q in out.items() if q["player"] == p.player), None)
        if twice is not None:   # one account holding two seats of a table sees two hands
            raise BadPlayers(f"{where} (seat {p.seat}): that player sits at seat {twice} "
                             f"already (a player holds one seat of a table)")
        out[str(p.seat)] = {"player": p.player, "name": p.name}
    return out


def looks_signed(token: str) -> bool:
    """Whether ``token`` is written as a JWT (three dot-separated parts, a
    JSON header) rather than one of the server's own opaque tokens (which
    hold no dot)."""
    return token.count(".") == 2 and token.startswith("eyJ")


def verify(keys: Keys | None, token: str, seating: Seating) -> tuple[int, str]:
    """The seat and player of the signed seat token ``token`` at the table
    ``seating`` describes, or :class:`Denied` (see the module docstring)."""
    import jwt

    if keys is None:
        raise Denied("BadToken", "a signed seat token (JWT) needs a server with operator keys "
                                 "(qipai serve --keys FILE)")
    if len(token) > MAX_JWT:
        raise Denied("BadToken", f"a signed seat token is at most {MAX_JWT} bytes")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise Denied("BadToken", "the seat token is not a JWT that reads") from None
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise Denied("BadKey", "the signed seat token's header has no kid (the name of the "
                               "operator key that signed it)")
    signer = keys.signers.get(kid)
    if signer is None:
        raise Denied("BadKey", f"the signed seat token names a key (kid) that is not one of "
                               f"this server's or signs no seat tokens (revoked, mistyped, or "
                               f"made without a signing secret)")
    alg, secret = signer
    try:
        claims = jwt.decode(token, secret, algorithms=[alg], leeway=LEEWAY,
                            options={"require": ["exp", "table", "seat", "player"]})
    except jwt.ExpiredSignatureError:
        raise Denied("ExpiredToken", "the signed seat token has expired (its exp is past): "
                                     "ask the operator for a new seat link") from None
    except jwt.InvalidTokenError as exc:
        raise Denied("BadToken", f"the signed seat token does not verify with key {kid!r} "
                                 f"({alg}): {exc}") from None
    table, seat, player = claims["table"], claims["seat"], claims["player"]
    if not isinstance(table, str) or not isinstance(player, str) or not player \
            or type(seat) is not int:
        raise Denied("BadToken", "the signed seat token's claims are table (a string), seat "
                                 "(a whole number) and player (a string)")
    if table != seating.id:
        raise Denied("WrongTable", f"the signed seat token is for another table, not "
                                   f"{seating.id}", 403)
    if seating.key_name != kid:
        raise Denied("WrongTable", f"table {seating.id} was not made with key {kid!r}: only "
                                   f"the key that made it signs its seats", 403)
    if seat not in seating.humans:
        raise Denied("WrongSeat", f"seat {seat} is not a human seat of table {seating.id}",
                     403)
    named = seating.named.get(seat)
    if named is not None and named["player"] != player:
        raise Denied("WrongPlayer", f"seat {seat} of table {seating.id} is another player's",
                     403)
    return seat, player
