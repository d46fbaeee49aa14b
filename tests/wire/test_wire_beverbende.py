"""Beverbende's wire: views decode to the observations they were built from (seats and
spectators, also through public_view + seat_view, the server's path), actions round-trip,
and malformed actions are refused. The generic registry tests repeat the first once the game
is registered."""

from __future__ import annotations

import random

import pytest

from speeltafel.sdk.v1 import beverbende_pb2, common_pb2
from speeltafel.server.engine.core import InvalidAction, Rng
from speeltafel.server.engine.games.beverbende import GAME, ActionKind
from speeltafel.server.wire import common as wire_common
from speeltafel.server.wire.beverbende import WIRE


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_views_decode_to_their_observations(seats: int) -> None:
    chooser = random.Random(seats)
    state = GAME.new({"turn_limit": "8"}, seats, Rng(b"wire %d" % seats))
    version = 1
    while True:
        outcome = GAME.outcome(state)
        public = wire_common.public_view(
            WIRE,
            match_id="m",
            version=version,
            status="running" if outcome is None else "finished",
            seats=seats,
            commitment="c",
            observation=GAME.observe(state, None),
            to_act=GAME.to_act(state),
            outcome=outcome,
        )
        parsed = common_pb2.View.FromString(public.SerializeToString())
        assert WIRE.observation_from_view(parsed) == GAME.observe(state, None)
        for seat in range(seats):
            legal = GAME.legal_actions(state, seat)
            view = wire_common.seat_view(
                public,
                WIRE,
                seat=seat,
                observation=GAME.observe(state, seat),
                legal_actions=legal,
                move_clock_ms=1000,
                deadline_ms=0,
                now_ms=0,
            )
            parsed = common_pb2.View.FromString(view.SerializeToString())
            assert WIRE.observation_from_view(parsed) == GAME.observe(state, seat), version
            assert [WIRE.action_from_proto(a) for a in parsed.legal_actions] == list(legal)
        if outcome is not None:
            break
        seat = GAME.to_act(state)[0]
        legal = GAME.legal_actions(state, seat)
        no_knock = [a for a in legal if a.kind is not ActionKind.KNOCK]
        state = GAME.apply(state, seat, chooser.choice(no_knock or legal))
        version += 1


def test_malformed_actions_are_refused() -> None:
    with pytest.raises(InvalidAction):
        WIRE.action_from_proto(common_pb2.Action(beverbende=beverbende_pb2.BeverbendeAction()))
    bad = beverbende_pb2.BeverbendeAction(
        swap_drawn=beverbende_pb2.BeverbendeAction.SwapDrawn(position=3)
    )
    with pytest.raises(InvalidAction):
        WIRE.action_from_proto(common_pb2.Action(beverbende=bad))
    swap = beverbende_pb2.BeverbendeAction.Swap(own_position=0, other_seat=9, other_position=1)
    with pytest.raises(InvalidAction):
        WIRE.action_from_proto(
            common_pb2.Action(beverbende=beverbende_pb2.BeverbendeAction(swap=swap))
        )
