"""The environments' progress signals and reward scale, and a policy as a bot
(qipai.env.PolicyBot) named ``module:Class`` as any bot is."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo (extra qipai[env]) not installed")

from qipai.bots import BotFault, play_hand, run_to_end  # noqa: E402
from qipai.core.errors import BadOption  # noqa: E402
from qipai.core.ruleset import load  # noqa: E402
from qipai.env import PolicyBot, make, make_seat_env  # noqa: E402
from qipai.env.progress import KEYS, signals  # noqa: E402
from qipai.families.mahjong.shanten import shanten  # noqa: E402

MJ = load("guilin-mahjong")


def kinds(text: str) -> list[int]:
    """Tiles written as 123m 11p E … as kinds (guilin-mahjong's tokens)."""
    tokens = [MJ.cards.token(k) for k in range(MJ.cards.n_kinds)]
    out = []
    for group in text.split():
        if group[-1] in "mps":
            out += [tokens.index(d + group[-1]) for d in group[:-1]]
        else:
            out += [tokens.index(t) for t in group]
    return out


@pytest.mark.parametrize("hand, melds, want", [
    ("123m 456m 789m 11p 23p", 0, 0),            # ready: waits on 1p / 4p
    ("123m 456m 789m 11p 234p", 0, -1),          # complete
    ("147m 147p 147s ESWN", 0, 6),               # no pair: 七对 six away, the best
    ("11m 22m 33p 44p 55s 66s 7s", 0, 0),        # 七对 ready
    ("123m 468m 9p", 2, 1),                      # two melds, a set, a partial, no pair
])
def test_shanten_of_a_known_hand(hand, melds, want):
    got = signals(MJ, kinds(hand), [None] * melds, lambda: None, False)
    assert got == {"shanten": want}


@pytest.mark.parametrize("spec", ["guilin-mahjong", "guilin-zipai"])
def test_every_decision_has_the_familys_info_keys(spec):
    env = make(spec)
    family = env.ruleset.manifest.family
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    seen = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term:
            assert set(info) == {*KEYS[family], "net"}
            assert info["net"] == reward
            env.step(None)
            continue
        assert set(info) == set(KEYS[family])
        seat = int(agent.split("_")[1])
        me = env.table.seats[seat]
        if family == "mahjong":  # the seat's own hand and melds
            c = [0] * 34
            for k in me.hand:
                c[k] += 1
            assert info["shanten"] == shanten(c, len(me.melds))
        else:
            assert info["missing"] >= 0 and info["hu_needed"] == 10
            assert isinstance(info["hu_estimate"], float)
        seen += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert seen > 10
    quiet = make(spec, progress=False)
    quiet.reset(seed=3)
    assert quiet.last()[4] == {}


def test_reward_scale():
    env = make("guilin-mahjong", reward_scale=0.1)
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, reward, term, _, info = env.last()
        if term:
            assert reward == pytest.approx(0.1 * info["net"])
            env.step(None)
        else:
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert sum(env.table.result.net) == 0
    seat_env = make_seat_env("guilin-mahjong", bots="greedy", reward_scale=0.5)
    seat_env.reset(seed=2)
    done = False
    while not done:
        _, reward, done, _, info = seat_env.step(int(np.flatnonzero(seat_env.action_masks())[0]))
    assert reward == 0.5 * info["net"] == 0.5 * seat_env.aec.table.result.net[0]
    for bad in ("x", float("inf"), True, None, 0, -0.5):
        with pytest.raises(BadOption, match="reward_scale"):
            make("guilin-mahjong", reward_scale=bad)
    with pytest.raises(BadOption, match="hand_seed"):
        make("guilin-mahjong").reset(options={"hand_seed": -1})


BOTS = textwrap.dedent('''
    import numpy as np
    from qipai.env import PolicyBot

    SEEN = []  # the observations the policy was given

    def lowest(observation, mask):
        SEEN.append(observation["observation"].copy())
        return np.flatnonzero(mask)[0]

    class Lowest(PolicyBot):
        def __init__(self):
            super().__init__(lowest)

    class Wrong(PolicyBot):
        def __init__(self):
            super().__init__(lambda observation, mask: int(np.flatnonzero(mask == 0)[0]))
''')


@pytest.mark.parametrize("spec", ["guilin-mahjong", "guilin-zipai"])
def test_a_policy_bot_named_module_class_plays_as_the_environment(spec, tmp_path, monkeypatch):
    """A PolicyBot subclass, named ``mod:Lowest``, plays every seat of a hand
    (always the lowest legal index); the same hand played in the AEC
    environment with the lowest legal index at every step gives the policy's
    observations, the same number of decisions and the same nets."""
    (tmp_path / "policybots_test.py").write_text(BOTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import policybots_test as mod

    rs = load(spec)
    n = rs.manifest.players
    mod.SEEN.clear()
    table = play_hand(rs, seed=7, dealer=1, bots="policybots_test:Lowest")
    assert table.result is not None and len(mod.SEEN) == len(table.actions)
    env = make(spec)
    env.reset(options={"hand_seed": 7, "dealer": 1})
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, _, _ = env.last()
        if term:
            env.step(None)
            continue
        assert (obs["observation"] == mod.SEEN[steps]).all()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
    assert steps == len(mod.SEEN)
    assert list(env.table.result.net) == list(table.result.net)
    # a policy that answers an illegal index is the bot's fault, named
    bad = rs.table(seed=7, dealer=1)
    from qipai.bots import make_bots

    with pytest.raises(BotFault, match="not a legal index"):
        run_to_end(bad, make_bots(["policybots_test:Wrong"] + ["greedy"] * (n - 1), n, 7))


def test_policy_bot_sb3_adapter_passes_the_mask():
    calls = []

    class Model:
        def predict(self, observation, action_masks=None, deterministic=False):
            calls.append((action_masks.dtype, deterministic))
            return np.array(int(np.flatnonzero(action_masks)[-1])), None

    rs = load("guilin-zipai")
    table = play_hand(rs, seed=2, bots=[PolicyBot(PolicyBot.sb3(Model())), "greedy", "greedy"])
    assert table.result is not None and calls and calls[0] == (np.dtype(bool), True)
