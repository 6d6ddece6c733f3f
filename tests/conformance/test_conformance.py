"""Every registered variant's own conformance cases, one test per case, and
the runner's refusal of case files that would check nothing."""

from __future__ import annotations

import pytest

from qipai.conformance.checkers import Outcome, run_case
from qipai.conformance.registry import collect
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


def test_the_replay_property_of_a_plugin_object_is_the_record_replay():
    # A variant given as a plugin object (pytest --qipai-plugin, no registry
    # name) was replayed by a copy of replay_check that forgot the record's
    # ask_all: its every-seat passes were refused on replay.  It is now
    # replay_check itself, on the table's ruleset.
    import random

    import qipai.variants.guilin_zipai.plugin as zp
    from qipai.bots import GreedyBot
    from qipai.conformance import properties, registry
    from qipai.core.table import Table

    assert not hasattr(properties, "replay_problem")
    name = registry.register_plugin(zp)
    try:
        assert registry.is_local(name)
        rs = registry.load_variant(name)
        t = Table(rs, seed=0, ask_all=True)
        bots = [GreedyBot(random.Random(s)) for s in range(3)]
        while not t.over:
            seat = t.to_decide()[0]
            t.apply(bots[seat].choose(t, seat))
        properties.check_replay(t)  # raises PropertyFailure on a difference
        t.state.events.pop()  # a record that does not replay is still caught
        with pytest.raises(properties.PropertyFailure, match="replay differs"):
            properties.check_replay(t)
    finally:
        registry.unregister_plugin(name)


def test_a_variant_that_raises_fails_its_case_and_the_run_goes_on(tmp_path, monkeypatch):
    """A variant's code raising something unforeseen (ZeroDivisionError in a
    hook) fails that case with the error named, and the other cases still
    run: no traceback ends the whole `qipai conformance` run."""
    import io

    from qipai.conformance import checkers, runner

    real = checkers.CHECKERS["deck"]

    def deck(rs, given, expect):
        if expect.get("size") == 1:
            raise ZeroDivisionError("oops in a hook")
        return real(rs, given, expect)

    monkeypatch.setitem(checkers.CHECKERS, "deck", deck)
    f = tmp_path / "x.toml"
    f.write_text('variant = "guilin-mahjong"\n'
                 '[[cases]]\nid = "qa/raises"\nsource = "s"\ncheck = "deck"\n'
                 '[cases.expect]\nsize = 1\n'
                 '[[cases]]\nid = "qa/fine"\nsource = "s"\ncheck = "deck"\n'
                 '[cases.expect]\nsize = 136\n')
    (bad, o1), (good, o2) = load_cases([f], "guilin-mahjong")
    out = run_case("guilin-mahjong", bad, o1)
    assert not out.passed and out.message == "the variant raised ZeroDivisionError: oops in a hook"
    assert run_case("guilin-mahjong", good, o2).passed
    from rich.console import Console

    text = io.StringIO()
    code = runner.main("guilin-mahjong", [str(f)], properties=1,
                       out=Console(file=text, width=200))
    assert code == 1 and "qa/raises" in text.getvalue() and "ZeroDivisionError" in text.getvalue()
    assert "qa/fine" not in text.getvalue()  # it ran, and passed


def test_a_case_reusing_a_shipped_id_fails_alone(tmp_path):
    """A QA case file reusing an id of the variant's own cases: that case
    fails, naming both files, and the run goes on — as a malformed case
    does, instead of ending the whole run with nothing run."""
    shipped, _ = collect("guilin-mahjong")[0]
    f = tmp_path / "qa.toml"
    f.write_text('variant = "guilin-mahjong"\n'
                 f'[[cases]]\nid = "{shipped.id}"\nsource = "s"\ncheck = "deck"\n'
                 '[cases.expect]\nsize = 136\n'
                 '[[cases]]\nid = "qa/own"\nsource = "s"\ncheck = "deck"\n'
                 '[cases.expect]\nsize = 136\n')
    got = collect("guilin-mahjong", [f])
    again = [(c, o) for c, o in got if c.id == shipped.id]
    assert len(again) == 2 and not again[0][0].problem
    out = run_case("guilin-mahjong", *again[1])
    assert not out.passed and "appears twice" in out.message and "qa.toml" in out.message
    own = next((c, o) for c, o in got if c.id == "qa/own")
    assert run_case("guilin-mahjong", *own).passed
