"""A Play stream that ends while its submit is in the store lets that submit finish.

The Play stream's reader submits in its own task (``MatchRuntime.submit(inline=True)``),
without a task of the runtime around it, so the stream must never cancel it part way: a
cancelled submit would leave its action durable in the log and missing from the match in
memory. ``test_cancellation.py`` drops streams at random points under load; this test
drops one at the worst point, with the append held in the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from speeltafel.sdk.client import new_request_id
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.store.base import ActionRow, AppendResult
from speeltafel.server.store.memory import MemoryStore

WAIT_S = 5.0


class HeldAppend(MemoryStore):
    """A MemoryStore that holds the next append, once armed, until released."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def append(self, row: ActionRow) -> AppendResult:
        if self.armed:
            self.armed = False
            self.entered.set()
            await self.gate.wait()
        return await super().append(row)


async def until(condition: Callable[[], bool]) -> None:
    """Wait (5 s at most) until ``condition()`` holds: polls the server's state."""
    async with asyncio.timeout(WAIT_S):
        while not condition():  # noqa: ASYNC110 - nothing to await on the runtime's state
            await asyncio.sleep(0.005)


async def test_a_stream_dropped_during_its_submit_still_records_the_action(table: Any) -> None:
    store = HeldAppend()
    running = await table.start(store, config=RuntimeConfig(default_move_clock_ms=600_000))
    match = await table.create(seats=2)
    live = running.runtime.matches[match.match_id]
    seat = match.seats[0]
    call = table.client.play_stream(seat)
    subscribe = match_service_pb2.Subscribe(match_id=seat.match_id)
    await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
    view = None
    async for response in call:
        if response.WhichOneof("event") == "view" and seat.seat in response.view.to_act:
            view = response.view
            break
    assert view is not None and view.version == 1
    request = match_service_pb2.SubmitActionRequest(
        match_id=seat.match_id,
        expected_version=view.version,
        request_id=new_request_id(),
        action=view.legal_actions[0],
    )
    store.armed = True
    await call.write(match_service_pb2.PlayRequest(submit=request))
    async with asyncio.timeout(WAIT_S):
        await store.entered.wait()
    call.cancel()
    # The server's side of the stream has ended (its outbox is gone) with the append held.
    await until(lambda: not live.subscribers)
    assert not store.gate.is_set() and live.version == 1

    store.gate.set()
    # The submit goes on in the reader: recorded in the same match object, not reloaded.
    await until(lambda: live.version == 2)
    assert running.runtime.matches[match.match_id] is live and not live.stale
    log = await store.load(match.match_id)
    assert log is not None
    assert [(r.seq, r.seat, r.request_id) for r in log.actions] == [(1, 0, request.request_id)]
    # Asked again, the request gets its stored answer.
    again = await table.client.submit(
        seat, request.action, request.expected_version, request.request_id
    )
    assert again.duplicate and again.seq == 1
    summary = await table.client.get_match(match.match_id)
    assert summary.status == common_pb2.MATCH_STATUS_RUNNING and summary.version == 2
