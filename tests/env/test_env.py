"""qipai.env: the PettingZoo AEC environment, its action codecs and
observations, the Gymnasium one-seat wrapper."""

from __future__ import annotations

import random
from typing import Any
import runpy
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qipai.conformance.properties import hidden_shuffled
from qipai.core.errors import BadCards, BadOption, IllegalAction, QipaiError, UnknownVariant
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Chi, Discard, Hu, Pass
from qipai.core.ruleset import load
from qipai.env import make, make_seat_env
from qipai.env.actions import MahjongCodec, NotEncodable, ZipaiCodec, codec_for
from qipai.env.observation import Encoder, encode, layout_for, seat_view

VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]
ROOT = Path(__file__).resolve().parents[2]
# PettingZoo's api_test warns about every Dict observation (it looks at the
# dict, not at its "observation" array): the convention it asks for.
DICT_OBS_WARNINGS = ("Observation is not a NumPy array",
                     "Observation space for each agent probably should be")


def random_play(rs, seed, *, each_step=None, ask_all=False):
    """Play a hand with random legal actions; call ``each_step(table)`` before each."""
    table = rs.table(seed=seed, ask_all=ask_all)
    rng = random.Random(seed)
    steps = 0
    while not table.over:
        if each_step is not None:
            each_step(table)
        seat = min(table.state.pending)
        table.apply(rng.choice(table.legal_actions(seat)))
        steps += 1
        assert steps < 5000
    if each_step is not None:
        each_step(table)
    return table


# ---------------------------------------------------------------- PettingZoo API

@pytest.mark.parametrize("variant", VARIANTS)
def test_api_test(variant):
    from pettingzoo.test import api_test

    env = make(variant)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env, num_cycles=1000)
    other = {str(w.message) for w in caught
             if not str(w.message).startswith(DICT_OBS_WARNINGS)}
    assert not other


@pytest.mark.parametrize("variant", VARIANTS)
def test_seed_determinism(variant):
    from pettingzoo.test import seed_test

    seed_test(lambda: make(variant), num_cycles=300)
    # and whole hands: the same seed plays the same hands, reset after reset
    def trajectory(seed):
        env = make(variant)
        env.reset(seed=seed)
        out = []
        for _ in range(3):
            env.reset() if out else None
            rng = random.Random(seed)
            for agent in env.agent_iter():
                obs, reward, term, trunc, _ = env.last()
                out.append((agent, obs["observation"].tobytes(), reward))
                if term:
                    env.step(None)
                    continue
                env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        return out

    assert trajectory(11) == trajectory(11)
    assert trajectory(11) != trajectory(12)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rewards_are_the_settlement(variant):
    env = make(variant)
    env.reset(seed=5)
    rng = random.Random(5)
    got = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term:
            got[agent] = reward
            env.step(None)
            continue
        assert reward == 0
        env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    net = env.table.result.net
    assert got == {f"seat_{i}": net[i] for i in range(len(net))}
    assert sum(got.values()) == 0


def test_bad_input_is_typed():
    with pytest.raises(UnknownVariant):
        make("no-such-variant")
    with pytest.raises(BadOption):
        make("guilin-mahjong(hubao=maybe)")
    with pytest.raises(BadOption):
        make("guilin-mahjong(no_such_option=1)")
    with pytest.raises(BadOption):
        make("guilin-mahjong", render_mode="rgb_array")
    env = make("guilin-mahjong(hubao=false)")
    assert env.ruleset.options.hubao is False
    env.reset(seed=1)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = env.table.snapshot()
    with pytest.raises(IllegalAction, match="not legal now"):
        env.step(illegal)
    with pytest.raises(IllegalAction):
        env.step(10_000)
    with pytest.raises(IllegalAction):
        env.step("discard")
    assert env.table.snapshot() == before and env.agent_selection == agent


def test_misuse_of_the_env_is_typed():
    """Before reset, after the hand, an unknown agent, a seed or options of
    the wrong type: a qipai error naming it, not an AttributeError or a
    KeyError from inside."""
    env = make("guilin-mahjong")
    for call in (lambda: env.step(0), lambda: env.observe("seat_0"),
                 lambda: env.legal_actions("seat_0")):
        with pytest.raises(IllegalAction, match=r"reset\(\)"):
            call()
    for seed in (1.5, "abc"):
        with pytest.raises(BadOption, match="seed"):
            env.reset(seed=seed)
    for options in ([1], "dealer"):
        with pytest.raises(BadOption, match="options"):
            env.reset(seed=1, options=options)
    env.reset(seed=1)
    for agent in ("seat_9", 0):
        for call in (env.observe, env.legal_actions, env.observation_space, env.action_space):
            with pytest.raises(BadOption, match="seat_0"):
                call(agent)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.agents == []
    for action in (0, None):
        with pytest.raises(IllegalAction, match=r"the hand is over: call reset\(\)"):
            env.step(action)
    seat_env = make_seat_env("guilin-mahjong")
    with pytest.raises(IllegalAction, match=r"reset\(\)"):
        seat_env.action_masks()
    with pytest.raises(BadOption, match="bots"):
        make_seat_env("guilin-mahjong", bots=5)


def test_render_shows_the_seats_view_only():
    env = make("guilin-mahjong", render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    seat = int(env.agent_selection.split("_")[1])
    cards = env.ruleset.cards
    assert cards.format(sorted(env.table.seats[seat].hand)) in text
    for other in range(4):
        if other != seat:
            assert cards.format(sorted(env.table.seats[other].hand)) not in text
    assert "discard" in text  # the legal actions with their indices
    assert make("guilin-zipai").render() is None  # no render mode


def test_render_names_the_actions_with_the_variants_words():
    """guangxi-mahjong calls a 蓄杠 补杠 (its ``Manifest.names``): the
    rendered legal actions say so, as the command line does."""
    env = make("guangxi-mahjong", render_mode="ansi")
    rng = random.Random(0)
    for seed in range(40):
        env.reset(seed=seed)
        while env.agents:
            agent = env.agent_selection
            mask = env.observe(agent)["action_mask"]
            legal = [int(i) for i in np.flatnonzero(mask)]
            kinds = {env.codec.labels[i].split()[0]: i for i in legal}
            if "jiagang" in kinds:
                text = env.render()
                assert "补杠 jiagang" in text and "蓄杠" not in text, text
                return
            pick = kinds.get("peng", rng.choice(legal))
            env.step(None if env.terminations[agent] or env.truncations[agent] else pick)
    pytest.fail("no 补杠 offered in 40 seeded hands")


def test_render_human_prints(capsys):
    env = make("guilin-zipai", render_mode="human")
    env.reset(seed=2)
    assert env.render() is None
    assert "your hand" in capsys.readouterr().out


# ---------------------------------------------------------------- actions

def check_decision(codec, table, seat, seen):
    legal = table.legal_actions(seat)
    w = table.state.window
    card = w.card if w is not None else None
    idx = [codec.index(a, card) for a in legal]
    assert len(set(idx)) == len(idx), (legal, idx)  # one index per action
    for a, i in zip(legal, idx):
        assert 0 <= i < codec.n
        assert codec.action(i, seat, card) == a  # and back
    chis = [a for a in legal if isinstance(a, Chi)]
    if len(chis) > 1:
        seen["several chi"] += 1
    if any(a.extra for a in chis):
        seen["xiahuo"] += 1


def play_checking_codec(variant, seed, seen):
    rs = load(variant)
    codec = codec_for(rs)

    def each(table):
        for seat in table.to_decide():
            check_decision(codec, table, seat, seen)

    random_play(rs, seed, each_step=each, ask_all=True)


@settings(max_examples=15, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32))
def test_every_legal_action_has_one_index_and_back(variant, seed):
    play_checking_codec(variant, seed, Counter())


def test_codec_sees_several_chi_and_xiahuo():
    """The round trip above over fixed seeds meets decisions with several
    吃 (both families) and zipai 下伙, so those are exercised for sure."""
    seen = {v: Counter() for v in VARIANTS}
    for seed in range(40):
        for v in ("guilin-mahjong", "guilin-zipai"):
            play_checking_codec(v, seed, seen[v])
    assert seen["guilin-mahjong"]["several chi"] > 0
    assert seen["guilin-zipai"]["several chi"] > 0
    assert seen["guilin-zipai"]["xiahuo"] > 0


def test_codec_layouts():
    m = MahjongCodec(34)
    assert m.n == 110 and len(m.labels) == 110
    assert m.index(Discard(0, 5), None) == 5
    # 吃 of 4m (kind 3): 234m has it highest, 345m middle, 456m lowest
    assert m.index(Chi(1, (1, 2, 3)), 3) == m.CHI + 2
    assert m.index(Chi(1, (2, 3, 4)), 3) == m.CHI + 1
    assert m.index(Chi(1, (3, 4, 5)), 3) == m.CHI + 0
    assert m.action(m.CHI + 1, 1, 3) == Chi(1, (2, 3, 4))
    assert m.action(m.PASS, 2, None) == Pass(2) and m.action(m.HU, 2, 7) == Hu(2)
    z = ZipaiCodec(20)
    assert z.n_chi == 111 and z.n == 20 + 111 + 4
    for c, slots in enumerate(z.slots):
        assert len(set(slots)) == len(slots)
    with pytest.raises(NotEncodable):
        m.index(Chi(0, (1, 3, 5)), 3)
    with pytest.raises(NotEncodable):
        m.action(110, 0, None)
    with pytest.raises(NotEncodable):
        z.action(z.CHI + 110, 0, 0)  # x1 has fewer slots
    assert issubclass(NotEncodable, QipaiError)


# ---------------------------------------------------------------- observations

@settings(max_examples=6, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32))
def test_incremental_encoder_is_the_views_encoding(variant, seed):
    """The env's incremental encoder gives, seat by seat and step by step,
    exactly the encoding of ``table.view(seat)``; the light view is the
    view less its events."""
    rs = load(variant)
    layout = layout_for(rs)
    fdk = dict(rs.manifest.face_down_kinds)
    holder = {}

    def each(table):
        enc = holder.get(id(table))
        if enc is None:
            enc = holder[id(table)] = Encoder(table, layout, fdk)
        for seat in range(table.n):
            view = table.view(seat)
            assert seat_view(table, seat, fdk) == \
                view.__class__(**{**{f: getattr(view, f) for f in view.__struct_fields__},
                                  "events": ()})
            want = encode(view, layout)
            assert want.shape == layout.shape and want.dtype == np.uint8
            assert np.array_equal(enc.encode(seat), want)

    random_play(rs, seed, each_step=each)


@settings(max_examples=8, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32),
       stop=st.integers(0, 120))
def test_hidden_cards_do_not_change_observations(variant, seed, stop):
    """Two tables differing only in other seats' hidden cards give a seat
    the same observation (both the view's encoding and the env's encoder)."""
    rs = load(variant)
    layout = layout_for(rs)
    fdk = dict(rs.manifest.face_down_kinds)
    table = rs.table(seed=seed)
    rng = random.Random(seed)
    for _ in range(stop):
        if table.over:
            break
        table.apply(rng.choice(table.legal_actions(min(table.state.pending))))
    for seat in range(table.n):
        other = hidden_shuffled(table, seat, rng)
        a = Encoder(table, layout, fdk).encode(seat)
        b = Encoder(other, layout, fdk).encode(seat)
        assert np.array_equal(a, b)
        assert np.array_equal(encode(table.view(seat), layout), encode(other.view(seat), layout))


def test_hidden_melds_are_not_observed():
    """A zipai 扫 lies face down: the others' observation counts its cards
    as face down, never by kind (and a 过扫 shows as a 扫)."""
    rs = load("guilin-zipai")
    layout = layout_for(rs)
    found = None
    for seed in range(200):
        table = rs.table(seed=seed)
        rng = random.Random(seed)
        while not table.over and found is None:
            table.apply(rng.choice(table.legal_actions(min(table.state.pending))))
            found = next((p for p, s in enumerate(table.seats)
                          if any(m.hidden for m in s.melds)), None)
        if found is not None:
            break
    assert found is not None
    p = found
    hidden = sum(m.hidden for m in table.seats[p].melds)
    own = encode(table.view(p), layout)
    assert own[layout.INFO, 1 + layout.n] == 0  # nothing is hidden from oneself
    own_rows = [layout.rows.index(f"meld 0 {k}") for k in layout.kinds]
    for viewer in range(3):
        if viewer == p:
            continue
        obs = encode(table.view(viewer), layout)
        r = (p - viewer) % 3
        rows = [layout.rows.index(f"meld {r} {k}") for k in layout.kinds]
        assert obs[layout.INFO, 1 + layout.n + r] == hidden
        assert obs[rows].sum() == own[own_rows].sum() - hidden
        assert obs[layout.rows.index(f"meld {r} guosao")].sum() == 0  # shown as sao


# ---------------------------------------------------------------- Gymnasium

@pytest.mark.parametrize("variant", VARIANTS)
def test_seat_env_check_env(variant):
    from gymnasium.utils.env_checker import check_env

    env = make_seat_env(variant, seat=1, bots="random", illegal="lose", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its note that the env has no registered spec
        check_env(env)


@pytest.mark.parametrize("variant", VARIANTS)
def test_seat_env_plays_hands(variant):
    env = make_seat_env(variant, seat=0, bots="greedy")
    total = 0.0
    for hand in range(3):
        obs, info = env.reset(seed=hand)
        rng = random.Random(hand)
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            assert np.array_equal(legal, np.flatnonzero(obs["action_mask"]))
            obs, reward, done, truncated, info = env.step(rng.choice(legal.tolist()))
            assert not truncated
        assert reward == env.aec.table.result.net[0]
        total += reward
    with pytest.raises(IllegalAction):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(IllegalAction):
        env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))


def test_seat_env_bad_input():
    with pytest.raises(BadOption):
        make_seat_env("guilin-mahjong", seat=4)
    with pytest.raises(BadOption):
        make_seat_env("guilin-mahjong", illegal="ignore")
    with pytest.raises(BadOption):
        make_seat_env("guilin-mahjong", bots="clever")
    with pytest.raises(BadOption):
        make_seat_env("guilin-zipai", bots=["random"] * 4)


def test_seat_env_bad_input_is_typed_and_numpy_ints_are_ints():
    """A bot that is neither a name nor has ``act``, an ``illegal_reward``
    that is no finite number, a seed below 0 or not an int: BadOption
    naming it (not an AttributeError from the bots at reset, a bare
    ValueError or Gymnasium's own error).  numpy's ints are ints for the
    seat, the seed and the dealer."""
    with pytest.raises(BadOption, match="bot of seat 1 .* not 1"):
        make_seat_env("guilin-mahjong", bots=[None, 1, 2, 3])
    from qipai.bots import RandomBot

    with pytest.raises(BadOption, match="a class: give an instance"):
        make_seat_env("guilin-mahjong", bots=[None, RandomBot, RandomBot, RandomBot])
    with pytest.raises(BadOption, match="bots must be a bot name or one per seat"):
        make_seat_env("guilin-mahjong", bots=b"greedy")
    # the agent's own entry is ignored, whatever it is (not checked as a bot name)
    for own in ("clever", 7):
        make_seat_env("guilin-mahjong", seat=1, bots=["random", own, "greedy", "random"]).reset(
            seed=1)
    for bad in ("x", float("nan"), float("inf"), True, np.bool_(True), None, 10**400):
        with pytest.raises(BadOption, match="illegal_reward"):
            make_seat_env("guilin-mahjong", illegal_reward=bad)
    env = make_seat_env("guilin-mahjong", seat=np.int64(2))
    assert env.seat == 2 and type(env.seat) is int
    for bad in ("x", 1.5, -1, True):
        with pytest.raises(BadOption, match="seed must be an int >= 0"):
            env.reset(seed=bad)
    with pytest.raises(IllegalAction, match=r"reset\(\) before action_masks\(\)"):
        env.action_masks()
    env.reset(seed=np.int64(4), options={"dealer": np.int64(1)})
    other = make_seat_env("guilin-mahjong", seat=2)
    other.reset(seed=4, options={"dealer": 1})
    assert env.aec.table.state.dealer == 1
    assert env.aec.table.state.deal == other.aec.table.state.deal


def test_seat_env_human_mode_prints_on_reset_and_step(capsys):
    """``render_mode="human"`` prints the seat's view after ``reset`` and
    every ``step``, as Gymnasium's environments do."""
    env = make_seat_env("guilin-mahjong", render_mode="human")
    env.reset(seed=2)
    assert "your hand" in capsys.readouterr().out
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert "your hand" in capsys.readouterr().out
    lose = make_seat_env("guilin-mahjong", render_mode="human", illegal="lose")
    lose.reset(seed=2)
    capsys.readouterr()
    _, reward, done, _, info = lose.step(int(np.flatnonzero(lose.action_masks() == 0)[0]))
    assert done and info == {"illegal": True} and "your hand" in capsys.readouterr().out


def test_seat_env_uses_act_view_legal():
    """A bot with ``act(view, legal)`` is asked with the seat's view and
    legal actions only."""
    calls = []

    class First:
        def act(self, view, legal):
            calls.append((view.seat, view.hand))
            assert list(view.legal) == list(legal)
            return legal[0]

    env = make_seat_env("guilin-zipai", seat=0, bots=[None, First(), First()])
    env.reset(seed=4)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert calls and all(seat in (1, 2) for seat, _ in calls)


# ---------------------------------------------------------------- docs example

def test_training_loop_example_runs(capsys):
    runpy.run_path(str(ROOT / "docs" / "examples" / "env_loop.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "5 hands; mean 子 per seat" in out


def test_howto_gymnasium_snippet_runs(capsys):
    import re

    page = (ROOT / "docs" / "howto" / "train-an-agent.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "train-an-agent.md", "exec"), {})
    assert "net 子 of seat 0:" in capsys.readouterr().out


class _OddDiscards:
    """A house plugin whose turn lists also offer discards no action space
    has: a kind out of range, and a card that is not a kind at all."""

    def __init__(self, bad: Any) -> None:
        self.bad = bad

    @hookimpl(tryfirst=True)
    def qipai_turn_actions(self, table, seat):
        return [Discard(seat, self.bad)] + [Discard(seat, k) for k in sorted(set(table.seats[seat].hand))]


@pytest.mark.parametrize("bad", [-1, 34, 200, "5m", None])
def test_a_plugins_unencodable_discard_is_named_not_masked(bad):
    """Output of plugins is input too: a discard whose card is not a kind of
    the action space (-1 would otherwise mark index -1, the last one) makes
    observing raise NotEncodable naming it, never a wrong mask."""
    env = make(load("guilin-mahjong", plugins=[_OddDiscards(bad)]))
    env.reset(seed=1)
    with pytest.raises(NotEncodable, match="Discard"):
        env.last()


def test_a_refused_reset_changes_nothing():
    """``reset`` with a dealer that is not a seat (or a bool seed) is
    refused and the environment is as it was: the same hand and hand seed,
    and the next ``reset()`` deals what it would have dealt (the RNG has
    not moved, and ``hand_seed`` is still the table's)."""
    a, b = make("guilin-mahjong"), make("guilin-mahjong")
    a.reset(seed=5)
    b.reset(seed=5)
    table, hand_seed = a.table, a.hand_seed
    for options, seed in (({"dealer": 9}, None), ({"dealer": True}, None),
                          ({"dealer": 9}, 7), ({}, True)):
        with pytest.raises((BadCards, BadOption)):
            a.reset(seed=seed, options=options)
        assert a.table is table and a.hand_seed == hand_seed
    a.reset()
    b.reset()
    assert a.hand_seed == b.hand_seed and a.table.state.deal == b.table.state.deal
    s1, s2 = make_seat_env("guilin-mahjong"), make_seat_env("guilin-mahjong")
    s1.reset(seed=3)
    s2.reset(seed=3)
    with pytest.raises(BadCards):
        s1.reset(options={"dealer": 4})
    with pytest.raises(BadOption, match="seed"):
        s1.reset(seed=False)
    s1.reset()
    s2.reset()
    assert s1.aec.hand_seed == s2.aec.hand_seed


def test_misuse_around_the_hand_is_typed():
    """``last()`` before reset and after every agent stepped out, an
    action other than None for a terminated agent, a bool as an action
    and ``render()`` before reset: IllegalAction naming it (not an
    AttributeError, a KeyError, PettingZoo's ValueError, action 1 or None)."""
    env = make("guilin-mahjong", render_mode="ansi")
    with pytest.raises(IllegalAction, match=r"reset\(\) before last\(\)"):
        env.last()
    with pytest.raises(IllegalAction, match=r"reset\(\) before render\(\)"):
        env.render()
    with pytest.raises(IllegalAction, match=r"reset\(\) before render\(\)"):
        make_seat_env("guilin-mahjong", render_mode="ansi").render()
    env.reset(seed=2)
    before = env.table.snapshot()
    for flag in (True, False):
        with pytest.raises(IllegalAction, match="an action is an index"):
            env.step(flag)
    assert env.table.snapshot() == before
    rng = np.random.default_rng(0)
    while not env.terminations[env.agent_selection]:
        obs, _, _, _, _ = env.last()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    done = env.agent_selection
    with pytest.raises(IllegalAction, match=f"{done} is done.*only action is None"):
        env.step(0)
    assert env.agent_selection == done and done in env.agents
    while env.agents:
        env.step(None)
    with pytest.raises(IllegalAction, match="every agent has stepped out"):
        env.last()


@pytest.mark.parametrize("seat,seed,net", [(1, 275, -3.0), (2, 362, 12.0)])
def test_seat_env_reset_never_returns_a_hand_that_is_over(seat, seed, net):
    """With these seeds the first hand a reset deals ends before the agent's
    seat has a decision (seat 2: 放炮必胡 wins it for that seat unasked).
    reset deals the next hand — one the agent acts in — and gives the
    skipped hand's net in ``info["skipped_rewards"]``: the first hand played
    out here by the same bots with the same seeds (reset never returns a
    finished hand with an all-zero mask, on which the next step would raise)."""
    import gymnasium

    from qipai.bots import decide, make_bots
    from qipai.env import make

    env = make_seat_env("guilin-zipai", seat=seat, bots="greedy")
    obs, info = env.reset(seed=seed)
    assert info["skipped_rewards"] == [net]
    assert not env.aec.table.over and env.action_masks().any()
    assert env.aec.agent_selection == f"seat_{seat}"
    done = False
    while not done:  # the hand it gave plays to its end
        obs, reward, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert reward == env.aec.table.result.net[seat]
    # the skipped hand, dealt and played again outside the env
    rng, _ = gymnasium.utils.seeding.np_random(seed)
    first = int(rng.integers(2**62))
    aec = make("guilin-zipai")
    aec.reset(seed=first)
    bots = make_bots("greedy", 3, first, ruleset=aec.ruleset)
    table = aec.table
    while not table.over:
        s = min(table.state.pending)
        assert s != seat  # never asked
        table.apply(decide(bots[s], table, s))
    assert table.result.net[seat] == net
