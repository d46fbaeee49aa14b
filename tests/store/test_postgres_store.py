"""The PostgreSQL store beyond the shared contract: its schema, faults, NOTIFY and batching.

Faults are real: a read-only session (``default_transaction_read_only``) makes PostgreSQL
refuse writes with read_only_sql_transaction, ``pg_terminate_backend`` kills the writer's
connection (also inside its COMMIT, held there by a deferred trigger), a second connection
deadlocks with the writer's batch, a bogus port refuses connections.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("psycopg", reason="the PostgreSQL tests did not run: psycopg is missing")

import psycopg

from speeltafel.server.store.base import (
    ActionRow,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    SeatJoined,
    StoreOpenError,
    StoreUnavailable,
)
from speeltafel.server.store.postgres import (
    NOTIFY_PAYLOAD_BYTES,
    SCHEMA_VERSION,
    PostgresStore,
    payloads,
)

RECOVERY_S = 5.0  # the probe runs every 0.5 s


def created(match_id: str = "m1", created_ms: int = 1) -> MatchCreated:
    return MatchCreated(
        match_id=match_id,
        game="take5",
        rules_version=1,
        options=(("deals", "3"),),
        seats=2,
        server_seed=bytes(range(32)),
        commitment="c" * 64,
        move_clock_ms=1000,
        presets=(),
        created_ms=created_ms,
    )


def row(seq: int, match_id: str = "m1", request_id: str | None = None) -> ActionRow:
    return ActionRow(match_id, seq, seq % 2, request_id or f"r{seq}", "select:1", seq, False)


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[PostgresStore]:
    opened = await PostgresStore.open(postgres_url)
    try:
        yield opened
    finally:
        await opened.close()


async def next_of(feed: AsyncIterator[frozenset[str]], within_s: float = 5.0) -> frozenset[str]:
    return await asyncio.wait_for(anext(feed), within_s)


# --------------------------------------------------------------------------- the schema


async def test_the_schema_is_versioned_and_a_newer_one_refused(postgres_url: str) -> None:
    first = await PostgresStore.open(postgres_url)
    await first.create(created())
    await first.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        versions = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
        assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    again = await PostgresStore.open(postgres_url)  # opening twice migrates nothing
    assert await again.load("m1") is not None
    await again.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        conn.execute("INSERT INTO schema_version VALUES (%s, 0)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreOpenError) as refused:
        await PostgresStore.open(postgres_url)
    text = str(refused.value)
    assert "\n" not in text
    assert f"schema version {SCHEMA_VERSION + 1} is newer than this server's" in text
    assert "Run a server at least as new" in text


async def test_two_stores_opening_together_migrate_once(postgres_url: str) -> None:
    stores = await asyncio.gather(*(PostgresStore.open(postgres_url) for _ in range(3)))
    for opened in stores:
        await opened.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM schema_version").fetchone() == (SCHEMA_VERSION,)


async def test_an_unreachable_server_is_refused_in_one_line() -> None:
    with pytest.raises(StoreOpenError) as refused:
        await PostgresStore.open("postgresql://nobody:secret@127.0.0.1:1/none")
    text = str(refused.value)
    assert "cannot connect" in text and "127.0.0.1:1" in text
    assert "secret" not in text and "\n" not in text


# --------------------------------------------------------------------------- faults


async def test_a_read_only_server_makes_writes_unavailable_until_it_takes_writes(
    store: PostgresStore,
) -> None:
    await store.create(created())
    assert (await store.append(row(1))).status is AppendStatus.COMMITTED
    changes: list[bool] = []
    healthy = asyncio.Event()
    store.add_health_listener(changes.append)
    store.add_health_listener(lambda writable: healthy.set() if writable else None)
    await store._execute_for_tests("SET default_transaction_read_only = on")
    with pytest.raises(StoreUnavailable, match="25006"):
        await store.append(row(2))
    assert store.writable is False
    # Reads go on, and nothing of the refused write is there.
    log = await store.load("m1")
    assert log is not None and [r.seq for r in log.actions] == [1]
    await asyncio.sleep(0)
    assert changes == [False]
    await store._execute_for_tests("SET default_transaction_read_only = off")
    # The probe, not a client write, brings it back.
    await asyncio.wait_for(healthy.wait(), RECOVERY_S)
    assert store.writable and changes == [False, True]
    # The same request again is simply stored now.
    assert (await store.append(row(2))).status is AppendStatus.COMMITTED


async def test_a_killed_writer_connection_is_replaced_without_losing_a_write(
    store: PostgresStore, postgres_url: str
) -> None:
    await store.create(created())
    assert (await store.append(row(1))).status is AppendStatus.COMMITTED
    pid = store.writer_pid()
    assert pid is not None
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    # The dead connection is found at the next batch, which runs again on a new one.
    assert (await store.append(row(2))).status is AppendStatus.COMMITTED
    assert store.writer_pid() not in (None, pid)
    assert store.writable
    log = await store.load("m1")
    assert log is not None and [r.seq for r in log.actions] == [1, 2]


async def test_one_failing_operation_leaves_the_rest_of_its_batch(store: PostgresStore) -> None:
    await store.create(created())
    # An action for a match that does not exist breaks a foreign key: that call fails,
    # the others of the same batch commit.
    results = await asyncio.gather(
        store.append(row(1)),
        store.append(row(1, match_id="nope")),
        store.join(SeatJoined("m1", 0, "a", b"t", b"e", 1)),
        return_exceptions=True,
    )
    assert isinstance(results[1], psycopg.errors.ForeignKeyViolation)
    assert [getattr(r, "status", r) for r in (results[0], results[2])] == [
        AppendStatus.COMMITTED,
        AppendStatus.COMMITTED,
    ]
    log = await store.load("m1")
    assert log is not None and len(log.actions) == 1 and len(log.seats) == 1
    assert store.writable


async def wait_for_writer(postgres_url: str, store: PostgresStore, waiting_on: str) -> None:
    """Until the writer's backend waits on ``waiting_on`` (a wait event: Lock, PgSleep)."""
    pid = store.writer_pid()
    assert pid is not None
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        for _ in range(500):
            cursor = await conn.execute(
                "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = %s", (pid,)
            )
            found = await cursor.fetchone()
            if found is not None and waiting_on in found:
                return
            await asyncio.sleep(0.01)
    raise AssertionError(f"the writer never waited on {waiting_on}")


async def test_a_batch_rolled_back_by_a_deadlock_answers_what_its_retry_did(
    store: PostgresStore, postgres_url: str
) -> None:
    """The first run of a batch stores mA/1, then deadlocks with another writer and is rolled
    back; that writer then takes mA/1 too. The retry must answer CONFLICT for both, never the
    COMMITTED the first run had computed for a row now rolled back."""
    await store.create(created("mA"))
    await store.create(created("mB", created_ms=2))
    other = await psycopg.AsyncConnection.connect(postgres_url)
    try:
        # Only the writer's backend looks for the deadlock (after 1 s): it is the one failed.
        await other.execute("SET deadlock_timeout = '60s'")
        await other.execute(
            "INSERT INTO actions VALUES ('mB', 1, 1, 'other-b', 'select:1', 0, false)"
        )
        # One batch, sorted by match: mA/1 is inserted, then mB/1 waits for ``other``.
        ours = [
            asyncio.ensure_future(store.append(row(1, "mA", "ours-a"))),
            asyncio.ensure_future(store.append(row(1, "mB", "ours-b"))),
        ]
        await wait_for_writer(postgres_url, store, "Lock")
        # ``other`` now waits for the writer's mA/1: a deadlock, the writer's batch rolls
        # back and ``other``'s mA/1 goes in; the retry waits for ``other`` to commit.
        await other.execute(
            "INSERT INTO actions VALUES ('mA', 1, 1, 'other-a', 'select:1', 0, false)"
        )
        await wait_for_writer(postgres_url, store, "Lock")
        await other.commit()
        results = await asyncio.gather(*ours)
    finally:
        await other.close()
    assert [r.status for r in results] == [AppendStatus.CONFLICT, AppendStatus.CONFLICT]
    assert store.retries >= 1
    for match_id in ("mA", "mB"):
        assert [r.request_id for r in await store.read_actions(match_id)] == [
            f"other-{match_id[1].lower()}"
        ]
    assert store.writable


async def test_a_commit_cut_off_is_never_answered_committed(
    store: PostgresStore, postgres_url: str
) -> None:
    """The writer's backend is terminated inside its COMMIT (a deferred trigger sleeps
    there): the outcome is unknown to the store, so the caller gets StoreUnavailable, not
    COMMITTED. Here the commit never happened; the same request sent again is stored once."""
    await store.create(created())
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute("CREATE TABLE slow_commits (n integer)")
        await conn.execute("INSERT INTO slow_commits VALUES (1)")
        await conn.execute(
            "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN IF EXISTS (SELECT 1 FROM slow_commits) THEN PERFORM pg_sleep(60); END IF;"
            " RETURN NULL; END $$"
        )
        await conn.execute(
            "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON actions"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()"
        )
        appended = asyncio.ensure_future(store.append(row(1)))
        await wait_for_writer(postgres_url, store, "PgSleep")
        await conn.execute("DELETE FROM slow_commits")
        await conn.execute("SELECT pg_terminate_backend(%s)", (store.writer_pid(),))
        with pytest.raises(StoreUnavailable):
            await appended
    assert store.writable is False
    assert await store.read_actions("m1") == ()
    assert (await store.append(row(1))).status is AppendStatus.COMMITTED
    assert (await store.append(row(1))).status is AppendStatus.DUPLICATE
    assert [r.request_id for r in await store.read_actions("m1")] == ["r1"]
    assert store.writable  # the write on a new connection went through


async def test_a_batch_whose_transaction_was_aborted_unseen_is_not_acknowledged(
    store: PostgresStore,
) -> None:
    """An operation that swallows its own error leaves the batch's transaction aborted, and
    COMMIT then rolls back without an error. A batch that moved no match (no NOTIFY that
    would fail first) must still not answer success for what was never stored."""

    async def swallowing(conn: psycopg.AsyncConnection[Any]) -> tuple[None, None]:
        with contextlib.suppress(psycopg.errors.DivisionByZero):
            await conn.execute("SELECT 1 / 0")
        return None, None

    # One batch, sorted by key: the match (kind 0), then the operation (kind 9).
    results = await asyncio.gather(
        store.create(created()), store._submit(("m1", 9, 0), swallowing), return_exceptions=True
    )
    assert all(isinstance(r, RuntimeError) for r in results), results
    assert await store.load("m1") is None
    assert await store.create(created()) == created()
    assert await store.load("m1") is not None


# --------------------------------------------------------------------------- batching


async def test_concurrent_appends_share_commits_in_seq_order(store: PostgresStore) -> None:
    for m in range(20):
        await store.create(created(f"m{m:02}", created_ms=m))
    before = store.batches
    # Two seqs of each match arrive in the same batch, the later one first: sorted by
    # (match_id, seq), both commit.
    calls = [store.append(row(2, f"m{m:02}")) for m in range(20)]
    calls += [store.append(row(1, f"m{m:02}")) for m in range(20)]
    results = await asyncio.gather(*calls)
    assert all(r.status is AppendStatus.COMMITTED for r in results)
    assert store.batches - before < 10
    for m in range(20):
        assert [r.seq for r in await store.read_actions(f"m{m:02}")] == [1, 2]


async def test_read_actions_reads_by_seq(store: PostgresStore) -> None:
    await store.create(created())
    for seq in range(1, 6):
        await store.append(row(seq))
    assert [r.seq for r in await store.read_actions("m1", 3)] == [4, 5]
    assert await store.read_actions("m1", 5) == ()
    assert await store.read_actions("nope") == ()
    assert (await store.read_actions("m1"))[0] == row(1)


# --------------------------------------------------------------------------- NOTIFY


async def test_other_processes_hear_which_matches_moved(postgres_url: str) -> None:
    writer = await PostgresStore.open(postgres_url)
    reader = await PostgresStore.open(postgres_url)
    try:
        others = reader.moves()
        own = writer.moves(include_own=True)
        not_own = writer.moves()
        await writer.create(created("m1"))
        await writer.create(created("m2"))
        await asyncio.gather(writer.append(row(1, "m1")), writer.append(row(1, "m2")))
        moved: set[str] = set()
        while moved != {"m1", "m2"}:  # one set per batch: one or two batches here
            moved |= await next_of(others)
        await writer.join(SeatJoined("m2", 0, "a", b"t", b"e", 1))
        assert await next_of(others) == {"m2"}
        await writer.finish(MatchFinished("m1", 5, "h"))
        assert await next_of(others) == {"m1"}
        # A refused append moved nothing: no notification (the next one is the finish).
        assert (await writer.append(row(1, "m2"))).status is AppendStatus.DUPLICATE
        await writer.finish(MatchFinished("m2", 6, "h"))
        assert await next_of(others) == {"m2"}
        # The writer's own feed hears its batches only when asked to.
        heard: set[str] = set()
        while heard != {"m1", "m2"}:
            heard |= await next_of(own)
        with pytest.raises(TimeoutError):
            await next_of(not_own, within_s=0.3)
        assert [r.seq for r in await reader.read_actions("m2")] == [1]
    finally:
        await writer.close()
        await reader.close()
    with pytest.raises(StopAsyncIteration):
        await anext(others)


def test_payloads_stay_within_the_notify_limit() -> None:
    assert payloads("abcd", []) == []
    assert payloads("abcd", ["m2", "m1", "m2"]) == ["abcd m1 m2"]
    ids = [f"{n:016x}" for n in range(2_000)]
    chunks = payloads("abcd", ids)
    assert len(chunks) > 1
    assert all(len(c.encode()) <= NOTIFY_PAYLOAD_BYTES for c in chunks)
    assert all(c.startswith("abcd ") for c in chunks)
    assert sorted(i for c in chunks for i in c.split()[1:]) == ids
