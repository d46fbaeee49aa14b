"""The append-only match log: its rows and the small MatchStore protocol.

A match is its creation row, one row per seat that joined, and one row per accepted
action; state and clocks are rebuilt from these alone. The append is conditional so
that a shared database can later back several server processes: ``(match, seq)`` and
``(match, seat, request_id)`` are unique, and an append answers *committed*,
*duplicate* (that request was stored before: here is its row) or *conflict* (another
move took that seq: reload and re-validate).

Request ids are unique per seat rather than per match (the design's ``(match_id,
request_id)``), so two seats that happen to pick the same id never see each other's answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from os import PathLike
from typing import Any, Protocol

DeckPresets = tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]
"""Preset deck orders by deck name: ``((deck name, (order, ...)), ...)``, each order top card
first, in the game's deck order. The name "" (only in matches stored before decks had names)
means the game's first deck."""


@dataclass(frozen=True, slots=True)
class MatchCreated:
    """The creation row: everything that fixes a match before any seat joins."""

    match_id: str
    game: str
    rules_version: int
    options: tuple[tuple[str, str], ...]  # canonical option texts, sorted by name
    seats: int
    server_seed: bytes
    commitment: str
    move_clock_ms: int
    presets: DeckPresets
    created_ms: int
    request_id: str = ""
    """The creator's request id ("" for none): unique among matches, so a retried
    CreateMatch finds the match it made."""
    token_key: bytes = field(default=b"", repr=False)
    """A per-match secret (32 random bytes) from which the tokens of joins that carry a
    request id are derived, so a retried JoinMatch gets the same token. Never logged, never
    in a record, view or summary."""
    time_bank_ms: int = 0
    """Per seat: time a seat may spend beyond the move clock over the whole match (0: none)."""
    max_misses: int = 0
    """Missed deadlines (clock defaults) after which a seat forfeits (0: never)."""
    forfeit: str = ""
    """What a forfeit does: "autoplay" (the seat's moves are defaulted at once from then on)
    or "lose" (the match ends, termination "forfeit"); "" when ``max_misses`` is 0."""
    deal: str = ""
    """How the match's decks were made, for its record: "" for a match of its own (a fresh
    secret seed), otherwise a sentence such as "duplicate set 3 of tournament X: ..."."""


@dataclass(frozen=True, slots=True)
class SeatJoined:
    """A seat taken: its name, the hash of its secret token, and its shuffle entropy."""

    match_id: str
    seat: int
    name: str
    token_hash: bytes
    entropy: bytes
    joined_ms: int
    request_id: str = ""
    """The joiner's request id ("" for none): unique within the match."""


@dataclass(frozen=True, slots=True)
class ActionRow:
    """One accepted action, in the engine's canonical text."""

    match_id: str
    seq: int
    seat: int
    request_id: str
    action: str
    server_ms: int
    clock_default: bool


@dataclass(frozen=True, slots=True)
class MatchFinished:
    """The end of a match: when, and the hash of the final state for replay checks."""

    match_id: str
    finished_ms: int
    final_hash: str
    termination: str = "normal"
    """"normal" (the rules ended it), "expired" (seats never filled: no final state, the
    hash is empty) or "abandoned" (the clock ran out repeatedly with nobody acting: the hash
    is that of the state reached)."""


class AppendStatus(StrEnum):
    """The store's answer to a conditional append."""

    COMMITTED = "committed"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"


@dataclass(frozen=True, slots=True)
class AppendResult:
    """The answer, with the stored row when the request was a duplicate."""

    status: AppendStatus
    existing: ActionRow | None = None


@dataclass(frozen=True, slots=True)
class MatchLog:
    """Everything stored about one match, in order."""

    created: MatchCreated
    seats: tuple[SeatJoined, ...]
    actions: tuple[ActionRow, ...]
    finished: MatchFinished | None


class MatchStore(Protocol):
    """Where match logs live. Every write is durable when its coroutine returns."""

    async def create(self, created: MatchCreated) -> MatchCreated:
        """Store a new match; returns the stored creation row: ``created`` itself, or the
        earlier match made with the same non-empty ``request_id`` (then nothing is stored)."""
        ...

    async def join(self, joined: SeatJoined) -> AppendStatus:
        """Store a seat; CONFLICT when that seat was already taken, or when the match
        already has a seat joined with the same non-empty ``request_id``."""
        ...

    async def append(self, row: ActionRow) -> AppendResult:
        """Store an action if its seq and request id are both new."""
        ...

    async def finish(self, finished: MatchFinished) -> None:
        """Mark a match finished (idempotent)."""
        ...

    async def load(self, match_id: str) -> MatchLog | None:
        """The whole log of a match, or None."""
        ...

    async def unfinished(self) -> list[str]:
        """Ids of matches not marked finished, oldest first."""
        ...

    async def finished_since(self, since_ms: int) -> list[str]:
        """Ids of matches marked finished at or after ``since_ms`` (unix ms), oldest first."""
        ...

    async def close(self) -> None:
        """Flush and release resources; pending writes complete first."""
        ...

    @property
    def writable(self) -> bool:
        """False while writes fail for a cause outside the program (disk full, read-only)."""
        ...

    def add_health_listener(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(writable)`` on the calling event loop whenever ``writable`` changes."""
        ...


def start_append(store: MatchStore, row: ActionRow) -> asyncio.Future[AppendResult]:
    """``store.append(row)`` begun now: appends begun one after another reach the store in
    that order. Its answer is a future, settled once the row is durable (or refused).

    A store with a ``start_append`` of its own (SQLite: the row goes on the writer's queue
    at once; memory: stored at once) answers with a plain future, no task or coroutine
    around it: the runtime's pipelined submit then waits for the store itself, one task
    step fewer per action. Any other store's append runs in a task of its own (asyncio
    starts tasks in the order they were made); so does the append of a subclass of those
    two that overrides ``append`` (their ``start_append`` sees to it)."""
    # Looked up on the class: a store that wraps another and hands the rest on by
    # __getattr__ (a test's store that holds appends) must not reach the inner store's.
    start: Callable[[Any, ActionRow], asyncio.Future[AppendResult]] | None = getattr(
        type(store), "start_append", None
    )
    if start is not None:
        return start(store, row)
    return asyncio.get_running_loop().create_task(store.append(row))


class StoreUnavailable(Exception):
    """The store cannot write now (disk full, read-only, I/O error): retry later.

    Nothing of the failed operation was committed, so a retry with the same request id is
    safe. ``cause`` (e.g. SQLite's ``SQLITE_FULL``) is for the server's log only.
    """

    def __init__(self, cause: str) -> None:
        super().__init__(f"the match store cannot write now ({cause})")
        self.cause = cause


class StoreOpenError(Exception):
    """The store refused to start: its file is damaged, foreign or cannot be used.

    Its text is one line for the operator: what failed, which file, what to do.
    """

    def __init__(self, path: str | PathLike[str], what_failed: str, what_to_do: str) -> None:
        self.path = str(path)
        self.what_failed = what_failed
        self.what_to_do = what_to_do
        line = f"cannot open the match store {self.path}: {what_failed}. {what_to_do}"
        super().__init__(" ".join(line.split()))  # one line, whatever SQLite said


# --------------------------------------------------------------------------- tournaments


@dataclass(frozen=True, slots=True)
class BotCredential:
    """A bot name with the hash of its current bot token (the token itself is never kept)."""

    name: str
    token_hash: bytes
    issued_ms: int


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """A tournament as created: everything its schedule and its matches derive from."""

    tournament_id: str
    request_id: str
    name: str
    game: str
    options: tuple[tuple[str, str], ...]  # canonical option texts, sorted by name
    format: str  # "round_robin", "gauntlet" or "duplicate"
    participants: tuple[str, ...]
    seats: int
    rounds: int
    max_matches: int
    move_clock_ms: int
    time_bank_ms: int
    max_misses: int
    forfeit: str  # "autoplay" or "lose"
    seed: bytes
    """The organiser's seed (b"" for none): every match seed derives from it."""
    secret: bytes = field(repr=False)
    """The server's own key for this tournament (32 random bytes): the request ids of its
    creates and joins (which recover seat tokens) and, without an organiser seed, its
    seeds derive from it. Never logged, never given out."""
    created_ms: int
    status: str = "waiting"  # "waiting", "running", "finished" or "cancelled"
    finished_ms: int = 0


@dataclass(frozen=True, slots=True)
class FixtureMatch:
    """Fixture ``fixture`` of a tournament is played as match ``match_id``."""

    tournament_id: str
    fixture: int
    match_id: str


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """How a fixture's match ended, with each seat's missed deadlines and refused moves."""

    tournament_id: str
    fixture: int
    match_id: str
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    utilities: tuple[float, ...]
    termination: str
    misses: tuple[int, ...]
    rejected: tuple[int, ...]
    forfeited: tuple[bool, ...]
    rated: bool


class TournamentStore(Protocol):
    """Where tournaments, bot tokens and fixture results live (beside the match logs).

    A separate protocol from :class:`MatchStore`, so a store may offer matches alone.
    Every write is durable when its coroutine returns; every write is idempotent.
    """

    async def put_bot(self, bot: BotCredential) -> None:
        """Store a bot's token hash, replacing the one of the same name (case-insensitive)."""
        ...

    async def bots(self) -> list[BotCredential]:
        """Every bot with a token, in the order they were first issued."""
        ...

    async def create_tournament(self, row: TournamentRow) -> TournamentRow:
        """Store a new tournament; returns ``row``, or the one stored before with the same
        non-empty ``request_id`` (then nothing is stored)."""
        ...

    async def set_tournament_status(
        self, tournament_id: str, status: str, finished_ms: int
    ) -> None:
        """Change a tournament's status (and when it ended, 0 while it has not)."""
        ...

    async def tournaments(self) -> list[TournamentRow]:
        """Every tournament, oldest first."""
        ...

    async def put_fixture(self, fixture: FixtureMatch) -> None:
        """Record which match plays a fixture (the first record stays)."""
        ...

    async def put_result(self, result: FixtureResult) -> None:
        """Record a fixture's result (the first record stays)."""
        ...

    async def fixtures(self, tournament_id: str) -> list[FixtureMatch]:
        """The tournament's fixtures that have a match, by fixture number."""
        ...

    async def results(self, tournament_id: str) -> list[FixtureResult]:
        """The tournament's results, by fixture number."""
        ...
