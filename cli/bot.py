"""``speeltafel bot``: a built-in bot in a server's lobby, seated by the tournament director.

    speeltafel bot --server HOST:PORT --bot-token T --bot gap [--concurrency 4]

The token comes from ``--bot-token`` or the environment variable ``SPEELTAFEL_BOT_TOKEN``
(which keeps it out of the process list). The bot offers every game the server has that
it plays (or those named with ``--game``), takes up to ``--concurrency`` matches at once
and plays each with a fresh bot seeded from the match's fixture, the seat and the bot's
registered name (:func:`speeltafel.sdk.lobby.match_seed`), so a tournament created with an
organiser's seed replays move for move. It reconnects after a dropped connection and stops
on SIGINT/SIGTERM: the first lets running matches finish, a second abandons them.

Exit status: 0 after a clean stop, 1 when the server refuses the bot for good (unknown
token, replaced by another connection with the same token), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time

from speeltafel.bots.registry import BOTS, bots_for, check_bot, make_bot
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.lobby import LobbyClient, LobbyRefused, match_seed
from speeltafel.sdk.runner import Bot
from speeltafel.sdk.v1 import tournament_pb2

BOT_TOKEN_ENV = "SPEELTAFEL_BOT_TOKEN"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``speeltafel bot``."""
    parser.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT")
    parser.add_argument(
        "--bot-token", default="", help=f"the bot token (default: ${BOT_TOKEN_ENV})"
    )
    parser.add_argument("--bot", default="random", choices=sorted(BOTS), help="which bot plays")
    parser.add_argument("--concurrency", type=int, default=1, help="matches at once (>= 1)")
    parser.add_argument(
        "--game",
        action="append",
        default=[],
        help="a game to offer (repeatable; default: every game the server has that it plays)",
    )
    parser.add_argument(
        "--entropy",
        default="",
        help="bytes mixed into this bot's deals: hex, or 'random' (default: none, so an "
        "organiser's seed alone fixes the deals)",
    )
    parser.add_argument("--quiet", action="store_true", help="log only refusals and failures")


def _entropy(text: str) -> bytes:
    if not text:
        return b""
    if text == "random":
        return os.urandom(16)
    try:
        value = bytes.fromhex(text)
    except ValueError:
        raise ValueError("--entropy: expected hex digits or 'random'") from None
    if len(value) > 64:
        raise ValueError("--entropy: at most 64 bytes")
    return value


async def offered_games(server: str, bot: str, wanted: list[str]) -> list[str]:
    """The games to register for: those named (each checked against the bot), else every
    game the server offers that the bot plays."""
    for game in wanted:
        check_bot(bot, game)
    if wanted:
        return wanted
    async with AsyncClient(server) as client:
        offered = [info.game for info in await client.list_games()]
    return [game for game in offered if bot in bots_for(game, [bot])]


async def serve_bot(args: argparse.Namespace, token: str) -> int:
    """Stay in the lobby until a signal; returns the exit status."""
    games = await offered_games(args.server, args.bot, args.game)
    if not games:
        print(f"speeltafel bot: {args.bot} plays none of the server's games", file=sys.stderr)
        return 2

    def log(text: str) -> None:
        if not args.quiet or "failed" in text:
            print(f"{time.strftime('%H:%M:%S')} {args.bot}: {text}", flush=True)

    def new_bot(assignment: tournament_pb2.SeatAssignment) -> Bot:
        # The registered name (the participant), so two participants running the same
        # built-in bot play differently, and the same participant the same every run.
        name = lobby.registered.bot_name if lobby.registered is not None else args.bot
        return make_bot(args.bot, seed=match_seed(assignment, name), game=assignment.game)

    lobby = LobbyClient(
        args.server,
        token,
        new_bot,
        games=games,
        max_concurrent=args.concurrency,
        client=f"speeltafel bot --bot {args.bot} (python)",
        entropy=_entropy(args.entropy),
        on_event=log,
    )
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            log("stopping: running matches play to their end (again to abandon them)")
        lobby.stop(drain=signals == 1)

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal)
    try:
        await lobby.run()
    except LobbyRefused as exc:
        print(f"speeltafel bot: {exc}", file=sys.stderr)
        return 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    log(f"stopped after {lobby.stats.finished} matches ({lobby.stats.failed} failed)")
    return 0


def run(args: argparse.Namespace) -> int:
    """``speeltafel bot``: the exit status."""
    token = args.bot_token or os.environ.get(BOT_TOKEN_ENV, "")
    if not token:
        print(f"speeltafel bot: a bot token is needed (--bot-token or ${BOT_TOKEN_ENV})")
        return 2
    try:
        if args.concurrency < 1:
            raise ValueError("--concurrency must be at least 1")
        _entropy(args.entropy)
        return asyncio.run(serve_bot(args, token))
    except ValueError as exc:
        print(f"speeltafel bot: {exc}", file=sys.stderr)
        return 2
