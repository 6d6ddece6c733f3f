"""Deprecated: a hosted table moved to :mod:`qipai.host.match` and its parts;
this module re-exports the names it had for one release and warns when one
is used."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_MOVED = {
    **dict.fromkeys(("HostedTable",), "qipai.host.match"),
    **dict.fromkeys(("LOCK_LOST", "IN_FLIGHT_LOST", "NOT_TAKEN_LOST", "REREADING",
                     "DamagedTable", "Refused"), "qipai.host.errors"),
    **dict.fromkeys(("UNREADABLE",), "qipai.host.journal"),
    **dict.fromkeys(("Decision",), "qipai.host.clock"),
    **dict.fromkeys(("Conn", "MAX_QUEUED_CHARS", "CLOSE_TOO_SLOW"), "qipai.host.outbox"),
    **dict.fromkeys(("public_view",), "qipai.core.views"),
    **dict.fromkeys(("MAX_CONNS_PER_SEAT", "MAX_SPECTATORS"), "qipai.host.seats"),
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"qipai.host.game is deprecated: import {name} from {module}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), name)
