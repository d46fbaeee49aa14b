"""The MatchStore contract, held to every store: the same answers from memory, SQLite and
PostgreSQL (a real server, see conftest.py; skipped with the reason when there is none)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from speeltafel.server.store.base import (
    ActionRow,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    MatchStore,
    SeatJoined,
)
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore

Factory = Callable[[], MatchStore]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MatchStore]:
    made: MatchStore
    if request.param == "memory":
        made = MemoryStore()
    elif request.param == "sqlite":
        made = SqliteStore(tmp_path / "s.db")
    else:
        # Imported here: psycopg is an optional extra, and the fixture skips without it.
        url = request.getfixturevalue("postgres_url")
        from speeltafel.server.store.postgres import PostgresStore

        made = await PostgresStore.open(url)
    try:
        yield made
    finally:
        await made.close()


def created(match_id: str = "m1", created_ms: int = 1) -> MatchCreated:
    return MatchCreated(
        match_id=match_id,
        game="take5",
        rules_version=1,
        options=(("deals", "3"), ("edition", "trial")),
        seats=2,
        server_seed=bytes(range(32)),
        commitment="c" * 64,
        move_clock_ms=1000,
        presets=(("pack", (("3", "1", "2"), ("2", "3", "1"))), ("bonus", (("b", "a"),))),
        created_ms=created_ms,
    )


def row(
    seq: int,
    seat: int = 0,
    request_id: str | None = None,
    action: str = "select:1",
    match_id: str = "m1",
) -> ActionRow:
    return ActionRow(match_id, seq, seat, request_id or f"r{seq}", action, 100 + seq, False)


async def test_log_round_trips(store: MatchStore) -> None:
    await store.create(created())
    joined = SeatJoined("m1", 1, "bot", b"\x01" * 32, b"entropy", 5)
    assert await store.join(joined) is AppendStatus.COMMITTED
    assert (await store.append(row(1))).status is AppendStatus.COMMITTED
    assert (await store.append(row(2, seat=1))).status is AppendStatus.COMMITTED
    log = await store.load("m1")
    assert log is not None
    assert log.created == created()
    assert log.seats == (joined,)
    assert log.actions == (row(1), row(2, seat=1))
    assert log.finished is None
    assert await store.load("nope") is None


async def test_append_answers_committed_duplicate_or_conflict(store: MatchStore) -> None:
    await store.create(created())
    assert (await store.append(row(1, request_id="a"))).status is AppendStatus.COMMITTED
    # The same request again, even at another seq: the stored row comes back.
    again = await store.append(row(2, request_id="a", action="select:9"))
    assert again.status is AppendStatus.DUPLICATE
    assert again.existing == row(1, request_id="a")
    # Another request for a seq that is taken, or that would leave a gap: conflict.
    assert (await store.append(row(1, request_id="b"))).status is AppendStatus.CONFLICT
    assert (await store.append(row(3, request_id="c"))).status is AppendStatus.CONFLICT
    # Request ids are per seat: seat 1 may use "a" too.
    assert (await store.append(row(2, seat=1, request_id="a"))).status is AppendStatus.COMMITTED
    log = await store.load("m1")
    assert log is not None and [r.seq for r in log.actions] == [1, 2]


async def test_a_seat_is_taken_once(store: MatchStore) -> None:
    await store.create(created())
    first = SeatJoined("m1", 0, "a", b"1", b"", 1)
    second = SeatJoined("m1", 0, "b", b"2", b"", 2)
    assert await store.join(first) is AppendStatus.COMMITTED
    assert await store.join(second) is AppendStatus.CONFLICT
    log = await store.load("m1")
    assert log is not None and log.seats == (first,)


async def test_finish_is_idempotent_and_lists_follow_it(store: MatchStore) -> None:
    await store.create(created("m1", created_ms=1))
    await store.create(created("m2", created_ms=2))
    assert await store.unfinished() == ["m1", "m2"]
    await store.finish(MatchFinished("m1", 50, "h1"))
    await store.finish(MatchFinished("m1", 60, "other"))
    log = await store.load("m1")
    assert log is not None and log.finished == MatchFinished("m1", 50, "h1")
    assert await store.unfinished() == ["m2"]
    assert await store.finished_since(50) == ["m1"]
    assert await store.finished_since(51) == []


async def test_sqlite_group_commits_concurrent_appends(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "g.db")
    try:
        for m in range(50):
            await store.create(created(f"m{m}", created_ms=m))
        before = store.batches
        results = await asyncio.gather(*(store.append(row(1, match_id=f"m{m}")) for m in range(50)))
        assert all(r.status is AppendStatus.COMMITTED for r in results)
        # Fifty appends from fifty matches shared far fewer commits than fifty.
        assert store.batches - before < 25
        assert await store.integrity_check() == "ok"
    finally:
        await store.close()
    # Acknowledged means durable: a fresh store on the same file has every row.
    reopened = SqliteStore(tmp_path / "g.db")
    try:
        for m in range(50):
            log = await reopened.load(f"m{m}")
            assert log is not None and log.actions == (row(1, match_id=f"m{m}"),)
    finally:
        await reopened.close()


async def test_create_by_request_id_returns_the_first_match(store: MatchStore) -> None:
    first = replace(created("m1"), request_id="req-1", token_key=b"k" * 32)
    assert await store.create(first) == first
    # The same request id again: the first match comes back, nothing new is stored.
    assert await store.create(replace(created("m2"), request_id="req-1")) == first
    assert await store.load("m2") is None
    # No request id never collides.
    assert await store.create(created("m3")) == created("m3")
    assert await store.create(created("m4")) == created("m4")
    log = await store.load("m1")
    assert log is not None and log.created == first
    assert await store.unfinished() == ["m1", "m3", "m4"]


async def test_a_join_request_id_is_taken_once_per_match(store: MatchStore) -> None:
    await store.create(created("m1"))
    await store.create(replace(created("m2"), match_id="m2"))
    joined = SeatJoined("m1", 0, "a", b"1", b"", 1, "join-request-0001")
    assert await store.join(joined) is AppendStatus.COMMITTED
    again = SeatJoined("m1", 1, "a", b"2", b"", 2, "join-request-0001")
    assert await store.join(again) is AppendStatus.CONFLICT
    # Another match may see the same id.
    elsewhere = SeatJoined("m2", 1, "a", b"3", b"", 3, "join-request-0001")
    assert await store.join(elsewhere) is AppendStatus.COMMITTED
    log = await store.load("m1")
    assert log is not None and log.seats == (joined,)


async def test_the_termination_is_stored(store: MatchStore) -> None:
    await store.create(created("m1"))
    await store.finish(MatchFinished("m1", 50, "h1", "abandoned"))
    log = await store.load("m1")
    assert log is not None and log.finished == MatchFinished("m1", 50, "h1", "abandoned")
