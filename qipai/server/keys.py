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

An entry may also hold what checks the seat tokens the operator signs
itself (JWTs, :mod:`qipai.server.identity`): ``"secret"`` (HS256: the
shared signing secret, made by ``qipai keys new`` and printed once — the
file keeps it, as the server must check with it) or ``"public_key"``
(EdDSA: an Ed25519 public key in PEM, ``qipai keys new NAME --public-key
FILE.pem``; the operator keeps the private key).  A file without them (made
before) still loads: its keys sign nothing.

An entry may also hold the key's own webhook (:mod:`qipai.server.webhook`):
``"webhook"``, the absolute http(s) URL its tables' events are POSTed to,
and ``"webhook_secret"``, the secret they are signed with (made by ``qipai
keys new NAME --webhook URL`` or ``qipai keys webhook NAME URL`` and printed
once; the file keeps it, as the server signs with it).  A key without one
has its events sent to ``qipai serve --webhook`` if given (signed with
``QIPAI_WEBHOOK_SECRET``), else only read from ``GET /events``.  A webhook
that is not such a URL, or one without its secret, refuses the file.
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
from qipai.server.hookurl import check_url

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


#: The JWT algorithm of each kind of signing material an entry may hold.
ALGORITHMS = {"secret": "HS256", "public_key": "EdDSA"}


def read(path: str | Path) -> dict[str, dict[str, Any]]:
    """The keys of ``path``: name → its entry (``sha256``; ``secret`` or
    ``public_key`` if it signs seat tokens; its :data:`LIMITS`)
    (:class:`BadKeysFile` if it does not parse; a missing file is an error too)."""
    return {e["name"]: e for e in entries(path)}


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
        signing = [k for k in ALGORITHMS if k in e]
        if len(signing) > 1:
            raise BadKeysFile(f"keys file {p}: key {name!r} has both a secret and a public_key "
                              f"(one or the other)")
        for k in signing:
            if not (isinstance(e[k], str) and e[k]):
                raise BadKeysFile(f"keys file {p}: key {name!r}: {k} is not a string")
            if k == "public_key":
                _public_key(e[k], f"keys file {p}: key {name!r}")
        if "webhook" in e:
            why = check_url(e["webhook"], f"keys file {p}: key {name!r}: webhook")
            if why is not None:
                raise BadKeysFile(why)
            if not (isinstance(e.get("webhook_secret"), str) and e["webhook_secret"]):
                raise BadKeysFile(f"keys file {p}: key {name!r}: a webhook needs its "
                                  f"webhook_secret, a string (qipai keys webhook {name} URL "
                                  f"--file {p} --new-secret makes one)")
        names.add(name)
    return found


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


def _write(path: Path, keys: list[dict]) -> None:
    """Write the entries ``keys`` to ``path`` (mode 0600, replaced at once)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"keys": keys}, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def new(path: str | Path, name: str, public_key: str | None = None,
        limits: dict[str, int] | None = None,
        webhook: str | None = None) -> tuple[str, str | None, str | None]:
    """Add a key named ``name`` to ``path`` (created if missing), with its
    own ``limits`` (:data:`LIMITS` fields; the others: the server's
    defaults) and its own ``webhook`` (an http(s) URL; None: the server's
    ``--webhook``): ``(key, secret, webhook_secret)`` — the key (only its
    hash is stored), the HS256 secret it signs seat tokens with (stored;
    None when ``public_key``, an Ed25519 public key in PEM, is given: its
    tokens are then signed EdDSA) and the secret its webhook's events are
    signed with (stored; None without ``webhook``)."""
    p = Path(path)
    if not NAME.fullmatch(name):
        raise BadKeysFile(f"a key's name is 1-64 letters, digits, '_', '.' or '-' "
                          f"(starting with a letter or digit), not {name!r}")
    keys = entries(p) if p.exists() else []
    if any(e["name"] == name for e in keys):
        raise BadKeysFile(f"keys file {p} has a key named {name!r} already (revoke it first: "
                          f"qipai keys revoke {name} --file {p})")
    if webhook is not None:
        why = check_url(webhook, "--webhook")
        if why is not None:
            raise BadKeysFile(why)
    key = PREFIX + secrets.token_urlsafe(32)
    entry: dict[str, Any] = {"name": name, "sha256": key_hash(key), **_checked(limits or {})}
    secret = None
    if public_key is not None:
        _public_key(public_key, f"key {name!r}")
        entry["public_key"] = public_key
    else:
        secret = secrets.token_urlsafe(32)
        entry["secret"] = secret
    hook_secret = None
    if webhook is not None:
        hook_secret = secrets.token_urlsafe(32)
        entry.update(webhook=webhook, webhook_secret=hook_secret)
    keys.append(entry)
    _write(p, keys)
    return key, secret, hook_secret


def webhooks(path: str | Path) -> dict[str, str]:
    """The keys of ``path`` with a webhook of their own: name → its URL."""
    return {e["name"]: e["webhook"] for e in entries(path) if "webhook" in e}


def set_webhook(path: str | Path, name: str, url: str | None,
                new_secret: bool = False) -> str | None:
    """Set (``url``) or clear (None: the server's ``--webhook`` again) the
    webhook of the key ``name`` in ``path``.  A key given a webhook keeps
    the secret it has (a new one with ``new_secret``) or is given one;
    answers the secret made (None: none made — the one kept, or cleared)."""
    p = Path(path)
    if url is not None:
        why = check_url(url, f"the webhook of key {name!r}")
        if why is not None:
            raise BadKeysFile(why)
    keys = entries(p)
    for e in keys:
        if e["name"] != name:
            continue
        made = None
        if url is None:
            e.pop("webhook", None)
            e.pop("webhook_secret", None)
        else:
            if new_secret or not e.get("webhook_secret"):
                made = e["webhook_secret"] = secrets.token_urlsafe(32)
            e["webhook"] = url
        _write(p, keys)
        return made
    raise BadKeysFile(f"keys file {p} has no key named {name!r}")


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
        #: name → (JWT algorithm, what checks its signature) of the keys
        #: that sign seat tokens
        self.signers: dict[str, tuple[str, Any]] = {}
        #: name → (URL, signing secret) of the keys with a webhook of their own
        self.webhooks: dict[str, tuple[str, bytes]] = {}
        self.reload()

    def reload(self) -> int:
        """Read the file again (:class:`BadKeysFile`: the keys held stay); how many keys."""
        found = entries(self.path)
        signers: dict[str, tuple[str, Any]] = {}
        for e in found:
            if "secret" in e:
                signers[e["name"]] = (ALGORITHMS["secret"], e["secret"].encode())
            elif "public_key" in e:
                signers[e["name"]] = (ALGORITHMS["public_key"],
                                      _public_key(e["public_key"], e["name"]))
        self.by_hash = {e["sha256"]: e["name"] for e in found}
        self.limits = {e["name"]: {f: e[f] for f in LIMITS if f in e} for e in found}
        self.signers = signers
        self.webhooks = {e["name"]: (e["webhook"], e["webhook_secret"].encode())
                         for e in found if "webhook" in e}
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
