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
import contextlib
import os
import queue
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

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
    StoreOpenError,
    StoreUnavailable,
    TournamentRow,
)
from speeltafel.server.store.rows import (
    MATCH_COLUMNS,
    TOURNAMENT_COLUMNS,
    definition_json,
    fixture_result,
    match_parts,
    presets_to_json,
    result_json,
    rows_to_json,
    tournament_row,
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
    final_hash    TEXT,
    request_id    TEXT,
    token_key     BLOB,
    termination   TEXT
);
CREATE TABLE IF NOT EXISTS seats (
    match_id   TEXT NOT NULL REFERENCES matches(match_id),
    seat       INTEGER NOT NULL,
    name       TEXT NOT NULL,
    token_hash BLOB NOT NULL,
    entropy    BLOB NOT NULL,
    joined_ms  INTEGER NOT NULL,
    request_id TEXT,
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
CREATE TABLE IF NOT EXISTS bots (
    name_folded TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  BLOB NOT NULL,
    issued_ms   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tournaments (
    tournament_id TEXT PRIMARY KEY,
    request_id    TEXT,
    definition    TEXT NOT NULL,
    seed          BLOB NOT NULL,
    secret        BLOB NOT NULL,
    created_ms    INTEGER NOT NULL,
    status        TEXT NOT NULL,
    finished_ms   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament_fixtures (
    tournament_id TEXT NOT NULL REFERENCES tournaments(tournament_id),
    fixture       INTEGER NOT NULL,
    match_id      TEXT NOT NULL,
    result        TEXT,
    PRIMARY KEY (tournament_id, fixture)
);
"""

SCHEMA_VERSION = 4
"""``PRAGMA user_version`` of a file this code wrote. 0 or 1: the first schema (no request
ids, token keys or terminations), brought up to date by :func:`migrate`. 2: before preset
decks had names (``matches.presets`` a JSON list of orders of the game's first deck; such
rows are still read, as the deck ""). 3: ``matches.presets`` a JSON object, deck name to
its list of orders. 4: tournaments (the tables ``bots``, ``tournaments`` and
``tournament_fixtures``; a match's time bank, forfeit policy and deal description). A
server of an older version refuses a newer file instead of misreading it."""

INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS matches_request ON matches(request_id)
    WHERE request_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS seats_request ON seats(match_id, request_id)
    WHERE request_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS tournaments_request ON tournaments(request_id)
    WHERE request_id IS NOT NULL;
"""

_ADDED_COLUMNS = (
    ("matches", "request_id", "TEXT"),
    ("matches", "token_key", "BLOB"),
    ("matches", "termination", "TEXT"),
    ("seats", "request_id", "TEXT"),
    ("matches", "time_bank_ms", "INTEGER NOT NULL DEFAULT 0"),
    ("matches", "max_misses", "INTEGER NOT NULL DEFAULT 0"),
    ("matches", "forfeit", "TEXT NOT NULL DEFAULT ''"),
    ("matches", "deal", "TEXT NOT NULL DEFAULT ''"),
)


def migrate(conn: sqlite3.Connection) -> None:
    """Create the schema in a new file, or bring an older file's schema up to date.

    Runs in one transaction that holds the write lock, so two stores opening one file never
    both migrate it. Version 2 adds the request id and token key of a match, the request id
    of a seat and the termination of a finished match; every match created before gets a
    fresh token key (its seats joined without request ids, so no token derives from it).
    Version 3 changes how new rows store preset decks (by deck name); older rows are read
    as they are (see :func:`speeltafel.server.store.rows.presets_from_json`), so it
    rewrites nothing.
    Version 4 adds the tournament tables (created by SCHEMA) and a match's clock policy and
    deal description (columns with defaults that mean "none", so older rows read as the
    plain matches they were).
    A file written by a newer schema is refused rather than guessed at.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"schema version {version} is newer than this server's {SCHEMA_VERSION}"
            )
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        if version < SCHEMA_VERSION:
            for table, column, kind in _ADDED_COLUMNS:
                present = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                if column not in present:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            keyless = conn.execute("SELECT match_id FROM matches WHERE token_key IS NULL")
            for (match_id,) in keyless.fetchall():
                conn.execute(
                    "UPDATE matches SET token_key=? WHERE match_id=?",
                    (secrets.token_bytes(32), match_id),
                )
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        for statement in INDEXES.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


_STOP = object()
MAX_BATCH = 1024

APPLICATION_ID = 0x53504C54  # "SPLT" in the file header: this file is a speeltafel store
PREVIOUS_TABLES = frozenset({"matches", "seats", "actions"})  # files from before the stamp
SQLITE_MAGIC = b"SQLite format 3\x00"
# The writer's own one-row table: start-up and the health probe write there, nowhere else.
HEARTBEAT_SCHEMA = """
CREATE TABLE IF NOT EXISTS heartbeat (id INTEGER PRIMARY KEY, beat_ms INTEGER NOT NULL, pad BLOB);
"""
PROBE_INTERVAL_S = 0.5
PROBE_ROOM_BYTES = 16 * 1024  # the probe checks the file can grow by a few pages
# SQLite's primary result codes that blame the disk, not the program: retry later.
UNAVAILABLE_CODES = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR})
DAMAGED_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
RESTORE = (
    "Restore the store from a backup (or salvage it with `sqlite3 FILE .recover`),"
    " or move the file away to start an empty store; the server will not start on it"
)


def unavailable_cause(exc: BaseException) -> str | None:
    """SQLite's error name when ``exc`` is a write the disk refused (full, read-only, I/O)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error) or not isinstance(code, int):
        return None
    if code & 0xFF not in UNAVAILABLE_CODES:  # extended codes keep the primary in the low byte
        return None
    return str(getattr(exc, "sqlite_errorname", None) or f"SQLite error {code}")


class SqliteStore:
    """Match logs in one SQLite file, written by one group-committing thread."""

    ordered_appends = True
    """Appends are applied in the order they were made (one writer thread, one queue), so
    the runtime may pipeline a match's submits (``RuntimeConfig.pipeline_appends``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closing = False  # close() has begun: operations from now on are refused
        self._closing_lock = threading.Lock()  # no operation is queued behind the stop
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self.batches = 0  # commits made; with ``operations`` it shows the batching at work
        self.operations = 0
        self._writable = True  # set by the writer thread only
        self._next_probe = 0.0
        self._listeners: list[tuple[Callable[[bool], None], asyncio.AbstractEventLoop]] = []
        self._listeners_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="sqlite-writer", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            raise self._startup_error

    # ------------------------------------------------------------------ writer thread

    def _connect(self) -> sqlite3.Connection:
        conn = _open_checked(self.path)  # refuses damaged and foreign files
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        migrate(conn)
        return conn

    def _run(self) -> None:
        try:
            conn = self._connect()
            try:
                conn.executescript(HEARTBEAT_SCHEMA)
                _heartbeat(conn)  # a store that cannot write at start-up is refused
            except BaseException:
                conn.close()
                raise
        except (sqlite3.Error, OSError) as exc:  # reported to the constructor's caller
            self._startup_error = _open_failure(self.path, exc)
            self._ready.set()
            return
        except BaseException as exc:
            self._startup_error = exc
            self._ready.set()
            return
        self._ready.set()
        stopping = False
        while not stopping:
            if not self._writable and time.monotonic() >= self._next_probe:
                self._probe(conn)
            try:
                # While writes fail, wake up to probe even when no client writes.
                timeout = None if self._writable else PROBE_INTERVAL_S
                batch = [self._queue.get(timeout=timeout)]
            except queue.Empty:
                continue
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if _STOP in batch:
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            start = 0
            for i, (operation, future, loop) in enumerate(batch):
                if isinstance(operation, _Raw):  # tests only: outside any transaction
                    if start < i:
                        self._commit_batch(conn, batch[start:i])
                    loop.call_soon_threadsafe(_settle, future, *_run_raw(conn, operation.sql))
                    start = i + 1
            if start < len(batch):
                self._commit_batch(conn, batch[start:])
        conn.close()

    def _commit_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        results: list[tuple[bool, Any]] = []
        changes = conn.total_changes
        begun = False
        try:
            conn.execute("BEGIN IMMEDIATE")
            begun = True
            for operation, _future, _loop in batch:
                # Every operation writes with a single statement, which SQLite applies whole
                # or not at all: one that fails leaves the rest of the batch intact.
                try:
                    results.append((True, operation(conn)))
                except sqlite3.DatabaseError as exc:
                    # The disk refusing (SQLite may already have rolled everything back) fails
                    # the whole batch, below.
                    if not conn.in_transaction or unavailable_cause(exc) is not None:
                        raise
                    results.append((False, exc))
            conn.execute("COMMIT")
        except Exception as exc:
            # The commit itself failed: nothing of this batch is durable, so nobody is told
            # otherwise.
            _rollback(conn)
            cause = unavailable_cause(exc)
            if cause is None:
                results = [(False, exc)] * len(batch)
            elif not begun:
                # No write lock at all (a read-only file): reads can still be answered.
                self._set_writable(False)
                results = _one_by_one(conn, batch)
            else:
                results = [(False, _unavailable(cause, exc)) for _ in batch]
                self._set_writable(False)
        else:
            if conn.total_changes > changes:  # a write went through: the disk takes writes
                self._set_writable(True)
        self.batches += 1
        self.operations += len(batch)
        # One wake-up of each waiting loop for the whole batch, not one per operation: a
        # call_soon_threadsafe takes the loop's lock and writes its wake-up fd, and under
        # load a batch holds tens of appends (the group commit).
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for (ok, value), (_operation, future, loop) in zip(results, batch, strict=True):
            by_loop.setdefault(loop, []).append((future, ok, value))
        for loop, settled in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody to tell
                loop.call_soon_threadsafe(_settle_all, settled)

    def _probe(self, conn: sqlite3.Connection) -> None:
        """While writes fail: try a small write, and be writable again when it goes through."""
        self._next_probe = time.monotonic() + PROBE_INTERVAL_S
        try:
            _heartbeat(conn)
        except Exception:  # still failing (whatever the cause): probe again later
            _rollback(conn)
            return
        self._set_writable(True)

    def _set_writable(self, writable: bool) -> None:
        """Record a change of health and tell every listener on its own loop."""
        if writable == self._writable:
            return
        self._writable = writable
        self._next_probe = time.monotonic() + PROBE_INTERVAL_S
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener, loop in listeners:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody to tell
                loop.call_soon_threadsafe(listener, writable)

    @property
    def writable(self) -> bool:
        """False from a write the disk refused (full, read-only, I/O error) to one it takes."""
        return self._writable

    def add_health_listener(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(writable)`` on the running event loop whenever ``writable`` changes.

        Call it from that loop. While writes fail, the writer thread probes with a tiny write
        every PROBE_INTERVAL_S, so health comes back even when no client writes.
        """
        loop = asyncio.get_running_loop()
        with self._listeners_lock:
            self._listeners.append((listener, loop))

    async def _execute_for_tests(self, sql: str) -> list[tuple[Any, ...]]:
        """Run one statement on the writer's connection, outside any transaction (tests only).

        Faults for tests: ``PRAGMA max_page_count = 1`` makes writes that grow the file fail
        with a real SQLITE_FULL; ``PRAGMA query_only = ON`` makes every write fail with a real
        SQLITE_READONLY. Setting them back lifts the fault.
        """
        result: list[tuple[Any, ...]] = await self._queued(_Raw(sql))
        return result

    async def _submit(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await self._queued(operation)
        return result

    def _queued(self, operation: Any) -> asyncio.Future[Any]:
        """Put an operation on the writer's queue; the future of its answer. Once
        :meth:`close` has begun it is refused (RuntimeError): the writer has stopped, or
        stops before it, and would never answer it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._closing_lock:
            if self._closing:
                future.set_exception(RuntimeError(f"the store {self.path.name} is closed"))
            else:
                self._queue.put((operation, future, loop))
        return future

    # ------------------------------------------------------------------ the protocol

    async def create(self, created: MatchCreated) -> MatchCreated:
        """Store a new match, or return the one made before with the same request id."""

        def operation(conn: sqlite3.Connection) -> MatchCreated:
            if created.request_id:
                # The writer thread runs one operation at a time inside a transaction that
                # holds the file's write lock: nothing can come between this look-up and the
                # insert (and the unique index stands behind it).
                found = conn.execute(
                    "SELECT match_id FROM matches WHERE request_id=?", (created.request_id,)
                ).fetchone()
                if found is not None:
                    stored = _load(conn, found[0])
                    assert stored is not None
                    return stored.created
            conn.execute(
                "INSERT INTO matches (match_id, game, rules_version, options, seats, server_seed,"
                " commitment, move_clock_ms, presets, created_ms, request_id, token_key,"
                " time_bank_ms, max_misses, forfeit, deal)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    created.match_id,
                    created.game,
                    created.rules_version,
                    rows_to_json(created.options),
                    created.seats,
                    created.server_seed,
                    created.commitment,
                    created.move_clock_ms,
                    presets_to_json(created.presets),
                    created.created_ms,
                    created.request_id or None,
                    created.token_key,
                    created.time_bank_ms,
                    created.max_misses,
                    created.forfeit,
                    created.deal,
                ),
            )
            return created

        return await self._submit(operation)

    async def join(self, joined: SeatJoined) -> AppendStatus:
        """Store a seat unless it is taken."""

        def operation(conn: sqlite3.Connection) -> AppendStatus:
            cursor = conn.execute(
                "INSERT INTO seats (match_id, seat, name, token_hash, entropy, joined_ms,"
                " request_id) VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (
                    joined.match_id,
                    joined.seat,
                    joined.name,
                    joined.token_hash,
                    joined.entropy,
                    joined.joined_ms,
                    joined.request_id or None,
                ),
            )
            return AppendStatus.COMMITTED if cursor.rowcount == 1 else AppendStatus.CONFLICT

        return await self._submit(operation)

    async def append(self, row: ActionRow) -> AppendResult:
        """Store an action if its seq and request id are both new, and it follows the last."""
        return await self._submit(_append_operation(row))

    def start_append(self, row: ActionRow) -> asyncio.Future[AppendResult]:
        """:meth:`append` begun at once: the row is on the writer's queue when this returns,
        and the future is settled when it is durable, with no task or coroutine around it
        (see :func:`~speeltafel.server.store.base.start_append`). A subclass that overrides
        :meth:`append` (a test's faulty store) gets its own append, in a task."""
        if type(self).append is not SqliteStore.append:
            return asyncio.ensure_future(self.append(row))
        return self._queued(_append_operation(row))

    async def finish(self, finished: MatchFinished) -> None:
        """Mark a match finished (the first mark stays)."""

        def operation(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE matches SET finished_ms=?, final_hash=?, termination=? WHERE match_id=?"
                " AND finished_ms IS NULL",
                (
                    finished.finished_ms,
                    finished.final_hash,
                    finished.termination,
                    finished.match_id,
                ),
            )

        await self._submit(operation)

    async def load(self, match_id: str) -> MatchLog | None:
        """The whole log of a match."""
        return await self._submit(lambda conn: _load(conn, match_id))

    async def import_logs(self, logs: Sequence[MatchLog]) -> None:
        """Write whole match logs in one transaction (``make bench`` builds its 10,000
        stored matches this way; the per-row calls would take minutes). Every row is new:
        an id already stored fails the whole import and writes nothing."""

        def operation(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO matches (match_id, game, rules_version, options, seats,"
                " server_seed, commitment, move_clock_ms, presets, created_ms, request_id,"
                " token_key, time_bank_ms, max_misses, forfeit, deal, finished_ms, final_hash,"
                " termination) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        c.match_id, c.game, c.rules_version, rows_to_json(c.options), c.seats,
                        c.server_seed, c.commitment, c.move_clock_ms,
                        presets_to_json(c.presets), c.created_ms, c.request_id or None,
                        c.token_key, c.time_bank_ms, c.max_misses, c.forfeit, c.deal,
                        f.finished_ms if f else None, f.final_hash if f else None,
                        f.termination if f else None,
                    )
                    for c, f in ((log.created, log.finished) for log in logs)
                ],
            )  # fmt: skip
            conn.executemany(
                "INSERT INTO seats (match_id, seat, name, token_hash, entropy, joined_ms,"
                " request_id) VALUES (?,?,?,?,?,?,?)",
                [
                    (j.match_id, j.seat, j.name, j.token_hash, j.entropy, j.joined_ms,
                     j.request_id or None)
                    for log in logs
                    for j in log.seats
                ],
            )  # fmt: skip
            conn.executemany(
                "INSERT INTO actions (match_id, seq, seat, request_id, action, server_ms,"
                " clock_default) VALUES (?,?,?,?,?,?,?)",
                [
                    (a.match_id, a.seq, a.seat, a.request_id, a.action, a.server_ms,
                     int(a.clock_default))
                    for log in logs
                    for a in log.actions
                ],
            )  # fmt: skip

        await self._submit(operation)

    async def load_unfinished(self) -> list[MatchLog]:
        """Every unfinished match's whole log, in one operation (recovery in bulk)."""
        return await self._submit(_load_unfinished)

    async def load_many(self, match_ids: Sequence[str]) -> list[MatchLog]:
        """The logs of ``match_ids`` (those stored), in that order, in one operation: one
        statement per table for all of them. Recovery reads the unfinished matches in
        chunks with this rather than all at once (:meth:`load_unfinished`), so the read's
        transient rows and lists of one chunk are freed and reused by the next instead of
        raising the process's memory high-water mark by every log at once."""
        ids = list(match_ids)
        return await self._submit(lambda conn: _load_many(conn, ids))

    async def unfinished_seats(self) -> list[tuple[str, int, bytes]]:
        """(match id, seat, token hash) of every seat of an unfinished match: what a
        restarted server needs to know whose call is whose before it has loaded them."""

        return await self._submit(lambda conn: _seats_of(conn, "m.finished_ms IS NULL"))

    async def finished_seats(self, since_ms: int) -> list[tuple[str, int, bytes, int]]:
        """(match id, seat, token hash, finished ms) of every seat of a match marked
        finished at or after ``since_ms`` and not expired (an expired match's tokens are
        forgotten): what a restarted server needs to answer late calls to the matches that
        ended just before it, without loading them until a call comes, and until when
        (``MatchRuntime._load_lingering``)."""

        where = (
            "m.finished_ms >= ? AND COALESCE(m.termination, 'normal') != 'expired'"
            " ORDER BY m.finished_ms, m.rowid, s.seat"
        )
        rows = await self._submit(
            lambda conn: _seats_of(conn, where, (since_ms,), extra=", m.finished_ms")
        )
        return rows  # type: ignore[return-value]  # with extra: four columns

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

    # ------------------------------------------------------------------ tournaments

    async def put_bot(self, bot: BotCredential) -> None:
        """Store a bot's token hash, replacing the one of the same name (case-insensitive)."""

        def operation(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO bots (name_folded, name, token_hash, issued_ms) VALUES (?,?,?,?)"
                " ON CONFLICT (name_folded) DO UPDATE SET name=excluded.name,"
                " token_hash=excluded.token_hash, issued_ms=excluded.issued_ms",
                (bot.name.casefold(), bot.name, bot.token_hash, bot.issued_ms),
            )

        await self._submit(operation)

    async def bots(self) -> list[BotCredential]:
        """Every bot with a token, in the order they were first issued."""

        def operation(conn: sqlite3.Connection) -> list[BotCredential]:
            rows = conn.execute("SELECT name, token_hash, issued_ms FROM bots ORDER BY rowid")
            return [BotCredential(n, bytes(h), ms) for n, h, ms in rows.fetchall()]

        return await self._submit(operation)

    async def create_tournament(self, row: TournamentRow) -> TournamentRow:
        """Store a tournament, or return the one made before with the same request id."""

        def operation(conn: sqlite3.Connection) -> TournamentRow:
            if row.request_id:
                found = conn.execute(
                    f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE request_id=?",
                    (row.request_id,),
                ).fetchone()
                if found is not None:
                    return tournament_row(found)
            conn.execute(
                f"INSERT INTO tournaments ({TOURNAMENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                (
                    row.tournament_id,
                    row.request_id or None,
                    definition_json(row),
                    row.seed,
                    row.secret,
                    row.created_ms,
                    row.status,
                    row.finished_ms,
                ),
            )
            return row

        return await self._submit(operation)

    async def set_tournament_status(
        self, tournament_id: str, status: str, finished_ms: int
    ) -> None:
        """Change a tournament's status."""
        await self._submit(
            lambda conn: conn.execute(
                "UPDATE tournaments SET status=?, finished_ms=? WHERE tournament_id=?",
                (status, finished_ms, tournament_id),
            )
        )

    async def tournaments(self) -> list[TournamentRow]:
        """Every tournament, oldest first."""

        def operation(conn: sqlite3.Connection) -> list[TournamentRow]:
            rows = conn.execute(
                f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments ORDER BY created_ms, rowid"
            )
            return [tournament_row(r) for r in rows.fetchall()]

        return await self._submit(operation)

    async def put_fixture(self, fixture: FixtureMatch) -> None:
        """Record the match of a fixture (the first record stays)."""
        await self._submit(
            lambda conn: conn.execute(
                "INSERT INTO tournament_fixtures (tournament_id, fixture, match_id)"
                " VALUES (?,?,?) ON CONFLICT DO NOTHING",
                (fixture.tournament_id, fixture.fixture, fixture.match_id),
            )
        )

    async def put_result(self, result: FixtureResult) -> None:
        """Record a fixture's result (the first record stays)."""
        text = result_json(result)
        await self._submit(
            lambda conn: conn.execute(
                "INSERT INTO tournament_fixtures (tournament_id, fixture, match_id, result)"
                " VALUES (?,?,?,?) ON CONFLICT (tournament_id, fixture) DO UPDATE SET"
                " result=excluded.result WHERE tournament_fixtures.result IS NULL",
                (result.tournament_id, result.fixture, result.match_id, text),
            )
        )

    async def fixtures(self, tournament_id: str) -> list[FixtureMatch]:
        """The tournament's fixtures with a match, by number."""

        def operation(conn: sqlite3.Connection) -> list[FixtureMatch]:
            rows = conn.execute(
                "SELECT fixture, match_id FROM tournament_fixtures WHERE tournament_id=?"
                " ORDER BY fixture",
                (tournament_id,),
            )
            return [FixtureMatch(tournament_id, f, m) for f, m in rows.fetchall()]

        return await self._submit(operation)

    async def results(self, tournament_id: str) -> list[FixtureResult]:
        """The tournament's results, by fixture number."""

        def operation(conn: sqlite3.Connection) -> list[FixtureResult]:
            rows = conn.execute(
                "SELECT fixture, match_id, result FROM tournament_fixtures"
                " WHERE tournament_id=? AND result IS NOT NULL ORDER BY fixture",
                (tournament_id,),
            )
            found = []
            for fixture, match_id, text in rows.fetchall():
                found.append(fixture_result(tournament_id, fixture, match_id, text))
            return found

        return await self._submit(operation)

    async def integrity_check(self) -> str:
        """SQLite's own integrity check ("ok" when the file is sound)."""
        return await self._submit(
            lambda conn: str(conn.execute("PRAGMA integrity_check").fetchone()[0])
        )

    async def close(self) -> None:
        """Let every queued operation finish, then stop the writer thread. An operation
        begun after this is refused with RuntimeError; a second close waits as the first."""
        with self._closing_lock:
            if not self._closing:
                self._closing = True
                self._queue.put(_STOP)
        await asyncio.to_thread(self._thread.join)


class _Raw:
    """A statement for :meth:`SqliteStore._execute_for_tests`."""

    __slots__ = ("sql",)

    def __init__(self, sql: str) -> None:
        self.sql = sql


def _run_raw(conn: sqlite3.Connection, sql: str) -> tuple[bool, Any]:
    try:
        return True, conn.execute(sql).fetchall()
    except Exception as exc:
        return False, exc


def _one_by_one(conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
    """Each operation in its own deferred transaction: reads go on while writes are refused."""
    results: list[tuple[bool, Any]] = []
    for operation, _future, _loop in batch:
        try:
            conn.execute("BEGIN")
            value = operation(conn)
            conn.execute("COMMIT")
            results.append((True, value))
        except Exception as exc:
            _rollback(conn)
            cause = unavailable_cause(exc)
            results.append((False, exc if cause is None else _unavailable(cause, exc)))
    return results


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back whatever is open; a rollback that fails too leaves SQLite to recover."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _unavailable(cause: str, exc: BaseException) -> StoreUnavailable:
    failure = StoreUnavailable(cause)
    failure.__cause__ = exc
    return failure


def _heartbeat(conn: sqlite3.Connection) -> None:
    """A small durable write that also needs room for the file to grow.

    A row updated in place fits in a page the file already has, so on a full disk it could
    succeed while appends fail; the savepoint first takes (and gives back) a few fresh pages.
    """
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("SAVEPOINT room")
    conn.execute(
        "INSERT INTO heartbeat (id, beat_ms, pad) VALUES (2, 0, zeroblob(?))", (PROBE_ROOM_BYTES,)
    )
    conn.execute("ROLLBACK TO room")
    conn.execute("RELEASE room")
    conn.execute(
        "INSERT INTO heartbeat (id, beat_ms) VALUES (1, ?)"
        " ON CONFLICT (id) DO UPDATE SET beat_ms = excluded.beat_ms",
        (time.time_ns() // 1_000_000,),
    )
    conn.execute("COMMIT")


def _open_checked(path: Path) -> sqlite3.Connection:
    """A connection to the store at ``path``, which must be a sound speeltafel store.

    Only a path that does not exist becomes a new store. Anything else there (an empty file,
    a text file, another program's database, a damaged store) is refused with StoreOpenError:
    taking it for a new store would hide the loss of every match it held.
    """
    if not path.exists():
        _create(path)
    size = path.stat().st_size
    if size == 0:
        raise StoreOpenError(
            path,
            "the file is empty (0 bytes), so it holds no speeltafel store",
            "If no server ever wrote there, delete it to start an empty store;"
            " otherwise restore the store from a backup",
        )
    with path.open("rb") as file:
        magic = file.read(len(SQLITE_MAGIC))
    if magic != SQLITE_MAGIC:
        raise StoreOpenError(
            path,
            "the file is not an SQLite database (or its first page is destroyed)",
            "Check that --db names the store; if it does, restore it from a backup",
        )
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        _check_store(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _create(path: Path) -> None:
    """A new, stamped store file at ``path``, appearing there whole.

    Built under a temporary name and linked into place, so that a crash while creating it
    never leaves an empty file at ``path`` (which the next start would refuse).
    """
    temporary = path.with_name(f".{path.name}.new-{os.getpid()}")
    temporary.unlink(missing_ok=True)
    conn = sqlite3.connect(temporary, isolation_level=None)
    try:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # writes page 1
    finally:
        conn.close()
    fd = os.open(temporary, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    with contextlib.suppress(FileExistsError):  # someone else made one meanwhile: check theirs
        os.link(temporary, path)
    temporary.unlink()
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_store(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a foreign or damaged database; stamp a store of the previous version."""
    try:
        (application_id,) = conn.execute("PRAGMA application_id").fetchone()
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        # quick_check, not integrity_check: both read every page and check the b-trees and
        # records, but only integrity_check also matches every index against its table, and
        # that costs 4x as much (100k actions, 23 MB: 22 ms against 95 ms; 1M actions:
        # 0.27 s against 1.0 s). The full check stays available as integrity_check().
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
        raise StoreOpenError(path, f"the database is damaged ({name}: {exc})", RESTORE) from exc
    if problems != ["ok"]:
        found = " ".join(problems).replace("*** in database main ***", "").strip()
        raise StoreOpenError(path, f"the database failed its integrity check ({found})", RESTORE)
    if application_id == APPLICATION_ID:
        return
    if application_id == 0 and tables == PREVIOUS_TABLES:
        # A store written before files were stamped: exactly our tables, so it is ours.
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return
    what = (
        f"it belongs to another program (application_id {application_id:#x})"
        if application_id
        else "it is an SQLite database without speeltafel's tables"
        + (f" (it has {', '.join(sorted(tables))})" if tables else " (it is empty)")
    )
    raise StoreOpenError(
        path,
        what,
        "Check that --db names the speeltafel store; give a path that does not exist yet"
        " to start an empty store",
    )


def _open_failure(path: Path, exc: sqlite3.Error | OSError) -> StoreOpenError:
    """The one-line refusal for an error met while opening the store."""
    cause = unavailable_cause(exc)
    if cause is not None:
        failure = StoreOpenError(
            path,
            f"it cannot be written ({cause})",
            "Free disk space, or make the file, its -wal and -shm files and its folder"
            " writable, then start again",
        )
    elif isinstance(exc, OSError):
        failure = StoreOpenError(
            path, exc.strerror or str(exc), "Check the path and its permissions"
        )
    elif getattr(exc, "sqlite_errorcode", 0) & 0xFF in DAMAGED_CODES:
        failure = StoreOpenError(path, f"the database is damaged ({exc})", RESTORE)
    else:
        name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
        failure = StoreOpenError(
            path,
            f"SQLite refused it ({name}: {exc})",
            "Check the file and its folder; restore the store from a backup if it is damaged",
        )
    failure.__cause__ = exc
    return failure


_APPEND_SQL = (
    "INSERT INTO actions (match_id, seq, seat, request_id, action, server_ms, clock_default)"
    " SELECT ?,?,?,?,?,?,? WHERE (SELECT COALESCE(MAX(seq), 0) FROM actions WHERE match_id=?)"
    " = ? ON CONFLICT DO NOTHING"
)
"""Append an action row only when it follows the match's last stored seq."""


def _append_params(row: ActionRow) -> tuple[Any, ...]:
    return (
        row.match_id,
        row.seq,
        row.seat,
        row.request_id,
        row.action,
        row.server_ms,
        int(row.clock_default),
        row.match_id,
        row.seq - 1,
    )


def _append_operation(row: ActionRow) -> Callable[[sqlite3.Connection], AppendResult]:
    """The writer's operation that stores ``row`` (:meth:`SqliteStore.append`)."""

    def operation(conn: sqlite3.Connection) -> AppendResult:
        # One statement: inserted only when it follows the last stored seq (the
        # sub-select) and its keys are new (ON CONFLICT). A look-up of the last seq
        # and then the insert were two statements on the writer thread per action.
        inserted = conn.execute(_APPEND_SQL, _append_params(row))
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

    return operation


def _settle_all(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    """Settle a batch's futures of one loop, in the batch's order."""
    for future, ok, value in settled:
        _settle(future, ok, value)


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


_SEAT_COLUMNS = "match_id, seat, name, token_hash, entropy, joined_ms, request_id"
_ACTION_COLUMNS = "match_id, seq, seat, request_id, action, server_ms, clock_default"


def _seat(row: tuple[Any, ...], match_id: str | None = None) -> SeatJoined:
    stored_id, seat, name, token_hash, entropy, joined_ms, request_id = row
    return SeatJoined(
        match_id or stored_id,
        seat,
        name,
        bytes(token_hash),
        bytes(entropy),
        joined_ms,
        request_id or "",
    )


def _action(row: tuple[Any, ...], match_id: str | None = None) -> ActionRow:
    """An action row as loaded. Rows of a loaded match are kept in memory for as long as
    the match is (idle matches hold tens of them), so each row shares the match's id string
    (``match_id``: one object, not one per row, as sqlite3 returns them) and the action's
    text is interned (a game has few distinct action texts: "select 34", "row 2")."""
    stored_id, seq, seat, request_id, action, server_ms, clock_default = row
    return ActionRow(
        match_id or stored_id,
        seq,
        seat,
        request_id,
        sys.intern(action),
        server_ms,
        bool(clock_default),
    )


def _load(conn: sqlite3.Connection, match_id: str) -> MatchLog | None:
    row = conn.execute(
        f"SELECT {MATCH_COLUMNS} FROM matches WHERE match_id=?", (match_id,)
    ).fetchone()
    if row is None:
        return None
    created, finished = match_parts(row)
    match_id = created.match_id
    joined = tuple(
        _seat(r, match_id)
        for r in conn.execute(
            f"SELECT {_SEAT_COLUMNS} FROM seats WHERE match_id=? ORDER BY seat", (match_id,)
        )
    )
    actions = tuple(
        _action(r, match_id)
        for r in conn.execute(
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE match_id=? ORDER BY seq", (match_id,)
        )
    )
    return MatchLog(created, joined, actions, finished)


def _seats_of(
    conn: sqlite3.Connection, where: str, parameters: tuple[int, ...] = (), extra: str = ""
) -> list[tuple[str, int, bytes]]:
    """(match id, seat, token hash) of every seat of the matches ``where`` selects (a
    condition on ``matches m``, perhaps with an ORDER BY), followed by the ``extra``
    columns (``", m.finished_ms"``): one id string per match, not one per seat."""
    ids: dict[str, str] = {}
    return [
        (ids.setdefault(row[0], row[0]), row[1], bytes(row[2]), *row[3:])
        for row in conn.execute(
            "SELECT s.match_id, s.seat, s.token_hash" + extra + " FROM seats s"
            " JOIN matches m ON m.match_id = s.match_id WHERE " + where,
            parameters,
        )
    ]


def _load_many(conn: sqlite3.Connection, match_ids: list[str]) -> list[MatchLog]:
    """The stored logs of ``match_ids`` in that order (a missing id is left out), one
    statement per table and per :data:`_IN_CHUNK` ids."""
    by_id: dict[str, MatchLog] = {}
    for start in range(0, len(match_ids), _IN_CHUNK):
        chunk = match_ids[start : start + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        ids = {m: m for m in chunk}  # each row gets the caller's id string, shared
        seats: dict[str, list[SeatJoined]] = {}
        for r in conn.execute(
            f"SELECT {_SEAT_COLUMNS} FROM seats WHERE match_id IN ({marks})"
            " ORDER BY match_id, seat",
            chunk,
        ):
            seats.setdefault(r[0], []).append(_seat(r, ids[r[0]]))
        actions: dict[str, list[ActionRow]] = {}
        for r in conn.execute(
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE match_id IN ({marks})"
            " ORDER BY match_id, seq",
            chunk,
        ):
            actions.setdefault(r[0], []).append(_action(r, ids[r[0]]))
        for row in conn.execute(
            f"SELECT {MATCH_COLUMNS} FROM matches WHERE match_id IN ({marks})", chunk
        ):
            created, finished = match_parts(row)
            match_id = created.match_id
            by_id[match_id] = MatchLog(
                created,
                tuple(seats.get(match_id, ())),
                tuple(actions.get(match_id, ())),
                finished,
            )
    return [by_id[m] for m in match_ids if m in by_id]


_IN_CHUNK = 500
"""Ids per ``IN (...)`` list: well under SQLite's limit on bound parameters."""


def _load_unfinished(conn: sqlite3.Connection) -> list[MatchLog]:
    """Every unfinished match's log, oldest first: one statement per table for all of them
    (the per-match :func:`_load` made 10,000 matches 30,000 statements and as many round
    trips to the writer thread). Rows come in key order, so each table is walked once."""
    matches = conn.execute(
        f"SELECT {MATCH_COLUMNS} FROM matches WHERE finished_ms IS NULL ORDER BY created_ms, rowid"
    ).fetchall()
    seats: dict[str, list[SeatJoined]] = {}
    for r in conn.execute(
        f"SELECT {', '.join('s.' + c.strip() for c in _SEAT_COLUMNS.split(','))} FROM seats s"
        " JOIN matches m ON m.match_id = s.match_id WHERE m.finished_ms IS NULL"
        " ORDER BY s.match_id, s.seat"
    ):
        seats.setdefault(r[0], []).append(_seat(r))
    actions: dict[str, list[ActionRow]] = {}
    for r in conn.execute(
        f"SELECT {', '.join('a.' + c.strip() for c in _ACTION_COLUMNS.split(','))} FROM actions a"
        " JOIN matches m ON m.match_id = a.match_id WHERE m.finished_ms IS NULL"
        " ORDER BY a.match_id, a.seq"
    ):
        actions.setdefault(r[0], []).append(_action(r))
    logs = []
    for row in matches:
        created, finished = match_parts(row)
        match_id = created.match_id
        logs.append(
            MatchLog(
                created,
                tuple(seats.get(match_id, ())),
                tuple(actions.get(match_id, ())),
                finished,
            )
        )
    return logs
