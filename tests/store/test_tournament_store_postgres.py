"""The TournamentStore contract, held to every store that keeps tournaments: memory, SQLite
and PostgreSQL (a real server, see conftest.py; skipped with the reason when there is none).

Also PostgreSQL's schema 1 -> 2 migration: a store written before tournaments existed opens,
keeps its matches (read with no time bank, no forfeit, no deal) and then keeps tournaments.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from speeltafel.server.store.base import (
    BotCredential,
    FixtureMatch,
    FixtureResult,
    MatchCreated,
    TournamentRow,
)
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    made: Any
    if request.param == "memory":
        made = MemoryStore()
    elif request.param == "sqlite":
        made = SqliteStore(tmp_path / "t.db")
    else:
        url = request.getfixturevalue("postgres_url")
        from speeltafel.server.store.postgres import PostgresStore

        made = await PostgresStore.open(url)
    try:
        yield made
    finally:
        await made.close()


def tournament(
    tournament_id: str = "t1", request_id: str = "", created_ms: int = 1
) -> TournamentRow:
    return TournamentRow(
        tournament_id=tournament_id,
        request_id=request_id,
        name="Cup",
        game="take5",
        options=(("rounds", "1"),),
        format="duplicate",
        participants=("a", "b", "c"),
        seats=3,
        rounds=2,
        max_matches=12,
        move_clock_ms=2_000,
        time_bank_ms=5_000,
        max_misses=3,
        forfeit="lose",
        seed=b"\x00seed",
        secret=b"k" * 32,
        created_ms=created_ms,
    )


def result(fixture: int, match_id: str, first: int = 1) -> FixtureResult:
    return FixtureResult(
        tournament_id="t1",
        fixture=fixture,
        match_id=match_id,
        scores=(first, 7, -2),
        ranks=(2, 1, 3),
        utilities=(0.5, 1.0, 0.0),
        termination="forfeit",
        misses=(0, 1, 3),
        rejected=(2, 0, 0),
        forfeited=(False, False, True),
        rated=True,
    )


async def test_bots_keep_their_first_order_and_the_latest_token(store: Any) -> None:
    await store.put_bot(BotCredential("Alice", b"h1", 10))
    await store.put_bot(BotCredential("bob", b"h2", 11))
    await store.put_bot(BotCredential("alice", b"h3", 12))  # re-issued: same name folded
    assert await store.bots() == [
        BotCredential("alice", b"h3", 12),
        BotCredential("bob", b"h2", 11),
    ]


async def test_a_tournament_round_trips_and_its_request_id_finds_it(store: Any) -> None:
    row = tournament(request_id="r1")
    assert await store.create_tournament(row) == row
    again = replace(row, tournament_id="t2", name="Other")
    assert await store.create_tournament(again) == row  # the first stands, nothing stored
    later = tournament("t3", created_ms=5)
    await store.create_tournament(later)
    assert await store.tournaments() == [row, later]
    await store.set_tournament_status("t1", "finished", 99)
    stored = await store.tournaments()
    assert stored[0] == replace(row, status="finished", finished_ms=99)
    assert stored[1] == later


async def test_fixtures_and_results_keep_their_first_record(store: Any) -> None:
    await store.create_tournament(tournament())
    await store.put_fixture(FixtureMatch("t1", 2, "m2"))
    await store.put_fixture(FixtureMatch("t1", 0, "m0"))
    await store.put_fixture(FixtureMatch("t1", 0, "other"))  # the first record stays
    assert await store.fixtures("t1") == [FixtureMatch("t1", 0, "m0"), FixtureMatch("t1", 2, "m2")]
    assert await store.results("t1") == []
    await store.put_result(result(2, "m2"))
    await store.put_result(result(2, "m2", first=100))  # the first result stays
    await store.put_result(result(0, "m0"))
    assert await store.results("t1") == [result(0, "m0"), result(2, "m2")]
    assert await store.fixtures("t1") == [FixtureMatch("t1", 0, "m0"), FixtureMatch("t1", 2, "m2")]
    assert await store.results("nope") == []


async def test_a_match_keeps_its_clock_policy_and_deal(store: Any) -> None:
    created = MatchCreated(
        match_id="m1",
        game="take5",
        rules_version=1,
        options=(),
        seats=2,
        server_seed=b"s" * 32,
        commitment="c",
        move_clock_ms=1_000,
        presets=(),
        created_ms=1,
        token_key=b"k" * 32,
        time_bank_ms=4_000,
        max_misses=2,
        forfeit="autoplay",
        deal="duplicate set 1 of tournament t1",
    )
    await store.create(created)
    loaded = await store.load("m1")
    assert loaded is not None and loaded.created == created


async def test_postgres_migrates_a_version_1_store(postgres_url: str) -> None:
    import psycopg

    from speeltafel.server.store import postgres

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_version (version integer PRIMARY KEY, migrated_ms bigint NOT NULL)"
        )
        conn.execute(postgres.MIGRATIONS[0].encode())
        conn.execute("INSERT INTO schema_version VALUES (1, 0)")
        conn.execute(
            "INSERT INTO matches (match_id, game, rules_version, options, seats, server_seed,"
            " commitment, move_clock_ms, presets, created_ms, token_key)"
            " VALUES ('old', 'take5', 1, '[]', 2, 'seed', 'c', 500, '{}', 3, 'key')"
        )
    store = await postgres.PostgresStore.open(postgres_url)
    try:
        loaded = await store.load("old")
        assert loaded is not None
        assert (loaded.created.time_bank_ms, loaded.created.forfeit, loaded.created.deal) == (
            0,
            "",
            "",
        )
        await store.create_tournament(tournament())
        assert [t.tournament_id for t in await store.tournaments()] == ["t1"]
    finally:
        await store.close()
    with psycopg.connect(postgres_url) as conn:
        versions = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert versions == [(v,) for v in range(1, postgres.SCHEMA_VERSION + 1)]  # every step, once
