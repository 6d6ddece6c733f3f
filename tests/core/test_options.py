"""Options described from the options Structs' metadata (qipai.core.options):
``qipai variants NAME``, the wording of a bad option's error, and the
metadata of our three variants checked against their pages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import pytest
from click.testing import CliRunner
from msgspec import Meta

from qipai.cli import cli
from qipai.core.errors import BadOption
from qipai.core.options import describe, explain_error, markdown_table
from qipai.core.ruleset import available, load

DOCS = Path(__file__).parents[2] / "docs"
VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]


class Sample(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A made-up options Struct: every kind of field the describer reads."""

    mode: Annotated[Literal["zeta", "alpha", "mid"], Meta(
        description="Which mode.", extra={"source": "D-X1"})] = "zeta"
    count: Annotated[int, Meta(ge=1, description="How many.")] = 3
    span: Annotated[int, Meta(ge=0, le=9)] = 0
    below: Annotated[int, Meta(lt=5)] = 1
    flag: Annotated[bool, Meta(description="On or off.", extra={"source": "rule 2"})] = True
    limit: Annotated[Annotated[int, Meta(ge=0)] | None, Meta(description="At most.")] = None
    table: Annotated[dict[str, tuple[int, int]], Meta(
        description="Values.", extra={"allowed": "ids → two ints", "default_text": "the table"},
    )] = msgspec.field(default_factory=lambda: {"a": (1, 2)})
    plain: str = "x"


# ---------------------------------------------------------------- describe


def test_describe_reads_type_allowed_default_meaning_and_source():
    got = {o.name: o for o in describe(Sample)}
    assert list(got) == list(Sample.__struct_fields__)
    mode = got["mode"]
    # the choices keep their written order (msgspec's inspection sorts them)
    assert (mode.type, mode.choices, mode.allowed) == ("str", ["zeta", "alpha", "mid"],
                                                       "zeta, alpha, mid")
    assert (mode.default, mode.description, mode.source) == ("zeta", "Which mode.", "D-X1")
    assert (got["count"].type, got["count"].allowed, got["count"].minimum,
            got["count"].maximum) == ("int", ">= 1", 1, None)
    assert (got["span"].allowed, got["span"].minimum, got["span"].maximum) == ("0..9", 0, 9)
    assert (got["below"].allowed, got["below"].maximum) == ("<= 4", 4)
    assert (got["flag"].type, got["flag"].allowed, got["flag"].source) == \
        ("bool", "true, false", "rule 2")
    limit = got["limit"]
    assert (limit.type, limit.allowed, limit.nullable, limit.minimum, limit.default) == \
        ("int or none", ">= 0, or none", True, 0, None)
    table = got["table"]
    assert table.type == "dict of str → [int, int]"
    assert (table.allowed, table.default_text, table.default) == \
        ("ids → two ints", "the table", {"a": [1, 2]})
    plain = got["plain"]
    assert (plain.type, plain.allowed, plain.description, plain.source) == ("str", "any", "", "")


def test_describe_refuses_what_is_not_a_struct():
    with pytest.raises(TypeError, match="not a msgspec Struct"):
        describe(dict)


def test_markdown_table_has_one_row_per_option():
    text = markdown_table(Sample)
    lines = text.splitlines()
    assert lines[0] == "| option | type | allowed | default | meaning | source |"
    assert len(lines) == 2 + len(Sample.__struct_fields__)
    assert lines[2] == ("| `mode` | str | `zeta`, `alpha`, `mid` | `\"zeta\"` | Which mode. "
                        "| D-X1 |")
    assert "| `limit` | int or none | >= 0, or none | `none` | At most. |  |" in lines
    assert any(line.startswith("| `table` |") and "| the table |" in line for line in lines)


# ---------------------------------------------------------------- our variants' metadata


def decisions(page: str) -> dict[str, str]:
    """D-number → the row of the page's Decisions table."""
    text = (DOCS / "variants" / f"{page}.md").read_text(encoding="utf-8")
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| (D-[A-Z]+\d+) \|.*$", text, re.M)}


@pytest.mark.parametrize("name", VARIANTS)
def test_every_option_says_what_it_means_and_where_it_comes_from(name):
    for o in describe(load(name).manifest.options_type):
        assert len(o.description) > 20, f"{name}.{o.name}: no description"
        assert o.source, f"{name}.{o.name}: no source"
        assert "D-" in o.source or "source document" in o.source, \
            f"{name}.{o.name}: the source names neither a decision nor the source document"
        if o.choices:
            for choice in o.choices:  # each choice is explained
                assert f"`{choice}`" in o.description or len(o.choices) > 3, \
                    f"{name}.{o.name}: choice {choice!r} not explained"


@pytest.mark.parametrize("name", VARIANTS)
def test_the_decisions_an_option_cites_are_on_the_pages(name):
    known = {**decisions(name), **decisions("mahjong-common")}
    for o in describe(load(name).manifest.options_type):
        for d in re.findall(r"D-[A-Z]+\d+", o.source):
            assert d in known, f"{name}.{o.name} cites {d}, which no Decisions table has"


@pytest.mark.parametrize("name", VARIANTS)
def test_a_decision_naming_an_option_is_cited_by_that_option(name):
    """The page's Decisions table names the option of each decision; that
    option's source names the decision back."""
    sources = {o.name: o.source for o in describe(load(name).manifest.options_type)}
    for d, row in decisions(name).items():
        for opt in re.findall(r"`(\w+)`", row.rsplit("|", 2)[-2]):
            assert opt in sources, f"{d} names {opt}, not an option of {name}"
            assert d in sources[opt], f"{d} names option {opt}, whose source does not cite it"


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(("spec", "message"), [
    ("guilin-mahjong(zhuipai=foo)",
     "zhuipai: 'foo' is not one of first_round, any_round, off"),
    ("guilin-mahjong(zhuipai=3)", "zhuipai: 3 is not one of first_round, any_round, off"),
    ("guilin-mahjong(max_flips=-1)", "max_flips: must be >= 0, got -1"),
    ("guilin-mahjong(max_flips='x')", "max_flips: must be an integer >= 0, got 'x'"),
    ("guilin-mahjong(max_flips=true)", "max_flips: must be an integer >= 0, got true"),
    ("guilin-mahjong(reflip_at=0)", "reflip_at: must be >= 1, got 0"),
    ("guilin-mahjong(reserve_tiles=84)", "reserve_tiles: must be in 0..83, got 84"),
    ("guilin-mahjong(hubao=maybe)", "hubao: must be true or false, got 'maybe'"),
    ("guilin-zipai(max_flips=-2)", "max_flips: must be >= 0 or none, got -2"),
    ("guilin-zipai(first_dealer=3)", "first_dealer: must be in 0..2, got 3"),
    ("guilin-zipai(hu_scale='10/4')", "hu_scale: '10/4' is not one of 10/3, 10/5, 15/3, 15/5"),
    ("guangxi-mahjong(liability=all)",
     "liability: 'all' is not one of fenghu, hubao, both, off"),
    ("guangxi-mahjong(fenghu_count=0)", "fenghu_count: must be >= 1, got 0"),
])
def test_a_bad_value_names_the_option_and_what_it_allows(spec, message):
    name = spec.split("(")[0]
    with pytest.raises(BadOption) as exc:
        load(spec)
    assert str(exc.value) == f"bad option for {name}: {message}"


def test_an_unknown_option_lists_the_options_and_suggests_a_near_one():
    with pytest.raises(BadOption) as exc:
        load("guilin-mahjong(flips=1)")
    assert str(exc.value) == (
        "bad option for guilin-mahjong: unknown option 'flips'; did you mean max_flips? "
        "options are: hubao, hubao_dealin, max_flips, reflip_at, zhuipai, zhuipai_amount, "
        "dealer_rotation, reserve_tiles")
    with pytest.raises(BadOption, match=r"unknown option 'nosuch'; options are: hu_scale, "):
        load("guilin-zipai", {"nosuch": 1})


def test_a_bad_entry_inside_a_dict_option_says_where_and_what_is_allowed():
    with pytest.raises(BadOption) as exc:
        load("guangxi-mahjong", {"values": {"ziyise": [1]}})
    assert str(exc.value).startswith("bad option for guangxi-mahjong: values[...]: ")
    assert "length 2" in str(exc.value) and "two integers >= 0" in str(exc.value)
    with pytest.raises(BadOption, match="values: unknown pattern id 'zzz'; the valued patterns "
                                        "are pinghu, "):
        load("guangxi-mahjong", {"values": {"zzz": [1, 2]}})


def test_explain_error_is_generic():
    """No variant involved: a made-up Struct's errors are worded the same way."""
    def err(given):
        with pytest.raises(msgspec.ValidationError) as exc:
            msgspec.convert(given, Sample)
        return explain_error(Sample, given, str(exc.value))

    assert err({"mode": "beta"}) == "mode: 'beta' is not one of zeta, alpha, mid"
    assert err({"count": 0}) == "count: must be >= 1, got 0"
    assert err({"below": 5}) == "below: must be <= 4, got 5"
    assert err({"flag": 1}) == "flag: must be true or false, got 1"
    assert err({"plain": 2}).startswith("plain: Expected `str`, got `int`")
    assert err({"mdoe": "x"}).startswith("unknown option 'mdoe'; did you mean mode? options are")
    assert explain_error(Sample, {}, "something else") == "something else"


def test_a_bad_option_on_the_command_line_is_one_line():
    res = CliRunner().invoke(cli, ["play", "guilin-mahjong(zhuipai=foo)"])
    assert res.exit_code == 2
    assert res.stderr == ("error: bad option for guilin-mahjong: zhuipai: 'foo' is not one of "
                          "first_round, any_round, off\n")


# ---------------------------------------------------------------- qipai variants NAME


@pytest.mark.parametrize("name", VARIANTS)
def test_variants_name_shows_every_option(name):
    res = CliRunner().invoke(cli, ["variants", name], env={"COLUMNS": "1000"})
    assert res.exit_code == 0, res.output
    rs = load(name)
    assert res.stdout.startswith(f"{rs.manifest.title} {name}")
    for o in describe(rs.manifest.options_type):
        assert re.search(rf"^{o.name}  {re.escape(o.type)}", res.stdout, re.M), o.name
        assert f"allowed: {o.allowed}" in res.stdout
        assert o.description in res.stdout
        assert f"from: {o.source}" in res.stdout


def test_variants_name_shows_the_default_and_an_example_that_loads():
    res = CliRunner().invoke(cli, ["variants", "guilin-mahjong"], env={"COLUMNS": "1000"})
    assert "zhuipai  str · default \"first_round\"" in res.stdout
    assert "max_flips  int · default 2" in res.stdout
    example = re.search(r'qipai play "([^"]+)"', res.stdout).group(1)
    assert load(example).options.hubao is False  # the first option, not at its default


def test_variants_name_json_is_the_description():
    res = CliRunner().invoke(cli, ["variants", "guilin-zipai", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["name"], doc["title"], doc["players"]) == ("guilin-zipai", "桂林字牌", 3)
    assert doc["options"] == [msgspec.to_builtins(o) for o in
                              describe(load("guilin-zipai").manifest.options_type)]
    max_flips = next(o for o in doc["options"] if o["name"] == "max_flips")
    assert max_flips["default"] is None and max_flips["nullable"] is True
    assert max_flips["minimum"] == 0 and "D-ZP8" in max_flips["source"]


def test_variants_json_without_name_lists_every_variant():
    res = CliRunner().invoke(cli, ["variants", "--json"])
    assert res.exit_code == 0, res.output
    assert [v["name"] for v in json.loads(res.stdout)] == sorted(available())


def test_variants_unknown_name_is_one_line_listing_the_known():
    res = CliRunner().invoke(cli, ["variants", "guilin"])
    assert res.exit_code == 2 and res.stdout == ""
    titles = {"guangxi-mahjong": "广西麻将", "guilin-mahjong": "桂林麻将", "guilin-zipai": "桂林字牌"}
    known = ", ".join(f"{v} ({titles[v]})" if v in titles else v for v in sorted(available()))
    assert res.stderr == ("error: unknown variant 'guilin'; did you mean guilin-zipai? "
                          f"registered variants: {known}\n")


@pytest.mark.parametrize("title, name", [("桂林麻将", "guilin-mahjong"),
                                         ("广西麻将", "guangxi-mahjong"),
                                         ("桂林字牌", "guilin-zipai")])
def test_a_variants_chinese_title_is_an_alias_of_its_name(title, name):
    assert load(title).name == name and load(f" {title} ").spec == name
    res = CliRunner().invoke(cli, ["variants", title, "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["name"] == name


def test_a_title_takes_options_and_the_spec_is_the_registered_name():
    assert load("桂林麻将(hubao=false)").spec == "guilin-mahjong(hubao=False)"


@pytest.mark.parametrize("spec", ["四川麻将", "guilin mahjong", "桂林麻将 2", "mahjong(hubao=false)"])
def test_an_unknown_name_is_unknown_variant_not_a_bad_spec(spec):
    from qipai.core.errors import UnknownVariant

    with pytest.raises(UnknownVariant, match="registered variants: .*guilin-mahjong \\(桂林麻将\\)"):
        load(spec)


def test_a_near_name_gets_a_did_you_mean():
    res = CliRunner().invoke(cli, ["play", "guilin-mahjon"])
    assert res.exit_code == 2
    assert "did you mean guilin-mahjong?" in res.stderr and res.stderr.count("\n") == 1


def test_variants_name_with_options_is_refused():
    res = CliRunner().invoke(cli, ["variants", "guilin-mahjong(hubao=false)"])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: give the variant's name alone")
    assert len(res.stderr.splitlines()) == 1
