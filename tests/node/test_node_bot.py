"""The Node.js bot (bots/node) plays a seat through a real server against the Python SDK.

It proves the protocol as docs/protocol.md describes it to a bot author in another
language: the bot knows only the .proto files. It drops its own stream once (and resumes
with since_version, re-sending its action in flight with the same request id) and re-sends
one acknowledged action (answered ``duplicate``); the match record must hold each of its
actions exactly once.

Node.js 18+ and npm are required: without them this test fails (CI machines have them).
The bot's packages are installed with ``npm ci`` from its lockfile into
bots/node/node_modules, once per lockfile (a stamp file remembers which).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from speeltafel.bots.first_bot import FirstBot
from speeltafel.cli.verify import check_record
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.lobby import LobbyClient
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, tournament_pb2, tournament_pb2_grpc
from speeltafel.server.rpc.limits import LimitsConfig
from speeltafel.server.rpc.server import start_server
from speeltafel.server.store.memory import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
BOT_DIR = ROOT / "bots" / "node"
STAMP = BOT_DIR / "node_modules" / ".speeltafel-lock-sha256"
PLAY_TIMEOUT_S = 30.0
NODE_SEAT = 0
DROP_AFTER = 6


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` is not on PATH: the Node.js bot test needs Node.js 18+ and npm "
            "(CI machines have them; e.g. `apt-get install nodejs npm`)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def node_bot() -> list[str]:
    """The command that runs bots/node/bot.js, its packages installed from the lockfile."""
    node = _tool("node")
    npm = _tool("npm")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    major = int(version.stdout.strip().lstrip("v").split(".")[0])
    if major < 18:
        pytest.fail(f"Node.js 18+ is needed, found {version.stdout.strip()}", pytrace=False)
    lock = hashlib.sha256((BOT_DIR / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.is_file() or STAMP.read_text().strip() != lock:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=BOT_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci failed in {BOT_DIR}:\n{done.stderr[-4000:]}", pytrace=False)
        STAMP.write_text(lock + "\n")
    return [node, str(BOT_DIR / "bot.js")]


async def _run_node(command: list[str]) -> tuple[dict[str, Any], str]:
    """Run the Node bot to its end; its JSON report and its log."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), PLAY_TIMEOUT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    log = err.decode(errors="replace")
    assert process.returncode == 0, f"the Node bot failed ({process.returncode}):\n{log}"
    lines = out.decode().strip().splitlines()
    assert lines, f"the Node bot printed no report:\n{log}"
    report: dict[str, Any] = json.loads(lines[-1])
    return report, log


async def test_node_bot_plays_a_take5_seat_against_the_python_sdk(node_bot: list[str]) -> None:
    running = await start_server(MemoryStore(), port=0)
    target = f"127.0.0.1:{running.port}"
    try:
        async with AsyncClient(target) as client:
            created = await client.create_match("take5", seats=2)
            match_id = created.match_id
            node = asyncio.create_task(
                _run_node(
                    [
                        *node_bot,
                        "--server",
                        target,
                        "--match",
                        match_id,
                        "--seat",
                        str(NODE_SEAT),
                        "--name",
                        "node",
                        "--seed",
                        "7",
                        "--drop-after",
                        str(DROP_AFTER),
                        "--resend",
                        "--verbose",
                    ]
                )
            )
            seat = await client.join(match_id, seat=1 - NODE_SEAT, name="python")
            stats = RunStats()
            final = await asyncio.wait_for(
                play_seat(client, seat, FirstBot(), stats=stats), PLAY_TIMEOUT_S
            )
            report, log = await node

            summary = await client.get_match(match_id)
            record = await client.record(match_id)
    finally:
        await running.stop(0.1)

    # Both seats finished the same match at the same final version.
    assert final.status == common_pb2.MATCH_STATUS_FINISHED
    assert summary.status == common_pb2.MATCH_STATUS_FINISHED
    assert report["seat"] == NODE_SEAT, log
    assert report["final_version"] == summary.version == final.version, log
    assert report["outcome"]["termination"] == "normal"
    assert report["outcome"]["scores"] == list(record.outcome.scores)
    # It checked the record itself: the revealed seed against the commitment, its actions.
    assert report["verified"] is True, report["problems"]

    # It lost its stream once and resumed; the re-sent acknowledged action came back as a
    # duplicate (not applied again).
    assert report["reconnects"] >= 1, log
    assert report["resend_duplicate"] is True, log
    assert report["duplicates"] >= 1, log

    # The record holds each of the Node seat's actions exactly once, and nothing else of it.
    mine = [a for a in record.actions if a.seat == NODE_SEAT]
    assert not any(a.clock_default for a in mine), "the Node bot let its clock run out"
    acked_seqs = [entry["seq"] for entry in report["acked"]]
    assert len(acked_seqs) == len(set(acked_seqs)) == report["actions"], log
    assert sorted(acked_seqs) == [a.seq for a in mine], log
    assert len(record.actions) == summary.version - 1
    assert [a.seq for a in record.actions] == list(range(1, summary.version))
    assert stats.actions == len(record.actions) - len(mine)


# --------------------------------------------------------------------------- lobby mode

ORGANISER = "node-test-organiser"


async def _node_lobby(command: list[str], token: str) -> asyncio.subprocess.Process:
    """The Node bot in lobby mode, its bot token in the environment (not on its command
    line, as an operator would run it)."""
    return await asyncio.create_subprocess_exec(
        *command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "SPEELTAFEL_BOT_TOKEN": token},
    )


async def test_node_bot_is_seated_by_the_tournament_director(node_bot: list[str]) -> None:
    """Lobby mode: the Node bot registers with its bot token, plays every seat the director
    pushes (several at once), and its matches count in the standings like a Python bot's."""
    running = await start_server(MemoryStore(), limits=LimitsConfig(organiser_token=ORGANISER))
    target = f"127.0.0.1:{running.port}"
    organiser = (("authorization", f"Bearer {ORGANISER}"),)
    lobby: LobbyClient | None = None
    task: asyncio.Task[None] | None = None
    try:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
            tokens = {
                name: (
                    await stub.IssueBotToken(
                        tournament_pb2.IssueBotTokenRequest(bot_name=name), metadata=organiser
                    )
                ).token
                for name in ("node", "python")
            }
            created = await stub.CreateTournament(
                tournament_pb2.CreateTournamentRequest(
                    game="take5",
                    options={"edition": "trial", "deals": "1"},
                    format=tournament_pb2.TOURNAMENT_FORMAT_DUPLICATE,
                    participants=["node", "python"],
                    seats=2,
                    rounds=2,
                    seed=b"node lobby",
                    clock=tournament_pb2.ClockPolicy(move_clock_ms=10_000),
                ),
                metadata=organiser,
            )
            tournament_id = created.tournament.tournament_id
            total = created.tournament.matches_total
            assert total == 4  # two duplicate sets of two seatings
            node = await _node_lobby(
                [*node_bot, "--server", target, "--games", "take5", "--concurrency", "2",
                 "--seed", "5", "--max-matches", str(total), "--verbose"],
                tokens["node"],
            )  # fmt: skip
            lobby = LobbyClient(
                target, tokens["python"], lambda _a: FirstBot(), games=["take5"], max_concurrent=2
            )
            task = asyncio.ensure_future(lobby.run())
            out, err = await asyncio.wait_for(node.communicate(), 4 * PLAY_TIMEOUT_S)
            log = err.decode(errors="replace")
            assert node.returncode == 0, log
            standings = (
                await stub.GetStandings(
                    tournament_pb2.GetStandingsRequest(tournament_id=tournament_id)
                )
            ).standings
            records = [
                item
                async for item in stub.ExportRecords(
                    tournament_pb2.ExportRecordsRequest(tournament_id=tournament_id)
                )
            ]
    finally:
        if lobby is not None:
            lobby.stop(drain=False)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        await running.stop(0.1)

    reports = [json.loads(line) for line in out.decode().strip().splitlines()]
    assert "registered as node" in log
    assert sorted(r["fixture"] for r in reports) == list(range(total)), log
    for report in reports:
        assert report["tournament_id"] == tournament_id
        assert report["outcome"]["termination"] == "normal"
        # A duplicate set's record is sealed until its set ends: checked then, or later.
        assert report["verified"] is True or report.get("sealed") is True, report
    assert standings.matches_counted == total
    assert {row.participant for row in standings.rows} == {"node", "python"}
    assert all(row.matches == total for row in standings.rows)
    assert len(records) == total
    for item in records:
        assert check_record(item.record) == [], item.fixture
        node_seat = list(item.lineup).index("node")
        assert any(a.seat == node_seat and not a.clock_default for a in item.record.actions)


async def test_node_bot_with_an_unknown_bot_token_is_refused(node_bot: list[str]) -> None:
    running = await start_server(MemoryStore(), limits=LimitsConfig(organiser_token=ORGANISER))
    try:
        node = await _node_lobby(
            [*node_bot, "--server", f"127.0.0.1:{running.port}", "--games", "take5"], "bogus"
        )
        _, err = await asyncio.wait_for(node.communicate(), PLAY_TIMEOUT_S)
    finally:
        await running.stop(0.1)
    assert node.returncode == 1
    assert "lobby refused: UNAUTHENTICATED" in err.decode()
