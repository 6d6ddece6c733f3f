"""qipai's own test suite and the conformance plugin.

``uv run pytest --qipai-variant NAME`` (or ``--qipai-plugin …``) inside this
repository runs that variant's conformance suite only: without test paths
on the command line, the files of this folder are not collected.  Name
them to run both (``uv run pytest tests/ --qipai-variant NAME``).  Outside
the repository the plugin is unchanged: a project's own tests run beside
the conformance suite, as docs/howto/conformance.md describes.

Tests marked ``slow`` are opt-in: ``uv run pytest`` skips them, ``uv run
pytest --runslow`` runs everything, and ``uv run pytest --runslow -m slow``
only them (a ``-m`` expression naming ``slow`` opts in as well).

The test files sit in one folder per package they test (``core/``,
``server/``, …); the modules they share sit in ``helpers/``, put on the
path here.  The database fixtures are here for every folder:
``db_url`` runs a test once per database — ``sqlite`` (a fresh file in the
test's temporary folder) and ``postgresql`` (a fresh database in one
throwaway cluster per test session, see ``helpers/pgcluster.py``).  It
yields a URL string:

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
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
# pytest puts each test file's own folder on the path, not its neighbours'.
sys.path.insert(0, str(HERE / "helpers"))

from pgcluster import Cluster, PostgresMissing  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (skipped by default)")


def _slow_asked(config: pytest.Config) -> bool:
    # `-m slow` (or any expression naming the marker) chooses among the slow
    # tests itself, so skipping them all behind it would select nothing.
    return config.getoption("--runslow") or "slow" in (config.getoption("markexpr") or "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _slow_asked(config):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
    asked = config.getoption("--qipai-variant", None) or config.getoption("--qipai-plugin", None)
    if not asked or config.args_source is pytest.Config.ArgsSource.ARGS:
        return None
    if HERE in Path(collection_path).resolve().parents:
        return True
    return None


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
