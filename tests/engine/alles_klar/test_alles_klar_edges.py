"""Alles Klar? edge cases: options, action texts, refusals, clock defaults, views, the wire
and the lookahead bot."""

from __future__ import annotations

import random

import pytest

from speeltafel.bots.alles_klar_lookahead import LookaheadBot
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import (
    GameOver,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    Rng,
)
from speeltafel.server.engine.games.alles_klar import (
    ALL_CARDS,
    DEFAULT_NUMERALS,
    GAME,
    AllesAction,
    Phase,
)
from speeltafel.server.wire.alles_klar import WIRE

SEED = Rng(b"alles klar edges")


def deck(hands: list[list[str]]) -> list[str]:
    named = [c for hand in hands for c in hand]
    return [*named, *(c for c in ALL_CARDS if c not in named)]


def test_options_are_checked() -> None:
    numerals = list(DEFAULT_NUMERALS)
    numerals[55] = numerals[56]  # W-1's two numerals equal
    with pytest.raises(InvalidOptions) as error:
        GAME.new({"numerals": ",".join(map(str, numerals))}, 2, SEED)
    assert error.value.rule == "numerals"
    with pytest.raises(InvalidOptions):
        GAME.new({"numerals": "1,2,3"}, 2, SEED)
    with pytest.raises(InvalidOptions):
        GAME.new({"dealer": "seat1"}, 2, SEED)
    for seats in (1, 6):
        with pytest.raises(InvalidOptions):
            GAME.new({}, seats, SEED)


def test_deal_sizes_and_the_first_leader() -> None:
    for seats in range(2, 6):
        state = GAME.new({}, seats, SEED)
        assert [len(h) for h in state.hands] == [4] * seats
        assert len(state.stock) == 77 - 4 * seats
        assert GAME.to_act(state) == (1 % seats,)
    leaders = {GAME.new({"dealer": "random"}, 5, Rng(bytes([i]))).leader for i in range(30)}
    assert len(leaders) > 1


def test_a_custom_numeral_layout_applies() -> None:
    numerals = [1] * 55 + [1, 2] * 11
    hands = [["S3-9", "P-2", "P-3", "P-4"], ["S5-5", "P-1", "P-6", "P-7"]]
    state = GAME.new({"numerals": ",".join(map(str, numerals))}, 2, SEED, {"cards": [deck(hands)]})
    state = GAME.apply(state, 1, AllesAction("S5-5"))
    assert state.ranks_up == (False, True, True, True, True)
    assert AllesAction("W-1", 2) not in GAME.legal_actions(state, 0)


def test_action_texts_round_trip_and_bad_texts_are_refused() -> None:
    for action in (AllesAction("S1-5"), AllesAction("W-4", 1), AllesAction("P-11")):
        assert GAME.parse_action(GAME.action_text(action)) == action
    assert GAME.action_text(AllesAction("W-4", 1)) == "play:W-4/1"
    for text in ("play:X-1", "play:W-4/6", "play:W-4/", "bid:S1-5", "play:S1-12", ""):
        with pytest.raises(InvalidAction):
            GAME.parse_action(text)


def test_refusals_name_their_rule() -> None:
    hands = [["S3-9", "P-2", "P-3", "P-4"], ["S5-5", "P-1", "P-6", "P-7"]]
    state = GAME.new({}, 2, SEED, {"cards": [deck(hands)]})
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 0, AllesAction("P-2"))
    with pytest.raises(InvalidAction) as bad:
        GAME.apply(state, 1, AllesAction("Q-1"))
    assert bad.value.rule == "no_such_card"
    with pytest.raises(InvalidAction):
        GAME.apply(state, 2, AllesAction("P-1"))
    from speeltafel.server.engine.core import IllegalAction

    with pytest.raises(IllegalAction) as error:
        GAME.apply(state, 1, AllesAction("P-2"))
    assert error.value.rule == "not_in_hand"


def test_the_clock_default_is_the_first_card_and_the_lower_numeral() -> None:
    hands = [["S3-9", "P-2", "P-3", "P-4"], ["W-4", "W-1", "P-6", "S1-1"]]
    state = GAME.new({}, 2, SEED, {"cards": [deck(hands)]})
    assert GAME.default_action(state, 1) == AllesAction("S1-1")
    state = GAME.apply(state, 1, AllesAction("S1-1"))
    state = GAME.apply(state, 0, AllesAction("P-2"))
    # Seat 1 holds W-1 (I+III), W-4 (IV+I), P-6 and the card it drew (P-1).
    assert GAME.default_action(state, 1) == AllesAction("P-1")
    hands = [["S3-9", "P-2", "P-3", "P-4"], ["W-4", "W-1", "P-6", "S1-5"]]
    state = GAME.new({}, 2, SEED, {"cards": [deck(hands)]})
    assert GAME.default_action(state, 1) == AllesAction("W-1", 1)
    state = GAME.apply(state, 1, AllesAction("W-4", 4))
    with pytest.raises(NotYourTurn):
        GAME.default_action(state, 1)


def test_a_drawn_card_is_hidden_until_its_owners_next_turn() -> None:
    hands = [["S3-9", "P-2", "P-3", "P-4"], ["S5-5", "P-1", "P-6", "P-7"]]
    state = GAME.new({}, 2, SEED, {"cards": [deck(hands)]})
    top = state.stock[0]
    state = GAME.apply(state, 1, AllesAction("P-1"))
    mine = GAME.observe(state, 1)
    assert top not in mine.hand and mine.drawn == (False, True) and mine.hand_sizes == (4, 3)
    state = GAME.apply(state, 0, AllesAction("P-2"))
    assert top in GAME.observe(state, 1).hand
    assert GAME.observe(state, 1).received[-1] == top


def test_a_finished_game_refuses_everything() -> None:
    state = GAME.new({}, 3, SEED)
    while GAME.to_act(state):
        seat = GAME.to_act(state)[0]
        state = GAME.apply(state, seat, GAME.default_action(state, seat))
    assert state.phase is Phase.OVER and GAME.outcome(state) is not None
    assert GAME.observe(state, 0).turn == -1
    with pytest.raises(GameOver):
        GAME.apply(state, 0, AllesAction("P-1"))
    assert GAME.sample_world(GAME.observe(state, 0), Rng(b"w")) is not None


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_views_decode_to_their_observation_and_actions_round_trip(seats: int) -> None:
    state = GAME.new({"winner_takes_facedown": "false"}, seats, Rng(b"wire%d" % seats))
    chooser = random.Random(seats)
    while True:
        for seat in (None, *range(seats)):
            obs = GAME.observe(state, seat)
            view = common_pb2.View()
            if seat is not None:
                view.seat = seat
            WIRE.fill_public(view, obs)
            WIRE.fill_private(view, obs)
            assert WIRE.observation_from_view(view) == obs
        if not GAME.to_act(state):
            break
        seat = GAME.to_act(state)[0]
        action = chooser.choice(GAME.legal_actions(state, seat))
        assert WIRE.action_from_proto(WIRE.action_to_proto(action)) == action
        state = GAME.apply(state, seat, action)


def test_the_wire_refuses_malformed_actions() -> None:
    with pytest.raises(InvalidAction):
        WIRE.action_from_proto(common_pb2.Action())
    message = common_pb2.Action()
    message.alles_klar.play.card = "Z-1"
    with pytest.raises(InvalidAction):
        WIRE.action_from_proto(message)
    message.alles_klar.play.card = "W-1"
    message.alles_klar.play.numeral = 9
    with pytest.raises(InvalidAction):
        WIRE.action_from_proto(message)


def test_the_bot_takes_a_trick_it_can_take() -> None:
    # Only V is up with 11 8 7 5 face up (seat 1 owns the 5); seat 2 holds a plain 9 and a
    # 5 with numeral V: the 9 gives the trick to seat 1, the S1-5 makes it blind.
    hands = [
        ["S2-7", "P-2", "P-3", "P-4"],
        ["S1-11", "S5-5", "P-6", "P-10"],
        ["S5-8", "P-9", "S1-5", "P-1"],
    ]
    state = GAME.new({}, 3, SEED, {"cards": [deck(hands)]})
    for seat, card in [(1, "S1-11"), (2, "S5-8"), (0, "S2-7"), (1, "S5-5")]:
        state = GAME.apply(state, seat, AllesAction(card))
    legal = GAME.legal_actions(state, 2)
    choice = legal[LookaheadBot().act(GAME.observe(state, 2), legal)]
    assert choice != AllesAction("P-9")
    assert LookaheadBot().running_scores(GAME.observe(state, 2)) == (0, 0, 0)
