from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KleurenwiezenPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KLEURENWIEZEN_PHASE_UNSPECIFIED: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_TROEL_AUCTION: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_DECLARE: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_OPBIEDEN: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_MISERIE_RESPONSE: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_DISCARD: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_PLAY: _ClassVar[KleurenwiezenPhase]
    KLEURENWIEZEN_PHASE_OVER: _ClassVar[KleurenwiezenPhase]

class KleurenwiezenSuit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KLEURENWIEZEN_SUIT_UNSPECIFIED: _ClassVar[KleurenwiezenSuit]
    KLEURENWIEZEN_SUIT_SPADES: _ClassVar[KleurenwiezenSuit]
    KLEURENWIEZEN_SUIT_CLUBS: _ClassVar[KleurenwiezenSuit]
    KLEURENWIEZEN_SUIT_DIAMONDS: _ClassVar[KleurenwiezenSuit]
    KLEURENWIEZEN_SUIT_HEARTS: _ClassVar[KleurenwiezenSuit]

class KleurenwiezenContractKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KLEURENWIEZEN_CONTRACT_KIND_UNSPECIFIED: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_ALONE: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_PAIR: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_KLEINE_MISERIE: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_ABONDANCE: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_GROTE_MISERIE: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_TROEL: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_BLOTE_MISERIE: _ClassVar[KleurenwiezenContractKind]
    KLEURENWIEZEN_CONTRACT_KIND_SOLO_SLIM: _ClassVar[KleurenwiezenContractKind]

class KleurenwiezenBidderState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KLEURENWIEZEN_BIDDER_STATE_UNSPECIFIED: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_NEW: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_WAITING: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_RONDPAS: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_OPEN: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_PAIR_ASKER: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_PAIR_JOINER: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_ALONE: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_HIGH: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_PASSED: _ClassVar[KleurenwiezenBidderState]
    KLEURENWIEZEN_BIDDER_STATE_OUT: _ClassVar[KleurenwiezenBidderState]

class KleurenwiezenDealEnd(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KLEURENWIEZEN_DEAL_END_UNSPECIFIED: _ClassVar[KleurenwiezenDealEnd]
    KLEURENWIEZEN_DEAL_END_PLAYED: _ClassVar[KleurenwiezenDealEnd]
    KLEURENWIEZEN_DEAL_END_PASSED_OUT: _ClassVar[KleurenwiezenDealEnd]
    KLEURENWIEZEN_DEAL_END_RONDPAS: _ClassVar[KleurenwiezenDealEnd]
    KLEURENWIEZEN_DEAL_END_DOOD: _ClassVar[KleurenwiezenDealEnd]
KLEURENWIEZEN_PHASE_UNSPECIFIED: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_TROEL_AUCTION: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_DECLARE: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_OPBIEDEN: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_MISERIE_RESPONSE: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_DISCARD: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_PLAY: KleurenwiezenPhase
KLEURENWIEZEN_PHASE_OVER: KleurenwiezenPhase
KLEURENWIEZEN_SUIT_UNSPECIFIED: KleurenwiezenSuit
KLEURENWIEZEN_SUIT_SPADES: KleurenwiezenSuit
KLEURENWIEZEN_SUIT_CLUBS: KleurenwiezenSuit
KLEURENWIEZEN_SUIT_DIAMONDS: KleurenwiezenSuit
KLEURENWIEZEN_SUIT_HEARTS: KleurenwiezenSuit
KLEURENWIEZEN_CONTRACT_KIND_UNSPECIFIED: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_ALONE: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_PAIR: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_KLEINE_MISERIE: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_ABONDANCE: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_GROTE_MISERIE: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_TROEL: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_BLOTE_MISERIE: KleurenwiezenContractKind
KLEURENWIEZEN_CONTRACT_KIND_SOLO_SLIM: KleurenwiezenContractKind
KLEURENWIEZEN_BIDDER_STATE_UNSPECIFIED: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_NEW: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_WAITING: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_RONDPAS: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_OPEN: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_PAIR_ASKER: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_PAIR_JOINER: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_ALONE: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_HIGH: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_PASSED: KleurenwiezenBidderState
KLEURENWIEZEN_BIDDER_STATE_OUT: KleurenwiezenBidderState
KLEURENWIEZEN_DEAL_END_UNSPECIFIED: KleurenwiezenDealEnd
KLEURENWIEZEN_DEAL_END_PLAYED: KleurenwiezenDealEnd
KLEURENWIEZEN_DEAL_END_PASSED_OUT: KleurenwiezenDealEnd
KLEURENWIEZEN_DEAL_END_RONDPAS: KleurenwiezenDealEnd
KLEURENWIEZEN_DEAL_END_DOOD: KleurenwiezenDealEnd

class KleurenwiezenBid(_message.Message):
    __slots__ = ("contract", "tricks", "suit")
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    contract: KleurenwiezenContractKind
    tricks: int
    suit: KleurenwiezenSuit
    def __init__(self, contract: _Optional[_Union[KleurenwiezenContractKind, str]] = ..., tricks: _Optional[int] = ..., suit: _Optional[_Union[KleurenwiezenSuit, str]] = ...) -> None: ...

class KleurenwiezenBidder(_message.Message):
    __slots__ = ("state", "suit", "bid", "outbid")
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    OUTBID_FIELD_NUMBER: _ClassVar[int]
    state: KleurenwiezenBidderState
    suit: KleurenwiezenSuit
    bid: KleurenwiezenBid
    outbid: bool
    def __init__(self, state: _Optional[_Union[KleurenwiezenBidderState, str]] = ..., suit: _Optional[_Union[KleurenwiezenSuit, str]] = ..., bid: _Optional[_Union[KleurenwiezenBid, _Mapping]] = ..., outbid: _Optional[bool] = ...) -> None: ...

class KleurenwiezenSeat(_message.Message):
    __slots__ = ("seat", "bidder", "hand_size", "discarded", "tricks_won", "score")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BIDDER_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bidder: KleurenwiezenBidder
    hand_size: int
    discarded: bool
    tricks_won: int
    score: int
    def __init__(self, seat: _Optional[int] = ..., bidder: _Optional[_Union[KleurenwiezenBidder, _Mapping]] = ..., hand_size: _Optional[int] = ..., discarded: _Optional[bool] = ..., tricks_won: _Optional[int] = ..., score: _Optional[int] = ...) -> None: ...

class KleurenwiezenParty(_message.Message):
    __slots__ = ("kind", "suit", "asker", "joiner", "speaker", "bid", "live")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    ASKER_FIELD_NUMBER: _ClassVar[int]
    JOINER_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    kind: KleurenwiezenContractKind
    suit: KleurenwiezenSuit
    asker: int
    joiner: int
    speaker: int
    bid: KleurenwiezenBid
    live: bool
    def __init__(self, kind: _Optional[_Union[KleurenwiezenContractKind, str]] = ..., suit: _Optional[_Union[KleurenwiezenSuit, str]] = ..., asker: _Optional[int] = ..., joiner: _Optional[int] = ..., speaker: _Optional[int] = ..., bid: _Optional[_Union[KleurenwiezenBid, _Mapping]] = ..., live: _Optional[bool] = ...) -> None: ...

class KleurenwiezenContract(_message.Message):
    __slots__ = ("kind", "tricks", "suit", "declarers")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    DECLARERS_FIELD_NUMBER: _ClassVar[int]
    kind: KleurenwiezenContractKind
    tricks: int
    suit: KleurenwiezenSuit
    declarers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, kind: _Optional[_Union[KleurenwiezenContractKind, str]] = ..., tricks: _Optional[int] = ..., suit: _Optional[_Union[KleurenwiezenSuit, str]] = ..., declarers: _Optional[_Iterable[int]] = ...) -> None: ...

class KleurenwiezenPlay(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class KleurenwiezenTrick(_message.Message):
    __slots__ = ("number", "plays", "trump", "winner")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    number: int
    plays: _containers.RepeatedCompositeFieldContainer[KleurenwiezenPlay]
    trump: KleurenwiezenSuit
    winner: int
    def __init__(self, number: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[KleurenwiezenPlay, _Mapping]]] = ..., trump: _Optional[_Union[KleurenwiezenSuit, str]] = ..., winner: _Optional[int] = ...) -> None: ...

class KleurenwiezenDealResult(_message.Message):
    __slots__ = ("number", "dealer", "end", "contract", "declarer_tricks", "multiplier", "points")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    DECLARER_TRICKS_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    number: int
    dealer: int
    end: KleurenwiezenDealEnd
    contract: KleurenwiezenContract
    declarer_tricks: _containers.RepeatedScalarFieldContainer[int]
    multiplier: int
    points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, number: _Optional[int] = ..., dealer: _Optional[int] = ..., end: _Optional[_Union[KleurenwiezenDealEnd, str]] = ..., contract: _Optional[_Union[KleurenwiezenContract, _Mapping]] = ..., declarer_tricks: _Optional[_Iterable[int]] = ..., multiplier: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ...) -> None: ...

class KleurenwiezenEvent(_message.Message):
    __slots__ = ("seat", "action", "automatic")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    AUTOMATIC_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: KleurenwiezenAction
    automatic: bool
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[KleurenwiezenAction, _Mapping]] = ..., automatic: _Optional[bool] = ...) -> None: ...

class KleurenwiezenView(_message.Message):
    __slots__ = ("deals", "shuffle_between_deals", "rondpas_needs_p4", "stop_when_decided", "deal_number", "dealer", "active", "phase", "round", "troel_holder", "troel_aces", "seats", "high", "rondpas_calls", "parties", "contract", "trump", "target", "partner", "leader", "trick", "tricks", "hand", "discard", "shown", "shown_seat", "doubling", "multiplier", "results", "history", "to_act")
    DEALS_FIELD_NUMBER: _ClassVar[int]
    SHUFFLE_BETWEEN_DEALS_FIELD_NUMBER: _ClassVar[int]
    RONDPAS_NEEDS_P4_FIELD_NUMBER: _ClassVar[int]
    STOP_WHEN_DECIDED_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TROEL_HOLDER_FIELD_NUMBER: _ClassVar[int]
    TROEL_ACES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    RONDPAS_CALLS_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PARTNER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    SHOWN_SEAT_FIELD_NUMBER: _ClassVar[int]
    DOUBLING_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    deals: int
    shuffle_between_deals: bool
    rondpas_needs_p4: bool
    stop_when_decided: bool
    deal_number: int
    dealer: int
    active: _containers.RepeatedScalarFieldContainer[int]
    phase: KleurenwiezenPhase
    round: int
    troel_holder: int
    troel_aces: int
    seats: _containers.RepeatedCompositeFieldContainer[KleurenwiezenSeat]
    high: KleurenwiezenBid
    rondpas_calls: int
    parties: _containers.RepeatedCompositeFieldContainer[KleurenwiezenParty]
    contract: KleurenwiezenContract
    trump: KleurenwiezenSuit
    target: int
    partner: int
    leader: int
    trick: _containers.RepeatedCompositeFieldContainer[KleurenwiezenPlay]
    tricks: _containers.RepeatedCompositeFieldContainer[KleurenwiezenTrick]
    hand: _containers.RepeatedScalarFieldContainer[str]
    discard: str
    shown: _containers.RepeatedScalarFieldContainer[str]
    shown_seat: int
    doubling: bool
    multiplier: int
    results: _containers.RepeatedCompositeFieldContainer[KleurenwiezenDealResult]
    history: _containers.RepeatedCompositeFieldContainer[KleurenwiezenEvent]
    to_act: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, deals: _Optional[int] = ..., shuffle_between_deals: _Optional[bool] = ..., rondpas_needs_p4: _Optional[bool] = ..., stop_when_decided: _Optional[bool] = ..., deal_number: _Optional[int] = ..., dealer: _Optional[int] = ..., active: _Optional[_Iterable[int]] = ..., phase: _Optional[_Union[KleurenwiezenPhase, str]] = ..., round: _Optional[int] = ..., troel_holder: _Optional[int] = ..., troel_aces: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[KleurenwiezenSeat, _Mapping]]] = ..., high: _Optional[_Union[KleurenwiezenBid, _Mapping]] = ..., rondpas_calls: _Optional[int] = ..., parties: _Optional[_Iterable[_Union[KleurenwiezenParty, _Mapping]]] = ..., contract: _Optional[_Union[KleurenwiezenContract, _Mapping]] = ..., trump: _Optional[_Union[KleurenwiezenSuit, str]] = ..., target: _Optional[int] = ..., partner: _Optional[int] = ..., leader: _Optional[int] = ..., trick: _Optional[_Iterable[_Union[KleurenwiezenPlay, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[KleurenwiezenTrick, _Mapping]]] = ..., hand: _Optional[_Iterable[str]] = ..., discard: _Optional[str] = ..., shown: _Optional[_Iterable[str]] = ..., shown_seat: _Optional[int] = ..., doubling: _Optional[bool] = ..., multiplier: _Optional[int] = ..., results: _Optional[_Iterable[_Union[KleurenwiezenDealResult, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[KleurenwiezenEvent, _Mapping]]] = ..., to_act: _Optional[_Iterable[int]] = ...) -> None: ...

class KleurenwiezenAction(_message.Message):
    __slots__ = ("wait", "rondpas", "dood", "reask", "pastroel", "ask", "join", "alone", "bid", "discard", "play")
    class Pass(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Wait(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Rondpas(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Dood(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Reask(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Pastroel(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Ask(_message.Message):
        __slots__ = ("suit",)
        SUIT_FIELD_NUMBER: _ClassVar[int]
        suit: KleurenwiezenSuit
        def __init__(self, suit: _Optional[_Union[KleurenwiezenSuit, str]] = ...) -> None: ...
    class Join(_message.Message):
        __slots__ = ("suit",)
        SUIT_FIELD_NUMBER: _ClassVar[int]
        suit: KleurenwiezenSuit
        def __init__(self, suit: _Optional[_Union[KleurenwiezenSuit, str]] = ...) -> None: ...
    class Alone(_message.Message):
        __slots__ = ("suit",)
        SUIT_FIELD_NUMBER: _ClassVar[int]
        suit: KleurenwiezenSuit
        def __init__(self, suit: _Optional[_Union[KleurenwiezenSuit, str]] = ...) -> None: ...
    class Raise(_message.Message):
        __slots__ = ("tricks",)
        TRICKS_FIELD_NUMBER: _ClassVar[int]
        tricks: int
        def __init__(self, tricks: _Optional[int] = ...) -> None: ...
    class Discard(_message.Message):
        __slots__ = ("card",)
        CARD_FIELD_NUMBER: _ClassVar[int]
        card: str
        def __init__(self, card: _Optional[str] = ...) -> None: ...
    class Play(_message.Message):
        __slots__ = ("card",)
        CARD_FIELD_NUMBER: _ClassVar[int]
        card: str
        def __init__(self, card: _Optional[str] = ...) -> None: ...
    PASS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    RONDPAS_FIELD_NUMBER: _ClassVar[int]
    DOOD_FIELD_NUMBER: _ClassVar[int]
    REASK_FIELD_NUMBER: _ClassVar[int]
    PASTROEL_FIELD_NUMBER: _ClassVar[int]
    ASK_FIELD_NUMBER: _ClassVar[int]
    JOIN_FIELD_NUMBER: _ClassVar[int]
    ALONE_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    RAISE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    wait: KleurenwiezenAction.Wait
    rondpas: KleurenwiezenAction.Rondpas
    dood: KleurenwiezenAction.Dood
    reask: KleurenwiezenAction.Reask
    pastroel: KleurenwiezenAction.Pastroel
    ask: KleurenwiezenAction.Ask
    join: KleurenwiezenAction.Join
    alone: KleurenwiezenAction.Alone
    bid: KleurenwiezenBid
    discard: KleurenwiezenAction.Discard
    play: KleurenwiezenAction.Play
    def __init__(self, wait: _Optional[_Union[KleurenwiezenAction.Wait, _Mapping]] = ..., rondpas: _Optional[_Union[KleurenwiezenAction.Rondpas, _Mapping]] = ..., dood: _Optional[_Union[KleurenwiezenAction.Dood, _Mapping]] = ..., reask: _Optional[_Union[KleurenwiezenAction.Reask, _Mapping]] = ..., pastroel: _Optional[_Union[KleurenwiezenAction.Pastroel, _Mapping]] = ..., ask: _Optional[_Union[KleurenwiezenAction.Ask, _Mapping]] = ..., join: _Optional[_Union[KleurenwiezenAction.Join, _Mapping]] = ..., alone: _Optional[_Union[KleurenwiezenAction.Alone, _Mapping]] = ..., bid: _Optional[_Union[KleurenwiezenBid, _Mapping]] = ..., discard: _Optional[_Union[KleurenwiezenAction.Discard, _Mapping]] = ..., play: _Optional[_Union[KleurenwiezenAction.Play, _Mapping]] = ..., **kwargs) -> None: ...
