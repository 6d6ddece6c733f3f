"""House rules as a plugin over a base variant (options first, plugins second)."""

from __future__ import annotations

import importlib.util
import pathlib

from qipai.core.model import Deal
from qipai.core.ruleset import load
from qipai.families.mahjong.tiles import TILES

EXAMPLE = pathlib.Path(__file__).parents[2] / "docs" / "examples" / "house_rules.py"


def house_rules():
    spec = importlib.util.spec_from_file_location("house_rules", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _angang_then_huangzhuang(rs):
    """Dealer 1 declares an 暗杠 of 1m, draws the last tile, discards it; 荒庄."""
    P = TILES.parse
    hands = [P("2m3m4m 2p3p4p 2s3s4s 6m7m8m E"), P("1m1m1m1m 9p9p9p 5s6s7s 9m9m E S"),
             P("5p6p7p 5m6m7m 9s9s9s C C F P"), P("2m3m4m 2p3p4p 2s3s4s 6s7s8s W")]
    wall = P("N")  # the replacement for the kong; then the stock is empty
    t = rs.table(deal=Deal(1, tuple(map(tuple, hands)), tuple(wall)), partial=True)
    from qipai.core.model import Angang, Discard
    t.apply(Angang(1, P("1m")[0]))
    t.apply(Discard(1, P("N")[0]))
    while not t.over:  # nobody can claim N on the last discard
        t.apply(t.legal_actions(t.to_decide()[0])[-1])
    return t


def test_base_variant_returns_angang_fees_and_keeps_the_dealer():
    t = _angang_then_huangzhuang(load("guangxi-mahjong"))
    assert t.result.end == "huangzhuang"
    assert list(t.result.net) == [0, 0, 0, 0]  # 3 张 paid, 3 张 returned (guangxi-mahjong §6)
    assert t.result.next_dealer == 1          # 荒庄连庄


def test_house_plugin_overrides_two_hooks():
    t = _angang_then_huangzhuang(load("guangxi-mahjong", plugins=[house_rules()]))
    assert list(t.result.net) == [-1, 3, -1, -1]  # the 暗杠 fees stand
    assert t.result.next_dealer == 2               # 荒庄轮庄


def test_options_first_fenghu_at_four_pengs():
    rs = load("guangxi-mahjong(fenghu_count=4)")
    assert rs.options.fenghu_count == 4
