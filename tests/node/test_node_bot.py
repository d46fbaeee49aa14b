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
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from speeltafel.bots.first_bot import FirstBot
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2
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
