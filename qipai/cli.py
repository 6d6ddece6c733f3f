"""The ``qipai`` command line: list variants, let bots play, check replays.

``qipai variants [NAME]`` · ``qipai play [VARIANT] [--seed N] [--hands K] [--bots …] [--json]``
· ``qipai replay FILE`` · ``qipai verify RECORD`` · ``qipai conformance VARIANT [--cases PATH …]``
· ``qipai conformance --check-cases PATH`` · ``qipai schema [--cases]``.

Bad input ends with one ``error: …`` line on stderr and exit status 2; no
traceback.  Heavy modules (the engine, rich) are imported inside the
commands so that ``qipai --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from qipai.core.errors import QipaiError

DEFAULT_VARIANT = "guilin-mahjong"

#: Exit statuses: a replay that differs, bad input (usage, files, records).
EXIT_DIFFERS = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one ``error: …`` line on stderr and exit with ``code``."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


class QipaiGroup(click.Group):
    """The command group; its ``invoke`` is the CLI boundary where the
    library's input errors become one-line messages."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except QipaiError as exc:
            fail(str(exc))
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            fail(f"{where}{exc.strerror or exc}")


@click.group(cls=QipaiGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="qipai", prog_name="qipai")
def cli() -> None:
    """Chinese tile games (桂林麻将 …) on one table engine."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``qipai``, ``python -m qipai``)."""
    cli.main(args=argv, prog_name="qipai")


# --------------------------------------------------------------------------
# variants


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: the variant with every option described (a list of "
                   "variants without NAME).")
def variants(name: str | None, as_json: bool) -> None:
    """List the registered variants with their players and options, or show
    one variant's options: type, allowed values, default, what it means and
    where the rule comes from.

    Example: qipai variants guilin-mahjong
    """
    from qipai.core.ruleset import available, load, parse_spec

    if name is not None:
        vname, given = parse_spec(name)
        if given:
            fail(f"give the variant's name alone ({vname!r}), without options")
        _show_variant(load(vname), as_json)
        return
    loaded: list[tuple[str, Any]] = []
    for vname in sorted(available()):
        try:
            loaded.append((vname, load(vname)))
        except Exception as exc:  # a broken plugin must not hide the others
            loaded.append((vname, exc))
    if as_json:
        import msgspec

        out = [_variant_doc(rs) if not isinstance(rs, Exception)
               else {"name": vname, "error": f"{type(rs).__name__}: {rs}"}
               for vname, rs in loaded]
        click.echo(msgspec.json.encode(out).decode())
        return
    from rich.console import Console
    from rich.table import Table as RichTable

    table = RichTable(title="registered variants")
    for col in ("variant", "title", "family", "players", "options (default)"):
        table.add_column(col)
    for vname, rs in loaded:
        if isinstance(rs, Exception):
            table.add_row(vname, f"cannot load: {type(rs).__name__}: {rs}", "", "", "")
            continue
        m = rs.manifest
        opts = "\n".join(f"{k} = {_literal(v)}" for k, v in rs.options_dict().items())
        table.add_row(vname, m.title, m.family, str(m.players), opts or "—")
    console = Console()
    console.print(table)
    console.print("Each option explained: qipai variants NAME", style="dim")


def _variant_doc(rs: Any) -> dict[str, Any]:
    import msgspec

    from qipai.core.options import describe

    m = rs.manifest
    return {"name": m.name, "title": m.title, "family": m.family, "players": m.players,
            "version": m.version,
            "options": [msgspec.to_builtins(o) for o in describe(m.options_type)]}


def _show_variant(rs: Any, as_json: bool) -> None:
    """One variant and its options, described from the options Struct's metadata."""
    if as_json:
        import msgspec

        click.echo(msgspec.json.encode(_variant_doc(rs)).decode())
        return
    from rich.console import Console
    from rich.text import Text

    from qipai.core.options import describe

    m = rs.manifest
    console = Console(highlight=False)
    family = f" · {m.family}" if m.family else ""
    console.print(Text(f"{m.title} {m.name}", style="bold") + Text(f"{family} · "
                                                                     f"{m.players} players"))
    infos = describe(m.options_type)
    if not infos:
        console.print("no options")
        return
    for o in infos:
        console.print()
        scalar = not isinstance(o.default, (dict, list))
        head = Text(o.name, style="bold") + Text(f"  {o.type}")
        if scalar:
            head += Text(f" · default {_shown(o.default)}")
        console.print(head)
        body = Text("" if scalar else f"default: {_shown(o.default)}\n")
        body += Text(f"allowed: {o.allowed}\n{o.description or '—'}")
        if o.source:
            body += Text(f"\nfrom: {o.source}", style="dim")
        for line in body.wrap(console, max(20, console.width - 4)):
            line.rstrip()
            console.print(Text("    ") + line, soft_wrap=True)
    example = next((f"{o.name}={v!r}" if isinstance(v, str) else f"{o.name}={_literal(v)}"
                    for o in infos for v in _other_values(o)), "")
    console.print()
    console.print(f"Give options as {m.name}(key=value, …)"
                  + (f", e.g. qipai play \"{m.name}({example})\"" if example else ""),
                  soft_wrap=True)


def _other_values(o: Any) -> list[Any]:
    """A value of option ``o`` other than its default, for an example (or none)."""
    if o.choices:
        return [c for c in o.choices if c != o.default][:1]
    if o.type == "bool":
        return [not o.default]
    return []


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return _literal(value)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


# --------------------------------------------------------------------------
# play


@cli.command()
@click.argument("variant", default=DEFAULT_VARIANT, metavar="[VARIANT]")
@click.option("--seed", type=int, default=None,
              help="Seed of the session (shuffles and bots), for tests and demos; without "
                   "it every hand is dealt from the OS's CSPRNG.")
@click.option("--hands", type=click.IntRange(min=1), default=1, show_default=True,
              help="Hands to play at one table; the dealer passes by the rules.")
@click.option("--bots", type=click.Choice(["greedy", "random"]), default="greedy",
              show_default=True, help="Who plays every seat.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (hands with their records) instead of the log.")
@click.option("--commit", is_flag=True,
              help="With --json: commit each hand's deal under a fresh salt and reveal both "
                   "in its record, as a host does (try qipai verify on it).")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="A house-rule plugin layered over the variant: an importable module "
                   "or a .py file (repeatable).")
@click.option("--human", type=int, default=None, metavar="SEAT",
              help="Play seat SEAT yourself in the terminal; bots play the others.")
def play(variant: str, seed: int | None, hands: int, bots: str, as_json: bool,
         commit: bool, plugins: tuple[str, ...], human: int | None) -> None:
    """Let bots play HANDS hands of VARIANT (default guilin-mahjong).

    VARIANT may carry options: 'guilin-mahjong(hubao=false, max_flips=1)'.
    With --human SEAT you play that seat (see qipai.human).
    """
    from qipai.bots import play_hands
    from qipai.core.ruleset import load

    if commit and not as_json:
        fail("--commit needs --json (the committed records are in the JSON)")
    rs = load(variant, plugins=[_load_plugin(p) for p in plugins])
    if human is not None:
        from qipai.cli_human import play_as_human

        return play_as_human(rs, human, seed=seed, hands=hands, bots=bots, as_json=as_json)
    tables = play_hands(rs, hands, seed=seed, bots=bots)
    if as_json:
        _print_json(rs, seed, bots, list(tables), commit)
        return
    from rich.console import Console

    from qipai.text.log import print_hand, print_total

    console = Console(highlight=False)
    dealt = f"seed {seed}" if seed is not None else "dealt by the OS's CSPRNG"
    console.print(f"[bold]{rs.manifest.title} {rs.spec}[/bold] · {dealt} · {bots} bots · "
                  f"{hands} hand{'s' if hands != 1 else ''}")
    import shlex

    if seed is not None:
        extra = "".join(f" --plugin {shlex.quote(p)}" for p in plugins)
        console.print(f"reproduce: qipai play {shlex.quote(rs.spec)} --seed {seed} "
                      f"--hands {hands} --bots {bots}{extra}", style="dim", soft_wrap=True)
    done = []
    for i, table in enumerate(tables, 1):
        print_hand(console, table, i)
        done.append(table)
    print_total(console, done)


def _print_json(rs: Any, seed: int | None, bots: str, tables: list[Any],
                commit: bool = False) -> None:
    import msgspec

    from qipai.core.fair import committed, new_salt
    from qipai.core.records import record_of

    out_hands = []
    total = [0] * rs.manifest.players
    for t in tables:
        r = t.result
        total = [a + b for a, b in zip(total, r.net)]
        out_hands.append({
            "dealer": t.state.dealer, "end": r.end, "winners": list(r.winners),
            "net": list(r.net), "record": msgspec.to_builtins(
                committed(record_of(t), new_salt()) if commit else record_of(t)),
        })
    doc = {"variant": rs.name, "options": rs.options_dict(), "seed": seed, "bots": bots,
           "hands": out_hands, "total": total}
    click.echo(msgspec.json.encode(doc).decode())


# --------------------------------------------------------------------------
# replay


@cli.command()
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
    loaded = [_load_plugin(p) for p in plugins]
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


@cli.command()
@click.argument("record", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="The house-rule plugins the record was played with (repeatable).")
@click.option("--allow-version-mismatch", is_flag=True,
              help="Verify a record made under another qipai version.")
def verify(record: str, plugins: tuple[str, ...], allow_version_mismatch: bool) -> None:
    """Verify a hosted hand's RECORD: its commitment, its replay, its sums.

    Checks that the SHA-256 of the deal and the revealed salt is the
    commitment published at the deal, that the actions replay to the
    recorded events and result under this qipai, that the result sums to
    zero, and what dealt it.  For a file of hands (a `qipai play --json`
    output, a server's records) also the session: one ruleset (the
    header's), each hand's seed at its place, each dealer the previous
    hand's next dealer, no hand twice.  One line per check; exit 0 if all
    pass, 1 if one fails, 2 if RECORD (a file or - for stdin) cannot be
    read or its header is malformed.
    """
    from qipai.verify import run

    data = sys.stdin.buffer.read() if record == "-" else _read(record)
    loaded = [_load_plugin(p) for p in plugins]
    with _naming(record):
        code = run(data, loaded, allow_version_mismatch)
    sys.exit(code)


# --------------------------------------------------------------------------
# plugins


def _load_plugin(spec: str) -> Any:
    """A plugin module from a dotted name or a ``.py`` file (QipaiError if neither)."""
    from qipai.core.ruleset import load_plugin

    return load_plugin(spec)



# --------------------------------------------------------------------------
# replay helpers


def _records_in(data: bytes) -> tuple[list[tuple[str, dict[str, Any], Any]], Any]:
    """The hands in ``data`` and the claimed total: one record, or every
    hand of a ``play --json`` output.  Each hand is (label, summary,
    record), the summary being the output's own dealer/end/winners/net.

    Raises:
        BadRecord: not JSON, or not records.
    """
    return _hands_of(_json_of(data))


def _json_of(data: bytes) -> Any:
    """``data`` decoded as JSON (for :func:`_hands_of`).

    Raises:
        BadRecord: not JSON.
    """
    import msgspec

    from qipai.core.errors import BadRecord

    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise BadRecord(f"not a JSON record: {exc}") from None
    except RecursionError:  # msgspec's decoder recurses into nested arrays and objects
        raise BadRecord("not a record: nested too deeply to decode") from None


def _hands_of(obj: Any) -> tuple[list[tuple[str, dict[str, Any], Any]], Any]:
    """:func:`_records_in` of JSON already decoded.

    Raises:
        BadRecord: not records.
    """
    from qipai.core.errors import BadRecord
    from qipai.core.records import decode_record

    if isinstance(obj, dict) and "hands" in obj:
        hands = obj["hands"]
        if not isinstance(hands, list) or not hands:
            raise BadRecord("a play output needs a non-empty list of hands")
        out = []
        for i, hand in enumerate(hands, 1):
            if not isinstance(hand, dict) or "record" not in hand:
                raise BadRecord(f"hand {i} has no record")
            if not isinstance(hand["record"], dict):
                raise BadRecord(f"hand {i}: a record is a JSON object, not "
                                f"{_json_kind(hand['record'])}")
            try:
                out.append((f"hand {i}", hand, decode_record(hand["record"])))
            except BadRecord as exc:
                raise BadRecord(f"hand {i}: {exc}") from None
        return out, obj.get("total")
    if not isinstance(obj, dict):
        raise BadRecord(f"a record is a JSON object, not {_json_kind(obj)}")
    return [("record", {}, decode_record(obj))], None


def _json_kind(value: Any) -> str:
    """What a decoded JSON value is, in JSON's words: ``an array``, …"""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else "an object"


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
# conformance


@cli.command()
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


@cli.command("new-variant")
@click.argument("name")
@click.option("--family", type=click.Choice(["mahjong", "zipai"]), default="mahjong",
              show_default=True, help="The family whose common flow the variant plays on.")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Where to write the package folder qipai-NAME.")
def new_variant(name: str, family: str, directory: str) -> None:
    """Write the skeleton of a variant plugin package NAME (qipai-NAME/)."""
    from qipai.scaffold import module_name, new_variant as write

    root = write(name, family, directory)
    click.echo(f"wrote {root}/ — variant {name!r}, module {module_name(name)}\n"
               f"next: pip install -e {root}   (or: uv pip install -e {root})\n"
               f"      qipai variants · qipai play {name} · qipai conformance {name}")


# --------------------------------------------------------------------------
# schema


@cli.command()
@click.option("--cases", is_flag=True, help="The schema of a conformance case file instead.")
@click.option("--protocol", is_flag=True,
              help="The game server's WebSocket messages and the per-seat view instead.")
def schema(cases: bool, protocol: bool) -> None:
    """Print the JSON Schema of a game record (the current format version)."""
    import msgspec

    if cases:
        from qipai.conformance.casespec import schema_text

        click.echo(schema_text())
        return
    if protocol:
        from qipai.host.protocol import schema as protocol_schema

        doc = protocol_schema()
    else:
        from qipai.core.records import record_schema

        doc = record_schema()
    click.echo(msgspec.json.format(msgspec.json.encode(doc)).decode())


# --------------------------------------------------------------------------
# serve


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: one the system chooses, printed); taken before "
                   "the database is opened, so a port in use is one error line.")
@click.option("--db", default="sqlite:///qipai.db", show_default=True,
              help="Database URL: sqlite:///FILE (its folder must exist) or "
                   "postgresql://USER@HOST/DB.")
@click.option("--turn-timeout", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="Seconds a seat has for its turn before the default "
                                      "action is played for it.")
@click.option("--claim-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds a seat has to claim or pass a card (default: --turn-timeout).")
@click.option("--seed", type=int, default=None,
              help="Deal every table's hands from this seed (tests and demos only: the "
                   "deals are predictable, and every view and record says so).")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="A house-rule plugin every table uses (repeatable).")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=100.0,
              show_default=True, help="Messages a second one connection may send on average; "
                                      "more are dropped and answered Throttled.")
@click.option("--burst", type=click.FloatRange(min=1), default=200.0, show_default=True,
              help="Messages one connection may send at once above --rate.")
@click.option("--resync-interval", "resync_s", type=click.FloatRange(min=0), default=0.1,
              show_default=True,
              help="Seconds: one connection's resync is answered (a welcome, the whole view) "
                   "at most once in this long; one sooner is answered when it is over, more "
                   "meanwhile are folded into that answer.")
@click.option("--bot-delay", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds the bots wait before answering a turn or a card in play "
                   "(one wait for all the bots asked), so people can follow a table where "
                   "bots play (an all-bot demo: 0.5).")
@click.option("--max-tables", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Open tables the server holds at most; POST /tables beyond is answered "
                   "503 TooManyTables until one is closed.")
@click.option("--max-connections", type=click.IntRange(min=1), default=None,
              help="WebSocket connections the server holds at once; one more upgrade is "
                   "answered 503 TooManyConnections.  [default: 4096, or the descriptor "
                   "limit (ulimit -n) less 256 if lower]")
@click.option("--max-message-bytes", type=click.IntRange(min=256), default=4096,
              show_default=True, help="The largest WebSocket message read; larger ones are "
                                      "answered TooLarge.")
@click.option("--max-body-bytes", type=click.IntRange(min=256), default=64 * 1024,
              show_default=True, help="The largest HTTP request body read; larger ones are "
                                      "answered 413 TooLarge.")
@click.option("--max-replay-bytes", type=click.IntRange(min=1024), default=256 * 1024,
              show_default=True, help="The largest record POST /replay reads (a hand's "
                                      "record is under 50 KiB); larger ones are answered "
                                      "413 TooLarge.")
@click.option("--stall-seconds", "stall_s", type=click.FloatRange(min=0, min_open=True),
              default=10.0, show_default=True,
              help="Seconds a write or a read may wait for the database before GET /health "
                   "answers 503 'stalled' (PostgreSQL, or an SQLite file another program "
                   "holds locked; while a write waits nothing is acknowledged).")
@click.option("--allow-version-mismatch", is_flag=True,
              help="Restore open tables made under another qipai version (the variant "
                   "version, ruleset and plugins must still match).")
def serve(host: str, port: int, db: str, turn_timeout: float, claim_timeout: float | None,
          seed: int | None, plugins: tuple[str, ...], rate: float, burst: float,
          max_message_bytes: int, max_body_bytes: int, allow_version_mismatch: bool,
          max_replay_bytes: int, stall_s: float, resync_s: float, max_tables: int,
          bot_delay: float, max_connections: int | None) -> None:
    """Host tables: HTTP + WebSocket game server with durable tables.

    Open the printed address in a browser (create a table, play, watch,
    replay), or create a table with POST /tables and play it over
    /tables/{id}/ws?token=… (docs: "Host a table").  Open tables are
    restored from the database when the server starts again.
    """
    try:
        from qipai.server.listen import listen, run
        from qipai.server.state import Server
    except ModuleNotFoundError as exc:
        fail(f"qipai serve needs the 'serve' extra (missing module {exc.name!r}): "
             f"pip install 'qipai[serve]'")
    shown = f"[{host}]" if ":" in host else host
    # the port first: one in use is one line, before the database is opened
    # (nothing written) or anything announced; the socket listens from here
    # on, so no other program can take the port before uvicorn serves it
    try:
        sock = listen(host, port)
    except OSError as exc:
        fail(f"cannot listen on {shown}:{port}: {_reason(exc)}")
    try:
        server = Server(db, turn_timeout=turn_timeout, claim_timeout=claim_timeout, seed=seed,
                        plugins=plugins, rate_per_s=rate, burst=burst,
                        max_message_bytes=max_message_bytes, max_body_bytes=max_body_bytes,
                        allow_version_mismatch=allow_version_mismatch,
                        max_replay_bytes=max_replay_bytes, stall_s=stall_s,
                        resync_s=resync_s, max_tables=max_tables, bot_delay=bot_delay,
                        max_connections=max_connections)
    except BaseException:
        sock.close()
        raise
    port = sock.getsockname()[1]   # --port 0: the one the system chose
    dealt = f"seeded {seed} (tests and demos only)" if seed is not None else "OS CSPRNG"
    click.echo(f"qipai serve on http://{shown}:{port} · database {db} · "
               f"{len(server.tables)} open table{'s' if len(server.tables) != 1 else ''} "
               f"restored"
               + (f", {len(server.refused)} refused (above)" if server.refused else "")
               + f" · deals: {dealt}", err=True)
    click.echo(f"open http://{shown}:{port}/ in a browser to create a table and play", err=True)
    run(sock, server)
    # stopped (Ctrl-C; SIGTERM is re-raised by uvicorn and ends the process
    # here already): the shutdown is done — the store closed — but Python's
    # exit would join every worker thread, and one may still wait for a
    # database that does not answer
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _reason(exc: OSError) -> str:
    """An OSError's reason as the end of a line: ``address already in use``."""
    text = exc.strerror or str(exc)
    return text[0].lower() + text[1:] if text[1:2].islower() else text


@cli.command()
@click.argument("url")
@click.option("--auto", is_flag=True, help="Play by itself (win, pass claims, discard the "
                                           "highest card) instead of asking.")
@click.option("--hands", type=click.IntRange(min=1), default=None,
              help="Leave after this many hands (default: until the table closes).")
def connect(url: str, auto: bool, hands: int | None) -> None:
    """Play a seat of a `qipai serve` table in this terminal.

    URL is ws://HOST:PORT/tables/ID/ws?token=TOKEN (a seat's token, or the
    spectator's to watch).
    """
    try:
        from qipai.host.client import run as run_client
        import websockets  # noqa: F401
    except ModuleNotFoundError as exc:
        fail(f"qipai connect needs the 'serve' extra (missing module {exc.name!r}): "
             f"pip install 'qipai[serve]'")
    if not url.startswith(("ws://", "wss://")):   # the page's http:// address, say
        fail(f"{url} is not a seat's WebSocket address: give "
             f"ws://HOST:PORT/tables/ID/ws?token=TOKEN (wss:// over TLS)")
    # the seat's token is not echoed (a terminal's output is pasted, logged)
    shown = re.sub(r"(?<=[?&]token=)[^&#]*", "…", url)

    def hidden(text: str) -> str:
        return text.replace(url, shown)

    try:
        code = run_client(url, auto=auto, hands=hands)
    except (OSError, ValueError) as exc:
        fail(hidden(str(exc)) if url in str(exc) else f"cannot connect to {shown}: {exc}")
    except Exception as exc:  # websockets' own errors (refused handshake, closed)
        said = _refusal_said(exc)
        if said:   # the server refused the upgrade in its own words (TooManyConnections)
            fail(f"{shown}: {said}")
        if type(exc).__module__.startswith("websockets"):
            # some name the URL themselves (InvalidURI): not twice
            fail(hidden(str(exc)) if url in str(exc) else f"{shown}: {exc}")
        raise
    sys.exit(code)


def _refusal_said(exc: BaseException) -> str | None:
    """``"CODE: message"`` of a WebSocket upgrade the server answered with
    its JSON error (``{"error", "message"}``, e.g. 503 TooManyConnections),
    else None."""
    body = getattr(getattr(exc, "response", None), "body", None)
    if not isinstance(body, (bytes, bytearray)):
        return None
    import msgspec

    try:
        got = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not (isinstance(got, dict) and isinstance(got.get("error"), str)
            and isinstance(got.get("message"), str)):
        return None
    return f"{got['error']}: {' '.join(got['message'].split())}"


from qipai.cli_score import score  # noqa: E402  (its body imports the engine when run)

cli.add_command(score)


# --------------------------------------------------------------------------
# simulate, report (qipai.sim)

from qipai.sim.commands import report, simulate  # noqa: E402

cli.add_command(simulate)
cli.add_command(report)


if __name__ == "__main__":  # pragma: no cover
    main()
