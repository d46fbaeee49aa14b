"""Alles Klar?: engine values to protobuf and back. Converts only; the rules stay in the
engine."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from speeltafel.sdk.v1 import alles_klar_pb2, common_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.alles_klar import (
    ALL_CARDS,
    GAME,
    AllesAction,
    AllesObservation,
    Phase,
    Play,
    Result,
    TrickRecord,
    card_number,
    face_up,
    numerals_of,
)

pb = alles_klar_pb2

PHASES = {Phase.PLAY: pb.ALLES_KLAR_PHASE_PLAY, Phase.OVER: pb.ALLES_KLAR_PHASE_OVER}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}
RESULTS = {
    Result.WON: pb.ALLES_KLAR_RESULT_WON,
    Result.BLIND: pb.ALLES_KLAR_RESULT_BLIND,
    Result.UNDECIDED: pb.ALLES_KLAR_RESULT_UNDECIDED,
}
_RESULTS_BACK = {number: result for result, number in RESULTS.items()}
_KNOWN = frozenset(ALL_CARDS)


@functools.lru_cache(maxsize=64)
def _card_messages(numerals: tuple[int, ...]) -> dict[str, pb.AllesKlarCard]:
    """Every card's message under one numeral layout (built once, copied in)."""
    return {
        card: pb.AllesKlarCard(
            id=card, number=card_number(card), numerals=numerals_of(numerals, card)
        )
        for card in ALL_CARDS
    }


def _card_id(card: pb.AllesKlarCard) -> str:
    if card.id not in _KNOWN:
        raise ValueError(f"unknown Alles Klar? card {card.id[:40]!r}")
    return card.id


def _ids(cards: Iterable[pb.AllesKlarCard]) -> tuple[str, ...]:
    return tuple(_card_id(card) for card in cards)


def _plays(plays: tuple[Play, ...], cards: dict[str, pb.AllesKlarCard]) -> list[pb.AllesKlarPlay]:
    return [
        pb.AllesKlarPlay(
            seat=p.seat,
            card=cards[p.card],
            numeral=p.numeral,
            turned_card=p.turned_card,
            turned_rank=p.turned_rank,
            drew=p.drew,
            face_up=up,
        )
        for p, up in zip(plays, face_up(plays), strict=True)
    ]


def _play_back(message: pb.AllesKlarPlay) -> Play:
    turned = message.turned_card
    if turned and turned not in _KNOWN:
        raise ValueError(f"unknown Alles Klar? card {turned[:40]!r}")
    return Play(
        message.seat,
        _card_id(message.card),
        message.numeral,
        turned,
        message.turned_rank,
        message.drew,
    )


def _trick_back(message: pb.AllesKlarTrick) -> TrickRecord:
    if message.result not in _RESULTS_BACK:
        raise ValueError(f"unknown Alles Klar? trick result {message.result}")
    return TrickRecord(
        message.number,
        message.leader,
        tuple(_play_back(p) for p in message.plays),
        _RESULTS_BACK[message.result],
        message.seat,
    )


class AllesKlarWire:
    """The Alles Klar? fields of the common View and Action messages."""

    game = GAME
    field = "alles_klar"

    def fill_public(self, view: common_pb2.View, obs: AllesObservation) -> None:
        """Everything but the seat's own hand and received cards."""
        cards = _card_messages(obs.numerals)
        out = view.alles_klar
        out.numerals.extend(obs.numerals)
        out.winner_takes_facedown = obs.take_facedown
        out.phase = PHASES[obs.phase]
        out.turn = obs.turn
        out.leader = obs.leader
        out.last_trick = obs.last_trick
        for seat in range(obs.players):
            out.seats.add(
                seat=seat,
                hand_size=obs.hand_sizes[seat],
                drawn=obs.drawn[seat],
                pile=[cards[c] for c in obs.piles[seat]],
            )
        out.stock_size = obs.stock_size
        out.ranks_up.extend(obs.ranks_up)
        out.trick.extend(_plays(obs.trick, cards))
        out.out.extend(cards[c] for c in obs.out)
        for record in obs.history:
            out.history.add(
                number=record.number,
                leader=record.leader,
                plays=_plays(record.plays, cards),
                result=RESULTS[record.result],
                seat=record.seat,
            )

    def fill_private(self, view: common_pb2.View, obs: AllesObservation) -> None:
        """The seat's own hand and the cards it took into it, in order."""
        cards = _card_messages(obs.numerals)
        out = view.alles_klar
        out.hand.extend(cards[c] for c in obs.hand)
        out.received.extend(cards[c] for c in obs.received)

    def action_to_proto(self, action: AllesAction) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        message.alles_klar.play.card = action.card
        message.alles_klar.play.numeral = action.numeral
        return message

    def action_from_proto(self, message: common_pb2.Action) -> AllesAction:
        """The engine action of a client's message; :class:`InvalidAction` if malformed."""
        sent = message.alles_klar
        if sent.WhichOneof("kind") != "play":
            raise InvalidAction("action.alles_klar names no move (set play)", "empty_action")
        card, numeral = sent.play.card, sent.play.numeral
        if card not in _KNOWN:
            raise InvalidAction(f"there is no card {card[:40]!r}", rule="no_such_card")
        if numeral > 5:
            raise InvalidAction("a numeral is 1..5 (0: none)", rule="no_such_numeral")
        return AllesAction(card, numeral)

    def observation_from_view(self, view: common_pb2.View) -> AllesObservation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote."""
        ak = view.alles_klar
        if ak.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Alles Klar? phase {ak.phase}")
        seats = ak.seats
        trick = tuple(_play_back(p) for p in ak.trick)
        piles = tuple(_ids(seat.pile) for seat in seats)
        return AllesObservation(
            seat=view.seat if view.HasField("seat") else None,
            numerals=tuple(ak.numerals),
            take_facedown=ak.winner_takes_facedown,
            players=len(seats),
            phase=_PHASES_BACK[ak.phase],
            turn=ak.turn,
            leader=ak.leader,
            last_trick=ak.last_trick,
            hand=_ids(ak.hand),
            received=_ids(ak.received),
            hand_sizes=tuple(seat.hand_size for seat in seats),
            drawn=tuple(seat.drawn for seat in seats),
            stock_size=ak.stock_size,
            ranks_up=tuple(ak.ranks_up),
            trick=trick,
            face_up=face_up(trick),
            piles=piles,
            scores=tuple(len(pile) for pile in piles),
            out=_ids(ak.out),
            history=tuple(_trick_back(t) for t in ak.history),
        )


WIRE = AllesKlarWire()
