"""The PettingZoo environment (speeltafel.rl.pettingzoo_env) for every registered game:
PettingZoo's own api_test, rewards from the outcome, sealed choices kept sealed."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test  # the rl extra (make install installs it)

from speeltafel.rl import pettingzoo_env
from speeltafel.server.engine import api

GAMES = pettingzoo_env.games()


def test_every_engine_game_has_an_environment() -> None:
    assert tuple(spec.game_id for spec in api.list_games()) == GAMES


@pytest.mark.parametrize("game_id", GAMES)
def test_pettingzoos_api_test_passes(game_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # max_actions must hold the legal lists
        api_test(pettingzoo_env.env(game_id, seed=1), num_cycles=200)


@pytest.mark.parametrize("game_id", GAMES)
def test_random_agents_finish_with_the_outcomes_utilities(game_id: str) -> None:
    spec = api.game(game_id)
    seats = spec.seats_for()[0]
    table = pettingzoo_env.raw_env(game_id, seats, seed=3)
    table.reset(seed=11)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(table.possible_agents, 0.0)
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, _ = table.last()
        totals[agent] += reward
        assert observation["observation"].shape == (table.observation_size,)
        mask = observation["action_mask"]
        if terminated or truncated:
            table.step(None)
            continue
        match = table.match
        assert match is not None and agent == f"seat_{match.to_act[0]}"
        assert int(mask.sum()) == len(match.legal_actions(match.to_act[0]))
        table.step(int(rng.choice(np.flatnonzero(mask))))
    match = table.match
    assert match is not None and match.outcome is not None
    for seat, utility in enumerate(match.outcome.utilities):
        assert totals[f"seat_{seat}"] == pytest.approx(utility)
    assert api.verify(match.record()).ok  # every step was a legal engine move


def test_sealed_choices_stay_sealed_until_the_reveal() -> None:
    # Take 5: every seat selects a card at once; the AEC turns take them in seat order.
    table = pettingzoo_env.raw_env("take5", 3, seed=5)
    table.reset(seed=2)
    before_view = table.engine_observation("seat_1")
    assert table.agent_selection == "seat_0"
    hand_0 = table.engine_observation("seat_0").hand
    table.step(len(hand_0) - 1)  # seat 0 seals its highest card
    assert table.agent_selection == "seat_1"
    after_view = table.engine_observation("seat_1")
    # Seat 1 learns only that seat 0 has chosen: its observation is otherwise unchanged,
    # and it would be the same whichever card seat 0 had sealed.
    other = pettingzoo_env.raw_env("take5", 3, seed=5)
    other.reset(seed=2)
    other.step(0)  # seat 0 seals its lowest card instead
    assert other.engine_observation("seat_1") == after_view
    seen = table.observe("seat_1")["observation"]
    assert np.array_equal(other.observe("seat_1")["observation"], seen)
    assert after_view.hand == before_view.hand
    assert after_view != before_view  # it does learn that seat 0 has chosen


def test_bad_actions_are_refused_clearly() -> None:
    table = pettingzoo_env.raw_env("take5", 2, seed=1)
    table.reset(seed=1)
    legal = int(table.observe(table.agent_selection)["action_mask"].sum())
    with pytest.raises(ValueError, match="legal actions"):
        table.step(legal)
    with pytest.raises(ValueError, match="legal actions"):
        table.step(None)
    with pytest.raises(api.InvalidOptions):
        pettingzoo_env.raw_env("take5", 11)
    with pytest.raises(api.InvalidOptions):
        pettingzoo_env.raw_env("chess")


def test_the_random_agents_example_runs_every_game() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "random_agents.py"
    done = subprocess.run(
        [sys.executable, str(script), "--episodes", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    for game_id in GAMES:
        low, high = api.game(game_id).seats_for()
        seats = sorted(int(row[1]) for row in rows if row[0] == game_id)
        assert seats == list(range(low, high + 1)), (game_id, done.stdout)
    for row in rows:  # zero-sum: one episode's rewards add up to 0
        assert abs(sum(float(reward) for reward in row[4:])) < 0.03, row  # printed to 2 decimals
