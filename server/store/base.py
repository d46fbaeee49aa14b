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

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from os import PathLike
from typing import Protocol

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
