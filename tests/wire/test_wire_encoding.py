"""Views written as bytes (``public_view_bytes``, ``private_view_bytes`` and a wire's own
``public_bytes``/``private_bytes``) parse to exactly the messages the reference path
builds, for every game, seat count and step of random playouts. Several matches are
played interleaved, so that the bytes kept between versions (Take 5's history, rows and
piles) are looked up across matches as they are in the server."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from seatings import seatings  # tests/wire is on sys.path (pytest rootdir-relative import)

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.wire import take5 as take5_wire
from speeltafel.server.wire.common import (
    private_view,
    private_view_bytes,
    public_view,
    public_view_bytes,
    replaces_public,
    seat_view_bytes,
)
from speeltafel.server.wire.encoding import (
    bool_field,
    embedded_field,
    packed_uints,
    string_field,
    uint_field,
    varint,
)
from speeltafel.server.wire.registry import WIRES

CASES = [
    (game_id, options, seats)
    for game_id, wire in WIRES.items()
    for options, seats in seatings(wire.game.info)
]


def _parsed(data: bytes) -> common_pb2.View:
    view = common_pb2.View()
    view.ParseFromString(data)
    return view


@pytest.mark.parametrize(("game_id", "options", "seats"), CASES)
def test_views_written_as_bytes_parse_to_the_reference_messages(
    game_id: str, options: dict[str, str], seats: int
) -> None:
    wire = WIRES[game_id]
    game = wire.game
    chooser = random.Random(seats * 11 + 5)
    states = [game.new(options, seats, Rng(bytes([m, seats, 9]) * 10)) for m in range(3)]
    versions = [1, 1, 1]
    compared = 0
    while states:
        index = chooser.randrange(len(states))
        state = states[index]
        outcome = game.outcome(state)
        to_act = game.to_act(state)
        common = dict(
            match_id=f"m{index}",
            version=versions[index],
            status="finished" if outcome is not None else "running",
            seats=seats,
            commitment="c" * 64,
            to_act=to_act,
            outcome=outcome,
        )
        preset_deck = versions[index] % 2 == 0
        observation = game.observe(state, None)
        reference = public_view(wire, **common, observation=observation)
        reference.preset_deck = preset_deck
        public = public_view_bytes(wire, **common, observation=observation, preset_deck=preset_deck)
        assert _parsed(public) == reference
        for seat in range(seats):
            acting = seat in to_act
            legal = game.legal_actions(state, seat) if acting else ()
            clock = dict(
                move_clock_ms=0 if seat == 1 else 1000,
                deadline_ms=0 if seat == 2 else 5000 + seat,
                now_ms=4500 if seat != 3 else 9000,  # past the deadline: 0 remaining
                time_bank_ms=(700 if seat else 0) if acting else None,
            )
            seat_observation = game.observe(state, seat)
            expected = private_view(
                wire, seat=seat, observation=seat_observation, legal_actions=legal, **clock
            )
            written = private_view_bytes(
                wire, seat=seat, observation=seat_observation, legal_actions=legal, **clock
            )
            assert _parsed(written) == expected
            if not replaces_public(wire):
                assert _parsed(seat_view_bytes(public, written)) == _parsed(
                    seat_view_bytes(reference.SerializeToString(), expected)
                )
            compared += 1
        if outcome is not None:
            states.pop(index)
            versions.pop(index)
            continue
        seat = chooser.choice(to_act)
        states[index] = game.apply(state, seat, chooser.choice(game.legal_actions(state, seat)))
        versions[index] += 1
    assert compared > 0


def test_take5_writes_its_parts_as_bytes() -> None:
    # The server's game path (make bench's (b)) is Take 5: it must not fall back.
    wire = WIRES["take5"]
    assert callable(getattr(wire, "public_bytes", None))
    assert callable(getattr(wire, "private_bytes", None))


def test_take5_history_bytes_survive_the_cache_being_cleared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A cache of two entries is cleared at nearly every turn: what it answers stays right.
    monkeypatch.setattr(take5_wire._HistoryBytes, "LIMIT", 2)
    monkeypatch.setattr(take5_wire, "_history_field", take5_wire._HistoryBytes())
    wire = WIRES["take5"]
    game = wire.game
    chooser = random.Random(3)
    state = game.new({}, 4, Rng(b"h" * 32))
    while game.outcome(state) is None:
        observation = game.observe(state, None)
        reference = common_pb2.View()
        wire.fill_public(reference, observation)
        written = common_pb2.View()
        written.take5.ParseFromString(wire.public_bytes(observation))
        assert written == reference
        seat = chooser.choice(game.to_act(state))
        state = game.apply(state, seat, chooser.choice(game.legal_actions(state, seat)))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_an_integer_field_is_written_as_protobuf_writes_it(value: int) -> None:
    clock = common_pb2.Clock()
    clock.deadline_unix_ms = value - 2**64 if value >= 2**63 else value  # int64
    assert uint_field(2, clock.deadline_unix_ms) == clock.SerializeToString()
    outcome = common_pb2.Outcome(ranks=[value % 2**32, value % 7])
    assert packed_uints(2, outcome.ranks) == outcome.SerializeToString()


@pytest.mark.parametrize("value", [0, 1, 127, 128, 16_383, 16_384, 2**21 - 1, 2**21, 2**32 - 1])
def test_presence_and_defaults(value: int) -> None:
    # optional uint32 seat: written even at 0; a plain field: not at its default.
    assert uint_field(2, value, always=True) == common_pb2.View(seat=value).SerializeToString()
    assert uint_field(3, value) == common_pb2.View(version=value).SerializeToString()
    assert varint(value) == common_pb2.View(version=value).SerializeToString()[1:] or not value
    flag = bool(value % 2)
    assert bool_field(14, flag) == common_pb2.View(preset_deck=flag).SerializeToString()
    text = "é" * (value % 300)
    assert string_field(1, text) == common_pb2.View(match_id=text).SerializeToString()
    assert embedded_field(9, b"") == _with_empty_clock()


def _with_empty_clock() -> bytes:
    view = common_pb2.View()
    view.clock.SetInParent()
    return view.SerializeToString()


@pytest.mark.parametrize("size", [0, 127, 128, 16_383, 16_384, 2**21 + 5])
def test_a_part_of_any_length_is_framed_as_protobuf_frames_it(size: int) -> None:
    # The length of an embedded part from the table (under 2**14), in three bytes, or more.
    text = "x" * size
    assert string_field(1, text) == common_pb2.View(match_id=text).SerializeToString()


def _message_types(messages: Any) -> list[Any]:
    """Every message descriptor of a file's ``message_types_by_name``, nested ones too."""
    found: list[Any] = []
    stack = list(messages.values())
    while stack:
        message = stack.pop()
        found.append(message)
        stack.extend(message.nested_types)
    return found


def test_every_field_of_the_protos_has_its_key_in_the_helpers_table() -> None:
    """The field helpers look a field's key up in the table of two-byte varints without a
    bounds check (it is the views' hot path), so every field number of the project's
    protos must stay under 2**11. A new field numbered higher fails here, not on the wire."""
    import importlib
    import pkgutil

    import speeltafel.sdk.v1 as package
    from speeltafel.server.wire import encoding

    largest = 0
    for module_info in pkgutil.iter_modules(package.__path__):
        if not module_info.name.endswith("_pb2"):
            continue
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for message in _message_types(module.DESCRIPTOR.message_types_by_name):
            for field in message.fields:
                largest = max(largest, field.number)
    assert largest > 10  # the protos were found and read
    assert (largest << 3 | 7) < encoding._TABLE_SIZE, largest
