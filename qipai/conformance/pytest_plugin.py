"""pytest plugin: run the conformance suite against any installed variant.

Registered through the ``pytest11`` entry point and inert unless asked::

    pytest --qipai-variant guilin-mahjong [--qipai-cases PATH ...]

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
    group.addoption("--qipai-cases", action="append", default=[],
                    help="extra case file or folder (repeatable)")
    group.addoption("--qipai-games", action="store", type=int, default=20,
                    help="random hands for the property checks (default 20)")


class CaseItem(pytest.Item):
    def __init__(self, *, variant: str, case: Any, options: dict, **kw: Any) -> None:
        super().__init__(**kw)
        self.variant, self.case, self.options = variant, case, options

    def runtest(self) -> None:
        from qipai.conformance.runner import run_case

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
        from qipai.conformance.properties import run_properties

        for out in run_properties(self.variant, games=self.games):
            if out.id == self.prop and not out.passed:
                raise CaseFailed(out)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            o = excinfo.value.outcome
            return f"{o.id} failed: {o.message}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int, str]:
        return "", 0, self.prop


class CaseFailed(Exception):
    def __init__(self, outcome: Any) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    variant = config.getoption("--qipai-variant")
    if not variant:
        return
    from qipai.conformance.properties import PROPERTIES
    from qipai.conformance.runner import collect
    from qipai.core.errors import QipaiError
    from qipai.core.ruleset import load

    try:
        load(variant)
        collected = collect(variant, config.getoption("--qipai-cases"))
    except QipaiError as exc:
        raise pytest.UsageError(f"--qipai-variant: {exc}") from None

    for case, options in collected:
        items.append(CaseItem.from_parent(session, name=case.id, variant=variant,
                                          case=case, options=options))
    games = config.getoption("--qipai-games")
    for prop in ["conservation+views+illegal+snapshot", *PROPERTIES]:
        items.append(PropertyItem.from_parent(session, name=f"property/{prop}",
                                              variant=variant, games=games,
                                              prop=f"property/{prop}"))
