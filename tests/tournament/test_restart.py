"""A tournament through a server process that is killed (SIGKILL) in the middle: finished
matches are kept, running ones resume, the director goes on, the bots (the SDK's lobby
client) reconnect and pick their seats up again, and the final standings equal those of
an uninterrupted run with the same organiser's seed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest

from speeltafel.bots.first_bot import FirstBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.lobby import LobbyClient
from speeltafel.sdk.v1 import tournament_pb2, tournament_pb2_grpc

pytestmark = pytest.mark.slow

ORGANISER = "restart-organiser"
BOTS = ("alice", "bob", "carol")
T = tournament_pb2


def organiser() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {ORGANISER}"),)


async def watch(target: str, tid: str, kill_after: int | None) -> T.Standings | None:
    """Follow the tournament; return the final standings, or None once ``kill_after``
    matches have finished (the caller then kills the server)."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
        finished = 0
        async for event in stub.WatchTournament(T.WatchTournamentRequest(tournament_id=tid)):
            kind = event.WhichOneof("kind")
            if kind == "match_finished":
                finished += 1
                if kill_after is not None and finished >= kill_after:
                    return None
            if kind == "standings":
                standings: T.Standings = event.standings
                return standings
    raise AssertionError("the watch ended without standings")


async def run(workdir: Path, name: str, kill_after: int | None) -> list[tuple[Any, ...]]:
    process = ServerProcess(workdir / f"{name}.db", workdir, "--organiser-token", ORGANISER)
    await process.start_async()
    lobbies: list[LobbyClient] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        async with grpc.aio.insecure_channel(process.target) as channel:
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
            tokens = {}
            for bot in BOTS:
                issued = await stub.IssueBotToken(
                    T.IssueBotTokenRequest(bot_name=bot), metadata=organiser()
                )
                tokens[bot] = issued.token
            created = await stub.CreateTournament(
                T.CreateTournamentRequest(
                    name="restart",
                    game="take5",
                    options={"edition": "trial", "deals": "2"},
                    format=T.TOURNAMENT_FORMAT_ROUND_ROBIN,
                    participants=list(BOTS),
                    seats=2,
                    seed=b"the same seed in both runs",
                    clock=T.ClockPolicy(move_clock_ms=10_000),
                ),
                metadata=organiser(),
            )
        tid = created.tournament.tournament_id
        for bot in BOTS:
            lobby = LobbyClient(
                process.target,
                tokens[bot],
                lambda _a: FirstBot(),
                games=["take5"],
                max_concurrent=2,
            )
            lobbies.append(lobby)
            tasks.append(asyncio.ensure_future(lobby.run()))
        async with asyncio.timeout(90):
            standings = await watch(process.target, tid, kill_after)
            if standings is None:
                process.kill()
                await process.start_async()  # the same port: the bots reconnect on their own
                standings = await watch(process.target, tid, None)
        assert standings is not None
        if kill_after is not None:
            assert sum(lobby.stats.connects for lobby in lobbies) > len(BOTS)
        assert standings.matches_counted == 6
        return [
            (r.place, r.participant, r.matches, r.rating, r.mean_utility, r.mean_score)
            for r in standings.rows
        ] + [(p.participant, p.opponent, p.matches, p.mean_utility) for p in standings.crosstable]
    finally:
        for lobby in lobbies:
            lobby.stop(drain=False)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        process.stop()


async def test_standings_after_a_sigkill_equal_an_uninterrupted_run(tmp_path: Path) -> None:
    uninterrupted = await run(tmp_path, "plain", kill_after=None)
    interrupted = await run(tmp_path, "killed", kill_after=2)
    assert interrupted == uninterrupted
