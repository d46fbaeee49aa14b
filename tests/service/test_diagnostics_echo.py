"""The Diagnostics echo that ``make bench`` measures the transport with (``--diagnostics``).

The bench's (b) ceiling rests on EchoStream answering each message with exactly the
replies it asked for, so that is held here, with its refusals of requests too large.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from speeltafel.sdk.v1 import diagnostics_pb2, diagnostics_pb2_grpc
from speeltafel.server.rpc.server import (
    MAX_ECHO_EXTRA_BYTES,
    MAX_ECHO_REPLIES,
    Running,
    start_server,
)
from speeltafel.server.store.memory import MemoryStore


async def read(call: Any) -> Any:
    """The next message, or a failure (not a hang) when the server sends fewer."""
    return await asyncio.wait_for(call.read(), timeout=5)


@pytest.fixture
async def echo() -> AsyncIterator[diagnostics_pb2_grpc.DiagnosticsServiceStub]:
    running: Running = await start_server(MemoryStore(), diagnostics=True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        yield diagnostics_pb2_grpc.DiagnosticsServiceStub(channel)  # type: ignore[no-untyped-call]
    finally:
        await channel.close()
        await running.stop(0.2)


async def test_each_message_is_answered_by_the_replies_it_asks_for(
    echo: diagnostics_pb2_grpc.DiagnosticsServiceStub,
) -> None:
    call = echo.EchoStream()
    asks = [(1, 0), (0, 0), (2, 550), (3, 7), (2, 550), (1, 99)]  # (replies, extra_bytes)
    for sequence, (replies, extra_bytes) in enumerate(asks):
        await call.write(
            diagnostics_pb2.EchoStreamRequest(
                sequence=sequence, payload=b"ping", replies=replies, extra_bytes=extra_bytes
            )
        )
        first = await read(call)
        assert (first.sequence, first.payload) == (sequence, b"ping")
        for _ in range(max(replies, 1) - 1):
            extra = await read(call)
            assert (extra.sequence, extra.payload) == (sequence, bytes(extra_bytes))
    await call.done_writing()
    # Nothing more came than was asked for: the stream ends after the last exchange.
    assert await read(call) is grpc.aio.EOF
    assert await call.code() is grpc.StatusCode.OK


@pytest.mark.parametrize(
    ("replies", "extra_bytes"),
    [(MAX_ECHO_REPLIES + 1, 0), (2, MAX_ECHO_EXTRA_BYTES + 1)],
)
async def test_a_request_for_too_much_is_refused_and_the_server_answers_the_next(
    echo: diagnostics_pb2_grpc.DiagnosticsServiceStub, replies: int, extra_bytes: int
) -> None:
    call = echo.EchoStream()
    await call.write(
        diagnostics_pb2.EchoStreamRequest(sequence=1, replies=replies, extra_bytes=extra_bytes)
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await read(call)
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "at most" in (refused.value.details() or "")
    # The limits themselves are allowed, on a new stream of the same server.
    call = echo.EchoStream()
    await call.write(
        diagnostics_pb2.EchoStreamRequest(
            sequence=2, replies=MAX_ECHO_REPLIES, extra_bytes=MAX_ECHO_EXTRA_BYTES
        )
    )
    for _ in range(MAX_ECHO_REPLIES):
        assert (await read(call)).sequence == 2
    await call.done_writing()
    assert await call.code() is grpc.StatusCode.OK
