"""The hand calculator (qipai.calc, ``qipai score``) and the readings hook.

Every expected number here is worked out by hand from the docs' variant
pages (the comment beside it says how), never copied from the output.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

import qipai
from qipai.calc import Score, score
from qipai.cli import cli
from qipai.conformance import strategies as qst
from qipai.core.errors import BadCards, BadNotation
from qipai.core.model import why_total
from qipai.core.ruleset import load


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# ------------------------------------------------------------ the docs' three examples
#
# docs/howto/score-a-hand.md shows these three commands; the numbers are
# those of the variant pages.

GUILIN = ["score", "guilin-mahjong", "11223344556677m", "--how", "dianpao", "--seat", "1",
          "--from", "0", "--flag", "gangshangpao"]
GUANGXI = ["score", "guangxi-mahjong", "55m", "--melds", "peng 1m; peng 3m; peng 7m; peng 9m",
           "--how", "dianpao", "--seat", "1", "--from", "0"]
ZIPAI = ["score", "guilin-zipai", "d1 d2 d3 d2 d7 d10 x1 x2 x3 x4 x5 x6 x7 x8 d4 d5 d6 d8 d8 x8 x9",
         "--seat", "1", "--flip", "x2 d5"]


def _json(args: list[str]) -> dict:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_doc_example_guilin_qingyise_qidui_gangshangpao() -> None:
    # guilin-mahjong.md: 清一色 + 七对 + 杠上炮 = (35 + 35) × 2 = 140, paid by
    # the discarder.  The standard readings are 清一色 × 门清 × 杠上炮 = 35 × 4
    # = 140 too; D-M4's tie rule keeps the larger value before multipliers.
    doc = _json(GUILIN)
    assert doc["wins"] is True
    assert sorted(doc["patterns"]) == ["gangshangpao", "qidui", "qingyise"]
    assert [(p["payer"], p["payee"], p["amount"]) for p in doc["payments"]] == [(0, 1, 140)]
    paid = [r for r in doc["readings"] if r["paid"]]
    assert len(paid) == 1 and paid[0]["shape"] == "qidui" and paid[0]["value"] == 140
    assert {r["value"] for r in doc["readings"]} == {140}
    assert len(doc["readings"]) == 4  # 七对 and three standard decompositions
    assert all("why" in p for p in doc["payments"])
    # the breakdown is the variant's (Payment.why) and totals the amount
    s = score("guilin-mahjong", "11223344556677m", how="dianpao", seat=1, from_seat=0,
              flags=["gangshangpao"])
    (p,) = s.payments
    assert p.why and why_total(p.why) == p.amount == 140


def test_doc_example_guangxi_qingyise_quanqiuren() -> None:
    # guangxi-mahjong.md Combining: 全求人 18 → 清一色全求人 36 (by discard).
    doc = _json(GUANGXI)
    assert doc["wins"] is True
    assert sorted(doc["patterns"]) == ["qingyise", "quanqiuren"]
    assert doc["value"] == 36
    assert doc["net"] == [-36, 36, 0, 0]


def test_doc_example_zipai_zimo_with_xing() -> None:
    # guilin-zipai.md: 壹贰叁 6 + 贰柒拾 6 + 一二三 3 = 15 胡数 → 10/3: 1 + ⌊5/3⌋
    # = 2 子; flip x2, 上醒 x3 held once → 中醒 1; 自摸 2番: share (2 + 1) × 2
    # = 6 from each of the two others.
    doc = _json(ZIPAI)
    assert doc["wins"] is True and doc["hu"] == 15 and doc["value"] == 2
    assert doc["patterns"] == ["zimo"]
    assert doc["flipped"] == ["x2"] and doc["xing"] == 1
    assert sorted((p["payer"], p["amount"]) for p in doc["payments"]) == [(0, 6), (2, 6)]
    assert doc["net"] == [-6, 12, -6]


def test_doc_page_shows_the_three_examples() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "howto" / "score-a-hand.md").read_text()
    for args in (GUILIN, GUANGXI, ZIPAI):
        assert args[1] in page and args[2] in page
    for shown in (r"seat 0 → seat 1 +140 ", r"seat 0 → seat 1 +36 ", r"seat 0 → seat 1 +6 ",
                  r"seat 2 → seat 1 +6 ", r"seat 0 -6 · seat 1 \+12 · seat 2 -6",
                  r"胡数 +15", r"醒数 1"):
        assert re.search(shown, page), shown


# ------------------------------------------------------------ more hand-checked values


def test_guangxi_seven_pairs_beat_the_standard_reading() -> None:
    # 112233m445566p77s zimo: 七小对 zimo 8 each (24) against 平胡 zimo 3 × 4/3
    # 门清 = 4 each (12): D-M4 pays 七小对.
    s = score("guangxi-mahjong", "112233m445566p77s")
    assert s.wins and s.patterns == ["qixiaodui"]
    assert [(r.shape, r.value, r.paid) for r in s.readings] == [
        ("standard", 12, False), ("qidui", 24, True)]
    assert s.net == [24, -8, -8, -8]


def test_guilin_hubao_zimo_with_flip() -> None:
    # Non-dealer seat 1, 平胡 zimo, 门清 ×2: dealer owes 4 × 2, the others 2 × 2;
    # flip 3p: 醒 are every 2 and 4 → 2m 4p 2s 4s = 4 醒, +4 from each payer
    # (no tile left for the re-flip): 12 + 8 + 8 = 28; 互包 with seat 2:
    # seat 2 pays it all, doubled = 56 (guilin-mahjong.md 互包 case 2).
    s = score("guilin-mahjong", "123m456p789s234sCC", seat=1, dealer=0,
              relations={"hubao": [[1, 2]]}, flip="3p")
    assert s.xing == 4 and s.flipped == ["3p"]
    assert [(p.payer, p.payee, p.amount) for p in s.payments] == [(2, 1, 56)]


def test_no_flip_means_no_xing_even_in_zipai() -> None:
    # Without --flip nothing is flipped: 2 子 × 2番 = 4 from each other seat.
    s = score("guilin-zipai", ZIPAI[2], seat=1)
    assert s.flipped == [] and s.xing == 0 and not s.flip
    assert s.net == [-4, 8, -4]
    assert s.variant == "guilin-zipai"


def test_python_one_call_returns_a_struct() -> None:
    s = qipai.score("guilin-mahjong", "11223344556677m", how="dianpao", seat=1, from_seat=0)
    assert isinstance(s, Score)
    # 七对 + 清一色 = 70 (no 门清 for 七对); the standard 清一色 × 门清 = 70: tie → 七对
    assert s.value == 70 and s.net == [-70, 70, 0, 0]


def test_non_winning_hand() -> None:
    res = run("score", "guilin-mahjong", "123m456p789s2345sC")
    assert res.exit_code == 0
    assert "does not win" in res.stdout
    doc = _json(["score", "guilin-mahjong", "123m456p789s2345sC"])
    assert doc["wins"] is False and doc["payments"] == [] and doc["readings"] == []


def test_zipai_below_the_minimum() -> None:
    # x1..x9 runs 3 + six 0-groups: hu 3 < 10
    s = score("guilin-zipai", "x1 x2 x3 x4 x5 x6 x7 x8 x9 d1 d1 x1 d4 d5 d6 d7 d8 d9 x10 x10 x10",
              seat=0, how="fangpao", from_seat=1)
    assert not s.wins and "below" in s.note


def test_zipai_lists_every_split_and_pays_the_one_with_most_hu() -> None:
    # x1 x1 x2 x2 x3 x3 read as two 一二三 (3 + 3) + 壹贰叁 6 + 贰柒拾 6 = 18 胡数
    # → 1 + ⌊8/3⌋ = 3 子; or as 小小大 x1 x1 d1, x2 x2 d2, x3 x3 d3 (0 each) +
    # 贰柒拾 6 = 6 胡数, below 10.  放炮: the discarder pays both shares, 2 × 3.
    s = score("guilin-zipai", "x1 x1 x2 x2 x3 x3 d1 d2 d3 d2 d7 d10 x4 x5 x6 x7 x8 x9 d4 d5 d6",
              how="fangpao", from_seat=2)
    assert sorted((r.hu, r.value, r.paid) for r in s.readings) == [(6, 0, False), (18, 3, True)]
    assert [r.patterns for r in s.readings if not r.paid] == [()]
    assert s.hu == 18 and s.net == [6, 0, -6]


def test_zipai_sanlong_wukan_without_a_winning_card() -> None:
    # guilin-zipai.md D-ZP6/D-ZP16: five 坎 (5 × 3) + 壹贰叁 6 = 21 胡数 → 1 + ⌊11/3⌋
    # = 4 子; flip d4, 上醒 d5 held once → 1; 2番: (4 + 1) × 2 = 10 from each.
    s = score("guilin-zipai", "x1 x1 x1 x3 x3 x3 x5 x5 x5 x7 x7 x7 x9 x9 x9 d1 d2 d3 d5 d8",
              tile="none", flags=["sanlong_wukan"], seat=1, flip="d4 x2")
    assert s.tile is None and s.hu == 21 and s.xing == 1
    assert s.net == [-10, 20, -10]
    (r,) = s.readings
    assert r.paid and r.groups[-1] == "rest d1 d2 d3 d5 d8 (6)"


def test_zipai_groups_are_named_as_the_rules_name_them() -> None:
    # guilin-zipai.md §1 names every valid 3-card group 一坒 `bi` and the pair
    # 一对 `dui`; it has no 顺: 二七十, 贰柒拾, 大大小 and 小小大 are 坒, not runs.
    # 一二三 3 + 二七十 3 + 大大小 0 + 小小大 0 + 贰柒拾 6 + 对 0 + 扫穿 x4 9 = 21
    # 胡数 → 1 + ⌊11/3⌋ = 4 子; empty stock (海底胡): the winning card d9 is
    # flipped, 上醒 d10 held once → 1; 自摸 2番: (4 + 1) × 2 = 10 from each.
    args = ["score", "guilin-zipai", "x2 x7 x10 d2 d7 d10 d5 d5 x5 x6 x6 d6 x1 x2 x3 d9 d9",
            "--melds", "saochuan x4", "--seat", "1", "--flip", ""]
    doc = _json(args)
    assert [(p["payer"], p["amount"]) for p in doc["payments"]] == [(0, 10), (2, 10)]
    (paid,) = [r for r in doc["readings"] if r["paid"]]
    assert sorted(paid["groups"]) == sorted([
        "bi x1 x2 x3 (3)", "bi x2 x7 x10 (3)", "bi x5 d5 d5 (0)", "bi x6 x6 d6 (0)",
        "bi d2 d7 d10 (6)", "dui d9 d9 (0)", "saochuan x4 x4 x4 x4 (9)"])
    from qipai.text.payments import payment_rows

    s = score("guilin-zipai", args[2], melds=[args[4]], seat=1, flip="")
    (row, _) = payment_rows(s.payments, load("guilin-zipai").manifest)
    assert "坒 bi x5 d5 d5 0 + 坒 bi x6 x6 d6 0" in row.why and "坒 bi x2 x7 x10 3" in row.why
    assert "对 dui d9 d9 0" in row.why
    text = run(*args).stdout  # the command's table, wrapped
    assert "shun" not in text and "顺" not in text and "pair" not in text


@pytest.mark.parametrize("args, words", [
    (["guilin-mahjong", "123q"], ["bad tile 'q' at position 4 of '123q'", "suit"]),
    (["guilin-mahjong", "11223344556677x"], ["bad tile 'x' at position 15 of"]),
    (["guilin-mahjong", "11111m"], ["5 copies"]),
    (["guilin-mahjong", "1123456789m123p"], ["14 tiles", "13"]),
    (["guilin-mahjong", "11223344556677m", "--tile", "9p"], ["not in the hand"]),
    (["guilin-mahjong", "11223344556677m", "--how", "fangpao"], ["how must be one of"]),
    (["guilin-zipai", "x1 x2", "--how", "dianpao"], ["how must be one of"]),
    (["guilin-mahjong", "55m", "--melds", "pong 1m"], ["unknown meld kind"]),
    (["guilin-mahjong", "55m", "--melds", "peng"], ["bad meld"]),
    (["guilin-mahjong", "11223344556677m", "--seat", "7"], ["seat 7"]),
    (["guilin-mahjong", "11223344556677m", "--relation", "hubao"], ["--relation"]),
    (["nope", "123m"], ["unknown variant"]),
])
def test_bad_input_is_one_line_error(args: list[str], words: list[str]) -> None:
    res = run("score", *args)
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_library_errors_are_typed() -> None:
    with pytest.raises(BadNotation):
        score("guilin-mahjong", "12x")
    with pytest.raises(BadCards):
        score("guilin-mahjong", "11111m")


# ------------------------------------------------------------ readings (hook qipai_readings)


@pytest.mark.parametrize("variant", ["guilin-mahjong", "guangxi-mahjong"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(claim=qst.winning_hands(qidui=True))
def test_readings_agree_with_the_win_check(variant: str, claim) -> None:
    """One reading is paid; it has the win check's patterns and pays the
    most (D-M4); a settlement pays the winner its value when nothing else
    (flip, liability) applies."""
    rs = load(variant)
    for how, src in (("zimo", None), ("dianpao", (claim.seat + 1) % 4)):
        ev = rs.win_check(claim, how, 0, src)
        rds = rs.readings(claim, how, 0, src)
        assert ev.wins == bool(rds)
        if not ev.wins:
            continue
        paid = [r for r in rds if r.paid]
        assert len(paid) == 1
        assert sorted(paid[0].patterns) == sorted(ev.patterns)
        assert paid[0].value == max(r.value for r in rds)


def test_the_header_of_a_win_with_no_winning_card_says_no_zimo():
    # guilin-zipai §3.3 step 1, D-ZP6: seat 2 dealt five 坎 wins 三笼五坎 with
    # no winning card; guilin-zipai §4: it is no 自摸, though each other seat pays
    # as for one.  The header read "自摸 zimo no winning card".
    r = run("score", "guilin-zipai",
             "x1 x1 x1 x3 x3 x3 x5 x5 x5 x7 x7 x7 x9 x9 x9 x4 x8 d4 d8 x10",
             "--tile", "none", "--flag", "sanlong_wukan", "--seat", "2", "--dealer", "1")
    assert r.exit_code == 0, r.output
    header = " ".join(r.output.split("hand ")[0].split())
    assert "seat 2 wins · no winning card (paid as a zimo: each other seat pays)" in header
    assert "自摸" not in header
