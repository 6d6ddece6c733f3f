"""Payment breakdowns: the Term arithmetic, its text, the explain helpers."""

from __future__ import annotations

import io

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from qipai.core.model import Payment, Term, bracket, format_why, times, why_total
from qipai.text.payments import payment_rows, payments_json, print_payments

NAMES = {"pengpenghu": "碰碰胡", "zimo": "自摸", "hubao": "互包", "fanxing": "翻醒"}


def test_sum_of_products():
    why = (Term("pattern", "pengpenghu", 9), Term("multiplier", "zimo", 2, "*"),
           Term("xing", "fanxing", 3))
    assert why_total(why) == 9 * 2 + 3
    assert format_why(why, NAMES) == "碰碰胡 pengpenghu 9 × 自摸 zimo 2 + 翻醒 fanxing 3"


def test_bracket_and_times():
    inner = (Term("pattern", "pinghu", 5), Term("dealer", "zhuang", 2))
    b = bracket(inner)
    assert b.value == 7 and b.of == inner
    why = (*times((b, Term("multiplier", "menqing", 2, "*")), Term("liability", "hubao", 2)),)
    assert why_total(why) == 2 * (7 * 2)
    assert format_why(why, NAMES) == "互包 hubao 2 × ((pinghu 5 + zhuang 2) × menqing 2)"
    # a single term is not bracketed
    assert bracket([Term("pattern", "qidui", 35)], op="*") == Term("pattern", "qidui", 35, "*")


def test_empty_is_zero_and_bad_terms_raise():
    assert why_total(()) == 0
    with pytest.raises(ValueError, match="op"):
        why_total((Term("pattern", "x", 1, "-"),))
    with pytest.raises(ValueError, match="first term"):
        why_total((Term("multiplier", "x", 2, "*"),))
    with pytest.raises(ValueError, match="not its terms' total"):
        why_total((Term("sum", "", 5, of=(Term("pattern", "x", 4),)),))


def test_basis_is_not_evaluated():
    zi = Term("zi", "zi", 2, basis=(Term("hu", "hushu", 14),))
    assert why_total((zi,)) == 2
    assert format_why((zi,)) == "zi 2 [hushu 14]"


def test_payment_round_trip_and_rows():
    why = (Term("pattern", "pengpenghu", 9), Term("multiplier", "zimo", 2, "*"))
    p = Payment(2, 0, 18, "hu", why)
    assert msgspec.json.decode(msgspec.json.encode(p), type=Payment) == p
    (row,) = payment_rows([p], names=NAMES)
    assert (row.payer, row.payee, row.amount, row.exact) == (2, 0, 18, True)
    assert row.why == "碰碰胡 pengpenghu 9 × 自摸 zimo 2"
    assert payments_json([p])[0]["why"][1] == {"kind": "multiplier", "id": "zimo", "value": 2,
                                                "op": "*"}
    out = io.StringIO()
    print_payments(Console(file=out, width=120), [p, Payment(1, 0, 3, "angang")], names=NAMES)
    text = out.getvalue()
    assert "seat 2 → seat 0" in text and "= 碰碰胡 pengpenghu 9 × 自摸 zimo 2" in text
    assert "(angang)" in text


def test_table_refuses_a_why_that_does_not_total():
    from qipai.core.answers import payment_problem

    bad = Payment(1, 0, 5, "hu", (Term("pattern", "pinghu", 4),))
    assert "totals 4" in payment_problem(bad, 4)
    assert payment_problem(Payment(1, 0, 4, "hu", (Term("pattern", "pinghu", 4),)), 4) is None


# ----------------------------------------------------------------- every hand explains itself

VARIANTS = ("guilin-mahjong", "guangxi-mahjong", "guilin-zipai")


def _explained(table) -> None:
    from qipai.conformance.properties import why_problem

    r = table.result
    assert why_problem(r.payments) is None
    assert r.payments[:len(r.instant)] == r.instant  # the instant ones carry it too


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32))
def test_random_play_every_payment_why_totals_its_amount(variant, seed):
    from qipai.conformance.properties import play_checked
    from qipai.core.ruleset import load_cached

    _explained(play_checked(load_cached(variant), seed))


@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_hands_every_payment_why_totals_its_amount(variant):
    from qipai.bots import play_hands
    from qipai.core.ruleset import load

    won = 0
    for table in play_hands(load(variant), 40, seed=11):
        _explained(table)
        won += table.result.end == "hu"
    assert won  # settlements, not only 荒庄, were checked


@pytest.mark.slow
def test_liability_options_explain_themselves():
    # 互包 / 封胡 / both and the literal 互包 reading: the liability paths, each
    # named in the breakdowns of these seeded hands.
    from qipai.bots import play_hands
    from qipai.core.ruleset import load

    want = {
        "guangxi-mahjong(liability=both, fenghu_count=1)": {"fenghu", "hubao"},
        "guangxi-mahjong(liability=hubao)": {"hubao"},
        "guilin-mahjong(hubao_dealin=literal)": {"hubao"},
        "guilin-zipai(bonus_mode=zi)": {"fangpao"},
    }
    for spec, ids in want.items():
        seen = set()
        for table in play_hands(load(spec), 25, seed=3):
            _explained(table)
            seen |= {t.id for p in table.result.payments for t in p.why
                     if t.kind == "liability"}
        assert ids <= seen, (spec, seen)


def test_the_why_property_is_checked_by_conformance():
    from qipai.conformance.properties import PROPERTY_NAMES
    from qipai.conformance.runner import run_properties

    assert "why" in PROPERTY_NAMES
    outcomes = {o.id: o for o in run_properties("guilin-zipai", games=3)}
    assert outcomes["property/why"].passed, outcomes["property/why"].message


# ----------------------------------------------------------------- the commands


def test_play_json_records_carry_why_and_replay_lists_the_breakdown(tmp_path):
    import json

    from click.testing import CliRunner

    from qipai.cli import cli
    from qipai.core.model import Payment, why_total

    runner = CliRunner()
    res = runner.invoke(cli, ["play", "guilin-mahjong", "--seed", "7", "--hands", "2", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    paid = [msgspec.convert(p, Payment) for h in doc["hands"]
            for p in h["record"]["result"]["payments"]]
    assert paid and all(p.why and why_total(p.why) == p.amount for p in paid)
    assert all(h["record"]["format"] == 2 for h in doc["hands"])
    f = tmp_path / "s.json"
    f.write_text(res.stdout, encoding="utf-8")
    rep = runner.invoke(cli, ["replay", str(f)])
    assert rep.exit_code == 0 and rep.stdout.startswith("replay identical: 2 hands")
    assert "payer → payee" in rep.stdout and "= 平胡 pinghu" in rep.stdout


def test_play_prints_the_breakdown_under_the_hand():
    from click.testing import CliRunner

    from qipai.cli import cli

    res = CliRunner().invoke(cli, ["play", "guilin-mahjong", "--seed", "7"])
    assert res.exit_code == 0
    assert "payments, hand 1" in res.stdout and "seat 0 → seat 2" in res.stdout
    assert "= 平胡 pinghu 5 + 翻醒 fanxing 0 (C(中) 0)" in res.stdout


def test_a_format_1_record_replays_without_why():
    from pathlib import Path

    from qipai.core.records import load_record, replay_check

    docs = Path(__file__).resolve().parents[2] / "docs" / "records"
    old = load_record(docs / "format-1" / "guilin-mahjong.json")
    assert old.format == 1 and all(not p.why for p in old.result.payments)
    assert replay_check(old) is None
    new = load_record(docs / "format-2" / "guilin-mahjong.json")
    assert new.format == 2 and all(p.why for p in new.result.payments)
    assert [(p.payer, p.payee, p.amount) for p in new.result.payments] == \
        [(p.payer, p.payee, p.amount) for p in old.result.payments]


def test_a_named_bracket_shows_its_value_before_its_terms():
    # break11: "胡数 hushu(顺 … 3 + 坎 … 3)" hid the 胡数 the 子 is read from,
    # and "翻醒 fanxing(8s 4 + 7p 7)" the 醒数 11 the winner was paid
    flips = bracket((Term("flip", "fanxing", 4), Term("flip", "fanxing", 7)), "xing", "fanxing")
    assert format_why((Term("pattern", "pinghu", 5), flips), NAMES) == (
        "pinghu 5 + 翻醒 fanxing 11 (4 + 7)")
    hu = bracket((Term("group", "kan", 6), Term("group", "kan", 9)), "hu", "hushu")
    assert format_why((Term("zi", "zi", 2, basis=(hu,)),)) == "zi 2 [hushu 15 (kan 6 + kan 9)]"


def test_a_tampered_breakdown_is_named_where_it_differs():
    # break11: editing one term of one payment's why gave "result differs:
    # recorded {…2400 characters…}, replayed {…}", naming no field
    from qipai.bots import play_hands
    from qipai.core.records import record_of, replay_check
    from qipai.core.ruleset import load

    rec = record_of(next(play_hands(load("guilin-mahjong"), 1, seed=19)))
    (p,) = rec.result.payments  # 互包 case 2: seat 2 pays seat 1 2 × (…)
    assert p.why[0].id == "hubao" and p.why[0].value == 2
    bad_term = msgspec.structs.replace(p.why[0], value=3)
    bad = msgspec.structs.replace(p, why=(bad_term,) + p.why[1:])
    tampered = msgspec.structs.replace(
        rec, result=msgspec.structs.replace(rec.result, payments=(bad,)))
    diff = replay_check(tampered)
    assert diff == "result differs at payments[0].why[0].value: recorded 3, replayed 2"
