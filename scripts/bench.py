"""``make bench``: how fast the engine, the full game path and the bare transport are.

Three measurements in one run, so that every headline number is a ratio between things
measured on the same machine at the same moment (shared machines are noisy; absolute
numbers drift between runs, ratios much less):

(a) engine: complete random playouts in-process of every game in the engine's registry
    (``new``, then a random seat of ``to_act`` plays a random one of its
    ``legal_actions`` until there is an ``outcome``), at default options with 4 seats
    (or the nearest count the game takes), plus Take 5's full edition with 10 seats: the
    engine's cost per move. Next to them OpenSpiel's C++ hearts (``pyspiel``, the
    optional extra ``bench``), driven the same way from Python in the same run: chance
    nodes sampled, only player moves counted. The target is at most 4x hearts per move
    for every game. The contestants take turns in short slices, so a load that comes and
    goes on a shared machine falls on all of them alike, and each one's time is the CPU
    time of this thread (``time.thread_time``), not the wall clock: other processes
    waiting for the same cores are not counted as cost.
(b) game path: a real server (a subprocess on an SQLite file in a temporary folder) and
    this process as the client: 16 Take 5 matches of 4 random bots each, every seat played
    by ``play_seat`` over its own Play stream, a new match started whenever one ends, for a
    fixed time. Counts acknowledged actions per second, with submit->ack latency.
(c) transport ceiling between the same two processes over the same channel(s): 64
    ``EchoStream`` ping-pongs (one message in flight per stream), and 64 callers of the
    unary ``Echo`` in a loop. Messages per second each.

The headline is b/c: the fraction of the bare transport's ceiling the full game path
reaches. Server and client CPU are sampled over each measuring window (from /proc), so
the table also shows CPU microseconds per message on each side.

Usage: ``.venv/bin/python scripts/bench.py [--seconds 10] [--quick] [--json var/bench.json]``.
``--engine-only --games karel_kakelaar,alles_klar`` runs (a) alone for those games (and hearts).
Each (c) and (b) window gets an uncounted warm-up first; the default run takes ~40 s.
``--store memory`` shows the SQLite store's share; ``--edition full --seats 10 --tables 6``
the cost of a 10-seat fan-out.
``--profile-server FILE`` runs the server under cProfile and prints its hottest functions.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import importlib.metadata
import json
import os
import platform
import pstats
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
from rich.console import Console
from rich.table import Table

from speeltafel.bots.random_bot import RandomBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import CHANNEL_OPTIONS, AsyncClient
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, diagnostics_pb2, diagnostics_pb2_grpc
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.registry import GAMES, get_game

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
GAME_ID = "take5"
HEARTS = "hearts (OpenSpiel)"
HEARTS_TARGET = 4.0  # (a): every game's cost per move at most this many times hearts'
SHAPED_REPLIES = 2  # a decision's shape: the submit in, its acknowledgement and a view out
SHAPED_EXTRA_BYTES = 550  # about the size of a Take 5 (trial) view on the game path
ENGINE_SLICE_S = 0.2  # each contestant's turn; the contestants alternate until done
# Beyond every game at its defaults: Take 5's largest table (the fan-out of 10 seats).
ENGINE_EXTRAS: tuple[tuple[str, dict[str, str], int], ...] = (("take5", {"edition": "full"}, 10),)

console = Console(width=None if sys.stdout.isatty() else 132)


# --------------------------------------------------------------------------- CPU sampling


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> tuple[float, float] | None:
    """(user, system) CPU seconds of a process, all threads (Linux /proc); None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # After the ")" that closes the command name, utime and stime are fields 12 and 13.
    return int(fields[11]) / _TICK, int(fields[12]) / _TICK


@dataclass
class CpuWindow:
    """CPU seconds used by the server and by this (client) process over a window."""

    server_pid: int
    server_start: tuple[float, float] | None = None
    client_start: tuple[float, float] = (0.0, 0.0)
    server_s: float | None = None
    server_sys_s: float | None = None
    client_s: float | None = None
    client_sys_s: float | None = None

    @staticmethod
    def _own() -> tuple[float, float]:
        times = os.times()
        return times.user, times.system

    def start(self) -> None:
        self.server_start = process_cpu_seconds(self.server_pid)
        self.client_start = self._own()

    def stop(self) -> None:
        end = process_cpu_seconds(self.server_pid)
        if end is not None and self.server_start is not None:
            self.server_sys_s = end[1] - self.server_start[1]
            self.server_s = end[0] - self.server_start[0] + self.server_sys_s
        own = self._own()
        self.client_sys_s = own[1] - self.client_start[1]
        self.client_s = own[0] - self.client_start[0] + self.client_sys_s

    def extra(self) -> dict[str, float | None]:
        """The kernel's share of each side's CPU (a syscall-heavy path shows here)."""
        return {
            "server_sys_share": None
            if not self.server_s or self.server_sys_s is None
            else self.server_sys_s / self.server_s,
            "client_sys_share": None
            if not self.client_s or self.client_sys_s is None
            else self.client_sys_s / self.client_s,
        }


# --------------------------------------------------------------------------- results


@dataclass
class EngineResult:
    """(a) one contestant: a game at some options and seats, or OpenSpiel's hearts."""

    name: str
    options: dict[str, str]
    seats: int
    seconds: float = 0.0
    playouts: int = 0
    actions: int = 0

    @property
    def label(self) -> str:
        given = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return f"{self.name} {given}".strip()

    @property
    def playouts_per_s(self) -> float:
        return self.playouts / self.seconds if self.seconds else 0.0

    @property
    def actions_per_s(self) -> float:
        return self.actions / self.seconds if self.seconds else 0.0

    @property
    def us_per_action(self) -> float:
        return 1e6 * self.seconds / self.actions if self.actions else float("inf")

    def as_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "playouts_per_s": self.playouts_per_s,
            "actions_per_s": self.actions_per_s,
            "us_per_action": self.us_per_action,
            "actions_per_playout": self.actions / self.playouts if self.playouts else None,
        }


@dataclass
class WireResult:
    """(b) or (c): messages (or acknowledged actions) over one measuring window."""

    name: str
    seconds: float
    count: int
    server_cpu_s: float | None
    client_cpu_s: float | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def per_s(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else 0.0

    def cpu_us_per_message(self, cpu_s: float | None) -> float | None:
        return None if cpu_s is None or not self.count else 1e6 * cpu_s / self.count

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seconds": self.seconds,
            "count": self.count,
            "per_s": self.per_s,
            "server_cpu_cores": None
            if self.server_cpu_s is None
            else self.server_cpu_s / self.seconds,
            "client_cpu_cores": None
            if self.client_cpu_s is None
            else self.client_cpu_s / self.seconds,
            "server_cpu_us_per_message": self.cpu_us_per_message(self.server_cpu_s),
            "client_cpu_us_per_message": self.cpu_us_per_message(self.client_cpu_s),
            **self.extra,
        }


# --------------------------------------------------------------------------- (a) engine


def default_seats(game_id: str) -> int:
    """4 seats, or the nearest count the game takes at its default options."""
    low, high = get_game(game_id).info.seats_for({})
    return min(max(4, low), high)


def game_slice(result: EngineResult, chooser: random.Random, seconds: float) -> None:
    """Whole random playouts of one game for about ``seconds``, added to ``result``.

    Playout ``i`` of a contestant is dealt from the key ``sha256(i)``, so every run plays
    the same deals; the moves are ``chooser``'s. A playout in progress is finished.
    """
    game = get_game(result.name)
    new, to_act, legal, apply, outcome = (
        game.new,
        game.to_act,
        game.legal_actions,
        game.apply,
        game.outcome,
    )
    choice, options, seats = chooser.choice, result.options, result.seats
    playouts = result.playouts
    actions = 0
    start, cpu_start = time.perf_counter(), time.thread_time()
    end = start + seconds
    now = start
    while now < end:
        state = new(options, seats, Rng(hashlib.sha256(playouts.to_bytes(8, "big")).digest()))
        while outcome(state) is None:
            seat = choice(to_act(state))
            state = apply(state, seat, choice(legal(state, seat)))
            actions += 1
        playouts += 1
        now = time.perf_counter()
    result.seconds += time.thread_time() - cpu_start
    result.playouts = playouts
    result.actions += actions


def load_hearts() -> Any | None:
    """OpenSpiel's hearts, or None when ``pyspiel`` is not installed (``.[bench]``)."""
    try:
        pyspiel: Any = importlib.import_module("pyspiel")
    except ImportError:
        return None
    return pyspiel.load_game("hearts")


def hearts_slice(result: EngineResult, hearts: Any, chooser: random.Random, seconds: float) -> None:
    """Whole random playouts of OpenSpiel's hearts, driven like :func:`game_slice`: a
    random legal action at every player node, a random outcome at every chance node (the
    deal, the pass direction); only player moves are counted, chance's time is not taken
    out (ours deal inside ``new`` and ``apply``, which are timed too)."""
    choice = chooser.choice
    playouts = actions = 0
    start, cpu_start = time.perf_counter(), time.thread_time()
    end = start + seconds
    now = start
    while now < end:
        state = hearts.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])
            else:
                state.apply_action(choice(state.legal_actions()))
                actions += 1
        playouts += 1
        now = time.perf_counter()
    result.seconds += time.thread_time() - cpu_start
    result.playouts += playouts
    result.actions += actions


def engine_costs(
    seconds: float, only: Sequence[str] = ()
) -> tuple[list[EngineResult], EngineResult | None]:
    """(a): every registered game (a new game joins by itself), the extras, and hearts
    when OpenSpiel is installed, each for about ``seconds`` in alternating slices.
    ``only``: just these game ids (and their extras), hearts still measured."""
    games = [EngineResult(game_id, {}, default_seats(game_id)) for game_id in GAMES]
    games += [EngineResult(name, dict(options), seats) for name, options, seats in ENGINE_EXTRAS]
    if only:
        games = [result for result in games if result.name in only]
    hearts_game = load_hearts()
    hearts = EngineResult(HEARTS, {}, 4) if hearts_game is not None else None
    chooser = random.Random(12345)
    rounds = max(1, round(seconds / ENGINE_SLICE_S))
    slice_s = seconds / rounds
    for _ in range(rounds):
        if hearts is not None:
            hearts_slice(hearts, hearts_game, chooser, slice_s)
        for result in games:
            game_slice(result, chooser, slice_s)
    return games, hearts


# --------------------------------------------------------------------------- the server


def own_connection(target: str) -> grpc.aio.Channel:
    """A channel with a TCP connection of its own. gRPC shares one connection between the
    channels of a process to the same target unless told not to; a table of bots is one
    client, and the server's limits are per connection (a single connection for 16 tables
    would measure its per-connection rate limit, not the server)."""
    return grpc.aio.insecure_channel(
        target, options=[*CHANNEL_OPTIONS, ("grpc.use_local_subchannel_pool", 1)]
    )


def bench_server(folder: Path, profile: Path | None, store: str, *extra: str) -> ServerProcess:
    """The server under test: port 0, SQLite in ``folder`` (or in memory), diagnostics on;
    terminated with the bench, even if it is killed (``die_with_parent``)."""
    return ServerProcess(
        folder / "bench.db" if store == "sqlite" else ":memory:",
        folder,
        "--diagnostics", "--grace", "2", *extra,  # the default log level, as it ships
        python_args=("-m", "cProfile", "-o", str(profile)) if profile is not None else (),
        die_with_parent=True,  # set before any thread exists: grpc starts later
    )  # fmt: skip


# --------------------------------------------------------------------------- timing windows


@dataclass
class Window:
    """A warm-up, then the measuring window [start, end] on the perf_counter clock."""

    start: float
    end: float

    @classmethod
    def after(cls, warmup: float, seconds: float) -> Window:
        now = time.perf_counter()
        return cls(now + warmup, now + warmup + seconds)

    @property
    def seconds(self) -> float:
        return self.end - self.start


async def sample_cpu(window: Window, cpu: CpuWindow) -> None:
    """Sample CPU at the window's start and end."""
    await asyncio.sleep(max(0.0, window.start - time.perf_counter()))
    cpu.start()
    await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
    cpu.stop()


def percentile_ms(sorted_seconds: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (nearest rank) of sorted durations in seconds, in milliseconds."""
    if not sorted_seconds:
        return None
    index = min(len(sorted_seconds) - 1, max(0, round(q * (len(sorted_seconds) - 1))))
    return 1e3 * sorted_seconds[index]


# --------------------------------------------------------------------------- (c) echo


async def echo_stream(
    stubs: Sequence[Any],
    streams: int,
    warmup: float,
    seconds: float,
    server_pid: int,
    replies: int = 1,
    extra_bytes: int = 0,
    rate: float | None = None,
    table: int = 1,
) -> WireResult:
    """``streams`` EchoStream calls, each with one message in flight, ping-pong. With
    ``replies`` > 1 each message is answered by that many (the further ones of
    ``extra_bytes``): the shape of a decision without the server's work. ``per_s`` counts
    exchanges (one message in and its replies), the CPU per message is per exchange too.
    With ``rate``, the streams together start about that many exchanges a second (each on
    a fixed schedule, the streams spread over it) instead of as many as they can. With
    ``table`` > 1, the streams go in groups of that many in lock-step, as the seats of a
    Take 5 table do: a group's streams send together, and the next round begins when every
    one of them has its replies (paced, with ``rate``, on the group's schedule)."""
    window = Window.after(warmup, seconds)
    counts = [0] * streams
    interval = streams / rate if rate else 0.0
    tables = max(1, streams // table)
    barriers = [asyncio.Barrier(table) for _ in range(tables)] if table > 1 else []
    stopping = [False] * tables  # a group ends together, or its barrier would wait forever

    async def worker(index: int) -> None:
        call = stubs[index % len(stubs)].EchoStream()
        message = diagnostics_pb2.EchoStreamRequest(
            sequence=index, replies=replies, extra_bytes=extra_bytes
        )
        start, end = window.start, window.end
        n = 0
        group = index // table if barriers else index
        due = time.perf_counter() + interval * group / (tables if barriers else streams)
        barrier = barriers[group] if barriers else None
        try:
            while True:
                if interval:
                    due += interval
                    delay = due - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                await call.write(message)
                for _ in range(replies):
                    await call.read()
                now = time.perf_counter()
                if barrier is not None:
                    if now >= start and now < end:
                        n += 1
                    stopping[group] |= now >= end
                    await barrier.wait()
                    if stopping[group]:
                        break
                    continue
                if now >= end:
                    break
                if now >= start:
                    n += 1
            await call.done_writing()
        except BaseException:
            if barrier is not None:  # the rest of the table would wait for this one forever
                await barrier.abort()
            raise
        finally:
            call.cancel()
            counts[index] = n

    cpu = CpuWindow(server_pid)
    await asyncio.gather(sample_cpu(window, cpu), *(worker(i) for i in range(streams)))
    return WireResult(
        "echo stream" if replies <= 1 else f"echo stream, {replies} replies",
        window.seconds,
        sum(counts),
        cpu.server_s,
        cpu.client_s,
        {"streams": streams, "replies": replies, "extra_bytes": extra_bytes, **cpu.extra()},
    )


async def echo_unary(
    stubs: Sequence[Any], callers: int, warmup: float, seconds: float, server_pid: int
) -> WireResult:
    """``callers`` tasks calling the unary Echo in a loop."""
    window = Window.after(warmup, seconds)
    counts = [0] * callers

    async def worker(index: int) -> None:
        stub = stubs[index % len(stubs)]
        message = diagnostics_pb2.EchoRequest(sequence=index)
        start, end = window.start, window.end
        n = 0
        while True:
            await stub.Echo(message)
            now = time.perf_counter()
            if now >= end:
                break
            if now >= start:
                n += 1
        counts[index] = n

    cpu = CpuWindow(server_pid)
    await asyncio.gather(sample_cpu(window, cpu), *(worker(i) for i in range(callers)))
    return WireResult(
        "echo unary",
        window.seconds,
        sum(counts),
        cpu.server_s,
        cpu.client_s,
        {"callers": callers, **cpu.extra()},
    )


# --------------------------------------------------------------------------- (b) game path


class TimedRandomBot(RandomBot):
    """A random bot that remembers when it last chose (play_seat submits right after)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.chosen_at = 0.0

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        action = super().choose(view, legal_actions)
        self.chosen_at = time.perf_counter()
        return action


@dataclass
class GameTally:
    """What the bots saw inside the measuring window."""

    acks: int = 0
    views: int = 0
    view_bytes_sampled: int = 0
    views_sampled: int = 0
    matches_finished: int = 0
    matches_started: int = 0
    errors: int = 0
    first_error: str = ""
    latencies: list[float] = field(default_factory=list)
    stats: list[RunStats] = field(default_factory=list)


async def game_path(
    clients: Sequence[AsyncClient],
    tables: int,
    seats: int,
    edition: str,
    warmup: float,
    seconds: float,
    server_pid: int,
    deals: int | None = None,
) -> WireResult:
    """``tables`` matches of ``seats`` random bots at a time, replaced as they finish
    (``deals`` in each: the game's default of 3 unless given)."""
    window = Window.after(warmup, seconds)
    tally = GameTally()
    options = {"edition": edition}
    if deals is not None:
        options["deals"] = str(deals)

    def make_on_ack(bot: TimedRandomBot) -> Callable[[Any, Any], None]:
        def on_ack(_request: Any, _response: Any) -> None:
            now = time.perf_counter()
            if window.start <= now < window.end:
                tally.acks += 1
                tally.latencies.append(now - bot.chosen_at)

        return on_ack

    def on_view(view: common_pb2.View) -> None:
        now = time.perf_counter()
        if window.start <= now < window.end:
            tally.views += 1
            if tally.views % 97 == 0:  # a sample: ByteSize costs client CPU
                tally.views_sampled += 1
                tally.view_bytes_sampled += view.ByteSize()

    async def table(index: int) -> None:
        client = clients[index % len(clients)]
        number = 0
        while time.perf_counter() < window.end:
            number += 1
            try:
                created = await client.create_match(GAME_ID, seats, options)
                joined = await asyncio.gather(
                    *(
                        client.join(created.match_id, name=f"bench-{index}-{s}")
                        for s in range(seats)
                    )
                )
                if window.start <= time.perf_counter() < window.end:
                    tally.matches_started += 1
                # A TaskGroup: one seat failing stops its match's other seats too.
                async with asyncio.TaskGroup() as group:
                    for seat in joined:
                        bot = TimedRandomBot(seed=index * 1_000_003 + number * 101 + seat.seat)
                        stats = RunStats()
                        tally.stats.append(stats)
                        group.create_task(
                            play_seat(
                                client,
                                seat,
                                bot,
                                on_ack=make_on_ack(bot),
                                on_view=on_view,
                                stats=stats,
                            )
                        )
                if window.start <= time.perf_counter() < window.end:
                    tally.matches_finished += 1
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                tally.errors += 1
                if not tally.first_error:
                    tally.first_error = f"{type(exc).__name__}: {exc}"[:300]
                await asyncio.sleep(0.05)

    cpu = CpuWindow(server_pid)
    tasks = [asyncio.ensure_future(table(i)) for i in range(tables)]
    await sample_cpu(window, cpu)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    latencies = sorted(tally.latencies)
    mean_view = tally.view_bytes_sampled / tally.views_sampled if tally.views_sampled else None
    extra = {
        "tables": tables,
        "seats": seats,
        "edition": edition,
        "latency_p50_ms": percentile_ms(latencies, 0.50),
        "latency_p99_ms": percentile_ms(latencies, 0.99),
        "views": tally.views,
        "views_per_s": tally.views / window.seconds,
        "views_per_ack": tally.views / tally.acks if tally.acks else None,
        "mean_view_bytes": mean_view,
        "matches_started": tally.matches_started,
        "matches_finished": tally.matches_finished,
        "rejected": sum(s.rejected for s in tally.stats),
        "reconnects": sum(s.reconnects for s in tally.stats),
        "resyncs": sum(s.resyncs for s in tally.stats),
        "errors": tally.errors,
        "first_error": tally.first_error,
        **cpu.extra(),
    }
    return WireResult("game path", window.seconds, tally.acks, cpu.server_s, cpu.client_s, extra)


# --------------------------------------------------------------------------- driving it


async def wire_benchmarks(
    port: int, args: argparse.Namespace, server_pid: int
) -> dict[str, WireResult]:
    target = f"127.0.0.1:{port}"
    channels = [own_connection(target) for _ in range(args.channels or args.tables)]
    try:
        for channel in channels:
            await asyncio.wait_for(channel.channel_ready(), timeout=15)
        echo_stubs = [
            diagnostics_pb2_grpc.DiagnosticsServiceStub(c)  # type: ignore[no-untyped-call]
            for c in channels
        ]
        clients = [AsyncClient(target, channel=c) for c in channels]
        limit = args.warmup + args.seconds + 60
        results: dict[str, WireResult] = {}
        concurrency = args.tables * args.seats

        console.print(f"[dim](c) echo stream: {concurrency} streams, {args.seconds:g} s...[/]")
        results["echo_stream"] = await asyncio.wait_for(
            echo_stream(echo_stubs, concurrency, args.warmup, args.seconds, server_pid), limit
        )
        console.print(
            f"[dim](c) echo stream, decision-shaped ({SHAPED_REPLIES} replies): "
            f"{concurrency} streams, {args.seconds:g} s...[/]"
        )
        results["echo_shaped"] = await asyncio.wait_for(
            echo_stream(
                echo_stubs,
                concurrency,
                args.warmup,
                args.seconds,
                server_pid,
                replies=SHAPED_REPLIES,
                extra_bytes=SHAPED_EXTRA_BYTES,
            ),
            limit,
        )
        console.print(f"[dim](c) echo unary: {concurrency} callers, {args.seconds:g} s...[/]")
        results["echo_unary"] = await asyncio.wait_for(
            echo_unary(echo_stubs, concurrency, args.warmup, args.seconds, server_pid), limit
        )
        console.print(
            f"[dim](b) game path: {args.tables} matches x {args.seats} seats, "
            f"{args.seconds:g} s...[/]"
        )
        results["game_path"] = await asyncio.wait_for(
            game_path(
                clients,
                args.tables,
                args.seats,
                args.edition,
                args.warmup,
                args.seconds,
                server_pid,
            ),
            limit,
        )
        return results
    finally:
        for channel in channels:
            await channel.close()


def run_loop(main: Coroutine[Any, Any, T]) -> tuple[T, str]:
    """Run ``main`` on uvloop when installed; returns its result and the loop's name."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main), "asyncio"
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main), f"uvloop {importlib.metadata.version('uvloop')}"


def git_revision() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


# --------------------------------------------------------------------------- reporting


def fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def report(
    engine: list[EngineResult],
    hearts: EngineResult | None,
    wire: dict[str, WireResult] | None,
    loop_name: str,
    args: argparse.Namespace,
) -> dict[str, Any]:
    engine_ratios = report_engine(engine, hearts) if engine else {}
    results: dict[str, Any] = {
        "when_unix": int(time.time()),
        "revision": git_revision(),
        "python": platform.python_version(),
        "grpc": grpc.__version__,
        "cpus": os.cpu_count(),
        "engine": [r.as_json() for r in engine],
        "hearts": hearts.as_json() if hearts is not None else None,
        "engine_over_hearts": engine_ratios,
        "engine_target_over_hearts": HEARTS_TARGET,
    }
    if wire is None:
        return results
    results.update(report_wire(engine, wire, loop_name, args))
    return results


def report_engine(engine: list[EngineResult], hearts: EngineResult | None) -> dict[str, float]:
    """The (a) table; each contestant's cost per move over hearts' (empty without hearts)."""
    base = hearts.us_per_action if hearts is not None and hearts.actions else None
    title = "(a) engine only, in-process: random playouts, cost per move"
    if base is None:
        title += " (hearts NOT measured: OpenSpiel is not installed; pip install -e '.[bench]')"
    table = Table(title=title)
    table.add_column("game")
    for column in ("seats", "playouts/s", "moves/s", "µs/move", "moves/playout", "÷ hearts"):
        table.add_column(column, justify="right")
    table.add_column(f"≤ {HEARTS_TARGET:g}x")
    ratios: dict[str, float] = {}
    rows = ([hearts] if hearts is not None else []) + engine
    for r in rows:
        ratio = r.us_per_action / base if base else None
        if ratio is not None and r is not hearts:
            ratios[r.label] = ratio
        verdict = (
            "" if ratio is None or r is hearts else ("yes" if ratio <= HEARTS_TARGET else "NO")
        )
        table.add_row(
            r.label,
            str(r.seats),
            fmt(r.playouts_per_s, 1),
            fmt(r.actions_per_s),
            fmt(r.us_per_action, 2),
            fmt(r.actions / r.playouts if r.playouts else None, 1),
            fmt(ratio, 2),
            verdict,
        )
    console.print(table)
    if base is not None:
        worst = max(ratios.items(), key=lambda item: item[1], default=None)
        if worst is not None:
            console.print(
                f"  (a) worst: {worst[0]} at {worst[1]:.2f}x hearts "
                f"({'within' if worst[1] <= HEARTS_TARGET else 'OVER'} the "
                f"{HEARTS_TARGET:g}x target)"
            )
    return ratios


def report_wire(
    engine: list[EngineResult],
    wire: dict[str, WireResult],
    loop_name: str,
    args: argparse.Namespace,
) -> dict[str, Any]:

    table = Table(
        title=f"(b)/(c) through the server subprocess (client loop: {loop_name}, "
        f"{args.channels} channel(s), {args.store} store, {args.seconds:g} s windows)"
    )
    table.add_column("path")
    for column in (
        "per s",
        "server cores",
        "server µs/msg",
        "server sys",
        "client cores",
        "client µs/msg",
        "client sys",
    ):
        table.add_column(column, justify="right")
    labels = {
        "echo_stream": "(c) echo, stream ping-pong",
        "echo_shaped": f"(c) echo, 1 in {SHAPED_REPLIES} out",
        "echo_unary": "(c) echo, unary calls",
        "game_path": "(b) game, acked actions",
    }
    for key in ("echo_stream", "echo_shaped", "echo_unary", "game_path"):
        w = wire[key]
        j = w.as_json()
        table.add_row(
            labels[key],
            fmt(w.per_s),
            fmt(j["server_cpu_cores"], 2),
            fmt(j["server_cpu_us_per_message"]),
            percent(j.get("server_sys_share")),
            fmt(j["client_cpu_cores"], 2),
            fmt(j["client_cpu_us_per_message"]),
            percent(j.get("client_sys_share")),
        )
    console.print(table)

    game = wire["game_path"]
    g = game.extra
    console.print(
        f"  game path: submit->ack p50 {fmt(g['latency_p50_ms'], 2)} ms, "
        f"p99 {fmt(g['latency_p99_ms'], 2)} ms; {fmt(g['views_per_s'])} views/s "
        f"({fmt(g['views_per_ack'], 2)} per ack, ~{fmt(g['mean_view_bytes'])} B each); "
        f"matches finished {g['matches_finished']}; rejected {g['rejected']}, "
        f"reconnects {g['reconnects']}, errors {g['errors']}"
    )
    if g["first_error"]:
        console.print(f"  [red]first error: {g['first_error']}[/]")

    stream, unary = wire["echo_stream"].per_s, wire["echo_unary"].per_s
    shaped = wire["echo_shaped"].per_s
    trial = next((r for r in engine if r.name == GAME_ID and not r.options and r.seats == 4), None)
    ratios = {
        "game_over_echo_stream": game.per_s / stream if stream else None,
        "game_over_echo_unary": game.per_s / unary if unary else None,
        # The transport alone in a decision's shape (one message in, two out): the most
        # that b / c(stream) could be if the server did no work at all, and how much of
        # that the game path reaches.
        "shaped_over_echo_stream": shaped / stream if stream else None,
        "game_over_echo_shaped": game.per_s / shaped if shaped else None,
        # The engine's share of one action's time on the full path.
        "engine_share_of_game_path": game.per_s / trial.actions_per_s if trial else None,
        "engine_actions_over_game_path": trial.actions_per_s / game.per_s
        if trial and game.per_s
        else None,
        # Messages either way: per action one submit, one result and every seat's view;
        # per echo round trip two. Separates "too many messages" from "each one too dear".
        "game_messages_over_echo_stream_messages": (2 * game.per_s + g["views_per_s"])
        / (2 * stream)
        if stream
        else None,
    }
    table = Table(title="ratios (the headline: b/c)")
    table.add_column("ratio")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    table.add_row(
        "b / c(stream)",
        fmt(ratios["game_over_echo_stream"], 3),
        "acked actions per echo ping-pong on a stream",
    )
    table.add_row(
        "b / c(unary)",
        fmt(ratios["game_over_echo_unary"], 3),
        "acked actions per unary echo call",
    )
    table.add_row(
        "c(1 in 2 out) / c(stream)",
        fmt(ratios["shaped_over_echo_stream"], 3),
        "the transport's ceiling for b / c(stream): a decision's messages, no server work",
    )
    table.add_row(
        "b / c(1 in 2 out)",
        fmt(ratios["game_over_echo_shaped"], 3),
        "how much of that ceiling the game path reaches (the rest: the server's own work)",
    )
    table.add_row(
        "b msgs / c(stream) msgs",
        fmt(ratios["game_messages_over_echo_stream_messages"], 3),
        "wire messages/s of the game path (submits, results, views) per echo message/s",
    )
    table.add_row(
        "b / a(trial, 4)",
        fmt(ratios["engine_share_of_game_path"], 4),
        "engine's share of one action's wall time on the game path",
    )
    table.add_row(
        "a(trial, 4) / b",
        fmt(ratios["engine_actions_over_game_path"], 1),
        "how many times faster the bare engine is than the game path",
    )
    console.print(table)

    return {
        "client_loop": loop_name,
        "settings": {
            "seconds": args.seconds,
            "warmup": args.warmup,
            "engine_seconds": args.engine_seconds,
            "tables": args.tables,
            "seats": args.seats,
            "edition": args.edition,
            "channels": args.channels,
            "store": args.store,
            "quick": args.quick,
        },
        "wire": {k: w.as_json() for k, w in wire.items()},
        "ratios": ratios,
    }


def print_profile(path: Path, top: int = 30) -> None:
    if not path.exists():
        console.print(f"[red]no server profile was written to {path}[/]")
        return
    console.rule(f"server profile (main thread only): {path}")
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="measuring window of (b) and of each (c) (default 10)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke check: 2 s windows, short engine runs"
    )
    parser.add_argument(
        "--engine-seconds",
        type=float,
        default=None,
        help="time per engine contestant, hearts included (default 2; --quick 0.5)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="uncounted warm-up before each window (default 1; --quick 0.5)",
    )
    parser.add_argument("--tables", type=int, default=16, help="concurrent matches (default 16)")
    parser.add_argument("--seats", type=int, default=4, help="seats per match (default 4)")
    parser.add_argument(
        "--edition",
        choices=("trial", "full"),
        default="trial",
        help="Take 5 edition of the game path (default trial)",
    )
    parser.add_argument(
        "--channels",
        type=int,
        default=0,
        help="client connections the streams are spread over (default 0: one per table)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=ROOT / "var" / "bench.json",
        help="where to write the results (default var/bench.json)",
    )
    parser.add_argument(
        "--profile-server",
        type=Path,
        default=None,
        metavar="FILE",
        help="run the server under cProfile, write its stats to FILE and print the top functions",
    )
    parser.add_argument(
        "--store",
        choices=("sqlite", "memory"),
        default="sqlite",
        help="the server's store (default sqlite; memory shows the store's cost)",
    )
    parser.add_argument(
        "--serial-appends",
        action="store_true",
        help="the server holds a match's lock until each submit is durable (the A/B of "
        "pipelined appends, docs/performance.md)",
    )
    parser.add_argument("--skip-engine", action="store_true", help="skip (a)")
    parser.add_argument(
        "--games",
        type=lambda text: [game_id for game_id in text.split(",") if game_id],
        default=[],
        metavar="ID,ID",
        help="(a) for these game ids only (comma-separated; hearts is always measured)",
    )
    parser.add_argument(
        "--engine-only", action="store_true", help="only (a): no server, no (b) or (c)"
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.games) - set(GAMES))
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}; the games are {', '.join(GAMES)}")
    if args.quick:
        args.seconds = 2.0
    if args.engine_seconds is None:
        args.engine_seconds = 0.5 if args.quick else 2.0
    if args.warmup is None:
        args.warmup = 0.5 if args.quick else 1.0
    return args


def _exit_on_sigterm(signum: int, _frame: Any) -> None:
    # SIGTERM's default ends the process at once, skipping the finally that stops the server.
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    started = time.perf_counter()

    engine: list[EngineResult] = []
    hearts: EngineResult | None = None
    if not args.skip_engine:
        console.print(
            f"[dim](a) engine: {len(args.games) or len(GAMES)} games, extras and "
            f"OpenSpiel's hearts, {args.engine_seconds:g} s each...[/]"
        )
        engine, hearts = engine_costs(args.engine_seconds, args.games)
    if args.engine_only:
        results = report(engine, hearts, None, "-", args)
        results["total_seconds"] = time.perf_counter() - started
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        console.print(f"[dim]results written to {args.json}[/]")
        return 0 if engine else 1

    with tempfile.TemporaryDirectory(prefix="speeltafel-bench-") as tmp:
        server = bench_server(
            Path(tmp),
            args.profile_server,
            args.store,
            *(("--serial-appends",) if args.serial_appends else ()),
        )
        try:
            port = server.start()
            wire, loop_name = run_loop(wire_benchmarks(port, args, server.pid))
        except BaseException:
            tail = server.log_tail()
            if tail:
                console.print("[red]server log (tail):[/]\n" + tail)
            raise
        finally:
            code = server.stop()
        if code not in (0, None):
            console.print(
                f"[yellow]the server exited with {code}; log tail:[/]\n" + server.log_tail()
            )

    results = report(engine, hearts, wire, loop_name, args)
    results["total_seconds"] = time.perf_counter() - started
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    console.print(
        f"[dim]results written to {args.json} ({results['total_seconds']:.0f} s in all)[/]"
    )
    if args.profile_server is not None:
        print_profile(args.profile_server)
    # Not a timing assert: a run that measured nothing, or whose bots failed, is broken.
    broken = [k for k, w in wire.items() if w.count == 0]
    if broken or wire["game_path"].extra["errors"]:
        console.print(
            f"[red]broken run: nothing measured for {broken or '-'}, "
            f"game errors {wire['game_path'].extra['errors']}[/]"
        )
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        console.print("[yellow]interrupted; the server was stopped[/]")
        sys.exit(130)
