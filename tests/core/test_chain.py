"""Issue 36, item 4: the journal's chain (qipai.core.chain) — the links as
documented, and any change, removal, insertion or swap of a chained
sequence caught at the first row it touches."""

from __future__ import annotations

import hashlib
import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qipai.core import chain
from qipai.core.model import Chi, Discard, Pass


def _doc_link(prev: str, *body: object) -> str:
    """The module docstring's recipe, in plain Python."""
    b = json.dumps(list(body), sort_keys=True, separators=(",", ":"),
                   ensure_ascii=False).encode()
    return hashlib.sha256(bytes.fromhex(prev) + b).hexdigest()


def test_the_links_are_the_documented_bytes() -> None:
    g = chain.genesis("abc123", 'guilin-mahjong(zhuipai="off")')
    assert g == _doc_link(chain.ZERO, "table", "abc123", 'guilin-mahjong(zhuipai="off")')
    h = chain.hand_link(g, "abc123", 0, "ab" * 32)
    assert h == _doc_link(g, "hand", "abc123", 0, "ab" * 32)
    a = Chi(seat=1, cards=(3, 4, 5))
    x = chain.action_link(h, "abc123", 0, 0, a, False, True)
    assert x == _doc_link(h, "action", "abc123", 0, 0, msgspec.to_builtins(a), False, True)
    # the struct and its JSON object (as a record holds it) give the same link
    assert x == chain.action_link(h, "abc123", 0, 0, json.loads(msgspec.json.encode(a)),
                                  False, True)
    e = chain.end_link(x, "abc123", 0, [3, -1, -1, -1])
    assert e == _doc_link(x, "end", "abc123", 0, [3, -1, -1, -1], None)
    assert chain.end_link(x, "abc123", 0, None) == _doc_link(x, "end", "abc123", 0, None, None)
    m = {"house": 3, "net": [57, -60, 0, 0]}
    assert chain.end_link(x, "abc123", 0, [6, -6, 0, 0], m) == \
        _doc_link(x, "end", "abc123", 0, [6, -6, 0, 0], m)
    assert chain.is_link(e) and not chain.is_link(e.upper()) and not chain.is_link(e[:-1])


@given(st.text(max_size=40), st.text(max_size=40))
def test_the_canonical_json_is_pythons_for_any_text(tid: str, spec: str) -> None:
    assert chain.genesis(tid, spec) == _doc_link(chain.ZERO, "table", tid, spec)


# a table's rows as a server stores them, and the walk over them

def _table(hands: list[list[object]], tid: str = "t1", spec: str = "guilin-mahjong"
           ) -> tuple[list[dict], dict[int, list[dict]]]:
    """``hands``: each hand's actions; every hand ended (net [1, -1])."""
    head = chain.genesis(tid, spec)
    hrows, acts = [], {}
    for n, actions in enumerate(hands):
        c = f"{n:064x}"
        head = chain.hand_link(head, tid, n, c)
        row = dict(hand=n, commitment=c, link=head, record="{}", net="[1,-1]")
        acts[n] = []
        for i, a in enumerate(actions):
            head = chain.action_link(head, tid, n, i, a, i % 3 == 0, False)
            acts[n].append(dict(seq=i, action=msgspec.json.encode(a).decode(),
                                timeout=i % 3 == 0, tuoguan=False, link=head))
        head = chain.end_link(head, tid, n, [1, -1])
        row["end_link"] = head
        hrows.append(row)
    return hrows, acts


def _walk(hrows, acts, tid="t1", spec="guilin-mahjong"):
    return chain.walk(tid, spec, chain.stored_rows(tid, hrows, acts))


ACTION = st.one_of(st.builds(Discard, seat=st.integers(0, 3), card=st.integers(0, 40)),
                   st.builds(Pass, seat=st.integers(0, 3)))
HANDS = st.lists(st.lists(ACTION, min_size=1, max_size=6), min_size=1, max_size=4)


def test_a_clean_table_walks_to_its_head() -> None:
    hrows, acts = _table([[Discard(seat=0, card=1), Pass(seat=1)], [Discard(seat=1, card=2)]])
    problem, head, checked, unchained = _walk(hrows, acts)
    assert problem is None and head == hrows[-1]["end_link"]
    assert (checked, unchained) == (2 + 3 + 2, 0)
    assert chain.heads_problem(hrows, {0: hrows[0]["end_link"], 1: None}) is None


@settings(max_examples=60)
@given(HANDS, st.data())
def test_a_changed_action_is_caught_where_it_stands(hands, data) -> None:
    hrows, acts = _table(hands)
    n = data.draw(st.integers(0, len(hands) - 1))
    i = data.draw(st.integers(0, len(hands[n]) - 1))
    new = data.draw(ACTION.filter(lambda a: a != hands[n][i]))
    acts[n][i]["action"] = msgspec.json.encode(new).decode()
    problem, *_ = _walk(hrows, acts)
    assert problem is not None and problem.startswith(f"hand {n}, action {i}:")


@settings(max_examples=60)
@given(HANDS, st.data())
def test_a_flipped_flag_is_caught(hands, data) -> None:
    hrows, acts = _table(hands)
    n = data.draw(st.integers(0, len(hands) - 1))
    i = data.draw(st.integers(0, len(hands[n]) - 1))
    field = data.draw(st.sampled_from(["timeout", "tuoguan"]))
    acts[n][i][field] = not acts[n][i][field]
    problem, *_ = _walk(hrows, acts)
    assert problem is not None and problem.startswith(f"hand {n}, action {i}:")


@settings(max_examples=60)
@given(HANDS, st.data())
def test_a_deleted_action_is_caught_at_its_place(hands, data) -> None:
    hrows, acts = _table(hands)
    n = data.draw(st.integers(0, len(hands) - 1))
    i = data.draw(st.integers(0, len(hands[n]) - 1))
    del acts[n][i]
    problem, *_ = _walk(hrows, acts)
    assert problem is not None
    if i < len(hands[n]) - 1:   # a gap in seq: named as missing
        assert problem == (f"hand {n}, action {i} is missing: the next stored is "
                           f"action {i + 1}")
    else:                       # the last one: the hand's end no longer follows
        assert problem.startswith(f"hand {n}'s end:")


@settings(max_examples=60)
@given(HANDS.filter(lambda h: len(h) >= 2), st.data())
def test_swapped_hands_are_caught_at_the_first(hands, data) -> None:
    hrows, acts = _table(hands)
    a = data.draw(st.integers(0, len(hands) - 2))
    b = data.draw(st.integers(a + 1, len(hands) - 1))
    keep = ("hand",)
    ra, rb = hrows[a], hrows[b]
    for k in ra:
        if k not in keep:
            ra[k], rb[k] = rb[k], ra[k]
    acts[a], acts[b] = acts[b], acts[a]
    problem, *_ = _walk(hrows, acts)
    assert problem is not None and problem.startswith(f"hand {a}:")


@settings(max_examples=60)
@given(HANDS, st.data())
def test_a_changed_commitment_or_net_is_caught(hands, data) -> None:
    hrows, acts = _table(hands)
    n = data.draw(st.integers(0, len(hands) - 1))
    if data.draw(st.booleans()):
        hrows[n]["commitment"] = "f" * 64
        want = f"hand {n}:"
    else:
        hrows[n]["net"] = "[2,-2]"
        want = f"hand {n}'s end:"
    problem, *_ = _walk(hrows, acts)
    assert problem is not None and problem.startswith(want)


def test_a_recomputed_chain_is_caught_by_the_heads_published() -> None:
    hrows, acts = _table([[Discard(seat=0, card=1)], [Pass(seat=1)]])
    told = {0: hrows[0]["end_link"], 1: hrows[1]["end_link"]}
    forged, facts = _table([[Discard(seat=0, card=2)], [Pass(seat=1)]])
    assert _walk(forged, facts)[0] is None      # a consistent forgery walks clean…
    problem = chain.heads_problem(forged, told)  # …but its heads are not the published
    assert problem is not None and problem.startswith("hand 0's end:")


def test_rows_before_links_are_skipped_and_a_later_null_is_broken() -> None:
    hrows, acts = _table([[Discard(seat=0, card=1)], [Pass(seat=1), Pass(seat=2)]])
    # an older database: hand 0 and hand 1's row made before links
    old_h, old_a = [dict(r) for r in hrows], {k: [dict(a) for a in v] for k, v in acts.items()}
    for r in old_h:
        r["link"] = r["end_link"] = None
    for a in old_a[0]:
        a["link"] = None
    # hand 1's actions and end were written after the upgrade, the chain from the genesis
    head = chain.genesis("t1", "guilin-mahjong")
    for i, a in enumerate(old_a[1]):
        head = a["link"] = chain.action_link(head, "t1", 1, i, json.loads(a["action"]),
                                             a["timeout"], a["tuoguan"])
    old_h[1]["end_link"] = chain.end_link(head, "t1", 1, [1, -1])
    problem, head, checked, unchained = _walk(old_h, old_a)
    assert problem is None and (checked, unchained) == (3, 4)
    old_a[1][1]["link"] = None
    problem, *_ = _walk(old_h, old_a)
    assert problem is not None and problem.startswith("hand 1, action 1: its link is missing")


def _record(hands: list[list[object]], tid: str = "t1", spec: str = "guilin-mahjong"
            ) -> list[tuple[str, int, dict]]:
    hrows, acts = _table(hands, tid, spec)
    out = []
    prev = chain.genesis(tid, spec)
    for n, row in enumerate(hrows):
        rec = {"commitment": row["commitment"], "spec": spec,
               "actions": [json.loads(a["action"]) for a in acts[n]],
               "timeouts": [i for i, a in enumerate(acts[n]) if a["timeout"]],
               "result": {"net": [1, -1]},
               "chain": {"table": tid, "hand": n, "prev": prev, "head": row["end_link"]}}
        prev = row["end_link"]
        out.append((f"hand {n + 1}", n, rec))
    return out


def test_a_file_of_records_checks_each_hand_and_their_order() -> None:
    hands = _record([[Discard(seat=0, card=1)], [Pass(seat=1)], [Pass(seat=0)]])
    assert all(ok for _, ok, _ in chain.file_checks("t1", hands))
    changed = json.loads(json.dumps(hands))
    changed[1][2]["actions"][0]["seat"] = 3
    out = chain.file_checks("t1", [tuple(h) for h in changed])
    assert [ok for _, ok, _ in out] == [True, False, True]
    # two hands swapped in the file (their indices with them)
    swapped = [hands[0], hands[2], hands[1]]
    out = chain.file_checks("t1", swapped)
    assert [ok for _, ok, _ in out] == [True, False, False]
    # two records swapped under the file's indices
    out = chain.file_checks("t1", [hands[0], (hands[1][0], 1, hands[2][2]),
                                   (hands[2][0], 2, hands[1][2])])
    assert not out[1][1] and "swapped" in out[1][2]
    # another table's hand
    assert not chain.file_checks("t2", hands[:1])[0][1]


@pytest.mark.parametrize("bad", [{"chain": {"table": "t1"}}, {"chain": "x"}])
def test_a_malformed_chain_is_a_problem_not_a_crash(bad) -> None:
    assert chain.record_problem({"actions": [], **bad}) is not None


def test_the_heads_an_operator_kept_are_read_from_its_events() -> None:
    h = "ab" * 32
    env = {"id": 4, "kind": "hand_ended", "table": "t1", "created": 1.0,
           "data": {"hand": 2, "chain": h}}
    other = {"id": 5, "kind": "table_closed", "table": "t1", "data": {"chain": h}}
    want = {"t1": {2: h}}
    assert chain.event_heads(json.dumps({"events": [env, other], "last": 5}).encode()) == want
    assert chain.event_heads(json.dumps([env, other]).encode()) == want
    assert chain.event_heads((json.dumps(env) + "\n" + json.dumps(other) + "\n").encode()) == want
    with pytest.raises(ValueError):
        chain.event_heads(b"[1, 2]")
    with pytest.raises(ValueError):
        chain.event_heads(b"not json")


def test_a_hand_the_events_name_and_the_database_lacks_is_missing() -> None:
    hrows, _ = _table([[Pass(seat=0)]])
    problem = chain.heads_problem(hrows, {0: hrows[0]["end_link"], 1: "cd" * 32})
    assert problem is not None and problem.startswith("hand 1 is missing")


def test_a_file_forged_whole_is_caught_by_the_heads_kept() -> None:
    hands = _record([[Discard(seat=0, card=1)], [Pass(seat=1)]])
    kept = {"t1": {n: rec["chain"]["head"] for _, n, rec in hands}}
    assert all(ok for _, ok, _ in chain.file_checks("t1", hands, kept))
    forged = _record([[Discard(seat=0, card=1)], [Pass(seat=2)]])   # every link recomputed
    assert all(ok for _, ok, _ in chain.file_checks("t1", forged))
    out = chain.file_checks("t1", forged, kept)
    assert [ok for _, ok, _ in out] == [True, False] and "events kept" in out[1][2]
