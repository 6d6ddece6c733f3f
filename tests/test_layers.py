"""The architecture holds: layers point down, no import circles, every room in a layer.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and the
picture in ``docs/concepts/architecture.md``.  Imports made only for type
checking (``if TYPE_CHECKING:``) do not count.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]

# Circles allowed for now: none.  An entry here would be a debt to pay.
KNOWN_CIRCLES: list[set[str]] = []


def _is_shim(module: str) -> bool:
    """A deprecation shim: an old module path kept for one release (see CHANGELOG.md),
    whose docstring starts "Deprecated", that warns and imports the new module only
    when a name is used (PEP 562)."""
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf-8")
    return text.startswith('"""Deprecated') and "def __getattr__" in text


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("qipai", exclude_type_checking_imports=True)


def test_the_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def _circles(graph: grimp.ImportGraph) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_import_circles(graph: grimp.ImportGraph) -> None:
    circles = _circles(graph)
    unexpected = [sorted(c) for c in circles if c not in KNOWN_CIRCLES]
    assert not unexpected, f"import circles: {unexpected}"
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in circles]
    assert not gone, f"these circles are gone: delete them from KNOWN_CIRCLES: {gone}"


def test_every_top_level_room_is_in_a_layer(graph: grimp.ImportGraph) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layered = set()
    for contract in config["tool"]["importlinter"]["contracts"]:
        for layer in contract.get("layers", []):
            for name in layer.replace("|", ":").split(":"):
                layered.add(name.strip().strip("()"))
    top = {m for m in graph.modules if m.count(".") == 1}
    rooms = {m for m in top - {"qipai.variants", "qipai.__main__"} if not _is_shim(m)}
    assert rooms - layered == set(), f"in no layer: {sorted(rooms - layered)}"


def test_a_shim_imports_nothing_of_qipai_until_used(graph: grimp.ImportGraph) -> None:
    """So an old import path adds no edge against the layers."""
    shims = [m for m in graph.modules if _is_shim(m)]
    assert shims, "no shim found: has the one-release deprecation period ended? drop this test"
    for shim in shims:
        assert graph.find_modules_directly_imported_by(shim) == set(), shim
