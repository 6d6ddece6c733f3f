"""``qipai replay FILE`` and ``qipai verify RECORD``: records read back and checked.

``replay`` replays each hand against its events and settlement and shows
its payments. ``verify`` makes every check of
:func:`qipai.core.fair.checks`, one line each; for a ``qipai play --json``
output also each hand's ``summary`` (its dealer, end, winners and net
against its record), the session checks (how the hands fit together, below)
and the file's ``total`` (the sum of the hands' net).

Each line is ``ok   NAME: message`` or ``FAIL NAME: message``; a last line
says ``verified`` or how many checks failed.  Exit status 0 when every
check passed, 1 when one failed (bad input — an unreadable file, not a
record, a malformed header — is the command line's one ``error:`` line and
status 2).

Session checks
--------------

A file of hands — a ``qipai play --json`` output (a header ``variant``,
``options``, ``seed``, ``bots``; ``hands``; ``total``), a server's ``GET
/tables/{id}/records`` answer (``table``; ``hands``, each with its index
``hand``; ``total``) or a bare ``{"hands": [...]}`` — is one table's hands in
the order played.  When it holds more than one hand, or carries a header,
verify checks how the hands fit together, each one line:

``session: ruleset``
    every hand's ``variant`` and ``options`` are the header's (a header
    without them, or no header: hand 1's) — a table plays one ruleset.
``session: seeds``
    with a header ``seed`` S (``qipai play --seed S``): hand *i* (1-based)
    is dealt from ``hand_seed(S, i - 1)`` (:func:`qipai.bots.hand_seed`), so
    a hand moved, repeated, dropped from the middle or taken from another
    session sits where its seed is not; with a header seed null (dealt by
    the OS's CSPRNG): every hand's ``rng`` is ``"os"``; with no header seed
    (a server's answer, a bare list): every hand is dealt the same way
    (the same ``rng``).
``session: order``
    each hand's dealer is the previous hand's ``next_dealer`` (as
    :func:`qipai.bots.play_hands` and a hosted table choose it), and no hand
    but the last is unfinished; with a header seed, hand 1's dealer is the
    one the seed draws (``Table(seed=hand_seed(S, 0))``: the variant's first
    dealer); where the hands carry their index ``hand`` (a server's answer),
    the indices are 0, 1, 2, … in order.
``session: repeats`` (more than one hand)
    no two hands share a commitment, a deal or a seed.

What cannot be checked: without a session seed (an OS-dealt session, a
server's answer, a bare list) nothing ties a hand to its place but the
dealers (and a server's indices, which whoever wrote the file could
renumber): hands whose dealers happen to chain can be reordered or
dropped unseen, and a forged ``hand`` index or ``total`` is not caught; a
hand dropped from the *end* is never caught (no header carries a hand
count, and ``total`` is as easily edited); the header's ``bots`` is not
checked (a record holds the actions, not who chose them).  Hands are
compared with each other and with the header only: a player still checks
each hand's commitment against the one shown at its deal.
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
    data = sys.stdin.buffer.read() if record == "-" else _read(record)
    loaded = [load_plugin(p) for p in plugins]
    with _naming(record):
        code = run_verify(data, loaded, allow_version_mismatch)
    sys.exit(code)


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
# verify: the session checks


#: The keys of a session file's header: a ``qipai play --json`` output's
#: ``variant``, ``options``, ``seed`` and ``bots``; a server's ``table``.
HEADER_KEYS = ("variant", "options", "seed", "bots", "table")


def run_verify(data: bytes, plugins: Any = (), allow_version_mismatch: bool = False) -> int:
    """Verify every record in ``data`` (one record, or each hand of a
    ``qipai play --json`` output), and how the hands fit together
    (:func:`session_checks`); print the checks; return the exit status.

    Raises:
        BadRecord: ``data`` is not records, or its header is malformed.
        UnknownVariant, BadOption: a record's variant or options cannot be loaded.
    """
    from qipai.core.fair import checks
    from qipai.core.ruleset import load_cached

    obj = _json_of(data)
    hands, claimed_total = _hands_of(obj)
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


def session_header(obj: Any) -> dict[str, Any] | None:
    """The header of a file of hands (``obj`` decoded JSON): its
    :data:`HEADER_KEYS` that are present (``{}``: a bare list of hands);
    None for a single record.

    Raises:
        BadRecord: a header field is malformed (``variant`` not a string,
            ``options`` not an object, ``seed`` not an integer or null), or
            a hand's index ``hand`` is not an integer, or only some hands
            carry one.
    """
    from qipai.core.errors import BadRecord

    if not isinstance(obj, dict) or not isinstance(obj.get("hands"), list):
        return None
    head = {k: obj[k] for k in HEADER_KEYS if k in obj}
    if "variant" in head and not isinstance(head["variant"], str):
        raise BadRecord(f"the header's variant is {head['variant']!r}, not a variant name "
                        f"(a string)")
    if "options" in head and not isinstance(head["options"], dict):
        raise BadRecord(f"the header's options are {head['options']!r}, not an object")
    if "seed" in head and head["seed"] is not None and type(head["seed"]) is not int:
        raise BadRecord(f"the header's seed is {head['seed']!r}, not an integer or null")
    indexed = [isinstance(h, dict) and "hand" in h for h in obj["hands"]]
    if any(indexed) and not all(indexed):
        i = indexed.index(not indexed[0]) + 1
        raise BadRecord(f"hand {i} {'carries an' if indexed[i - 1] else 'has no'} index "
                        f"(\"hand\"), but hand 1 {'does' if indexed[0] else 'does not'}")
    for i, h in enumerate(obj["hands"], 1):
        if indexed[i - 1] and type(h["hand"]) is not int:
            raise BadRecord(f"hand {i}'s index (\"hand\") is {h['hand']!r}, not an integer")
    return head


def session_checks(header: dict[str, Any], hands: list[tuple[str, dict[str, Any], Any]],
                   plugins: Any = ()) -> list[Any]:
    """How the hands of a file fit together (module docstring, *Session
    checks*): ``session: ruleset``, ``session: seeds``, ``session: order``
    (more than one hand, a header seed, or indexed hands) and ``session:
    repeats`` (more than one hand), each a :class:`~qipai.core.fair.Check`.

    ``header``: :func:`session_header`; ``hands``: as :func:`_records_in`
    (label, the file's own entry for the hand, record), in the file's order.
    ``plugins``: the house-rule plugins (they may draw the first dealer).
    """
    recs = [rec for _, _, rec in hands]
    indices = [entry["hand"] for _, entry, _ in hands if "hand" in entry]
    out = [_ruleset_check(header, recs), _seeds_check(header, recs)]
    if len(recs) > 1 or type(header.get("seed")) is int or indices:
        out.append(_order_check(header, recs, indices, plugins))
    if len(recs) > 1:
        out.append(_repeats_check(recs))
    return out


def _check(name: str, problems: list[str], ok: str) -> Any:
    """A check failing with the first of ``problems`` (and how many more)."""
    from qipai.core.fair import Check

    if not problems:
        return Check(f"session: {name}", True, ok)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return Check(f"session: {name}", False, problems[0] + more)


def _ruleset_check(header: dict[str, Any], recs: list[Any]) -> Any:
    v_from = "the header's" if "variant" in header else "hand 1's"
    o_from = "the header's" if "options" in header else "hand 1's"
    variant = header.get("variant", recs[0].variant)
    options = header.get("options", dict(recs[0].options))
    problems = []
    for i, rec in enumerate(recs, 1):
        if rec.variant != variant:
            problems.append(f"hand {i} is a hand of {rec.variant!r}, but {v_from} variant "
                            f"is {variant!r}")
        elif dict(rec.options) != options:
            got = dict(rec.options)
            keys = sorted(k for k in set(options) | set(got) if options.get(k, ...) != got.get(k, ...))
            said = ", ".join(f"{k} is {_opt(options, k)} in {o_from} options but "
                             f"{_opt(got, k)} in hand {i}'s" for k in keys)
            problems.append(f"hand {i}'s options are not {o_from}: {said}")
    src = "the header's" if "variant" in header or "options" in header else "hand 1's"
    return _check("ruleset", problems, f"every hand is of {src} variant {variant} and options")


def _opt(options: dict[str, Any], key: str) -> str:
    return repr(options[key]) if key in options else "absent"


def _seeds_check(header: dict[str, Any], recs: list[Any]) -> Any:
    from qipai.bots import hand_seed

    problems = []
    if "seed" in header and header["seed"] is not None:
        seed = header["seed"]
        want = [hand_seed(seed, i) for i in range(len(recs))]
        # where a misplaced hand's seed belongs (a hand dropped before it, or
        # another session's hand, may put it past the end of the file)
        place = {hand_seed(seed, j): j for j in range(len(recs) + 64)}
        for i, rec in enumerate(recs, 1):
            if rec.rng != "seeded" or rec.seed is None:
                problems.append(f"hand {i} was not dealt from a seed (rng {rec.rng!r}), but the "
                                f"header says the session was seeded {seed}")
            elif rec.seed != want[i - 1]:
                j = place.get(rec.seed)
                whose = f" (it is the seed of hand {j + 1})" if j is not None else ""
                problems.append(f"hand {i}'s seed is {rec.seed}, but a session seeded {seed} "
                                f"deals hand {i} from hand_seed({seed}, {i - 1}) = "
                                f"{want[i - 1]}{whose}")
        return _check("seeds", problems, f"each hand i is dealt from hand_seed({seed}, i - 1), "
                                         f"its place in a session seeded {seed}")
    if "seed" in header:  # null: every hand dealt by the OS's CSPRNG
        for i, rec in enumerate(recs, 1):
            if rec.seed is not None:
                problems.append(f"the header's seed is null (every hand dealt by the OS's "
                                f"CSPRNG), but hand {i} was dealt from seed {rec.seed}")
            elif rec.rng != "os":
                problems.append(f"the header's seed is null (every hand dealt by the OS's "
                                f"CSPRNG), but hand {i}'s rng is {rec.rng!r}")
        return _check("seeds", problems, "every hand was dealt by the OS's CSPRNG, as the "
                                         "header's null seed says (no seed ties a hand to "
                                         "its place: see session: order)")
    first = recs[0].rng
    for i, rec in enumerate(recs, 1):
        if rec.rng != first:
            problems.append(f"hand {i} was dealt by rng {rec.rng!r}, but hand 1 by {first!r}: "
                            f"a table deals every hand the same way")
    return _check("seeds", problems, f"every hand was dealt the same way (rng {first!r}); the "
                                     f"file names no session seed, so no hand's seed is "
                                     f"checked against its place")


def _order_check(header: dict[str, Any], recs: list[Any], indices: list[int],
                 plugins: Any) -> Any:
    problems = []
    said = []
    for i, index in enumerate(indices, 1):
        want = 0 if i == 1 else indices[i - 2] + 1
        if index != want:
            problems.append(f"hand 1's index is {index}, not 0: the table's first hands are "
                            f"missing" if i == 1 else
                            f"hand {i}'s index is {index}, but the one after hand {i - 1}'s "
                            f"{indices[i - 2]} is {want}: a hand of the table is missing, "
                            f"repeated or out of order")
    if indices:
        said.append(f"the hands are the table's hands 0–{len(indices) - 1} in order")
    seed = header.get("seed")
    if type(seed) is int:
        from qipai.bots import hand_seed
        from qipai.core.errors import QipaiError
        from qipai.core.ruleset import load_cached

        first = recs[0]
        try:
            rs = load_cached(first.variant, first.options, plugins=plugins)
            drawn = rs.table(seed=hand_seed(seed, 0)).state.deal.dealer
        except QipaiError as exc:
            problems.append(f"seed {seed} deals no first hand: {exc}")
        else:
            if first.deal.dealer != drawn:
                problems.append(f"hand 1's dealer is seat {first.deal.dealer}, but seed {seed} "
                                f"draws seat {drawn} for the first hand")
            said.append(f"hand 1's dealer, seat {drawn}, is the one seed {seed} draws")
    for i in range(1, len(recs)):
        prev, rec = recs[i - 1], recs[i]
        if prev.result is None:
            problems.append(f"hand {i} is unfinished, but hand {i + 1} follows it")
        elif rec.deal.dealer != prev.result.next_dealer:
            problems.append(f"hand {i + 1}'s dealer is seat {rec.deal.dealer}, but hand {i}'s "
                            f"next dealer is seat {prev.result.next_dealer}")
    if len(recs) > 1:
        said.append("each next hand's dealer is the previous hand's next dealer")
    return _check("order", problems, "; ".join(said))


def _repeats_check(recs: list[Any]) -> Any:
    from qipai.core.errors import QipaiError
    from qipai.core.fair import deal_bytes

    seen: dict[tuple[str, Any], int] = {}
    problems = []
    for i, rec in enumerate(recs, 1):
        try:
            deal = deal_bytes(rec.deal)
        except QipaiError:  # not a deal of ints: the commitment check says so
            deal = None
        keys = [("commitment", rec.commitment), ("deal", deal), ("seed", rec.seed)]
        for what, key in keys:
            if key is None:
                continue
            j = seen.get((what, key))
            if j is not None:
                shown = {"commitment": f" {key[:16]}…", "deal": "", "seed": f" {key}"}[what]
                problems.append(f"hand {i} repeats hand {j}'s {what}{shown}")
                break
        for what, key in keys:
            if key is not None:
                seen.setdefault((what, key), i)
    return _check("repeats", problems, "no two hands share a commitment, a deal or a seed")
