"""The journal's chain read back from a database, read-only, for ``qipai
verify --db`` (:mod:`qipai.core.chain` checks it).

The database is opened read-only — an SQLite file with ``mode=ro`` (a
missing file is an error, never created), PostgreSQL in a ``READ ONLY``
transaction — and read in one transaction, so a server writing meanwhile
is seen at one moment.  Nothing takes the server lock: a server may run.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from qipai.host.store.errors import StoreError, said


def _engine(url: str) -> sa.Engine:
    """A read-only engine of ``url`` (``sqlite:///FILE`` or ``postgresql://…``).

    Raises:
        StoreError: not such a URL, or the SQLite file does not exist."""
    from qipai.host.store import URLS, engine_url

    try:
        u = sa.engine.make_url(engine_url(url))
    except sa.exc.ArgumentError:
        raise StoreError(f"{url!r} is not a database URL ({URLS})") from None
    backend = u.get_backend_name()
    if backend == "sqlite":
        path = u.database
        if not path or path == ":memory:":
            raise StoreError(f"{url!r}: give the database file, sqlite:///FILE")
        uri = f"file:{urllib.parse.quote(path)}?mode=ro"

        def connect() -> sqlite3.Connection:
            try:
                c = sqlite3.connect(uri, uri=True, check_same_thread=False)
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open the database {path}: {exc}") from None
            c.isolation_level = None   # BEGIN is ours: the reads are one snapshot
            return c

        engine = sa.create_engine("sqlite://", creator=connect)

        @sa.event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            conn.exec_driver_sql("BEGIN")

        return engine
    if backend == "postgresql":
        try:
            return sa.create_engine(u).execution_options(isolation_level="REPEATABLE READ",
                                                          postgresql_readonly=True)
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
            raise StoreError(f"cannot use database {url!r}: {exc}") from None
    raise StoreError(f"cannot use database {url!r}: {URLS}, not {backend}")


class TableRows:
    """One table's rows: ``id``, ``spec``, ``hands`` (its ``qipai_hands``
    rows in hand order, dicts), ``actions`` (hand → its ``qipai_actions``
    rows in ``seq`` order), ``heads`` (hand → the ``chain`` its stored
    ``hand_ended`` event carries, where one is stored)."""

    def __init__(self, tid: str, spec: str, hands: list[dict[str, Any]],
                 actions: dict[int, list[dict[str, Any]]], heads: dict[int, Any]) -> None:
        self.id, self.spec, self.hands, self.actions, self.heads = (tid, spec, hands, actions,
                                                                   heads)


@contextmanager
def _reading(url: str) -> Iterator[sa.Connection]:
    engine = _engine(url)
    try:
        with engine.connect() as c, c.begin():
            yield c
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(f"the database did not answer: {said(exc)}") from None
    finally:
        engine.dispose()


def chained_tables(url: str, table_id: str | None = None) -> Iterator[TableRows]:
    """Every table of the database at ``url`` (or table ``table_id``), in
    creation order, with its rows (:class:`TableRows`), one at a time.

    Raises:
        StoreError: the database cannot be opened or read, is not a qipai
            database, or holds no table ``table_id``."""
    with _reading(url) as c:
        names = set(sa.inspect(c).get_table_names())
        if not {"qipai_tables", "qipai_hands", "qipai_actions"} <= names:
            raise StoreError("not a qipai database: it has no qipai_tables, qipai_hands "
                             "and qipai_actions")
        events = "qipai_events" in names
        q = "select id, spec from qipai_tables"
        args: dict[str, Any] = {}
        if table_id is not None:
            q += " where id = :t"
            args["t"] = table_id
        tables = c.execute(sa.text(q + " order by created, id"), args).all()
        if table_id is not None and not tables:
            raise StoreError(f"the database holds no table {table_id}")
        for tid, spec in tables:
            hands = [dict(r) for r in c.execute(sa.text(
                "select * from qipai_hands where table_id = :t order by hand"),
                {"t": tid}).mappings()]
            acts: dict[int, list[dict[str, Any]]] = {}
            for r in c.execute(sa.text("select * from qipai_actions where table_id = :t "
                                       "order by hand, seq"), {"t": tid}).mappings():
                acts.setdefault(r["hand"], []).append(dict(r))
            heads: dict[int, Any] = {}
            if events:
                for (body,) in c.execute(sa.text(
                        "select body from qipai_events where table_id = :t and "
                        "kind = 'hand_ended' order by id"), {"t": tid}):
                    try:
                        data = json.loads(body)
                        heads[int(data["hand"])] = data.get("chain")
                    except (ValueError, TypeError, KeyError):
                        continue
            yield TableRows(tid, spec, hands, acts, heads)
