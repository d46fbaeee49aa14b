"""Fixtures of the service tests: real grpc.aio servers on 127.0.0.1 port 0, and helpers.

Every test talks to a real server over a real channel. The ``table`` fixture owns the
servers and clients a test starts and closes them afterwards; ``server`` and ``client``
are the common case (one server on a MemoryStore, one AsyncClient).

Helpers live on :class:`Table` (test modules reach them through the fixture, so nothing
depends on how pytest names conftest modules):

* ``table.create(...)``: create a Take 5 match and (by default) join every seat;
* ``table.state(match)``: GetMatch and every seat's GetView as bytes, for "state
  unchanged" checks (the one field that changes with the wall clock, ``remaining_ms``,
  is zeroed);
* ``fails(awaitable, code, rule)``: await an RPC that must fail with that status and
  ErrorInfo reason; ``error_info(err)`` reads the google.rpc.ErrorInfo of an error;
* ``trial_deck(hands, rows)``: a preset deck order for exact positions.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import AsyncClient, Seat, new_request_id
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.rpc.limits import LimitsConfig
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.base import MatchStore
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore

SERVICE = "/speeltafel.v1.MatchService/"
# The server's limits with its rates lifted: for tests whose point is many calls in quick
# succession, not the rates themselves (test_fairness checks those).
LIFTED_RATES = LimitsConfig(
    unary_rate_per_peer=1e9,
    unary_burst_per_peer=1e9,
    unary_rate_per_token=1e9,
    unary_burst_per_token=1e9,
    refusal_cost=0.0,
)
DETAILS_KEY = "grpc-status-details-bin"
TRIAL_HAND_SIZES = {2: 12, 3: 9, 4: 7}
TRIAL_CARDS = 32
TRIAL_ROWS = 3


# --------------------------------------------------------------------------- plain helpers


def select(card: int) -> common_pb2.Action:
    """A Take 5 card selection."""
    action = common_pb2.Action()
    action.take5.select.card = card
    return action


def row(number: int) -> common_pb2.Action:
    """A Take 5 row choice (rows numbered from 1)."""
    action = common_pb2.Action()
    action.take5.choose_row.row = number
    return action


def trial_deck(
    hands: Sequence[Sequence[int]], rows: Sequence[int], unused: Sequence[int] | None = None
) -> list[str]:
    """A trial-edition deck order: seat 0's hand, seat 1's, ..., one card per row, the rest."""
    size = TRIAL_HAND_SIZES[len(hands)]
    assert all(len(hand) == size for hand in hands), "wrong hand size"
    assert len(rows) == TRIAL_ROWS
    order = [card for hand in hands for card in hand] + list(rows)
    rest = [c for c in range(1, TRIAL_CARDS + 1) if c not in order]
    order += rest if unused is None else list(unused)
    assert sorted(order) == list(range(1, TRIAL_CARDS + 1)), "not an order of 1..32"
    return [str(card) for card in order]


# Seat 0 holds 1..12 and seat 1 holds 13..24; the rows start with 25, 26, 27. Both seats'
# first cards are below every row, so the first turn always ends in seat 0's row choice.
STANDARD_DECK = trial_deck([range(1, 13), range(13, 25)], [25, 26, 27])


def error_info(err: grpc.aio.AioRpcError | grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The google.rpc.ErrorInfo detail of a failed call (None when there is none)."""
    for key, value in err.trailing_metadata() or ():
        if key == DETAILS_KEY:
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return info
    return None


def rule_of(err: grpc.aio.AioRpcError) -> str:
    """The rule id (ErrorInfo reason) of a failed call; "" when it carries none."""
    info = error_info(err)
    return "" if info is None else info.reason


def status_details(err: grpc.aio.AioRpcError) -> bytes:
    """The raw rich-status trailer of a failed call (b"" when absent)."""
    for key, value in err.trailing_metadata() or ():
        if key == DETAILS_KEY:
            return bytes(value)
    return b""


async def fails(
    awaitable: Awaitable[Any], code: grpc.StatusCode, rule: str | None = None
) -> grpc.aio.AioRpcError:
    """Await an RPC that must fail with ``code`` (and ErrorInfo reason ``rule``)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await awaitable
    err = caught.value
    assert err.code() == code, (err.code(), err.details(), rule_of(err))
    if rule is not None:
        assert rule_of(err) == rule, (err.code(), err.details(), rule_of(err))
        info = error_info(err)
        assert info is not None and info.domain == "speeltafel.v1"
    return err


def normalized(view: common_pb2.View) -> common_pb2.View:
    """A copy without the one field that moves with the wall clock."""
    copy = common_pb2.View()
    copy.CopyFrom(view)
    copy.clock.remaining_ms = 0
    return copy


def contiguous(versions: Sequence[int]) -> bool:
    """Every version exactly one above the one before: no gap and no duplicate."""
    return all(b == a + 1 for a, b in itertools.pairwise(versions))


@dataclass
class MatchHandle:
    """A created match and the seats the test took."""

    match_id: str
    created: match_service_pb2.CreateMatchResponse
    seats: list[Seat] = field(default_factory=list)
    joined: list[match_service_pb2.JoinMatchResponse] = field(default_factory=list)

    @property
    def commitment(self) -> str:
        """The published commitment to the match's secret seed."""
        return self.created.commitment


# --------------------------------------------------------------------------- the table


class Table:
    """Servers and clients of one test, with shortcuts for the common calls."""

    select = staticmethod(select)
    row = staticmethod(row)
    trial_deck = staticmethod(trial_deck)
    error_info = staticmethod(error_info)
    rule_of = staticmethod(rule_of)
    status_details = staticmethod(status_details)
    fails = staticmethod(fails)
    normalized = staticmethod(normalized)
    contiguous = staticmethod(contiguous)
    STANDARD_DECK = STANDARD_DECK
    LIFTED_RATES = LIFTED_RATES

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self._running: Running | None = None
        self._client: AsyncClient | None = None
        self._servers: list[Running] = []
        self._stopped: set[int] = set()
        self._clients: list[AsyncClient] = []
        self._channels: list[grpc.aio.Channel] = []

    # ------------------------------------------------------------------ servers

    @property
    def running(self) -> Running:
        """The server started last."""
        assert self._running is not None, "no server started"
        return self._running

    @property
    def client(self) -> AsyncClient:
        """A client of the server started last."""
        assert self._client is not None, "no server started"
        return self._client

    @property
    def target(self) -> str:
        """host:port of the server started last."""
        return f"127.0.0.1:{self.running.port}"

    @property
    def db_path(self) -> Path:
        """The SQLite file of :meth:`sqlite_store`."""
        return self.tmp_path / "speeltafel.db"

    def sqlite_store(self) -> SqliteStore:
        """A SqliteStore on this test's file (the same file every time: for restarts)."""
        return SqliteStore(self.db_path)

    async def start(
        self,
        store: MatchStore | None = None,
        *,
        port: int = 0,
        config: RuntimeConfig | None = None,
        limits: LimitsConfig | None = None,
    ) -> Running:
        """Start a server (MemoryStore unless given) and a client of it. ``limits`` defaults
        to the server's own (``LIFTED_RATES`` lifts the rates for tests that hammer it on
        purpose: races, thousands of calls in a row)."""
        running = await start_server(
            store if store is not None else MemoryStore(),
            port=port,
            config=config or RuntimeConfig(),
            limits=limits,
        )
        self._servers.append(running)
        self._running = running
        self._client = self.connect()
        return running

    async def stop(self, running: Running | None = None, grace: float = 0.2) -> None:
        """Stop a server (the current one by default); its calls are cancelled after grace."""
        running = running or self.running
        if id(running) in self._stopped:
            return
        self._stopped.add(id(running))
        await running.stop(grace)

    def connect(self, **options: Any) -> AsyncClient:
        """Another client of the current server (channel options as keyword arguments)."""
        channel = None
        if options:
            channel = grpc.aio.insecure_channel(self.target, options=list(options.items()))
        client = AsyncClient(self.target, channel=channel)
        self._clients.append(client)
        return client

    def raw_channel(self) -> grpc.aio.Channel:
        """A channel for calls with raw bytes (serializers left out)."""
        channel = grpc.aio.insecure_channel(self.target)
        self._channels.append(channel)
        return channel

    async def close(self) -> None:
        """Close every client and stop every server this test started."""
        for client in self._clients:
            await client.close()
        for channel in self._channels:
            await channel.close()
        for running in reversed(self._servers):
            await self.stop(running, grace=0.1)

    # ------------------------------------------------------------------ matches

    async def create(
        self,
        seats: int = 2,
        *,
        options: Mapping[str, str] | None = None,
        deck: Sequence[str] | None = None,
        decks: Sequence[Sequence[str]] | None = None,
        move_clock_ms: int = 0,
        join: int | None = None,
        entropy: Sequence[bytes] = (),
        client: AsyncClient | None = None,
    ) -> MatchHandle:
        """A Take 5 match with ``join`` seats taken (default: all, so it has started)."""
        client = client or self.client
        presets = list(decks or ()) or ([list(deck)] if deck is not None else None)
        created = await client.create_match(
            "take5", seats, options=options, move_clock_ms=move_clock_ms, preset_decks=presets
        )
        match = MatchHandle(created.match_id, created)
        for s in range(seats if join is None else join):
            request = match_service_pb2.JoinMatchRequest(
                match_id=created.match_id,
                seat=s,
                name=f"seat-{s}",
                entropy=entropy[s] if s < len(entropy) else b"",
            )
            response = await client.stub.JoinMatch(request)
            match.joined.append(response)
            match.seats.append(Seat(response.match_id, response.seat, response.token))
        return match

    async def view(self, seat: Seat, client: AsyncClient | None = None) -> common_pb2.View:
        """GetView for a seat."""
        return await (client or self.client).get_view(seat)

    async def submit(
        self,
        seat: Seat,
        action: common_pb2.Action,
        version: int | None = None,
        request_id: str | None = None,
        client: AsyncClient | None = None,
    ) -> match_service_pb2.SubmitActionResponse:
        """SubmitAction; the expected version defaults to the seat's current view."""
        client = client or self.client
        if version is None:
            version = (await client.get_view(seat)).version
        return await client.submit(seat, action, version, request_id or new_request_id())

    async def state(
        self, match: MatchHandle, clocks: bool = True
    ) -> tuple[bytes, tuple[bytes, ...]]:
        """GetMatch and every seat's GetView, serialized: equal values mean nothing changed.

        ``clocks=False`` leaves the clocks out (a restart gives every seat a fresh move clock).
        """
        summary = await self.client.get_match(match.match_id)
        views = []
        for seat in match.seats:
            view = normalized(await self.client.get_view(seat))
            if not clocks:
                view.ClearField("clock")
            views.append(view.SerializeToString(deterministic=True))
        return summary.SerializeToString(deterministic=True), tuple(views)

    async def play_out(
        self,
        match: MatchHandle,
        *,
        seats: Sequence[Seat] | None = None,
        seed: int = 0,
        on_view: Callable[[int, common_pb2.View], None] | None = None,
        on_ack: Callable[
            [int, match_service_pb2.SubmitActionRequest, match_service_pb2.SubmitActionResponse],
            None,
        ]
        | None = None,
        client: AsyncClient | None = None,
        stats: Sequence[RunStats] | None = None,
        bots: Sequence[Any] | None = None,
    ) -> list[common_pb2.View]:
        """Play every seat (or the given ones) with bots (random ones by default) to the end.

        Returns each seat's final view.
        """
        client = client or self.client
        chosen = list(seats if seats is not None else match.seats)
        players = (
            list(bots)
            if bots is not None
            else [RandomBot(seed * 100 + seat.seat) for seat in chosen]
        )

        def viewer(s: int) -> Callable[[common_pb2.View], None] | None:
            return None if on_view is None else (lambda v: on_view(s, v))

        def acker(s: int) -> Any:
            return None if on_ack is None else (lambda req, ack: on_ack(s, req, ack))

        runs = [
            play_seat(
                client,
                seat,
                players[i],
                on_view=viewer(seat.seat),
                on_ack=acker(seat.seat),
                stats=None if stats is None else stats[i],
                # A test that watches the views sees every version, not only the ones a
                # bot needs (the runner's default).
                every_view=on_view is not None,
            )
            for i, seat in enumerate(chosen)
        ]
        return list(await asyncio.gather(*runs))


@pytest.fixture
async def table(tmp_path: Path) -> AsyncIterator[Table]:
    """Servers and clients of one test; all closed afterwards."""
    t = Table(tmp_path)
    try:
        yield t
    finally:
        await t.close()


@pytest.fixture
async def server(table: Table, request: pytest.FixtureRequest) -> Running:
    """A server on a MemoryStore (its rates lifted for a test marked ``lifted_rates``)."""
    lifted = request.node.get_closest_marker("lifted_rates") is not None
    return await table.start(limits=LIFTED_RATES if lifted else None)


@pytest.fixture
async def client(table: Table, server: Running) -> AsyncClient:
    """An AsyncClient of ``server``."""
    return table.client
