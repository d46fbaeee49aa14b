"""Every contract won and lost through real play, with every seat's exact points.

The deals are built so that the tricks follow from the hands alone: with ``SUIT_HANDS`` P1
holds all spades, P2 all clubs, P3 all diamonds and P4 all hearts, and the play is the
clock default (the first legal card in the stable order). Nobody can ever follow another
player's lead, so without trumps the leader takes every trick, and with trumps the holder
of the trump suit takes every trick from the first one he can trump. The seat counts 4, 5
and 6 put the sit-out seats (the dealer with 5 and more) at 0.
"""

from __future__ import annotations

import pytest
from kleurenwiezen_helpers import act, finish, new, suit

from speeltafel.server.engine.games.kleurenwiezen import (
    GAME,
    PASS,
    Contract,
    ContractKind,
    DealEnd,
    Phase,
    WiezenState,
    alone,
    ask,
    bid,
    discard,
    join,
    play,
    score_deal,
)

AB = ContractKind.ABONDANCE
KM = ContractKind.KLEINE_MISERIE
GM = ContractKind.GROTE_MISERIE
BM = ContractKind.BLOTE_MISERIE
SS = ContractKind.SOLO_SLIM


def by_position(state: WiezenState, p1: int, p2: int, p3: int, p4: int) -> tuple[int, ...]:
    """Points per seat from points per active position; every other seat 0."""
    points = [0] * state.players
    for seat, value in zip(state.active, (p1, p2, p3, p4), strict=True):
        points[seat] = value
    return tuple(points)


def played(state: WiezenState, kind: ContractKind) -> tuple[int, ...]:
    """Play the deal out and return its points (checking it was played under ``kind``)."""
    start = state
    state = finish(state)
    assert state.phase is Phase.OVER
    (result,) = state.results
    assert result.end is DealEnd.PLAYED
    assert result.contract is not None and result.contract.kind is kind
    assert result.multiplier == 1
    assert sum(result.points) == 0
    assert state.scores == result.points
    for seat in range(start.players):
        if seat not in start.active:
            assert result.points[seat] == 0
    return result.points


SEATS = pytest.mark.parametrize("seats", [4, 5, 6])


@SEATS
def test_alone_won_takes_all_tricks_and_scores_the_capped_amount(seats: int) -> None:
    state = new(seats=seats)
    state = act(state, PASS, PASS, PASS, ask("H"), alone("H"))
    assert state.contract == Contract(ContractKind.ALONE, 5, "H", (state.active[3],))
    # 13 tricks, capped at 8: X = 2 + (8 - 5) = 5, the soloist gets 3X.
    assert played(state, ContractKind.ALONE) == by_position(state, -5, -5, -5, 15)


@SEATS
def test_alone_lost_without_a_trump(seats: int) -> None:
    state = new(seats=seats)
    state = act(state, PASS, ask("S"), PASS, PASS, alone("S"))
    # P1 holds every spade and leads: P2 takes nothing, X = -(2 + 5) = -7.
    assert played(state, ContractKind.ALONE) == by_position(state, 7, -21, 7, 7)


@SEATS
def test_pair_won_rond_doubles(seats: int) -> None:
    state = new(seats=seats)
    state = act(state, ask("H"), PASS, PASS, join("H"))
    assert state.contract is not None
    assert state.contract.declarers == (state.active[0], state.active[3])
    # 13 tricks: X = (2 + 5) * 2 = 14.
    assert played(state, ContractKind.PAIR) == by_position(state, 14, -14, -14, 14)


@SEATS
def test_pair_lost(seats: int) -> None:
    state = new(seats=seats)
    state = act(state, PASS, ask("H"), join("H"), PASS)
    # P4 holds the hearts: the pair takes nothing, X = -(2 + 8) = -10.
    assert played(state, ContractKind.PAIR) == by_position(state, 10, -10, -10, 10)


@SEATS
def test_kleine_miserie_alone_won_and_lost(seats: int) -> None:
    won = act(new(seats=seats), PASS, bid(KM), PASS, PASS)
    assert won.phase is Phase.DISCARD
    assert played(won, KM) == by_position(won, -3, 9, -3, -3)
    lost = act(new(seats=seats), bid(KM), PASS, PASS, PASS)
    assert played(lost, KM) == by_position(lost, -9, 3, 3, 3)


@SEATS
def test_kleine_miserie_by_two(seats: int) -> None:
    # P1 leads and takes all 12 tricks: P1 loses, P2 wins, the others score 0.
    split = act(new(seats=seats), bid(KM), bid(KM), PASS, PASS)
    assert split.contract is not None and split.contract.declarers == split.active[:2]
    assert played(split, KM) == by_position(split, -9, 9, 0, 0)
    both = act(new(seats=seats), PASS, bid(KM), bid(KM), PASS)
    assert played(both, KM) == by_position(both, -9, 9, 9, -9)


@SEATS
def test_kleine_miserie_by_two_lost_by_both(seats: int) -> None:
    # P1 holds twelve spades and the club ace, P2 twelve clubs and the spade ace: P1's
    # spade lead forces P2's ace, and P2's club lead forces P1's.
    hands = [[*suit("S", "KQJT98765432"), "AC"], [*suit("C", "KQJT98765432"), "AS"]]
    state = act(new(hands, seats=seats), bid(KM), bid(KM), PASS, PASS)
    p1, p2, p3, p4 = state.active
    assert state.contract is not None and state.contract.declarers == (p1, p2)
    for seat, card in ((p1, "2S"), (p2, "2C"), (p3, "2D"), (p4, "2H")):
        state = GAME.apply(state, seat, discard(card))
    assert state.turn == p1
    state = act(state, play("3S"))
    assert GAME.legal_actions(state, p2) == (play("AS"),)
    state = act(state, play("AS"), play("3D"), play("3H"))
    assert state.tricks[0].winner == p2 and state.turn == p2
    state = act(state, play("3C"))
    assert GAME.to_act(state) == (p3,)
    state = act(state, play("4D"), play("4H"), play("AC"))
    assert state.tricks[1].winner == p1
    points = played(state, KM)
    assert finish(state).results[0].declarer_tricks == (11, 1)
    # Both declarers took a trick: each pays 9, each opponent gets 9 (section 9, D9).
    assert points == by_position(state, -9, -9, 9, 9)


@SEATS
def test_abondance_won_and_lost(seats: int) -> None:
    won = act(new(seats=seats), PASS, PASS, PASS, bid(AB, 9, "H"))
    assert won.turn == won.active[3], "the abondance declarer leads"
    assert played(won, AB) == by_position(won, -4, -4, -4, 12)
    # Spades are trump and P1 holds them all: P1 trumps the lead and takes everything.
    lost = act(new(seats=seats), PASS, PASS, PASS, bid(AB, 9, "S"))
    assert played(lost, AB) == by_position(lost, 4, 4, 4, -12)


@SEATS
def test_grote_miserie_won_and_lost(seats: int) -> None:
    won = act(new(seats=seats), PASS, bid(GM), PASS, PASS)
    assert played(won, GM) == by_position(won, -5, 15, -5, -5)
    lost = act(new(seats=seats), bid(GM), PASS, PASS, PASS)
    assert played(lost, GM) == by_position(lost, -15, 5, 5, 5)


@SEATS
def test_blote_miserie_won_and_lost(seats: int) -> None:
    won = act(new(seats=seats), PASS, PASS, bid(BM), PASS)
    assert played(won, BM) == by_position(won, -10, -10, 30, -10)
    lost = act(new(seats=seats), bid(BM), PASS, PASS, PASS)
    assert played(lost, BM) == by_position(lost, -30, 10, 10, 10)


@SEATS
def test_solo_slim_won_and_lost(seats: int) -> None:
    won = act(new(seats=seats), PASS, PASS, PASS, bid(SS, 0, "H"))
    assert played(won, SS) == by_position(won, -50, -50, -50, 150)
    lost = act(new(seats=seats), PASS, PASS, PASS, bid(SS, 0, "S"))
    assert played(lost, SS) == by_position(lost, 50, 50, 50, -150)


def troel_hands(second_lead_suit: str) -> list[list[str]]:
    """P2 holds three aces (troel); P1 holds the fourth, the club ace, and 12 cards of
    ``second_lead_suit`` (clubs or diamonds), which he leads to trick 2."""
    if second_lead_suit == "C":
        return [suit("C"), ["AS", "AD", *suit("H", "AKQJT987654")], suit("S", "KQJT98765432")]
    return [
        ["AC", *suit("D", "KQJT98765432")],
        ["AS", "AD", *suit("H", "AKQJT987654")],
        [*suit("S", "KQJT98765432"), "3H"],
        [*suit("C", "KQJT98765432"), "2H"],
    ]


@SEATS
def test_troel_won_with_the_fourth_aces_suit_as_trump(seats: int) -> None:
    state = new(troel_hands("C"), seats=seats)
    p1, p2 = state.active[0], state.active[1]
    assert (state.troel_holder, state.troel_aces, state.phase) == (p2, 3, Phase.TROEL_AUCTION)
    state = act(state, PASS, PASS, PASS, PASS)
    assert state.contract is not None and state.contract.declarers == (p2, p1)
    assert state.turn == p1 and GAME.legal_actions(state, p1) == (GAME.parse_action("play:AC"),)
    after_one = finish_trick(act(state, GAME.parse_action("play:AC")))
    assert after_one.trump == "" and after_one.tricks[0].winner == p1
    state = act(after_one, GAME.parse_action("play:2C"))
    assert (state.trump, state.target) == ("C", 9)
    # P1 holds every club: the pair takes all 13, X = (4 + 2 * 4) * 2 = 24.
    assert played(state, ContractKind.TROEL) == by_position(state, 24, 24, -24, -24)


@SEATS
def test_troel_with_another_trump_needs_ten(seats: int) -> None:
    state = act(new(troel_hands("D"), seats=seats), PASS, PASS, PASS, PASS)
    state = finish_trick(act(state, GAME.parse_action("play:AC")))
    state = act(state, GAME.parse_action("play:2D"))
    assert (state.trump, state.target) == ("D", 10)
    # P2 wins trick 2 with the diamond ace, P1 trumps the hearts back and keeps the lead:
    # 13 tricks for the pair, X = (4 + 2 * 3) * 2 = 20.
    assert played(state, ContractKind.TROEL) == by_position(state, 20, 20, -20, -20)


@SEATS
def test_troel_lost(seats: int) -> None:
    # P2 holds three aces, P1 the club ace and the 2 of clubs; P3 holds the other eleven
    # clubs. P1 wins trick 1 with the ace and leads the 2 of clubs: clubs are trump,
    # target 9, and P3 trumps nearly everything from there.
    hands = [
        ["AC", "2C", *suit("D", "KQJT9876543")],
        ["AS", "AD", "AH", "2D", *suit("S", "KQJT98765")],
        [*suit("C", "KQJT9876543"), "2S", "3S"],
    ]
    state = act(new(hands, seats=seats), PASS, PASS, PASS, PASS)
    p1, p2, p3, _p4 = state.active
    assert state.contract is not None and state.contract.declarers == (p2, p1)
    state = finish_trick(act(state, GAME.parse_action("play:AC")))
    assert state.tricks[0].winner == p1
    state = act(state, GAME.parse_action("play:2C"))
    assert (state.trump, state.target) == ("C", 9)
    points = played(state, ContractKind.TROEL)
    final = finish(state)
    (taken,) = final.results[0].declarer_tricks
    winners = [trick.winner for trick in final.tricks]
    assert taken == sum(w in (p1, p2) for w in winners) == 3
    assert winners[1] == p3
    # m = 3 < 9: X = -(4 + 2 * (9 - 3)) = -16 for each partner, +16 for each opponent.
    assert points == by_position(state, -16, -16, 16, 16)


def finish_trick(state: WiezenState) -> WiezenState:
    """Play the current trick to its end by the clock default."""
    count = len(state.tricks)
    while len(state.tricks) == count:
        (seat,) = GAME.to_act(state)
        state = GAME.apply(state, seat, GAME.default_action(state, seat))
    return state


def test_troel_lost_and_the_other_fixed_amounts_by_the_table() -> None:
    """The losing troel of section 9 and the rond cases not reached by play above."""
    active = (1, 2, 3, 0)

    def points(kind: ContractKind, declarers: tuple[int, ...], taken: list[int], target: int):
        return score_deal(Contract(kind, 0, "", declarers), taken, target, 1, active, 4)

    # Troel target 10, the pair takes 7: X = -(4 + 2 * 3) = -10.
    assert points(ContractKind.TROEL, (1, 2), [3, 4, 3, 3], 10) == (10, -10, -10, 10)
    # Troel target 9 made with 10: X = 4 + 2 = 6 (scenario 7).
    assert points(ContractKind.TROEL, (1, 2), [2, 5, 5, 1], 9) == (-6, 6, 6, -6)
    # Both kleine-miserie declarers take a trick: they pay 9 each.
    assert points(KM, (1, 2), [6, 1, 2, 3], 0) == (9, -9, -9, 9)
