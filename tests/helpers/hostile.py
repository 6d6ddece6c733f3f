"""Helpers of the adversarial server tests: a real ``qipai serve`` subprocess
and a WebSocket connection that keeps every frame it was sent, byte for
byte (:mod:`hostkit`'s, not strict: an error is a message like any other),
and a look at every database row.

What the tests check is only HTTP and the WebSocket protocol of
docs/reference/protocol.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

import sqlalchemy as sa

from hostkit import PATIENCE, SyncSeat, start_server
from pgcluster import sqlalchemy_url

Server = start_server
__all__ = ["PATIENCE", "Server", "Conn", "act", "db_rows", "split_frames", "normalise"]


class Conn(SyncSeat):
    """One connection of an adversarial test: not strict, its :meth:`send`
    paced (a throttled frame may be dropped unanswered)."""

    strict = False
    paced = True


def act(decision: dict[str, Any], action: dict[str, Any], **over: Any) -> dict[str, Any]:
    msg = {"type": "act", "hand": decision["hand"], "seq": decision["seq"], "action": action}
    msg.update(over)
    return msg


def db_rows(db_url: str) -> dict[str, list[tuple]]:
    """Every row of every table of the database, sorted (a comparable picture)."""
    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.connect() as c:
            names = sorted(sa.inspect(c).get_table_names())
            meta = sa.MetaData()
            meta.reflect(c, only=names)
            return {n: sorted(tuple(r) for r in c.execute(sa.select(meta.tables[n])))
                    for n in names}
    finally:
        engine.dispose()


_DEADLINE = re.compile(r'"deadline":[0-9.e+-]+')
_COMMIT = re.compile(r'"commitment":"[0-9a-f]{64}"')


def split_frames(raw: list[str]) -> list[str]:
    """Every message of the frames as its own JSON text, in order: a frame
    that is one message as it came (byte for byte), a ``batch`` frame's
    messages each encoded again as the server encodes (msgspec: compact,
    keys in order) — which messages share a frame depends on when the
    database commits, not on the deal."""
    import msgspec

    out = []
    for text in raw:
        if text.startswith('{"type":"batch"'):
            out += [msgspec.json.encode(m).decode() for m in json.loads(text)["messages"]]
        else:
            out.append(text)
    return out


def normalise(raw: list[str], table_id: str) -> list[str]:
    """The messages of the frames (:func:`split_frames`) with what differs by
    design between two tables blanked: the table id, the deal commitment
    (a hash of a different deal), the deadline (a clock); ``Throttled``
    answers (they depend on how fast the test sends) left out."""
    out = []
    for text in split_frames(raw):
        if '"code":"Throttled"' in text:   # the conductor's own pace, not the deal
            continue
        text = text.replace(table_id, "TABLE")
        text = _COMMIT.sub('"commitment":"C"', text)
        out.append(_DEADLINE.sub('"deadline":0', text))
    return out
