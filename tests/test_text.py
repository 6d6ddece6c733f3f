"""qipai.text: one vocabulary for every output, served as data too."""

from __future__ import annotations

import json

import pytest

from qipai.core import model as m
from qipai.core.ruleset import load
from qipai.families.mahjong.scoring_kit import NAMES
from qipai.text import LANGUAGES, meld_label, vocabulary
from qipai.text.seat import action_text
from qipai.text.wire import Printer


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_vocabulary_is_json_with_the_same_ids_in_every_language(lang):
    words = vocabulary(lang)
    assert json.loads(json.dumps(words, ensure_ascii=False)) == words
    zh = vocabulary("zh")
    for section in ("melds", "ways", "ends", "actions", "roles", "bonus"):
        assert set(words[section]) == set(zh[section]), section


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        vocabulary("fr")


def test_the_added_kong_is_the_rules_xugang_everywhere():
    # mahjong-common.md / guilin-mahjong.md: 蓄杠 (docs/DECISIONS.md)
    assert vocabulary("zh")["melds"]["jiagang"] == NAMES["jiagang"] == "蓄杠"
    assert meld_label("jiagang") == "蓄杠 jiagang"
    cards = load("guilin-mahjong").cards
    assert action_text(cards, m.Jiagang(seat=0, card=0), None).startswith("蓄杠 jiagang ")
    p = Printer(None)  # type: ignore[arg-type]
    p.cards = cards
    melded = {"type": "melded", "seat": 1,
              "meld": {"kind": "jiagang", "cards": [0, 0, 0, 0], "from_seat": 2}}
    assert p.event(melded).startswith("seat 1 蓄杠 jiagang ")
