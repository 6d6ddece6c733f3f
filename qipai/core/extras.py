"""Optional dependencies: import one, or fail naming the extra that brings it.

The simulation (``qipai[sim]``, ``qipai[ray]``) and the environments
(``qipai[env]``) sit side by side above the core and both need this, so it
lives below them both.
"""

from __future__ import annotations

from qipai.core.errors import QipaiError


class MissingExtra(QipaiError, ImportError):
    """An optional dependency is not installed; the message names the extra."""


def require(module: str, extra: str) -> object:
    """Import ``module`` or raise :class:`MissingExtra` naming ``qipai[extra]``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(
            f"{module} is not installed: it comes with the optional extra qipai[{extra}] "
            f"(uv run --extra {extra} …, or pip install 'qipai[{extra}]')") from None


def installed(module: str, extra: str) -> None:
    """Check, without importing it, that the top-level package of ``module``
    is installed; else raise :class:`MissingExtra` naming ``qipai[extra]``."""
    import importlib.util
    import sys

    top = module.partition(".")[0]
    try:
        found = (sys.modules[module] is not None if module in sys.modules
                 else importlib.util.find_spec(top) is not None)
    except (ImportError, ValueError):
        found = False
    if not found:
        require(module if module in sys.modules else top, extra)  # raises, naming the extra
