"""``speeltafel run``: a short tournament of the built-in bots through a real server.

It starts ``python -m speeltafel.server`` on an SQLite file as a separate process and runs
the tournament the way an organiser and outside bots would: it issues a bot token for every
built-in bot, starts every bot as its own ``speeltafel bot`` process that connects through
the lobby exactly as a bot from anywhere does, and creates one tournament per game and seat
count (``--format``, duplicate deals by default) with the server's tournament director.
It follows them with progress bars, prints per game and seat count the standings the
server computed (OpenSkill ratings, mean utility with 95% intervals, the game's own score
named and oriented as the game says, misses and refused moves) and its crosstable, exports
every record and verifies each by replay (:mod:`speeltafel.cli.verify`), and writes it all
as JSON.

Which games, bots and seat counts: every game the server offers (ListGames), every bot
that plays it, every seat count of the game's range, as narrowed by ``--game``, ``--bots``,
``--seats`` and ``--max-seats``. A tournament seats distinct bots, so a seat count above
the number of bots playing a game is skipped (and said).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.progress import Progress

from speeltafel.bots.registry import BOTS, bots_for, check_bot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.cli.tournament import (
    FORMATS,
    ORGANISER_TOKEN_ENV,
    PROGRESS_COLUMNS,
    crosstable,
    follow,
    organiser_token,
    standings_table,
)
from speeltafel.cli.verify import check_record
from speeltafel.sdk.client import CHANNEL_OPTIONS, AsyncClient
from speeltafel.sdk.v1 import match_service_pb2, tournament_pb2, tournament_pb2_grpc
from speeltafel.server.engine.registry import GAMES

T = tournament_pb2
BOT_STOP_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class GamePlan:
    """What the tournament plays of one game, from its ListGames entry and the arguments."""

    game: str
    name: str
    options: tuple[tuple[str, str], ...]
    seat_counts: tuple[int, ...]
    bots: tuple[str, ...]
    score_name: str
    lower_is_better: bool


class Refused(ValueError):
    """The arguments ask for something the games or bots cannot do."""


def parse_options(items: Sequence[str]) -> dict[str, str]:
    """``name=value`` pairs (``--option``); ``Refused`` for one without ``=``. Items of
    one game (``GAME:NAME=VALUE``) are left to :func:`parse_game_options`."""
    options: dict[str, str] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise Refused(f"--option {item!r}: expected NAME=VALUE or GAME:NAME=VALUE")
        if ":" not in name:
            options[name] = value
    return options


def parse_game_options(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """The options given for one game only (``--option GAME:NAME=VALUE``), by game."""
    by_game: dict[str, dict[str, str]] = {}
    for item in items:
        name, _, value = item.partition("=")
        game, colon, option = name.partition(":")
        if colon:
            if not game or not option:
                raise Refused(f"--option {item!r}: expected GAME:NAME=VALUE")
            by_game.setdefault(game, {})[option] = value
    return by_game


def score_rules(info: match_service_pb2.GameInfo) -> tuple[str, bool]:
    """The game's score name and whether lower is better: from ListGames where the server
    says, else from the engine's GameInfo (``points``, higher is better, for a game this
    install does not know)."""
    # getattr: the fields are new in ListGames; an older server's entry lacks them.
    name = str(getattr(info, "score_name", ""))
    if name:
        return name, bool(getattr(info, "lower_is_better", False))
    engine = GAMES.get(info.game)
    if engine is not None:
        return engine.info.score_name, engine.info.lower_is_better
    return "points", False


def seat_range(info: match_service_pb2.GameInfo, options: Mapping[str, str]) -> tuple[int, int]:
    """The seats a match with these options may have: the ranges ListGames gives for the
    options' values (given or default), else the game's ``min_seats``..``max_seats``."""
    values = {option.name: option.default for option in info.options}
    values.update(options)
    matching = [r for r in info.seat_ranges if values.get(r.option) == r.value]
    if not matching:
        return info.min_seats, info.max_seats
    return max(r.min_seats for r in matching), min(r.max_seats for r in matching)


def plan_games(
    offered: Sequence[match_service_pb2.GameInfo],
    games: Sequence[str] | None,
    bots: Sequence[str] | None,
    options: Mapping[str, str],
    seats: Sequence[int] | None,
    max_seats: int | None,
    game_options: Mapping[str, Mapping[str, str]] | None = None,
) -> list[GamePlan]:
    """What to play of each chosen game (``None``: every game offered, every bot that plays
    it, the game's seat range). ``Refused`` with a clear message for a game the server does
    not offer, a bot named for a game it does not play, an option no chosen game has, or a
    game left with no seat count or fewer than one bot."""
    by_id = {info.game: info for info in offered}
    unknown = [g for g in games or () if g not in by_id]
    if unknown:
        raise Refused(
            f"the server does not offer {', '.join(unknown)}; it offers {', '.join(by_id)}"
        )
    chosen = [by_id[g] for g in games] if games else list(offered)
    for name in bots or ():
        check_bot(name)
    unused = set(options) - {o.name for info in chosen for o in info.options}
    if unused:
        raise Refused(f"no chosen game has the option(s) {', '.join(sorted(unused))}")
    plans: list[GamePlan] = []
    for info in chosen:
        players = bots_for(info.game, bots)
        if bots and games:  # both named: every named bot must play every named game
            for name in bots:
                check_bot(name, info.game)
        if not players:
            raise Refused(f"no chosen bot plays {info.game}")
        own = {k: v for k, v in options.items() if any(o.name == k for o in info.options)}
        for name, value in (game_options or {}).get(info.game, {}).items():
            if not any(o.name == name for o in info.options):
                raise Refused(f"{info.game} has no option {name!r}")
            own[name] = value
        low, high = seat_range(info, own)
        if max_seats is not None:
            high = min(high, max_seats)
        counts = [n for n in (seats or range(low, high + 1)) if low <= n <= high]
        if not counts:
            raise Refused(f"{info.game} takes {low}-{high} seats; none of {list(seats or [])}")
        score_name, lower_is_better = score_rules(info)
        plans.append(
            GamePlan(
                info.game,
                info.name,
                tuple(sorted(own.items())),
                tuple(counts),
                tuple(players),
                score_name,
                lower_is_better,
            )
        )
    return plans


@dataclass(frozen=True, slots=True)
class Planned:
    """One tournament to create: a game at one seat count between its bots."""

    plan: GamePlan
    seats: int


@dataclass(slots=True)
class Outcome:
    """What one tournament gave: its standings and its records' verdicts."""

    planned: Planned
    tournament_id: str
    standings: T.Standings | None = None
    verified: int = 0
    problems: list[str] = field(default_factory=list)
    matches: list[dict[str, Any]] = field(default_factory=list)


def tournaments_of(plans: Sequence[GamePlan], say: Callable[[str], None]) -> list[Planned]:
    """A tournament per game and seat count that its bots can fill; Refused when a game
    is left with none."""
    planned: list[Planned] = []
    for plan in plans:
        counts = [n for n in plan.seat_counts if n <= len(plan.bots)]
        skipped = [n for n in plan.seat_counts if n > len(plan.bots)]
        if skipped:
            say(
                f"{plan.name}: {len(plan.bots)} bots cannot fill "
                f"{', '.join(map(str, skipped))} seats; skipped"
            )
        if not counts:
            raise Refused(f"{plan.game}: {len(plan.bots)} bot(s) cannot fill any seat count")
        planned += [Planned(plan, n) for n in counts]
    return planned


class BotProcesses:
    """One ``speeltafel bot`` process per built-in bot, each with its own token (given in
    its environment, never on a command line), logging beside the database."""

    def __init__(self, target: str, folder: Path) -> None:
        self.target = target
        self.folder = folder
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, bot: str, token: str, games: Sequence[str], concurrency: int) -> None:
        command = [
            sys.executable, "-m", "speeltafel.cli", "bot", "--server", self.target,
            "--bot", bot, "--concurrency", str(concurrency), "--quiet",
        ]  # fmt: skip
        for game in games:
            command += ["--game", game]
        env = {k: v for k, v in os.environ.items() if k != ORGANISER_TOKEN_ENV}
        env["SPEELTAFEL_BOT_TOKEN"] = token
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / f"{bot}.log").open("ab") as log:
            # A session of its own: a Ctrl-C at the terminal reaches the arena alone,
            # which then stops the bots in order (SIGTERM: they leave the lobby).
            self.procs[bot] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,
            )

    def dead(self) -> list[str]:
        """The bots whose process has ended (it should not before the tournaments have)."""
        return [bot for bot, proc in self.procs.items() if proc.poll() is not None]

    def log_tail(self, bot: str, lines: int = 10) -> str:
        try:
            text = (self.folder / f"{bot}.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to all (they leave the lobby), then wait; SIGKILL what stays."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + BOT_STOP_TIMEOUT_S
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


async def _guard(bots: BotProcesses) -> None:
    """Fail the run when a bot process dies: its tournaments could never finish."""
    while True:
        dead = bots.dead()
        if dead:
            raise RuntimeError(f"bot process {dead[0]} ended early:\n{bots.log_tail(dead[0])}")
        await asyncio.sleep(0.5)


async def tournament(
    target: str,
    organiser_token: str,
    plan_for: Callable[[Sequence[match_service_pb2.GameInfo]], list[GamePlan]],
    args: argparse.Namespace,
    bot_folder: Path,
    console: Console,
) -> list[Outcome]:
    """Plan from the server's games, issue tokens, start the bot processes, create the
    tournaments, follow them to the end, then export and verify every record."""
    async with AsyncClient(target) as client:
        plans = plan_for(await client.list_games())
    planned = tournaments_of(plans, console.print)
    organiser = (("authorization", f"Bearer {organiser_token}"),)
    seed = args.seed.encode() if args.seed else b""
    bots = BotProcesses(target, bot_folder)
    async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
        try:
            games_of: dict[str, list[str]] = {}
            for plan in plans:
                for bot in plan.bots:
                    games_of.setdefault(bot, []).append(plan.game)
            for bot, games in games_of.items():
                issued = await stub.IssueBotToken(
                    T.IssueBotTokenRequest(bot_name=bot), metadata=organiser
                )
                bots.start(bot, issued.token, games, args.concurrency)
            outcomes: list[Outcome] = []
            for item in planned:
                plan = item.plan
                created = await stub.CreateTournament(
                    T.CreateTournamentRequest(
                        name=f"{plan.name} {item.seats}p",
                        game=plan.game,
                        options=dict(plan.options),
                        format=FORMATS[args.format],
                        participants=list(plan.bots),
                        seats=item.seats,
                        rounds=args.rounds,
                        max_matches=args.max_matches,
                        clock=T.ClockPolicy(move_clock_ms=args.move_clock_ms),
                        seed=seed,
                    ),
                    metadata=organiser,
                )
                outcomes.append(Outcome(item, created.tournament.tournament_id))
                total = created.tournament.matches_total
                console.print(
                    f"{plan.name}, {item.seats} seats: {total} matches ({args.format}) between "
                    f"{', '.join(plan.bots)}"
                )
            with Progress(*PROGRESS_COLUMNS, console=console) as progress:
                followed: asyncio.Future[Any] = asyncio.gather(
                    *(follow(channel, o.tournament_id, progress) for o in outcomes)
                )
                guard: asyncio.Future[Any] = asyncio.ensure_future(_guard(bots))
                done, _ = await asyncio.wait({followed, guard}, return_when="FIRST_COMPLETED")
                guard.cancel()
                if followed not in done:
                    followed.cancel()
                    guard.result()  # raises the bot's failure
                for outcome, standings in zip(outcomes, followed.result(), strict=True):
                    outcome.standings = standings
        finally:
            await asyncio.to_thread(bots.stop)
        for outcome in outcomes:
            await _verify_records(stub, outcome)
    return outcomes


async def _verify_records(stub: Any, outcome: Outcome) -> None:
    """Export the tournament's records and verify each by replay."""
    stream = stub.ExportRecords(T.ExportRecordsRequest(tournament_id=outcome.tournament_id))
    async for item in stream:
        problems = check_record(item.record)
        record = item.record
        outcome.matches.append(
            {
                "tournament_id": outcome.tournament_id,
                "fixture": item.fixture,
                "match_id": record.match_id,
                "game": record.game,
                "options": dict(sorted(record.options.items())),
                "lineup": list(item.lineup),
                "scores": list(record.outcome.scores),
                "ranks": list(record.outcome.ranks),
                "utilities": list(record.outcome.utilities),
                "termination": record.outcome.termination,
                "actions": len(record.actions),
                "clock_defaults": sum(1 for a in record.actions if a.clock_default),
                "verified": not problems,
            }
        )
        if problems:
            outcome.problems.append(f"match {record.match_id}: {'; '.join(problems)}")
        else:
            outcome.verified += 1


def run(args: argparse.Namespace) -> int:
    """``speeltafel run``: the tournament; returns the process exit status."""
    console = Console()
    try:
        bots = args.bots.split(",") if args.bots else None
        games = args.game or None
        for name in bots or ():
            check_bot(name)
        for game in games or ():  # refused before a server starts, where the engine can tell
            for name in bots or ():
                if game in GAMES:
                    check_bot(name, game)
        options = parse_options(args.option)
        game_options = parse_game_options(args.option)
        seats = [int(s) for s in args.seats.split(",")] if args.seats else None
        if args.concurrency < 1 or args.rounds < 1:
            raise Refused("--concurrency and --rounds must be at least 1")
    except ValueError as exc:
        console.print(f"speeltafel run: {exc}")
        return 2

    def plan_for(offered: Sequence[match_service_pb2.GameInfo]) -> list[GamePlan]:
        unknown = set(game_options) - {info.game for info in offered}
        if unknown:
            raise Refused(f"--option for a game the server does not offer: {sorted(unknown)}")
        return plan_games(offered, games, bots, options, seats, args.max_seats, game_options)

    db = Path(args.db)
    log = db.with_suffix(".log")
    console.print(f"speeltafel: a tournament of {', '.join(bots or BOTS)}; store {db}")
    started = time.monotonic()
    # A fresh store: the bot tokens and tournaments of an earlier run are not this one's.
    for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}.organiser-token")):
        stale.unlink(missing_ok=True)
    with ServerProcess(db, db.parent, log_path=log) as server:  # the default log level
        console.print(f"server listening on {server.target} (log: {log})")
        # The token the server generated and wrote beside its database (mode 0600), as
        # any local organiser tool reads it: never in an environment the bots inherit.
        token = organiser_token("", str(db))
        try:
            outcomes = asyncio.run(
                tournament(
                    server.target,
                    token,
                    plan_for,
                    args,
                    db.with_suffix(".bots"),
                    console,
                )
            )
        except Refused as exc:
            console.print(f"speeltafel run: {exc}")
            return 2
        except RuntimeError as exc:
            console.print(f"speeltafel run: {exc}")
            return 1
    elapsed = time.monotonic() - started
    report: dict[str, Any] = {"elapsed_s": round(elapsed, 1), "tournaments": [], "matches": []}
    for outcome in outcomes:
        planned = outcome.planned
        if outcome.standings is not None:
            title = (
                f"{planned.plan.name}, {planned.seats} seats - "
                f"{outcome.standings.matches_counted} matches"
            )
            console.print(standings_table(outcome.standings, title))
            console.print(crosstable(outcome.standings))
        report["tournaments"].append(
            {
                "tournament_id": outcome.tournament_id,
                "game": planned.plan.game,
                "seats": planned.seats,
                "standings": json_format.MessageToDict(
                    outcome.standings or T.Standings(), preserving_proto_field_name=True
                ),
            }
        )
        report["matches"] += outcome.matches
    matches = len(report["matches"])
    verified = sum(o.verified for o in outcomes)
    defaults = sum(m["clock_defaults"] for m in report["matches"])
    for outcome in outcomes:
        for problem in outcome.problems:
            console.print(f"[red]not verified[/red] {problem}")
    console.print(
        f"{verified}/{matches} match records verified by replay (seed commitment, deal from "
        f"seed and entropy, every action, final state hash, outcome); {defaults} clock "
        f"defaults; {elapsed:.1f} s."
    )
    out = Path(args.results)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    console.print(f"results written to {out}")
    unfinished = [o.tournament_id for o in outcomes if o.standings is None]
    return 1 if verified < matches or unfinished or matches == 0 else 0
