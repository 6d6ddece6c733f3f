"""Version stamps: what a record or snapshot was made under.

A hand replayed under another qipai, another version of its variant, or
other house-rule plugins may play differently — and money is settled from
records.  So every record and snapshot names what made it (a
:class:`Stamp`), and :func:`check` refuses to replay or restore it under
anything else, with :class:`~qipai.core.errors.VersionMismatch` naming what
differs.

How strict (docs: reference/record-format, "Version stamps"):

* the variant version, the ruleset spec and the house plugins (names and
  the SHA-256 of their source files, in registration order) must match
  exactly;
* the qipai version must match exactly, unless the caller passes
  ``allow_version_mismatch=True`` (``--allow-version-mismatch`` on the
  command line) — for reading an archive after an upgrade, knowingly;
* a record made before stamps existed (no ``qipai_version``, no
  ``plugins``) is read as before: only the variant version is checked, and
  :func:`unstamped_note` says what could not be checked (the command line
  prints it as a warning).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.core.errors import VersionMismatch


class PluginStamp(msgspec.Struct, frozen=True):
    """One house-rule plugin a ruleset was loaded with.

    Attributes:
        name: the module's dotted name (a file loaded by path: its stem),
            with ``:qualname`` added for a plugin that is a class or an
            object rather than a module (``"house_rules"``,
            ``"tests.test_x:Cheap"``).
        sha256: hex SHA-256 of the source file of the module that defines
            it, or None when it has no source file.
    """

    name: str
    sha256: str | None = None


class Stamp(msgspec.Struct, frozen=True):
    """What made a record or snapshot.

    Attributes:
        qipai_version: the qipai distribution's version (``"0.1.0"``).
        variant: the variant's registered name.
        version: the variant's version (``Manifest.version``).
        spec: the ruleset spec, ``name(key=value, …)`` with the options
            that differ from the defaults (``Ruleset.spec``).
        plugins: the house-rule plugins, in registration order.
    """

    qipai_version: str
    variant: str
    version: str
    spec: str
    plugins: tuple[PluginStamp, ...] = ()


@functools.cache
def qipai_version() -> str:
    """The installed qipai's version (``importlib.metadata``), or
    ``"0+unknown"`` when qipai runs without being installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qipai")
    except PackageNotFoundError:
        return "0+unknown"


def plugin_stamp(plugin: Any) -> PluginStamp:
    """The :class:`PluginStamp` of one plugin object (module, class or
    instance); reads its module's source file."""
    module = plugin if inspect.ismodule(plugin) else inspect.getmodule(plugin)
    modname = getattr(module, "__name__", None) or "?"
    if inspect.ismodule(plugin):
        name = modname
    else:
        target = plugin if inspect.isclass(plugin) or inspect.isfunction(plugin) else type(plugin)
        name = f"{modname}:{getattr(target, '__qualname__', type(plugin).__name__)}"
    digest = None
    path = getattr(module, "__file__", None)
    if path:
        try:
            with open(path, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            digest = None
    return PluginStamp(name=name, sha256=digest)


def plugin_stamps(plugins: Sequence[Any]) -> tuple[PluginStamp, ...]:
    """The stamps of ``plugins``, in order."""
    return tuple(plugin_stamp(p) for p in plugins)


def stamp_of(ruleset: Any) -> Stamp:
    """The stamp of a loaded :class:`~qipai.core.ruleset.Ruleset` (its house
    plugins are those given to :func:`~qipai.core.ruleset.load`)."""
    return Stamp(qipai_version=qipai_version(), variant=ruleset.name,
                 version=ruleset.manifest.version, spec=ruleset.spec,
                 plugins=ruleset.plugin_stamps)


def _plugins_text(plugins: Sequence[PluginStamp]) -> str:
    if not plugins:
        return "none"
    return ", ".join(f"{p.name} (sha256 {p.sha256[:12] if p.sha256 else 'unknown'})"
                     for p in plugins)


def differences(recorded: dict[str, Any], running: Stamp,
                allow_version_mismatch: bool = False) -> list[tuple[str, str, str]]:
    """What differs between the stamps ``recorded`` (a dict with any of the
    keys ``qipai_version``, ``version``, ``spec``, ``plugins``; a value of
    None is not checked — an older record) and ``running``, each as
    ``(what, recorded, running)``."""
    out: list[tuple[str, str, str]] = []
    qv = recorded.get("qipai_version")
    if qv is not None and qv != running.qipai_version and not allow_version_mismatch:
        out.append(("qipai version", qv, running.qipai_version))
    vv = recorded.get("version")
    if vv is not None and vv != running.version:
        out.append(("variant version", f"{running.variant} version {vv}",
                    f"{running.variant} version {running.version}"))
    spec = recorded.get("spec")
    if spec is not None and spec != running.spec:
        out.append(("ruleset", spec, running.spec))
    plugins = recorded.get("plugins")
    if plugins is not None and tuple(plugins) != tuple(running.plugins):
        out.append(("house plugins", _plugins_text(plugins), _plugins_text(running.plugins)))
    return out


def check(subject: str, recorded: dict[str, Any], running: Stamp,
          allow_version_mismatch: bool = False) -> None:
    """Raise :class:`~qipai.core.errors.VersionMismatch` naming every
    difference between ``recorded`` and ``running`` (see
    :func:`differences`); ``subject`` starts the message (``"the record"``)."""
    diff = differences(recorded, running, allow_version_mismatch)
    if diff:
        raise VersionMismatch(subject, diff)


def unstamped_note(recorded: dict[str, Any]) -> str | None:
    """None when ``recorded`` carries the qipai version and the plugins,
    else a one-line note of what could not be checked."""
    missing = [what for key, what in (("qipai_version", "qipai version"),
                                      ("plugins", "house plugins"))
               if recorded.get(key) is None]
    if not missing:
        return None
    return (f"the record names no {' and no '.join(missing)} (made before version stamps); "
            f"replayed under qipai {qipai_version()} as it is")
