"""A tamper-evident journal: every stored hand and action of a hosted table
is chained by SHA-256 to the one before it.

A server keeps each table's rows in one chain, in the order it writes
them: the table's *genesis*, then for each hand its **hand** link (the hand
row: its index and commitment), one **action** link per action (in
``seq`` order), and its **end** link (its net, once the hand is over or
closed unfinished) — then the next hand's.  Each link is::

    link = hex(SHA-256(prev ‖ body))

``prev`` the previous link's 32 raw bytes (the genesis's ``prev`` is 32
zero bytes), ``body`` the UTF-8 of a JSON array, no whitespace, object keys
sorted (``json.dumps(body, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)``), one of::

    ["table", TABLE_ID, SPEC]                     the genesis (no row: recomputed)
    ["hand", TABLE_ID, HAND, COMMITMENT]          qipai_hands.link
    ["action", TABLE_ID, HAND, SEQ, ACTION, TIMEOUT, TUOGUAN]
                                                  qipai_actions.link
    ["end", TABLE_ID, HAND, NET, MONEY]           qipai_hands.end_link

``TABLE_ID``, ``SPEC`` (the table's ruleset spec, as a record's ``spec``)
and ``COMMITMENT`` (64 lowercase hex digits) are strings; ``HAND`` and
``SEQ`` integers; ``ACTION`` the action's JSON object (``{"card":…,
"seat":…,"type":"discard"}``, every field, defaults included, as a record
holds it); ``TIMEOUT`` and ``TUOGUAN`` ``true``/``false`` (the server
played it on a timeout; the table's bot played it for a seat in 托管);
``NET`` the hand's net per seat (a list of integers, 子), or ``null`` for a
hand closed before its end; ``MONEY`` — a table with a stake's finished
hand — ``{"house": H, "net": [N, …]}``, its money net per seat after the
rake and the house's take (minor units: the record's ``money.net`` and
``money.house``, ``qipai_hands.money``), else ``null``.  In Python, a hand of a record ``r`` (``GET
/tables/{id}/records``, ``r["chain"]`` its ``table``, ``hand``, ``prev``
and ``head``)::

    import hashlib, json
    def link(prev, *body):
        b = json.dumps(list(body), sort_keys=True, separators=(",", ":"),
                       ensure_ascii=False).encode()
        return hashlib.sha256(bytes.fromhex(prev) + b).hexdigest()
    c = r["chain"]; t, h = c["table"], c["hand"]
    x = link(c["prev"], "hand", t, h, r["commitment"])
    for i, a in enumerate(r["actions"]):
        x = link(x, "action", t, h, i, a, i in r["timeouts"], i in r.get("tuoguan", []))
    m = r.get("money")
    x = link(x, "end", t, h, r["result"]["net"] if r["result"] else None,
             {"house": m["house"], "net": m["net"]} if m else None)
    assert x == c["head"]

What it proves: a row changed, removed, added or moved after it was
written breaks the link where it stands (and the chain does not reach a
head published earlier: the ``hand_ended`` event carries it).  What it
does not: someone who can write the database can recompute every link
after the one he changed — only a head kept outside it (the operator's
events) shows that.  A hand's record and result are not hashed
themselves: the deal is bound by the commitment, the play by the actions,
the 子 and the money by the end link, and ``qipai verify`` replays the
rest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

#: The ``prev`` of a table's genesis: 32 zero bytes, as hex.
ZERO = "0" * 64

_encode = msgspec.json.Encoder(order="sorted").encode
_HEX64 = re.compile(r"[0-9a-f]{64}")


def link(prev: str, body: list[Any]) -> str:
    """The link after ``prev`` (64 hex digits) of ``body`` (a JSON array:
    builtins or msgspec Structs): hex SHA-256 of ``prev``'s 32 bytes and
    the body's canonical JSON (module docstring).

    Raises:
        ValueError: ``prev`` is not hex.
    """
    return hashlib.sha256(bytes.fromhex(prev) + _encode(body)).hexdigest()


def genesis(table_id: str, spec: str) -> str:
    """A table's first link: ``["table", TABLE_ID, SPEC]`` after :data:`ZERO`."""
    return link(ZERO, ["table", table_id, spec])


def hand_link(prev: str, table_id: str, hand: int, commitment: str) -> str:
    """The link of hand ``hand``'s row (``qipai_hands.link``)."""
    return link(prev, ["hand", table_id, hand, commitment])


def action_link(prev: str, table_id: str, hand: int, seq: int, action: Any,
                timeout: bool, tuoguan: bool) -> str:
    """The link of action ``seq`` of hand ``hand`` (``qipai_actions.link``;
    ``action`` an :data:`~qipai.core.model.Action` or its JSON object)."""
    return link(prev, ["action", table_id, hand, seq, action, bool(timeout), bool(tuoguan)])


def end_link(prev: str, table_id: str, hand: int, net: list[int] | None,
             money: dict[str, Any] | None = None) -> str:
    """The link of hand ``hand``'s end (``qipai_hands.end_link``): its net,
    or None for a hand closed before its end; ``money``, a table with a
    stake's: ``{"house": H, "net": [...]}`` (:func:`money_body`), else None."""
    return link(prev, ["end", table_id, hand, None if net is None else list(net), money])


def money_body(money: Any) -> dict[str, Any] | None:
    """The ``MONEY`` of an end link from a hand's money — a
    :class:`~qipai.core.money.Money`, its JSON object (a record's
    ``money``) or ``qipai_hands.money``'s — or None (no stake)."""
    if money is None:
        return None
    if isinstance(money, dict):
        return {"house": money["house"], "net": list(money["net"])}
    return {"house": money.house, "net": list(money.net)}


def is_link(value: Any) -> bool:
    """Whether ``value`` is a link: 64 lowercase hex digits."""
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


class Chain(msgspec.Struct, kw_only=True):
    """Where a hand stands in its table's chain (a record's ``chain``).

    Attributes:
        table: the table id.  hand: the hand's index at the table.
        prev: the link before the hand's own (the table's genesis for
            hand 0, else the previous hand's ``head``).
        head: the hand's end link — the table's chain head once it ended.
    """

    table: str
    hand: int
    prev: str
    head: str


def record_links(chain: Chain, record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The links of a record's hand, recomputed from ``chain.prev``: a
    ``(what, link)`` per link — ``("hand", …)``, ``("action 0", …)``, …,
    ``("end", …)``.  ``record``: the record's JSON object (its
    ``commitment``, ``actions``, ``timeouts``, ``tuoguan`` and ``result``).

    Raises:
        ValueError, TypeError, KeyError: a field is missing or malformed.
    """
    t, h = chain.table, chain.hand
    x = hand_link(chain.prev, t, h, record["commitment"])
    yield "hand", x
    outs = set(record.get("timeouts") or ())
    tgs = set(record.get("tuoguan") or ())
    for i, a in enumerate(record["actions"]):
        x = action_link(x, t, h, i, a, i in outs, i in tgs)
        yield f"action {i}", x
    result = record.get("result")
    yield "end", end_link(x, t, h, result["net"] if result is not None else None,
                          money_body(record.get("money")))


def record_problem(record: dict[str, Any]) -> str | None:
    """None when the record's ``chain`` reaches its ``head`` from its
    ``prev`` through the hand's commitment, actions and net; else why not.
    (A record without ``chain``: ``"not chained"``.)"""
    raw = record.get("chain")
    if raw is None:
        return "the record carries no chain (made before links, or not hosted)"
    try:
        chain = msgspec.convert(raw, Chain)
        if not (is_link(chain.prev) and is_link(chain.head)):
            return "its chain's prev and head are not links (64 lowercase hex digits)"
        last = ""
        for _what, last in record_links(chain, record):
            pass
    except (msgspec.ValidationError, ValueError, TypeError, KeyError) as exc:
        return f"its chain cannot be recomputed: {exc}"
    if last != chain.head:
        return (f"hand {chain.hand}'s links from its prev {chain.prev[:12]}… through its "
                f"commitment, {len(record['actions'])} actions and net end at "
                f"{last[:12]}…, not its head {chain.head[:12]}…: one of them was changed "
                f"after it was chained")
    return None


class Row(msgspec.Struct, frozen=True):
    """One chained row as stored, for :func:`walk`: ``what`` names it
    (``"hand 3"``, ``"hand 3, action 5"``, ``"hand 3's end"``), ``body``
    its link's body, ``link`` the stored link (None: the row has none);
    ``problem``: what is wrong before its link is looked at (a row that
    does not read, an action missing before it)."""

    what: str
    body: list[Any]
    link: str | None
    problem: str | None = None


def stored_rows(table_id: str, hands: list[dict[str, Any]],
                actions: dict[int, list[dict[str, Any]]]) -> Iterator[Row]:
    """A table's database rows (``qipai_hands`` rows in hand order, each
    hand's ``qipai_actions`` rows in ``seq`` order, as dicts of their
    columns) as :class:`Row` s in chain order, for :func:`walk`."""
    expect = None
    for h in hands:
        n = h["hand"]
        if expect is not None and n != expect:
            yield Row(f"hand {n}", [], h.get("link"),
                      f"hand {n}: follows hand {expect - 1}; hand {expect} is missing")
            return
        expect = n + 1
        yield Row(f"hand {n}", ["hand", table_id, n, h["commitment"]], h.get("link"))
        for i, a in enumerate(actions.get(n, ())):
            what = f"hand {n}, action {i}"
            if a["seq"] != i:
                yield Row(what, [], a.get("link"),
                          f"{what} is missing: the next stored is action {a['seq']}")
                return
            try:
                body = json.loads(a["action"])
            except (TypeError, ValueError):
                yield Row(what, [], a.get("link"), f"{what}: its action is not JSON")
                return
            yield Row(what, ["action", table_id, n, i, body, bool(a["timeout"]),
                             bool(a.get("tuoguan"))], a.get("link"))
        if h.get("end_link") is not None or h.get("record") is not None:
            try:
                net = json.loads(h["net"]) if h.get("net") is not None else None
                money = money_body(json.loads(h["money"])) if h.get("money") else None
            except (TypeError, ValueError, KeyError):
                yield Row(f"hand {n}'s end", [], h.get("end_link"),
                          f"hand {n}'s end: its net or money does not read")
                return
            yield Row(f"hand {n}'s end", ["end", table_id, n, net, money], h.get("end_link"))


def walk(table_id: str, spec: str, rows: Iterable[Row]) -> tuple[str | None, str, int, int]:
    """Check a table's stored rows in chain order against their links.

    Rows before the first with a link are not chained (made before links):
    skipped; the first linked row follows the genesis or the last link
    seen.  After it every row must carry its link.

    Returns ``(problem, head, checked, unchained)``: the first broken link
    (None: none), the last good link (the genesis if none), the links
    checked and the rows skipped before the chain starts."""
    head = genesis(table_id, spec)
    started = False
    checked = unchained = 0
    for r in rows:
        if r.problem is not None:
            return r.problem, head, checked, unchained
        if r.link is None:
            if started:
                return (f"{r.what}: its link is missing (NULL) though the chain started before "
                        f"it: the row was rewritten"), head, checked, unchained
            unchained += 1
            continue
        started = True
        try:
            want = link(head, r.body)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            return f"{r.what}: its row does not read ({exc})", head, checked, unchained
        if r.link != want:
            return (f"{r.what}: its link {r.link[:12]}… is not the chain's {want[:12]}… — "
                    f"the row, or one before it, was changed, removed or moved"), \
                head, checked, unchained
        head = want
        checked += 1
    return None, head, checked, unchained


def heads_problem(hands: list[dict[str, Any]], heads: dict[int, Any]) -> str | None:
    """The first finished hand whose stored ``end_link`` is not the head
    its ``hand_ended`` event carried (``heads``: hand → that head, None
    when the event carried none); None when each agrees.  (Links recomputed
    after a change match each other but no longer the heads published.)"""
    stored = {h["hand"] for h in hands}
    for n in sorted(heads):
        if n not in stored and heads[n] is not None:
            return (f"hand {n} is missing: its hand_ended event carried the head "
                    f"{str(heads[n])[:12]}…, the database has no hand {n}")
    for h in hands:
        told = heads.get(h["hand"])
        if told is not None and h.get("end_link") != told:
            return (f"hand {h['hand']}'s end: its link {str(h.get('end_link'))[:12]}… is not "
                    f"the head {str(told)[:12]}… its hand_ended event carried: the chain was "
                    f"recomputed after a change")
    return None


def stored_records_problem(table_id: str, hands: list[dict[str, Any]]) -> str | None:
    """The first hand whose stored record (``qipai_hands.record``, what
    ``GET /tables/{id}/records`` serves) does not agree with the chained
    rows: its ``chain`` must be this table's and hand's, its links from
    ``prev`` through its own commitment, actions and net (and money) must
    reach its ``head`` (:func:`record_problem`), and that head must be the
    hand's stored ``end_link``.  None when every record agrees (a record
    without ``chain``, or a row without ``end_link``, is not looked at:
    made before links).  What the chain does not hold — a record's deal
    and salt, its money's payment and rake lines, its joint parts — is
    ``qipai verify RECORD``'s to check."""
    for h in hands:
        raw, end = h.get("record"), h.get("end_link")
        if raw is None or end is None:
            continue
        what = f"hand {h['hand']}'s stored record"
        try:
            rec = json.loads(raw)
        except (TypeError, ValueError):
            return f"{what} is not JSON"
        if not isinstance(rec, dict) or rec.get("chain") is None:
            continue
        c = rec["chain"]
        if not isinstance(c, dict) or c.get("table") != table_id or c.get("hand") != h["hand"]:
            return f"{what}: its chain is not table {table_id}'s hand {h['hand']}'s"
        problem = record_problem(rec)
        if problem is not None:
            return f"{what}: {problem}"
        if c.get("head") != end:
            return (f"{what}: its head {str(c.get('head'))[:12]}… is not the hand's stored "
                    f"end link {end[:12]}…: the record was changed after it was chained")
    return None


def event_heads(data: bytes) -> dict[str, dict[int, str]]:
    """The heads an operator kept: table → hand → the ``chain`` of its
    ``hand_ended`` event, from ``data`` — the envelopes as delivered: JSON
    lines of them (a webhook's log), a JSON array of them, or ``GET
    /events`` answers (``{"events": [...]}``, one or one a line).  Other
    kinds, and an event without ``chain``, are skipped.

    Raises:
        ValueError: ``data`` is not JSON of envelopes.
    """
    text = data.decode("utf-8")
    try:
        docs = [json.loads(text)]
    except ValueError:
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    envelopes: list[Any] = []
    for d in docs:
        if isinstance(d, dict) and isinstance(d.get("events"), list):
            envelopes += d["events"]
        elif isinstance(d, list):
            envelopes += d
        else:
            envelopes.append(d)
    out: dict[str, dict[int, str]] = {}
    for e in envelopes:
        if not isinstance(e, dict) or "kind" not in e:
            raise ValueError("not an event envelope (an object with id, kind, table, data)")
        if e["kind"] != "hand_ended":
            continue
        data_ = e.get("data") or {}
        head = data_.get("chain")
        if is_link(head) and isinstance(e.get("table"), str) and type(data_.get("hand")) is int:
            out.setdefault(e["table"], {})[data_["hand"]] = head
    return out


def file_checks(table_id: str | None, hands: list[tuple[str, int | None, dict[str, Any]]],
                kept: dict[str, dict[int, str]] | None = None) -> list[tuple[str, bool, str]]:
    """``qipai verify``'s chain checks of a file of hands: ``hands`` is
    ``(label, index, record)`` per hand in the file's order (``index`` the
    file's ``hand`` or None, ``record`` its JSON object); ``table_id`` the
    file's ``table`` (None: not given).  Answers ``(label, ok, message)``
    per check: each chained hand's links reach its head
    (:func:`record_problem`) and it is the file's table's hand at its
    place; each hand starts at the previous hand's head (hand 0 at the
    table's genesis); with ``kept`` (:func:`event_heads`), each hand's head
    is the one its ``hand_ended`` event carried there.  Hands without a
    chain are skipped (made before links, or not hosted); none chained: no
    check."""
    out: list[tuple[str, bool, str]] = []
    prev_head: str | None = None
    prev_hand: int | None = None
    for label, index, rec in hands:
        raw = rec.get("chain")
        if raw is None:
            prev_head = prev_hand = None
            continue
        problem = record_problem(rec)
        c = None
        if problem is None:
            c = msgspec.convert(raw, Chain)
            if table_id is not None and c.table != table_id:
                problem = f"its chain is table {c.table}'s, not the file's table {table_id}'s"
            elif index is not None and c.hand != index:
                problem = f"its chain is hand {c.hand}'s, not hand {index}'s: hands were swapped"
            elif c.hand == 0 and isinstance(rec.get("spec"), str) and \
                    c.prev != genesis(c.table, rec["spec"]):
                problem = "hand 0 does not start at its table's genesis"
            elif prev_hand is not None and c.hand != prev_hand + 1:
                problem = (f"hand {c.hand} follows hand {prev_hand}: hands were swapped or "
                           f"removed")
            elif prev_head is not None and c.prev != prev_head:
                problem = (f"it does not start at hand {prev_hand}'s head: a hand was "
                           f"changed, swapped or removed")
            elif (kept or {}).get(c.table, {}).get(c.hand, c.head) != c.head:
                problem = (f"its head {c.head[:12]}… is not the head "
                           f"{kept[c.table][c.hand][:12]}… its hand_ended event carried "
                           f"(the events kept): the hand was changed after")
        if problem is not None:
            out.append((label, False, f"chain: {problem}"))
            prev_head, prev_hand = (c.head, c.hand) if c is not None else (None, None)
            continue
        assert c is not None
        out.append((label, True, f"chain: {len(rec['actions'])} actions chained from "
                                 f"{c.prev[:12]}… to the head {c.head}"))
        prev_head, prev_hand = c.head, c.hand
    return out
