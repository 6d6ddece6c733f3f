"""Conformance case files (the format of docs/howto/conformance.md), read into Structs.

A file is TOML: ``variant``, optional ``options``, and ``[[cases]]`` each
with ``id``, ``source``, ``check``, optional ``note`` and ``options``, and
the tables ``given`` and ``expect``.  Keys the format does not name are
allowed (the runner may accept more than the contract), never read
differently.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from qipai.core.errors import BadCase

CHECKS = ("deck", "deal", "win", "waits", "flip", "settle", "claim", "scenario", "view")
Check = Literal["deck", "deal", "win", "waits", "flip", "settle", "claim", "scenario", "view"]


class Case(msgspec.Struct, frozen=True):
    """One case.  ``file`` is where it was read (for messages)."""

    id: str
    source: str
    check: Check
    given: dict[str, Any] = {}
    expect: dict[str, Any] = {}
    note: str = ""
    options: dict[str, Any] = {}
    file: str = ""


class CaseFile(msgspec.Struct, frozen=True):
    """A case file: the variant, file-wide options, the cases."""

    variant: str
    cases: list[Case]
    options: dict[str, Any] = {}


def read_file(path: Path) -> CaseFile:
    """Read one TOML case file.

    Raises:
        BadCase: not TOML, or not of the CONFORMANCE.md shape (the message
            names the file and the bad field).
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadCase(f"{path}: cannot read case file: {exc}") from None
    for i, c in enumerate(raw.get("cases", []) or []):
        if isinstance(c, dict):
            c.setdefault("file", str(path))
            if c.get("check") not in CHECKS:
                raise BadCase(f"{path}: case {c.get('id', i)!r}: unknown check "
                              f"{c.get('check')!r}; checks are {', '.join(CHECKS)}")
    try:
        cf = msgspec.convert(raw, CaseFile)
    except msgspec.ValidationError as exc:
        raise BadCase(f"{path}: {exc}") from None
    return cf


def case_paths(path: str | Path) -> list[Path]:
    """The ``*.toml`` files at ``path`` (a file, or a folder searched recursively)."""
    p = Path(path)
    if p.is_dir():
        return sorted(p.rglob("*.toml"))
    if p.is_file():
        return [p]
    raise BadCase(f"no case file or folder at {path}")


def load_cases(paths: list[str | Path], variant: str) -> list[tuple[Case, dict[str, Any]]]:
    """Every case of ``variant`` in ``paths``, with its merged options
    (file options, then the case's own over them).

    Raises:
        BadCase: an unreadable file, or two cases with one id.
    """
    out: list[tuple[Case, dict[str, Any]]] = []
    seen: dict[str, str] = {}
    for path in paths:
        files = case_paths(path)
        if not files:
            raise BadCase(f"no case files (*.toml) in {path}")
        for f in files:
            cf = read_file(f)
            if cf.variant != variant:
                raise BadCase(f"{f} holds cases for variant {cf.variant!r}, not {variant!r}")
            for case in cf.cases:
                if case.id in seen:
                    raise BadCase(f"case id {case.id!r} appears twice ({seen[case.id]} and {f})")
                seen[case.id] = str(f)
                out.append((case, {**cf.options, **case.options}))
    return out
