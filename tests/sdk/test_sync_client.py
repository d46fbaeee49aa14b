"""The blocking SDK: Client for every call, and run_bot playing a seat to the end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import grpc
import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk import Client, common_pb2, run_bot
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.memory import MemoryStore


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    server = await start_server(MemoryStore())
    try:
        yield server
    finally:
        await server.stop(0.2)


def blocking_session(target: str) -> dict[str, object]:
    """Everything a blocking client does, run in a worker thread."""
    seen: dict[str, object] = {}
    with Client(target) as client:
        seen["games"] = [g.game for g in client.list_games()]
        created = client.create_match("take5", 2, options={"deals": "1"})
        seats = [client.join(created.match_id, name=f"s{i}") for i in range(2)]
        view = client.get_view(seats[0])
        seen["first_version"] = view.version
        seen["hand_size"] = len(view.take5.hand)
        # One unary move, then a retry with the same request id: answered, not applied twice.
        ack = client.submit(seats[0], view.legal_actions[0], view.version, "first")
        again = client.submit(seats[0], view.legal_actions[0], view.version, "first")
        seen["ack"] = (ack.seq, ack.version, ack.duplicate)
        seen["again"] = (again.seq, again.version, again.duplicate)
        # Changing the sealed choice: from the old view it is stale, from the new one illegal.
        for version, key in ((view.version, "stale_code"), (ack.version, "second_code")):
            try:
                client.submit(seats[0], view.legal_actions[1], version, key)
            except grpc.RpcError as exc:
                seen[key] = exc.code()
        # Both seats played to the end by run_bot, each in its own thread.
        finals: list[common_pb2.View] = []
        threads = [
            threading.Thread(
                target=lambda s=seat, i=i: finals.append(run_bot(target, s, RandomBot(i)))
            )
            for i, seat in enumerate(seats)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        seen["finals"] = [f.status for f in finals]
        seen["summary"] = client.get_match(created.match_id).status
        record = client.record(created.match_id)
        seen["record_actions"] = len(record.actions)
        spectated = list(client.spectate(created.match_id))
        seen["spectated"] = (len(spectated), spectated[-1].status, spectated[-1].HasField("seat"))
    return seen


async def test_blocking_client_and_run_bot(running: Running) -> None:
    seen = await asyncio.to_thread(blocking_session, f"127.0.0.1:{running.port}")
    assert seen["games"] == list(GAMES)
    assert seen["first_version"] == 1 and seen["hand_size"] == 12
    assert seen["ack"] == (1, 2, False)
    assert seen["again"] == (1, 2, True)
    assert seen["stale_code"] == grpc.StatusCode.ABORTED
    assert seen["second_code"] == grpc.StatusCode.FAILED_PRECONDITION  # already selected
    finished = common_pb2.MATCH_STATUS_FINISHED
    assert seen["finals"] == [finished, finished]
    assert seen["summary"] == finished
    # One deal of 12 turns for 2 seats: 24 selections plus any row choices.
    assert isinstance(seen["record_actions"], int) and seen["record_actions"] >= 24
    count, status, has_seat = seen["spectated"]  # type: ignore[misc]
    assert count == 1 and status == finished and not has_seat


def test_the_sdk_names_load_on_first_use() -> None:
    """``speeltafel.sdk`` offers its names lazily; each is the defining module's object."""
    import speeltafel.sdk as sdk
    from speeltafel.sdk import client, runner
    from speeltafel.sdk.v1 import common_pb2

    assert sdk.AsyncClient is client.AsyncClient and sdk.play_seat is runner.play_seat
    assert sdk.common_pb2 is common_pb2
    assert set(sdk.__all__) <= set(dir(sdk))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = sdk.nothing  # type: ignore[attr-defined]
