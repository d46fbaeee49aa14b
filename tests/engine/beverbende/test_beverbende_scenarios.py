"""Beverbende scenarios: every example of shared/rules/beverbende.md section 12 step by step
with the exact state after each step, and every rule of its knowledge section (7) directly.

Matches are dealt from preset orders of the named deck ``pile`` (:func:`deal` puts the given
rows, first discard and draw pile where the module docstring says they go) and then driven
only through ``GAME.apply``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from speeltafel.server.engine.core import IllegalAction, Rng, restrict
from speeltafel.server.engine.games.beverbende import (
    DEFAULT_NUMBER_COUNTS,
    DISCARD,
    DRAW,
    GAME,
    KNOCK,
    NO_KNOCK,
    REJECT,
    USE_DRAW_TWICE,
    BeverState,
    EventKind,
    Phase,
    deck_cards,
    keep,
    knows,
    peek,
    swap,
    swap_drawn,
    take_discard,
)

SEED = Rng(b"beverbende scenarios")
DECK = deck_cards(DEFAULT_NUMBER_COUNTS)


def order(rows: Sequence[Sequence[str]], flip: str, draw: Sequence[str] = ()) -> list[str]:
    """A ``pile`` order: the rows (seat 0 first), the first discard, the draw pile's top
    cards; the other cards follow in card order."""
    named = [*(c for row in rows for c in row), flip, *draw]
    rest = Counter(DECK)
    rest.subtract(named)
    assert all(n >= 0 for n in rest.values()), "more copies than the deck has"
    return [*named, *sorted(rest.elements())]


def deal(
    rows: Sequence[Sequence[str]],
    flip: str,
    draw: Sequence[str] = (),
    more: Sequence[Sequence[str]] = (),
    **options: str,
) -> BeverState:
    presets = [order(rows, flip, draw), *more]
    return GAME.new(options, len(rows), SEED, {"pile": presets})


def view_rows(state: BeverState, seat: int | None) -> tuple[tuple[str, ...], ...]:
    return GAME.observe(state, seat).rows


def play(state: BeverState, *moves: object) -> BeverState:
    for move in moves:
        state = GAME.apply(state, state.actor, move)  # type: ignore[arg-type]
    return state


def refused(state: BeverState, action: object, rule: str) -> None:
    with pytest.raises(IllegalAction) as error:
        GAME.apply(state, state.actor, action)  # type: ignore[arg-type]
    assert error.value.rule == rule


# --------------------------------------------------------------------------- section 12


def test_1_setup_knowledge() -> None:
    state = deal([("1", "2", "3"), ("4", "5", "6"), ("0", "6", "5")], flip="2")
    assert view_rows(state, 0) == (("1", "", "3"), ("", "", ""), ("", "", ""))
    assert view_rows(state, 1) == (("", "", ""), ("4", "", "6"), ("", "", ""))
    assert view_rows(state, 2) == (("", "", ""), ("", "", ""), ("0", "", "5"))
    assert view_rows(state, None) == (("", "", ""),) * 3
    obs = GAME.observe(state, 0)
    assert obs.discard == ("2",)
    assert obs.draw_size == 32 - 9 - 1
    assert (obs.phase, obs.actor, obs.start_player, obs.turns) == (
        Phase.TURN_START,
        0,
        0,
        (1, 0, 0),
    )
    assert GAME.legal_actions(state, 0) == (DRAW, take_discard(0), take_discard(1), take_discard(2))


def test_2_special_on_the_discard_pile() -> None:
    state = deal([("1", "2", "3"), ("4", "5", "6")], flip="peek")
    assert GAME.legal_actions(state, 0) == (DRAW,)
    refused(state, take_discard(0), "special_on_discard")
    state = play(state, DRAW)
    assert state.phase is Phase.DRAWN


def test_3_no_special_into_the_row() -> None:
    state = deal([("1", "2", "3"), ("4", "5", "6")], flip="0", draw=["swap"])
    state = play(state, DRAW)
    assert GAME.observe(state, 0).drawn == "swap"
    refused(state, swap_drawn(1), "special_to_row")
    assert swap(0, 1, 2) in GAME.legal_actions(state, 0)
    assert GAME.legal_actions(state, 0)[0] == DISCARD


def test_4_a_special_from_a_row_is_inert() -> None:
    state = deal([("5", "draw_twice", "4"), ("4", "5", "6")], flip="0", draw=["2", "3"])
    state = play(state, DRAW, swap_drawn(1))
    # The draw-twice card went to the pile; no draw-twice happened: seat 1's turn.
    assert (state.phase, state.actor) == (Phase.TURN_START, 1)
    assert GAME.observe(state, None).discard == ("0", "draw_twice")
    assert GAME.observe(state, 1).draw_size == 32 - 6 - 1 - 1
    assert view_rows(state, 0)[0] == ("5", "2", "4")
    assert view_rows(state, 1)[0] == ("", "", "")
    assert view_rows(state, None)[0] == ("", "", "")
    last = state.history[-1]
    assert (last.kind, last.seat, last.action, last.shown) == (
        EventKind.ACTION,
        0,
        swap_drawn(1),
        ("draw_twice",),
    )


def test_5_swap_knowledge_moves_with_the_cards() -> None:
    state = deal([("0", "3", "4"), ("5", "6", "1")], flip="2", draw=["swap"])
    assert knows(state, 0, 0, 0) and not knows(state, 0, 1, 2)
    assert knows(state, 1, 1, 2) and not knows(state, 1, 0, 0)
    state = play(state, DRAW, swap(0, 1, 2))
    assert [GAME.zones(state)[f"row:{s}"] for s in (0, 1)] == [("1", "3", "4"), ("5", "6", "0")]
    # A knows B2 = 0 (the card he gave) and no longer knows A0.
    assert view_rows(state, 0) == (("", "", "4"), ("", "", "0"))
    # B no longer knows B2 and knows his old B2 (1) at A0.
    assert view_rows(state, 1) == (("1", "", ""), ("5", "", ""))
    assert view_rows(state, None) == (("", "", ""), ("", "", ""))
    assert GAME.observe(state, None).discard == ("2", "swap")


def test_6_action_b_is_public() -> None:
    rows = [("3", "3", "3"), ("4", "4", "4"), ("5", "6", "5")]
    state = deal(rows, flip="2", draw=["6", "1"])
    state = play(state, DRAW, DISCARD, DRAW, DISCARD)
    assert GAME.observe(state, 2).discard[-1] == "1"
    state = play(state, take_discard(1))
    for viewer in (0, 1, 2, None):
        assert view_rows(state, viewer)[2][1] == "1"
    assert view_rows(state, 2)[2] == ("5", "1", "5")
    assert GAME.observe(state, None).discard == ("2", "6", "6")  # C's old middle card
    assert state.phase is Phase.KNOCK_DECISION  # every seat has had a turn now


def test_7_knock_timing() -> None:
    rows = [("3", "3", "3"), ("4", "4", "4"), ("5", "5", "5")]
    state = deal(rows, flip="2", draw=["6", "6", "6", "6", "6"])
    state = play(state, DRAW, DISCARD)
    assert (state.phase, state.actor) == (Phase.TURN_START, 1)  # seat 0 was not offered a knock
    state = play(state, DRAW, DISCARD)
    assert (state.phase, state.actor) == (Phase.TURN_START, 2)
    state = play(state, DRAW, DISCARD)
    assert (state.phase, state.actor) == (Phase.KNOCK_DECISION, 2)
    assert GAME.legal_actions(state, 2) == (KNOCK, NO_KNOCK)
    state = play(state, KNOCK)
    assert (state.phase, state.actor, state.knocker) == (Phase.TURN_START, 0, 2)
    state = play(state, DRAW, DISCARD)
    assert (state.phase, state.actor) == (Phase.TURN_START, 1)  # no knock decision any more
    state = play(state, DRAW, DISCARD)
    # Seats 0 and 1 had their one more turn: the round ended, round 2 starts with seat 1.
    assert state.round_scores == ((9, 12, 15),)
    assert state.last_rows == rows_as_tuples(rows)
    assert (state.round, state.start_player, state.actor, state.phase) == (
        2,
        1,
        1,
        Phase.TURN_START,
    )
    assert [e.kind for e in state.history] == [EventKind.DEAL]


def rows_as_tuples(rows: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row) for row in rows)


def test_8_draw_twice() -> None:
    rows = [("1", "2", "3"), ("4", "5", "6")]
    state = deal(rows, flip="0", draw=["draw_twice", "6", "5"])
    state = play(state, DRAW, USE_DRAW_TWICE)
    assert state.phase is Phase.DRAW_TWICE_1
    assert GAME.observe(state, 0).drawn == "6"
    assert GAME.observe(state, 1).drawn == "" and GAME.observe(state, 1).holding
    assert GAME.observe(state, 1).pending == ("draw_twice",)
    assert GAME.legal_actions(state, 0) == (keep(0), keep(1), keep(2), REJECT)
    state = play(state, REJECT)
    assert state.phase is Phase.DRAW_TWICE_2
    assert GAME.observe(state, 0).drawn == "5"
    assert GAME.legal_actions(state, 0) == (swap_drawn(0), swap_drawn(1), swap_drawn(2))
    refused(state, DISCARD, "must_use")
    state = play(state, swap_drawn(1))
    # X1, the card swapped out, then the draw-twice card on top.
    assert GAME.observe(state, None).discard == ("0", "6", "2", "draw_twice")
    assert view_rows(state, 0)[0] == ("1", "5", "3")
    assert (state.phase, state.actor) == (Phase.TURN_START, 1)

    state = deal(rows, flip="0", draw=["draw_twice", "peek", "5"])
    state = play(state, DRAW, USE_DRAW_TWICE)
    assert GAME.legal_actions(state, 0) == (REJECT,)
    refused(state, keep(0), "special_to_row")


def test_9_end_of_round_replacement() -> None:
    rows = [("1", "2", "swap"), ("peek", "3", "4")]
    state = deal(rows, flip="0", draw=["6", "5", "6", "draw_twice", "3", "2"])
    state = play(state, DRAW, DISCARD, DRAW, DISCARD, KNOCK)
    assert state.knocker == 1
    state = play(state, DRAW, DISCARD)
    # Seat 1 replaced first: draw twice (special, to the pile), then 3; then seat 0 drew 2.
    assert state.last_rows == (("1", "2", "2"), ("3", "3", "4"))
    assert state.round_scores == ((5, 10),)
    assert state.round == 2


def test_9_replacement_events_at_the_end_of_the_game() -> None:
    rows = [("1", "2", "swap"), ("peek", "3", "4")]
    state = deal(rows, flip="0", draw=["6", "5", "6", "draw_twice", "3", "2"])
    state = BeverState(**{**_fields(state), "round": 4, "start_player": 0})
    state = play(state, DRAW, DISCARD, DRAW, DISCARD, KNOCK, DRAW, DISCARD)
    assert state.phase is Phase.OVER
    replaced = [(e.seat, e.position, e.shown) for e in state.history if e.kind is EventKind.REPLACE]
    assert replaced == [
        (1, 0, ("peek", "draw_twice")),
        (1, 0, ("draw_twice", "3")),
        (0, 2, ("swap", "2")),
    ]
    assert view_rows(state, None) == (("1", "2", "2"), ("3", "3", "4"))
    assert state.round_scores == ((5, 10),)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.ranks == (1, 2) and outcome.scores == (5, 10)


def _fields(state: BeverState) -> dict[str, object]:
    return {name: getattr(state, name) for name in state.__dataclass_fields__}


@pytest.mark.parametrize(("players", "rounds"), [(2, 4), (3, 3), (4, 4)])
def test_10_rounds_and_the_lowest_total_wins(players: int, rounds: int) -> None:
    state = GAME.new({}, players, Rng(b"rounds %d" % players))
    starts = []
    while GAME.to_act(state):
        if state.phase is Phase.TURN_START and not state.history[1:]:
            starts.append(state.start_player)
        seat = state.actor
        legal = GAME.legal_actions(state, seat)
        state = GAME.apply(
            state, seat, KNOCK if KNOCK in legal else GAME.default_action(state, seat)
        )
    assert len(state.round_scores) == rounds
    assert starts == [r % players for r in range(rounds)]
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.termination == "normal"
    totals = [sum(scores[s] for scores in state.round_scores) for s in range(players)]
    assert list(outcome.scores) == totals
    best = min(totals)
    assert [rank == 1 for rank in outcome.ranks] == [t == best for t in totals]


def test_11_reshuffle() -> None:
    rows = [("1", "2", "3"), ("4", "5", "6")]
    first = order(rows, flip="0")
    pile_after = list(reversed(first))  # the reshuffle's preset (restricted to the pile)
    state = GAME.new({}, 2, SEED, {"pile": [first, pile_after]})
    draws = 32 - 6 - 1
    for _ in range(draws):
        state = play(state, DRAW, DISCARD)
        if state.phase is Phase.KNOCK_DECISION:
            state = play(state, NO_KNOCK)
    obs = GAME.observe(state, state.actor)
    assert obs.discard == () and obs.draw_size == draws + 1
    assert GAME.legal_actions(state, state.actor) == (DRAW,)
    reshuffle = state.history[-1]
    assert reshuffle.kind is EventKind.RESHUFFLE
    assert reshuffle.shown == tuple(first[6:])  # the whole pile, bottom first
    assert GAME.zones(state)["draw"] == restrict(pile_after, first[6:])
    state = play(state, DRAW, DISCARD)
    assert GAME.observe(state, None).discard == (pile_after[0],)


# --------------------------------------------------------------------------- knowledge rules


def test_knowledge_2_a_peek_shows_the_owner_only() -> None:
    state = deal([("1", "2", "3"), ("4", "5", "6")], flip="0", draw=["peek"])
    state = play(state, DRAW, peek(1))
    assert view_rows(state, 0)[0] == ("1", "2", "3")
    assert view_rows(state, 1)[0] == ("", "", "")
    assert GAME.observe(state, 1).discard == ("0", "peek")


def test_knowledge_3_a_drawn_card_into_a_row_makes_the_others_forget() -> None:
    rows = [("1", "2", "3"), ("4", "5", "6")]
    state = deal(rows, flip="0", draw=["6", "4"])
    state = play(state, take_discard(1))  # the 0 is public in seat 0's middle
    assert all(view_rows(state, v)[0][1] == "0" for v in (0, 1, None))
    state = play(state, DRAW, DISCARD, NO_KNOCK)  # seat 1
    state = play(state, DRAW, swap_drawn(1))  # seat 0 puts the drawn 4 over the public 0
    assert view_rows(state, 0)[0][1] == "4"
    assert view_rows(state, 1)[0][1] == "" and view_rows(state, None)[0][1] == ""


def test_knowledge_5_a_third_seat_s_knowledge_moves_too() -> None:
    rows = [("3", "3", "3"), ("4", "4", "4"), ("5", "5", "5")]
    state = deal(rows, flip="1", draw=["6", "swap"])
    state = play(state, take_discard(0))  # seat 0's 1 at position 0 is public
    state = play(state, DRAW, DISCARD)  # seat 1
    state = play(state, DRAW, swap(1, 0, 0), NO_KNOCK)  # seat 2 takes the public 1
    for viewer in (0, 1, 2, None):
        assert view_rows(state, viewer)[2][1] == "1"
    assert view_rows(state, 0)[0] == ("", "", "3")  # the card seat 0 got is unknown to him
    assert view_rows(state, 2)[0] == ("", "", "")  # seat 2 never saw his old middle card


def test_knowledge_7_a_drawn_card_is_seen_by_the_drawer_only() -> None:
    state = deal([("1", "2", "3"), ("4", "5", "6")], flip="0", draw=["5"])
    state = play(state, DRAW)
    assert GAME.observe(state, 0).drawn == "5"
    assert GAME.observe(state, 1).drawn == "" and GAME.observe(state, None).drawn == ""
    assert GAME.observe(state, 1).holding
    state = play(state, DISCARD)
    assert GAME.observe(state, 1).discard == ("0", "5")


def test_the_safety_limit_ends_a_round_without_a_knock() -> None:
    state = deal([("1", "2", "3"), ("4", "5", "6")], flip="0", turn_limit="1")
    state = play(state, DRAW, DISCARD, DRAW, DISCARD, NO_KNOCK)
    assert state.round == 2 and state.round_scores == ((6, 15),) and state.limited == 1
    assert GAME.max_actions(GAME.new({"turn_limit": "1"}, 2, SEED)) == 4 * 2 * 2 * 10


def test_draw_twice_mid_turn_reshuffle_and_nested_sequences() -> None:
    rows = [("1", "2", "3"), ("4", "5", "6")]
    state = deal(rows, flip="0", draw=["draw_twice", "draw_twice", "draw_twice", "6", "peek"])
    state = play(state, DRAW, USE_DRAW_TWICE, REJECT)  # X1 = second draw_twice, rejected
    assert GAME.observe(state, 0).drawn == "draw_twice"
    state = play(state, USE_DRAW_TWICE)  # X2 = draw twice, used: a new sequence, X1 = 6
    assert GAME.observe(state, 0).drawn == "6" and state.phase is Phase.DRAW_TWICE_1
    state = play(state, REJECT)  # X2 = peek
    assert GAME.legal_actions(state, 0) == (DISCARD, peek(0), peek(1), peek(2))
    state = play(state, peek(1))
    assert GAME.observe(state, None).discard == (
        "0",
        "draw_twice",
        "6",
        "peek",
        "draw_twice",
        "draw_twice",
    )
    assert view_rows(state, 0)[0] == ("1", "2", "3")
