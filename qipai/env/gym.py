"""One seat against bots as a Gymnasium environment (docs: reference/env)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from qipai.bots import checked_act, make_bots
from qipai.core.errors import BadOption, IllegalAction
from qipai.env.aec import QipaiEnv, finite, integer, ruleset_of

__all__ = ["SeatEnv"]

#: Hands in a row a reset deals that end before the agent's first decision
#: before it gives up (a variant bug: no real one comes near).
_MOST_SKIPPED = 1000


class SeatEnv(gymnasium.Env):
    """Seat ``seat`` of a variant played by the agent, the others by bots.

    An episode is one hand.  Spaces are those of
    :class:`~qipai.env.aec.QipaiEnv`: the observation a dict of the encoded
    view (``"observation"``) and the legal actions (``"action_mask"``,
    also given by :meth:`action_masks`, the name sb3-contrib's MaskablePPO
    reads); the reward is 0 until the hand ends, then the seat's net in 子
    times ``reward_scale``.  The ``info`` of ``reset`` and ``step`` holds
    the seat's progress signals (:mod:`qipai.env.progress`: mahjong
    ``shanten``; zipai ``missing``, ``hu_estimate``, ``hu_needed``) unless
    ``progress=False``, and at the hand's end ``net`` (子, unscaled).

    Args:
        spec: a ruleset string or a loaded Ruleset.
        seat: the agent's seat (default 0).
        bots: the other seats' bots: a name for all (``"random"``,
            ``"greedy"``, a level, ``module:Class``, a ``qipai.bots`` entry
            point: :func:`qipai.bots.registry.bot_factory`) or one name or
            bot object per seat (the agent's entry is ignored); see
            :func:`qipai.bots.make_bots`.  A bot that raises or answers an
            illegal action raises :class:`~qipai.bots.BotFault` from
            ``reset`` / ``step`` (the bot, seat and decision named).  Each is
            seated (``sit(ruleset, seat)``) at every reset and asked
            ``act(view, legal)`` with its seat's view (no event stream) and
            legal actions (:func:`qipai.bots.decide`), never the table.
        illegal: what an action outside the mask does: ``"raise"``
            (IllegalAction, nothing changes; the default) or ``"lose"``
            (the episode ends at once with reward ``illegal_reward``; the
            table is left as it was).  ``"lose"`` lets an unmasked random
            policy — Gymnasium's ``check_env`` — run.
        illegal_reward: the reward of an illegal action under ``"lose"``
            (a finite number).
        render_mode: as :class:`~qipai.env.aec.QipaiEnv`; ``"human"``
            prints the seat's view after every ``reset`` and ``step``
            (Gymnasium's convention), ``"ansi"`` returns it from
            :meth:`render`.
        ask_all: as :class:`~qipai.env.aec.QipaiEnv`.
        reward_scale: the final reward is the net in 子 times this (a
            finite number, default 1; ``skipped_rewards`` are scaled too,
            ``illegal_reward`` is not).
        progress: put the progress signals in ``info`` (default True).

    Raises:
        BadOption: a seat that is not at the table (an int, numpy's
            included; a bool is not), an unknown ``illegal`` or bot name, a
            bot that is neither a name nor an object with ``act``, the wrong
            number of bots, an ``illegal_reward`` that is not a finite
            number; UnknownVariant / BadOption for a bad spec.
    """

    metadata = {"render_modes": ["human", "ansi"]}

    def __init__(self, spec: Any = "guilin-mahjong", *, seat: int = 0,
                 bots: str | Sequence[Any] = "random", illegal: str = "raise",
                 illegal_reward: float = -1.0, render_mode: str | None = None,
                 ask_all: bool = False, reward_scale: float = 1, progress: bool = True) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise BadOption(f"render_mode {render_mode!r} is not one of None, 'human', 'ansi'")
        # the AEC renders as text only when asked (its "human" mode would print every step)
        self.aec = QipaiEnv(ruleset_of(spec), render_mode=None if render_mode is None else "ansi",
                            ask_all=ask_all, reward_scale=reward_scale, progress=progress)
        self.reward_scale = finite(reward_scale, "reward_scale")
        n = self.aec.n
        if integer(seat) is None:
            raise BadOption(f"seat must be an int, not {seat!r}")
        seat = integer(seat)
        if not 0 <= seat < n:
            raise BadOption(f"seat {seat} is not a seat at this table (0..{n - 1})")
        if illegal not in ("raise", "lose"):
            raise BadOption(f"illegal must be 'raise' or 'lose', not {illegal!r}")
        reward = finite(illegal_reward, "illegal_reward")
        if not isinstance(bots, (str, Sequence)) or isinstance(bots, (bytes, bytearray)):
            raise BadOption(f"bots must be a bot name or one per seat, not {bots!r}")
        if not isinstance(bots, str) and len(bots) != n:
            raise BadOption(f"{n} seats need {n} bots (the agent's entry ignored), "
                            f"got {len(bots)}")
        from qipai.bots.registry import BadBot, bot_factory, known_bots

        if not isinstance(bots, str):  # the agent's entry is ignored, whatever it is
            bots = [None if i == seat else b for i, b in enumerate(bots)]
        for i, b in enumerate([bots] if isinstance(bots, str) else bots):
            if isinstance(b, str):
                try:
                    bot_factory(b)   # any name: built-in, level, module:Class, entry point
                except BadBot as exc:
                    raise BadOption(f"bots: {exc}") from None
            elif i != seat and (isinstance(b, type) or not callable(getattr(b, "act", None))):
                raise BadOption(f"the bot of seat {i} must be a bot name "
                                f"({', '.join(known_bots())}, module:Class) or an object with "
                                f"act(view, legal), not {b!r}"
                                + (" (a class: give an instance of it)"
                                   if isinstance(b, type) else ""))
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        self.bot_spec = bots
        self.illegal = illegal
        self.illegal_reward = reward
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self.bots: list[Any] = []

    def _copy(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in obs.items()}

    def _advance(self) -> None:
        """Let the bots decide until the agent's seat is to act or the hand ends."""
        aec = self.aec
        table = aec.table
        while table.result is None and aec.agent_selection != self.agent:
            seat = aec._seat_of[aec.agent_selection]
            bot = self.bots[seat]
            view = None if getattr(bot, "blind", False) else table.view(seat, events=False)
            table.apply(checked_act(bot, view, table.legal_actions(seat), seat,
                                    len(table.actions)))  # act(view, legal), its answer checked
            aec._select(infos=False)  # the bots' seats need none
        if table.result is not None:
            aec._accumulate_rewards()

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        """Deal a new hand and let the bots play up to the agent's first decision.

        ``seed`` (an int ≥ 0, numpy's included) seeds
        Gymnasium's ``np_random``, which deals every hand after it;
        ``options={"dealer": k}`` fixes the dealer.

        A hand the bots end before the agent's seat has anything to decide
        (a 字牌 hand another seat wins on its first turn, before the agent
        is asked anything) is no episode — Gymnasium's ``reset`` cannot
        return one that is over, and the agent took no action in it — so
        the next hand is dealt, from the same ``np_random``.  The seat's
        net in each such hand is in ``info["skipped_rewards"]`` (a list of
        子, usually empty), so a loop that sums rewards can count it.

        Returns: ``(observation, info)``: ``info`` the progress signals
        and ``skipped_rewards``.

        Raises:
            BadOption: a ``seed`` that is not an int ≥ 0 or None (a bool is
                not), ``options`` not a dict; BadCards: a ``dealer`` not a
                seat — checked first, so the environment is as it was.
        """
        if seed is not None:
            if integer(seed) is None:
                raise BadOption(f"seed must be an int >= 0 or None, not {seed!r}")
            seed = integer(seed)
            if seed < 0:
                raise BadOption(f"seed must be an int >= 0 or None (Gymnasium's np_random), "
                                f"not {seed}")
        self.aec.reset_dealer(options)  # refused before the RNG moves
        if "hand_seed" in (options or {}):
            raise BadOption("hand_seed is an option of the AEC environment (qipai.env.make): "
                            "here the bots' seeds come from the episode's RNG")
        super().reset(seed=seed)
        skipped: list[float] = []
        while True:
            hand = int(self.np_random.integers(2**62))
            self.aec.reset(seed=hand, options=options)
            # seated at the ruleset (sit), then asked act(view, legal): the seat's view only
            self.bots = make_bots(self.bot_spec, self.aec.n, hand, ruleset=self.aec.ruleset)
            self._lost = False
            self._advance()
            result = self.aec.table.result
            if result is None:
                if self.render_mode == "human":
                    self.render()
                return self._copy(self.aec.observe(self.agent)), {
                    **self.aec.info(self.seat), "skipped_rewards": skipped}
            skipped.append(float(result.net[self.seat]) * self.reward_scale)
            if len(skipped) >= _MOST_SKIPPED:
                raise RuntimeError(f"{len(skipped)} hands in a row ended before seat "
                                   f"{self.seat} had a decision")

    def action_masks(self) -> np.ndarray:
        """The legal actions now (True = legal), as ``observation["action_mask"]``.

        Raises:
            IllegalAction: before ``reset``.
        """
        if self.aec.table is None:
            raise IllegalAction("call reset() before action_masks()")
        return self.aec.observe(self.agent)["action_mask"].astype(bool)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        """Apply the agent's ``action`` (an index of the action space), then
        let the bots play up to the agent's next decision or the hand's end.

        Returns: ``(observation, reward, terminated, truncated, info)``: the
        reward 0 until the hand ends, then the seat's net in 子;
        ``truncated`` is always False; ``info`` ``{"illegal": True}`` for
        an illegal action under ``illegal="lose"``, else the progress
        signals (and ``net`` at the end; see the class).

        Raises:
            IllegalAction: before ``reset``, after the hand ended, or (under
                ``illegal="raise"``) an index not legal now — nothing
                changes then.
        """
        aec = self.aec
        if aec.table is None:
            raise IllegalAction("call reset() before step()")
        if aec.table.over or self._lost:
            raise IllegalAction("the hand is over: call reset()")
        try:
            aec.step(action)
        except IllegalAction:
            if self.illegal == "raise":
                raise
            self._lost = True
            if self.render_mode == "human":
                self.render()
            return self._copy(aec.observe(self.agent)), self.illegal_reward, True, False, {
                "illegal": True}
        self._advance()
        obs = self._copy(aec.observe(self.agent))
        if self.render_mode == "human":
            self.render()
        result = aec.table.result
        info = aec.info(self.seat)
        if result is not None:
            return obs, float(result.net[self.seat]) * self.reward_scale, True, False, info
        return obs, 0.0, False, False, info

    def render(self) -> str | None:
        """The agent's seat's view (``"human"`` prints, ``"ansi"`` returns).

        Raises:
            IllegalAction: a render mode but no hand yet (before ``reset``).
        """
        if self.render_mode is None:
            return None
        if self.aec.table is None:
            raise IllegalAction("call reset() before render()")
        sel = self.aec.agent_selection
        self.aec.agent_selection = self.agent
        try:
            text = self.aec.render()
        finally:
            self.aec.agent_selection = sel
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text
