"""End to end: a duplicate-deal tournament of every game through a real server process,
the bots in the lobby from processes of their own (``speeltafel bot`` and the Node.js
bot), organised with the ``speeltafel tournament`` command, every record verified with
``speeltafel verify``.

Everything crosses real gRPC between separate processes, as it does for an organiser on
one machine and bot authors on others; the organiser token is found where ``speeltafel
serve`` writes it (beside its database).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from speeltafel.cli.server_process import ServerProcess
from speeltafel.server.engine.registry import GAMES

NODE_DIR = Path(__file__).resolve().parents[2] / "bots" / "node"
CLI = [sys.executable, "-m", "speeltafel.cli"]
TIMEOUT_S = 240.0
# pytest-timeout's default (120 s, pyproject.toml) would end a test before its own deadline
# above, which says what is unfinished: about 30 s alone, it took over 120 s on a host
# with three test workers on two cores.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(TIMEOUT_S + 120)]
# Python bots by participant name: (built-in bot); "node" is the Node.js bot.
PYTHON_BOTS = {"first": "first", "random": "random", "random2": "random"}


def cli(*args: str, timeout: float = 60.0) -> str:
    """Run ``speeltafel ARGS``; its stdout (the test fails with its stderr otherwise)."""
    done = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"speeltafel {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def lineup_for(game: str) -> list[str]:
    """The participants of a game's tournament: the Node bot and Python bots, as many as
    the game's smallest table needs (at least three, so lineups vary)."""
    low = GAMES[game].info.seats_for({})[0]
    names = ["node", *PYTHON_BOTS]
    return names[: max(3, low)]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerProcess, Path]]:
    db = tmp_path / "e2e.db"
    process = ServerProcess(db, tmp_path, "--log-level", "warning")
    env_token = os.environ.pop("SPEELTAFEL_ORGANISER_TOKEN", None)
    try:
        process.start()
        yield process, db
    finally:
        process.stop()
        if env_token is not None:
            os.environ["SPEELTAFEL_ORGANISER_TOKEN"] = env_token


def test_a_duplicate_tournament_of_every_game_with_bots_from_other_processes(
    server: tuple[ServerProcess, Path], tmp_path: Path, node_bot: list[str]
) -> None:
    process, db = server
    target = process.target
    organiser = ("--server", target, "--db", str(db))
    tokens = {
        name: cli("tournament", "issue-token", *organiser, name).strip()
        for name in ["node", *PYTHON_BOTS]
    }
    bots: list[subprocess.Popen[bytes]] = []
    logs = {name: (tmp_path / f"{name}.log").open("wb") for name in tokens}
    try:
        for name, bot in PYTHON_BOTS.items():
            bots.append(
                subprocess.Popen(
                    [*CLI, "bot", "--server", target, "--bot", bot, "--concurrency", "3"],
                    env={**os.environ, "SPEELTAFEL_BOT_TOKEN": tokens[name]},
                    stdout=logs[name],
                    stderr=subprocess.STDOUT,
                )
            )
        bots.append(
            subprocess.Popen(
                [*node_bot, "--server", target, "--concurrency", "3", "--seed", "1"],
                env={**os.environ, "SPEELTAFEL_BOT_TOKEN": tokens["node"]},
                stdout=logs["node"],
                stderr=subprocess.STDOUT,
            )
        )
        created = {}
        for game in sorted(GAMES):
            created[game] = cli(
                "tournament", "create", *organiser, "--game", game, "--format", "duplicate",
                "--participants", ",".join(lineup_for(game)), "--seed", f"e2e {game}",
                "--move-clock-ms", "20000", "--quiet",
            ).strip()  # fmt: skip
        deadline = time.monotonic() + TIMEOUT_S
        finished: set[str] = set()
        while len(finished) < len(created):
            assert time.monotonic() < deadline, f"unfinished: {set(created) - finished}"
            for bot in bots:
                assert bot.poll() is None, "a bot process ended early"
            listed = cli("tournament", "list", "--server", target).splitlines()
            for game, tournament_id in created.items():
                if any(t.startswith(tournament_id) and "; finished," in t for t in listed):
                    finished.add(game)
            time.sleep(1.0)
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            try:
                bot.wait(timeout=20)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()
        for log in logs.values():
            log.close()

    node_reports = [
        json.loads(line)
        for line in (tmp_path / "node.log").read_text().splitlines()
        if line.startswith("{")
    ]
    for game, tournament_id in created.items():
        standings = json.loads(
            cli("tournament", "standings", "--server", target, tournament_id, "--json")
        )
        participants = lineup_for(game)
        assert standings["matches_counted"] > 0, game
        assert {row["participant"] for row in standings["rows"]} == set(participants)
        # Duplicate sets seat every participant equally often.
        assert len({row["matches"] for row in standings["rows"]}) == 1, standings["rows"]
        assert len(standings["crosstable"]) == len(participants) * (len(participants) - 1)
        jsonl = tmp_path / f"{game}.jsonl"
        cli("tournament", "export", "--server", target, tournament_id, "--jsonl", str(jsonl))
        lines = jsonl.read_text().splitlines()
        assert len(lines) == standings["matches_counted"], game
        verdicts = cli("verify", str(jsonl)).splitlines()
        assert verdicts[-1] == f"{len(lines)} verified, 0 failed", verdicts
        node_matches = [r for r in node_reports if r.get("tournament_id") == tournament_id]
        assert node_matches, f"the Node bot played no match of {game}"
        exported = [json.loads(line) for line in lines]
        decks = {e["record"].get("shuffleKey") for e in exported}
        sets = {e["record"].get("deal", "") for e in exported}
        # Matches of a set share their shuffle key: fewer keys than matches.
        assert len(decks) < len(exported), game
        assert all("duplicate set" in deal for deal in sets), sets


@pytest.fixture(scope="module")
def node_bot() -> list[str]:
    """bots/node/bot.js, its packages installed (tests/node installs them the same way)."""
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    return ["node", str(NODE_DIR / "bot.js")]


def test_speeltafel_run_is_a_verified_lobby_tournament(tmp_path: Path) -> None:
    """``speeltafel run`` (``make run``): its bots in the lobby from processes of their own,
    a tournament per seat count, standings from the server, every record verified."""
    results = tmp_path / "results.json"
    out = cli(
        "run", "--game", "take5", "--bots", "random,gap,greedy", "--seats", "2,3,4",
        "--rounds", "1", "--seed", "run test", "--option", "take5:deals=1",
        "--db", str(tmp_path / "arena.db"),
        "--results", str(results),
        timeout=TIMEOUT_S,
    )  # fmt: skip
    assert "3 bots cannot fill 4 seats; skipped" in out
    data = json.loads(results.read_text())
    assert [(t["game"], t["seats"]) for t in data["tournaments"]] == [("take5", 2), ("take5", 3)]
    # Duplicate sets: three pairs in both seat orders; one trio in all six orders.
    assert len(data["matches"]) == 3 * 2 + 6
    assert all(match["verified"] for match in data["matches"])
    assert all(t["standings"]["game"] == "take5" for t in data["tournaments"])
    for tournament in data["tournaments"]:
        rows = tournament["standings"]["rows"]
        assert {row["participant"] for row in rows} == {"random", "gap", "greedy"}
    assert "12/12 match records verified by replay" in out
    assert "heads: per match, lower is better" in out  # the game's score, named and oriented
    logs = sorted(p.name for p in (tmp_path / "arena.bots").iterdir())
    assert logs == ["gap.log", "greedy.log", "random.log"]  # a process per bot
    assert "stopped after" in (tmp_path / "arena.bots" / "gap.log").read_text()
