"""The game-independent wire mapping: what every game's wire provides, and the views,
outcomes and game descriptions built the same way for every game.

Nothing a client sends is ever forwarded: actions are rebuilt as engine values here (so
unknown fields and unknown enum values in a client's message die at this layer), and
every outgoing view is built from an engine observation. The functions here receive the
game's wire (:class:`GameWire`); which wire belongs to which game id is
``speeltafel.server.wire.registry``'s business.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Protocol

from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.engine.core import GameAny, GameInfo, InvalidAction, Outcome
from speeltafel.server.engine.verify import RecordedMatch, group_orders
from speeltafel.server.wire.encoding import embedded_field, uint_field


class GameWire(Hashable, Protocol):
    """What every per-game wire module exports as ``WIRE``.

    A view loses nothing: ``observation_from_view`` of a view built from an observation
    gives that observation back (the wire tests hold this for every game, seat count and
    spectators), so a bot in Python can work on the engine's own values.

    Optional, looked up with ``getattr``: ``public_bytes(obs)`` and ``private_bytes(obs)``
    return what ``fill_public`` and ``fill_private`` write into the game's field,
    serialised (the streams' views are then written as bytes: :func:`public_view_bytes`,
    :func:`private_view_bytes`; Take 5 has them); ``private_replaces_public = True`` for a
    wire whose seat part rewrites the public part (:func:`replaces_public`).
    """

    @property
    def game(self) -> GameAny:
        """The engine game this module maps."""
        ...

    @property
    def field(self) -> str:
        """The game's field name in the ``oneof game`` of View and Action."""
        ...

    def fill_public(self, view: common_pb2.View, obs: Any) -> None:
        """Write what every seat and spectator sees of the game from an observation."""
        ...

    def fill_private(self, view: common_pb2.View, obs: Any) -> None:
        """Write only what the observing seat alone may know (its hand, its sealed card)."""
        ...

    def action_to_proto(self, action: Any) -> common_pb2.Action:
        """The typed message of an engine action."""
        ...

    def action_from_proto(self, message: common_pb2.Action) -> Any:
        """The engine action of a message; raises InvalidAction when malformed."""
        ...

    def observation_from_view(self, view: common_pb2.View) -> Any:
        """The engine observation a view with this game's part was built from (the seat's
        own for a seat's view, the spectator's for one without a seat); ValueError for a
        view it cannot read (an enum value of a newer server)."""
        ...


STATUSES = {
    "waiting": common_pb2.MATCH_STATUS_WAITING,
    "running": common_pb2.MATCH_STATUS_RUNNING,
    "finished": common_pb2.MATCH_STATUS_FINISHED,
}


def action_from_proto(wire: GameWire, message: common_pb2.Action) -> Any:
    """The engine action a client sent for a match of ``wire``'s game."""
    sent = message.WhichOneof("game")
    if sent is None:
        raise InvalidAction("action is empty: set the field of this match's game", "empty_action")
    if sent != wire.field:
        game_id = wire.game.info.game_id
        raise InvalidAction(f"action is for {sent}; this match plays {game_id}", "wrong_game")
    return wire.action_from_proto(message)


def observation_from_view(wire: GameWire, view: common_pb2.View) -> Any:
    """The engine observation behind ``view`` (None when it has no game part: a match still
    waiting for its seats); ValueError when the view holds another game."""
    sent = view.WhichOneof("game_view")
    if sent is None:
        return None
    if sent != wire.field or view.game != wire.game.info.game_id:
        raise ValueError(f"the view is of {view.game[:40]!r}, not {wire.game.info.game_id}")
    return wire.observation_from_view(view)


def record_from_proto(record: common_pb2.MatchRecord) -> RecordedMatch:
    """What replay and verification need of a published record, as engine values (preset
    orders grouped by their deck names)."""
    return RecordedMatch(
        game=record.game,
        options=dict(record.options),
        seats=record.seats,
        server_seed=record.server_seed,
        commitment=record.commitment,
        entropies=[s.entropy for s in sorted(record.seat_records, key=lambda s: s.seat)],
        presets=group_orders((d.deck, d.cards) for d in record.preset_decks),
        actions=[(a.seat, a.action) for a in record.actions],
        final_hash=record.final_state_sha256,
        termination=record.outcome.termination or "normal",
    )


def outcome_to_proto(outcome: Outcome | None) -> common_pb2.Outcome:
    """The protobuf form of an engine outcome (empty while the match runs)."""
    if outcome is None:
        return common_pb2.Outcome()
    return common_pb2.Outcome(
        scores=outcome.scores,
        ranks=outcome.ranks,
        utilities=outcome.utilities,
        termination=outcome.termination,
    )


def game_info_to_proto(info: GameInfo) -> match_service_pb2.GameInfo:
    """One ListGames entry."""
    # The advertised range is the one CreateMatch accepts with the default options; other
    # option values that allow other seat counts are listed beside it.
    min_seats, max_seats = info.seats_for({})
    message = match_service_pb2.GameInfo(
        game=info.game_id,
        name=info.name,
        rules_version=info.rules_version,
        min_seats=min_seats,
        max_seats=max_seats,
        simultaneous=info.simultaneous,
        description=info.description,
        score_name=info.score_name,
        lower_is_better=info.lower_is_better,
        decks=[
            match_service_pb2.DeckSpec(name=d.name, description=d.description) for d in info.decks
        ],
    )
    for seat_range in info.seat_ranges:
        message.seat_ranges.add(
            option=seat_range.option,
            value=seat_range.value,
            min_seats=seat_range.min_seats,
            max_seats=seat_range.max_seats,
        )
    for spec in info.options:
        option = message.options.add(
            name=spec.name,
            kind=spec.kind.value,
            default=spec.default,
            description=spec.description,
            choices=spec.choices,
            min_items=spec.min_items,
            automatic=spec.automatic,
        )
        if spec.minimum is not None:
            option.minimum = spec.minimum
        if spec.maximum is not None:
            option.maximum = spec.maximum
        if spec.max_items is not None:
            option.max_items = spec.max_items
    return message


def public_view(
    wire: GameWire,
    *,
    match_id: str,
    version: int,
    status: str,
    seats: int,
    commitment: str,
    observation: Any,
    to_act: Sequence[int],
    outcome: Outcome | None,
) -> common_pb2.View:
    """What everyone may see at one version: the spectator's view, and the shared part of
    every seat's view. ``observation`` must be the public one (``observe(state, None)``)."""
    view = _view_head(wire, match_id, version, status, seats, commitment, to_act, outcome)
    if observation is not None:
        view.phase = observation.phase.value
        wire.fill_public(view, observation)
    return view


def _view_head(
    wire: GameWire,
    match_id: str,
    version: int,
    status: str,
    seats: int,
    commitment: str,
    to_act: Sequence[int],
    outcome: Outcome | None,
) -> common_pb2.View:
    """A public view's fields that are not the game's own."""
    view = common_pb2.View(
        match_id=match_id,
        version=version,
        status=STATUSES[status],
        game=wire.game.info.game_id,
        rules_version=wire.game.info.rules_version,
        to_act=to_act,
        commitment=commitment,
        seats=seats,
    )
    if outcome is not None:
        view.outcome.CopyFrom(outcome_to_proto(outcome))
    return view


def seat_view(
    public: common_pb2.View,
    wire: GameWire,
    *,
    seat: int,
    observation: Any,
    legal_actions: Iterable[Any],
    move_clock_ms: int,
    deadline_ms: int,
    now_ms: int,
) -> common_pb2.View:
    """A seat's view: a copy of the public part plus what only ``seat`` may know, its clock
    and its legal actions. ``observation`` is the seat's own (``observe(state, seat)``)."""
    view = common_pb2.View()
    view.CopyFrom(public)
    view.seat = seat
    view.clock.move_clock_ms = move_clock_ms
    if deadline_ms:
        view.clock.deadline_unix_ms = deadline_ms
        view.clock.remaining_ms = max(0, deadline_ms - now_ms)
    if observation is not None:
        wire.fill_private(view, observation)
    view.legal_actions.extend(_action_message(wire, a) for a in legal_actions)
    return view


def replaces_public(wire: GameWire) -> bool:
    """Whether the wire's ``fill_private`` rewrites what ``fill_public`` wrote instead of
    only adding to it (a wire says so with ``private_replaces_public = True``): Beverbende's
    seat sees its own row cards where the public rows show backs, so its ``fill_private``
    clears the rows and writes them again. Appending that seat part to the public bytes
    would repeat the rows, so such wires' seat views are built whole (:func:`seat_view`)
    and serialised alone. ``tests/wire/test_wire_serialised_views.py`` holds every other
    wire to the concatenation, so a wire that starts replacing fails there."""
    return bool(getattr(wire, "private_replaces_public", False))


def private_view(
    wire: GameWire,
    *,
    seat: int,
    observation: Any,
    legal_actions: Iterable[Any],
    move_clock_ms: int,
    deadline_ms: int,
    now_ms: int,
    time_bank_ms: int | None = None,
) -> common_pb2.View:
    """Only what :func:`seat_view` adds to the public part: the seat, its clock, its private
    fields and its legal actions.

    Protobuf parses concatenated messages as one merged message (a scalar set in the later
    part wins, repeated fields are appended, sub-messages and a oneof's message merge), so
    the public view's bytes followed by these bytes are a seat's whole view
    (:func:`seat_view_bytes`). The server serialises the public part once per version and
    this small part once per seat, instead of copying and serialising the whole view for
    every seat. Not for the wires that :func:`replaces_public`."""
    view = common_pb2.View(seat=seat)
    view.clock.move_clock_ms = move_clock_ms
    if deadline_ms:
        view.clock.deadline_unix_ms = deadline_ms
        view.clock.remaining_ms = max(0, deadline_ms - now_ms)
    if time_bank_ms is not None:
        view.clock.time_bank_ms = time_bank_ms
    if observation is not None:
        wire.fill_private(view, observation)
    view.legal_actions.extend(_action_message(wire, a) for a in legal_actions)
    return view


def public_view_bytes(
    wire: GameWire,
    *,
    match_id: str,
    version: int,
    status: str,
    seats: int,
    commitment: str,
    observation: Any,
    to_act: Sequence[int],
    outcome: Outcome | None,
    preset_deck: bool,
) -> bytes:
    """:func:`public_view` (with ``preset_deck``) serialised. A wire with a
    ``public_bytes(observation)`` method writes its game's part as bytes itself (what its
    ``fill_public`` would write, serialised); the rest is built as a message. Parsed, the
    two are the same view."""
    encode = getattr(wire, "public_bytes", None)
    if encode is None or observation is None:
        view = public_view(
            wire,
            match_id=match_id,
            version=version,
            status=status,
            seats=seats,
            commitment=commitment,
            observation=observation,
            to_act=to_act,
            outcome=outcome,
        )
        view.preset_deck = preset_deck
        return view.SerializeToString()
    head = _view_head(wire, match_id, version, status, seats, commitment, to_act, outcome)
    head.phase = observation.phase.value
    head.preset_deck = preset_deck
    return head.SerializeToString() + embedded_field(
        _view_field_number(wire.field), encode(observation)
    )


def private_view_bytes(
    wire: GameWire,
    *,
    seat: int,
    observation: Any,
    legal_actions: Iterable[Any],
    move_clock_ms: int,
    deadline_ms: int,
    now_ms: int,
    time_bank_ms: int | None = None,
) -> bytes:
    """:func:`private_view` serialised. A wire with a ``private_bytes(observation)``
    method writes its game's part as bytes itself; the seat, its clock and its legal
    actions (each action's message serialised once) are written here. Parsed, the two are
    the same message."""
    encode = getattr(wire, "private_bytes", None)
    if encode is None:
        return private_view(
            wire,
            seat=seat,
            observation=observation,
            legal_actions=legal_actions,
            move_clock_ms=move_clock_ms,
            deadline_ms=deadline_ms,
            now_ms=now_ms,
            time_bank_ms=time_bank_ms,
        ).SerializeToString()
    clock = uint_field(1, move_clock_ms)
    if deadline_ms:
        clock += uint_field(2, deadline_ms) + uint_field(3, max(0, deadline_ms - now_ms))
    if time_bank_ms is not None:
        clock += uint_field(4, time_bank_ms)
    parts = [uint_field(2, seat, always=True), embedded_field(9, clock)]
    parts.extend([_action_field(wire, action) for action in legal_actions])
    if observation is not None:
        parts.append(embedded_field(_view_field_number(wire.field), encode(observation)))
    return b"".join(parts)


@functools.lru_cache(maxsize=32)
def _view_field_number(name: str) -> int:
    """The number of a game's field in View's ``oneof game_view``."""
    number: int = common_pb2.View.DESCRIPTOR.fields_by_name[name].number
    return number


@functools.lru_cache(maxsize=4096)
def _action_field(wire: GameWire, action: Any) -> bytes:
    """One entry of View's ``legal_actions`` (field 10), serialised once per action."""
    return embedded_field(10, _action_message(wire, action).SerializeToString())


def seat_view_bytes(public: bytes, private: common_pb2.View | bytes) -> bytes:
    """A seat's serialised view: the version's public bytes followed by its own part."""
    if isinstance(private, bytes):
        return public + private
    return public + private.SerializeToString()


@functools.lru_cache(maxsize=4096)
def _action_message(wire: GameWire, action: Any) -> common_pb2.Action:
    """An action's message, built once (engine actions are values); only ever copied in."""
    return wire.action_to_proto(action)


def build_view(
    wire: GameWire,
    *,
    match_id: str,
    seat: int | None,
    version: int,
    status: str,
    seats: int,
    commitment: str,
    observation: Any,
    to_act: Sequence[int],
    legal_actions: Iterable[Any],
    move_clock_ms: int,
    deadline_ms: int,
    now_ms: int,
    outcome: Outcome | None,
) -> common_pb2.View:
    """The whole view of one seat (``None``: a spectator) from that seat's observation alone.

    The reference construction: the server builds the same view faster from a cached
    :func:`public_view` and :func:`seat_view`, and a test holds the two equal.
    """
    info = wire.game.info
    view = common_pb2.View(
        match_id=match_id,
        version=version,
        status=STATUSES[status],
        game=info.game_id,
        rules_version=info.rules_version,
        to_act=to_act,
        commitment=commitment,
        seats=seats,
    )
    if seat is not None:
        view.seat = seat
        view.clock.move_clock_ms = move_clock_ms
        if deadline_ms:
            view.clock.deadline_unix_ms = deadline_ms
            view.clock.remaining_ms = max(0, deadline_ms - now_ms)
    if observation is not None:
        view.phase = observation.phase.value
        wire.fill_public(view, observation)
        wire.fill_private(view, observation)
    view.legal_actions.extend(wire.action_to_proto(a) for a in legal_actions)
    if outcome is not None:
        view.outcome.CopyFrom(outcome_to_proto(outcome))
    return view
