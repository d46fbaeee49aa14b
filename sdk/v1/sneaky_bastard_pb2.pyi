from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SneakyBastardPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNEAKY_BASTARD_PHASE_UNSPECIFIED: _ClassVar[SneakyBastardPhase]
    SNEAKY_BASTARD_PHASE_HOUSE_AUCTION: _ClassVar[SneakyBastardPhase]
    SNEAKY_BASTARD_PHASE_SNEAKY_AUCTION: _ClassVar[SneakyBastardPhase]
    SNEAKY_BASTARD_PHASE_OVER: _ClassVar[SneakyBastardPhase]

class SneakyBastardCardKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNEAKY_BASTARD_CARD_KIND_UNSPECIFIED: _ClassVar[SneakyBastardCardKind]
    SNEAKY_BASTARD_CARD_KIND_MONEY: _ClassVar[SneakyBastardCardKind]
    SNEAKY_BASTARD_CARD_KIND_HOUSE: _ClassVar[SneakyBastardCardKind]

class SneakyBastardStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNEAKY_BASTARD_STATUS_UNSPECIFIED: _ClassVar[SneakyBastardStatus]
    SNEAKY_BASTARD_STATUS_BIDDER: _ClassVar[SneakyBastardStatus]
    SNEAKY_BASTARD_STATUS_SNEAK: _ClassVar[SneakyBastardStatus]
    SNEAKY_BASTARD_STATUS_OUT: _ClassVar[SneakyBastardStatus]
    SNEAKY_BASTARD_STATUS_BUYER: _ClassVar[SneakyBastardStatus]
SNEAKY_BASTARD_PHASE_UNSPECIFIED: SneakyBastardPhase
SNEAKY_BASTARD_PHASE_HOUSE_AUCTION: SneakyBastardPhase
SNEAKY_BASTARD_PHASE_SNEAKY_AUCTION: SneakyBastardPhase
SNEAKY_BASTARD_PHASE_OVER: SneakyBastardPhase
SNEAKY_BASTARD_CARD_KIND_UNSPECIFIED: SneakyBastardCardKind
SNEAKY_BASTARD_CARD_KIND_MONEY: SneakyBastardCardKind
SNEAKY_BASTARD_CARD_KIND_HOUSE: SneakyBastardCardKind
SNEAKY_BASTARD_STATUS_UNSPECIFIED: SneakyBastardStatus
SNEAKY_BASTARD_STATUS_BIDDER: SneakyBastardStatus
SNEAKY_BASTARD_STATUS_SNEAK: SneakyBastardStatus
SNEAKY_BASTARD_STATUS_OUT: SneakyBastardStatus
SNEAKY_BASTARD_STATUS_BUYER: SneakyBastardStatus

class SneakyBastardCard(_message.Message):
    __slots__ = ("kind", "value")
    KIND_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    kind: SneakyBastardCardKind
    value: int
    def __init__(self, kind: _Optional[_Union[SneakyBastardCardKind, str]] = ..., value: _Optional[int] = ...) -> None: ...

class SneakyBastardSeat(_message.Message):
    __slots__ = ("seat", "status", "front", "bid", "owns_sneaky_card", "hand_size")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FRONT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    OWNS_SNEAKY_CARD_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    status: SneakyBastardStatus
    front: _containers.RepeatedCompositeFieldContainer[SneakyBastardCard]
    bid: int
    owns_sneaky_card: bool
    hand_size: int
    def __init__(self, seat: _Optional[int] = ..., status: _Optional[_Union[SneakyBastardStatus, str]] = ..., front: _Optional[_Iterable[_Union[SneakyBastardCard, _Mapping]]] = ..., bid: _Optional[int] = ..., owns_sneaky_card: _Optional[bool] = ..., hand_size: _Optional[int] = ...) -> None: ...

class SneakyBastardMove(_message.Message):
    __slots__ = ("round", "seat", "action")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    round: int
    seat: int
    action: SneakyBastardAction
    def __init__(self, round: _Optional[int] = ..., seat: _Optional[int] = ..., action: _Optional[_Union[SneakyBastardAction, _Mapping]] = ...) -> None: ...

class SneakyBastardRoundResult(_message.Message):
    __slots__ = ("round", "house", "start_player", "buyer", "price", "sneaky_winner", "sneaky_bid")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    START_PLAYER_FIELD_NUMBER: _ClassVar[int]
    BUYER_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    SNEAKY_WINNER_FIELD_NUMBER: _ClassVar[int]
    SNEAKY_BID_FIELD_NUMBER: _ClassVar[int]
    round: int
    house: SneakyBastardCard
    start_player: int
    buyer: int
    price: _containers.RepeatedCompositeFieldContainer[SneakyBastardCard]
    sneaky_winner: int
    sneaky_bid: _containers.RepeatedCompositeFieldContainer[SneakyBastardCard]
    def __init__(self, round: _Optional[int] = ..., house: _Optional[_Union[SneakyBastardCard, _Mapping]] = ..., start_player: _Optional[int] = ..., buyer: _Optional[int] = ..., price: _Optional[_Iterable[_Union[SneakyBastardCard, _Mapping]]] = ..., sneaky_winner: _Optional[int] = ..., sneaky_bid: _Optional[_Iterable[_Union[SneakyBastardCard, _Mapping]]] = ...) -> None: ...

class SneakyBastardView(_message.Message):
    __slots__ = ("phase", "round", "rounds", "money", "houses", "minimum_bid", "house", "preview", "deck_size", "start_player", "turn", "forced", "seats", "pending", "hand", "discarded", "history", "results")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    MONEY_FIELD_NUMBER: _ClassVar[int]
    HOUSES_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_BID_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    START_PLAYER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    FORCED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    phase: SneakyBastardPhase
    round: int
    rounds: int
    money: _containers.RepeatedScalarFieldContainer[int]
    houses: _containers.RepeatedScalarFieldContainer[int]
    minimum_bid: int
    house: SneakyBastardCard
    preview: SneakyBastardCard
    deck_size: int
    start_player: int
    turn: int
    forced: bool
    seats: _containers.RepeatedCompositeFieldContainer[SneakyBastardSeat]
    pending: _containers.RepeatedCompositeFieldContainer[SneakyBastardCard]
    hand: _containers.RepeatedCompositeFieldContainer[SneakyBastardCard]
    discarded: _containers.RepeatedCompositeFieldContainer[SneakyBastardCard]
    history: _containers.RepeatedCompositeFieldContainer[SneakyBastardMove]
    results: _containers.RepeatedCompositeFieldContainer[SneakyBastardRoundResult]
    def __init__(self, phase: _Optional[_Union[SneakyBastardPhase, str]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., money: _Optional[_Iterable[int]] = ..., houses: _Optional[_Iterable[int]] = ..., minimum_bid: _Optional[int] = ..., house: _Optional[_Union[SneakyBastardCard, _Mapping]] = ..., preview: _Optional[_Union[SneakyBastardCard, _Mapping]] = ..., deck_size: _Optional[int] = ..., start_player: _Optional[int] = ..., turn: _Optional[int] = ..., forced: _Optional[bool] = ..., seats: _Optional[_Iterable[_Union[SneakyBastardSeat, _Mapping]]] = ..., pending: _Optional[_Iterable[_Union[SneakyBastardCard, _Mapping]]] = ..., hand: _Optional[_Iterable[_Union[SneakyBastardCard, _Mapping]]] = ..., discarded: _Optional[_Iterable[_Union[SneakyBastardCard, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[SneakyBastardMove, _Mapping]]] = ..., results: _Optional[_Iterable[_Union[SneakyBastardRoundResult, _Mapping]]] = ...) -> None: ...

class SneakyBastardAction(_message.Message):
    __slots__ = ("add", "bid", "sneak")
    class Add(_message.Message):
        __slots__ = ("card",)
        CARD_FIELD_NUMBER: _ClassVar[int]
        card: SneakyBastardCard
        def __init__(self, card: _Optional[_Union[SneakyBastardCard, _Mapping]] = ...) -> None: ...
    class Bid(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Sneak(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Raise(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Pass(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    ADD_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    SNEAK_FIELD_NUMBER: _ClassVar[int]
    RAISE_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    add: SneakyBastardAction.Add
    bid: SneakyBastardAction.Bid
    sneak: SneakyBastardAction.Sneak
    def __init__(self, add: _Optional[_Union[SneakyBastardAction.Add, _Mapping]] = ..., bid: _Optional[_Union[SneakyBastardAction.Bid, _Mapping]] = ..., sneak: _Optional[_Union[SneakyBastardAction.Sneak, _Mapping]] = ..., **kwargs) -> None: ...
