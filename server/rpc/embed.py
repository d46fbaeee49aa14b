"""speeltafel's services inside a ``grpc.aio`` server someone else builds and runs.

:func:`add_speeltafel_services` puts the match service, gRPC health checking and server
reflection on an existing server; the caller keeps the server: its port, its options,
its own interceptors and services, and when it starts and stops. What speeltafel needs
around that lifecycle is on the returned :class:`Embedded` handle::

    server = grpc.aio.server(options=server_options())      # the caller's server
    server.add_insecure_port("127.0.0.1:50051")
    embedded = add_speeltafel_services(server, store=SqliteStore(Path("games.db")))
    await embedded.start()       # recover unfinished matches, clocks; health SERVING
    await server.start()
    ...
    await embedded.stopping()    # health NOT_SERVING, before the server stops
    await server.stop(grace=5)   # in-flight calls finish
    await embedded.close()       # the runtime's tasks, then the store

``speeltafel serve`` (:func:`speeltafel.server.rpc.server.start_server`) goes the same way:
it builds its own server and calls this function on it.

**Limits, error mapping and seat authentication.** speeltafel's calls need three
interceptors (:func:`speeltafel_interceptors`: fairness limits, errors to statuses without
leaking exception text, seat tokens). gRPC fixes a server's interceptors when it is built,
and an embedder's server already exists, so by default (``interceptors="per_service"``)
they are applied to speeltafel's own handlers only: the handlers this function adds are
wrapped, each call of them passes the same chain as on a standalone server, and the
caller's other services are untouched (and the caller's server-level interceptors run
outside speeltafel's, as they would around any service). A caller that builds its server
for speeltafel alone may instead pass ``speeltafel_interceptors(...)`` to
``grpc.aio.server`` and ``interceptors="server"`` here (``start_server`` does: then
services it adds itself pass the chain too). Either way one :class:`LimitsConfig` counts
every speeltafel call, health and reflection streams included.

Message size caps are options of the server, not of a service: :func:`server_options` gives
speeltafel's (64 KiB requests; a legitimate request is under 1 KiB). An embedder whose
server allows more only lets bigger requests reach speeltafel's own checks.

**Health and reflection** may already exist on the caller's server, and gRPC serves only
the first handler registered for a name. ``health=True`` adds speeltafel's health servicer;
``health=<servicer>`` uses the caller's (anything with ``async set(service, status)``, such
as grpcio's ``grpc_health.v1.health.aio.HealthServicer``): speeltafel then sets only its
own service's status on it, never the server-wide ``""`` that belongs to the caller;
``health=False`` adds none. ``reflection=True`` serves reflection for speeltafel's services
plus the names in ``reflect``; a caller that serves reflection itself passes
``reflection=False`` and lists :attr:`Embedded.service_names` in its own.

**Registered methods.** Every method speeltafel adds (the match service and whatever
:meth:`Embedded.add_service` adds) is registered with ``add_registered_method_handlers``
as well as served by the one generic handler (which also answers reflection). grpc.aio
keeps one request for a new call outstanding per registered method and one for all
generic methods together; behind that single slot a loaded server accepted about 250 new
calls a second, and every new call (a CreateMatch, a JoinMatch, a health check) waited
~120 ms for its turn. The serving gate and the per-service chain are decided when each
call begins, as for the generic handler.

**Before :meth:`Embedded.start` and after :meth:`Embedded.stopping`** the match service
answers UNAVAILABLE (rule ``not_serving``) instead of reaching a runtime that has not
recovered its matches yet, or is closing.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

import grpc
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from speeltafel.sdk.v1 import match_service_pb2
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig
from speeltafel.server.engine.core import GameAny
from speeltafel.server.rpc.errors import (
    AuthInterceptor,
    Behaviour,
    ErrorInterceptor,
    abort,
    refusing,
    wrap_handler,
)
from speeltafel.server.rpc.limits import (
    MAX_STREAMS_PER_CONNECTION,
    LimitsConfig,
    LimitsInterceptor,
)
from speeltafel.server.rpc.service import MatchService, add_match_service
from speeltafel.server.rpc.standard import HealthServicer, enable_reflection
from speeltafel.server.store.base import MatchStore
from speeltafel.server.wire.common import GameWire
from speeltafel.server.wire.registry import WIRES

log = structlog.get_logger("speeltafel.server")

MAX_RECEIVE_BYTES = 64 * 1024  # the largest legitimate request (a preset deck) is ~1 KiB
MAX_SEND_BYTES = 4 * 1024 * 1024
MAX_METADATA_BYTES = 8 * 1024
MAX_CONCURRENT_RPCS = 4096
MATCH_SERVICE = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING

InterceptorPlacement = Literal["per_service", "server"]


def server_options() -> list[tuple[str, Any]]:
    """The ``grpc.aio.server`` options speeltafel serves with: message and metadata caps,
    HTTP/2 streams per connection (see ``rpc/limits.py``), keepalive, no port sharing.

    Pass them (with ``maximum_concurrent_rpcs=MAX_CONCURRENT_RPCS``) when building a
    server for speeltafel; an embedder may merge them into its own."""
    return [
        # A stale server must never share a port with a fresh one (tests bind port 0).
        ("grpc.so_reuseport", 0),
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_send_message_length", MAX_SEND_BYTES),
        ("grpc.max_metadata_size", MAX_METADATA_BYTES),
        ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ]


def speeltafel_interceptors(
    runtime: MatchRuntime, limits: LimitsConfig | None = None
) -> list[grpc.aio.ServerInterceptor]:
    """The chain every speeltafel call passes, outermost first: limits (a refused call
    costs no handler work), errors to statuses, seat tokens (``runtime`` knows them)."""
    return [LimitsInterceptor(limits), ErrorInterceptor(), AuthInterceptor(runtime.authenticate)]


class HealthSetter(Protocol):
    """What speeltafel needs of a health servicer: set one service's status."""

    async def set(self, service: str, status: Any) -> None: ...


class StoreHealth:
    """gRPC health follows the store: NOT_SERVING while its writes fail, SERVING once one works.

    ``services`` follow it (a standalone server: ``""`` and the MatchService, since a
    server that cannot store moves cannot serve matches and clients look at either name).
    The store tells every change on the event loop (and probes on its own while writes
    fail), so health comes back without a client write.
    """

    def __init__(
        self,
        store: MatchStore,
        health: HealthSetter,
        services: Sequence[str] = ("", MATCH_SERVICE),
    ) -> None:
        self._health = health
        self._services = tuple(services)
        self._shown = True  # the caller has just set SERVING
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
            status = SERVING if self._shown else NOT_SERVING
            for service in self._services:
                if self._stopped:
                    return
                await self._health.set(service, status)

    def stop(self) -> None:
        """From now on the service is going away: no store news may set SERVING again."""
        self._stopped = True


Registration = Callable[[Any, Any], None]
"""A generated ``add_<Service>Servicer_to_server(servicer, server)`` function."""


class _Collector:
    """Stands in for a server while a generated registration function runs, keeping the
    method handlers it adds (both the generic and the registered-method form)."""

    def __init__(self) -> None:
        self.methods: dict[str, grpc.RpcMethodHandler] = {}
        self.generic: list[grpc.GenericRpcHandler] = []
        self.services: list[str] = []

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        self.services.append(service)
        for name, handler in handlers.items():
            self.methods[f"/{service}/{name}"] = handler

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self.generic.extend(handlers)


def _intercept_now(
    interceptors: Sequence[grpc.aio.ServerInterceptor],
    details: grpc.HandlerCallDetails,
    handler: grpc.RpcMethodHandler,
) -> grpc.RpcMethodHandler | None:
    """Run ``interceptors`` around ``handler`` synchronously, as a generic handler must.

    A ``grpc.aio.ServerInterceptor`` is a coroutine, but gRPC asks a generic handler for a
    method handler synchronously. speeltafel's interceptors only await their continuation
    (and decide with plain code around it), so with a continuation that returns at once the
    whole chain completes on its first step. An interceptor that really waits for
    something would not; that is a programming error here and raises, never a hang."""

    async def call(index: int, call_details: grpc.HandlerCallDetails) -> Any:
        if index == len(interceptors):
            return handler
        return await interceptors[index].intercept_service(
            lambda next_details: call(index + 1, next_details), call_details
        )

    chain = call(0, details)
    try:
        chain.send(None)
    except StopIteration as done:
        result: grpc.RpcMethodHandler | None = done.value
        return result
    chain.close()
    raise RuntimeError("a speeltafel interceptor waited while choosing a handler")


class _ServiceHandlers(grpc.GenericRpcHandler):  # type: ignore[misc]  # untyped grpc
    """speeltafel's method handlers behind one generic handler: each call is looked up,
    refused while the runtime is not serving (match service and added services), and
    passed through the per-service interceptor chain when there is one."""

    def __init__(self, embedded: Embedded) -> None:
        self._embedded = embedded
        self.methods: dict[str, grpc.RpcMethodHandler] = {}
        self.generic: list[grpc.GenericRpcHandler] = []
        self.gated: set[str] = set()  # services refused while not serving

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method: str = details.method
        handler = self.methods.get(method)
        if handler is None:
            for generic in self.generic:
                handler = generic.service(details)
                if handler is not None:
                    break
            else:
                return None
        return self.resolve(details, handler)

    def resolve(
        self, details: grpc.HandlerCallDetails, handler: grpc.RpcMethodHandler
    ) -> grpc.RpcMethodHandler:
        """``handler`` as this call meets it: refused while not serving (gated services),
        inside the per-service chain when there is one."""
        service = details.method[1:].split("/", 1)[0]
        if service in self.gated and not self._embedded.serving:
            handler = wrap_handler(handler, *refusing(_not_serving))
        if self._embedded.interceptors:
            return _intercept_now(self._embedded.interceptors, details, handler)
        return handler

    def registered(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """``handler`` for ``server.add_registered_method_handlers`` (why: "Registered
        methods" in the module docstring): what :meth:`resolve` chooses, chosen when each
        call begins (a registered handler is fixed when the server starts)."""
        embedded_chain = bool(self._embedded.interceptors)
        gated = method[1:].split("/", 1)[0] in self.gated
        if not embedded_chain and not gated:
            return handler

        def chosen(context: grpc.aio.ServicerContext[Any, Any]) -> grpc.RpcMethodHandler:
            if not embedded_chain and self._embedded.serving:
                return handler  # the common case: nothing to decide per call
            details = _CallDetails(method, tuple(context.invocation_metadata() or ()))
            return self.resolve(details, handler)

        def unary(_behaviour: Behaviour) -> Behaviour:
            async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                return await _behaviour_of(chosen(context))(request, context)

            return call

        def stream(behaviour: Behaviour) -> Behaviour:
            if inspect.isasyncgenfunction(behaviour):

                async def generator(
                    request: Any, context: grpc.aio.ServicerContext[Any, Any]
                ) -> AsyncIterator[Any]:
                    async for response in _behaviour_of(chosen(context))(request, context):
                        yield response

                return generator

            async def writer(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
                # A handler that writes with context.write() (as grpc's health Watch does);
                # the handler chosen for this call may be a generator (a refusal) instead.
                result = _behaviour_of(chosen(context))(request, context)
                if inspect.isasyncgen(result):
                    async for response in result:
                        await context.write(response)
                else:
                    await result

            return writer

        return wrap_handler(handler, unary, stream)


class _CallDetails(NamedTuple):
    """A ``grpc.HandlerCallDetails`` rebuilt from a call's context (for the per-service
    chain of a registered method)."""

    method: str
    invocation_metadata: tuple[Any, ...]


def _behaviour_of(handler: grpc.RpcMethodHandler) -> Behaviour:
    behaviour: Behaviour = (
        handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream
    )
    return behaviour


async def _not_serving(context: grpc.aio.ServicerContext[Any, Any]) -> None:
    await abort(
        context,
        grpc.StatusCode.UNAVAILABLE,
        "the match service is not serving (starting or stopping): retry later",
        "not_serving",
    )


class _LazyReflection(grpc.GenericRpcHandler):  # type: ignore[misc]  # untyped grpc
    """Reflection built at its first call, so that it lists every service added to the
    handle before then (services may be added after :func:`add_speeltafel_services`)."""

    def __init__(self, names: Callable[[], list[str]]) -> None:
        self._names = names
        self._handlers: _Collector | None = None

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        if not details.method.startswith(("/grpc.reflection.v1.", "/grpc.reflection.v1alpha.")):
            return None
        if self._handlers is None:
            collector = _Collector()
            enable_reflection(collector, self._names())
            self._handlers = collector
        handler = self._handlers.methods.get(details.method)
        if handler is not None:
            return handler
        for generic in self._handlers.generic:
            handler = generic.service(details)
            if handler is not None:
                return handler
        return None


@dataclass(eq=False)
class Embedded:
    """speeltafel's part of a server: its runtime, store and health, and the lifecycle the
    caller awaits around its own server's (see the module docstring for the order)."""

    runtime: MatchRuntime
    """The match runtime (create, join, submit, spectate) the match service serves."""
    store: MatchStore
    """The store the runtime writes to; :meth:`close` closes it."""
    health: HealthSetter | None
    """The health servicer speeltafel sets its status on (None: ``health=False``)."""
    interceptors: tuple[grpc.aio.ServerInterceptor, ...]
    """The per-service chain (empty when the caller's server applies it)."""
    health_services: tuple[str, ...]
    """The health service names speeltafel sets: ``""`` only when it owns the health
    servicer."""
    serving: bool = False
    """Whether the match service takes calls (between :meth:`start` and :meth:`stopping`)."""
    _handlers: _ServiceHandlers | None = None
    _server: grpc.aio.Server | None = None
    _service_names: list[str] = field(default_factory=list)
    _store_health: StoreHealth | None = None
    _closed: bool = False

    @property
    def service_names(self) -> tuple[str, ...]:
        """Full names of the services added (for the caller's own reflection)."""
        return tuple(self._service_names)

    def add_service(self, register: Registration, servicer: Any) -> None:
        """Add another service under speeltafel's interceptors and serving gate, listed by
        reflection: ``register`` is the generated ``add_<Service>Servicer_to_server``.
        Call it before the server starts."""
        if self._handlers is None:  # pragma: no cover - the factory always sets it
            raise RuntimeError("handle not built by add_speeltafel_services")
        collector = _Collector()
        register(servicer, collector)
        self._handlers.methods.update(collector.methods)
        self._handlers.generic.extend(collector.generic)
        self._handlers.gated.update(collector.services)
        self._service_names.extend(collector.services)
        if self._server is not None:
            # Also as registered methods, each with its own accept slot (see
            # _ServiceHandlers.registered); the generic handler stays the fallback.
            by_service: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
            for method, handler in collector.methods.items():
                service, name = method[1:].split("/", 1)
                by_service.setdefault(service, {})[name] = self._handlers.registered(
                    method, handler
                )
            for service, handlers in by_service.items():
                self._server.add_registered_method_handlers(service, handlers)

    async def start(self) -> None:
        """Start recovering unfinished matches (their clocks run again) and take calls:
        health SERVING, and from now on it follows the store. Await before
        ``server.start()``.

        With the SQLite store the matches are resumed in the background (in bulk) and a
        call for one not resumed yet waits for that one (``MatchRuntime.start_recovery``),
        so health answers within a second of start even with 10,000 matches to resume;
        ``await embedded.runtime.recovered()`` waits for all of them."""
        await self.runtime.start_recovery()
        self.serving = True
        if self.health is not None:
            for service in self.health_services:
                await self.health.set(service, SERVING)
            self._store_health = StoreHealth(self.store, self.health, self.health_services)
        log.info("speeltafel_serving", games=[g.info.game_id for g in self.runtime.games()])

    async def stopping(self) -> None:
        """Going away: health NOT_SERVING (load balancers stop sending), new match-service
        calls are refused UNAVAILABLE; calls in flight go on. Await before
        ``server.stop()``."""
        self.serving = False
        if self._store_health is not None:
            self._store_health.stop()
        if self.health is not None:
            for service in self.health_services:
                await self.health.set(service, NOT_SERVING)

    async def close(self) -> None:
        """Finish the runtime's own tasks (writes, clocks) and close the store. Await after
        ``server.stop()``; calls :meth:`stopping` first if the caller did not. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.serving:
            await self.stopping()
        await self.runtime.close()
        await self.store.close()


def add_speeltafel_services(
    server: grpc.aio.Server,
    *,
    store: MatchStore,
    games: Mapping[str, GameAny] | None = None,
    wires: Mapping[str, GameWire] = WIRES,
    config: RuntimeConfig | None = None,
    limits: LimitsConfig | None = None,
    runtime: MatchRuntime | None = None,
    interceptors: InterceptorPlacement = "per_service",
    health: HealthSetter | bool = True,
    reflection: bool = True,
    reflect: Sequence[str] = (),
) -> Embedded:
    """Add the match service (and health and reflection) to ``server``; nothing starts yet.

    ``store``: where matches live (``MemoryStore()``, ``SqliteStore(path)``, ...); the
    handle closes it. ``games``: the games offered by id (default: every registered game);
    ``wires``: each game's wire by id (default: the wire registry); a game without a wire is
    refused here with ``ValueError``, not at its first view. ``config``: the runtime's
    clocks and caps; ``limits``: the fairness limits (default :class:`LimitsConfig()`).
    ``runtime``: a ready runtime instead (then ``store``, ``games`` and ``config`` are its
    own). ``interceptors``: ``"per_service"`` wraps speeltafel's handlers in
    :func:`speeltafel_interceptors`; ``"server"`` means the caller built ``server`` with
    them (then ``limits`` is ignored here). ``health``, ``reflection``, ``reflect``: see
    the module docstring.
    """
    if runtime is not None:
        store = runtime.store
    else:
        runtime = MatchRuntime(store, config, games=games)
    unwired = sorted(g.info.game_id for g in runtime.games() if g.info.game_id not in wires)
    if unwired:
        raise ValueError(f"no wire for the game(s) {', '.join(unwired)}")
    if interceptors not in ("per_service", "server"):
        raise ValueError(f"interceptors must be per_service or server, not {interceptors!r}")
    chain = speeltafel_interceptors(runtime, limits) if interceptors == "per_service" else []
    if health is True:
        health_servicer: HealthSetter | None = HealthServicer()
        health_services: tuple[str, ...] = ("", MATCH_SERVICE)
    elif health is False:
        health_servicer, health_services = None, ()
    else:
        health_servicer, health_services = health, (MATCH_SERVICE,)
    embedded = Embedded(
        runtime=runtime,
        store=store,
        health=health_servicer,
        interceptors=tuple(chain),
        health_services=health_services,
    )
    handlers = _ServiceHandlers(embedded)
    embedded._handlers = handlers
    embedded._server = server
    # The generated registration functions are untyped (the one seam with generated code).
    embedded.add_service(
        add_match_service,  # Play and Spectate send views serialised once (service.py)
        MatchService(runtime, wires),
    )
    if health is True:
        collector = _Collector()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, collector)
        handlers.methods.update(collector.methods)
        handlers.generic.extend(collector.generic)
        embedded._service_names.append(HEALTH_SERVICE)
    if reflection:
        handlers.generic.append(
            _LazyReflection(lambda: [*embedded.service_names, *reflect]),
        )
    server.add_generic_rpc_handlers((handlers,))
    return embedded
