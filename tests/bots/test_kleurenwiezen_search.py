"""The search bot on Kleurenwiezen: the worlds it samples from its decoded view are legal and
hide nothing it could not know, it answers with one of the view's actions, it is
deterministic given its seed, and its per-game tuning makes a rollout reach the end of the
deal (where the score changes) and stop there."""

from __future__ import annotations

import dataclasses
import random

import pytest

from speeltafel.bots import search_bot
from speeltafel.bots.kleurenwiezen_wiezer import WiezerBot
from speeltafel.bots.registry import heuristic_for
from speeltafel.bots.search_bot import TUNING, SearchBot, decode_view
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.kleurenwiezen import (
    GAME,
    ActionKind,
    Phase,
    WiezenAction,
    WiezenState,
)
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

    def counting_apply(world: WiezenState, mover: int, action: WiezenAction) -> WiezenState:
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


def test_bidding_is_left_to_the_heuristic_and_card_play_is_searched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kleurenwiezen's ``search_phases``: a bid is the heuristic's own choice, made without
    a single rollout; a card to play is searched (rollouts run, nothing delegated). Without
    the phase list the same bid is searched."""
    rollouts: list[int] = []
    real_rollout = SearchBot._rollout

    def counting(self: SearchBot, *args: object) -> float:
        rollouts.append(1)
        return real_rollout(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchBot, "_rollout", counting)
    heuristic = WiezerBot(0)
    bot = SearchBot(5, heuristics=heuristic_for, samples=2, budget_ms=None)
    state = GAME.new({"deals": "1"}, 4, Rng(b"phases"))
    seat = GAME.to_act(state)[0]
    view = view_of(state, seat)
    legal = list(view.legal_actions)
    assert len(legal) > 1 and state.phase is not Phase.PLAY
    chosen = bot.choose(view, legal)
    engine_legal = GAME.legal_actions(state, seat)
    expected = engine_legal[heuristic.act(GAME.observe(state, seat), engine_legal)]
    assert WIRE.action_from_proto(chosen) == expected
    assert (bot.delegated, rollouts, bot.fallbacks) == (1, [], 0)

    monkeypatch.setitem(
        TUNING,
        "kleurenwiezen",
        dataclasses.replace(TUNING["kleurenwiezen"], search_phases=frozenset()),
    )
    bot.choose(view, legal)
    assert bot.delegated == 1 and len(rollouts) == 2 * len(legal)
    monkeypatch.undo()

    rollouts.clear()
    monkeypatch.setattr(SearchBot, "_rollout", counting)
    played = _first_trick_state()
    while len(GAME.legal_actions(played, GAME.to_act(played)[0])) < 2:  # a forced card
        mover = GAME.to_act(played)[0]
        played = GAME.apply(played, mover, GAME.legal_actions(played, mover)[0])
    seat = GAME.to_act(played)[0]
    view = view_of(played, seat)
    legal = list(view.legal_actions)
    bot.choose(view, legal)
    assert bot.delegated == 1 and len(rollouts) == 2 * len(legal) and bot.last_samples == 2


def _bid_to_play(number: int) -> WiezenState | None:
    """A 4-seat deal bid by the heuristic to its first card (None: passed out)."""
    heuristic = WiezerBot(0)
    state = GAME.new({"deals": "1"}, 4, Rng(b"plausible %d" % number))
    while GAME.outcome(state) is None and state.phase is not Phase.PLAY:
        seat = GAME.to_act(state)[0]
        legal = GAME.legal_actions(state, seat)
        state = GAME.apply(state, seat, legal[heuristic.act(GAME.observe(state, seat), legal)])
    return state if state.phase is Phase.PLAY else None


def test_the_true_deal_is_plausible_and_some_sampled_deals_are_not() -> None:
    """Every seat's real hand fits the heuristic's own bids (the check never rules out
    what the bot itself would bid); of uniformly sampled worlds, some are ruled out (an
    asker dealt too few of its colour), and those that pass fit every bid."""
    heuristic = WiezerBot(0)
    accepted = rejected = 0
    for number in range(20):
        state = _bid_to_play(number)
        if state is None:
            continue
        assert all(heuristic.plausible(GAME.observe(state, s)) for s in range(4))
        me = GAME.to_act(state)[0]
        observation = GAME.observe(state, me)
        for draw in range(10):
            world = GAME.sample_world(observation, Rng(b"draw %d %d" % (number, draw)))
            ok = all(heuristic.plausible(GAME.observe(world, s)) for s in range(4) if s != me)
            accepted += ok
            rejected += not ok
            if ok:
                for event in observation.history:
                    if event.action.kind is ActionKind.ASK and event.seat != me:
                        asked = event.action.suit
                        discard = GAME.observe(world, event.seat).discard  # kleine miserie
                        dealt = (*world.hands[event.seat], discard)
                        held = [c for c in dealt if c and c[1] == asked]
                        assert len(held) >= 4
    assert accepted > 0 and rejected > 0


def test_the_search_bot_keeps_plausible_worlds(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``plausible_tries`` the worlds the bot searches are plausible ones (a draw that
    is not is drawn again); with none, some searched worlds are implausible."""
    searched: list[WiezenState] = []
    real_rollout = SearchBot._rollout

    def recording(self: SearchBot, game: object, world: WiezenState, *args: object) -> float:
        searched.append(world)
        return real_rollout(self, game, world, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchBot, "_rollout", recording)
    heuristic = WiezerBot(0)

    def implausible(tries: int) -> int:
        monkeypatch.setitem(
            TUNING,
            "kleurenwiezen",
            dataclasses.replace(TUNING["kleurenwiezen"], plausible_tries=tries),
        )
        bad = 0
        for number in range(8):
            state = _bid_to_play(number)
            if state is None:
                continue
            searched.clear()
            me = GAME.to_act(state)[0]
            view = view_of(state, me)
            SearchBot(number, heuristics=heuristic_for, samples=6, budget_ms=None).choose(
                view, list(view.legal_actions)
            )
            bad += sum(
                not all(heuristic.plausible(GAME.observe(w, s)) for s in range(4) if s != me)
                for w in {id(w): w for w in searched}.values()
            )
        return bad

    assert implausible(200) == 0
    assert implausible(0) > 0


def test_overrule_z_needs_a_sure_gain_to_leave_the_heuristic() -> None:
    """``_sure``: a gain in every world is sure, one lucky world among even ones is not,
    a single world never is, a refused action loses for sure."""
    assert search_bot._sure([[1.0, 0.0], [2.0, 0.0], [1.5, 0.0]], 0, 1, 2.0)
    assert not search_bot._sure([[9.0, 0.0], [0.0, 0.0], [0.0, 0.0]], 0, 1, 1.0)
    assert not search_bot._sure([[5.0, 0.0]], 0, 1, 0.5)
    assert search_bot._sure([[0.0, float("-inf")], [0.0, 0.0]], 0, 1, 3.0)


def test_an_unsure_search_plays_the_heuristics_card(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over card-play decisions where the search (without the guard) leaves the heuristic's
    card, an impossible ``overrule_z`` brings every one back to the heuristic's card."""
    heuristic = WiezerBot(0)
    left = kept = 0
    for number in range(12):
        state = _bid_to_play(number)
        if state is None:
            continue
        seat = GAME.to_act(state)[0]
        view = view_of(state, seat)
        legal = list(view.legal_actions)
        if len(legal) < 2:
            continue
        engine_legal = GAME.legal_actions(state, seat)
        expected = engine_legal[heuristic.act(GAME.observe(state, seat), engine_legal)]
        for z in (0.0, 1e9):
            monkeypatch.setitem(
                TUNING, "kleurenwiezen", dataclasses.replace(TUNING["kleurenwiezen"], overrule_z=z)
            )
            bot = SearchBot(number, heuristics=heuristic_for, samples=4, budget_ms=None)
            chosen = WIRE.action_from_proto(bot.choose(view, legal))
            if z == 0.0:
                left += chosen != expected
            else:
                kept += chosen == expected
                assert chosen == expected
    assert left > 0 and kept > 0
