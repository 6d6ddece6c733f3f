"""pytest plugin: run the conformance suite against any installed variant.

Registered through the ``pytest11`` entry point and inert unless asked::

    pytest --qipai-variant guilin-mahjong [--qipai-cases PATH ...]
    pytest --qipai-plugin my_variant.plugin [--qipai-cases PATH ...]

``--qipai-plugin MODULE[:OBJECT]`` (or ``path/to/file.py[:OBJECT]``) checks a
variant plugin that is not installed as an entry point — while writing it,
or a deliberately broken one in a test; the suite runs under the plugin's
manifest name, and its own cases are its ``QIPAI_CASES`` or the ``cases/``
folder beside its module.

Each case becomes one test named by its id; a failure shows the case id, its
source, the expected and actual values.  The generic property checks run as
``property/…`` tests.
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("qipai", "qipai conformance")
    group.addoption("--qipai-variant", action="store", default=None,
                    help="run the conformance suite against this registered variant")
    group.addoption("--qipai-plugin", action="store", default=None,
                    metavar="MODULE[:OBJECT]",
                    help="run the conformance suite against this plugin object (a module, "
                         "or an object in it; a .py path works too), not installed")
    group.addoption("--qipai-cases", action="append", default=[],
                    help="extra case file or folder (repeatable)")
    group.addoption("--qipai-games", action="store", type=int, default=20,
                    help="random hands for the property checks (default 20)")


class CaseItem(pytest.Item):
    def __init__(self, *, variant: str, case: Any, options: dict, **kw: Any) -> None:
        super().__init__(**kw)
        self.variant, self.case, self.options = variant, case, options

    def runtest(self) -> None:
        from qipai.conformance.checkers import run_case

        out = run_case(self.variant, self.case, self.options)
        if not out.passed:
            raise CaseFailed(out)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            o = excinfo.value.outcome
            return f"case {o.id} failed\n  source: {o.source}\n  {o.message}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.case.file or "", 0, f"qipai case {self.case.id}"


class PropertyItem(pytest.Item):
    def __init__(self, *, variant: str, games: int, prop: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.variant, self.games, self.prop = variant, games, prop

    def runtest(self) -> None:
        for out in _property_outcomes(self.variant, self.games):
            if out.id == self.prop and not out.passed:
                raise CaseFailed(out)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            o = excinfo.value.outcome
            return f"{o.id} failed: {o.message}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int, str]:
        return "", 0, self.prop


_REGISTERED = pytest.StashKey[str]()


def pytest_unconfigure(config: Any) -> None:
    """Forget a plugin given with ``--qipai-plugin`` (the run may be one of
    several in a process, as under ``pytester``)."""
    name = config.stash.get(_REGISTERED, None)
    if name is not None:
        from qipai.conformance.registry import unregister_plugin

        unregister_plugin(name)
        for key in [k for k in _OUTCOMES if k[0] == name]:
            del _OUTCOMES[key]


_OUTCOMES: dict[tuple[str, int, int], list[Any]] = {}


def _property_outcomes(variant: str, games: int) -> list[Any]:
    """The property checks run once per session and variant, shared by the items."""
    from qipai.conformance.registry import _LOCAL
    from qipai.conformance.runner import run_properties

    key = (variant, games, id(_LOCAL.get(variant)))
    if key not in _OUTCOMES:
        _OUTCOMES[key] = run_properties(variant, games=games)
    return _OUTCOMES[key]


def load_plugin_object(spec: str) -> Any:
    """``MODULE[:OBJECT]`` or ``FILE.py[:OBJECT]`` → the plugin object.

    Raises:
        pytest.UsageError: naming what cannot be imported or found.
    """
    from qipai.core.errors import QipaiError
    from qipai.core.ruleset import load_plugin

    try:
        return load_plugin(spec)
    except QipaiError as exc:
        raise pytest.UsageError(f"--qipai-plugin {spec}: {exc}") from None


class CaseFailed(Exception):
    def __init__(self, outcome: Any) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    variant = config.getoption("--qipai-variant")
    plugin = config.getoption("--qipai-plugin")
    if not variant and not plugin:
        return
    from qipai.conformance.properties import PROPERTY_NAMES
    from qipai.conformance.registry import (
        check_variant_name, collect, load_variant, register_plugin,
    )
    from qipai.core.errors import QipaiError

    try:
        if plugin:
            name = register_plugin(load_plugin_object(plugin))
            config.stash[_REGISTERED] = name
            if variant and variant != name:
                raise pytest.UsageError(f"--qipai-plugin {plugin} is variant {name!r}, "
                                        f"not {variant!r}")
            variant = name
        load_variant(variant)
        check_variant_name(variant)
        collected = collect(variant, config.getoption("--qipai-cases"))
    except QipaiError as exc:
        raise pytest.UsageError(f"--qipai-plugin {plugin}: {exc}" if plugin
                                else f"--qipai-variant: {exc}") from None

    for case, options in collected:
        items.append(CaseItem.from_parent(session, name=case.id, variant=variant,
                                          case=case, options=options))
    games = config.getoption("--qipai-games")
    for prop in PROPERTY_NAMES:
        items.append(PropertyItem.from_parent(session, name=f"property/{prop}",
                                              variant=variant, games=games,
                                              prop=f"property/{prop}"))
