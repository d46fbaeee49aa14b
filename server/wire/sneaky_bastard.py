"""Sneaky Bastard: engine values to protobuf and back. Converts only; the rules stay in the
engine."""

from __future__ import annotations

from collections.abc import Iterable

from speeltafel.sdk.v1 import common_pb2, sneaky_bastard_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.sneaky_bastard import (
    BID,
    GAME,
    PASS,
    RAISE,
    SNEAK,
    ActionKind,
    Card,
    CardKind,
    Move,
    Phase,
    RoundResult,
    SneakyBastardAction,
    SneakyBastardObservation,
    Status,
    add,
)

pb = sneaky_bastard_pb2

PHASES = {
    Phase.HOUSE_AUCTION: pb.SNEAKY_BASTARD_PHASE_HOUSE_AUCTION,
    Phase.SNEAKY_AUCTION: pb.SNEAKY_BASTARD_PHASE_SNEAKY_AUCTION,
    Phase.OVER: pb.SNEAKY_BASTARD_PHASE_OVER,
}
KINDS = {
    CardKind.MONEY: pb.SNEAKY_BASTARD_CARD_KIND_MONEY,
    CardKind.HOUSE: pb.SNEAKY_BASTARD_CARD_KIND_HOUSE,
}
STATUSES = {
    Status.BIDDER: pb.SNEAKY_BASTARD_STATUS_BIDDER,
    Status.SNEAK: pb.SNEAKY_BASTARD_STATUS_SNEAK,
    Status.OUT: pb.SNEAKY_BASTARD_STATUS_OUT,
    Status.BUYER: pb.SNEAKY_BASTARD_STATUS_BUYER,
}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}
_KINDS_BACK = {number: kind for kind, number in KINDS.items()}
_STATUSES_BACK = {number: status for status, number in STATUSES.items()}
_COMPLETIONS = {"bid": BID, "sneak": SNEAK, "raise": RAISE, "pass": PASS}


def _card(card: Card) -> sneaky_bastard_pb2.SneakyBastardCard:
    return pb.SneakyBastardCard(kind=KINDS[card.kind], value=card.value)


def _cards(cards: Iterable[Card]) -> list[sneaky_bastard_pb2.SneakyBastardCard]:
    return [_card(card) for card in cards]


def _card_back(message: sneaky_bastard_pb2.SneakyBastardCard) -> Card:
    if message.kind not in _KINDS_BACK:
        raise ValueError(f"unknown Sneaky Bastard card kind {message.kind}")
    return Card(_KINDS_BACK[message.kind], message.value)


def _cards_back(messages: Iterable[sneaky_bastard_pb2.SneakyBastardCard]) -> tuple[Card, ...]:
    return tuple(_card_back(message) for message in messages)


def _action(action: SneakyBastardAction) -> sneaky_bastard_pb2.SneakyBastardAction:
    message = pb.SneakyBastardAction()
    if action.kind is ActionKind.ADD:
        assert action.card is not None
        message.add.card.CopyFrom(_card(action.card))
    else:
        getattr(message, action.kind.value).SetInParent()
    return message


def _action_back(message: sneaky_bastard_pb2.SneakyBastardAction) -> SneakyBastardAction:
    kind = message.WhichOneof("kind")
    if kind == "add":
        card = message.add.card
        if card.kind not in _KINDS_BACK:
            raise InvalidAction("action.sneaky_bastard.add needs a money or house card", "no_card")
        return add(Card(_KINDS_BACK[card.kind], card.value))
    if kind in _COMPLETIONS:
        return _COMPLETIONS[kind]
    raise InvalidAction(
        "action.sneaky_bastard names no move (set add, bid, sneak, raise or pass)",
        "empty_action",
    )


class SneakyBastardWire:
    """The Sneaky Bastard fields of the common View and Action messages."""

    game = GAME
    field = "sneaky_bastard"

    def fill_public(self, view: common_pb2.View, obs: SneakyBastardObservation) -> None:
        """Everything but the seat's own hand."""
        out = view.sneaky_bastard
        out.phase = PHASES[obs.phase]
        out.round = obs.round
        out.rounds = obs.rounds
        out.money.extend(obs.money)
        out.houses.extend(obs.houses)
        out.minimum_bid = obs.minimum_bid
        if obs.house is not None:
            out.house.CopyFrom(_card(obs.house))
        if obs.preview is not None:
            out.preview.CopyFrom(_card(obs.preview))
        out.deck_size = obs.deck_size
        out.start_player = obs.start_player
        if obs.turn is not None:
            out.turn = obs.turn
        out.forced = obs.forced
        for seat in range(len(obs.statuses)):
            out.seats.add(
                seat=seat,
                status=STATUSES[obs.statuses[seat]],
                front=_cards(obs.fronts[seat]),
                bid=obs.bids[seat],
                owns_sneaky_card=obs.sneaky_cards[seat],
                hand_size=obs.hand_sizes[seat],
            )
        out.pending.extend(_cards(obs.pending))
        out.discarded.extend(_cards(obs.discarded))
        for move in obs.history:
            out.history.add(round=move.round, seat=move.seat, action=_action(move.action))
        for result in obs.results:
            record = out.results.add(
                round=result.round,
                house=_card(result.house),
                start_player=result.start_player,
                buyer=result.buyer,
                price=_cards(result.price),
                sneaky_bid=_cards(result.sneaky_bid),
            )
            if result.sneaky_winner is not None:
                record.sneaky_winner = result.sneaky_winner

    def fill_private(self, view: common_pb2.View, obs: SneakyBastardObservation) -> None:
        """The seat's own hand."""
        view.sneaky_bastard.hand.extend(_cards(obs.hand))

    def action_to_proto(self, action: SneakyBastardAction) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        message.sneaky_bastard.CopyFrom(_action(action))
        return message

    def action_from_proto(self, message: common_pb2.Action) -> SneakyBastardAction:
        """The engine action of a client's message; :class:`InvalidAction` if malformed."""
        return _action_back(message.sneaky_bastard)

    def observation_from_view(self, view: common_pb2.View) -> SneakyBastardObservation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote."""
        sb = view.sneaky_bastard
        if sb.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Sneaky Bastard phase {sb.phase}")
        for seat in sb.seats:
            if seat.status not in _STATUSES_BACK:
                raise ValueError(f"unknown Sneaky Bastard status {seat.status}")
        try:
            history = tuple(
                Move(move.round, move.seat, _action_back(move.action)) for move in sb.history
            )
        except InvalidAction as error:
            raise ValueError(error.message) from None
        return SneakyBastardObservation(
            seat=view.seat if view.HasField("seat") else None,
            phase=_PHASES_BACK[sb.phase],
            round=sb.round,
            rounds=sb.rounds,
            money=tuple(sb.money),
            houses=tuple(sb.houses),
            minimum_bid=sb.minimum_bid,
            house=_card_back(sb.house) if sb.HasField("house") else None,
            preview=_card_back(sb.preview) if sb.HasField("preview") else None,
            deck_size=sb.deck_size,
            start_player=sb.start_player,
            turn=sb.turn if sb.HasField("turn") else None,
            forced=sb.forced,
            statuses=tuple(_STATUSES_BACK[seat.status] for seat in sb.seats),
            fronts=tuple(_cards_back(seat.front) for seat in sb.seats),
            bids=tuple(seat.bid for seat in sb.seats),
            pending=_cards_back(sb.pending),
            sneaky_cards=tuple(seat.owns_sneaky_card for seat in sb.seats),
            hand_sizes=tuple(seat.hand_size for seat in sb.seats),
            hand=_cards_back(sb.hand),
            discarded=_cards_back(sb.discarded),
            history=history,
            results=tuple(
                RoundResult(
                    round=result.round,
                    house=_card_back(result.house),
                    start_player=result.start_player,
                    buyer=result.buyer,
                    price=_cards_back(result.price),
                    sneaky_winner=(
                        result.sneaky_winner if result.HasField("sneaky_winner") else None
                    ),
                    sneaky_bid=_cards_back(result.sneaky_bid),
                )
                for result in sb.results
            ),
        )


WIRE = SneakyBastardWire()
