"""The Kleurenwiezen double-dummy solver: its trick counts are the exact minimax of small
positions (checked by brute force over every card), its points are the engine's score of
optimal play (checked by brute force over the engine's own rules), equivalent cards are
merged only where they are equivalent, and the search bot that uses it plays legally and
within its time budget."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Sequence

import pytest

from speeltafel.bots.kleurenwiezen_solver import TrickSearch, WiezenSolver, card_index, hand_mask
from speeltafel.bots.kleurenwiezen_wiezer import WiezerBot
from speeltafel.bots.registry import heuristic_for, solver_for
from speeltafel.bots.search_bot import TUNING, SearchBot
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.kleurenwiezen import (
    GAME,
    Contract,
    ContractKind,
    Phase,
    Play,
    TrickRecord,
    WiezenState,
    play,
)
from speeltafel.server.wire.common import build_view
from speeltafel.server.wire.kleurenwiezen import WIRE


def _brute(
    hands: Sequence[int],
    leader: int,
    trick: Sequence[int],
    trump: int,
    counted: Sequence[bool],
    maximizing: Sequence[bool],
) -> int:
    """Plain minimax of the counted tricks over every legal card (no pruning, no merging)."""
    work = list(hands)
    for i, card in enumerate(trick):
        work[(leader + i) & 3] &= ~(1 << card)

    def winner(cards: Sequence[int]) -> int:
        best = 0
        for i in range(1, 4):
            card, top = cards[i], cards[best]
            if (card // 13 == top // 13 and card > top) or card // 13 == trump != top // 13:
                best = i
        return best

    def value(hands: list[int], leader: int, trick: list[int]) -> int:
        mover = (leader + len(trick)) & 3
        cards = [c for c in range(52) if hands[mover] >> c & 1]
        if not cards:
            return 0
        if trick:
            cards = [c for c in cards if c // 13 == trick[0] // 13] or cards
        results = []
        for card in cards:
            after = list(hands)
            after[mover] &= ~(1 << card)
            played = [*trick, card]
            if len(played) == 4:
                won = (leader + winner(played)) & 3
                results.append(counted[won] + value(after, won, []))
            else:
                results.append(value(after, leader, played))
        return max(results) if maximizing[mover] else min(results)

    return value(work, leader, list(trick))


def _position(
    chooser: random.Random, tricks: int
) -> tuple[list[int], int, list[int], int, list[bool], list[bool]]:
    """A random end position: ``tricks`` cards a hand, part of a trick played, a random
    trump (or none) and side; a miserie's roles (the declarer counted, the others wanting
    the count high) one time in three."""
    cards = chooser.sample(range(52), 4 * tricks)
    hands = [sum(1 << c for c in cards[i * tricks : (i + 1) * tricks]) for i in range(4)]
    trump = chooser.choice([-1, 0, 1, 2, 3])
    counted = chooser.choice([[True, False, True, False], [False, True, False, False]])
    maximizing = [not c for c in counted] if chooser.random() < 0.33 else list(counted)
    leader = chooser.randrange(4)
    trick: list[int] = []
    left = list(hands)
    for i in range(chooser.randrange(4) if tricks > 1 else 0):
        mover = (leader + i) & 3
        mine = [c for c in range(52) if left[mover] >> c & 1]
        if trick:
            mine = [c for c in mine if c // 13 == trick[0] // 13] or mine
        card = chooser.choice(mine)
        trick.append(card)
        left[mover] &= ~(1 << card)
    return hands, leader, trick, trump, counted, maximizing


@pytest.mark.parametrize("tricks", [1, 2, 3, 4])
def test_trick_search_is_the_exact_minimax(tricks: int) -> None:
    """On random positions of up to four tricks (with and without trump, a pair, a lone
    declarer, miserie roles, tricks half played) the search's count is brute force's."""
    chooser = random.Random(tricks)
    for _ in range(60 if tricks < 4 else 15):
        hands, leader, trick, trump, counted, maximizing = _position(chooser, tricks)
        search = TrickSearch(trump, counted, maximizing)
        expected = _brute(hands, leader, trick, trump, counted, maximizing)
        assert search.max_tricks(hands, leader, trick) == expected
        # Each threshold question agrees with the count, the table kept between them.
        for need in range(tricks + 1):
            assert search.at_least(hands, leader, trick, need) == (expected >= need)


def test_a_hand_made_miserie_ending() -> None:
    """Two tricks of spades, seat 1 leads, seat 0 a miserie declarer (counted; the others
    want him to take a trick). Against TS 3S, 4S 5S and 6S 7S, his 9S and 2S duck both
    tricks (2S under the first, 9S under the TS that must come); with JS instead of 9S he
    must take one: nothing left beats the jack."""
    declarer = [True, False, False, False]
    defenders = [False, True, True, True]
    others = [hand_mask(["TS", "3S"]), hand_mask(["4S", "5S"]), hand_mask(["6S", "7S"])]
    ducking = TrickSearch(-1, declarer, defenders)
    assert ducking.max_tricks([hand_mask(["9S", "2S"]), *others], 1) == 0
    caught = TrickSearch(-1, declarer, defenders)
    assert caught.max_tricks([hand_mask(["JS", "2S"]), *others], 1) == 1
    assert card_index("2S") == 0 and card_index("AH") == 51


def _engine_best(state: WiezenState, contract: Contract) -> int:
    """Brute force over the engine's rules: the first declarer's points for the deal when
    the declaring side maximizes them and the others minimize them."""
    first = contract.declarers[0]
    number = state.deal_number

    def value(state: WiezenState) -> int:
        if state.deal_number != number or GAME.outcome(state) is not None:
            return state.results[-1].points[first]
        mover = GAME.to_act(state)[0]
        results = [value(GAME.apply(state, mover, a)) for a in GAME.legal_actions(state, mover)]
        return max(results) if mover in contract.declarers else min(results)

    return value(state)


def _end_positions(count: int, tricks: int) -> list[WiezenState]:
    """States of heuristic matches at ``tricks`` cards a hand in the play, one per deal with a
    contract the solver handles."""
    heuristic = WiezerBot(0)
    found: list[WiezenState] = []
    number = 0
    while len(found) < count:
        state = GAME.new({"deals": "2"}, 4, Rng(b"end %d" % number))
        number += 1
        while GAME.outcome(state) is None and state.deal_number == 1:
            if state.phase is Phase.PLAY and len(state.hands[state.turn]) == tricks:
                if WiezenSolver().points(state, tricks) is not None:
                    found.append(state)
                break
            seat = GAME.to_act(state)[0]
            legal = GAME.legal_actions(state, seat)
            state = GAME.apply(state, seat, legal[heuristic.act(GAME.observe(state, seat), legal)])
    return found


def test_solver_points_are_the_engine_score_of_optimal_play() -> None:
    """In real deals three tricks from the end (contracts as the heuristic bids them), the
    solver's points for every seat are the engine's score when both sides play perfectly,
    found by trying every card with the engine's own rules."""
    solver = WiezenSolver()
    for state in _end_positions(8, 3):
        contract = state.contract
        assert contract is not None
        points = solver.points(state, 3)
        assert points is not None
        assert sum(points) == 0
        assert points[contract.declarers[0]] == _engine_best(state, contract)
        assert solver.points(state, 2) is None  # out of reach
    assert solver.solved >= 8


def test_solver_leaves_what_it_does_not_solve() -> None:
    """No contract (the bidding), and a two-declarer kleine miserie, get None."""
    solver = WiezenSolver()
    state = GAME.new({"deals": "1"}, 4, Rng(b"bidding"))
    assert solver.points(state, 13) is None
    for state in _end_positions(1, 5):
        double = dataclasses.replace(
            state,
            contract=Contract(ContractKind.KLEINE_MISERIE, 0, "", state.active[:2]),
            trump="",
        )
        assert solver.points(double, 13) is None


def test_representatives_merge_only_touching_cards() -> None:
    """KS and QS touch (nothing between); QS and 9S do not while JS and TS are live; 2H
    and 4H touch once 3H is played (a played card does not separate)."""
    state = GAME.new({"deals": "1"}, 4, Rng(b"reps"))
    seat = 0
    observation = GAME.observe(state, seat)
    hand = ("KS", "QS", "9S", "2H", "4H")
    observation = dataclasses.replace(observation, hand=hand, tricks=(), trick=(), discard="")
    actions = [play(card) for card in hand]
    reps = WiezenSolver.representatives(observation, actions)
    assert reps == [0, 0, 2, 3, 4]
    record = TrickRecord(1, (Play(1, "3H"), Play(2, "5H"), Play(3, "6H"), Play(0, "7H")), "", 1)
    observation = dataclasses.replace(observation, tricks=(record,))
    assert WiezenSolver.representatives(observation, actions) == [0, 0, 2, 3, 3]


def _view(state: WiezenState, seat: int, clock_ms: int = 0) -> common_pb2.View:
    now = int(time.time() * 1000)
    return build_view(
        WIRE,
        match_id="m",
        seat=seat,
        version=1,
        status="running",
        seats=state.players,
        commitment="c",
        observation=GAME.observe(state, seat),
        to_act=GAME.to_act(state),
        legal_actions=GAME.legal_actions(state, seat),
        move_clock_ms=clock_ms,
        deadline_ms=now + clock_ms if clock_ms else 0,
        now_ms=now,
        outcome=None,
    )


def test_search_bot_with_the_solver_plays_legally_and_in_time() -> None:
    """A match of the registered search bot (solver on, its time budget) in one seat, with a
    move clock: every answer is one of the view's legal actions, card play is searched, and
    no decision overshoots its budget by more than a rollout's worth."""
    assert TUNING["kleurenwiezen"].exact_reach > 0
    bot = SearchBot(3, heuristics=heuristic_for, solvers=solver_for, budget_ms=20.0)
    heuristic = WiezerBot(0)
    state = GAME.new({"deals": "1"}, 4, Rng(b"legal in time"))
    searched = 0
    slowest = 0.0
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        if seat == 2:
            view = _view(state, seat, clock_ms=3000)
            legal = list(view.legal_actions)
            started = time.perf_counter()
            chosen = bot.choose(view, legal)
            took = time.perf_counter() - started
            assert any(chosen is action for action in legal)
            action = WIRE.action_from_proto(chosen)
            assert action in GAME.legal_actions(state, seat)
            if state.phase is Phase.PLAY and len(legal) > 1:
                searched += 1
                slowest = max(slowest, took - bot.budget_seconds(view))
        else:
            legal_actions = GAME.legal_actions(state, seat)
            action = legal_actions[heuristic.act(GAME.observe(state, seat), legal_actions)]
        state = GAME.apply(state, seat, action)
    assert bot.fallbacks == 0
    assert slowest < 0.5  # a rollout and its solve on a loaded machine
    assert searched > 0 or state.results[-1].contract is None


def test_a_rollout_within_reach_is_the_solvers_exact_value() -> None:
    """Three tricks from the end a rollout plays the action and takes the solver's points at
    once (no card of the playout policy): its value is the seat's exact points minus half
    the others' mean, the same for every playout seed."""
    bot = SearchBot(4, heuristics=heuristic_for, solvers=solver_for, budget_ms=None)
    heuristic = WiezerBot(0)
    solver = WiezenSolver()
    for state in _end_positions(3, 3):
        seat = state.turn
        for action in GAME.legal_actions(state, seat):
            points = solver.points(GAME.apply(state, seat, action), 3)
            assert points is not None
            others = [p for s, p in enumerate(points) if s != seat]
            expected = points[seat] - 0.5 * sum(others) / len(others)
            values = [bot._rollout(GAME, state, seat, action, heuristic, n) for n in range(3)]
            assert values == [pytest.approx(expected)] * 3
