"""Take 5: engine values to protobuf and back. Converts only; the rules stay in the engine."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.take5 import (
    GAME,
    ActionKind,
    Edition,
    Phase,
    Placement,
    Take5Action,
    Take5Observation,
    Turn,
    heads,
    total_heads,
)

PHASES = {
    Phase.SELECT: take5_pb2.TAKE5_PHASE_SELECT,
    Phase.ROW_CHOICE: take5_pb2.TAKE5_PHASE_ROW_CHOICE,
    Phase.OVER: take5_pb2.TAKE5_PHASE_OVER,
}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}


# Views are rebuilt at every version, mostly from the same parts: the card messages and the
# finished turns of the deal's history are built once and copied in (copying a message is
# a C-level memcpy-like operation; building one field by field is Python work).
_CARDS = {n: take5_pb2.Take5Card(number=n, heads=heads(n)) for n in range(1, 105)}


def _cards(numbers: Iterable[int]) -> list[take5_pb2.Take5Card]:
    return [_CARDS[n] for n in numbers]


@functools.lru_cache(maxsize=8192)
def _turn(turn: Turn) -> take5_pb2.Take5Turn:
    """The message of one turn (cached: a turn's record is a value, shared by every later
    version of the deal). Callers copy it in and never change it."""
    record = take5_pb2.Take5Turn(number=turn.number)
    record.revealed.extend(take5_pb2.Take5Reveal(seat=s, card=c) for s, c in turn.revealed)
    for p in turn.placements:
        record.placements.add(seat=p.seat, card=p.card, row=p.row, taken=p.taken, chosen=p.chosen)
    return record


class Take5Wire:
    """The Take 5 fields of the common View and Action messages."""

    game = GAME
    field = "take5"

    def fill_public(self, view: common_pb2.View, obs: Take5Observation) -> None:
        """Everything but the seat's own hand and sealed card."""
        out = view.take5
        out.edition = obs.edition.value
        out.deal = obs.deal
        out.deals = obs.deals
        out.end_score = obs.end_score
        out.turn = obs.turn
        out.turns = obs.turns
        out.phase = PHASES[obs.phase]
        for number, row in enumerate(obs.rows, start=1):
            out.rows.add(number=number, cards=_cards(row), heads=total_heads(row))
        for seat in range(len(obs.hand_sizes)):
            out.seats.add(
                seat=seat,
                hand_size=obs.hand_sizes[seat],
                committed=obs.committed[seat],
                penalty=_cards(obs.penalties[seat]),
                penalty_heads=total_heads(obs.penalties[seat]),
                deal_scores=[scores[seat] for scores in obs.deal_scores],
                total=obs.totals[seat],
            )
        out.to_place.extend(take5_pb2.Take5Reveal(seat=s, card=c) for c, s in obs.to_place)
        out.history.extend(_turn(turn) for turn in obs.history)

    def fill_private(self, view: common_pb2.View, obs: Take5Observation) -> None:
        """The seat's own hand and its sealed selection."""
        out = view.take5
        out.hand.extend(_cards(obs.hand))
        if obs.selected is not None:
            out.selected = obs.selected

    def action_to_proto(self, action: Take5Action) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        if action.kind is ActionKind.SELECT:
            message.take5.select.card = action.value
        else:
            message.take5.choose_row.row = action.value
        return message

    def action_from_proto(self, message: common_pb2.Action) -> Take5Action:
        """The engine action of a client's message; :class:`InvalidAction` if malformed."""
        kind = message.take5.WhichOneof("kind")
        if kind == "select":
            return Take5Action(ActionKind.SELECT, message.take5.select.card)
        if kind == "choose_row":
            return Take5Action(ActionKind.ROW, message.take5.choose_row.row)
        raise InvalidAction("action.take5 names no move (set select or choose_row)", "empty_action")

    def observation_from_view(self, view: common_pb2.View) -> Take5Observation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote (the seat's
        own, or the spectator's for a view without a seat)."""
        t5 = view.take5
        if t5.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Take 5 phase {t5.phase}")
        seats = t5.seats
        finished_deals = len(seats[0].deal_scores) if seats else 0
        return Take5Observation(
            seat=view.seat if view.HasField("seat") else None,
            edition=Edition(t5.edition),
            deal=t5.deal,
            deals=t5.deals,
            end_score=t5.end_score,
            turn=t5.turn,
            turns=t5.turns,
            phase=_PHASES_BACK[t5.phase],
            rows=tuple(tuple(card.number for card in row.cards) for row in t5.rows),
            hand=tuple(card.number for card in t5.hand),
            selected=t5.selected if t5.HasField("selected") else None,
            committed=tuple(seat.committed for seat in seats),
            hand_sizes=tuple(seat.hand_size for seat in seats),
            to_place=tuple((reveal.card, reveal.seat) for reveal in t5.to_place),
            penalties=tuple(tuple(card.number for card in seat.penalty) for seat in seats),
            deal_scores=tuple(
                tuple(seat.deal_scores[deal] for seat in seats) for deal in range(finished_deals)
            ),
            totals=tuple(seat.total for seat in seats),
            history=tuple(
                Turn(
                    number=turn.number,
                    revealed=tuple((reveal.seat, reveal.card) for reveal in turn.revealed),
                    placements=tuple(
                        Placement(p.seat, p.card, p.row, tuple(p.taken), p.chosen)
                        for p in turn.placements
                    ),
                )
                for turn in t5.history
            ),
        )


WIRE = Take5Wire()
