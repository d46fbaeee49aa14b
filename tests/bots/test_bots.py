"""Every built-in bot finishes every game against the real server, and the CLI works."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from speeltafel.bots.registry import BOTS, bots_for, make_bot
from speeltafel.cli.arena import Refused, plan_games
from speeltafel.sdk import AsyncClient, play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
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


BOT_GAMES = [(bot, game) for game in sorted(GAMES) for bot in bots_for(game)]


@pytest.mark.parametrize(("bot", "game"), BOT_GAMES)
async def test_bot_finishes_every_seat_count(running: Running, game: str, bot: str) -> None:
    info = GAMES[game].info
    async with AsyncClient(f"127.0.0.1:{running.port}") as client:
        for seats in range(info.min_seats, min(info.max_seats, 4) + 1):
            created = await client.create_match(game, seats)
            joined = [await client.join(created.match_id, name=f"s{i}") for i in range(seats)]
            # The bot under test in seat 0, random bots elsewhere.
            bots = [make_bot(bot, 1, game)] + [make_bot("random", i) for i in range(1, seats)]
            finals = await asyncio.gather(
                *(play_seat(client, s, b) for s, b in zip(joined, bots, strict=True))
            )
            for final in finals:
                assert final.status == common_pb2.MATCH_STATUS_FINISHED
                assert len(final.outcome.scores) == seats
            record = await client.record(created.match_id)
            assert not any(a.clock_default for a in record.actions), "bots must act in time"


async def test_gap_bot_beats_random_over_a_series(running: Running) -> None:
    """The heuristic is real: over 12 two-seat matches it scores fewer heads than random."""
    gap_heads = random_heads = 0
    async with AsyncClient(f"127.0.0.1:{running.port}") as client:
        for number in range(12):
            created = await client.create_match("take5", 2)
            gap_seat = number % 2
            seats = [await client.join(created.match_id, seat=s) for s in range(2)]
            bots = [make_bot("gap" if s == gap_seat else "random", number) for s in range(2)]
            final, _ = await asyncio.gather(
                *(play_seat(client, s, b) for s, b in zip(seats, bots, strict=True))
            )
            gap_heads += final.outcome.scores[gap_seat]
            random_heads += final.outcome.scores[1 - gap_seat]
    assert gap_heads < random_heads


def test_every_bot_plays_a_game_and_the_baselines_play_all() -> None:
    assert all(any(BOTS[bot].plays(game) for game in GAMES) for bot in BOTS)
    assert BOTS["random"].plays("a game nobody wrote yet")
    assert BOTS["first"].plays("a game nobody wrote yet")
    assert not BOTS["gap"].plays("a game nobody wrote yet")
    assert all(BOTS["search"].plays(game) for game in GAMES)


def test_a_bot_is_refused_for_a_game_it_does_not_play() -> None:
    with pytest.raises(ValueError, match=r"'gap' does not play 'another'.*random, first"):
        make_bot("gap", 1, "another")
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("nobody")


async def _run_cli(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "speeltafel.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=90)
    assert process.returncode is not None
    return process.returncode, out.decode()


async def test_cli_play_creates_a_match_and_plays_it(running: Running) -> None:
    code, out = await _run_cli(
        "play",
        "--server",
        f"127.0.0.1:{running.port}",
        "--game",
        "take5",
        "--bot",
        "gap",
        "--seats",
        "3",
    )
    assert code == 0, out
    assert "joined match" in out and "over after" in out
    assert out.count("seat ") >= 3


async def test_cli_games_lists_take5(running: Running) -> None:
    code, out = await _run_cli("games", "--server", f"127.0.0.1:{running.port}")
    assert code == 0, out
    assert "take5 (Take 5)" in out and "edition=trial" in out


async def test_cli_run_takes_game_options_and_caps_the_seats(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    code, out = await _run_cli(
        "run",
        "--game",
        "take5",
        "--option",
        "take5:edition=full",
        "--option",
        "take5:deals=1",
        "--rounds",
        "1",
        "--max-seats",
        "2",
        "--bots",
        "first,random",
        "--db",
        str(tmp_path / "arena.db"),
        "--results",
        str(results),
    )
    assert code == 0, out
    data = json.loads(results.read_text())
    assert [(t["game"], t["seats"]) for t in data["tournaments"]] == [("take5", 2)]
    assert len(data["matches"]) == 2  # one pair, one duplicate set: both seat orders
    assert all(match["verified"] for match in data["matches"])
    for match in data["matches"]:
        assert {"deals": "1", "edition": "full"}.items() <= match["options"].items()


async def test_cli_refuses_a_bot_for_a_game_it_does_not_play(tmp_path: Path) -> None:
    code, out = await _run_cli("run", "--game", "take5", "--bots", "gap,nobody")
    assert code == 2 and "unknown bot 'nobody'" in out
    code, out = await _run_cli("play", "--game", "another", "--bot", "gap")
    assert code == 2 and "'gap' does not play 'another'" in out


def _game_info(**fields: object) -> match_service_pb2.GameInfo:
    return match_service_pb2.GameInfo(**fields)  # type: ignore[arg-type]


def test_plan_games_follows_the_game_info() -> None:
    offered = [
        _game_info(game="solo", name="Solo", min_seats=1, max_seats=6),
        _game_info(
            game="take5",
            name="Take 5",
            min_seats=2,
            max_seats=4,
            options=[match_service_pb2.OptionSpec(name="edition", default="trial")],
            seat_ranges=[
                match_service_pb2.SeatRange(
                    option="edition", value="trial", min_seats=2, max_seats=4
                ),
                match_service_pb2.SeatRange(
                    option="edition", value="full", min_seats=2, max_seats=10
                ),
            ],
        ),
    ]
    solo, take5 = plan_games(offered, None, None, {}, None, None)
    assert solo.seat_counts == (1, 2, 3, 4, 5, 6)
    assert solo.bots == ("random", "first")  # only the bots that play an unknown game
    assert solo.score_name == "points" and not solo.lower_is_better
    assert take5.seat_counts == (2, 3, 4) and "gap" in take5.bots
    assert take5.lower_is_better  # from the engine, or the server's entry
    (full,) = plan_games(offered, ["take5"], None, {"edition": "full"}, None, 5)
    assert full.seat_counts == (2, 3, 4, 5) and full.options == (("edition", "full"),)
    with pytest.raises(Refused, match="does not offer"):
        plan_games(offered, ["nope"], None, {}, None, None)
    with pytest.raises(Refused, match="no chosen game has the option"):
        plan_games(offered, None, None, {"colour": "red"}, None, None)
    with pytest.raises(ValueError, match="'gap' does not play 'solo'"):
        plan_games(offered, ["solo"], ["gap"], {}, None, None)
    with pytest.raises(Refused, match="takes 2-4 seats"):
        plan_games(offered, ["take5"], None, {}, [7], None)


def test_cli_play_never_loads_the_server() -> None:
    """``speeltafel play`` imports the client side only: the server is for ``serve``."""
    code = (
        "import sys\n"
        "from speeltafel.cli.main import main\n"
        "try:\n"
        "    main(['play', '--server', '127.0.0.1:1', '--game', 'another', '--bot', 'gap'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 2, exit.code\n"
        "import speeltafel.cli.arena\n"
        "loaded = [m for m in sys.modules if m.startswith(('speeltafel.server.app',\n"
        "    'speeltafel.server.rpc', 'speeltafel.server.store'))]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
