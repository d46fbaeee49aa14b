"""The PostgreSQL store's deadlines: recorded forward only, claimed once.

A real PostgreSQL (see ``conftest.py``); two stores stand for two server processes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("psycopg", reason="the PostgreSQL tests did not run: psycopg is missing")

from speeltafel.server.store.postgres import PostgresStore

LEASE_MS = 5_000


@pytest.fixture
async def stores(postgres_url: str) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    first = await PostgresStore.open(postgres_url, listen=False)
    second = await PostgresStore.open(postgres_url, listen=False)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def test_a_deadline_row_only_moves_forward(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = stores
    await a.set_deadlines([("m1", 3, 1_000)])
    assert await a.deadline("m1") == (3, 1_000, "")
    # A process that is behind (an older seq) changes nothing.
    await b.set_deadlines([("m1", 2, 500)])
    assert await a.deadline("m1") == (3, 1_000, "")
    # The same seq with another deadline (the match started at that version) replaces it.
    await b.set_deadlines([("m1", 3, 1_200)])
    assert await a.deadline("m1") == (3, 1_200, "")
    # Finished (None) is final at its seq: a lagging process cannot set a deadline back.
    await a.set_deadlines([("m1", 4, None)])
    await b.set_deadlines([("m1", 4, 2_000), ("m1", 3, 900)])
    assert await a.deadline("m1") == (4, None, "")
    # Within one call, the highest seq of a match wins.
    await a.set_deadlines([("m2", 5, 50), ("m2", 1, 10)])
    assert await a.deadline("m2") == (5, 50, "")


async def test_an_overdue_deadline_is_claimed_by_one_store_until_its_lease_ends(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = stores
    now = 100_000
    await a.set_deadlines(
        [(f"m{i:02}", 1, now - 2_000 + i) for i in range(20)]  # overdue, oldest first
        + [("late", 1, now - 500), ("future", 1, now + 10_000), ("done", 1, None)]
    )
    # Both claim at once, 8 at most each: disjoint rows, none waiting for the other.
    got_a, got_b = await asyncio.gather(
        a.claim_overdue(now, grace_ms=1_000, lease_ms=LEASE_MS, limit=8),
        b.claim_overdue(now, grace_ms=1_000, lease_ms=LEASE_MS, limit=8),
    )
    ids_a, ids_b = {r[0] for r in got_a}, {r[0] for r in got_b}
    assert len(ids_a) == len(ids_b) == 8 and not ids_a & ids_b
    rest = await a.claim_overdue(now, grace_ms=1_000, lease_ms=LEASE_MS, limit=16)
    claimed = ids_a | ids_b | {r[0] for r in rest}
    # Every overdue row once; the one inside the grace, the future and the finished never.
    assert claimed == {f"m{i:02}" for i in range(20)}
    assert [r[2] for r in rest] == sorted(r[2] for r in rest)
    assert (await a.deadline("m00"))[2] in (a.origin, b.origin)  # type: ignore[index]
    # Nothing is claimed again while the leases run...
    assert await b.claim_overdue(now + 1_000, grace_ms=1_000, lease_ms=LEASE_MS) == [
        ("late", 1, now - 500)
    ]
    assert await b.claim_overdue(now + LEASE_MS - 1, grace_ms=1_000, lease_ms=LEASE_MS) == []
    # ...and every row unplayed is claimable again once they end (its claimer died).
    again = await b.claim_overdue(now + LEASE_MS + 1, grace_ms=1_000, lease_ms=LEASE_MS, limit=64)
    assert {r[0] for r in again} == claimed
    # A new deadline (a higher seq: the default was played) clears the claim.
    await a.set_deadlines([("m00", 2, now + LEASE_MS - 1_500)])
    assert await a.deadline("m00") == (2, now + LEASE_MS - 1_500, "")
    assert await a.claim_overdue(now + LEASE_MS + 1, grace_ms=1_000, lease_ms=LEASE_MS) == [
        ("m00", 2, now + LEASE_MS - 1_500)
    ]
