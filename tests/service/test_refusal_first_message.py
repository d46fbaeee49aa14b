"""A refused stream is refused after the client's first message (rpc/errors.py).

A Play stream refused before its handler runs (no seat token, too many streams) used to
end at once. When that status overtook the client's first write (the subscribe), gRPC
reset the stream, the write failed, and grpc's Python client reported INTERNAL ("Internal
error from Core") instead of the status the server had sent: about 1 call in 300 on a
loaded host. The refusal now waits, within a bound, for that first message.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from speeltafel.sdk.v1 import match_service_pb2
from speeltafel.server.rpc import errors
from speeltafel.server.rpc.limits import LimitsConfig

Code = grpc.StatusCode
SETTLE_S = 0.3
"""Far longer than an immediate refusal takes to reach the client on the same host."""


def _subscribe(match_id: str) -> match_service_pb2.PlayRequest:
    return match_service_pb2.PlayRequest(subscribe=match_service_pb2.Subscribe(match_id=match_id))


async def _status(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    return caught.value


async def test_a_play_without_a_token_is_refused_after_its_subscribe(
    table: Any, server: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(errors, "FIRST_MESSAGE_WAIT_S", 30.0)
    match = await table.create(deck=table.STANDARD_DECK)
    call = table.client.stub.Play(metadata=(("x-match-id", match.match_id),))
    await asyncio.sleep(SETTLE_S)
    assert not call.done(), "refused before the client's first message"
    await call.write(_subscribe(match.match_id))
    err = await asyncio.wait_for(_status(call), 10)
    assert err.code() is Code.UNAUTHENTICATED
    assert err.details() == "missing seat token"


async def test_a_refused_play_that_never_writes_is_refused_after_the_bound(
    table: Any, server: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(errors, "FIRST_MESSAGE_WAIT_S", 0.2)
    match = await table.create(deck=table.STANDARD_DECK)
    call = table.client.stub.Play(metadata=(("x-match-id", match.match_id),))
    err = await asyncio.wait_for(_status(call), 10)
    assert err.code() is Code.UNAUTHENTICATED


async def test_a_play_over_the_stream_cap_is_refused_after_its_subscribe(
    table: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(errors, "FIRST_MESSAGE_WAIT_S", 30.0)
    await table.start(limits=LimitsConfig(max_streams_per_token=1))
    match = await table.create(deck=table.STANDARD_DECK)
    seat = match.seats[0]
    metadata = (("authorization", f"Bearer {seat.token}"), ("x-match-id", match.match_id))
    held = table.client.stub.Play(metadata=metadata)
    await held.write(_subscribe(match.match_id))
    first = await asyncio.wait_for(held.read(), 10)
    assert first.WhichOneof("event") == "subscribed"
    over = table.client.stub.Play(metadata=metadata)
    await asyncio.sleep(SETTLE_S)
    assert not over.done(), "refused before the client's first message"
    await over.write(_subscribe(match.match_id))
    err = await asyncio.wait_for(_status(over), 10)
    assert err.code() is Code.RESOURCE_EXHAUSTED
    assert "streams" in err.details()
    held.cancel()


async def test_refusals_past_the_cap_of_waiting_ones_are_immediate(
    table: Any, server: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(errors, "FIRST_MESSAGE_WAIT_S", 30.0)
    monkeypatch.setattr(errors, "MAX_WAITING_REFUSALS", 2)
    match = await table.create(deck=table.STANDARD_DECK)
    metadata = (("x-match-id", match.match_id),)
    waiting = [table.client.stub.Play(metadata=metadata) for _ in range(2)]
    await asyncio.sleep(SETTLE_S)
    assert not any(call.done() for call in waiting)
    # A third silent stream is refused without waiting: a flood cannot hold the pool.
    third = table.client.stub.Play(metadata=metadata)
    err = await asyncio.wait_for(_status(third), 10)
    assert err.code() is Code.UNAUTHENTICATED
    assert not any(call.done() for call in waiting)
    for call in waiting:
        call.cancel()
    # Cancelled, the waiting refusals give their places back.
    for _ in range(250):  # up to 5 s for the cancellations to reach the server
        if errors._waiting[0] == 0:
            break
        await asyncio.sleep(0.02)
    assert errors._waiting[0] == 0
