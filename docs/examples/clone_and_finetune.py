"""Clone the greedy bot from a decisions file, fine-tune the clone with
MaskablePPO against greedy bots, and measure it on duplicate deals.

    uv pip install sb3-contrib   # and torch: see docs/howto/clone-and-finetune.md
    uv run python docs/examples/clone_and_finetune.py --dir runs/mj

(at the defaults about six minutes on one core and 4 GB of memory at the
peak; ``--hands 3000`` about three minutes.)

Steps (docs/howto/clone-and-finetune.md):

1. ``qipai simulate VARIANT --decisions``: greedy play, every decision in the
   environment's encoding (observation, mask, action, the seat's net);
2. behaviour cloning: a MaskablePPO policy trained by supervised learning
   on those decisions (the action's log-likelihood under the mask; the
   value head on the hand's scaled net);
3. fine-tuning: MaskablePPO on ``SeatEnv`` (seat 0 against greedy bots);
4. evaluation on duplicate deals with ``qipai arena``: each deal is played
   once with the agent at each seat and greedy bots at the others; its mean
   net per hand is its edge over greedy (the field against itself scores
   exactly 0, and the luck of the deal cancels over the seats).

The agent is a bot like any other (``clone_and_finetune:Agent``, a
:class:`qipai.env.PolicyBot` reading the model named by ``QIPAI_AGENT``), so
the evaluation is, from the command line::

    PYTHONPATH=docs/examples QIPAI_AGENT=runs/mj/agent.zip \
        uv run qipai arena guilin-mahjong --challenger clone_and_finetune:Agent \
        --field greedy --deals 200 --seed 1
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from qipai.env import PolicyBot

#: The rewards' scale, in training and in the value head's targets: a hand's
#: usual ±1…±30 子 near ±1.
SCALE = 0.1


@functools.cache
def _model(path: str):
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, device="cpu")


class Agent(PolicyBot):
    """The trained model as a bot: ``clone_and_finetune:Agent`` (the model
    file in ``QIPAI_AGENT``, default ``agent.zip``; loaded once)."""

    def __init__(self) -> None:
        super().__init__(PolicyBot.sb3(_model(os.environ.get("QIPAI_AGENT", "agent.zip"))))


# ---------------------------------------------------------------- 1. decisions

def record(variant: str, hands: int, seed: int, out: Path) -> Path:
    """``qipai simulate VARIANT -n HANDS --decisions out/decisions.parquet``."""
    from qipai.env.policy import DecisionRecorder
    from qipai.sim.run import parse_rulesets, simulate

    path = out / "decisions.parquet"
    simulate(parse_rulesets([variant]), hands, bots="greedy", seed=seed,
             out=str(out / "results.parquet"), decisions=str(path),
             recorder=DecisionRecorder())
    return path


def load_decisions(path: Path) -> dict[str, np.ndarray]:
    """The decisions as arrays: observations ``(N, rows, K)``, masks ``(N, n)``,
    actions and rewards ``(N,)``."""
    import json

    import pyarrow.parquet as pq

    t = pq.read_table(path)
    meta = json.loads(t.schema.metadata[b"qipai.decisions"])
    (enc,) = meta["encoding"].values()  # one ruleset
    shape = enc["observation_shape"]
    flat = lambda c: t.column(c).combine_chunks().values.to_numpy()  # noqa: E731
    return {"observation": flat("observation").reshape(-1, *shape),
            "action_mask": flat("action_mask").reshape(-1, enc["actions"]),
            "action": t.column("action").to_numpy().astype(np.int64),
            "reward": t.column("reward").to_numpy().astype(np.float32)}


# ---------------------------------------------------------------- 2. cloning

def clone(model, data: dict[str, np.ndarray], epochs: int, seed: int) -> dict[str, float]:
    """Train ``model``'s policy on the decisions (a tenth held out); the
    held-out share of decisions where it picks greedy's action: ``all`` of
    them, ``turns`` (a discard is legal: the seat's own turn) and ``claims``
    (another seat's card in play: 吃, 碰, 杠, 胡 or pass); NaN where there
    are none."""
    import torch

    policy = model.policy
    n = len(data["action"])
    order = np.random.default_rng(seed).permutation(n)
    test, train = order[: n // 10], order[n // 10:]

    def batch(idx):
        obs, _ = policy.obs_to_tensor({"observation": data["observation"][idx],
                                       "action_mask": data["action_mask"][idx]})
        return (obs, torch.as_tensor(data["action"][idx]),
                data["action_mask"][idx].astype(bool),
                torch.as_tensor(data["reward"][idx] * SCALE))

    # its own optimiser: a faster rate than PPO's fine-tuning takes
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    policy.set_training_mode(True)
    for _ in range(epochs):
        np.random.default_rng(seed + _).shuffle(train)
        for i in range(0, len(train), 256):
            obs, act, mask, ret = batch(train[i:i + 256])
            values, logp, _ = policy.evaluate_actions(obs, act, action_masks=mask)
            loss = -logp.mean() + 0.5 * torch.nn.functional.mse_loss(values.flatten(), ret)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    policy.set_training_mode(False)
    obs, act, mask, _ = batch(test)
    with torch.no_grad():
        picked = policy.get_distribution(obs, action_masks=mask).get_actions(deterministic=True)
    same = (picked == act).numpy()
    kinds = data["observation"].shape[-1]  # indices 0 … kinds-1 discard a kind (both families)
    turn = mask[:, :kinds].any(axis=1)
    share = lambda s: float(s.mean()) if len(s) else math.nan  # noqa: E731
    return {"all": share(same), "turns": share(same[turn]), "claims": share(same[~turn])}


# ---------------------------------------------------------------- 4. evaluation

def evaluate(variant: str, challenger: str, deals: int, seed: int, out: Path):
    """``qipai arena VARIANT --challenger CHALLENGER --field greedy --deals
    DEALS --seed SEED --out OUT``, in this process; the challenger's
    :class:`~qipai.sim.report.arena.ChallengerSummary` (``net``: 子 per hand
    against greedy, with its 95 % interval over the deals; ``win``,
    ``deal_in`` … rates).  ``qipai report OUT`` prints the whole summary."""
    from qipai.sim.arena import arena
    from qipai.sim.report.arena import summarize_arena

    arena(variant, [challenger], "greedy", deals, seed=seed, out=str(out))
    (summary,) = summarize_arena(str(out)).challengers
    return summary


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="guilin-mahjong")
    p.add_argument("--dir", default="runs/clone", help="where the files go")
    p.add_argument("--hands", type=int, default=10000,
                   help="greedy hands recorded (the clone's data)")
    p.add_argument("--epochs", type=int, default=10, help="cloning epochs")
    p.add_argument("--ppo-steps", type=int, default=4096, help="MaskablePPO timesteps")
    p.add_argument("--deals", type=int, default=200, help="duplicate deals evaluated")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    import torch
    from sb3_contrib import MaskablePPO

    from qipai.env import make_seat_env

    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    out = Path(a.dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    data = load_decisions(record(a.variant, a.hands, a.seed, out))
    print(f"decisions: {len(data['action'])} from {a.hands} greedy hands "
          f"({time.perf_counter() - t0:.0f} s)")

    env = make_seat_env(a.variant, seat=0, bots="greedy", reward_scale=SCALE, progress=False)
    n_steps = min(2048, max(64, a.ppo_steps))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=n_steps, batch_size=64,
                        learning_rate=1e-4, seed=a.seed, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": [256, 256]})
    t0 = time.perf_counter()
    agree = clone(model, data, a.epochs, a.seed)
    model.save(out / "clone.zip")
    print(f"clone: picks greedy's action on {agree['all']:.1%} of held-out decisions "
          f"(turns {agree['turns']:.1%}, claims {agree['claims']:.1%}; "
          f"{time.perf_counter() - t0:.0f} s)")

    t0 = time.perf_counter()
    model.learn(total_timesteps=a.ppo_steps)
    model.save(out / "agent.zip")
    print(f"fine-tuned: {model.num_timesteps} PPO steps ({time.perf_counter() - t0:.0f} s)")

    # the arena imports clone_and_finetune:Agent: this file's directory on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    for name in ("clone", "agent"):
        os.environ["QIPAI_AGENT"] = str(out / f"{name}.zip")
        t0 = time.perf_counter()
        c = evaluate(a.variant, "clone_and_finetune:Agent", a.deals, a.seed + 1,
                     out / f"arena-{name}.parquet")
        lo, hi = c.net.ci
        ci = "n/a" if math.isnan(lo) else f"{lo:+.2f} … {hi:+.2f}"  # n/a: one deal
        print(f"{name} vs greedy: {c.net.value:+.2f} 子/hand (95% {ci}) "
              f"over {c.deals} deals, {c.rotations} hands; win {c.win.value:.1%}, "
              f"点炮 {c.deal_in.value:.1%} (arena-{name}.parquet, "
              f"{time.perf_counter() - t0:.0f} s)")

if __name__ == "__main__":
    main()
