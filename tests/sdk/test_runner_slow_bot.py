"""The SDK runner with a slow bot: the stream errors seen through HAProxy (issue 13).

What was seen: the search bot (a search of about 240 ms a decision, run on the event loop,
8 matches at once) lost streams near the ends of its matches and then gave up on them
with INTERNAL "Internal error from Core", InvalidStateError or RST_STREAM CANCEL, every
time *after* the match had finished normally. The cause: on reconnecting with an action in
flight the runner wrote the subscription and then re-sent the action on the new stream; a
finished match's stream sends ``Subscribed`` and the final view and ends at once, and the
slow process's second write came after that end, which fails the whole call (the final
view with it) in grpc.aio. Every attempt lost the same race until the budget ran out.

These tests play real matches against a server in this process:

* a stream reset after every action of a seat, and writes on a new stream delayed as a busy
  event loop delays them: every match still finishes for both runners, every action the
  seat played is acknowledged to it exactly once (the old runner raised here);
* a blocking bot (``blocking = True``, 200 ms a decision) on several matches at once
  leaves the event loop free: no more than one stall of the loop (a shared machine's
  freeze) lasts a whole decision, where on the loop every decision did, and no move is
  left to the clock.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.memory import MemoryStore

FINISHED = common_pb2.MATCH_STATUS_FINISHED
BUSY_WRITE_S = 0.3  # how late a busy process's write of a re-sent action comes


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    server = await start_server(MemoryStore(), config=RuntimeConfig(abandon_after_periods=0))
    try:
        yield server
    finally:
        await server.stop(0.2)


class ResetAfterSubmit:
    """A Play call that is reset (RST_STREAM CANCEL, as HAProxy sends it) right after the
    runner sends an action, so the answer is lost; on every stream but the first, a write
    of an action waits ``BUSY_WRITE_S`` first, as a process whose loop is busy searching."""

    def __init__(self, call: Any, first: bool, sent: set[str]) -> None:
        self._call = call
        self._first = first
        self._sent = sent  # the request ids sent before, on any stream
        self._reset = False

    async def write(self, request: match_service_pb2.PlayRequest) -> None:
        if request.WhichOneof("kind") == "submit":
            if not self._first:
                await asyncio.sleep(BUSY_WRITE_S)
            await self._call.write(request)
            # A new action loses its answer; one sent again (the old runner's way) does
            # not, so that a runner which re-sends still gets on while the match runs.
            self._reset = request.submit.request_id not in self._sent
            self._sent.add(request.submit.request_id)
            return
        await self._call.write(request)

    async def read(self) -> Any:
        if self._reset:
            self._call.cancel()
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.CANCELLED,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                "Stream removed (RST_STREAM (Received RST_STREAM with error code 8))",
            )
        return await self._call.read()

    async def done_writing(self) -> None:
        await self._call.done_writing()

    def cancel(self) -> bool:
        return bool(self._call.cancel())


class ResettingClient(AsyncClient):
    """An AsyncClient whose Play streams are :class:`ResetAfterSubmit`."""

    streams = 0
    sent: set[str] | None = None

    def play_stream(self, seat: Seat) -> Any:
        self.streams += 1
        if self.sent is None:
            self.sent = set()
        return ResetAfterSubmit(super().play_stream(seat), self.streams == 1, self.sent)


class SlowRandom(RandomBot):
    """A random bot that answers a little late, so its seat acts last in a Take 5 round
    (its action, or one right after it, ends the match)."""

    async def choose(  # type: ignore[override]
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        await asyncio.sleep(0.03)
        return super().choose(view, legal_actions)


async def seats_of_new_match(client: AsyncClient, seats: int, clock_ms: int) -> list[Seat]:
    created = await client.create_match("take5", seats, {"deals": "1"}, move_clock_ms=clock_ms)
    return [await client.join(created.match_id, seat=s, name=f"bot{s}") for s in range(seats)]


async def test_a_reset_after_every_action_with_late_writes_still_ends_every_match(
    running: Running,
) -> None:
    target = f"127.0.0.1:{running.port}"
    async with AsyncClient(target) as plain:
        for m in range(3):
            seats = await seats_of_new_match(plain, 2, clock_ms=20_000)
            resetting = ResettingClient(target)
            stats = RunStats()
            acks: list[match_service_pb2.SubmitActionResponse] = []
            try:
                finals = await asyncio.wait_for(
                    asyncio.gather(
                        play_seat(
                            resetting,
                            seats[0],
                            SlowRandom(m),
                            max_reconnects=3,
                            stats=stats,
                            on_ack=lambda _request, ack, acks=acks: acks.append(ack),
                        ),
                        play_seat(plain, seats[1], RandomBot(100 + m)),
                    ),
                    60,
                )
            finally:
                await resetting.close()
            record = await plain.record(seats[0].match_id)
            assert [f.status for f in finals] == [FINISHED, FINISHED]
            assert finals[0].version == finals[1].version == len(record.actions) + 1
            played = [a.seq for a in record.actions if a.seat == 0]
            assert not any(a.clock_default for a in record.actions)
            # Every action of the reset seat acknowledged to it once, also its last one.
            assert sorted(ack.seq for ack in acks) == played
            assert stats.reconnects >= len(played) - 1  # a reset after every action
            assert resetting.streams > len(played) // 2


class SleepyBot(RandomBot):
    """A random bot that computes for ``think_s`` first (a stand-in for a search)."""

    blocking = True

    def __init__(self, seed: int, think_s: float) -> None:
        super().__init__(seed)
        self.think_s = think_s
        self.threads: set[int] = set()

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        self.threads.add(threading.get_ident())
        time.sleep(self.think_s)
        return super().choose(view, legal_actions)


@pytest.mark.serial  # measures the loop's stalls: run alone, after the others
async def test_a_blocking_bot_on_many_seats_leaves_the_event_loop_free(
    running: Running,
) -> None:
    think_s = 0.2
    target = f"127.0.0.1:{running.port}"
    stalls: list[float] = []
    done = asyncio.Event()

    async def watch_the_loop() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            stalls.append(now - last - 0.005)
            last = now

    async with AsyncClient(target) as client:
        matches = [await seats_of_new_match(client, 2, clock_ms=30_000) for _ in range(4)]
        slow = [SleepyBot(i, think_s) for i in range(len(matches))]
        watcher = asyncio.ensure_future(watch_the_loop())
        try:
            finals = await asyncio.wait_for(
                asyncio.gather(
                    *(
                        play_seat(client, seats[0], bot)
                        for seats, bot in zip(matches, slow, strict=True)
                    ),
                    *(
                        play_seat(client, seats[1], RandomBot(random.randrange(99)))
                        for seats in matches
                    ),
                ),
                120,
            )
        finally:
            done.set()
            await watcher
        assert all(f.status == FINISHED for f in finals)
        loop_thread = threading.get_ident()
        assert all(bot.threads and loop_thread not in bot.threads for bot in slow)
        decisions = 0
        for seats in matches:
            record = await client.record(seats[0].match_id)
            assert not any(a.clock_default for a in record.actions)
            played = sum(1 for a in record.actions if a.seat == 0)
            assert played >= 10  # ten rounds played
            decisions += played
        # On the loop, every one of the slow seats' decisions stalls it for at least
        # think_s (40 or more stalls); off it, no decision does. A shared machine can
        # still freeze the whole process once (seen: one stall of 0.35 s on a slow CI
        # host, the next largest 9 ms), so one such stall is tolerated, not forty.
        whole_decisions = [s for s in stalls if s >= think_s]
        assert len(whole_decisions) <= 1, (decisions, sorted(stalls)[-5:])
