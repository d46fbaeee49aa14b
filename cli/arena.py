"""A round-robin tournament of the built-in bots through a real server (``speeltafel run``).

It starts ``python -m speeltafel.server`` on an SQLite file as a separate process (so every
move crosses real gRPC) and asks it which games it offers (ListGames). For every chosen
game it plays every lineup of the bots that play that game, at every seat count of the
game's range (optionally capped), with the seats rotated; it verifies every published
match record by replaying it with the engine, and prints per game a standings table with
OpenSkill ratings, 95% confidence intervals and the game's own score, named and oriented
as the game says.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from speeltafel.bots.registry import BOTS, bots_for, check_bot, make_bot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import match_service_pb2
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.engine.verify import verify
from speeltafel.server.wire.common import record_from_proto


@dataclass(frozen=True, slots=True)
class Fixture:
    """One scheduled match: its game and options, and the bots in seat order."""

    number: int
    game: str
    lineup: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Result:
    """One finished match."""

    fixture: Fixture
    match_id: str
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    utilities: tuple[float, ...]
    actions: int
    clock_defaults: int
    verified: bool
    preset_deck: bool = False  # dealt from given deck orders: never rated


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


@dataclass(slots=True)
class Standing:
    """One bot's line in the table."""

    bot: str
    played: int = 0
    wins: float = 0.0
    utilities: list[float] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    mu: float = 25.0
    sigma: float = 25.0 / 3

    def utility_interval(self) -> tuple[float, float]:
        """Mean utility and the half-width of its 95% confidence interval."""
        n = len(self.utilities)
        if n == 0:
            return 0.0, 0.0
        mean = sum(self.utilities) / n
        if n == 1:
            return mean, float("nan")
        variance = sum((u - mean) ** 2 for u in self.utilities) / (n - 1)
        return mean, 1.96 * math.sqrt(variance / n)


def schedule(
    game: str,
    bots: Sequence[str],
    seat_counts: Sequence[int],
    rounds: int,
    options: Sequence[tuple[str, str]] = (),
    first: int = 1,
) -> list[Fixture]:
    """Every lineup of distinct bots at every seat count, each seat rotation once per round,
    numbered from ``first``.

    With fewer bots than seats, the bot list is repeated so that every seat is filled.
    """
    fixtures: list[Fixture] = []
    for _ in range(rounds):
        for seats in seat_counts:
            pool = list(bots) * math.ceil(seats / len(bots))
            lineups = sorted(set(itertools.combinations(sorted(pool), seats)))
            for lineup in lineups:
                for shift in range(seats):
                    rotated = lineup[shift:] + lineup[:shift]
                    number = first + len(fixtures)
                    fixtures.append(Fixture(number, game, rotated, tuple(options)))
    return fixtures


def parse_options(items: Sequence[str]) -> dict[str, str]:
    """``name=value`` pairs (``--option``); ``Refused`` for one without ``=``."""
    options: dict[str, str] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise Refused(f"--option {item!r}: expected NAME=VALUE")
        options[name] = value
    return options


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


async def play_fixture(client: AsyncClient, fixture: Fixture, move_clock_ms: int) -> Result:
    """Create the match, seat the bots, play it out, verify its record."""
    created = await client.create_match(
        fixture.game,
        len(fixture.lineup),
        options=dict(fixture.options),
        move_clock_ms=move_clock_ms,
    )
    # Display names are unique within a match: a bot that plays itself gets its seat added.
    names = [
        name if fixture.lineup.count(name) == 1 else f"{name}-{i}"
        for i, name in enumerate(fixture.lineup)
    ]
    seats = [
        await client.join(created.match_id, seat=i, name=name, entropy=os.urandom(16))
        for i, name in enumerate(names)
    ]
    bots = [
        make_bot(name, seed=fixture.number * 31 + seat.seat, game=fixture.game)
        for seat, name in zip(seats, fixture.lineup, strict=True)
    ]
    finals = await asyncio.gather(
        *(play_seat(client, seat, bot) for seat, bot in zip(seats, bots, strict=True))
    )
    outcome = finals[0].outcome
    record = await client.record(created.match_id)
    problems = verify(record_from_proto(record))
    return Result(
        fixture=fixture,
        match_id=created.match_id,
        scores=tuple(outcome.scores),
        ranks=tuple(outcome.ranks),
        utilities=tuple(outcome.utilities),
        actions=len(record.actions),
        clock_defaults=sum(1 for a in record.actions if a.clock_default),
        verified=not problems,
        preset_deck=record.preset_deck,
    )


def standings(results: Sequence[Result]) -> list[Standing]:
    """Per bot: results and an OpenSkill (Plackett-Luce) rating, in fixture order.

    A match dealt from preset decks (analysis, puzzles, tests) never counts.
    """
    model = PlackettLuce()
    table: dict[str, Standing] = {}
    ratings: dict[str, Any] = {}
    rated = [r for r in results if not r.preset_deck]
    for result in sorted(rated, key=lambda r: r.fixture.number):
        lineup = result.fixture.lineup
        for seat, bot in enumerate(lineup):
            line = table.setdefault(bot, Standing(bot))
            line.played += 1
            winners = sum(1 for r in result.ranks if r == 1)
            line.wins += (1 / winners) if result.ranks[seat] == 1 else 0.0
            line.utilities.append(result.utilities[seat])
            line.scores.append(result.scores[seat])
        # A bot seated twice in one match is rated once, at its better rank.
        best: dict[str, int] = {}
        for seat, bot in enumerate(lineup):
            best[bot] = min(best.get(bot, 99), result.ranks[seat])
        if len(best) < 2:
            continue
        teams = [[ratings.setdefault(bot, model.rating(name=bot))] for bot in best]
        new_ratings = model.rate(teams, ranks=list(best.values()))
        for bot, (rating,) in zip(best, new_ratings, strict=True):
            ratings[bot] = rating
    for bot, rating in ratings.items():
        table[bot].mu, table[bot].sigma = rating.mu, rating.sigma
    return sorted(table.values(), key=lambda s: s.mu - 3 * s.sigma, reverse=True)


def render(
    plan: GamePlan, lines: Sequence[Standing], results: Sequence[Result], elapsed: float
) -> Table:
    """One game's standings as a rich table, its score named and oriented as the game says."""
    actions = sum(r.actions for r in results)
    better = "lower" if plan.lower_is_better else "higher"
    options = ", ".join(f"{k}={v}" for k, v in plan.options)
    table = Table(
        title=f"{plan.name} standings{f' ({options})' if options else ''} - {len(results)} "
        f"matches, {actions} actions in {elapsed:.1f} s",
        caption="rating: OpenSkill Plackett-Luce mu +- 2 sigma, ordered by mu - 3 sigma; "
        "utility: +1 beat everyone .. -1 beaten by everyone, mean +- 95% CI; "
        f"{plan.score_name}: per match, {better} is better",
    )
    for column in ("bot", "played", "wins", "win %", "utility", plan.score_name, "rating"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for line in lines:
        mean, half = line.utility_interval()
        table.add_row(
            line.bot,
            str(line.played),
            f"{line.wins:.1f}",
            f"{100 * line.wins / line.played:.0f}",
            f"{mean:+.2f} +- {half:.2f}",
            f"{sum(line.scores) / len(line.scores):.1f}",
            f"{line.mu:.1f} +- {2 * line.sigma:.1f}",
        )
    return table


async def tournament(
    target: str,
    plan_for: Callable[[Sequence[match_service_pb2.GameInfo]], list[GamePlan]],
    rounds: int,
    move_clock_ms: int,
    concurrency: int,
    console: Console,
) -> tuple[list[GamePlan], list[Result]]:
    """Ask the server for its games, plan them with ``plan_for(offered)``, and play every
    fixture with at most ``concurrency`` matches at once, showing progress."""
    results: list[Result] = []
    gate = asyncio.Semaphore(concurrency)
    async with AsyncClient(target) as client:
        plans: list[GamePlan] = plan_for(await client.list_games())
        fixtures: list[Fixture] = []
        for plan in plans:
            fixtures += schedule(
                plan.game,
                plan.bots,
                plan.seat_counts,
                rounds,
                plan.options,
                first=len(fixtures) + 1,
            )
        for plan in plans:
            options = ", ".join(f"{k}={v}" for k, v in plan.options) or "default options"
            count = sum(1 for f in fixtures if f.game == plan.game)
            console.print(
                f"{plan.name}: {count} matches ({options}; seats "
                f"{','.join(map(str, plan.seat_counts))}) between {', '.join(plan.bots)}"
            )
        columns = (
            TextColumn("[bold]matches"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console, transient=False) as progress:
            task = progress.add_task("matches", total=len(fixtures))

            async def one(fixture: Fixture) -> None:
                async with gate:
                    results.append(await play_fixture(client, fixture, move_clock_ms))
                progress.advance(task)

            await asyncio.gather(*(one(f) for f in fixtures))
    return plans, results


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
        seats = [int(s) for s in args.seats.split(",")] if args.seats else None
    except ValueError as exc:
        console.print(f"speeltafel run: {exc}")
        return 2

    def plan_for(offered: Sequence[match_service_pb2.GameInfo]) -> list[GamePlan]:
        return plan_games(offered, games, bots, options, seats, args.max_seats)

    db = Path(args.db)
    log = db.with_suffix(".log")
    console.print(f"speeltafel: a tournament of {', '.join(bots or BOTS)}; store {db}")
    started = time.monotonic()
    with ServerProcess(db, db.parent, "--log-level", "warning", log_path=log) as server:
        console.print(f"server listening on {server.target} (log: {log})")
        try:
            plans, results = asyncio.run(
                tournament(
                    server.target,
                    plan_for,
                    args.rounds,
                    args.move_clock_ms,
                    args.concurrency,
                    console,
                )
            )
        except Refused as exc:
            console.print(f"speeltafel run: {exc}")
            return 2
    elapsed = time.monotonic() - started
    report: dict[str, Any] = {"matches": [asdict(r) for r in results], "standings": {}}
    for plan in plans:
        played = [r for r in results if r.fixture.game == plan.game]
        lines = standings(played)
        console.print(render(plan, lines, played, elapsed))
        report["standings"][plan.game] = [
            {**asdict(s), "utilities": None, "scores": None} for s in lines
        ]
    unverified = [r.match_id for r in results if not r.verified]
    defaults = sum(r.clock_defaults for r in results)
    console.print(
        f"{len(results) - len(unverified)}/{len(results)} match records verified by replay "
        f"(seed commitment, legality of every action, final state hash); "
        f"{defaults} clock defaults."
    )
    out = Path(args.results)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    console.print(f"results written to {out}")
    return 1 if unverified else 0
