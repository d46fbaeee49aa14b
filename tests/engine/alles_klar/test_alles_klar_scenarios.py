"""Alles Klar? scenarios: every example of shared/rules/alles_klar.md section 12, step by
step with the exact state after each step.

Matches are dealt from preset orders of the named deck ``cards`` (:func:`deck` puts the
given hands and stock top where the module docstring says they go; the dealer is seat 0,
so seat 1 leads). The end-phase position is built with ``dataclasses.replace`` (cards not
placed go out of the game, so card conservation still holds) and then driven only through
``GAME.apply``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from speeltafel.server.engine.core import IllegalAction, Outcome, Rng
from speeltafel.server.engine.games.alles_klar import (
    ALL_CARDS,
    GAME,
    AllesAction,
    AllesState,
    Phase,
    Play,
    Result,
    TrickRecord,
    in_order,
    numerals_of,
)

SEED = Rng(b"alles klar scenarios")


def deck(hands: Sequence[Sequence[str]], stock: Sequence[str] = ()) -> list[str]:
    """A ``cards`` preset: the hands (seat 0 first), then ``stock`` on top of the stock, then
    every other card in the stable order."""
    named = [c for hand in hands for c in hand] + list(stock)
    assert all(len(hand) == 4 for hand in hands)
    return [*named, *(c for c in ALL_CARDS if c not in named)]


def rest_of_stock(hands: Sequence[Sequence[str]], stock: Sequence[str]) -> tuple[str, ...]:
    return tuple(deck(hands, stock)[4 * len(hands) :])


def new(hands: Sequence[Sequence[str]], stock: Sequence[str] = ()) -> AllesState:
    state = GAME.new({}, len(hands), SEED, {"cards": [deck(hands, stock)]})
    assert state.hands == tuple(in_order(h) for h in hands)
    assert state.turn == state.leader == 1
    assert state.ranks_up == (True,) * 5
    return state


def play(state: AllesState, seat: int, card: str, numeral: int = 0) -> AllesState:
    state = GAME.apply(state, seat, AllesAction(card, numeral))
    cards = sorted(c for zone in GAME.zones(state).values() for c in zone)
    assert cards == sorted(GAME.deck(state))
    return state


def refused(state: AllesState, seat: int, action: AllesAction, rule: str) -> None:
    before = GAME.encode(state)
    with pytest.raises(IllegalAction) as error:
        GAME.apply(state, seat, action)
    assert error.value.rule == rule
    assert GAME.encode(state) == before


def ups(state: AllesState) -> list[str]:
    """The face-up cards of the trick, as the observation shows them."""
    obs = GAME.observe(state, None)
    return [p.card for p, up in zip(obs.trick, obs.face_up, strict=True) if up]


def ranks(*up: int) -> tuple[bool, ...]:
    return tuple(r in up for r in range(1, 6))


def test_the_default_numerals_are_the_rules_file_table() -> None:
    from speeltafel.server.engine.games.alles_klar import DEFAULT_NUMERALS as N

    table = {
        "S1": "1 2 3 4 5 1 2 3 4 5 1",
        "S2": "2 3 4 5 1 2 3 4 5 1 2",
        "S3": "3 4 5 1 2 3 4 5 1 2 3",
        "S4": "4 5 1 2 3 4 5 1 2 3 4",
        "S5": "5 1 2 3 4 5 1 2 3 4 5",
    }
    for name, row in table.items():
        assert [numerals_of(N, f"{name}-{n}")[0] for n in range(1, 12)] == list(
            map(int, row.split())
        )
    doubles = [(1, 3), (2, 4), (3, 5), (4, 1), (5, 2)] * 3
    assert [numerals_of(N, f"W-{n}") for n in range(1, 12)] == doubles[:11]
    assert all(numerals_of(N, f"P-{n}") == () for n in range(1, 12))


# --------------------------------------------------------------------------- 1 and 7


def test_scenario1_seed_rank_iv_example_and_7_immediate_resolution() -> None:
    # A = seat 1 (leads), B = seat 2, C = seat 0.
    hands = [
        ["S3-5", "P-2", "P-3", "P-4"],
        ["P-1", "S2-7", "P-6", "P-10"],
        ["S4-8", "S5-11", "P-5", "P-8"],
    ]
    stock = ["W-1", "W-2", "W-3", "W-5", "W-6"]
    state = new(hands, stock)

    state = play(state, 1, "P-1")  # no numeral
    assert state.ranks_up == ranks(1, 2, 3, 4, 5)
    assert state.hands[1] == ("P-6", "S2-7", "P-10") and state.drawn[1] == "W-1"
    assert state.turn == 2 and ups(state) == ["P-1"]

    state = play(state, 2, "S4-8")  # numeral I
    assert state.ranks_up == ranks(2, 3, 4, 5)
    assert state.drawn[2] == "W-2" and state.turn == 0

    state = play(state, 0, "S3-5")  # numeral II
    assert state.ranks_up == ranks(3, 4, 5)
    assert state.drawn[0] == "W-3" and state.turn == 1
    # Seat 1's turn begins: the card it drew joins its hand.
    assert state.hands[1] == in_order(["S2-7", "P-6", "P-10", "W-1"]) and state.drawn[1] == ""

    state = play(state, 1, "S2-7")  # numeral III
    assert state.ranks_up == ranks(4, 5)
    assert state.turn == 2 and ups(state) == ["P-1", "S4-8", "S3-5", "S2-7"]

    # B plays 11 with V: only IV is up, the face-up cards are 11 8 7 5 1; the 4th is 5:
    # C (seat 0) wins in this same turn (scenario 7) and takes the whole trick.
    state = play(state, 2, "S5-11")
    assert state.ranks_up == ranks(1, 2, 3, 4, 5)
    assert state.trick == ()
    assert state.piles == (("P-1", "S4-8", "S3-5", "S2-7", "S5-11"), (), ())
    assert state.history[-1] == TrickRecord(
        1,
        1,
        (
            Play(1, "P-1", 0, "", 0, True),
            Play(2, "S4-8", 1, "", 1, True),
            Play(0, "S3-5", 2, "", 2, True),
            Play(1, "S2-7", 3, "", 3, True),
            Play(2, "S5-11", 5, "", 5, True),
        ),
        Result.WON,
        0,
    )
    assert state.turn == state.leader == 0
    assert len(state.stock) == 77 - 12 - 5
    assert GAME.observe(state, None).scores == (5, 0, 0)


# --------------------------------------------------------------------------- 2 3 4 5


def test_scenario2_3_4_numeral_same_number_and_repeated_numeral() -> None:
    hands = [["S2-7", "S1-3", "P-9", "P-10"], ["S1-7", "S3-1", "P-2", "P-4"]]
    state = new(hands)
    state = play(state, 1, "S1-7")  # 2: numeral II while II is up: II turns down
    assert state.ranks_up == ranks(1, 3, 4, 5)
    assert ups(state) == ["S1-7"]
    state = play(state, 0, "S2-7")  # 3: a second 7 turns seat 1's 7 face down; III down
    assert state.trick[-1] == Play(0, "S2-7", 3, "S1-7", 3, True)
    assert ups(state) == ["S2-7"]  # the number of face-up cards did not grow
    assert GAME.observe(state, None).face_up == (False, True)
    assert state.ranks_up == ranks(1, 4, 5)
    state = play(state, 1, "S3-1")  # numeral III again: its rank card is already down
    assert state.trick[-1] == Play(1, "S3-1", 3, "", 0, True)
    assert state.ranks_up == ranks(1, 4, 5)
    assert ups(state) == ["S2-7", "S3-1"]
    assert state.turn == 0


def test_scenario5_double_card_names_its_numeral() -> None:
    hands = [["P-9", "P-10", "P-11", "P-8"], ["W-4", "S1-1", "P-2", "P-3"]]
    state = new(hands)
    assert GAME.legal_actions(state, 1)[:2] == (AllesAction("S1-1"), AllesAction("P-2"))
    assert AllesAction("W-4", 1) in GAME.legal_actions(state, 1)
    assert AllesAction("W-4", 4) in GAME.legal_actions(state, 1)
    refused(state, 1, AllesAction("W-4"), "numeral_required")
    refused(state, 1, AllesAction("W-4", 2), "not_its_numeral")
    refused(state, 1, AllesAction("S1-1", 1), "numeral_not_allowed")
    after = play(state, 1, "W-4", 1)
    assert after.ranks_up == ranks(2, 3, 4, 5)
    assert after.trick == (Play(1, "W-4", 1, "", 1, True),)
    after = play(state, 1, "W-4", 4)
    assert after.ranks_up == ranks(1, 2, 3, 5)


def test_a_double_card_may_name_a_numeral_whose_rank_is_down() -> None:
    hands = [["S1-4", "P-10", "P-11", "P-8"], ["W-4", "S1-1", "P-2", "P-3"]]
    state = play(new(hands), 1, "S1-1")  # I down
    state = play(state, 0, "S1-4")  # IV down
    state = play(state, 1, "W-4", 1)  # names I, already down; turns S1-4 face down
    assert state.ranks_up == ranks(2, 3, 5)
    assert state.trick[-1] == Play(1, "W-4", 1, "S1-4", 0, True)


# --------------------------------------------------------------------------- 6


def six_start() -> AllesState:
    # seat 1 leads, then 2, then 0. Only V up with the face-up cards 11 8 7 5.
    hands = [
        ["S2-7", "P-2", "P-3", "P-4"],
        ["S1-11", "S5-5", "P-6", "P-10"],
        ["S5-8", "P-9", "S1-5", "P-1"],
    ]
    state = new(hands)
    state = play(state, 1, "S1-11")  # I
    state = play(state, 2, "S5-8")  # II
    state = play(state, 0, "S2-7")  # III
    state = play(state, 1, "S5-5")  # IV: only V up, 4 face-up cards < 5: continue
    assert state.ranks_up == ranks(5)
    assert ups(state) == ["S1-11", "S5-8", "S2-7", "S5-5"]
    assert state.turn == 2 and len(state.trick) == 4
    return state


def test_scenario6_a_plain_9_decides_for_the_owner_of_the_5() -> None:
    state = play(six_start(), 2, "P-9")
    assert state.piles[1] == ("S1-11", "S5-8", "S2-7", "S5-5", "P-9")
    assert state.history[-1].result is Result.WON and state.history[-1].seat == 1
    assert state.turn == state.leader == 1
    assert state.ranks_up == ranks(1, 2, 3, 4, 5)


def test_scenario6_s1_5_makes_a_blind_trick() -> None:
    state = play(six_start(), 2, "S1-5")
    last = state.history[-1]
    assert last.plays[-1] == Play(2, "S1-5", 5, "S5-5", 5, True)
    assert last.result is Result.BLIND and last.seat == 2
    assert state.out == ("S1-11", "S5-8", "S2-7", "S5-5", "S1-5")
    assert state.piles == ((), (), ())
    assert state.turn == state.leader == 2
    assert state.ranks_up == ranks(1, 2, 3, 4, 5)


def test_winner_takes_facedown_false_sends_them_out() -> None:
    hands = [
        ["S2-7", "P-2", "P-3", "P-4"],
        ["S1-11", "S5-5", "P-6", "P-10"],
        ["S5-8", "P-9", "S1-5", "P-7"],
    ]
    options = {"winner_takes_facedown": "false"}
    state = GAME.new(options, 3, SEED, {"cards": [deck(hands)]})
    state = play(state, 1, "S1-11")
    state = play(state, 2, "P-7")  # a plain 7
    state = play(state, 0, "S2-7")  # turns it down; III
    state = play(state, 1, "S5-5")  # IV
    state = play(state, 2, "S5-8")  # II: only V up, face up 11 8 7 5 (P-7 is down)
    assert state.ranks_up == ranks(5) and len(ups(state)) == 4
    state = play(state, 0, "P-2")  # the 5th highest is this 2: seat 0 wins
    assert state.piles[0] == ("S1-11", "S2-7", "S5-5", "S5-8", "P-2")
    assert state.out == ("P-7",)


# --------------------------------------------------------------------------- 8


def test_scenario8_two_players_play_several_times_in_one_trick() -> None:
    hands = [["S3-5", "S5-11", "P-2", "P-3"], ["S4-8", "S2-7", "P-6", "P-10"]]
    state = new(hands, ["W-1", "W-2", "W-3", "W-5"])
    state = play(state, 1, "S4-8")  # I
    state = play(state, 0, "S3-5")  # II
    state = play(state, 1, "S2-7")  # III
    assert state.trick and state.hands[1] == in_order(["P-6", "P-10", "W-1"])
    assert state.drawn[1] == "W-3"
    state = play(state, 0, "S5-11")  # V: IV left, 4 face-up cards: 11 8 7 5: the 5 wins
    assert state.history[-1].seat == 0 and [p.seat for p in state.history[-1].plays] == [1, 0, 1, 0]
    assert state.piles[0] == ("S4-8", "S3-5", "S2-7", "S5-11")
    assert state.hands[0] == in_order(["P-2", "P-3", "W-2", "W-5"])


# --------------------------------------------------------------------------- 9 10


def test_scenario9_the_last_stock_card_starts_the_last_trick() -> None:
    hands = [["S3-5", "S5-11", "P-2", "P-3"], ["S4-8", "S2-7", "P-6", "P-10"]]
    state = new(hands)
    # Leave one card in the stock; the others go out of the game (conservation holds).
    rest = state.stock
    state = replace(state, stock=rest[:1], out=rest[1:])
    state = play(state, 1, "S4-8")
    assert state.stock == () and state.last_trick and state.drawn[1] == rest[0]
    state = play(state, 0, "S3-5")
    assert state.trick[-1].drew is False and state.drawn[0] == ""
    assert len(state.hands[0]) == 3
    state = play(state, 1, "S2-7")
    state = play(state, 0, "S5-11")  # decided: the game ends
    assert state.phase is Phase.OVER and GAME.to_act(state) == ()
    assert state.piles[0] == ("S4-8", "S3-5", "S2-7", "S5-11")
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.scores == (4, 0) and outcome.ranks == (1, 2)


def test_d3_every_hand_runs_out_before_the_last_trick_is_decided() -> None:
    hands = [["P-5", "P-6", "P-7", "P-8"], ["P-1", "P-2", "P-3", "P-4"]]
    state = new(hands)
    state = replace(state, stock=(), last_trick=True, out=state.stock)
    for seat, card in [(1, "P-1"), (0, "P-5"), (1, "P-2"), (0, "P-6"), (1, "P-3"), (0, "P-7")]:
        state = play(state, seat, card)
    state = play(state, 1, "P-4")
    assert state.turn == 0  # seat 0 still holds a card
    state = play(state, 0, "P-8")
    assert state.phase is Phase.OVER and state.history[-1].result is Result.UNDECIDED
    assert state.piles == ((), ()) and len(state.out) == 77 - 8 + 8


def test_skips_players_with_an_empty_hand_in_the_last_trick() -> None:
    hands = [
        ["P-5", "P-6", "P-7", "P-8"],
        ["P-1", "P-2", "P-3", "P-4"],
        ["P-9", "P-10", "P-11", "S1-1"],
    ]
    state = new(hands)
    state = replace(
        state,
        stock=(),
        last_trick=True,
        hands=(("P-5",), ("P-1", "P-2"), ("P-9",)),
        out=(*state.stock, "P-6", "P-7", "P-8", "P-3", "P-4", "P-10", "P-11", "S1-1"),
    )
    state = play(state, 1, "P-1")
    state = play(state, 2, "P-9")
    state = play(state, 0, "P-5")
    assert state.turn == 1  # seats 2 and 0 are empty now
    state = play(state, 1, "P-2")
    assert state.phase is Phase.OVER


def test_scenario10_equal_highest_scores_share_the_victory() -> None:
    outcome = Outcome.from_keys([23, 19, 23], [(23,), (19,), (23,)], False)
    assert outcome.ranks == (1, 3, 1)
    state = new(
        [
            ["P-5", "P-6", "P-7", "P-8"],
            ["P-1", "P-2", "P-3", "P-4"],
            ["P-9", "P-10", "P-11", "S1-1"],
        ]
    )
    cards = list(state.stock)
    piles = (tuple(cards[:23]), tuple(cards[23:42]), tuple(cards[42:65]))
    hands_out = [c for h in state.hands for c in h]
    over = replace(
        state,
        phase=Phase.OVER,
        stock=(),
        piles=piles,
        hands=((), (), ()),
        out=(*cards[65:], *hands_out),
    )
    result = GAME.outcome(over)
    assert result is not None
    assert result.scores == (23, 19, 23) and result.ranks == (1, 3, 1)
    assert result.utilities == (0.5, -1.0, 0.5)


def test_rest_of_stock_helper() -> None:
    assert len(rest_of_stock([["P-1", "P-2", "P-3", "P-4"]] * 1, ["P-5"])) == 73
