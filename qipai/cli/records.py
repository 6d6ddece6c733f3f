"""``qipai replay FILE`` and ``qipai verify RECORD``: records read back and checked.

``replay`` replays each hand against its events and settlement and shows
its payments. ``verify`` makes every check of
:func:`qipai.core.fair.checks`, one line each; for a ``qipai play --json``
output also each hand's ``summary`` (its dealer, end, winners and net
against its record), the session checks (how the hands fit together:
one ruleset, each hand's seed at its place, each dealer the previous
hand's next dealer, no hand twice — :mod:`qipai.core.sessions` says each
and what they cannot see) and the file's ``total`` (the sum of the hands'
net).

Each line is ``ok   NAME: message`` or ``FAIL NAME: message``; a last line
says ``verified`` or how many checks failed.  Exit status 0 when every
check passed, 1 when one failed (bad input — an unreadable file, not a
record, a malformed header — is the command line's one ``error:`` line and
status 2).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click

from qipai.cli.common import EXIT_DIFFERS, fail, load_plugin


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="The house-rule plugins the record was played with (repeatable).")
@click.option("--allow-version-mismatch", is_flag=True,
              help="Replay a record made under another qipai version (the variant version, "
                   "ruleset and plugins must still match).")
def replay(file: str, plugins: tuple[str, ...], allow_version_mismatch: bool) -> None:
    """Replay FILE and check it reproduces its events and settlement.

    FILE is a JSON record, a `qipai play --json` output (every hand is
    checked) or - for stdin.  Exit 0 if identical, 1 at the first
    difference, 2 if FILE cannot be read as records or was made under
    other versions or plugins.
    """
    import msgspec

    from qipai.core.stamps import unstamped_note

    data = sys.stdin.buffer.read() if file == "-" else _read(file)
    with _naming(file):
        hands, total = _records_in(data)
    note = unstamped_note(msgspec.structs.asdict(hands[0][2]))
    if note:
        click.echo(f"warning: {note}", err=True)
    loaded = [load_plugin(p) for p in plugins]
    with _naming(file):
        ok, message = _check_replays(hands, total, plugins=loaded,
                                     allow_version_mismatch=allow_version_mismatch)
    if not ok:
        click.echo(f"replay differs: {message}")
        sys.exit(EXIT_DIFFERS)
    click.echo(f"replay identical: {message}")
    with _naming(file):
        _explain_replays(hands, loaded, allow_version_mismatch)


def _explain_replays(hands: list[tuple[str, dict[str, Any], Any]], plugins: Any,
                     allow_version_mismatch: bool = False) -> None:
    """Under the verdict, each replayed hand's payments with their breakdown
    (a format-1 record has none: the replay's are shown)."""
    from rich.console import Console

    from qipai.core.records import replay as replay_record
    from qipai.text.payments import print_payments

    console = Console(highlight=False)
    for label, _summary, rec in hands:
        table = replay_record(rec, plugins=plugins,
                              allow_version_mismatch=allow_version_mismatch)
        r = table.result
        if r is None:
            continue
        print_payments(console, r.payments, table.ruleset.manifest,
                       title=f"{label}: {r.end}, winners {list(r.winners) or '—'}")


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
    """What is wrong with the records read from ``path`` (``-``: stdin) is
    one error line naming it, as ``qipai report`` names its file:
    ``error: FILE: not a JSON record: …`` — a record that is not one, of a
    variant, options or version this qipai cannot replay.  (A plugin that
    cannot be loaded is not the file's fault: said without it.)"""
    from qipai.core.errors import BadOption, BadRecord, UnknownVariant

    try:
        yield
    except (BadRecord, UnknownVariant, BadOption) as exc:
        fail(f"{'stdin' if path == '-' else path}: {exc}")


@click.command()
@click.argument("record", type=click.Path(dir_okay=False, allow_dash=True), required=False)
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="The house-rule plugins the record was played with (repeatable).")
@click.option("--allow-version-mismatch", is_flag=True,
              help="Verify a record made under another qipai version.")
@click.option("--db", "db", metavar="URL",
              help="Verify the journal's chain in a server's database instead of a RECORD "
                   "(sqlite:///FILE or postgresql://USER@HOST/DB, opened read-only; a server "
                   "may be running): every link of every table's hands and actions "
                   "recomputed, and each hand's end link against the head its stored "
                   "hand_ended event carried, and each stored record (what GET "
                   "/tables/{id}/records serves) against its hand's end link.  The first "
                   "broken link of each table is named.")
@click.option("--table", "table", metavar="ID",
              help="With --db: only this table.")
@click.option("--events", "events", metavar="FILE",
              type=click.Path(dir_okay=False, allow_dash=True),
              help="The events the operator kept (the envelopes as delivered: JSON lines "
                   "of them, a JSON array, or GET /events answers; - for stdin).  Each "
                   "hand's head (with --db: its stored end link) must be the one its "
                   "hand_ended event carried there; with --db every hand and table they "
                   "name must be stored: a chain recomputed after a change, or hands "
                   "removed, is a broken link.")
def verify(record: str | None, plugins: tuple[str, ...], allow_version_mismatch: bool,
           db: str | None, table: str | None, events: str | None) -> None:
    """Verify a hosted hand's RECORD: its commitment, its replay, its sums.

    Checks that the SHA-256 of the deal and the revealed salt is the
    commitment published at the deal, that the actions replay to the
    recorded events and result under this qipai, that the result sums to
    zero, and what dealt it.  For a file of hands (a `qipai play --json`
    output, a server's records) also the session: one ruleset (the
    header's), each hand's seed at its place, each dealer the previous
    hand's next dealer, no hand twice.  A hosted hand's record carries its
    place in the table's tamper-evident journal (its `chain`): its links
    are recomputed from its commitment, actions and net, and each hand of a
    file must start at the previous hand's head.  One line per check; exit
    0 if all pass, 1 if one fails, 2 if RECORD (a file or - for stdin)
    cannot be read or its header is malformed.

    With --db URL (no RECORD): the chain of every table in the database
    (or --table ID's); exit 0 if every link holds, 1 at a broken link, 2
    if the database cannot be read.
    """
    if db is not None and record is not None:
        fail("give a RECORD or --db URL, not both")
    if db is None and table is not None:
        fail("--table goes with --db")
    if db is None and record is None:
        fail("give a RECORD (a file, or - for stdin) or --db URL")
    if events == "-" and record == "-":
        fail("RECORD and --events cannot both be stdin")
    kept = None
    if events is not None:
        from qipai.core.chain import event_heads

        raw = sys.stdin.buffer.read() if events == "-" else _read_or_fail(events)
        try:
            kept = event_heads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            fail(f"{events}: not the events' envelopes: {exc}")
    if db is not None:
        sys.exit(run_verify_db(db, table, kept))
    assert record is not None
    data = sys.stdin.buffer.read() if record == "-" else _read(record)
    loaded = [load_plugin(p) for p in plugins]
    with _naming(record):
        code = run_verify(data, loaded, allow_version_mismatch, kept)
    sys.exit(code)


def _chain_checks(obj: Any, hands: list[tuple[str, dict[str, Any], Any]],
                  kept: dict[str, dict[int, str]] | None = None
                  ) -> list[tuple[str, bool, str]]:
    """The journal's chain checks of the hands of ``obj`` (:func:`qipai.core.chain.file_checks`)."""
    from qipai.core.chain import file_checks

    table = obj.get("table") if isinstance(obj, dict) else None
    raws = []
    for label, entry, _rec in hands:
        raw = entry.get("record") if entry else (obj.get("record", obj) if isinstance(obj, dict)
                                                  else None)
        if isinstance(raw, dict):
            index = entry.get("hand") if entry else None
            raws.append((label, index if type(index) is int else None, raw))
    return file_checks(table if isinstance(table, str) else None, raws, kept)


def _read_or_fail(path: str) -> bytes:
    try:
        return _read(path)
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")


def run_verify_db(url: str, table: str | None = None,
                  kept: dict[str, dict[int, str]] | None = None) -> int:
    """``qipai verify --db``: walk each table's chain (:func:`qipai.core.chain.walk`)
    and the heads its ``hand_ended`` events carried — those stored in the
    database, and those of ``kept`` (table → hand → head: the operator's
    own, :func:`~qipai.core.chain.event_heads`), which win; one line per
    table; return the exit status (2: the database cannot be read).  A
    table of ``kept`` the database does not hold is broken too."""
    from qipai.core.chain import heads_problem, stored_records_problem, stored_rows, walk
    from qipai.host.store.chained import chained_tables
    from qipai.host.store.errors import StoreError

    broken = n = 0
    seen: set[str] = set()
    try:
        for t in chained_tables(url, table):
            n += 1
            problem, head, checked, unchained = walk(
                t.id, t.spec, stored_rows(t.id, t.hands, t.actions))
            if problem is None:
                problem = heads_problem(t.hands, {**t.heads, **(kept or {}).get(t.id, {})})
            if problem is None:   # what GET /tables/{id}/records serves agrees with them
                problem = stored_records_problem(t.id, t.hands)
            before = f"; {unchained} rows before the chain starts" if unchained else ""
            if problem is not None:
                broken += 1
                click.echo(f"FAIL table {t.id}: {problem}")
            else:
                click.echo(f"ok   table {t.id}: {len(t.hands)} hand{'s' if len(t.hands) != 1 else ''}, "
                           f"{checked} links hold"
                           f"{before}; head {head}")
            seen.add(t.id)
    except StoreError as exc:
        fail(str(exc))
    for tid in sorted(set(kept or ()) - seen):
        if table is None or tid == table:
            n += 1
            broken += 1
            click.echo(f"FAIL table {tid}: it is missing: the events kept carry its heads, "
                       f"the database has no table {tid}")
    if broken:
        click.echo(f"not verified: {broken} of {n} table{'s' if n != 1 else ''} broken")
        return 1
    click.echo(f"verified: {n} table{'s' if n != 1 else ''}; every link holds")
    return 0


# --------------------------------------------------------------------------
# replay helpers


def _records_in(data: bytes) -> tuple[list[tuple[str, dict[str, Any], Any]], Any]:
    """The hands in ``data`` and the claimed total: one record, or every
    hand of a ``play --json`` output.  Each hand is (label, summary,
    record), the summary being the output's own dealer/end/winners/net.

    Raises:
        BadRecord: not JSON, or not records.
    """
    from qipai.core.sessions import decode_file, hands_of

    return hands_of(decode_file(data))


def _check_replays(hands: list[tuple[str, dict[str, Any], Any]],
                   claimed_total: Any = None, plugins: Any = (),
                   allow_version_mismatch: bool = False) -> tuple[bool, str]:
    """Replay each record; (True, summary) or (False, the first difference),
    checking also the hands' summaries and ``claimed_total`` if given.

    Raises:
        QipaiError: a record's variant or options cannot be loaded (bad input).
    """
    from qipai.core.errors import ReplayDiverged
    from qipai.core.records import replay_check
    from qipai.core.ruleset import load_cached

    n_actions = 0
    total: list[int] | None = None
    for label, summary, rec in hands:
        load_cached(rec.variant, rec.options)  # unknown variant / options: bad input, not a difference
        try:
            diff = replay_check(rec, plugins=plugins,
                                allow_version_mismatch=allow_version_mismatch)
        except ReplayDiverged as exc:
            return False, f"{label}: {exc}"
        if diff is not None:
            return False, f"{label}: {diff}"
        diff = _summary_diff(summary, rec)
        if diff is not None:
            return False, f"{label}: {diff}"
        if rec.result is not None:
            net = list(rec.result.net)
            total = net if total is None else [a + b for a, b in zip(total, net)]
        n_actions += len(rec.actions)
    if claimed_total is not None and claimed_total != total:
        return False, f"total {claimed_total} is not the sum of the hands' net {total}"
    rec = hands[0][2]
    what = f"{len(hands)} hand{'s' if len(hands) != 1 else ''} of {rec.variant}"
    open_hands = [label for label, _, r in hands if r.result is None]
    if not open_hands:
        return True, f"{what}, {n_actions} actions; events and settlement match"
    if len(open_hands) == len(hands):
        return True, (f"{what}, {n_actions} actions; events match; unfinished (no result): "
                      f"no settlement to compare")
    return True, (f"{what}, {n_actions} actions; events match, and the settlement of each "
                  f"finished hand; unfinished (no result): {', '.join(open_hands)}")


def _summary_diff(summary: dict[str, Any], rec: Any) -> str | None:
    """A ``play --json`` hand's own dealer/end/winners/net against its record."""
    result = rec.result
    fields = [("dealer", rec.deal.dealer)]
    if result is not None:
        fields += [("end", result.end), ("winners", list(result.winners)),
                   ("net", list(result.net))]
    for key, want in fields:
        if key in summary and summary[key] != want:
            return f"{key} is {summary[key]!r} but the record's result has {want!r}"
    return None


# --------------------------------------------------------------------------
# verify


def run_verify(data: bytes, plugins: Any = (), allow_version_mismatch: bool = False,
               kept: dict[str, dict[int, str]] | None = None) -> int:
    """Verify every record in ``data`` (one record, or each hand of a
    ``qipai play --json`` output), and how the hands fit together
    (:func:`~qipai.core.sessions.session_checks`); print the checks; return
    the exit status.

    Raises:
        BadRecord: ``data`` is not records, or its header is malformed.
        UnknownVariant, BadOption: a record's variant or options cannot be loaded.
    """
    from qipai.core.fair import checks
    from qipai.core.ruleset import load_cached
    from qipai.core.sessions import decode_file, hands_of, session_checks, session_header

    obj = decode_file(data)
    hands, claimed_total = hands_of(obj)
    header = session_header(obj)
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
    for label, ok, text in _chain_checks(obj, hands, kept):
        line(ok, f"{label + ': ' if len(hands) > 1 else ''}{text}")
    if header is not None and (len(hands) > 1 or header):
        for c in session_checks(header, hands, plugins=plugins):
            line(c.ok, f"{c.name}: {c.message}")
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
