"""Joint deals (issue 36 item 3): the deal function, and ``qipai verify``
catching a deal that is not the function of its parts, a seat value that
does not match its commitment and a server seed that does not match its
own — and a party that tries to grind a value after the commitments cannot
move the deal."""

from __future__ import annotations

import hashlib
import hmac
import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qipai.bots.play import make_bots, run_to_end
from qipai.core import fair, joint
from qipai.core.records import decode_record, plain, record_of
from qipai.core.ruleset import load

values32 = st.binary(min_size=32, max_size=32)


def test_the_deal_function_is_the_documented_hmac():
    server = bytes(range(32))
    vals = ["ab" * 32, None, "CD" * 32, None]
    msg = b"qipai-deal:v1:7:" + b"ab" * 32 + b"::" + b"cd" * 32 + b":"
    assert joint.deal_message(7, vals) == msg
    want = int.from_bytes(hmac.new(server, msg, hashlib.sha256).digest(), "big")
    assert joint.deal_seed(server, 7, vals) == want
    assert joint.seed_commitment(server) == hashlib.sha256(server).hexdigest()


@settings(max_examples=60, deadline=None)
@given(values32, values32, values32, st.integers(0, 63))
def test_every_part_moves_the_deal_seed(server, a, b, hand):
    base = joint.deal_seed(server, hand, [a.hex(), b.hex()])
    assert joint.deal_seed(server, hand, [a.hex(), b.hex()]) == base   # a function
    if a != b:
        assert joint.deal_seed(server, hand, [b.hex(), a.hex()]) != base   # seat order
    assert joint.deal_seed(server, hand, [a.hex(), None]) != base          # withheld
    assert joint.deal_seed(server, hand + 1, [a.hex(), b.hex()]) != base   # the hand
    assert joint.deal_seed(bytes(32) if server != bytes(32) else b"\1" * 32, hand,
                           [a.hex(), b.hex()]) != base                     # the server seed
    assert 0 <= base < 2 ** 256


def joint_record(server: bytes, vals: list[bytes | None], withheld: tuple[int, ...] = (),
                 hand: int = 3) -> dict:
    """A finished hand dealt by the deal function, as a host records it."""
    rs = load("guilin-mahjong")
    seats = []
    for i, v in enumerate(vals):
        if v is None:
            seats.append(joint.SeatValue())
        elif i in withheld:
            seats.append(joint.SeatValue(commitment=joint.value_commitment(v), withheld=True))
        else:
            seats.append(joint.SeatValue(commitment=joint.value_commitment(v), value=v.hex()))
    j = joint.Joint(hand=hand, server_seed=server.hex(),
                    server_commitment=joint.seed_commitment(server), seats=seats)
    table = joint.joint_table(rs, server, hand, joint.used_values(seats))
    run_to_end(table, make_bots("greedy", table.n, 1))
    rec = fair.committed(record_of(table), fair.new_salt())
    rec.joint = j
    return json.loads(msgspec.json.encode(plain(rec)))


@pytest.fixture(scope="module")
def good():
    return joint_record(b"\x07" * 32, [b"\x01" * 32, b"\x02" * 32, None, None])


def problems(rec: dict) -> list[str]:
    return fair.verify_record(decode_record(rec))


def test_a_joint_record_verifies(good):
    assert good["rng"] == "joint" and good["seed"] is not None
    assert problems(good) == []
    names = [c.name for c in fair.checks(decode_record(good))]
    assert "joint" in names


def test_a_withheld_seat_verifies_and_is_named():
    rec = joint_record(b"\x09" * 32, [b"\x01" * 32, b"\x02" * 32, None, None], withheld=(1,))
    assert problems(rec) == []
    (c,) = [c for c in fair.checks(decode_record(rec)) if c.name == "joint"]
    assert "withheld by seat [1]" in c.message


def test_a_deal_no_seat_contributed_to_is_said_to_be_the_servers_alone(good):
    """Every seat empty (bots, or no human seat committed: offline when the
    commitments were asked) — the server, which picked its seed, picked the
    deal: verify says so instead of reading as "nobody could choose it"."""
    rec = joint_record(b"\x0b" * 32, [None, None, None, None])
    assert problems(rec) == []
    (c,) = [c for c in fair.checks(decode_record(rec)) if c.name == "joint"]
    assert c.ok and "the server seed's alone" in c.message, c.message
    (c,) = [c for c in fair.checks(decode_record(good)) if c.name == "joint"]
    assert "alone" not in c.message


def test_verify_catches_a_deal_that_is_not_the_seat_values(good):
    bad = json.loads(json.dumps(good))
    bad["joint"]["seats"][0]["value"] = "11" * 32   # and its commitment to match
    bad["joint"]["seats"][0]["commitment"] = hashlib.sha256(b"\x11" * 32).hexdigest()
    out = problems(bad)
    assert any(p.startswith("joint:") and "not the deal function" in p for p in out), out


def test_verify_catches_a_reveal_that_does_not_match_its_commitment(good):
    bad = json.loads(json.dumps(good))
    bad["joint"]["seats"][1]["value"] = "33" * 32
    out = problems(bad)
    assert any("seat 1's value does not match its commitment" in p for p in out), out


def test_verify_catches_a_server_seed_that_does_not_match_its_commitment(good):
    bad = json.loads(json.dumps(good))
    bad["joint"]["server_commitment"] = "00" * 32
    out = problems(bad)
    assert any("server seed mismatch" in p for p in out), out


def test_verify_catches_a_changed_deal(good):
    bad = json.loads(json.dumps(good))
    w = bad["deal"]["wall"]
    w[0], w[1] = w[1], w[0]
    if w[0] == w[1]:
        w[0], w[-1] = w[-1], w[0]
    out = problems(bad)
    assert any(p.startswith("commitment:") for p in out), out
    assert any(p.startswith("replay:") for p in out), out


def test_joint_parts_without_rng_joint_fail(good):
    bad = json.loads(json.dumps(good))
    bad["rng"] = "seeded"
    assert any(p.startswith("joint:") for p in problems(bad))
    bad = json.loads(json.dumps(good))
    del bad["joint"]
    assert any(p.startswith("shuffle:") for p in problems(bad))


# -- grinding --------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.lists(values32, min_size=1, max_size=6))
def test_a_colluding_seat_cannot_grind_its_value_after_the_commitments(good, tries):
    """A server colluding with seat 1 sees every commitment, then tries other
    values for seat 1: each fails verify (its commitment was published
    first); only its committed value, or withholding, is accepted — and
    neither can be chosen for the deal it gives, the server seed being fixed
    by its own published commitment."""
    committed = good["joint"]["seats"][1]["commitment"]
    for v in tries:
        if hashlib.sha256(v).hexdigest() == committed:
            continue
        bad = json.loads(json.dumps(good))
        bad["joint"]["seats"][1]["value"] = v.hex()
        server = bytes.fromhex(bad["joint"]["server_seed"])
        bad["seed"] = joint.deal_seed(server, 3, joint.used_values(
            decode_record(bad).joint.seats))   # the deal moved with it…
        out = problems(bad)
        assert any("seat 1's value does not match its commitment" in p for p in out), out


@settings(max_examples=25, deadline=None)
@given(values32)
def test_the_server_cannot_grind_a_bot_value_or_its_own_seed(good, v):
    """Bot seats take no value (the server seed stands for them): a value
    slipped in for a bot fails; so does another server seed."""
    bad = json.loads(json.dumps(good))
    bad["joint"]["seats"][2] = {"value": v.hex()}
    out = problems(bad)
    assert any("seat 2 reveals a value but committed none" in p for p in out), out
    bad = json.loads(json.dumps(good))
    if v.hex() != bad["joint"]["server_seed"]:
        bad["joint"]["server_seed"] = v.hex()
        out = problems(bad)
        assert any("server seed mismatch" in p for p in out), out


def test_hex32_refuses_bad_sizes():
    with pytest.raises(ValueError, match="64 hex digits"):
        joint.hex32("ab", "a seat value")
    with pytest.raises(ValueError, match="not hex"):
        joint.hex32("zz" * 32, "a seat value")
    assert joint.hex32("AB" * 32, "x") == b"\xab" * 32


@pytest.mark.parametrize("text", ["aa" * 20 + " " * 24, "aa " * 21 + "\t", "ab" * 31 + "\na",
                                  "٠١" * 32, "0x" + "ab" * 31])
def test_hex32_refuses_64_characters_that_are_not_64_hex_digits(text):
    """bytes.fromhex skips whitespace: 64 characters with spaces were taken
    as a shorter value, stored, and the record then failed ``qipai verify``
    (a player could spoil any hand's check)."""
    assert len(text) == 64
    with pytest.raises(ValueError, match="not hex"):
        joint.hex32(text, "a seat value")
