"""Environments for agents: PettingZoo (multi-agent, AEC) and Gymnasium
(one seat against bots) over every registered variant (docs: reference/env).

* :func:`make` — ``make("guilin-mahjong(hubao=false)")``: a
  :class:`~qipai.env.aec.QipaiEnv`, one hand per ``reset``;
* :class:`~qipai.env.gym.SeatEnv` — one seat played by the agent, the
  others by bots (:mod:`qipai.bots`);
* :mod:`qipai.env.actions` — the fixed-size action space of each family;
* :mod:`qipai.env.observation` — a seat's view as a numpy array;
* :class:`~qipai.env.policy.PolicyBot` — a trained policy as a bot
  (``qipai.env.PolicyBot``), and the recorder of ``qipai simulate
  --decisions`` (:mod:`qipai.env.policy`);
* :mod:`qipai.env.progress` — the progress signals of the infos.

Needs the optional extra ``qipai[env]`` (pettingzoo, gymnasium, numpy).
This package sits above the core: the core never imports it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PolicyBot", "make", "make_seat_env"]


def __getattr__(name: str) -> Any:
    # PolicyBot needs numpy only: imported when used, so `import qipai.env` stays light
    if name == "PolicyBot":
        from qipai.env.policy import PolicyBot

        return PolicyBot
    raise AttributeError(f"module 'qipai.env' has no attribute {name!r}")


def _require() -> None:
    from qipai.core.extras import require

    for module in ("numpy", "gymnasium", "pettingzoo"):
        require(module, "env")


def make(spec: Any = "guilin-mahjong", *, render_mode: str | None = None,
         ask_all: bool = False, reward_scale: float = 1, progress: bool = True) -> Any:
    """The PettingZoo AEC environment of a ruleset.

    Args:
        spec: a ruleset string (``"guilin-zipai"``,
            ``"guilin-mahjong(hubao=false)"``) or a loaded
            :class:`~qipai.core.ruleset.Ruleset` (house plugins included).
        render_mode, ask_all, reward_scale, progress: see
            :class:`~qipai.env.aec.QipaiEnv`.

    Raises:
        UnknownVariant, BadOption: as :func:`qipai.core.ruleset.load`
            (an unknown name, option or value; a spec that is not a str);
            BadOption for a bad ``render_mode``, ``reward_scale`` or ``progress``.
        MissingExtra: pettingzoo, gymnasium or numpy is not installed.
    """
    _require()
    from qipai.env.aec import QipaiEnv, ruleset_of

    return QipaiEnv(ruleset_of(spec), render_mode=render_mode, ask_all=ask_all,
                    reward_scale=reward_scale, progress=progress)


def make_seat_env(spec: Any = "guilin-mahjong", **kwargs: Any) -> Any:
    """The Gymnasium environment of one seat against bots:
    :class:`~qipai.env.gym.SeatEnv` ``(spec, **kwargs)``."""
    _require()
    from qipai.env.gym import SeatEnv

    return SeatEnv(spec, **kwargs)
