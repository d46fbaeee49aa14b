"""A round-robin tournament of the built-in bots through a real server (``make run``).

It starts ``python -m speeltafel.server`` on an SQLite file as a separate process (so every
move crosses real gRPC), plays every lineup of the chosen bots at 2, 3 and 4 seats with the
seats rotated, verifies every published match record by replaying it with the engine, and
prints a standings table with OpenSkill ratings and 95% confidence intervals.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from speeltafel.bots.registry import BOTS, make_bot
from speeltafel.sdk import AsyncClient, play_seat
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.verify import RecordedMatch, verify


@dataclass(frozen=True, slots=True)
class Fixture:
    """One scheduled match: the bots in seat order."""

    number: int
    lineup: tuple[str, ...]


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


def schedule(bots: Sequence[str], seat_counts: Sequence[int], rounds: int) -> list[Fixture]:
    """Every lineup of distinct bots at every seat count, each seat rotation once per round.

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
                    fixtures.append(Fixture(len(fixtures) + 1, rotated))
    return fixtures


@contextlib.contextmanager
def server_process(db: Path, log_path: Path) -> Iterator[str]:
    """A ``speeltafel.server`` subprocess on ``db``; yields its address and stops it after."""
    db.parent.mkdir(parents=True, exist_ok=True)
    port_file = db.parent / f"arena-{os.getpid()}.port"
    port_file.unlink(missing_ok=True)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "speeltafel.server",
                "--port",
                "0",
                "--db",
                str(db),
                "--port-file",
                str(port_file),
                "--log-level",
                "warning",
            ],
            stdout=log,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if process.poll() is not None:
                raise RuntimeError(f"the server exited early; see {log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start within 30 s; see {log_path}")
            time.sleep(0.05)
        yield f"127.0.0.1:{port_file.read_text().strip()}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        port_file.unlink(missing_ok=True)


async def play_fixture(
    client: AsyncClient, fixture: Fixture, options: dict[str, str], move_clock_ms: int
) -> Result:
    """Create the match, seat the bots, play it out, verify its record."""
    created = await client.create_match(
        "take5", len(fixture.lineup), options=options, move_clock_ms=move_clock_ms
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
    finals = await asyncio.gather(
        *(
            play_seat(client, seat, make_bot(name, seed=fixture.number * 31 + seat.seat))
            for seat, name in zip(seats, fixture.lineup, strict=True)
        )
    )
    outcome = finals[0].outcome
    record = await client.record(created.match_id)
    problems = verify(_recorded(record))
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


def _recorded(record: common_pb2.MatchRecord) -> RecordedMatch:
    return RecordedMatch(
        game=record.game,
        options=dict(record.options),
        seats=record.seats,
        server_seed=record.server_seed,
        commitment=record.commitment,
        entropies=[s.entropy for s in sorted(record.seat_records, key=lambda s: s.seat)],
        presets=[list(d.cards) for d in record.preset_decks],
        actions=[(a.seat, a.action) for a in record.actions],
        final_hash=record.final_state_sha256,
        termination=record.outcome.termination or "normal",
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


def render(lines: Sequence[Standing], results: Sequence[Result], elapsed: float) -> Table:
    """The standings as a rich table."""
    actions = sum(r.actions for r in results)
    table = Table(
        title=f"Take 5 standings - {len(results)} matches, {actions} actions in {elapsed:.1f} s",
        caption="rating: OpenSkill Plackett-Luce mu +- 2 sigma, ordered by mu - 3 sigma; "
        "utility: +1 beat everyone .. -1 beaten by everyone, mean +- 95% CI; "
        "heads: cattle heads per match, lower is better",
    )
    for column in ("bot", "played", "wins", "win %", "utility", "heads", "rating"):
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
    fixtures: Sequence[Fixture],
    options: dict[str, str],
    move_clock_ms: int,
    concurrency: int,
    console: Console,
) -> list[Result]:
    """Play every fixture with at most ``concurrency`` matches at once, showing progress."""
    results: list[Result] = []
    gate = asyncio.Semaphore(concurrency)
    columns = (
        TextColumn("[bold]Take 5"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("matches"),
        TimeElapsedColumn(),
    )
    async with AsyncClient(target) as client:
        with Progress(*columns, console=console, transient=False) as progress:
            task = progress.add_task("matches", total=len(fixtures))

            async def one(fixture: Fixture) -> None:
                async with gate:
                    results.append(await play_fixture(client, fixture, options, move_clock_ms))
                progress.advance(task)

            await asyncio.gather(*(one(f) for f in fixtures))
    return results


def run(args: argparse.Namespace) -> int:
    """``speeltafel run``: the tournament; returns the process exit status."""
    bots: list[str] = args.bots.split(",")
    unknown = [b for b in bots if b not in BOTS]
    if unknown:
        print(f"unknown bot(s): {', '.join(unknown)}; built in: {', '.join(BOTS)}")
        return 2
    seat_counts = [int(s) for s in args.seats.split(",")]
    fixtures = schedule(bots, seat_counts, args.rounds)
    options = {"edition": args.edition}
    db = Path(args.db)
    console = Console()
    console.print(
        f"speeltafel: {len(fixtures)} Take 5 matches ({options['edition']} edition, seats "
        f"{','.join(map(str, seat_counts))}) between {', '.join(bots)}; store {db}"
    )
    started = time.monotonic()
    with server_process(db, db.with_suffix(".log")) as target:
        console.print(f"server listening on {target} (log: {db.with_suffix('.log')})")
        results = asyncio.run(
            tournament(
                target,
                fixtures,
                options,
                args.move_clock_ms,
                args.concurrency,
                console,
            )
        )
    elapsed = time.monotonic() - started
    lines = standings(results)
    console.print(render(lines, results, elapsed))
    unverified = [r.match_id for r in results if not r.verified]
    defaults = sum(r.clock_defaults for r in results)
    console.print(
        f"{len(results) - len(unverified)}/{len(results)} match records verified by replay "
        f"(seed commitment, legality of every action, final state hash); "
        f"{defaults} clock defaults."
    )
    out = Path(args.results)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "matches": [asdict(r) for r in results],
                "standings": [{**asdict(s), "utilities": None, "scores": None} for s in lines],
            },
            indent=1,
        )
    )
    console.print(f"results written to {out}")
    return 1 if unverified else 0
