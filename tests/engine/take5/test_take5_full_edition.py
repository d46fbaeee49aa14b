"""Take 5 full edition (6 nimmt!: 104 cards, 4 rows, 10 cards each, 2-10 seats) and options."""

from __future__ import annotations

from dataclasses import replace

import pytest

from speeltafel.server.engine.core import IllegalAction, InvalidAction, InvalidOptions, Rng
from speeltafel.server.engine.games.take5 import (
    GAME,
    ActionKind,
    Phase,
    Take5Action,
    Take5State,
    heads,
    total_heads,
)

FULL = {"edition": "full"}
SEED = Rng(b"take5 full edition")


def select(card: int) -> Take5Action:
    return Take5Action(ActionKind.SELECT, card)


def row(number: int) -> Take5Action:
    return Take5Action(ActionKind.ROW, number)


def assert_conserved(state: Take5State) -> None:
    cards = sorted(c for zone in GAME.zones(state).values() for c in zone)
    assert cards == sorted(GAME.deck(state))


@pytest.mark.parametrize("seats", range(2, 11))
def test_full_edition_deals_ten_cards_each_and_four_rows(seats: int) -> None:
    state = GAME.new(FULL, seats, SEED)
    assert [len(h) for h in state.hands] == [10] * seats
    assert len(state.rows) == 4
    assert all(len(r) == 1 for r in state.rows)
    assert len(state.unused) == 104 - 10 * seats - 4
    assert GAME.deck(state) == tuple(str(c) for c in range(1, 105))
    assert GAME.observe(state, 0).turns == 10
    assert GAME.max_actions(state) >= 3 * 10 * seats
    assert_conserved(state)


def test_full_deck_holds_171_heads() -> None:
    assert total_heads(range(1, 105)) == 171
    assert [c for c in range(1, 105) if heads(c) == 7] == [55]
    assert [c for c in range(1, 105) if heads(c) == 5] == [11, 22, 33, 44, 66, 77, 88, 99]


@pytest.mark.parametrize(
    ("options", "seats", "rule"),
    [
        ({}, 5, "seat_count"),  # the trial edition takes 2-4
        ({}, 1, "seat_count"),
        (FULL, 1, "seat_count"),
        (FULL, 11, "seat_count"),
        ({"edition": "deluxe"}, 2, "invalid_options"),
        ({"colour": "red"}, 2, "invalid_options"),
        ({"deals": "0"}, 2, "invalid_options"),
        ({"deals": "51"}, 2, "invalid_options"),
        ({"deals": "three"}, 2, "invalid_options"),
        ({"end_score": "-1"}, 2, "invalid_options"),
    ],
)
def test_bad_options_and_seat_counts_are_rejected(
    options: dict[str, str], seats: int, rule: str
) -> None:
    with pytest.raises(InvalidOptions) as raised:
        GAME.new(options, seats, SEED)
    assert raised.value.rule == rule


def test_info_declares_the_widest_seat_range_and_every_option() -> None:
    info = GAME.info
    assert (info.game_id, info.min_seats, info.max_seats) == ("take5", 2, 10)
    assert info.simultaneous
    assert {spec.name: spec.default for spec in info.options} == {
        "edition": "trial",
        "deals": "3",
        "end_score": "0",
    }


def test_full_edition_has_four_rows_to_choose_from_and_card_104() -> None:
    start = GAME.new(FULL, 2, SEED)
    rows = ((50,), (60, 61), (70,), (55,))
    used = {1, 104, 50, 60, 61, 70, 55, 2, 3}
    deck = range(1, 105)
    start = replace(
        start,
        hands=((1, 2), (3, 104)),
        rows=rows,
        unused=tuple(c for c in deck if c not in used),
    )
    assert_conserved(start)
    waiting = GAME.apply(GAME.apply(start, 0, select(1)), 1, select(104))
    assert waiting.phase is Phase.ROW_CHOICE
    assert GAME.legal_actions(waiting, 0) == (row(1), row(2), row(3), row(4))
    # Heads: 50 -> 3, 60 + 61 -> 4, 70 -> 3, 55 -> 7: rows 1 and 3 tie, row 1 wins.
    assert GAME.default_action(waiting, 0) == row(1)
    state = GAME.apply(waiting, 0, row(4))
    assert state.penalties == ((55,), ())
    assert total_heads(state.penalties[0]) == 7
    assert state.rows == ((50,), (60, 61), (70, 104), (1,))
    assert_conserved(state)


def test_full_edition_rejects_cards_and_rows_beyond_its_layout() -> None:
    state = GAME.new(FULL, 2, SEED)
    outsider = next(c for c in range(1, 105) if c not in state.hands[0])
    with pytest.raises(IllegalAction) as raised:
        GAME.apply(state, 0, select(outsider))
    assert raised.value.rule == "not_in_hand"
    with pytest.raises(InvalidAction) as invalid:
        GAME.apply(state, 0, select(105))
    assert invalid.value.rule == "no_such_card"
    with pytest.raises(InvalidAction) as invalid:
        GAME.apply(state, 0, row(5))
    assert invalid.value.rule == "no_such_row"


def test_ten_seat_full_edition_match_uses_every_card_and_scores_every_head() -> None:
    state = GAME.new(FULL, 10, SEED)
    assert state.unused == ()
    actions = 0
    while to_act := GAME.to_act(state):
        seat = to_act[-1]
        state = GAME.apply(state, seat, GAME.default_action(state, seat))
        actions += 1
        if state.phase is Phase.SELECT and not any(state.selected):
            # Between turns every head is somewhere: penalty piles plus rows (no unused).
            on_table = total_heads([c for r in state.rows for c in r])
            taken = total_heads([c for p in state.penalties for c in p])
            held = total_heads([c for h in state.hands for c in h])
            assert on_table + taken + held == 171
    assert state.phase is Phase.OVER
    assert len(state.deal_scores) == 3
    assert actions <= GAME.max_actions(GAME.new(FULL, 10, SEED))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert len(outcome.scores) == 10
    assert outcome.scores == tuple(map(sum, zip(*state.deal_scores, strict=True)))
    for scores in state.deal_scores:
        # Four rows of at least one card stay on the table, worth at least one head each.
        assert sum(scores) <= 171 - 4


def test_full_edition_preset_deals_hands_then_four_rows() -> None:
    order = [str(c) for c in range(104, 0, -1)]
    state = GAME.new(FULL, 3, SEED, presets=[order])
    assert state.hands == (
        tuple(range(95, 105)),
        tuple(range(85, 95)),
        tuple(range(75, 85)),
    )
    assert state.rows == ((74,), (73,), (72,), (71,))
    assert state.unused == tuple(range(70, 0, -1))
