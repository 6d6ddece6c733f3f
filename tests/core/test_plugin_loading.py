"""A variant or house plugin that cannot be used is one typed error naming
it — a misspelt hook, a plugin given twice, an installed variant whose
import fails, two packages registering one name — never pluggy's or the
import's traceback; and the flow a variant builds on is named in errors by
its class, not by a number."""

from __future__ import annotations

import types
from importlib.metadata import EntryPoint

import pytest

from qipai.core import ruleset as ruleset_mod
from qipai.core.errors import BadOption, UnknownVariant
from qipai.core.hookspecs import hookimpl
from qipai.core.ruleset import Ruleset, load, load_entry_point
from qipai.families.mahjong.flow import MahjongFlow


def _module(name: str, **functions) -> types.ModuleType:
    mod = types.ModuleType(name)
    for key, fn in functions.items():
        setattr(mod, key, fn)
    return mod


def test_a_misspelt_hook_names_the_plugin_and_the_hook():
    @hookimpl
    def qipai_setle(end, options):  # the author meant qipai_settle
        return None

    house = _module("house_rules", qipai_setle=qipai_setle)
    with pytest.raises(UnknownVariant, match=r"cannot use plugin house_rules: .*qipai_setle"):
        load("guilin-mahjong", plugins=[house])


def test_a_plugin_given_twice_is_bad_option():
    @hookimpl
    def qipai_first_dealer(options, rng):
        return 0

    house = _module("house_rules", qipai_first_dealer=qipai_first_dealer)
    with pytest.raises(BadOption, match="a plugin is given twice"):
        load("guilin-mahjong", plugins=[house, house])


def test_an_installed_variant_whose_import_fails_is_named():
    ep = EntryPoint("bad-import", "qipai_no_such_module_anywhere:plugin", "qipai")
    with pytest.raises(UnknownVariant, match=r"cannot load variant 'bad-import' "
                                             r"\(qipai_no_such_module_anywhere:plugin\): "
                                             r"importing it raised ModuleNotFoundError"):
        load_entry_point("bad-import", ep)


def test_two_packages_registering_one_variant_name_are_refused(monkeypatch):
    mine = EntryPoint("guilin-mahjong", "qipai_guilin_mahjong_copy.plugin",
                      ruleset_mod.ENTRY_POINT_GROUP)
    before = ruleset_mod.entry_points

    def entry_points(group=None):
        eps = list(before(group=group))
        return eps + [mine] if group == ruleset_mod.ENTRY_POINT_GROUP else eps

    monkeypatch.setattr(ruleset_mod, "entry_points", entry_points)
    with pytest.raises(UnknownVariant, match=r"two installed packages register variant "
                                             r"'guilin-mahjong': .*qipai_guilin_mahjong_copy"):
        load("guilin-mahjong")


def test_the_flow_is_named_by_its_class():
    rs = load("guilin-mahjong")
    flow = next(p for p in rs.pm.get_plugins() if isinstance(p, MahjongFlow))
    assert rs.pm.get_name(flow) == "qipai.families.mahjong.flow.MahjongFlow"
    assert isinstance(Ruleset(ruleset_mod.available()["guilin-mahjong"].load()), Ruleset)
