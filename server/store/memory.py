"""An in-process MatchStore for tests and embedding; the same answers as SQLite, no disk."""

from __future__ import annotations

from collections.abc import Callable

from speeltafel.server.store.base import (
    ActionRow,
    AppendResult,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    MatchLog,
    SeatJoined,
)


class MemoryStore:
    """Match logs in dictionaries. Nothing survives the process."""

    def __init__(self) -> None:
        self._created: dict[str, MatchCreated] = {}
        self._seats: dict[str, dict[int, SeatJoined]] = {}
        self._actions: dict[str, list[ActionRow]] = {}
        self._requests: dict[tuple[str, int, str], ActionRow] = {}
        self._finished: dict[str, MatchFinished] = {}
        self._create_requests: dict[str, str] = {}  # request id -> match id

    async def create(self, created: MatchCreated) -> MatchCreated:
        """Store a new match, or return the one made before with the same request id."""
        if created.request_id in self._create_requests:
            return self._created[self._create_requests[created.request_id]]
        if created.match_id in self._created:
            raise ValueError(f"match {created.match_id} exists")
        self._created[created.match_id] = created
        self._seats[created.match_id] = {}
        self._actions[created.match_id] = []
        if created.request_id:
            self._create_requests[created.request_id] = created.match_id
        return created

    async def join(self, joined: SeatJoined) -> AppendStatus:
        """Store a seat unless it is taken or its request id was used in this match."""
        seats = self._seats[joined.match_id]
        if joined.seat in seats:
            return AppendStatus.CONFLICT
        if joined.request_id and any(s.request_id == joined.request_id for s in seats.values()):
            return AppendStatus.CONFLICT
        seats[joined.seat] = joined
        return AppendStatus.COMMITTED

    async def append(self, row: ActionRow) -> AppendResult:
        """Store an action if its seq and request id are both new."""
        key = (row.match_id, row.seat, row.request_id)
        if key in self._requests:
            return AppendResult(AppendStatus.DUPLICATE, self._requests[key])
        actions = self._actions[row.match_id]
        if row.seq != len(actions) + 1:
            return AppendResult(AppendStatus.CONFLICT)
        actions.append(row)
        self._requests[key] = row
        return AppendResult(AppendStatus.COMMITTED)

    async def finish(self, finished: MatchFinished) -> None:
        """Mark a match finished."""
        self._finished.setdefault(finished.match_id, finished)

    async def load(self, match_id: str) -> MatchLog | None:
        """The whole log of a match."""
        created = self._created.get(match_id)
        if created is None:
            return None
        seats = tuple(sorted(self._seats[match_id].values(), key=lambda s: s.seat))
        return MatchLog(
            created, seats, tuple(self._actions[match_id]), self._finished.get(match_id)
        )

    async def unfinished(self) -> list[str]:
        """Matches not marked finished, in creation order."""
        return [m for m in self._created if m not in self._finished]

    async def finished_since(self, since_ms: int) -> list[str]:
        """Matches marked finished at or after ``since_ms``, in the order they finished."""
        finished = [f for f in self._finished.values() if f.finished_ms >= since_ms]
        return [f.match_id for f in sorted(finished, key=lambda f: f.finished_ms)]

    async def close(self) -> None:
        """Nothing to release."""

    writable = True
    """Memory never refuses a write."""

    def add_health_listener(self, listener: Callable[[bool], None]) -> None:
        """Nothing to tell: ``writable`` never changes."""
