"""A deal nobody can choose: the server's seed and every human seat's value.

A hosted table with seat values on (``qipai serve --seat-values``, or
``"seat_values": true`` in ``POST /tables``) deals each hand in four steps:

1. The server draws a secret **server seed** (:data:`SEED_BYTES` bytes from
   the OS's CSPRNG; a seeded test server derives it from the hand's seed,
   :func:`seeded_server_seed`) and publishes its **server commitment**,
   ``hex(SHA-256(server seed))``, stored before anyone sees it.
2. Each human seat's client draws a random **seat value** (:data:`VALUE_BYTES`
   bytes) and sends only its commitment ``hex(SHA-256(value))``.
3. When every seat has committed (or its short deadline passed), the clients
   reveal their values; a value that does not hash to its commitment is
   refused, and a seat that reveals nothing valid by the deadline is
   *withheld*: its value counts as empty.
4. The deal is :func:`deal_seed` of them, dealt as a seeded deal is
   (``Table(seed=…)``: ``random.Random(deal seed)`` shuffles the deck), so
   anybody redeals it from the record.

The deal function, exactly::

    message   = ASCII "qipai-deal:v1:" + decimal hand index
                + for each seat in seat order: ":" + its value in lowercase hex
                  ("" for a bot seat, a seat that committed nothing, a withheld one)
    deal seed = int.from_bytes(HMAC-SHA256(key = server seed, msg = message), "big")

Bot seats contribute nothing of their own: the server seed stands for them
(the server plays them).  After the hand the record reveals the server seed
(``Record.joint``); ``qipai verify`` checks that it hashes to the server
commitment, that each revealed value hashes to its seat's commitment, and
that the deal is the deal function of them (:func:`joint_problems`).

Why nobody can choose the deal: every seat value is fixed by its commitment
before any value is revealed, and the server's seed is fixed by its own
commitment before any seat commits — so neither the server, nor a player,
nor the two together, can try values until one gives a deal they like.
What is left is *withholding* a reveal (see docs/concepts/fairness.md):
a player who withholds does not know the server seed, so cannot tell which
of his two choices deals what; a server colluding with ``m`` seats can pick
among at most ``2**m`` deals, each withholding public in the record.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

import msgspec

#: Bytes of a server seed (64 hex digits in a record).
SEED_BYTES = 32
#: Bytes of a seat value (64 hex digits).
VALUE_BYTES = 32
#: The deal function's domain tag and version.
DEAL_TAG = "qipai-deal:v1:"

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


class SeatValue(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One seat's part of a joint deal.

    Attributes:
        commitment: hex SHA-256 of the seat's value, as it sent it (None: a
            bot seat, or a human seat that committed nothing in time).
        value: the revealed value, lowercase hex (None: none revealed).
        withheld: the seat committed but revealed no matching value by the
            deadline — its value counted as empty (recorded against it).
    """

    commitment: str | None = None
    value: str | None = None
    withheld: bool = False


class Joint(msgspec.Struct, kw_only=True):
    """What a joint deal was made of (``Record.joint``): the hand's index
    (part of the deal message), the server seed (hex) and its commitment,
    and each seat's :class:`SeatValue` in seat order."""

    hand: int
    server_seed: str
    server_commitment: str
    seats: list[SeatValue]


def new_server_seed() -> bytes:
    """A fresh secret server seed: :data:`SEED_BYTES` bytes of the OS's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def seeded_server_seed(hand_seed: int) -> bytes:
    """The server seed of a seeded (test) server's hand: BLAKE2b of its
    :func:`~qipai.core.sessions.hand_seed`, so tests are reproducible."""
    return hashlib.blake2b(str(int(hand_seed)).encode(), digest_size=SEED_BYTES,
                           person=b"qipai-srvseed").digest()


def seed_commitment(seed: bytes) -> str:
    """The server commitment: lowercase hex SHA-256 of the server seed."""
    return hashlib.sha256(seed).hexdigest()


def value_commitment(value: bytes) -> str:
    """A seat value's commitment: lowercase hex SHA-256 of its bytes."""
    return hashlib.sha256(value).hexdigest()


def hex32(text: Any, what: str) -> bytes:
    """``text`` as 32 bytes, or ValueError naming ``what``: it must be 64 hex digits."""
    if not isinstance(text, str) or len(text) != 64:
        raise ValueError(f"{what} is 64 hex digits (32 bytes), not "
                         f"{len(text) if isinstance(text, str) else type(text).__name__}"
                         f"{' characters' if isinstance(text, str) else ''}")
    # (a full match: bytes.fromhex alone skips whitespace, so 64 characters
    # with spaces would pass as fewer than 32 bytes)
    if _HEX64.fullmatch(text) is None:
        raise ValueError(f"{what} is not hex: {text[:70]!r}")
    return bytes.fromhex(text)


def deal_message(hand: int, values: list[str | None]) -> bytes:
    """The deal function's message: :data:`DEAL_TAG`, the hand index, then
    ``":" + value hex`` per seat in seat order ("" for none)."""
    return (DEAL_TAG + str(int(hand)) + "".join(":" + (v or "").lower() for v in values)
            ).encode("ascii")


def deal_seed(server_seed: bytes, hand: int, values: list[str | None]) -> int:
    """The deal seed: big-endian integer of HMAC-SHA256(server seed,
    :func:`deal_message`) — the seed ``Table(seed=…)`` deals from."""
    mac = hmac.new(server_seed, deal_message(hand, values), hashlib.sha256).digest()
    return int.from_bytes(mac, "big")


def joint_table(ruleset: Any, server_seed: bytes, hand: int, values: list[str | None],
                dealer: int | None = None, ask_all: bool = True) -> Any:
    """A :class:`~qipai.core.table.Table` of ``ruleset`` dealt by the deal
    function (:func:`deal_seed`), its origin ``rng`` ``"joint"``."""
    from qipai.core.table import Table

    seed = deal_seed(server_seed, hand, values)
    table = Table(ruleset, seed=seed, dealer=dealer, ask_all=ask_all)
    table.set_origin(seed, "joint")
    return table


def used_values(seats: list[SeatValue]) -> list[str | None]:
    """The values the deal function takes: each revealed value, None for a
    withheld or absent one."""
    return [None if s.withheld else s.value for s in seats]


def joint_problems(joint: Joint, seed: int | None) -> list[str]:
    """What is wrong with a record's joint deal, one line each (empty: it
    checks): the server seed must hash to its commitment, each revealed
    value to its seat's commitment, and ``seed`` (the record's, which the
    replay check deals the deal from) must be :func:`deal_seed` of them."""
    out = []
    try:
        server = hex32(joint.server_seed, "the server seed")
    except ValueError as exc:
        return [str(exc)]
    got = seed_commitment(server)
    if got != joint.server_commitment.lower():
        out.append(f"server seed mismatch: SHA-256 of the server seed is {got}, its "
                   f"commitment is {joint.server_commitment}")
    for i, s in enumerate(joint.seats):
        if s.value is None:
            continue
        try:
            v = hex32(s.value, f"seat {i}'s value")
        except ValueError as exc:
            out.append(str(exc))
            continue
        if s.commitment is None:
            out.append(f"seat {i} reveals a value but committed none")
        elif value_commitment(v) != s.commitment.lower():
            out.append(f"seat {i}'s value does not match its commitment: SHA-256 of "
                       f"{s.value} is {value_commitment(v)}, its commitment is {s.commitment}")
        if s.withheld:
            out.append(f"seat {i} is marked withheld but reveals a value")
    want = deal_seed(server, joint.hand, used_values(joint.seats))
    if seed != want:
        out.append(f"the deal seed is {seed}, not the deal function of the server seed and "
                   f"the seat values ({want})")
    return out
