"""The Bot protocol and the runner that plays a seat over one bidirectional stream.

A bot only chooses: given its view and the legal actions (typed, in the engine's stable
order), it returns one of them. The runner does everything else:

* subscribes to the seat's Play stream and acts whenever a view says the seat must act; the
  stream's first message, ``Subscribed``, says the subscription is live and names the
  match's version: when the runner already holds the view of that version (a reconnect
  with nothing missed), it acts on it at once, else it waits for the views that follow;
  a stream that stays silent past ``subscribe_timeout_s`` is taken as dropped;
* keeps at most one action in flight, so a view that arrives while it waits (another seat
  committed) never causes a second submission;
* on a dropped stream, first settles the action in flight by a unary ``SubmitAction`` with
  its *same* request_id (applied exactly once: the server answers a known request_id with
  its stored answer), then reconnects with ``since_version`` set to the last version it saw
  (the server resumes without a gap or duplicate). Why not re-send it on the new stream:
  a write to a stream the server has already ended fails the call with INTERNAL
  ("Internal error from Core") or ``InvalidStateError``, and what the server sent before
  ending it is lost with it. A finished match ends a stream right after ``Subscribed``, so
  a re-sent action lost that race on every attempt, and the runner gave up on a match that
  was over (seen through HAProxy with a slow bot, whose busy event loop always lost it);
* gives up only after ``max_reconnects`` failed attempts *in a row*: an attempt that made
  progress (a view, an answer, or a ``Subscribed`` at a newer version: the match moved on)
  starts the count afresh, so a long match on a connection that drops now and then is
  played to its end;
* returns the final view when the match is over, after the answer to the action that
  ended it (the server sends that answer before it closes the stream; if the stream was
  lost, the action is asked once more by its request_id), so that ``on_ack`` sees every
  accepted action of the seat.

A bot that thinks long (say a search of a few hundred milliseconds) says so with a class
attribute ``blocking = True``: the runner then calls its ``choose`` in a worker thread
(:func:`bot_thread`), so the event loop stays free for the streams of every other match the
process plays (their views, answers and HTTP/2 flow control). Cheap bots are called on the
loop: a thread hop costs more than their whole decision.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import random
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import grpc

from speeltafel.sdk.client import AsyncClient, Seat, new_request_id
from speeltafel.sdk.v1 import common_pb2, match_service_pb2

RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        # Too many streams of this seat (the dropped one not yet gone on the server's side)
        # or rate limited: both pass; back off and come again.
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
SUBSCRIBE_TIMEOUT_S = 10.0
"""How long a new stream may stay silent before its ``Subscribed`` (the server sends it at
once): past that the stream is stuck (say, its connection never came up) and is redone."""


class Bot(Protocol):
    """Anything with a ``choose`` method (plain or ``async``) is a bot.

    Optional: a ``blocking`` attribute (true for a plain ``choose`` that computes for long:
    the runner calls it in :func:`bot_thread` instead of on the event loop)."""

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action | Awaitable[common_pb2.Action]:
        """One of ``legal_actions`` for this view."""
        ...


@dataclass
class RunStats:
    """What a runner did, for logs and tests."""

    actions: int = 0
    rejected: int = 0
    reconnects: int = 0
    resyncs: int = 0


_THINKER: concurrent.futures.ThreadPoolExecutor | None = None
_THINKER_LOCK = threading.Lock()


def bot_thread() -> concurrent.futures.ThreadPoolExecutor:
    """The one worker thread (per process) in which blocking bots choose.

    One thread, not one per decision or the default executor's several: a Python search
    holds the GIL, so more threads would not decide faster in all, and a bot that budgets
    its time by the wall clock (the search bot) would find its budget shared by every
    search running at once and search fewer worlds. With one thread the decisions of the
    process's matches are taken one after another at full speed, as they were on the
    loop, while the loop itself keeps serving every stream."""
    global _THINKER
    with _THINKER_LOCK:
        if _THINKER is None:
            _THINKER = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="speeltafel-bot"
            )
        return _THINKER


async def _choose(bot: Bot, view: common_pb2.View) -> common_pb2.Action:
    legal = list(view.legal_actions)
    choice: common_pb2.Action | Awaitable[common_pb2.Action]
    if getattr(bot, "blocking", False):
        loop = asyncio.get_running_loop()
        choice = await loop.run_in_executor(bot_thread(), bot.choose, view, legal)
    else:
        choice = bot.choose(view, legal)
    if inspect.isawaitable(choice):
        chosen: common_pb2.Action = await choice
        return chosen
    return choice


async def play_seat(
    client: AsyncClient,
    seat: Seat,
    bot: Bot,
    *,
    max_reconnects: int = 20,
    subscribe_timeout_s: float = SUBSCRIBE_TIMEOUT_S,
    on_view: Callable[[common_pb2.View], None] | None = None,
    on_ack: Callable[
        [match_service_pb2.SubmitActionRequest, match_service_pb2.SubmitActionResponse], None
    ]
    | None = None,
    stats: RunStats | None = None,
    every_view: bool = False,
) -> common_pb2.View:
    """Play ``seat`` with ``bot`` until the match ends; returns the final view.

    ``on_view`` sees every view it is sent; ``on_ack`` every accepted action with its
    request. By default the stream asks for views only when the seat must act, plus the
    final view (``Subscribe.only_when_acting``): a bot chooses from one view per decision,
    and the server sends a fraction of the messages (other seats' sealed commitments are
    not pushed to it; every view carries the deal's public history). ``every_view=True``
    asks for every version, as a tool that watches the match does.
    """
    stats = stats if stats is not None else RunStats()
    last_version = 0
    seen_version = 0  # the newest version the match was known to be at (views, Subscribed)
    min_version = 0  # a decision starts at or after the version our last action produced
    pending: match_service_pb2.SubmitActionRequest | None = None
    latest: common_pb2.View | None = None
    final: common_pb2.View | None = None
    failures = 0

    def accepted(answer: match_service_pb2.SubmitActionResponse) -> None:
        nonlocal min_version
        assert pending is not None
        stats.actions += 1
        min_version = answer.version
        if on_ack is not None:
            on_ack(pending, answer)

    def rejected() -> None:
        nonlocal min_version
        assert pending is not None
        stats.rejected += 1
        # Choose again only from a newer view than the one that failed.
        min_version = max(min_version, pending.expected_version + 1)

    async def back_off(exc: BaseException) -> None:
        nonlocal failures
        failures += 1
        stats.reconnects += 1
        if failures > max_reconnects:
            raise exc
        await asyncio.sleep(min(2.0, 0.05 * 2**failures) * (0.5 + random.random()))

    while True:
        if final is not None:
            # The match is over and its final view is here; only the answer to our last
            # action was lost with the stream: ask for it by its request_id (the stored
            # answer if it was applied). No new stream: there is nothing more to see.
            if pending is not None:
                answer = await _settle(client, seat, pending, max_reconnects)
                if answer is not None:
                    accepted(answer)
            return final
        if pending is not None:
            # A stream dropped with our action in flight: settle it by itself (module
            # docstring), so the new stream carries nothing but its subscription.
            try:
                answer = await client.submit(
                    seat, pending.action, pending.expected_version, pending.request_id
                )
            except grpc.aio.AioRpcError as exc:
                if exc.code() in RETRYABLE:
                    await back_off(exc)
                    continue
                rejected()  # refused, so not applied: stale, not our turn, or the match over
            else:
                accepted(answer)
            pending = None
        call = client.play_stream(seat)
        try:
            subscribe = match_service_pb2.Subscribe(
                match_id=seat.match_id,
                since_version=last_version,
                only_when_acting=not every_view,
            )
            await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
            live = False  # a first message came: the subscription is accepted
            while True:
                if live:
                    response = await call.read()
                else:
                    try:
                        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows
                        # the caller's cancellation when the read completes at that moment,
                        # and a cancelled bot would play on.
                        async with asyncio.timeout(subscribe_timeout_s):
                            response = await call.read()
                    except TimeoutError:
                        raise _StreamEnded("no answer to the subscription") from None
                if response is grpc.aio.EOF:
                    break
                live = True
                kind = response.WhichOneof("event")
                if kind == "subscribed":
                    # Progress is a view, an answer, or the match having moved on since we
                    # last knew it: a stream accepted at the same version and then lost
                    # every time still runs out of attempts instead of retrying forever,
                    # while a seat that waits long for the others (asking only for its own
                    # decisions, it is sent nothing meanwhile) does not.
                    if response.subscribed.version > seen_version:
                        seen_version = response.subscribed.version
                        failures = 0
                    # Live. Holding the view of the match's current version (nothing was
                    # missed), act on it now: no view follows until the match moves on.
                    # Otherwise the views since last_version follow: act on those (asking
                    # only for views when acting, the server sends the current view when
                    # the seat must act now).
                    if latest is None or latest.version != response.subscribed.version:
                        continue
                elif kind == "view":
                    failures = 0
                    view: common_pb2.View = response.view
                    if response.resync:
                        stats.resyncs += 1
                    if view.version < last_version and not response.resync:
                        continue  # never move backwards
                    last_version = view.version
                    seen_version = max(seen_version, view.version)
                    latest = view
                    if on_view is not None:
                        on_view(view)
                    if view.status == common_pb2.MATCH_STATUS_FINISHED:
                        final = view
                        if pending is None:
                            return final
                        await _half_close(call)
                        continue  # the answer to our last action follows before the end
                elif kind == "result":
                    failures = 0
                    result = response.result
                    if pending is None or result.request_id != pending.request_id:
                        continue
                    if result.WhichOneof("result") == "accepted":
                        accepted(result.accepted)
                    else:
                        rejected()
                    pending = None
                    if final is not None:
                        return final
                if pending is None and latest is not None and _must_act(latest, seat, min_version):
                    action = await _choose(bot, latest)
                    pending = match_service_pb2.SubmitActionRequest(
                        match_id=seat.match_id,
                        expected_version=latest.version,
                        request_id=new_request_id(),
                        action=action,
                    )
                    await call.write(match_service_pb2.PlayRequest(submit=pending))
            if final is not None:
                continue  # ended before the answer to our last action: settled above
            # The server ended the stream without a final view (it is shutting down).
            raise _StreamEnded()
        except (grpc.aio.AioRpcError, _StreamEnded, asyncio.InvalidStateError) as exc:
            # InvalidStateError: a write to a call the server has already ended (grpc.aio
            # raises it instead of the call's status), e.g. when the server restarts.
            code = exc.code() if isinstance(exc, grpc.aio.AioRpcError) else None
            if code is not None and code not in RETRYABLE:
                raise
            if final is None:
                await back_off(exc)
            # With the final view here, nothing is retried: the loop settles and returns.
        finally:
            call.cancel()


async def _half_close(call: grpc.aio.StreamStreamCall) -> None:
    """Tell the server we send nothing more (it then ends the stream once our last action is
    answered). A call the server has already ended refuses even that: grpc.aio raises
    ``InvalidStateError`` or core's batch error (not an ``AioRpcError``). Either way the
    stream is over on the server's side, and the read that follows says how it ended, so a
    failed half-close is not an error of its own."""
    try:
        await call.done_writing()
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
        pass
    except Exception as exc:  # grpc._cython.cygrpc.ExecuteBatchError, a private type
        if type(exc).__name__ != "ExecuteBatchError":
            raise


async def _settle(
    client: AsyncClient,
    seat: Seat,
    pending: match_service_pb2.SubmitActionRequest,
    attempts: int,
) -> match_service_pb2.SubmitActionResponse | None:
    """The stored answer to an action still in flight when the match ended, or None when it
    was never applied (the match is over) or the server cannot be reached."""
    for attempt in range(1, max(1, attempts) + 1):
        try:
            return await client.submit(
                seat, pending.action, pending.expected_version, pending.request_id
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() not in RETRYABLE or attempt >= attempts:
                return None
            await asyncio.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + random.random()))
    return None


class _StreamEnded(Exception):
    """The Play stream closed before the match was over."""


def _must_act(view: common_pb2.View, seat: Seat, min_version: int) -> bool:
    return (
        view.status == common_pb2.MATCH_STATUS_RUNNING
        and view.version >= min_version
        and seat.seat in view.to_act
        and len(view.legal_actions) > 0
    )


def run_bot(target: str, seat: Seat, bot: Bot) -> common_pb2.View:
    """Blocking: connect to ``target`` and play ``seat`` with ``bot`` to the end."""

    async def main() -> common_pb2.View:
        async with AsyncClient(target) as client:
            return await play_seat(client, seat, bot)

    return asyncio.run(main())
