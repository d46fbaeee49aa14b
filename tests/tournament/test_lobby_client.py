"""The SDK's lobby client against a real match service and a scripted lobby.

The lobby here is a stand-in LobbyService (added to a real speeltafel server) that the test
drives: it pushes seat assignments of real matches, ends or aborts the stream, and sends
resumed assignments again, so every path of the client is exercised on real gRPC.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.lobby import LobbyClient, LobbyRefused, backoff_delay, match_seed
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, tournament_pb2, tournament_pb2_grpc
from speeltafel.server.rpc.embed import add_speeltafel_services
from speeltafel.server.store.memory import MemoryStore

TOKEN = "good-token"
End = object()  # end the stream normally


@dataclass
class ScriptedLobby(tournament_pb2_grpc.LobbyServiceServicer):
    """A LobbyService the test drives through ``push``."""

    registers: list[tournament_pb2.Register] = field(default_factory=list)
    streams: list[asyncio.Queue[Any]] = field(default_factory=list)
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    async def Connect(
        self, request_iterator: AsyncIterator[tournament_pb2.ConnectRequest], context: Any
    ) -> AsyncIterator[tournament_pb2.ConnectResponse]:
        metadata = dict(context.invocation_metadata())
        if metadata.get("authorization") != f"Bearer {TOKEN}":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown bot token")
        first = await anext(aiter(request_iterator))
        self.registers.append(first.register)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self.streams.append(queue)
        yield tournament_pb2.ConnectResponse(
            registered=tournament_pb2.Registered(
                bot_name="tester",
                max_concurrent=first.register.max_concurrent,
                games=list(first.register.games),
            )
        )
        self.connected.set()
        while True:
            item = await queue.get()
            if item is End:
                return
            if isinstance(item, grpc.StatusCode):
                await context.abort(item, "scripted")
            yield tournament_pb2.ConnectResponse(assignment=item)

    async def push(self, item: Any) -> None:
        await self.connected.wait()
        await self.streams[-1].put(item)

    async def next_stream(self, count: int) -> None:
        while len(self.streams) < count:  # noqa: ASYNC110 - the servicer appends it
            await asyncio.sleep(0.01)
        self.connected.set()


@dataclass
class Table:
    target: str
    lobby: ScriptedLobby
    client: AsyncClient

    async def match(self, seats: int = 2) -> list[Seat]:
        created = await self.client.create_match("take5", seats, move_clock_ms=20_000)
        return [
            await self.client.join(created.match_id, seat=i, name=f"p{i}") for i in range(seats)
        ]

    async def finished(self, match_id: str) -> bool:
        summary = await self.client.get_match(match_id)
        return bool(summary.status == common_pb2.MATCH_STATUS_FINISHED)


def assignment(seat: Seat, fixture: int, resumed: bool = False) -> tournament_pb2.SeatAssignment:
    return tournament_pb2.SeatAssignment(
        tournament_id="t1",
        match_id=seat.match_id,
        seat=seat.seat,
        token=seat.token,
        game="take5",
        seats=2,
        fixture=fixture,
        resumed=resumed,
    )


@pytest.fixture
async def table() -> AsyncIterator[Table]:
    server = grpc.aio.server()
    embedded = add_speeltafel_services(server, store=MemoryStore())
    lobby = ScriptedLobby()
    tournament_pb2_grpc.add_LobbyServiceServicer_to_server(lobby, server)  # type: ignore[no-untyped-call]
    await embedded.start()
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    target = f"127.0.0.1:{port}"
    async with AsyncClient(target) as client:
        yield Table(target, lobby, client)
    await embedded.stopping()
    await server.stop(0)
    await embedded.close()


class GatedBot:
    """A random bot that waits for ``gate`` before its first move."""

    def __init__(self, gate: asyncio.Event, seed: int) -> None:
        self.gate = gate
        self.inner = RandomBot(seed)

    async def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        await self.gate.wait()
        return self.inner.choose(view, legal_actions)


async def until(condition: Callable[[], object]) -> None:
    """Wait (30 s at most) until ``condition()`` holds: polls another component's state."""
    async with asyncio.timeout(30):
        while not condition():  # noqa: ASYNC110 - nothing to await on the client's counters
            await asyncio.sleep(0.02)


def test_match_seed_depends_on_fixture_seat_and_name_only() -> None:
    a = tournament_pb2.SeatAssignment(match_id="x", fixture=4, seat=1, token="s1")
    b = tournament_pb2.SeatAssignment(match_id="y", fixture=4, seat=1, token="s2")
    assert match_seed(a, "gap") == match_seed(b, "gap")
    assert match_seed(a, "gap") != match_seed(a, "random")
    c = tournament_pb2.SeatAssignment(fixture=4, seat=0)
    d = tournament_pb2.SeatAssignment(fixture=5, seat=1)
    assert len({match_seed(a, "gap"), match_seed(c, "gap"), match_seed(d, "gap")}) == 3


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    for attempt in range(1, 12):
        delay = backoff_delay(attempt, first=0.2, cap=10.0)
        base = min(10.0, 0.2 * 2 ** (attempt - 1))
        assert 0.5 * base <= delay <= 1.5 * base


async def test_plays_every_assignment_with_a_fresh_bot_at_once(table: Table) -> None:
    made: list[tuple[str, int, int]] = []

    def new_bot(a: tournament_pb2.SeatAssignment) -> RandomBot:
        made.append((a.match_id, a.seat, match_seed(a, "random")))
        return RandomBot(match_seed(a, "random"))

    lobby = LobbyClient(table.target, TOKEN, new_bot, games=["take5"], max_concurrent=6)
    running = asyncio.create_task(lobby.run())
    registered = await asyncio.wait_for(lobby.wait_registered(), 10)
    assert (registered.bot_name, registered.max_concurrent) == ("tester", 6)
    assert table.lobby.registers[0].games == ["take5"]
    matches = [await table.match() for _ in range(3)]
    for fixture, seats in enumerate(matches):
        for seat in seats:
            await table.lobby.push(assignment(seat, fixture))
    await until(lambda: lobby.stats.finished == 6)
    for seats in matches:
        assert await table.finished(seats[0].match_id)
    assert len(made) == 6 and len({(m, s) for m, s, _ in made}) == 6  # one bot per seat
    assert lobby.stats.max_running >= 2  # played side by side, not one after another
    lobby.stop()
    await asyncio.wait_for(running, 10)


async def test_reconnects_and_never_plays_a_match_twice(table: Table) -> None:
    gate = asyncio.Event()
    made: list[str] = []

    def new_bot(a: tournament_pb2.SeatAssignment) -> GatedBot:
        made.append(a.match_id)
        return GatedBot(gate, match_seed(a, "gated"))

    lobby = LobbyClient(table.target, TOKEN, new_bot, games=["take5"], max_concurrent=2)
    running = asyncio.create_task(lobby.run())
    seats = await table.match()
    await table.lobby.push(assignment(seats[0], 0))
    await until(lambda: lobby.running)
    await table.lobby.push(End)  # the server ends the stream: the client comes back
    table.lobby.connected.clear()
    await table.lobby.next_stream(2)
    await table.lobby.push(assignment(seats[0], 0, resumed=True))  # still being played
    await until(lambda: lobby.stats.assignments == 2)
    assert lobby.stats.duplicates == 1 and made == [seats[0].match_id]
    other = asyncio.create_task(play_seat(table.client, seats[1], RandomBot(1)))
    await table.lobby.push(grpc.StatusCode.UNAVAILABLE)  # a dropped stream: back again
    table.lobby.connected.clear()
    await table.lobby.next_stream(3)
    gate.set()
    await asyncio.wait_for(other, 30)
    await until(lambda: lobby.stats.finished == 1)
    assert lobby.stats.connects == 3 and made == [seats[0].match_id]
    assert await table.finished(seats[0].match_id)
    lobby.stop()
    await asyncio.wait_for(running, 10)


async def test_a_resumed_match_unknown_here_is_picked_up(table: Table) -> None:
    lobby = LobbyClient(
        table.target, TOKEN, lambda a: RandomBot(match_seed(a, "r")), games=["take5"]
    )
    running = asyncio.create_task(lobby.run())
    seats = await table.match()
    await table.lobby.push(assignment(seats[0], 7, resumed=True))
    await play_seat(table.client, seats[1], RandomBot(2))
    await until(lambda: lobby.stats.finished == 1)
    lobby.stop()
    await asyncio.wait_for(running, 10)


async def test_an_unknown_token_is_refused_for_good(table: Table) -> None:
    lobby = LobbyClient(table.target, "wrong", lambda a: RandomBot(0), games=["take5"])
    with pytest.raises(LobbyRefused, match="does not accept this bot token"):
        await asyncio.wait_for(lobby.run(), 10)
    assert lobby.stats.connects == 0


async def test_replaced_by_another_connection_stops_and_cancels(table: Table) -> None:
    gate = asyncio.Event()
    lobby = LobbyClient(table.target, TOKEN, lambda a: GatedBot(gate, 0), games=["take5"])
    running = asyncio.create_task(lobby.run())
    seats = await table.match()
    await table.lobby.push(assignment(seats[0], 0))
    await until(lambda: lobby.running)
    await table.lobby.push(grpc.StatusCode.ABORTED)
    with pytest.raises(LobbyRefused, match="replaced"):
        await asyncio.wait_for(running, 10)
    assert not lobby.running and lobby.stats.finished == 0


async def test_stop_drains_running_matches_or_cancels_them(table: Table) -> None:
    gate = asyncio.Event()
    lobby = LobbyClient(table.target, TOKEN, lambda a: GatedBot(gate, 3), games=["take5"])
    running = asyncio.create_task(lobby.run())
    seats = await table.match()
    await table.lobby.push(assignment(seats[0], 0))
    await until(lambda: lobby.running)
    lobby.stop()  # drain: waits for the match
    await asyncio.sleep(0.3)
    assert not running.done() and lobby.running
    gate.set()
    await play_seat(table.client, seats[1], RandomBot(4))
    await asyncio.wait_for(running, 30)
    assert lobby.stats.finished == 1

    gate2 = asyncio.Event()
    second = LobbyClient(table.target, TOKEN, lambda a: GatedBot(gate2, 5), games=["take5"])
    table.lobby.connected.clear()
    running = asyncio.create_task(second.run())
    seats = await table.match()
    await table.lobby.push(assignment(seats[0], 1))
    await until(lambda: second.running)
    second.stop(drain=False)
    await asyncio.wait_for(running, 10)
    assert not second.running and second.stats.finished == 0


def test_bad_arguments_are_refused_before_connecting() -> None:
    with pytest.raises(ValueError, match="max_concurrent"):
        LobbyClient("x:1", TOKEN, lambda a: RandomBot(0), games=[], max_concurrent=0)
    with pytest.raises(ValueError, match="64 bytes"):
        LobbyClient("x:1", TOKEN, lambda a: RandomBot(0), games=[], entropy=bytes(65))
