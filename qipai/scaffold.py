"""``qipai new-variant NAME``: the skeleton of a variant plugin package.

The package is what the tutorial (docs/tutorial/write-a-variant.md) builds
by hand: a ``pyproject.toml`` with the entry point in ``qipai.variants``, a
plugin module answering the hooks a variant must fill (built on the
family's common flow), an options Struct and one conformance case file.
It installs as it is (``pip install -e qipai-NAME``), ``qipai variants``
lists it, and ``qipai play NAME`` plays it — with placeholder rules (any
complete hand wins, a flat stake) marked ``TODO`` for you to replace.
"""

from __future__ import annotations

import re
from pathlib import Path

from qipai.core.errors import QipaiError

FAMILIES = ("mahjong", "zipai")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class ScaffoldError(QipaiError, ValueError):
    """A bad variant name, family or target folder."""


def module_name(name: str) -> str:
    """The import package of variant ``name``: ``qipai_`` + name with ``_`` for ``-``."""
    return "qipai_" + name.replace("-", "_")


def files(name: str, family: str = "mahjong") -> dict[str, str]:
    """The skeleton's files: relative path → text.

    Raises:
        ScaffoldError: ``name`` is not lower-case words joined by ``-``, or
            ``family`` is not one of :data:`FAMILIES`.
    """
    if not _NAME.match(name):
        raise ScaffoldError(f"bad variant name {name!r}: use lower-case letters and digits, "
                            "words joined by '-' (e.g. 'my-mahjong')")
    if family not in FAMILIES:
        raise ScaffoldError(f"unknown family {family!r}; families are {', '.join(FAMILIES)}")
    mod = module_name(name)
    subs = {"NAME": name, "MODULE": mod, "CLASS": "".join(w.title() for w in name.split("-")),
            "FAMILY": family}
    plugin = _MAHJONG_PLUGIN if family == "mahjong" else _ZIPAI_PLUGIN
    cases = _MAHJONG_CASES if family == "mahjong" else _ZIPAI_CASES
    out = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{mod}/__init__.py": '"""The {NAME} variant for qipai (see ``plugin``)."""\n',
        f"{mod}/options.py": _OPTIONS,
        f"{mod}/plugin.py": plugin,
        f"{mod}/cases/deck.toml": cases,
        f"tests/test_{mod}.py": _TEST,
    }
    return {path: _fill(text, subs) for path, text in out.items()}


def _fill(text: str, subs: dict[str, str]) -> str:
    for key, value in subs.items():
        text = text.replace("{" + key + "}", value)
    return text


def new_variant(name: str, family: str = "mahjong", directory: str | Path = ".") -> Path:
    """Write the skeleton of variant ``name`` into ``directory/qipai-NAME``.

    Returns:
        The package folder.

    Raises:
        ScaffoldError: a bad name or family, the name of an installed
            variant, or the folder exists already.
    """
    content = files(name, family)
    from qipai.core.ruleset import available

    if name in available():  # it would stand beside (or replace) the installed one
        raise ScaffoldError(f"a variant named {name!r} is installed already; choose another "
                            f"name (e.g. '{name}-house')")
    root = Path(directory) / f"qipai-{name}"
    if root.exists():
        raise ScaffoldError(f"{root} exists already; choose another --dir or name")
    for rel, text in content.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# --------------------------------------------------------------------------
# Templates ({NAME}, {MODULE}, {CLASS}, {FAMILY} are filled in)

_PYPROJECT = '''[project]
name = "qipai-{NAME}"
version = "0.1.0"
description = "The {NAME} variant for qipai"
requires-python = ">=3.11"
dependencies = ["qipai"]

[project.optional-dependencies]
test = ["pytest>=8", "hypothesis>=6.100"]

[project.entry-points."qipai.variants"]
{NAME} = "{MODULE}.plugin"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["{MODULE}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

_README = '''# qipai-{NAME}

A {FAMILY} variant plugin for qipai, made by `qipai new-variant {NAME}`.

```sh
pip install -e .                     # or: uv pip install -e .
qipai variants                       # lists {NAME}
qipai play {NAME} --seed 1           # bots play a hand
qipai conformance {NAME}             # its cases (cases/*.toml) + the property checks
pytest --qipai-variant {NAME}        # the same from pytest
```

Replace the placeholder rules marked TODO in `{MODULE}/plugin.py`, and write
your rules down as cases in `{MODULE}/cases/` (format: qipai's
docs/reference/case-format.md; check them with qipai conformance --check-cases).
'''

_OPTIONS = '''"""The options of {NAME}: a msgspec Struct with defaults.

A host's dict (``qipai play "{NAME}(stake=2)"``) is converted into it, so an
unknown name or a bad value fails with a message naming it.
"""

from __future__ import annotations

from typing import Annotated

import msgspec


class {CLASS}Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """House-rule switches of {NAME}.  TODO: add yours, each with its default,
    what it means and where the rule comes from (``qipai variants {NAME}``
    prints them)."""

    stake: Annotated[int, msgspec.Meta(
        ge=1,
        description="What each payer pays for a win.",
        extra={"source": "TODO: the rule or decision it comes from"},
    )] = 1
'''

_MAHJONG_PLUGIN = '''"""{NAME} — a mahjong variant plugin, registered in ``qipai.variants``.

The play (deal, draws, discards, 吃/碰/杠 claims, 抢杠, 荒庄) is qipai's common
mahjong flow, listed in ``QIPAI_BASE_PLUGINS``; override any of its hooks by
implementing it here.  The hooks below are the ones a variant must answer;
their placeholder rules are marked TODO.
"""

from __future__ import annotations

from collections.abc import Sequence

from qipai.core.errors import BadCards
from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Flip, FlipFn, HandEnd, Meld, Payment, Settlement, Term, WinClaim, WinEval,
)
from qipai.core.ruleset import Manifest
from qipai.families.mahjong import shapes
from qipai.families.mahjong.flow import MahjongFlow, MahjongState
from qipai.families.mahjong.scoring_kit import (
    check_context,
    check_counts,
    check_hand_end,
    concealed_counts,
    waits_for,
)
from qipai.families.mahjong.tiles import TILES

from {MODULE}.options import {CLASS}Options

MANIFEST = Manifest(name="{NAME}", title="{NAME}", players=4, cards=TILES,
                    options_type={CLASS}Options, family="mahjong", version="0",
                    state_type=MahjongState)
QIPAI_BASE_PLUGINS = [MahjongFlow(MANIFEST, angang_hidden=4)]


def _patterns(claim: WinClaim, how: str, dealer: int, from_seat: int | None) -> tuple[str, ...] | None:
    """TODO: your win check.  Placeholder: four sets and a pair win, as "pinghu"."""
    check_context(claim, how, dealer, from_seat, n_players=4)
    counts = concealed_counts(claim)
    check_counts(counts, claim.melds)
    return ("pinghu",) if shapes.is_standard(counts) else None


@hookimpl
def qipai_win_check(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                    options: {CLASS}Options) -> WinEval:
    found = _patterns(claim, how, dealer, from_seat)
    return WinEval(wins=found is not None, patterns=found or ())


@hookimpl
def qipai_waits(hand: Sequence[int], melds: Sequence[Meld], options: {CLASS}Options) -> list[int]:
    return waits_for(hand, melds, lambda counts, ms: shapes.is_standard(counts))


@hookimpl
def qipai_bonus_flip(holding: Sequence[int], tile: int | None, stock: Sequence[int],
                     options: {CLASS}Options) -> Flip:
    """TODO: a bonus flip, if your variant has one.  Placeholder: none."""
    return Flip(flipped=(), xing=0)


@hookimpl
def qipai_settle(end: HandEnd, options: {CLASS}Options, bonus_flip: FlipFn) -> Settlement:
    """TODO: your settlement.  Placeholder: the stake from the discarder, or
    from each other seat on a self-draw.  A bonus flip is
    ``bonus_flip(holding, w.tile, end.stock)`` (the ruleset's
    ``qipai_bonus_flip``, a house rule's included): call it, not your own
    flip function, so that house rules reach the payments."""
    check_hand_end(end, "{NAME}")
    payments, found = [], {}
    for w in end.winners:
        ids = _patterns(w, end.how, end.dealer, end.from_seat)
        if ids is None:
            raise BadCards(f"seat {w.seat}'s hand does not win")
        found[w.seat] = ids
        payers = [s for s in range(end.n_players) if s != w.seat] \\
            if end.how == "zimo" else [end.from_seat]
        why = (Term("stake", "stake", options.stake),)  # the breakdown: terms totalling it
        payments += [Payment(p, w.seat, options.stake, end.how, why) for p in payers]
    return Settlement(payments=tuple(payments), patterns=found)
'''

_ZIPAI_PLUGIN = '''"""{NAME} — a zipai (字牌) variant plugin, registered in ``qipai.variants``.

The play (deal, 扫/扫穿/开招, claims, 过张, discards) is qipai's common zipai
flow, listed in ``QIPAI_BASE_PLUGINS``; override any of its hooks by
implementing it here.  The hooks below are the ones a variant must answer;
their placeholder rules are marked TODO.
"""

from __future__ import annotations

from collections.abc import Sequence

from qipai.core.cards import counts
from qipai.core.errors import BadCards
from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Flip, FlipFn, HandEnd, Meld, Payment, Settlement, Term, WinClaim, WinEval,
)
from qipai.core.ruleset import Manifest
from qipai.families.zipai import groups
from qipai.families.zipai.cards import CARDS
from qipai.families.zipai.flow import ZipaiFlow, ZipaiState

from {MODULE}.options import {CLASS}Options

MANIFEST = Manifest(name="{NAME}", title="{NAME}", players=3, cards=CARDS,
                    options_type={CLASS}Options, family="zipai", version="0",
                    state_type=ZipaiState,
                    owner_claims=("draw",))  # the drawer may claim the card it shows
QIPAI_BASE_PLUGINS = [ZipaiFlow(MANIFEST)]

#: TODO: the least 胡数 that wins.
MIN_HU = 10


def _hu(claim: WinClaim, how: str) -> int | None:
    """TODO: your win check.  Placeholder: every card in groups (and at most
    one pair) with at least MIN_HU 胡数; returns the 胡数, or None."""
    split = groups.best_split(counts(claim.hand, CARDS.n_kinds), claim.tile,
                              self_drawn=how == "zimo")
    if split is None:
        return None
    hu = split.hu + sum(groups.meld_hu(m) for m in claim.melds)
    return hu if hu >= MIN_HU else None


@hookimpl
def qipai_win_check(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                    options: {CLASS}Options) -> WinEval:
    hu = _hu(claim, how)
    return WinEval(wins=hu is not None, patterns=("pinghu",) if hu is not None else (), hu=hu)


@hookimpl
def qipai_waits(hand: Sequence[int], melds: Sequence[Meld], options: {CLASS}Options) -> list[int]:
    return groups.waits(counts(hand, CARDS.n_kinds), list(melds), min_hu=MIN_HU)


@hookimpl
def qipai_bonus_flip(holding: Sequence[int], tile: int | None, stock: Sequence[int],
                     options: {CLASS}Options) -> Flip:
    """TODO: 醒, if your variant has it.  Placeholder: none."""
    return Flip(flipped=(), xing=0)


@hookimpl
def qipai_settle(end: HandEnd, options: {CLASS}Options, bonus_flip: FlipFn) -> Settlement:
    """TODO: your settlement.  Placeholder: the stake from each other seat;
    on a discard (放炮) the discarder pays both shares.  醒 is
    ``bonus_flip(holding, w.tile, end.stock)`` (the ruleset's
    ``qipai_bonus_flip``, a house rule's included): call it, not your own
    flip function, so that house rules reach the payments."""
    payments, found = [], {}
    for w in end.winners:
        if _hu(w, end.how) is None:
            raise BadCards(f"seat {w.seat}'s hand does not win")
        found[w.seat] = ("pinghu",)
        for s in range(end.n_players):
            if s == w.seat:
                continue
            payer = end.from_seat if end.how == "fangpao" and end.from_seat is not None else s
            why = (Term("stake", "stake", options.stake),)  # the breakdown: terms totalling it
            payments.append(Payment(payer, w.seat, options.stake, end.how, why))
    return Settlement(payments=tuple(payments), patterns=found)
'''

_TEST = '''"""Tests of {NAME}'s own rules (``pytest``; add ``--qipai-variant {NAME}`` for
the conformance suite too)."""

from qipai.core.ruleset import load


def test_the_variant_loads_with_its_default_options():
    rs = load("{NAME}")
    assert rs.name == "{NAME}" and rs.options.stake == 1
'''

_MAHJONG_CASES = '''# {NAME} conformance cases (format: qipai's
# docs/reference/case-format.md; check with: qipai conformance --check-cases FILE).
# Every case names the rule text it comes from.  TODO: write your rules down as cases.
variant = "{NAME}"

[[cases]]
id = "deck/136-tiles"
source = "TODO: your rules document, e.g. 'rules.md §1: 136 tiles, no flowers'"
check = "deck"
[cases.expect]
size = 136
kinds = 34
copies = 4
'''

_ZIPAI_CASES = '''# {NAME} conformance cases (format: qipai's
# docs/reference/case-format.md; check with: qipai conformance --check-cases FILE).
# Every case names the rule text it comes from.  TODO: write your rules down as cases.
variant = "{NAME}"

[[cases]]
id = "deck/80-cards"
source = "TODO: your rules document, e.g. 'rules.md §1: 80 cards, 小 and 大 one to ten'"
check = "deck"
[cases.expect]
size = 80
kinds = 20
copies = 4
'''
