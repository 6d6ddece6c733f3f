"""Conformance: case files, the runner, generic property checks, the pytest
plugin — and Hypothesis strategies for a variant's own property tests.

``from qipai.conformance import strategies`` (or the names below, e.g.
``winning_hands``) needs Hypothesis installed; nothing else here does, so
``strategies`` is imported only when asked for.
"""

from __future__ import annotations

from typing import Any

_STRATEGIES = ("deals", "hands", "melds", "seeds", "tables", "waiting_hands", "winning_hands")

__all__ = ["deals", "hands", "melds", "seeds", "strategies", "tables", "waiting_hands",
           "winning_hands"]


def __getattr__(name: str) -> Any:
    if name == "strategies" or name in _STRATEGIES:
        import importlib

        module = importlib.import_module("qipai.conformance.strategies")
        return module if name == "strategies" else getattr(module, name)
    raise AttributeError(f"module 'qipai.conformance' has no attribute {name!r}")
