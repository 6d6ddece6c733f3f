"""Every registered variant's own conformance cases, one test per case, and
the runner's refusal of case files that would check nothing."""

from __future__ import annotations

import pytest

from qipai.conformance.runner import Outcome, collect, run_case
from qipai.conformance.cases import load_cases
from qipai.core.errors import BadCase
from qipai.core.ruleset import available

CASES = [(variant, case, options) for variant in sorted(available())
         for case, options in collect(variant)]


@pytest.mark.parametrize("variant, case, options", CASES,
                         ids=[f"{v}:{c.id}" for v, c, _ in CASES])
def test_case(variant, case, options):
    out = run_case(variant, case, options)
    assert out.passed, f"{case.id} ({case.source}): {out.message}"


def test_every_variant_has_cases():
    assert {v for v, _, _ in CASES} == set(available())


def test_every_case_cites_a_source():
    for _, case, _ in CASES:
        assert case.source.strip(), case.id


def test_a_case_file_for_another_variant_is_refused(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('variant = "guilin_mahjong"\n[[cases]]\nid = "a"\nsource = "s"\n'
                 'check = "deck"\n[cases.expect]\nsize = 136\n')
    with pytest.raises(BadCase, match="guilin_mahjong"):
        load_cases([f], "guilin-mahjong")


def test_an_empty_case_folder_is_refused(tmp_path):
    with pytest.raises(BadCase, match="no case files"):
        load_cases([tmp_path], "guilin-mahjong")


def test_a_misspelt_expect_key_fails_the_case(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('variant = "guilin-mahjong"\n[[cases]]\nid = "a"\nsource = "s"\n'
                 'check = "deck"\n[cases.expect]\nsizee = 999\n')
    (case, options), = load_cases([f], "guilin-mahjong")
    out: Outcome = run_case("guilin-mahjong", case, options)
    assert not out.passed and "sizee" in out.message


def test_a_wrong_expectation_fails_with_expected_and_actual(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('variant = "guilin-mahjong"\n[[cases]]\nid = "a"\nsource = "s"\n'
                 'check = "deck"\n[cases.expect]\nsize = 135\n')
    (case, options), = load_cases([f], "guilin-mahjong")
    out = run_case("guilin-mahjong", case, options)
    assert not out.passed and "expected 135, got 136" in out.message
