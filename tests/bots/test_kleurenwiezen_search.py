"""The search bot on Kleurenwiezen: the worlds it samples from its decoded view are legal and
hide nothing it could not know, it answers with one of the view's actions, it is
deterministic given its seed, and its per-game tuning makes a rollout reach the end of the
deal (where the score changes) and stop there."""

from __future__ import annotations

import random

import pytest

from speeltafel.bots import search_bot
from speeltafel.bots.kleurenwiezen_wiezer import WiezerBot
from speeltafel.bots.registry import heuristic_for
from speeltafel.bots.search_bot import TUNING, SearchBot, decode_view
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.kleurenwiezen import GAME, ActionKind, Phase, WiezenState
from speeltafel.server.wire.common import build_view
from speeltafel.server.wire.kleurenwiezen import WIRE


def view_of(state: WiezenState, seat: int) -> common_pb2.View:
    """The view the server would send ``seat`` (built by the server's wire code)."""
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
        move_clock_ms=0,
        deadline_ms=0,
        now_ms=0,
        outcome=None,
    )


@pytest.mark.parametrize("seats", [4, 5, 6])
def test_search_worlds_are_legal_and_leak_free(seats: int) -> None:
    """At every step of a heuristic match, for every seat: the view decodes to the seat's
    observation, and a world sampled from it shows the seat the same, offers the same legal
    actions, keeps all 52 cards, and deals the other hands anew."""
    heuristic = WiezerBot(seats)
    state = GAME.new({"deals": "2"}, seats, Rng(b"worlds %d" % seats))
    checked = moved = 0
    while GAME.outcome(state) is None:
        for seat in state.active:
            observation = decode_view(view_of(state, seat))
            assert observation == GAME.observe(state, seat)
            world = GAME.sample_world(observation, Rng(b"w %d %d" % (checked, seat)))
            assert GAME.observe(world, seat) == observation
            assert GAME.legal_actions(world, seat) == GAME.legal_actions(state, seat)
            assert sorted(c for cards in GAME.zones(world).values() for c in cards) == sorted(
                GAME.deck(state)
            )
            moved += world.hands != state.hands
            checked += 1
        mover = GAME.to_act(state)[0]
        legal = GAME.legal_actions(state, mover)
        state = GAME.apply(state, mover, legal[heuristic.act(GAME.observe(state, mover), legal)])
    assert moved > checked // 2


def test_search_bot_answers_with_a_view_action_deterministically() -> None:
    def choices(seed: int) -> list[str]:
        bot = SearchBot(seed, heuristics=heuristic_for, samples=2, budget_ms=None)
        heuristic = WiezerBot(0)
        state = GAME.new({"deals": "1"}, 4, Rng(b"determinism"))
        played = []
        for _ in range(24):  # the bidding and the first tricks
            seat = GAME.to_act(state)[0]
            view = view_of(state, seat)
            legal = list(view.legal_actions)
            if seat == 1:
                chosen = bot.choose(view, legal)
                assert any(chosen is action for action in legal)
                action = WIRE.action_from_proto(chosen)
                played.append(str(action))
            else:
                engine_legal = GAME.legal_actions(state, seat)
                action = engine_legal[heuristic.act(GAME.observe(state, seat), engine_legal)]
            state = GAME.apply(state, seat, action)
            if GAME.outcome(state) is not None:
                break
        assert bot.fallbacks == 0
        return played

    first = choices(7)
    assert len(first) >= 3
    assert first == choices(7)


def _first_trick_state() -> WiezenState:
    """A 4-seat match of two deals at the first card of deal 1, with a contract the heuristic
    bot reached (the deal's end is not the match's)."""
    heuristic = WiezerBot(0)
    for number in range(40):
        state = GAME.new({"deals": "2"}, 4, Rng(b"to play %d" % number))
        while GAME.outcome(state) is None and state.phase is not Phase.PLAY:
            seat = GAME.to_act(state)[0]
            legal = GAME.legal_actions(state, seat)
            state = GAME.apply(state, seat, legal[heuristic.act(GAME.observe(state, seat), legal)])
        if state.phase is Phase.PLAY:
            return state
    raise AssertionError("no deal reached play")


def test_a_rollout_plays_to_the_end_of_the_deal_and_stops_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With Kleurenwiezen's tuning a rollout from the first card is worth the deal's points;
    without it (the default horizon of two rounds) it ends before any score changes."""
    state = _first_trick_state()
    seat = GAME.to_act(state)[0]
    plays = [a for a in GAME.legal_actions(state, seat) if a.kind is ActionKind.PLAY]
    bot = SearchBot(1, heuristics=heuristic_for, budget_ms=None)
    heuristic = WiezerBot(1)
    applied: list[int] = []
    real_apply = GAME.apply

    def counting_apply(world: WiezenState, mover: int, action: object) -> WiezenState:
        applied.append(mover)
        return real_apply(world, mover, action)

    monkeypatch.setattr(GAME, "apply", counting_apply)
    values = [bot._rollout(GAME, state, seat, plays[0], heuristic, n) for n in range(4)]
    # Every card of the deal was played (52 or 48 after kleine-miserie discards), few more.
    per_rollout = len(applied) / 4
    cards = sum(len(hand) for hand in state.hands)
    assert cards <= per_rollout <= cards + 4
    assert any(value != 0 for value in values)
    applied.clear()
    monkeypatch.setitem(TUNING, "kleurenwiezen", search_bot.Tuning())
    short = [bot._rollout(GAME, state, seat, plays[0], heuristic, n) for n in range(4)]
    assert short == [0.0] * 4
    assert len(applied) == 4 * (bot.horizon + 1) * 4


def test_the_tuning_scales_the_budget_for_this_game_only() -> None:
    bot = SearchBot(1, heuristics=heuristic_for, budget_ms=30.0)
    state = GAME.new({}, 4, Rng(b"budget"))
    scale = TUNING["kleurenwiezen"].budget_scale
    assert bot.budget_seconds(view_of(state, 0)) == pytest.approx(0.03 * scale)
    assert bot.budget_seconds(common_pb2.View(game="take5", seat=0)) == pytest.approx(0.03)
    unlimited = SearchBot(1, heuristics=heuristic_for, budget_ms=None)
    assert unlimited.budget_seconds(view_of(state, 0)) == float("inf")


def test_search_bot_plays_a_whole_match_legally() -> None:
    """A short match (one deal at five seats) with the search bot in two seats: every answer
    is legal and searched (no fallback without a time limit)."""
    chooser = random.Random(3)
    bots = {0: SearchBot(1, heuristics=heuristic_for, samples=2, budget_ms=None)}
    bots[3] = SearchBot(2, heuristics=heuristic_for, samples=2, budget_ms=None)
    state = GAME.new({"deals": "1"}, 5, Rng(b"whole"))
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        if seat in bots:
            view = view_of(state, seat)
            action = WIRE.action_from_proto(bots[seat].choose(view, list(view.legal_actions)))
        else:
            action = chooser.choice(GAME.legal_actions(state, seat))
        state = GAME.apply(state, seat, action)
    assert all(bot.fallbacks == 0 for bot in bots.values())
