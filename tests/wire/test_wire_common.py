"""The game-independent wire mapping: views, outcomes, game descriptions."""

from __future__ import annotations

from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.engine.core import Outcome, Rng
from speeltafel.server.engine.games.take5 import GAME
from speeltafel.server.wire import common as wire_common
from speeltafel.server.wire.take5 import WIRE


def _view(**overrides: object) -> common_pb2.View:
    state = GAME.new({}, 2, Rng(b"common"))
    arguments: dict[str, object] = {
        "match_id": "m1",
        "seat": 1,
        "version": 1,
        "status": "running",
        "seats": 2,
        "commitment": "c" * 64,
        "observation": GAME.observe(state, 1),
        "to_act": (0, 1),
        "legal_actions": GAME.legal_actions(state, 1),
        "move_clock_ms": 30_000,
        "deadline_ms": 1_000_500,
        "now_ms": 1_000_000,
        "outcome": None,
    }
    arguments.update(overrides)
    return wire_common.build_view(WIRE, **arguments)  # type: ignore[arg-type]


def test_a_seat_view() -> None:
    state = GAME.new({}, 2, Rng(b"common"))
    view = _view()
    assert (view.match_id, view.seat, view.version, view.game, view.rules_version) == (
        "m1",
        1,
        1,
        "take5",
        1,
    )
    assert view.status == common_pb2.MATCH_STATUS_RUNNING
    assert view.phase == "select" and list(view.to_act) == [0, 1] and view.seats == 2
    assert (view.clock.move_clock_ms, view.clock.deadline_unix_ms, view.clock.remaining_ms) == (
        30_000,
        1_000_500,
        500,
    )
    assert [WIRE.action_from_proto(a) for a in view.legal_actions] == list(
        GAME.legal_actions(state, 1)
    )
    expected = common_pb2.View()
    observation = GAME.observe(state, 1)
    WIRE.fill_public(expected, observation)
    WIRE.fill_private(expected, observation)
    assert view.take5 == expected.take5
    assert not view.HasField("outcome")
    assert common_pb2.View.FromString(view.SerializeToString()) == view


def test_an_overdue_clock_never_goes_negative() -> None:
    view = _view(now_ms=2_000_000)
    assert view.clock.remaining_ms == 0 and view.clock.deadline_unix_ms == 1_000_500


def test_a_seat_not_acting_has_no_deadline() -> None:
    view = _view(deadline_ms=0, legal_actions=(), to_act=(0,))
    assert view.clock.move_clock_ms == 30_000
    assert view.clock.deadline_unix_ms == 0 and view.clock.remaining_ms == 0
    assert not view.legal_actions


def test_a_spectator_view() -> None:
    state = GAME.new({}, 2, Rng(b"common"))
    view = _view(seat=None, observation=GAME.observe(state, None), legal_actions=())
    assert not view.HasField("seat") and not view.HasField("clock")
    assert not view.take5.hand


def test_a_waiting_match_has_no_game_view() -> None:
    view = _view(
        status="waiting", version=0, observation=None, legal_actions=(), to_act=(), deadline_ms=0
    )
    assert view.status == common_pb2.MATCH_STATUS_WAITING
    assert view.WhichOneof("game_view") is None and view.phase == ""


def test_outcomes() -> None:
    assert wire_common.outcome_to_proto(None) == common_pb2.Outcome()
    outcome = Outcome.from_scores([7, 3, 7], lower_is_better=True)
    message = wire_common.outcome_to_proto(outcome)
    assert list(message.scores) == [7, 3, 7]
    assert list(message.ranks) == [2, 1, 2]
    assert list(message.utilities) == list(outcome.utilities)
    assert message.termination == "normal"
    view = _view(status="finished", outcome=outcome)
    assert view.outcome == message


def test_game_info() -> None:
    message = wire_common.game_info_to_proto(GAME.info)
    assert isinstance(message, match_service_pb2.GameInfo)
    assert (message.game, message.min_seats, message.max_seats) == ("take5", 2, 4)
    assert [(r.option, r.value, r.min_seats, r.max_seats) for r in message.seat_ranges] == [
        ("edition", "trial", 2, 4),
        ("edition", "full", 2, 10),
    ]
    for spec, option in zip(GAME.info.options, message.options, strict=True):
        assert (option.name, option.kind, option.default, option.description) == (
            spec.name,
            spec.kind.value,
            spec.default,
            spec.description,
        )
        assert list(option.choices) == list(spec.choices)
        assert option.HasField("minimum") == (spec.minimum is not None)
        assert option.HasField("maximum") == (spec.maximum is not None)
        if spec.minimum is not None:
            assert option.minimum == spec.minimum
        if spec.maximum is not None:
            assert option.maximum == spec.maximum
        assert (option.min_items, option.HasField("max_items"), option.automatic) == (
            0,
            False,
            False,
        )
    assert (message.score_name, message.lower_is_better) == ("heads", True)
    assert [(d.name, d.description) for d in message.decks] == [
        ("pack", GAME.info.decks[0].description)
    ]
