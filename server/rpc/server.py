"""Building and running the gRPC server: limits, interceptors, health, reflection, shutdown.

gRPC Python protects nothing by default (no message cap below 4 MiB, unbounded metadata,
exception text sent to clients), so every limit is set here explicitly.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from speeltafel.sdk.v1 import (
    diagnostics_pb2,
    diagnostics_pb2_grpc,
    match_service_pb2,
    match_service_pb2_grpc,
)
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig
from speeltafel.server.engine.core import GameAny
from speeltafel.server.rpc.errors import AuthInterceptor, ErrorInterceptor
from speeltafel.server.rpc.limits import (
    MAX_STREAMS_PER_CONNECTION,
    LimitsConfig,
    LimitsInterceptor,
    limits_for_serve,
)
from speeltafel.server.rpc.service import MatchService
from speeltafel.server.rpc.standard import HealthServicer, enable_reflection
from speeltafel.server.store.base import MatchStore, StoreOpenError
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore
from speeltafel.server.wire.common import GameWire
from speeltafel.server.wire.registry import WIRES

log = structlog.get_logger("speeltafel.server")

MAX_RECEIVE_BYTES = 64 * 1024  # the largest legitimate request (a preset deck) is ~1 KiB
MAX_SEND_BYTES = 4 * 1024 * 1024
MAX_METADATA_BYTES = 8 * 1024
MAX_CONCURRENT_RPCS = 4096
MATCH_SERVICE = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
DIAGNOSTICS_SERVICE = diagnostics_pb2.DESCRIPTOR.services_by_name["DiagnosticsService"].full_name


class Diagnostics(diagnostics_pb2_grpc.DiagnosticsServiceServicer):
    """No-op echoes: the transport's own ceiling, for benchmarks."""

    async def Echo(
        self, request: diagnostics_pb2.EchoRequest, context: Any
    ) -> diagnostics_pb2.EchoResponse:
        return diagnostics_pb2.EchoResponse(sequence=request.sequence, payload=request.payload)

    async def EchoStream(self, request_iterator: Any, context: Any) -> Any:
        async for message in request_iterator:
            yield diagnostics_pb2.EchoStreamResponse(
                sequence=message.sequence, payload=message.payload
            )


class _Health(Protocol):
    async def set(self, service: str, status: Any) -> None: ...


class StoreHealth:
    """gRPC health follows the store: NOT_SERVING while its writes fail, SERVING once one works.

    Both "" and the MatchService follow it: a server that cannot store moves cannot serve
    matches, and clients look at either name. The store tells every change on the event loop
    (and probes on its own while writes fail), so health comes back without a client write.
    """

    def __init__(self, store: MatchStore, health: _Health) -> None:
        self._health = health
        self._shown = True  # start_server has just set SERVING
        self._wanted = True
        self._stopped = False
        self._task: asyncio.Future[None] | None = None
        store.add_health_listener(self._changed)
        if not store.writable:
            self._changed(False)

    def _changed(self, writable: bool) -> None:
        if writable:
            log.info("store_writable_again")
        else:
            log.warning("store_unwritable", hint="disk full, read-only or I/O errors")
        self._wanted = writable
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._apply())

    async def _apply(self) -> None:
        # One task applies the latest wish, so quick flips can never land out of order.
        while self._shown != self._wanted and not self._stopped:
            self._shown = self._wanted
            status = health_pb2.HealthCheckResponse.SERVING
            if not self._shown:
                status = health_pb2.HealthCheckResponse.NOT_SERVING
            for service in ("", MATCH_SERVICE):
                if self._stopped:
                    return
                await self._health.set(service, status)

    def stop(self) -> None:
        """From now on the server is going away: no store news may set SERVING again."""
        self._stopped = True


@dataclass
class Running:
    """A started server and what it needs to stop cleanly."""

    server: grpc.aio.Server
    port: int
    runtime: MatchRuntime
    store: MatchStore
    health: HealthServicer

    store_health: StoreHealth | None = None

    async def stop(self, grace: float = 5.0) -> None:
        """NOT_SERVING first, then let in-flight calls finish, then close the store."""
        if self.store_health is not None:
            self.store_health.stop()
        await self.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.health.set(MATCH_SERVICE, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace)
        await self.runtime.close()
        await self.store.close()


async def start_server(
    store: MatchStore,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    config: RuntimeConfig | None = None,
    diagnostics: bool = False,
    runtime: MatchRuntime | None = None,
    limits: LimitsConfig | None = None,
    games: Mapping[str, GameAny] | None = None,
    wires: Mapping[str, GameWire] = WIRES,
) -> Running:
    """Recover unfinished matches, then serve on ``host:port`` (0: any free port).

    ``games``: the games offered, by id (default: the engine's registry; ignored when a
    ``runtime`` is given, which has its own); ``wires``: the wire of each of them by game id
    (default: the wire registry). A game without a wire is refused here, not at its first
    view."""
    runtime = runtime or MatchRuntime(store, config, games=games)
    unwired = sorted(g.info.game_id for g in runtime.games() if g.info.game_id not in wires)
    if unwired:
        raise ValueError(f"no wire for the game(s) {', '.join(unwired)}")
    await runtime.recover()
    server = grpc.aio.server(
        # Limits first: a refused call costs no handler work (see rpc/limits.py).
        interceptors=[
            LimitsInterceptor(limits),
            ErrorInterceptor(),
            AuthInterceptor(runtime.authenticate),
        ],
        options=[
            # A stale server must never share a port with a fresh one (tests bind port 0).
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
            ("grpc.max_metadata_size", MAX_METADATA_BYTES),
            ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ],
        maximum_concurrent_rpcs=MAX_CONCURRENT_RPCS,
    )
    # The generated registration functions are untyped (the one seam with generated code).
    match_service_pb2_grpc.add_MatchServiceServicer_to_server(MatchService(runtime, wires), server)  # type: ignore[no-untyped-call]
    services = [MATCH_SERVICE, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name]
    if diagnostics:
        diagnostics_pb2_grpc.add_DiagnosticsServiceServicer_to_server(Diagnostics(), server)  # type: ignore[no-untyped-call]
        services.append(DIAGNOSTICS_SERVICE)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    enable_reflection(server, services)
    bound = server.add_insecure_port(f"{host}:{port}")
    await server.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    await health.set(MATCH_SERVICE, health_pb2.HealthCheckResponse.SERVING)
    store_health = StoreHealth(store, health)
    log.info("serving", host=host, port=bound, games=[g.info.game_id for g in runtime.games()])
    return Running(server, bound, runtime, store, health, store_health)


def configure_logging(level: str = "info") -> None:
    """structlog JSON lines on stderr."""
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=level.upper())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(sort_keys=True),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


async def serve(args: argparse.Namespace) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    limits = limits_for_serve(args.host, args.create_policy, args.organiser_token)
    store: MatchStore = MemoryStore() if args.db == ":memory:" else SqliteStore(Path(args.db))
    config = RuntimeConfig(default_move_clock_ms=args.move_clock_ms)
    running = await start_server(
        store,
        host=args.host,
        port=args.port,
        config=config,
        diagnostics=args.diagnostics,
        limits=limits,
    )
    if args.port_file:
        # Written once at start-up, before any client can connect: no loop to block yet.
        Path(args.port_file).write_text(f"{running.port}\n")  # noqa: ASYNC240
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    log.info("stopping", grace_s=args.grace)
    await running.stop(args.grace)
    log.info("stopped")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``speeltafel serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=50051, help="port (0: any free port)")
    parser.add_argument(
        "--db", default="var/speeltafel.db", help="SQLite file, or :memory: (default %(default)s)"
    )
    parser.add_argument("--port-file", help="write the bound port to this file once serving")
    parser.add_argument(
        "--move-clock-ms",
        type=int,
        default=30_000,
        help="default per-move clock for matches that set none (default %(default)s)",
    )
    parser.add_argument("--grace", type=float, default=5.0, help="shutdown grace in seconds")
    parser.add_argument(
        "--diagnostics", action="store_true", help="also serve the Diagnostics echo service"
    )
    parser.add_argument("--log-level", default="info", help="debug, info, warning or error")
    parser.add_argument(
        "--create-policy",
        choices=("open", "token"),
        help="who may create matches: anyone (open), or callers with the organiser token "
        "(token); default open on a loopback host, token otherwise",
    )
    parser.add_argument(
        "--organiser-token",
        help="the bearer token CreateMatch needs under --create-policy token "
        "(default: environment variable SPEELTAFEL_ORGANISER_TOKEN)",
    )


def run_event_loop(main: Any) -> None:
    """Run a coroutine on uvloop when it is installed, else on asyncio's own loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on every POSIX system
        asyncio.run(main)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)


def serve_or_refuse(args: argparse.Namespace) -> int:
    """Run :func:`serve`; a store refused at start-up is one line on stderr and status 2."""
    try:
        run_event_loop(serve(args))
    except StoreOpenError as exc:
        # What failed, which file, what to do: the operator needs no traceback for that.
        print(f"speeltafel serve: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m speeltafel.server``: run the server."""
    parser = argparse.ArgumentParser(prog="speeltafel serve", description="Run the game server.")
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    sys.exit(serve_or_refuse(args))
