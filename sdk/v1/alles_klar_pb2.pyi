from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AllesKlarPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ALLES_KLAR_PHASE_UNSPECIFIED: _ClassVar[AllesKlarPhase]
    ALLES_KLAR_PHASE_PLAY: _ClassVar[AllesKlarPhase]
    ALLES_KLAR_PHASE_OVER: _ClassVar[AllesKlarPhase]

class AllesKlarResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ALLES_KLAR_RESULT_UNSPECIFIED: _ClassVar[AllesKlarResult]
    ALLES_KLAR_RESULT_WON: _ClassVar[AllesKlarResult]
    ALLES_KLAR_RESULT_BLIND: _ClassVar[AllesKlarResult]
    ALLES_KLAR_RESULT_UNDECIDED: _ClassVar[AllesKlarResult]
ALLES_KLAR_PHASE_UNSPECIFIED: AllesKlarPhase
ALLES_KLAR_PHASE_PLAY: AllesKlarPhase
ALLES_KLAR_PHASE_OVER: AllesKlarPhase
ALLES_KLAR_RESULT_UNSPECIFIED: AllesKlarResult
ALLES_KLAR_RESULT_WON: AllesKlarResult
ALLES_KLAR_RESULT_BLIND: AllesKlarResult
ALLES_KLAR_RESULT_UNDECIDED: AllesKlarResult

class AllesKlarCard(_message.Message):
    __slots__ = ("id", "number", "numerals")
    ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    NUMERALS_FIELD_NUMBER: _ClassVar[int]
    id: str
    number: int
    numerals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, id: _Optional[str] = ..., number: _Optional[int] = ..., numerals: _Optional[_Iterable[int]] = ...) -> None: ...

class AllesKlarPlay(_message.Message):
    __slots__ = ("seat", "card", "numeral", "turned_card", "turned_rank", "drew", "face_up")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    NUMERAL_FIELD_NUMBER: _ClassVar[int]
    TURNED_CARD_FIELD_NUMBER: _ClassVar[int]
    TURNED_RANK_FIELD_NUMBER: _ClassVar[int]
    DREW_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: AllesKlarCard
    numeral: int
    turned_card: str
    turned_rank: int
    drew: bool
    face_up: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[AllesKlarCard, _Mapping]] = ..., numeral: _Optional[int] = ..., turned_card: _Optional[str] = ..., turned_rank: _Optional[int] = ..., drew: _Optional[bool] = ..., face_up: _Optional[bool] = ...) -> None: ...

class AllesKlarTrick(_message.Message):
    __slots__ = ("number", "leader", "plays", "result", "seat")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    number: int
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[AllesKlarPlay]
    result: AllesKlarResult
    seat: int
    def __init__(self, number: _Optional[int] = ..., leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[AllesKlarPlay, _Mapping]]] = ..., result: _Optional[_Union[AllesKlarResult, str]] = ..., seat: _Optional[int] = ...) -> None: ...

class AllesKlarSeat(_message.Message):
    __slots__ = ("seat", "hand_size", "drawn", "pile")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    PILE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_size: int
    drawn: bool
    pile: _containers.RepeatedCompositeFieldContainer[AllesKlarCard]
    def __init__(self, seat: _Optional[int] = ..., hand_size: _Optional[int] = ..., drawn: _Optional[bool] = ..., pile: _Optional[_Iterable[_Union[AllesKlarCard, _Mapping]]] = ...) -> None: ...

class AllesKlarView(_message.Message):
    __slots__ = ("numerals", "winner_takes_facedown", "phase", "turn", "leader", "last_trick", "hand", "received", "seats", "stock_size", "ranks_up", "trick", "out", "history")
    NUMERALS_FIELD_NUMBER: _ClassVar[int]
    WINNER_TAKES_FACEDOWN_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LAST_TRICK_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    RANKS_UP_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    OUT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    numerals: _containers.RepeatedScalarFieldContainer[int]
    winner_takes_facedown: bool
    phase: AllesKlarPhase
    turn: int
    leader: int
    last_trick: bool
    hand: _containers.RepeatedCompositeFieldContainer[AllesKlarCard]
    received: _containers.RepeatedCompositeFieldContainer[AllesKlarCard]
    seats: _containers.RepeatedCompositeFieldContainer[AllesKlarSeat]
    stock_size: int
    ranks_up: _containers.RepeatedScalarFieldContainer[bool]
    trick: _containers.RepeatedCompositeFieldContainer[AllesKlarPlay]
    out: _containers.RepeatedCompositeFieldContainer[AllesKlarCard]
    history: _containers.RepeatedCompositeFieldContainer[AllesKlarTrick]
    def __init__(self, numerals: _Optional[_Iterable[int]] = ..., winner_takes_facedown: _Optional[bool] = ..., phase: _Optional[_Union[AllesKlarPhase, str]] = ..., turn: _Optional[int] = ..., leader: _Optional[int] = ..., last_trick: _Optional[bool] = ..., hand: _Optional[_Iterable[_Union[AllesKlarCard, _Mapping]]] = ..., received: _Optional[_Iterable[_Union[AllesKlarCard, _Mapping]]] = ..., seats: _Optional[_Iterable[_Union[AllesKlarSeat, _Mapping]]] = ..., stock_size: _Optional[int] = ..., ranks_up: _Optional[_Iterable[bool]] = ..., trick: _Optional[_Iterable[_Union[AllesKlarPlay, _Mapping]]] = ..., out: _Optional[_Iterable[_Union[AllesKlarCard, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[AllesKlarTrick, _Mapping]]] = ...) -> None: ...

class AllesKlarAction(_message.Message):
    __slots__ = ("play",)
    class Play(_message.Message):
        __slots__ = ("card", "numeral")
        CARD_FIELD_NUMBER: _ClassVar[int]
        NUMERAL_FIELD_NUMBER: _ClassVar[int]
        card: str
        numeral: int
        def __init__(self, card: _Optional[str] = ..., numeral: _Optional[int] = ...) -> None: ...
    PLAY_FIELD_NUMBER: _ClassVar[int]
    play: AllesKlarAction.Play
    def __init__(self, play: _Optional[_Union[AllesKlarAction.Play, _Mapping]] = ...) -> None: ...
