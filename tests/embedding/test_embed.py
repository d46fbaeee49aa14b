"""speeltafel embedded in a gRPC server of someone else's (speeltafel.server.rpc.embed).

The server here is the embedder's: built by the test with its own interceptor, its own
greeter service and, in one test, its own health servicer. speeltafel is added with
``add_speeltafel_services`` and a match is played through it over a real channel, next to
the greeter on the same port.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.rpc.embed import Embedded, add_speeltafel_services
from speeltafel.server.rpc.limits import LimitsConfig
from speeltafel.server.store.memory import MemoryStore

DOC = Path(__file__).resolve().parents[2] / "docs" / "embedding.md"
MATCH = "speeltafel.v1.MatchService"
GREETER = "/example.Greeter/Hello"
FINISHED = common_pb2.MATCH_STATUS_FINISHED


async def hello(request: bytes, context: Any) -> bytes:
    return b"hello, " + request


class CallLog(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # untyped grpc
    """The embedder's own server-wide interceptor."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        self.methods.append(details.method)
        return await continuation(details)


def rule_of(err: grpc.aio.AioRpcError) -> str | None:
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return info.reason
    return None


async def fails(call: Awaitable[Any], code: grpc.StatusCode, rule: str | None) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == code, (caught.value.code(), caught.value.details())
    assert rule_of(caught.value) == rule


class Host:
    """The embedder's server: a greeter, a call log, and speeltafel added to it."""

    def __init__(self, **embed: Any) -> None:
        self.calls = CallLog()
        self.server = grpc.aio.server(interceptors=[self.calls])
        greeter = {"Hello": grpc.unary_unary_rpc_method_handler(hello)}
        self.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler("example.Greeter", greeter)]
        )
        self.embedded: Embedded = add_speeltafel_services(
            self.server, store=MemoryStore(), reflect=["example.Greeter"], **embed
        )
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}")
        self.stub = match_service_pb2_grpc.MatchServiceStub(self.channel)
        self.greet = self.channel.unary_unary(GREETER)

    async def start(self) -> None:
        await self.embedded.start()
        await self.server.start()

    async def stop(self) -> None:
        await self.channel.close()
        await self.embedded.stopping()
        await self.server.stop(0.2)
        await self.embedded.close()


@pytest.fixture
async def host() -> AsyncIterator[Host]:
    host = Host()
    await host.start()
    try:
        yield host
    finally:
        await host.stop()


async def play_one(port: int, game: str, seats: int) -> common_pb2.View:
    async with AsyncClient(f"127.0.0.1:{port}") as client:
        match = await client.create_match(game, seats=seats)
        joined = [await client.join(match.match_id) for _ in range(seats)]
        finals = await asyncio.gather(
            *(play_seat(client, seat, RandomBot(seed=n)) for n, seat in enumerate(joined))
        )
        record = await client.record(match.match_id)
        assert record.game == game and len(record.actions) > 0
        return finals[0]


async def test_a_match_plays_next_to_the_embedders_own_service(host: Host) -> None:
    final = await play_one(host.port, "take5", 3)
    assert final.status == FINISHED
    assert len(final.outcome.scores) == 3
    assert await host.greet(b"table") == b"hello, table"
    # The embedder's interceptor saw speeltafel's calls and its own.
    assert f"/{MATCH}/Play" in host.calls.methods and GREETER in host.calls.methods


async def test_every_registered_game_is_offered(host: Host) -> None:
    games = await host.stub.ListGames(match_service_pb2.ListGamesRequest())
    assert sorted(g.game for g in games.games) == sorted(GAMES)


async def test_speeltafels_interceptors_guard_its_calls_only(host: Host) -> None:
    # Seat authentication (the auth interceptor, applied per service).
    await fails(
        host.stub.GetView(match_service_pb2.GetViewRequest(match_id="m")),
        grpc.StatusCode.UNAUTHENTICATED,
        "unauthenticated",
    )
    # Errors become statuses with a rule id (the error interceptor).
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await host.stub.CreateMatch(
            match_service_pb2.CreateMatchRequest(game="no-such-game", seats=2, request_id="r1")
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rule_of(caught.value) == "unknown_game"
    # The greeter has no seat token and is not refused.
    assert await host.greet(b"x") == b"hello, x"


async def test_limits_count_speeltafel_calls_and_leave_the_embedders_alone() -> None:
    limits = LimitsConfig(unary_rate_per_peer=1.0, unary_burst_per_peer=3.0, max_park_s=0.0)
    host = Host(limits=limits)
    await host.start()
    try:
        request = match_service_pb2.ListGamesRequest()
        for _ in range(3):
            await host.stub.ListGames(request)
        await fails(
            host.stub.ListGames(request), grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited"
        )
        for n in range(20):  # the embedder's greeter is not speeltafel's to limit
            assert await host.greet(b"%d" % n) == b"hello, %d" % n
    finally:
        await host.stop()


async def test_match_service_is_unavailable_before_start_and_after_stopping() -> None:
    host = Host()
    await host.server.start()  # the embedder started its server before speeltafel
    try:
        request = match_service_pb2.ListGamesRequest()
        await fails(host.stub.ListGames(request), grpc.StatusCode.UNAVAILABLE, "not_serving")
        assert await host.greet(b"early") == b"hello, early"
        await host.embedded.start()
        assert len((await host.stub.ListGames(request)).games) == len(GAMES)
        await host.embedded.stopping()
        await fails(host.stub.ListGames(request), grpc.StatusCode.UNAVAILABLE, "not_serving")
        assert await host.greet(b"late") == b"hello, late"
    finally:
        await host.stop()


async def test_health_and_reflection_list_speeltafel_and_the_reflected_names(
    host: Host,
) -> None:
    health = health_pb2_grpc.HealthStub(host.channel)
    for service in ("", MATCH):
        answer = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(host.channel)
    call = stub.ServerReflectionInfo()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    answer = await call.read()
    await call.done_writing()
    names = {s.name for s in answer.list_services_response.service}
    assert {MATCH, "grpc.health.v1.Health", "example.Greeter"} <= names


async def test_a_callers_health_servicer_gets_only_speeltafels_status() -> None:
    theirs = health_aio.HealthServicer()
    await theirs.set("", health_pb2.HealthCheckResponse.SERVING)
    host = Host(health=theirs, reflection=False)
    health_pb2_grpc.add_HealthServicer_to_server(theirs, host.server)
    await host.start()
    try:
        stub = health_pb2_grpc.HealthStub(host.channel)
        answer = await stub.Check(health_pb2.HealthCheckRequest(service=MATCH))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        assert host.embedded.service_names == (MATCH,)
        await host.embedded.stopping()
        answer = await stub.Check(health_pb2.HealthCheckRequest(service=MATCH))
        assert answer.status == health_pb2.HealthCheckResponse.NOT_SERVING
        # The server-wide status is the embedder's: speeltafel's stop does not touch it.
        answer = await stub.Check(health_pb2.HealthCheckRequest(service=""))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await host.stop()


async def test_a_game_without_a_wire_is_refused_at_once() -> None:
    server = grpc.aio.server()
    with pytest.raises(ValueError, match="no wire"):
        add_speeltafel_services(server, store=MemoryStore(), wires={})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_the_documented_example_serves_a_match(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    (example,) = [b for b in blocks if "add_speeltafel_services" in b]
    namespace: dict[str, Any] = {"__name__": "embedding_example"}
    exec(compile(example, str(DOC), "exec"), namespace)
    port, stop, calls = free_port(), asyncio.Event(), namespace["CallLog"]()
    serving = asyncio.create_task(namespace["serve"](port, tmp_path / "games.db", stop, calls))
    try:
        async with AsyncClient(f"127.0.0.1:{port}") as client:
            for _ in range(600):  # the example starts its server in its own task
                try:
                    await client.list_games()
                    break
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.05)
        final = await play_one(port, "take5", 2)
        assert final.status == FINISHED
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            assert await channel.unary_unary(GREETER)(b"doc") == b"hello, doc"
        assert f"/{MATCH}/Play" in calls.methods
    finally:
        stop.set()
        await asyncio.wait_for(serving, 10)
    assert (tmp_path / "games.db").exists()


class RegistrationSpy:
    """Stands in for a grpc.aio server while speeltafel adds its services: what it adds."""

    def __init__(self) -> None:
        self.registered: dict[str, set[str]] = {}
        self.generic: list[Any] = []

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self.registered.setdefault(service, set()).update(handlers)

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.generic.extend(handlers)


def test_every_match_service_method_has_an_accept_slot_of_its_own() -> None:
    # grpc.aio keeps one request for a new call outstanding per registered method and
    # one for all generic methods together; behind the single generic slot a loaded
    # server made every new call (a health check, a CreateMatch) wait its turn for
    # ~120 ms. Each method is registered; the generic handler stays as the fallback.
    spy = RegistrationSpy()
    embedded = add_speeltafel_services(spy, store=MemoryStore())  # type: ignore[arg-type]
    methods = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].methods
    assert spy.registered[MATCH] == {m.name for m in methods}
    assert len(spy.generic) == 1  # reflection, and any method not registered
    embedded.add_service(health_pb2_grpc.add_HealthServicer_to_server, health_aio.HealthServicer())
    assert {"Check", "Watch"} <= spy.registered["grpc.health.v1.Health"]  # added services too
