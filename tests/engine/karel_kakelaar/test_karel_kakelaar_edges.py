"""Karel Kakelaar edge cases beyond the rules file's scenarios: empty bids (D5), options and
presets, action texts, what the public history determines (D12)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from test_karel_kakelaar_scenarios import (  # tests/engine/karel_kakelaar is on sys.path
    DEFAULT_DRAW,
    SEED,
    assert_conserved,
    bids,
    chicken,
    draw_order,
    play,
    position,
    refused,
)

from speeltafel.server.engine.core import InvalidAction, InvalidOptions, Rng
from speeltafel.server.engine.games.karel_kakelaar import (
    GAME,
    SKIP,
    KarelAction,
    Phase,
    bid,
    draw_cards,
    known_hands,
    play_mother_hen,
)


def test_d5_a_seat_with_only_mother_hens_bids_nothing_and_ranks_last() -> None:
    state = position(
        3,
        5,
        hands=[["hen:1", "hen:2"], [chicken(1, 3), "worm:2:1"], [chicken(2, 3)]],
        discards=[[chicken(0, 7)], [], []],
        row=["worm:8:1", "worm:7:1", "worm:6:1"],
        tractor=0,  # even the tractor holder ranks below every real bid
    )
    assert GAME.to_act(state) == (1, 2)
    assert GAME.legal_actions(state, 0) == ()
    refused(state, 0, bid("hen:1"), "hen_not_a_bid")
    state = bids_of(state, {1: "worm:2:1", 2: chicken(2, 3)})
    record = state.history[-1]
    assert record.bids == (None, "worm:2:1", chicken(2, 3))
    assert record.ranking == (2, 1, 0)
    assert record.taken(0) == "worm:6:1"
    assert state.discards[0] == (chicken(0, 7),)  # an empty bid discards nothing
    assert state.hands[0] == ("worm:6:1", "hen:1", "hen:2")
    # Seat 0 may now bring its chicken back with a hen.
    assert GAME.to_act(state) == (0,)
    assert GAME.legal_actions(state, 0) == (play_mother_hen("hen:1", [chicken(0, 7)]), SKIP)


def test_d5_when_nobody_can_bid_the_round_resolves_by_itself() -> None:
    state = position(
        2,
        8,
        hands=[["hen:1"], [chicken(1, 3)]],
        discards=[[], []],
        row=["worm:8:1", "hen:2", "hen:3"],
        tractor=0,
    )
    later = state.draw  # round 9's row
    robot = ("chicken:green:7", "chicken:green:4")
    state = replace(state, robot_deck=robot, box=tuple(c for c in state.box if c not in robot))
    assert_conserved(state)
    assert GAME.to_act(state) == (1,)
    state = play(state, (1, bid(chicken(1, 3))))
    record = state.history[-1]
    assert record.bids == (None, chicken(1, 3), "chicken:green:7")
    assert record.ranking == (2, 1, 0)
    assert state.hands == (("hen:1", "hen:3"), ("hen:2",))
    assert GAME.to_act(state) == (1,)  # seat 0's discard pile is empty: not asked
    # Round 9: nobody holds a card to bid, so the round resolves in the same step.
    state = play(state, (1, SKIP))
    record = state.history[-1]
    assert (record.number, record.tractor, record.row) == (9, 1, later)
    assert record.bids == (None, None, "chicken:green:4")
    assert record.ranking == (2, 1, 0)  # the robot's 4, then by distance from seat 1
    assert state.phase is Phase.MOTHER_HEN and GAME.to_act(state) == (1,)
    state = play(state, (1, play_mother_hen("hen:2", [chicken(1, 3)])))
    assert state.phase is Phase.OVER and GAME.outcome(state) is not None


def bids_of(state: object, cards: dict[int, str]) -> object:
    for seat, card in cards.items():
        state = play(state, (seat, bid(card)))  # type: ignore[arg-type]
    return state


def test_options_are_checked() -> None:
    with pytest.raises(InvalidOptions, match="add up to"):
        GAME.new({"worm_counts": "6,6,5,5,4,4,3,2"}, 3, SEED)
    with pytest.raises(InvalidOptions):
        GAME.new({"worm_counts": "6,6,5,5,4,4,3"}, 3, SEED)
    with pytest.raises(InvalidOptions, match="no player 4"):
        GAME.new({"first_tractor": "4"}, 3, SEED)
    state = GAME.new({"worm_counts": "3,3,4,4,5,5,6,6"}, 4, SEED)
    assert sum(1 for c in GAME.deck(state) if c.startswith("worm:8:")) == 6
    assert_conserved(state)


def test_the_first_tractor_is_drawn_among_the_players_never_the_robot() -> None:
    holders = {GAME.new({}, 2, Rng(b"%d" % i)).tractor for i in range(40)}
    assert holders == {0, 1}
    assert {GAME.new({"first_tractor": str(n)}, 5, SEED).tractor for n in range(1, 6)} == set(
        range(5)
    )


def test_a_draw_preset_is_dealt_as_documented() -> None:
    order = list(reversed(DEFAULT_DRAW))
    state = GAME.new({}, 4, SEED, {"draw": [order]})
    assert state.box == tuple(order[:9])
    assert state.row == tuple(order[9:13])
    state = bids(state, [chicken(s, 3 + s) for s in range(4)])
    while state.phase is Phase.MOTHER_HEN:
        state = play(state, (GAME.to_act(state)[0], SKIP))
    assert state.row == tuple(order[13:17])
    # A plain sequence of orders means the first deck, "draw".
    assert GAME.new({}, 4, SEED, [order]).box == tuple(order[:9])
    with pytest.raises(InvalidOptions):
        GAME.new({}, 4, SEED, {"draw": [order[:-1]]})


def test_action_texts_round_trip_and_take_is_put_in_card_order() -> None:
    for text in (
        "bid:worm:5:2",
        "bid:chicken:red:7",
        "skip_mother_hen",
        "play_mother_hen:hen:3/chicken:red:7,worm:2:1",
        "play_mother_hen:hen:3/worm:2:1",
    ):
        assert GAME.action_text(GAME.parse_action(text)) == text
    swapped = GAME.parse_action("play_mother_hen:hen:3/worm:2:1,chicken:red:7")
    assert swapped.take == ("chicken:red:7", "worm:2:1")
    for bad in (
        "bid:worm:9:1",
        "bid:hen",
        "bid:chicken:pink:3",
        "play_mother_hen:worm:1:1/worm:2:1",
        "play_mother_hen:hen:1/worm:2:1,worm:2:1",
        "play_mother_hen:hen:1/a,b,c",
        "play_mother_hen:hen:1",
        "skip",
        "bid:worm:05:1",
    ):
        with pytest.raises(InvalidAction):
            GAME.parse_action(bad)


def test_a_hen_on_a_one_card_discard_takes_that_card() -> None:
    rows = [["hen:1", "worm:1:1", "worm:1:2"]]
    state = GAME.new({"first_tractor": "1"}, 3, SEED, {"draw": [draw_order(3, rows)]})
    state = bids(state, [chicken(0, 7), chicken(1, 4), chicken(2, 3)])
    assert GAME.legal_actions(state, 0) == (play_mother_hen("hen:1", [chicken(0, 7)]), SKIP)
    refused(
        state,
        0,
        KarelAction(play_mother_hen("hen:1", [chicken(0, 7)]).kind, "hen:1", ()),
        "take_count",
    )
    state = play(state, (0, play_mother_hen("hen:1", [chicken(0, 7)])))
    assert state.hands[0] == tuple(f"chicken:red:{v}" for v in (3, 4, 5, 6, 7))
    assert state.discards[0] == ()


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_public_history_determines_every_hand(players: int) -> None:
    """D12: known_hands (what bots and sample_world use) is every hand, at every step, from
    every seat and a spectator (a sealed bid still counted in its owner's hand)."""
    chooser = random.Random(players)
    state = GAME.new({}, players, Rng(b"known %d" % players))
    while True:
        for viewer in (None, *range(players)):
            known = known_hands(GAME.observe(state, viewer))
            for s in range(players):
                sealed = state.bids[s]
                expected = set(state.hands[s]) | ({sealed} if sealed and s != viewer else set())
                assert set(known[s]) == expected
        if not GAME.to_act(state):
            break
        seat = chooser.choice(GAME.to_act(state))
        state = GAME.apply(state, seat, chooser.choice(GAME.legal_actions(state, seat)))


def test_the_draw_pile_holds_worms_and_hens_only() -> None:
    assert len(draw_cards((6, 6, 5, 5, 4, 4, 3, 3))) == 45
    assert sum(int(c.split(":")[1]) for c in DEFAULT_DRAW if c.startswith("worm:")) == 142
