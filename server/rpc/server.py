"""Building and running the gRPC server: ``speeltafel serve`` and :func:`start_server`.

gRPC Python protects nothing by default (no message cap below 4 MiB, unbounded metadata,
exception text sent to clients), so every limit is set explicitly: the server options,
interceptors, health and reflection come from :mod:`speeltafel.server.rpc.embed`, the
one path by which speeltafel's services get onto a server, its own or an embedder's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import logging
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import structlog

from speeltafel.sdk.v1 import diagnostics_pb2, diagnostics_pb2_grpc
from speeltafel.server.app.cluster import Cluster, ClusterInterceptor
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig
from speeltafel.server.engine.core import GameAny
from speeltafel.server.rpc.collector import PauseWatch, tune_for_server
from speeltafel.server.rpc.embed import (
    MATCH_SERVICE,
    MAX_CONCURRENT_RPCS,
    MAX_METADATA_BYTES,
    MAX_RECEIVE_BYTES,
    MAX_SEND_BYTES,
    Embedded,
    StoreHealth,
    add_speeltafel_services,
    server_options,
    speeltafel_interceptors,
)
from speeltafel.server.rpc.limits import LimitsConfig, limits_for_serve
from speeltafel.server.rpc.tournament_service import (
    TournamentServices,
    add_tournament_services,
    organiser_token_file,
    write_organiser_token,
)
from speeltafel.server.store.base import MatchStore, StoreOpenError
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore
from speeltafel.server.wire.common import GameWire
from speeltafel.server.wire.registry import WIRES

__all__ = [  # also the names this module had before embedding moved them to embed.py
    "MATCH_SERVICE",
    "MAX_CONCURRENT_RPCS",
    "MAX_METADATA_BYTES",
    "MAX_RECEIVE_BYTES",
    "MAX_SEND_BYTES",
    "Running",
    "StoreHealth",
    "main",
    "serve",
    "start_server",
]

log = structlog.get_logger("speeltafel.server")

DIAGNOSTICS_SERVICE = diagnostics_pb2.DESCRIPTOR.services_by_name["DiagnosticsService"].full_name


MAX_ECHO_REPLIES = 16
"""The most messages one EchoStream request may ask for (diagnostics.proto)."""
MAX_ECHO_EXTRA_BYTES = 65_536
"""The largest payload of an EchoStream request's further replies."""


class Diagnostics(diagnostics_pb2_grpc.DiagnosticsServiceServicer):
    """No-op echoes: the transport's own ceiling, for benchmarks."""

    async def Echo(
        self, request: diagnostics_pb2.EchoRequest, context: Any
    ) -> diagnostics_pb2.EchoResponse:
        return diagnostics_pb2.EchoResponse(sequence=request.sequence, payload=request.payload)

    async def EchoStream(self, request_iterator: Any, context: Any) -> Any:
        """Each message answered by ``replies`` messages (see diagnostics.proto): the echo,
        then ``replies - 1`` of ``extra_bytes`` each, which gives the game path's shape."""
        extras: dict[tuple[int, int], diagnostics_pb2.EchoStreamResponse] = {}
        async for message in request_iterator:
            if message.replies > MAX_ECHO_REPLIES or message.extra_bytes > MAX_ECHO_EXTRA_BYTES:
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"replies is at most {MAX_ECHO_REPLIES} and extra_bytes at most "
                    f"{MAX_ECHO_EXTRA_BYTES} (got {message.replies} and {message.extra_bytes})",
                )
            yield diagnostics_pb2.EchoStreamResponse(
                sequence=message.sequence, payload=message.payload
            )
            if message.replies > 1:
                key = (message.sequence, message.extra_bytes)
                extra = extras.get(key)
                if extra is None:  # one message per stream and size: echoes stay no-ops
                    extras.clear()
                    extra = extras[key] = diagnostics_pb2.EchoStreamResponse(
                        sequence=message.sequence, payload=bytes(message.extra_bytes)
                    )
                for _ in range(message.replies - 1):
                    yield extra


@dataclass
class Running:
    """A started server and what it needs to stop cleanly."""

    server: grpc.aio.Server
    port: int
    embedded: Embedded
    tournaments: TournamentServices | None = None
    cluster: Cluster | None = None

    @property
    def runtime(self) -> MatchRuntime:
        return self.embedded.runtime

    @property
    def store(self) -> MatchStore:
        return self.embedded.store

    async def stop(self, grace: float = 5.0) -> None:
        """NOT_SERVING first, then let in-flight calls finish, then close the store."""
        await self.embedded.stopping()
        await self.server.stop(grace)
        if self.cluster is not None:
            await self.cluster.close()
        if self.tournaments is not None:
            await self.tournaments.close()
        await self.embedded.close()


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
    advertise: str = "",
) -> Running:
    """Recover unfinished matches, then serve on ``host:port`` (0: any free port).

    ``games``: the games offered, by id (default: the engine's registry; ignored when a
    ``runtime`` is given, which has its own); ``wires``: the wire of each of them by game id
    (default: the wire registry). A game without a wire is refused here, not at its first
    view.

    The same path as an embedder's (:mod:`speeltafel.server.rpc.embed`), on a server built
    here for speeltafel alone: its interceptors are server-wide, so every service added to
    it (``embedded.add_service``) passes them."""
    runtime = runtime or MatchRuntime(store, config, games=games)
    # A shared store (one with a feed of moves: PostgreSQL) makes this process one of a
    # cluster (speeltafel.server.app.cluster); ``advertise`` is where the others reach it.
    shared = hasattr(store, "moves")
    interceptors = speeltafel_interceptors(runtime, limits)
    if shared:
        cluster_interceptor = ClusterInterceptor(runtime)
        interceptors.append(cluster_interceptor)  # inside the seat-token check: runs first
    server = grpc.aio.server(
        # Limits first: a refused call costs no handler work (see rpc/limits.py).
        interceptors=interceptors,
        options=server_options(),
        maximum_concurrent_rpcs=MAX_CONCURRENT_RPCS,
    )
    embedded = add_speeltafel_services(
        server, store=store, runtime=runtime, wires=wires, interceptors="server"
    )
    if diagnostics:
        embedded.add_service(
            diagnostics_pb2_grpc.add_DiagnosticsServiceServicer_to_server, Diagnostics()
        )
    tournaments = None
    if hasattr(store, "create_tournament"):  # the store keeps tournaments too
        token = limits.organiser_token if limits is not None else ""
        tournaments = add_tournament_services(embedded, runtime, store, token, elected=shared)
    await embedded.start()
    if tournaments is not None:
        await tournaments.start()
    bound = server.add_insecure_port(f"{host}:{port}")
    await server.start()
    cluster = None
    if shared:
        reach = host if host not in ("", "0.0.0.0", "::", "[::]") else "127.0.0.1"
        cluster = Cluster(runtime, store, tournaments, advertise or f"{reach}:{bound}")  # type: ignore[arg-type]
        cluster.interceptor = cluster_interceptor
        await cluster.start()
    log.info("serving", host=host, port=bound, games=[g.info.game_id for g in runtime.games()])
    return Running(server, bound, embedded, tournaments, cluster)


def configure_logging(level: str = "info") -> None:
    """structlog JSON lines on stderr, each written with one ``write`` (structlog's
    ``WriteLogger``; its ``PrintLogger`` wrote the line and its newline apart).

    At ``info`` (the default) a server logs what happens to matches, seats, tournaments and
    itself: a match created, a seat joined, a match started and finished, refusals and
    faults. ``debug`` adds a line for every accepted action (``action_accepted``); the
    store already holds every action, and a line for each cost a decision about a sixth of
    its CPU (docs/performance-rounds.md, round 22).

    The standard library's records (gRPC's and asyncio's own, at ``debug`` mostly) are
    rendered as the same JSON lines, with the logger's name, so that every line of the
    log parses."""
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    render = structlog.processors.JSONRenderer(sort_keys=True)
    handler = logging.StreamHandler(sys.stderr)  # one write a record, line and newline
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                stamp,
            ],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                render,
            ],
        )
    )
    logging.basicConfig(handlers=[handler], level=level.upper(), force=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            structlog.processors.format_exc_info,
            render,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


async def serve(args: argparse.Namespace) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    limits = limits_for_serve(args.host, args.create_policy, args.organiser_token)
    store = await open_store(args.store or args.db)
    # Only once the store opened: a server that refuses its store says so in one line.
    limits = _with_organiser_token(limits, args)
    config = RuntimeConfig(
        default_move_clock_ms=args.move_clock_ms,
        finished_linger_s=args.finished_linger,
        finished_whole_s=args.finished_whole,
        pipeline_appends=not args.serial_appends,
    )
    # Recovery builds thousands of long-lived matches: a collection then walks them all,
    # again and again (a 0.65 s pause measured at 10,000). Off until they are frozen.
    gc.disable()
    running = await start_server(
        store,
        host=args.host,
        port=args.port,
        config=config,
        diagnostics=args.diagnostics,
        limits=limits,
        advertise=args.advertise,
    )
    if args.port_file:
        # Written once at start-up, before any client can connect: no loop to block yet.
        Path(args.port_file).write_text(f"{running.port}\n")  # noqa: ASYNC240
    pauses = PauseWatch().install()
    settled = asyncio.ensure_future(_settle_collector(running))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    settled.cancel()
    log.info("stopping", grace_s=args.grace)
    await running.stop(args.grace)
    # Logged at warning so it shows at every log level: the collector's budget
    # (docs/performance.md) is checked from this line.
    log.warning("gc_pauses", **pauses.summary())
    log.info("stopped")


async def _settle_collector(running: Running) -> None:
    """Once recovery is over, freeze what is alive and set the server's GC thresholds
    (speeltafel.server.rpc.collector); an embedder's process keeps its own GC policy."""
    try:
        with contextlib.suppress(Exception):
            await running.runtime.recovered()
        frozen = tune_for_server()
        log.info("gc_tuned", frozen=frozen)
    finally:
        gc.enable()


def _with_organiser_token(limits: LimitsConfig, args: argparse.Namespace) -> LimitsConfig:
    """Without an organiser token, make one and write it to ``<db>.organiser-token``
    (mode 0600) so local tools can read it; the log says where, never the token."""
    if limits.organiser_token or getattr(args, "store", None) or args.db == ":memory:":
        return limits
    path = organiser_token_file(args.db)
    token = write_organiser_token(path)
    log.info("organiser_token_written", path=str(path))
    return dataclasses.replace(limits, organiser_token=token)


async def open_store(where: str) -> MatchStore:
    """The store ``where`` names: a ``postgresql://`` URL, ``:memory:``, or an SQLite file.

    The PostgreSQL store (and psycopg, an optional extra) is imported only when asked for.
    """
    if where.startswith(("postgresql://", "postgres://")):
        try:
            from speeltafel.server.store.postgres import PostgresStore
        except ImportError as exc:
            raise StoreOpenError(
                where.split("@")[-1],
                f"psycopg is not installed ({exc})",
                "Install the postgres extra: pip install 'speeltafel[postgres]'",
            ) from exc
        return await PostgresStore.open(where)
    return MemoryStore() if where == ":memory:" else SqliteStore(Path(where))


def _linger_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= seconds <= 86_400:
        raise argparse.ArgumentTypeError("must be 0 to 86400 seconds")
    return seconds


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``speeltafel serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=50051, help="port (0: any free port)")
    parser.add_argument(
        "--db", default="var/speeltafel.db", help="SQLite file, or :memory: (default %(default)s)"
    )
    parser.add_argument(
        "--store",
        help="a shared PostgreSQL store, postgresql://USER@HOST:PORT/DATABASE (several servers"
        " may serve the same matches); replaces --db",
    )
    parser.add_argument(
        "--advertise",
        default="",
        help="with --store: HOST:PORT where the other server processes reach this one (they"
        " relay tournament calls to the process that directs); default the bound address",
    )
    parser.add_argument("--port-file", help="write the bound port to this file once serving")
    parser.add_argument(
        "--move-clock-ms",
        type=int,
        default=30_000,
        help="default per-move clock for matches that set none (default %(default)s)",
    )
    parser.add_argument(
        "--finished-linger",
        type=_linger_seconds,
        default=300.0,
        metavar="SECONDS",
        help="how long a finished match's seats may still call (a late final view, a "
        "retried request); after that its seats' tokens are forgotten and it is answered "
        "from the store (default %(default)s)",
    )
    parser.add_argument(
        "--finished-whole",
        type=_linger_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long, within the linger time, a finished match stays whole in memory; "
        "after that only its seats' tokens do and a late call loads it from the store "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--serial-appends",
        action="store_true",
        help="hold a match's lock until each submit is durable instead of checking and "
        "applying the next one meanwhile (for comparison: see docs/performance.md)",
    )
    parser.add_argument("--grace", type=float, default=5.0, help="shutdown grace in seconds")
    parser.add_argument(
        "--diagnostics", action="store_true", help="also serve the Diagnostics echo service"
    )
    parser.add_argument(
        "--log-level",
        default="info",
        help="debug, info, warning or error (debug adds a line for every accepted action)",
    )
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
