"""Beverbende: engine values to protobuf and back. Converts only; the rules stay in the
engine."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from speeltafel.sdk.v1 import beverbende_pb2, common_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.beverbende import (
    GAME,
    NUMBERS,
    SPECIALS,
    ActionKind,
    BeverAction,
    BeverObservation,
    Event,
    EventKind,
    Phase,
)

pb = beverbende_pb2

PHASES = {
    Phase.TURN_START: pb.BEVERBENDE_PHASE_TURN_START,
    Phase.DRAWN: pb.BEVERBENDE_PHASE_DRAWN,
    Phase.DRAW_TWICE_1: pb.BEVERBENDE_PHASE_DRAW_TWICE_1,
    Phase.DRAW_TWICE_2: pb.BEVERBENDE_PHASE_DRAW_TWICE_2,
    Phase.KNOCK_DECISION: pb.BEVERBENDE_PHASE_KNOCK_DECISION,
    Phase.OVER: pb.BEVERBENDE_PHASE_OVER,
}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}

EVENTS = {
    EventKind.DEAL: pb.BEVERBENDE_EVENT_KIND_DEAL,
    EventKind.ACTION: pb.BEVERBENDE_EVENT_KIND_ACTION,
    EventKind.RESHUFFLE: pb.BEVERBENDE_EVENT_KIND_RESHUFFLE,
    EventKind.REPLACE: pb.BEVERBENDE_EVENT_KIND_REPLACE,
}
_EVENTS_BACK = {number: kind for kind, number in EVENTS.items()}

_CARDS = frozenset((*NUMBERS, *SPECIALS))

# The oneof field of each action kind, and whether it carries a position.
_FIELDS = {
    ActionKind.DRAW_DECK: "draw_deck",
    ActionKind.TAKE_DISCARD: "take_discard",
    ActionKind.DISCARD_DRAWN: "discard_drawn",
    ActionKind.SWAP_DRAWN: "swap_drawn",
    ActionKind.PEEK: "peek",
    ActionKind.SWAP: "swap",
    ActionKind.DRAW_TWICE: "draw_twice",
    ActionKind.KEEP: "keep",
    ActionKind.REJECT: "reject",
    ActionKind.KNOCK: "knock",
    ActionKind.NO_KNOCK: "no_knock",
}
_KINDS = {name: kind for kind, name in _FIELDS.items()}
_WITH_POSITION = {"take_discard", "swap_drawn", "peek", "keep"}


def _card(text: str, hidden_ok: bool = False) -> str:
    if text in _CARDS or (hidden_ok and text == ""):
        return text
    raise ValueError(f"unknown Beverbende card {text[:40]!r}")


def _cards(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(_card(text) for text in texts)


def _rows_to(target: object, rows: Sequence[Sequence[str]]) -> None:
    for row in rows:
        target.add(cards=row)  # type: ignore[attr-defined]


def _rows_back(rows: Iterable[pb.BeverbendeRow]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(_card(c, hidden_ok=True) for c in row.cards) for row in rows)


def _action(action: BeverAction) -> pb.BeverbendeAction:
    message = pb.BeverbendeAction()
    name = _FIELDS[action.kind]
    part = getattr(message, name)
    if name in _WITH_POSITION:
        part.position = action.pos
    elif action.kind is ActionKind.SWAP:
        part.own_position = action.pos
        part.other_seat = action.other
        part.other_position = action.other_pos
    else:
        part.SetInParent()
    return message


def _position(value: int) -> int:
    if value > 2:
        raise InvalidAction("a row position is 0, 1 or 2", rule="no_such_position")
    return value


def _action_back(message: pb.BeverbendeAction) -> BeverAction:
    name = message.WhichOneof("kind")
    if name is None:
        raise InvalidAction(
            "action.beverbende names no move (set one of its kinds)", rule="empty_action"
        )
    kind = _KINDS[name]
    if name in _WITH_POSITION:
        return BeverAction(kind, _position(getattr(message, name).position))
    if kind is ActionKind.SWAP:
        sent = message.swap
        if sent.other_seat > 3:
            raise InvalidAction(f"there is no seat {sent.other_seat}", rule="no_such_seat")
        return BeverAction(
            kind, _position(sent.own_position), sent.other_seat, _position(sent.other_position)
        )
    return BeverAction(kind)


def _event(event: Event) -> pb.BeverbendeEvent:
    message = pb.BeverbendeEvent(kind=EVENTS[event.kind], shown=event.shown)
    if event.seat >= 0:
        message.seat = event.seat
    if event.position >= 0:
        message.position = event.position
    if event.action is not None:
        message.action.CopyFrom(_action(event.action))
    return message


def _event_back(message: pb.BeverbendeEvent) -> Event:
    if message.kind not in _EVENTS_BACK:
        raise ValueError(f"unknown Beverbende event kind {message.kind}")
    action = _action_back(message.action) if message.HasField("action") else None
    return Event(
        kind=_EVENTS_BACK[message.kind],
        seat=message.seat if message.HasField("seat") else -1,
        action=action,
        position=message.position if message.HasField("position") else -1,
        shown=_cards(message.shown),
    )


class BeverbendeWire:
    """The Beverbende fields of the common View and Action messages."""

    game = GAME
    field = "beverbende"
    # A seat's own row cards replace the public backs: its view is built whole.
    private_replaces_public = True

    def fill_public(self, view: common_pb2.View, obs: BeverObservation) -> None:
        """Everything but the seat's own row knowledge and drawn card (the rows written
        here are the spectator's: public cards only)."""
        out = view.beverbende
        out.number_counts.extend(obs.number_counts)
        out.turn_limit = obs.turn_limit
        out.round = obs.round
        out.rounds = obs.rounds
        out.start_player = obs.start_player
        out.phase = PHASES[obs.phase]
        if obs.actor >= 0:
            out.actor = obs.actor
        out.turns.extend(obs.turns)
        if obs.knocker >= 0:
            out.knocker = obs.knocker
        _rows_to(out.rows, obs.rows)
        out.holding = obs.holding
        out.pending.extend(obs.pending)
        out.discard.extend(obs.discard)
        out.draw_size = obs.draw_size
        for scores in obs.round_scores:
            out.round_scores.add(scores=scores)
        out.totals.extend(obs.totals)
        _rows_to(out.last_rows, obs.last_rows)
        out.limited_rounds = obs.limited
        out.history.extend(_event(event) for event in obs.history)

    def fill_private(self, view: common_pb2.View, obs: BeverObservation) -> None:
        """The rows as the seat knows them, and the card it holds."""
        out = view.beverbende
        del out.rows[:]
        _rows_to(out.rows, obs.rows)
        out.drawn = obs.drawn

    def action_to_proto(self, action: BeverAction) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        message.beverbende.CopyFrom(_action(action))
        return message

    def action_from_proto(self, message: common_pb2.Action) -> BeverAction:
        """The engine action of a client's message; :class:`InvalidAction` if malformed."""
        return _action_back(message.beverbende)

    def observation_from_view(self, view: common_pb2.View) -> BeverObservation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote."""
        bb = view.beverbende
        if bb.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Beverbende phase {bb.phase}")
        if bb.drawn:
            _card(bb.drawn)
        return BeverObservation(
            seat=view.seat if view.HasField("seat") else None,
            number_counts=tuple(bb.number_counts),
            turn_limit=bb.turn_limit,
            players=len(bb.turns),
            rounds=bb.rounds,
            round=bb.round,
            start_player=bb.start_player,
            phase=_PHASES_BACK[bb.phase],
            actor=bb.actor if bb.HasField("actor") else -1,
            turns=tuple(bb.turns),
            knocker=bb.knocker if bb.HasField("knocker") else -1,
            rows=_rows_back(bb.rows),
            drawn=bb.drawn,
            holding=bb.holding,
            pending=_cards(bb.pending),
            discard=_cards(bb.discard),
            draw_size=bb.draw_size,
            round_scores=tuple(tuple(r.scores) for r in bb.round_scores),
            totals=tuple(bb.totals),
            last_rows=_rows_back(bb.last_rows),
            limited=bb.limited_rounds,
            history=tuple(_event_back(event) for event in bb.history),
        )


WIRE = BeverbendeWire()
