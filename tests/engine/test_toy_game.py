"""The toy game's own rules: the parts the contract test relies on it to exercise."""

from __future__ import annotations

import toy_game  # tests/engine is on sys.path (pytest rootdir-relative import)

from speeltafel.server.engine.core import Rng

GAME = toy_game.GAME


def test_automatic_rounds_resolve_from_the_seat_count() -> None:
    for seats in (2, 3):
        automatic = GAME.new({}, seats, Rng(b"auto"))
        explicit = GAME.new({"rounds": str(seats)}, seats, Rng(b"auto"))
        assert automatic == explicit
        assert automatic.rounds == seats


def test_the_winner_stays_to_act_for_two_steps_and_the_bonus_deck_reshuffles() -> None:
    # Seat 0 gets red:5 and red:1, seat 1 blue:2 and blue:1 in every round.
    numbers = ["red:5", "red:1", "blue:2", "blue:1", "red:2", "red:3", "red:4"]
    numbers += ["blue:3", "blue:4", "blue:5"]
    presets = {"numbers": [numbers] * 4, "bonus": [["bonus:2", "bonus:1"], ["bonus:1", "bonus:2"]]}
    state = GAME.new({"rounds": "4"}, 2, Rng(b"toy"), presets)
    assert GAME.to_act(state) == (0, 1)
    reshuffled = False
    while GAME.to_act(state):
        if state.phase is toy_game.Phase.PLAY:
            for seat in GAME.to_act(state):
                state = GAME.apply(state, seat, GAME.legal_actions(state, seat)[-1])
            continue
        assert GAME.to_act(state) == (0,)  # red:5 wins every round
        state = GAME.apply(state, 0, toy_game.ToyAction(toy_game.Kind.DRAW))
        assert GAME.to_act(state) == (0,)
        assert GAME.observe(state, 1).drawn is None
        drawn = GAME.observe(state, 0).drawn
        state = GAME.apply(state, 0, toy_game.ToyAction(toy_game.Kind.DISCARD))
        reshuffled |= state.round == 3 and state.bonus_pile == ("bonus:1", "bonus:2")
        assert drawn is not None
    assert reshuffled, "the second bonus preset ordered the reshuffled discards"


def test_ties_go_to_the_seat_that_kept_fewer_bonus_cards() -> None:
    state = GAME.new({}, 2, Rng(b"tie"))
    from dataclasses import replace

    over = replace(state, phase=toy_game.Phase.OVER, points=(7, 7), kept=(("bonus:1",), ()))
    outcome = GAME.outcome(over)
    assert outcome is not None and outcome.ranks == (2, 1)
