"""``make bench`` (b)'s echo as the split of a decision uses it: at a given rate, with the
streams in lock-step tables as Take 5's seats are (``scripts/bench.py``: ``echo_stream``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import grpc
import pytest
from scripts_import import script  # tests/load is on sys.path

from speeltafel.sdk.v1 import diagnostics_pb2_grpc
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.memory import MemoryStore


@pytest.fixture
async def stubs() -> AsyncIterator[list[diagnostics_pb2_grpc.DiagnosticsServiceStub]]:
    running: Running = await start_server(MemoryStore(), diagnostics=True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        yield [diagnostics_pb2_grpc.DiagnosticsServiceStub(channel)]  # type: ignore[no-untyped-call]
    finally:
        await channel.close()
        await running.stop(0.2)


@pytest.mark.serial  # a rate kept by timers: measured with the machine to itself
@pytest.mark.parametrize("table", [1, 4])
async def test_a_paced_echo_keeps_to_its_rate_and_ends(
    stubs: list[diagnostics_pb2_grpc.DiagnosticsServiceStub], table: int
) -> None:
    bench = script("bench")
    result = await asyncio.wait_for(
        bench.echo_stream(
            stubs, 8, 0.2, 1.0, os.getpid(), replies=2, extra_bytes=16, rate=120.0, table=table
        ),
        timeout=20,
    )
    # 120 exchanges a second asked for; far below what the echo does unpaced, so the pace,
    # not the server, sets it (the margin: timer wake-ups of a shared test machine).
    assert 60 <= result.per_s <= 130


async def test_lockstep_tables_end_together_unpaced(
    stubs: list[diagnostics_pb2_grpc.DiagnosticsServiceStub],
) -> None:
    bench = script("bench")
    result = await asyncio.wait_for(
        bench.echo_stream(stubs, 8, 0.1, 0.5, os.getpid(), replies=2, table=4), timeout=20
    )
    # It ended (a stream that stopped alone would leave its table's barrier waiting) and
    # every stream had its replies.
    assert result.count >= 8
