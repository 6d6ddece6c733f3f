"""The README's two ``my-cases/`` commands run as written on a fresh clone:
the sample folder they name ships with the repository, its cases are
well-formed, and the variant passes them beside its own."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The README's command lines that name ``my-cases/`` (comments cut)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return [re.sub(r"\s+#.*$", "", x).strip() for x in lines
            if x.startswith("uv run ") and "my-cases/" in x]


def run(command: str) -> subprocess.CompletedProcess[str]:
    """``uv run qipai ARGS`` as this interpreter's ``python -m qipai ARGS``, from the
    repository's root (where the README's commands are typed)."""
    argv = shlex.split(command)
    assert argv[:3] == ["uv", "run", "qipai"], command
    return subprocess.run([sys.executable, "-m", "qipai", *argv[3:]], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_the_readme_names_both_commands():
    assert readme_commands() == [
        "uv run qipai conformance guilin-mahjong --cases my-cases/",
        "uv run qipai conformance --check-cases my-cases/",
    ]


@pytest.mark.parametrize("command", readme_commands())
def test_a_readme_my_cases_command_passes(command):
    done = run(command)
    assert done.returncode == 0, done.stdout + done.stderr
    if "--check-cases" in command:
        cases = sum(f.read_text(encoding="utf-8").count("[[cases]]")
                    for f in (ROOT / "my-cases").rglob("*.toml"))
        assert cases >= 1 and f"{cases} cases, all well-formed" in done.stdout, done.stdout
    else:
        assert re.search(r"^\d+ passed, 0 failed$", done.stdout, re.M), done.stdout
        assert "qa/" not in done.stdout   # no sample case failed or was skipped
