"""qipai's own test suite and the conformance plugin.

``uv run pytest --qipai-variant NAME`` (or ``--qipai-plugin …``) inside this
repository runs that variant's conformance suite only: without test paths
on the command line, the files of this folder are not collected.  Name
them to run both (``uv run pytest tests/ --qipai-variant NAME``).  Outside
the repository the plugin is unchanged: a project's own tests run beside
the conformance suite, as docs/howto/conformance.md describes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
    asked = config.getoption("--qipai-variant", None) or config.getoption("--qipai-plugin", None)
    if not asked or config.args_source is pytest.Config.ArgsSource.ARGS:
        return None
    if HERE in Path(collection_path).resolve().parents:
        return True
    return None
