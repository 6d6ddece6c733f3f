"""The PettingZoo AEC environment of one ruleset (docs: reference/env)."""

from __future__ import annotations

import io
import math
import operator
import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from qipai.core.errors import BadCards, BadOption, IllegalAction
from qipai.env.actions import codec_for
from qipai.core.model import Discard
from qipai.core.ruleset import Ruleset, load_cached
from qipai.env.observation import Encoder, layout_for, seat_view
from qipai.env.progress import signals

__all__ = ["QipaiEnv"]

_I8 = np.dtype(np.int8)


def integer(value: Any) -> int | None:
    """``value`` as an int when it is one (``operator.index``: numpy's
    integers too, never a bool), else None."""
    if type(value) is bool:
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def finite(value: Any, name: str) -> float:
    """``value`` as a finite float (an int or float, numpy's too; a bool,
    str or bytes is not).

    Raises:
        BadOption: anything else, naming ``name``.
    """
    try:
        if isinstance(value, (bool, np.bool_, str, bytes)):
            raise TypeError
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        out = math.nan
    if not math.isfinite(out):
        raise BadOption(f"{name} must be a finite number, not {value!r}")
    return out


def ruleset_of(spec: Any) -> Ruleset:
    """``spec`` itself when it is a loaded ruleset, else the ruleset that
    :func:`~qipai.core.ruleset.load_cached` loads from it."""
    return spec if isinstance(spec, Ruleset) else load_cached(spec)


class QipaiEnv(AECEnv):
    """One hand of a variant as a PettingZoo AEC game; ``reset`` deals a new one.

    Agents are ``"seat_0"`` … ``"seat_{n-1}"`` (seat numbers at the table).
    The agent to act (``agent_selection``) is the lowest seat with a
    pending decision; in a claim window every seat asked decides in seat
    order, none seeing another's answer.

    Spaces (the same for every agent):

    * action: ``Discrete(codec.n)`` — the family's fixed action space
      (:mod:`qipai.env.actions`);
    * observation: ``Dict(observation=Box(0, 255, layout.shape, uint8),
      action_mask=Box(0, 1, (codec.n,), int8))`` — the seat's view encoded
      (:mod:`qipai.env.observation`) and its legal actions now (all 0 for a
      seat with nothing to decide).

    Rewards: 0 until the hand ends; then each agent's reward is its seat's
    net for the hand in 子 (``table.result.net``: the settlement and the
    instant payments such as kong fees, which the engine makes during the
    hand and the reward counts at the end) times ``reward_scale``, summing
    to 0 over the agents, and every agent is terminated.  No truncation:
    every hand ends.

    Infos (``last()``'s, ``infos[agent]``): the selected agent's progress
    signals at each of its decisions (:mod:`qipai.env.progress`: mahjong
    ``shanten``; zipai ``missing``, ``hu_estimate``, ``hu_needed``), unless
    ``progress=False``; at the hand's end every agent's, with ``net``: its
    net in 子, unscaled.

    Args:
        ruleset: a loaded :class:`~qipai.core.ruleset.Ruleset`.
        render_mode: None, ``"human"`` (``render()`` prints the selected
            seat's view) or ``"ansi"`` (returns it as text).
        ask_all: make tables with ``ask_all=True`` (every claim window asks
            every other seat, at least 过 pass).  Default False: only seats
            with a claim are asked, which is faster, but who is asked shows
            in ``agent_selection`` (docs/concepts/views, the last paragraph):
            an agent that reads ``agent_selection`` or the order of its turns
            learns whether another seat could claim.  Observations never
            show it.
        reward_scale: the rewards are the nets in 子 times this (a finite
            number above 0; default 1: the nets as ints).  ``0.1`` brings a
            guilin-mahjong hand's usual ±1…±30 子 near ±1.
        progress: fill the infos with the progress signals (default True;
            False saves their cost, about a shanten per step).

    Raises:
        BadOption: an unknown ``render_mode``, an ``ask_all`` or
            ``progress`` not a bool, a ``reward_scale`` not a finite number
            above 0.
        UnknownVariant: a family without an action space here.

    ``reset(seed=s)`` makes the game reproducible: the hands of the
    following resets derive from ``s``; ``reset()`` with no seed first
    seeds from the OS.  ``reset(options={"dealer": 2})`` fixes the dealer;
    ``options={"hand_seed": s, "dealer": d}`` deals the very hand the table
    seed ``s`` deals (an int ≥ 0: a ``qipai simulate`` results or decisions
    file's ``seed`` column, with its ``dealer`` or ``hand mod players``),
    without moving the RNG of the following resets; other keys of
    ``options`` are ignored (PettingZoo's ``api_test`` passes one).
    """

    metadata = {"name": "qipai_v0", "render_modes": ["human", "ansi"],
                "is_parallelizable": False}

    def __init__(self, ruleset: Any, *, render_mode: str | None = None,
                 ask_all: bool = False, reward_scale: float = 1, progress: bool = True) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise BadOption(f"render_mode {render_mode!r} is not one of None, "
                            + ", ".join(map(repr, self.metadata["render_modes"])))
        if type(ask_all) is not bool:
            raise BadOption(f"ask_all must be True or False, not {ask_all!r}")
        if type(progress) is not bool:
            raise BadOption(f"progress must be True or False, not {progress!r}")
        scale = finite(reward_scale, "reward_scale")
        if scale <= 0:   # 0 erases every reward, a negative one rewards losing
            raise BadOption(f"reward_scale must be above 0, not {reward_scale!r}")
        # 1 keeps the nets as ints (as before the option); any other scale gives floats
        self.reward_scale: float | None = None if scale == 1 and type(reward_scale) is int \
            else scale
        self.progress = progress
        self.ruleset = ruleset
        self.render_mode = render_mode
        self.ask_all = ask_all
        self.codec = codec_for(ruleset)
        self._kinds = range(ruleset.cards.n_kinds)
        self.layout = layout_for(ruleset)
        n = self.n = ruleset.manifest.players
        self.possible_agents = [f"seat_{i}" for i in range(n)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self._fdk = dict(getattr(ruleset.manifest, "face_down_kinds", ()))
        obs = spaces.Dict({
            "observation": spaces.Box(0, 255, self.layout.shape, np.uint8),
            "action_mask": spaces.Box(0, 1, (self.codec.n,), np.int8),
        })
        act = spaces.Discrete(self.codec.n)
        self._obs_spaces = {a: obs for a in self.possible_agents}
        self._act_spaces = {a: act for a in self.possible_agents}
        self._rng: random.Random | None = None
        self.table: Any = None
        self.agents = []
        self._cache: dict[int, tuple[int, dict[str, np.ndarray], dict[int, Any]]] = {}

    # ------------------------------------------------------------- spaces
    def _no_agent(self, agent: Any) -> BadOption:
        return BadOption(f"no agent {agent!r}; the agents are "
                         + ", ".join(self.possible_agents))

    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self._obs_spaces[agent]
        except (KeyError, TypeError):
            raise self._no_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self._act_spaces[agent]
        except (KeyError, TypeError):
            raise self._no_agent(agent) from None

    # ------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand (see the class).

        Raises:
            BadOption: a ``seed`` that is not an int or None (a bool is
                not), ``options`` not a dict or None; BadCards: a
                ``dealer`` not a seat.  These are checked before anything
                moves, so the environment is then as it was: its hand, and
                the hands the following resets deal.
        """
        dealer = self.reset_dealer(options)
        fixed = (options or {}).get("hand_seed")
        if fixed is not None and (integer(fixed) is None or integer(fixed) < 0):
            raise BadOption(f"hand_seed must be an int >= 0, not {fixed!r}")
        if seed is not None:
            if integer(seed) is None:
                raise BadOption(f"seed must be an int or None, not {seed!r}")
            rng = random.Random(f"qipai-env:{integer(seed)}")
        elif self._rng is None:
            rng = random.Random(random.SystemRandom().getrandbits(128))
        else:
            rng = self._rng
        hand_seed = rng.getrandbits(64) if fixed is None else integer(fixed)
        table = self.ruleset.table(seed=hand_seed, dealer=dealer, ask_all=self.ask_all)
        self._rng, self.hand_seed, self.table = rng, hand_seed, table
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._cache = {}
        self._encoder = Encoder(self.table, self.layout, self._fdk)
        self._select()

    def reset_dealer(self, options: dict[str, Any] | None) -> int | None:
        """The dealer ``reset(options=…)`` asks for (None: the variant's
        first dealer), checked without changing anything.

        Raises:
            BadOption: ``options`` not a dict or None.
            BadCards: a ``dealer`` that is not a seat (a bool is not).
        """
        if options is not None and not isinstance(options, dict):
            raise BadOption(f"options must be a dict or None, not {options!r}")
        dealer = (options or {}).get("dealer")
        if dealer is None:
            return None
        seat = integer(dealer)  # numpy's ints too
        if seat is None or not 0 <= seat < self.n:
            raise BadCards(f"dealer {dealer!r} is not a seat (0..{self.n - 1})")
        return seat

    def last(self, observe: bool = True) -> tuple[Any, Any, bool, bool, dict]:
        """PettingZoo's ``last()``: the selected agent's observation (if
        ``observe``), reward, termination, truncation and info.

        Raises:
            IllegalAction: before ``reset``, or once every agent has
                stepped out of the ended hand.
        """
        if not self.agents:
            raise IllegalAction("call reset() before last()" if self.table is None
                                else "the hand is over and every agent has stepped out: "
                                     "call reset()")
        agent = self.agent_selection  # PettingZoo's last(), inline: it is on every step's path
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def _select(self, infos: bool = True) -> None:
        """Select the next agent, or end the hand (rewards, terminations);
        with ``infos``, fill the selected agent's (every agent's at the end)."""
        table = self.table
        result = table.result
        if result is not None:
            net = result.net
            scale = self.reward_scale
            for a in self.agents:
                seat = self._seat_of[a]
                self.rewards[a] = net[seat] if scale is None else net[seat] * scale
                self.terminations[a] = True
                if infos:
                    self.infos[a] = self.info(seat)
            return
        pending = table.pending
        if not pending:
            raise RuntimeError("the hand is not over but no seat has a decision")
        seat = min(pending)
        agent = self.agent_selection = self.possible_agents[seat]
        if infos and self.progress:
            self.infos[agent] = self.info(seat)

    def info(self, seat: int) -> dict[str, Any]:
        """The info of ``seat`` now: its progress signals (unless
        ``progress=False``), and at the hand's end ``net`` (子, unscaled);
        see the class doc."""
        table = self.table
        out: dict[str, Any] = {}
        if self.progress:
            due = any(type(a) is Discard for a in table.pending.get(seat, ()))
            me = table.seats[seat]  # its own hand and melds; the view only for zipai's seen cards
            out.update(signals(self.ruleset, me.hand, me.melds, lambda: seat_view(table, seat),
                               due))
        if table.result is not None:
            out["net"] = table.result.net[seat]
        return out

    # ------------------------------------------------------------- observing
    def _seat(self, agent: Any, doing: str) -> int:
        """``agent``'s seat (BadOption if none; IllegalAction before reset)."""
        try:
            seat = self._seat_of[agent]
        except (KeyError, TypeError):
            raise self._no_agent(agent) from None
        if self.table is None:
            raise IllegalAction(f"call reset() before {doing}")
        return seat

    def _observed(self, seat: int) -> tuple[dict[str, np.ndarray], dict[int, Any]]:
        """The seat's observation and its legal actions by index, cached per step."""
        table = self.table
        step = len(table.actions)
        got = self._cache.get(seat)
        if got is not None and got[0] == step:
            return got[1], got[2]
        codec = self.codec
        w = table.window
        card = w.card if w is not None else None
        mask = bytearray(codec.n)
        by_index: dict[int, Any] = {}
        index = codec.index
        kinds = self._kinds
        for a in table.pending.get(seat, ()):
            # a discard's index is its kind; anything else, or a card that is
            # not a kind (a plugin's), goes to the codec (NotEncodable names it)
            i = a.card if type(a) is Discard and a.card in kinds else index(a, card)
            mask[i] = 1
            by_index[i] = a
        obs = {"observation": self._encoder.encode(seat),
               "action_mask": np.ndarray((codec.n,), _I8, mask)}
        self._cache[seat] = (step, obs, by_index)
        return obs, by_index

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation now (the arrays are new each step; do not
        write into them if you observe the same step twice).

        Raises:
            NotEncodable: a plugin offers the seat an action the family's
                action space has no index for (the message names it).
            NotObservable: the view holds a meld kind or window source the
                observation has no row for.
            BadOption: no such agent.  IllegalAction: before ``reset``.
        """
        try:  # inline, not self._seat: observe is on every step's path
            seat = self._seat_of[agent]
        except (KeyError, TypeError):
            raise self._no_agent(agent) from None
        if self.table is None:
            raise IllegalAction("call reset() before observe()")
        return self._observed(seat)[0]

    def legal_actions(self, agent: str) -> dict[int, Any]:
        """``agent``'s legal actions now, by index (qipai Actions); errors
        as :meth:`observe`."""
        return dict(self._observed(self._seat(agent, "legal_actions()"))[1])

    # ------------------------------------------------------------- acting
    def step(self, action: Any) -> None:
        """Apply the selected agent's action (an index; None for a
        terminated agent).

        Raises:
            IllegalAction: the index is not legal for the agent now (the
                message names it and lists the legal ones; a bool is not
                an index), an action other than None for a terminated
                agent, before ``reset``, or once every agent has stepped
                out of the ended hand; nothing changes.
        """
        if self.table is None:
            raise IllegalAction("call reset() before step()")
        if not self.agents:
            raise IllegalAction("the hand is over: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalAction(f"{agent} is done (the hand is over): its only action is "
                                    f"None, not {action!r}")
            self._was_dead_step(action)
            return
        seat = self._seat_of[agent]
        i = integer(action)
        if i is None:
            raise IllegalAction(f"{agent}: an action is an index, not {action!r}")
        chosen = self._observed(seat)[1].get(i)
        if chosen is None:
            legal = self._observed(seat)[1]
            labels = self.codec.labels
            what = labels[i] if 0 <= i < len(labels) else "not in the action space"
            raise IllegalAction(f"{agent}: action {i} ({what}) is not legal now; legal: "
                                + ", ".join(f"{j} ({labels[j]})" for j in sorted(legal)))
        self._cumulative_rewards[agent] = 0
        self.table.apply(chosen)
        self._select()
        if self.table.result is not None:  # rewards are 0 before the end
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------- rendering
    def render(self) -> str | None:
        """The selected seat's view as text: printed (``"human"``) or
        returned (``"ansi"``); None without a render mode.

        Raises:
            IllegalAction: a render mode but no hand yet (before ``reset``).
        """
        if self.render_mode is None:
            return None
        if self.table is None:
            raise IllegalAction("call reset() before render()")
        from rich.console import Console

        from qipai.text.seat import action_text, show_table

        seat = self._seat_of[self.agent_selection]
        view = seat_view(self.table, seat, self._fdk)
        out = io.StringIO()
        console = Console(file=out, width=100, color_system=None, highlight=False)
        console.print(f"{self.ruleset.manifest.title} — {self.agent_selection}", markup=False)
        show_table(console, view, self.ruleset.cards, self.n)
        if view.result is not None:
            console.print(f"hand over ({view.result.end}); net 子: {list(view.result.net)}",
                          markup=False)
        else:
            legal = self._observed(seat)[1]
            names = self.ruleset.manifest.names   # a variant's own words first (补杠)
            for i in sorted(legal):
                said = action_text(self.ruleset.cards, legal[i], view.window, names)
                console.print(f"  {i:3d}  {said}", markup=False)
        text = out.getvalue()
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text

    def close(self) -> None:
        pass
