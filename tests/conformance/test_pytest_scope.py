"""What ``pytest --qipai-variant NAME`` runs, inside this repository and in
another project (a QA team's), checked in a fresh pytest process each."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p",
                           "no:cacheprovider", "-q", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def passed(out: str) -> list[str]:
    return re.findall(r"^PASSED (\S+)", out, re.M)


def collected(out: str) -> list[str]:
    return [line for line in out.splitlines() if "::" in line]


def conformance_items(variant: str) -> list[str]:
    """The ids the plugin adds for ``variant``: one per case, one per property."""
    from qipai.conformance.properties import PROPERTY_NAMES
    from qipai.conformance.registry import collect

    return ([f"::{case.id}" for case, _ in collect(variant, [])]
            + [f"::property/{p}" for p in PROPERTY_NAMES])


def test_inside_the_repository_only_the_variants_conformance_is_collected():
    res = pytest_run(ROOT, "--collect-only", "--qipai-variant", "guilin-zipai")
    assert res.returncode in (0, 5), res.stdout[-3000:] + res.stderr
    assert collected(res.stdout) == conformance_items("guilin-zipai")


def test_inside_the_repository_named_test_files_are_collected_beside_it():
    res = pytest_run(ROOT, "--collect-only", "tests/core/test_options.py",
                     "--qipai-variant", "guilin-zipai")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    ids = collected(res.stdout)
    mine = [i for i in ids if i.startswith("tests/core/test_options.py::")]
    assert mine and ids == mine + conformance_items("guilin-zipai")


@pytest.mark.slow
def test_in_another_project_its_own_tests_run_beside_the_conformance_suite(tmp_path):
    """As docs/howto/conformance.md and the tutorial describe it."""
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_house.py").write_text("def test_house():\n    assert True\n")
    res = pytest_run(tmp_path, "-rA", "--qipai-variant", "guilin-zipai", "--qipai-games", "1",
                     "-k", "house or deck/80 or property")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    ids = passed(res.stdout)
    assert "tests/test_house.py::test_house" in ids
    assert "::deck/80-cards" in ids and "::property/zero_sum" in ids
    # and without --qipai-variant, the plugin is inert
    res = pytest_run(tmp_path, "-rA")
    assert res.returncode == 0 and passed(res.stdout) == ["tests/test_house.py::test_house"]
