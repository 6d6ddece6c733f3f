"""A seat's view as the environment's observation, and a trained policy as a
bot (docs: reference/env, "A policy as a bot").

:func:`view_observation` gives, from a seat's view and its legal actions,
the very observation :class:`~qipai.env.aec.QipaiEnv` gives that seat's
agent (``{"observation", "action_mask"}``) and the legal actions by index.
:class:`PolicyBot` turns a policy — any ``policy(observation, mask) ->
index`` — into a bot (``act(view, legal)``), so a model trained on the
environment plays wherever bots play (:func:`qipai.bots.play_hand`, a
``SeatEnv``'s opponents, anything that resolves bot names by
``module:Class`` through :mod:`qipai.bots.registry`).
:class:`DecisionRecorder` records the decisions of a simulation in the same
encoding (``qipai simulate --decisions``).

Needs numpy only (not pettingzoo or gymnasium).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from qipai.core.model import Action
from qipai.env.actions import Codec, codec_for
from qipai.env.observation import Layout, encode, layout_for

__all__ = ["DecisionRecorder", "PolicyBot", "view_observation"]

_I8 = np.dtype(np.int8)


def legal_by_index(codec: Codec, legal: Sequence[Action], card: int | None) -> dict[int, Action]:
    """``legal`` by their index in ``codec``'s action space (``card``: the
    card in play, which a 吃's index depends on).

    Raises:
        NotEncodable: an action the action space has no index for.
    """
    index = codec.index
    return {index(a, card): a for a in legal}


def view_observation(view: Any, legal: Sequence[Action], layout: Layout,
                     codec: Codec) -> tuple[dict[str, np.ndarray], dict[int, Action]]:
    """The environment's observation of a seat (:class:`~qipai.env.aec.QipaiEnv`'s
    ``observe``) from its view, and its legal actions by index.

    Args:
        view: the seat's :class:`~qipai.core.views.SeatView` (events not needed).
        legal: the seat's legal actions.
        layout, codec: :func:`~qipai.env.observation.layout_for` and
            :func:`~qipai.env.actions.codec_for` of the table's ruleset.

    Returns: ``({"observation": uint8 array of layout.shape, "action_mask":
    int8 array of (codec.n,)}, {index: action})``.

    Raises:
        NotEncodable, NotObservable: as ``QipaiEnv.observe``.
    """
    card = view.window[0] if view.window is not None else None
    by_index = legal_by_index(codec, legal, card)
    mask = np.zeros(codec.n, _I8)
    mask[list(by_index)] = 1
    return {"observation": encode(view, layout), "action_mask": mask}, by_index


class PolicyBot:
    """A policy as a bot: ``act(view, legal)`` encodes the seat's view as the
    environment does, asks ``policy(observation, mask)`` for an index and
    plays the legal action at that index.

    Args:
        policy: ``policy(observation, mask) -> index``: ``observation`` the
            dict the environments give the agent (``{"observation": uint8
            (rows, K), "action_mask": int8 (n,)}``), ``mask`` a bool array
            of the legal indices (what sb3-contrib's ``action_masks`` takes);
            the answer an int (numpy's too, or a 0-d / 1-element array, as
            ``model.predict`` returns).

    ``sit(ruleset, seat)`` (which every host calls before the first ``act``)
    picks the ruleset's observation layout and action space.

    Raises (from ``act``):
        ValueError: the policy answered an index that is not legal now (the
            message names it and the legal ones; hosts report it as a
            :class:`~qipai.bots.BotFault`), or ``act`` before ``sit``.

    Example (an sb3-contrib ``MaskablePPO`` trained on
    :class:`~qipai.env.gym.SeatEnv`), the bot named ``mybots:Mine``
    (``play_hand(ruleset, bots=["mybots:Mine", "greedy", …])``)::

        import functools
        from sb3_contrib import MaskablePPO
        from qipai.env import PolicyBot

        model = functools.cache(lambda: MaskablePPO.load("agent.zip"))  # loaded once

        class Mine(PolicyBot):
            def __init__(self):
                super().__init__(PolicyBot.sb3(model()))
    """

    def __init__(self, policy: Callable[[dict[str, np.ndarray], np.ndarray], Any]) -> None:
        if not callable(policy):
            raise TypeError(f"policy must be callable as policy(observation, mask), "
                            f"not {policy!r}")
        self.policy = policy
        self.layout: Layout | None = None
        self.codec: Codec | None = None

    @staticmethod
    def sb3(model: Any, deterministic: bool = True) -> Callable[[dict[str, np.ndarray],
                                                               np.ndarray], Any]:
        """The policy of a Stable-Baselines3 / sb3-contrib model:
        ``model.predict(observation, action_masks=mask,
        deterministic=deterministic)[0]``."""
        def policy(observation: dict[str, np.ndarray], mask: np.ndarray) -> Any:
            return model.predict(observation, action_masks=mask, deterministic=deterministic)[0]
        return policy

    def sit(self, ruleset: Any, seat: int) -> None:
        """Take the ruleset's observation layout and action space."""
        self.layout = layout_for(ruleset)
        self.codec = codec_for(ruleset)

    def act(self, view: Any, legal: Sequence[Action]) -> Action:
        """The legal action at the index the policy answers (see the class)."""
        if self.layout is None or self.codec is None:
            raise ValueError("PolicyBot.act before sit(ruleset, seat): a host seats its bots")
        obs, by_index = view_observation(view, legal, self.layout, self.codec)
        answer = self.policy(obs, obs["action_mask"].astype(bool))
        try:
            i = operator.index(np.asarray(answer).reshape(-1)[0]) if np.size(answer) == 1 \
                else None
        except TypeError:
            i = None
        if i is None or i not in by_index:
            labels = self.codec.labels
            raise ValueError(f"the policy answered {answer!r}, not a legal index; legal: "
                             + ", ".join(f"{j} ({labels[j]})" for j in sorted(by_index)))
        return by_index[i]


class _Recording:
    """A seat's bot that records each decision it makes (see
    :class:`DecisionRecorder`)."""

    def __init__(self, bot: Any, seat: int, recorder: DecisionRecorder, layout: Layout,
                 codec: Codec, keep: bool) -> None:
        self.bot, self.seat, self.recorder = bot, seat, recorder
        self.layout, self.codec, self.keep = layout, codec, keep
        self._blind = getattr(bot, "blind", False)
        # a seat not recorded needs no view when its bot needs none
        self.blind = self._blind and not keep
        self.qipai_name = getattr(bot, "qipai_name", None) or type(bot).__name__

    def sit(self, ruleset: Any, seat: int) -> None:
        sit = getattr(self.bot, "sit", None)
        if sit is not None:
            sit(ruleset, seat)

    def act(self, view: Any, legal: Sequence[Action]) -> Action:
        rec = self.recorder
        step = rec._step
        rec._step += 1
        chosen = self.bot.act(None if self._blind else view, legal)
        if self.keep:
            obs, by_index = view_observation(view, legal, self.layout, self.codec)
            index = next((i for i, a in by_index.items() if a == chosen), -1)
            rec._taken.append((self.seat, step, obs["observation"].tobytes(),
                               obs["action_mask"].tobytes(), index))
        return chosen


class DecisionRecorder:
    """Records the decisions of chosen seats in the environment's encoding,
    for ``qipai simulate --decisions`` (:mod:`qipai.sim`, which calls
    :meth:`wrap` before a hand and :meth:`take` after it).

    Args:
        seats: the seats whose decisions are recorded (None: every seat).

    A recorded decision is ``(seat, step, observation bytes, mask bytes,
    action index)``: the observation the environment gives that seat then
    (``uint8``, :meth:`describe`'s shape, C order), its action mask
    (``int8``) and the index of the action taken; ``step`` is the
    decision's index in the hand (0-based, every seat's decisions counted).
    The bots decide exactly as unwrapped (a blind bot still gets None).
    """

    def __init__(self, seats: Sequence[int] | None = None) -> None:
        self.seats = None if seats is None else tuple(sorted(set(seats)))
        self._taken: list[tuple[int, int, bytes, bytes, int]] = []
        self._step = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"seats": self.seats}  # what a worker needs: not the decisions so far

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["seats"])  # type: ignore[misc]

    def describe(self, ruleset: Any) -> dict[str, Any]:
        """The encoding of ``ruleset``'s decisions: ``{"observation_shape":
        [rows, K], "actions": n}``."""
        return {"observation_shape": list(layout_for(ruleset).shape),
                "actions": codec_for(ruleset).n}

    def check(self, ruleset: Any) -> None:
        """Refuse a ruleset whose seats are fewer than a recorded seat, or a
        family without an environment encoding (UnknownVariant).

        Raises:
            ValueError: a seat not at the ruleset's table.
        """
        layout_for(ruleset), codec_for(ruleset)
        n = ruleset.manifest.players
        bad = [s for s in self.seats or () if not 0 <= s < n]
        if bad:
            raise ValueError(f"decision seat {bad[0]} is not a seat of {ruleset.manifest.name} "
                             f"(0..{n - 1})")

    def wrap(self, ruleset: Any, bots: Sequence[Any]) -> list[Any]:
        """``bots`` (one per seat), each wrapped to count the hand's
        decisions and record those of the chosen seats; starts a new hand."""
        self._taken, self._step = [], 0
        layout, codec = layout_for(ruleset), codec_for(ruleset)
        return [_Recording(b, s, self, layout, codec, self.seats is None or s in self.seats)
                for s, b in enumerate(bots)]

    def take(self) -> list[tuple[int, int, bytes, bytes, int]]:
        """The decisions recorded since :meth:`wrap`, in the hand's order."""
        taken, self._taken = self._taken, []
        return taken
