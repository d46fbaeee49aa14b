"""A test-only wire for the engine tests' Toy Duel, carried in the Take 5 messages.

Why this way: the public protocol has a typed message per game and nothing else, and a
test game must not add messages to it (nor a generic "any" payload that real games would
then be tempted to use). A wire is only a mapping between engine values and the existing
messages, so a test game can borrow a real game's messages as its carrier: the server's
generic code never looks inside them. What travels where:

* actions: ``play:<card>`` is ``take5.select.card`` with the card's number code (colour
  index * 10 + value; ``bonus:n`` is 100 + n); ``draw``, ``keep`` and ``discard`` are
  ``take5.choose_row.row`` 1, 2 and 3;
* views: the public part of the observation is its canonical JSON (the engine's codec) in
  ``take5.edition``; the private part uses the Take 5 fields a seat alone gets: ``hand`` (the
  hand's codes), ``selected`` (the played card) and ``to_place`` (the drawn bonus card).

It decodes views back to observations like every real wire, so the service test can check
that what a seat received over a real server is exactly its observation.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.codec import from_plain, to_plain
from speeltafel.server.engine.core import InvalidAction

_ENGINE_TESTS = str(Path(__file__).resolve().parents[1] / "engine")
if _ENGINE_TESTS not in sys.path:
    sys.path.append(_ENGINE_TESTS)

import toy_game  # noqa: E402  (tests/engine: the one module the engine tests use too)

GAME = toy_game.GAME
KINDS = {toy_game.Kind.DRAW: 1, toy_game.Kind.KEEP: 2, toy_game.Kind.DISCARD: 3}
KINDS_BACK = {number: kind for kind, number in KINDS.items()}


def code(card: str) -> int:
    """The number of a card text: ``red:3`` -> 3, ``blue:3`` -> 13, ``bonus:2`` -> 102."""
    colour, _, value = card.partition(":")
    if colour == "bonus":
        return 100 + int(value)
    return toy_game.COLOURS.index(colour) * 10 + int(value)


def card(number: int) -> str:
    """The card text of a number :func:`code` gave."""
    if number > 100:
        return f"bonus:{number - 100}"
    colour, value = divmod(number, 10)
    if not (0 <= colour < len(toy_game.COLOURS) and 1 <= value <= 9):
        raise InvalidAction(f"there is no toy card {number}", "no_such_card")
    return f"{toy_game.COLOURS[colour]}:{value}"


class ToyWire:
    """Toy Duel's values in the Take 5 messages (see the module docstring)."""

    game = GAME
    field = "take5"

    def fill_public(self, view: common_pb2.View, obs: toy_game.ToyObservation) -> None:
        public = replace(obs, seat=None, hand=(), played=None, drawn=None)
        view.take5.edition = json.dumps(to_plain(public), sort_keys=True, separators=(",", ":"))

    def fill_private(self, view: common_pb2.View, obs: toy_game.ToyObservation) -> None:
        out = view.take5
        out.hand.extend(take5_pb2.Take5Card(number=code(c)) for c in obs.hand)
        if obs.played is not None:
            out.selected = code(obs.played)
        if obs.drawn is not None:
            out.to_place.add(seat=obs.seat or 0, card=code(obs.drawn))

    def action_to_proto(self, action: toy_game.ToyAction) -> common_pb2.Action:
        message = common_pb2.Action()
        if action.kind is toy_game.Kind.PLAY:
            message.take5.select.card = code(action.card)
        else:
            message.take5.choose_row.row = KINDS[action.kind]
        return message

    def action_from_proto(self, message: common_pb2.Action) -> toy_game.ToyAction:
        kind = message.take5.WhichOneof("kind")
        if kind == "select":
            return toy_game.ToyAction(toy_game.Kind.PLAY, card(message.take5.select.card))
        if kind == "choose_row" and message.take5.choose_row.row in KINDS_BACK:
            return toy_game.ToyAction(KINDS_BACK[message.take5.choose_row.row])
        raise InvalidAction("not a toy action", "empty_action")

    def observation_from_view(self, view: common_pb2.View) -> toy_game.ToyObservation:
        plain = json.loads(view.take5.edition)
        plain["seat"] = view.seat if view.HasField("seat") else None
        plain["hand"] = [card(c.number) for c in view.take5.hand]
        plain["played"] = card(view.take5.selected) if view.take5.HasField("selected") else None
        plain["drawn"] = card(view.take5.to_place[0].card) if view.take5.to_place else None
        observation: toy_game.ToyObservation = from_plain(toy_game.ToyObservation, plain)
        return observation


WIRE = ToyWire()
