"""Serialise once: a seat's view as bytes is the version's public bytes followed by the
seat's own part serialised alone (protobuf merges concatenated messages).

For every registered game, at every seat count and every step of random playouts, the
concatenation parses to exactly the view built the reference way from the seat's own
observation, and wrapped as a field (what the Play and Spectate streams send) it parses
as ``PlayResponse(view=..., resync=...)``. Beverbende, whose seat part rewrites the public
rows, must say ``private_replaces_public``; no other wire may need to be.
"""

from __future__ import annotations

import random

import pytest
from seatings import seatings  # tests/wire is on sys.path (pytest rootdir-relative import)

from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.wire.common import (
    build_view,
    private_view,
    public_view,
    replaces_public,
    seat_view_bytes,
)
from speeltafel.server.wire.encoding import embedded_field
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
def test_public_bytes_then_seat_bytes_parse_to_the_reference_view(
    game_id: str, options: dict[str, str], seats: int
) -> None:
    wire = WIRES[game_id]
    game = wire.game
    chooser = random.Random(seats * 7 + 1)
    concatenation_differs = False
    for match in range(2 if seats <= 4 else 1):
        state = game.new(options, seats, Rng(bytes([match, seats, 7]) * 10))
        version = 1
        while True:
            outcome = game.outcome(state)
            to_act = game.to_act(state)
            common = dict(
                match_id="m",
                version=version,
                status="finished" if outcome is not None else "running",
                seats=seats,
                commitment="c",
                to_act=to_act,
                outcome=outcome,
            )
            public = public_view(wire, **common, observation=game.observe(state, None))
            public_bytes = public.SerializeToString()
            for seat in range(seats):
                acting = seat in to_act
                legal = game.legal_actions(state, seat) if acting else ()
                clock = dict(move_clock_ms=1000, deadline_ms=5000 + seat, now_ms=4500)
                private = private_view(
                    wire,
                    seat=seat,
                    observation=game.observe(state, seat),
                    legal_actions=legal,
                    time_bank_ms=700 if acting else None,
                    **clock,
                )
                reference = build_view(
                    wire,
                    **common,
                    seat=seat,
                    observation=game.observe(state, seat),
                    legal_actions=legal,
                    **clock,
                )
                if acting:
                    reference.clock.time_bank_ms = 700
                joined = _parsed(seat_view_bytes(public_bytes, private))
                if joined != reference:
                    concatenation_differs = True
                    continue
                # As the stream sends it: the view as field 1, resync as field 3.
                response = match_service_pb2.PlayResponse()
                response.ParseFromString(
                    embedded_field(1, seat_view_bytes(public_bytes, private)) + b"\x18\x01"
                )
                assert response == match_service_pb2.PlayResponse(view=reference, resync=True)
            if outcome is not None:
                break
            seat = chooser.choice(to_act)
            state = game.apply(state, seat, chooser.choice(game.legal_actions(state, seat)))
            version += 1
    # A wire either concatenates at every step, or is known to replace (and is then built
    # whole by the server): never listed without need, never failing unlisted.
    assert concatenation_differs == (replaces_public(wire))


def test_a_spectator_view_is_the_public_bytes_as_they_are() -> None:
    wire = WIRES["take5"]
    state = wire.game.new({}, 4, Rng(b"s" * 32))
    public = public_view(
        wire,
        match_id="m",
        version=3,
        status="running",
        seats=4,
        commitment="c",
        observation=wire.game.observe(state, None),
        to_act=wire.game.to_act(state),
        outcome=None,
    )
    response = match_service_pb2.SpectateResponse()
    response.ParseFromString(embedded_field(1, public.SerializeToString()))
    assert response.view == public
    assert not response.resync
    assert not response.view.HasField("seat")


@pytest.mark.parametrize("size", [0, 1, 127, 128, 300, 16_383, 16_384, 70_000])
def test_an_embedded_field_of_any_length_parses(size: int) -> None:
    # Length prefixes of one, two and three bytes (the varint boundaries).
    view = common_pb2.View(match_id="x" * size) if size else common_pb2.View()
    data = embedded_field(1, view.SerializeToString())
    assert data == match_service_pb2.PlayResponse(view=view).SerializeToString()
