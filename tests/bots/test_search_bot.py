"""The search bot: the worlds it samples from its decoded view (legal, leak-free), its
legality and time budget, and its strength, all in-process (the engine drives the match;
every view the bot sees is built by the server's own wire code)."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence

import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.bots.registry import heuristic_for, make_bot
from speeltafel.bots.search_bot import SearchBot, decode_view
from speeltafel.bots.take5_gap import GapBot
from speeltafel.sdk.runner import Bot
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.take5 import GAME, Phase, Take5State
from speeltafel.server.wire.common import build_view
from speeltafel.server.wire.registry import wire_for

WIRE = wire_for("take5")


def view_of(
    state: Take5State,
    seat: int | None,
    version: int = 1,
    *,
    move_clock_ms: int = 0,
    remaining_ms: int = 0,
) -> common_pb2.View:
    """The view the server would send ``seat`` (built by the server's wire code)."""
    now = 1_700_000_000_000
    outcome = GAME.outcome(state)
    return build_view(
        WIRE,
        match_id="m",
        seat=seat,
        version=version,
        status="running" if outcome is None else "finished",
        seats=state.seats,
        commitment="c",
        observation=GAME.observe(state, seat),
        to_act=GAME.to_act(state),
        legal_actions=GAME.legal_actions(state, seat) if seat is not None else (),
        move_clock_ms=move_clock_ms,
        deadline_ms=now + remaining_ms if move_clock_ms else 0,
        now_ms=now,
        outcome=outcome,
    )


def play_match(
    bots: Sequence[Bot], seed: int, options: dict[str, str] | None = None
) -> tuple[int, ...]:
    """One match driven by the engine; each bot answers the view its seat would get.
    Returns the final scores (heads per seat)."""
    state = GAME.new(options or {}, len(bots), Rng(seed.to_bytes(8, "big")))
    version = 1
    while (outcome := GAME.outcome(state)) is None:
        seat = GAME.to_act(state)[0]
        view = view_of(state, seat, version)
        legal = list(view.legal_actions)
        chosen = bots[seat].choose(view, legal)
        assert isinstance(chosen, common_pb2.Action)
        assert chosen in legal
        state = GAME.apply(state, seat, WIRE.action_from_proto(chosen))
        version += 1
    return outcome.scores


def search(seed: int, *, samples: int = 16, budget_ms: float | None = 30.0) -> SearchBot:
    """A search bot with Take 5's heuristic as its playout policy (as the registry makes)."""
    return SearchBot(seed, heuristics=heuristic_for, samples=samples, budget_ms=budget_ms)


def _sorted_cards(zones: dict[str, tuple[str, ...]]) -> list[str]:
    return sorted(card for cards in zones.values() for card in cards)


# --------------------------------------------------------------------------- (a) worlds

WORLD_CASES = [
    ("trial", 2, 6),
    ("trial", 3, 6),
    ("trial", 4, 6),
    ("full", 2, 3),
    ("full", 3, 3),
    ("full", 4, 3),
    ("full", 10, 1),
]


@pytest.mark.parametrize(("edition", "seats", "matches"), WORLD_CASES)
def test_search_worlds_are_legal_and_leak_free(edition: str, seats: int, matches: int) -> None:
    """At every step of random matches, for every seat: the view decodes to the seat's own
    observation, and every world ``sample_world`` draws from it shows the seat exactly what
    it saw, offers it the view's legal actions in the view's order, conserves the deck, and
    holds the hidden cards in a different place for some draw (they are re-dealt, not read
    from the real state)."""
    chooser = random.Random(f"{edition}/{seats}")
    checked = moved = 0
    seen = set()  # (phase, some seats committed)
    for match in range(matches):
        real = GAME.new({"edition": edition, "deals": "2"}, seats, Rng(bytes([match, seats]) * 8))
        version = 1
        while True:
            seen.add((real.phase, any(c is not None for c in real.selected)))
            for seat in range(seats):
                view = view_of(real, seat, version)
                observation = decode_view(view)
                assert observation == GAME.observe(real, seat)
                for draw in range(2):
                    rng = Rng(f"{match}/{version}/{seat}/{draw}".encode())
                    world = GAME.sample_world(observation, rng)
                    assert GAME.observe(world, seat) == GAME.observe(real, seat)
                    legal = GAME.legal_actions(world, seat)
                    assert legal == GAME.legal_actions(real, seat)
                    assert [WIRE.action_to_proto(a) for a in legal] == list(view.legal_actions)
                    assert GAME.to_act(world) == GAME.to_act(real)
                    assert _sorted_cards(dict(GAME.zones(world))) == sorted(GAME.deck(real))
                    moved += world.hands != real.hands
                checked += 1
            if GAME.outcome(real) is not None:
                break
            seat = chooser.choice(GAME.to_act(real))
            real = GAME.apply(real, seat, chooser.choice(GAME.legal_actions(real, seat)))
            version += 1
        assert real.phase is Phase.OVER
    assert checked > matches * seats * 10
    assert moved > checked  # the hidden cards really are dealt anew
    # Every kind of moment was checked: a fresh turn, sealed cards pending, a row choice.
    assert {(Phase.SELECT, False), (Phase.SELECT, True), (Phase.ROW_CHOICE, False)} <= seen


def test_decode_view_refuses_what_it_cannot_search() -> None:
    state = GAME.new({}, 3, Rng(b"refuse"))
    with pytest.raises(ValueError, match="spectator"):
        decode_view(view_of(state, None))
    with pytest.raises(ValueError, match="does not know"):
        decode_view(common_pb2.View(seat=0, game="another"))


# --------------------------------------------------------------------------- (b) legal, in time


def test_search_bot_plays_legal_actions_within_its_budget() -> None:
    """Every answer is one of the given action messages (the very object), and the median
    decision stays far inside the budget (a loose bound: budgets are behaviour, not
    benchmarks on a loaded machine)."""
    budget_ms = 30.0
    times: list[float] = []
    searched = 0
    for seats, edition in ((2, "trial"), (4, "trial"), (5, "full")):
        bots = [search(seats * 10 + s, budget_ms=budget_ms) for s in range(seats)]
        state = GAME.new({"edition": edition, "deals": "1"}, seats, Rng(bytes([seats]) * 8))
        version = 1
        while GAME.outcome(state) is None:
            seat = GAME.to_act(state)[0]
            # A generous move clock: the budget, not the clock, limits the search.
            view = view_of(state, seat, version, move_clock_ms=30_000, remaining_ms=30_000)
            legal = list(view.legal_actions)
            started = time.perf_counter()
            chosen = bots[seat].choose(view, legal)
            times.append(time.perf_counter() - started)
            assert any(chosen is action for action in legal)
            searched += bots[seat].last_samples > 0 or len(legal) == 1
            state = GAME.apply(state, seat, WIRE.action_from_proto(chosen))
            version += 1
        assert all(bot.fallbacks == 0 for bot in bots)
    assert statistics.median(times) < 10 * budget_ms / 1000
    assert searched == len(times)


def test_search_bot_caps_its_budget_by_the_clock() -> None:
    state = GAME.new({}, 2, Rng(b"clock"))
    bot = search(1, budget_ms=10_000)
    assert bot.budget_seconds(view_of(state, 0)) == 10.0  # no deadline: the own budget
    tight = view_of(state, 0, move_clock_ms=30_000, remaining_ms=40)
    assert bot.budget_seconds(tight) == pytest.approx(0.004)
    started = time.perf_counter()
    chosen = bot.choose(tight, list(tight.legal_actions))
    assert time.perf_counter() - started < 0.2
    assert chosen in tight.legal_actions
    assert 1 <= bot.last_samples < bot.samples or bot.fallbacks == 1
    # No time left at all: it still answers, with the heuristic's card.
    expired = view_of(state, 0, move_clock_ms=30_000, remaining_ms=0)
    chosen = bot.choose(expired, list(expired.legal_actions))
    assert chosen in expired.legal_actions and bot.last_samples == 0


def test_search_bot_is_deterministic_given_its_seed() -> None:
    def choices(seed: int) -> list[str]:
        bot = search(seed, samples=4, budget_ms=None)
        state = GAME.new({"deals": "1"}, 3, Rng(b"same"))
        played = []
        while GAME.outcome(state) is None:
            seat = GAME.to_act(state)[0]
            if seat == 0:
                view = view_of(state, 0)
                action = WIRE.action_from_proto(bot.choose(view, list(view.legal_actions)))
            else:
                action = GAME.default_action(state, seat)
            played.append(str(action))
            state = GAME.apply(state, seat, action)
        return played

    assert choices(7) == choices(7)


def test_search_bot_plays_any_other_game_at_random() -> None:
    view = common_pb2.View(seat=0, game="another")
    legal = [common_pb2.Action(), common_pb2.Action()]
    chosen = SearchBot(3).choose(view, legal)
    assert any(chosen is action for action in legal)


def test_search_is_registered() -> None:
    assert isinstance(make_bot("search", 1), SearchBot)


# --------------------------------------------------------------------------- (c) strength


def _series(opponent: type[RandomBot] | type[GapBot], matches: int) -> tuple[int, int]:
    """Two-seat matches of a seeded, time-unlimited search bot against ``opponent``, seats
    alternating; returns (search heads, opponent heads) in total. Deterministic."""
    search_heads = other_heads = 0
    for number in range(matches):
        search_seat = number % 2
        bots: list[Bot] = [opponent(number), opponent(number)]
        bots[search_seat] = search(number, samples=8, budget_ms=None)
        scores = play_match(bots, 500 + number)
        search_heads += scores[search_seat]
        other_heads += scores[1 - search_seat]
    return search_heads, other_heads


def test_search_bot_takes_far_fewer_heads_than_random() -> None:
    search_heads, random_heads = _series(RandomBot, 10)
    print(f"10 matches: search {search_heads} heads, random {random_heads}")
    assert search_heads < 0.6 * random_heads


def test_search_bot_is_not_weaker_than_gap() -> None:
    search_heads, gap_heads = _series(GapBot, 20)
    print(f"20 matches: search {search_heads} heads, gap {gap_heads}")
    assert search_heads < gap_heads
