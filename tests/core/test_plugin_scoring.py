"""Plugins and scoring: a house flip is paid; the scoring API names a
plugin's bug.

A house plugin's ``qipai_bonus_flip`` is the flip a hand is paid by, in
play as through ``Ruleset.settle`` (README: "a ``tryfirst`` implementation
overrides a ``firstresult`` hook"): 桂林麻将 and 桂林字牌 settle with the
override's flip, not their own.

The expected figures come from the rules, not from the code:

* 桂林麻将 (guilin-mahjong.md §3.4): each paying seat owes the winner ``value × multiplier +
  醒数``; with 互包 off (``hubao=false``) a zimo has the three others pay,
  a discard win the discarder alone.  So a flip worth 7 instead of ``x``
  moves the winner's hu gains by ``(7 - x)`` per payer.
* 桂林字牌 (guilin-zipai.md §7): one share is ``(子 + 中醒数) × 番数`` and the winner gains
  two shares, so the gain moves by ``2 × 番数 × (7 - x)``, 番数 ≥ 1.
"""

from __future__ import annotations

import msgspec
import pytest

from qipai.bots import play_hand
from qipai.core.errors import PluginError
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Flip, HandEnd, WinClaim
from qipai.core.ruleset import load


class SevenXing:
    """Every flip is worth 7 醒, whatever is flipped (one card, the head)."""

    @hookimpl(tryfirst=True)
    def qipai_bonus_flip(self, holding, tile, stock, options):
        return Flip(flipped=tuple(stock[:1]), xing=7)


class BadFlip:
    def __init__(self, answer):
        self.answer = answer

    @hookimpl(tryfirst=True)
    def qipai_bonus_flip(self, holding, tile, stock, options):
        return self.answer


def _won_hands(spec: str, plugins: list, n: int):
    """``n`` greedy hands of ``spec`` that end in a win, with and without
    ``plugins``, as (plain table, table with the plugins) pairs."""
    plain, house = load(spec), load(spec, plugins=plugins)
    out = []
    for seed in range(400):
        a = play_hand(plain, seed=seed)
        if a.result.end != "hu":
            continue
        b = play_hand(house, seed=seed)
        out.append((a, b))
        if len(out) == n:
            break
    assert len(out) == n, f"fewer than {n} won hands of {spec} in 400 seeds"
    return out


def _hu_gain(table, winner: int) -> int:
    return sum(p.amount for p in table.result.payments
               if p.payee == winner and p not in table.result.instant)


def test_guilin_mahjong_pays_the_house_flip_in_play():
    for a, b in _won_hands("guilin-mahjong(hubao=false)", [SevenXing()], 6):
        assert a.state.actions == b.state.actions  # the flip changes no play
        (w,) = a.result.winners[:1]
        assert b.result.xing[w] == 7
        payers = {p.payer for p in a.result.payments
                  if p.payee == w and p not in a.result.instant}
        assert len(payers) in (1, 3)
        assert _hu_gain(b, w) - _hu_gain(a, w) == (7 - a.result.xing[w]) * len(payers)


def test_guilin_zipai_pays_the_house_flip_in_play():
    for a, b in _won_hands("guilin-zipai", [SevenXing()], 6):
        (w,) = a.result.winners
        assert b.result.xing == {w: 7}
        moved = _hu_gain(b, w) - _hu_gain(a, w)
        x = a.result.xing[w]
        if x == 7:
            assert moved == 0
        else:
            fan, rest = divmod(moved, 2 * (7 - x))
            assert rest == 0 and fan >= 1


def test_ruleset_settle_pays_the_house_flip():
    # guilin-mahjong.md §3.4: each payer owes value × multiplier + 醒数, so with 互包 off the
    # same zimo settled under a flip worth 7 costs each of the three payers
    # (7 - x) more, x being the variant's own 醒数 for it.
    spec = "guilin-mahjong(hubao=false)"
    plain, house = load(spec), load(spec, plugins=[SevenXing()])
    end = HandEnd(dealer=0, how="zimo", from_seat=None,
                  winners=(WinClaim(seat=1, hand=tuple(plain.parse("123m 456m 789m 234p 5s")),
                                    tile=plain.parse("5s")[0]),),
                  stock=tuple(plain.parse("8p 6s 1m")))
    a, b = plain.settle(end), house.settle(end)
    # guilin-mahjong.md §3.3: flip 8p, its 醒 are the 7s and 9s of every suit; the holding has
    # 7m and 9m: 2 醒, below reflip_at 4, so no second flip
    assert a.xing == {1: 2} and a.flipped == tuple(plain.parse("8p"))
    assert b.xing == {1: 7} and b.flipped == tuple(plain.parse("8p"))
    owed = {p.payer: p.amount for p in a.payments}
    assert sorted(owed) == [0, 2, 3]
    assert {p.payer: p.amount for p in b.payments} == {q: v + 5 for q, v in owed.items()}


@pytest.mark.parametrize("answer, why", [
    (3, "not a Flip"),
    (Flip(flipped=(), xing=-1), "醒数 of -1"),
    (Flip(flipped=(), xing=True), "醒数 of True"),
    (Flip(flipped=(999,), xing=1), "flipped 999"),
])
def test_a_bad_flip_is_a_plugin_error_naming_the_plugin(answer, why):
    bad = BadFlip(answer)
    rs = load("guilin-mahjong", plugins=[bad])
    with pytest.raises(PluginError, match=why) as e:
        rs.bonus_flip(rs.parse("123m 456m 789m 234p 55s"), None, rs.parse("1m 2m"))
    assert e.value.hook == "qipai_bonus_flip" and e.value.plugin == rs.pm.get_name(bad)


def test_a_bad_flip_in_play_is_a_plugin_error_and_changes_nothing():
    bad = BadFlip(Flip(flipped=(), xing=-3))
    rs = load("guilin-mahjong(hubao=false)", plugins=[bad])
    plain = load("guilin-mahjong(hubao=false)")
    seed = next(s for s in range(400) if play_hand(plain, seed=s).result.end == "hu")
    finished = play_hand(plain, seed=seed)
    table = rs.table(seed=seed)
    for action in finished.state.actions[:-1]:
        table.apply(action)
    before = table.snapshot()
    with pytest.raises(PluginError, match="醒数 of -3") as e:
        table.apply(finished.state.actions[-1])
    assert e.value.hook == "qipai_bonus_flip" and e.value.plugin == rs.pm.get_name(bad)
    assert table.snapshot() == before and table.result is None


# ------------------------------------------------ the scoring API names a plugin's bug
#
# Ruleset.win_check / readings / waits / bonus_flip / settle (what ``qipai
# score`` and the conformance runner call) turn an exception of a plugin's
# hook into a PluginError naming the hook and the plugin, and check the
# win check's and the settlement's answers, as Table does in play.  The
# variant refusing bad input (BadCards) still comes through as it is.


class Raises:
    @hookimpl(tryfirst=True)
    def qipai_win_check(self, claim, how, dealer, from_seat, options):
        return 1 // 0

    @hookimpl(tryfirst=True)
    def qipai_waits(self, hand, melds, options):
        return {}["x"]


class Answers:
    def __init__(self, ev=None, settlement=None):
        self.ev, self.settlement = ev, settlement

    @hookimpl(tryfirst=True)
    def qipai_win_check(self, claim, how, dealer, from_seat, options):
        return self.ev

    @hookimpl(tryfirst=True)
    def qipai_settle(self, end, options):
        return self.settlement


def _zimo(rs):
    return WinClaim(seat=1, hand=tuple(rs.parse("123m 456m 789m 234p 5s")),
                    tile=rs.parse("5s")[0])


def test_a_raising_hook_of_the_scoring_api_is_a_plugin_error():
    bad = Raises()
    rs = load("guilin-mahjong", plugins=[bad])
    with pytest.raises(PluginError, match="raised ZeroDivisionError") as e:
        rs.win_check(_zimo(rs), "zimo", 0)
    assert (e.value.hook, e.value.plugin) == ("qipai_win_check", rs.pm.get_name(bad))
    with pytest.raises(PluginError, match="raised KeyError") as e:
        rs.waits(rs.parse("123m 456m 789m 234p 5s"))
    assert (e.value.hook, e.value.plugin) == ("qipai_waits", rs.pm.get_name(bad))


def test_the_variant_refusing_a_hand_is_still_bad_cards():
    from qipai.core.errors import BadCards

    rs = load("guilin-mahjong")
    with pytest.raises(BadCards):
        rs.win_check(WinClaim(seat=1, hand=tuple(rs.parse("1111m 1m")), tile=0), "zimo", 0)


@pytest.mark.parametrize("answer", [None, True, "hu"])
def test_a_win_check_answer_not_a_wineval_is_a_plugin_error(answer):
    bad = Answers(ev=answer)
    rs = load("guilin-mahjong", plugins=[bad])
    if answer is None:  # nobody over the variant answered: the variant's own answer
        assert rs.win_check(_zimo(rs), "zimo", 0).wins
        return
    with pytest.raises(PluginError, match="not a WinEval") as e:
        rs.win_check(_zimo(rs), "zimo", 0)
    assert (e.value.hook, e.value.plugin) == ("qipai_win_check", rs.pm.get_name(bad))


def test_a_bad_settlement_of_the_scoring_api_is_a_plugin_error():
    from qipai.core.model import Payment, Settlement

    bad = Answers(settlement=Settlement(payments=(Payment(0, 9, 5, "hu"),)))
    rs = load("guilin-mahjong", plugins=[bad])
    end = HandEnd(dealer=0, how="zimo", from_seat=None, winners=(_zimo(rs),))
    with pytest.raises(PluginError) as e:
        rs.settle(end)
    assert (e.value.hook, e.value.plugin) == ("qipai_settle", rs.pm.get_name(bad))


def test_qipai_score_names_a_raising_hook_in_one_line(tmp_path):
    from click.testing import CliRunner

    from qipai.cli import cli

    bug = tmp_path / "bug.py"
    bug.write_text("from qipai.core.hookspecs import hookimpl\n\n"
                   "@hookimpl(tryfirst=True)\n"
                   "def qipai_win_check(claim, how, dealer, from_seat, options):\n"
                   "    return 1 // 0\n")
    res = CliRunner().invoke(cli, ["score", "guilin-mahjong", "123m456m789m234p55s",
                                   "--plugin", str(bug)])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "broke hook qipai_win_check: raised ZeroDivisionError" in res.output
    assert len(res.output.strip().splitlines()) == 1


# ------------------------------------------------ flips the settlement cannot use


class FlipAs:
    """Every flip is ``flip``, whatever the hand."""

    def __init__(self, flip):
        self.flip = flip

    @hookimpl(tryfirst=True)
    def qipai_bonus_flip(self, holding, tile, stock, options):
        return self.flip


@pytest.mark.parametrize("flip, why", [
    (Flip(flipped=(0,), xing=7, each=(3,)), "per-card 醒数 \\(3,\\)"),
    (Flip(flipped=(0, 1), xing=1, each=(2, -1)), "per-card"),
    (Flip(flipped=(0,), xing=1, each=(1, 0)), "per-card"),
    (Flip(flipped=[0], xing=1), "not a tuple"),
    (Flip(flipped=(), xing=10**30), "not an int from 0 to 9007199254740991"),
])
def test_a_flip_the_settlement_cannot_use_is_refused_in_play(flip, why):
    # refused as the plugin's fault: not a ValueError from the variant's
    # breakdown blamed on the variant, a list that makes the record
    # unreplayable, or an amount the snapshot cannot hold
    house = FlipAs(flip)
    rs = load("guilin-mahjong(hubao=false)", plugins=[house])
    plain = load("guilin-mahjong(hubao=false)")
    seed = next(s for s in range(400) if play_hand(plain, seed=s).result.end == "hu")
    with pytest.raises(PluginError, match=why) as e:
        play_hand(rs, seed=seed)
    assert (e.value.hook, e.value.plugin) == ("qipai_bonus_flip", rs.pm.get_name(house))


def test_a_wrapper_that_spoils_the_settlement_is_the_one_named():
    from qipai.core.model import Payment

    class Spoils:
        @hookimpl(hookwrapper=True)
        def qipai_settle(self, end, options):
            outcome = yield
            s = outcome.get_result()
            outcome.force_result(msgspec.structs.replace(
                s, payments=s.payments + (Payment(0, 1, 10**30, "house"),)))

    rs = load("guilin-mahjong(hubao=false)", plugins=[w := Spoils()])
    plain = load("guilin-mahjong(hubao=false)")
    seed = next(s for s in range(400) if play_hand(plain, seed=s).result.end == "hu")
    with pytest.raises(PluginError, match="amount 1000000000000000000000000000000") as e:
        play_hand(rs, seed=seed)
    assert (e.value.hook, e.value.plugin) == ("qipai_settle", rs.pm.get_name(w))


def test_the_conformance_guard_is_not_blamed_as_a_plugin():
    # The conformance Guard's own failure comes through Ruleset.settle as it
    # is, not as "plugin 1401… broke hook qipai_settle: raised PropertyFailure".
    # Payer 4 at a 4-seat table: the ZERO_SUM bug of test_plugin_failures.
    from qipai.conformance.guard import GUARD, PropertyFailure
    from qipai.core.model import Payment, Settlement

    class Uneven:
        @hookimpl(tryfirst=True)
        def qipai_settle(self, end, options):
            return Settlement(payments=(Payment(0, 1, 5, "hu"), Payment(4, 1, 5, "hu")),
                              patterns={1: ("pinghu",)})

    rs = load("guilin-mahjong", plugins=[Uneven(), GUARD])
    end = HandEnd(dealer=0, how="zimo", from_seat=None, winners=(_zimo(rs),))
    with pytest.raises(PropertyFailure, match="qipai_settle") as e:
        rs.settle(end)
    assert not isinstance(e.value, PluginError)


def test_qipai_score_takes_a_house_plugin(tmp_path):
    # the zimo of test_ruleset_settle_pays_the_house_flip, from the command
    # line: flip 8p is worth 2 醒 (guilin-mahjong.md §3.3); the house plugin
    # makes every flip worth 7, so each payer pays 5 more
    import json

    from click.testing import CliRunner

    from qipai.cli import cli

    house = tmp_path / "seven_xing.py"
    house.write_text("from qipai.core.hookspecs import hookimpl\n"
                     "from qipai.core.model import Flip\n\n"
                     "@hookimpl(tryfirst=True)\n"
                     "def qipai_bonus_flip(holding, tile, stock, options):\n"
                     "    return Flip(flipped=tuple(stock[:1]), xing=7)\n")
    args = ["score", "guilin-mahjong(hubao=false)", "123m456m789m234p5s5s", "--seat", "1",
            "--flip", "8p 6s 1m", "--json"]
    plain = json.loads(CliRunner().invoke(cli, args, catch_exceptions=False).output)
    res = CliRunner().invoke(cli, [*args, "--plugin", str(house)], catch_exceptions=False)
    got = json.loads(res.output)
    assert plain["xing"] == 2 and got["xing"] == 7
    owed = {p["payer"]: p["amount"] for p in plain["payments"]}
    assert sorted(owed) == [0, 2, 3]
    assert {p["payer"]: p["amount"] for p in got["payments"]} == {
        q: v + 5 for q, v in owed.items()}
    bad = CliRunner().invoke(cli, [*args, "--plugin", str(tmp_path / "nope.py")])
    assert bad.exit_code != 0 and "nope.py" in bad.output and "Traceback" not in bad.output
