"""The engine as a library, through its facade only (speeltafel.server.engine.api).

Every game the facade lists is covered, so a game added to the engine's registry is tested
here with no change to this file.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import pytest

from speeltafel.server.engine import api

GAMES = api.list_games()
SEATINGS = [
    pytest.param(spec.game_id, seats, id=f"{spec.game_id}-{seats}")
    for spec in GAMES
    for seats in range(spec.seats_for()[0], spec.seats_for()[1] + 1)
]


def play_out(match: api.Match, seed: int) -> api.Match:
    """Random legal actions (seeded) until the match ends."""
    chooser = random.Random(seed)
    while not match.is_over:
        seat = chooser.choice(match.to_act)
        match = match.apply(seat, chooser.choice(match.legal_actions(seat)))
    return match


def test_the_game_list_describes_every_game() -> None:
    assert GAMES, "the engine offers games"
    assert len({spec.game_id for spec in GAMES}) == len(GAMES)
    for spec in GAMES:
        assert api.game(spec.game_id) == spec
        assert 1 <= spec.min_seats <= spec.max_seats
        low, high = spec.seats_for()
        assert spec.min_seats <= low <= high <= spec.max_seats
        assert spec.score_name and spec.name and spec.rules_version >= 1
        defaults = spec.canonical_options()
        assert set(defaults) == {option.name for option in spec.options}
        for option in spec.options:
            assert isinstance(option.kind, api.OptionKind)
            assert (
                defaults[option.name]
                == spec.canonical_options({option.name: option.default})[option.name]
            )
        for seat_range in spec.seat_ranges:
            narrowed = spec.seats_for({seat_range.option: seat_range.value})
            assert seat_range.min_seats <= narrowed[0] <= narrowed[1] <= seat_range.max_seats


@pytest.mark.parametrize(("game_id", "seats"), SEATINGS)
def test_a_match_plays_to_its_end_and_its_record_verifies(game_id: str, seats: int) -> None:
    chooser = random.Random(seats)
    start = api.new_match(game_id, seats, seed=seats * 1000 + 7)
    assert start.seats == seats and start.game_id == game_id and not start.is_over
    match, steps = start, 0
    while not match.is_over:
        to_act = match.to_act
        assert to_act and list(to_act) == sorted(set(to_act))
        if steps < 60 or steps % 10 == 0:  # every position of long games costs minutes
            for seat in range(seats):
                legal = match.legal_actions(seat)
                assert bool(legal) == (seat in to_act)
                json.dumps(api.plain(match.observe(seat)))  # JSON-ready
        seat = chooser.choice(to_act)
        if steps % 13 == 0:
            # A sampled world is consistent with what the seat knows (and only that).
            world = match.sample_world(seat, seed=steps)
            assert world.observe(seat) == match.observe(seat)
            assert world.legal_actions(seat) == match.legal_actions(seat)
            with pytest.raises(ValueError):
                world.record()
        action = chooser.choice(match.legal_actions(seat))
        before = match.state_hash() if steps % 13 == 0 else ""
        following = match.apply(seat, action)
        if before:
            assert match.state_hash() == before, "apply leaves its match unchanged"
        assert following.history == (*match.history, (seat, action))
        match, steps = following, steps + 1
    outcome = match.outcome
    assert outcome is not None and len(outcome.scores) == seats
    assert sorted(outcome.ranks)[0] == 1
    assert abs(sum(outcome.utilities)) < 1e-9
    assert match.to_act == ()

    record = match.record()
    assert api.verify(record).ok, api.verify(record).problems
    replayed = api.replay(record)
    assert replayed.state_hash() == match.state_hash()
    assert replayed.outcome == outcome
    # A record whose last action is dropped, or whose hash is forged, does not verify.
    cut = dataclasses.replace(record, actions=record.actions[:-1])
    assert not api.verify(cut).ok
    forged = dataclasses.replace(record, final_hash="0" * 64)
    assert not api.verify(forged).ok


@pytest.mark.parametrize("spec", GAMES, ids=lambda spec: spec.game_id)
def test_the_seed_makes_the_deal(spec: api.GameSpec) -> None:
    seats = spec.seats_for()[0]
    one = api.new_match(spec.game_id, seats, seed=1)
    assert api.new_match(spec.game_id, seats, seed=1).state_hash() == one.state_hash()
    assert api.new_match(spec.game_id, seats, seed=(1).to_bytes(32, "big")).state_hash() == (
        one.state_hash()
    )
    others = {api.new_match(spec.game_id, seats, seed=s).state_hash() for s in range(2, 6)}
    assert one.state_hash() not in others, "other seeds deal otherwise"
    # Same seed and choices, same match: a played match is reproducible from its record.
    assert play_out(one, 3).state_hash() == play_out(one, 3).state_hash()


@pytest.mark.parametrize("spec", GAMES, ids=lambda spec: spec.game_id)
def test_refusals_name_their_rule_and_change_nothing(spec: api.GameSpec) -> None:
    seats = spec.seats_for()[0]
    match = api.new_match(spec.game_id, seats, seed=5)
    before = match.state_hash()
    with pytest.raises(api.InvalidAction):
        match.apply(match.to_act[0], "no such action")
    idle = [seat for seat in range(seats) if seat not in match.to_act]
    if idle:
        acting = match.to_act[0]
        with pytest.raises(api.NotYourTurn):
            match.apply(idle[0], match.legal_actions(acting)[0])
    with pytest.raises(api.InvalidAction):
        match.legal_actions(seats)  # no such seat
    assert match.state_hash() == before and match.history == ()
    finished = play_out(match, 1)
    with pytest.raises(api.GameOver):
        finished.apply(0, match.legal_actions(match.to_act[0])[0])
    with pytest.raises(api.InvalidOptions):
        api.new_match(spec.game_id, spec.max_seats + 1)
    with pytest.raises(api.InvalidOptions):
        api.new_match(spec.game_id, seats, options={"no_such_option": "1"})


def test_an_unknown_game_is_refused_with_the_known_ones_named() -> None:
    with pytest.raises(api.InvalidOptions) as caught:
        api.game("chess")
    assert caught.value.rule == "unknown_game"
    assert GAMES[0].game_id in caught.value.message
    with pytest.raises(api.InvalidOptions):
        api.new_match("chess", 2)


def test_preset_decks_replace_the_shuffle() -> None:
    # Take 5's trial edition: one deck of the cards 1..32, the first ones dealt to seat 0.
    order = [str(card) for card in range(32, 0, -1)]
    one = api.new_match("take5", 2, seed=1, presets={"pack": [order]})
    two = api.new_match("take5", 2, seed=2, presets={"pack": [order]})
    assert one.observe(0) == two.observe(0) and one.observe(1) == two.observe(1)
    assert api.new_match("take5", 2, seed=1).observe(0) != api.new_match(
        "take5", 2, seed=2
    ).observe(0)
    record = play_out(one, 4).record()
    assert api.verify(record).ok
    with pytest.raises(api.InvalidOptions):
        api.new_match("take5", 2, presets={"pack": [order[:-1]]})


def test_the_documented_example_runs() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "embedding.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL)
    (example,) = [block for block in blocks if "api.new_match" in block]
    exec(compile(example, str(doc), "exec"), {"__name__": "engine_example"})
