"""``qipai verify`` of a whole session: how the hands fit together.

Each hand of a ``qipai play --json`` output verifies on its own (commitment,
replay, …); these tests splice, reorder, repeat and drop hands, or edit the
header, so that every hand still verifies alone, and check that the session
lines (``session: ruleset / seeds / order / repeats``) fail naming what is
wrong.  Expected messages are built from what play does: hand i (0-based) of
a session seeded S is dealt from ``hand_seed(S, i)``; hand 1's dealer is the
one its seed draws; each next dealer is the previous result's
``next_dealer``.
"""

from __future__ import annotations

import copy
import json

import msgspec
import pytest
from click.testing import CliRunner

from qipai.bots import hand_seed, play_hand
from qipai.cli import cli
from qipai.core import fair
from qipai.core.records import decode_record, record_of
from qipai.core.ruleset import load

SEED = 7


def play(*args: str) -> dict:
    res = CliRunner().invoke(cli, ["play", "guilin-mahjong", *args, "--json", "--commit"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def seeded_session() -> dict:
    """Four committed hands of a session seeded 7 (verifies: checked below)."""
    return play("--hands", "4", "--seed", str(SEED))


@pytest.fixture(scope="module")
def os_session() -> dict:
    """Three committed hands dealt by the OS's CSPRNG (header seed null)."""
    return play("--hands", "3")


@pytest.fixture
def seeded(seeded_session) -> dict:
    return copy.deepcopy(seeded_session)


@pytest.fixture
def os_dealt(os_session) -> dict:
    return copy.deepcopy(os_session)


def verify(tmp_path, doc: dict) -> tuple[int, str]:
    f = tmp_path / "session.json"
    f.write_text(json.dumps(doc))
    res = CliRunner().invoke(cli, ["verify", str(f)])
    return res.exit_code, res.output


def fails(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.startswith("FAIL")]


def only_session_fails(output: str) -> list[str]:
    """The FAIL lines, after checking each is a session line: every hand
    verifies on its own, so only the session checks see the forgery."""
    out = fails(output)
    assert out and all(ln.startswith("FAIL session: ") for ln in out), output
    return out


def with_hands(doc: dict, hands: list[dict]) -> dict:
    """``doc`` with ``hands``, its total made their sum again (as a forger would)."""
    total = [sum(x) for x in zip(*(h["net"] for h in hands))]
    return {**doc, "hands": hands, "total": total}


def dealer(hand: dict) -> int:
    return hand["record"]["deal"]["dealer"]


def next_dealer(hand: dict) -> int:
    return hand["record"]["result"]["next_dealer"]


def genuine_hand(seed: int | None, dealer: int) -> dict:
    """A real, committed hand of guilin-mahjong dealt for ``dealer``, in the
    shape ``qipai play --json`` writes: it verifies on its own."""
    t = play_hand(load("guilin-mahjong"), seed=seed, dealer=dealer)
    r = t.result
    rec = fair.committed(record_of(t), fair.new_salt())
    return {"dealer": t.state.dealer, "end": r.end, "winners": list(r.winners),
            "net": list(r.net), "record": msgspec.to_builtins(rec)}


# -- untampered ------------------------------------------------------------------


def test_verify_an_untampered_seeded_session_passes_its_session_checks(tmp_path, seeded):
    code, out = verify(tmp_path, seeded)
    assert code == 0, out
    lines = out.splitlines()
    assert f"ok   session: seeds: each hand i is dealt from hand_seed({SEED}, i - 1), its place " \
           f"in a session seeded {SEED}" in lines
    h1 = seeded["hands"][0]
    assert (f"ok   session: order: hand 1's dealer, seat {dealer(h1)}, is the one seed {SEED} "
            f"draws; each next hand's dealer is the previous hand's next dealer") in lines
    assert "ok   session: ruleset: every hand is of the header's variant guilin-mahjong and " \
           "options" in lines
    assert "ok   session: repeats: no two hands share a commitment, a deal or a seed" in lines
    assert lines[-1].startswith("verified: 4 hands")


def test_verify_an_untampered_os_session_passes_its_session_checks(tmp_path, os_dealt):
    code, out = verify(tmp_path, os_dealt)
    assert code == 0, out
    names = [ln.split(":")[1].strip() for ln in out.splitlines() if ln.startswith("ok   session:")]
    assert names == ["ruleset", "seeds", "order", "repeats"]


def test_verify_a_one_hand_play_output_checks_its_header(tmp_path):
    doc = play("--hands", "1", "--seed", str(SEED))
    code, out = verify(tmp_path, doc)
    assert code == 0, out
    names = [ln.split(":")[1].strip() for ln in out.splitlines() if ln.startswith("ok   session:")]
    assert names == ["ruleset", "seeds", "order"]  # no other hand to repeat
    doc["seed"] = SEED + 1
    code, out = verify(tmp_path, doc)
    assert code == 1
    assert (f"FAIL session: seeds: hand 1's seed is {hand_seed(SEED, 0)}, but a session seeded "
            f"{SEED + 1} deals hand 1 from hand_seed({SEED + 1}, 0) = {hand_seed(SEED + 1, 0)}"
            in fails(out))


# -- hands moved, repeated, dropped --------------------------------------------------


def test_verify_fails_two_hands_swapped(tmp_path, seeded):
    h1, h2, h3, h4 = seeded["hands"]
    # h3's dealer is h2's next dealer; h2's is h1's: they differ unless h2's dealer kept the deal
    assert dealer(h2) != dealer(h3), "seed 7 needs another dealer for hand 3 for this test"
    code, out = verify(tmp_path, with_hands(seeded, [h1, h3, h2, h4]))
    assert code == 1
    got = only_session_fails(out)
    assert got[0] == (f"FAIL session: seeds: hand 2's seed is {hand_seed(SEED, 2)}, but a session "
                      f"seeded {SEED} deals hand 2 from hand_seed({SEED}, 1) = "
                      f"{hand_seed(SEED, 1)} (it is the seed of hand 3) (and 1 more)")
    assert got[1].startswith(f"FAIL session: order: hand 2's dealer is seat {dealer(h3)}, but "
                             f"hand 1's next dealer is seat {next_dealer(h1)}")
    assert len(got) == 2


def test_verify_fails_a_hand_repeated(tmp_path, seeded):
    h1, h2, h3, h4 = seeded["hands"]
    code, out = verify(tmp_path, with_hands(seeded, [h1, h2, copy.deepcopy(h2), h3, h4]))
    assert code == 1
    got = only_session_fails(out)
    assert (f"FAIL session: repeats: hand 3 repeats hand 2's commitment "
            f"{h2['record']['commitment'][:16]}…") in got
    # in a seeded session the copy also sits where its seed is not
    assert any(ln.startswith(f"FAIL session: seeds: hand 3's seed is {hand_seed(SEED, 1)}, but "
                             f"a session seeded {SEED} deals hand 3 from hand_seed({SEED}, 2)")
               for ln in got)


def test_verify_fails_an_os_dealt_hand_repeated_under_a_fresh_salt(tmp_path, os_dealt):
    h1, h2, h3 = os_dealt["hands"]
    # the same deal committed again under another salt: its commitment is new and good
    again = fair.committed(decode_record(h2["record"]), fair.new_salt())
    assert again.commitment != h2["record"]["commitment"]
    copy2 = {**h2, "record": msgspec.to_builtins(again)}
    code, out = verify(tmp_path, with_hands(os_dealt, [h1, h2, h3, copy2]))
    assert code == 1
    got = only_session_fails(out)
    assert "FAIL session: repeats: hand 4 repeats hand 2's deal" in got


def test_verify_fails_a_hand_dropped_from_the_middle(tmp_path, seeded):
    h1, h2, h3, h4 = seeded["hands"]
    assert dealer(h2) != dealer(h3), "seed 7 needs another dealer for hand 3 for this test"
    code, out = verify(tmp_path, with_hands(seeded, [h1, h3, h4]))
    assert code == 1
    got = only_session_fails(out)
    assert got[0] == (f"FAIL session: seeds: hand 2's seed is {hand_seed(SEED, 2)}, but a session "
                      f"seeded {SEED} deals hand 2 from hand_seed({SEED}, 1) = "
                      f"{hand_seed(SEED, 1)} (it is the seed of hand 3) (and 1 more)")
    # h3's dealer is h2's next dealer, not h1's (that was h2's own dealer)
    assert got[1] == (f"FAIL session: order: hand 2's dealer is seat {dealer(h3)}, but hand 1's "
                      f"next dealer is seat {next_dealer(h1)}")


# -- the header ------------------------------------------------------------------


@pytest.mark.parametrize("field,value,line", [
    ("variant", "guilin-zipai", ("FAIL session: ruleset: hand 1 is a hand of 'guilin-mahjong', "
                                 "but the header's variant is 'guilin-zipai' (and 3 more)")),
    ("seed", None, (f"FAIL session: seeds: the header's seed is null (every hand dealt by the "
                    f"OS's CSPRNG), but hand 1 was dealt from seed {hand_seed(SEED, 0)} "
                    f"(and 3 more)")),
    ("seed", SEED + 1, (f"FAIL session: seeds: hand 1's seed is {hand_seed(SEED, 0)}, but a "
                        f"session seeded {SEED + 1} deals hand 1 from hand_seed({SEED + 1}, 0) = "
                        f"{hand_seed(SEED + 1, 0)} (and 3 more)")),
])
def test_verify_fails_a_header_that_is_not_the_records(tmp_path, seeded, field, value, line):
    seeded[field] = value
    code, out = verify(tmp_path, seeded)
    assert code == 1
    assert line in only_session_fails(out)


def test_verify_fails_header_options_that_are_not_the_records(tmp_path, seeded):
    assert seeded["options"]["hubao"] is True
    seeded["options"]["hubao"] = False
    code, out = verify(tmp_path, seeded)
    assert code == 1
    assert only_session_fails(out) == [
        ("FAIL session: ruleset: hand 1's options are not the header's: hubao is False in the "
         "header's options but True in hand 1's (and 3 more)")]


def test_verify_fails_a_seed_in_the_header_of_an_os_dealt_session(tmp_path, os_dealt):
    os_dealt["seed"] = SEED
    code, out = verify(tmp_path, os_dealt)
    assert code == 1
    assert ("FAIL session: seeds: hand 1 was not dealt from a seed (rng 'os'), but the header "
            f"says the session was seeded {SEED} (and 2 more)") in only_session_fails(out)


@pytest.mark.parametrize("field,value,message", [
    ("seed", "7", "the header's seed is '7', not an integer or null"),
    ("seed", True, "the header's seed is True, not an integer or null"),
    ("options", [], "the header's options are [], not an object"),
    ("variant", 3, "the header's variant is 3, not a variant name (a string)"),
])
def test_verify_a_malformed_header_is_one_error_line(tmp_path, seeded, field, value, message):
    seeded[field] = value
    code, out = verify(tmp_path, seeded)
    assert code == 2
    assert out == f"error: {tmp_path / 'session.json'}: {message}\n"   # the file named


# -- a dealer that is not the previous hand's next dealer --------------------------


def test_verify_fails_a_spliced_hand_dealt_for_another_dealer(tmp_path, seeded):
    # hand 2 replaced by a real hand from hand 2's own seed, but dealt for a seat
    # other than hand 1's next dealer: it replays, its seed deals its deal
    h1, _, h3, h4 = seeded["hands"]
    wrong = (next_dealer(h1) + 1) % 4
    spliced = genuine_hand(hand_seed(SEED, 1), wrong)
    code, out = verify(tmp_path, with_hands(seeded, [h1, spliced, h3, h4]))
    assert code == 1
    got = only_session_fails(out)
    assert len(got) == 1 and got[0].startswith(
        f"FAIL session: order: hand 2's dealer is seat {wrong}, but hand 1's next dealer is "
        f"seat {next_dealer(h1)}")


def test_verify_fails_a_first_hand_dealt_for_another_dealer_than_the_seed_draws(tmp_path,
                                                                                 seeded):
    h1, h2, h3, h4 = seeded["hands"]
    wrong = (dealer(h1) + 1) % 4  # play drew h1's dealer from hand_seed(7, 0)
    spliced = genuine_hand(hand_seed(SEED, 0), wrong)
    code, out = verify(tmp_path, with_hands(seeded, [spliced, h2, h3, h4]))
    assert code == 1
    got = only_session_fails(out)
    assert len(got) == 1 and got[0].startswith(
        f"FAIL session: order: hand 1's dealer is seat {wrong}, but seed {SEED} draws seat "
        f"{dealer(h1)} for the first hand")


def test_verify_fails_an_os_dealt_hand_spliced_in_for_another_dealer(tmp_path, os_dealt):
    h1, _, h3 = os_dealt["hands"]
    wrong = (next_dealer(h1) + 1) % 4
    code, out = verify(tmp_path, with_hands(os_dealt, [h1, genuine_hand(None, wrong), h3]))
    assert code == 1
    got = only_session_fails(out)
    assert got[0].startswith(f"FAIL session: order: hand 2's dealer is seat {wrong}, but hand "
                             f"1's next dealer is seat {next_dealer(h1)}")


def test_verify_names_an_edited_dealer_though_the_replay_fails_too(tmp_path, seeded):
    # the dealer edited in place (and the deal recommitted): the actions no
    # longer replay, which the replay check catches; the order check names it
    h = seeded["hands"][2]
    wrong = (dealer(h) + 1) % 4
    rec = decode_record(h["record"])
    rec = msgspec.structs.replace(rec, deal=msgspec.structs.replace(rec.deal, dealer=wrong))
    h["record"] = msgspec.to_builtins(fair.committed(rec, fair.new_salt()))
    h["dealer"] = wrong
    code, out = verify(tmp_path, seeded)
    assert code == 1
    got = fails(out)
    assert any(ln.startswith("FAIL hand 3: replay: ") for ln in got), out
    assert (f"FAIL session: order: hand 3's dealer is seat {wrong}, but hand 2's next dealer is "
            f"seat {next_dealer(seeded['hands'][1])}") in got


def test_verify_fails_an_unfinished_hand_followed_by_another(tmp_path, seeded):
    # hand 2 as dealt, before any action: it replays (no actions, no result)
    h1, h2, h3, h4 = seeded["hands"]
    t = load("guilin-mahjong").table(seed=hand_seed(SEED, 1), dealer=dealer(h2))
    rec = msgspec.to_builtins(fair.committed(record_of(t), fair.new_salt()))
    open_hand = {"dealer": dealer(h2), "record": rec}
    code, out = verify(tmp_path, {**seeded, "hands": [h1, open_hand, h3, h4], "total": None})
    assert code == 1
    got = fails(out)
    assert got[0] == "FAIL hand 2: zero sum: the hand is unfinished: the record has no result"
    assert got[1:] == ["FAIL session: order: hand 2 is unfinished, but hand 3 follows it"]


# -- other files of hands ----------------------------------------------------------


def served_shape(doc: dict, indices: list[int]) -> dict:
    """``doc``'s hands as a server's ``GET /tables/{id}/records`` answers them."""
    hands = [{"hand": i, "record": doc["hands"][i]["record"]} for i in indices]
    total = [sum(x) for x in zip(*(doc["hands"][i]["net"] for i in indices))]
    return {"table": "0123456789ab", "hands": hands, "total": total}


def test_verify_checks_a_servers_hand_indices(tmp_path, seeded):
    code, out = verify(tmp_path, served_shape(seeded, [0, 1, 2, 3]))
    assert code == 0, out
    assert ("ok   session: order: the hands are the table's hands 0–3 in order; each next "
            "hand's dealer is the previous hand's next dealer") in out.splitlines()
    assert ("ok   session: seeds: every hand was dealt the same way (rng 'seeded'); the file "
            "names no session seed, so no hand's seed is checked against its place"
            ) in out.splitlines()
    code, out = verify(tmp_path, served_shape(seeded, [1, 2, 3]))
    assert code == 1
    assert only_session_fails(out) == [
        "FAIL session: order: hand 1's index is 1, not 0: the table's first hands are missing"]
    code, out = verify(tmp_path, served_shape(seeded, [0, 2, 3]))
    assert code == 1
    assert only_session_fails(out)[0].startswith(
        "FAIL session: order: hand 2's index is 2, but the one after hand 1's 0 is 1: a hand of "
        "the table is missing, repeated or out of order")
    bad = served_shape(seeded, [0, 1])
    bad["hands"][1]["hand"] = "1"
    code, out = verify(tmp_path, bad)
    named = f"error: {tmp_path / 'session.json'}: "
    assert code == 2 and out == named + "hand 2's index (\"hand\") is '1', not an integer\n"
    del bad["hands"][1]["hand"]
    code, out = verify(tmp_path, bad)
    assert code == 2 and out == named + "hand 2 has no index (\"hand\"), but hand 1 does\n"


def test_verify_a_headerless_list_of_hands_checks_the_order(tmp_path, seeded):
    h1, h2, h3, h4 = seeded["hands"]
    code, out = verify(tmp_path, {"hands": [h1, h2, h3, h4]})
    assert code == 0, out
    assert "ok   session: ruleset: every hand is of hand 1's variant guilin-mahjong and options" \
        in out.splitlines()
    assert dealer(h2) != dealer(h3), "seed 7 needs another dealer for hand 3 for this test"
    code, out = verify(tmp_path, {"hands": [h1, h3, h2, h4]})
    assert code == 1
    # no session seed: only the dealers can tell the order
    got = only_session_fails(out)
    assert len(got) == 1 and got[0].startswith(
        f"FAIL session: order: hand 2's dealer is seat {dealer(h3)}, but hand 1's next dealer "
        f"is seat {next_dealer(h1)}")
