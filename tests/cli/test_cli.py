"""The ``qipai`` command line, through click's CliRunner (and once as a process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from qipai.cli import cli


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, list(args), input=input, catch_exceptions=False)

    return invoke


@pytest.fixture(scope="module")
def three_hands() -> dict:
    res = CliRunner().invoke(cli, ["play", "--seed", "5", "--hands", "3", "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def one_line_error(res, *words: str) -> None:
    assert res.exit_code != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in res.output
    for w in words:
        assert w in lines[0], (w, lines[0])


# -------------------------------------------------------------------- play


def test_play_seed_prints_log_and_settlement(run):
    res = run("play", "--seed", "1")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "seed 1" in out
    assert "deal — dealer seat" in out
    assert "discards" in out
    assert "settlement, hand 1" in out and "total" in out
    assert "wins" in out or "huangzhuang" in out


def test_play_json_is_one_object_zero_sum_with_total(run):
    res = run("play", "--seed", "1", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["variant"] == "guilin-mahjong" and doc["seed"] == 1
    assert doc["options"]["hubao"] is True
    assert len(doc["hands"]) == 1
    hand = doc["hands"][0]
    assert hand["end"] in ("hu", "huangzhuang")
    assert sum(hand["net"]) == 0
    assert hand["record"]["result"]["net"] == hand["net"]
    assert doc["total"] == hand["net"]


def test_play_json_same_seed_same_output(run):
    first = run("play", "--seed", "9", "--json").stdout
    assert run("play", "--seed", "9", "--json").stdout == first


def test_play_hands_follow_next_dealer(three_hands):
    hands = three_hands["hands"]
    assert len(hands) == 3
    for before, after in zip(hands, hands[1:]):
        assert after["dealer"] == before["record"]["result"]["next_dealer"]
    assert three_hands["total"] == [sum(h["net"][s] for h in hands) for s in range(4)]
    assert all(sum(h["net"]) == 0 for h in hands)


def test_play_with_options_and_random_bots(run):
    res = run("play", "guilin-mahjong(hubao=false, max_flips=1)", "--seed", "2",
              "--bots", "random", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["options"]["hubao"] is False and doc["options"]["max_flips"] == 1
    assert doc["hands"][0]["record"]["options"]["hubao"] is False


def test_play_without_seed_deals_from_the_os(run):
    """An unseeded session deals every hand from the OS's CSPRNG
    (no seed to guess, none recorded); each record says so and replays."""
    from qipai.core.records import decode_record, replay_check

    res = run("play", "--json", "--hands", "2")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["seed"] is None
    for hand in doc["hands"]:
        assert hand["record"]["seed"] is None and hand["record"]["rng"] == "os"
        assert replay_check(decode_record(hand["record"])) is None
    log = run("play")
    assert log.exit_code == 0 and "reproduce: qipai play" not in log.stdout


def test_play_unknown_variant(run):
    one_line_error(run("play", "nosuch"), "nosuch")


def test_play_unknown_option(run):
    one_line_error(run("play", "guilin-mahjong(nosuch=1)"), "nosuch")


def test_play_bad_option_value(run):
    one_line_error(run("play", "guilin-mahjong(zhuipai=sometimes)"), "zhuipai")


def test_play_bad_usage_exits_2(run):
    res = run("play", "--hands", "0")
    assert res.exit_code == 2 and "Traceback" not in res.output


# -------------------------------------------------------------------- replay


def test_replay_play_output(run, three_hands, tmp_path):
    f = tmp_path / "session.json"
    f.write_text(json.dumps(three_hands))
    res = run("replay", str(f))
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("replay identical: 3 hands")
    # one verdict line, then each hand's payments with their breakdown
    lines = res.stdout.strip().splitlines()
    assert sum(line.startswith("replay ") for line in lines) == 1
    assert [line.split(":")[0] for line in lines if line.startswith("hand ")] == [
        "hand 1", "hand 2", "hand 3"]


def test_replay_single_record_and_stdin(run, three_hands, tmp_path):
    record = three_hands["hands"][1]["record"]
    f = tmp_path / "hand.json"
    f.write_text(json.dumps(record))
    assert run("replay", str(f)).exit_code == 0
    res = run("replay", "-", input=json.dumps(record))
    assert res.exit_code == 0 and res.stdout.startswith("replay identical: 1 hand")


def test_replay_tampered_net(run, three_hands, tmp_path):
    doc = json.loads(json.dumps(three_hands))
    net = doc["hands"][2]["record"]["result"]["net"]
    net[0] += 1
    net[1] -= 1
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc))
    res = run("replay", str(f))
    assert res.exit_code == 1
    assert "replay differs: hand 3" in res.stdout and "result differs" in res.stdout


def test_replay_tampered_summary_net_and_total(run, three_hands, tmp_path):
    doc = json.loads(json.dumps(three_hands))
    doc["hands"][0]["net"] = [0, 0, 0, 0]
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc))
    res = run("replay", str(f))
    assert res.exit_code == 1 and "hand 1: net" in res.stdout
    doc = json.loads(json.dumps(three_hands))
    doc["total"] = [1, -1, 0, 0]
    f.write_text(json.dumps(doc))
    res = run("replay", str(f))
    assert res.exit_code == 1 and "total" in res.stdout


def test_replay_tampered_action(run, three_hands, tmp_path):
    doc = json.loads(json.dumps(three_hands))
    actions = doc["hands"][0]["record"]["actions"]
    i = next(i for i, a in enumerate(actions) if a["type"] == "discard")
    actions[i]["card"] = (actions[i]["card"] + 1) % 34
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc))
    res = run("replay", str(f))
    assert res.exit_code == 1
    assert res.stdout.startswith("replay differs: hand 1: ")
    assert "action" in res.stdout or "event" in res.stdout


def test_replay_legal_but_different_action(run, three_hands, tmp_path):
    # Swap the first discard for another tile the same seat holds: still
    # legal, so the replay runs and its events differ.
    doc = json.loads(json.dumps(three_hands))
    rec = doc["hands"][0]["record"]
    dealer = rec["deal"]["dealer"]
    first = rec["actions"][0]
    assert first["type"] == "discard" and first["seat"] == dealer
    other = next(k for k in rec["deal"]["hands"][dealer] if k != first["card"])
    first["card"] = other
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc))
    res = run("replay", str(f))
    assert res.exit_code == 1 and "replay differs: hand 1:" in res.stdout


@pytest.mark.parametrize("content, word", [
    ("{not json", "not a JSON record: JSON is malformed"),
    ('{"format": 99, "variant": "guilin-mahjong"}', "format"),
    ('{"format": 1, "variant": "guilin-mahjong"}', "deal"),
    # in qipai's words, not the JSON library's ("expected JSON text or a dict")
    ("[1, 2, 3]", "a record is a JSON object, not an array"),
    ('"text"', "a record is a JSON object, not a string"),
    ('{"hands": [{"record": [1]}]}', "hand 1: a record is a JSON object, not an array"),
    ('{"hands": []}', "hands"),
    ('{"format": 2, "variant": "nosuch"}', "deal"),
])
@pytest.mark.parametrize("cmd", ["replay", "verify"])
def test_replay_malformed_file(run, tmp_path, content, word, cmd):
    """The error names the file, as qipai report's do."""
    f = tmp_path / "bad.json"
    f.write_text(content)
    res = run(cmd, str(f))
    assert res.exit_code == 2
    one_line_error(res, word)
    assert res.stderr.startswith(f"error: {f}: "), res.stderr


def test_records_on_stdin_are_named_stdin(run, three_hands):
    for cmd in ("replay", "verify"):
        res = run(cmd, "-", input="[1]")
        assert res.exit_code == 2
        assert res.stderr == "error: stdin: a record is a JSON object, not an array\n"
    # a record the file holds of a variant this qipai has not: the file's too
    rec = dict(three_hands["hands"][0]["record"], variant="nosuch")
    res = run("verify", "-", input=json.dumps(rec))
    one_line_error(res, "nosuch")
    assert res.stderr.startswith("error: stdin: ")


def test_replay_record_of_unknown_variant(run, three_hands, tmp_path):
    doc = json.loads(json.dumps(three_hands["hands"][0]["record"]))
    doc["variant"] = "nosuch"
    f = tmp_path / "r.json"
    f.write_text(json.dumps(doc))
    res = run("replay", str(f))
    assert res.exit_code == 2
    one_line_error(res, "nosuch")


def test_replay_missing_file(run, tmp_path):
    res = run("replay", str(tmp_path / "nope.json"))
    assert res.exit_code == 2
    one_line_error(res, "nope.json")


# -------------------------------------------------------------------- variants, entry points


def test_variants_lists_guilin_with_options(run):
    res = run("variants")
    assert res.exit_code == 0, res.output
    assert "guilin-mahjong" in res.stdout and "桂林麻将" in res.stdout
    assert "hubao" in res.stdout and "true" in res.stdout


def test_variants_lists_guilin_zipai_with_options(run):
    res = run("variants")
    assert res.exit_code == 0, res.output
    assert "guilin-zipai" in res.stdout and "桂林字牌" in res.stdout
    assert "zipai" in res.stdout and "hu_scale" in res.stdout and '"10/3"' in res.stdout


def test_play_zipai_as_a_process():
    play = subprocess.run([sys.executable, "-m", "qipai", "play", "guilin-zipai", "--seed", "3"],
                          capture_output=True, text=True, timeout=120)
    assert play.returncode == 0, play.stderr
    assert "桂林字牌" in play.stdout and "settlement, hand 1" in play.stdout
    bad = subprocess.run([sys.executable, "-m", "qipai", "play", "guilin-zipai(hu_scale=9/9)"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert bad.stderr.startswith("error: ") and "hu_scale" in bad.stderr


def test_conformance_command_is_wired(run, monkeypatch):
    import types

    seen = {}

    def fake_main(variant, cases):
        seen["args"] = (variant, cases)
        return 3

    module = types.ModuleType("qipai.conformance.runner")
    module.main = fake_main
    monkeypatch.setitem(sys.modules, "qipai.conformance.runner", module)
    res = run("conformance", "guilin-mahjong", "--cases", "a.toml", "--cases", "b")
    assert res.exit_code == 3
    assert seen["args"] == ("guilin-mahjong", ["a.toml", "b"])


def test_python_m_qipai_help_and_play():
    help_ = subprocess.run([sys.executable, "-m", "qipai", "--help"],
                           capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and "replay" in help_.stdout
    play = subprocess.run([sys.executable, "-m", "qipai", "play", "--seed", "4"],
                          capture_output=True, text=True, timeout=120)
    assert play.returncode == 0, play.stderr
    assert "settlement, hand 1" in play.stdout
    bad = subprocess.run([sys.executable, "-m", "qipai", "play", "nosuch"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr


def test_play_shows_the_winning_tile_once_after_the_concealed_hand():
    # break11: a win on a discard printed the hand with the won tile in it
    # and then "+ tile" again (15 tiles).  guilin-mahjong --seed 28: seat 3
    # wins on 3s with 456p 345s 99s concealed and 888m, 234m laid down.
    res = CliRunner().invoke(cli, ["play", "guilin-mahjong", "--seed", "28"])
    assert res.exit_code == 0, res.output
    assert "seat 3 wins hand 456p 4599s " in res.output
    assert "+ 3s(三条)" in res.output
    # a 自摸 (--seed 19) was right already: 13 tiles + the drawn 8p
    res = CliRunner().invoke(cli, ["play", "guilin-mahjong", "--seed", "19"])
    assert "seat 1 wins hand 4467p 123s " in res.output and "+ 8p(八筒)" in res.output


# ------------------------------------------------- hostile input


def test_deeply_nested_input_is_one_line(run, tmp_path):
    """JSON nested 100,000 deep (bare, or inside a play output's wrapper)
    for replay and verify, and TOML nested 5,000 deep for the conformance
    case options: one error line, status 2 (not a RecursionError
    traceback, nor status 1, which means 'differs')."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text('{"hands": [{"record": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}]}")
    for path in (deep, wrapped):
        for cmd in ("replay", "verify"):
            res = run(cmd, str(path))
            one_line_error(res, "nested too deeply")
            assert res.exit_code == 2
    toml = tmp_path / "deep.toml"
    toml.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    res = run("conformance", "--check-cases", str(toml))
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert "nested too deeply to parse" in res.stdout
    one_line_error(run("conformance", "guilin-mahjong", "--cases", str(toml)),
                   "nested too deeply to parse")


def test_conformance_of_a_ruleset_string_is_refused(run):
    """The variant's own cases are found by its name; under a ruleset
    string they were skipped and only the property checks ran, "5 checks,
    5 passed" (a silently wrong answer).  Now refused, naming the names."""
    for spec in ("guilin-mahjong(hubao=false)", " guilin-mahjong ", "guilin-mahjong()"):
        res = run("conformance", spec)
        one_line_error(res, "by its registered name", "guilin-mahjong", repr(spec))
        assert "passed" not in res.stdout


def test_an_empty_or_relative_plugin_name_is_one_line(run, tmp_path, three_hands):
    """--plugin '' and --plugin .x (importlib's ValueError and TypeError),
    and a plugin file whose own code raises as it is imported: one line."""
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1 / 0\n")
    record = json.dumps(three_hands)
    for name, words in (("", ["empty name"]), (".x", ["relative"]),
                        (str(broken), ["ZeroDivisionError"])):
        for cmd in (["play"], ["replay", "-"], ["verify", "-"]):
            one_line_error(run(*cmd, "--plugin", name, input=record), "cannot load plugin",
                           *words)


def test_replay_of_an_unfinished_record_says_so(run, tmp_path):
    """A record with no result replays; the verdict claims no settlement
    that is not there."""
    from qipai.bots import make_bots
    from qipai.core.records import record_of
    from qipai.core.ruleset import load
    import msgspec

    table = load("guilin-mahjong").table(seed=3)
    bots = make_bots("random", 4, 3)
    from qipai.bots import decide
    for _ in range(10):
        seat = table.to_decide()[0]
        table.apply(decide(bots[seat], table, seat))
    path = tmp_path / "open.json"
    path.write_bytes(msgspec.json.encode(record_of(table)))
    res = run("replay", str(path))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == ("replay identical: 1 hand of guilin-mahjong, 10 actions; "
                                          "events match; unfinished (no result): no settlement "
                                          "to compare")


def test_a_record_without_format_is_named(run):
    res = run("replay", "-", input='{"variant": "guilin-mahjong"}')
    one_line_error(res, "no format", '"format": 2')


def test_the_command_modules_load_only_when_used():
    # qipai.cli is a lazy group: importing it (every console-script start)
    # reads no command module and no engine; a command's module is read
    # when it runs or its help is shown.
    code = ("import sys, qipai.cli; print(' '.join(sorted(m for m in sys.modules "
            "if m.startswith('qipai'))))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["qipai", "qipai.cli", "qipai.cli.common", "qipai.core",
                                  "qipai.core.errors"]
    code = ("import sys; from qipai.cli import main; sys.argv = ['qipai', 'schema', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(m for m in sys.modules if m.startswith('qipai.cli.')))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split()[-2:] == ["qipai.cli.common", "qipai.cli.schema"]
