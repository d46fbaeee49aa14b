"""Fairness limits: one client must not starve or lock out the others.

gRPC's ``maximum_concurrent_rpcs`` is one pool shared by every client: a peer that opens
thousands of streams and never speaks on them (a Play stream that never subscribes, a
Spectate of a match that never moves) empties it for everyone, and a peer that floods
cheap calls takes the event loop. :class:`LimitsInterceptor` (the outermost interceptor)
decides every call before any handler work:

* **Streams count from the moment they open** (every call with a streaming request or
  response: Play, Spectate, health Watch, reflection), per connection peer
  (``context.peer()``, ``ip:port``: one client channel), per token (when the call carries
  ``authorization: Bearer <token>``, keyed by the token's SHA-256, never the token), per
  IP address and in total; over a cap the call ends with RESOURCE_EXHAUSTED
  (``too_many_streams``) before the handler runs (a streaming request's after its first
  message: ``errors.after_first_message``). The count is released when the call
  ends, however it ends (cancelled, failed, finished): a done callback on the call and the
  wrapper's ``finally`` both release, once.
* **Concurrent unary calls** are capped the same way (``too_many_calls``): 2,000 parallel
  GetView calls of one token get 16 slots, the rest are refused at once.
* **Rates**: token buckets per peer, per IP and per token for unary calls (a method costs
  what it makes the server do: CreateMatch writes a match, so it costs more), answered
  with RESOURCE_EXHAUSTED, rule ``rate_limited``, and a ``google.rpc.RetryInfo`` detail
  beside the ErrorInfo.
* **Messages on a request stream** (submits on Play) pass token buckets per peer and per
  token too, but an over-rate message is *delayed*, not refused (back-pressure): the
  wrapped request iterator sleeps until the buckets allow it. This is the fairer answer:
  an honest bot that is briefly too fast loses nothing and needs no retry logic (a refused
  submit would be one more error path for every bot, and retrying it would cost the server
  again), while a flooding client is slowed to the rate at no cost to the server (the
  sleeping reader takes no CPU; HTTP/2 flow control stops the client's sending once the
  stream's window is full, so its backlog does not grow server memory).
* **Who may create matches** (``create_policy``): ``open``, or ``token``: CreateMatch then
  needs ``authorization: Bearer <organiser token>`` (constant-time comparison), else
  UNAUTHENTICATED (``organiser_token_required``).

Per-IP limits do not apply to loopback peers (127.0.0.0/8, ::1) or Unix sockets: every
local client shares 127.0.0.1, so a per-IP cap there would be one cap for all of them.
Per-peer and per-token limits still apply to them.

The Diagnostics echo service (only served with ``--diagnostics``, for benchmarks that
measure the transport's own ceiling) is exempt.

:func:`check_create_request` bounds what a CreateMatch request makes the server hold.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import hmac
import inspect
import ipaddress
import math
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import grpc

from speeltafel.server.app.errors import BadRequest
from speeltafel.server.rpc.errors import (
    after_first_message,
    bearer_token,
    refusing,
    status_for,
    wrap_handler,
)

CreatePolicy = Literal["open", "token"]
MAX_STREAMS_PER_CONNECTION = 256
"""HTTP/2 ``SETTINGS_MAX_CONCURRENT_STREAMS`` of the server (``grpc.max_concurrent_streams``):
calls one connection may have in flight, streams and unary alike; a client's further
calls wait in its own channel, costing the server nothing."""
ORGANISER_TOKEN_ENV = "SPEELTAFEL_ORGANISER_TOKEN"
CREATE_MATCH = "/speeltafel.v1.MatchService/CreateMatch"
EXEMPT_PREFIXES = ("/speeltafel.v1.Diagnostics",)  # Diagnostics and DiagnosticsService

Behaviour = Callable[..., Any]


def _default_costs() -> dict[str, float]:
    return {
        CREATE_MATCH: 10.0,
        "/speeltafel.v1.MatchService/JoinMatch": 2.0,
        "/speeltafel.v1.MatchService/GetMatchRecord": 2.0,
    }


@dataclass(frozen=True, slots=True)
class LimitsConfig:
    """Every fairness limit of the server (see the module docstring for what each does).

    The numbers are chosen against ``maximum_concurrent_rpcs`` (4,096 in server.py): streams
    may take at most half of that pool, unary calls and held refusals 768 each, so 512
    slots always stay free whatever the clients hold, and per-peer caps times a few peers
    (8 channels x 256 streams) cannot empty it. HTTP/2 itself caps one connection at
    :data:`MAX_STREAMS_PER_CONNECTION` calls in flight (the client queues the rest).
    """

    max_streams_total: int = 2048
    """Open streams over every client; half of ``maximum_concurrent_rpcs``."""
    max_streams_per_peer: int = 256
    """Open streams of one connection (one client channel): room for a tournament runner
    playing 64 seats over one channel several times over."""
    max_streams_per_ip: int = 512
    """Open streams of one non-loopback IP address (every connection from it)."""
    max_streams_per_token: int = 8
    """Open streams of one token: a seat needs one Play stream, and briefly a second one
    while it reconnects (the runtime's own cap of subscribed streams per seat is lower and
    speaks first for subscribed streams; this one also counts streams that never subscribe)."""
    max_unary_total: int = 768
    """Unary calls in progress over every client."""
    max_parked_total: int = 768
    """Refused unary calls whose answer is held back (see ``max_park_s``) over every client;
    with the stream and unary caps, 3,584 of the 4,096 slots of ``maximum_concurrent_rpcs``:
    512 always stay free. Over it, refusals are answered at once."""
    max_park_s: float = 1.0
    """A refused unary call (``rate_limited``, ``too_many_calls``) is answered after this long
    instead of at once: a flooding client that waits for its answers is slowed to its
    concurrency per second, and a held answer costs the server one timer. (Held only for
    its retry delay, a flood of 64 callers still made 740 refusals a second, and each costs
    the server a whole call: the event loop was 62% busy with them and an honest match's
    latency grew by the queueing.) With at most :data:`MAX_STREAMS_PER_CONNECTION` calls
    in flight per connection (HTTP/2), one channel cannot turn refusals into a flood."""
    max_park_escalated_s: float = 4.0
    """A connection or token that already has refused calls held gets each further one held
    longer: ``max_park_s`` more for every ``park_escalation_step`` of them held, up to this.
    An honest client refused now and then has none held and waits ``max_park_s``; a flood
    of calls over its cap (2,000 parallel GetViews of one token: about 240 held at a time on
    its connection) waits this long, so it makes a quarter of the refusals a second. Held
    for 1 s, such a flood took the server's loop from the honest client: its p99 rose 2.7
    to 4.3 times in the same session; held for 3 s, 1.3 to 1.5 times."""
    park_escalation_step: int = 16
    """Refused calls held for one connection or token per step of the hold (see
    ``max_park_escalated_s``)."""
    max_unary_per_peer: int = 128
    """Unary calls in progress on one connection."""
    max_unary_per_ip: int = 256
    """Unary calls in progress from one non-loopback IP address."""
    max_unary_per_token: int = 16
    """Unary calls in progress with one token (a seat needs one or two)."""
    unary_rate_per_peer: float = 250.0
    """Unary cost units per second one connection may spend (an ordinary call costs 1)."""
    unary_burst_per_peer: float = 250.0
    """How many cost units a connection may spend at once after being idle (one second's
    worth: a larger burst lets a flood run at several times the rate for seconds)."""
    unary_rate_per_ip: float = 1000.0
    """Unary cost units per second of one non-loopback IP address."""
    unary_burst_per_ip: float = 4000.0
    """Burst of one non-loopback IP address."""
    unary_rate_per_token: float = 100.0
    """Unary cost units per second of one token."""
    unary_burst_per_token: float = 100.0
    """Burst of one token."""
    method_costs: Mapping[str, float] = field(default_factory=_default_costs)
    """Cost units of a call by full method name (1 when not listed)."""
    message_rate_per_peer: float = 4000.0
    """Request-stream messages (Play submits) per second of one connection; above it the
    next message waits (back-pressure), nothing is refused."""
    message_burst_per_peer: float = 1000.0
    """Messages a connection may send at once after being idle."""
    message_rate_per_token: float = 500.0
    """Request-stream messages per second of one token (an honest seat plays a few hundred
    moves per second at most on a 2-core machine)."""
    message_burst_per_token: float = 100.0
    """Messages a token may send at once after being idle."""
    refusal_cost: float = 8.0
    """What a call or a stream message the server answered with an error costs on top of
    its own cost: an honest client rarely errs, a flood of invalid requests (unknown
    matches, illegal moves) is slowed to an eighth of the rate of valid ones."""
    create_policy: CreatePolicy = "open"
    """``open``: anyone may create matches; ``token``: CreateMatch needs the organiser token."""
    organiser_token: str = field(default="", repr=False)
    """The organiser's bearer token for ``create_policy="token"``."""
    sweep_every: int = 4096
    """Admissions between two sweeps of idle per-peer, per-IP and per-token entries (so
    random tokens or many short connections cannot grow the tables without bound)."""

    def __post_init__(self) -> None:
        if self.create_policy not in ("open", "token"):
            raise ValueError(f"create_policy must be open or token, not {self.create_policy!r}")
        if self.create_policy == "token" and not self.organiser_token:
            raise ValueError("create_policy token needs an organiser token")


def is_loopback_host(host: str) -> bool:
    """Whether a bind address only accepts local clients."""
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def limits_for_serve(
    host: str, create_policy: str | None, organiser_token: str | None
) -> LimitsConfig:
    """The limits of ``speeltafel serve``: the create policy defaults to ``open`` on a
    loopback host and ``token`` otherwise; the token comes from the flag or the
    environment. Raises ``SystemExit`` with one clear line when the token is missing."""
    policy = create_policy or ("open" if is_loopback_host(host) else "token")
    token = organiser_token or os.environ.get(ORGANISER_TOKEN_ENV, "")
    if policy == "token" and not token:
        raise SystemExit(
            f"speeltafel serve: create policy 'token' (the default on a non-loopback host "
            f"such as {host}) needs --organiser-token or {ORGANISER_TOKEN_ENV}; "
            f"or pass --create-policy open"
        )
    return LimitsConfig(
        create_policy="token" if policy == "token" else "open", organiser_token=token
    )


# --------------------------------------------------------------------------- buckets


class TokenBucket:
    """``rate`` units per second, at most ``burst`` saved up."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def refill(self, now: float) -> None:
        """Add what has accrued since the last look."""
        if now > self.stamp:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now

    def shortfall(self, cost: float) -> float:
        """Seconds until ``cost`` is available (0 when it is now); call after refill."""
        return 0.0 if self.tokens >= cost else (cost - self.tokens) / self.rate

    def full(self, now: float) -> bool:
        """Whether the bucket would be full now (an idle entry equal to a fresh one)."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst


@dataclass(slots=True)
class _Usage:
    """What one peer, IP or token holds now."""

    streams: int = 0
    unary: int = 0
    parked: int = 0
    calls: TokenBucket | None = None
    messages: TokenBucket | None = None

    def idle(self, now: float) -> bool:
        return (
            self.streams == 0
            and self.unary == 0
            and self.parked == 0
            and (self.calls is None or self.calls.full(now))
            and (self.messages is None or self.messages.full(now))
        )


class _Lease:
    """One admitted call's hold on its counters; released exactly once."""

    __slots__ = ("_kind", "_limiter", "_usages", "released")

    def __init__(self, limiter: Limiter, kind: str, usages: tuple[_Usage, ...]) -> None:
        self._limiter = limiter
        self._kind = kind
        self._usages = usages
        self.released = False

    def release(self, *_: Any) -> None:
        if self.released:
            return
        self.released = True
        if self._kind == "streams":
            self._limiter.streams -= 1
            for usage in self._usages:
                usage.streams -= 1
        else:
            self._limiter.unary -= 1
            for usage in self._usages:
                usage.unary -= 1


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call is refused: status code, message, rule id, and a retry delay if any."""

    code: grpc.StatusCode
    message: str
    rule: str
    retry_delay_s: float | None = None


@functools.lru_cache(maxsize=4096)
def peer_ip(peer: str) -> str | None:
    """The IP address of a non-loopback peer (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``), else None.

    Cached: every call of a connection names the same peer, and parsing it with
    :mod:`ipaddress` costs about 2.5 us a call against 0.1 us for the look-up."""
    if peer.startswith("ipv4:"):
        host = peer[5:].rsplit(":", 1)[0]
    elif peer.startswith("ipv6:"):
        host = peer[5:].rsplit(":", 1)[0].strip("[]")
    else:
        return None  # unix sockets and the like are local
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if address.is_loopback:
        return None
    return str(address)


def token_key(token: str) -> str:
    """The key of a token in the limiter's tables: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


class Limiter:
    """The counters and buckets behind :class:`LimitsInterceptor` (one event loop only)."""

    def __init__(self, config: LimitsConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.streams = 0
        self.unary = 0
        self.parked = 0
        self.peers: dict[str, _Usage] = {}
        self.ips: dict[str, _Usage] = {}
        self.tokens: dict[str, _Usage] = {}
        self._admissions = 0

    def _usages(self, peer: str, key: str | None) -> list[tuple[str, _Usage]]:
        """(scope, usage) of the peer, its IP (when not loopback) and its token (if any)."""
        self._admissions += 1
        if self._admissions >= self.config.sweep_every:
            self._admissions = 0
            self.sweep()
        usages = [("connection", self.peers.setdefault(peer, _Usage()))]
        ip = peer_ip(peer)
        if ip is not None:
            usages.append(("address", self.ips.setdefault(ip, _Usage())))
        if key is not None:
            usages.append(("token", self.tokens.setdefault(key, _Usage())))
        return usages

    def sweep(self) -> None:
        """Forget entries that hold nothing and whose buckets are full (equal to fresh ones)."""
        now = self.clock()
        for table in (self.peers, self.ips, self.tokens):
            for name in [name for name, usage in table.items() if usage.idle(now)]:
                del table[name]

    def admit_stream(self, peer: str, key: str | None) -> _Lease | Refusal:
        """Count a stream that opens now, or say why it may not."""
        c = self.config
        usages = self._usages(peer, key)
        caps = {
            "connection": c.max_streams_per_peer,
            "address": c.max_streams_per_ip,
            "token": c.max_streams_per_token,
        }
        for scope, usage in usages:
            if usage.streams >= caps[scope]:
                return _too_many("streams", scope, caps[scope])
        if self.streams >= c.max_streams_total:
            return _too_many("streams", "server", c.max_streams_total)
        self.streams += 1
        for _, usage in usages:
            usage.streams += 1
        return _Lease(self, "streams", tuple(u for _, u in usages))

    def admit_unary(self, peer: str, key: str | None, cost: float) -> _Lease | Refusal:
        """Admit a unary call (concurrency caps, then rate buckets), or say why not."""
        c = self.config
        usages = self._usages(peer, key)
        caps = {
            "connection": c.max_unary_per_peer,
            "address": c.max_unary_per_ip,
            "token": c.max_unary_per_token,
        }
        for scope, usage in usages:
            if usage.unary >= caps[scope]:
                return _too_many("calls", scope, caps[scope])
        if self.unary >= c.max_unary_total:
            return _too_many("calls", "server", c.max_unary_total)
        now = self.clock()
        buckets = [self._call_bucket(scope, usage, now) for scope, usage in usages]
        wait = 0.0
        for bucket in buckets:
            bucket.refill(now)
            wait = max(wait, bucket.shortfall(cost))
        if wait > 0.0:
            return Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many calls: slow down and retry after the delay given",
                "rate_limited",
                retry_delay_s=wait,
            )
        for bucket in buckets:
            bucket.tokens -= cost
        self.unary += 1
        for _, usage in usages:
            usage.unary += 1
        return _Lease(self, "unary", tuple(u for _, u in usages))

    def _known(self, peer: str, key: str | None) -> list[_Usage]:
        """The usages of ``peer`` and ``key`` that the tables hold (none are made)."""
        found = (self.peers.get(peer), self.tokens.get(key) if key else None)
        return [usage for usage in found if usage is not None]

    def park_s(self, peer: str, key: str | None) -> float:
        """How long the next refused call of ``peer`` and ``key`` is held: ``max_park_s``,
        and more while that connection or token already has refusals held."""
        c = self.config
        held = max((usage.parked for usage in self._known(peer, key)), default=0)
        steps = 1 + held // max(1, c.park_escalation_step)
        return min(max(c.max_park_s, c.max_park_escalated_s), c.max_park_s * steps)

    async def park(self, peer: str, key: str | None) -> None:
        """Hold a refused unary call (:meth:`park_s`) while fewer than ``max_parked_total``
        are held; a cancelled call just ends."""
        if self.parked >= self.config.max_parked_total:
            return
        seconds = self.park_s(peer, key)
        usages = self._known(peer, key)
        self.parked += 1
        for usage in usages:
            usage.parked += 1
        try:
            await asyncio.sleep(seconds)
        finally:
            self.parked -= 1
            for usage in usages:
                usage.parked -= 1

    def _call_bucket(self, scope: str, usage: _Usage, now: float) -> TokenBucket:
        if usage.calls is None:
            c = self.config
            rate, burst = {
                "connection": (c.unary_rate_per_peer, c.unary_burst_per_peer),
                "address": (c.unary_rate_per_ip, c.unary_burst_per_ip),
                "token": (c.unary_rate_per_token, c.unary_burst_per_token),
            }[scope]
            usage.calls = TokenBucket(rate, burst, now)
        return usage.calls

    def charge_refusal(self, peer: str, key: str | None, buckets: str) -> None:
        """Debit ``refusal_cost`` from the peer's and token's ``buckets`` ("calls" or
        "messages"); they may go into debt, which later calls or messages wait out."""
        for usage in self._known(peer, key):
            bucket = getattr(usage, buckets)
            if bucket is not None:
                bucket.tokens -= self.config.refusal_cost

    def message_delay(self, peer: str, key: str | None) -> float:
        """Take one request-stream message from the peer's and token's buckets; the seconds
        to wait before handing it on (0 when within the rate). Buckets may go into debt, so
        waiting messages queue in order instead of racing for the next token."""
        c = self.config
        now = self.clock()
        wait = 0.0
        scopes = [(self.peers.get(peer), c.message_rate_per_peer, c.message_burst_per_peer)]
        if key is not None:
            scopes.append(
                (self.tokens.get(key), c.message_rate_per_token, c.message_burst_per_token)
            )
        for usage, rate, burst in scopes:
            if usage is None:  # the stream's lease keeps its entries; absent only in tests
                continue
            if usage.messages is None:
                usage.messages = TokenBucket(rate, burst, now)
            bucket = usage.messages
            bucket.refill(now)
            bucket.tokens -= 1.0
            if bucket.tokens < 0.0:
                wait = max(wait, -bucket.tokens / bucket.rate)
        return wait


def _too_many(what: str, scope: str, cap: int) -> Refusal:
    whose = {
        "connection": "on one connection",
        "address": "from one address",
        "token": "with one token",
        "server": "on the server",
    }[scope]
    rule = "too_many_streams" if what == "streams" else "too_many_calls"
    return Refusal(grpc.StatusCode.RESOURCE_EXHAUSTED, f"at most {cap} open {what} {whose}", rule)


@functools.lru_cache(maxsize=512)
def _status(
    code: grpc.StatusCode, message: str, rule: str, retry_delay_ms: int | None
) -> grpc.Status:
    """Rich statuses are built once per distinct refusal (retry delays are whole ms)."""
    delay = None if retry_delay_ms is None else retry_delay_ms / 1000
    return status_for(code, message, rule, retry_delay_s=delay)


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], refusal: Refusal) -> None:
    delay_ms = None
    if refusal.retry_delay_s is not None:
        # Rounded up to 10 ms: few distinct statuses, and a client never retries too early.
        delay_ms = max(10, 10 * math.ceil(refusal.retry_delay_s * 100))
    status = _status(refusal.code, refusal.message, refusal.rule, delay_ms)
    await context.abort(status.code, status.details, status.trailing_metadata)


# --------------------------------------------------------------------------- interceptor


class LimitsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # untyped grpc
    """Applies a :class:`LimitsConfig` to every call before its handler runs."""

    def __init__(self, config: LimitsConfig | None = None) -> None:
        self.config = config or LimitsConfig()
        self.limiter = Limiter(self.config)
        self._organiser = self.config.organiser_token.encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or method.startswith(EXEMPT_PREFIXES):
            return handler
        token = bearer_token(handler_call_details.invocation_metadata)
        if (
            method == CREATE_MATCH
            and self.config.create_policy == "token"
            and not hmac.compare_digest(token.encode(), self._organiser)
        ):
            refusal = Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                "creating matches needs the organiser's token",
                "organiser_token_required",
            )
            return wrap_handler(handler, *refusing(lambda context: _refuse(context, refusal)))
        key = token_key(token) if token else None
        if handler.request_streaming or handler.response_streaming:
            return wrap_handler(handler, self._stream_unary(key), self._stream(key))
        cost = self.config.method_costs.get(method, 1.0)
        return wrap_handler(handler, self._unary(key, cost), self._stream(key))

    def _unary(self, key: str | None, cost: float) -> Callable[[Behaviour], Behaviour]:
        limiter = self.limiter

        def limit(behaviour: Behaviour) -> Behaviour:
            async def limited(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                peer = context.peer()
                lease = limiter.admit_unary(peer, key, cost)
                if isinstance(lease, Refusal):
                    await limiter.park(peer, key)
                    await _refuse(context, lease)
                    return None  # pragma: no cover - abort raises
                try:
                    return await behaviour(request, context)
                except grpc.aio.AbortError:
                    limiter.charge_refusal(context.peer(), key, "calls")
                    raise
                finally:
                    lease.release()

            return limited

        return limit

    def _stream_unary(self, key: str | None) -> Callable[[Behaviour], Behaviour]:
        """A streaming request with one response: counted as a stream."""
        limiter = self.limiter

        def limit(behaviour: Behaviour) -> Behaviour:
            async def limited(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                peer = context.peer()
                lease = limiter.admit_stream(peer, key)
                if isinstance(lease, Refusal):
                    await after_first_message(request)  # so the client reads the status
                    await _refuse(context, lease)
                    return None  # pragma: no cover - abort raises
                context.add_done_callback(lease.release)
                try:
                    return await behaviour(_paced(request, limiter, peer, key), context)
                finally:
                    lease.release()

            return limited

        return limit

    def _stream(self, key: str | None) -> Callable[[Behaviour], Behaviour]:
        limiter = self.limiter
        stream_unary = self._stream_unary(key)

        def limit(behaviour: Behaviour) -> Behaviour:
            if not inspect.isasyncgenfunction(behaviour):
                # A coroutine that writes with context.write() (grpc's health Watch).
                return stream_unary(behaviour)

            async def limited(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> AsyncIterator[Any]:
                peer = context.peer()
                lease = limiter.admit_stream(peer, key)
                if isinstance(lease, Refusal):
                    await after_first_message(request)  # so the client reads the status
                    await _refuse(context, lease)
                    return  # pragma: no cover - abort raises
                # The done callback releases even when the generator is never closed (a
                # cancelled call whose generator waits for the garbage collector).
                context.add_done_callback(lease.release)
                charge = functools.partial(limiter.charge_refusal, peer, key, "messages")
                REFUSED_MESSAGE.set(charge)
                try:
                    async for response in behaviour(_paced(request, limiter, peer, key), context):
                        yield response
                finally:
                    lease.release()

            return limited

        return limit


REFUSED_MESSAGE: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "speeltafel_refused_message", default=None
)
"""Set for each stream by the interceptor: what a handler calls when it answers one of the
stream's messages with an error (see :func:`message_refused`)."""


def message_refused() -> None:
    """Charge the current stream's client for a message answered with an error (the
    ``refusal_cost``); nothing outside a limited stream."""
    charge = REFUSED_MESSAGE.get()
    if charge is not None:
        charge()


def _paced(request: Any, limiter: Limiter, peer: str, key: str | None) -> Any:
    """A request stream whose messages wait for the peer's and token's message buckets."""
    if not hasattr(request, "__aiter__"):
        return request
    return _paced_stream(request, limiter, peer, key)


async def _paced_stream(
    requests: AsyncIterator[Any], limiter: Limiter, peer: str, key: str | None
) -> AsyncIterator[Any]:
    async for message in requests:
        delay = limiter.message_delay(peer, key)
        if delay > 0.0:
            await asyncio.sleep(delay)
        yield message


# --------------------------------------------------------------------------- requests

MAX_GAME_CHARS = 64
"""Length of a game id in CreateMatch."""
MAX_OPTIONS = 16
"""Options in one CreateMatch (every game has a handful)."""
MAX_OPTION_CHARS = 64
"""Length of an option's name and of its value."""
MAX_PRESET_DECKS = 16
"""Preset deck orders in one CreateMatch (one per deal; analysis needs a few)."""
MAX_PRESET_CARDS = 1024
"""Cards over all preset decks of one CreateMatch: what a match holds for them stays
under ~100 KB (the engine accepts any number of exact deck orders; a 63 KB request of
maximal decks used to hold 1.07 MB)."""
MAX_CARD_CHARS = 16
"""Length of one card's text (``"worm:5"``, ``"104"``)."""

# A bad deck gets the engine's rule id whichever layer notices first, so clients see one
# answer for one mistake; only the limits the engine does not have get their own ids.
_BAD_DECK = "invalid_options"


def check_create_request(request: Any) -> None:
    """Bound what a CreateMatch request can make the server hold; BadRequest otherwise.

    Counts and lengths only (cheap, before anything is parsed further): whether each preset
    is an order of its named deck is the engine's to say when the match is made (decks of
    some games hold a card several times, and a game knows its decks' sizes). Messages name
    the limit, never the client's text. Rule ids: ``game_too_long``, ``too_many_options``,
    ``option_too_long``, ``too_many_preset_decks``, ``too_many_preset_cards``, and the
    engine's ``invalid_options`` for a card name over its length.
    """
    if len(request.game) > MAX_GAME_CHARS:
        raise BadRequest(f"game is longer than {MAX_GAME_CHARS} characters", "game_too_long")
    options = request.options
    if len(options) > MAX_OPTIONS:
        raise BadRequest(f"more than {MAX_OPTIONS} options", "too_many_options")
    for name, value in options.items():
        if len(name) > MAX_OPTION_CHARS or len(value) > MAX_OPTION_CHARS:
            raise BadRequest(
                f"an option name or value is longer than {MAX_OPTION_CHARS} characters",
                "option_too_long",
            )
    decks = request.preset_decks
    if not decks:
        return
    if len(decks) > MAX_PRESET_DECKS:
        raise BadRequest(f"more than {MAX_PRESET_DECKS} preset decks", "too_many_preset_decks")
    if sum(len(deck.cards) for deck in decks) > MAX_PRESET_CARDS:
        raise BadRequest(
            f"more than {MAX_PRESET_CARDS} cards over all preset decks", "too_many_preset_cards"
        )
    for number, deck in enumerate(decks, start=1):
        if len(deck.deck) > MAX_OPTION_CHARS:
            raise BadRequest(
                f"the deck name of preset {number} is longer than {MAX_OPTION_CHARS} characters",
                _BAD_DECK,
            )
        if any(len(card) > MAX_CARD_CHARS for card in deck.cards):
            raise BadRequest(
                f"a card of preset deck {number} is longer than {MAX_CARD_CHARS} characters",
                _BAD_DECK,
            )
