"""The default MatchStore: one SQLite file (WAL, ``synchronous=FULL``) and group commit.

One fsync'd commit costs about half a millisecond, while one transaction of many rows costs
hardly more than one row. So a single writer thread (never the event loop) takes every
pending operation from every match, runs them all in one transaction, commits once, and
only then resolves their futures: each caller still gets its answer after its own row is
durable, and the fsync is shared. Each operation writes with one statement, so one failing
operation cannot take the others of its batch down with it. Reads go through the same
thread, so they always see every acknowledged write.
"""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from speeltafel.server.store.base import (
    ActionRow,
    AppendResult,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    MatchLog,
    SeatJoined,
)

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id      TEXT PRIMARY KEY,
    game          TEXT NOT NULL,
    rules_version INTEGER NOT NULL,
    options       TEXT NOT NULL,
    seats         INTEGER NOT NULL,
    server_seed   BLOB NOT NULL,
    commitment    TEXT NOT NULL,
    move_clock_ms INTEGER NOT NULL,
    presets       TEXT NOT NULL,
    created_ms    INTEGER NOT NULL,
    finished_ms   INTEGER,
    final_hash    TEXT
);
CREATE TABLE IF NOT EXISTS seats (
    match_id   TEXT NOT NULL REFERENCES matches(match_id),
    seat       INTEGER NOT NULL,
    name       TEXT NOT NULL,
    token_hash BLOB NOT NULL,
    entropy    BLOB NOT NULL,
    joined_ms  INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS actions (
    match_id      TEXT NOT NULL REFERENCES matches(match_id),
    seq           INTEGER NOT NULL,
    seat          INTEGER NOT NULL,
    request_id    TEXT NOT NULL,
    action        TEXT NOT NULL,
    server_ms     INTEGER NOT NULL,
    clock_default INTEGER NOT NULL,
    PRIMARY KEY (match_id, seq),
    UNIQUE (match_id, seat, request_id)
);
CREATE INDEX IF NOT EXISTS matches_unfinished ON matches(finished_ms, created_ms);
"""

_STOP = object()
MAX_BATCH = 1024


def _to_json(rows: tuple[tuple[str, ...], ...]) -> str:
    return json.dumps([list(row) for row in rows], separators=(",", ":"))


def _from_json(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(item) for item in row) for row in json.loads(text))


class SqliteStore:
    """Match logs in one SQLite file, written by one group-committing thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self.batches = 0  # commits made; with ``operations`` it shows the batching at work
        self.operations = 0
        self._thread = threading.Thread(target=self._run, name="sqlite-writer", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            raise self._startup_error

    # ------------------------------------------------------------------ writer thread

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.executescript(SCHEMA)
        return conn

    def _run(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:  # reported to the constructor's caller
            self._startup_error = exc
            self._ready.set()
            return
        self._ready.set()
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if _STOP in batch:
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            if batch:
                self._commit_batch(conn, batch)
        conn.close()

    def _commit_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        results: list[tuple[bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for operation, _future, _loop in batch:
                # Every operation writes with a single statement, which SQLite applies whole
                # or not at all: one that fails leaves the rest of the batch intact.
                try:
                    results.append((True, operation(conn)))
                except sqlite3.DatabaseError as exc:
                    if not conn.in_transaction:
                        raise
                    results.append((False, exc))
            conn.execute("COMMIT")
        except Exception as exc:
            # The commit itself failed: nothing of this batch is durable, so nobody is told
            # otherwise.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            results = [(False, exc)] * len(batch)
        self.batches += 1
        self.operations += len(batch)
        for (ok, value), (_operation, future, loop) in zip(results, batch, strict=True):
            loop.call_soon_threadsafe(_settle, future, ok, value)

    async def _submit(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put((operation, future, loop))
        return await future

    # ------------------------------------------------------------------ the protocol

    async def create(self, created: MatchCreated) -> None:
        """Store a new match."""

        def operation(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO matches (match_id, game, rules_version, options, seats, server_seed,"
                " commitment, move_clock_ms, presets, created_ms) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    created.match_id,
                    created.game,
                    created.rules_version,
                    _to_json(created.options),
                    created.seats,
                    created.server_seed,
                    created.commitment,
                    created.move_clock_ms,
                    _to_json(created.presets),
                    created.created_ms,
                ),
            )

        await self._submit(operation)

    async def join(self, joined: SeatJoined) -> AppendStatus:
        """Store a seat unless it is taken."""

        def operation(conn: sqlite3.Connection) -> AppendStatus:
            cursor = conn.execute(
                "INSERT INTO seats (match_id, seat, name, token_hash, entropy, joined_ms)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (
                    joined.match_id,
                    joined.seat,
                    joined.name,
                    joined.token_hash,
                    joined.entropy,
                    joined.joined_ms,
                ),
            )
            return AppendStatus.COMMITTED if cursor.rowcount == 1 else AppendStatus.CONFLICT

        return await self._submit(operation)

    async def append(self, row: ActionRow) -> AppendResult:
        """Store an action if its seq and request id are both new, and it follows the last."""

        def operation(conn: sqlite3.Connection) -> AppendResult:
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM actions WHERE match_id=?", (row.match_id,)
            ).fetchone()
            if row.seq == last + 1:
                inserted = conn.execute(
                    "INSERT INTO actions (match_id, seq, seat, request_id, action, server_ms,"
                    " clock_default) VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                    (
                        row.match_id,
                        row.seq,
                        row.seat,
                        row.request_id,
                        row.action,
                        row.server_ms,
                        int(row.clock_default),
                    ),
                )
                if inserted.rowcount == 1:
                    return AppendResult(AppendStatus.COMMITTED)
            # Not the next seq, or a unique key refused it: a repeated request, or a conflict.
            existing = conn.execute(
                "SELECT seq, action, server_ms, clock_default FROM actions"
                " WHERE match_id=? AND seat=? AND request_id=?",
                (row.match_id, row.seat, row.request_id),
            ).fetchone()
            if existing is None:
                return AppendResult(AppendStatus.CONFLICT)
            seq, action, server_ms, clock_default = existing
            stored = ActionRow(
                row.match_id, seq, row.seat, row.request_id, action, server_ms, bool(clock_default)
            )
            return AppendResult(AppendStatus.DUPLICATE, stored)

        return await self._submit(operation)

    async def finish(self, finished: MatchFinished) -> None:
        """Mark a match finished (the first mark stays)."""

        def operation(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE matches SET finished_ms=?, final_hash=? WHERE match_id=?"
                " AND finished_ms IS NULL",
                (finished.finished_ms, finished.final_hash, finished.match_id),
            )

        await self._submit(operation)

    async def load(self, match_id: str) -> MatchLog | None:
        """The whole log of a match."""
        return await self._submit(lambda conn: _load(conn, match_id))

    async def unfinished(self) -> list[str]:
        """Matches not marked finished, oldest first."""

        def operation(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT match_id FROM matches WHERE finished_ms IS NULL ORDER BY created_ms, rowid"
            ).fetchall()
            return [r[0] for r in rows]

        return await self._submit(operation)

    async def finished_since(self, since_ms: int) -> list[str]:
        """Matches marked finished at or after ``since_ms``, in the order they finished."""

        def operation(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT match_id FROM matches WHERE finished_ms >= ? ORDER BY finished_ms, rowid",
                (since_ms,),
            ).fetchall()
            return [r[0] for r in rows]

        return await self._submit(operation)

    async def integrity_check(self) -> str:
        """SQLite's own integrity check ("ok" when the file is sound)."""
        return await self._submit(
            lambda conn: str(conn.execute("PRAGMA integrity_check").fetchone()[0])
        )

    async def close(self) -> None:
        """Let every queued write commit, then stop the writer thread."""
        self._queue.put(_STOP)
        await asyncio.to_thread(self._thread.join)


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def _load(conn: sqlite3.Connection, match_id: str) -> MatchLog | None:
    row = conn.execute(
        "SELECT game, rules_version, options, seats, server_seed, commitment, move_clock_ms,"
        " presets, created_ms, finished_ms, final_hash FROM matches WHERE match_id=?",
        (match_id,),
    ).fetchone()
    if row is None:
        return None
    (
        game,
        rules_version,
        options,
        seats,
        seed,
        commitment,
        clock,
        presets,
        created_ms,
        finished_ms,
        final_hash,
    ) = row
    created = MatchCreated(
        match_id=match_id,
        game=game,
        rules_version=rules_version,
        options=tuple((k, v) for k, v in _from_json(options)),
        seats=seats,
        server_seed=bytes(seed),
        commitment=commitment,
        move_clock_ms=clock,
        presets=_from_json(presets),
        created_ms=created_ms,
    )
    joined = tuple(
        SeatJoined(match_id, s, name, bytes(token_hash), bytes(entropy), joined_ms)
        for s, name, token_hash, entropy, joined_ms in conn.execute(
            "SELECT seat, name, token_hash, entropy, joined_ms FROM seats WHERE match_id=?"
            " ORDER BY seat",
            (match_id,),
        )
    )
    actions = tuple(
        ActionRow(match_id, seq, seat, request_id, action, server_ms, bool(clock_default))
        for seq, seat, request_id, action, server_ms, clock_default in conn.execute(
            "SELECT seq, seat, request_id, action, server_ms, clock_default FROM actions"
            " WHERE match_id=? ORDER BY seq",
            (match_id,),
        )
    )
    finished = MatchFinished(match_id, finished_ms, final_hash) if finished_ms is not None else None
    return MatchLog(created, joined, actions, finished)
