"""``qipai new-variant``: the skeleton package installs, is listed and plays.

"Installed" here is what an install leaves for Python to find: the package
on ``sys.path`` and a ``.dist-info`` folder holding its entry point.  The CI
script docs/examples/check-tuidaohu.sh installs a generated ``demo`` package
into a real virtual environment with pip semantics (``uv pip install -e``).
"""

from __future__ import annotations

import importlib
import sys
import tomllib

import pytest
from click.testing import CliRunner

from qipai.cli import cli
from qipai.conformance.checkers import run_case
from qipai.conformance.registry import collect, register_plugin, unregister_plugin
from qipai.conformance.runner import run_properties
from qipai.core.ruleset import Ruleset, available, load
from qipai.cli.new_variant import ScaffoldError, files, module_name, write_skeleton


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Generate a variant into tmp_path and make it importable and registered."""
    made = []

    def make(name: str, family: str = "mahjong"):
        root = write_skeleton(name, family, tmp_path)
        text = tomllib.loads((root / "pyproject.toml").read_text())
        (ep_name, target), = text["project"]["entry-points"]["qipai.variants"].items()
        dist = root / f"{module_name(name)}-0.1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: qipai-{name}\n"
                                       "Version: 0.1.0\n")
        (dist / "entry_points.txt").write_text(f"[qipai.variants]\n{ep_name} = {target}\n")
        monkeypatch.syspath_prepend(str(root))
        made.append(module_name(name))
        return root

    yield make
    for mod in list(sys.modules):
        if any(mod == m or mod.startswith(m + ".") for m in made):
            del sys.modules[mod]


@pytest.mark.parametrize("family", ["mahjong", "zipai"])
def test_the_skeleton_has_its_files_and_entry_point(tmp_path, family):
    root = write_skeleton("demo", family, tmp_path)
    assert root == tmp_path / "qipai-demo"
    for rel in ("pyproject.toml", "README.md", "qipai_demo/__init__.py", "qipai_demo/options.py",
                "qipai_demo/plugin.py", "qipai_demo/cases/deck.toml",
                "tests/test_qipai_demo.py"):
        assert (root / rel).is_file(), rel
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "qipai-demo" and "qipai" in project["dependencies"]
    assert project["entry-points"]["qipai.variants"] == {"demo": "qipai_demo.plugin"}


@pytest.mark.parametrize("family, players", [("mahjong", 4), ("zipai", 3)])
def test_the_plugin_imports_builds_a_ruleset_and_passes_conformance(installed, family, players):
    installed("demo", family)
    plugin = importlib.import_module("qipai_demo.plugin")
    rs = Ruleset(plugin)
    assert (rs.name, rs.manifest.family, rs.manifest.players) == ("demo", family, players)
    assert rs.options.stake == 1
    name = register_plugin(plugin)
    try:
        outcomes = [run_case(name, c, o) for c, o in collect(name)]
        outcomes += run_properties(name, games=3)
    finally:
        unregister_plugin(name)
    assert outcomes and all(o.passed for o in outcomes), [o for o in outcomes if not o.passed]


def test_an_installed_skeleton_is_listed_and_plays(installed):
    installed("my-demo")
    assert "my-demo" in available()
    result = CliRunner().invoke(cli, ["variants"])
    assert result.exit_code == 0 and "my-demo" in result.output
    table = load("my-demo").table(seed=1)
    while not table.over:
        seat = table.to_decide()[0]
        table.apply(table.legal_actions(seat)[0])
    assert sum(table.result.net) == 0


def test_the_command_writes_the_package(tmp_path):
    result = CliRunner().invoke(cli, ["new-variant", "demo", "--family", "zipai",
                                      "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "pip install -e" in result.output
    assert (tmp_path / "qipai-demo" / "qipai_demo" / "plugin.py").is_file()
    again = CliRunner().invoke(cli, ["new-variant", "demo", "--dir", str(tmp_path)])
    assert again.exit_code == 2 and "exists already" in again.output


@pytest.mark.parametrize("name", ["Demo", "my_demo", "-demo", "demo-", "1demo", ""])
def test_bad_names_are_refused(name):
    with pytest.raises(ScaffoldError, match="bad variant name"):
        files(name)


def test_an_unknown_family_is_refused():
    with pytest.raises(ScaffoldError, match="families are mahjong, zipai"):
        files("demo", "poker")


def test_the_name_of_an_installed_variant_is_refused(tmp_path):
    """A skeleton named like an installed variant would, once installed,
    replace it silently (the registry keeps one entry point a name): it is
    refused, and nothing is written."""
    with pytest.raises(ScaffoldError, match="'guilin-mahjong' is installed already"):
        write_skeleton("guilin-mahjong", directory=tmp_path)
    assert list(tmp_path.iterdir()) == []
