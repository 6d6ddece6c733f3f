"""Bots by any name everywhere a user names one: ``qipai play`` (one name,
one per seat, ``--human``), ``qipai simulate`` (in-process and a pool),
the environment; ``module:Class`` (tests/helpers/plugbot.py, a module
outside qipai) and a ``qipai.bots`` entry point; bad names refused before
any hand, a bot that fails mid-hand named in one line."""

from __future__ import annotations

import importlib.metadata
import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import plugbot
from qipai.bots import play as bots_play, registry
from qipai.cli import cli
from qipai.core.errors import BadOption


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def one_line(res, code: int, *words: str) -> str:
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.fixture
def entry_point(monkeypatch):
    """An installed package's ``qipai.bots`` entry point ``firstbot`` (faked:
    the registry's ``entry_points`` answers it)."""
    ep = importlib.metadata.EntryPoint("firstbot", "plugbot:FirstBot", registry.ENTRY_POINT_GROUP)
    real = registry.entry_points

    def fake(**kw):
        if kw.get("group") == registry.ENTRY_POINT_GROUP:
            return importlib.metadata.EntryPoints([ep])
        return real(**kw)

    monkeypatch.setattr(registry, "entry_points", fake)
    monkeypatch.setattr(bots_play, "_FACTORIES", {})   # make_bots's, kept per name
    return ep


# ------------------------------------------------------------------ play


def test_play_one_bot_per_seat_by_module_class_and_level():
    plugbot.CALLS.clear()
    res = invoke("play", "--seed", "4", "--json",
                 "--bots", "greedy,plugbot:FirstBot,random,easy")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["bots"] == "greedy,plugbot:FirstBot,random,easy"
    seat1 = [a for a in doc["hands"][0]["record"]["actions"] if a["seat"] == 1]
    assert plugbot.CALLS and len(plugbot.CALLS) >= len(seat1) > 0   # it played seat 1
    # the same seed and bots: the same hand (the bots are seeded per seat)
    again = invoke("play", "--seed", "4", "--json", "--bots", "greedy,plugbot:FirstBot,random,easy")
    assert json.loads(again.stdout)["hands"] == doc["hands"]


def test_play_a_factory_function_and_an_entry_point(entry_point):
    for name in ("plugbot:make_first", "firstbot"):
        plugbot.CALLS.clear()
        res = invoke("play", "--seed", "2", "--json", "--bots", name)
        assert res.exit_code == 0, res.output
        assert plugbot.CALLS
    assert "firstbot" in registry.known_bots()


@pytest.mark.parametrize("bots, words", [
    ("nosuchbot", ["--bots", "unknown bot 'nosuchbot'", "greedy"]),
    ("nosuchmodule:Bot", ["--bots", "module 'nosuchmodule' does not import"]),
    ("plugbot:Missing", ["--bots", "has no 'Missing'"]),
    ("plugbot:NoAct", ["--bots", "NoAct has no act(view, legal)"]),
    ("greedy,random", ["--bots", "2 bots for 4 seats"]),
    ("greedy,,random,greedy", ["--bots", "non-empty"]),
])
def test_play_refuses_a_bad_bot_before_any_hand(bots, words):
    res = invoke("play", "--seed", "1", "--bots", bots)
    one_line(res, 2, *words)
    assert res.stdout == ""


def test_play_refuses_a_bad_bot_with_human_too():
    one_line(invoke("play", "--human", "0", "--bots", "plugbot:Nope"), 2, "plugbot:Nope")


@pytest.mark.parametrize("bot, words", [
    ("plugbot:RaisingBot", ["bot plugbot:RaisingBot at seat", "decision", "RuntimeError",
                            "plugbot gave up"]),
    ("plugbot:IllegalBot", ["bot plugbot:IllegalBot at seat", "'nonsense'",
                            "not one of its legal actions"]),
    ("plugbot:SitRaisingBot", ["bot plugbot:SitRaisingBot at seat",
                               "RuntimeError: plugbot will not sit"]),
    ("plugbot:ExitingBot", ["bot plugbot:ExitingBot at seat", "raised SystemExit: 3"]),
])
def test_a_bot_that_fails_mid_hand_is_one_line_exit_1(bot, words):
    one_line(invoke("play", "--seed", "1", "--bots", f"greedy,greedy,{bot},greedy"), 1,
             *words, "seat 2")


def test_human_plays_against_a_module_class_bot_and_a_fault_is_one_line():
    plugbot.CALLS.clear()
    res = invoke("play", "--seed", "3", "--human", "0", "--bots", "plugbot:FirstBot",
                 input="q\n")
    assert res.exit_code == 0, res.output
    res = invoke("play", "--seed", "3", "--human", "0",
                 "--bots", "greedy,plugbot:RaisingBot,greedy,greedy", input="1\n" * 40)
    one_line(res, 1, "bot plugbot:RaisingBot at seat 1", "plugbot gave up")


# -------------------------------------------------------------- simulate


@pytest.mark.parametrize("k", ["1", "2"])
def test_simulate_with_a_module_class_bot(k, tmp_path, monkeypatch):
    # a pool worker resolves the name again: the module must import there
    monkeypatch.setenv("PYTHONPATH", plugbot.__file__.rsplit("/", 1)[0])
    out = tmp_path / "r.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "4", "-k", k, "--bots", "plugbot:FirstBot",
                 "--out", str(out))
    assert res.exit_code == 0, res.output
    meta = json.loads(pq.read_schema(out).metadata[b"qipai.simulate"])
    assert meta["bots"] == "plugbot:FirstBot"
    assert pq.read_table(out).num_rows == 4


@pytest.mark.parametrize("k", ["1", "2"])
def test_simulate_a_failing_bot_is_one_line_and_no_file(k, tmp_path):
    out = tmp_path / "r.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "4", "-k", k, "--bots",
                 "plugbot:RaisingBot", "--out", str(out))
    one_line(res, 1, "guilin-mahjong hand", "bot plugbot:RaisingBot at seat",
             "plugbot gave up", "not written")
    assert not out.exists()


@pytest.mark.parametrize("bots, words", [
    ("plugbot:NoAct", ["--bots", "NoAct has no act"]),
    ("nosuch:Bot", ["--bots", "does not import"]),
])
def test_simulate_refuses_a_bad_bot(bots, words, tmp_path):
    out = tmp_path / "r.parquet"
    one_line(invoke("simulate", "guilin-mahjong", "-n", "2", "--bots", bots, "--out", str(out)),
             2, *words)
    assert not out.exists()


def test_simulate_function_refuses_a_bad_bot_as_bad_simulation(tmp_path):
    from qipai.sim import BadSimulation
    from qipai.sim.run import parse_rulesets, simulate

    with pytest.raises(BadSimulation, match="unknown bot 'clever'"):
        simulate(parse_rulesets(["guilin-mahjong"]), 1, bots="clever",
                 out=str(tmp_path / "x.parquet"))


# ------------------------------------------------------------------- env


@pytest.mark.parametrize("bots", ["plugbot:FirstBot",
                                  ["x", "firstbot", "plugbot:make_first", "greedy"]])
def test_env_opponents_by_module_class_and_entry_point(bots, entry_point):
    from qipai.env.gym import SeatEnv

    plugbot.CALLS.clear()
    env = SeatEnv("guilin-mahjong", seat=0, bots=bots)   # (the agent's entry is ignored)
    obs, _ = env.reset(seed=7)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(int(obs["action_mask"].nonzero()[0][0]))
    assert plugbot.CALLS


@pytest.mark.parametrize("bots, words", [
    ("plugbot:NoAct", ["bots:", "NoAct"]),
    (["x", "greedy", "nosuchbot", "random"], ["bots:", "unknown bot 'nosuchbot'"]),
])
def test_env_refuses_a_bad_bot_name(bots, words):
    from qipai.env.gym import SeatEnv

    with pytest.raises(BadOption) as info:
        SeatEnv("guilin-mahjong", bots=bots)
    for w in words:
        assert w in str(info.value)


def test_env_a_failing_bot_is_a_bot_fault():
    from qipai.bots import BotFault
    from qipai.env.gym import SeatEnv

    env = SeatEnv("guilin-mahjong", seat=0, bots="plugbot:RaisingBot")
    with pytest.raises(BotFault, match="plugbot:RaisingBot at seat"):
        obs, _ = env.reset(seed=1)
        while True:
            obs, _, done, _, _ = env.step(int(obs["action_mask"].nonzero()[0][0]))
            assert not done


def test_a_level_resolves_through_the_registry(monkeypatch):
    # "hard" is the strong bot once it is built in; a stand-in here
    monkeypatch.setitem(registry.BUILTIN, "strong", plugbot.FirstBot)
    monkeypatch.setattr(bots_play, "_FACTORIES", {})
    plugbot.CALLS.clear()
    res = invoke("play", "--seed", "1", "--json", "--bots", "hard")
    assert res.exit_code == 0, res.output
    assert plugbot.CALLS


def test_a_level_whose_bot_is_not_installed_says_so(monkeypatch):
    # (as hard was before the strong bot): not listed, and named for what it is
    monkeypatch.setitem(registry.LEVELS, "expert", "nosuchstrongbot")
    assert "expert" not in registry.known_bots()
    line = one_line(invoke("play", "--seed", "1", "--bots", "expert"), 2)
    assert "level 'expert' is played by the bot 'nosuchstrongbot', which is not installed" \
        in line and "expert," not in line


def test_checked_act_a_bot_that_exits_is_a_fault():
    # (a server asks such a bot in a thread: a SystemExit there ended the server)
    with pytest.raises(registry.BotFault, match="raised SystemExit: 3"):
        registry.checked_act(plugbot.ExitingBot(), None, [], 1, 4)
