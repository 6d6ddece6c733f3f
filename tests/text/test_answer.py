"""qipai.text.answer: what a player types at a decision, read alike by
``qipai play --human`` and ``qipai connect``."""

from __future__ import annotations

import string

import pytest

from qipai.core.ruleset import load
from qipai.text import CLIENT
from qipai.text.answer import BadAnswer, leaves, pick

MJ = load("guilin-mahjong").cards
ZP = load("guilin-zipai").cards
# kinds 2 (3m), 11 (3p), 29 (W), 31 (C)
TURN = [{"type": "discard", "card": k} for k in (2, 11, 29, 31)] + [
    {"type": "angang", "card": 2}, {"type": "angang", "card": 11}, {"type": "zimo"}]
CLAIM = [{"type": "chi", "cards": [0, 1, 2]}, {"type": "chi", "cards": [1, 2, 3]},
         {"type": "peng"}, {"type": "hu"}, {"type": "pass"}]


@pytest.mark.parametrize("typed, index", [
    ("1", 0), ("7", 6), ("3m", 0), ("三万", 0), ("W", 2), ("西", 2), ("C", 3), ("中", 3),
    ("zimo", 6), ("自摸", 6), ("hu", 6), ("胡", 6), ("win", 6),
    ("angang 3p", 5), ("杠 3m", 4), ("gang 三筒", 5),
])
def test_numbers_cards_and_words_name_one_action(typed, index):
    assert pick(typed, TURN, MJ) == index


@pytest.mark.parametrize("typed, index", [
    ("peng", 2), ("碰", 2), ("pung", 2), ("hu", 3), ("胡", 3), ("pass", 4), ("过", 4),
    ("", 4), ("  ", 4), ("2", 1),
])
def test_a_claim_window_is_answered_by_word_and_enter_passes(typed, index):
    assert pick(typed, CLAIM, MJ) == index


def test_zipai_cards_by_notation_or_chinese():
    legal = [{"type": "discard", "card": k} for k in (0, 2, 12)] + [{"type": "pass"}]
    assert [pick(t, legal, ZP) for t in ("x1", "一", "三", "小三", "d3", "叁")] == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize("typed, legal, hint", [
    ("chi", CLAIM, "'chi' could be 1, 2: type one of these numbers"),
    ("吃", CLAIM, "'吃' could be 1, 2: type one of these numbers"),
    ("gang", TURN, "'gang' could be 5, 6: type one of these numbers"),
    ("0", TURN, "0 is not one of the actions: choose 1 to 7"),
    ("8", TURN, "8 is not one of the actions: choose 1 to 7"),
    ("E", TURN, "you may not discard E 东 now: choose 1 to 7"),
    ("123m", TURN, "'123m' is 3 cards: discard one at a time"),
    ("peng", TURN, "no peng now: choose 1 to 7"),
    ("angang W", TURN, "no angang W now: choose 1 to 7"),
    ("", TURN, "passing is not among the actions now: choose 1 to 7"),
    ("xyz", TURN, ("'xyz' is not an action: type 1 to 7, a card to discard (as 3m) or a word "
                   "(discard, angang, zimo)")),
])
def test_input_naming_no_action_or_several_is_one_line_naming_why(typed, legal, hint):
    with pytest.raises(BadAnswer) as bad:
        pick(typed, legal, MJ)
    assert str(bad.value) == hint


def test_the_hints_speak_the_clients_language():
    with pytest.raises(BadAnswer, match="^'chi' 可指编号 1, 2"):
        pick("chi", CLAIM, MJ, lang="zh")
    with pytest.raises(BadAnswer, match="（打, 暗杠, 自摸）$"):
        pick("xyz", TURN, MJ, lang="zh")


def test_every_template_has_the_same_fields_in_both_languages():
    def fields(text: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(text) if f}

    assert set(CLIENT["zh"]) == set(CLIENT["en"])
    for key, text in CLIENT["en"].items():
        assert fields(text) == fields(CLIENT["zh"][key]), key


@pytest.mark.parametrize("line, out", [("q", True), ("Q\n", True), (" quit ", True),
                                       ("退出", True), ("qq", False), ("1", False)])
def test_q_leaves(line, out):
    assert leaves(line) is out
