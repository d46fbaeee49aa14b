"""The ``speeltafel`` command: ``serve``, ``play``, ``games``, ``run``, ``bot``,
``tournament`` and ``verify``.

The composition root: it imports the server only inside ``serve`` (its options are parsed
there too), so ``play``, ``games`` and ``run`` never load it. ``run`` starts the server as a
separate process, so its bots reach it only through gRPC.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

import grpc

from speeltafel.bots.registry import BOTS, check_bot, make_bot
from speeltafel.cli.bot import add_arguments as bot_arguments
from speeltafel.cli.tournament import add_arguments as tournament_arguments
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2


def _serve(args: argparse.Namespace) -> int:
    from speeltafel.server.rpc.server import (
        add_serve_arguments,
        configure_logging,
        serve_or_refuse,
    )

    parser = argparse.ArgumentParser(prog="speeltafel serve", description="Run the game server.")
    add_serve_arguments(parser)
    options = parser.parse_args(args.serve_arguments)
    configure_logging(options.log_level)
    return serve_or_refuse(options)  # a refused store: one line on stderr, status 2


async def _play(args: argparse.Namespace) -> int:
    async with AsyncClient(args.server) as client:
        # The game: the joined match's, the one asked for, or the first the server offers.
        if args.match:
            game = (await client.get_match(args.match)).game
        else:
            game = args.game or (await client.list_games())[0].game
        try:
            check_bot(args.bot, game)
            if args.opponents != "none":
                check_bot(args.opponents, game)
        except ValueError as exc:
            print(f"speeltafel play: {exc}", file=sys.stderr)
            return 2
        match_id = args.match
        others: list[Seat] = []
        if not match_id:
            options = dict(item.split("=", 1) for item in args.option)
            created = await client.create_match(
                game, args.seats, options=options, move_clock_ms=args.move_clock_ms
            )
            match_id = created.match_id
            print(
                f"created {game} match {match_id} for {args.seats} seats "
                f"(commitment {created.commitment[:16]}...)"
            )
        seat = await client.join(match_id, name=args.name or args.bot, entropy=os.urandom(16))
        print(f"joined match {match_id} as seat {seat.seat}")
        if not args.match and args.opponents != "none":
            for i in range(args.seats - 1):
                others.append(await client.join(match_id, name=f"{args.opponents}-{i + 1}"))
        elif not args.match:
            print(
                f"waiting for {args.seats - 1} more: speeltafel play --server {args.server} "
                f"--match {match_id} --bot random"
            )

        def show(view: common_pb2.View) -> None:
            if args.verbose:
                print(f"version {view.version}: to act {list(view.to_act)}")

        tasks = [play_seat(client, seat, make_bot(args.bot, game=game), on_view=show)]
        tasks += [play_seat(client, other, make_bot(args.opponents, game=game)) for other in others]
        final, *_ = await asyncio.gather(*tasks)
        outcome = final.outcome
        print(f"match {match_id} over after {final.version - 1} actions")
        for s in range(final.seats):
            marker = "  <- you" if s == seat.seat else ""
            print(f"  seat {s}: score {outcome.scores[s]}, rank {outcome.ranks[s]}{marker}")
        return 0


async def _games(args: argparse.Namespace) -> int:
    async with AsyncClient(args.server) as client:
        for game in await client.list_games():
            print(
                f"{game.game} ({game.name}), rules v{game.rules_version}, "
                f"{game.min_seats}-{game.max_seats} seats"
            )
            for option in game.options:
                print(f"  {option.name}={option.default}  {option.description}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from speeltafel.cli.arena import run

    return run(args)


def _bot(args: argparse.Namespace) -> int:
    from speeltafel.cli.bot import run

    return run(args)


def _tournament(args: argparse.Namespace) -> int:
    from speeltafel.cli.tournament import run

    return run(args)


def _verify(args: argparse.Namespace) -> int:
    from speeltafel.cli.verify import run

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``speeltafel``."""
    parser = argparse.ArgumentParser(
        prog="speeltafel",
        description="speeltafel: a gRPC game server for card games, its bots and tournaments.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    # The server's own options are parsed inside _serve: building this parser loads no server.
    serve = commands.add_parser(
        "serve",
        help="run the game server (speeltafel serve --help: its options)",
        add_help=False,
        prefix_chars="\0",  # every argument, --help too, goes to the server's parser
    )
    serve.add_argument("serve_arguments", nargs=argparse.REMAINDER)
    serve.set_defaults(handler=_serve)

    play = commands.add_parser("play", help="connect a built-in bot to a server and play")
    play.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT")
    play.add_argument(
        "--game", help="the game of a new match (default: the first the server offers)"
    )
    play.add_argument("--bot", default="random", choices=sorted(BOTS))
    play.add_argument("--match", help="join this match instead of creating one")
    play.add_argument("--seats", type=int, default=2, help="seats of a created match")
    play.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a game option of a created match (repeatable)",
    )
    play.add_argument(
        "--opponents",
        default="random",
        choices=[*sorted(BOTS), "none"],
        help="bot for the other seats of a created match; none: wait for others",
    )
    play.add_argument("--move-clock-ms", type=int, default=0)
    play.add_argument("--name", default="")
    play.add_argument("--verbose", action="store_true")
    play.set_defaults(handler=lambda a: asyncio.run(_play(a)))

    games = commands.add_parser("games", help="list the games a server offers")
    games.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT")
    games.set_defaults(handler=lambda a: asyncio.run(_games(a)))

    run = commands.add_parser(
        "run", help="a tournament of the built-in bots through a server and its lobby"
    )
    run.add_argument(
        "--game",
        action="append",
        default=[],
        help="a game to play (repeatable; default: every game the server offers)",
    )
    run.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="[GAME:]NAME=VALUE",
        help="a game option, for every chosen game that has it, or for GAME only (repeatable)",
    )
    run.add_argument(
        "--bots",
        default="",
        help="comma-separated bot names (default: every bot that plays the game)",
    )
    run.add_argument(
        "--seats", default="", help="seat counts to play (default: the game's whole range)"
    )
    run.add_argument("--max-seats", type=int, help="cap the seat counts at this")
    run.add_argument("--rounds", type=int, default=3, help="times each fixture list is played")
    run.add_argument("--db", default="var/arena.db", help="the SQLite file of its own server")
    run.add_argument("--move-clock-ms", type=int, default=10_000)
    run.add_argument("--concurrency", type=int, default=8, help="matches at once per bot")
    run.add_argument(
        "--format",
        choices=["duplicate", "gauntlet", "round-robin"],
        default="duplicate",
        help="the tournaments' format (default duplicate deals)",
    )
    run.add_argument(
        "--max-matches", type=int, default=0, help="cap per tournament (0: the whole schedule)"
    )
    run.add_argument("--seed", default="", help="an organiser's seed: reproducible deals")
    run.add_argument("--results", default="var/results.json", help="where to write JSON results")
    run.set_defaults(handler=_run)

    bot = commands.add_parser(
        "bot",
        help="a built-in bot in a server's lobby, seated by the tournament director",
        description="Connect a built-in bot to a server's lobby with a bot token and play "
        "every seat the tournament director gives it, several at once if asked.",
    )
    bot_arguments(bot)
    bot.set_defaults(handler=_bot)

    tournament = commands.add_parser(
        "tournament",
        help="organise tournaments: bot tokens, create, watch, standings, export",
        description="The organiser's commands (issue-token, create, cancel need the organiser "
        "token) and the reading ones (list, show, watch, standings, export).",
    )
    tournament_arguments(tournament)
    tournament.set_defaults(handler=_tournament)

    check = commands.add_parser(
        "verify",
        help="verify match records: seed, deal, every action, final state hash",
        description="Check finished matches' records without trusting the server: the seed "
        "against its commitment, the deal recomputed from seed and entropy, every action "
        "replayed, the final state hash and the outcome. Exit status 0: all verify.",
    )
    check.add_argument(
        "records",
        nargs="+",
        metavar="RECORD",
        help="a record file (JSON, JSON Lines or binary MatchRecord) or a match id",
    )
    check.add_argument("--server", help="HOST:PORT to fetch match ids from (127.0.0.1:50051)")
    check.add_argument("--quiet", action="store_true", help="print only failures and a total")
    check.set_defaults(handler=_verify)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``speeltafel`` command."""
    args = build_parser().parse_args(argv)
    try:
        sys.exit(args.handler(args))
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        print(f"speeltafel: {code}: {details}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
