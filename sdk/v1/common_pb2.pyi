from speeltafel.sdk.v1 import alles_klar_pb2 as _alles_klar_pb2
from speeltafel.sdk.v1 import beverbende_pb2 as _beverbende_pb2
from speeltafel.sdk.v1 import karel_kakelaar_pb2 as _karel_kakelaar_pb2
from speeltafel.sdk.v1 import kleurenwiezen_pb2 as _kleurenwiezen_pb2
from speeltafel.sdk.v1 import sneaky_bastard_pb2 as _sneaky_bastard_pb2
from speeltafel.sdk.v1 import take5_pb2 as _take5_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus

class Action(_message.Message):
    __slots__ = ("take5", "karel_kakelaar", "sneaky_bastard", "beverbende", "alles_klar", "kleurenwiezen")
    TAKE5_FIELD_NUMBER: _ClassVar[int]
    KAREL_KAKELAAR_FIELD_NUMBER: _ClassVar[int]
    SNEAKY_BASTARD_FIELD_NUMBER: _ClassVar[int]
    BEVERBENDE_FIELD_NUMBER: _ClassVar[int]
    ALLES_KLAR_FIELD_NUMBER: _ClassVar[int]
    KLEURENWIEZEN_FIELD_NUMBER: _ClassVar[int]
    take5: _take5_pb2.Take5Action
    karel_kakelaar: _karel_kakelaar_pb2.KarelKakelaarAction
    sneaky_bastard: _sneaky_bastard_pb2.SneakyBastardAction
    beverbende: _beverbende_pb2.BeverbendeAction
    alles_klar: _alles_klar_pb2.AllesKlarAction
    kleurenwiezen: _kleurenwiezen_pb2.KleurenwiezenAction
    def __init__(self, take5: _Optional[_Union[_take5_pb2.Take5Action, _Mapping]] = ..., karel_kakelaar: _Optional[_Union[_karel_kakelaar_pb2.KarelKakelaarAction, _Mapping]] = ..., sneaky_bastard: _Optional[_Union[_sneaky_bastard_pb2.SneakyBastardAction, _Mapping]] = ..., beverbende: _Optional[_Union[_beverbende_pb2.BeverbendeAction, _Mapping]] = ..., alles_klar: _Optional[_Union[_alles_klar_pb2.AllesKlarAction, _Mapping]] = ..., kleurenwiezen: _Optional[_Union[_kleurenwiezen_pb2.KleurenwiezenAction, _Mapping]] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("move_clock_ms", "deadline_unix_ms", "remaining_ms", "time_bank_ms")
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    move_clock_ms: int
    deadline_unix_ms: int
    remaining_ms: int
    time_bank_ms: int
    def __init__(self, move_clock_ms: _Optional[int] = ..., deadline_unix_ms: _Optional[int] = ..., remaining_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class Outcome(_message.Message):
    __slots__ = ("scores", "ranks", "utilities", "termination")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    UTILITIES_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    utilities: _containers.RepeatedScalarFieldContainer[float]
    termination: str
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., utilities: _Optional[_Iterable[float]] = ..., termination: _Optional[str] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("match_id", "seat", "version", "status", "game", "rules_version", "phase", "to_act", "clock", "legal_actions", "outcome", "commitment", "seats", "preset_deck", "take5", "karel_kakelaar", "sneaky_bastard", "beverbende", "alles_klar", "kleurenwiezen")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECK_FIELD_NUMBER: _ClassVar[int]
    TAKE5_FIELD_NUMBER: _ClassVar[int]
    KAREL_KAKELAAR_FIELD_NUMBER: _ClassVar[int]
    SNEAKY_BASTARD_FIELD_NUMBER: _ClassVar[int]
    BEVERBENDE_FIELD_NUMBER: _ClassVar[int]
    ALLES_KLAR_FIELD_NUMBER: _ClassVar[int]
    KLEURENWIEZEN_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    version: int
    status: MatchStatus
    game: str
    rules_version: int
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    clock: Clock
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    outcome: Outcome
    commitment: str
    seats: int
    preset_deck: bool
    take5: _take5_pb2.Take5View
    karel_kakelaar: _karel_kakelaar_pb2.KarelKakelaarView
    sneaky_bastard: _sneaky_bastard_pb2.SneakyBastardView
    beverbende: _beverbende_pb2.BeverbendeView
    alles_klar: _alles_klar_pb2.AllesKlarView
    kleurenwiezen: _kleurenwiezen_pb2.KleurenwiezenView
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., version: _Optional[int] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., game: _Optional[str] = ..., rules_version: _Optional[int] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., outcome: _Optional[_Union[Outcome, _Mapping]] = ..., commitment: _Optional[str] = ..., seats: _Optional[int] = ..., preset_deck: _Optional[bool] = ..., take5: _Optional[_Union[_take5_pb2.Take5View, _Mapping]] = ..., karel_kakelaar: _Optional[_Union[_karel_kakelaar_pb2.KarelKakelaarView, _Mapping]] = ..., sneaky_bastard: _Optional[_Union[_sneaky_bastard_pb2.SneakyBastardView, _Mapping]] = ..., beverbende: _Optional[_Union[_beverbende_pb2.BeverbendeView, _Mapping]] = ..., alles_klar: _Optional[_Union[_alles_klar_pb2.AllesKlarView, _Mapping]] = ..., kleurenwiezen: _Optional[_Union[_kleurenwiezen_pb2.KleurenwiezenView, _Mapping]] = ...) -> None: ...

class RecordedAction(_message.Message):
    __slots__ = ("seq", "seat", "action", "server_time_unix_ms", "clock_default")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    seq: int
    seat: int
    action: str
    server_time_unix_ms: int
    clock_default: bool
    def __init__(self, seq: _Optional[int] = ..., seat: _Optional[int] = ..., action: _Optional[str] = ..., server_time_unix_ms: _Optional[int] = ..., clock_default: _Optional[bool] = ...) -> None: ...

class SeatRecord(_message.Message):
    __slots__ = ("seat", "name", "entropy")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    entropy: bytes
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., entropy: _Optional[bytes] = ...) -> None: ...

class MatchRecord(_message.Message):
    __slots__ = ("match_id", "game", "rules_version", "options", "seats", "server_seed", "commitment", "shuffle_key", "seat_records", "preset_deck", "preset_decks", "actions", "outcome", "final_state_sha256", "move_clock_ms", "created_unix_ms", "started_unix_ms", "finished_unix_ms", "deal")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SERVER_SEED_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    SHUFFLE_KEY_FIELD_NUMBER: _ClassVar[int]
    SEAT_RECORDS_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECK_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECKS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    FINAL_STATE_SHA256_FIELD_NUMBER: _ClassVar[int]
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    STARTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    rules_version: int
    options: _containers.ScalarMap[str, str]
    seats: int
    server_seed: bytes
    commitment: str
    shuffle_key: bytes
    seat_records: _containers.RepeatedCompositeFieldContainer[SeatRecord]
    preset_deck: bool
    preset_decks: _containers.RepeatedCompositeFieldContainer[DeckOrder]
    actions: _containers.RepeatedCompositeFieldContainer[RecordedAction]
    outcome: Outcome
    final_state_sha256: str
    move_clock_ms: int
    created_unix_ms: int
    started_unix_ms: int
    finished_unix_ms: int
    deal: str
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., rules_version: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[int] = ..., server_seed: _Optional[bytes] = ..., commitment: _Optional[str] = ..., shuffle_key: _Optional[bytes] = ..., seat_records: _Optional[_Iterable[_Union[SeatRecord, _Mapping]]] = ..., preset_deck: _Optional[bool] = ..., preset_decks: _Optional[_Iterable[_Union[DeckOrder, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[RecordedAction, _Mapping]]] = ..., outcome: _Optional[_Union[Outcome, _Mapping]] = ..., final_state_sha256: _Optional[str] = ..., move_clock_ms: _Optional[int] = ..., created_unix_ms: _Optional[int] = ..., started_unix_ms: _Optional[int] = ..., finished_unix_ms: _Optional[int] = ..., deal: _Optional[str] = ...) -> None: ...

class DeckOrder(_message.Message):
    __slots__ = ("cards", "deck")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    deck: str
    def __init__(self, cards: _Optional[_Iterable[str]] = ..., deck: _Optional[str] = ...) -> None: ...
