"""Fair shuffle: commitment, verify, version stamps and refusal."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pathlib

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from qipai.bots import play_hands
from qipai.cli import cli
from qipai.core import fair
from qipai.core.errors import BadRecord, VersionMismatch
from qipai.core.model import Deal
from qipai.core.records import FORMAT_VERSION, decode_record, record_of, replay, replay_check
from qipai.core.ruleset import load
from qipai.core.snapshot import SNAPSHOT_MAGIC
from qipai.core.stamps import qipai_version
from qipai.core.table import Table

ROOT = pathlib.Path(__file__).parents[2]
SALT = bytes(range(32))


def house_rules():
    spec = importlib.util.spec_from_file_location(
        "house_rules", ROOT / "docs" / "examples" / "house_rules.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def hosted():
    """One hand dealt by the OS's CSPRNG, committed with a fresh salt."""
    table = next(play_hands(load("guilin-mahjong"), 1))
    salt = fair.new_salt()
    return fair.committed(record_of(table), salt), salt


def as_dict(rec):
    return json.loads(msgspec.json.encode(rec))


# -- the construction ------------------------------------------------------


def test_deal_bytes_is_the_documented_compact_json():
    deal = Deal(dealer=1, hands=((3, 1), (2,)), wall=(5, 0), shown=(1,))
    assert fair.deal_bytes(deal) == b'{"dealer":1,"hands":[[3,1],[2]],"wall":[5,0],"shown":[1]}'
    empty = Deal(dealer=0, hands=((),), wall=())
    assert fair.deal_bytes(empty) == b'{"dealer":0,"hands":[[]],"wall":[],"shown":[]}'


def test_commitment_is_sha256_of_deal_bytes_then_salt():
    deal = Deal(dealer=1, hands=((3, 1), (2,)), wall=(5, 0))
    want = hashlib.sha256(b'{"dealer":1,"hands":[[3,1],[2]],"wall":[5,0],"shown":[]}'
                          + SALT).hexdigest()
    assert fair.commitment(deal, SALT) == want


def test_new_salt_is_32_fresh_bytes():
    a, b = fair.new_salt(), fair.new_salt()
    assert len(a) == len(b) == 32 and a != b


@pytest.mark.parametrize("salt", [b"short", "00" * 32, None, bytes(33)])
def test_commitment_refuses_a_salt_that_is_not_32_bytes(salt):
    with pytest.raises(BadRecord, match="salt is 32 bytes"):
        fair.commitment(Deal(0, ((1,),), ()), salt)


def test_deal_bytes_refuses_what_is_not_a_deal_of_ints():
    with pytest.raises(BadRecord, match="not a card kind"):
        fair.deal_bytes(Deal(0, ((1, True),), ()))
    with pytest.raises(BadRecord, match="is a qipai.core.model.Deal"):
        fair.deal_bytes({"dealer": 0})


deals = st.builds(
    Deal, dealer=st.integers(0, 3),
    hands=st.lists(st.lists(st.integers(0, 200), max_size=14).map(tuple),
                   min_size=1, max_size=4).map(tuple),
    wall=st.lists(st.integers(0, 200), max_size=40).map(tuple),
    shown=st.lists(st.integers(0, 200), max_size=3).map(tuple))


@settings(max_examples=200, deadline=None)
@given(deals, deals)
def test_deal_bytes_is_json_with_the_deal_and_tells_deals_apart(a, b):
    body = fair.deal_bytes(a)
    # what a player computes with the standard library alone (the docs' recipe)
    recipe = json.dumps({"dealer": a.dealer, "hands": [list(h) for h in a.hands],
                         "wall": list(a.wall), "shown": list(a.shown)},
                        separators=(",", ":")).encode()
    assert body == recipe
    assert (fair.deal_bytes(b) == body) == (a == b)


# -- verify ------------------------------------------------------------------


def test_a_committed_os_dealt_record_verifies(hosted):
    rec, salt = hosted
    assert rec.rng == "os" and rec.seed is None
    assert rec.salt == salt.hex() and rec.commitment == fair.commitment(rec.deal, salt)
    assert fair.verify_record(rec) == []
    # and again after a round trip through JSON, with the recipe of the docs
    d = as_dict(rec)
    back = decode_record(msgspec.json.encode(d))
    assert fair.verify_record(back) == []
    body = json.dumps({k: d["deal"][k] for k in ("dealer", "hands", "wall", "shown")},
                      separators=(",", ":")).encode()
    assert hashlib.sha256(body + bytes.fromhex(d["salt"])).hexdigest() == d["commitment"]


def _swap_two_different(cards):
    cards = list(cards)
    j = next(i for i in range(1, len(cards)) if cards[i] != cards[0])
    cards[0], cards[j] = cards[j], cards[0]
    return cards


def _tamper(d, what):
    if what == "deal":
        d["deal"]["wall"] = _swap_two_different(d["deal"]["wall"])
    elif what == "salt":
        d["salt"] = ("0" if d["salt"][0] != "0" else "1") + d["salt"][1:]
    elif what == "commitment":
        d["commitment"] = ("0" if d["commitment"][0] != "0" else "1") + d["commitment"][1:]
    elif what == "no salt":
        d["salt"] = None
    elif what == "no commitment":
        d["commitment"] = None
    elif what == "action":
        held = set(d["deal"]["hands"][d["deal"]["dealer"]]) | {d["deal"]["wall"][0]}
        d["actions"][0]["card"] = next(k for k in range(34) if k not in held)
    elif what == "result":
        net = d["result"]["net"]
        net[0] += 1
        net[1] -= 1
    elif what == "unbalanced":
        d["result"]["net"][0] += 1
    return d


@pytest.mark.parametrize("what,problem", [
    ("deal", "commitment: commitment mismatch"),
    ("salt", "commitment: commitment mismatch"),
    ("commitment", "commitment: commitment mismatch"),
    ("no salt", "commitment: missing salt"),
    ("no commitment", "commitment: no commitment"),
    ("action", "replay: action 0"),
    ("result", "replay: result differs"),
    ("unbalanced", "zero sum: net"),
])
def test_tampering_fails_verify_naming_the_problem(hosted, what, problem):
    rec, _ = hosted
    d = _tamper(as_dict(rec), what)
    if what == "action":
        assert d["actions"][0]["type"] == "discard"  # a dealer's first move
    problems = fair.verify_record(decode_record(msgspec.json.encode(d)))
    assert any(p.startswith(problem) for p in problems), problems


def test_a_changed_deal_is_caught_by_the_commitment_even_where_play_still_replays(hosted):
    rec, _ = hosted
    d = as_dict(rec)
    wall = d["deal"]["wall"]
    # swap the last tile with the nearest one of another kind (two equal tiles
    # swapped would be the same deal: the CSPRNG's wall ends in a pair now and then)
    other = max(i for i, tile in enumerate(wall) if tile != wall[-1])
    wall[other], wall[-1] = wall[-1], wall[other]
    problems = fair.verify_record(decode_record(msgspec.json.encode(d)))
    assert problems and problems[0].startswith("commitment: commitment mismatch")


def test_timeouts_must_index_actions(hosted):
    rec, _ = hosted
    n = len(rec.actions)
    ok = msgspec.structs.replace(rec, timeouts=[0, n - 1])
    assert fair.verify_record(ok) == []
    for bad in ([n], [-1], [2, 1], [1, 1]):
        problems = fair.verify_record(msgspec.structs.replace(rec, timeouts=bad))
        assert [p for p in problems if p.startswith("timeouts:")], bad


def test_cli_verify_prints_one_line_per_check_and_exits_by_result(hosted, tmp_path):
    rec, _ = hosted
    good = tmp_path / "good.json"
    good.write_bytes(msgspec.json.encode(rec))
    res = CliRunner().invoke(cli, ["verify", str(good)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert [ln.split(":")[0] for ln in lines[:-1]] == [
        "ok   versions", "ok   commitment", "ok   replay", "ok   zero sum", "ok   timeouts",
        "ok   shuffle", "ok   deck"]
    assert lines[-1].startswith("verified")
    bad = tmp_path / "bad.json"
    bad.write_bytes(msgspec.json.encode(_tamper(as_dict(rec), "salt")))
    res = CliRunner().invoke(cli, ["verify", str(bad)])
    assert res.exit_code == 1
    assert "FAIL commitment: commitment mismatch" in res.output
    assert res.output.splitlines()[-1].startswith("not verified: 1 check failed")


def test_cli_verify_unreadable_input_is_one_error_line(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    res = CliRunner().invoke(cli, ["verify", str(junk)])
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and res.output.startswith(f"error: {junk}: not a JSON record")
    res = CliRunner().invoke(cli, ["verify", str(tmp_path / "missing.json")])
    assert res.exit_code == 2 and res.output.startswith("error:")


def test_an_old_record_without_commitment_fails_verify_but_replays():
    old = ROOT / "docs" / "records" / "format-1" / "guilin-mahjong.json"
    res = CliRunner().invoke(cli, ["verify", str(old)])
    assert res.exit_code == 1
    assert "FAIL commitment: no commitment" in res.output
    assert "ok   versions: note: the record names no qipai version" in res.output


def test_a_seeded_record_says_so_in_verify():
    rec = record_of(next(play_hands(load("guilin-zipai"), 1, seed=4)))
    rec = fair.committed(rec, SALT)
    shuffle = next(c for c in fair.checks(rec) if c.name == "shuffle")
    assert shuffle.ok and "seed" in shuffle.message and "tests and demos" in shuffle.message



@pytest.mark.parametrize("seed,failed", [
    (None, ['FAIL shuffle: rng is "seeded" but seed is null']),
    (5, ["FAIL replay: the deal is not the one seed 5 deals"]),
])
def test_a_seeded_record_must_carry_the_seed_that_dealt_it(tmp_path, seed, failed):
    # record-format: rng "seeded" means a seed dealt the hand, and a replay
    # deals from it again.  A committed record edited to drop its seed (or
    # to name another) replays and hashes as before; verify must still fail
    # it, one line naming the field, exit 1.
    rec = fair.committed(record_of(next(play_hands(load("guilin-zipai"), 1, seed=4))), SALT)
    assert rec.rng == "seeded" and rec.seed not in (None, 5) and fair.verify_record(rec) == []
    path = tmp_path / "edited.json"
    path.write_bytes(msgspec.json.encode(msgspec.structs.replace(rec, seed=seed)))
    res = CliRunner().invoke(cli, ["verify", str(path)])
    assert res.exit_code == 1, res.output
    fails = [ln for ln in res.output.splitlines() if ln.startswith("FAIL")]
    assert [ln[:len(f)] for ln, f in zip(fails, failed)] == failed and len(fails) == 1
    assert res.output.splitlines()[-1].startswith("not verified: 1 check failed")


def test_an_os_dealt_record_with_a_seed_fails_the_shuffle_check(hosted):
    rec, _ = hosted
    assert rec.rng == "os" and rec.seed is None
    problems = fair.verify_record(msgspec.structs.replace(rec, seed=3))
    assert 'shuffle: rng is "os" but seed is 3: only a seeded deal has a seed' in problems

# -- version stamps -------------------------------------------------------------


def test_a_record_is_stamped_with_qipai_version_spec_and_plugins():
    hr = house_rules()
    rs = load("guangxi-mahjong(fenghu_count=4)", plugins=[hr])
    rec = record_of(next(play_hands(rs, 1, seed=2)))
    assert rec.format == FORMAT_VERSION
    assert rec.qipai_version == qipai_version() != "0+unknown"
    assert rec.spec == "guangxi-mahjong(fenghu_count=4)"
    src = (ROOT / "docs" / "examples" / "house_rules.py").read_bytes()
    assert [(p.name, p.sha256) for p in rec.plugins] == [
        ("house_rules", hashlib.sha256(src).hexdigest())]
    assert replay_check(rec, plugins=[hr]) is None


@pytest.fixture(scope="module")
def plain():
    return record_of(next(play_hands(load("guilin-mahjong(hubao=false)"), 1, seed=11)))


def test_another_qipai_version_is_refused_unless_allowed(plain):
    rec = msgspec.structs.replace(plain, qipai_version="0.0.1")
    with pytest.raises(VersionMismatch, match=r"qipai version: recorded 0\.0\.1") as err:
        replay(rec)
    assert [d[0] for d in err.value.differences] == ["qipai version"]
    assert replay_check(rec, allow_version_mismatch=True) is None


def test_another_variant_version_is_refused_even_when_qipai_mismatch_is_allowed(plain):
    rec = msgspec.structs.replace(plain, version="0.9", qipai_version="0.0.1")
    with pytest.raises(VersionMismatch, match="variant version: recorded guilin-mahjong version 0.9"):
        replay(rec, allow_version_mismatch=True)
    with pytest.raises(VersionMismatch) as err:
        replay(rec)
    assert [d[0] for d in err.value.differences] == ["qipai version", "variant version"]


def test_other_house_plugins_are_refused_naming_them(plain):
    hr = house_rules()
    with pytest.raises(VersionMismatch, match=r"house plugins: recorded none, running house_rules"):
        replay(msgspec.structs.replace(plain, variant="guangxi-mahjong", options={},
                                       spec="guangxi-mahjong"), plugins=[hr])
    rec = record_of(next(play_hands(load("guangxi-mahjong", plugins=[hr]), 1, seed=2)))
    with pytest.raises(VersionMismatch, match=r"house plugins: recorded house_rules .* running none"):
        replay(rec)
    changed = msgspec.structs.replace(
        rec, plugins=[msgspec.structs.replace(rec.plugins[0], sha256="0" * 64)])
    with pytest.raises(VersionMismatch, match=r"house plugins: recorded house_rules \(sha256 "
                                              r"000000000000\)"):
        replay(changed, plugins=[hr])


def test_a_spec_that_is_not_the_records_options_is_refused(plain):
    with pytest.raises(VersionMismatch, match=r"ruleset: recorded guilin-mahjong, running "
                                              r"guilin-mahjong\(hubao=False\)"):
        replay(msgspec.structs.replace(plain, spec="guilin-mahjong"))


def test_cli_replay_refuses_another_version_and_allows_it_with_the_flag(plain, tmp_path):
    f = tmp_path / "r.json"
    f.write_bytes(msgspec.json.encode(msgspec.structs.replace(plain, qipai_version="0.0.1")))
    res = CliRunner().invoke(cli, ["replay", str(f)])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {f}: the record was made under other versions "
                                 "(qipai version: recorded 0.0.1, running")
    res = CliRunner().invoke(cli, ["replay", str(f), "--allow-version-mismatch"])
    assert res.exit_code == 0 and "replay identical" in res.output


def test_cli_replay_of_an_unstamped_record_warns_and_replays():
    old = ROOT / "docs" / "records" / "format-1" / "guilin-zipai.json"
    res = CliRunner().invoke(cli, ["replay", str(old)])
    assert res.exit_code == 0
    assert res.stderr.startswith("warning: the record names no qipai version")
    assert res.stdout.startswith("replay identical")


# -- snapshots ---------------------------------------------------------------------


def _restamped(data: bytes, **changes) -> bytes:
    """``data`` with its stamp changed and its digest made good again."""
    head = len(SNAPSHOT_MAGIC)
    state, seed, stamp = msgspec.msgpack.decode(data[head + 16:])
    stamp.update(changes)
    payload = msgspec.msgpack.encode([state, seed, stamp])
    return SNAPSHOT_MAGIC + hashlib.blake2b(payload, digest_size=16).digest() + payload


def test_a_snapshot_under_other_versions_is_refused():
    rs = load("guilin-mahjong")
    t = Table(rs, seed=5)
    snap = t.snapshot()
    assert Table.restore(rs, snap).snapshot() == snap
    with pytest.raises(VersionMismatch, match=r"^the snapshot was made under other versions "
                                              r"\(qipai version: recorded 0\.0\.1"):
        Table.restore(rs, _restamped(snap, qipai_version="0.0.1"))
    assert Table.restore(rs, _restamped(snap, qipai_version="0.0.1"),
                         allow_version_mismatch=True).state == t.state
    with pytest.raises(VersionMismatch, match="variant version"):
        Table.restore(rs, _restamped(snap, version="0.9"), allow_version_mismatch=True)
    with pytest.raises(VersionMismatch, match="house plugins: recorded x"):
        Table.restore(rs, _restamped(snap, plugins=[{"name": "x", "sha256": None}]))
    hr = house_rules()
    with pytest.raises(VersionMismatch, match="house plugins: recorded none, running house_rules"):
        Table.restore(load("guilin-mahjong", plugins=[hr]), snap)


def test_an_unstamped_snapshot_of_an_older_qipai_is_refused():
    with pytest.raises(BadRecord, match="older qipai"):
        Table.restore(load("guilin-mahjong"), b"QPSNAP2\n" + bytes(40))


def test_committed_takes_a_record():
    with pytest.raises(BadRecord, match="takes a qipai.core.records.Record"):
        fair.committed({"deal": None}, SALT)


def test_the_replay_property_replays_with_the_tables_house_plugins():
    from qipai.conformance.properties import check_replay

    table = next(play_hands(load("guangxi-mahjong", plugins=[house_rules()]), 1, seed=2))
    check_replay(table)  # raises PropertyFailure (or VersionMismatch) if not


def test_cli_play_commit_makes_records_that_verify(tmp_path):
    res = CliRunner().invoke(cli, ["play", "guilin-zipai", "--hands", "2", "--json", "--commit"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    for hand in out["hands"]:
        rec = hand["record"]
        assert len(rec["salt"]) == 64 and rec["rng"] == "os"
        body = json.dumps({k: rec["deal"][k] for k in ("dealer", "hands", "wall", "shown")},
                          separators=(",", ":")).encode()
        assert hashlib.sha256(body + bytes.fromhex(rec["salt"])).hexdigest() == rec["commitment"]
    f = tmp_path / "two.json"
    f.write_text(res.stdout)
    res = CliRunner().invoke(cli, ["verify", str(f)])
    assert res.exit_code == 0 and res.output.splitlines()[-1].startswith("verified: 2 hands")
    res = CliRunner().invoke(cli, ["play", "--commit"])
    assert res.exit_code == 2 and res.output.startswith("error: --commit needs --json")


@pytest.mark.parametrize("where", ["net", "winners", "total"])
def test_cli_verify_fails_a_play_output_whose_summary_or_total_is_not_its_records(tmp_path, where):
    # break11: verify passed a play --json file whose per-hand net/winners or
    # total had been edited (replay caught it); the reader sees those numbers
    res = CliRunner().invoke(cli, ["play", "--hands", "2", "--json", "--commit"])
    out = json.loads(res.stdout)
    good = tmp_path / "good.json"
    good.write_text(res.stdout)
    res = CliRunner().invoke(cli, ["verify", str(good)])
    assert res.exit_code == 0, res.output
    assert "ok   hand 1: summary:" in res.output and "ok   total:" in res.output
    if where == "total":
        out["total"] = [t + d for t, d in zip(out["total"], (1, -1, 0, 0))]
    else:
        hand = out["hands"][1]
        hand[where] = [5] if where == "winners" and hand[where] != [5] else (
            [0, 0, 0, 0] if hand[where] != [0, 0, 0, 0] else [1, -1, 0, 0])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(out))
    res = CliRunner().invoke(cli, ["verify", str(bad)])
    assert res.exit_code == 1, res.output
    failed = [ln for ln in res.output.splitlines() if ln.startswith("FAIL")]
    assert len(failed) == 1
    assert failed[0].startswith("FAIL total:" if where == "total" else f"FAIL hand 2: summary: {where} is")


def test_a_partial_deal_is_never_verified(tmp_path):
    """A committed hand of a partial deal — 58 of the 136 tiles, as a test
    or a position is dealt — replays and its commitment holds, but it is
    not a hand dealt from the deck: the deck check fails, and it is never
    called "verified"."""
    from qipai.bots import make_bots, run_to_end
    from qipai.core.model import Deal
    from qipai.core.table import Table

    import random

    tiles = [k for k in range(34) for _ in range(4)]
    random.Random(7).shuffle(tiles)
    cut = (0, 14, 27, 40, 53)  # the dealer 14, the others 13, then a 5-tile wall
    deal = Deal(dealer=0, hands=tuple(tuple(tiles[a:b]) for a, b in zip(cut, cut[1:])),
                wall=tuple(tiles[53:58]))
    table = Table(load("guilin-mahjong"), deal=deal, partial=True)
    run_to_end(table, make_bots("random", 4, 1))
    rec = fair.committed(record_of(table), fair.new_salt())
    assert {c.name: c.ok for c in fair.checks(rec)} == {
        "versions": True, "commitment": True, "replay": True, "zero sum": True,
        "timeouts": True, "shuffle": True, "deck": False}
    path = tmp_path / "partial.json"
    path.write_bytes(msgspec.json.encode(rec))
    res = CliRunner().invoke(cli, ["verify", str(path)])
    assert res.exit_code == 1, res.output
    assert "FAIL deck: the deal holds 58 cards, not the variant's whole deck of 136" in res.output
    assert res.output.splitlines()[-1].startswith("not verified: 1 check failed")
