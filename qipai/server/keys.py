"""Operator keys of ``qipai serve --keys FILE`` (docs/howto/host-a-table.md, "Keys").

The keys file is JSON, ``{"keys": [{"name": NAME, "sha256": HEX}, …]}``,
written by ``qipai keys new`` (mode 0600): only each key's SHA-256 is
stored — a key is 256 random bits (:func:`secrets.token_urlsafe`), so a
plain hash is enough and costs nothing per request.  A key is sent as
``Authorization: Bearer KEY``; :class:`Keys` maps its hash to its name.

An entry may also hold the key's own limits (:data:`LIMITS`, each a whole
number ≥ 0; ``qipai keys new NAME --max-tables N …``, :mod:`qipai.server.limits`):
a field absent — as in every file written before them — means the
server's default (``qipai serve --key-max-tables N …``).  Fields this
version does not know are kept as they are when the file is rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from pathlib import Path

from qipai.core.errors import QipaiError

#: What a key starts with (so a leaked one is recognisable as a qipai key).
PREFIX = "qk_"
#: What a key's name may be.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_HEX = re.compile(r"[0-9a-f]{64}")
#: The optional per-key limit fields of an entry (whole numbers ≥ 0).
LIMITS = ("max_tables", "tables_per_minute", "max_connections", "max_spectators")


class BadKeysFile(QipaiError, ValueError):
    """The keys file cannot be read or does not parse; the message says why."""


def key_hash(key: str) -> str:
    """The SHA-256 (hex) a key is stored as."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def read(path: str | Path) -> dict[str, str]:
    """The keys of ``path``: name → SHA-256 hex (:class:`BadKeysFile` if it
    does not parse; a missing file is an error too)."""
    return {e["name"]: e["sha256"] for e in entries(path)}


def limits(path: str | Path) -> dict[str, dict[str, int]]:
    """The per-key limits of ``path``: name → {field: N} of the
    :data:`LIMITS` fields its entry sets (none: the server's defaults)."""
    return {e["name"]: {f: e[f] for f in LIMITS if f in e} for e in entries(path)}


def entries(path: str | Path) -> list[dict]:
    """The entries of ``path`` as written, each checked (:class:`BadKeysFile`)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadKeysFile(f"keys file {p}: no such file (make one: qipai keys new NAME "
                          f"--file {p})") from None
    except OSError as exc:
        raise BadKeysFile(f"keys file {p}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadKeysFile(f"keys file {p} is not JSON: {exc}") from None
    found = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(found, list):
        raise BadKeysFile(f'keys file {p}: expected {{"keys": [{{"name", "sha256"}}, …]}}')
    names: set[str] = set()
    for i, e in enumerate(found):
        if not (isinstance(e, dict) and isinstance(e.get("name"), str)
                and isinstance(e.get("sha256"), str)):
            raise BadKeysFile(f"keys file {p}: entry {i} is not "
                              f'{{"name": NAME, "sha256": HEX}}')
        name, digest = e["name"], e["sha256"]
        if not NAME.fullmatch(name):
            raise BadKeysFile(f"keys file {p}: entry {i}: bad name {name!r}")
        if not _HEX.fullmatch(digest):
            raise BadKeysFile(f"keys file {p}: key {name!r}: sha256 is not 64 hex digits")
        if name in names:
            raise BadKeysFile(f"keys file {p}: the name {name!r} is given twice")
        for f in LIMITS:
            if f in e and not (type(e[f]) is int and e[f] >= 0):
                raise BadKeysFile(f"keys file {p}: key {name!r}: {f} is a whole number "
                                  f">= 0, not {e[f]!r}")
        names.add(name)
    return found


def _write(path: Path, keys: list[dict]) -> None:
    """Write the entries ``keys`` to ``path`` (mode 0600, replaced at once)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"keys": keys}, f, indent=2)
            f.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def new(path: str | Path, name: str, limits: dict[str, int] | None = None) -> str:
    """Add a key named ``name`` to ``path`` (created if missing), with its
    own ``limits`` (:data:`LIMITS` fields; the others: the server's
    defaults); the key (only its hash is stored)."""
    p = Path(path)
    if not NAME.fullmatch(name):
        raise BadKeysFile(f"a key's name is 1-64 letters, digits, '_', '.' or '-' "
                          f"(starting with a letter or digit), not {name!r}")
    keys = entries(p) if p.exists() else []
    if any(e["name"] == name for e in keys):
        raise BadKeysFile(f"keys file {p} has a key named {name!r} already (revoke it first: "
                          f"qipai keys revoke {name} --file {p})")
    key = PREFIX + secrets.token_urlsafe(32)
    keys.append({"name": name, "sha256": key_hash(key), **_checked(limits or {})})
    _write(p, keys)
    return key


def set_limits(path: str | Path, name: str, limits: dict[str, int | None]) -> dict[str, int]:
    """Set (a value) or clear (None: the server's default again) limits of
    the key ``name`` in ``path``; its limits now."""
    p = Path(path)
    keys = entries(p)
    for e in keys:
        if e["name"] == name:
            for f, v in limits.items():
                if v is None:
                    e.pop(f, None)
                else:
                    e.update(_checked({f: v}))
            _write(p, keys)
            return {f: e[f] for f in LIMITS if f in e}
    raise BadKeysFile(f"keys file {p} has no key named {name!r}")


def _checked(limits: dict[str, int]) -> dict[str, int]:
    for f, v in limits.items():
        if f not in LIMITS or type(v) is not int or v < 0:
            raise BadKeysFile(f"a key's limit is one of {', '.join(LIMITS)}, a whole number "
                              f">= 0, not {f}={v!r}")
    return dict(limits)


def revoke(path: str | Path, name: str) -> None:
    """Remove the key named ``name`` from ``path``."""
    p = Path(path)
    keys = entries(p)
    if not any(e["name"] == name for e in keys):
        raise BadKeysFile(f"keys file {p} has no key named {name!r}")
    _write(p, [e for e in keys if e["name"] != name])


class Keys:
    """The keys a server accepts (re-read by :meth:`reload`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.by_hash: dict[str, str] = {}
        #: each key's own limits (name → {field: N}; :data:`LIMITS`)
        self.limits: dict[str, dict[str, int]] = {}
        self.reload()

    def reload(self) -> int:
        """Read the file again (:class:`BadKeysFile`: the keys held stay); how many keys."""
        found = entries(self.path)
        self.by_hash = {e["sha256"]: e["name"] for e in found}
        self.limits = {e["name"]: {f: e[f] for f in LIMITS if f in e} for e in found}
        return len(found)

    def name(self, key: str) -> str | None:
        """The name of ``key``, or None if it is no key of the file."""
        if not key:
            return None
        h = key_hash(key)
        for stored, name in self.by_hash.items():   # constant time per key held
            if secrets.compare_digest(h, stored):
                return name
        return None
