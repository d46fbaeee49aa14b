"""Clients of the speeltafel match service: :class:`AsyncClient` (grpc.aio) and :class:`Client`.

Both speak the same calls with the same names; a seat is addressed by the :class:`Seat` that
``join`` returns (its secret token travels as ``authorization`` metadata, and the match id as
``x-match-id`` metadata, on every seat call).

``create_match`` and ``join`` are idempotent by request id, so both retry by themselves when
the answer may have been lost (UNAVAILABLE, DEADLINE_EXCEEDED, or CANCELLED by the transport:
never the caller's own cancellation), re-sending the *same* request id with a growing,
jittered backoff: ``retries`` more attempts (default :data:`DEFAULT_RETRIES`), each with a
deadline of ``attempt_timeout`` seconds (default: none). A retry of a request that did
arrive gets the stored answer (``duplicate``), never a second match or seat. A call refused
for its rate (RESOURCE_EXHAUSTED with a ``google.rpc.RetryInfo``) is sent again after the
delay the server asked for, up to :data:`RATE_LIMITED_RETRIES` times.

Routing by match (``route_by_match=True``): with a target that names several server
processes of one cluster (``ipv4:10.0.0.1:50051,10.0.0.2:50051``, or a DNS name with several
addresses), the channel uses gRPC's client-side consistent hashing, the ``ring_hash``
policy hashing each call's ``x-match-id`` header (gRFC A76's ``request_hash_header``), so
every seat call of a match goes to the same process without a proxy in front, and a process
that is down is skipped for the next on the ring. Calls without the header (CreateMatch,
ListGames, the lobby) go to a random process, which is fine: processes own nothing. In
grpcio (C-core, checked with 1.85) the header setting is still behind the environment
variable ``GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY``; without it the policy
ignores the header and fails every call ("hash attribute not present"), so such a client
sets it (unless it is set already) before it makes its channel.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2

from speeltafel.sdk.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc

CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.max_receive_message_length", 4 * 1024 * 1024),
]
ROUTING_HEADER = "x-match-id"
"""The metadata that names a call's match: what a proxy or the client's ring hash routes by."""
RING_HASH_ENV = "GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY"
RING_HASH_CONFIG = {
    "loadBalancingConfig": [{"ring_hash_experimental": {"requestHashHeader": ROUTING_HEADER}}]
}
"""The service config of a client routing by match (the policy's name in grpcio is still
``ring_hash_experimental``)."""


def channel_options(route_by_match: bool = False) -> list[tuple[str, Any]]:
    """The options of the SDK's channels; with ``route_by_match``, the ring hash on
    ``x-match-id`` (see the module docstring; sets :data:`RING_HASH_ENV` if unset)."""
    if not route_by_match:
        return list(CHANNEL_OPTIONS)
    os.environ.setdefault(RING_HASH_ENV, "true")
    return [*CHANNEL_OPTIONS, ("grpc.service_config", json.dumps(RING_HASH_CONFIG))]


DEFAULT_RETRIES = 4
"""Attempts after the first for CreateMatch and JoinMatch (about 3 s of backoff in all)."""
RETRY_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,  # not sent, or the connection dropped before the answer
        grpc.StatusCode.DEADLINE_EXCEEDED,  # the answer did not come in time
        grpc.StatusCode.CANCELLED,  # the transport or the server gave up on the call
    }
)
"""The statuses after which a request may or may not have been applied: safe to send again
with the same request id, and only then."""

RATE_LIMITED_RETRIES = 20
"""Attempts after a refusal for rate (each after the server's RetryInfo delay)."""
DETAILS_KEY = "grpc-status-details-bin"

T = TypeVar("T")


def retry_delay(attempt: int) -> float:
    """Seconds before retry ``attempt`` (1-based): 0.1 s doubling to 2 s, jittered 50-150 %."""
    base: float = min(2.0, 0.1 * 2.0 ** (attempt - 1))
    return base * (0.5 + random.random())


def retry_info_delay(error: grpc.Call) -> float | None:
    """The delay a RESOURCE_EXHAUSTED answer's ``google.rpc.RetryInfo`` asks for (None when
    the error carries none: a limit that waiting alone does not lift)."""
    if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for key, value in error.trailing_metadata() or ():
        if key == DETAILS_KEY:
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return float(info.retry_delay.ToNanoseconds()) / 1e9
    return None


def _next_delay(error: grpc.Call, attempts: list[int], retries: int) -> float | None:
    """Seconds to wait before sending again, or None to give up (``attempts``: transient
    failures and rate refusals so far, updated)."""
    rate_delay = retry_info_delay(error)
    if rate_delay is not None:
        attempts[1] += 1
        return rate_delay * (1.0 + random.random()) if attempts[1] <= RATE_LIMITED_RETRIES else None
    attempts[0] += 1
    if error.code() not in RETRY_CODES or attempts[0] > retries:
        return None
    return retry_delay(attempts[0])


async def _retrying(call: Callable[[], Awaitable[T]], retries: int) -> T:
    attempts = [0, 0]
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as exc:
            delay = _next_delay(exc, attempts, retries)
            if delay is None:
                raise
        await asyncio.sleep(delay)


def _retrying_sync(call: Callable[[], T], retries: int) -> T:
    attempts = [0, 0]
    while True:
        try:
            return call()
        except grpc.RpcError as exc:
            delay = _next_delay(exc, attempts, retries) if isinstance(exc, grpc.Call) else None
            if delay is None:
                raise
        time.sleep(delay)


@dataclass(frozen=True, slots=True)
class Seat:
    """A seat taken in a match, with its secret token (keep it to yourself)."""

    match_id: str
    seat: int
    token: str

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata that identifies this seat."""
        return (("authorization", f"Bearer {self.token}"), (ROUTING_HEADER, self.match_id))


def new_request_id() -> str:
    """A fresh request id (random, so a retry with the same id is the only duplicate)."""
    return uuid.uuid4().hex


PresetDecks = Sequence[Sequence[str]] | Mapping[str, Sequence[Sequence[str]]]
"""Deck orders for CreateMatch: by deck name (each deck's orders in the order its deals
and reshuffles use them), or a plain list of orders of the game's first deck."""


def _deck_orders(presets: PresetDecks | None) -> list[common_pb2.DeckOrder]:
    if presets is None:
        return []
    if isinstance(presets, Mapping):
        return [
            common_pb2.DeckOrder(deck=name, cards=list(order))
            for name, orders in presets.items()
            for order in orders
        ]
    return [common_pb2.DeckOrder(cards=list(order)) for order in presets]


def _create_request(
    game: str,
    seats: int,
    options: Mapping[str, str] | None,
    move_clock_ms: int,
    preset_decks: PresetDecks | None,
    request_id: str | None,
) -> match_service_pb2.CreateMatchRequest:
    return match_service_pb2.CreateMatchRequest(
        game=game,
        seats=seats,
        options=dict(options or {}),
        move_clock_ms=move_clock_ms,
        preset_decks=_deck_orders(preset_decks),
        request_id=request_id or new_request_id(),
    )


def _join_request(
    match_id: str, seat: int | None, name: str, entropy: bytes, request_id: str | None
) -> match_service_pb2.JoinMatchRequest:
    request = match_service_pb2.JoinMatchRequest(
        match_id=match_id, name=name, entropy=entropy, request_id=request_id or new_request_id()
    )
    if seat is not None:
        request.seat = seat
    return request


def _submit_request(
    seat: Seat, action: common_pb2.Action, expected_version: int, request_id: str | None
) -> match_service_pb2.SubmitActionRequest:
    return match_service_pb2.SubmitActionRequest(
        match_id=seat.match_id,
        expected_version=expected_version,
        request_id=request_id or new_request_id(),
        action=action,
    )


class AsyncClient:
    """An asyncio client over one grpc.aio channel (``route_by_match``: see the module
    docstring)."""

    def __init__(
        self,
        target: str,
        channel: grpc.aio.Channel | None = None,
        *,
        route_by_match: bool = False,
    ) -> None:
        self.target = target
        self.channel = channel or grpc.aio.insecure_channel(
            target, options=channel_options(route_by_match)
        )
        self.stub = match_service_pb2_grpc.MatchServiceStub(self.channel)  # type: ignore[no-untyped-call]

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()

    async def list_games(self) -> list[match_service_pb2.GameInfo]:
        """Every game the server offers."""
        response = await self.stub.ListGames(match_service_pb2.ListGamesRequest())
        return list(response.games)

    async def create_match(
        self,
        game: str,
        seats: int,
        options: Mapping[str, str] | None = None,
        move_clock_ms: int = 0,
        preset_decks: PresetDecks | None = None,
        request_id: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        attempt_timeout: float | None = None,
    ) -> match_service_pb2.CreateMatchResponse:
        """A new match waiting for its seats. Retrying with the same ``request_id`` returns
        the same match (a fresh id is chosen when none is given); a lost answer is asked
        again with that id up to ``retries`` times (see the module docstring)."""
        request = _create_request(game, seats, options, move_clock_ms, preset_decks, request_id)

        async def attempt() -> match_service_pb2.CreateMatchResponse:
            response: match_service_pb2.CreateMatchResponse = await self.stub.CreateMatch(
                request, timeout=attempt_timeout
            )
            return response

        return await _retrying(attempt, retries)

    async def join(
        self,
        match_id: str,
        seat: int | None = None,
        name: str = "",
        entropy: bytes = b"",
        request_id: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        attempt_timeout: float | None = None,
    ) -> Seat:
        """Take a seat (the lowest free one unless ``seat`` is given). Retrying with the
        same ``request_id`` returns the same seat and token (keep the id secret); a lost
        answer is asked again with that id up to ``retries`` times (see the module
        docstring), so a seat taken is never left without its token."""
        request = _join_request(match_id, seat, name, entropy, request_id)

        async def attempt() -> Any:
            return await self.stub.JoinMatch(request, timeout=attempt_timeout)

        response = await _retrying(attempt, retries)
        return Seat(response.match_id, response.seat, response.token)

    async def get_match(self, match_id: str) -> match_service_pb2.MatchSummary:
        """Public facts about a match."""
        response: match_service_pb2.GetMatchResponse = await self.stub.GetMatch(
            match_service_pb2.GetMatchRequest(match_id=match_id)
        )
        return response.match

    async def get_view(self, seat: Seat) -> common_pb2.View:
        """The seat's current view."""
        response: match_service_pb2.GetViewResponse = await self.stub.GetView(
            match_service_pb2.GetViewRequest(match_id=seat.match_id), metadata=seat.metadata
        )
        return response.view

    async def submit(
        self,
        seat: Seat,
        action: common_pb2.Action,
        expected_version: int,
        request_id: str | None = None,
    ) -> match_service_pb2.SubmitActionResponse:
        """Play one action (unary). Retrying with the same request_id is always safe."""
        response: match_service_pb2.SubmitActionResponse = await self.stub.SubmitAction(
            _submit_request(seat, action, expected_version, request_id), metadata=seat.metadata
        )
        return response

    def play_stream(self, seat: Seat) -> Any:
        """Open the seat's bidirectional Play stream (send ``subscribe`` first)."""
        return self.stub.Play(metadata=seat.metadata)

    async def spectate(
        self, match_id: str, since_version: int = 0
    ) -> AsyncIterator[common_pb2.View]:
        """Public views, one per version, until the match ends."""
        call = self.stub.Spectate(
            match_service_pb2.SpectateRequest(match_id=match_id, since_version=since_version)
        )
        async for response in call:
            if response.HasField("view"):
                yield response.view

    async def record(self, match_id: str) -> common_pb2.MatchRecord:
        """The full record of a finished match (seed, every action, final hash)."""
        response: match_service_pb2.GetMatchRecordResponse = await self.stub.GetMatchRecord(
            match_service_pb2.GetMatchRecordRequest(match_id=match_id)
        )
        return response.record


class Client:
    """A blocking client over one grpc channel: the same calls as :class:`AsyncClient`."""

    def __init__(
        self, target: str, channel: grpc.Channel | None = None, *, route_by_match: bool = False
    ) -> None:
        self.target = target
        self.channel = channel or grpc.insecure_channel(
            target, options=channel_options(route_by_match)
        )
        self.stub = match_service_pb2_grpc.MatchServiceStub(self.channel)  # type: ignore[no-untyped-call]

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()

    def list_games(self) -> list[match_service_pb2.GameInfo]:
        """Every game the server offers."""
        return list(self.stub.ListGames(match_service_pb2.ListGamesRequest()).games)

    def create_match(
        self,
        game: str,
        seats: int,
        options: Mapping[str, str] | None = None,
        move_clock_ms: int = 0,
        preset_decks: PresetDecks | None = None,
        request_id: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        attempt_timeout: float | None = None,
    ) -> match_service_pb2.CreateMatchResponse:
        """A new match waiting for its seats (idempotent by ``request_id``; retried as in
        :meth:`AsyncClient.create_match`)."""
        request = _create_request(game, seats, options, move_clock_ms, preset_decks, request_id)
        response: match_service_pb2.CreateMatchResponse = _retrying_sync(
            lambda: self.stub.CreateMatch(request, timeout=attempt_timeout), retries
        )
        return response

    def join(
        self,
        match_id: str,
        seat: int | None = None,
        name: str = "",
        entropy: bytes = b"",
        request_id: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        attempt_timeout: float | None = None,
    ) -> Seat:
        """Take a seat (the lowest free one unless ``seat`` is given; idempotent by
        ``request_id``; retried as in :meth:`AsyncClient.join`)."""
        request = _join_request(match_id, seat, name, entropy, request_id)
        response = _retrying_sync(
            lambda: self.stub.JoinMatch(request, timeout=attempt_timeout), retries
        )
        return Seat(response.match_id, response.seat, response.token)

    def get_match(self, match_id: str) -> match_service_pb2.MatchSummary:
        """Public facts about a match."""
        response: match_service_pb2.GetMatchResponse = self.stub.GetMatch(
            match_service_pb2.GetMatchRequest(match_id=match_id)
        )
        return response.match

    def get_view(self, seat: Seat) -> common_pb2.View:
        """The seat's current view."""
        response: match_service_pb2.GetViewResponse = self.stub.GetView(
            match_service_pb2.GetViewRequest(match_id=seat.match_id), metadata=seat.metadata
        )
        return response.view

    def submit(
        self,
        seat: Seat,
        action: common_pb2.Action,
        expected_version: int,
        request_id: str | None = None,
    ) -> match_service_pb2.SubmitActionResponse:
        """Play one action. Retrying with the same request_id is always safe."""
        response: match_service_pb2.SubmitActionResponse = self.stub.SubmitAction(
            _submit_request(seat, action, expected_version, request_id), metadata=seat.metadata
        )
        return response

    def spectate(self, match_id: str, since_version: int = 0) -> Iterator[common_pb2.View]:
        """Public views, one per version, until the match ends."""
        for response in self.stub.Spectate(
            match_service_pb2.SpectateRequest(match_id=match_id, since_version=since_version)
        ):
            if response.HasField("view"):
                yield response.view

    def record(self, match_id: str) -> common_pb2.MatchRecord:
        """The full record of a finished match."""
        response: match_service_pb2.GetMatchRecordResponse = self.stub.GetMatchRecord(
            match_service_pb2.GetMatchRecordRequest(match_id=match_id)
        )
        return response.record
