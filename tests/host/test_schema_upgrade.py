"""A database made before the operator columns (key_name, players,
closed) is upgraded in place when a server opens it: the columns are
added, its open table is restored and plays on, and a close records when."""

import sqlalchemy as sa

from qipai.host.store import Store
from qipai.host.store.schema import UPGRADES, metadata, tables


def _old_schema(url: str) -> None:
    """Create the tables as the first release did: qipai_tables without
    the columns in UPGRADES, and no qipai_events."""
    from qipai.host.store import engine_url

    engine = sa.create_engine(engine_url(url))
    old = sa.MetaData()
    for t in metadata.sorted_tables:
        if t.name == "qipai_events":
            continue
        cols = [c._copy() for c in t.columns if c.name not in UPGRADES.get(t.name, ())]
        sa.Table(t.name, old, *cols, *[c._copy() for c in t.constraints
                                       if isinstance(c, sa.ForeignKeyConstraint)
                                       and t.name == "qipai_actions"])
    old.create_all(engine)
    with engine.connect() as conn:
        have = {c["name"] for c in sa.inspect(conn).get_columns("qipai_tables")}
    engine.dispose()
    assert not have & set(UPGRADES["qipai_tables"])


def test_old_database_gains_the_columns(db_url):
    _old_schema(db_url)
    store = Store(db_url)
    try:
        assert sorted(store.upgraded) == sorted(f"{t}.{c}" for t, cols in UPGRADES.items()
                                                for c in cols)
        with store.engine.connect() as conn:
            have = {c["name"] for c in sa.inspect(conn).get_columns("qipai_tables")}
            assert sa.inspect(conn).has_table("qipai_events")   # the outbox, made
        assert set(UPGRADES["qipai_tables"]) <= have
    finally:
        store.close()
    again = Store(db_url)   # a second open adds nothing
    try:
        assert again.upgraded == []
        assert {c.name for c in tables.columns} >= set(UPGRADES["qipai_tables"])
    finally:
        again.close()
