"""Sessions: the seed of each hand of a session, files of hands, and the
checks of how a file's hands fit together (``qipai verify``).

A session is one table's hands in the order played: hand *i* of a session
seeded S is dealt from :func:`hand_seed` ``(S, i)`` (``qipai play --seed``,
``qipai simulate``, a server started with ``--seed``), its dealer the
previous hand's ``next_dealer``.

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
    is dealt from :func:`hand_seed` ``(S, i - 1)``, so a hand moved, repeated, dropped from the middle or taken from another
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

import hashlib
from typing import Any

import msgspec

from qipai.core.errors import BadRecord, QipaiError
from qipai.core.fair import Check, deal_bytes
from qipai.core.records import decode_record

__all__ = ["HEADER_KEYS", "decode_file", "hand_seed", "hands_of", "session_checks",
           "session_header"]


def hand_seed(seed: int, index: int) -> int:
    """The 128-bit seed of hand ``index`` (0-based) in a session seeded ``seed``.

    A BLAKE2b hash of the session seed and the index: the hands' seeds are
    independent of one another — knowing hand 0's seed (written in its
    record) does not give hand 1's — and the session seed itself is written
    in no record.  (A session seed that is small can be
    guessed from a record: seeded play is for tests and demos; an unseeded
    session deals from the OS's CSPRNG.)
    """
    data = f"{int(seed)}:{int(index)}".encode()
    digest = hashlib.blake2b(data, digest_size=16, person=b"qipai-hand").digest()
    return int.from_bytes(digest, "big")


# --------------------------------------------------------------------------
# files of hands


def decode_file(data: bytes) -> Any:
    """``data`` (a record, or a file of hands) decoded as JSON, for
    :func:`hands_of` and :func:`session_header`.

    Raises:
        BadRecord: not JSON.
    """
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise BadRecord(f"not a JSON record: {exc}") from None
    except RecursionError:  # msgspec's decoder recurses into nested arrays and objects
        raise BadRecord("not a record: nested too deeply to decode") from None


def hands_of(obj: Any) -> tuple[list[tuple[str, dict[str, Any], Any]], Any]:
    """The hands of a file (``obj``: :func:`decode_file`) and its claimed
    ``total``: one record, or every hand of a file of hands.  Each hand is
    ``(label, entry, record)``: ``"hand 3"`` (``"record"`` alone), the
    file's own entry for it (a ``qipai play --json`` hand's dealer, end,
    winners and net; ``{}`` for a lone record), the decoded record.

    Raises:
        BadRecord: not records.
    """
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


# --------------------------------------------------------------------------
# the session checks


#: The keys of a session file's header: a ``qipai play --json`` output's
#: ``variant``, ``options``, ``seed`` and ``bots``; a server's ``table``.
HEADER_KEYS = ("variant", "options", "seed", "bots", "table")


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
                   plugins: Any = ()) -> list[Check]:
    """How the hands of a file fit together (module docstring, *Session
    checks*): ``session: ruleset``, ``session: seeds``, ``session: order``
    (more than one hand, a header seed, or indexed hands) and ``session:
    repeats`` (more than one hand), each a :class:`~qipai.core.fair.Check`.

    ``header``: :func:`session_header`; ``hands``: :func:`hands_of`
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


def _check(name: str, problems: list[str], ok: str) -> Check:
    """A check failing with the first of ``problems`` (and how many more)."""
    if not problems:
        return Check(f"session: {name}", True, ok)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return Check(f"session: {name}", False, problems[0] + more)


def _ruleset_check(header: dict[str, Any], recs: list[Any]) -> Check:
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


def _seeds_check(header: dict[str, Any], recs: list[Any]) -> Check:
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
                 plugins: Any) -> Check:
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
        from qipai.core.ruleset import load_cached

        first = recs[0]
        try:
            rs = load_cached(first.variant, first.options, plugins=plugins)
            drawn = rs.table(seed=hand_seed(seed, 0)).dealer
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


def _repeats_check(recs: list[Any]) -> Check:
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
