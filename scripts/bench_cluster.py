"""``make bench`` row: the cluster's cost per action, end to end, in one run.

Acknowledged actions per second and submit-to-ack latency (p50, p99) of random bots
playing take5 over gRPC, with 1, 2 and 3 server processes on one PostgreSQL, against one
process on SQLite (the embedded default), each as a ratio of SQLite's. Every configuration
runs the same load: ``--tables`` matches of three seats at a time, each replaced when it
ends, every match created and played on one process (spread round robin over the
processes, as the proxy's hash on ``x-match-id`` spreads them; no proxy here, so the
numbers are the servers' and the store's, not HAProxy's). The client is one process; each
table's bots share a connection of their own, as separate clients would (the server's
limits are per connection).

On a machine with two cores shared by the bench client, PostgreSQL and the servers, more
processes cannot add throughput: the point is the cost per action over PostgreSQL, and
that the processes share the load without losing anything (the tests check that). What to
expect on more cores is in docs/scaling.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speeltafel.bots.random_bot import RandomBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cluster as cluster_script
from bench import own_connection

GAME, SEATS = "take5", 3


class TimedBot(RandomBot):
    """A random bot that remembers when it chose (play_seat submits right after)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.chosen_at = 0.0

    def choose(self, view: common_pb2.View, legal: Sequence[common_pb2.Action]) -> Any:
        action = super().choose(view, legal)
        self.chosen_at = time.perf_counter()
        return action


@dataclass
class Tally:
    start: float
    end: float
    acks: int = 0
    errors: int = 0
    first_error: str = ""
    latencies: list[float] = field(default_factory=list)


def percentile_ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def load(targets: Sequence[str], tables: int, warmup: float, seconds: float) -> Tally:
    now = time.perf_counter()
    tally = Tally(now + warmup, now + warmup + seconds)
    # A connection of its own for each table, as each table's bots would have: the server's
    # limits are per connection, and one connection for all the tables measured its unary
    # rate limit (250 cost units a second; a match's CreateMatch and joins cost 16), not
    # the server, and let every added process add a connection's budget.
    clients = [
        AsyncClient(target, channel=own_connection(target))
        for target in (targets[i % len(targets)] for i in range(tables))
    ]

    async def table(index: int) -> None:
        client = clients[index]
        number = 0
        while time.perf_counter() < tally.end:
            number += 1
            try:
                created = await client.create_match(GAME, SEATS, {"deals": "1"})
                seats = await asyncio.gather(
                    *(client.join(created.match_id, s) for s in range(SEATS))
                )
                async with asyncio.TaskGroup() as group:
                    for seat in seats:
                        bot = TimedBot(index * 1_000_003 + number * 101 + seat.seat)

                        def on_ack(_req: Any, _resp: Any, bot: TimedBot = bot) -> None:
                            at = time.perf_counter()
                            if tally.start <= at < tally.end:
                                tally.acks += 1
                                tally.latencies.append(at - bot.chosen_at)

                        group.create_task(play_seat(client, seat, bot, on_ack=on_ack))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                tally.errors += 1
                tally.first_error = tally.first_error or f"{type(exc).__name__}: {exc}"[:200]
                await asyncio.sleep(0.05)

    tasks = [asyncio.ensure_future(table(i)) for i in range(tables)]
    await asyncio.sleep(max(0.0, tally.end - time.perf_counter()))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in clients:
        await client.close()
    return tally


def measure(
    runner: asyncio.Runner,
    name: str,
    store_args: list[list[str]],
    folder: Path,
    args: argparse.Namespace,
) -> dict[str, Any]:
    servers = [
        ServerProcess(
            folder / f"{name}-{i}",
            folder,
            *extra,
            "--log-level",
            "warning",
            log_path=folder / f"{name}-{i}.log",
        )
        for i, extra in enumerate(store_args)
    ]
    try:
        for server in servers:
            server.start(60)
        tally = runner.run(
            load([s.target for s in servers], args.tables, args.warmup, args.seconds)
        )
    finally:
        for server in servers:
            server.stop()
    return {
        "config": name,
        "processes": len(servers),
        "acks": tally.acks,
        "acks_per_s": tally.acks / args.seconds,
        "p50_ms": percentile_ms(tally.latencies, 0.50),
        "p99_ms": percentile_ms(tally.latencies, 0.99),
        "errors": tally.errors,
        "first_error": tally.first_error,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL (default: local)")
    parser.add_argument("--tables", type=int, default=12, help="matches at a time")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--out", default="var/bench_cluster.json")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="speeltafel-bench-cluster-"))
    rows: list[dict[str, Any]] = []
    # One event loop for every configuration: gRPC's asyncio layer stays bound to the loop
    # of its first channel, and a second asyncio.run left its poller calling into a closed
    # loop ("Event loop is closed" callbacks; grpc/grpc#34139).
    try:
        with asyncio.Runner() as runner:
            sqlite = [["--db", str(folder / "bench.db")]]
            rows.append(measure(runner, "sqlite", sqlite, folder, args))
            with cluster_script.postgres_database(folder, args.postgres) as url:
                for count in (1, 2, 3):
                    # A fresh schema per count would be fairer still; the same one only grows.
                    token = f"--organiser-token={secrets.token_hex(8)}"
                    store = [["--store", url, token]] * count
                    rows.append(measure(runner, f"postgres-{count}", store, folder, args))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base = rows[0]
    print(
        f"cluster: {GAME} x{SEATS}, {args.tables} matches at a time, {args.seconds:.0f} s"
        f" window, {os.cpu_count()} cores"
    )
    print(f"{'store':<14}{'procs':>6}{'acks/s':>10}{'x SQLite':>10}{'p50 ms':>9}{'p99 ms':>9}"
          f"{'x SQLite':>10}{'errors':>8}")  # fmt: skip
    for row in rows:
        row["acks_ratio"] = row["acks_per_s"] / base["acks_per_s"] if base["acks_per_s"] else None
        row["p99_ratio"] = (
            row["p99_ms"] / base["p99_ms"] if row["p99_ms"] and base["p99_ms"] else None
        )
        print(
            f"{row['config']:<14}{row['processes']:>6}{row['acks_per_s']:>10.0f}"
            f"{row['acks_ratio'] or 0:>10.2f}{row['p50_ms'] or 0:>9.1f}{row['p99_ms'] or 0:>9.1f}"
            f"{row['p99_ratio'] or 0:>10.2f}{row['errors']:>8}"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"rows": rows, "tables": args.tables, "seconds": args.seconds}, indent=1)
    )
    return 1 if any(r["errors"] for r in rows) or any(not r["acks"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
