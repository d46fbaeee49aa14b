"""Every game's wire, by game id: beside ``engine/registry.py``, one line per game.

Importing this needs protobuf and the engine only (no grpc, no server), so a bot can turn a
view back into the engine's observation with :func:`observation_from_view`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.wire import (
    alles_klar,
    beverbende,
    common,
    karel_kakelaar,
    kleurenwiezen,
    sneaky_bastard,
    take5,
)
from speeltafel.server.wire.common import GameWire

WIRES: Mapping[str, GameWire] = {
    w.game.info.game_id: w
    for w in (
        take5.WIRE,
        karel_kakelaar.WIRE,
        sneaky_bastard.WIRE,
        beverbende.WIRE,
        alles_klar.WIRE,
        kleurenwiezen.WIRE,
    )
}


def wire_for(game_id: str) -> GameWire:
    """The wire of a registered game; KeyError naming the game otherwise."""
    try:
        return WIRES[game_id]
    except KeyError:
        raise KeyError(f"no wire for game {game_id[:40]!r}") from None


def action_from_proto(game_id: str, message: common_pb2.Action) -> Any:
    """The engine action a client sent for a match of ``game_id`` (InvalidAction when the
    message is empty, for another game or malformed)."""
    return common.action_from_proto(wire_for(game_id), message)


def observation_from_view(game_id: str, view: common_pb2.View) -> Any:
    """The engine observation ``view`` was built from: the seat's own
    (``game.observe(state, view.seat)``) or, for a view without a seat, the spectator's.
    None for a view without a game part (a match waiting for its seats); ValueError for a
    view of another game."""
    return common.observation_from_view(wire_for(game_id), view)
