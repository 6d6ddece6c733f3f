"""Clone the greedy bot from a decisions file, fine-tune the clone with
MaskablePPO against greedy bots, and measure it on duplicate deals.

    uv pip install sb3-contrib   # and torch: see docs/howto/clone-and-finetune.md
    uv run python docs/examples/clone_and_finetune.py --dir runs/mj

Steps (docs/howto/clone-and-finetune.md):

1. ``qipai simulate VARIANT --decisions``: greedy play, every decision in the
   environment's encoding (observation, mask, action, the seat's net);
2. behaviour cloning: a MaskablePPO policy trained by supervised learning
   on those decisions (the action's log-likelihood under the mask; the
   value head on the hand's scaled net);
3. fine-tuning: MaskablePPO on ``SeatEnv`` (seat 0 against greedy bots);
4. evaluation on duplicate deals: each deal is played once with the agent
   at each seat and greedy bots at the others, and once with greedy bots at
   every seat; the agent's net minus greedy's at the same seat of the same
   deal is its edge (the luck of the deal cancels).

The agent is a bot like any other (``clone_and_finetune:Agent``, a
:class:`qipai.env.PolicyBot` reading the model named by ``QIPAI_AGENT``), so
the evaluation is the one ``qipai arena VARIANT --challenger
clone_and_finetune:Agent --field greedy`` runs.
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

def clone(model, data: dict[str, np.ndarray], epochs: int, seed: int) -> float:
    """Train ``model``'s policy on the decisions (a tenth held out); the
    held-out share of decisions where it picks greedy's action."""
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
    if not len(test):
        return math.nan
    obs, act, mask, _ = batch(test)
    with torch.no_grad():
        picked = policy.get_distribution(obs, action_masks=mask).get_actions(deterministic=True)
    return float((picked == act).float().mean())


# ---------------------------------------------------------------- 4. evaluation

def duplicate(variant: str, challenger: str, field: str, deals: int, seed: int) -> dict:
    """The challenger's edge over the field on duplicate deals: the mean, per
    hand, of its net minus the field's at the same seat of the same deal,
    with a 95 % normal interval; ``net``: its mean net per hand (the same
    number: a deal's nets sum to 0 over the seats).  With ``qipai arena``
    this is ``qipai arena VARIANT --challenger CHALLENGER --field FIELD``."""
    from qipai.bots import hand_seed, play_hand
    from qipai.core.ruleset import load

    rs = load(variant)
    n = rs.manifest.players
    diffs, nets = [], []
    for i in range(deals):
        s, dealer = hand_seed(seed, i), i % n
        base = play_hand(rs, seed=s, dealer=dealer, bots=field).result.net
        for seat in range(n):  # the rotations: the challenger at each seat of the deal
            bots = [challenger if j == seat else field for j in range(n)]
            net = play_hand(rs, seed=s, dealer=dealer, bots=bots).result.net[seat]
            diffs.append(net - base[seat])
            nets.append(net)
    d = np.asarray(diffs, float)
    half = 1.96 * d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.nan
    return {"hands": len(d), "edge": d.mean(), "ci": (d.mean() - half, d.mean() + half),
            "net": float(np.mean(nets))}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="guilin-mahjong")
    p.add_argument("--dir", default="runs/clone", help="where the files go")
    p.add_argument("--hands", type=int, default=500, help="greedy hands recorded")
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
    print(f"clone: picks greedy's action on {agree:.1%} of held-out decisions "
          f"({time.perf_counter() - t0:.0f} s)")

    t0 = time.perf_counter()
    model.learn(total_timesteps=a.ppo_steps)
    model.save(out / "agent.zip")
    print(f"fine-tuned: {model.num_timesteps} PPO steps ({time.perf_counter() - t0:.0f} s)")

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # clone_and_finetune:Agent
    for name in ("clone", "agent"):
        os.environ["QIPAI_AGENT"] = str(out / f"{name}.zip")
        t0 = time.perf_counter()
        r = duplicate(a.variant, "clone_and_finetune:Agent", "greedy", a.deals, a.seed + 1)
        lo, hi = r["ci"]
        print(f"{name} vs greedy: edge {r['edge']:+.2f} 子/hand (95% {lo:+.2f} … {hi:+.2f}), "
              f"{r['hands']} hands ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
