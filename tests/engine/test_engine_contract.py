"""The contract every registered game must keep, checked through the Game protocol only.

The games are every registered game plus the toy game of ``toy_game.py`` (registered
here only), which uses what Take 5 does not: list options, an automatic option, tie-break
keys, two named decks with a partial reshuffle, and a seat acting over two steps.

The matrix is every game x every combination of its CHOICE options x every seat count
in its declared range; combinations that ``new`` refuses with InvalidOptions are not
configurations of the game and are left out. A second matrix varies one option at a time
over every kind: each bool both ways, each int at its minimum, default and maximum (and 0
when automatic), each choice, each list at its default and at variants. Random playouts
then check the C8 and D1-D4 properties of shared/reliability.md at every step.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import random
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import toy_game  # tests/engine is on sys.path (pytest rootdir-relative import)
from hypothesis import given, settings
from hypothesis import strategies as st

from speeltafel.server.engine.core import (
    EngineError,
    GameAny,
    GameOver,
    InvalidAction,
    InvalidOptions,
    OptionKind,
    OptionSpec,
    Outcome,
    Rng,
)
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.engine.registry import get_game as registered_game

CONTRACT_GAMES: dict[str, GameAny] = {**GAMES, toy_game.GAME.info.game_id: toy_game.GAME}


def get_game(game_id: str) -> GameAny:
    return CONTRACT_GAMES[game_id]


def configurations() -> Iterator[Any]:
    for game_id in sorted(CONTRACT_GAMES):
        game = CONTRACT_GAMES[game_id]
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


def option_variants(spec: OptionSpec) -> list[str]:
    """The texts of ``spec`` the contract plays: every kind of option, at its edges."""
    if spec.kind is OptionKind.BOOL:
        return ["true", "false"]
    if spec.kind is OptionKind.CHOICE:
        return list(spec.choices)
    if spec.kind is OptionKind.INT:
        edges = [spec.minimum, int(spec.default), spec.maximum, 0 if spec.automatic else None]
        return list(dict.fromkeys(str(v) for v in edges if v is not None))
    default = list(spec.parse(spec.default))  # type: ignore[arg-type]
    items: list[Any] = (
        list(spec.choices) if spec.kind is OptionKind.CHOICE_LIST else [spec.minimum, spec.maximum]
    )
    variants = [default]
    if default:
        variants += [[item] * len(default) for item in items]
        variants.append(default[::-1])
    if len(default) > spec.min_items:
        variants.append(default[:-1])
    if spec.max_items is not None and len(default) < spec.max_items:
        variants.append([*default, default[0] if default else items[0]])
    texts = [",".join(str(item) for item in variant) for variant in variants]
    return list(dict.fromkeys(texts))


def variant_configurations() -> Iterator[Any]:
    """One option at a time at each of its variants, at the fewest seats that take it."""
    for game_id in sorted(CONTRACT_GAMES):
        game = CONTRACT_GAMES[game_id]
        for spec in game.info.options:
            for text in option_variants(spec):
                if text == spec.default:
                    continue
                options = {spec.name: text}
                low, high = game.info.seats_for(options)
                for seats in range(low, high + 1):
                    try:
                        game.new(options, seats, Rng(b"probe"))
                    except InvalidOptions:
                        continue
                    label = f"{spec.name}={text}"
                    yield pytest.param(game, options, seats, id=f"{game_id}[{label}]-{seats}")
                    break


VARIANT_CONFIGURATIONS = list(variant_configurations())


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
    assert covered == set(CONTRACT_GAMES)
    assert GAMES, "no game is registered"
    assert set(GAMES) < set(CONTRACT_GAMES)


def test_the_variant_matrix_plays_every_value_of_every_option() -> None:
    """Every bool, int edge and choice is a value some seat count accepts; every list
    option has at least one accepted variant besides its default."""
    played = {
        (param.values[0].info.game_id, *next(iter(param.values[1].items())))
        for param in VARIANT_CONFIGURATIONS
    }
    for game_id, game in CONTRACT_GAMES.items():
        for spec in game.info.options:
            others = [text for text in option_variants(spec) if text != spec.default]
            accepted = [text for text in others if (game_id, spec.name, text) in played]
            if spec.kind in (OptionKind.INT_LIST, OptionKind.CHOICE_LIST):
                assert accepted, f"{game_id}: no variant of list option {spec.name} is playable"
            else:
                assert accepted == others, f"{game_id}: {spec.name} refuses {others}"


@pytest.mark.parametrize("game_id", sorted(CONTRACT_GAMES))
def test_game_info_is_consistent(game_id: str) -> None:
    game = get_game(game_id)
    info = game.info
    assert info.game_id == game_id
    assert 1 <= info.min_seats <= info.max_seats
    assert info.rules_version >= 1
    assert info.score_name
    assert isinstance(info.lower_is_better, bool)
    assert info.decks, "every card game declares its decks"
    assert len({deck.name for deck in info.decks}) == len(info.decks)
    assert len({spec.name for spec in info.options}) == len(info.options)
    for spec in info.options:
        value = spec.parse(spec.default)  # every default is a valid value
        assert spec.text(value) == spec.default, "a default is written canonically"
        if spec.kind is OptionKind.CHOICE:
            assert spec.default in spec.choices
    with pytest.raises(InvalidOptions):
        game.new({"no such option": "1"}, info.min_seats, Rng(b"x"))
    with pytest.raises(InvalidOptions):
        game.new({}, info.max_seats + 1, Rng(b"x"))
    with pytest.raises(InvalidOptions):
        game.new({}, info.min_seats - 1, Rng(b"x"))
    with pytest.raises(InvalidOptions):
        registered_game(game_id + "-unknown")


@pytest.mark.parametrize("game_id", sorted(CONTRACT_GAMES))
def test_presets_are_checked_and_the_plain_form_means_the_first_deck(game_id: str) -> None:
    game = get_game(game_id)
    info = game.info
    seats = info.seats_for({})[0]
    with pytest.raises(InvalidOptions):
        game.new({}, seats, Rng(b"x"), {"no such deck": [["1"]]})
    with pytest.raises(InvalidOptions):
        game.new({}, seats, Rng(b"x"), {info.decks[0].name: [["not a card"]]})
    with pytest.raises(InvalidOptions):
        game.new({}, seats, Rng(b"x"), [["not a card"]])
    # Presets are orders, top card first: a deck of one card is never a whole deck.
    with pytest.raises(InvalidOptions):
        game.new({}, seats, Rng(b"x"), {info.decks[-1].name: [[]]})


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
        with pytest.raises(EngineError) as refused:
            game.apply(state, seat, action)
        assert refused.value.rule != "not_legal", "a refusal names the rule it applies"


def check_observation_contract(game: GameAny, state: Any, seats: int) -> None:
    """Every observation has a phase and a history; a seat's observation is the
    spectator's plus exactly its ``private_fields``."""
    public = game.observe(state, None)
    private = set(type(public).private_fields) | {"seat"}
    names = [f.name for f in dataclasses.fields(public)]
    assert {"phase", "history", "seat"} <= set(names)
    assert public.seat is None
    assert isinstance(public.phase.value, str)
    hash(public)  # a frozen value, tuples inside
    for seat in range(seats):
        view = game.observe(state, seat)
        assert type(view) is type(public)
        assert view.seat == seat
        for name in names:
            if name not in private:
                assert getattr(view, name) == getattr(public, name), (
                    f"field {name} differs between seat {seat} and a spectator but is not "
                    "declared in private_fields"
                )


@pytest.mark.parametrize(("game", "options", "seats"), CONFIGURATIONS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**63))
def test_random_playouts_keep_the_contract(
    game: GameAny, options: dict[str, str], seats: int, seed: int
) -> None:
    play_and_check(Setup(game, options, seats, seed))


@pytest.mark.parametrize(("game", "options", "seats"), VARIANT_CONFIGURATIONS)
def test_every_option_value_keeps_the_contract(
    game: GameAny, options: dict[str, str], seats: int
) -> None:
    play_and_check(Setup(game, options, seats, 5))
    check_hidden_information(Setup(game, options, seats, 6), fraction=0.1)


def play_and_check(setup: Setup) -> None:
    """One random playout with the contract checked at every step."""
    game, seats = setup.game, setup.seats
    start = setup.new()
    limit = game.max_actions(start)
    assert isinstance(limit, int) and 0 < limit < 10**7, "max_actions is a finite bound"
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
        check_observation_contract(game, state, seats)
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


@pytest.mark.parametrize("game_id", sorted(CONTRACT_GAMES))
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

        # D1: the seat cannot tell its world from the real one, which is sampled from its
        # observation alone.
        view = game.observe(state, seat)
        assert game.sample_world(view, Rng(b"world A/" + tag)) == world
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
            # A spectator's world keeps everything public.
            public = game.observe(state, None)
            spectators_world = game.sample_world(public, Rng(b"world C/" + tag))
            assert game.observe(spectators_world, None) == public
            assert_conserved(game, spectators_world)
            check_replay(game, state, spectators_world, None)
            # D1: the history the seat saw replays in its world, step by step.
            check_replay(game, state, world, seat)

        # D1: the seat's next action is legal in its world too, and as long as the public
        # view stays equal, so does the seat's own view; except where chance shows the
        # seat new cards: a step within a turn of several (a card drawn from a hidden
        # pile) and the action that ends a deal (the next deal's hands).
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
            own_turn_goes_on = to_act == still == (seat,)
            new_deal = not game.rewind(real_after)[1]
            if public_equal and not own_turn_goes_on and not new_deal:
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


def check_replay(game: GameAny, real: Any, world: Any, seat: int | None) -> None:
    """D1: rewound to the start of the deal, the world replays its history to itself, every
    action legal, and at every step ``seat`` sees what it saw in the real match."""
    real_start, real_actions = game.rewind(real)
    start, actions = game.rewind(world)
    assert [s for s, _ in actions] == [s for s, _ in real_actions]
    assert game.observe(start, seat) == game.observe(real_start, seat)
    for (acting, action), (_, real_action) in zip(actions, real_actions, strict=True):
        assert action in game.legal_actions(start, acting)
        start = game.apply(start, acting, action)
        real_start = game.apply(real_start, acting, real_action)
        assert game.observe(start, seat) == game.observe(real_start, seat)
    assert start == world
    assert real_start == real


def check_rewind_of_the_real_match(
    game: GameAny, steps: list[tuple[Any, int, Any]], step: int
) -> None:
    """``rewind`` of a real state gives the state where its deal started and the actions
    played since (commitments may be reordered into seat order)."""
    start, actions = game.rewind(steps[step][0])
    begun = [i for i in range(step, -1, -1) if steps[i][0] == start]
    assert begun, "rewind does not lead to a state of the match"
    played = sorted((s, game.action_text(a)) for _, s, a in steps[begun[0] : step])
    assert sorted((s, game.action_text(a)) for s, a in actions) == played


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
        sealed_steps += check_hidden_information(
            Setup(game, options, seats, seed), most_steps=MOST_CHECKED_STEPS
        )
    if game.info.simultaneous and game.info.game_id in SEALED_STEP_TESTED_ELSEWHERE:
        # Random play almost never reaches this game's only sealed step: its own test
        # builds that step and checks D4 there; make sure that test is still there.
        path, name = SEALED_STEP_TESTED_ELSEWHERE[game.info.game_id]
        assert f"def {name}(" in (Path(__file__).parent / path).read_text()
    elif game.info.simultaneous:
        assert sealed_steps > 0, "a simultaneous game never had several seats to act"


# Games whose sealed simultaneous step random play reaches too rarely for the test above:
# the test of their own that builds such a step and checks that it stays sealed.
SEALED_STEP_TESTED_ELSEWHERE = {
    # Only a kleine miserie (a bid random bidding almost never makes) has sealed discards.
    "kleurenwiezen": (
        "kleurenwiezen/test_kleurenwiezen_properties.py",
        "test_sealed_discards_stay_hidden",
    ),
}


# A playout longer than this has that many of its steps checked, picked at random: each
# check replays the history so far, so a whole Kleurenwiezen match of six seats (24 deals,
# about 1,400 steps) costs the square of its length.
MOST_CHECKED_STEPS = 500


def check_hidden_information(
    setup: Setup, fraction: float = 1.0, most_steps: int | None = None
) -> int:
    """D1-D4 at (a ``fraction`` of, and about ``most_steps`` of) the steps of one random
    playout; the number of steps with several seats to act."""
    game = setup.game
    sealed_steps = 0
    steps = list(random_playout(setup))
    if most_steps is not None and len(steps) > most_steps:
        fraction = min(fraction, most_steps / len(steps))
    for step, (state, _, _) in enumerate(steps):
        if fraction < 1.0 and setup.chooser.random() >= fraction:
            continue
        before = game.encode(state) if setup.chooser.random() < 0.25 else None
        pending = game.to_act(state)
        nexts: dict[int, Any] = {}  # each seat's next action in this playout
        for _, later_seat, later_action in steps[step:]:
            if later_seat in pending and later_seat not in nexts:
                nexts[later_seat] = later_action
            if len(nexts) == len(pending):
                break
        check_determinize(setup, state, step, nexts)
        check_rewind_of_the_real_match(game, steps, step)
        if len(game.to_act(state)) > 1:
            sealed_steps += 1
        check_sealed_choices(setup, state)
        if before is not None:
            assert game.encode(state) == before, "determinize or apply changed the state"
    return sealed_steps
