from speeltafel.sdk.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TournamentFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_FORMAT_UNSPECIFIED: _ClassVar[TournamentFormat]
    TOURNAMENT_FORMAT_ROUND_ROBIN: _ClassVar[TournamentFormat]
    TOURNAMENT_FORMAT_GAUNTLET: _ClassVar[TournamentFormat]
    TOURNAMENT_FORMAT_DUPLICATE: _ClassVar[TournamentFormat]

class ForfeitPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FORFEIT_POLICY_UNSPECIFIED: _ClassVar[ForfeitPolicy]
    FORFEIT_POLICY_AUTOPLAY: _ClassVar[ForfeitPolicy]
    FORFEIT_POLICY_LOSE: _ClassVar[ForfeitPolicy]

class TournamentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_STATUS_UNSPECIFIED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_WAITING: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_RUNNING: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_FINISHED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_CANCELLED: _ClassVar[TournamentStatus]
TOURNAMENT_FORMAT_UNSPECIFIED: TournamentFormat
TOURNAMENT_FORMAT_ROUND_ROBIN: TournamentFormat
TOURNAMENT_FORMAT_GAUNTLET: TournamentFormat
TOURNAMENT_FORMAT_DUPLICATE: TournamentFormat
FORFEIT_POLICY_UNSPECIFIED: ForfeitPolicy
FORFEIT_POLICY_AUTOPLAY: ForfeitPolicy
FORFEIT_POLICY_LOSE: ForfeitPolicy
TOURNAMENT_STATUS_UNSPECIFIED: TournamentStatus
TOURNAMENT_STATUS_WAITING: TournamentStatus
TOURNAMENT_STATUS_RUNNING: TournamentStatus
TOURNAMENT_STATUS_FINISHED: TournamentStatus
TOURNAMENT_STATUS_CANCELLED: TournamentStatus

class ConnectRequest(_message.Message):
    __slots__ = ("register",)
    REGISTER_FIELD_NUMBER: _ClassVar[int]
    register: Register
    def __init__(self, register: _Optional[_Union[Register, _Mapping]] = ...) -> None: ...

class Register(_message.Message):
    __slots__ = ("games", "max_concurrent", "client", "entropy")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedScalarFieldContainer[str]
    max_concurrent: int
    client: str
    entropy: bytes
    def __init__(self, games: _Optional[_Iterable[str]] = ..., max_concurrent: _Optional[int] = ..., client: _Optional[str] = ..., entropy: _Optional[bytes] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("registered", "assignment")
    REGISTERED_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    registered: Registered
    assignment: SeatAssignment
    def __init__(self, registered: _Optional[_Union[Registered, _Mapping]] = ..., assignment: _Optional[_Union[SeatAssignment, _Mapping]] = ...) -> None: ...

class Registered(_message.Message):
    __slots__ = ("bot_name", "max_concurrent", "games")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    max_concurrent: int
    games: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, bot_name: _Optional[str] = ..., max_concurrent: _Optional[int] = ..., games: _Optional[_Iterable[str]] = ...) -> None: ...

class SeatAssignment(_message.Message):
    __slots__ = ("tournament_id", "match_id", "seat", "token", "game", "options", "seats", "move_clock_ms", "time_bank_ms", "fixture", "resumed")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    FIXTURE_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    match_id: str
    seat: int
    token: str
    game: str
    options: _containers.ScalarMap[str, str]
    seats: int
    move_clock_ms: int
    time_bank_ms: int
    fixture: int
    resumed: bool
    def __init__(self, tournament_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., token: _Optional[str] = ..., game: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[int] = ..., move_clock_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., fixture: _Optional[int] = ..., resumed: _Optional[bool] = ...) -> None: ...

class IssueBotTokenRequest(_message.Message):
    __slots__ = ("bot_name",)
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    def __init__(self, bot_name: _Optional[str] = ...) -> None: ...

class IssueBotTokenResponse(_message.Message):
    __slots__ = ("bot_name", "token")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    token: str
    def __init__(self, bot_name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class ClockPolicy(_message.Message):
    __slots__ = ("move_clock_ms", "time_bank_ms", "max_misses", "forfeit")
    MOVE_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_MISSES_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    move_clock_ms: int
    time_bank_ms: int
    max_misses: int
    forfeit: ForfeitPolicy
    def __init__(self, move_clock_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_misses: _Optional[int] = ..., forfeit: _Optional[_Union[ForfeitPolicy, str]] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("request_id", "name", "game", "options", "format", "participants", "seats", "rounds", "max_matches", "clock", "seed")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    name: str
    game: str
    options: _containers.ScalarMap[str, str]
    format: TournamentFormat
    participants: _containers.RepeatedScalarFieldContainer[str]
    seats: int
    rounds: int
    max_matches: int
    clock: ClockPolicy
    seed: bytes
    def __init__(self, request_id: _Optional[str] = ..., name: _Optional[str] = ..., game: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., format: _Optional[_Union[TournamentFormat, str]] = ..., participants: _Optional[_Iterable[str]] = ..., seats: _Optional[int] = ..., rounds: _Optional[int] = ..., max_matches: _Optional[int] = ..., clock: _Optional[_Union[ClockPolicy, _Mapping]] = ..., seed: _Optional[bytes] = ...) -> None: ...

class CreateTournamentResponse(_message.Message):
    __slots__ = ("tournament", "duplicate")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    duplicate: bool
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class CancelTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments",)
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[Tournament]
    def __init__(self, tournaments: _Optional[_Iterable[_Union[Tournament, _Mapping]]] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class GetTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class Tournament(_message.Message):
    __slots__ = ("tournament_id", "name", "game", "options", "format", "participants", "seats", "clock", "status", "matches_total", "matches_finished", "matches_running", "created_unix_ms", "finished_unix_ms", "seeded")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FINISHED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_RUNNING_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    SEEDED_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    name: str
    game: str
    options: _containers.ScalarMap[str, str]
    format: TournamentFormat
    participants: _containers.RepeatedScalarFieldContainer[str]
    seats: int
    clock: ClockPolicy
    status: TournamentStatus
    matches_total: int
    matches_finished: int
    matches_running: int
    created_unix_ms: int
    finished_unix_ms: int
    seeded: bool
    def __init__(self, tournament_id: _Optional[str] = ..., name: _Optional[str] = ..., game: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., format: _Optional[_Union[TournamentFormat, str]] = ..., participants: _Optional[_Iterable[str]] = ..., seats: _Optional[int] = ..., clock: _Optional[_Union[ClockPolicy, _Mapping]] = ..., status: _Optional[_Union[TournamentStatus, str]] = ..., matches_total: _Optional[int] = ..., matches_finished: _Optional[int] = ..., matches_running: _Optional[int] = ..., created_unix_ms: _Optional[int] = ..., finished_unix_ms: _Optional[int] = ..., seeded: _Optional[bool] = ...) -> None: ...

class WatchTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class WatchTournamentResponse(_message.Message):
    __slots__ = ("progress", "match_started", "match_finished", "standings")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_FINISHED_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    progress: Tournament
    match_started: TournamentMatch
    match_finished: TournamentMatch
    standings: Standings
    def __init__(self, progress: _Optional[_Union[Tournament, _Mapping]] = ..., match_started: _Optional[_Union[TournamentMatch, _Mapping]] = ..., match_finished: _Optional[_Union[TournamentMatch, _Mapping]] = ..., standings: _Optional[_Union[Standings, _Mapping]] = ...) -> None: ...

class TournamentMatch(_message.Message):
    __slots__ = ("fixture", "match_id", "lineup", "duplicate_set", "outcome", "misses", "rejected")
    FIXTURE_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    LINEUP_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_SET_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    MISSES_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    fixture: int
    match_id: str
    lineup: _containers.RepeatedScalarFieldContainer[str]
    duplicate_set: int
    outcome: _common_pb2.Outcome
    misses: _containers.RepeatedScalarFieldContainer[int]
    rejected: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, fixture: _Optional[int] = ..., match_id: _Optional[str] = ..., lineup: _Optional[_Iterable[str]] = ..., duplicate_set: _Optional[int] = ..., outcome: _Optional[_Union[_common_pb2.Outcome, _Mapping]] = ..., misses: _Optional[_Iterable[int]] = ..., rejected: _Optional[_Iterable[int]] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class GetStandingsResponse(_message.Message):
    __slots__ = ("standings",)
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    standings: Standings
    def __init__(self, standings: _Optional[_Union[Standings, _Mapping]] = ...) -> None: ...

class Standings(_message.Message):
    __slots__ = ("tournament_id", "game", "score_name", "lower_is_better", "matches_counted", "rows", "crosstable")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SCORE_NAME_FIELD_NUMBER: _ClassVar[int]
    LOWER_IS_BETTER_FIELD_NUMBER: _ClassVar[int]
    MATCHES_COUNTED_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    CROSSTABLE_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    game: str
    score_name: str
    lower_is_better: bool
    matches_counted: int
    rows: _containers.RepeatedCompositeFieldContainer[Standing]
    crosstable: _containers.RepeatedCompositeFieldContainer[Pairing]
    def __init__(self, tournament_id: _Optional[str] = ..., game: _Optional[str] = ..., score_name: _Optional[str] = ..., lower_is_better: _Optional[bool] = ..., matches_counted: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ..., crosstable: _Optional[_Iterable[_Union[Pairing, _Mapping]]] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("place", "participant", "matches", "rating", "mu", "sigma", "mean_utility", "utility_ci95", "mean_score", "misses", "rejected", "forfeits")
    PLACE_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANT_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    MEAN_UTILITY_FIELD_NUMBER: _ClassVar[int]
    UTILITY_CI95_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    MISSES_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    place: int
    participant: str
    matches: int
    rating: float
    mu: float
    sigma: float
    mean_utility: float
    utility_ci95: float
    mean_score: float
    misses: int
    rejected: int
    forfeits: int
    def __init__(self, place: _Optional[int] = ..., participant: _Optional[str] = ..., matches: _Optional[int] = ..., rating: _Optional[float] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., mean_utility: _Optional[float] = ..., utility_ci95: _Optional[float] = ..., mean_score: _Optional[float] = ..., misses: _Optional[int] = ..., rejected: _Optional[int] = ..., forfeits: _Optional[int] = ...) -> None: ...

class Pairing(_message.Message):
    __slots__ = ("participant", "opponent", "matches", "mean_utility", "utility_ci95")
    PARTICIPANT_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    MEAN_UTILITY_FIELD_NUMBER: _ClassVar[int]
    UTILITY_CI95_FIELD_NUMBER: _ClassVar[int]
    participant: str
    opponent: str
    matches: int
    mean_utility: float
    utility_ci95: float
    def __init__(self, participant: _Optional[str] = ..., opponent: _Optional[str] = ..., matches: _Optional[int] = ..., mean_utility: _Optional[float] = ..., utility_ci95: _Optional[float] = ...) -> None: ...

class ExportRecordsRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class ExportRecordsResponse(_message.Message):
    __slots__ = ("record", "fixture", "lineup")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    FIXTURE_FIELD_NUMBER: _ClassVar[int]
    LINEUP_FIELD_NUMBER: _ClassVar[int]
    record: _common_pb2.MatchRecord
    fixture: int
    lineup: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, record: _Optional[_Union[_common_pb2.MatchRecord, _Mapping]] = ..., fixture: _Optional[int] = ..., lineup: _Optional[_Iterable[str]] = ...) -> None: ...
