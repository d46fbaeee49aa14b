"""The SDK routing by itself: gRPC's client-side ring hash on ``x-match-id`` over two server
processes on one PostgreSQL log, no proxy (real processes, a real PostgreSQL).

Every match's moves are committed by one process (its seat calls all hashed there), and
the matches spread over both: each process's log names the matches it committed moves of.
Then one process is SIGKILLed: the ring skips it, and the next matches play on the other.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Callable

import grpc
import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2

Spawn = Callable[..., ServerProcess]
START_TIMEOUT_S = 30.0
MATCHES = 16  # all on one process by chance: 2 / 2**16


async def _play(client: AsyncClient, count: int, rnd: random.Random) -> list[str]:
    async def one() -> str:
        created = await client.create_match("take5", 2, {"deals": "1"}, move_clock_ms=20_000)
        seats = [await client.join(created.match_id, s) for s in range(2)]
        views = await asyncio.wait_for(
            asyncio.gather(
                *(play_seat(client, seat, RandomBot(rnd.randrange(2**32))) for seat in seats)
            ),
            90,
        )
        assert all(v.status == common_pb2.MATCH_STATUS_FINISHED for v in views)
        return created.match_id

    return list(await asyncio.gather(*(one() for _ in range(count))))


def _committed(process: ServerProcess) -> set[str]:
    """The matches whose moves ``process`` committed (its log's ``action_accepted``)."""
    found = set()
    for line in process.log_path.read_text().splitlines():
        if '"action_accepted"' in line:
            found.add(json.loads(line)["match_id"])
    return found


async def test_the_client_routes_each_match_to_one_process(servers: Spawn) -> None:
    a, b = servers("a"), servers("b")
    await asyncio.gather(a.start_async(START_TIMEOUT_S), b.start_async(START_TIMEOUT_S))
    rnd = random.Random(int.from_bytes(os.urandom(4), "big"))
    target = f"ipv4:{a.target},{b.target}"
    async with AsyncClient(target, route_by_match=True) as client:
        matches = await _play(client, MATCHES, rnd)
        on_a, on_b = _committed(a), _committed(b)
        assert set(matches) == on_a | on_b
        assert not on_a & on_b, "a match's moves were committed by both processes"
        assert on_a and on_b, "the ring sent every match to one process"
        # A process dies: the ring skips it, and new matches play on the one left.
        a.kill()
        later = await _play(client, 4, rnd)
    assert set(later) <= _committed(b)


async def test_without_routing_a_match_is_served_by_both_processes(servers: Spawn) -> None:
    """The control: round robin over the same two processes spreads a match's calls, so
    the routing test above would catch a ring hash that does not hash on the header."""
    a, b = servers("a"), servers("b")
    await asyncio.gather(a.start_async(START_TIMEOUT_S), b.start_async(START_TIMEOUT_S))
    rnd = random.Random(int.from_bytes(os.urandom(4), "big"))
    config = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
    channel_target = f"ipv4:{a.target},{b.target}"
    channel = grpc.aio.insecure_channel(channel_target, options=[("grpc.service_config", config)])
    async with AsyncClient(channel_target, channel) as client:
        await _play(client, 4, rnd)
    assert _committed(a) & _committed(b), "round robin kept every match on one process"


@pytest.fixture(autouse=True)
def _quiet_grpc() -> None:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
