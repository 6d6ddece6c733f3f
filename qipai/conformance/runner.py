"""The conformance runner: a variant's cases and the generic properties, run and reported.

:func:`main` (``qipai conformance``) runs a variant's own cases
(:func:`~qipai.conformance.registry.collect`), any extra case files and
the generic property checks (:func:`run_properties`), prints each failure
(case id, source, expected, actual) and a closing line ``N passed, M
failed``; :func:`check_paths` (``qipai conformance --check-cases``) lists
every malformed case of some case files.  Each case is checked by
:func:`~qipai.conformance.checkers.run_case`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from qipai.core.errors import BadCase, BadOption, UnknownVariant
from qipai.conformance.cases import Problem, case_paths, notation_problems, read_file
from qipai.conformance.checkers import Outcome, cards_refused, run_case
from qipai.conformance.guard import PropertyFailure
from qipai.conformance.properties import (
    ASK_ALL, PLAY, PROPERTIES, PROPERTY_NAMES, check_ask_all, check_deck, play_checked,
)
from qipai.conformance.registry import check_variant_name, collect, load_variant


def main(variant: str, cases: Iterable[str] = (), properties: int = 20,
         out: Any = None) -> int:
    """Run the conformance suite of ``variant``; print failures and a closing
    line ``N passed, M failed``.  Returns the exit code (0 only if all pass).

    Raises:
        UnknownVariant, BadCase: the variant or a case file is bad; a
            ruleset string with options (or spaces) instead of a variant's
            name, under which the variant's own cases would not be found.
    """
    from rich.console import Console

    console = out or Console()
    load_variant(variant)  # fail early, with the registry's message
    check_variant_name(variant)
    outcomes = [run_case(variant, c, o) for c, o in collect(variant, cases)]
    outcomes += run_properties(variant, games=properties)
    failed = [o for o in outcomes if not o.passed]
    for o in failed:
        console.print(f"[red]FAIL[/red] {o.id}  [dim]({o.source})[/dim]\n      {o.message}",
                      highlight=False, markup=True)
    passed = len(outcomes) - len(failed)
    console.print(f"{variant}: {len(outcomes)} checks", highlight=False)
    print(f"{passed} passed, {len(failed)} failed")
    return 0 if not failed else 1


def run_properties(variant: str, games: int = 20, seed: int = 0,
                   options: dict[str, Any] | None = None) -> list[Any]:
    """Check the deck, then play ``games`` seeded random hands and check every
    property; one :class:`~qipai.conformance.checkers.Outcome` per property
    (named ``property/<name>``, :data:`PROPERTY_NAMES`).  A hand that raises
    (a variant bug) fails the play property with the seed and the error."""
    rs = load_variant(variant, options or {})
    failures: dict[str, str] = {}
    try:
        check_deck(rs)
    except PropertyFailure as exc:
        failures["deck"] = str(exc)
    finished = 0
    for g in range(games):
        s = seed + g
        try:
            table = play_checked(rs, s)
        except PropertyFailure as exc:
            failures.setdefault(exc.prop or PLAY, f"seed {s}: {exc}")
            if exc.table is None:
                continue
            table = exc.table
        except Exception as exc:  # noqa: BLE001 - a variant's bug, reported with its seed
            failures.setdefault(PLAY, f"seed {s}: the hand raised {type(exc).__name__}: {exc}")
            continue
        finished += 1
        for name, check in PROPERTIES.items():
            if name in failures:
                continue
            try:
                check(table)
            except PropertyFailure as exc:
                failures[name] = f"seed {s}: {exc}"
            except Exception as exc:  # noqa: BLE001
                failures[name] = f"seed {s}: {type(exc).__name__}: {exc}"
        if ASK_ALL not in failures:
            try:
                check_ask_all(rs, s)
            except PropertyFailure as exc:
                failures[ASK_ALL] = f"seed {s}: {exc}"
            except Exception as exc:  # noqa: BLE001
                failures[ASK_ALL] = f"seed {s}: {type(exc).__name__}: {exc}"
    if games and not finished:
        for name in (*PROPERTIES, ASK_ALL):
            failures.setdefault(name, f"not checked: none of the {games} hands finished")
    return [Outcome(f"property/{n}", n not in failures, failures.get(n, ""),
                    "docs/howto/conformance.md; generic invariants") for n in PROPERTY_NAMES]


def check_paths(paths: list[str | Path], load_variant: Any = None
                ) -> tuple[list[Problem], int, list[str]]:
    """Validate every case file at ``paths`` (files or folders): the
    malformed cases, how many cases were read, and notes.

    A case is malformed when its check kind is unknown, a key is missing,
    unknown or of the wrong type, its id repeats an id of the same variant,
    its options are refused by the variant, or a card text, action or meld
    text is not in the variant's notation, or the variant refuses its cards
    or seats (:func:`cards_refused`: a seat out of range, a fifth copy).
    Options, notation, cards and seats are checked
    when ``load_variant(name, options)`` gives the variant's ruleset; for a
    variant it does not know (:class:`UnknownVariant`) only the structure is
    checked, and a note says so.

    Raises:
        BadCase: a path that is neither a case file nor a folder, or a
            folder without case files.
    """
    problems: list[Problem] = []
    notes: list[str] = []
    count = 0
    seen: dict[tuple[str, str], str] = {}
    unknown: set[str] = set()
    for path in paths:
        files = case_paths(path)
        if not files:
            raise BadCase(f"no case files (*.toml) in {path}")
        for f in files:
            try:
                cf = read_file(f)
            except BadCase as exc:
                problems.append(Problem(str(f), "", str(exc).removeprefix(f"{f}: ")))
                continue
            for case in cf.cases:
                count += 1
                key = (cf.variant, case.id)
                if key in seen:  # a malformed first copy holds its id too
                    problems.append(Problem(str(f), case.id,
                                            f"duplicate id (first in {seen[key]})"))
                    continue
                seen[key] = str(f)
                if case.problem:
                    problems.append(Problem(str(f), case.id, case.problem))
                    continue
                rs = None
                if load_variant is not None and cf.variant not in unknown:
                    try:
                        rs = load_variant(cf.variant, {**cf.options, **case.options})
                    except UnknownVariant:
                        unknown.add(cf.variant)
                        notes.append(f"variant {cf.variant!r} is not registered here: the "
                                     f"notation and options of its cases were not checked")
                    except BadOption as exc:
                        problems.append(Problem(str(f), case.id, f"options: {exc}"))
                        continue
                found = notation_problems(rs, case)
                if not found and rs is not None:
                    refused = cards_refused(rs, case)
                    found = [refused] if refused else []
                for msg in found:
                    problems.append(Problem(str(f), case.id, msg))
    return problems, count, notes
