"""A MatchStore on PostgreSQL, so that several server processes can share one match log.

The same contract as the SQLite store (``tests/store/test_match_store.py``), and the same
shape: one writer takes every pending write of this process, runs them in one transaction,
commits once, and only then answers each caller. What changes is who decides. With several
processes writing, the database's unique keys decide which move wins: an action is inserted
only if its seq follows the last stored one and both ``(match_id, seq)`` and
``(match_id, seat, request_id)`` are new, so two processes can never both store a move at
one seq, and a request stored before is answered with its stored row.

Decisions:

- **Sorted batches.** Each batch runs in ``(match_id, kind, seq)`` order. Two writers that
  insert the same keys in different orders would each wait for the other's uncommitted row
  in the unique index, a deadlock PostgreSQL breaks only after ``deadlock_timeout`` (1 s) by
  failing one of them; in one order, the later writer simply waits and then sees a
  conflict. A deadlock that still happens (two retried requests crossing in the request-id
  index) rolls the batch back and runs it again: nothing of it was committed.
- **One failure fails one operation.** A PostgreSQL error aborts the whole transaction, so
  an operation that fails for its own reason (a bug, a foreign key) is answered with its
  error and the batch runs again without it; no savepoints on the common path.
- **Acknowledged after the commit.** Futures are resolved only once ``COMMIT`` returned,
  and answers computed by a run of the batch that was then rolled back (a deadlock, a
  failing operation) are dropped: the batch runs again and is answered from that run.
  ``COMMIT`` is only sent on a transaction still open: on an aborted one PostgreSQL answers
  ROLLBACK without an error, and psycopg's ``commit()`` would return as if it had
  committed. A connection lost during the commit leaves its outcome unknown: the callers
  get StoreUnavailable, never COMMITTED, and a retry with the same request id finds the
  row (a duplicate) or stores it, so nothing is lost or applied twice.
- **Faults outside the program** (connection lost, server shutting down, disk full, a
  read-only server, I/O errors: SQLSTATE classes 08, 53, 57, 58 and 25006) raise the
  StoreUnavailable the runtime already turns into UNAVAILABLE, and make ``writable`` False
  until a probe (a reconnect and a small write every PROBE_INTERVAL_S) goes through.
- **One NOTIFY per committed batch** on :attr:`PostgresStore.channel`, its payload the
  writing store's origin and the ids of the matches that moved, sent inside the batch's
  transaction, so PostgreSQL delivers it at the commit and never for a rolled-back write.
  :meth:`PostgresStore.moves` yields those ids; :meth:`PostgresStore.read_actions` reads the
  new rows by seq.
- **The schema is the server's**: created and migrated at start-up under an advisory lock (two
  processes starting together never both migrate), its version in ``schema_version``; a
  schema newer than this code is refused with one line, not guessed at. Tables are created
  unqualified, in the connection's ``search_path``, so one database can hold several stores
  (``?options=-csearch_path%3Dname`` in the URL), each with its own NOTIFY channel.

psycopg is imported here only, so a server without the ``postgres`` extra runs on SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, PoolTimeout

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

SCHEMA_VERSION = 3
"""The newest version this code writes. 1: matches, seats, actions, heartbeat. 2: a match's
time bank, forfeit policy and deal description (as SQLite's schema 4), and tournaments:
``bots``, ``tournaments``, ``tournament_fixtures`` (the TournamentStore), and ``director``
(which process directs the tournaments now, see ``speeltafel.server.app.cluster``).
3: ``deadlines``, each unfinished match's next timed event, claimed by the cluster's
sweepers (:meth:`PostgresStore.claim_overdue`)."""

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: the log. The same columns as SQLite's schema 3; options and presets are JSON
    # texts, kept byte for byte as the SQLite store writes them.
    """
    CREATE TABLE matches (
        match_id      text PRIMARY KEY,
        game          text NOT NULL,
        rules_version integer NOT NULL,
        options       text NOT NULL,
        seats         integer NOT NULL,
        server_seed   bytea NOT NULL,
        commitment    text NOT NULL,
        move_clock_ms bigint NOT NULL,
        presets       text NOT NULL,
        created_ms    bigint NOT NULL,
        request_id    text UNIQUE,
        token_key     bytea NOT NULL,
        finished_ms   bigint,
        final_hash    text,
        termination   text
    );
    CREATE INDEX matches_unfinished ON matches (created_ms, match_id) WHERE finished_ms IS NULL;
    CREATE INDEX matches_finished ON matches (finished_ms) WHERE finished_ms IS NOT NULL;
    CREATE TABLE seats (
        match_id   text NOT NULL REFERENCES matches (match_id),
        seat       integer NOT NULL,
        name       text NOT NULL,
        token_hash bytea NOT NULL,
        entropy    bytea NOT NULL,
        joined_ms  bigint NOT NULL,
        request_id text,
        PRIMARY KEY (match_id, seat)
    );
    CREATE UNIQUE INDEX seats_request ON seats (match_id, request_id)
        WHERE request_id IS NOT NULL;
    CREATE TABLE actions (
        match_id      text NOT NULL REFERENCES matches (match_id),
        seq           integer NOT NULL,
        seat          integer NOT NULL,
        request_id    text NOT NULL,
        action        text NOT NULL,
        server_ms     bigint NOT NULL,
        clock_default boolean NOT NULL,
        PRIMARY KEY (match_id, seq),
        UNIQUE (match_id, seat, request_id)
    );
    CREATE TABLE heartbeat (id integer PRIMARY KEY, beat_ms bigint NOT NULL);
    """,
    # 1 -> 2: tournaments. Columns with defaults that mean "none", so rows stored by
    # version 1 read as before. A tournament's definition is JSON, as SQLite keeps it; the
    # bots' ``issued`` order is a sequence, so "in the order first issued" survives a
    # re-issue (the upsert keeps the row's number).
    """
    ALTER TABLE matches ADD COLUMN time_bank_ms bigint NOT NULL DEFAULT 0;
    ALTER TABLE matches ADD COLUMN max_misses integer NOT NULL DEFAULT 0;
    ALTER TABLE matches ADD COLUMN forfeit text NOT NULL DEFAULT '';
    ALTER TABLE matches ADD COLUMN deal text NOT NULL DEFAULT '';
    CREATE TABLE bots (
        name_folded text PRIMARY KEY,
        issued      bigserial,
        name        text NOT NULL,
        token_hash  bytea NOT NULL,
        issued_ms   bigint NOT NULL
    );
    CREATE TABLE tournaments (
        tournament_id text PRIMARY KEY,
        created       bigserial,
        request_id    text UNIQUE,
        definition    text NOT NULL,
        seed          bytea NOT NULL,
        secret        bytea NOT NULL,
        created_ms    bigint NOT NULL,
        status        text NOT NULL,
        finished_ms   bigint NOT NULL
    );
    CREATE TABLE tournament_fixtures (
        tournament_id text NOT NULL REFERENCES tournaments (tournament_id),
        fixture       integer NOT NULL,
        match_id      text NOT NULL,
        result        text,
        PRIMARY KEY (tournament_id, fixture)
    );
    CREATE TABLE director (
        id          integer PRIMARY KEY,
        address     text NOT NULL,
        origin      text NOT NULL,
        since_ms    bigint NOT NULL
    );
    """,
    # 2 -> 3: deadlines. One row a match: the seq (the match's version) the deadline was
    # computed at, the deadline (NULL once the match has none: finished), and the claim.
    """
    CREATE TABLE deadlines (
        match_id         text PRIMARY KEY,
        seq              integer NOT NULL,
        deadline_ms      bigint,
        claimed_by       text NOT NULL DEFAULT '',
        claimed_until_ms bigint NOT NULL DEFAULT 0
    );
    CREATE INDEX deadlines_due ON deadlines (deadline_ms) WHERE deadline_ms IS NOT NULL;
    """,
)
"""``MIGRATIONS[v]`` takes a schema from version ``v`` to ``v + 1``."""

CHANNEL = "speeltafel_moves"
"""The NOTIFY channel of a store in the ``public`` schema; another schema's is suffixed with
its name (channels are per database, schemas are not)."""
NOTIFY_PAYLOAD_BYTES = 7_900  # PostgreSQL's limit is 8000 bytes; the origin and spaces fit
MIGRATION_LOCK = 0x53504C54  # pg_advisory_xact_lock key while migrating: "SPLT"
MAX_BATCH = 1024
MAX_RETRIES = 5  # a batch rolled back by a deadlock or serialization failure runs again
PROBE_INTERVAL_S = 0.5
CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 5.0  # waiting for a pooled read connection, before StoreUnavailable
READ_POOL_SIZE = 4
UNAVAILABLE_CLASSES = ("08", "53", "57", "58")  # connection, resources, operator, system
UNAVAILABLE_STATES = frozenset({"25006"})  # read_only_sql_transaction (a standby, say)
RETRY_STATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock detected
_STOP = object()
T = TypeVar("T")


def unavailable_cause(exc: BaseException) -> str | None:
    """A short cause when ``exc`` is PostgreSQL refusing for a reason outside the program.

    Connection losses (psycopg's OperationalError with no SQLSTATE, or class 08), a server
    shutting down (57), out of disk or memory (53), I/O errors (58), a read-only server.
    """
    if isinstance(exc, PoolTimeout):
        return "no connection to PostgreSQL"
    if not isinstance(exc, psycopg.Error):
        return None
    state = exc.sqlstate
    if state is None:
        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            return "connection to PostgreSQL lost"
        return None
    if state in UNAVAILABLE_STATES or state[:2] in UNAVAILABLE_CLASSES:
        name = type(exc).__name__
        return f"PostgreSQL {state} {name}"
    return None


def redacted(conninfo: str) -> str:
    """The connection string for messages: host, port, database and user, never a password."""
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.Error:
        return "the PostgreSQL store"
    host = params.get("host") or "localhost"
    port = params.get("port") or 5432
    user = f"{params['user']}@" if params.get("user") else ""
    return f"postgresql://{user}{host}:{port}/{params.get('dbname', '')}"


def payloads(origin: str, match_ids: Iterable[str]) -> list[str]:
    """NOTIFY payloads ``"origin id id ..."``, each within PostgreSQL's 8000-byte limit.

    Usually one; a batch that moved more matches than fit (about 450 ids of 16 hex digits)
    is told in several, all delivered together at its commit.
    """
    chunks: list[str] = []
    current = origin
    for match_id in sorted(set(match_ids)):
        if len(current) + 1 + len(match_id.encode()) > NOTIFY_PAYLOAD_BYTES:
            chunks.append(current)
            current = origin
        current += " " + match_id
    if current != origin:
        chunks.append(current)
    return chunks


Conn = psycopg.AsyncConnection[Any]
Run = Callable[[Conn], Awaitable[tuple[Any, str | None]]]
"""An operation of the writer: its answer, and the id of the match it moved (or None)."""


@dataclass(eq=False, slots=True)
class _Operation:
    key: tuple[str, int, int]  # (match_id, kind, seq): the order within a batch
    run: Run
    future: asyncio.Future[Any]


class _OperationFailed(Exception):
    """One operation of a batch failed for its own reason: the batch runs again without it."""

    def __init__(self, operation: _Operation, error: BaseException) -> None:
        super().__init__(str(error))
        self.operation = operation
        self.error = error


class MoveFeed:
    """An async iterator of the sets of match ids that moved, one set per committed batch.

    Registered when :meth:`PostgresStore.moves` returns, so no batch committed after that is
    missed while the listener is connected. After the listener lost its connection (and so
    perhaps some notifications), it yields the ids of every unfinished match: read them all.
    Ends when the store closes or :meth:`close` is called.
    """

    def __init__(self, store: PostgresStore, include_own: bool) -> None:
        self._store = store
        self.include_own = include_own
        self._queue: asyncio.Queue[frozenset[str] | None] = asyncio.Queue()

    def _put(self, match_ids: frozenset[str] | None) -> None:
        self._queue.put_nowait(match_ids)

    def __aiter__(self) -> MoveFeed:
        return self

    async def __anext__(self) -> frozenset[str]:
        item = await self._queue.get()
        if item is None:
            self._queue.put_nowait(None)  # stay ended
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        """Stop receiving; the iteration ends."""
        self._store._feeds.discard(self)
        self._queue.put_nowait(None)


class PostgresStore:
    """Match logs in PostgreSQL: one group-committing writer per process, pooled readers.

    Make one with ``await PostgresStore.open(conninfo)`` on the event loop that will use it.
    """

    def __init__(self, conninfo: str, *, listen: bool = True) -> None:
        self.conninfo = conninfo
        self.name = redacted(conninfo)
        self.origin = secrets.token_hex(4)  # tells this store's notifications from others'
        self.channel = CHANNEL
        self.schema = "public"
        self.batches = 0  # commits made; with ``operations`` it shows the batching at work
        self.operations = 0
        self.retries = 0  # batches run again after a deadlock or serialization failure
        self._listen = listen
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._writer_conn: Conn | None = None
        self._writer: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._feeds: set[MoveFeed] = set()
        self._writable = True
        self._listeners: list[tuple[Callable[[bool], None], asyncio.AbstractEventLoop]] = []
        self._closed = False

    # ------------------------------------------------------------------ opening

    @classmethod
    async def open(cls, conninfo: str, *, listen: bool = True) -> PostgresStore:
        """Connect, create or migrate the schema, check a write goes through, start.

        Raises StoreOpenError (one line: what failed, where, what to do) when PostgreSQL
        cannot be reached, refuses the schema, or is newer than this code.
        """
        store = cls(conninfo, listen=listen)
        try:
            conn = await store._connect()
        except psycopg.Error as exc:
            raise StoreOpenError(
                store.name,
                f"cannot connect ({_first_line(exc)})",
                "Check that PostgreSQL runs there and the URL's user and database exist",
            ) from exc
        try:
            schema = await _migrate(conn, store.name)
            await _heartbeat(conn)
        except BaseException:
            await conn.close()
            raise
        store.channel = CHANNEL if schema == "public" else f"{CHANNEL}.{schema}"[:63]
        store.schema = schema
        store._writer_conn = conn
        store._pool = AsyncConnectionPool(
            conninfo,
            min_size=1,
            max_size=READ_POOL_SIZE,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            check=AsyncConnectionPool.check_connection,
            open=False,
            name="speeltafel-readers",
        )
        await store._pool.open()
        store._writer = asyncio.create_task(store._write_loop(), name="postgres-writer")
        if listen:
            store._listener = asyncio.create_task(store._listen_loop(), name="postgres-listen")
            await store._listening.wait()
        return store

    async def _connect(self, *, autocommit: bool = False) -> Conn:
        params: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S}
        if "application_name" not in conninfo_to_dict(self.conninfo):
            params["application_name"] = "speeltafel"
        return await psycopg.AsyncConnection.connect(
            make_conninfo(self.conninfo, **params), autocommit=autocommit
        )

    # ------------------------------------------------------------------ health

    @property
    def writable(self) -> bool:
        """False from a write PostgreSQL refused for an outside reason to one it takes."""
        return self._writable

    def add_health_listener(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(writable)`` on the running event loop whenever ``writable`` changes."""
        self._listeners.append((listener, asyncio.get_running_loop()))

    def _set_writable(self, writable: bool) -> None:
        if writable == self._writable:
            return
        self._writable = writable
        for listener, loop in list(self._listeners):
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody to tell
                loop.call_soon_threadsafe(listener, writable)

    # ------------------------------------------------------------------ the writer

    async def _submit(self, key: tuple[str, int, int], run: Run) -> Any:
        if self._closed:
            raise RuntimeError("the store is closed")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Operation(key, run, future))
        # A caller that gives up (its task cancelled) cancels only its future: the batch
        # goes on and commits, and the answer is not read, as with SQLite's writer thread.
        return await future

    async def _write_loop(self) -> None:
        stopping = False
        while not stopping:
            if self._writable:
                first = await self._queue.get()
            else:
                try:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a
                    # cancellation (close) that lands as an operation arrives.
                    async with asyncio.timeout(PROBE_INTERVAL_S):
                        first = await self._queue.get()
                except TimeoutError:
                    await self._probe()
                    continue
            batch = [first]
            while len(batch) < MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            if any(item is _STOP for item in batch):
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            if batch:
                try:
                    await self._commit_batch(batch)
                except Exception as exc:  # never leave a caller waiting
                    for operation in batch:
                        _settle(operation.future, False, exc)
        if self._writer_conn is not None:
            with contextlib.suppress(psycopg.Error):
                await self._writer_conn.close()

    async def _writer_connection(self) -> Conn:
        conn = self._writer_conn
        if conn is None or conn.closed or conn.broken:
            self._writer_conn = None
            if conn is not None:
                with contextlib.suppress(psycopg.Error):
                    await conn.close()
            conn = await self._connect()
            self._writer_conn = conn
        return conn

    async def _commit_batch(self, batch: list[_Operation]) -> None:
        """Run ``batch`` in one transaction sorted by (match_id, kind, seq); then answer."""
        pending = sorted(batch, key=lambda op: op.key)  # stable: arrival order within a key
        answers: dict[_Operation, tuple[bool, Any]] = {}
        retries = 0
        reconnected = False
        while pending:
            committing = False
            try:
                conn = await self._writer_connection()
                moved: set[str] = set()
                values: list[Any] = []
                for operation in pending:
                    try:
                        value, match_id = await operation.run(conn)
                    except Exception as exc:
                        if unavailable_cause(exc) is not None or _retryable(exc):
                            raise
                        raise _OperationFailed(operation, exc) from exc
                    values.append(value)
                    if match_id is not None:
                        moved.add(match_id)
                for payload in payloads(self.origin, moved):
                    await conn.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))
                if conn.info.transaction_status is not TransactionStatus.INTRANS:
                    # Aborted by an error no operation raised, or ended by one: COMMIT would
                    # answer ROLLBACK without an error, and commit() return as if committed.
                    raise RuntimeError(
                        "the batch's transaction was no longer open at its commit"
                        f" ({conn.info.transaction_status.name}): nothing of it was committed"
                    )
                committing = True
                await conn.commit()
            except _OperationFailed as failed:
                await _rollback(self._writer_conn)
                answers[failed.operation] = (False, failed.error)
                pending.remove(failed.operation)
                continue
            except Exception as exc:
                await _rollback(self._writer_conn)
                cause = unavailable_cause(exc)
                if _retryable(exc) and retries < MAX_RETRIES:
                    retries += 1
                    self.retries += 1
                    await asyncio.sleep(random.uniform(0, 0.005 * retries))
                    continue
                if cause is not None and not committing and not reconnected:
                    # A connection that died while idle (a restarted server, a killed
                    # backend): nothing was committed, so one fresh connection may try again.
                    reconnected = True
                    continue
                failure: BaseException = exc
                if cause is not None:
                    self._set_writable(False)
                    failure = StoreUnavailable(cause)
                    failure.__cause__ = exc
                for operation in pending:
                    answers[operation] = (False, failure)
                break
            else:
                for operation, value in zip(pending, values, strict=True):
                    answers[operation] = (True, value)
                self._set_writable(True)
                break
        self.batches += 1
        self.operations += len(batch)
        for operation in batch:
            ok, value = answers[operation]
            _settle(operation.future, ok, value)

    async def _probe(self) -> None:
        """While writes fail: reconnect if need be and try a small write."""
        try:
            conn = await self._writer_connection()
            await _heartbeat(conn)
        except Exception:
            await _rollback(self._writer_conn)
            if self._writer_conn is not None and self._writer_conn.broken:
                self._writer_conn = None
            await asyncio.sleep(0)  # the loop's caller waits PROBE_INTERVAL_S between tries
            return
        self._set_writable(True)

    async def _execute_for_tests(self, statement: str) -> None:
        """Run one statement on the writer's connection and commit (tests only).

        Faults for tests: ``SET default_transaction_read_only = on`` makes every later write
        of the writer fail with a real read_only_sql_transaction; ``... = off`` lifts it.
        """

        async def run(conn: Conn) -> tuple[None, None]:
            await conn.execute(statement.encode())
            return None, None

        await self._submit(("", -1, 0), run)

    def writer_pid(self) -> int | None:
        """The PostgreSQL backend pid of the writer's connection (tests kill it)."""
        conn = self._writer_conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    # ------------------------------------------------------------------ the protocol

    async def create(self, created: MatchCreated) -> MatchCreated:
        """Store a new match, or return the one made before with the same request id."""

        async def run(conn: Conn) -> tuple[MatchCreated, str | None]:
            cursor = await conn.execute(
                "INSERT INTO matches (match_id, game, rules_version, options, seats,"
                " server_seed, commitment, move_clock_ms, presets, created_ms, request_id,"
                " token_key, time_bank_ms, max_misses, forfeit, deal)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
                " ON CONFLICT (request_id) DO NOTHING",
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
            if cursor.rowcount == 1:
                return created, None
            # Only a non-empty request id can conflict (NULLs never do): that match stands.
            found = await conn.execute(
                "SELECT match_id FROM matches WHERE request_id = %s", (created.request_id,)
            )
            row = await found.fetchone()
            assert row is not None, "a request id conflict without its match"
            stored = await _load(conn, row[0])
            assert stored is not None
            return stored.created, None

        result: MatchCreated = await self._submit((created.match_id, 0, 0), run)
        return result

    async def join(self, joined: SeatJoined) -> AppendStatus:
        """Store a seat unless it is taken, or its request id was used in this match."""

        async def run(conn: Conn) -> tuple[AppendStatus, str | None]:
            cursor = await conn.execute(
                "INSERT INTO seats (match_id, seat, name, token_hash, entropy, joined_ms,"
                " request_id) VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
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
            if cursor.rowcount == 1:
                return AppendStatus.COMMITTED, joined.match_id
            return AppendStatus.CONFLICT, None

        status: AppendStatus = await self._submit((joined.match_id, 1, joined.seat), run)
        return status

    async def append(self, row: ActionRow) -> AppendResult:
        """Store an action if it follows the last stored one and its request id is new."""

        async def run(conn: Conn) -> tuple[AppendResult, str | None]:
            # One statement: the seq check and the insert. A concurrent writer's
            # uncommitted row at this seq or request id makes the insert wait for its
            # commit, then do nothing (a conflict or duplicate, told apart below).
            cursor = await conn.execute(
                "INSERT INTO actions (match_id, seq, seat, request_id, action, server_ms,"
                " clock_default) SELECT %s,%s,%s,%s,%s,%s,%s WHERE %s = 1 + COALESCE("
                "(SELECT max(seq) FROM actions WHERE match_id = %s), 0)"
                " ON CONFLICT DO NOTHING",
                (
                    row.match_id,
                    row.seq,
                    row.seat,
                    row.request_id,
                    row.action,
                    row.server_ms,
                    row.clock_default,
                    row.seq,
                    row.match_id,
                ),
            )
            if cursor.rowcount == 1:
                return AppendResult(AppendStatus.COMMITTED), row.match_id
            # A new statement, so a new snapshot: it sees what the other writer committed.
            found = await conn.execute(
                "SELECT seq, action, server_ms, clock_default FROM actions"
                " WHERE match_id = %s AND seat = %s AND request_id = %s",
                (row.match_id, row.seat, row.request_id),
            )
            existing = await found.fetchone()
            if existing is None:
                return AppendResult(AppendStatus.CONFLICT), None
            seq, action, server_ms, clock_default = existing
            stored = ActionRow(
                row.match_id, seq, row.seat, row.request_id, action, server_ms, clock_default
            )
            return AppendResult(AppendStatus.DUPLICATE, stored), None

        result: AppendResult = await self._submit((row.match_id, 2, row.seq), run)
        return result

    async def finish(self, finished: MatchFinished) -> None:
        """Mark a match finished (the first mark stays)."""

        async def run(conn: Conn) -> tuple[None, str | None]:
            cursor = await conn.execute(
                "UPDATE matches SET finished_ms = %s, final_hash = %s, termination = %s"
                " WHERE match_id = %s AND finished_ms IS NULL",
                (
                    finished.finished_ms,
                    finished.final_hash,
                    finished.termination,
                    finished.match_id,
                ),
            )
            return None, finished.match_id if cursor.rowcount == 1 else None

        await self._submit((finished.match_id, 3, 0), run)

    async def load(self, match_id: str) -> MatchLog | None:
        """The whole log of a match, as committed (one snapshot)."""
        return await self._read(lambda conn: _load(conn, match_id), snapshot=True)

    async def read_actions(self, match_id: str, after_seq: int = 0) -> tuple[ActionRow, ...]:
        """The committed actions of a match after ``after_seq``, in seq order."""

        async def read(conn: Conn) -> tuple[ActionRow, ...]:
            cursor = await conn.execute(
                "SELECT seq, seat, request_id, action, server_ms, clock_default FROM actions"
                " WHERE match_id = %s AND seq > %s ORDER BY seq",
                (match_id, after_seq),
            )
            return tuple(ActionRow(match_id, *r) for r in await cursor.fetchall())

        return await self._read(read)

    async def unfinished(self) -> list[str]:
        """Matches not marked finished, oldest first."""

        async def read(conn: Conn) -> list[str]:
            cursor = await conn.execute(
                "SELECT match_id FROM matches WHERE finished_ms IS NULL"
                " ORDER BY created_ms, match_id"
            )
            return [r[0] for r in await cursor.fetchall()]

        return await self._read(read)

    async def finished_since(self, since_ms: int) -> list[str]:
        """Matches marked finished at or after ``since_ms``, in the order they finished."""

        async def read(conn: Conn) -> list[str]:
            cursor = await conn.execute(
                "SELECT match_id FROM matches WHERE finished_ms >= %s"
                " ORDER BY finished_ms, match_id",
                (since_ms,),
            )
            return [r[0] for r in await cursor.fetchall()]

        return await self._read(read)

    # ------------------------------------------------------------------ tournaments
    # The TournamentStore, through the same writer as the log (its writes are rare: a
    # tournament, a fixture, a result). Keys sort after every match id, so a batch still
    # takes its locks in one order.

    async def _write(self, key: tuple[str, int, int], statement: str, params: Any) -> int:
        async def run(conn: Conn) -> tuple[int, None]:
            cursor = await conn.execute(statement, params)
            return cursor.rowcount, None

        count: int = await self._submit(key, run)
        return count

    async def put_bot(self, bot: BotCredential) -> None:
        """Store a bot's token hash, replacing the one of the same name (case-insensitive)."""
        await self._write(
            ("~bot", 0, 0),
            "INSERT INTO bots (name_folded, name, token_hash, issued_ms) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT (name_folded) DO UPDATE SET name = excluded.name,"
            " token_hash = excluded.token_hash, issued_ms = excluded.issued_ms",
            (bot.name.casefold(), bot.name, bot.token_hash, bot.issued_ms),
        )

    async def bots(self) -> list[BotCredential]:
        """Every bot with a token, in the order they were first issued."""

        async def read(conn: Conn) -> list[BotCredential]:
            cursor = await conn.execute(
                "SELECT name, token_hash, issued_ms FROM bots ORDER BY issued"
            )
            return [BotCredential(n, bytes(h), ms) for n, h, ms in await cursor.fetchall()]

        return await self._read(read)

    async def create_tournament(self, row: TournamentRow) -> TournamentRow:
        """Store a tournament, or return the one made before with the same request id."""

        async def run(conn: Conn) -> tuple[TournamentRow, None]:
            cursor = await conn.execute(
                f"INSERT INTO tournaments ({TOURNAMENT_COLUMNS})"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (request_id) DO NOTHING",
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
            if cursor.rowcount == 1:
                return row, None
            found = await conn.execute(
                f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE request_id = %s",
                (row.request_id,),
            )
            stored = await found.fetchone()
            assert stored is not None, "a request id conflict without its tournament"
            return tournament_row(stored), None

        stored: TournamentRow = await self._submit(("~tournament", 0, 0), run)
        return stored

    async def set_tournament_status(
        self, tournament_id: str, status: str, finished_ms: int
    ) -> None:
        """Change a tournament's status (and when it ended)."""
        await self._write(
            ("~tournament", 1, 0),
            "UPDATE tournaments SET status = %s, finished_ms = %s WHERE tournament_id = %s",
            (status, finished_ms, tournament_id),
        )

    async def tournaments(self) -> list[TournamentRow]:
        """Every tournament, oldest first."""

        async def read(conn: Conn) -> list[TournamentRow]:
            cursor = await conn.execute(
                f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments ORDER BY created_ms, created"
            )
            return [tournament_row(r) for r in await cursor.fetchall()]

        return await self._read(read)

    async def put_fixture(self, fixture: FixtureMatch) -> None:
        """Record which match plays a fixture (the first record stays)."""
        await self._write(
            ("~tournament", 2, fixture.fixture),
            "INSERT INTO tournament_fixtures (tournament_id, fixture, match_id)"
            " VALUES (%s,%s,%s) ON CONFLICT DO NOTHING",
            (fixture.tournament_id, fixture.fixture, fixture.match_id),
        )

    async def put_result(self, result: FixtureResult) -> None:
        """Record a fixture's result (the first record stays)."""
        text = result_json(result)
        await self._write(
            ("~tournament", 2, result.fixture),
            "INSERT INTO tournament_fixtures (tournament_id, fixture, match_id, result)"
            " VALUES (%s,%s,%s,%s) ON CONFLICT (tournament_id, fixture) DO UPDATE SET"
            " result = excluded.result WHERE tournament_fixtures.result IS NULL",
            (result.tournament_id, result.fixture, result.match_id, text),
        )

    async def fixtures(self, tournament_id: str) -> list[FixtureMatch]:
        """The tournament's fixtures that have a match, by fixture number."""

        async def read(conn: Conn) -> list[FixtureMatch]:
            cursor = await conn.execute(
                "SELECT fixture, match_id FROM tournament_fixtures WHERE tournament_id = %s"
                " ORDER BY fixture",
                (tournament_id,),
            )
            return [FixtureMatch(tournament_id, f, m) for f, m in await cursor.fetchall()]

        return await self._read(read)

    async def results(self, tournament_id: str) -> list[FixtureResult]:
        """The tournament's results, by fixture number."""

        async def read(conn: Conn) -> list[FixtureResult]:
            cursor = await conn.execute(
                "SELECT fixture, match_id, result FROM tournament_fixtures"
                " WHERE tournament_id = %s AND result IS NOT NULL ORDER BY fixture",
                (tournament_id,),
            )
            return [fixture_result(tournament_id, *r) for r in await cursor.fetchall()]

        return await self._read(read)

    # ------------------------------------------------------------------ the director

    async def set_director(self, address: str, origin: str) -> None:
        """Record that the process at ``address`` directs the tournaments now.

        Written by the process that holds the director's advisory lock (see
        ``speeltafel.server.app.cluster``), so one row, last writer wins."""
        await self._write(
            ("~director", 0, 0),
            "INSERT INTO director (id, address, origin, since_ms) VALUES (1, %s, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET address = excluded.address,"
            " origin = excluded.origin, since_ms = excluded.since_ms",
            (address, origin, time.time_ns() // 1_000_000),
        )

    async def director(self) -> tuple[str, str] | None:
        """(address, origin) of the process that last took the director's lock, or None."""

        async def read(conn: Conn) -> tuple[str, str] | None:
            cursor = await conn.execute("SELECT address, origin FROM director WHERE id = 1")
            row = await cursor.fetchone()
            return None if row is None else (str(row[0]), str(row[1]))

        return await self._read(read)

    # ------------------------------------------------------------------ deadlines
    # What lets another process play a default move for a match whose holder died
    # (``speeltafel.server.app.cluster``): every process holding a match records the
    # deadline its timer is armed for; every process sweeps for overdue ones.

    async def set_deadlines(self, entries: Sequence[tuple[str, int, int | None]]) -> None:
        """Record ``(match_id, seq, deadline_ms)`` for each match: the deadline computed at
        version ``seq``, or None once the match has none (it finished).

        Several processes hold the same match at different versions, so a row only moves
        forward: a higher seq replaces it (and clears its claim: a new deadline is claimed
        afresh); the same seq replaces only a different, non-NULL deadline (a match that
        started at the version its join deadline was written at); an older seq, or any
        write over NULL at the same seq, changes nothing. One statement for all entries,
        through the writer, sorted by match id (the batch's lock order); the writer runs it
        in the batch that holds the appends that moved these matches, or in the next one."""
        if not entries:
            return
        latest: dict[str, tuple[int, int | None]] = {}
        for match_id, seq, deadline in entries:
            if match_id not in latest or seq >= latest[match_id][0]:
                latest[match_id] = (seq, deadline)
        ids = sorted(latest)
        await self._write(
            ("~deadlines", 0, 0),
            "INSERT INTO deadlines (match_id, seq, deadline_ms)"
            " SELECT * FROM unnest(%s::text[], %s::integer[], %s::bigint[])"
            " ON CONFLICT (match_id) DO UPDATE SET seq = excluded.seq,"
            " deadline_ms = excluded.deadline_ms, claimed_by = '', claimed_until_ms = 0"
            " WHERE excluded.seq > deadlines.seq OR (excluded.seq = deadlines.seq"
            " AND deadlines.deadline_ms IS NOT NULL"
            " AND excluded.deadline_ms IS DISTINCT FROM deadlines.deadline_ms)",
            (ids, [latest[i][0] for i in ids], [latest[i][1] for i in ids]),
        )

    async def claim_overdue(
        self, now_ms: int, *, grace_ms: int, lease_ms: int, limit: int = 16
    ) -> list[tuple[str, int, int]]:
        """Claim up to ``limit`` deadlines passed by at least ``grace_ms`` whose lease ran
        out, for ``lease_ms``: ``[(match_id, seq, deadline_ms)]``, oldest first.

        ``FOR UPDATE SKIP LOCKED``: sweepers running at once take disjoint rows without
        waiting for each other; the lease hands a claim to another process when the claimer
        dies before it plays. One autocommitted statement on a reader connection, so the
        row locks last only for the statement, never while the move is played."""

        async def run(conn: Conn) -> list[tuple[str, int, int]]:
            cursor = await conn.execute(
                "WITH due AS (SELECT match_id FROM deadlines"
                " WHERE deadline_ms IS NOT NULL AND deadline_ms <= %s"
                " AND claimed_until_ms < %s ORDER BY deadline_ms LIMIT %s"
                " FOR UPDATE SKIP LOCKED)"
                " UPDATE deadlines d SET claimed_by = %s, claimed_until_ms = %s"
                " FROM due WHERE d.match_id = due.match_id"
                " RETURNING d.match_id, d.seq, d.deadline_ms",
                (now_ms - grace_ms, now_ms, limit, self.origin, now_ms + lease_ms),
            )
            rows = await cursor.fetchall()
            return sorted(((str(r[0]), int(r[1]), int(r[2])) for r in rows), key=lambda r: r[2])

        return await self._read(run)

    async def deadline(self, match_id: str) -> tuple[int, int | None, str] | None:
        """``(seq, deadline_ms, claimed_by)`` of a match's deadline row, or None (tests)."""

        async def read(conn: Conn) -> tuple[int, int | None, str] | None:
            cursor = await conn.execute(
                "SELECT seq, deadline_ms, claimed_by FROM deadlines WHERE match_id = %s",
                (match_id,),
            )
            row = await cursor.fetchone()
            return None if row is None else (int(row[0]), row[1], str(row[2]))

        return await self._read(read)

    async def _read(self, read: Callable[[Conn], Awaitable[T]], snapshot: bool = False) -> T:
        """Run ``read`` on a pooled connection (in one repeatable-read snapshot if asked).

        Reads see every acknowledged write: acknowledgements follow commits.
        """
        assert self._pool is not None, "open the store with PostgresStore.open"
        try:
            async with self._pool.connection(timeout=READ_TIMEOUT_S) as conn:
                if not snapshot:
                    return await read(conn)
                async with conn.transaction():
                    await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    return await read(conn)
        except Exception as exc:
            cause = unavailable_cause(exc)
            if cause is None:
                raise
            raise StoreUnavailable(cause) from exc

    # ------------------------------------------------------------------ moves

    def moves(self, *, include_own: bool = False) -> MoveFeed:
        """The ids of matches that moved, one set per committed batch of any process.

        ``include_own``: also this store's own batches (a process that publishes its own
        moves directly leaves it False). Needs the store opened with ``listen=True``.
        """
        if not self._listen:
            raise RuntimeError("this store was opened with listen=False")
        feed = MoveFeed(self, include_own)
        if self._closed:
            feed._put(None)
        else:
            self._feeds.add(feed)
        return feed

    async def _listen_loop(self) -> None:
        """LISTEN on its own connection; fan each notification out to the feeds."""
        connected_before = False
        while not self._closed:
            try:
                conn = await self._connect(autocommit=True)
            except psycopg.Error:
                await asyncio.sleep(PROBE_INTERVAL_S)
                continue
            try:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                self._listening.set()
                if connected_before:
                    # Notifications sent while it was away are gone: everything may have moved.
                    with contextlib.suppress(Exception):
                        resync = frozenset(await self.unfinished())
                        self._deliver(resync, own=False)
                connected_before = True
                async for notify in conn.notifies():
                    origin, _, ids = notify.payload.partition(" ")
                    self._deliver(frozenset(ids.split()), own=origin == self.origin)
            except psycopg.Error:
                await asyncio.sleep(PROBE_INTERVAL_S)
            finally:
                with contextlib.suppress(psycopg.Error):
                    await conn.close()

    def _deliver(self, match_ids: frozenset[str], own: bool) -> None:
        if not match_ids:
            return
        for feed in list(self._feeds):
            if feed.include_own or not own:
                feed._put(match_ids)

    # ------------------------------------------------------------------ closing

    async def close(self) -> None:
        """Let every queued write commit, then stop the writer, the listener and the pool."""
        if self._closed:
            return
        self._closed = True
        self._queue.put_nowait(_STOP)
        if self._writer is not None:
            await self._writer
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        for feed in list(self._feeds):
            feed.close()
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


# ---------------------------------------------------------------------- helpers


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, psycopg.Error) and exc.sqlstate in RETRY_STATES


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


async def _rollback(conn: Conn | None) -> None:
    """Roll back whatever is open; on a broken connection there is nothing to roll back."""
    if conn is not None and not conn.closed:
        with contextlib.suppress(psycopg.Error):
            await conn.rollback()


async def _heartbeat(conn: Conn) -> None:
    """A small durable write: start-up and the health probe check that writes go through."""
    await conn.execute(
        "INSERT INTO heartbeat (id, beat_ms) VALUES (1, %s)"
        " ON CONFLICT (id) DO UPDATE SET beat_ms = excluded.beat_ms",
        (time.time_ns() // 1_000_000,),
    )
    await conn.commit()


async def _migrate(conn: Conn, name: str) -> str:
    """Create or migrate the schema in one transaction; returns the schema's name.

    ``pg_advisory_xact_lock`` makes a second process starting at the same time wait, then
    find the schema current. A schema newer than this code is refused.
    """
    try:
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        cursor = await conn.execute("SELECT current_schema()")
        row = await cursor.fetchone()
        schema = row[0] if row else None
        if schema is None:
            raise StoreOpenError(
                name,
                "the connection's search_path names no schema that exists",
                "Create the schema, or fix options=-csearch_path in the URL",
            )
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY, migrated_ms bigint NOT NULL)"
        )
        cursor = await conn.execute("SELECT COALESCE(max(version), 0) FROM schema_version")
        row = await cursor.fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreOpenError(
                f"{name} (schema {schema})",
                f"its schema version {version} is newer than this server's {SCHEMA_VERSION}",
                "Run a server at least as new as the one that migrated it",
            )
        for step in range(version, SCHEMA_VERSION):
            await conn.execute(MIGRATIONS[step].encode())
            await conn.execute(
                "INSERT INTO schema_version (version, migrated_ms) VALUES (%s, %s)",
                (step + 1, time.time_ns() // 1_000_000),
            )
        await conn.commit()
        return str(schema)
    except psycopg.Error as exc:
        await _rollback(conn)
        raise StoreOpenError(
            name,
            f"PostgreSQL refused its schema ({_first_line(exc)})",
            "Check that the URL names a database (and schema) for speeltafel alone and that"
            " its user may create tables there",
        ) from exc
    except BaseException:
        await _rollback(conn)
        raise


async def _load(conn: Conn, match_id: str) -> MatchLog | None:
    cursor = await conn.execute(
        f"SELECT {MATCH_COLUMNS} FROM matches WHERE match_id = %s",
        (match_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    created, finished = match_parts(tuple(row))
    cursor = await conn.execute(
        "SELECT seat, name, token_hash, entropy, joined_ms, request_id FROM seats"
        " WHERE match_id = %s ORDER BY seat",
        (match_id,),
    )
    joined = tuple(
        SeatJoined(match_id, s, name, bytes(token), bytes(entropy), joined_ms, request or "")
        for s, name, token, entropy, joined_ms, request in await cursor.fetchall()
    )
    cursor = await conn.execute(
        "SELECT seq, seat, request_id, action, server_ms, clock_default FROM actions"
        " WHERE match_id = %s ORDER BY seq",
        (match_id,),
    )
    actions = tuple(ActionRow(match_id, *r) for r in await cursor.fetchall())
    return MatchLog(created, joined, actions, finished)
