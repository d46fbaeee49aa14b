from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BeverbendePhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BEVERBENDE_PHASE_UNSPECIFIED: _ClassVar[BeverbendePhase]
    BEVERBENDE_PHASE_TURN_START: _ClassVar[BeverbendePhase]
    BEVERBENDE_PHASE_DRAWN: _ClassVar[BeverbendePhase]
    BEVERBENDE_PHASE_DRAW_TWICE_1: _ClassVar[BeverbendePhase]
    BEVERBENDE_PHASE_DRAW_TWICE_2: _ClassVar[BeverbendePhase]
    BEVERBENDE_PHASE_KNOCK_DECISION: _ClassVar[BeverbendePhase]
    BEVERBENDE_PHASE_OVER: _ClassVar[BeverbendePhase]

class BeverbendeEventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BEVERBENDE_EVENT_KIND_UNSPECIFIED: _ClassVar[BeverbendeEventKind]
    BEVERBENDE_EVENT_KIND_DEAL: _ClassVar[BeverbendeEventKind]
    BEVERBENDE_EVENT_KIND_ACTION: _ClassVar[BeverbendeEventKind]
    BEVERBENDE_EVENT_KIND_RESHUFFLE: _ClassVar[BeverbendeEventKind]
    BEVERBENDE_EVENT_KIND_REPLACE: _ClassVar[BeverbendeEventKind]
BEVERBENDE_PHASE_UNSPECIFIED: BeverbendePhase
BEVERBENDE_PHASE_TURN_START: BeverbendePhase
BEVERBENDE_PHASE_DRAWN: BeverbendePhase
BEVERBENDE_PHASE_DRAW_TWICE_1: BeverbendePhase
BEVERBENDE_PHASE_DRAW_TWICE_2: BeverbendePhase
BEVERBENDE_PHASE_KNOCK_DECISION: BeverbendePhase
BEVERBENDE_PHASE_OVER: BeverbendePhase
BEVERBENDE_EVENT_KIND_UNSPECIFIED: BeverbendeEventKind
BEVERBENDE_EVENT_KIND_DEAL: BeverbendeEventKind
BEVERBENDE_EVENT_KIND_ACTION: BeverbendeEventKind
BEVERBENDE_EVENT_KIND_RESHUFFLE: BeverbendeEventKind
BEVERBENDE_EVENT_KIND_REPLACE: BeverbendeEventKind

class BeverbendeRow(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class BeverbendeRoundScores(_message.Message):
    __slots__ = ("scores",)
    SCORES_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, scores: _Optional[_Iterable[int]] = ...) -> None: ...

class BeverbendeEvent(_message.Message):
    __slots__ = ("kind", "seat", "action", "position", "shown")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    kind: BeverbendeEventKind
    seat: int
    action: BeverbendeAction
    position: int
    shown: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kind: _Optional[_Union[BeverbendeEventKind, str]] = ..., seat: _Optional[int] = ..., action: _Optional[_Union[BeverbendeAction, _Mapping]] = ..., position: _Optional[int] = ..., shown: _Optional[_Iterable[str]] = ...) -> None: ...

class BeverbendeView(_message.Message):
    __slots__ = ("number_counts", "turn_limit", "round", "rounds", "start_player", "phase", "actor", "turns", "knocker", "rows", "drawn", "holding", "pending", "discard", "draw_size", "round_scores", "totals", "last_rows", "limited_rounds", "history")
    NUMBER_COUNTS_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    START_PLAYER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    KNOCKER_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    HOLDING_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DRAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    LAST_ROWS_FIELD_NUMBER: _ClassVar[int]
    LIMITED_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    number_counts: _containers.RepeatedScalarFieldContainer[int]
    turn_limit: int
    round: int
    rounds: int
    start_player: int
    phase: BeverbendePhase
    actor: int
    turns: _containers.RepeatedScalarFieldContainer[int]
    knocker: int
    rows: _containers.RepeatedCompositeFieldContainer[BeverbendeRow]
    drawn: str
    holding: bool
    pending: _containers.RepeatedScalarFieldContainer[str]
    discard: _containers.RepeatedScalarFieldContainer[str]
    draw_size: int
    round_scores: _containers.RepeatedCompositeFieldContainer[BeverbendeRoundScores]
    totals: _containers.RepeatedScalarFieldContainer[int]
    last_rows: _containers.RepeatedCompositeFieldContainer[BeverbendeRow]
    limited_rounds: int
    history: _containers.RepeatedCompositeFieldContainer[BeverbendeEvent]
    def __init__(self, number_counts: _Optional[_Iterable[int]] = ..., turn_limit: _Optional[int] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., start_player: _Optional[int] = ..., phase: _Optional[_Union[BeverbendePhase, str]] = ..., actor: _Optional[int] = ..., turns: _Optional[_Iterable[int]] = ..., knocker: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[BeverbendeRow, _Mapping]]] = ..., drawn: _Optional[str] = ..., holding: _Optional[bool] = ..., pending: _Optional[_Iterable[str]] = ..., discard: _Optional[_Iterable[str]] = ..., draw_size: _Optional[int] = ..., round_scores: _Optional[_Iterable[_Union[BeverbendeRoundScores, _Mapping]]] = ..., totals: _Optional[_Iterable[int]] = ..., last_rows: _Optional[_Iterable[_Union[BeverbendeRow, _Mapping]]] = ..., limited_rounds: _Optional[int] = ..., history: _Optional[_Iterable[_Union[BeverbendeEvent, _Mapping]]] = ...) -> None: ...

class BeverbendeAction(_message.Message):
    __slots__ = ("draw_deck", "take_discard", "discard_drawn", "swap_drawn", "peek", "swap", "draw_twice", "keep", "reject", "knock", "no_knock")
    class DrawDeck(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class TakeDiscard(_message.Message):
        __slots__ = ("position",)
        POSITION_FIELD_NUMBER: _ClassVar[int]
        position: int
        def __init__(self, position: _Optional[int] = ...) -> None: ...
    class DiscardDrawn(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class SwapDrawn(_message.Message):
        __slots__ = ("position",)
        POSITION_FIELD_NUMBER: _ClassVar[int]
        position: int
        def __init__(self, position: _Optional[int] = ...) -> None: ...
    class Peek(_message.Message):
        __slots__ = ("position",)
        POSITION_FIELD_NUMBER: _ClassVar[int]
        position: int
        def __init__(self, position: _Optional[int] = ...) -> None: ...
    class Swap(_message.Message):
        __slots__ = ("own_position", "other_seat", "other_position")
        OWN_POSITION_FIELD_NUMBER: _ClassVar[int]
        OTHER_SEAT_FIELD_NUMBER: _ClassVar[int]
        OTHER_POSITION_FIELD_NUMBER: _ClassVar[int]
        own_position: int
        other_seat: int
        other_position: int
        def __init__(self, own_position: _Optional[int] = ..., other_seat: _Optional[int] = ..., other_position: _Optional[int] = ...) -> None: ...
    class DrawTwice(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Keep(_message.Message):
        __slots__ = ("position",)
        POSITION_FIELD_NUMBER: _ClassVar[int]
        position: int
        def __init__(self, position: _Optional[int] = ...) -> None: ...
    class Reject(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Knock(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class NoKnock(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    DRAW_DECK_FIELD_NUMBER: _ClassVar[int]
    TAKE_DISCARD_FIELD_NUMBER: _ClassVar[int]
    DISCARD_DRAWN_FIELD_NUMBER: _ClassVar[int]
    SWAP_DRAWN_FIELD_NUMBER: _ClassVar[int]
    PEEK_FIELD_NUMBER: _ClassVar[int]
    SWAP_FIELD_NUMBER: _ClassVar[int]
    DRAW_TWICE_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    REJECT_FIELD_NUMBER: _ClassVar[int]
    KNOCK_FIELD_NUMBER: _ClassVar[int]
    NO_KNOCK_FIELD_NUMBER: _ClassVar[int]
    draw_deck: BeverbendeAction.DrawDeck
    take_discard: BeverbendeAction.TakeDiscard
    discard_drawn: BeverbendeAction.DiscardDrawn
    swap_drawn: BeverbendeAction.SwapDrawn
    peek: BeverbendeAction.Peek
    swap: BeverbendeAction.Swap
    draw_twice: BeverbendeAction.DrawTwice
    keep: BeverbendeAction.Keep
    reject: BeverbendeAction.Reject
    knock: BeverbendeAction.Knock
    no_knock: BeverbendeAction.NoKnock
    def __init__(self, draw_deck: _Optional[_Union[BeverbendeAction.DrawDeck, _Mapping]] = ..., take_discard: _Optional[_Union[BeverbendeAction.TakeDiscard, _Mapping]] = ..., discard_drawn: _Optional[_Union[BeverbendeAction.DiscardDrawn, _Mapping]] = ..., swap_drawn: _Optional[_Union[BeverbendeAction.SwapDrawn, _Mapping]] = ..., peek: _Optional[_Union[BeverbendeAction.Peek, _Mapping]] = ..., swap: _Optional[_Union[BeverbendeAction.Swap, _Mapping]] = ..., draw_twice: _Optional[_Union[BeverbendeAction.DrawTwice, _Mapping]] = ..., keep: _Optional[_Union[BeverbendeAction.Keep, _Mapping]] = ..., reject: _Optional[_Union[BeverbendeAction.Reject, _Mapping]] = ..., knock: _Optional[_Union[BeverbendeAction.Knock, _Mapping]] = ..., no_knock: _Optional[_Union[BeverbendeAction.NoKnock, _Mapping]] = ...) -> None: ...
