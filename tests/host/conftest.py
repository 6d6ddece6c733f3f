"""Fixtures for the server tests: ``db_url`` runs a test once per database.

``db_url`` is parametrized over ``sqlite`` (a fresh file in the test's temporary
folder) and ``postgresql`` (a fresh database in one throwaway cluster per test
session, see ``pgcluster.py``).  It yields a URL string:

- ``sqlite:///ABSOLUTE/PATH/qipai.db``
- ``postgresql://postgres@/DBNAME?host=SOCKETDIR`` (libpq form; SQLAlchemy
  needs ``postgresql+psycopg://`` for the psycopg driver —
  ``pgcluster.sqlalchemy_url`` does that)

Where PostgreSQL is not installed the ``postgresql`` cases skip with one line
naming the package; under ``QIPAI_CI=1`` (set by ``.ci/run``) that is a failure
instead, so CI never silently skips them.
"""

from __future__ import annotations

import os

import pytest

from pgcluster import Cluster, PostgresMissing


def in_ci() -> bool:
    return os.environ.get("QIPAI_CI", "") not in ("", "0")


@pytest.fixture(scope="session")
def pg_cluster():
    """The session's throwaway PostgreSQL cluster (skips, or fails in CI, when absent)."""
    missing = None
    try:
        cluster = Cluster.start()
    except PostgresMissing as e:
        missing = str(e)
    if missing is not None:
        if in_ci():
            pytest.fail(f"QIPAI_CI is set and PostgreSQL cannot run: {missing}", pytrace=False)
        pytest.skip(missing)
    try:
        yield cluster
    finally:
        cluster.stop()


def _fresh(request, folder) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{folder / 'qipai.db'}"
    return request.getfixturevalue("pg_cluster").create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A URL of a fresh, empty database, once per database kind."""
    return _fresh(request, tmp_path)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_db_url(request, tmp_path_factory) -> str:
    """As ``db_url``, one database for a whole test module (one server for
    many tests, each on its own tables)."""
    return _fresh(request, tmp_path_factory.mktemp("db"))


@pytest.fixture
def served(db_url, tmp_path):
    """A ``qipai serve`` (seeded deals, seed 3) on a fresh ``db_url``
    database, stopped after the test.  A module needing other arguments
    defines its own ``served``."""
    from hostkit import start_server

    s = start_server(db_url, tmp_path, "--seed", "3")
    yield s
    s.stop()
