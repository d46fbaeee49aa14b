from speeltafel.sdk.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListGamesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SeatRange(_message.Message):
    __slots__ = ("option", "value", "min_seats", "max_seats")
    OPTION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    MIN_SEATS_FIELD_NUMBER: _ClassVar[int]
    MAX_SEATS_FIELD_NUMBER: _ClassVar[int]
    option: str
    value: str
    min_seats: int
    max_seats: int
    def __init__(self, option: _Optional[str] = ..., value: _Optional[str] = ..., min_seats: _Optional[int] = ..., max_seats: _Optional[int] = ...) -> None: ...

class OptionSpec(_message.Message):
    __slots__ = ("name", "kind", "default", "description", "choices", "minimum", "maximum", "min_items", "max_items", "automatic")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    MIN_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MAX_ITEMS_FIELD_NUMBER: _ClassVar[int]
    AUTOMATIC_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    default: str
    description: str
    choices: _containers.RepeatedScalarFieldContainer[str]
    minimum: int
    maximum: int
    min_items: int
    max_items: int
    automatic: bool
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., default: _Optional[str] = ..., description: _Optional[str] = ..., choices: _Optional[_Iterable[str]] = ..., minimum: _Optional[int] = ..., maximum: _Optional[int] = ..., min_items: _Optional[int] = ..., max_items: _Optional[int] = ..., automatic: _Optional[bool] = ...) -> None: ...

class DeckSpec(_message.Message):
    __slots__ = ("name", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class GameInfo(_message.Message):
    __slots__ = ("game", "name", "rules_version", "min_seats", "max_seats", "options", "simultaneous", "description", "seat_ranges", "score_name", "lower_is_better", "decks")
    GAME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    MIN_SEATS_FIELD_NUMBER: _ClassVar[int]
    MAX_SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SIMULTANEOUS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SEAT_RANGES_FIELD_NUMBER: _ClassVar[int]
    SCORE_NAME_FIELD_NUMBER: _ClassVar[int]
    LOWER_IS_BETTER_FIELD_NUMBER: _ClassVar[int]
    DECKS_FIELD_NUMBER: _ClassVar[int]
    game: str
    name: str
    rules_version: int
    min_seats: int
    max_seats: int
    options: _containers.RepeatedCompositeFieldContainer[OptionSpec]
    simultaneous: bool
    description: str
    seat_ranges: _containers.RepeatedCompositeFieldContainer[SeatRange]
    score_name: str
    lower_is_better: bool
    decks: _containers.RepeatedCompositeFieldContainer[DeckSpec]
    def __init__(self, game: _Optional[str] = ..., name: _Optional[str] = ..., rules_version: _Optional[int] = ..., min_seats: _Optional[int] = ..., max_seats: _Optional[int] = ..., options: _Optional[_Iterable[_Union[OptionSpec, _Mapping]]] = ..., simultaneous: _Optional[bool] = ..., description: _Optional[str] = ..., seat_ranges: _Optional[_Iterable[_Union[SeatRange, _Mapping]]] = ..., score_name: _Optional[str] = ..., lower_is_better: _Optional[bool] = ..., decks: _Optional[_Iterable[_Union[DeckSpec, _Mapping]]] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games",)
    GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameInfo]
    def __init__(self, games: _Optional[_Iterable[_Union[GameInfo, _Mapping]]] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("game", "seats", "options", "move_clock_ms", "preset_decks", "request_id")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECKS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    game: str
    seats: int
    options: _containers.ScalarMap[str, str]
    move_clock_ms: int
    preset_decks: _containers.RepeatedCompositeFieldContainer[_common_pb2.DeckOrder]
    request_id: str
    def __init__(self, game: _Optional[str] = ..., seats: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., move_clock_ms: _Optional[int] = ..., preset_decks: _Optional[_Iterable[_Union[_common_pb2.DeckOrder, _Mapping]]] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "commitment", "rules_version", "options", "move_clock_ms", "duplicate", "preset_deck")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECK_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    commitment: str
    rules_version: int
    options: _containers.ScalarMap[str, str]
    move_clock_ms: int
    duplicate: bool
    preset_deck: bool
    def __init__(self, match_id: _Optional[str] = ..., commitment: _Optional[str] = ..., rules_version: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., move_clock_ms: _Optional[int] = ..., duplicate: _Optional[bool] = ..., preset_deck: _Optional[bool] = ...) -> None: ...

class JoinMatchRequest(_message.Message):
    __slots__ = ("match_id", "seat", "name", "entropy", "request_id")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    name: str
    entropy: bytes
    request_id: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., name: _Optional[str] = ..., entropy: _Optional[bytes] = ..., request_id: _Optional[str] = ...) -> None: ...

class JoinMatchResponse(_message.Message):
    __slots__ = ("match_id", "seat", "token", "preset_deck", "duplicate")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECK_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    token: str
    preset_deck: bool
    duplicate: bool
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., token: _Optional[str] = ..., preset_deck: _Optional[bool] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchSummary
    def __init__(self, match: _Optional[_Union[MatchSummary, _Mapping]] = ...) -> None: ...

class MatchSummary(_message.Message):
    __slots__ = ("match_id", "game", "rules_version", "options", "seats", "status", "version", "seat_names", "commitment", "outcome", "move_clock_ms", "preset_deck")
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
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECK_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    rules_version: int
    options: _containers.ScalarMap[str, str]
    seats: int
    status: _common_pb2.MatchStatus
    version: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    commitment: str
    outcome: _common_pb2.Outcome
    move_clock_ms: int
    preset_deck: bool
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., rules_version: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[int] = ..., status: _Optional[_Union[_common_pb2.MatchStatus, str]] = ..., version: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., commitment: _Optional[str] = ..., outcome: _Optional[_Union[_common_pb2.Outcome, _Mapping]] = ..., move_clock_ms: _Optional[int] = ..., preset_deck: _Optional[bool] = ...) -> None: ...

class GetViewRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetViewResponse(_message.Message):
    __slots__ = ("view",)
    VIEW_FIELD_NUMBER: _ClassVar[int]
    view: _common_pb2.View
    def __init__(self, view: _Optional[_Union[_common_pb2.View, _Mapping]] = ...) -> None: ...

class SubmitActionRequest(_message.Message):
    __slots__ = ("match_id", "expected_version", "request_id", "action")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    expected_version: int
    request_id: str
    action: _common_pb2.Action
    def __init__(self, match_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., request_id: _Optional[str] = ..., action: _Optional[_Union[_common_pb2.Action, _Mapping]] = ...) -> None: ...

class SubmitActionResponse(_message.Message):
    __slots__ = ("seq", "version", "duplicate")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    version: int
    duplicate: bool
    def __init__(self, seq: _Optional[int] = ..., version: _Optional[int] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class Subscribe(_message.Message):
    __slots__ = ("match_id", "since_version", "only_when_acting")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    ONLY_WHEN_ACTING_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    since_version: int
    only_when_acting: bool
    def __init__(self, match_id: _Optional[str] = ..., since_version: _Optional[int] = ..., only_when_acting: _Optional[bool] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("subscribe", "submit")
    SUBSCRIBE_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_FIELD_NUMBER: _ClassVar[int]
    subscribe: Subscribe
    submit: SubmitActionRequest
    def __init__(self, subscribe: _Optional[_Union[Subscribe, _Mapping]] = ..., submit: _Optional[_Union[SubmitActionRequest, _Mapping]] = ...) -> None: ...

class ActionError(_message.Message):
    __slots__ = ("code", "message", "rule", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    rule: str
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., rule: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ActionResult(_message.Message):
    __slots__ = ("request_id", "accepted", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    accepted: SubmitActionResponse
    error: ActionError
    def __init__(self, request_id: _Optional[str] = ..., accepted: _Optional[_Union[SubmitActionResponse, _Mapping]] = ..., error: _Optional[_Union[ActionError, _Mapping]] = ...) -> None: ...

class Subscribed(_message.Message):
    __slots__ = ("version", "status", "preset_deck")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PRESET_DECK_FIELD_NUMBER: _ClassVar[int]
    version: int
    status: _common_pb2.MatchStatus
    preset_deck: bool
    def __init__(self, version: _Optional[int] = ..., status: _Optional[_Union[_common_pb2.MatchStatus, str]] = ..., preset_deck: _Optional[bool] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("view", "result", "subscribed", "resync")
    VIEW_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIBED_FIELD_NUMBER: _ClassVar[int]
    RESYNC_FIELD_NUMBER: _ClassVar[int]
    view: _common_pb2.View
    result: ActionResult
    subscribed: Subscribed
    resync: bool
    def __init__(self, view: _Optional[_Union[_common_pb2.View, _Mapping]] = ..., result: _Optional[_Union[ActionResult, _Mapping]] = ..., subscribed: _Optional[_Union[Subscribed, _Mapping]] = ..., resync: _Optional[bool] = ...) -> None: ...

class SpectateRequest(_message.Message):
    __slots__ = ("match_id", "since_version")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    since_version: int
    def __init__(self, match_id: _Optional[str] = ..., since_version: _Optional[int] = ...) -> None: ...

class SpectateResponse(_message.Message):
    __slots__ = ("view", "subscribed", "resync")
    VIEW_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIBED_FIELD_NUMBER: _ClassVar[int]
    RESYNC_FIELD_NUMBER: _ClassVar[int]
    view: _common_pb2.View
    subscribed: Subscribed
    resync: bool
    def __init__(self, view: _Optional[_Union[_common_pb2.View, _Mapping]] = ..., subscribed: _Optional[_Union[Subscribed, _Mapping]] = ..., resync: _Optional[bool] = ...) -> None: ...

class GetMatchRecordRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetMatchRecordResponse(_message.Message):
    __slots__ = ("record",)
    RECORD_FIELD_NUMBER: _ClassVar[int]
    record: _common_pb2.MatchRecord
    def __init__(self, record: _Optional[_Union[_common_pb2.MatchRecord, _Mapping]] = ...) -> None: ...
