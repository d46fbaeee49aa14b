"""The SDK runner behind a flaky connection: every match finishes, nothing is lost or doubled.

Every seat plays through :class:`FlakyProxy` (tests/service/flaky_proxy.py), a TCP proxy in
this process that cuts connections at random (after a random number of bytes or a random
20-300 ms), for a bounded time and a bounded number of cuts. Each seat has its own channel
(its own connection through the proxy), with a fast reconnect backoff.

Afterwards: every match finished normally; no bot hung (each runner has a generous bound,
and the ones still running are named); every action the runner acknowledged (``on_ack``)
is in the record exactly once, at its seq, with its seat and action; every action a seat
played (not a clock default) was acknowledged to it; each record replays and verifies.

The second test also creates and joins through the proxy, with the SDK's retries (the same
request id re-sent), so that a lost answer never leaves a ghost match or seat.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk import client as sdk_client
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.engine.games import take5
from speeltafel.server.engine.verify import verify
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.wire.common import record_from_proto

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from flaky_proxy import FlakyProxy  # a helper of the service tests

GAME = take5.GAME
FINISHED = common_pb2.MATCH_STATUS_FINISHED
MOVE_CLOCK_MS = 200
PLAY_BOUND_S = 90.0  # no runner may take longer than this
FAST_RECONNECT = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 250),
    # gRPC core uses this one as the minimum *connect timeout* (not a backoff): at 50 ms, a
    # busy loop's HTTP/2 handshake times out again and again (seen here with 400 seats).
    ("grpc.min_reconnect_backoff_ms", 5000),
    # A connection of its own per seat: a cut hits one seat, and the server's per-peer
    # limits count each seat apart.
    ("grpc.use_local_subchannel_pool", 1),
]


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    # Abandonment is off: a bot cut off for a few move periods must find its match going on.
    server = await start_server(MemoryStore(), config=RuntimeConfig(abandon_after_periods=0))
    try:
        yield server
    finally:
        await server.stop(0.2)


def own_channel(target: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])


def proxied(proxy: FlakyProxy) -> AsyncClient:
    channel = grpc.aio.insecure_channel(proxy.target, options=FAST_RECONNECT)
    return AsyncClient(proxy.target, channel=channel)


def action_text(action: common_pb2.Action) -> str:
    """The engine's canonical text of a Take 5 action, as the record holds it (take5.py:
    ``select:17``, ``row:2``), read from the message alone."""
    take5_action = action.take5
    if take5_action.WhichOneof("kind") == "select":
        return f"select:{take5_action.select.card}"
    return f"row:{take5_action.choose_row.row}"


@dataclass
class SeatRun:
    """One seat's runner and what it reported."""

    seat: Seat
    stats: RunStats = field(default_factory=RunStats)
    acks: list[tuple[str, match_service_pb2.SubmitActionResponse]] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    final: common_pb2.View | None = None


async def play_all(runs: Sequence[SeatRun], clients: Sequence[AsyncClient], seed: int) -> None:
    """Every seat's runner at once; fails naming the runners that hang or raise."""

    async def one(i: int, run: SeatRun) -> None:
        def on_ack(
            request: match_service_pb2.SubmitActionRequest,
            ack: match_service_pb2.SubmitActionResponse,
        ) -> None:
            run.acks.append((action_text(request.action), ack))

        run.final = await play_seat(
            clients[i],
            run.seat,
            RandomBot(seed * 1000 + i),
            on_view=lambda view: run.versions.append(view.version),
            on_ack=on_ack,
            stats=run.stats,
        )

    tasks = [asyncio.ensure_future(one(i, run)) for i, run in enumerate(runs)]
    _, pending = await asyncio.wait(tasks, timeout=PLAY_BOUND_S)
    for task in pending:
        task.cancel()
    hung = [
        f"match {r.seat.match_id} seat {r.seat.seat} (last version {r.versions[-1:]}, {r.stats})"
        for r, t in zip(runs, tasks, strict=True)
        if t in pending
    ]
    assert not hung, f"{len(hung)} runners hung: {hung}"
    failed = [
        (r.seat.match_id, r.seat.seat, repr(t.exception()))
        for r, t in zip(runs, tasks, strict=True)
        if t.exception() is not None
    ]
    assert not failed, f"{len(failed)} runners raised: {failed}"


async def check_matches(client: AsyncClient, runs: Sequence[SeatRun], counts: Counter[str]) -> None:
    """Every match finished; acks and records reconcile exactly; every record verifies."""
    by_match: dict[str, list[SeatRun]] = defaultdict(list)
    for run in runs:
        by_match[run.seat.match_id].append(run)
    for match_id, seats in by_match.items():
        summary = await client.get_match(match_id)
        assert summary.status == FINISHED, (match_id, summary)
        record = await client.record(match_id)
        story = f"match {match_id}"
        assert record.outcome.termination == "normal", (story, record.outcome)
        assert summary.version == len(record.actions) + 1, story
        assert [a.seq for a in record.actions] == list(range(1, len(record.actions) + 1)), story
        assert verify(record_from_proto(record)) == [], (story, verify(record_from_proto(record)))
        for run in seats:
            assert run.final is not None and run.final.status == FINISHED, (story, run.seat)
            assert run.final.version == summary.version, (story, run.seat.seat)
            seqs = [ack.seq for _, ack in run.acks]
            assert len(seqs) == len(set(seqs)), f"{story}: seat {run.seat.seat} acked twice"
            for text, ack in run.acks:
                row = record.actions[ack.seq - 1]
                assert (row.seat, row.action, row.clock_default) == (run.seat.seat, text, False), (
                    f"{story}: the runner of seat {run.seat.seat} was told seq {ack.seq} is its "
                    f"{text}, the record says {row}"
                )
                assert ack.version == ack.seq + 1
            played = {
                a.seq for a in record.actions if a.seat == run.seat.seat and not a.clock_default
            }
            assert played == set(seqs), (
                f"{story}: seat {run.seat.seat} played seqs {sorted(played - set(seqs))} that "
                f"its runner never acknowledged"
            )
            counts["acks checked"] += len(seqs)
            counts["duplicate acks (answered from the log)"] += sum(
                1 for _, ack in run.acks if ack.duplicate
            )
            counts["reconnects"] += run.stats.reconnects
            counts["resyncs"] += run.stats.resyncs
            counts["rejected"] += run.stats.rejected
        counts["clock defaults"] += sum(1 for a in record.actions if a.clock_default)
        counts["record actions"] += len(record.actions)
        counts["matches"] += 1


async def test_runner_plays_40_matches_through_a_flaky_connection(running: Running) -> None:
    rng = random.Random(7)
    direct = AsyncClient(f"127.0.0.1:{running.port}")
    proxy = FlakyProxy(running.port, seed=7, cut_probability=0.7, max_cuts=400, cut_for_s=12)
    await proxy.start()
    clients: list[AsyncClient] = []
    try:
        runs: list[SeatRun] = []
        for m in range(40):
            seats = 2 if m % 2 == 0 else 3
            # A connection per match for the setup: the server rates each connection.
            organiser = AsyncClient(direct.target, channel=own_channel(direct.target))
            clients.append(organiser)
            created = await organiser.create_match(
                "take5", seats, {"deals": "1"}, move_clock_ms=MOVE_CLOCK_MS
            )
            for s in range(seats):
                seat = await organiser.join(created.match_id, seat=s, name=f"bot{s}")
                runs.append(SeatRun(seat))
        players = [proxied(proxy) for _ in runs]
        clients += players
        await play_all(runs, players, rng.randrange(1000))
        counts: Counter[str] = Counter()
        await check_matches(direct, runs, counts)
    finally:
        await proxy.close()
        for client in clients:
            await client.close()
        await direct.close()
    print(
        f"\nflaky runner: {dict(counts)} proxy: {proxy.stats.connections} connections, "
        f"{proxy.stats.cut_by_bytes} cut by bytes, {proxy.stats.cut_by_time} by time"
    )
    assert proxy.stats.cuts >= 80, proxy.stats
    assert counts["reconnects"] >= 80, counts


async def test_create_join_and_play_through_a_flaky_connection(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CreateMatch and JoinMatch go through the proxy too, with the SDK's retries."""
    retried: list[int] = []
    delay = sdk_client.retry_delay

    def counted_delay(attempt: int) -> float:
        retried.append(attempt)
        return delay(attempt)

    monkeypatch.setattr(sdk_client, "retry_delay", counted_delay)
    rng = random.Random(11)
    direct = AsyncClient(f"127.0.0.1:{running.port}")
    proxy = FlakyProxy(running.port, seed=11, cut_probability=0.5, max_cuts=300, cut_for_s=10)
    await proxy.start()
    clients: list[AsyncClient] = []
    try:
        runs: list[SeatRun] = []
        organiser = proxied(proxy)
        clients.append(organiser)
        for m in range(12):
            seats = 2 + m % 2
            created = await organiser.create_match(
                "take5", seats, {"deals": "1"}, move_clock_ms=MOVE_CLOCK_MS, retries=12
            )
            for s in range(seats):
                client = proxied(proxy)
                clients.append(client)
                seat = await client.join(created.match_id, seat=s, name=f"bot{s}", retries=12)
                runs.append(SeatRun(seat))
        # Nothing was made twice, nothing is a ghost: exactly the matches and seats we hold.
        assert running.runtime.waiting_matches == 0
        held = {run.seat.match_id for run in runs}
        assert set(await running.store.unfinished()) == held
        for match_id in held:
            summary = await direct.get_match(match_id)
            assert list(summary.seat_names) == [f"bot{s}" for s in range(summary.seats)]
        await play_all(runs, clients[1:], rng.randrange(1000))
        counts: Counter[str] = Counter()
        await check_matches(direct, runs, counts)
    finally:
        await proxy.close()
        for client in clients:
            await client.close()
        await direct.close()
    print(
        f"\nflaky create/join: {dict(counts)}, {len(retried)} create/join retries, proxy: "
        f"{proxy.stats.connections} connections, {proxy.stats.cuts} cuts"
    )


class _SilentCall:
    """A Play stream that takes every write and never answers (its connection never came
    up, say): what a runner must not wait on forever."""

    def __init__(self) -> None:
        self.cancelled = False

    async def write(self, message: match_service_pb2.PlayRequest) -> None:
        pass

    async def read(self) -> match_service_pb2.PlayResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def done_writing(self) -> None:
        pass

    def cancel(self) -> bool:
        self.cancelled = True
        return True


class _FinishedCall(_SilentCall):
    """A Play stream of a finished match: Subscribed, the final view, the end."""

    def __init__(self, seat: Seat) -> None:
        super().__init__()
        final = common_pb2.View(match_id=seat.match_id, seat=seat.seat, version=9)
        final.status = FINISHED
        self.responses = [
            match_service_pb2.PlayResponse(
                subscribed=match_service_pb2.Subscribed(version=9, status=FINISHED)
            ),
            match_service_pb2.PlayResponse(view=final),
        ]

    async def read(self) -> Any:
        return self.responses.pop(0) if self.responses else grpc.aio.EOF


class _ScriptedClient:
    def __init__(self, calls: Sequence[_SilentCall]) -> None:
        self.calls = list(calls)

    def play_stream(self, seat: Seat) -> _SilentCall:
        return self.calls.pop(0)


async def test_runner_redoes_a_stream_that_never_answers_its_subscription() -> None:
    """The server answers a subscription at once (Subscribed); a stream silent past
    ``subscribe_timeout_s`` is dropped and opened again instead of waited on forever."""
    seat = Seat("m1", 0, "token")
    silent = _SilentCall()
    client = _ScriptedClient([silent, _FinishedCall(seat)])
    stats = RunStats()
    final = await asyncio.wait_for(
        play_seat(
            client,  # type: ignore[arg-type]
            seat,
            RandomBot(0),
            subscribe_timeout_s=0.2,
            stats=stats,
        ),
        10,
    )
    assert final.status == FINISHED and final.version == 9
    assert silent.cancelled and stats.reconnects == 1
