"""Kleurenwiezen: engine values to protobuf and back. Converts only; the rules stay in the
engine.

Suits travel as an enum numbered by their bidding value (spades 1 .. hearts 4) and "no
suit" as its zero value, so a bot in another language can compare suits the way the rules
do. Cards travel as the engine's texts ("TH"). The engine's "none" seats (-1: no troel
holder, no partner yet, no leader, no shown hand) become unset optionals.

An action from a client is rebuilt field by field for its kind: a field that does not
belong to the move (a suit on a kleine miserie, tricks on a pass) is refused here as
INVALID_ARGUMENT rather than left to fail as "not legal", so that a malformed message and a
move the rules do not allow now stay two different answers.
"""

from __future__ import annotations

from collections.abc import Iterable

from speeltafel.sdk.v1 import common_pb2, kleurenwiezen_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.kleurenwiezen import (
    ALL_CARDS,
    GAME,
    SUITS,
    ActionKind,
    Bid,
    Bidder,
    BidderState,
    Contract,
    ContractKind,
    DealEnd,
    DealResult,
    Event,
    Party,
    Phase,
    Play,
    TrickRecord,
    WiezenAction,
    WiezenObservation,
)

pb = kleurenwiezen_pb2

PHASES = {
    Phase.TROEL_AUCTION: pb.KLEURENWIEZEN_PHASE_TROEL_AUCTION,
    Phase.DECLARE: pb.KLEURENWIEZEN_PHASE_DECLARE,
    Phase.OPBIEDEN: pb.KLEURENWIEZEN_PHASE_OPBIEDEN,
    Phase.MISERIE_RESPONSE: pb.KLEURENWIEZEN_PHASE_MISERIE_RESPONSE,
    Phase.DISCARD: pb.KLEURENWIEZEN_PHASE_DISCARD,
    Phase.PLAY: pb.KLEURENWIEZEN_PHASE_PLAY,
    Phase.OVER: pb.KLEURENWIEZEN_PHASE_OVER,
}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}

# The enum's numbers are the suits' bidding values; "" (no suit) is the zero value.
SUIT_NUMBERS: dict[str, pb.KleurenwiezenSuit] = {
    "S": pb.KLEURENWIEZEN_SUIT_SPADES,
    "C": pb.KLEURENWIEZEN_SUIT_CLUBS,
    "D": pb.KLEURENWIEZEN_SUIT_DIAMONDS,
    "H": pb.KLEURENWIEZEN_SUIT_HEARTS,
}
_SUITS_BACK = {number: suit for suit, number in SUIT_NUMBERS.items()}
assert tuple(SUIT_NUMBERS) == SUITS

CONTRACTS = {
    ContractKind.ALONE: pb.KLEURENWIEZEN_CONTRACT_KIND_ALONE,
    ContractKind.PAIR: pb.KLEURENWIEZEN_CONTRACT_KIND_PAIR,
    ContractKind.KLEINE_MISERIE: pb.KLEURENWIEZEN_CONTRACT_KIND_KLEINE_MISERIE,
    ContractKind.ABONDANCE: pb.KLEURENWIEZEN_CONTRACT_KIND_ABONDANCE,
    ContractKind.GROTE_MISERIE: pb.KLEURENWIEZEN_CONTRACT_KIND_GROTE_MISERIE,
    ContractKind.TROEL: pb.KLEURENWIEZEN_CONTRACT_KIND_TROEL,
    ContractKind.BLOTE_MISERIE: pb.KLEURENWIEZEN_CONTRACT_KIND_BLOTE_MISERIE,
    ContractKind.SOLO_SLIM: pb.KLEURENWIEZEN_CONTRACT_KIND_SOLO_SLIM,
}
_CONTRACTS_BACK = {number: kind for kind, number in CONTRACTS.items()}

BIDDER_STATES = {
    BidderState.NEW: pb.KLEURENWIEZEN_BIDDER_STATE_NEW,
    BidderState.WAITING: pb.KLEURENWIEZEN_BIDDER_STATE_WAITING,
    BidderState.RONDPAS: pb.KLEURENWIEZEN_BIDDER_STATE_RONDPAS,
    BidderState.OPEN: pb.KLEURENWIEZEN_BIDDER_STATE_OPEN,
    BidderState.PAIR_ASKER: pb.KLEURENWIEZEN_BIDDER_STATE_PAIR_ASKER,
    BidderState.PAIR_JOINER: pb.KLEURENWIEZEN_BIDDER_STATE_PAIR_JOINER,
    BidderState.ALONE: pb.KLEURENWIEZEN_BIDDER_STATE_ALONE,
    BidderState.HIGH: pb.KLEURENWIEZEN_BIDDER_STATE_HIGH,
    BidderState.PASSED: pb.KLEURENWIEZEN_BIDDER_STATE_PASSED,
    BidderState.OUT: pb.KLEURENWIEZEN_BIDDER_STATE_OUT,
}
_BIDDER_STATES_BACK = {number: state for state, number in BIDDER_STATES.items()}

DEAL_ENDS = {
    DealEnd.PLAYED: pb.KLEURENWIEZEN_DEAL_END_PLAYED,
    DealEnd.PASSED_OUT: pb.KLEURENWIEZEN_DEAL_END_PASSED_OUT,
    DealEnd.RONDPAS: pb.KLEURENWIEZEN_DEAL_END_RONDPAS,
    DealEnd.DOOD: pb.KLEURENWIEZEN_DEAL_END_DOOD,
}
_DEAL_ENDS_BACK = {number: end for end, number in DEAL_ENDS.items()}

_KNOWN = frozenset(ALL_CARDS)

# The oneof field of each action kind; which kinds carry a suit, tricks or a card.
_FIELDS = {
    ActionKind.PASS: "pass",
    ActionKind.WAIT: "wait",
    ActionKind.RONDPAS: "rondpas",
    ActionKind.DOOD: "dood",
    ActionKind.REASK: "reask",
    ActionKind.PASTROEL: "pastroel",
    ActionKind.ASK: "ask",
    ActionKind.JOIN: "join",
    ActionKind.ALONE: "alone",
    ActionKind.BID: "bid",
    ActionKind.RAISE: "raise",
    ActionKind.DISCARD: "discard",
    ActionKind.PLAY: "play",
}
_KINDS = {name: kind for kind, name in _FIELDS.items()}
_WITH_SUIT = frozenset({ActionKind.ASK, ActionKind.JOIN, ActionKind.ALONE})
_WITH_CARD = frozenset({ActionKind.DISCARD, ActionKind.PLAY})

# What a bid of each contract that can be bid carries: (tricks range, takes a suit).
# Alone and pair are level-1 moves (ask, join, alone, raise), troel is never bid.
_BIDDABLE = {
    ContractKind.KLEINE_MISERIE: (None, False),
    ContractKind.ABONDANCE: (range(9, 14), True),
    ContractKind.GROTE_MISERIE: (None, False),
    ContractKind.BLOTE_MISERIE: (None, False),
    ContractKind.SOLO_SLIM: (None, True),
}
RAISE_TRICKS = range(5, 14)  # a lone player's bid starts at 5, a pair's at 8


# --------------------------------------------------------------------------- to proto


def _suit(suit: str) -> pb.KleurenwiezenSuit:
    """A suit's enum value; the zero value for "" (no suit)."""
    return SUIT_NUMBERS.get(suit, pb.KLEURENWIEZEN_SUIT_UNSPECIFIED)


def _seat_or_none(value: int) -> int | None:
    return value if value >= 0 else None


def _bid(bid: Bid) -> pb.KleurenwiezenBid:
    return pb.KleurenwiezenBid(
        contract=CONTRACTS[bid.kind], tricks=bid.tricks, suit=_suit(bid.suit)
    )


def _action(action: WiezenAction) -> pb.KleurenwiezenAction:
    message = pb.KleurenwiezenAction()
    kind = action.kind
    name = _FIELDS[kind]
    if kind is ActionKind.BID:
        message.bid.CopyFrom(_bid(action.bid()))
        return message
    part = getattr(message, name)
    if kind in _WITH_SUIT:
        part.suit = SUIT_NUMBERS[action.suit]
    elif kind in _WITH_CARD:
        part.card = action.card
    elif kind is ActionKind.RAISE:
        part.tricks = action.tricks
    else:
        part.SetInParent()
    return message


def _contract(contract: Contract) -> pb.KleurenwiezenContract:
    return pb.KleurenwiezenContract(
        kind=CONTRACTS[contract.kind],
        tricks=contract.tricks,
        suit=_suit(contract.suit),
        declarers=contract.declarers,
    )


def _plays(plays: Iterable[Play]) -> list[pb.KleurenwiezenPlay]:
    return [pb.KleurenwiezenPlay(seat=p.seat, card=p.card) for p in plays]


def _bidder(bidder: Bidder) -> pb.KleurenwiezenBidder:
    message = pb.KleurenwiezenBidder(
        state=BIDDER_STATES[bidder.state],
        suit=_suit(bidder.suit),
        outbid=bidder.outbid,
    )
    if bidder.bid is not None:
        message.bid.CopyFrom(_bid(bidder.bid))
    return message


def _party(party: Party) -> pb.KleurenwiezenParty:
    message = pb.KleurenwiezenParty(
        kind=CONTRACTS[party.kind],
        suit=SUIT_NUMBERS[party.suit],
        asker=party.asker,
        joiner=_seat_or_none(party.joiner),
        speaker=party.speaker,
        live=party.live,
    )
    if party.bid is not None:
        message.bid.CopyFrom(_bid(party.bid))
    return message


def _result(result: DealResult) -> pb.KleurenwiezenDealResult:
    message = pb.KleurenwiezenDealResult(
        number=result.number,
        dealer=result.dealer,
        end=DEAL_ENDS[result.end],
        declarer_tricks=result.declarer_tricks,
        multiplier=result.multiplier,
        points=result.points,
    )
    if result.contract is not None:
        message.contract.CopyFrom(_contract(result.contract))
    return message


# --------------------------------------------------------------------------- from proto


def _suit_back(number: pb.KleurenwiezenSuit) -> str:
    """A suit of a view ("" for the zero value); ValueError for a number it does not know."""
    if number == 0:
        return ""
    if number not in _SUITS_BACK:
        raise ValueError(f"unknown Kleurenwiezen suit {number}")
    return _SUITS_BACK[number]


def _card_back(text: str) -> str:
    if text not in _KNOWN:
        raise ValueError(f"unknown Kleurenwiezen card {text[:40]!r}")
    return text


def _cards_back(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(_card_back(text) for text in texts)


def _contract_kind_back(number: pb.KleurenwiezenContractKind) -> ContractKind:
    if number not in _CONTRACTS_BACK:
        raise ValueError(f"unknown Kleurenwiezen contract {number}")
    return _CONTRACTS_BACK[number]


def _bid_back(message: pb.KleurenwiezenBid) -> Bid:
    return Bid(_contract_kind_back(message.contract), message.tricks, _suit_back(message.suit))


def _optional_bid_back(owner: object, field: str) -> Bid | None:
    has = owner.HasField(field)  # type: ignore[attr-defined]
    return _bid_back(getattr(owner, field)) if has else None


def _contract_back(message: pb.KleurenwiezenContract) -> Contract:
    return Contract(
        _contract_kind_back(message.kind),
        message.tricks,
        _suit_back(message.suit),
        tuple(message.declarers),
    )


def _event_action_back(message: pb.KleurenwiezenAction) -> WiezenAction:
    """An action of the public history: as a client's, except that a discard may be hidden
    (an empty card)."""
    if message.WhichOneof("kind") == "discard" and message.discard.card == "":
        return WiezenAction(ActionKind.DISCARD)
    try:
        return _action_back(message)
    except InvalidAction as error:
        raise ValueError(f"a history event holds no valid action: {error}") from None


def _bidder_back(message: pb.KleurenwiezenBidder) -> Bidder:
    if message.state not in _BIDDER_STATES_BACK:
        raise ValueError(f"unknown Kleurenwiezen bidder state {message.state}")
    return Bidder(
        _BIDDER_STATES_BACK[message.state],
        _suit_back(message.suit),
        _optional_bid_back(message, "bid"),
        message.outbid,
    )


def _party_back(message: pb.KleurenwiezenParty) -> Party:
    return Party(
        kind=_contract_kind_back(message.kind),
        suit=_suit_back(message.suit),
        asker=message.asker,
        joiner=message.joiner if message.HasField("joiner") else -1,
        speaker=message.speaker,
        bid=_optional_bid_back(message, "bid"),
        live=message.live,
    )


def _plays_back(plays: Iterable[pb.KleurenwiezenPlay]) -> tuple[Play, ...]:
    return tuple(Play(p.seat, _card_back(p.card)) for p in plays)


def _trick_back(message: pb.KleurenwiezenTrick) -> TrickRecord:
    return TrickRecord(
        message.number, _plays_back(message.plays), _suit_back(message.trump), message.winner
    )


def _result_back(message: pb.KleurenwiezenDealResult) -> DealResult:
    if message.end not in _DEAL_ENDS_BACK:
        raise ValueError(f"unknown Kleurenwiezen deal end {message.end}")
    return DealResult(
        number=message.number,
        dealer=message.dealer,
        end=_DEAL_ENDS_BACK[message.end],
        contract=_contract_back(message.contract) if message.HasField("contract") else None,
        declarer_tricks=tuple(message.declarer_tricks),
        multiplier=message.multiplier,
        points=tuple(message.points),
    )


def _suit_of_move(number: pb.KleurenwiezenSuit, move: str) -> str:
    if number not in _SUITS_BACK:
        raise InvalidAction(
            f"{move} needs a suit (spades, clubs, diamonds or hearts)", rule="no_such_suit"
        )
    return _SUITS_BACK[number]


def _bid_action_back(sent: pb.KleurenwiezenBid) -> WiezenAction:
    kind = _CONTRACTS_BACK.get(sent.contract)
    if kind not in _BIDDABLE:
        raise InvalidAction(
            "bid names a contract that can be bid: kleine_miserie, abondance, grote_miserie,"
            " blote_miserie or solo_slim (level-1 games are ask, join, alone and raise)",
            rule="no_such_contract",
        )
    assert kind is not None
    tricks_range, takes_suit = _BIDDABLE[kind]
    if tricks_range is None and sent.tricks:
        raise InvalidAction(f"a bid of {kind.value} takes no tricks", rule="tricks_out_of_range")
    if tricks_range is not None and sent.tricks not in tricks_range:
        raise InvalidAction(
            f"a bid of {kind.value} names {tricks_range.start}..{tricks_range.stop - 1} tricks",
            rule="tricks_out_of_range",
        )
    if not takes_suit and sent.suit:
        raise InvalidAction(f"a bid of {kind.value} takes no suit", rule="no_such_suit")
    suit = _suit_of_move(sent.suit, f"a bid of {kind.value}") if takes_suit else ""
    return WiezenAction(ActionKind.BID, suit=suit, tricks=sent.tricks, contract=kind)


def _action_back(message: pb.KleurenwiezenAction) -> WiezenAction:
    name = message.WhichOneof("kind")
    if name is None:
        raise InvalidAction(
            "action.kleurenwiezen names no move (set one of its kinds)", rule="empty_action"
        )
    kind = _KINDS[name]
    if kind is ActionKind.BID:
        return _bid_action_back(message.bid)
    part = getattr(message, name)
    if kind in _WITH_SUIT:
        return WiezenAction(kind, suit=_suit_of_move(part.suit, name))
    if kind in _WITH_CARD:
        if part.card not in _KNOWN:
            raise InvalidAction(f"there is no card {part.card[:40]!r}", rule="no_such_card")
        return WiezenAction(kind, card=part.card)
    if kind is ActionKind.RAISE:
        if part.tricks not in RAISE_TRICKS:
            raise InvalidAction("raise names 5..13 tricks", rule="tricks_out_of_range")
        return WiezenAction(kind, tricks=part.tricks)
    return WiezenAction(kind)


class KleurenwiezenWire:
    """The Kleurenwiezen fields of the common View and Action messages."""

    game = GAME
    field = "kleurenwiezen"

    def fill_public(self, view: common_pb2.View, obs: WiezenObservation) -> None:
        """Everything but the seat's own hand and kleine-miserie discard."""
        out = view.kleurenwiezen
        out.deals = obs.deals
        out.shuffle_between_deals = obs.shuffle_between_deals
        out.rondpas_needs_p4 = obs.rondpas_needs_p4
        out.stop_when_decided = obs.stop_when_decided
        out.deal_number = obs.deal_number
        out.dealer = obs.dealer
        out.active.extend(obs.active)
        out.to_act.extend(obs.to_act)
        out.phase = PHASES[obs.phase]
        out.round = obs.round
        if obs.troel_holder >= 0:
            out.troel_holder = obs.troel_holder
        out.troel_aces = obs.troel_aces
        for seat in range(obs.players):
            out.seats.add(
                seat=seat,
                bidder=_bidder(obs.bidders[seat]),
                hand_size=obs.hand_sizes[seat],
                discarded=obs.discarded[seat],
                tricks_won=obs.tricks_won[seat],
                score=obs.scores[seat],
            )
        if obs.high is not None:
            out.high.CopyFrom(_bid(obs.high))
        out.rondpas_calls = obs.rondpas_calls
        out.parties.extend(_party(p) for p in obs.parties)
        if obs.contract is not None:
            out.contract.CopyFrom(_contract(obs.contract))
        out.trump = _suit(obs.trump)
        out.target = obs.target
        if obs.partner >= 0:
            out.partner = obs.partner
        if obs.leader >= 0:
            out.leader = obs.leader
        out.trick.extend(_plays(obs.trick))
        for record in obs.tricks:
            out.tricks.add(
                number=record.number,
                plays=_plays(record.plays),
                trump=_suit(record.trump),
                winner=record.winner,
            )
        out.shown.extend(obs.shown)
        if obs.shown_seat >= 0:
            out.shown_seat = obs.shown_seat
        out.doubling = obs.doubling
        out.multiplier = obs.multiplier
        out.results.extend(_result(r) for r in obs.results)
        for event in obs.history:
            out.history.add(
                seat=event.seat, action=_action(event.action), automatic=event.automatic
            )

    def fill_private(self, view: common_pb2.View, obs: WiezenObservation) -> None:
        """The seat's own hand and its own kleine-miserie discard."""
        out = view.kleurenwiezen
        out.hand.extend(obs.hand)
        out.discard = obs.discard

    def action_to_proto(self, action: WiezenAction) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        message.kleurenwiezen.CopyFrom(_action(action))
        return message

    def action_from_proto(self, message: common_pb2.Action) -> WiezenAction:
        """The engine action of a client's message; :class:`InvalidAction` if malformed."""
        return _action_back(message.kleurenwiezen)

    def observation_from_view(self, view: common_pb2.View) -> WiezenObservation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote."""
        kw = view.kleurenwiezen
        if kw.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Kleurenwiezen phase {kw.phase}")
        if kw.discard:
            _card_back(kw.discard)
        seats = kw.seats
        return WiezenObservation(
            seat=view.seat if view.HasField("seat") else None,
            players=len(seats),
            deals=kw.deals,
            shuffle_between_deals=kw.shuffle_between_deals,
            rondpas_needs_p4=kw.rondpas_needs_p4,
            stop_when_decided=kw.stop_when_decided,
            deal_number=kw.deal_number,
            dealer=kw.dealer,
            active=tuple(kw.active),
            phase=_PHASES_BACK[kw.phase],
            to_act=tuple(kw.to_act),
            round=kw.round,
            troel_holder=kw.troel_holder if kw.HasField("troel_holder") else -1,
            troel_aces=kw.troel_aces,
            bidders=tuple(_bidder_back(s.bidder) for s in seats),
            high=_optional_bid_back(kw, "high"),
            rondpas_calls=kw.rondpas_calls,
            parties=tuple(_party_back(p) for p in kw.parties),
            contract=_contract_back(kw.contract) if kw.HasField("contract") else None,
            trump=_suit_back(kw.trump),
            target=kw.target,
            partner=kw.partner if kw.HasField("partner") else -1,
            leader=kw.leader if kw.HasField("leader") else -1,
            trick=_plays_back(kw.trick),
            tricks=tuple(_trick_back(t) for t in kw.tricks),
            tricks_won=tuple(s.tricks_won for s in seats),
            hand=_cards_back(kw.hand),
            discard=kw.discard,
            hand_sizes=tuple(s.hand_size for s in seats),
            discarded=tuple(s.discarded for s in seats),
            shown=_cards_back(kw.shown),
            shown_seat=kw.shown_seat if kw.HasField("shown_seat") else -1,
            doubling=kw.doubling,
            multiplier=kw.multiplier,
            scores=tuple(s.score for s in seats),
            results=tuple(_result_back(r) for r in kw.results),
            history=tuple(
                Event(e.seat, _event_action_back(e.action), e.automatic) for e in kw.history
            ),
        )


WIRE = KleurenwiezenWire()
