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
    for section in ("melds", "ways", "ends", "actions", "roles", "bonus", "client", "sources",
                    "page"):
        assert set(words[section]) == set(zh[section]), section


def test_the_page_words_have_the_same_placeholders_in_every_language():
    """Every template of the page (and of the terminal clients) names the same
    ``{…}`` fields in Chinese and in English, and English has no Chinese."""
    import re

    zh, en = vocabulary("zh"), vocabulary("en")
    for section in ("page", "client"):
        for key, text in zh[section].items():
            fields = sorted(re.findall(r"{(\w+)", text))
            assert fields == sorted(re.findall(r"{(\w+)", en[section][key])), (section, key)
    for section in ("page", "sources", "melds", "ways", "ends", "actions", "roles", "bonus"):
        for key, text in en[section].items():
            assert not re.search(r"[\u4e00-\u9fff]", text) or key == "lang_other", (section, key)


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        vocabulary("fr")


def test_the_kongs_are_the_rules_words_and_the_payment_reasons_words():
    # mahjong-common.md: 点杠/明杠, 蓄杠/补杠/加杠, 暗杠 — the first of each
    # (docs/DECISIONS.md); the families' payment reasons say the same
    melds = vocabulary("zh")["melds"]
    assert [melds[k] for k in ("minggang", "jiagang", "angang")] == ["点杠", "蓄杠", "暗杠"]
    assert all(melds[k] == NAMES[k] for k in ("minggang", "jiagang", "angang"))


def test_the_added_kong_is_the_rules_xugang_everywhere():
    assert meld_label("jiagang") == "蓄杠 jiagang"
    cards = load("guilin-mahjong").cards
    assert action_text(cards, m.Jiagang(seat=0, card=0), None).startswith("蓄杠 jiagang ")
    p = Printer(None)  # type: ignore[arg-type]
    p.cards = cards
    melded = {"type": "melded", "seat": 1,
              "meld": {"kind": "jiagang", "cards": [0, 0, 0, 0], "from_seat": 2}}
    assert p.event(melded).startswith("seat 1 蓄杠 jiagang ")


def test_a_variant_that_names_a_kong_otherwise_is_shown_its_word():
    # guangxi-mahjong.md §2: 补杠 — in the hand log as in its payment breakdown
    from qipai.bots import play_hands
    from qipai.text.log import log_lines

    rs = load("guangxi-mahjong")
    assert rs.manifest.names["jiagang"] == "补杠"
    assert meld_label("jiagang", rs.manifest.names) == "补杠 jiagang"
    assert action_text(rs.cards, m.Jiagang(seat=0, card=0), None,
                       rs.manifest.names).startswith("补杠 jiagang ")
    (table,) = play_hands(rs, 1, seed=18, bots="greedy")  # seat 3 adds to its peng
    lines = log_lines(table)
    assert any("补杠 jiagang" in line for line in lines)
    assert not any("蓄杠" in line or "加杠" in line for line in lines)


def test_the_old_name_of_the_payments_module_still_imports_with_a_warning():
    import qipai.text.payments as payments

    with pytest.warns(DeprecationWarning, match="qipai.text.payments"):
        from qipai.explain import print_payments
    assert print_payments is payments.print_payments
