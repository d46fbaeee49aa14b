"""The wire registry: every registered game is complete, and a view loses nothing.

* Completeness: a game in the engine's registry must have a wire, its proto ``Action`` and
  ``View`` fields at its fixed numbers (10 + k, 20 + k), a golden playthrough setup, a bot
  other than ``random`` and ``first``, and wire tests at every seat count from its
  ``min_seats`` to ``max_seats``. Adding a game without one of them fails here, by name.
* Lossless views: ``observation_from_view(game_id, view)`` gives back the observation the
  view was built from, for every registered game at every seat count, for every seat and
  for spectators, at every step of random playouts.
* Layering: the generic wire and server modules name no game; the registry imports
  without grpc or the server.
"""

from __future__ import annotations

import importlib.util
import random
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from seatings import seatings  # tests/wire is on sys.path (pytest rootdir-relative import)

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.registry import GAME_NUMBERS, GAMES, action_field, view_field
from speeltafel.server.wire import common as wire_common
from speeltafel.server.wire import registry as wire_registry
from speeltafel.server.wire.registry import WIRES, observation_from_view

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _load(path: Path, name: str) -> ModuleType:
    """A test module by path, under its own name (without collecting it again)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- completeness


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_registered_game_has_a_wire_at_its_fixed_proto_fields(game_id: str) -> None:
    assert game_id in GAME_NUMBERS, f"{game_id} has no fixed number in GAME_NUMBERS"
    assert game_id in WIRES, f"{game_id} has no wire in server/wire/registry.py"
    wire = WIRES[game_id]
    assert wire.game is GAMES[game_id]
    for message, number, oneof in (
        (common_pb2.Action, action_field(game_id), "game"),
        (common_pb2.View, view_field(game_id), "game_view"),
    ):
        field = message.DESCRIPTOR.fields_by_number.get(number)
        assert field is not None, f"{message.__name__} has no field {number} for {game_id}"
        assert field.name == wire.field, f"{message.__name__} field {number} is {field.name}"
        assert field.containing_oneof is not None and field.containing_oneof.name == oneof


def test_no_wire_without_a_game() -> None:
    assert set(WIRES) == set(GAMES)


def test_the_fixed_numbers_leave_no_field_to_another_game() -> None:
    """Fields 10 + k and 20 + k are the planned games' alone: no other field may sit there."""
    for message, base, oneof in (
        (common_pb2.Action, 10, "game"),
        (common_pb2.View, 20, "game_view"),
    ):
        game_fields = {f.number for f in message.DESCRIPTOR.oneofs_by_name[oneof].fields}
        kept = {base + k for k in GAME_NUMBERS.values()}
        assert game_fields <= kept
        other = {f.number for f in message.DESCRIPTOR.fields} - game_fields
        assert not other & kept, f"{message.__name__} uses a planned game's number"
        assert len(set(GAME_NUMBERS.values())) == len(GAME_NUMBERS)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_registered_game_has_a_golden_playthrough(game_id: str) -> None:
    playthroughs = _load(TESTS / "engine" / "test_playthroughs.py", "_golden_playthroughs")
    assert game_id in playthroughs.SETUPS, f"no playthrough setup for {game_id}"
    assert playthroughs.SETUPS[game_id], f"an empty playthrough setup for {game_id}"
    assert (playthroughs.FOLDER / f"{game_id}.txt").exists(), "run `make playthroughs`"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_registered_game_has_a_bot_beyond_random_and_first(game_id: str) -> None:
    from speeltafel.bots import registry as bots

    players = [
        name
        for name, entry in bots.BOTS.items()
        if name not in ("random", "first") and entry.games is not None and game_id in entry.games
    ]
    assert players, f"no bot but random and first plays {game_id} (bots/registry.py)"
    # The search bot plays every engine game, so it proves nothing here: the game needs a
    # heuristic of its own (which is also the search bot's playout policy for it).
    assert game_id in bots.HEURISTICS, f"{game_id} has no heuristic bot (bots/registry.py)"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_wire_tests_cover_every_seat_count(game_id: str) -> None:
    info = GAMES[game_id].info
    covered = [seats for _, seats in seatings(info)]
    every = list(range(info.min_seats, info.max_seats + 1))
    assert covered == every, f"{game_id}: no options allow seats {set(every) - set(covered)}"
    for options, seats in seatings(info):  # and the game really deals them
        GAMES[game_id].new(options, seats, Rng(b"seatings"))


def test_generic_modules_name_no_game() -> None:
    """A game's id (``take5``) and its code names (``Take5Wire``) appear in its own files and
    the registries, nowhere else in server/. (Prose may name a game as an example: the engine
    core's docstrings say which games an option kind serves.)"""
    allowed = {ROOT / "server" / "engine" / "registry.py", ROOT / "server" / "wire" / "registry.py"}
    names = []
    for game_id in GAME_NUMBERS:
        camel = "".join(part.title() for part in game_id.split("_"))
        # A one-word name (Beverbende) is also the game's prose name: only as a code prefix.
        code = rf"{camel}(?=[A-Z_])" if camel.isalpha() else rf"{camel}(?=[A-Z_]|\b)"
        names.append((game_id, re.compile(rf"{game_id}|{code}")))
    found = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        if path in allowed:
            continue
        text = path.read_text()
        for game_id, pattern in names:
            if path.stem == game_id and path.parent.name in ("games", "wire"):
                continue
            if pattern.search(text):
                found.append(f"{path.relative_to(ROOT)} names {game_id}")
    assert not found, found


def test_the_registry_imports_without_grpc_or_the_server() -> None:
    code = (
        "import sys\n"
        "from speeltafel.server.wire.registry import observation_from_view\n"
        "bad = sorted(m for m in sys.modules if m == 'grpc' or m.startswith(('grpc.',"
        " 'speeltafel.server.rpc', 'speeltafel.server.app', 'speeltafel.server.store')))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# --------------------------------------------------------------------------- lossless views

CASES = [
    (game_id, options, seats)
    for game_id in sorted(WIRES)
    for options, seats in seatings(WIRES[game_id].game.info)
]


@pytest.mark.parametrize(("game_id", "options", "seats"), CASES)
def test_a_view_decodes_to_the_observation_it_was_built_from(
    game_id: str, options: dict[str, str], seats: int
) -> None:
    wire = WIRES[game_id]
    game = wire.game
    chooser = random.Random(f"{game_id}/{seats}")
    state = game.new(options, seats, Rng(f"decode {game_id} {seats}".encode()))
    version = 1
    while True:
        outcome = game.outcome(state)
        to_act = game.to_act(state)
        for seat in (None, *range(seats)):
            observation = game.observe(state, seat)
            view = wire_common.build_view(
                wire,
                match_id="m",
                seat=seat,
                version=version,
                status="running" if outcome is None else "finished",
                seats=seats,
                commitment="c",
                observation=observation,
                to_act=to_act,
                legal_actions=game.legal_actions(state, seat) if seat is not None else (),
                move_clock_ms=1000,
                deadline_ms=0,
                now_ms=0,
                outcome=outcome,
            )
            parsed = common_pb2.View.FromString(view.SerializeToString())
            decoded = observation_from_view(game_id, parsed)
            assert decoded == observation, f"seat {seat} at version {version}"
            # and what the seat may do is in the view too
            assert [wire.action_from_proto(a) for a in parsed.legal_actions] == list(
                game.legal_actions(state, seat) if seat is not None else ()
            )
        if outcome is not None:
            break
        seat = chooser.choice(to_act)
        state = game.apply(state, seat, chooser.choice(game.legal_actions(state, seat)))
        version += 1


@pytest.mark.parametrize("game_id", sorted(WIRES))
def test_a_view_without_a_game_part_decodes_to_none(game_id: str) -> None:
    waiting = common_pb2.View(match_id="m", game=game_id, status=common_pb2.MATCH_STATUS_WAITING)
    assert observation_from_view(game_id, waiting) is None


@pytest.mark.parametrize("game_id", sorted(WIRES))
def test_a_view_of_another_game_is_refused(game_id: str) -> None:
    game = GAMES[game_id]
    low, _ = game.info.seats_for({})
    state = game.new({}, low, Rng(b"other"))
    view = wire_common.build_view(
        WIRES[game_id],
        match_id="m",
        seat=None,
        version=1,
        status="running",
        seats=low,
        commitment="c",
        observation=game.observe(state, None),
        to_act=(),
        legal_actions=(),
        move_clock_ms=0,
        deadline_ms=0,
        now_ms=0,
        outcome=None,
    )
    view.game = "another_game"
    with pytest.raises(ValueError):
        observation_from_view(game_id, view)
    with pytest.raises(KeyError):
        wire_registry.observation_from_view("no_such_game", view)


# --------------------------------------------------------------------------- ListGames


def test_list_options_and_decks_reach_the_game_description() -> None:
    """Every option kind and field of the engine's OptionSpec, on the toy game of the engine
    tests (list options, an automatic int, two named decks)."""
    engine_tests = str(TESTS / "engine")
    if engine_tests not in sys.path:
        sys.path.append(engine_tests)
    import toy_game

    info = toy_game.GAME.info
    message = wire_common.game_info_to_proto(info)
    options = {o.name: o for o in message.options}
    assert options["values"].kind == "int_list"
    assert (options["values"].minimum, options["values"].maximum) == (1, 9)
    assert (options["values"].min_items, options["values"].max_items) == (2, 6)
    assert options["colours"].kind == "choice_list"
    assert list(options["colours"].choices) == list(toy_game.COLOURS)
    assert (options["colours"].min_items, options["colours"].max_items) == (1, 3)
    assert options["rounds"].automatic and options["rounds"].kind == "int"
    assert not options["rounds"].HasField("max_items")
    assert options["bonus"].kind == "bool" and not options["bonus"].automatic
    assert [(d.name, d.description) for d in message.decks] == [
        (d.name, d.description) for d in info.decks
    ]
    assert (message.score_name, message.lower_is_better) == ("points", False)
