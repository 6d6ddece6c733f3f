"""The ``db_url`` fixture gives a real, empty, writable database of each kind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pgcluster import sqlalchemy_url


def test_db_url_is_a_fresh_writable_database(db_url):
    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.begin() as conn:
            assert sa.inspect(conn).get_table_names() == []   # fresh: nothing from another test
            conn.execute(sa.text("CREATE TABLE probe (n INTEGER PRIMARY KEY, s TEXT)"))
            conn.execute(sa.text("INSERT INTO probe VALUES (1, '桂林')"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT n, s FROM probe")).all() == [(1, "桂林")]
            dialect = conn.dialect.name
    finally:
        engine.dispose()
    assert dialect == ("sqlite" if db_url.startswith("sqlite:") else "postgresql")


def _run_pg_case(env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "QIPAI_CI"}
    env.update({"QIPAI_PG_BIN": "/nonexistent-pg-bin", **env_extra})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider",
         str(Path(__file__)), "-k", "postgresql and fresh_writable"],
        env=env, capture_output=True, text=True, cwd=Path(__file__).parent)


def test_missing_postgresql_skips_naming_the_package_locally():
    if os.environ.get("QIPAI_NESTED"):
        pytest.skip("nested run")
    r = _run_pg_case({"QIPAI_NESTED": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 skipped" in r.stdout
    skip_lines = [ln for ln in r.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert len(skip_lines) == 1 and "`postgresql`" in skip_lines[0], r.stdout


def test_missing_postgresql_fails_under_qipai_ci():
    if os.environ.get("QIPAI_NESTED"):
        pytest.skip("nested run")
    r = _run_pg_case({"QIPAI_NESTED": "1", "QIPAI_CI": "1"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "QIPAI_CI is set and PostgreSQL cannot run" in r.stdout
    assert "1 error" in r.stdout and "skipped" not in r.stdout
