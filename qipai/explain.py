"""Deprecated: :mod:`qipai.text.payments` (this name stays for one release)."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_NEW = "qipai.text.payments"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # the import system's probes (__path__ …): not a use
        raise AttributeError(name)
    warnings.warn(f"qipai.explain is deprecated: import {name} from {_NEW}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(_NEW), name)
