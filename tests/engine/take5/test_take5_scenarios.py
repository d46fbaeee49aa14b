"""Take 5 (trial edition) scenarios: every example of shared/rules/take5.md section 12,
the clock defaults, row choices, full rows, whole matches and every illegal action.

Positions are built with ``dataclasses.replace`` on a freshly dealt state (cards not
placed anywhere go to the unused pile, so card conservation still holds) or from preset
deck orders; from there they are driven only through ``GAME.apply``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import replace

import pytest

from speeltafel.server.engine.core import (
    EngineError,
    GameOver,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    Outcome,
    Rng,
)
from speeltafel.server.engine.games.take5 import (
    GAME,
    ActionKind,
    Phase,
    Placement,
    Take5Action,
    Take5State,
    heads,
    total_heads,
)

SEED = Rng(b"take5 scenarios")


def select(card: int) -> Take5Action:
    return Take5Action(ActionKind.SELECT, card)


def row(number: int) -> Take5Action:
    return Take5Action(ActionKind.ROW, number)


def assert_conserved(state: Take5State) -> None:
    cards = sorted(c for zone in GAME.zones(state).values() for c in zone)
    assert cards == sorted(GAME.deck(state))


def position(
    hands: Sequence[Sequence[int]],
    rows: Sequence[Sequence[int]],
    *,
    penalties: Sequence[Sequence[int]] | None = None,
    options: dict[str, str] | None = None,
    deal: int = 1,
    deal_scores: tuple[tuple[int, ...], ...] = (),
) -> Take5State:
    """A SELECT-phase position with exactly these cards; every other card is unused."""
    state = GAME.new(options or {}, len(hands), SEED)
    piles = penalties if penalties is not None else [() for _ in hands]
    placed = [c for group in (*hands, *rows, *piles) for c in group]
    assert len(placed) == len(set(placed)), "a card appears twice in the position"
    deck = [int(c) for c in GAME.deck(state)]
    state = replace(
        state,
        deal=deal,
        rows=tuple(tuple(r) for r in rows),
        hands=tuple(tuple(sorted(h)) for h in hands),
        penalties=tuple(tuple(sorted(p)) for p in piles),
        unused=tuple(c for c in deck if c not in placed),
        deal_scores=deal_scores,
    )
    assert_conserved(state)
    return state


def play(state: Take5State, *moves: tuple[int, Take5Action]) -> Take5State:
    """Apply ``(seat, action)`` moves in order, checking conservation after each."""
    for seat, action in moves:
        state = GAME.apply(state, seat, action)
        assert_conserved(state)
    return state


def reveal(state: Take5State, cards: Sequence[int]) -> Take5State:
    """Every seat selects its card (``cards[seat]``), seat 0 first."""
    return play(state, *((seat, select(card)) for seat, card in enumerate(cards)))


# --------------------------------------------------------------------------- section 12


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_scenario1_placement_example_in_any_submission_order(order: tuple[int, ...]) -> None:
    start = position(hands=[(5, 30), (8, 31), (17, 32)], rows=[(2,), (12,), (20,)])
    cards = {0: 5, 1: 8, 2: 17}
    state = play(start, *((seat, select(cards[seat])) for seat in order))

    assert state.rows == ((2, 5, 8), (12, 17), (20,))
    assert state.penalties == ((), (), ())
    assert state.phase is Phase.SELECT
    assert state.turn == 2
    assert state.hands == ((30,), (31,), (32,))
    assert state.history[-1].revealed == ((0, 5), (1, 8), (2, 17))
    assert state.history[-1].placements == (
        Placement(seat=0, card=5, row=1, taken=(), chosen=False),
        Placement(seat=1, card=8, row=1, taken=(), chosen=False),
        Placement(seat=2, card=17, row=2, taken=(), chosen=False),
    )


def test_scenario2_lowest_card_owner_chooses_row_3_and_later_cards_follow() -> None:
    # Seat 1 owns the 3, so the chooser is not the first seat.
    start = position(hands=[(22, 30), (3, 31), (10, 32)], rows=[(24,), (13, 15), (20,)])
    waiting = reveal(start, [22, 3, 10])

    assert waiting.phase is Phase.ROW_CHOICE
    assert GAME.to_act(waiting) == (1,)
    assert GAME.legal_actions(waiting, 1) == (row(1), row(2), row(3))
    assert GAME.legal_actions(waiting, 0) == ()
    assert GAME.legal_actions(waiting, 2) == ()
    # Nothing is placed until the choice is made; everyone sees the revealed cards.
    assert waiting.rows == start.rows
    assert waiting.to_place == ((3, 1), (10, 2), (22, 0))
    for viewer in (0, 1, 2, None):
        assert GAME.observe(waiting, viewer).to_place == ((3, 1), (10, 2), (22, 0))

    state = GAME.apply(waiting, 1, row(3))
    assert state.rows == ((24,), (13, 15, 22), (3, 10))
    assert state.penalties == ((), (20,), ())
    assert total_heads(state.penalties[1]) == 3
    assert state.phase is Phase.SELECT
    assert state.turn == 2
    assert state.history[-1].placements == (
        Placement(seat=1, card=3, row=3, taken=(20,), chosen=True),
        Placement(seat=2, card=10, row=3, taken=(), chosen=False),
        Placement(seat=0, card=22, row=2, taken=(), chosen=False),
    )


@pytest.mark.parametrize(
    ("choice", "rows_after", "taken", "taken_heads"),
    [
        (1, ((3, 10), (13, 15), (20, 22)), (24,), 1),
        (2, ((24,), (3, 10), (20, 22)), (13, 15), 3),
        (3, ((24,), (13, 15, 22), (3, 10)), (20,), 3),
    ],
)
def test_rule4_every_row_choice_restarts_that_row_for_later_cards(
    choice: int, rows_after: tuple[tuple[int, ...], ...], taken: tuple[int, ...], taken_heads: int
) -> None:
    start = position(hands=[(22, 30), (3, 31), (10, 32)], rows=[(24,), (13, 15), (20,)])
    state = GAME.apply(reveal(start, [22, 3, 10]), 1, row(choice))
    assert state.rows == rows_after
    assert state.penalties == ((), taken, ())
    assert total_heads(state.penalties[1]) == taken_heads


def test_scenario3_sixth_card_takes_the_full_row() -> None:
    start = position(hands=[(14, 1), (31, 2)], rows=[(4, 6, 7, 9, 12), (20,), (30,)])
    state = reveal(start, [14, 31])
    assert state.rows == ((14,), (20,), (30, 31))
    assert state.penalties == ((4, 6, 7, 9, 12), ())
    assert total_heads(state.penalties[0]) == 5
    assert state.history[-1].placements[0] == Placement(
        seat=0, card=14, row=1, taken=(4, 6, 7, 9, 12), chosen=False
    )


def test_d2_the_fifth_card_does_not_take_the_row() -> None:
    start = position(hands=[(14, 1), (31, 2)], rows=[(4, 6, 7, 9), (20,), (30,)])
    state = reveal(start, [14, 31])
    assert state.rows == ((4, 6, 7, 9, 14), (20,), (30, 31))
    assert state.penalties == ((), ())


def test_scenario4_cards_are_placed_in_ascending_order_not_seat_order() -> None:
    start = position(hands=[(12, 1), (11, 2)], rows=[(10,), (21,), (31,)])
    state = reveal(start, [12, 11])
    assert state.rows == ((10, 11, 12), (21,), (31,))
    assert state.penalties == ((), ())
    assert state.phase is Phase.SELECT  # 12 never had to choose a row
    assert state.history[-1].revealed == ((0, 12), (1, 11))
    assert [(p.seat, p.card) for p in state.history[-1].placements] == [(1, 11), (0, 12)]


@pytest.mark.parametrize(("seats", "hand", "unused"), [(2, 12, 5), (3, 9, 2), (4, 7, 1)])
def test_scenario5_hand_sizes_rows_and_unused_cards(seats: int, hand: int, unused: int) -> None:
    state = GAME.new({}, seats, Rng(b"hand sizes"))
    assert [len(h) for h in state.hands] == [hand] * seats
    assert len(state.rows) == 3
    assert all(len(r) == 1 for r in state.rows)
    assert len(state.unused) == unused
    assert state.phase is Phase.SELECT
    assert (state.deal, state.turn) == (1, 1)
    assert GAME.to_act(state) == tuple(range(seats))
    assert GAME.observe(state, None).hand_sizes == (hand,) * seats
    assert GAME.observe(state, None).turns == hand
    assert_conserved(state)


@pytest.mark.parametrize(("seats", "hand"), [(2, 12), (3, 9), (4, 7)])
def test_scenario5_preset_deck_is_dealt_hands_then_rows_then_unused(seats: int, hand: int) -> None:
    order = [str(c) for c in range(32, 0, -1)]  # 32 on top
    state = GAME.new({}, seats, SEED, presets=[order])
    cards = [int(c) for c in order]
    for seat in range(seats):
        assert state.hands[seat] == tuple(sorted(cards[seat * hand : (seat + 1) * hand]))
    dealt = seats * hand
    assert state.rows == tuple((c,) for c in cards[dealt : dealt + 3])
    assert state.unused == tuple(cards[dealt + 3 :])


def test_scenario6_match_totals_and_shared_victory() -> None:
    # Last turn of deal 3: A, B, C already hold 2, 5 and 8 heads this deal.
    start = position(
        hands=[(13,), (17,), (27,)],
        rows=[(12,), (16,), (26,)],
        penalties=[(1, 2), (11,), (5, 10, 20)],
        deal=3,
        deal_scores=((5, 7, 10), (9, 4, 1)),
    )
    state = reveal(start, [13, 17, 27])

    assert state.phase is Phase.OVER
    assert state.deal_scores == ((5, 7, 10), (9, 4, 1), (2, 5, 8))
    assert GAME.to_act(state) == ()
    assert GAME.observe(state, None).totals == (16, 16, 19)
    assert GAME.outcome(state) == Outcome(
        scores=(16, 16, 19), ranks=(1, 1, 3), utilities=(0.5, 0.5, -1.0)
    )


def test_scenario7_taking_11_22_25_costs_12_points() -> None:
    assert total_heads([11, 22, 25]) == 12
    start = position(hands=[(3,), (28,)], rows=[(11, 22, 25), (26,), (27,)], options={"deals": "1"})
    state = GAME.apply(reveal(start, [3, 28]), 0, row(1))
    assert state.phase is Phase.OVER
    assert state.deal_scores == ((12, 0),)
    assert state.rows == ((3,), (26,), (27, 28))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.scores == (12, 0)
    assert outcome.ranks == (2, 1)


# --------------------------------------------------------------------------- heads


def test_heads_of_every_trial_card() -> None:
    expected = {11: 5, 22: 5, 10: 3, 20: 3, 30: 3, 5: 2, 15: 2, 25: 2}
    for card in range(1, 33):
        assert heads(card) == expected.get(card, 1), card
    assert sum(heads(c) for c in range(1, 33)) == 49


@pytest.mark.parametrize(
    ("card", "count"),
    [(55, 7), (11, 5), (22, 5), (33, 5), (99, 5), (10, 3), (100, 3), (5, 2), (95, 2), (1, 1)],
)
def test_heads_of_full_edition_cards(card: int, count: int) -> None:
    assert heads(card) == count


# --------------------------------------------------------------------------- more rules


def test_two_full_rows_taken_in_one_turn_by_two_seats() -> None:
    start = position(
        hands=[(6, 21), (15, 22), (31, 23)],
        rows=[(1, 2, 3, 4, 5), (10, 11, 12, 13, 14), (30,)],
    )
    state = reveal(start, [6, 15, 31])
    assert state.rows == ((6,), (15,), (30, 31))
    assert state.penalties == ((1, 2, 3, 4, 5), (10, 11, 12, 13, 14), ())
    assert [total_heads(p) for p in state.penalties] == [6, 11, 0]


def test_each_placement_changes_the_rows_before_the_next_card() -> None:
    # 5 makes the fifth card, so the 6 right after it takes the row it completed.
    start = position(hands=[(5, 21), (6, 22), (7, 23)], rows=[(1, 2, 3, 4), (20,), (30,)])
    state = reveal(start, [5, 6, 7])
    assert state.rows == ((6, 7), (20,), (30,))
    assert state.penalties == ((), (1, 2, 3, 4, 5), ())


def test_select_clock_default_is_the_lowest_card_in_hand() -> None:
    start = position(hands=[(30, 4, 17), (8, 9, 31)], rows=[(1,), (2,), (3,)])
    assert GAME.default_action(start, 0) == select(4)
    assert GAME.default_action(start, 1) == select(8)
    after = GAME.apply(start, 0, GAME.default_action(start, 0))
    assert after.selected == (4, None)
    with pytest.raises(NotYourTurn):
        GAME.default_action(after, 0)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([(24,), (13, 15), (20,)], 1),  # 1 < 3 = 3 heads
        ([(25,), (26,), (27,)], 2),  # 2 > 1 = 1: tie to the lower row number
        ([(30,), (20,), (10,)], 1),  # all 3: row 1
        ([(11,), (12, 13, 14, 16, 17), (25,)], 3),  # 5, 5 and 2 heads
        ([(22,), (23, 24), (26, 27)], 2),  # 5, 2 and 2 heads
    ],
)
def test_row_choice_clock_default_is_fewest_heads_then_lowest_row(
    rows: list[tuple[int, ...]], expected: int
) -> None:
    start = position(hands=[(1, 31), (32, 9)], rows=rows)
    waiting = reveal(start, [1, 32])
    assert GAME.to_act(waiting) == (0,)
    assert GAME.default_action(waiting, 0) == row(expected)
    state = GAME.apply(waiting, 0, GAME.default_action(waiting, 0))
    assert state.penalties[0] == tuple(sorted(rows[expected - 1]))
    with pytest.raises(NotYourTurn):
        GAME.default_action(waiting, 1)


def test_a_sealed_selection_is_seen_only_by_its_owner() -> None:
    start = position(hands=[(22, 30), (3, 31), (10, 32)], rows=[(24,), (13, 15), (20,)])
    worlds = [GAME.apply(start, 0, select(card)) for card in (22, 30)]
    for state, card in zip(worlds, (22, 30), strict=True):
        mine = GAME.observe(state, 0)
        assert mine.selected == card
        assert card not in mine.hand
        assert mine.committed == (True, False, False)
        assert mine.hand_sizes == (1, 2, 2)
        assert GAME.to_act(state) == (1, 2)
    for viewer in (1, 2, None):
        first, second = (GAME.observe(state, viewer) for state in worlds)
        assert first == second
        assert first.selected is None
        assert first.committed == (True, False, False)
    assert GAME.observe(worlds[0], None).hand == ()
    assert GAME.observe(worlds[0], 1).hand == (3, 31)


def test_determinize_keeps_what_the_seat_knows_and_redeals_the_rest() -> None:
    start = position(hands=[(22, 30), (3, 31), (10, 32)], rows=[(24,), (13, 15), (20,)])
    state = GAME.apply(GAME.apply(start, 0, select(22)), 1, select(3))
    world = GAME.determinize(state, 2, Rng(b"another world"))
    assert world.hands[2] == state.hands[2]
    assert world.selected[2] == state.selected[2]
    assert (world.rows, world.penalties, world.history) == (
        state.rows,
        state.penalties,
        state.history,
    )
    assert [len(h) for h in world.hands] == [len(h) for h in state.hands]
    assert [c is None for c in world.selected] == [c is None for c in state.selected]

    def hidden(s: Take5State) -> list[int]:
        cards = [*s.unused, *s.hands[0], *s.hands[1]]
        return sorted(cards + [c for c in s.selected[:2] if c is not None])

    assert hidden(world) == hidden(state)
    assert_conserved(world)


# --------------------------------------------------------------------------- whole matches

# Seat 0 gets 1..12, seat 1 gets 13..24, the rows start with 25, 26, 27. Playing the
# clock defaults (lowest card; cheapest row) seat 0 takes 26 and 27 by choice, then
# 2-6 (6 heads) and 7-11 (11 heads): 19; seat 1 takes 1, 13-16 (6) and 17-21 (7): 13.
LOW_FIRST = [str(c) for c in range(1, 33)]
LOW_SECOND = [str(c) for c in (*range(13, 25), *range(1, 13), *range(25, 33))]


def play_defaults(state: Take5State) -> tuple[Take5State, int]:
    """Play every seat's clock default until the match ends; the number of actions."""
    actions = 0
    while to_act := GAME.to_act(state):
        seat = to_act[0]
        state = GAME.apply(state, seat, GAME.default_action(state, seat))
        assert_conserved(state)
        actions += 1
    return state, actions


def test_preset_deal_traced_by_hand_for_the_first_turns() -> None:
    state = GAME.new({}, 2, SEED, presets=[LOW_FIRST])
    state = GAME.apply(GAME.apply(state, 0, select(1)), 1, select(13))
    assert GAME.default_action(state, 0) == row(2)  # 25: 2 heads, 26 and 27: 1
    state = GAME.apply(state, 0, row(2))
    assert state.rows == ((25,), (1, 13), (27,))
    state = GAME.apply(GAME.apply(state, 0, select(2)), 1, select(14))
    assert GAME.default_action(state, 0) == row(3)  # 2, 2 and 1 heads
    state = GAME.apply(state, 0, row(3))
    assert state.rows == ((25,), (1, 13, 14), (2,))
    assert state.penalties == ((26, 27), ())


def test_complete_three_deal_match_from_preset_decks() -> None:
    start = GAME.new({}, 2, SEED, presets=[LOW_FIRST, LOW_SECOND, LOW_FIRST])
    state, actions = play_defaults(start)

    assert state.phase is Phase.OVER
    assert state.deal == 3
    assert state.deal_scores == ((19, 13), (13, 19), (19, 13))
    assert state.rows == ((25,), (22, 23, 24), (12,))
    assert state.penalties == ((*range(2, 12), 26, 27), (1, *range(13, 22)))
    assert actions == 3 * (2 * 12 + 2) <= GAME.max_actions(start)
    outcome = GAME.outcome(state)
    assert outcome == Outcome(scores=(51, 45), ranks=(2, 1), utilities=(-1.0, 1.0))
    assert outcome.scores == tuple(map(sum, zip(*state.deal_scores, strict=True)))
    assert GAME.observe(state, 0).totals == (51, 45)


def test_equal_totals_share_the_win() -> None:
    start = GAME.new({"deals": "2"}, 2, SEED, presets=[LOW_FIRST, LOW_SECOND])
    state, _ = play_defaults(start)
    assert state.deal_scores == ((19, 13), (13, 19))
    assert GAME.outcome(state) == Outcome(scores=(32, 32), ranks=(1, 1), utilities=(0.0, 0.0))


@pytest.mark.parametrize(
    ("end_score", "deal_scores"),
    [
        ("19", ((19, 13),)),  # reached exactly after deal 1
        ("20", ((19, 13), (13, 19))),  # 32 >= 20 after deal 2
        ("51", ((19, 13), (13, 19), (19, 13))),  # reached in the last deal anyway
        ("52", ((19, 13), (13, 19), (19, 13))),  # never reached: ends after 3 deals
        ("0", ((19, 13), (13, 19), (19, 13))),  # off
    ],
)
def test_end_score_ends_the_match_after_the_deal_that_reaches_it(
    end_score: str, deal_scores: tuple[tuple[int, ...], ...]
) -> None:
    start = GAME.new({"end_score": end_score}, 2, SEED, presets=[LOW_FIRST, LOW_SECOND, LOW_FIRST])
    state, _ = play_defaults(start)
    assert state.phase is Phase.OVER
    assert state.deal_scores == deal_scores
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.scores == tuple(map(sum, zip(*deal_scores, strict=True)))


def test_a_new_deal_starts_fresh_after_the_last_turn() -> None:
    start = GAME.new({}, 2, SEED, presets=[LOW_FIRST, LOW_SECOND])
    state = start
    while state.deal == 1:
        seat = GAME.to_act(state)[0]
        state = GAME.apply(state, seat, GAME.default_action(state, seat))
    assert state.deal == 2
    assert (state.turn, state.phase) == (1, Phase.SELECT)
    assert state.deal_scores == ((19, 13),)
    assert state.penalties == ((), ())
    assert state.history == ()
    assert state.hands == (tuple(range(13, 25)), tuple(range(1, 13)))
    assert state.rows == ((25,), (26,), (27,))
    assert GAME.outcome(state) is None


@pytest.mark.parametrize(
    "presets",
    [
        [[str(c) for c in range(1, 32)]],  # a card missing
        [[str(c) for c in (*range(1, 32), 1)]],  # a card twice
        [[str(c) for c in range(1, 34)]],  # a card too many
        [[str(c) for c in range(1, 105)]],  # the full edition's deck
        [LOW_FIRST, ["x"] * 32],  # the second deal is broken
    ],
)
def test_preset_decks_must_be_orders_of_the_deck(presets: list[list[str]]) -> None:
    with pytest.raises(InvalidOptions):
        GAME.new({}, 2, SEED, presets=presets)


# --------------------------------------------------------------------------- illegal actions


def illegal_position(name: str) -> Take5State:
    start = position(hands=[(22, 30), (3, 31), (10, 32)], rows=[(24,), (13, 15), (20,)])
    if name == "select":
        return start
    if name == "seat0_selected":
        return GAME.apply(start, 0, select(22))
    if name == "row_choice":  # seat 1 owns the 3 and must choose
        return reveal(start, [22, 3, 10])
    assert name == "over"
    last = position(hands=[(13,), (17,)], rows=[(12,), (16,), (26,)], options={"deals": "1"})
    return reveal(last, [13, 17])


@pytest.mark.parametrize(
    ("where", "seat", "action", "error", "rule"),
    [
        ("select", 0, select(3), IllegalAction, "not_in_hand"),
        ("select", 0, select(24), IllegalAction, "not_in_hand"),
        ("select", 0, select(0), InvalidAction, "no_such_card"),
        ("select", 0, select(33), InvalidAction, "no_such_card"),
        ("select", 0, row(1), IllegalAction, "wrong_phase"),
        ("select", 0, row(4), InvalidAction, "no_such_row"),
        ("select", 3, select(22), InvalidAction, "no_such_seat"),
        ("select", -1, select(22), InvalidAction, "no_such_seat"),
        ("select", 0, "select:22", InvalidAction, "wrong_game"),
        ("seat0_selected", 0, select(30), IllegalAction, "already_selected"),
        ("seat0_selected", 0, select(22), IllegalAction, "already_selected"),
        ("row_choice", 0, row(1), NotYourTurn, "not_your_turn"),
        ("row_choice", 2, row(3), NotYourTurn, "not_your_turn"),
        ("row_choice", 1, select(31), IllegalAction, "wrong_phase"),
        ("row_choice", 0, select(30), IllegalAction, "wrong_phase"),
        ("row_choice", 1, row(0), InvalidAction, "no_such_row"),
        ("row_choice", 1, row(4), InvalidAction, "no_such_row"),
        ("over", 0, select(13), GameOver, "game_over"),
        ("over", 1, row(1), GameOver, "game_over"),
    ],
)
def test_illegal_action_raises_its_rule_and_changes_nothing(
    where: str, seat: int, action: Take5Action, error: type[EngineError], rule: str
) -> None:
    state = illegal_position(where)
    before = GAME.encode(state)
    with pytest.raises(error) as raised:
        GAME.apply(state, seat, action)
    assert type(raised.value) is error
    assert raised.value.rule == rule
    assert GAME.encode(state) == before
    assert GAME.decode(before) == state


def test_game_over_means_no_seat_acts_and_outcome_is_set() -> None:
    state = illegal_position("over")
    assert GAME.to_act(state) == ()
    assert all(GAME.legal_actions(state, seat) == () for seat in range(2))
    assert GAME.outcome(state) == Outcome(scores=(0, 0), ranks=(1, 1), utilities=(0.0, 0.0))
    with pytest.raises(NotYourTurn):
        GAME.default_action(state, 0)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "select",
        "select:",
        "select:x",
        "select:-3",
        "pick:3",
        "row:1.5",
        "SELECT:3",
        "row:²",
        "select:" + "9" * 5000,
    ],
)
def test_parse_action_rejects_text_that_names_no_action(text: str) -> None:
    with pytest.raises(InvalidAction) as raised:
        GAME.parse_action(text)
    assert raised.value.rule == "bad_action_text"


@pytest.mark.parametrize("action", [select(1), select(32), select(104), row(1), row(4)])
def test_action_text_round_trips(action: Take5Action) -> None:
    text = GAME.action_text(action)
    assert text == f"{action.kind.value}:{action.value}"
    assert GAME.parse_action(text) == action


# --------------------------------------------------------------------------- reference model


def reference_turn(
    rows: list[list[int]], revealed: dict[int, int], chosen_row: int | None
) -> dict[int, list[int]]:
    """Rules 1-4 written out plainly; updates ``rows``, returns the cards each seat took."""
    taken: dict[int, list[int]] = {}
    for card, seat in sorted((card, seat) for seat, card in revealed.items()):
        lower = [i for i, r in enumerate(rows) if r[-1] < card]
        if not lower:
            assert chosen_row is not None
            index = chosen_row - 1
            taken.setdefault(seat, []).extend(rows[index])
            rows[index] = [card]
            continue
        index = max(lower, key=lambda i: rows[i][-1])
        if len(rows[index]) == 5:
            taken.setdefault(seat, []).extend(rows[index])
            rows[index] = [card]
        else:
            rows[index].append(card)
    return taken


@pytest.mark.parametrize(
    ("options", "seats"), [({}, 2), ({}, 3), ({}, 4), ({"edition": "full"}, 6)]
)
def test_random_matches_agree_with_a_plain_reference_model(
    options: dict[str, str], seats: int
) -> None:
    for match in range(6):
        chooser = random.Random(match)
        state = GAME.new(options, seats, Rng(b"reference %d" % match))
        rows = [list(r) for r in state.rows]
        piles: list[list[int]] = [[] for _ in range(seats)]
        revealed: dict[int, int] = {}
        chosen: int | None = None
        while to_act := GAME.to_act(state):
            seat = chooser.choice(to_act)
            action = chooser.choice(GAME.legal_actions(state, seat))
            if action.kind is ActionKind.SELECT:
                revealed[seat] = action.value
            else:
                chosen = action.value
            deal = state.deal
            state = GAME.apply(state, seat, action)
            if len(revealed) < seats or state.phase is Phase.ROW_CHOICE:
                continue  # the turn is not resolved yet
            for taker, cards in reference_turn(rows, revealed, chosen).items():
                piles[taker].extend(cards)
            revealed, chosen = {}, None
            if state.deal == deal and state.phase is not Phase.OVER:
                assert state.rows == tuple(tuple(r) for r in rows)
                assert state.penalties == tuple(tuple(sorted(p)) for p in piles)
            else:  # the deal ended: its scores are the reference's piles
                assert state.deal_scores[-1] == tuple(total_heads(p) for p in piles)
                rows = [list(r) for r in state.rows]
                piles = [[] for _ in range(seats)]
        assert GAME.outcome(state) is not None
