"""E7: SIGTERM under load (reliability.md).

The server runs as a subprocess on an SQLite file. Bots in this process play several
matches over their Play streams (a short think time per move keeps the matches going
through the shutdown) and record every acknowledgement; a grpc health Watch stream on the
match service records every status it is sent. Mid-play the server gets SIGTERM:

* the Watch stream reports NOT_SERVING before it ends, and before any bot's stream is cut;
* the moves in flight keep being answered during the grace period, and the process exits
  with code 0 within it;
* every move acknowledged up to then is in the SQLite file exactly once, at its seq.

Then the server is restarted on the same port and file; the bots reconnect on their own
(the SDK runner resends the move in flight with its request_id) and every match finishes,
with every acknowledged move stored exactly once and every stored move acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from server_process import ServerProcess

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.match import Match
from speeltafel.server.engine.registry import get_game
from speeltafel.server.store.sqlite import SqliteStore

pytestmark = pytest.mark.slow

TAKE5 = get_game("take5")
MATCH_SERVICE = "speeltafel.v1.MatchService"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
FINISHED = common_pb2.MATCH_STATUS_FINISHED

GRACE_S = 1.5  # the server's --grace
EXIT_SLACK_S = 2.5  # after the grace: closing the runtime and the store, process teardown
MOVE_CLOCK_MS = 20_000  # no clock runs out: every stored move is a bot's
PLAY_TIMEOUT_S = 40.0
SEAT_COUNTS = (2, 3, 4, 2)
DEALS = "16"  # with THINK_S, a few seconds of play: live through the grace period
THINK_S = 0.02  # per move; without it the matches could end during the grace period
ACKS_BEFORE_SIGTERM = 40


# --------------------------------------------------------------------------- the server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path, "e7.db", "--move-clock-ms", str(MOVE_CLOCK_MS), "--grace", str(GRACE_S)
    )
    try:
        yield process
    finally:
        process.kill()


# --------------------------------------------------------------------------- bots


@dataclass(frozen=True)
class Acked:
    """One acknowledgement a bot received, and when."""

    match_id: str
    seat: int
    request_id: str
    seq: int
    version: int
    duplicate: bool
    at: float


class ThinkingBot:
    """A random bot that takes a moment per move."""

    def __init__(self, seed: int) -> None:
        self.random = RandomBot(seed)

    async def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        await asyncio.sleep(THINK_S)
        return self.random.choose(view, legal_actions)


def ack_recorder(acks: list[Acked], seat: Seat) -> Callable[..., None]:
    def on_ack(
        request: match_service_pb2.SubmitActionRequest,
        response: match_service_pb2.SubmitActionResponse,
    ) -> None:
        acks.append(
            Acked(
                seat.match_id,
                seat.seat,
                request.request_id,
                response.seq,
                response.version,
                response.duplicate,
                time.monotonic(),
            )
        )

    return on_ack


@dataclass
class HealthWatch:
    """Every status a Watch stream sent (with its arrival time), and how it ended."""

    events: list[tuple[float, int]] = field(default_factory=list)
    ended_at: float | None = None
    end_code: grpc.StatusCode | None = None

    async def run(self, target: str) -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            call = stub.Watch(health_pb2.HealthCheckRequest(service=MATCH_SERVICE))
            try:
                async for response in call:
                    self.events.append((time.monotonic(), response.status))
                self.end_code = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as err:
                self.end_code = err.code()
            finally:
                self.ended_at = time.monotonic()

    def first(self, status: int) -> float | None:
        return next((at for at, s in self.events if s == status), None)


async def wait_until(
    condition: Callable[[], bool], limit_s: float, what: Callable[[], str]
) -> None:
    deadline = time.monotonic() + limit_s
    while True:
        if condition():
            return
        assert time.monotonic() < deadline, f"timed out waiting for {what()}"
        await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def running_tasks(tasks: list[asyncio.Task[Any]]) -> AsyncIterator[None]:
    """Cancel whatever is still running on the way out."""
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# --------------------------------------------------------------------------- the file


@contextlib.contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def assert_stored_exactly_once(path: Path, acks: Sequence[Acked]) -> None:
    """Every acknowledged move is in the file once, at its acknowledged seq; no request id
    is stored twice and every match's seqs run 1..n without a gap."""
    with connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for ack in acks:
            rows = conn.execute(
                "SELECT seq FROM actions WHERE match_id=? AND seat=? AND request_id=?",
                (ack.match_id, ack.seat, ack.request_id),
            ).fetchall()
            assert rows == [(ack.seq,)], ack
        (duplicates,) = conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM actions GROUP BY match_id, seat, request_id"
            " HAVING COUNT(*) > 1)"
        ).fetchone()
        assert duplicates == 0
        for match_id, count, top in conn.execute(
            "SELECT match_id, COUNT(*), MAX(seq) FROM actions GROUP BY match_id"
        ):
            assert count == top, f"{match_id}: seqs have a gap"


# --------------------------------------------------------------------------- the test


async def test_e7_sigterm_under_load_loses_nothing_and_exits_cleanly(
    server: ServerProcess,
) -> None:
    await server.start()
    async with AsyncClient(server.target) as admin:
        seats: list[Seat] = []
        for n in SEAT_COUNTS:
            created = await admin.create_match("take5", n, {"deals": DEALS})
            seats += [await admin.join(created.match_id, s, name=f"bot-{s}") for s in range(n)]
    match_ids = list(dict.fromkeys(s.match_id for s in seats))
    acks: list[Acked] = []
    stats = [RunStats() for _ in seats]
    clients = [AsyncClient(server.target) for _ in seats]  # one channel per bot
    health = HealthWatch()
    tasks = [
        asyncio.create_task(
            play_seat(
                client,
                seat,
                ThinkingBot(i),
                max_reconnects=30,
                on_ack=ack_recorder(acks, seat),
                stats=stat,
            )
        )
        for i, (client, seat, stat) in enumerate(zip(clients, seats, stats, strict=True))
    ]
    watcher = asyncio.create_task(health.run(server.target))
    first_cut: list[float] = []

    async def watch_cuts() -> None:
        """When the first bot lost its stream (the server cancelled the call)."""
        while True:
            if any(s.reconnects for s in stats):
                first_cut.append(time.monotonic())
                return
            await asyncio.sleep(0.002)

    cuts = asyncio.create_task(watch_cuts())
    try:
        async with running_tasks([*tasks, watcher, cuts]):
            await wait_until(
                lambda: len(acks) >= ACKS_BEFORE_SIGTERM and health.first(SERVING) is not None,
                10.0,
                lambda: f"play ({len(acks)} acks, health {health.events} {health.end_code})",
            )
            assert not any(t.done() for t in tasks), "a bot stopped before the SIGTERM"
            assert not first_cut, "a stream was cut before the SIGTERM"

            signalled = time.monotonic()
            code, seconds = await server.terminate(GRACE_S + EXIT_SLACK_S)
            assert code == 0, (
                f"exit {code} after {seconds:.2f} s (grace {GRACE_S} s):\n{server.log_tail()}"
            )
            await asyncio.wait_for(watcher, 5.0)
            not_serving = health.first(NOT_SERVING)
            statuses = [s for _at, s in health.events]
            assert statuses[0] == SERVING, statuses
            assert not_serving is not None, f"Watch never said NOT_SERVING: {statuses}"
            assert statuses[-1] == NOT_SERVING, statuses
            assert health.ended_at is not None and signalled < not_serving <= health.ended_at
            assert health.end_code != grpc.StatusCode.OK  # cut by the stop, after the status
            # NOT_SERVING first: the bots' streams were cut only after it (at the grace's end).
            assert first_cut and not_serving < first_cut[0], (not_serving, first_cut)
            # In-flight work went on during the grace period and was answered.
            during_grace = [a for a in acks if a.at > signalled]
            assert during_grace, "no move was answered after the SIGTERM"
            assert not any(t.done() for t in tasks), "a match ended before the restart"

            acked_at_exit = list(acks)
            assert_stored_exactly_once(server.db, acked_at_exit)

            await server.start()
            done, pending = await asyncio.wait(tasks, timeout=PLAY_TIMEOUT_S)
            assert not pending, f"{len(pending)} bots still playing:\n{server.log_tail()}"
            views = [t.result() for t in done]
            assert [v.status for v in views] == [FINISHED] * len(seats)
            assert sum(s.reconnects for s in stats) >= len(seats)
            final_versions = {(v.match_id, v.version) for v in views}
            assert len(final_versions) == len(match_ids), "seats disagree on the final view"
            code, _seconds = await server.terminate(GRACE_S + EXIT_SLACK_S)
            assert code == 0, server.log_tail()
    finally:
        for client in clients:
            await client.close()

    # Everything acknowledged, before and after the restart, is stored exactly once; and
    # every move stored was acknowledged to the bot that made it (no clock defaults ran).
    assert_stored_exactly_once(server.db, acks)
    requests = Counter((a.match_id, a.seat, a.request_id) for a in acks)
    assert max(requests.values()) == 1
    assert all(a.version == a.seq + 1 for a in acks)
    with connect(server.db) as conn:
        stored = conn.execute(
            "SELECT match_id, seat, request_id, clock_default FROM actions"
        ).fetchall()
        assert {(m, s, r) for m, s, r, _default in stored} == set(requests)
        assert not any(default for *_rest, default in stored)
        for match_id in match_ids:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM actions WHERE match_id=?", (match_id,)
            ).fetchone()
            assert (match_id, count + 1) in final_versions

    # The stored logs replay to the final hashes the server recorded.
    store = SqliteStore(server.db)
    try:
        for match_id in match_ids:
            log = await store.load(match_id)
            assert log is not None and log.finished is not None, match_id
            assert Match.replay(log, TAKE5).final_hash() == log.finished.final_hash
    finally:
        await store.close()
    print(
        f"E7: {len(acked_at_exit)} acks at exit ({len(during_grace)} during the grace), "
        f"{len(acks)} in all; exit after {seconds:.2f} s; "
        f"{sum(s.reconnects for s in stats)} reconnects"
    )


async def test_e7_health_watch_reports_serving_then_not_serving_on_stop(table: Any) -> None:
    """In process: the Watch stream (a handler that sends with context.write, behind the
    error interceptor) says SERVING, then NOT_SERVING as the stop begins, then ends."""
    running = await table.start()
    health = HealthWatch()
    watcher = asyncio.create_task(health.run(table.target))
    async with running_tasks([watcher]):
        await wait_until(
            lambda: bool(health.events) or health.ended_at is not None,
            5.0,
            lambda: "a status",
        )
        assert [s for _at, s in health.events] == [SERVING], health
        stopping = asyncio.create_task(table.stop(running, grace=0.5))
        await asyncio.wait_for(watcher, 5.0)
        await stopping
    assert [s for _at, s in health.events] == [SERVING, NOT_SERVING]
    assert health.end_code != grpc.StatusCode.INTERNAL, health.end_code
