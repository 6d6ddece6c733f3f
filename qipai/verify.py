"""The body of ``qipai verify RECORD``: every check of
:func:`qipai.core.fair.checks`, one line each.

Each line is ``ok   NAME: message`` or ``FAIL NAME: message``; a last line
says ``verified`` or how many checks failed.  Exit status 0 when every
check passed, 1 when one failed (bad input — an unreadable file, not a
record — is the command line's one ``error:`` line and status 2).
"""

from __future__ import annotations

from typing import Any

import click


def run(data: bytes, plugins: Any = (), allow_version_mismatch: bool = False) -> int:
    """Verify every record in ``data`` (one record, or each hand of a
    ``qipai play --json`` output); print the checks; return the exit status.

    Raises:
        BadRecord: ``data`` is not records.
        UnknownVariant, BadOption: a record's variant or options cannot be loaded.
    """
    from qipai.cli import _records_in
    from qipai.core.fair import checks
    from qipai.core.ruleset import load_cached

    hands, _ = _records_in(data)
    failed = 0
    for label, _summary, rec in hands:
        load_cached(rec.variant, rec.options)  # an unknown variant is bad input, not a failure
        prefix = f"{label}: " if len(hands) > 1 else ""
        for c in checks(rec, plugins=plugins, allow_version_mismatch=allow_version_mismatch):
            click.echo(f"{'ok  ' if c.ok else 'FAIL'} {prefix}{c.name}: {c.message}")
            failed += not c.ok
    what = f"{len(hands)} hand{'s' if len(hands) != 1 else ''}"
    if failed:
        click.echo(f"not verified: {failed} check{'s' if failed != 1 else ''} failed ({what})")
        return 1
    click.echo(f"verified: {what}; the deal is the committed one and replays to its result")
    return 0
