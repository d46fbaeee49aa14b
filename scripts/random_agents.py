"""Random agents through every game's PettingZoo environment (trains nothing).

    .venv/bin/python scripts/random_agents.py [--episodes N] [--seed S]

For each game of the engine, at every seat count of its default options, plays N episodes
in which each agent picks uniformly among its legal actions (the action mask), and prints
the steps per episode, the environment's steps per second and the mean reward per seat
(the outcome's zero-sum utilities: about 0 for every seat, as random play is fair).
Needs the ``rl`` extra (``pip install 'speeltafel[rl]'``; ``make install`` has it).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from speeltafel.rl.pettingzoo_env import games, raw_env
from speeltafel.server.engine import api


def run_episodes(
    game_id: str, seats: int, episodes: int, seed: int
) -> tuple[int, float, list[float]]:
    """(steps, seconds, total reward per seat) of ``episodes`` random episodes."""
    table = raw_env(game_id, seats, seed=seed)
    rng = np.random.default_rng(seed)
    totals = [0.0] * seats
    steps = 0
    started = time.perf_counter()
    for episode in range(episodes):
        table.reset(seed=seed + episode)
        for agent in table.agent_iter():
            observation, reward, terminated, truncated, _ = table.last()
            totals[int(agent.removeprefix("seat_"))] += reward
            if terminated or truncated:
                table.step(None)
                continue
            table.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            steps += 1
    return steps, time.perf_counter() - started, totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=5, help="episodes per seat count")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'game':<16}{'seats':>6}{'steps/ep':>10}{'steps/s':>10}  mean reward per seat")
    for game_id in games():
        low, high = api.game(game_id).seats_for()
        for seats in range(low, high + 1):
            steps, seconds, totals = run_episodes(game_id, seats, args.episodes, args.seed)
            rewards = " ".join(f"{total / args.episodes:+.2f}" for total in totals)
            print(
                f"{game_id:<16}{seats:>6}{steps / args.episodes:>10.1f}"
                f"{steps / seconds:>10.0f}  {rewards}"
            )


if __name__ == "__main__":
    main()
