"""Karel Kakelaar: engine values to protobuf and back. Converts only; the rules stay in the
engine."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from speeltafel.sdk.v1 import common_pb2, karel_kakelaar_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.karel_kakelaar import (
    CARDS,
    GAME,
    SKIP,
    ActionKind,
    CardKind,
    HenDecision,
    KarelAction,
    KarelObservation,
    Phase,
    RoundRecord,
    bid,
    play_mother_hen,
)

pb = karel_kakelaar_pb2

PHASES = {
    Phase.BID: pb.KAREL_KAKELAAR_PHASE_BID,
    Phase.MOTHER_HEN: pb.KAREL_KAKELAAR_PHASE_MOTHER_HEN,
    Phase.OVER: pb.KAREL_KAKELAAR_PHASE_OVER,
}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}

KINDS = {
    CardKind.CHICKEN: pb.KAREL_KAKELAAR_CARD_KIND_CHICKEN,
    CardKind.WORM: pb.KAREL_KAKELAAR_CARD_KIND_WORM,
    CardKind.MOTHER_HEN: pb.KAREL_KAKELAAR_CARD_KIND_MOTHER_HEN,
}

# Every card message built once and copied in (building one field by field is Python work).
_CARDS = {
    text: pb.KarelKakelaarCard(id=text, kind=KINDS[info.kind], value=info.value, colour=info.colour)
    for text, info in CARDS.items()
}


def _cards(texts: Iterable[str]) -> list[pb.KarelKakelaarCard]:
    return [_CARDS[text] for text in texts]


def _card_id(card: pb.KarelKakelaarCard) -> str:
    if card.id not in CARDS:
        raise ValueError(f"unknown Karel Kakelaar card {card.id[:40]!r}")
    return card.id


def _decision(seat: int, action: KarelAction) -> pb.KarelKakelaarHenDecision:
    played = action.kind is ActionKind.PLAY_MOTHER_HEN
    message = pb.KarelKakelaarHenDecision(seat=seat, played=played, take=_cards(action.take))
    if played:
        message.hen.CopyFrom(_CARDS[action.card])
    return message


def _decision_back(message: pb.KarelKakelaarHenDecision) -> KarelAction:
    if not message.played:
        return SKIP
    take = tuple(_card_id(card) for card in message.take)
    return KarelAction(ActionKind.PLAY_MOTHER_HEN, _card_id(message.hen), take)


@functools.lru_cache(maxsize=8192)
def _round(record: RoundRecord) -> pb.KarelKakelaarRound:
    """The message of one round (cached: a round's record is a value shared by later
    versions; callers copy it in and never change it)."""
    message = pb.KarelKakelaarRound(
        number=record.number, tractor=record.tractor, row=_cards(record.row)
    )
    for bidder, card in enumerate(record.bids):
        entry = message.bids.add(bidder=bidder, rank=record.ranking.index(bidder) + 1)
        entry.taken.CopyFrom(_CARDS[record.taken(bidder)])
        if card is not None:
            entry.card.CopyFrom(_CARDS[card])
    message.decisions.extend(_decision(d.seat, d.action) for d in record.decisions)
    return message


def _round_back(message: pb.KarelKakelaarRound) -> RoundRecord:
    bids = tuple(_card_id(b.card) if b.HasField("card") else None for b in message.bids)
    ranking = tuple(b.bidder for b in sorted(message.bids, key=lambda b: b.rank))
    return RoundRecord(
        number=message.number,
        tractor=message.tractor,
        row=tuple(_card_id(card) for card in message.row),
        bids=bids,
        ranking=ranking,
        decisions=tuple(HenDecision(d.seat, _decision_back(d)) for d in message.decisions),
    )


class KarelKakelaarWire:
    """The Karel Kakelaar fields of the common View and Action messages."""

    game = GAME
    field = "karel_kakelaar"

    def fill_public(self, view: common_pb2.View, obs: KarelObservation) -> None:
        """Everything but the seat's own hand and sealed choices."""
        out = view.karel_kakelaar
        out.worm_counts.extend(obs.worm_counts)
        out.round = obs.round
        out.rounds = obs.rounds
        out.phase = PHASES[obs.phase]
        out.tractor = obs.tractor
        out.robot = obs.robot
        out.row.extend(_cards(obs.row))
        for seat in range(obs.players):
            out.seats.add(
                seat=seat,
                hand_size=obs.hand_sizes[seat],
                committed=obs.committed[seat],
                discard=_cards(obs.discards[seat]),
            )
        out.draw_size = obs.draw_size
        out.box_size = obs.box_size
        out.robot_deck_size = obs.robot_deck_size
        out.out.extend(_cards(obs.out))
        out.history.extend(_round(record) for record in obs.history)

    def fill_private(self, view: common_pb2.View, obs: KarelObservation) -> None:
        """The seat's own hand, sealed bid and sealed mother-hen decision."""
        out = view.karel_kakelaar
        out.hand.extend(_cards(obs.hand))
        if obs.bid is not None:
            out.bid.CopyFrom(_CARDS[obs.bid])
        if obs.decision is not None and obs.seat is not None:
            out.decision.CopyFrom(_decision(obs.seat, obs.decision))

    def action_to_proto(self, action: KarelAction) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        out = message.karel_kakelaar
        if action.kind is ActionKind.BID:
            out.bid.card = action.card
        elif action.kind is ActionKind.PLAY_MOTHER_HEN:
            out.play_mother_hen.hen = action.card
            out.play_mother_hen.take.extend(action.take)
        else:
            out.skip_mother_hen.SetInParent()
        return message

    def action_from_proto(self, message: common_pb2.Action) -> KarelAction:
        """The engine action of a client's message; :class:`InvalidAction` if malformed
        (``take`` is put in card order)."""
        sent = message.karel_kakelaar
        kind = sent.WhichOneof("kind")
        if kind == "bid":
            return bid(sent.bid.card)
        if kind == "play_mother_hen":
            return play_mother_hen(sent.play_mother_hen.hen, list(sent.play_mother_hen.take))
        if kind == "skip_mother_hen":
            return SKIP
        raise InvalidAction(
            "action.karel_kakelaar names no move (set bid, play_mother_hen or skip_mother_hen)",
            "empty_action",
        )

    def observation_from_view(self, view: common_pb2.View) -> KarelObservation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote (the seat's
        own, or the spectator's for a view without a seat)."""
        kk = view.karel_kakelaar
        if kk.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Karel Kakelaar phase {kk.phase}")
        seats = kk.seats
        return KarelObservation(
            seat=view.seat if view.HasField("seat") else None,
            worm_counts=tuple(kk.worm_counts),
            players=len(seats),
            round=kk.round,
            rounds=kk.rounds,
            phase=_PHASES_BACK[kk.phase],
            tractor=kk.tractor,
            robot=kk.robot,
            row=tuple(_card_id(card) for card in kk.row),
            hand=tuple(_card_id(card) for card in kk.hand),
            bid=_card_id(kk.bid) if kk.HasField("bid") else None,
            decision=_decision_back(kk.decision) if kk.HasField("decision") else None,
            committed=tuple(seat.committed for seat in seats),
            hand_sizes=tuple(seat.hand_size for seat in seats),
            discards=tuple(tuple(_card_id(card) for card in seat.discard) for seat in seats),
            draw_size=kk.draw_size,
            box_size=kk.box_size,
            robot_deck_size=kk.robot_deck_size,
            out=tuple(_card_id(card) for card in kk.out),
            history=tuple(_round_back(record) for record in kk.history),
        )


WIRE = KarelKakelaarWire()
