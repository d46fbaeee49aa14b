from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Take5Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TAKE5_PHASE_UNSPECIFIED: _ClassVar[Take5Phase]
    TAKE5_PHASE_SELECT: _ClassVar[Take5Phase]
    TAKE5_PHASE_ROW_CHOICE: _ClassVar[Take5Phase]
    TAKE5_PHASE_OVER: _ClassVar[Take5Phase]
TAKE5_PHASE_UNSPECIFIED: Take5Phase
TAKE5_PHASE_SELECT: Take5Phase
TAKE5_PHASE_ROW_CHOICE: Take5Phase
TAKE5_PHASE_OVER: Take5Phase

class Take5Card(_message.Message):
    __slots__ = ("number", "heads")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    HEADS_FIELD_NUMBER: _ClassVar[int]
    number: int
    heads: int
    def __init__(self, number: _Optional[int] = ..., heads: _Optional[int] = ...) -> None: ...

class Take5Row(_message.Message):
    __slots__ = ("number", "cards", "heads")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    HEADS_FIELD_NUMBER: _ClassVar[int]
    number: int
    cards: _containers.RepeatedCompositeFieldContainer[Take5Card]
    heads: int
    def __init__(self, number: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Take5Card, _Mapping]]] = ..., heads: _Optional[int] = ...) -> None: ...

class Take5Seat(_message.Message):
    __slots__ = ("seat", "hand_size", "committed", "penalty", "penalty_heads", "deal_scores", "total")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FIELD_NUMBER: _ClassVar[int]
    PENALTY_HEADS_FIELD_NUMBER: _ClassVar[int]
    DEAL_SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_size: int
    committed: bool
    penalty: _containers.RepeatedCompositeFieldContainer[Take5Card]
    penalty_heads: int
    deal_scores: _containers.RepeatedScalarFieldContainer[int]
    total: int
    def __init__(self, seat: _Optional[int] = ..., hand_size: _Optional[int] = ..., committed: _Optional[bool] = ..., penalty: _Optional[_Iterable[_Union[Take5Card, _Mapping]]] = ..., penalty_heads: _Optional[int] = ..., deal_scores: _Optional[_Iterable[int]] = ..., total: _Optional[int] = ...) -> None: ...

class Take5Reveal(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...

class Take5Placement(_message.Message):
    __slots__ = ("seat", "card", "row", "taken", "chosen")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    row: int
    taken: _containers.RepeatedScalarFieldContainer[int]
    chosen: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., row: _Optional[int] = ..., taken: _Optional[_Iterable[int]] = ..., chosen: _Optional[bool] = ...) -> None: ...

class Take5Turn(_message.Message):
    __slots__ = ("number", "revealed", "placements")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    number: int
    revealed: _containers.RepeatedCompositeFieldContainer[Take5Reveal]
    placements: _containers.RepeatedCompositeFieldContainer[Take5Placement]
    def __init__(self, number: _Optional[int] = ..., revealed: _Optional[_Iterable[_Union[Take5Reveal, _Mapping]]] = ..., placements: _Optional[_Iterable[_Union[Take5Placement, _Mapping]]] = ...) -> None: ...

class Take5View(_message.Message):
    __slots__ = ("edition", "deal", "deals", "end_score", "turn", "turns", "phase", "rows", "hand", "selected", "seats", "to_place", "history")
    EDITION_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    END_SCORE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    SELECTED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TO_PLACE_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    edition: str
    deal: int
    deals: int
    end_score: int
    turn: int
    turns: int
    phase: Take5Phase
    rows: _containers.RepeatedCompositeFieldContainer[Take5Row]
    hand: _containers.RepeatedCompositeFieldContainer[Take5Card]
    selected: int
    seats: _containers.RepeatedCompositeFieldContainer[Take5Seat]
    to_place: _containers.RepeatedCompositeFieldContainer[Take5Reveal]
    history: _containers.RepeatedCompositeFieldContainer[Take5Turn]
    def __init__(self, edition: _Optional[str] = ..., deal: _Optional[int] = ..., deals: _Optional[int] = ..., end_score: _Optional[int] = ..., turn: _Optional[int] = ..., turns: _Optional[int] = ..., phase: _Optional[_Union[Take5Phase, str]] = ..., rows: _Optional[_Iterable[_Union[Take5Row, _Mapping]]] = ..., hand: _Optional[_Iterable[_Union[Take5Card, _Mapping]]] = ..., selected: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[Take5Seat, _Mapping]]] = ..., to_place: _Optional[_Iterable[_Union[Take5Reveal, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[Take5Turn, _Mapping]]] = ...) -> None: ...

class Take5Action(_message.Message):
    __slots__ = ("select", "choose_row")
    class Select(_message.Message):
        __slots__ = ("card",)
        CARD_FIELD_NUMBER: _ClassVar[int]
        card: int
        def __init__(self, card: _Optional[int] = ...) -> None: ...
    class ChooseRow(_message.Message):
        __slots__ = ("row",)
        ROW_FIELD_NUMBER: _ClassVar[int]
        row: int
        def __init__(self, row: _Optional[int] = ...) -> None: ...
    SELECT_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_ROW_FIELD_NUMBER: _ClassVar[int]
    select: Take5Action.Select
    choose_row: Take5Action.ChooseRow
    def __init__(self, select: _Optional[_Union[Take5Action.Select, _Mapping]] = ..., choose_row: _Optional[_Union[Take5Action.ChooseRow, _Mapping]] = ...) -> None: ...
