"""Operator keys of ``qipai serve --keys FILE`` (docs/howto/host-a-table.md, "Keys").

The keys file is JSON, ``{"keys": [{"name": NAME, "sha256": HEX}, …]}``,
written by ``qipai keys new`` (mode 0600): only each key's SHA-256 is
stored — a key is 256 random bits (:func:`secrets.token_urlsafe`), so a
plain hash is enough and costs nothing per request.  A key is sent as
``Authorization: Bearer KEY``; :class:`Keys` maps its hash to its name.

An entry may also hold what checks the seat tokens the operator signs
itself (JWTs, :mod:`qipai.server.identity`): ``"secret"`` (HS256: the
shared signing secret, made by ``qipai keys new`` and printed once — the
file keeps it, as the server must check with it) or ``"public_key"``
(EdDSA: an Ed25519 public key in PEM, ``qipai keys new NAME --public-key
FILE.pem``; the operator keeps the private key).  A file without them (made
before) still loads: its keys sign nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from qipai.core.errors import QipaiError

#: What a key starts with (so a leaked one is recognisable as a qipai key).
PREFIX = "qk_"
#: What a key's name may be.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_HEX = re.compile(r"[0-9a-f]{64}")


class BadKeysFile(QipaiError, ValueError):
    """The keys file cannot be read or does not parse; the message says why."""


def key_hash(key: str) -> str:
    """The SHA-256 (hex) a key is stored as."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


#: The JWT algorithm of each kind of signing material an entry may hold.
ALGORITHMS = {"secret": "HS256", "public_key": "EdDSA"}


def read(path: str | Path) -> dict[str, dict[str, str]]:
    """The keys of ``path``: name → its entry (``sha256``, and ``secret`` or
    ``public_key`` if it signs seat tokens) (:class:`BadKeysFile` if it
    does not parse; a missing file is an error too)."""
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
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BadKeysFile(f'keys file {p}: expected {{"keys": [{{"name", "sha256"}}, …]}}')
    out: dict[str, dict[str, str]] = {}
    for i, e in enumerate(entries):
        if not (isinstance(e, dict) and isinstance(e.get("name"), str)
                and isinstance(e.get("sha256"), str)):
            raise BadKeysFile(f"keys file {p}: entry {i} is not "
                              f'{{"name": NAME, "sha256": HEX}}')
        name, digest = e["name"], e["sha256"]
        if not NAME.fullmatch(name):
            raise BadKeysFile(f"keys file {p}: entry {i}: bad name {name!r}")
        if not _HEX.fullmatch(digest):
            raise BadKeysFile(f"keys file {p}: key {name!r}: sha256 is not 64 hex digits")
        if name in out:
            raise BadKeysFile(f"keys file {p}: the name {name!r} is given twice")
        entry = {"name": name, "sha256": digest}
        signing = [k for k in ALGORITHMS if k in e]
        if len(signing) > 1:
            raise BadKeysFile(f"keys file {p}: key {name!r} has both a secret and a public_key "
                              f"(one or the other)")
        for k in signing:
            if not (isinstance(e[k], str) and e[k]):
                raise BadKeysFile(f"keys file {p}: key {name!r}: {k} is not a string")
            if k == "public_key":
                _public_key(e[k], f"keys file {p}: key {name!r}")
            entry[k] = e[k]
        out[name] = entry
    return out


def _public_key(pem: str, where: str) -> object:
    """The Ed25519 public key of ``pem`` (:class:`BadKeysFile` if it is not one)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(pem.encode())
    except (ValueError, TypeError) as exc:
        raise BadKeysFile(f"{where}: the public key is not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BadKeysFile(f"{where}: the public key is not an Ed25519 key (EdDSA)")
    return key


def _write(path: Path, keys: dict[str, dict[str, str]]) -> None:
    """Write ``keys`` to ``path`` (mode 0600, replaced at once)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"keys": list(keys.values())}, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def new(path: str | Path, name: str, public_key: str | None = None) -> tuple[str, str | None]:
    """Add a key named ``name`` to ``path`` (created if missing): ``(key,
    secret)`` — the key (only its hash is stored) and the HS256 secret it
    signs seat tokens with (stored; None when ``public_key``, an Ed25519
    public key in PEM, is given: its tokens are then signed EdDSA)."""
    p = Path(path)
    if not NAME.fullmatch(name):
        raise BadKeysFile(f"a key's name is 1-64 letters, digits, '_', '.' or '-' "
                          f"(starting with a letter or digit), not {name!r}")
    keys = read(p) if p.exists() else {}
    if name in keys:
        raise BadKeysFile(f"keys file {p} has a key named {name!r} already (revoke it first: "
                          f"qipai keys revoke {name} --file {p})")
    key = PREFIX + secrets.token_urlsafe(32)
    entry = {"name": name, "sha256": key_hash(key)}
    secret = None
    if public_key is not None:
        _public_key(public_key, f"key {name!r}")
        entry["public_key"] = public_key
    else:
        secret = secrets.token_urlsafe(32)
        entry["secret"] = secret
    keys[name] = entry
    _write(p, keys)
    return key, secret


def revoke(path: str | Path, name: str) -> None:
    """Remove the key named ``name`` from ``path``."""
    p = Path(path)
    keys = read(p)
    if name not in keys:
        raise BadKeysFile(f"keys file {p} has no key named {name!r}")
    del keys[name]
    _write(p, keys)


class Keys:
    """The keys a server accepts (re-read by :meth:`reload`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.by_hash: dict[str, str] = {}
        #: name → (JWT algorithm, what checks its signature) of the keys
        #: that sign seat tokens
        self.signers: dict[str, tuple[str, Any]] = {}
        self.reload()

    def reload(self) -> int:
        """Read the file again (:class:`BadKeysFile`: the keys held stay); how many keys."""
        keys = read(self.path)
        signers: dict[str, tuple[str, Any]] = {}
        for n, e in keys.items():
            if "secret" in e:
                signers[n] = (ALGORITHMS["secret"], e["secret"].encode())
            elif "public_key" in e:
                signers[n] = (ALGORITHMS["public_key"], _public_key(e["public_key"], n))
        self.by_hash = {e["sha256"]: n for n, e in keys.items()}
        self.signers = signers
        return len(keys)

    def name(self, key: str) -> str | None:
        """The name of ``key``, or None if it is no key of the file."""
        if not key:
            return None
        h = key_hash(key)
        for stored, name in self.by_hash.items():   # constant time per key held
            if secrets.compare_digest(h, stored):
                return name
        return None
