"""Environment steps per second: ``qipai.env`` against RLCard's mahjong
environment (issue 14), for ``benchmarks/run.py``.

Both sides play whole hands with a uniformly random *masked* policy, the
way a training loop drives an environment: qipai through the PettingZoo
AEC loop (``agent_iter`` / ``last()`` — the seat's encoded observation and
action mask — / ``step``), the action drawn from the mask's legal indices;
RLCard through ``env.reset()`` / ``env.step(action)`` (which extracts the
next player's state, its observation and legal actions), the action drawn
from ``state["legal_actions"]``.  A step is one ``step`` call that applies
a decision (qipai's end-of-hand ``step(None)`` of terminated agents is not
counted).  The rounds are interleaved (qipai, RLCard, qipai, …) so a burst
of load on the shared machine hits both; each side's figure is the median
of its rounds and the ratio the median of the rounds' own ratios.  Time is
the process's CPU time (``time.process_time``), not wall time, so other
jobs on the machine count less.
"""

from __future__ import annotations

import random
import statistics
import time
from itertools import compress
from typing import Any

VARIANT = "guilin-mahjong"


def qipai_env_steps_per_s(seconds: float, seed: int, variant: str = VARIANT) -> float | None:
    """Steps per CPU second of ``qipai.env.make(variant)`` with random masked actions."""
    try:
        from qipai.env import make
    except ImportError:
        return None
    env = make(variant)
    env.reset(seed=seed)
    rng = random.Random(seed)
    indices = range(env.codec.n)
    steps, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        env.reset()
        for agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(rng.choice(list(compress(indices, obs["action_mask"].tobytes()))))
            steps += 1
    return steps / (time.process_time() - t0)


def rlcard_env_steps_per_s(seconds: float, seed: int) -> float | None:
    """Steps per CPU second of ``rlcard.make('mahjong')`` with random legal actions."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("mahjong", config={"seed": seed})
    rng = random.Random(seed)
    steps, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        state, _player = env.reset()
        while not env.is_over():
            state, _player = env.step(rng.choice(list(state["legal_actions"])))
            steps += 1
        env.get_payoffs()
    return steps / (time.process_time() - t0)


def qipai_engine_steps_per_s(seconds: float, seed: int, variant: str = VARIANT) -> float:
    """For reference: decisions per CPU second of the engine alone, random
    bots through :func:`qipai.bots.run_to_end` (no environment, no
    observation): the ceiling of the environment's figure."""
    from qipai.bots import make_bots, run_to_end
    from qipai.core.ruleset import load_cached

    rs = load_cached(variant)
    steps, hand, t0 = 0, 0, time.process_time()
    while time.process_time() - t0 < seconds:
        steps += run_to_end(rs.table(seed=seed + hand), make_bots("random", rs.manifest.players,
                                                                  seed + hand))
        hand += 1
    return steps / (time.process_time() - t0)


def env_figures(seed: int, rounds: int = 9, seconds: float = 1.0) -> dict[str, Any]:
    """``{"qipai_steps_per_s", "rlcard_steps_per_s", "ratio", ...}``:
    medians of ``rounds`` interleaved rounds of ``seconds`` CPU seconds each
    side; ``ratio`` the median of the rounds' ratios (None without RLCard).
    ``engine_steps_per_s`` / ``engine_ratio``: the same for the engine alone
    with random bots (:func:`qipai_engine_steps_per_s`), in the same rounds."""
    qipai_env_steps_per_s(0.2, seed)  # tables and codecs built outside the timings
    ours: list[float | None] = []
    theirs: list[float | None] = []
    engine: list[float | None] = []
    for _ in range(rounds):
        ours.append(qipai_env_steps_per_s(seconds, seed))
        theirs.append(rlcard_env_steps_per_s(seconds, seed))
        engine.append(qipai_engine_steps_per_s(seconds, seed))

    def med(xs: list[float | None]) -> float | None:
        vals = [x for x in xs if x is not None]
        return statistics.median(vals) if vals else None

    ratios = [a / b for a, b in zip(ours, theirs) if a is not None and b]
    engine_ratios = [a / b for a, b in zip(engine, theirs) if a is not None and b]
    return {"qipai_steps_per_s": med(ours), "rlcard_steps_per_s": med(theirs),
            "ratio": statistics.median(ratios) if ratios else None,
            "engine_steps_per_s": med(engine),
            "engine_ratio": statistics.median(engine_ratios) if engine_ratios else None,
            "rounds": {"qipai": ours, "rlcard": theirs, "engine": engine}}


def show_env(fig: dict[str, Any]) -> None:
    """The environment row, as a small rich table."""
    from rich.console import Console
    from rich.table import Table

    def f(x: float | None, fmt: str) -> str:
        return "—" if x is None else fmt.format(x)

    t = Table(title="environment steps/s, random masked actions (CPU time, interleaved rounds)")
    for col in ("figure", "qipai.env", "RLCard env", "ratio", "target"):
        t.add_column(col, justify="left" if col == "figure" else "right")
    t.add_row("桂林麻将 AEC steps/s vs rlcard.make('mahjong')",
              f(fig["qipai_steps_per_s"], "{:.0f}"), f(fig["rlcard_steps_per_s"], "{:.0f}"),
              f(fig["ratio"], "{:.1f}×"), "≥ 10×")
    t.add_row("— the engine alone, random bots (no env), for reference",
              f(fig.get("engine_steps_per_s"), "{:.0f}"), "", f(fig.get("engine_ratio"), "{:.1f}×"),
              "")
    Console().print(t)


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(env_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 20240601,
                                 rounds=5, seconds=1.0), indent=1))
