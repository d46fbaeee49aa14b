"""An in-process MatchStore for tests and embedding; the same answers as SQLite, no disk."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from speeltafel.server.store.base import (
    ActionRow,
    AppendResult,
    AppendStatus,
    BotCredential,
    FixtureMatch,
    FixtureResult,
    MatchCreated,
    MatchFinished,
    MatchLog,
    SeatJoined,
    TournamentRow,
)


class MemoryStore:
    """Match logs (and tournaments) in dictionaries. Nothing survives the process."""

    ordered_appends = True
    """Appends are applied in the order they were made (each at once)."""

    def __init__(self) -> None:
        self._created: dict[str, MatchCreated] = {}
        self._seats: dict[str, dict[int, SeatJoined]] = {}
        self._actions: dict[str, list[ActionRow]] = {}
        self._requests: dict[tuple[str, int, str], ActionRow] = {}
        self._finished: dict[str, MatchFinished] = {}
        self._create_requests: dict[str, str] = {}  # request id -> match id
        self._bots: dict[str, BotCredential] = {}  # folded name -> credential
        self._tournaments: dict[str, TournamentRow] = {}
        self._fixtures: dict[str, dict[int, FixtureMatch]] = {}
        self._results: dict[str, dict[int, FixtureResult]] = {}

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
        return self._append(row)

    def start_append(self, row: ActionRow) -> asyncio.Future[AppendResult]:
        """:meth:`append` at once, its answer in a future already settled (see
        :func:`~speeltafel.server.store.base.start_append`). A subclass that overrides
        :meth:`append` (a test's faulty store) gets its own append, in a task."""
        if type(self).append is not MemoryStore.append:
            return asyncio.ensure_future(self.append(row))
        future: asyncio.Future[AppendResult] = asyncio.get_running_loop().create_future()
        future.set_result(self._append(row))
        return future

    def _append(self, row: ActionRow) -> AppendResult:
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

    # ------------------------------------------------------------------ tournaments

    async def put_bot(self, bot: BotCredential) -> None:
        """Store a bot's token hash, replacing the one of the same name."""
        self._bots[bot.name.casefold()] = bot

    async def bots(self) -> list[BotCredential]:
        """Every bot with a token."""
        return list(self._bots.values())

    async def create_tournament(self, row: TournamentRow) -> TournamentRow:
        """Store a tournament, or return the one made before with the same request id."""
        if row.request_id:
            for stored in self._tournaments.values():
                if stored.request_id == row.request_id:
                    return stored
        if row.tournament_id in self._tournaments:
            raise ValueError(f"tournament {row.tournament_id} exists")
        self._tournaments[row.tournament_id] = row
        return row

    async def set_tournament_status(
        self, tournament_id: str, status: str, finished_ms: int
    ) -> None:
        """Change a tournament's status."""
        row = self._tournaments[tournament_id]
        self._tournaments[tournament_id] = replace(row, status=status, finished_ms=finished_ms)

    async def tournaments(self) -> list[TournamentRow]:
        """Every tournament, oldest first."""
        return list(self._tournaments.values())

    async def put_fixture(self, fixture: FixtureMatch) -> None:
        """Record the match of a fixture (the first record stays)."""
        self._fixtures.setdefault(fixture.tournament_id, {}).setdefault(fixture.fixture, fixture)

    async def put_result(self, result: FixtureResult) -> None:
        """Record a fixture's result (the first record stays)."""
        self._results.setdefault(result.tournament_id, {}).setdefault(result.fixture, result)

    async def fixtures(self, tournament_id: str) -> list[FixtureMatch]:
        """The tournament's fixtures with a match, by number."""
        found = self._fixtures.get(tournament_id, {})
        return [found[n] for n in sorted(found)]

    async def results(self, tournament_id: str) -> list[FixtureResult]:
        """The tournament's results, by fixture number."""
        found = self._results.get(tournament_id, {})
        return [found[n] for n in sorted(found)]
