from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KarelKakelaarPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KAREL_KAKELAAR_PHASE_UNSPECIFIED: _ClassVar[KarelKakelaarPhase]
    KAREL_KAKELAAR_PHASE_BID: _ClassVar[KarelKakelaarPhase]
    KAREL_KAKELAAR_PHASE_MOTHER_HEN: _ClassVar[KarelKakelaarPhase]
    KAREL_KAKELAAR_PHASE_OVER: _ClassVar[KarelKakelaarPhase]

class KarelKakelaarCardKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KAREL_KAKELAAR_CARD_KIND_UNSPECIFIED: _ClassVar[KarelKakelaarCardKind]
    KAREL_KAKELAAR_CARD_KIND_CHICKEN: _ClassVar[KarelKakelaarCardKind]
    KAREL_KAKELAAR_CARD_KIND_WORM: _ClassVar[KarelKakelaarCardKind]
    KAREL_KAKELAAR_CARD_KIND_MOTHER_HEN: _ClassVar[KarelKakelaarCardKind]
KAREL_KAKELAAR_PHASE_UNSPECIFIED: KarelKakelaarPhase
KAREL_KAKELAAR_PHASE_BID: KarelKakelaarPhase
KAREL_KAKELAAR_PHASE_MOTHER_HEN: KarelKakelaarPhase
KAREL_KAKELAAR_PHASE_OVER: KarelKakelaarPhase
KAREL_KAKELAAR_CARD_KIND_UNSPECIFIED: KarelKakelaarCardKind
KAREL_KAKELAAR_CARD_KIND_CHICKEN: KarelKakelaarCardKind
KAREL_KAKELAAR_CARD_KIND_WORM: KarelKakelaarCardKind
KAREL_KAKELAAR_CARD_KIND_MOTHER_HEN: KarelKakelaarCardKind

class KarelKakelaarCard(_message.Message):
    __slots__ = ("id", "kind", "value", "colour")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: KarelKakelaarCardKind
    value: int
    colour: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[_Union[KarelKakelaarCardKind, str]] = ..., value: _Optional[int] = ..., colour: _Optional[str] = ...) -> None: ...

class KarelKakelaarHenDecision(_message.Message):
    __slots__ = ("seat", "played", "hen", "take")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    HEN_FIELD_NUMBER: _ClassVar[int]
    TAKE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    played: bool
    hen: KarelKakelaarCard
    take: _containers.RepeatedCompositeFieldContainer[KarelKakelaarCard]
    def __init__(self, seat: _Optional[int] = ..., played: _Optional[bool] = ..., hen: _Optional[_Union[KarelKakelaarCard, _Mapping]] = ..., take: _Optional[_Iterable[_Union[KarelKakelaarCard, _Mapping]]] = ...) -> None: ...

class KarelKakelaarBid(_message.Message):
    __slots__ = ("bidder", "card", "rank", "taken")
    BIDDER_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    bidder: int
    card: KarelKakelaarCard
    rank: int
    taken: KarelKakelaarCard
    def __init__(self, bidder: _Optional[int] = ..., card: _Optional[_Union[KarelKakelaarCard, _Mapping]] = ..., rank: _Optional[int] = ..., taken: _Optional[_Union[KarelKakelaarCard, _Mapping]] = ...) -> None: ...

class KarelKakelaarRound(_message.Message):
    __slots__ = ("number", "tractor", "row", "bids", "decisions")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRACTOR_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    number: int
    tractor: int
    row: _containers.RepeatedCompositeFieldContainer[KarelKakelaarCard]
    bids: _containers.RepeatedCompositeFieldContainer[KarelKakelaarBid]
    decisions: _containers.RepeatedCompositeFieldContainer[KarelKakelaarHenDecision]
    def __init__(self, number: _Optional[int] = ..., tractor: _Optional[int] = ..., row: _Optional[_Iterable[_Union[KarelKakelaarCard, _Mapping]]] = ..., bids: _Optional[_Iterable[_Union[KarelKakelaarBid, _Mapping]]] = ..., decisions: _Optional[_Iterable[_Union[KarelKakelaarHenDecision, _Mapping]]] = ...) -> None: ...

class KarelKakelaarSeat(_message.Message):
    __slots__ = ("seat", "hand_size", "committed", "discard")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_size: int
    committed: bool
    discard: _containers.RepeatedCompositeFieldContainer[KarelKakelaarCard]
    def __init__(self, seat: _Optional[int] = ..., hand_size: _Optional[int] = ..., committed: _Optional[bool] = ..., discard: _Optional[_Iterable[_Union[KarelKakelaarCard, _Mapping]]] = ...) -> None: ...

class KarelKakelaarView(_message.Message):
    __slots__ = ("worm_counts", "round", "rounds", "phase", "tractor", "robot", "row", "hand", "bid", "decision", "seats", "draw_size", "box_size", "robot_deck_size", "out", "history")
    WORM_COUNTS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TRACTOR_FIELD_NUMBER: _ClassVar[int]
    ROBOT_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    DRAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    BOX_SIZE_FIELD_NUMBER: _ClassVar[int]
    ROBOT_DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    OUT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    worm_counts: _containers.RepeatedScalarFieldContainer[int]
    round: int
    rounds: int
    phase: KarelKakelaarPhase
    tractor: int
    robot: bool
    row: _containers.RepeatedCompositeFieldContainer[KarelKakelaarCard]
    hand: _containers.RepeatedCompositeFieldContainer[KarelKakelaarCard]
    bid: KarelKakelaarCard
    decision: KarelKakelaarHenDecision
    seats: _containers.RepeatedCompositeFieldContainer[KarelKakelaarSeat]
    draw_size: int
    box_size: int
    robot_deck_size: int
    out: _containers.RepeatedCompositeFieldContainer[KarelKakelaarCard]
    history: _containers.RepeatedCompositeFieldContainer[KarelKakelaarRound]
    def __init__(self, worm_counts: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., phase: _Optional[_Union[KarelKakelaarPhase, str]] = ..., tractor: _Optional[int] = ..., robot: _Optional[bool] = ..., row: _Optional[_Iterable[_Union[KarelKakelaarCard, _Mapping]]] = ..., hand: _Optional[_Iterable[_Union[KarelKakelaarCard, _Mapping]]] = ..., bid: _Optional[_Union[KarelKakelaarCard, _Mapping]] = ..., decision: _Optional[_Union[KarelKakelaarHenDecision, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[KarelKakelaarSeat, _Mapping]]] = ..., draw_size: _Optional[int] = ..., box_size: _Optional[int] = ..., robot_deck_size: _Optional[int] = ..., out: _Optional[_Iterable[_Union[KarelKakelaarCard, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[KarelKakelaarRound, _Mapping]]] = ...) -> None: ...

class KarelKakelaarAction(_message.Message):
    __slots__ = ("bid", "play_mother_hen", "skip_mother_hen")
    class Bid(_message.Message):
        __slots__ = ("card",)
        CARD_FIELD_NUMBER: _ClassVar[int]
        card: str
        def __init__(self, card: _Optional[str] = ...) -> None: ...
    class PlayMotherHen(_message.Message):
        __slots__ = ("hen", "take")
        HEN_FIELD_NUMBER: _ClassVar[int]
        TAKE_FIELD_NUMBER: _ClassVar[int]
        hen: str
        take: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, hen: _Optional[str] = ..., take: _Optional[_Iterable[str]] = ...) -> None: ...
    class SkipMotherHen(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    BID_FIELD_NUMBER: _ClassVar[int]
    PLAY_MOTHER_HEN_FIELD_NUMBER: _ClassVar[int]
    SKIP_MOTHER_HEN_FIELD_NUMBER: _ClassVar[int]
    bid: KarelKakelaarAction.Bid
    play_mother_hen: KarelKakelaarAction.PlayMotherHen
    skip_mother_hen: KarelKakelaarAction.SkipMotherHen
    def __init__(self, bid: _Optional[_Union[KarelKakelaarAction.Bid, _Mapping]] = ..., play_mother_hen: _Optional[_Union[KarelKakelaarAction.PlayMotherHen, _Mapping]] = ..., skip_mother_hen: _Optional[_Union[KarelKakelaarAction.SkipMotherHen, _Mapping]] = ...) -> None: ...
