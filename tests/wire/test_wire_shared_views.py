"""The server's fast view (shared public part + per-seat part) equals the reference view.

The server builds the public part of a version's views once, from the spectator's
observation, and adds each seat's private part from that seat's own observation. This holds
the result byte for byte to the view built from the seat's observation alone, for every
registered game, at every step of random playouts: a seat's private field written by
``fill_public`` (where the spectator's observation lacks it) fails here.
"""

from __future__ import annotations

import random

import pytest
from seatings import seatings  # tests/wire is on sys.path (pytest rootdir-relative import)

from speeltafel.server.engine.core import Rng
from speeltafel.server.wire.common import build_view, public_view, seat_view
from speeltafel.server.wire.registry import WIRES

# Every seat count of every game (the completeness test in test_wire_registry.py holds this
# to min_seats..max_seats).
CASES = [
    (game_id, options, seats)
    for game_id, wire in WIRES.items()
    for options, seats in seatings(wire.game.info)
]


@pytest.mark.parametrize(("game_id", "options", "seats"), CASES)
def test_shared_public_part_plus_seat_part_equals_the_reference_view(
    game_id: str, options: dict[str, str], seats: int
) -> None:
    game = WIRES[game_id].game
    chooser = random.Random(seats)
    for match in range(3 if seats <= 4 else 1):
        state = game.new(options, seats, Rng(bytes([match, seats]) * 16))
        version = 1
        while True:
            outcome = game.outcome(state)
            to_act = game.to_act(state)
            wire = WIRES[game_id]
            common = dict(
                match_id="m",
                version=version,
                status="running",
                seats=seats,
                commitment="c",
                to_act=to_act,
                outcome=outcome,
            )
            public = public_view(wire, **common, observation=game.observe(state, None))
            reference_public = build_view(
                wire,
                **common,
                seat=None,
                observation=game.observe(state, None),
                legal_actions=(),
                move_clock_ms=0,
                deadline_ms=0,
                now_ms=0,
            )
            assert public.SerializeToString(
                deterministic=True
            ) == reference_public.SerializeToString(deterministic=True)
            for seat in range(seats):
                legal = game.legal_actions(state, seat)
                clock = dict(move_clock_ms=1000, deadline_ms=5000 + seat, now_ms=4500)
                fast = seat_view(
                    public,
                    wire,
                    seat=seat,
                    observation=game.observe(state, seat),
                    legal_actions=legal,
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
                assert fast.SerializeToString(deterministic=True) == reference.SerializeToString(
                    deterministic=True
                ), f"seat {seat} at version {version}"
            if outcome is not None:
                break
            seat = chooser.choice(to_act)
            state = game.apply(state, seat, chooser.choice(game.legal_actions(state, seat)))
            version += 1
    # The shared part really is shared: building a seat's view does not change it.
    assert public == reference_public
