"""``qipai conformance``: run a variant's conformance cases, or check case files."""

from __future__ import annotations

import sys

import click

from qipai.cli.common import EXIT_DIFFERS, fail


@click.command()
@click.argument("variant", required=False)
@click.option("--cases", "cases", multiple=True, type=click.Path(exists=False),
              help="Case file or directory (repeatable); default: the variant's own cases.")
@click.option("--check-cases", "check", multiple=True, type=click.Path(exists=False),
              metavar="PATH", help="Only validate the case files at PATH (file or directory, "
                                   "repeatable) against the case format; run nothing.")
def conformance(variant: str | None, cases: tuple[str, ...], check: tuple[str, ...]) -> None:
    """Run the conformance cases of VARIANT and the generic property checks.

    With --check-cases, report every malformed case (file, id, what is
    wrong; one line each) and exit 1 if there is any, else print how many
    cases were read.

    \b
    The case format: docs/reference/case-format.md
    """
    if check:
        if variant is not None or cases:
            fail(f"--check-cases only validates files (one PATH per --check-cases); "
                 f"drop {variant or '--cases'!r}, or run it separately")
        from qipai.conformance.registry import ruleset_for
        from qipai.conformance.runner import check_paths

        problems, count, notes = check_paths(list(check), ruleset_for)
        for note in notes:
            click.echo(f"note: {note}", err=True)
        for p in problems:
            click.echo(p.line())
        if problems:
            click.echo(f"{len(problems)} problem(s) in {count} cases", err=True)
            sys.exit(EXIT_DIFFERS)
        click.echo(f"{count} cases, all well-formed")
        return
    if variant is None:
        fail("give a VARIANT to run, or --check-cases PATH to validate case files")
    try:
        from qipai.conformance.runner import main as run_cases
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("qipai.conformance"):
            fail("the conformance runner (qipai.conformance.runner) is not available yet")
        raise
    code = run_cases(variant, list(cases))
    sys.exit(code if isinstance(code, int) else 0)
