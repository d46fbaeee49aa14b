"""``make bench`` (b)-(g): the server under load, at scale, after a restart, and its collector.

Run after ``scripts/bench.py`` (which measures (a), the engines). Every figure is printed
next to its target, and as a ratio where the issue asks for one; the raw numbers go to
``var/bench_server.json``. The server is always a subprocess on an SQLite file in a
temporary folder (fsync'd group commit, as in production), and this process is the client.

(b) throughput: acknowledged decisions per second of 16 Take 5 matches x 4 random bots
    (``play_seat`` over one Play stream per seat, the SDK's default of views only when
    acting), next to a no-op ``EchoStream`` ping-pong driven by the same client on the same
    channel (both from ``scripts/bench.py``). The ratio b/echo is messages per second; the
    machine is shared, so server CPU per decision against server CPU per echo message is
    shown beside it (the ratio that does not depend on what else runs). A decision's server
    CPU is split (``scripts/decision_work.py``): its messages (the echo with two replies of
    each), its own work (measured in this process before any server runs), the store
    (SQLite less a memory-store server's game path), the matches' setups and ends (the
    memory store in matches of 3 and of 30 deals, alternated) and the rest.
(c) latency: submit->ack p50/p99/p99.9 at a quarter and at half of (b)'s rate. The same
    64 bots play; the load is lowered by think time (exponential, mean chosen from (b)
    and set by a 3 s pilot run so that the rate reached is the share wanted), not by
    fewer bots. Beside each window a probe times the host's own fdatasync in the
    store's folder (``disk_probe``), and each ack slower than 5 ms is put down to a stall
    of that disk, to a match's setup, or to neither (``tail_attribution``). At half
    capacity the same offered load is also played on a server with the memory store: the
    same server with no disk under its acks. The client's collector is tuned as the
    server's, so that its pauses do not count as the server's latency.
(d) server CPU per decision while 10, 1,000 and 10,000 matches are live: the others sit
    idle mid-game (stored beforehand, recovered at start, move clock one hour) while 10
    matches are played. Target: within 1.2x from 10 to 10,000.
(e) memory: resident set growth per idle live match (10,000 recovered mid-game matches
    against none) and per finished match within its linger time after a restart (stored
    as finished a second ago: the server keeps their seats' tokens and loads a match when
    a late call asks, ``MatchRuntime._load_lingering``), each after the server has
    settled; and per match finished live (``MatchService.keep_final_views``: its final
    views instead of its state): 600 matches played through a server that keeps them
    (``--finished-linger 3600``) against the same through one that forgets them at once
    (``--finished-linger 0``), once their time whole is over (their seats' tokens kept,
    ``--finished-whole 1``) and within it (``--finished-whole 3600``).
(f) recovery: 10,000 unfinished mid-game matches stored; time from spawn to the first
    health answer, to the server's "recovered" log line, and the wait of calls to matches
    sampled at random right after health answered (GetView; they may wait for their
    match to be resumed). Targets: health within 2 s, every match playable within 15 s.
(g) the largest garbage-collection pause of every server run above, from the server's
    ``gc_pauses`` line at shutdown. Target: none over 20 ms.

``--quick`` (a smoke run, ~60 s): 2 s windows, 1,000 stored matches instead of 10,000.
Usage: ``.venv/bin/python scripts/bench_server.py [--quick] [--seconds 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import random
import re
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from bench import (  # type: ignore[import-not-found,unused-ignore]  # scripts/ at run time
    GAME_ID,
    SHAPED_EXTRA_BYTES,
    SHAPED_REPLIES,
    CpuWindow,
    Window,
    bench_server,
    echo_stream,
    game_path,
    own_connection,
    percentile_ms,
    process_cpu_seconds,
    run_loop,
    sample_cpu,
)
from decision_work import (  # type: ignore[import-not-found,unused-ignore]  # scripts/
    LONG_DEALS,
    Breakdown,
    breakdown,
    decision_work,
    echo_share_without,
    floor_in_echo_messages,
    match_events,
    measure_runtime_work,
)
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rich.console import Console
from rich.table import Table

from speeltafel.bots.random_bot import RandomBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, diagnostics_pb2_grpc
from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import join_token, token_hash
from speeltafel.server.engine.core import commitment
from speeltafel.server.engine.registry import get_game
from speeltafel.server.rpc.collector import PauseWatch, tune_for_server
from speeltafel.server.store.base import (
    ActionRow,
    MatchCreated,
    MatchFinished,
    MatchLog,
    SeatJoined,
)
from speeltafel.server.store.sqlite import SqliteStore

ROOT = Path(__file__).resolve().parent.parent
console = Console(width=None if sys.stdout.isatty() else 132)

TARGETS = {
    "b_ratio": 0.25,
    "c_p99_ms": 5.0,
    "c_p999_ms": 20.0,
    "d_ratio": 1.2,
    "e_idle_kb": 20.0,
    "e_finished_kb": 10.0,
    "f_health_s": 2.0,
    "f_all_s": 15.0,
    "g_pause_ms": 20.0,
}
SEATS = 4
IDLE_CLOCK_MS = 3_600_000  # stored matches sit idle: no clock runs out during a run


# --------------------------------------------------------------------------- stored matches


@dataclass
class StoredMatch:
    """A match written to the store before the server starts, with its seats' tokens."""

    match_id: str
    tokens: list[str]
    to_act: tuple[int, ...]


def _made(index: int, now_ms: int, actions: int, finish: bool) -> tuple[MatchLog, StoredMatch]:
    """One Take 5 match, played by random choices through the runtime's own Match (so the
    log is exactly what a live server writes): ``actions`` actions in, or to its end."""
    game = get_game(GAME_ID)
    seed = secrets.token_bytes(32)
    key = secrets.token_bytes(32)
    created = MatchCreated(
        match_id=f"bench{index:06d}{secrets.token_hex(3)}",
        game=GAME_ID,
        rules_version=game.info.rules_version,
        options=tuple(sorted(game.info.canonical_options({}).items())),
        seats=SEATS,
        server_seed=seed,
        commitment=commitment(seed),
        move_clock_ms=IDLE_CLOCK_MS,
        presets=(),
        created_ms=now_ms - 60_000,
        request_id="",
        token_key=key,
    )
    match = Match(created, game)
    tokens = []
    seats = []
    for seat in range(SEATS):
        request_id = secrets.token_hex(16)
        token = join_token(key, seat, request_id)
        tokens.append(token)
        joined = SeatJoined(
            created.match_id, seat, f"b{seat}", token_hash(token), b"", now_ms - 50_000, request_id
        )
        seats.append(joined)
        match.join(joined)
    match.start(now_ms - 50_000)
    chooser = random.Random(index)
    rows: list[ActionRow] = []
    while match.outcome is None and (finish or len(rows) < actions):
        seat = chooser.choice(match.to_act())
        action = chooser.choice(game.legal_actions(match.state, seat))
        row = ActionRow(
            created.match_id,
            match.version,
            seat,
            secrets.token_hex(8),
            game.action_text(action),
            now_ms - 40_000 + len(rows),
            False,
        )
        match.record(row, game.apply(match.state, seat, action))
        rows.append(row)
    finished = (
        MatchFinished(created.match_id, now_ms - 1_000, match.final_hash(), "normal")
        if finish
        else None
    )
    log = MatchLog(created, tuple(seats), tuple(rows), finished)
    return log, StoredMatch(created.match_id, tokens, match.to_act())


async def populate(db: Path, live: int, finished: int = 0) -> list[StoredMatch]:
    """Store ``live`` unfinished mid-game matches (10-30 actions in) and ``finished``
    matches that ended a second ago; returns the live ones."""
    now_ms = time.time_ns() // 1_000_000
    store = SqliteStore(db)
    made: list[StoredMatch] = []
    try:
        batch: list[MatchLog] = []
        for index in range(live + finished):
            done = index >= live
            log, stored = _made(index, now_ms, 10 + index % 21, done)
            batch.append(log)
            if not done:
                made.append(stored)
            if len(batch) >= 1000:
                await store.import_logs(batch)
                batch = []
        if batch:
            await store.import_logs(batch)
    finally:
        await store.close()
    return made


# --------------------------------------------------------------------------- server helpers


def rss_kib(pid: int) -> int:
    """The resident set of a process, KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each thread of a process, by thread id (Linux)."""
    used: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            used[int(task.name)] = (int(fields[11]) + int(fields[12])) / TICKS_PER_S
    return used


def loop_thread_share(pid: int, before: dict[int, float], after: dict[int, float]) -> float | None:
    """The main thread's (the event loop's) share of a process's CPU between two samples;
    the rest is the SQLite writer thread (statements, commits, fsync) and gRPC's poller."""
    spent = {tid: after[tid] - before.get(tid, 0.0) for tid in after}
    total = sum(spent.values())
    return spent.get(pid, 0.0) / total if total > 0 else None


async def settled(pid: int, quiet_s: float = 0.6, limit_s: float = 120.0) -> float:
    """Wait until the server's CPU stays (almost) idle for ``quiet_s``: recovery and the
    collector's start-up work are over. Returns the seconds waited."""
    started = time.perf_counter()
    before = process_cpu_seconds(pid)
    while time.perf_counter() - started < limit_s:
        await asyncio.sleep(quiet_s)
        now = process_cpu_seconds(pid)
        if before is None or now is None:
            break
        if sum(now) - sum(before) < 0.02 * quiet_s + 0.011:  # below ~2% of a core (+1 tick)
            break
        before = now
    return time.perf_counter() - started


TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

GC_LINE = re.compile(r'"largest_pause_ms": ([0-9.]+)')
RECOVERED_LINE = re.compile(r'"event": "recovered"')


def largest_gc_pause_ms(log_text: str) -> float | None:
    """The ``gc_pauses`` line the server writes at shutdown."""
    found = [float(m) for m in GC_LINE.findall(log_text)]
    return max(found) if found else None


def gc_summary(log_text: str) -> dict[str, Any] | None:
    """The whole ``gc_pauses`` line (collections and the largest pause per generation)."""
    for line in reversed(log_text.splitlines()):
        if '"gc_pauses"' in line:
            with contextlib.suppress(ValueError):
                summary: dict[str, Any] = json.loads(line)
                return summary
    return None


def server(folder: Path, db: Path, *extra: str) -> ServerProcess:
    """A bench server on ``db`` (like bench.py's, but on a given database file)."""
    return ServerProcess(db, folder, "--diagnostics", "--grace", "2", *extra, die_with_parent=True)


async def channels(target: str, count: int) -> list[grpc.aio.Channel]:
    made = [own_connection(target) for _ in range(count)]
    for channel in made:
        await asyncio.wait_for(channel.channel_ready(), timeout=15)
    return made


# --------------------------------------------------------------------------- (b), (c)


class ThinkingBot(RandomBot):
    """A random bot that thinks (sleeps) an exponential time with the given mean first;
    ``chosen_at`` is when its choice was made (the submit follows at once)."""

    def __init__(self, seed: int, think_mean_s: float) -> None:
        super().__init__(seed)
        self.think_mean_s = think_mean_s
        self.chosen_at = 0.0

    async def choose(  # type: ignore[override]  # the Bot protocol takes either form
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        if self.think_mean_s > 0:
            await asyncio.sleep(self._random.expovariate(1.0 / self.think_mean_s))
        action = super().choose(view, legal_actions)
        self.chosen_at = time.perf_counter()
        return action


@dataclass
class Paced:
    """What the bots saw inside one measuring window of (c)."""

    acks: int = 0
    errors: int = 0
    first_error: str = ""
    latencies: list[float] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)
    """(choice made, ack read) of each ack, on the perf_counter clock."""
    setups: list[tuple[float, float]] = field(default_factory=list)
    """(CreateMatch sent, every seat's first view read) of each match begun."""


DISK_PROBE = r"""
import json, os, sys, time
path, start, end, period = sys.argv[1], *map(float, sys.argv[2:5])
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
os.posix_fallocate(fd, 0, 1 << 20)
os.fsync(fd)
block, timed, n = b"\0" * 4096, [], 0
time.sleep(max(0.0, start - time.perf_counter()))
while time.perf_counter() < end:
    began = time.perf_counter()
    os.pwrite(fd, block, (n % 256) * 4096)
    os.fdatasync(fd)
    n += 1
    timed.append((began, time.perf_counter() - began))
    time.sleep(max(0.0, began + period - time.perf_counter()))
os.close(fd)
os.unlink(path)
json.dump(timed, sys.stdout)
"""
"""The host's own disk, beside the server: one 4 KiB block written and fdatasync'd every
``period`` seconds in the store's folder (the same file system), each timed. The store's
commit is such a write and fdatasync (of its WAL), so a stall seen here is one that every
commit in flight waits through as well, whatever the server does."""
PILOT_S = 3.0
"""(c)'s pilot run, which sets the think time that gives the wanted share of (b)."""
DISK_PROBE_PERIOD_S = 0.02
STALL_S = 0.005
"""A probe fdatasync slower than this is a stall of the host's disk (its median is a few
tenths of a millisecond); the same bound as (c)'s p99 target."""


async def disk_probe(folder: Path, window: Window) -> list[tuple[float, float]]:
    """(start, seconds) of each probe fdatasync inside ``window`` (:data:`DISK_PROBE`), from
    a process of its own: its timing is not held up by this client's interpreter. Linux's
    perf_counter is CLOCK_MONOTONIC, one clock for every process."""
    probe = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        DISK_PROBE,
        str(folder / f"disk-probe-{secrets.token_hex(4)}"),
        str(window.start),
        str(window.end),
        str(DISK_PROBE_PERIOD_S),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await probe.communicate()
    return [(float(start), float(took)) for start, took in json.loads(out or b"[]")]


def overlaps(span: tuple[float, float], intervals: Sequence[tuple[float, float]]) -> bool:
    """Whether ``span`` and one of ``intervals`` (each (start, end)) share a moment."""
    return any(start < span[1] and span[0] < end for start, end in intervals)


def tail_attribution(
    timed: Sequence[tuple[float, float]],
    spans: Sequence[tuple[float, float]],
    setups: Sequence[tuple[float, float]],
) -> dict[str, Any]:
    """What the acks slower than STALL_S waited through, and the host's fdatasync beside
    them (``timed``, from :func:`disk_probe`).

    An ack's span runs from its choice to its ack being read. It waited through a stall of
    the host's disk when it overlaps a probe fdatasync slower than STALL_S, and through a
    match's setup when it overlaps one (CreateMatch, four joins, four Play streams and
    their first views: nine calls of the server's in a burst). ``p99_ms_clear`` is the p99
    of the acks that overlapped neither: what the server's game path and the two shared
    cores leave. A diagnosis of the tail, not the target's figure, which counts every ack.
    """
    durations = sorted(d for _, d in timed)
    stalls = [(start, start + d) for start, d in timed if d > STALL_S]
    slow = [span for span in spans if span[1] - span[0] > STALL_S]
    in_stalls = [overlaps(span, stalls) for span in slow]
    in_setups = [overlaps(span, setups) for span in slow]
    pairs = list(zip(in_stalls, in_setups, strict=True))
    either = stalls + list(setups)
    clear = sorted(b - a for a, b in spans if not overlaps((a, b), either))
    return {
        "fdatasyncs": len(durations),
        "p50_ms": percentile_ms(durations, 0.50),
        "p99_ms": percentile_ms(durations, 0.99),
        "max_ms": 1e3 * durations[-1] if durations else None,
        "stalls": len(stalls),
        "stalled_ms": 1e3 * sum(end - start for start, end in stalls),
        "setups": len(setups),
        "acks": len(spans),
        "acks_in_setups": sum(1 for span in spans if overlaps(span, setups)),
        "slow_acks": len(slow),
        "slow_acks_in_stalls": sum(in_stalls),
        "slow_acks_in_setups": sum(1 for d, m in pairs if m and not d),
        "slow_acks_in_neither": sum(1 for d, m in pairs if not d and not m),
        "acks_clear": len(clear),
        "p99_ms_clear": percentile_ms(clear, 0.99),
    }


async def paced_path(
    clients: Sequence[AsyncClient],
    tables: int,
    think_mean_s: float,
    warmup: float,
    seconds: float,
    server_pid: int,
    probe_dir: Path | None = None,
) -> dict[str, Any]:
    """``tables`` matches of 4 thinking bots, replaced as they finish; submit->ack latency.

    With ``probe_dir`` (the store's folder), :func:`disk_probe` times the host's own
    fdatasync there during the window, and :func:`tail_attribution` says what the slow
    acks waited through: one of its stalls, a match's setup, or neither."""
    window = Window.after(warmup, seconds)
    tally = Paced()

    def on_ack_of(bot: ThinkingBot) -> Callable[[Any, Any], None]:
        def on_ack(_request: Any, _response: Any) -> None:
            now = time.perf_counter()
            if window.start <= now < window.end:
                tally.acks += 1
                tally.latencies.append(now - bot.chosen_at)
                tally.spans.append((bot.chosen_at, now))

        return on_ack

    def first_views(began: float) -> Callable[[int], Callable[[Any], None]]:
        """``on_view`` of each seat of a match begun at ``began``: its setup ends when every
        seat has read its first view."""
        seen: set[int] = set()

        def of_seat(seat: int) -> Callable[[Any], None]:
            def on_view(_view: Any) -> None:
                if seat not in seen:
                    seen.add(seat)
                    if len(seen) == SEATS:
                        tally.setups.append((began, time.perf_counter()))

            return on_view

        return of_seat

    async def table(index: int) -> None:
        client = clients[index % len(clients)]
        number = 0
        while time.perf_counter() < window.end:
            number += 1
            try:
                began = time.perf_counter()
                created = await client.create_match(GAME_ID, SEATS, {})
                joined = await asyncio.gather(
                    *(client.join(created.match_id, name=f"p{index}-{s}") for s in range(SEATS))
                )
                on_view = first_views(began)
                async with asyncio.TaskGroup() as group:
                    for seat in joined:
                        bot = ThinkingBot(
                            index * 1_000_003 + number * 101 + seat.seat, think_mean_s
                        )
                        group.create_task(
                            play_seat(
                                client, seat, bot, on_ack=on_ack_of(bot), on_view=on_view(seat.seat)
                            )
                        )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                tally.errors += 1
                tally.first_error = tally.first_error or f"{type(exc).__name__}: {exc}"[:300]
                await asyncio.sleep(0.05)

    cpu = CpuWindow(server_pid)
    tasks = [asyncio.ensure_future(table(i)) for i in range(tables)]
    probe = asyncio.ensure_future(disk_probe(probe_dir, window)) if probe_dir is not None else None
    await sample_cpu(window, cpu)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    latencies = sorted(tally.latencies)
    disk = tail_attribution(await probe, tally.spans, tally.setups) if probe is not None else None
    return {
        "disk": disk,
        "think_mean_ms": 1e3 * think_mean_s,
        "acks": tally.acks,
        "per_s": tally.acks / window.seconds,
        "p50_ms": percentile_ms(latencies, 0.50),
        "p99_ms": percentile_ms(latencies, 0.99),
        "p999_ms": percentile_ms(latencies, 0.999),
        "server_cpu_us_per_decision": 1e6 * cpu.server_s / tally.acks
        if cpu.server_s is not None and tally.acks
        else None,
        "errors": tally.errors,
        "first_error": tally.first_error,
    }


async def throughput_and_latency(
    port: int, args: argparse.Namespace, pid: int, folder: Path
) -> dict[str, Any]:
    """(b), then (c) at a quarter and at half of (b)'s rate, the host's disk probed in
    ``folder`` (the store's) during each (c) window."""
    target = f"127.0.0.1:{port}"
    tables = 16
    chans = await channels(target, tables)  # a connection per table, as 16 clients would
    try:
        stubs = [diagnostics_pb2_grpc.DiagnosticsServiceStub(c) for c in chans]  # type: ignore[no-untyped-call]
        clients = [AsyncClient(target, channel=c) for c in chans]
        console.print(f"[dim](b) echo stream: 64 streams, {args.seconds:g} s...[/]")
        echo = await echo_stream(stubs, tables * SEATS, args.warmup, args.seconds, pid)
        console.print(
            f"[dim](b) echo stream, {SHAPED_REPLIES} replies of each message: 64 streams, "
            f"{args.seconds:g} s...[/]"
        )
        # A decision's shape: one message in, its two replies out, no server work.
        shaped_echo = functools.partial(
            echo_stream,
            stubs,
            tables * SEATS,
            args.warmup,
            args.seconds,
            pid,
            replies=SHAPED_REPLIES,
            extra_bytes=SHAPED_EXTRA_BYTES,
        )
        shaped = await shaped_echo()
        console.print(f"[dim](b) game: {tables} matches x {SEATS} bots, {args.seconds:g} s...[/]")
        threads_before = thread_cpu_seconds(pid)
        game = await game_path(clients, tables, SEATS, "trial", args.warmup, args.seconds, pid)
        results: dict[str, Any] = {
            "echo": echo.as_json(),
            "echo_shaped": shaped.as_json(),
            "game": game.as_json(),
        }
        results["game"]["loop_thread_share"] = loop_thread_share(
            pid, threads_before, thread_cpu_seconds(pid)
        )
        if game.per_s > 0:
            # The same transport at half the game's rate, in its rhythm (tables of four
            # streams in lock-step): (c)'s half load. A server with time to spare wakes for
            # fewer messages at a time, so each costs more than in the saturated echo.
            console.print(
                f"[dim](b) echo stream, {SHAPED_REPLIES} replies of each, at "
                f"{game.per_s / 2:,.0f} exchanges/s, tables of {SEATS} in lock-step: "
                f"64 streams, {args.seconds:g} s...[/]"
            )
            at_half = await shaped_echo(rate=game.per_s / 2, table=SEATS)
            results["echo_shaped_at_half"] = at_half.as_json()
        capacity = game.per_s
        bots = tables * SEATS
        for share in (0.25, 0.5):
            wanted = share * capacity
            # About half the bots have a decision open at any time (Take 5's sealed
            # selections: every seat decides; row choices: one), so a mean think time of
            # (deciding bots / wanted rate) gives roughly the wanted rate. Roughly: a round
            # waits for its slowest seat, so it reached about 0.8 of it. A short pilot at
            # that think time measures the rate, and the think time is scaled by the rate
            # reached over the rate wanted (the rate goes about as 1 / think time).
            first = max(0.0, (bots * 0.5) / wanted) if wanted > 0 else 0.1
            think = first
            pilot_rate = None
            if wanted > 0:
                pilot_s = min(PILOT_S, args.seconds)
                console.print(
                    f"[dim](c) at {share:g} of (b): pilot at think {1e3 * first:.0f} ms, "
                    f"{pilot_s:g} s...[/]"
                )
                pilot = await paced_path(clients, tables, first, args.warmup, pilot_s, pid)
                pilot_rate = pilot["per_s"]
                if pilot_rate > 0:
                    think = first * pilot_rate / wanted
            console.print(
                f"[dim](c) at {share:g} of (b): think {1e3 * think:.0f} ms, "
                f"{args.seconds:g} s...[/]"
            )
            paced = await paced_path(
                clients, tables, think, args.warmup, args.seconds, pid, probe_dir=folder
            )
            paced["pilot"] = {"think_mean_ms": 1e3 * first, "per_s": pilot_rate}
            paced["share_wanted"] = share
            paced["share_reached"] = paced["per_s"] / capacity if capacity else None
            results[f"c_{share:g}"] = paced
        return results
    finally:
        for channel in chans:
            await channel.close()


async def serial_baseline(
    port: int, args: argparse.Namespace, pid: int, pipelined: dict[str, Any], folder: Path
) -> dict[str, Any]:
    """The same game path and (c) at half capacity on a server with ``--serial-appends``
    (each submit holds its match's lock until durable): the baseline of pipelined appends,
    measured in the same run. (c) uses the pipelined run's think time, so both servers get
    the same offered load."""
    target = f"127.0.0.1:{port}"
    tables = 16
    chans = await channels(target, tables)
    try:
        clients = [AsyncClient(target, channel=c) for c in chans]
        console.print(f"[dim](b) serial appends: game, {args.seconds:g} s...[/]")
        game = await game_path(clients, tables, SEATS, "trial", args.warmup, args.seconds, pid)
        half = pipelined.get("c_0.5")
        results: dict[str, Any] = {"game": game.as_json()}
        if half:
            console.print(f"[dim](c) serial appends, at the same load, {args.seconds:g} s...[/]")
            results["c_0.5"] = await paced_path(
                clients,
                tables,
                half["think_mean_ms"] / 1e3,
                args.warmup,
                args.seconds,
                pid,
                probe_dir=folder,
            )
        return results
    finally:
        for channel in chans:
            await channel.close()


MEMORY_ROUNDS = 3
"""Alternations of the memory store's short and long matches: the two drift together."""


def pooled(windows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several game-path windows as one: decisions and server CPU summed (the first
    window's other fields kept)."""
    count = sum(w["count"] for w in windows)
    started = sum(w.get("matches_started", 0) for w in windows)
    finished = sum(w.get("matches_finished", 0) for w in windows)
    seconds = sum(w["seconds"] for w in windows)
    cpu_us = sum((w["server_cpu_us_per_message"] or 0.0) * w["count"] for w in windows)
    known = all(w["server_cpu_us_per_message"] is not None for w in windows)
    return {
        **windows[0],
        "count": count,
        "seconds": seconds,
        "per_s": count / seconds if seconds else 0.0,
        "server_cpu_us_per_message": cpu_us / count if count and known else None,
        "matches_started": started,
        "matches_finished": finished,
        "windows": len(windows),
    }


async def memory_game(
    port: int, args: argparse.Namespace, pid: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(b)'s game path on a server whose store is memory: its CPU per decision, less than
    the SQLite server's by what the store costs; and the same in matches of ``LONG_DEALS``
    deals, in which few or no matches begin or end (``decision_work.breakdown`` tells the
    matches' setups and ends from the two). ``MEMORY_ROUNDS`` alternations of the two,
    each window a ``MEMORY_ROUNDS``-th of ``args.seconds``, pooled."""
    target = f"127.0.0.1:{port}"
    chans = await channels(target, 16)
    seconds = args.seconds / MEMORY_ROUNDS
    try:
        clients = [AsyncClient(target, channel=c) for c in chans]
        console.print(
            f"[dim](b) game, memory store: 16 matches x {SEATS} bots, of 3 and of "
            f"{LONG_DEALS} deals in turn, {MEMORY_ROUNDS} x {seconds:.3g} s each...[/]"
        )
        short: list[dict[str, Any]] = []
        long: list[dict[str, Any]] = []
        for _ in range(MEMORY_ROUNDS):
            for deals, into in ((None, short), (LONG_DEALS, long)):
                game = await game_path(
                    clients, 16, SEATS, "trial", args.warmup, seconds, pid, deals=deals
                )
                into.append(game.as_json())
        return pooled(short), pooled(long)
    finally:
        for channel in chans:
            await channel.close()


async def without_disk(port: int, args: argparse.Namespace, pid: int, think_ms: float) -> Any:
    """(c) at half capacity, at the pipelined run's think time (the same offered load), on a
    server whose store is memory: the same server with no disk under its acks."""
    target = f"127.0.0.1:{port}"
    chans = await channels(target, 16)
    try:
        clients = [AsyncClient(target, channel=c) for c in chans]
        console.print(f"[dim](c) memory store, at the same load, {args.seconds:g} s...[/]")
        return await paced_path(clients, 16, think_ms / 1e3, args.warmup, args.seconds, pid)
    finally:
        for channel in chans:
            await channel.close()


# --------------------------------------------------------------------------- (d), (e)


async def cpu_at_scale(port: int, pid: int, seconds: float, warmup: float) -> dict[str, Any]:
    """Server CPU per decision while 10 matches are played (the stored ones stay idle)."""
    target = f"127.0.0.1:{port}"
    chans = await channels(target, 10)  # a connection per table
    try:
        clients = [AsyncClient(target, channel=c) for c in chans]
        result = await game_path(clients, 10, SEATS, "trial", warmup, seconds, pid)
        measured: dict[str, Any] = result.as_json()
        return measured
    finally:
        for channel in chans:
            await channel.close()


async def scale_runs(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """(d) and (e): one server per size, each on a store prepared beforehand."""
    results: dict[str, Any] = {}
    pauses: dict[str, float] = {}
    for live in args.scales:
        db = folder / f"scale{live}.db"
        idle = max(0, live - 10)
        console.print(f"[dim](d) storing {idle} idle mid-game matches...[/]")
        await populate(db, idle)
        proc = server(folder, db, "--log-level", "warning")
        proc.log_path = folder / f"scale{live}.log"
        try:
            port = await proc.start_async(within_s=60)
            waited = await settled(proc.pid)
            rss_idle = rss_kib(proc.pid)
            console.print(
                f"[dim](d) {live} live matches (settled after {waited:.1f} s), "
                f"10 played for {args.seconds:g} s...[/]"
            )
            measured = await cpu_at_scale(port, proc.pid, args.seconds, args.warmup)
            measured["rss_kib_settled"] = rss_idle
            measured["settle_s"] = waited
            results[str(live)] = measured
        finally:
            proc.stop()
        text = proc.log_path.read_text(errors="replace")
        pause = largest_gc_pause_ms(text)
        results[str(live)]["largest_gc_pause_ms"] = pause
        results[str(live)]["gc"] = gc_summary(text)
        if pause is not None:
            pauses[f"(d) {live:,} live matches"] = pause
    return {"runs": results, "pauses": pauses}


async def memory_runs(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """(e): resident set of a settled server on an empty store, on ``idle`` unfinished
    matches, and on ``finished`` matches finished a second ago (kept in memory)."""
    sizes: dict[str, int] = {}
    cases = {
        "empty": (0, 0),
        "idle": (args.idle_matches, 0),
        "finished": (0, args.finished_matches),
    }
    for name, (live, finished) in cases.items():
        db = folder / f"memory-{name}.db"
        await populate(db, live, finished)
        sizes[name] = await settled_rss(folder, f"memory-{name}")
    idle_kb = (sizes["idle"] - sizes["empty"]) * 1.024 / max(1, args.idle_matches)
    finished_kb = (sizes["finished"] - sizes["empty"]) * 1.024 / max(1, args.finished_matches)
    # Finished live: the same matches played through a server that forgets a finished
    # match at once (--finished-linger 0) and through servers that keep it; the difference
    # is what keeping costs, the allocator's leftovers of playing it included. Kept whole
    # for the whole linger (--finished-whole 3600), and as a server keeps them by default
    # once their time whole is over: their seats' tokens only (--finished-whole 1,
    # measured once that second has passed).
    cases_live = {
        "live-linger-0": ("--finished-linger", "0"),
        "live-whole": ("--finished-linger", "3600", "--finished-whole", "3600"),
        "live-tokens": ("--finished-linger", "3600", "--finished-whole", "1"),
    }
    for name, extra in cases_live.items():
        sizes[name] = await settled_rss(
            folder, name, *extra, play=args.live_finished_matches, wait_s=1.5
        )

    def per_live(name: str) -> float:
        played = max(1, int(args.live_finished_matches))
        return (sizes[name] - sizes["live-linger-0"]) * 1.024 / played

    live_kb = per_live("live-tokens")
    whole_kb = per_live("live-whole")
    return {
        "rss_kib": sizes,
        "idle_kb_per_match": idle_kb,
        "finished_kb_per_match": finished_kb,
        "finished_live_kb_per_match": live_kb,
        "finished_live_whole_kb_per_match": whole_kb,
        "finished_live_matches": args.live_finished_matches,
    }


async def settled_rss(
    folder: Path, name: str, *extra: str, play: int = 0, wait_s: float = 0.0
) -> int:
    """The resident set (KiB) of a server on ``folder/<name>.db``, once settled, after
    ``play`` whole matches were played through it and ``wait_s`` more."""
    proc = server(folder, folder / f"{name}.db", "--log-level", "warning", *extra)
    proc.log_path = folder / f"{name}.log"
    try:
        port = await proc.start_async(within_s=60)
        if play:
            await play_matches(f"127.0.0.1:{port}", play, tables=8)
        await asyncio.sleep(wait_s)
        await settled(proc.pid)
        return rss_kib(proc.pid)
    finally:
        proc.stop()


async def play_matches(target: str, count: int, tables: int) -> None:
    """``count`` whole Take 5 matches (trial edition, 4 random bots), ``tables`` at a time,
    each table on a connection of its own."""
    chans = await channels(target, tables)
    left = [count]
    try:

        async def table(index: int) -> None:
            client = AsyncClient(target, channel=chans[index])
            while left[0] > 0:
                left[0] -= 1
                number = left[0]
                created = await client.create_match(GAME_ID, SEATS, {"edition": "trial"})
                seats = [await client.join(created.match_id) for _ in range(SEATS)]
                await asyncio.gather(
                    *(play_seat(client, s, RandomBot(seed=s.seat + 10 * number)) for s in seats)
                )

        await asyncio.gather(*(table(i) for i in range(tables)))
    finally:
        for channel in chans:
            await channel.close()


# --------------------------------------------------------------------------- (f)


async def recovery_run(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """(f): spawn on ``idle_matches`` stored unfinished matches; time to health, to the
    "recovered" line, and what sampled calls right after health waited."""
    db = folder / "recovery.db"
    stored = await populate(db, args.idle_matches)
    proc = server(folder, db, "--log-level", "info")
    proc.log_path = folder / "recovery.log"
    spawned = time.perf_counter()
    proc.spawn()
    health_s = None
    port_s = 0.0
    recovered_s = None
    sample_waits: list[float] = []
    failures = 0
    first_error: list[str] = []
    try:
        while proc._poll_started() is None:  # the port, once written
            if time.perf_counter() - spawned > 60:
                raise TimeoutError("the server did not start")
            await asyncio.sleep(0.005)
        port_s = time.perf_counter() - spawned
        chans = await channels(proc.target, 1)
        try:
            health = health_pb2_grpc.HealthStub(chans[0])
            while True:
                try:
                    answer = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if answer.status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.aio.AioRpcError:
                    pass
                await asyncio.sleep(0.005)
            health_s = time.perf_counter() - spawned
            client = AsyncClient(proc.target, channel=chans[0])
            chooser = random.Random(7)
            sample = chooser.sample(stored, min(args.recovery_samples, len(stored)))

            # Under the server's cap on open calls per connection (128, rpc/limits.py):
            # 200 calls at once on one channel were partly refused RESOURCE_EXHAUSTED,
            # rightly, which is the limit at work rather than recovery.
            open_calls = asyncio.Semaphore(64)

            async def probe(one: StoredMatch) -> None:
                async with open_calls:
                    await probe_one(one)

            async def probe_one(one: StoredMatch) -> None:
                nonlocal failures
                seat = one.to_act[0] if one.to_act else 0
                started = time.perf_counter()
                try:
                    view = await client.get_view(Seat(one.match_id, seat, one.tokens[seat]))
                    if view.version < 1:
                        failures += 1
                        first_error.append(f"version {view.version}")
                except grpc.aio.AioRpcError as exc:
                    failures += 1
                    first_error.append(f"{exc.code().name}: {exc.details()}")
                sample_waits.append(time.perf_counter() - started)

            await asyncio.gather(*(probe(one) for one in sample))
            while recovered_s is None and time.perf_counter() - spawned < 120:
                text = proc.log_path.read_text(errors="replace")
                for line in text.splitlines():
                    if RECOVERED_LINE.search(line):
                        seconds = json.loads(line).get("seconds")
                        recovered_s = time.perf_counter() - spawned
                        console.print(f"[dim](f) recovery took {seconds} s in the server[/]")
                        break
                else:
                    await asyncio.sleep(0.05)
        finally:
            for channel in chans:
                await channel.close()
    finally:
        proc.stop()
    waits = sorted(sample_waits)
    return {
        "matches": args.idle_matches,
        "port_s": port_s,
        "health_s": health_s,
        "health_after_port_s": None if health_s is None else health_s - port_s,
        "all_playable_s": recovered_s,
        "sampled_calls": len(waits),
        "sampled_failures": failures,
        "first_error": first_error[0] if first_error else "",
        "sampled_wait_p50_ms": percentile_ms(waits, 0.5),
        "sampled_wait_max_ms": 1e3 * waits[-1] if waits else None,
        "largest_gc_pause_ms": largest_gc_pause_ms(proc.log_path.read_text(errors="replace")),
        "gc": gc_summary(proc.log_path.read_text(errors="replace")),
    }


# --------------------------------------------------------------------------- report


def verdict(value: float | None, target: float, *, at_least: bool = False) -> str:
    if value is None:
        return "[yellow]-[/]"
    met = value >= target if at_least else value <= target
    return "[green]met[/]" if met else "[red]missed[/]"


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def info_row(table: Table, part: str, figure: str, value: str) -> None:
    """A row of the report with no target: a figure and its value only."""
    table.add_row(part, figure, value, "-", "-", "")


def decision_parts(b: dict[str, Any]) -> Breakdown | None:
    """The split of (b)'s decision (:func:`decision_work.breakdown`) when the run measured
    every part: the memory store's game path, the shaped echo and the own work."""
    memory, work = b.get("memory_game"), b.get("own_work")
    runtime = (b.get("runtime_work") or {}).get("us_per_decision")
    shaped = b.get("echo_shaped")
    if not (memory and shaped and work):
        return None
    decision = b["game"]["server_cpu_us_per_message"]
    memory_decision = memory["server_cpu_us_per_message"]
    transport = shaped["server_cpu_us_per_message"]
    if not (decision and memory_decision and transport):
        return None
    long_game = b.get("memory_game_long") or {}
    long_us, long_events = long_game.get("server_cpu_us_per_message"), match_events(long_game)
    events = match_events(memory)
    long = (
        (long_us, long_events, events)
        if long_us and long_events is not None and events is not None
        else None
    )
    return breakdown(
        decision, memory_decision, transport, work["us_per_decision"], long, runtime or None
    )


def _user_and_kernel_us(
    game: dict[str, Any], shaped: dict[str, Any] | None
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """(user, kernel) server CPU in us of a decision and of an echo exchange with a
    decision's replies, from each window's CPU per message and kernel share."""
    pairs = []
    for window in (game, shaped):
        if not window:
            return None
        cpu, share = window.get("server_cpu_us_per_message"), window.get("server_sys_share")
        if cpu is None or share is None:
            return None
        pairs.append((cpu * (1.0 - share), cpu * share))
    return pairs[0], pairs[1]


def cpu_share_at(b: dict[str, Any], share: str) -> float | None:
    """The server's CPU (cores) in (c)'s run at ``share`` of (b)'s rate over its CPU in (b)
    flat out: how busy "that share of capacity" keeps it."""
    game, paced = b.get("game"), b.get(f"c_{share}")
    if not (game and paced):
        return None
    flat_out = game["per_s"] * (game["server_cpu_us_per_message"] or 0.0)
    busy = paced["per_s"] * (paced.get("server_cpu_us_per_decision") or 0.0)
    return busy / flat_out if flat_out and busy else None


def report(results: dict[str, Any]) -> None:
    table = Table(title="make bench (b)-(g): the server")
    for column in ("", "figure", "value", "target", "ratio to target", ""):
        table.add_column(column)
    b = results.get("b")
    if b:
        echo, game = b["echo"], b["game"]
        ratio = game["per_s"] / echo["per_s"] if echo["per_s"] else None
        table.add_row(
            "(b)",
            f"decisions/s {game['per_s']:,.0f} / echo msgs/s {echo['per_s']:,.0f}",
            fmt(ratio, 3),
            ">= 0.25",
            fmt(None if ratio is None else ratio / TARGETS["b_ratio"]),
            verdict(ratio, TARGETS["b_ratio"], at_least=True),
        )
        cpu_game, cpu_echo = game["server_cpu_us_per_message"], echo["server_cpu_us_per_message"]
        cpu_ratio = cpu_echo / cpu_game if cpu_game and cpu_echo else None
        table.add_row(
            "(b)",
            f"server CPU: echo msg {fmt(cpu_echo, 0)} us / decision {fmt(cpu_game, 0)} us",
            fmt(cpu_ratio, 3),
            ">= 0.25",
            fmt(None if cpu_ratio is None else cpu_ratio / TARGETS["b_ratio"]),
            verdict(cpu_ratio, TARGETS["b_ratio"], at_least=True),
        )
        shaped = b.get("echo_shaped")
        if shaped:
            # The transport alone in a decision's shape (one message in, two out): the best
            # (b) could be with no server work, and the share of it that the server reaches.
            ceiling = shaped["per_s"] / echo["per_s"] if echo["per_s"] else None
            reached = game["per_s"] / shaped["per_s"] if shaped["per_s"] else None
            table.add_row(
                "(b)",
                f"ceiling: echo, {SHAPED_REPLIES} replies of each, {shaped['per_s']:,.0f}/s "
                "/ echo msgs/s (a decision's messages, no server work)",
                fmt(ceiling, 3),
                "-",
                "-",
                "",
            )
            table.add_row(
                "(b)",
                "decisions/s / that ceiling's exchanges/s (the rest: the server's own work)",
                fmt(reached, 3),
                "-",
                "-",
                "",
            )
        user_kernel = _user_and_kernel_us(game, shaped)
        if user_kernel is not None:
            # Where the gap is: a decision's kernel time is about twice an echo exchange's,
            # its user time (the server's Python: bench_instructions.py) six or seven times.
            (game_user, game_kernel), (shaped_user, shaped_kernel) = user_kernel
            table.add_row(
                "(b)",
                f"server CPU, user / kernel: a decision {game_user:.0f} / {game_kernel:.0f} "
                f"us; an echo exchange with {SHAPED_REPLIES} replies {shaped_user:.0f} / "
                f"{shaped_kernel:.0f} us (the ratio: user)",
                fmt(game_user / shaped_user if shaped_user else None, 2),
                "-",
                "-",
                "",
            )
        serial = b.get("serial")
        if serial:
            base = serial["game"]
            gain = game["per_s"] / base["per_s"] if base["per_s"] else None
            table.add_row(
                "(b)",
                f"pipelined appends: {game['per_s']:,.0f} / serial {base['per_s']:,.0f} "
                "decisions/s (same run)",
                fmt(gain, 2),
                "-",
                "-",
                "",
            )
            cpu_base = base["server_cpu_us_per_message"]
            table.add_row(
                "(b)",
                f"server CPU per decision, pipelined {fmt(cpu_game, 0)} / serial "
                f"{fmt(cpu_base, 0)} us",
                fmt(cpu_game / cpu_base if cpu_game and cpu_base else None, 2),
                "-",
                "-",
                "",
            )
            c_half, c_base = b.get("c_0.5"), serial.get("c_0.5")
            if c_half and c_base and c_half["p99_ms"] and c_base["p99_ms"]:
                info_row(
                    table,
                    "(c)",
                    f"p99 at 0.5, pipelined {fmt(c_half['p99_ms'])} / serial "
                    f"{fmt(c_base['p99_ms'])} ms (same offered load)",
                    fmt(c_half["p99_ms"] / c_base["p99_ms"]),
                )
        loop_share = game.get("loop_thread_share")
        if loop_share is not None:
            info_row(
                table,
                "(b)",
                "share of the server's CPU on the event loop thread (rest: SQLite writer, poller)",
                fmt(loop_share, 2),
            )
        parts = decision_parts(b)
        if parts is not None:
            cpu_echo_us = echo["server_cpu_us_per_message"]
            for name, us in (
                (
                    "a decision's messages (the echo with 2 replies, no server work)",
                    parts.transport_us,
                ),
                ("its own work, in process (parse, engine, views, ack)", parts.own_work_us),
                ("the store (SQLite less the memory store, same run)", parts.store_us),
                (
                    f"the matches' setups and ends (from matches of 3 and of {LONG_DEALS} deals)",
                    parts.matches_us,
                ),
                ("the rest: the server's own machinery on each decision", parts.rest_us),
                (
                    "of the machinery (rest and matches' share): the runtime's, in process",
                    parts.runtime_machinery_us,
                ),
                (
                    "of the machinery: the transport's layers (what the runtime's leaves)",
                    parts.transport_layers_us,
                ),
            ):
                if us is None:
                    continue
                info_row(
                    table,
                    "(b)",
                    f"of a decision's {fmt(parts.decision_us, 0)} us of server CPU: {name}, us",
                    fmt(us, 0),
                )
            info_row(
                table,
                "(b)",
                "by CPU, were the machinery free (the rest and the matches' share; the echo "
                "over messages + own work + store)",
                fmt(echo_share_without(parts, cpu_echo_us), 3),
            )
            info_row(
                table,
                "(b)",
                "a decision's messages and own work, in echo messages (0.5 needs the whole "
                "decision within 2, 0.25 within 4)",
                fmt(floor_in_echo_messages(parts, cpu_echo_us), 2),
            )
        for share in ("0.25", "0.5"):
            c = b.get(f"c_{share}")
            if not c:
                continue
            reached = c["share_reached"]
            label = f"at {share} of (b) (reached {fmt(reached)})"
            table.add_row("(c)", f"p50 {label}", fmt(c["p50_ms"]), "-", "-", "")
            table.add_row(
                "(c)",
                f"p99 {label}",
                fmt(c["p99_ms"]),
                "< 5 ms" if share == "0.5" else "-",
                fmt(c["p99_ms"] / TARGETS["c_p99_ms"]) if c["p99_ms"] else "-",
                verdict(c["p99_ms"], TARGETS["c_p99_ms"]) if share == "0.5" else "",
            )
            table.add_row(
                "(c)",
                f"p99.9 {label}",
                fmt(c["p999_ms"]),
                "< 20 ms" if share == "0.5" else "-",
                fmt(c["p999_ms"] / TARGETS["c_p999_ms"]) if c["p999_ms"] else "-",
                verdict(c["p999_ms"], TARGETS["c_p999_ms"]) if share == "0.5" else "",
            )
        c_half = b.get("c_0.5")
        disk = c_half.get("disk") if c_half else None
        if disk:
            info_row(
                table,
                "(c)",
                f"host disk beside (c) at 0.5: fdatasync p50 {fmt(disk['p50_ms'])} / p99 "
                f"{fmt(disk['p99_ms'])} / max {fmt(disk['max_ms'], 1)} ms; {disk['stalls']} "
                f"stalls over {1e3 * STALL_S:g} ms, {fmt(disk['stalled_ms'], 0)} ms in all",
                fmt(disk["max_ms"], 1),
            )
            slow = disk["slow_acks"]
            for key, what in (
                ("slow_acks_in_stalls", "waited through a host disk stall"),
                ("slow_acks_in_setups", "else overlapped a match's setup"),
                ("slow_acks_in_neither", "neither"),
            ):
                info_row(
                    table,
                    "(c)",
                    f"acks over {1e3 * STALL_S:g} ms at 0.5: {slow}; of them {what}: {disk[key]}"
                    + (
                        f" (of all acks {disk['acks_in_setups'] / disk['acks']:.2f} overlap"
                        f" one of the {disk['setups']} setups)"
                        if key == "slow_acks_in_setups" and disk["acks"]
                        else ""
                    ),
                    fmt(disk[key] / slow if slow else None, 2),
                )
            info_row(
                table,
                "(c)",
                f"p99 at 0.5 of the {disk['acks_clear']:,} acks clear of both",
                fmt(disk["p99_ms_clear"]),
            )
        memory = b.get("memory_c_0.5")
        if memory and c_half and memory["p99_ms"] and c_half["p99_ms"]:
            info_row(
                table,
                "(c)",
                f"p99 at 0.5, SQLite {fmt(c_half['p99_ms'])} / memory store "
                f"{fmt(memory['p99_ms'])} ms (same offered load; p99.9 "
                f"{fmt(c_half['p999_ms'])} / {fmt(memory['p999_ms'])})",
                fmt(c_half["p99_ms"] / memory["p99_ms"]),
            )
        half_echo, c_half_cpu = b.get("echo_shaped_at_half"), b.get("c_0.5")
        if shaped and half_echo and c_half_cpu:
            echo_half = half_echo["server_cpu_us_per_message"]
            echo_full = shaped["server_cpu_us_per_message"]
            game_half = c_half_cpu["server_cpu_us_per_decision"]
            if echo_half and echo_full and game_half and cpu_game:
                info_row(
                    table,
                    "(c)",
                    f"at half load, server CPU per decision {fmt(game_half, 0)} / at full load "
                    f"{fmt(cpu_game, 0)} us; per exchange of the echo with 2 replies, at half "
                    f"the game's rate in lock-step tables, {fmt(echo_half, 0)} / at full rate "
                    f"{fmt(echo_full, 0)} us (the second ratio)",
                    f"{fmt(game_half / cpu_game)} / {fmt(echo_half / echo_full)}",
                )
        for share in ("0.25", "0.5"):
            busy = cpu_share_at(b, share)
            if busy is not None:
                info_row(
                    table,
                    "(c)",
                    f"at {share} of (b)'s decisions/s, the server's CPU / its CPU flat out "
                    "(a message costs more with fewer per wake-up)",
                    fmt(busy),
                )
    client_gc = results.get("client_gc")
    if client_gc:
        info_row(
            table,
            "(c)",
            "the measuring client's own largest GC pause (ms; thresholds as the server's)",
            fmt(client_gc["largest_pause_ms"], 2),
        )
    d = results.get("d")
    if d:
        runs = d["runs"]
        small = runs[min(runs, key=int)]["server_cpu_us_per_message"]
        for live, run in sorted(runs.items(), key=lambda kv: int(kv[0])):
            cpu = run["server_cpu_us_per_message"]
            ratio = cpu / small if cpu and small else None
            table.add_row(
                "(d)",
                f"server CPU/decision, {int(live):,} live: {fmt(cpu, 0)} us",
                fmt(ratio),
                "<= 1.2x",
                fmt(None if ratio is None else ratio / TARGETS["d_ratio"]),
                verdict(ratio, TARGETS["d_ratio"]),
            )
    e = results.get("e")
    if e:
        table.add_row(
            "(e)",
            "KB per idle live match",
            fmt(e["idle_kb_per_match"], 1),
            "< 20",
            fmt(e["idle_kb_per_match"] / TARGETS["e_idle_kb"]),
            verdict(e["idle_kb_per_match"], TARGETS["e_idle_kb"]),
        )
        table.add_row(
            "(e)",
            "KB per finished match kept (finished before a restart)",
            fmt(e["finished_kb_per_match"], 1),
            "< 10",
            fmt(e["finished_kb_per_match"] / TARGETS["e_finished_kb"]),
            verdict(e["finished_kb_per_match"], TARGETS["e_finished_kb"]),
        )
        live = e.get("finished_live_kb_per_match")
        if live is not None:
            table.add_row(
                "(e)",
                f"KB per finished match kept (finished live, {e['finished_live_matches']:,}"
                " played, linger 3600 s against 0; after its time whole: tokens only)",
                fmt(live, 1),
                "< 10",
                fmt(live / TARGETS["e_finished_kb"]),
                verdict(live, TARGETS["e_finished_kb"]),
            )
        whole = e.get("finished_live_whole_kb_per_match")
        if whole is not None:
            table.add_row(
                "(e)",
                "  the same within its time whole (--finished-whole, default 10 s)",
                fmt(whole, 1),
                "-",
                "-",
                "-",
            )
    f = results.get("f")
    if f:
        table.add_row(
            "(f)",
            f"health answered, {f['matches']:,} stored (s)",
            fmt(f["health_s"]),
            "< 2 s",
            fmt(None if f["health_s"] is None else f["health_s"] / TARGETS["f_health_s"]),
            verdict(f["health_s"], TARGETS["f_health_s"]),
        )
        table.add_row(
            "(f)",
            "  of which: port open (process start, imports) / health after (s)",
            f"{fmt(f['port_s'])} / {fmt(f['health_after_port_s'])}",
            "-",
            "-",
            "",
        )
        table.add_row(
            "(f)",
            "every match playable (s)",
            fmt(f["all_playable_s"]),
            "< 15 s",
            fmt(None if f["all_playable_s"] is None else f["all_playable_s"] / TARGETS["f_all_s"]),
            verdict(f["all_playable_s"], TARGETS["f_all_s"]),
        )
        table.add_row(
            "(f)",
            f"calls right after health: p50 / max wait (ms), {f['sampled_failures']} failed",
            f"{fmt(f['sampled_wait_p50_ms'], 1)} / {fmt(f['sampled_wait_max_ms'], 1)}",
            "-",
            "-",
            "" if not f["sampled_failures"] else "[red]failed[/]",
        )
    pause = results.get("g")
    by_server = results.get("g_by_server") or {}
    where = max(by_server, key=by_server.__getitem__) if by_server else None
    table.add_row(
        "(g)",
        "largest GC pause of every run (ms)" + (f": the {where} server's" if where else ""),
        fmt(pause),
        "<= 20 ms",
        fmt(None if pause is None else pause / TARGETS["g_pause_ms"]),
        verdict(pause, TARGETS["g_pause_ms"]),
    )
    console.print(table)


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="each window (default 10)")
    parser.add_argument("--warmup", type=float, default=1.0, help="before each window")
    parser.add_argument("--quick", action="store_true", help="smoke run: ~60 s")
    parser.add_argument(
        "--only", default="bcdef", help="which of b (with c), d, e, f to run (default all)"
    )
    parser.add_argument(
        "--json", type=Path, default=ROOT / "var" / "bench_server.json", help="results file"
    )
    parser.add_argument(
        "--store",
        choices=("sqlite", "memory"),
        default="sqlite",
        help="the store of the (b) and (c) server (default sqlite; memory shows the store's"
        " share of the latency)",
    )
    args = parser.parse_args(argv)
    args.work_seconds = 3.0
    args.scales = (10, 1_000, 10_000)
    args.idle_matches = 10_000
    args.finished_matches = 2_000
    args.live_finished_matches = 600
    args.recovery_samples = 200
    if args.quick:
        args.seconds, args.warmup = 2.0, 0.5
        args.work_seconds = 0.5
        args.scales = (10, 1_000)
        args.idle_matches = 1_000
        args.finished_matches = 500
        args.live_finished_matches = 150
        args.recovery_samples = 50
    return args


async def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    pauses: dict[str, float] = {}  # the largest pause of each server the run started
    # The client's collector would stop its loop, and every ack in flight would be read
    # late: its pauses are no part of the server's latency. Tuned as the server's is.
    client_gc = PauseWatch().install()
    tune_for_server()
    if "b" in args.only:
        # Before any server runs: the decision's own work, in this process alone.
        console.print(f"[dim](b) a decision's own work, in process, {args.work_seconds:g} s...[/]")
        own_work = decision_work(args.work_seconds)
        console.print(
            f"[dim](b) the same decisions through the runtime, in process, "
            f"{args.work_seconds:g} s...[/]"
        )
        runtime_work = await measure_runtime_work(args.work_seconds)
        proc = bench_server(folder, None, args.store)
        proc.log_path = folder / "b_game.log"  # a log each: (g) is read from each server's
        try:
            port = await proc.start_async(within_s=60)
            results["b"] = await throughput_and_latency(port, args, proc.pid, folder)
        finally:
            proc.stop()
        results["b"]["own_work"] = own_work.as_json()
        results["b"]["runtime_work"] = runtime_work.as_json()
        text = proc.log_path.read_text(errors="replace")
        results["b"]["gc"] = gc_summary(text)
        pause = largest_gc_pause_ms(text)
        if pause is not None:
            pauses[f"(b) game, {args.store}"] = pause
        proc = bench_server(folder, None, args.store, "--serial-appends")
        proc.log_path = folder / "b_serial.log"
        try:
            port = await proc.start_async(within_s=60)
            results["b"]["serial"] = await serial_baseline(
                port, args, proc.pid, results["b"], folder
            )
        finally:
            proc.stop()
        pause = largest_gc_pause_ms(proc.log_path.read_text(errors="replace"))
        if pause is not None:
            pauses["(b) serial appends"] = pause
        half = results["b"].get("c_0.5")
        if args.store == "sqlite" and half:
            # A server of its own, so that the matches its windows leave behind (their clocks
            # run out 30 s later) do not play beside the (c) run below.
            proc = bench_server(folder, None, "memory")
            proc.log_path = folder / "b_memory_game.log"
            try:
                port = await proc.start_async(within_s=60)
                (
                    results["b"]["memory_game"],
                    results["b"]["memory_game_long"],
                ) = await memory_game(port, args, proc.pid)
            finally:
                proc.stop()
            pause = largest_gc_pause_ms(proc.log_path.read_text(errors="replace"))
            if pause is not None:
                pauses["(b) game, memory store"] = pause
            proc = bench_server(folder, None, "memory")
            proc.log_path = folder / "c_memory.log"
            try:
                port = await proc.start_async(within_s=60)
                results["b"]["memory_c_0.5"] = await without_disk(
                    port, args, proc.pid, half["think_mean_ms"]
                )
            finally:
                proc.stop()
            pause = largest_gc_pause_ms(proc.log_path.read_text(errors="replace"))
            if pause is not None:
                pauses["(c) memory store"] = pause
    if "d" in args.only:
        scale = await scale_runs(folder, args)
        results["d"] = {"runs": scale["runs"]}
        pauses.update(scale["pauses"])
    if "e" in args.only:
        console.print("[dim](e) memory: empty, idle and finished stores...[/]")
        results["e"] = await memory_runs(folder, args)
    if "f" in args.only:
        console.print(f"[dim](f) recovery of {args.idle_matches:,} stored matches...[/]")
        results["f"] = await recovery_run(folder, args)
        if results["f"]["largest_gc_pause_ms"] is not None:
            pauses["(f) recovery"] = results["f"]["largest_gc_pause_ms"]
    results["g"] = max(pauses.values()) if pauses else None
    results["g_by_server"] = pauses
    results["client_gc"] = client_gc.summary()
    client_gc.remove()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="speeltafel-bench-server-") as tmp:
        results, loop_name = run_loop(run(args, Path(tmp)))
    results["loop"] = loop_name
    results["total_seconds"] = time.perf_counter() - started
    report(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    console.print(f"[dim]results written to {args.json} ({results['total_seconds']:.0f} s)[/]")
    b = results.get("b")
    broken = b is not None and (b["game"]["count"] == 0 or b["game"].get("errors"))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
