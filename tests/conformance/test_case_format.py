"""The case format's Structs (qipai.conformance.casespec): the loader's
validation, ``qipai conformance --check-cases`` and ``qipai schema --cases``,
and the reference page docs/reference/case-format.md that states them."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from qipai.cli import cli
from qipai.conformance.cases import load_cases
from qipai.conformance.casespec import CHECKS, CASE_TYPES, case_file_schema
from qipai.conformance.checkers import run_case
from qipai.conformance.registry import register_plugin, ruleset_for, unregister_plugin
from qipai.conformance.runner import check_paths

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "case-format.md"
TUIDAOHU = ROOT / "docs" / "examples" / "qipai-tuidaohu"
SHIPPED = sorted((ROOT / "qipai" / "variants").glob("*/cases"))

GOOD = '''variant = "guilin-mahjong"

[[cases]]
id = "deck/size"
source = "docs/variants/mahjong-common.md § Components and seating"
check = "deck"
[cases.expect]
size = 136
'''


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return f


def case(check: str, given: str, expect: str, cid: str = "x") -> str:
    return (f'\n[[cases]]\nid = "{cid}"\nsource = "s"\ncheck = "{check}"\n'
            f'[cases.given]\n{given}\n[cases.expect]\n{expect}\n')


# ------------------------------------------------------------------ shipped cases


def test_there_are_shipped_case_folders():
    assert {p.parent.name for p in SHIPPED} == {"guilin_mahjong", "guangxi_mahjong",
                                                 "guilin_zipai"}


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.parent.name for p in SHIPPED])
def test_every_shipped_case_file_is_well_formed(folder):
    problems, count, notes = check_paths([folder], ruleset_for)
    assert [p.line() for p in problems] == [] and notes == []
    assert count > 20


def test_the_tutorial_example_cases_are_well_formed(monkeypatch):
    monkeypatch.syspath_prepend(str(TUIDAOHU))
    plugin = importlib.import_module("qipai_tuidaohu.plugin")
    name = register_plugin(plugin)
    try:
        problems, count, notes = check_paths([TUIDAOHU], ruleset_for)
    finally:
        unregister_plugin(name)
    assert name == "tuidaohu"
    assert [p.line() for p in problems] == [] and notes == [] and count >= 20


# ------------------------------------------------------------------ malformed cases


@pytest.mark.parametrize("body, expected", [
    (case("decks", "", "size = 136"), "unknown check kind 'decks'"),
    (case("win", 'hand = "123m456m789m11p2p"\nflag = ["haidi"]', "wins = true"),
     "unknown field `flag`"),
    (case("win", 'tile = "2p"', "wins = true"), "missing required field `hand`"),
    (case("win", 'hand = "123m456m789m11p2p"\ndealer = "0"', "wins = true"),
     "Expected `int`, got `str` - at `given.dealer`"),
    (case("win", 'hand = "123m456m789m11p2p"', 'wins = "yes"'), "at `expect.wins`"),
    (case("win", 'hand = "123m456m789m11p2p"', "wons = true"), "unknown field `wons`"),
    (case("win", 'hand = "123m456m789m11p2p"\nhow = "selfdraw"', "wins = true"),
     "at `given.how`"),
    (case("win", 'hand = "123m456m789m11p2p"', ""), "nothing expected"),
    (case("settle", 'winners = [{ seat = 0, hand = "11m", melds = [{ kind = "pong", '
                    'tiles = "E" }] }]', "net = [0, 0, 0, 0]"),
     "given.winners[0].melds[0].kind"),
    (case("win", 'hand = "123m456m789m11p2Q"', "wins = true"),
     "given.hand: bad tile 'Q' at position 17 of '123m456m789m11p2Q'"),
    (case("scenario", 'hands = ["1m", "1m", "1m", "1m"]\nactions = ["0 dicard 5p"]',
          "end = \"hu\""), "unknown verb 'dicard'"),
    (case("scenario", 'hands = ["1m", "1m", "1m", "1m"]\nactions = ["discard 5p"]',
          "end = \"hu\""), "is not \"<seat> <verb> [cards]\""),
    (case("scenario", 'hands = ["1m", "1m", "1m", "1m"]\nactions = ["0 discard 5z9"]',
          "end = \"hu\""), "given.actions[0]"),
    (case("view", 'hands = ["1m", "1m", "1m", "1m"]\nseat = 1',
          'melds = [["angang ? ? ? 9q"]]'), "expect.melds[0][0]"),
    (case("claim", 'hands = ["1m", "1m", "1m", "1m"]\ncard = "1m"\nfrom = 0',
          'legal_chi = { "one" = ["chi 1m 2m 3m"] }'), "expect.legal_chi"),
])
def test_a_malformed_case_is_reported_with_its_id(tmp_path, body, expected):
    f = write(tmp_path, 'variant = "guilin-mahjong"\n' + body)
    problems, count, _ = check_paths([f], ruleset_for)
    assert count == 1 and len(problems) >= 1
    assert problems[0].id == "x" and problems[0].file == str(f)
    assert expected in problems[0].message, problems[0].message


@pytest.mark.parametrize("body, expected", [
    # a seat of 4 players is 0..3 (docs/reference/case-format.md § seats)
    (case("settle", 'dealer = 0\nhow = "zimo"\nstock = []\nwinners = [ { seat = 9, '
                    'hand = "123m456m789s5s", melds = [ { kind = "chi", tiles = "345p", '
                    'from = 2 } ], tile = "5s" } ]', "net = [0, 0, 0, 0]"),
     "seat 9 is not a seat of 4"),
    # five 1m: a deck holds four of each tile (《桂林麻将游戏规则介绍》 136 tiles)
    (case("win", 'hand = "11111m234m567m88s"\ntile = "8s"\nhow = "zimo"', "wins = true"),
     "5 copies of 1m"),
    (case("settle", 'dealer = 0\nhow = "zimo"\nstock = []\nhubao = [[3, 8]]\nwinners = '
                    '[ { seat = 3, hand = "123m456m789s5s", melds = [ { kind = "chi", '
                    'tiles = "345p", from = 2 } ], tile = "5s" } ]', "net = [0, 0, 0, 0]"),
     "hubao [3, 8]"),
])
def test_cards_and_seats_the_variant_refuses_are_reported(tmp_path, body, expected):
    # malformed for --check-cases, not found only when the suite runs them
    f = write(tmp_path, 'variant = "guilin-mahjong"\n' + body)
    (p,), count, _ = check_paths([f], ruleset_for)
    assert count == 1 and p.id == "x"
    assert p.message.startswith("the variant refuses it: ") and expected in p.message, p.message


def test_a_case_that_only_fails_its_expectation_is_well_formed(tmp_path):
    # 平胡 by zimo pays, so net [0, 0, 0, 0] is wrong — but that is for the run to say
    f = write(tmp_path, 'variant = "guilin-mahjong"\n' + case(
        "settle", 'dealer = 0\nhow = "zimo"\nstock = []\nwinners = [ { seat = 3, '
                  'hand = "123m456m789s5s", melds = [ { kind = "chi", tiles = "345p", '
                  'from = 2 } ], tile = "5s" } ]', "net = [0, 0, 0, 0]"))
    assert check_paths([f], ruleset_for)[0] == []


def test_duplicate_ids_and_bad_options_are_reported(tmp_path):
    f = write(tmp_path, GOOD + GOOD.split("\n", 1)[1].replace('check = "deck"',
                                                              'check = "deck"\noptions = '
                                                              '{ hubao = 3 }'))
    problems, count, _ = check_paths([f], ruleset_for)
    assert count == 2 and [p.id for p in problems] == ["deck/size"]
    assert "duplicate id" in problems[0].message
    g = write(tmp_path, GOOD.replace('check = "deck"', 'check = "deck"\noptions = '
                                                       '{ hubao = 3 }'), "g.toml")
    (p,), _, _ = check_paths([g], ruleset_for)
    assert p.message.startswith("options: ") and "hubao" in p.message


def test_a_file_that_is_not_a_case_file_is_one_problem(tmp_path):
    f = write(tmp_path, "[[cases]]\nid = 3\n")
    (p,), count, _ = check_paths([f], ruleset_for)
    assert count == 0 and p.id == "" and "variant" in p.message
    write(tmp_path, "variant = \"guilin-mahjong\"\n[[cases]\n", "broken.toml")
    problems, _, _ = check_paths([tmp_path], ruleset_for)
    assert any("cannot read" in p.message for p in problems)


def test_a_folder_skips_toml_files_that_hold_no_cases(tmp_path):
    write(tmp_path, "[project]\nname = \"x\"\n", "pyproject.toml")
    write(tmp_path, GOOD)
    problems, count, _ = check_paths([tmp_path], ruleset_for)
    assert problems == [] and count == 1


def test_an_unregistered_variant_gets_its_structure_checked_and_a_note(tmp_path):
    f = write(tmp_path, 'variant = "no-such-variant"\n'
              + case("win", 'hand = "anything"', "wns = true")
              + case("win", 'hand = "anything"', "wins = true", "y"))
    problems, _, notes = check_paths([f], ruleset_for)
    assert [p.id for p in problems] == ["x"] and "no-such-variant" in notes[0]


def test_the_runner_fails_a_malformed_case_with_the_reason(tmp_path):
    f = write(tmp_path, 'variant = "guilin-mahjong"\n'
              + case("win", 'hand = "123m456m789m11p2p"\ntile = "2p"\nflag = ["haidi"]',
                     "wins = true"))
    (c, options), = load_cases([f], "guilin-mahjong")
    out = run_case("guilin-mahjong", c, options)
    assert not out.passed and "malformed case" in out.message and "flag" in out.message


# ------------------------------------------------------------------ the CLI


def test_check_cases_cli_one_line_per_problem_and_exit_1(tmp_path):
    f = write(tmp_path, 'variant = "guilin-mahjong"\n' + case("decks", "", "size = 1", "a")
              + case("win", 'hand = "1m"\nflag = []', "wins = true", "b"))
    r = CliRunner().invoke(cli, ["conformance", "--check-cases", str(f)])
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{f}: case 'a': unknown check kind")
    assert lines[1].startswith(f"{f}: case 'b': ") and "flag" in lines[1]
    assert "2 problem(s) in 2 cases" in r.stderr and "Traceback" not in r.output


def test_check_cases_cli_counts_good_cases_and_exits_0(tmp_path):
    f = write(tmp_path, GOOD)
    r = CliRunner().invoke(cli, ["conformance", "--check-cases", str(f)])
    assert r.exit_code == 0 and r.stdout.strip() == "1 cases, all well-formed"
    r = CliRunner().invoke(cli, ["conformance", "--check-cases",
                                 str(ROOT / "qipai" / "variants")])
    assert r.exit_code == 0 and "all well-formed" in r.stdout


def test_check_cases_cli_missing_path_is_one_error_line(tmp_path):
    r = CliRunner().invoke(cli, ["conformance", "--check-cases", str(tmp_path / "nope")])
    assert r.exit_code == 2 and r.stderr.startswith("error: no case file or folder at")
    r = CliRunner().invoke(cli, ["conformance"])
    assert r.exit_code == 2 and "VARIANT" in r.stderr
    r = CliRunner().invoke(cli, ["conformance", "--check-cases", str(tmp_path), "more/"])
    assert r.exit_code == 2 and "one PATH per --check-cases" in r.stderr


# ------------------------------------------------------------------ the schema and the page


def test_schema_cases_prints_the_structs_schema():
    r = CliRunner().invoke(cli, ["schema", "--cases"])
    assert r.exit_code == 0 and json.loads(r.stdout) == case_file_schema()
    kinds = case_file_schema()["$defs"]["CaseFile"]["properties"]["cases"]["items"]
    assert sorted(kinds["discriminator"]["mapping"]) == sorted(CHECKS)


def page_schema() -> dict:
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(r"## JSON Schema.*?```json\n(.*?)\n```", text, re.S)
    assert m, "the page has no ```json block under '## JSON Schema'"
    return json.loads(m.group(1))


def test_the_reference_page_schema_is_the_structs_schema():
    assert page_schema() == case_file_schema(), \
        "regenerate the block: uv run qipai schema --cases"


def test_the_reference_page_lists_every_key_of_every_check_kind():
    text = PAGE.read_text(encoding="utf-8")
    for kind, struct in CASE_TYPES.items():
        m = re.search(rf"^### `{kind}`.*?(?=^### |^## )", text, re.S | re.M)
        assert m, f"no section ### `{kind}`"
        section = m.group(0)
        for part in ("given", "expect"):
            sub = struct.__annotations__[part]
            sub_type = getattr(importlib.import_module(struct.__module__), sub)
            for f in sub_type.__struct_fields__:
                name = sub_type.__struct_encode_fields__[sub_type.__struct_fields__.index(f)]
                assert f"`{name}`" in section, f"{kind}.{part}.{name} is not on the page"


def test_the_conformance_howto_links_the_reference_page():
    howto = (ROOT / "docs" / "howto" / "conformance.md").read_text(encoding="utf-8")
    assert "reference/case-format" in howto


def page_examples() -> list[tuple[str, str]]:
    """The page's TOML examples that hold cases, each with its variant."""
    import tomllib

    out = []
    for block in re.findall(r"```toml\n(.*?)\n```", PAGE.read_text(encoding="utf-8"), re.S):
        if "[[cases]]" not in block:
            continue
        variant = tomllib.loads(block).get("variant") or (
            "guilin-zipai" if '"x1' in block else "guilin-mahjong")
        if "variant" not in tomllib.loads(block):
            block = f'variant = "{variant}"\n' + block
        out.append((variant, block))
    return out


def test_the_reference_page_examples_are_well_formed_and_pass(tmp_path):
    examples = page_examples()
    assert len(examples) == 10  # the file example and one per check kind
    for i, (variant, block) in enumerate(examples):
        f = write(tmp_path, block, f"{i}.toml")
        problems, _, _ = check_paths([f], ruleset_for)
        assert problems == [], problems
        for c, options in load_cases([f], variant):
            out = run_case(variant, c, options)
            assert out.passed, f"{c.id}: {out.message}"
