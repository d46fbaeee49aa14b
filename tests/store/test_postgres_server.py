"""A server process on PostgreSQL (``--store postgresql://...``) plays whole matches over gRPC.

Random bots in this process play every seat of three take5 matches through the SDK runner;
halfway the server is killed with SIGKILL and started again on the same PostgreSQL schema,
so it must recover the unfinished matches from PostgreSQL. Afterwards the log, read with a
fresh store, must hold every acknowledged move exactly once at its acknowledged seq, with
contiguous seqs, every match marked finished, and each replays to its stored final hash.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.match import Match
from speeltafel.server.engine.registry import get_game

pytestmark = pytest.mark.slow

SEAT_COUNTS = (2, 3, 4)
DEALS = "6"
MOVE_CLOCK_MS = 5_000  # generous: the bots, not the clock, should finish the matches
PLAY_TIMEOUT_S = 60.0
START_TIMEOUT_S = 20.0
OnAck = Callable[
    [match_service_pb2.SubmitActionRequest, match_service_pb2.SubmitActionResponse], None
]


@pytest.fixture
def server(tmp_path: Path, postgres_url: str) -> Iterator[ServerProcess]:
    """A server on the test's PostgreSQL schema, always killed at teardown."""
    process = ServerProcess(
        tmp_path / "postgres-store",  # names only the port file: --store replaces --db
        tmp_path,
        "--store",
        postgres_url,
        "--move-clock-ms",
        str(MOVE_CLOCK_MS),
    )
    try:
        yield process
    finally:
        process.kill()


async def test_a_server_on_postgresql_plays_matches_through_a_kill(
    server: ServerProcess, postgres_url: str
) -> None:
    from speeltafel.server.store.postgres import PostgresStore

    rnd = random.Random(int.from_bytes(os.urandom(4), "big"))
    await server.start_async(START_TIMEOUT_S)
    seats: list[Seat] = []
    async with AsyncClient(server.target) as admin:
        for count in SEAT_COUNTS:
            created = await admin.create_match(
                "take5", count, {"deals": DEALS}, move_clock_ms=MOVE_CLOCK_MS
            )
            for s in range(count):
                seats.append(await admin.join(created.match_id, s, entropy=os.urandom(16)))
    match_ids = list(dict.fromkeys(seat.match_id for seat in seats))
    acks: list[tuple[str, int, str, int]] = []  # (match, seat, request id, seq)
    some_acked = asyncio.Event()

    def recorder(seat: Seat) -> OnAck:
        def on_ack(
            request: match_service_pb2.SubmitActionRequest,
            response: match_service_pb2.SubmitActionResponse,
        ) -> None:
            acks.append((seat.match_id, seat.seat, request.request_id, response.seq))
            if len(acks) >= 10:
                some_acked.set()

        return on_ack

    clients = [AsyncClient(server.target) for _ in seats]
    stats = [RunStats() for _ in seats]
    tasks = [
        asyncio.create_task(
            play_seat(
                client,
                seat,
                RandomBot(rnd.randrange(2**32)),
                max_reconnects=30,
                on_ack=recorder(seat),
                stats=stat,
            )
        )
        for client, seat, stat in zip(clients, seats, stats, strict=True)
    ]
    try:
        # Kill once some moves are acknowledged and matches are still live.
        await asyncio.wait_for(some_acked.wait(), PLAY_TIMEOUT_S)
        live_at_kill = sum(not t.done() for t in tasks)
        server.kill()
        await server.start_async(START_TIMEOUT_S)
        _done, pending = await asyncio.wait(tasks, timeout=PLAY_TIMEOUT_S)
        assert not pending, f"bots still playing after {PLAY_TIMEOUT_S} s:\n{server.log_tail()}"
        views = [t.result() for t in tasks]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in clients:
            await client.close()
        server.kill()

    assert live_at_kill > 0, "every match ended before the kill"
    assert sum(s.reconnects for s in stats) > 0, "the kill cut no stream"
    assert all(v.status == common_pb2.MATCH_STATUS_FINISHED for v in views)

    store = await PostgresStore.open(postgres_url, listen=False)
    try:
        stored: dict[tuple[str, int, str], int] = {}
        for match_id in match_ids:
            log = await store.load(match_id)
            assert log is not None and log.finished is not None, f"{match_id} not finished"
            assert [row.seq for row in log.actions] == list(range(1, len(log.actions) + 1))
            keys = Counter((row.seat, row.request_id) for row in log.actions)
            assert max(keys.values()) == 1, "a request stored twice"
            stored.update({(match_id, r.seat, r.request_id): r.seq for r in log.actions})
            replayed = Match.replay(log, get_game(log.created.game))
            assert replayed.final_hash() == log.finished.final_hash
        # Every acknowledgement (the first, and any duplicate after a reconnect) names the
        # row that is stored, at the seq it was told.
        for match_id, seat, request_id, seq in acks:
            assert stored.get((match_id, seat, request_id)) == seq
        assert await store.unfinished() == []
    finally:
        await store.close()
