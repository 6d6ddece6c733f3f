"""The server's database schema: one SQLAlchemy Core schema for SQLite and PostgreSQL.

Six tables:

* ``qipai_tables`` — one row per hosted table: the ruleset spec, the
  house plugins, the qipai and variant versions, the RNG kind (and the
  server seed of a seeded table), the bot seats and their levels, the SHA-256 hashes of the
  seat, spectator and admin tokens (never the tokens), open or closed.
* ``qipai_hands`` — one row per hand: its deal (JSON), the commitment and
  the secret salt, the seed of a seeded hand; once over, its record (JSON,
  deal and salt revealed) and its net per seat.
* ``qipai_actions`` — every accepted action: ``(table_id, hand, seq)`` is
  the primary key, so an action can never be stored twice; ``timeout``
  says the server played it for a seat that did not answer in time.
* the journal's chain (:mod:`qipai.core.chain`): each hand row's
  ``link`` and, once it is over, ``end_link``, and each action's ``link`` —
  SHA-256 chained to the table's previous link (NULL in rows made before).
* ``qipai_events`` — the transactional outbox (issue 36): each event the
  operator is told (``table_created``, ``hand_started``, ``hand_ended``,
  ``table_closed``, ``timeout``, ``tuoguan``), inserted in the same
  transaction as the change it reports; ``id`` (autoincrement, never
  reused) is the global order — one writer commits everything, so ids
  commit in increasing order — and the webhook's idempotency key; its
  delivery state (``attempts``, ``next_try``, ``delivered``, ``dead``,
  ``error``) is kept by the deliverer (:mod:`qipai.server.webhook`).

* ``qipai_nodes`` — a cluster's live nodes (:mod:`qipai.server.cluster`);
  each table's ``owner`` and ``epoch`` say which node serves it.

* ``qipai_seat_values`` — a joint deal's seat values (:mod:`qipai.core.joint`):
  each human seat's commitment, and its value once revealed, by
  ``(table_id, hand, seat)``.

A change is handed to the writer (:mod:`qipai.host.store.writer`) as a
:class:`Write`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import sqlalchemy as sa

metadata = sa.MetaData()

tables = sa.Table(
    "qipai_tables", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("variant", sa.String(100), nullable=False),
    sa.Column("options", sa.Text, nullable=False),          # JSON object
    sa.Column("plugins", sa.Text, nullable=False),          # JSON list of plugin specs
    sa.Column("stamp", sa.Text, nullable=False),            # JSON qipai.core.stamps.Stamp
    sa.Column("qipai_version", sa.String(50), nullable=False),
    sa.Column("variant_version", sa.String(50), nullable=False),
    sa.Column("rng", sa.String(10), nullable=False),        # "os" | "seeded"
    sa.Column("seed", sa.Text),                             # the server seed (decimal), seeded only
    sa.Column("bots", sa.Text, nullable=False),             # JSON list of seats
    sa.Column("tokens", sa.Text, nullable=False),           # JSON {seat: sha256 hex}
    sa.Column("spectator_hash", sa.String(64), nullable=False),
    sa.Column("admin_hash", sa.String(64), nullable=False),
    sa.Column("open", sa.Boolean, nullable=False, default=True),
    sa.Column("created", sa.Float, nullable=False),
    # added after the first release: nullable, so an older database is
    # upgraded in place by adding them (see UPGRADES)
    sa.Column("key_name", sa.String(100)),                  # the operator key that made it
    sa.Column("players", sa.Text),                          # JSON {seat: {player, name}}
    sa.Column("closed", sa.Float),                          # time.time() of its close
    sa.Column("hands", sa.Integer),                         # a room's 局数 (NULL: open-ended)
    sa.Column("ended", sa.String(20)),                      # finished | dissolved | closed
    sa.Column("tally", sa.Text),                            # JSON Tally (大结算) of a room, once ended
    sa.Column("stake", sa.Integer),                         # minor units per 子 (NULL: no money)
    sa.Column("rake", sa.Text),                             # JSON {"percent", "cap"} (NULL: none)
    sa.Column("seat_values", sa.Boolean),                   # joint deals (NULL: an older row, no)
    # a cluster (qipai serve --cluster, qipai.server.cluster): the node that
    # serves it and the epoch of that ownership, +1 at every move (NULL: made
    # by a server outside a cluster; the first node adopts it)
    sa.Column("owner", sa.String(100)),
    sa.Column("epoch", sa.Integer),
    # each bot seat's level, JSON {seat: level} (NULL: an older row, normal at each)
    sa.Column("bot_levels", sa.Text),
    # a ready step (准备/继续) between hands (NULL: an older row — a room
    # has one, an open-ended table not; qipai.host.room)
    sa.Column("ready", sa.Boolean),
)

#: A cluster's nodes (``qipai serve --cluster``): one row per node that
#: holds its node lock, deleted by the survivor that takes its tables over.
nodes = sa.Table(
    "qipai_nodes", metadata,
    sa.Column("id", sa.String(100), primary_key=True),
    sa.Column("address", sa.Text, nullable=False),          # the URL its clients reach it at
    sa.Column("started", sa.Float, nullable=False),         # the database's clock, epoch seconds
    sa.Column("draining", sa.Boolean, nullable=False, default=False),
    sa.Column("pid", sa.Integer),
    sa.Column("host", sa.Text),
)

#: Columns added to a table after the first release, by table: each is
#: nullable, so an older database gains them with ``ALTER TABLE … ADD
#: COLUMN`` when a server opens it (:func:`upgrade`), its old rows reading NULL.
UPGRADES: dict[str, tuple[str, ...]] = {"qipai_tables": ("key_name", "players", "closed",
                                                         "hands", "ended", "tally", "stake", "rake",
                                                         "seat_values", "owner", "epoch",
                                                         "bot_levels", "ready"),
                                        "qipai_hands": ("money", "link", "end_link", "server_seed",
                                                        "joint"),
                                        "qipai_actions": ("tuoguan", "link")}

hands = sa.Table(
    "qipai_hands", metadata,
    sa.Column("table_id", sa.String(32), sa.ForeignKey("qipai_tables.id"), primary_key=True),
    sa.Column("hand", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("deal", sa.Text, nullable=False),             # JSON Deal
    sa.Column("seed", sa.Text),                             # the hand's seed (decimal), seeded only
    sa.Column("commitment", sa.String(64), nullable=False),
    sa.Column("salt", sa.String(128), nullable=False),
    sa.Column("record", sa.Text),                           # JSON Record once over
    sa.Column("net", sa.Text),                              # JSON list once over
    # added after the first release (UPGRADES): a table with a stake's money
    # of the hand once over, JSON {"net": [minor units per seat], "house": h}
    sa.Column("money", sa.Text),
    # the journal's chain (qipai.core.chain; NULL: a row made before links)
    sa.Column("link", sa.String(64)),                       # the hand row's link
    sa.Column("end_link", sa.String(64)),                   # its end's (net), once over or closed
    # a joint deal (qipai.core.joint): the secret server seed (hex), stored
    # before its commitment is published; the Joint (JSON) once dealt —
    # NULL while the hand's seat-value step is under way
    sa.Column("server_seed", sa.String(64)),
    sa.Column("joint", sa.Text),
)

seat_values = sa.Table(
    "qipai_seat_values", metadata,
    sa.Column("table_id", sa.String(32), primary_key=True),
    sa.Column("hand", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("commitment", sa.String(64), nullable=False),   # hex SHA-256 of the value
    sa.Column("value", sa.String(64)),                        # hex, once revealed
)

actions = sa.Table(
    "qipai_actions", metadata,
    sa.Column("table_id", sa.String(32), primary_key=True),
    sa.Column("hand", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("action", sa.Text, nullable=False),           # JSON Action
    sa.Column("timeout", sa.Boolean, nullable=False, default=False),
    # played for the seat by the table's bot while it was in 托管 (NULL: an older row, no)
    sa.Column("tuoguan", sa.Boolean),
    sa.Column("link", sa.String(64)),                       # the journal's chain (qipai.core.chain)
    sa.ForeignKeyConstraint(["table_id", "hand"], ["qipai_hands.table_id", "qipai_hands.hand"]),
)


events = sa.Table(
    "qipai_events", metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
              autoincrement=True),
    sa.Column("table_id", sa.String(32), nullable=False),
    sa.Column("key_name", sa.String(100)),                  # the table's operator key
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("body", sa.Text, nullable=False),             # JSON object (the event's data)
    sa.Column("created", sa.Float, nullable=False),         # time.time() when written
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("next_try", sa.Float, nullable=False, default=0.0),   # time.time()
    sa.Column("delivered", sa.Float),                       # time.time() of the 2xx; NULL: not yet
    sa.Column("dead", sa.Boolean, nullable=False, default=False),
    sa.Column("error", sa.Text),                            # the last attempt's failure
    sa.Index("qipai_events_pending", "delivered", "table_id", "id"),
    sa.Index("qipai_events_key", "key_name", "id"),
    sqlite_autoincrement=True,   # never reuse an id (the idempotency key)
)


# The hot path's statements, built once: a statement with bound parameters
# keeps one cache key, so SQLAlchemy compiles it once, not per action.
_INSERT_ACTION = actions.insert()
_INSERT_HAND = hands.insert()
_UPDATE_HAND = (hands.update()
                .where(hands.c.table_id == sa.bindparam("k_table"),
                       hands.c.hand == sa.bindparam("k_hand")))
_SEAT_REVEAL = (seat_values.update()
                .where(seat_values.c.table_id == sa.bindparam("k_table"),
                       seat_values.c.hand == sa.bindparam("k_hand"),
                       seat_values.c.seat == sa.bindparam("k_seat"))
                .values(value=sa.bindparam("value")))
_CLOSE_TABLE = (tables.update().where(tables.c.id == sa.bindparam("k_table"))
                .values(open=False, closed=sa.bindparam("closed"),
                        ended=sa.bindparam("ended", None, required=False),
                        tally=sa.bindparam("tally", None, required=False)))
_encode = msgspec.json.Encoder().encode
# a table handed to another node (a drain): conditional on this node still
# owning it at the epoch it holds (the batch's fence checked that too)
_HANDOFF = (tables.update().where(tables.c.id == sa.bindparam("k_table"),
                                  tables.c.owner == sa.bindparam("k_owner"),
                                  tables.c.epoch == sa.bindparam("k_epoch"))
            .values(owner=sa.bindparam("owner"), epoch=sa.bindparam("epoch")))
# a closed table's rows deleted (``qipai serve --retention``): ``ids``, a list
# of closed tables' ids; each only if closed (an open table is never deleted)
_IDS = sa.bindparam("ids", expanding=True)
_CLOSED_IDS = sa.select(tables.c.id).where(tables.c.id.in_(_IDS), tables.c.open == sa.false())
_PRUNE_ACTIONS = actions.delete().where(actions.c.table_id.in_(_CLOSED_IDS))
_PRUNE_SEAT_VALUES = seat_values.delete().where(seat_values.c.table_id.in_(_CLOSED_IDS))
_PRUNE_HANDS = hands.delete().where(hands.c.table_id.in_(_CLOSED_IDS))
# (defined below ``events``) the events of those tables: delivered ones, or all of them
_PRUNE_TABLES = tables.delete().where(tables.c.id.in_(_IDS), tables.c.open == sa.false())

_K_ID = sa.bindparam("k_id")
_EVENT_SENT = (events.update().where(events.c.id == _K_ID)
               .values(delivered=sa.bindparam("delivered"), attempts=sa.bindparam("attempts"),
                       error=None))
_EVENT_FAILED = (events.update().where(events.c.id == _K_ID)
                 .values(attempts=sa.bindparam("attempts"), next_try=sa.bindparam("next_try"),
                         dead=sa.bindparam("dead"), error=sa.bindparam("error")))
# (a key's webhook changed) its tables' pending events due now, with attempts of their own
_EVENTS_DUE = (events.update()
               .where(events.c.key_name == sa.bindparam("k_key"), events.c.delivered.is_(None),
                      events.c.dead == sa.false())
               .values(attempts=0, next_try=0.0, error=None))
_EVENTS_RETRY = (events.update()
                 .where(events.c.dead == sa.true(), events.c.delivered.is_(None))
                 .values(dead=False, attempts=0, next_try=0.0, error=None))

_PRUNE_EVENTS_ALL = events.delete().where(events.c.table_id.in_(_CLOSED_IDS))
_PRUNE_EVENTS = _PRUNE_EVENTS_ALL.where(events.c.delivered.is_not(None))
# the delivered ones, and those no webhook delivers: of no key, or of a key not in ``keys``
_PRUNE_EVENTS_ROUTED = _PRUNE_EVENTS_ALL.where(sa.or_(
    events.c.delivered.is_not(None), events.c.key_name.is_(None),
    events.c.key_name.not_in(sa.bindparam("keys", expanding=True))))

#: Operations a :class:`Write` may hold: (kind, parameters).
_STATEMENTS = {"event": events.insert(), "event_sent": _EVENT_SENT,
               "event_failed": _EVENT_FAILED, "events_retry": _EVENTS_RETRY,
               "events_due": _EVENTS_DUE,
               "prune_events": _PRUNE_EVENTS, "prune_events_all": _PRUNE_EVENTS_ALL,
               "prune_events_routed": _PRUNE_EVENTS_ROUTED,
               "action": _INSERT_ACTION, "finish_hand": _UPDATE_HAND, "hand": _INSERT_HAND,
               "close": _CLOSE_TABLE, "table": tables.insert(),
               "prune_actions": _PRUNE_ACTIONS, "prune_hands": _PRUNE_HANDS,
               "prune_tables": _PRUNE_TABLES,
               "seat_commit": seat_values.insert(), "seat_reveal": _SEAT_REVEAL,
               "deal_hand": _UPDATE_HAND, "prune_seat_values": _PRUNE_SEAT_VALUES,
               "handoff": _HANDOFF, "notify": sa.text("select pg_notify(:ch, :p)")}


@dataclass(eq=False)
class Write:
    """One change of one table, committed as a unit (with others in a batch).

    Attributes:
        key: the table id (a failed batch is retried per key).
        ops: ``(kind, params)`` in order: ``"action"`` (a ``qipai_actions``
            row), ``"finish_hand"`` (``record``, ``net``, ``k_table``,
            ``k_hand``; ``money`` too, a hand of a table with a stake), ``"hand"`` (a ``qipai_hands`` row), ``"close"``
            (``k_table``, ``closed``, ``ended``, ``tally``: JSON or None); ``"prune_actions"``, ``"prune_hands"``,
            ``"prune_tables"`` (``ids``: closed tables whose rows are
            deleted, in that order; an open table's are never touched);
            ``"event"`` (a ``qipai_events`` row, :func:`event_params`),
            ``"event_sent"`` (``k_id``, ``delivered``, ``attempts``),
            ``"event_failed"`` (``k_id``, ``attempts``, ``next_try``,
            ``dead``, ``error``), ``"events_retry"`` (no parameters: every
            dead event pending again), ``"events_due"`` (``k_key``: the
            pending events of that key's tables due now, their attempts
            back to 0: its webhook changed); ``"prune_events"`` (``ids``: the
            delivered events of those closed tables), ``"prune_events_all"``
            (all their events: a server without a webhook),
            ``"prune_events_routed"`` (``ids``, ``keys``: their delivered
            events and those of tables of no key or of a key not in
            ``keys``, the keys with a webhook of their own, when the server
            has none);
            ``"seat_commit"`` (a ``qipai_seat_values`` row), ``"seat_reveal"``
            (``k_table``, ``k_hand``, ``k_seat``, ``value``), ``"deal_hand"``
            (a joint hand dealt: ``deal``, ``seed``, ``commitment``, ``salt``,
            ``joint``, ``k_table``, ``k_hand``), ``"prune_seat_values"`` (``ids``);
            ``"handoff"`` (a cluster's table given to another node: ``k_table``,
            ``k_owner``, ``k_epoch`` — this node and the epoch it holds —
            ``owner``, ``epoch``); ``"notify"`` (PostgreSQL's ``NOTIFY``
            on channel ``ch`` with payload ``p``, delivered at the commit).
        done: called in the event loop once committed (``None``) or failed
            (the exception); not called for a cancelled write.
    """

    key: str
    ops: list[tuple[str, dict[str, Any]]]
    done: Callable[[BaseException | None], None]
    cancelled: bool = field(default=False)


def action_params(table_id: str, hand: int, seq: int, action: Any,
                  timeout: bool, tuoguan: bool = False, link: str | None = None
                  ) -> dict[str, Any]:
    """The ``qipai_actions`` row of one action (``action`` a msgspec Struct;
    ``tuoguan``: played by the table's bot for a seat in 托管; ``link``: its
    link in the table's chain, :func:`qipai.core.chain.action_link`)."""
    return dict(table_id=table_id, hand=hand, seq=seq, action=_encode(action).decode(),
                timeout=timeout, tuoguan=tuoguan, link=link)



def event_params(table_id: str, key_name: str | None, kind: str,
                 body: dict[str, Any]) -> dict[str, Any]:
    """The ``qipai_events`` row of one event (``body``: its JSON data,
    plain builtins or msgspec Structs), pending delivery."""
    return dict(table_id=table_id, key_name=key_name, kind=kind,
                body=_encode(body).decode(), created=time.time(), attempts=0,
                next_try=0.0, delivered=None, dead=False, error=None)


def upgrade(conn: sa.Connection) -> list[str]:
    """Add the :data:`UPGRADES` columns a database made by an older qipai
    lacks (under the server lock, before anything reads it); answers the
    ``table.column`` names added.  Raises SQLAlchemy's error if the
    database refuses (the store reports it as a StoreError)."""
    added = []
    inspector = sa.inspect(conn)
    for name, columns in UPGRADES.items():
        have = {c["name"] for c in inspector.get_columns(name)}
        table = metadata.tables[name]
        for col in columns:
            if col not in have:
                c = table.c[col]
                ddl = c.type.compile(dialect=conn.dialect)
                conn.execute(sa.text(f'ALTER TABLE {name} ADD COLUMN {col} {ddl}'))
                added.append(f"{name}.{col}")
    return added


def token_hash(token: str) -> str:
    """The SHA-256 hex digest of a token (what the database keeps)."""
    return hashlib.sha256(token.encode()).hexdigest()

