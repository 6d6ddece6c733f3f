"""A batch's action rows as the writer stores them (on PostgreSQL one
``INSERT … SELECT FROM unnest`` of an array per column): each value as it
was given — NULLs, quotes, a column left to its default — and a value too
long for its column refused, never cut, failing that table's write only."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa

from qipai.host.store import Store, Write


@pytest.fixture
def pg_url(pg_cluster) -> str:
    return pg_cluster.create_database()


def _table_row(tid: str) -> dict:
    return dict(id=tid, spec="guilin-mahjong", variant="guilin-mahjong", options="{}",
                plugins="[]", stamp="{}", qipai_version="0", variant_version="0", rng="os",
                seed=None, bots="[]", tokens="{}", spectator_hash="0" * 64,
                admin_hash="0" * 64, open=True, created=0.0)


def _hand_row(tid: str) -> dict:
    return dict(table_id=tid, hand=0, deal="{}", seed=None, commitment="0" * 64, salt="0")


def _row(tid: str, seq: int, **kw) -> dict:
    return dict(table_id=tid, hand=0, seq=seq, **kw)


def _commit(store: Store, writes: list[tuple[str, list[dict]]]) -> dict[str, list]:
    """Submit every ``(table, rows)`` as one write, all in one batch; each
    table's ``done`` results."""
    got: dict[str, list] = {}

    async def main() -> None:
        for tid, rows in writes:
            store.submit(Write(tid, [("action", r) for r in rows],
                               got.setdefault(tid, []).append))
        await store.drain()

    asyncio.run(main())
    return got


def test_a_batchs_action_rows_are_stored_as_given(db_url):
    quoted = '{"type":"discard","tile":"5m","note":"it\'s \\"quoted\\" 100% ü"}'
    a = [_row("a", 0, action=quoted, timeout=False, tuoguan=None, link=None),
         _row("a", 1, action="{}", timeout=True, tuoguan=True, link="ab" * 32),
         _row("a", 2**31 - 1, action="{}", timeout=False, tuoguan=False, link="0" * 64)]
    b = [_row("b", 5, action="[]")]   # timeout, tuoguan, link left out
    store = Store(db_url)
    try:
        for tid in ("a", "b"):
            store.create_table(_table_row(tid), _hand_row(tid))
        assert _commit(store, [("a", a), ("b", b)]) == {"a": [None], "b": [None]}
        assert store.actions_of("a", 0) == a
        assert store.actions_of("b", 0) == [dict(b[0], timeout=False, tuoguan=None,
                                                 link=None)]
    finally:
        store.close()


def test_an_action_value_too_long_for_its_column_is_refused_not_cut(pg_url):
    """(PostgreSQL: SQLite keeps any length.)  A 65-character link in a
    ``varchar(64)`` column: that table's write fails with the database's
    error and nothing of it is stored; the other table's, in the same
    batch, commits."""
    store = Store(pg_url)
    try:
        for tid in ("a", "b"):
            store.create_table(_table_row(tid), _hand_row(tid))
        got = _commit(store, [
            ("a", [_row("a", 0, action="{}", timeout=False, link="0" * 64),
                   _row("a", 1, action="{}", timeout=False, link="0" * 65)]),
            ("b", [_row("b", 0, action="{}", timeout=False, link="1" * 64)])])
        assert got["b"] == [None]
        assert len(got["a"]) == 1 and isinstance(got["a"][0], sa.exc.DataError), got
        assert "too long" in str(got["a"][0])
        assert store.actions_of("a", 0) == []
        assert [r["link"] for r in store.actions_of("b", 0)] == ["1" * 64]
        assert store.lost is None
    finally:
        store.close()
