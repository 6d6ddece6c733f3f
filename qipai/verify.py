"""The body of ``qipai verify RECORD``: every check of
:func:`qipai.core.fair.checks`, one line each; for a ``qipai play --json``
output also each hand's ``summary`` (its dealer, end, winners and net
against its record) and the file's ``total`` (the sum of the hands' net).

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
    from qipai.cli import _records_in, _summary_diff
    from qipai.core.fair import checks
    from qipai.core.ruleset import load_cached

    hands, claimed_total = _records_in(data)
    failed = 0
    total: list[int] | None = None

    def line(ok: bool, text: str) -> None:
        nonlocal failed
        click.echo(f"{'ok  ' if ok else 'FAIL'} {text}")
        failed += not ok

    for label, summary, rec in hands:
        load_cached(rec.variant, rec.options)  # an unknown variant is bad input, not a failure
        prefix = f"{label}: " if len(hands) > 1 else ""
        for c in checks(rec, plugins=plugins, allow_version_mismatch=allow_version_mismatch):
            line(c.ok, f"{prefix}{c.name}: {c.message}")
        if summary:  # a play --json hand: its own dealer/end/winners/net, which readers see
            diff = _summary_diff(summary, rec)
            line(diff is None, f"{prefix}summary: "
                 + (diff or "the hand's dealer, end, winners and net are its record's"))
        if rec.result is not None:
            net = list(rec.result.net)
            total = net if total is None else [a + b for a, b in zip(total, net)]
    if claimed_total is not None:
        line(claimed_total == total,
             f"total: {claimed_total} is the sum of the hands' net" if claimed_total == total
             else f"total: {claimed_total} is not the sum of the hands' net {total}")
    what = f"{len(hands)} hand{'s' if len(hands) != 1 else ''}"
    if failed:
        click.echo(f"not verified: {failed} check{'s' if failed != 1 else ''} failed ({what})")
        return 1
    click.echo(f"verified: {what}; the deal is the committed one and replays to its result")
    return 0
