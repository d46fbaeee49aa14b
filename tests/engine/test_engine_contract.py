"""The contract every registered game must keep, checked through the Game protocol only.

The matrix is every game x every combination of its CHOICE options x every seat count
in its declared range; combinations that ``new`` refuses with InvalidOptions are not
configurations of the game and are left out. Random playouts then check the C8 and D1-D4
properties of shared/reliability.md at every step.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speeltafel.server.engine.core import (
    EngineError,
    GameAny,
    GameOver,
    InvalidAction,
    InvalidOptions,
    OptionKind,
    Outcome,
    Rng,
)
from speeltafel.server.engine.registry import GAMES, get_game


def configurations() -> Iterator[Any]:
    for game_id in sorted(GAMES):
        game = GAMES[game_id]
        choices = [spec for spec in game.info.options if spec.kind is OptionKind.CHOICE]
        for values in itertools.product(*(spec.choices for spec in choices)):
            options = {spec.name: value for spec, value in zip(choices, values, strict=True)}
            for seats in range(game.info.min_seats, game.info.max_seats + 1):
                try:
                    game.new(options, seats, Rng(b"probe"))
                except InvalidOptions:
                    continue
                label = ",".join(f"{k}={v}" for k, v in options.items())
                yield pytest.param(game, options, seats, id=f"{game_id}[{label}]-{seats}")


CONFIGURATIONS = list(configurations())


@dataclass
class Setup:
    """One configuration with its seeds: the game's Rng and the random chooser."""

    game: GameAny
    options: dict[str, str]
    seats: int
    seed: int
    chooser: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.chooser = random.Random(self.seed)

    def rng(self) -> Rng:
        return Rng(b"contract/" + self.seed.to_bytes(8, "big"))

    def new(self) -> Any:
        return self.game.new(self.options, self.seats, self.rng())


def random_playout(setup: Setup) -> Iterator[tuple[Any, int, Any]]:
    """``(state, seat, action)`` for every step of a random game; the action is then played."""
    game, state = setup.game, setup.new()
    while to_act := game.to_act(state):
        seat = setup.chooser.choice(to_act)
        action = setup.chooser.choice(game.legal_actions(state, seat))
        yield state, seat, action
        state = game.apply(state, seat, action)
    yield state, -1, None


def assert_conserved(game: GameAny, state: Any) -> None:
    zones = game.zones(state)
    cards = sorted(card for zone in zones.values() for card in zone)
    assert cards == sorted(game.deck(state)), "cards appeared or vanished"


def error_of(game: GameAny, state: Any, seat: int, action: Any) -> tuple[str, str, str] | None:
    """How ``apply`` answers: None when accepted, else (error class, rule, message)."""
    try:
        game.apply(state, seat, action)
    except EngineError as error:
        return type(error).__name__, error.rule, error.message
    return None


# --------------------------------------------------------------------------- description


def test_the_matrix_covers_every_registered_game() -> None:
    covered = {param.values[0].info.game_id for param in CONFIGURATIONS}
    assert covered == set(GAMES)
    assert GAMES, "no game is registered"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_game_info_is_consistent(game_id: str) -> None:
    game = get_game(game_id)
    info = game.info
    assert info.game_id == game_id
    assert 1 <= info.min_seats <= info.max_seats
    assert info.rules_version >= 1
    assert len({spec.name for spec in info.options}) == len(info.options)
    for spec in info.options:
        spec.parse(spec.default)  # every default is a valid value
        if spec.kind is OptionKind.CHOICE:
            assert spec.default in spec.choices
    with pytest.raises(InvalidOptions):
        game.new({"no such option": "1"}, info.min_seats, Rng(b"x"))
    with pytest.raises(InvalidOptions):
        game.new({}, info.max_seats + 1, Rng(b"x"))
    with pytest.raises(InvalidOptions):
        game.new({}, info.min_seats - 1, Rng(b"x"))
    with pytest.raises(InvalidOptions):
        get_game(game_id + "-unknown")


# --------------------------------------------------------------------------- C8 playouts


def check_illegal_actions(
    setup: Setup, state: Any, candidates: list[Any], samples: int = 6
) -> None:
    """Actions a seat may not play now (legal for another seat, or earlier) raise EngineError."""
    game = setup.game
    to_act = game.to_act(state)
    pairs: list[tuple[int, Any]] = []
    idle = [seat for seat in range(setup.seats) if seat not in to_act]
    if idle and candidates:  # a seat not to act, playing a move that is legal for another
        pairs.append((setup.chooser.choice(idle), setup.chooser.choice(candidates)))
    if candidates:
        pairs.append((-1, setup.chooser.choice(candidates)))
        pairs.append((setup.seats, setup.chooser.choice(candidates)))
    for _ in range(samples * 4):
        if len(pairs) >= samples + 3 or not candidates:
            break
        seat = setup.chooser.randrange(setup.seats)
        action = setup.chooser.choice(candidates)
        if action not in game.legal_actions(state, seat):
            pairs.append((seat, action))
    for seat, action in pairs:
        with pytest.raises(EngineError):
            game.apply(state, seat, action)


@pytest.mark.parametrize(("game", "options", "seats"), CONFIGURATIONS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**63))
def test_random_playouts_keep_the_contract(
    game: GameAny, options: dict[str, str], seats: int, seed: int
) -> None:
    setup = Setup(game, options, seats, seed)
    start = setup.new()
    limit = game.max_actions(start)
    recent: deque[Any] = deque(maxlen=40)  # actions legal in earlier states
    played: list[tuple[int, Any]] = []
    state = start
    for state, seat, action in random_playout(setup):
        to_act = game.to_act(state)
        assert len(set(to_act)) == len(to_act)
        assert set(to_act) <= set(range(seats))
        legal_now: list[Any] = []
        sample = setup.chooser.randrange(seats)
        for s in (-1, *range(seats), seats):
            legal = game.legal_actions(state, s)
            assert len(set(legal)) == len(legal)
            assert bool(legal) == (s in to_act)
            if legal:
                assert game.default_action(state, s) in legal
            if s == sample:
                assert legal == game.legal_actions(state, s), "legal actions are not stable"
                for a in legal:
                    assert game.parse_action(game.action_text(a)) == a
            legal_now.extend(legal)
        assert_conserved(game, state)
        # Serialisation and "nothing changes the given state" at random points (the codec
        # is the slow part of a step).
        data = None
        if len(played) < 3 or not to_act or setup.chooser.random() < 0.25:
            data = game.encode(state)
            assert isinstance(data, bytes)
            decoded = game.decode(data)
            assert decoded == state
            assert game.encode(decoded) == data

        if not to_act:
            break
        assert game.outcome(state) is None
        assert len(played) < limit, "the game ran past max_actions"
        check_illegal_actions(setup, state, legal_now + list(recent))
        # Every legal action of one seat is accepted.
        probe = setup.chooser.choice(to_act)
        for a in game.legal_actions(state, probe):
            game.apply(state, probe, a)
        if data is not None:
            assert game.encode(state) == data, "a refused or probed action changed the state"
        recent.extend(legal_now)
        played.append((seat, action))

    outcome = game.outcome(state)
    assert isinstance(outcome, Outcome)
    assert len(outcome.scores) == len(outcome.ranks) == len(outcome.utilities) == seats
    assert all(1 <= rank <= seats for rank in outcome.ranks)
    assert all(-1.0 <= u <= 1.0 for u in outcome.utilities)
    assert sum(outcome.utilities) == pytest.approx(0.0)
    assert len(played) <= limit
    for seat in range(seats):
        assert game.legal_actions(state, seat) == ()
        for a in list(recent)[:5]:
            with pytest.raises(GameOver):
                game.apply(state, seat, a)

    # Determinism: the same seed and actions give equal states and equal bytes.
    replay = setup.new()
    assert game.encode(replay) == game.encode(start)
    for seat, action in played:
        replay = game.apply(replay, seat, action)
    assert replay == state
    assert game.encode(replay) == game.encode(state)


@functools.cache
def reachable_action_texts(game_id: str) -> list[str]:
    """The texts of actions met in a short random game of each configuration."""
    game = get_game(game_id)
    texts: set[str] = set()
    for params in CONFIGURATIONS:
        configured, options, seats = params.values
        if configured is game:
            playout = random_playout(Setup(game, options, seats, 7))
            for state, _, _ in itertools.islice(playout, 30):
                for seat in game.to_act(state):
                    texts.update(game.action_text(a) for a in game.legal_actions(state, seat))
    return sorted(texts)


def spliced_text(game: GameAny) -> st.SearchStrategy[str]:
    """Arbitrary text, and real action texts cut short and continued with arbitrary text."""
    real = st.sampled_from(reachable_action_texts(game.info.game_id))
    cut = st.tuples(real, st.integers(0, 12), st.text(max_size=8)).map(
        lambda t: t[0][: t[1]] + t[2]
    )
    return st.one_of(st.text(max_size=30), real, cut)


@pytest.mark.parametrize("game_id", sorted(GAMES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_parse_action_names_an_action_or_raises_invalid_action(
    game_id: str, data: st.DataObject
) -> None:
    game = get_game(game_id)
    text = data.draw(spliced_text(game), label="text")
    try:
        action = game.parse_action(text)
    except InvalidAction:
        return
    assert game.parse_action(game.action_text(action)) == action
    # Whatever it names, apply answers with an engine error or a new state, nothing else.
    configured, options, seats = next(p.values for p in CONFIGURATIONS if p.values[0] is game)
    state = configured.new(options, seats, Rng(b"parse"))
    for seat in range(seats):
        error_of(game, state, seat, action)


# --------------------------------------------------------------------------- hidden information


def check_determinize(setup: Setup, state: Any, step: int, next_actions: dict[int, Any]) -> None:
    """D1 and D3 for every seat at one step; D2 for one seat picked at random."""
    game = setup.game
    to_act = game.to_act(state)
    sample = setup.chooser.randrange(setup.seats)
    for seat in range(setup.seats):
        tag = b"%d/%d/%d" % (setup.seed, step, seat)
        world = game.determinize(state, seat, Rng(b"world A/" + tag))

        # D1: the seat cannot tell its world from the real one.
        view = game.observe(state, seat)
        assert game.observe(world, seat) == view
        assert game.to_act(world) == to_act
        assert game.legal_actions(world, seat) == game.legal_actions(state, seat)
        assert_conserved(game, world)
        worlds = [world]

        if seat == sample:
            # D2: twin worlds differing only in what the seat cannot see look the same
            # to it, down to the repr a careless log line would print.
            twin = game.determinize(state, seat, Rng(b"world B/" + tag))
            assert game.observe(twin, seat) == view
            assert repr(game.observe(twin, seat)) == repr(view)
            assert game.legal_actions(twin, seat) == game.legal_actions(state, seat)
            worlds.append(twin)
            # determinize is a function of its inputs, and its worlds serialise.
            assert game.determinize(state, seat, Rng(b"world A/" + tag)) == world
            assert game.decode(game.encode(world)) == world

        # D1: the seat's next action is legal in its world too, and as long as the public
        # view stays equal, so does the seat's own view.
        if seat in to_act:
            action = next_actions.get(seat)
            if action not in game.legal_actions(state, seat):
                action = setup.chooser.choice(game.legal_actions(state, seat))
            real_after = game.apply(state, seat, action)
            world_after = game.apply(world, seat, action)
            still = game.to_act(real_after)
            sealed = bool(still) and set(still) == set(to_act) - {seat}
            public_equal = game.observe(real_after, None) == game.observe(world_after, None)
            if sealed:  # a commitment that revealed nothing
                assert public_equal
            if public_equal:
                assert game.observe(real_after, seat) == game.observe(world_after, seat)

        # D3: the same requests get the same answers in every world the seat considers.
        candidates = list(game.legal_actions(state, seat))
        for other in to_act:
            candidates.extend(game.legal_actions(world, other))
            candidates.extend(game.legal_actions(state, other))
        for action in setup.chooser.sample(candidates, min(3, len(candidates))):
            answer = error_of(game, state, seat, action)
            for other_world in worlds:
                assert error_of(game, other_world, seat, action) == answer


def check_sealed_choices(setup: Setup, state: Any) -> None:
    """D4: while a simultaneous choice is open, a seat's sealed pick shows to nobody else."""
    game = setup.game
    to_act = game.to_act(state)
    if len(to_act) < 2:
        return
    seat = setup.chooser.choice(to_act)
    others = [s for s in range(setup.seats) if s != seat] + [None]
    seen: dict[int | None, Any] = {}
    for action in game.legal_actions(state, seat):
        after = game.apply(state, seat, action)
        still = game.to_act(after)
        if not still or seat in still:
            continue  # the commitment completed the set (or did not seal anything)
        for viewer in others:
            view = game.observe(after, viewer)
            if viewer in seen:
                assert view == seen[viewer], f"seat {viewer} sees seat {seat}'s sealed pick"
            else:
                seen[viewer] = view


@pytest.mark.parametrize(("game", "options", "seats"), CONFIGURATIONS)
def test_hidden_information_does_not_leak(
    game: GameAny, options: dict[str, str], seats: int
) -> None:
    seeds = (11, 12) if seats <= 3 else (13,)
    sealed_steps = 0
    for seed in seeds:
        setup = Setup(game, options, seats, seed)
        steps = list(random_playout(setup))
        for step, (state, _, _) in enumerate(steps):
            before = game.encode(state) if setup.chooser.random() < 0.25 else None
            pending = game.to_act(state)
            nexts: dict[int, Any] = {}  # each seat's next action in this playout
            for _, later_seat, later_action in steps[step:]:
                if later_seat in pending and later_seat not in nexts:
                    nexts[later_seat] = later_action
                if len(nexts) == len(pending):
                    break
            check_determinize(setup, state, step, nexts)
            if len(game.to_act(state)) > 1:
                sealed_steps += 1
            check_sealed_choices(setup, state)
            if before is not None:
                assert game.encode(state) == before, "determinize or apply changed the state"
    if game.info.simultaneous:
        assert sealed_steps > 0, "a simultaneous game never had several seats to act"
