"""Locust users that are bots: each plays whole matches of every game the server offers.

What one user models: one bot program with its own connection (one gRPC channel, so the
server's per-connection limits apply to it as to a real bot). It asks the server which
games it offers (ListGames), then, match after match, sits down at the table the
:class:`~players.TableMaker` (a stand-in for the lobby, shared by the users of this
process) puts it at: the next game in the rotation, with 2 to ``--max-seats`` seats. The
first user at a table creates the match (CreateMatch); once the table is full every user
joins it (JoinMatch, with its own entropy) and plays its seat over one Play stream with a
built-in bot that plays that game (``bots/registry.py`` ``make_bot``; the search bot only
with ``--bots``, as it spends 10-30 ms of client CPU a move, CPU the server shares here).
There is no think time: a bot answers as soon as it has chosen.

Locust reports every RPC by method (request type ``grpc`` for unary calls, ``stream`` for a
whole Play stream), every action on a stream as ``Play submit→ack``, and every whole match
as ``match <game>`` (its time: from JoinMatch to the final view). Every acknowledged
action is written to ``--ack-log`` (JSON lines) when the test stops, and every match this
run created with ``--match-log``, for the reconciliation in ``loadtests/run.py``.

grpc is switched to gevent (``init_gevent``) before any channel exists: Locust's users are
greenlets, and grpc's blocking calls would otherwise block the whole process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gevent  # type: ignore[import-untyped]
import grpc.experimental.gevent as grpc_gevent

grpc_gevent.init_gevent()  # before any grpc object is made

from locust import User, events, task  # noqa: E402
from locust.env import Environment  # noqa: E402
from locust.exception import StopUser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # Locust imports this file by path
    sys.path.insert(0, str(ROOT))

from loadtests.players import (  # noqa: E402
    Ack,
    TableMaker,
    play_seat_blocking,
    play_seat_polling,
    reporting_client,
)
from speeltafel.bots.registry import bots_for, make_bot  # noqa: E402
from speeltafel.sdk.client import Client  # noqa: E402

TABLES: TableMaker | None = None
SHARED: Client | None = None  # --shared-channel: the one client of every user
ACKS: list[Ack] = []
MATCHES: dict[str, dict[str, Any]] = {}  # match id -> game, seats, finished
LOCK = threading.Lock()  # greenlets switch only on I/O; this keeps the logs consistent anyway
TABLE_WAIT_S = 60.0
THREADPOOL_MIN = 64
THREADPOOL_SPARE = 16


def _arguments(parser: Any) -> None:
    parser.add_argument("--max-seats", type=int, default=4, help="most seats at one table")
    parser.add_argument(
        "--bots",
        default="",
        help="comma-separated bot names to draw from (default: every bot but search)",
    )
    parser.add_argument("--games", default="", help="comma-separated game ids (default: all)")
    parser.add_argument("--ack-log", default="", help="JSON lines of acknowledged actions")
    parser.add_argument("--match-log", default="", help="JSON of the matches created")
    parser.add_argument("--summary-json", default="", help="the final statistics as JSON")
    parser.add_argument(
        "--shared-channel",
        action="store_true",
        help="every user on one connection (one tournament runner playing many seats)",
    )
    parser.add_argument(
        "--polling",
        action="store_true",
        help="play with unary calls only, polling GetView (a naive client: meets the rates)",
    )
    parser.add_argument("--table-seed", type=int, default=None, help="seed of the seat counts")


def _init(environment: Environment, **_: Any) -> None:
    global TABLES
    options = environment.parsed_options
    # grpc's gevent mode polls each channel's completion queue with a blocking call in
    # gevent's native threadpool (10 threads by default): with more channels than threads
    # holding live streams, the others wait their turn and their bots starve (measured: 64
    # users made 19 actions/s, the move clocks ran out). One thread per user, and spare.
    users = options.num_users if options and options.num_users else 0
    gevent.get_hub().threadpool.maxsize = max(THREADPOOL_MIN, users + THREADPOOL_SPARE)
    TABLES = TableMaker(
        options.max_seats if options else 4, options.table_seed if options else None
    )


def _stopping(**_: Any) -> None:
    if TABLES is not None:
        TABLES.stopping = True


def _write_logs(environment: Environment, **_: Any) -> None:
    """Every user has stopped: write the ack log, the match log and the final summary.

    The summary is read from Locust's own statistics at this point, so it holds every
    request, also those of the matches users finished after the run time was up (Locust's
    CSV writer works on an interval, and its last files can miss the final second)."""
    options = environment.parsed_options
    if options is None:
        return
    with LOCK:
        if options.ack_log:
            with open(options.ack_log, "w") as out:
                for ack in ACKS:
                    out.write(json.dumps(dataclasses.asdict(ack)) + "\n")
        if options.match_log:
            Path(options.match_log).write_text(json.dumps(MATCHES, indent=1, sort_keys=True))
    if options.summary_json and environment.runner is not None:
        stats = environment.runner.stats
        entries = [
            {
                "kind": entry.method,
                "name": entry.name,
                "requests": entry.num_requests,
                "failures": entry.num_failures,
                "p50": entry.get_response_time_percentile(0.5),
                "p99": entry.get_response_time_percentile(0.99),
                "seconds": max(0.0, (entry.last_request_timestamp or 0) - entry.start_time),
            }
            for entry in stats.entries.values()
        ]
        errors = [
            {"kind": e.method, "name": e.name, "error": str(e.error), "count": e.occurrences}
            for e in stats.errors.values()
        ]
        seconds = max(0.0, (stats.total.last_request_timestamp or 0) - stats.total.start_time)
        Path(options.summary_json).write_text(
            json.dumps({"seconds": seconds, "entries": entries, "errors": errors}, indent=1)
        )


# Locust's add_listener is untyped: one seam for the type checker.
for _event, _listener in (
    (events.init_command_line_parser, _arguments),
    (events.init, _init),
    (events.test_stopping, _stopping),
    (events.quitting, _write_logs),
):
    _event.add_listener(_listener)  # type: ignore[no-untyped-call]


class BotUser(User):
    """One bot program with its own connection, playing match after match (see above)."""

    def on_start(self) -> None:
        options = self.environment.parsed_options
        self.fire = self.environment.events.request.fire
        global SHARED
        target = self.host or "127.0.0.1:50051"
        if options.shared_channel:
            SHARED = SHARED or reporting_client(target, self.fire)
            self.client = SHARED
        else:
            self.client = reporting_client(target, self.fire)
        self.bot_names = [b for b in (options.bots.split(",") if options.bots else []) if b]
        self.polling = bool(options.polling)
        games = self.client.list_games()
        assert TABLES is not None
        TABLES.offer(games, [g for g in options.games.split(",") if g])
        self.name = f"locust-{id(self):x}"[-16:]

    def on_stop(self) -> None:
        if self.client is not SHARED:
            self.client.close()

    @task
    def play_a_match(self) -> None:
        """Sit at a table, create or wait for its match, join when full, play to the end."""
        assert TABLES is not None
        if TABLES.stopping:
            raise StopUser()
        runner = self.environment.runner
        table, creator = TABLES.sit(runner.user_count if runner is not None else 1)
        if creator:
            try:
                created = self.client.create_match(table.game.game, table.seats)
                table.match_id = created.match_id
                with LOCK:
                    MATCHES[table.match_id] = {
                        "game": table.game.game,
                        "seats": table.seats,
                        "finished": False,
                    }
            except Exception:
                table.failed = True
                raise
            finally:
                table.created.set()
        if not table.created.wait(TABLE_WAIT_S) or table.failed:
            return  # the creator reported why
        deadline = time.monotonic() + TABLE_WAIT_S
        while not table.full.wait(0.25):
            if TABLES.stopping or time.monotonic() > deadline:
                TABLES.abandon(table)
                return  # nobody more will come: this match is never started
        game = table.game.game
        names = bots_for(game, self.bot_names or None)
        if not self.bot_names:
            names = [n for n in names if n != "search"]
        bot_name = names[int.from_bytes(os.urandom(2), "big") % len(names)]
        started = time.perf_counter()
        exception: Exception | None = None
        try:
            seat = self.client.join(
                table.match_id, name=f"{bot_name}-{self.name}"[:32], entropy=os.urandom(16)
            )
            play = play_seat_polling if self.polling else play_seat_blocking
            result = play(self.client, seat, make_bot(bot_name, game=game), self.fire)
        except Exception as exc:  # reported as the match's failure, then the next match
            exception = exc
            result = None
        if result is not None:
            with LOCK:
                ACKS.extend(result.acks)
                if result.final is not None and table.match_id in MATCHES:
                    MATCHES[table.match_id]["finished"] = True
        self.fire(
            request_type="match",
            name=game,
            response_time=(time.perf_counter() - started) * 1000.0,
            response_length=len(result.acks) if result is not None else 0,
            exception=exception,
            context={},
        )
