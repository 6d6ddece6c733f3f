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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


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
