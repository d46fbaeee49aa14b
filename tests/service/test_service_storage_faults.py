"""Storage faults over a real server (reliability.md E8).

While the SQLite store refuses writes (a real SQLITE_READONLY from ``PRAGMA query_only`` on
the writer's connection), every call that must write answers UNAVAILABLE with the rule
``storage_unavailable`` (never INTERNAL) and changes nothing, and gRPC health says
NOT_SERVING; once the fault is lifted, health is SERVING again without any client write, the
same submit (same request id) is accepted once, matches play to their end, and a clock that
ran out during the fault gets its default move. A corrupt store file is refused at start-up
with one line on stderr and exit status 2.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from speeltafel.sdk.client import new_request_id
from speeltafel.sdk.v1 import match_service_pb2
from speeltafel.server.rpc.errors import classify
from speeltafel.server.rpc.server import MATCH_SERVICE
from speeltafel.server.store.base import MatchCreated, StoreUnavailable
from speeltafel.server.store.sqlite import SqliteStore

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
RULE = "storage_unavailable"
READ_ONLY = "PRAGMA query_only = ON"
WRITABLE = "PRAGMA query_only = OFF"
WAIT_S = 10.0


async def eventually(check: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def health_of(table: Any, service: str) -> int:
    stub = health_pb2_grpc.HealthStub(table.raw_channel())
    response = await stub.Check(health_pb2.HealthCheckRequest(service=service))
    status: int = response.status
    return status


async def health_is(table: Any, status: int) -> bool:
    return all([await health_of(table, s) == status for s in ("", MATCH_SERVICE)])


def assert_opaque(err: grpc.aio.AioRpcError, table: Any) -> None:
    """The message names no file, no SQL and nothing of the request."""
    text = (err.details() or "").lower()
    for leak in (str(table.db_path).lower(), "sqlite", "insert", "select", "readonly", ".db"):
        assert leak not in text, err.details()


def test_storage_unavailable_maps_to_unavailable_without_its_cause() -> None:
    code, message, rule = classify(StoreUnavailable("SQLITE_FULL in /srv/var/speeltafel.db"))
    assert (code, rule) == (grpc.StatusCode.UNAVAILABLE, RULE)
    assert "SQLITE" not in message and "/srv" not in message and "retry" in message


async def test_e8_read_only_store_answers_unavailable_then_heals(table: Any) -> None:
    store = table.sqlite_store()
    await table.start(store)
    match = await table.create(deck=table.STANDARD_DECK)
    waiting = await table.create(join=1)
    seat0 = match.seats[0]
    before = await table.state(match)
    version = (await table.view(seat0)).version
    request_id = new_request_id()
    assert await health_is(table, SERVING)

    await store._execute_for_tests(READ_ONLY)
    err = await table.fails(
        table.submit(seat0, table.select(1), version, request_id),
        grpc.StatusCode.UNAVAILABLE,
        RULE,
    )
    assert_opaque(err, table)
    await eventually(lambda: health_is(table, NOT_SERVING), "NOT_SERVING")
    assert not store.writable
    err = await table.fails(
        table.client.create_match("take5", 2), grpc.StatusCode.UNAVAILABLE, RULE
    )
    assert_opaque(err, table)
    join = match_service_pb2.JoinMatchRequest(match_id=waiting.match_id, seat=1, name="late")
    err = await table.fails(table.client.stub.JoinMatch(join), grpc.StatusCode.UNAVAILABLE, RULE)
    assert_opaque(err, table)
    # Nothing changed, and reads go on.
    assert await table.state(match) == before
    await asyncio.sleep(1.0)  # the probe keeps failing: health stays down
    assert await health_is(table, NOT_SERVING)

    await store._execute_for_tests(WRITABLE)
    await eventually(lambda: health_is(table, SERVING), "SERVING again without a client write")

    ack = await table.submit(seat0, table.select(1), version, request_id)
    assert not ack.duplicate and ack.seq == version
    again = await table.submit(seat0, table.select(1), version, request_id)
    assert again.duplicate and again.seq == ack.seq
    late = await table.client.stub.JoinMatch(join)
    assert late.seat == 1

    finals = await asyncio.wait_for(table.play_out(match), 60)
    assert all(v.status == finals[0].status for v in finals)
    record = await table.client.record(match.match_id)
    assert [a.seq for a in record.actions] == list(range(1, len(record.actions) + 1))
    assert [a.action for a in record.actions[: ack.seq]][-1] == "select:1"
    assert (await store.integrity_check()) == "ok"


async def test_e8_a_clock_that_runs_out_during_the_fault_plays_after_it(table: Any) -> None:
    # Needs the runtime to re-arm a match's clock (with backoff) after a failed default move.
    store = table.sqlite_store()
    await table.start(store)
    match = await table.create(deck=table.STANDARD_DECK, move_clock_ms=300)
    seat0 = match.seats[0]
    start = (await table.view(seat0)).version

    await store._execute_for_tests(READ_ONLY)
    await asyncio.sleep(1.2)  # the deadline passes while nothing can be written
    assert (await table.view(seat0)).version == start
    assert not store.writable

    await store._execute_for_tests(WRITABLE)
    await eventually(lambda: health_is(table, SERVING), "SERVING")

    async def defaults_played() -> bool:
        return bool((await table.view(seat0)).version > start)

    await eventually(defaults_played, "the overdue default moves")
    # and the match goes on to its end
    finals = await asyncio.wait_for(table.play_out(match), 60)
    assert finals[0].status == finals[1].status
    record = await table.client.record(match.match_id)  # published once finished
    assert [a.seq for a in record.actions] == list(range(1, len(record.actions) + 1))
    first = record.actions[:2]  # both seats' first selections: overdue during the fault
    assert [a.clock_default for a in first] == [True, True]
    fault_lifted_ms = record.started_unix_ms + 1200
    assert all(a.server_time_unix_ms >= fault_lifted_ms for a in first)


# --------------------------------------------------------------------------- start-up


async def corrupt_store(path: Path) -> None:
    store = SqliteStore(path)
    for i in range(50):
        await store.create(
            MatchCreated(f"m{i}", "take5", 1, (), 2, b"s" * 32, "c" * 64, 1000, (), i)
        )
    await store.close()
    with path.open("r+b") as file:
        file.seek(4096)
        file.write(os.urandom(4096 * 3))


def speeltafel_command() -> list[str]:
    script = Path(sys.executable).parent / "speeltafel"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from speeltafel.cli.main import main; main()"]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([*speeltafel_command(), "serve"], id="speeltafel-serve"),
        pytest.param([sys.executable, "-m", "speeltafel.server"], id="python-m-server"),
    ],
)
async def test_e8_a_corrupt_store_is_refused_with_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "corrupt.db"
    await corrupt_store(path)
    result = await asyncio.to_thread(
        subprocess.run,
        [*command, "--db", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0] and "Restore the store from a backup" in lines[0], lines[0]
    assert "Traceback" not in result.stderr
