"""What the Locust users are made of, free of Locust itself: an interceptor that reports
every RPC, a blocking seat player, and the table-maker that seats users together.

Why a blocking player and not the SDK's :func:`speeltafel.sdk.runner.play_seat`: Locust runs
its users as gevent greenlets in one thread, and grpc's gevent mode
(``grpc.experimental.gevent.init_gevent``) covers the *blocking* API only. ``grpc.aio`` runs
its own completion-queue poller on an asyncio loop, which gevent does not drive: one user's
``asyncio.run`` would block every other user, or fail outright because the greenlets share
the thread's running loop. So the users speak through the SDK's blocking
:class:`speeltafel.sdk.client.Client` (its channel wrapped in :class:`ReportingInterceptor`)
and play their Play stream with :func:`play_seat_blocking`, which follows the runner's
protocol step for step (subscribe with ``since_version``, act on the newest view only once
the last action is answered, one action in flight, reconnect and re-send the action in
flight with the same ``request_id``). The bot's decision is the real one: whatever
:func:`speeltafel.bots.registry.make_bot` builds.
"""

from __future__ import annotations

import itertools
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from speeltafel.sdk.client import Client, Seat, new_request_id
from speeltafel.sdk.runner import Bot
from speeltafel.sdk.v1 import common_pb2, match_service_pb2

Fire = Callable[..., None]
"""``environment.events.request.fire`` (keyword arguments: request_type, name,
response_time, response_length, exception, context)."""

RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    }
)
"""The statuses after which a seat reconnects (the SDK runner's list without INTERNAL and
UNKNOWN: under load a bug must surface as a failure, not be retried away)."""

SUBMIT_ACK = "submit→ack"
"""The Locust name of one action: from writing the submit on the stream to its answer."""


class RpcFailure(Exception):
    """A failed call as Locust shows it: the status and the rule, never the message (a
    message names match ids, so each failure would be its own row)."""

    def __init__(self, code: grpc.StatusCode, rule: str = "") -> None:
        self.code = code
        self.rule = rule
        super().__init__(f"{code.name} {rule}".strip())


def failure_of(error: grpc.RpcError) -> RpcFailure:
    """The :class:`RpcFailure` of a failed call (its status and ErrorInfo rule)."""
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    return RpcFailure(code, _rule_of(error))


def _rule_of(error: grpc.RpcError) -> str:
    from google.rpc import error_details_pb2, status_pb2

    if not isinstance(error, grpc.Call):
        return ""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return str(info.reason)
    return ""


def short_method(method: str | bytes) -> str:
    """``/speeltafel.v1.MatchService/CreateMatch`` → ``CreateMatch``."""
    text = method.decode() if isinstance(method, bytes) else method
    return text.rsplit("/", 1)[-1]


class ReportingInterceptor(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[misc]
    grpc.StreamStreamClientInterceptor,  # type: ignore[misc]
):
    """Reports every call to ``fire`` (Locust's request event), by method name.

    A unary call is reported when its answer (or error) is in, request type ``grpc``. A
    streaming call is reported when it ends, request type ``stream``, with its whole
    lifetime: a Play stream lives as long as the match, so its time says little and the
    load's gate leaves it out; its *status* is what counts (a stream the caller cancels
    itself is not a failure). The time of each action on a stream is reported by the
    player instead (:data:`SUBMIT_ACK`).
    """

    def __init__(self, fire: Fire) -> None:
        self._fire = fire

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        started = time.perf_counter()
        outcome = continuation(details, request)
        exception: Exception | None = None
        length = 0
        try:
            length = outcome.result().ByteSize()
        except grpc.RpcError as error:
            exception = failure_of(error)
        self._fire(
            request_type="grpc",
            name=short_method(details.method),
            response_time=(time.perf_counter() - started) * 1000.0,
            response_length=length,
            exception=exception,
            context={},
        )
        return outcome

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        return _ReportedStream(continuation(details, request), details.method, self._fire)

    def intercept_stream_stream(
        self,
        continuation: Callable[..., Any],
        details: grpc.ClientCallDetails,
        request_iterator: Iterator[Any],
    ) -> Any:
        return _ReportedStream(continuation(details, request_iterator), details.method, self._fire)


class _ReportedStream:
    """A streaming call's response iterator that reports the call once, when it ends."""

    def __init__(self, call: Any, method: str | bytes, fire: Fire) -> None:
        self._call = call
        self._name = short_method(method)
        self._fire = fire
        self._started = time.perf_counter()
        self._length = 0
        self._reported = False
        self._cancelled = False

    def __iter__(self) -> _ReportedStream:
        return self

    def __next__(self) -> Any:
        try:
            message = next(self._call)
        except StopIteration:
            self._report(None)
            raise
        except grpc.RpcError as error:
            cancelled = self._cancelled and error.code() == grpc.StatusCode.CANCELLED
            self._report(None if cancelled else failure_of(error))
            raise
        self._length += message.ByteSize()
        return message

    def cancel(self) -> bool:
        """Cancel the call (ours: not reported as a failure)."""
        self._cancelled = True
        self._report(None)
        return bool(self._call.cancel())

    def _report(self, exception: Exception | None) -> None:
        if self._reported:
            return
        self._reported = True
        self._fire(
            request_type="stream",
            name=self._name,
            response_time=(time.perf_counter() - self._started) * 1000.0,
            response_length=self._length,
            exception=exception,
            context={},
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def reporting_client(target: str, fire: Fire) -> Client:
    """The SDK's blocking client on its own connection, every call reported to ``fire``.

    grpc shares a connection (subchannel) between channels of the same target and options
    unless told otherwise: without the local pool, many users would ride one connection
    and meet its per-connection limits together, which no set of real bots does."""
    from speeltafel.sdk.client import CHANNEL_OPTIONS

    options = [*CHANNEL_OPTIONS, ("grpc.use_local_subchannel_pool", 1)]
    channel = grpc.intercept_channel(
        grpc.insecure_channel(target, options=options), ReportingInterceptor(fire)
    )
    return Client(target, channel=channel)


# --------------------------------------------------------------------------- the seat


@dataclass(frozen=True, slots=True)
class Ack:
    """One action the server acknowledged: what the reconciliation looks for in the store."""

    match_id: str
    seat: int
    request_id: str
    seq: int
    version: int
    duplicate: bool


@dataclass
class SeatResult:
    """What one seat did in one match."""

    final: common_pb2.View | None = None
    acks: list[Ack] = field(default_factory=list)
    rejected: int = 0
    reconnects: int = 0


class _StreamEnded(Exception):
    """The Play stream ended before the match did."""


_DONE = object()


def _requests(outbox: queue.Queue[Any]) -> Iterator[match_service_pb2.PlayRequest]:
    """The request side of a Play stream: whatever the player puts in ``outbox``, until
    it puts :data:`_DONE` (half-close: the server then ends the stream after the match)."""
    while True:
        item = outbox.get()
        if item is _DONE:
            return
        yield item


def must_act(view: common_pb2.View, seat: int, min_version: int) -> bool:
    """Whether ``seat`` must act on ``view`` (the SDK runner's rule)."""
    return (
        view.status == common_pb2.MATCH_STATUS_RUNNING
        and view.version >= min_version
        and seat in view.to_act
        and len(view.legal_actions) > 0
    )


def play_seat_blocking(
    client: Client,
    seat: Seat,
    bot: Bot,
    fire: Fire,
    *,
    deadline_s: float = 300.0,
    max_reconnects: int = 20,
) -> SeatResult:
    """Play ``seat`` with ``bot`` to the end of the match over one Play stream (reconnecting
    when it drops); every accepted action is in the result's ``acks``, and each action's
    submit→ack time (or its refusal) is reported to ``fire`` as :data:`SUBMIT_ACK`.

    A refused action (a newer version came first) is reported as a failure with its status:
    with one action in flight, chosen from the newest view, an honest bot is not refused,
    so a refusal under load is a finding.
    """
    result = SeatResult()
    last_version = 0
    min_version = 0
    pending: match_service_pb2.SubmitActionRequest | None = None
    sent_at = 0.0
    latest: common_pb2.View | None = None
    failures = 0
    give_up_at = time.monotonic() + deadline_s
    while True:
        outbox: queue.Queue[Any] = queue.Queue()
        subscribe = match_service_pb2.Subscribe(match_id=seat.match_id, since_version=last_version)
        outbox.put(match_service_pb2.PlayRequest(subscribe=subscribe))
        if pending is not None:
            outbox.put(match_service_pb2.PlayRequest(submit=pending))
            sent_at = time.perf_counter()
        remaining = max(1.0, give_up_at - time.monotonic())
        call = client.stub.Play(_requests(outbox), metadata=seat.metadata, timeout=remaining)
        try:
            for response in call:
                kind = response.WhichOneof("event")
                if kind != "subscribed":
                    failures = 0
                if kind == "subscribed":
                    if latest is None or latest.version != response.subscribed.version:
                        continue
                elif kind == "view":
                    view = response.view
                    if view.version < last_version and not response.resync:
                        continue
                    last_version = view.version
                    latest = view
                    if view.status == common_pb2.MATCH_STATUS_FINISHED:
                        result.final = view
                        outbox.put(_DONE)
                        if pending is None:
                            return result
                        continue  # the answer to our last action comes before the end
                elif kind == "result":
                    answer = response.result
                    if pending is None or answer.request_id != pending.request_id:
                        continue
                    elapsed_ms = (time.perf_counter() - sent_at) * 1000.0
                    if answer.WhichOneof("result") == "accepted":
                        accepted = answer.accepted
                        result.acks.append(
                            Ack(
                                seat.match_id,
                                seat.seat,
                                pending.request_id,
                                accepted.seq,
                                accepted.version,
                                accepted.duplicate,
                            )
                        )
                        min_version = accepted.version
                        fire(
                            request_type="Play",
                            name=SUBMIT_ACK,
                            response_time=elapsed_ms,
                            response_length=0,
                            exception=None,
                            context={},
                        )
                    else:
                        error = answer.error
                        result.rejected += 1
                        min_version = max(min_version, pending.expected_version + 1)
                        fire(
                            request_type="Play",
                            name=SUBMIT_ACK,
                            response_time=elapsed_ms,
                            response_length=0,
                            exception=RpcFailure(status_code(error.code), error.rule),
                            context={},
                        )
                    pending = None
                    if result.final is not None:
                        return result
                if (
                    pending is None
                    and latest is not None
                    and must_act(latest, seat.seat, min_version)
                ):
                    action = bot.choose(latest, list(latest.legal_actions))
                    if not isinstance(action, common_pb2.Action):
                        raise TypeError("a load-test bot must choose synchronously")
                    pending = match_service_pb2.SubmitActionRequest(
                        match_id=seat.match_id,
                        expected_version=latest.version,
                        request_id=new_request_id(),
                        action=action,
                    )
                    outbox.put(match_service_pb2.PlayRequest(submit=pending))
                    sent_at = time.perf_counter()
            if result.final is not None:
                if pending is not None:
                    _settle(client, seat, pending, result)
                return result
            raise _StreamEnded("the stream ended before the match")
        except (grpc.RpcError, _StreamEnded) as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            if code is not None and code not in RETRYABLE:
                raise
            if time.monotonic() > give_up_at:
                raise
            failures += 1
            result.reconnects += 1
            if failures > max_reconnects:
                raise
            time.sleep(min(2.0, 0.05 * 2**failures) * (0.5 + random.random()))
        finally:
            outbox.put(_DONE)
            call.cancel()


def status_code(number: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a numeric status code (UNKNOWN for one it does not know)."""
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code
    return grpc.StatusCode.UNKNOWN


def _settle(
    client: Client, seat: Seat, pending: match_service_pb2.SubmitActionRequest, result: SeatResult
) -> None:
    """Ask once by request id for the answer to the action in flight when the stream ended
    (the stored answer when it was applied; a refusal when the match ended without it)."""
    try:
        answer = client.submit(seat, pending.action, pending.expected_version, pending.request_id)
    except grpc.RpcError:
        return
    result.acks.append(
        Ack(
            seat.match_id,
            seat.seat,
            pending.request_id,
            answer.seq,
            answer.version,
            answer.duplicate,
        )
    )


def play_seat_polling(
    client: Client, seat: Seat, bot: Bot, fire: Fire, *, deadline_s: float = 300.0
) -> SeatResult:
    """Play ``seat`` the naive way, with unary calls only: poll GetView as fast as answers
    come, SubmitAction when the view says so. What a simple client written without the
    Play stream does; it runs into the server's per-token rate (RESOURCE_EXHAUSTED with a
    RetryInfo), and waits as told. A refused submit is sent again with the same request
    id, so it counts once; a stale one (ABORTED: another seat moved first) is chosen
    anew from a newer view."""
    from speeltafel.sdk.client import retry_info_delay

    result = SeatResult()
    give_up_at = time.monotonic() + deadline_s
    min_version = 0
    while time.monotonic() < give_up_at:
        try:
            view = client.get_view(seat)
        except grpc.RpcError as error:
            _wait_or_raise(error, retry_info_delay)
            continue
        if view.status == common_pb2.MATCH_STATUS_FINISHED:
            result.final = view
            return result
        if not must_act(view, seat.seat, min_version):
            continue
        action = bot.choose(view, list(view.legal_actions))
        if not isinstance(action, common_pb2.Action):
            raise TypeError("a load-test bot must choose synchronously")
        request_id = new_request_id()
        while time.monotonic() < give_up_at:
            started = time.perf_counter()
            try:
                answer = client.submit(seat, action, view.version, request_id)
            except grpc.RpcError as error:
                if isinstance(error, grpc.Call) and error.code() in (
                    grpc.StatusCode.ABORTED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                ):
                    result.rejected += 1
                    min_version = view.version + 1
                    break
                _wait_or_raise(error, retry_info_delay)
                continue
            result.acks.append(
                Ack(
                    seat.match_id,
                    seat.seat,
                    request_id,
                    answer.seq,
                    answer.version,
                    answer.duplicate,
                )
            )
            min_version = answer.version
            fire(
                request_type="Unary",
                name=SUBMIT_ACK,
                response_time=(time.perf_counter() - started) * 1000.0,
                response_length=0,
                exception=None,
                context={},
            )
            break
    raise TimeoutError(f"match {seat.match_id} did not end within {deadline_s:g} s")


def _wait_or_raise(error: grpc.RpcError, retry_info_delay: Callable[[Any], float | None]) -> None:
    """Sleep as a refusal asks (RetryInfo), briefly after UNAVAILABLE; raise otherwise."""
    code = error.code() if isinstance(error, grpc.Call) else None
    delay = retry_info_delay(error) if code == grpc.StatusCode.RESOURCE_EXHAUSTED else None
    if delay is not None:
        time.sleep(delay)
    elif code == grpc.StatusCode.UNAVAILABLE:
        time.sleep(0.1 + 0.1 * random.random())
    else:
        raise error


# --------------------------------------------------------------------------- the tables


@dataclass
class Table:
    """A match being formed: ``seats`` users of one game; the first creates it."""

    game: match_service_pb2.GameInfo
    seats: int
    members: int = 0
    match_id: str = ""
    failed: bool = False
    created: threading.Event = field(default_factory=threading.Event)
    full: threading.Event = field(default_factory=threading.Event)


class TableMaker:
    """Seats users together, the way a lobby would: the open table is for the next game in
    the rotation (every game the server offers, in ListGames order) with a seat count drawn
    from the game's range (capped by ``max_seats`` and by how many users are running, so
    it can fill); the first user to sit creates the match, the others wait for the id;
    a table is closed once full and the next user opens the next one.

    Every finished match frees its users, so with at least ``min_seats`` users a table
    always fills. One per Locust process (the users of a process are greenlets sharing it).
    """

    def __init__(self, max_seats: int, seed: int | None = None) -> None:
        self.max_seats = max_seats
        self._random = random.Random(seed)
        self._games: Sequence[match_service_pb2.GameInfo] = ()
        self._rotation: Iterator[match_service_pb2.GameInfo] | None = None
        self._open: Table | None = None
        self.stopping = False

    def offer(self, games: Sequence[match_service_pb2.GameInfo], only: Sequence[str] = ()) -> None:
        """The games to rotate through (the first user's ListGames; ``only``: a subset)."""
        if self._rotation is not None:
            return
        chosen = [g for g in games if not only or g.game in only]
        if not chosen:
            raise ValueError(f"none of the games {list(only)} is offered")
        self._games = chosen
        self._rotation = itertools.cycle(chosen)

    def sit(self, users_running: int) -> tuple[Table, bool]:
        """A seat at the open table (opened if none) and whether this user creates it."""
        assert self._rotation is not None, "offer() the games first"
        table = self._open
        creator = False
        if table is None:
            game = self._next_game(users_running)
            top = max(game.min_seats, min(game.max_seats, self.max_seats, users_running))
            table = Table(game, self._random.randint(game.min_seats, top))
            self._open = table
            creator = True
        table.members += 1
        if table.members >= table.seats:
            self._open = None
            table.full.set()
        return table, creator

    def _next_game(self, users_running: int) -> match_service_pb2.GameInfo:
        """The next game of the rotation that the users running can seat (all of them when
        too few users run for any: the table then waits for more)."""
        assert self._rotation is not None
        for _ in range(len(self._games)):
            game = next(self._rotation)
            if game.min_seats <= users_running:
                return game
        return next(self._rotation)

    def abandon(self, table: Table) -> None:
        """A member leaves an unfilled table (the test is stopping): nobody else sits there."""
        if self._open is table:
            self._open = None
