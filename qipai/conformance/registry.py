"""Which variants the conformance runner knows, and where their cases are.

A variant is a registered entry point or a plugin object given to
:func:`register_plugin` (``pytest --qipai-plugin``); :func:`load_variant`
loads either with the :class:`~qipai.conformance.guard.Guard` layered over
it, :func:`ruleset_for` caches the rulesets per options, and
:func:`collect` reads the variant's own ``cases/`` folder
(:func:`variant_case_dir`) and any extra case files.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from qipai.core.ruleset import Ruleset, available, load, load_entry_point
from qipai.conformance.cases import Case, load_cases
from qipai.conformance.guard import GUARD

#: Variants given as plugin objects (:func:`register_plugin`), by name; they
#: are found before the entry points of the same name.
_LOCAL: dict[str, Any] = {}


def register_plugin(plugin: Any) -> str:
    """Make a variant plugin that is not installed as an entry point (a module
    or object with hook implementations and a manifest) known to the runner
    under its manifest's name, and return that name.

    This is how ``pytest --qipai-plugin MODULE[:OBJECT]`` checks a plugin
    before it is packaged; a name already registered (even as an entry
    point) now means this plugin for the runner.

    Raises:
        UnknownVariant: the plugin has no ``qipai_manifest``.
    """
    name = Ruleset(plugin).name
    _LOCAL[name] = plugin
    _ruleset.cache_clear()
    return name


def unregister_plugin(name: str) -> None:
    """Forget a plugin given to :func:`register_plugin` (no error if unknown)."""
    _LOCAL.pop(name, None)
    _ruleset.cache_clear()


def load_variant(variant: str, options: dict[str, Any] | None = None) -> Ruleset:
    """The ruleset of ``variant``: a plugin given to :func:`register_plugin`,
    else the registered entry point (:func:`qipai.core.ruleset.load`), with
    the runner's :class:`~qipai.conformance.guard.Guard` layered over it."""
    if variant in _LOCAL:
        return Ruleset(_LOCAL[variant], options or {}, plugins=[GUARD])
    return load(variant, options or {}, plugins=[GUARD])


def check_variant_name(variant: str) -> None:
    """Refuse a ruleset string where a variant's name is needed.

    The variant's own cases are found by its registered name, and each
    case sets its own options; under ``"guilin-mahjong(hubao=false)"`` (or
    ``" guilin-mahjong "``) they would silently be skipped and only the
    property checks run.

    Raises:
        UnknownVariant: ``variant`` is neither a registered name nor a
            plugin given to :func:`register_plugin`.
    """
    if is_local(variant) or variant in available():
        return
    from qipai.core.errors import UnknownVariant

    raise UnknownVariant(f"conformance runs a variant by its registered name "
                         f"({', '.join(sorted(available()))}), not {variant!r}: each case "
                         f"sets its own options (options = {{…}} in its file)")


def is_local(variant: str) -> bool:
    """True when ``variant`` was given as a plugin object, not an entry point."""
    return variant in _LOCAL


def variant_case_dir(variant: str) -> Path | None:
    """The variant's own ``cases/`` folder: the plugin's ``QIPAI_CASES`` or
    ``cases/`` beside its module."""
    if variant in _LOCAL:
        plugin = _LOCAL[variant]
    else:
        eps = available()
        if variant not in eps:
            return None
        plugin = load_entry_point(variant, eps[variant])
    explicit = getattr(plugin, "QIPAI_CASES", None)
    if explicit:
        return Path(explicit)
    f = getattr(plugin, "__file__", None)
    if f and (Path(f).parent / "cases").is_dir():
        return Path(f).parent / "cases"
    return None


@lru_cache(maxsize=64)
def _ruleset(variant: str, options_json: bytes) -> Ruleset:
    return load_variant(variant, msgspec.json.decode(options_json))


def ruleset_for(variant: str, options: dict[str, Any]) -> Ruleset:
    """A loaded ruleset (cached per options)."""
    return _ruleset(variant, msgspec.json.encode(options, order="sorted"))



def collect(variant: str, extra: Iterable[str | Path] = ()) -> list[tuple[Case, dict[str, Any]]]:
    """The variant's own cases plus those in ``extra`` paths."""
    paths: list[str | Path] = []
    own = variant_case_dir(variant)
    if own is not None:
        paths.append(own)
    paths.extend(extra)
    return load_cases(paths, variant)
