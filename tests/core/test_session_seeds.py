"""Bot/CLI sessions' seeds and the record's ``rng``: nothing about a hand leaks through them."""

from __future__ import annotations

import random

import msgspec

import qipai.bots
from qipai.bots import play_hands
from qipai.core.records import decode_record, record_of, replay_check
from qipai.core.ruleset import load
from qipai.core.sessions import hand_seed


def test_hand_seeds_are_128_bit_hashes_not_the_session_seed():
    seeds = [hand_seed(42, i) for i in range(8)]
    assert 42 not in seeds and len(set(seeds)) == 8
    assert all(0 <= s < 2**128 for s in seeds) and max(seeds) >= 2**64
    # the old derivation: hand 0 was the session seed, hand i a 48-bit value
    assert seeds[1] != random.Random("qipai-hand:42:1").getrandbits(48)
    assert qipai.bots.hand_seed is hand_seed  # where the bots' users import it from


def test_seeded_session_records_say_seeded_and_hold_no_session_seed():
    rs = load("guilin-mahjong")
    tables = list(play_hands(rs, 2, seed=12345))
    for i, t in enumerate(tables):
        rec = record_of(t)
        assert rec.rng == "seeded" and rec.seed == hand_seed(12345, i)
        assert b"12345" not in msgspec.json.encode(rec).split(b'"actions"')[0]
        assert replay_check(decode_record(msgspec.json.encode(rec))) is None


def test_unseeded_session_deals_every_hand_from_the_os():
    rs = load("guilin-zipai")
    for t in play_hands(rs, 2):
        rec = record_of(t)
        assert rec.seed is None and rec.rng == "os"
        assert replay_check(rec) is None


def test_rng_kind_of_explicit_deals_host_rngs_and_old_records():
    rs = load("guilin-mahjong")
    t = rs.table(rng=random.Random(1))
    assert record_of(t).rng == "host"
    again = rs.table(deal=t.state.deal)
    assert record_of(again).rng is None
    old = msgspec.to_builtins(record_of(rs.table(seed=3)))
    del old["rng"]
    assert decode_record(old).rng is None
    assert replay_check(decode_record(old)) is None
