"""Conformance case files (docs/reference/case-format.md), read and validated.

A file is TOML: ``variant``, optional ``options``, and ``[[cases]]`` each
with ``id``, ``source``, ``check``, optional ``note`` and ``options``, and
the tables ``given`` and ``expect``.  Every case is validated against the
Struct of its check kind (:mod:`qipai.conformance.casespec`): an unknown
check kind, a missing, unknown or misspelt key, or a value of the wrong type
makes the case *malformed*.  A malformed case is still loaded — it fails,
with the reason, when run — so that one bad case does not hide the others;
:func:`qipai.conformance.runner.check_paths` (``qipai conformance --check-cases``) lists them all.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from qipai.conformance.casespec import CASE_TYPES, CHECKS, AnyCase
from qipai.core.errors import BadCase, QipaiError

__all__ = ["CHECKS", "Case", "CaseFile", "Problem", "case_paths", "load_cases", "notation_problems",
           "read_file"]


class Case(msgspec.Struct, frozen=True):
    """One case as the runner uses it: ``given`` and ``expect`` exactly as
    written in the file (validated against the check kind's Struct).
    ``file`` is where it was read; ``problem`` is empty, or why the case is
    malformed (then it fails when run)."""

    id: str
    source: str
    check: str
    given: dict[str, Any] = {}
    expect: dict[str, Any] = {}
    note: str = ""
    options: dict[str, Any] = {}
    file: str = ""
    problem: str = ""


class CaseFile(msgspec.Struct, frozen=True):
    """A case file: the variant, file-wide options, the cases."""

    variant: str
    cases: list[Case]
    options: dict[str, Any] = {}
    file: str = ""


class Problem(msgspec.Struct, frozen=True):
    """A malformed case (or file): where, which case, what is wrong."""

    file: str
    id: str
    message: str

    def line(self) -> str:
        """One line: ``FILE: case ID: MESSAGE`` (``FILE: MESSAGE`` for the file)."""
        return f"{self.file}: case {self.id!r}: {self.message}" if self.id else \
            f"{self.file}: {self.message}"


def _validate(raw: Any) -> str:
    """Why ``raw`` is not a case of the format, or ``""``."""
    if not isinstance(raw, dict):
        return "a case must be a table ([[cases]])"
    check = raw.get("check")
    if check is None:
        return f"no check kind (check = one of {', '.join(CHECKS)})"
    if check not in CASE_TYPES:
        return f"unknown check kind {check!r}; the kinds are {', '.join(CHECKS)}"
    try:
        msgspec.convert(raw, AnyCase)
    except msgspec.ValidationError as exc:
        return f"{check}: {exc}".replace("`$.", "`")
    return ""


def read_file(path: str | Path) -> CaseFile:
    """Read one TOML case file and validate every case in it.

    Raises:
        BadCase: not TOML, or not a case file at all (no ``variant``, no
            ``[[cases]]`` list); the message names the file.  A malformed
            *case* does not raise: it comes back with its ``problem`` set.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadCase(f"{path}: cannot read case file: {exc}") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise BadCase(f"{path}: cannot read case file: nested too deeply to parse") from None
    variant = raw.get("variant")
    if not isinstance(variant, str) or not variant:
        raise BadCase(f"{path}: no variant = \"NAME\" at the top of the file")
    extra = sorted(set(raw) - {"variant", "options", "cases"})
    if extra:
        raise BadCase(f"{path}: unknown top-level keys {extra} (a case file holds variant, "
                      f"options and [[cases]])")
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise BadCase(f"{path}: options must be a table, e.g. options = {{ hubao = true }}")
    items = raw.get("cases")
    if not isinstance(items, list):
        raise BadCase(f"{path}: no [[cases]] in the file")
    cases = []
    for i, c in enumerate(items):
        problem = _validate(c)
        c = c if isinstance(c, dict) else {}
        cid = c.get("id")
        cid = cid if isinstance(cid, str) and cid else f"#{i + 1}"

        def table(key: str) -> dict[str, Any]:
            v = c.get(key, {})
            return v if isinstance(v, dict) else {}

        cases.append(Case(id=cid, source=str(c.get("source", "")), check=str(c.get("check", "")),
                          given=table("given"), expect=table("expect"),
                          note=str(c.get("note", "")), options=table("options"),
                          file=str(path), problem=problem))
    return CaseFile(variant=variant, cases=cases, options=options, file=str(path))


def _looks_like_cases(path: Path) -> bool:
    """False for a TOML file with neither ``variant`` nor ``cases`` (a
    ``pyproject.toml`` beside the cases); unreadable files count as case
    files, so that their error is reported."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return True
    return "variant" in raw or "cases" in raw


def case_paths(path: str | Path) -> list[Path]:
    """The case files at ``path``: the file itself, or the ``*.toml`` files
    of a folder (searched recursively) that hold ``variant`` or ``cases``."""
    p = Path(path)
    if p.is_dir():
        return [f for f in sorted(p.rglob("*.toml")) if _looks_like_cases(f)]
    if p.is_file():
        return [p]
    raise BadCase(f"no case file or folder at {path}")


def load_cases(paths: list[str | Path], variant: str) -> list[tuple[Case, dict[str, Any]]]:
    """Every case of ``variant`` in ``paths``, with its merged options
    (file options, then the case's own over them).

    A case whose id an earlier one has (here, or among the variant's own
    cases) is kept as a malformed case (``problem``): it fails, naming
    both files, and the other cases run.

    Raises:
        BadCase: an unreadable file or a file for another variant.
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
                    case = msgspec.structs.replace(
                        case, problem=f"case id {case.id!r} appears twice ({seen[case.id]} and "
                                      f"{f}): give this case an id of its own")
                else:
                    seen[case.id] = str(f)
                out.append((case, {**cf.options, **case.options}))
    return out


# ------------------------------------------------------------------ notation

#: Keys (of given, expect, and the tables inside them) whose text is cards.
CARD_KEYS = frozenset({"hand", "hands", "tile", "tiles", "card", "cards", "deck", "holding",
                       "stock", "wall", "flipped", "discards"})
_ACTION = re.compile(r"^\s*(\d+)\s+([a-z_]+)\s*(.*)$")
#: Scenario verbs, and those that take cards.
VERBS = frozenset({"discard", "chi", "peng", "minggang", "angang", "jiagang", "hu", "zimo",
                   "pass", "kaizhao", "sao", "saochuan", "guosao"})
_CARD_VERBS = {"discard": 1, "angang": 1, "jiagang": 1}


def _parse(rs: Any, text: Any, where: str) -> str:
    if rs is None:  # the variant is not known here: its notation cannot be read
        return ""
    try:
        rs.parse(text)
    except QipaiError as exc:
        return f"{where}: {exc}"
    return ""


def _walk(rs: Any, value: Any, where: str, out: list[str], cards: bool = False) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(rs, v, f"{where}.{k}", out, cards=k in CARD_KEYS)
    elif isinstance(value, list):
        if cards and all(isinstance(x, str) for x in value) and where.rsplit(".", 1)[-1] in (
                "hands", "discards"):
            for i, x in enumerate(value):
                _walk(rs, x, f"{where}[{i}]", out, cards=True)
        elif cards and all(isinstance(x, str) for x in value):
            problem = _parse(rs, value, where)
            if problem:
                out.append(problem)
        else:
            for i, x in enumerate(value):
                _walk(rs, x, f"{where}[{i}]", out, cards=cards and not isinstance(x, dict))
    elif isinstance(value, str) and cards:
        problem = _parse(rs, value, where)
        if problem:
            out.append(problem)


def _chi_problem(rs: Any, text: str, where: str) -> str:
    body = text.strip().removeprefix("chi")
    for part in body.split("+"):
        problem = _parse(rs, part, where)
        if problem:
            return problem
    return ""


def notation_problems(rs: Any, case: Case) -> list[str]:
    """Every card text of ``case`` that the variant's notation does not
    read, and every scenario action or meld text that is not of the form
    the format gives — one message each, naming the key.  With ``rs`` None
    (the variant is not known) only the forms are checked."""
    out: list[str] = []
    for part in ("given", "expect"):
        _walk(rs, getattr(case, part), part, out)
    for i, text in enumerate(case.given.get("actions", ()) or ()):
        where = f"given.actions[{i}]"
        m = _ACTION.match(text) if isinstance(text, str) else None
        if not m:
            out.append(f"{where}: {text!r} is not \"<seat> <verb> [cards]\"")
            continue
        verb, rest = m.group(2), m.group(3)
        if verb not in VERBS:
            out.append(f"{where}: unknown verb {verb!r}; verbs are {', '.join(sorted(VERBS))}")
        elif verb == "chi" and rest.strip():
            p = _chi_problem(rs, "chi " + rest, where)
            if p:
                out.append(p)
        elif verb in _CARD_VERBS:
            if not rest.strip():
                out.append(f"{where}: {verb} needs its card")
            else:
                p = _parse(rs, rest, where)
                if p:
                    out.append(p)
    for seat, chis in (case.expect.get("legal_chi") or {}).items():
        for j, text in enumerate(chis if isinstance(chis, list) else ()):
            p = _chi_problem(rs, text, f"expect.legal_chi.{seat}[{j}]") \
                if isinstance(text, str) else ""
            if p:
                out.append(p)
    for s, ms in enumerate(case.expect.get("melds") or () if case.check == "view" else ()):
        for j, text in enumerate(ms if isinstance(ms, list) else ()):
            if not isinstance(text, str):
                continue
            toks = text.split()
            where = f"expect.melds[{s}][{j}]"
            if not toks:
                out.append(f"{where}: empty meld text (write \"<kind> <cards>\")")
                continue
            shown = [t for t in toks[1:] if t != "?"]
            if shown:
                p = _parse(rs, " ".join(shown), where)
                if p:
                    out.append(p)
    return out
