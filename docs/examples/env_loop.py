"""A training loop's skeleton over qipai.env: random masked actions for
every seat of 桂林麻将, a few hands, the mean reward per seat (子)."""

import numpy as np

import qipai.env

env = qipai.env.make("guilin-mahjong(hubao=false)")
rng = np.random.default_rng(0)
totals = dict.fromkeys(env.possible_agents, 0)
hands = 5
env.reset(seed=42)
for hand in range(hands):
    if hand:
        env.reset()  # the next hand, derived from seed 42
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            totals[agent] += reward  # the seat's net for the hand, in 子
            action = None
        else:
            # your policy here: obs["observation"] is a (27, 34) uint8 array,
            # obs["action_mask"] marks the legal actions (110 in all)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
print(f"{hands} hands; mean 子 per seat:",
      {agent: total / hands for agent, total in totals.items()})
