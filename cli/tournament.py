"""``speeltafel tournament ...``: the organiser's commands.

    speeltafel tournament issue-token gap                # prints the bot token, once
    speeltafel tournament create --game take5 --participants gap,greedy,random \\
        --format duplicate --seats 3 --seed demo         # prints the tournament id
    speeltafel tournament watch ID                       # progress bar, then standings
    speeltafel tournament standings ID [--json | --csv [--crosstable]]
    speeltafel tournament export ID --out DIR | --jsonl FILE
    speeltafel tournament list | show ID | cancel ID

The organiser's calls (issue-token, create, cancel) need the organiser token: from
``--organiser-token``, else the environment variable the server reads
(``SPEELTAFEL_ORGANISER_TOKEN``), else the file ``speeltafel serve`` writes beside its
database (``<db>.organiser-token``; ``--db`` names the database, by default the server's
default). Reading (list, show, watch, standings, export) needs no token.

Standings come from the server (``GetStandings``, the final ones from ``WatchTournament``):
the ratings, intervals and crosstable are computed once, by the director, and every client
shows the same numbers. An interval of fewer than two matches travels as 0 and is shown
as "-".
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from speeltafel.sdk.client import CHANNEL_OPTIONS
from speeltafel.sdk.v1 import tournament_pb2, tournament_pb2_grpc

T = tournament_pb2
ORGANISER_TOKEN_ENV = "SPEELTAFEL_ORGANISER_TOKEN"
"""The variable ``speeltafel serve`` reads its organiser token from (server/rpc/limits.py)."""
DEFAULT_DB = "var/speeltafel.db"
"""``speeltafel serve``'s default database: its token file is ``<db>.organiser-token``."""
FORMATS = {
    "round-robin": T.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "gauntlet": T.TOURNAMENT_FORMAT_GAUNTLET,
    "duplicate": T.TOURNAMENT_FORMAT_DUPLICATE,
}
FORFEITS = {"autoplay": T.FORFEIT_POLICY_AUTOPLAY, "lose": T.FORFEIT_POLICY_LOSE}
STATUS_NAMES = {
    T.TOURNAMENT_STATUS_WAITING: "waiting for its bots",
    T.TOURNAMENT_STATUS_RUNNING: "running",
    T.TOURNAMENT_STATUS_FINISHED: "finished",
    T.TOURNAMENT_STATUS_CANCELLED: "cancelled",
}
CSV_COLUMNS = (
    "place",
    "participant",
    "matches",
    "rating",
    "mu",
    "sigma",
    "mean_utility",
    "utility_ci95",
    "mean_score",
    "misses",
    "rejected",
    "forfeits",
)


class Usage(ValueError):
    """Arguments that cannot make a request: one line, exit status 2."""


# --------------------------------------------------------------------------- tokens


def organiser_token_file(db: str) -> Path:
    """Where ``speeltafel serve`` writes the organiser token it generates (the server's
    ``organiser_token_file``; the command may not import the server outside ``serve``)."""
    return Path(f"{db}.organiser-token")


def organiser_token(given: str, db: str) -> str:
    """The organiser token: given, else from the environment, else from the server's
    token file; Usage naming all three when there is none."""
    if given:
        return given
    if os.environ.get(ORGANISER_TOKEN_ENV):
        return os.environ[ORGANISER_TOKEN_ENV]
    path = organiser_token_file(db)
    try:
        token = path.read_text().strip()
    except OSError:
        token = ""
    if not token:
        raise Usage(
            f"an organiser token is needed: --organiser-token, ${ORGANISER_TOKEN_ENV}, or "
            f"the file the server writes beside its database ({path} not found; --db)"
        )
    return token


def _organiser(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {organiser_token(args.organiser_token, args.db)}"),)


def _stub(channel: grpc.aio.Channel) -> Any:
    return tournament_pb2_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]


# --------------------------------------------------------------------------- rendering


def _interval(value: float, half: float, matches: int) -> str:
    return f"{value:+.2f} ± {half:.2f}" if matches >= 2 else f"{value:+.2f} ± -"


def standings_table(standings: T.Standings, title: str = "") -> Table:
    """The standings as a rich table (fits 80 columns; mu and sigma are in --json/--csv):
    place, rating, utility, the game's score, misses, rejected moves, forfeits."""
    better = "lower" if standings.lower_is_better else "higher"
    score = standings.score_name or "score"
    table = Table(
        title=title or f"{standings.game} standings - {standings.matches_counted} matches",
        caption="n: matches; rating: OpenSkill Plackett-Luce ordinal (mu - 3 sigma); "
        "utility: +1 beat everyone .. -1 beaten by everyone, mean ± 95% CI; "
        f"{score}: per match, {better} is better; miss: clock defaults; "
        "rej: illegal moves refused; forf: forfeits",
    )
    for column in ("#", "bot", "n", "rating", "utility", score, "miss", "rej", "forf"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in standings.rows:
        table.add_row(
            str(row.place),
            row.participant,
            str(row.matches),
            f"{row.rating:.2f}",
            _interval(row.mean_utility, row.utility_ci95, row.matches),
            f"{row.mean_score:.1f}",
            str(row.misses),
            str(row.rejected),
            str(row.forfeits),
        )
    return table


def crosstable(standings: T.Standings) -> Table:
    """Mean utility of each row's bot in the matches where the column's bot also sat."""
    names = [row.participant for row in standings.rows]
    cells = {(p.participant, p.opponent): p for p in standings.crosstable}
    table = Table(
        title="crosstable: the row's mean utility when the column also sat (± 95% CI, matches)"
    )
    table.add_column("bot")
    for name in names:
        table.add_column(name, justify="right")
    for name in names:
        line = [name]
        for other in names:
            pairing = cells.get((name, other))
            if name == other or pairing is None or pairing.matches == 0:
                line.append("")
            else:
                line.append(
                    f"{_interval(pairing.mean_utility, pairing.utility_ci95, pairing.matches)}"
                    f" ({pairing.matches})"
                )
        table.add_row(*line)
    return table


def standings_json(standings: T.Standings) -> str:
    """The standings as JSON (the proto's field names)."""
    return json.dumps(
        json_format.MessageToDict(
            standings, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        ),
        indent=1,
    )


def standings_csv(standings: T.Standings, pairings: bool = False) -> str:
    """The standings rows (or the crosstable's pairings) as CSV with a header line."""
    lines: list[list[object]] = []
    if pairings:
        lines.append(["participant", "opponent", "matches", "mean_utility", "utility_ci95"])
        for p in standings.crosstable:
            lines.append([p.participant, p.opponent, p.matches, p.mean_utility, p.utility_ci95])
    else:
        lines.append(list(CSV_COLUMNS))
        for row in standings.rows:
            lines.append([getattr(row, column) for column in CSV_COLUMNS])
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(lines)
    return out.getvalue()


def describe(tournament: T.Tournament) -> str:
    """One line about a tournament."""
    formats = {number: name for name, number in FORMATS.items()}
    options = ", ".join(f"{k}={v}" for k, v in sorted(tournament.options.items()))
    return (
        f"{tournament.tournament_id} {tournament.name or '(no name)'}: {tournament.game} "
        f"({options}), {formats.get(tournament.format, '?')}, {tournament.seats} seats, "
        f"{', '.join(tournament.participants)}; {STATUS_NAMES.get(tournament.status, '?')}, "
        f"{tournament.matches_finished}/{tournament.matches_total} matches"
        f"{', seeded' if tournament.seeded else ''}"
    )


# --------------------------------------------------------------------------- requests


def parse_seed(text: str) -> bytes:
    """``--seed``: ``hex:...`` for bytes, else the text's UTF-8 (at most 64 bytes)."""
    seed = bytes.fromhex(text[4:]) if text.startswith("hex:") else text.encode()
    if len(seed) > 64:
        raise Usage("--seed: at most 64 bytes")
    return seed


def create_request(args: argparse.Namespace) -> T.CreateTournamentRequest:
    """The CreateTournament request of ``create``'s arguments (Usage when malformed; the
    server checks everything else and answers INVALID_ARGUMENT with the reason)."""
    options: dict[str, str] = {}
    for item in args.option:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise Usage(f"--option {item!r}: expected NAME=VALUE")
        options[name] = value
    participants = [p.strip() for p in args.participants.split(",") if p.strip()]
    if len(participants) < 2:
        raise Usage("--participants: at least two bot names, comma-separated")
    for name in ("seats", "rounds", "max_matches", "move_clock_ms", "time_bank_ms", "max_misses"):
        if getattr(args, name) < 0:
            raise Usage(f"--{name.replace('_', '-')} cannot be negative")
    try:
        seed = parse_seed(args.seed) if args.seed else b""
    except ValueError as exc:
        raise Usage(f"--seed: {exc}") from None
    return T.CreateTournamentRequest(
        request_id=args.request_id,
        name=args.name,
        game=args.game,
        options=options,
        format=FORMATS[args.format],
        participants=participants,
        seats=args.seats,
        rounds=args.rounds,
        max_matches=args.max_matches,
        clock=T.ClockPolicy(
            move_clock_ms=args.move_clock_ms,
            time_bank_ms=args.time_bank_ms,
            max_misses=args.max_misses,
            forfeit=FORFEITS[args.forfeit],
        ),
        seed=seed,
    )


PROGRESS_COLUMNS = (
    TextColumn("[bold]{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("{task.fields[running]} running"),
    TimeElapsedColumn(),
)


async def follow(
    channel: grpc.aio.Channel,
    tournament_id: str,
    progress: Progress,
    on_finished: Callable[[T.TournamentMatch], None] | None = None,
) -> T.Standings | None:
    """Follow one tournament on a bar of ``progress`` until it ends; its final standings
    (None when the stream ended without them, e.g. the server went away)."""
    bar = progress.add_task(tournament_id, total=None, running=0)
    stream: AsyncIterator[T.WatchTournamentResponse] = _stub(channel).WatchTournament(
        T.WatchTournamentRequest(tournament_id=tournament_id)
    )
    async for event in stream:
        kind = event.WhichOneof("kind")
        if kind == "progress":
            t = event.progress
            progress.update(
                bar,
                description=f"{t.name or t.tournament_id} ({t.game}, {t.seats} seats)",
                total=t.matches_total,
                completed=t.matches_finished,
                running=t.matches_running,
            )
        elif kind == "match_finished" and on_finished is not None:
            on_finished(event.match_finished)
        elif kind == "standings":
            progress.update(bar, running=0)
            return event.standings
    return None


async def watch(
    channel: grpc.aio.Channel, tournament_id: str, console: Console, show_matches: bool = False
) -> T.Standings | None:
    """Follow a tournament with a progress bar until it ends (see :func:`follow`)."""
    with Progress(*PROGRESS_COLUMNS, console=console, transient=False) as progress:

        def show(m: T.TournamentMatch) -> None:
            progress.console.print(
                f"fixture {m.fixture}: {', '.join(m.lineup)} -> ranks "
                f"{list(m.outcome.ranks)} ({m.outcome.termination or 'normal'})"
            )

        return await follow(channel, tournament_id, progress, show if show_matches else None)


async def export(
    channel: grpc.aio.Channel, tournament_id: str, out: Path | None, jsonl: Path | None
) -> int:
    """Every record of the tournament (ExportRecords) into a folder, one
    ``<fixture>-<match id>.json`` each, or into one JSON Lines file; returns the count.
    Nothing is written when the server refuses (records of a sealed set)."""
    stream = _stub(channel).ExportRecords(T.ExportRecordsRequest(tournament_id=tournament_id))
    items = [item async for item in stream]
    write_export(items, out, jsonl)
    return len(items)


def write_export(
    items: Sequence[T.ExportRecordsResponse], out: Path | None, jsonl: Path | None
) -> None:
    """Write exported records: a JSON MatchRecord per file in ``out``, or a JSON Lines file
    of ExportRecordsResponse (record, fixture, lineup); both read by ``speeltafel verify``."""
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for item in items:
            name = f"{item.fixture:04d}-{item.record.match_id}.json"
            (out / name).write_text(json_format.MessageToJson(item.record) + "\n")
    if jsonl is not None:
        jsonl.parent.mkdir(parents=True, exist_ok=True)
        lines = (json_format.MessageToJson(item, indent=None) for item in items)
        jsonl.write_text("".join(f"{line}\n" for line in lines))


async def _command(args: argparse.Namespace, console: Console) -> int:
    async with grpc.aio.insecure_channel(args.server, options=CHANNEL_OPTIONS) as channel:
        stub = _stub(channel)
        action = args.action
        if action == "issue-token":
            issued = await stub.IssueBotToken(
                T.IssueBotTokenRequest(bot_name=args.bot_name), metadata=_organiser(args)
            )
            print(issued.token)
            print(
                f"bot token for {issued.bot_name} (shown once; issuing again revokes it): "
                f"speeltafel bot --server {args.server} --bot-token <token> --bot NAME",
                file=sys.stderr,
            )
        elif action == "create":
            request = create_request(args)
            created = await stub.CreateTournament(request, metadata=_organiser(args))
            if args.quiet:
                print(created.tournament.tournament_id)
            else:
                again = " (the same request_id: the tournament made before)"
                print(describe(created.tournament) + (again if created.duplicate else ""))
        elif action == "cancel":
            cancelled = await stub.CancelTournament(
                T.CancelTournamentRequest(tournament_id=args.tournament_id),
                metadata=_organiser(args),
            )
            print(describe(cancelled.tournament))
        elif action == "list":
            listed = await stub.ListTournaments(T.ListTournamentsRequest())
            for tournament in listed.tournaments:
                print(describe(tournament))
        elif action == "show":
            got = await stub.GetTournament(T.GetTournamentRequest(tournament_id=args.tournament_id))
            print(describe(got.tournament))
        elif action == "watch":
            standings = await watch(channel, args.tournament_id, console, args.matches)
            if standings is None:
                console.print("the watch ended before the tournament did")
                return 1
            console.print(standings_table(standings))
            console.print(crosstable(standings))
        elif action == "standings":
            response = await stub.GetStandings(
                T.GetStandingsRequest(tournament_id=args.tournament_id)
            )
            standings = response.standings
            if args.json:
                print(standings_json(standings))
            elif args.csv:
                sys.stdout.write(standings_csv(standings, args.crosstable))
            else:
                console.print(standings_table(standings))
                console.print(crosstable(standings))
        elif action == "export":
            if (args.out is None) == (args.jsonl is None):
                raise Usage("export: give one of --out DIR or --jsonl FILE")
            out = Path(args.out) if args.out else None
            jsonl = Path(args.jsonl) if args.jsonl else None
            count = await export(channel, args.tournament_id, out, jsonl)
            print(
                f"{count} records written to {out or jsonl}; check them with "
                f"speeltafel verify {jsonl or (str(out) + '/*.json')}",
                file=sys.stderr,
            )
    return 0


def run(args: argparse.Namespace) -> int:
    """``speeltafel tournament ...``: the exit status (2 for bad arguments)."""
    try:
        return asyncio.run(_command(args, Console()))
    except Usage as exc:
        print(f"speeltafel tournament: {exc}", file=sys.stderr)
        return 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands of ``speeltafel tournament``."""
    actions = parser.add_subparsers(dest="action", required=True)

    def command(name: str, help_text: str, organiser: bool = False) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text)
        sub.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT")
        if organiser:
            sub.add_argument(
                "--organiser-token",
                default="",
                help=f"default: ${ORGANISER_TOKEN_ENV}, else the server's <db>.organiser-token",
            )
            sub.add_argument(
                "--db", default=DEFAULT_DB, help="the server's database, for its token file"
            )
        return sub

    issue = command("issue-token", "a new bot token for a bot name (prints it)", True)
    issue.add_argument("bot_name", metavar="NAME")

    create = command("create", "create a tournament (prints it; --quiet: its id)", True)
    create.add_argument("--game", required=True)
    create.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="repeatable"
    )
    create.add_argument("--format", choices=sorted(FORMATS), default="round-robin")
    create.add_argument("--participants", required=True, help="bot names, comma-separated")
    create.add_argument("--seats", type=int, default=0, help="per match (0: smallest table)")
    create.add_argument("--rounds", type=int, default=1, help="times the schedule is played")
    create.add_argument("--max-matches", type=int, default=0, help="cap (0: none)")
    create.add_argument("--move-clock-ms", type=int, default=0, help="0: server default")
    create.add_argument("--time-bank-ms", type=int, default=0, help="per seat and match")
    create.add_argument("--max-misses", type=int, default=0, help="0: never forfeit")
    create.add_argument("--forfeit", choices=sorted(FORFEITS), default="autoplay")
    create.add_argument("--seed", default="", help="reproducible deals (text, or hex:...)")
    create.add_argument("--name", default="")
    create.add_argument("--request-id", default="", help="idempotent create")
    create.add_argument("--quiet", action="store_true", help="print only the tournament id")

    cancel = command("cancel", "stop scheduling new matches", True)
    cancel.add_argument("tournament_id", metavar="ID")
    command("list", "every tournament")
    show = command("show", "one tournament")
    show.add_argument("tournament_id", metavar="ID")

    follow = command("watch", "a progress bar until the end, then the standings")
    follow.add_argument("tournament_id", metavar="ID")
    follow.add_argument("--matches", action="store_true", help="a line per finished match")

    table = command("standings", "the standings now")
    table.add_argument("tournament_id", metavar="ID")
    form = table.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true")
    form.add_argument("--csv", action="store_true")
    table.add_argument("--crosstable", action="store_true", help="with --csv: the pairings")

    records = command("export", "every record of the tournament, for speeltafel verify")
    records.add_argument("tournament_id", metavar="ID")
    records.add_argument("--out", help="a folder: one JSON record per match")
    records.add_argument("--jsonl", help="one JSON Lines file")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``speeltafel tournament`` arguments alone (for tests)."""
    parser = argparse.ArgumentParser(prog="speeltafel tournament")
    add_arguments(parser)
    return parser.parse_args(list(argv))
