"""The tutorial "Write a variant plugin" stays true to its package: every
code block it includes resolves (file, markers), and every case of the
package cites the tutorial's rules."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = DOCS / "tutorial" / "write-a-variant.md"
PACKAGE = DOCS / "examples" / "qipai-tuidaohu"
INCLUDE = re.compile(r"```\{literalinclude\} (\S+)\n((?::[\w-]+:.*\n)*)```")


def includes() -> list[tuple[Path, dict[str, str]]]:
    out = []
    for m in INCLUDE.finditer(PAGE.read_text(encoding="utf-8")):
        opts = dict(re.findall(r":([\w-]+): *(.*)", m.group(2)))
        out.append(((PAGE.parent / m.group(1)).resolve(), opts))
    return out


def test_the_page_includes_the_package_files():
    files = {p.relative_to(PACKAGE).as_posix() for p, _ in includes()}
    assert {"pyproject.toml", "qipai_tuidaohu/options.py", "qipai_tuidaohu/plugin.py",
            "qipai_tuidaohu/rules.py", "tests/test_rules.py"} <= files


@pytest.mark.parametrize("path, opts", includes(), ids=lambda x: x.name if isinstance(x, Path) else "")
def test_every_include_resolves(path, opts):
    text = path.read_text(encoding="utf-8")
    for key in ("start-after", "end-before", "start-at"):
        if key in opts:
            raw = opts[key].strip()
            marker = json.loads(raw) if raw.startswith('"') else raw  # a YAML/JSON string
            assert marker in text, f"{path.name}: {key} {marker!r} not found"


def test_every_case_cites_the_tutorial():
    for f in sorted((PACKAGE / "qipai_tuidaohu" / "cases").glob("*.toml")):
        data = tomllib.loads(f.read_text(encoding="utf-8"))
        assert data["variant"] == "tuidaohu"
        for case in data["cases"]:
            prefix = "docs/tutorial/write-a-variant.md § "
            assert case["source"].startswith(prefix), case["id"]
            section = case["source"].removeprefix(prefix).split(":", 1)[0]
            assert f"## {section}\n" in PAGE.read_text(encoding="utf-8"), case["id"]


def test_the_page_shows_install_list_play_and_conformance():
    text = PAGE.read_text(encoding="utf-8")
    for command in ("uv pip install -e docs/examples/qipai-tuidaohu", "qipai variants",
                    "qipai play tuidaohu", "qipai conformance tuidaohu",
                    "pytest --qipai-variant tuidaohu", "qipai new-variant"):
        assert command in text, command


def test_the_page_gives_the_number_of_checks_conformance_prints(monkeypatch):
    """The output the page shows for `qipai conformance tuidaohu` has the
    count the command prints: the package's cases and every property (it
    said 28 after two properties were added)."""
    from qipai.conformance.properties import PROPERTY_NAMES
    from qipai.conformance.registry import collect, register_plugin, unregister_plugin

    monkeypatch.syspath_prepend(str(PACKAGE))
    import qipai_tuidaohu.plugin as plugin

    name = register_plugin(plugin)
    try:
        checks = len(collect(name)) + len(PROPERTY_NAMES)
    finally:
        unregister_plugin(name)
    shown = re.search(r"tuidaohu: (\d+) checks\n(\d+) passed, 0 failed",
                      PAGE.read_text(encoding="utf-8"))
    assert shown and int(shown.group(1)) == int(shown.group(2)) == checks, (shown, checks)
