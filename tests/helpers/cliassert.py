"""Assertions on a ``CliRunner`` result shared by the command tests."""

from __future__ import annotations


def one_line_error(res, *words: str) -> None:
    """The command refused its input (exit status 2) in one ``error: …``
    line on stderr holding each of ``words``, with no traceback."""
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in res.output
    for w in words:
        assert w in lines[0], (w, lines[0])
