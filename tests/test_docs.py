"""The documentation agrees with the code (docs/ is built in CI; these
checks keep its hand-written parts from drifting)."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import click
import msgspec
import pytest
from click.testing import CliRunner

from qipai.cli import cli
from qipai.core import hookspecs
from qipai.core.records import FORMAT_VERSION, Record, decode_record, record_schema, replay_check
from qipai.core.ruleset import load

DOCS = Path(__file__).parent.parent / "docs"
VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]

# ---------------------------------------------------------------- hook reference

#: ``.. autofunction:: qipai.core.hookspecs.NAME(SIGNATURE)`` on the hook page.
DOCUMENTED_HOOK = re.compile(r"^\.\. autofunction:: qipai\.core\.hookspecs\.(qipai_\w+)(\(.*)$")


def code_hooks() -> dict[str, str]:
    """Hook name → its signature as the hook page writes it."""
    out = {}
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("qipai_") or fn.__module__ != hookspecs.__name__:
            continue
        sig = inspect.signature(fn)
        params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
        out[name] = f"({params}) -> {sig.return_annotation}"
    return out


def documented_hooks() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (DOCS / "reference" / "hooks.md").read_text(encoding="utf-8").splitlines():
        m = DOCUMENTED_HOOK.match(line.strip())
        if m:
            assert m.group(1) not in out, f"hook {m.group(1)} is documented twice"
            out[m.group(1)] = " ".join(m.group(2).split())
    return out


def test_every_hook_is_in_the_hook_reference():
    code, docs = code_hooks(), documented_hooks()
    assert code, "no hooks found in qipai.core.hookspecs"
    missing = sorted(set(code) - set(docs))
    assert not missing, f"hooks missing from docs/reference/hooks.md: {', '.join(missing)}"
    stale = sorted(set(docs) - set(code))
    assert not stale, f"docs/reference/hooks.md documents hooks that do not exist: {stale}"


def test_documented_hook_signatures_match_the_hookspecs():
    code, docs = code_hooks(), documented_hooks()
    wrong = [f"{name}: documented {docs[name]}, hookspecs.py has {sig}"
             for name, sig in code.items() if name in docs and docs[name] != sig]
    assert not wrong, "hook signatures differ:\n" + "\n".join(wrong)


def test_hook_page_groups_hooks_as_the_hookspecs_do():
    """The page lists hooks in the order of hookspecs.py (its stages)."""
    order = sorted(code_hooks(), key=lambda n: getattr(hookspecs, n).__code__.co_firstlineno)
    assert list(documented_hooks()) == order


# ---------------------------------------------------------------- variant pages


def table_after(text: str, heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after ``heading``."""
    lines = text.splitlines()
    hashes, _, name = heading.partition(" ")  # "## Options" matches "## 7. Options" too
    start = next(i for i, line in enumerate(lines)
                 if re.fullmatch(rf"{hashes} (\d+[a-z]?(\.\d+)*\.? )?{re.escape(name)}", line))
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"no table after {heading!r}"
    return rows[2:]  # without the header and the |---| line


def literal(cell: str) -> object:
    """A default as the options tables write it: `true`, `2`, `"winner"`, `none`."""
    m = re.fullmatch(r"`(.*)`", cell)
    assert m, f"default {cell!r} is not a `literal`"
    text = m.group(1)
    if text in ("true", "false"):
        return text == "true"
    if text in ("none", "null"):
        return None
    return json.loads(text)


def variant_page(name: str) -> str:
    return (DOCS / "variants" / f"{name}.md").read_text(encoding="utf-8")


def _options_tables_module():
    """docs/_ext/qipai_options_tables.py, the generator of the pages' options tables."""
    import importlib.util

    path = DOCS / "_ext" / "qipai_options_tables.py"
    spec = importlib.util.spec_from_file_location("qipai_options_tables", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", VARIANTS)
def test_variant_page_options_table_is_the_generated_one(name):
    """The page's options table is what the options Struct's metadata gives
    (regenerate with `uv run python docs/_ext/qipai_options_tables.py`)."""
    gen = _options_tables_module()
    written = gen.page_options_table(variant_page(name))
    assert written is not None, f"{name}: no generated options block on the page"
    assert written == gen.options_table(name), \
        f"{name}: the page's options table is stale; run " \
        f"`uv run python docs/_ext/qipai_options_tables.py`"


@pytest.mark.parametrize("name", VARIANTS)
def test_variant_page_options_table_lists_every_option_with_its_default(name):
    """Read back from the Markdown: the generated table names every option
    of the code, in order, with its default."""
    defaults = load(name).options_dict()
    rows = table_after(variant_page(name), "## Options")
    documented = {}
    for row in rows:
        m = re.fullmatch(r"`(\w+)`", row[0])
        assert m, f"{name}: option cell {row[0]!r} is not an `identifier`"
        documented[m.group(1)] = row[3]
    assert list(documented) == list(defaults), \
        f"{name}: the page lists options {list(documented)}, the code has {list(defaults)}"
    for key, cell in documented.items():
        if isinstance(defaults[key], dict):  # a table of its own, checked below
            continue
        assert literal(cell) == defaults[key], \
            f"{name}: option {key} is documented with default {cell}, the code has " \
            f"{defaults[key]!r}"


def test_guangxi_value_table_matches_the_default_values():
    defaults = load("guangxi-mahjong").options_dict()["values"]
    rows = table_after(variant_page("guangxi-mahjong"), "## Patterns and values")
    documented = {row[0].strip("`"): [int(row[3]), int(row[4])] for row in rows}
    assert documented == {k: list(v) for k, v in defaults.items()}


@pytest.mark.parametrize("name", VARIANTS)
def test_variant_page_names_its_variant_and_title(name):
    rs = load(name)
    first = variant_page(name).splitlines()[0]
    assert rs.manifest.title in first and f"`{name}`" in first


# ---------------------------------------------------------------- records


def sample_records() -> list[Path]:
    return sorted((DOCS / "records").glob("format-*/*.json"))


def test_a_sample_record_for_the_current_format_version():
    assert list((DOCS / "records" / f"format-{FORMAT_VERSION}").glob("*.json")), \
        f"no sample record for format {FORMAT_VERSION} in docs/records/format-{FORMAT_VERSION}/"


@pytest.mark.parametrize("path", sample_records(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sample_record_decodes_and_replays_identically(path):
    rec = decode_record(path.read_bytes())
    assert f"format-{rec.format}" == path.parent.name
    assert rec.result is not None, "a sample record should be a finished hand"
    assert replay_check(rec) is None


def test_schema_command_prints_the_records_json_schema():
    res = CliRunner().invoke(cli, ["schema"], catch_exceptions=False)
    assert res.exit_code == 0
    schema = json.loads(res.stdout)
    assert schema == json.loads(msgspec.json.encode(record_schema()))
    # the descriptions are plain text: no Sphinx role of a docstring is left
    text = json.dumps(schema, ensure_ascii=False)
    assert re.search(r":[a-z]+:`", text) is None and "``" not in text
    assert "`FORMAT_VERSION`" in text  # :data:`FORMAT_VERSION` read as its name
    ref = schema["$ref"].rsplit("/", 1)[-1]
    record = schema["$defs"][ref]
    assert list(record["properties"]) == list(Record.__struct_fields__)
    assert set(record["required"]) == {"variant", "deal"}


# ---------------------------------------------------------------- CLI reference


def test_cli_reference_lists_every_command():
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    rows = table_after(page, "## Commands at a glance")
    listed = [re.fullmatch(r"`qipai ([\w-]+)`", row[0]).group(1) for row in rows]
    commands = cli.list_commands(click.Context(cli))  # the lazy group: names, no import
    assert sorted(listed) == sorted(commands), \
        f"docs/reference/cli.md lists {sorted(listed)}; the CLI has {sorted(commands)}"
    # every command and option in full, generated by sphinx-click
    assert ".. click:: qipai.cli:cli\n   :prog: qipai\n   :nested: full\n" in page


@pytest.mark.parametrize("args", [["schema"], ["schema", "--protocol"], ["schema", "--cases"]])
def test_schema_descriptions_are_plain_text(args):
    """``qipai schema``'s descriptions are the structs' docstrings read as
    plain text: no Sphinx role (``:class:`Term```) or double backquote is
    left for a reader of the JSON."""
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0
    descriptions = re.findall(r'"description": ("(?:[^"\\]|\\.)*")', res.stdout)
    assert descriptions
    for d in map(json.loads, descriptions):
        assert re.search(r":[a-z]+:`", d) is None and "``" not in d, d


# ---------------------------------------------------------------- operator events


def written_events() -> dict[str, set[str]]:
    """Each event kind → every key of ``data`` that :mod:`qipai.host.feed`
    writes, its optional parts included (a stake, a joint deal, a head)."""
    from types import SimpleNamespace as NS

    from qipai.host import feed

    t = NS(id="t1", key_name=None, stake=10, rake=None, ruleset=NS(spec="guilin-mahjong"),
           n=4, bots=[1], levels={1: "normal"}, named={}, room_hands=2, rng_shown="joint")
    result = NS(end="hu", winners=[0], payments=[], net=[1, -1, 0, 0])
    rec = {"commitment": "c", "salt": "s", "deal": {}, "joint": {}, "seed": 1,
           "chain": {"head": "h"}}
    ops = [feed.table_created(t),
           feed.hand_started(t, 0, NS(dealer=0), "c", joint={"server_commitment": "x"}),
           feed.hand_ended(t, 0, result, rec, [1, -1, 0, 0], money={"net": []},
                           money_totals=[0, 0, 0, 0]),
           feed.table_closed(t, "finished", 1, [0, 0, 0, 0], None, "h"),
           feed.timeout(t, 0, 1, 3), feed.tuoguan(t, 0, 1, True, "timeouts")]
    return {row["kind"]: set(json.loads(row["body"])) for _, row in ops}


def test_the_protocol_reference_lists_every_event_and_its_data():
    """docs/reference/protocol.md's events table: one table, a row per kind,
    each row naming every key of the ``data`` the server writes."""
    page = (DOCS / "reference" / "protocol.md").read_text(encoding="utf-8")
    rows = table_after(page, "## Events: the webhook and `GET /events`")
    kinds = [re.fullmatch(r"`(\w+)`", row[0]).group(1) for row in rows]
    written = written_events()
    assert sorted(kinds) == sorted(written), f"the table lists {kinds}"
    for row, kind in zip(rows, kinds, strict=True):
        missing = {k for k in written[kind] if f"`{k}`" not in row[2]}
        assert not missing, f"the {kind} row does not name {sorted(missing)}"
