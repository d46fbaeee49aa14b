"""The lobby and tournament services through a real server: tokens, bots connecting through
the SDK's lobby client, progress, standings, records, sealing, limits and bad requests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from speeltafel.bots.first_bot import FirstBot
from speeltafel.sdk.lobby import LobbyClient
from speeltafel.sdk.v1 import (
    common_pb2,
    match_service_pb2,
    match_service_pb2_grpc,
    tournament_pb2,
    tournament_pb2_grpc,
)
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.rpc import errors as rpc_errors
from speeltafel.server.rpc.limits import LimitsConfig
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.rpc.tournament_service import organiser_token_file, write_organiser_token
from speeltafel.server.store.memory import MemoryStore

ORGANISER = "organiser-secret"
GAME = "take5"
OPTIONS = {"edition": "trial", "deals": "1"}
T = tournament_pb2


def reason(error: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason of a failed call."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


class SlowFirst(FirstBot):
    """The first legal action, after a short think (so that a match lasts a moment)."""

    async def choose(self, view: Any, legal_actions: Sequence[Any]) -> Any:  # type: ignore[override]
        await asyncio.sleep(0.01)
        return legal_actions[0]


@dataclass
class Server:
    running: Running
    channel: grpc.aio.Channel
    tournaments: tournament_pb2_grpc.TournamentServiceStub
    matches: match_service_pb2_grpc.MatchServiceStub
    lobbies: list[LobbyClient] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.running.port}"

    async def issue(self, name: str) -> str:
        response = await self.tournaments.IssueBotToken(
            T.IssueBotTokenRequest(bot_name=name), metadata=organiser()
        )
        return str(response.token)

    async def bot(self, name: str, slow: bool = False, concurrent: int = 1) -> LobbyClient:
        token = await self.issue(name)
        lobby = LobbyClient(
            self.target,
            token,
            lambda _assignment: SlowFirst() if slow else FirstBot(),
            games=[GAME],
            max_concurrent=concurrent,
        )
        self.lobbies.append(lobby)
        self.tasks.append(asyncio.ensure_future(lobby.run()))
        return lobby


def organiser() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {ORGANISER}"),)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    running = await start_server(
        MemoryStore(),
        config=RuntimeConfig(min_move_clock_ms=20),
        limits=LimitsConfig(organiser_token=ORGANISER),
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    found = Server(
        running,
        channel,
        tournament_pb2_grpc.TournamentServiceStub(channel),  # type: ignore[no-untyped-call]
        match_service_pb2_grpc.MatchServiceStub(channel),  # type: ignore[no-untyped-call]
    )
    yield found
    for lobby in found.lobbies:
        lobby.stop(drain=False)
    for task in found.tasks:
        task.cancel()
    await asyncio.gather(*found.tasks, return_exceptions=True)
    await channel.close()
    await running.stop(0.5)


def create_request(**changes: Any) -> T.CreateTournamentRequest:
    request = T.CreateTournamentRequest(
        name="service test",
        game=GAME,
        options=OPTIONS,
        format=T.TOURNAMENT_FORMAT_ROUND_ROBIN,
        participants=["alice", "bob"],
        seats=2,
        seed=b"seed",
        clock=T.ClockPolicy(move_clock_ms=5_000),
    )
    for name, value in changes.items():
        if name == "participants":
            del request.participants[:]
            request.participants.extend(value)
        elif name == "clock":
            request.clock.CopyFrom(value)
        else:
            setattr(request, name, value)
    return request


async def test_organiser_calls_need_the_organiser_token(server: Server) -> None:
    for metadata in ((), (("authorization", "Bearer wrong"),)):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await server.tournaments.IssueBotToken(
                T.IssueBotTokenRequest(bot_name="x"), metadata=metadata
            )
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason(caught.value) == "organiser_token_required"
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await server.tournaments.CreateTournament(create_request(), metadata=metadata)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    listed = await server.tournaments.ListTournaments(T.ListTournamentsRequest())
    assert list(listed.tournaments) == []


async def test_a_connect_with_an_unknown_token_is_refused_after_its_register(
    server: Server, monkeypatch: Any
) -> None:
    # Refused before the client's register was in, the status could overtake the write,
    # and grpc's Python client then reports INTERNAL instead (rpc/errors.py).
    monkeypatch.setattr(rpc_errors, "FIRST_MESSAGE_WAIT_S", 30.0)
    lobby = tournament_pb2_grpc.LobbyServiceStub(server.channel)  # type: ignore[no-untyped-call]
    call = lobby.Connect(metadata=(("authorization", "Bearer not-a-token"),))
    await asyncio.sleep(0.3)
    assert not call.done(), "refused before the client's first message"
    await call.write(T.ConnectRequest(register=T.Register(games=[GAME])))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(call.read(), 10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert reason(caught.value) == "bad_bot_token"


async def test_a_bot_token_is_checked_and_a_new_one_revokes_the_old(server: Server) -> None:
    lobby = tournament_pb2_grpc.LobbyServiceStub(server.channel)  # type: ignore[no-untyped-call]
    register = T.ConnectRequest(register=T.Register(games=[GAME]))

    async def connect(token: str) -> Any:
        call = lobby.Connect(metadata=(("authorization", f"Bearer {token}"),))
        await call.write(register)
        return call

    async def refused(token: str) -> grpc.StatusCode:
        # The refusal waits for the register (rpc/errors.py), so the status comes with
        # the read; the write stays inside the raises block all the same.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            call = await connect(token)
            await call.read()
        code: grpc.StatusCode = caught.value.code()
        return code

    assert await refused("not a token") == grpc.StatusCode.UNAUTHENTICATED

    old = await server.issue("Alice")
    new = await server.issue("alice")  # the same name, case-insensitively
    assert await refused(old) == grpc.StatusCode.UNAUTHENTICATED

    first = await connect(new)
    registered = (await first.read()).registered
    assert registered.bot_name == "Alice"  # the spelling it was first issued with
    assert list(registered.games) == [GAME]
    # A second connection with the same token replaces the first, which ends ABORTED.
    second = await connect(new)
    assert (await second.read()).registered.bot_name == "Alice"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await first.read()
    assert caught.value.code() == grpc.StatusCode.ABORTED
    second.cancel()


async def test_the_lobby_stream_counts_against_the_stream_limits(server: Server) -> None:
    token = await server.issue("flood")
    lobby = tournament_pb2_grpc.LobbyServiceStub(server.channel)  # type: ignore[no-untyped-call]
    metadata = (("authorization", f"Bearer {token}"),)
    calls = [lobby.Connect(metadata=metadata) for _ in range(LimitsConfig().max_streams_per_token)]
    for call in calls:  # open, never registering: each one holds its stream
        await call.wait_for_connection()
    extra = lobby.Connect(metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await extra.read()
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(caught.value) == "too_many_streams"
    for call in calls:
        call.cancel()


async def test_bad_tournaments_get_clear_statuses(server: Server) -> None:
    await server.issue("alice")
    await server.issue("bob")
    cases = [
        (create_request(format=T.TOURNAMENT_FORMAT_UNSPECIFIED), "format"),
        (create_request(participants=["alice", "nobody"]), "unknown_participant"),
        (create_request(participants=["alice"]), "participants"),
        (create_request(game="no_such_game"), "unknown_game"),
        (create_request(clock=T.ClockPolicy(move_clock_ms=1)), "move_clock_ms"),
        (create_request(name="bad\x00name"), "name_invalid"),
    ]
    for request, rule in cases:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await server.tournaments.CreateTournament(request, metadata=organiser())
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, rule
        assert reason(caught.value) == rule
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await server.tournaments.GetStandings(T.GetStandingsRequest(tournament_id="nope"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    listed = await server.tournaments.ListTournaments(T.ListTournamentsRequest())
    assert list(listed.tournaments) == []


async def test_a_duplicate_tournament_through_the_lobby(server: Server) -> None:
    for name in ("alice", "bob"):
        await server.bot(name, slow=True)
    created = await server.tournaments.CreateTournament(
        create_request(
            format=T.TOURNAMENT_FORMAT_DUPLICATE,
            request_id="dup-1",
            clock=T.ClockPolicy(move_clock_ms=5_000, time_bank_ms=1_000),
        ),
        metadata=organiser(),
    )
    tid = created.tournament.tournament_id
    assert created.tournament.matches_total == 2  # one set: both seatings
    assert created.tournament.seeded
    again = await server.tournaments.CreateTournament(
        create_request(
            format=T.TOURNAMENT_FORMAT_DUPLICATE,
            request_id="dup-1",
            clock=T.ClockPolicy(move_clock_ms=5_000, time_bank_ms=1_000),
        ),
        metadata=organiser(),
    )
    assert again.duplicate and again.tournament.tournament_id == tid

    events: list[T.WatchTournamentResponse] = []
    sealed_checked = False
    async with asyncio.timeout(60):
        async for event in server.tournaments.WatchTournament(
            T.WatchTournamentRequest(tournament_id=tid)
        ):
            events.append(event)
            kind = event.WhichOneof("kind")
            if kind == "match_started" and event.match_started.fixture == 1:
                # The set's first match has ended, its second runs: both are sealed.
                first = next(
                    e.match_started.match_id
                    for e in events
                    if e.WhichOneof("kind") == "match_started" and e.match_started.fixture == 0
                )
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await server.matches.GetMatchRecord(
                        match_service_pb2.GetMatchRecordRequest(match_id=first)
                    )
                assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert reason(caught.value) == "record_sealed"
                summary = await server.matches.GetMatch(
                    match_service_pb2.GetMatchRequest(match_id=first)
                )
                assert summary.match.status == common_pb2.MATCH_STATUS_FINISHED
                assert list(summary.match.outcome.ranks) == []  # not told before the set ends
                spectate = server.matches.Spectate(
                    match_service_pb2.SpectateRequest(match_id=event.match_started.match_id)
                )
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await spectate.read()
                assert reason(caught.value) == "record_sealed"
                sealed_checked = True
            if kind == "standings":
                break
    assert sealed_checked
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds[0] == "progress" and kinds[-1] == "standings"
    finished = [e.match_finished for e in events if e.WhichOneof("kind") == "match_finished"]
    assert sorted(m.fixture for m in finished) == [0, 1]
    assert all(m.duplicate_set == 1 and len(m.outcome.ranks) == 2 for m in finished)
    standings = events[-1].standings
    assert standings.matches_counted == 2
    assert standings.score_name == "heads" and standings.lower_is_better
    assert {r.participant for r in standings.rows} == {"alice", "bob"}
    assert len(standings.crosstable) == 2
    got = await server.tournaments.GetStandings(T.GetStandingsRequest(tournament_id=tid))
    assert got.standings == standings

    records = [
        r async for r in server.tournaments.ExportRecords(T.ExportRecordsRequest(tournament_id=tid))
    ]
    assert [r.fixture for r in records] == [0, 1]
    assert records[0].record.shuffle_key == records[1].record.shuffle_key
    assert records[0].record.server_seed == records[1].record.server_seed
    assert list(records[0].lineup) == list(reversed(records[1].lineup))
    assert "duplicate set 1" in records[0].record.deal
    direct = await server.matches.GetMatchRecord(
        match_service_pb2.GetMatchRecordRequest(match_id=records[0].record.match_id)
    )
    assert direct.record == records[0].record
    done = await server.tournaments.GetTournament(T.GetTournamentRequest(tournament_id=tid))
    assert done.tournament.status == T.TOURNAMENT_STATUS_FINISHED
    assert done.tournament.matches_finished == 2


async def test_a_seat_assignment_plays_with_its_time_bank(server: Server) -> None:
    token = await server.issue("alice")
    await server.bot("bob")
    lobby = tournament_pb2_grpc.LobbyServiceStub(server.channel)  # type: ignore[no-untyped-call]
    call = lobby.Connect(metadata=(("authorization", f"Bearer {token}"),))
    await call.write(T.ConnectRequest(register=T.Register(games=[GAME], max_concurrent=1)))
    assert (await call.read()).registered.max_concurrent == 1
    created = await server.tournaments.CreateTournament(
        create_request(clock=T.ClockPolicy(move_clock_ms=5_000, time_bank_ms=7_000)),
        metadata=organiser(),
    )
    assignment = (await call.read()).assignment
    assert assignment.tournament_id == created.tournament.tournament_id
    assert (assignment.fixture, assignment.resumed) == (0, False)
    assert (assignment.move_clock_ms, assignment.time_bank_ms) == (5_000, 7_000)
    assert assignment.game == GAME and assignment.seats == 2
    assert dict(assignment.options)["deals"] == "1"
    metadata = (
        ("authorization", f"Bearer {assignment.token}"),
        ("x-match-id", assignment.match_id),
    )
    view = (
        await server.matches.GetView(
            match_service_pb2.GetViewRequest(match_id=assignment.match_id), metadata=metadata
        )
    ).view
    assert view.seat == assignment.seat
    assert assignment.seat in view.to_act  # Take 5 starts with every seat choosing
    assert view.clock.time_bank_ms == 7_000
    assert 11_000 < view.clock.remaining_ms <= 12_000  # move clock plus bank
    # Connecting again gives the running seat again, marked resumed.
    call.cancel()
    again = lobby.Connect(metadata=(("authorization", f"Bearer {token}"),))
    await again.write(T.ConnectRequest(register=T.Register(games=[GAME])))
    assert (await again.read()).WhichOneof("kind") == "registered"
    resumed = (await again.read()).assignment
    assert resumed.resumed
    assert (resumed.match_id, resumed.seat, resumed.token) == (
        assignment.match_id,
        assignment.seat,
        assignment.token,
    )
    cancelled = await server.tournaments.CancelTournament(
        T.CancelTournamentRequest(tournament_id=created.tournament.tournament_id),
        metadata=organiser(),
    )
    assert cancelled.tournament.status == T.TOURNAMENT_STATUS_CANCELLED
    again.cancel()


def test_a_generated_organiser_token_is_written_for_its_owner_only(tmp_path: Any) -> None:
    path = organiser_token_file(tmp_path / "var" / "speeltafel.db")
    assert path.name == "speeltafel.db.organiser-token"
    token = write_organiser_token(path)
    assert len(token) >= 40
    assert path.read_text().strip() == token
    assert path.stat().st_mode & 0o777 == 0o600
    assert write_organiser_token(path) == token  # a restarted server keeps its token
