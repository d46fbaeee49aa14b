"""The Take 5 wire mapping: engine observations and actions to protobuf and back.

Every field of every Take 5 message is filled from some observation, every view survives a
protobuf round trip and says exactly what the observation says, every engine action maps
to a message and back, and every enum value is mapped.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.core import InvalidAction, Rng
from speeltafel.server.engine.games.take5 import (
    GAME,
    ActionKind,
    Phase,
    Take5Action,
    Take5Observation,
    heads,
)
from speeltafel.server.wire import common as wire_common
from speeltafel.server.wire import registry as wire_registry
from speeltafel.server.wire.take5 import PHASES, WIRE

CONFIGS = [
    ({}, 2),
    ({"deals": "2"}, 3),
    ({"deals": "2", "end_score": "12"}, 4),
    ({"edition": "full", "deals": "2"}, 2),
    ({"edition": "full", "deals": "1"}, 7),
    ({"edition": "full", "deals": "1", "end_score": "20"}, 10),
]


def playout(options: dict[str, str], seats: int, seed: int) -> Iterator[Any]:
    """Every state of one random game (seats to act chosen at random, too)."""
    chooser = random.Random(seed)
    state = GAME.new(options, seats, Rng(seed.to_bytes(8, "big")))
    yield state
    while GAME.to_act(state):
        seat = chooser.choice(GAME.to_act(state))
        state = GAME.apply(state, seat, chooser.choice(GAME.legal_actions(state, seat)))
        yield state


def observations() -> Iterator[tuple[Any, Take5Observation]]:
    for number, (options, seats) in enumerate(CONFIGS):
        for state in playout(options, seats, seed=number):
            for seat in (*range(seats), None):
                yield state, GAME.observe(state, seat)


def view_of(obs: Take5Observation) -> common_pb2.View:
    view = common_pb2.View()
    observation = obs
    WIRE.fill_public(view, observation)
    WIRE.fill_private(view, observation)
    return view


def cards(message: Any) -> list[tuple[int, int]]:
    return [(c.number, c.heads) for c in message]


def expected_cards(numbers: Any) -> list[tuple[int, int]]:
    return [(n, heads(n)) for n in numbers]


def assert_says_the_same(view: common_pb2.View, obs: Take5Observation) -> None:
    """The Take 5 part of ``view`` states exactly the observation."""
    t5 = view.take5
    assert view.WhichOneof("game_view") == "take5"
    assert (t5.edition, t5.deal, t5.deals, t5.end_score, t5.turn, t5.turns) == (
        obs.edition.value,
        obs.deal,
        obs.deals,
        obs.end_score,
        obs.turn,
        obs.turns,
    )
    assert t5.phase == PHASES[obs.phase]
    assert [(r.number, cards(r.cards), r.heads) for r in t5.rows] == [
        (i, expected_cards(row), sum(heads(c) for c in row))
        for i, row in enumerate(obs.rows, start=1)
    ]
    assert cards(t5.hand) == expected_cards(obs.hand)
    assert t5.HasField("selected") == (obs.selected is not None)
    if obs.selected is not None:
        assert t5.selected == obs.selected
    assert len(t5.seats) == len(obs.hand_sizes)
    for seat, out in enumerate(t5.seats):
        assert out.seat == seat
        assert out.hand_size == obs.hand_sizes[seat]
        assert out.committed == obs.committed[seat]
        assert cards(out.penalty) == expected_cards(obs.penalties[seat])
        assert out.penalty_heads == sum(heads(c) for c in obs.penalties[seat])
        assert list(out.deal_scores) == [scores[seat] for scores in obs.deal_scores]
        assert out.total == obs.totals[seat]
    assert [(r.seat, r.card) for r in t5.to_place] == [(s, c) for c, s in obs.to_place]
    assert len(t5.history) == len(obs.history)
    for out, turn in zip(t5.history, obs.history, strict=True):
        assert out.number == turn.number
        assert [(r.seat, r.card) for r in out.revealed] == list(turn.revealed)
        assert [(p.seat, p.card, p.row, tuple(p.taken), p.chosen) for p in out.placements] == [
            (p.seat, p.card, p.row, p.taken, p.chosen) for p in turn.placements
        ]


def take5_messages() -> list[Descriptor]:
    """Take5View and every message type it contains."""
    found: list[Descriptor] = []
    pending = [take5_pb2.Take5View.DESCRIPTOR]
    while pending:
        descriptor = pending.pop()
        if descriptor in found:
            continue
        found.append(descriptor)
        pending += [
            f.message_type for f in descriptor.fields if f.type == FieldDescriptor.TYPE_MESSAGE
        ]
    return found


def record_set_fields(message: Any, seen: dict[str, set[str]]) -> None:
    for descriptor, value in message.ListFields():
        seen[message.DESCRIPTOR.full_name].add(descriptor.name)
        if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            values = value if descriptor.is_repeated else [value]
            for item in values:
                record_set_fields(item, seen)


def test_every_view_field_is_filled_and_round_trips() -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    count = 0
    for _state, obs in observations():
        view = view_of(obs)
        data = view.SerializeToString()
        again = common_pb2.View.FromString(data)
        assert again == view
        assert again.SerializeToString() == data
        assert_says_the_same(again, obs)
        record_set_fields(view.take5, seen)
        count += 1
    assert count > 1000
    for descriptor in take5_messages():
        names = {f.name for f in descriptor.fields}
        missing = names - seen[descriptor.full_name]
        assert not missing, f"{descriptor.name}: never filled: {sorted(missing)}"


def test_spectator_views_carry_no_hand() -> None:
    for state, obs in observations():
        if obs.seat is not None:
            continue
        view = view_of(obs)
        assert not view.take5.hand and not view.take5.HasField("selected")
        hidden = {c for hand in state.hands for c in hand} | set(state.unused)
        hidden |= {c for c in state.selected if c is not None}
        shown = {c.number for r in view.take5.rows for c in r.cards}
        shown |= {c.number for s in view.take5.seats for c in s.penalty}
        shown |= {r.card for t in view.take5.history for r in t.revealed}
        assert not shown & hidden


def all_actions() -> list[Take5Action]:
    actions = [Take5Action(ActionKind.SELECT, c) for c in (*range(0, 106), 2**31, 2**32 - 1)]
    actions += [Take5Action(ActionKind.ROW, r) for r in (*range(0, 6), 2**31, 2**32 - 1)]
    return actions


def test_every_action_maps_to_proto_and_back() -> None:
    legal: set[Take5Action] = set()
    for number, (options, seats) in enumerate(CONFIGS):
        for state in playout(options, seats, seed=100 + number):
            for seat in GAME.to_act(state):
                legal.update(GAME.legal_actions(state, seat))
    assert {a.kind for a in legal} == set(ActionKind)
    for action in sorted(legal | set(all_actions()), key=str):
        message = WIRE.action_to_proto(action)
        assert message.WhichOneof("game") == "take5"
        data = message.SerializeToString()
        parsed = common_pb2.Action.FromString(data)
        assert WIRE.action_from_proto(parsed) == action
        assert wire_registry.action_from_proto("take5", parsed) == action
        assert wire_common.action_from_proto(WIRE, parsed) == action
        # and the message itself is what a client in any language would build
        expected = common_pb2.Action()
        if action.kind is ActionKind.SELECT:
            expected.take5.select.card = action.value
        else:
            expected.take5.choose_row.row = action.value
        assert message == expected


def test_every_enum_value_is_mapped() -> None:
    assert set(PHASES) == set(Phase)
    proto_phases = {v.number for v in take5_pb2.Take5Phase.DESCRIPTOR.values}
    assert sorted(PHASES.values()) == sorted(proto_phases - {take5_pb2.TAKE5_PHASE_UNSPECIFIED})
    assert len(set(PHASES.values())) == len(PHASES)
    statuses = {v.number for v in common_pb2.MatchStatus.DESCRIPTOR.values}
    assert set(wire_common.STATUSES) == {"waiting", "running", "finished"}
    assert sorted(wire_common.STATUSES.values()) == sorted(
        statuses - {common_pb2.MATCH_STATUS_UNSPECIFIED}
    )
    kinds = {WIRE.action_to_proto(Take5Action(k, 1)).take5.WhichOneof("kind") for k in ActionKind}
    oneof = take5_pb2.Take5Action.DESCRIPTOR.oneofs_by_name["kind"]
    assert kinds == {f.name for f in oneof.fields}
    # Every phase is reached in play, so every mapped value is used.
    reached = {obs.phase for _, obs in observations()}
    assert reached == set(Phase)


def test_unknown_enum_values_survive_parsing() -> None:
    """A newer server's phase reaches an older client as a number, not a parse error."""
    view = common_pb2.View()
    view.take5.phase = take5_pb2.TAKE5_PHASE_SELECT
    data = bytearray(view.SerializeToString())
    assert data[-1] == take5_pb2.TAKE5_PHASE_SELECT
    data[-1] = 99
    parsed = common_pb2.View.FromString(bytes(data))
    assert parsed.take5.phase == 99
    assert parsed.SerializeToString() == bytes(data)


def test_empty_or_foreign_actions_are_invalid() -> None:
    with pytest.raises(InvalidAction) as caught:
        wire_registry.action_from_proto("take5", common_pb2.Action())
    assert caught.value.rule == "empty_action"
    empty_take5 = common_pb2.Action()
    empty_take5.take5.SetInParent()
    for convert in (WIRE.action_from_proto, lambda m: wire_registry.action_from_proto("take5", m)):
        with pytest.raises(InvalidAction) as caught:
            convert(empty_take5)
        assert caught.value.rule == "empty_action"

    class OtherWire:
        game = GAME
        field = "other"

    other: Any = OtherWire()
    with pytest.raises(InvalidAction) as caught:
        wire_common.action_from_proto(other, WIRE.action_to_proto(Take5Action(ActionKind.ROW, 1)))
    assert caught.value.rule == "wrong_game"
    # The engine refuses anything but its own action type, too.
    state = GAME.new({}, 2, Rng(b"wire"))
    with pytest.raises(InvalidAction) as caught:
        GAME.apply(state, 0, "select:1")  # type: ignore[arg-type]
    assert caught.value.rule == "wrong_game"


def test_a_view_of_an_unknown_phase_does_not_decode() -> None:
    """A newer server's phase reaches an older decoder as a number: a ValueError, not a guess."""
    state = GAME.new({}, 2, Rng(b"phase"))
    view = common_pb2.View(game="take5")
    WIRE.fill_public(view, GAME.observe(state, None))
    assert WIRE.observation_from_view(view) == GAME.observe(state, None)
    view.take5.phase = 99  # type: ignore[assignment]
    with pytest.raises(ValueError):
        WIRE.observation_from_view(view)
