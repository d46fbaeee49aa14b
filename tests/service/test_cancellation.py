"""C7: calls cancelled at every point of their path, over a real loopback server.

reliability.md, lesson "A client that gives up cancels the handler": grpc.aio cancels a
handler's task when the deadline passes or the stream drops, so every ``await`` of the
server is a place where the rest of the handler may never run. These tests give up on calls
everywhere they can:

* unary SubmitAction, CreateMatch and JoinMatch with deadlines of 0.1-5 ms (``timeout=``),
  and with ``call.cancel()`` right after sending (after a random 0-2 ms);
* Play streams dropped right after writing a submit (after a random 0-2 ms);
* all of it against a store that is slow on purpose (:class:`SlowStore`: every write waits a
  random 0-5 ms before and after the real write), so that the cancellation lands before,
  during and after the durable write, on a MemoryStore and on SQLite.

Then, for every match: it goes on and finishes (the SDK runner plays it out, or the clock
plays a silent seat); every acknowledged action is in the record exactly once, at its seq,
with its seat and action; seq is contiguous; the record replays and verifies; the store's
log equals the record; streams that stayed open saw every version; GetMatch agrees with
GetMatchRecord (status, version = actions + 1, outcome); every request id sent is asked
again (submit, join, create) and gets the stored answer (``duplicate``) or a refusal,
changing nothing; every taken seat belongs to a request id whose retry gives that seat and
the same token (no ghost seat); every stored match is known to the runtime and counted.

The counts of each kind of cancellation are printed (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from speeltafel.sdk.client import AsyncClient, Seat, new_request_id
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.engine.games import take5
from speeltafel.server.engine.verify import verify
from speeltafel.server.rpc.server import Running
from speeltafel.server.store.base import (
    ActionRow,
    AppendResult,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    MatchLog,
    MatchStore,
    SeatJoined,
)
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.wire.common import record_from_proto

GAME = take5.GAME
FINISHED = common_pb2.MATCH_STATUS_FINISHED
WAITING = common_pb2.MATCH_STATUS_WAITING
# Every client of these tests gets its own connection: the server's limits are per peer.
# Serial (run alone, after the parallel tests): deadlines of 0.1-5 ms and cancels after
# 0-2 ms meet a call where the machine's timing puts it, and the tests check that enough
# calls were given up; another test's load beside them left one at 59 of its 60.
pytestmark = pytest.mark.serial

OWN_CONNECTION = {"grpc.use_local_subchannel_pool": 1}
GIVE_UP = (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)
REFUSED = (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION)
PLAY_OUT_S = 45.0

TOTALS: Counter[str] = Counter()  # over the whole module, printed by the last test


# --------------------------------------------------------------------------- a slow store


class SlowStore:
    """A MatchStore that waits a random 0-``max_delay_s`` before and after every write.

    The cancellation of a caller then lands before the write starts, while it is under way
    (SQLite's writer thread has it) and after it is durable but before the caller resumes.
    """

    def __init__(self, inner: MatchStore, seed: int, max_delay_s: float = 0.005) -> None:
        self.inner = inner
        self.random = random.Random(seed)
        self.max_delay_s = max_delay_s
        self.writes: Counter[str] = Counter()

    async def _pause(self) -> None:
        roll = self.random.random()
        if roll < 0.2:
            return  # no await at all: the write and what follows it in one step
        await asyncio.sleep(0 if roll < 0.35 else self.random.uniform(0, self.max_delay_s))

    async def create(self, created: MatchCreated) -> MatchCreated:
        await self._pause()
        stored = await self.inner.create(created)
        self.writes["create"] += 1
        await self._pause()
        return stored

    async def join(self, joined: SeatJoined) -> AppendStatus:
        await self._pause()
        status = await self.inner.join(joined)
        self.writes["join"] += 1
        await self._pause()
        return status

    async def append(self, row: ActionRow) -> AppendResult:
        await self._pause()
        result = await self.inner.append(row)
        self.writes["append"] += 1
        await self._pause()
        return result

    async def finish(self, finished: MatchFinished) -> None:
        await self._pause()
        await self.inner.finish(finished)
        self.writes["finish"] += 1
        await self._pause()

    async def load(self, match_id: str) -> MatchLog | None:
        return await self.inner.load(match_id)

    async def unfinished(self) -> list[str]:
        return await self.inner.unfinished()

    async def finished_since(self, since_ms: int) -> list[str]:
        return await self.inner.finished_since(since_ms)

    async def close(self) -> None:
        await self.inner.close()

    @property
    def writable(self) -> bool:
        return self.inner.writable

    def add_health_listener(self, listener: Callable[[bool], None]) -> None:
        self.inner.add_health_listener(listener)


STORES = ["memory", "slow-memory", "slow-sqlite"]


async def start(table: Any, kind: str, seed: int, **config: Any) -> Running:
    """A server on the store ``kind`` names, with ``config`` for its runtime."""
    defaults: dict[str, Any] = {"abandon_after_periods": 0}
    defaults.update(config)
    store: MatchStore = table.sqlite_store() if kind.endswith("sqlite") else MemoryStore()
    if kind.startswith("slow"):
        store = SlowStore(store, seed)
    # Hundreds of calls given up, repeated and refused per seat are this test's point, not
    # the rates (test_fairness checks those): they are lifted, so that reconciling with
    # GetView afterwards is never rate limited.
    running: Running = await table.start(
        store, config=RuntimeConfig(**defaults), limits=table.LIFTED_RATES
    )
    return running


# --------------------------------------------------------------------------- what was sent


def action_text(action: common_pb2.Action) -> str:
    """The engine's canonical text of a Take 5 action, as the record holds it (take5.py:
    ``select:17``, ``row:2``), read from the message alone."""
    take5_action = action.take5
    if take5_action.WhichOneof("kind") == "select":
        return f"select:{take5_action.select.card}"
    return f"row:{take5_action.choose_row.row}"


@dataclass
class Handle:
    """A match and the seats a test holds (what ``table.state`` and ``play_out`` need)."""

    match_id: str
    seats: list[Seat]


@dataclass
class Sent:
    """One SubmitAction request id and what we know of its fate."""

    seat: Seat
    request: match_service_pb2.SubmitActionRequest
    how: str  # "deadline", "cancel", "stream", "plain", "runner"
    text: str
    ack: match_service_pb2.SubmitActionResponse | None = None
    refused: grpc.StatusCode | None = None


@dataclass
class Ledger:
    """Every submit request of a test, by (match, seat, request id)."""

    sent: dict[tuple[str, int, str], Sent] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, seat: Seat, request: match_service_pb2.SubmitActionRequest, how: str) -> Sent:
        key = (seat.match_id, seat.seat, request.request_id)
        assert key not in self.sent, key
        sent = Sent(seat, request, how, action_text(request.action))
        self.sent[key] = sent
        return sent

    def acked(self, sent: Sent, ack: match_service_pb2.SubmitActionResponse) -> None:
        if sent.ack is not None:
            # Asked again: the same answer, now as a duplicate.
            assert (ack.seq, ack.version) == (sent.ack.seq, sent.ack.version), (sent, ack)
            assert ack.duplicate, (sent, ack)
        else:
            sent.ack = ack
        self.counts["acks"] += 1

    def runner_ack(
        self,
        seat: Seat,
        request: match_service_pb2.SubmitActionRequest,
        ack: match_service_pb2.SubmitActionResponse,
    ) -> None:
        key = (seat.match_id, seat.seat, request.request_id)
        sent = self.sent.get(key) or self.add(seat, request, "runner")
        self.acked(sent, ack)

    def of(self, match_id: str) -> list[Sent]:
        return [s for (m, _, _), s in self.sent.items() if m == match_id]


def submit_request(
    seat: Seat, view: common_pb2.View, rng: random.Random
) -> match_service_pb2.SubmitActionRequest:
    return match_service_pb2.SubmitActionRequest(
        match_id=seat.match_id,
        expected_version=view.version,
        request_id=new_request_id(),
        action=rng.choice(list(view.legal_actions)),
    )


def must_act(view: common_pb2.View, seat: Seat) -> bool:
    return (
        view.status == common_pb2.MATCH_STATUS_RUNNING
        and seat.seat in view.to_act
        and len(view.legal_actions) > 0
    )


async def check_advanced(client: AsyncClient, seat: Seat, ack: Any) -> None:
    """An acknowledged action is applied in memory: the seat's view is at least its version."""
    view = await client.get_view(seat)
    assert view.version >= ack.version, (
        f"match {seat.match_id}: seat {seat.seat} got seq {ack.seq} acknowledged "
        f"(duplicate={ack.duplicate}) but its view is still at version {view.version}"
    )


# --------------------------------------------------------------------------- watchers


@dataclass
class Watch:
    """A stream kept open for the whole test: every version it saw."""

    label: str
    versions: list[int] = field(default_factory=list)
    final: common_pb2.View | None = None
    resyncs: int = 0
    task: asyncio.Task[None] | None = None


async def _watch_seat(client: AsyncClient, seat: Seat, watch: Watch) -> None:
    call = client.play_stream(seat)
    try:
        subscribe = match_service_pb2.Subscribe(match_id=seat.match_id)
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
        async for response in call:
            if response.WhichOneof("event") != "view":
                continue
            watch.resyncs += response.resync
            watch.versions.append(response.view.version)
            if response.view.status == FINISHED:
                watch.final = response.view
                return
    finally:
        call.cancel()


async def _watch_public(client: AsyncClient, match_id: str, watch: Watch) -> None:
    call = client.stub.Spectate(match_service_pb2.SpectateRequest(match_id=match_id))
    try:
        async for response in call:
            if response.WhichOneof("event") != "view":
                continue
            watch.resyncs += response.resync
            watch.versions.append(response.view.version)
            if response.view.status == FINISHED:
                watch.final = response.view
                return
    finally:
        call.cancel()


def watch_seat(client: AsyncClient, seat: Seat) -> Watch:
    watch = Watch(f"seat {seat.seat}")
    watch.task = asyncio.ensure_future(_watch_seat(client, seat, watch))
    return watch


def watch_public(client: AsyncClient, match_id: str) -> Watch:
    watch = Watch("spectator")
    watch.task = asyncio.ensure_future(_watch_public(client, match_id, watch))
    return watch


# --------------------------------------------------------------------------- the checks


async def finished_summary(
    client: AsyncClient, match_id: str, within_s: float = 10.0
) -> match_service_pb2.MatchSummary:
    """GetMatch once the match is FINISHED (fails the test when it never gets there)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + within_s
    while True:
        summary = await client.get_match(match_id)
        if summary.status == FINISHED:
            return summary
        assert loop.time() < until, f"match {match_id} never finished: {summary}"
        await asyncio.sleep(0.02)


async def reconcile(
    running: Running,
    table: Any,
    client: AsyncClient,
    match: Any,
    ledger: Ledger,
    watches: Sequence[Watch] = (),
) -> common_pb2.MatchRecord:
    """Every check of the module docstring for one finished match; returns its record."""
    match_id = match.match_id
    summary = await finished_summary(client, match_id)
    record = await client.record(match_id)
    story = f"match {match_id}"
    # GetMatch and GetMatchRecord agree; seq is contiguous; the record replays.
    ended_early = record.outcome.termination not in ("", "normal")  # a version of its own
    assert summary.version == len(record.actions) + 1 + ended_early, (story, summary.version)
    assert summary.outcome == record.outcome, story
    assert [a.seq for a in record.actions] == list(range(1, len(record.actions) + 1)), story
    assert verify(record_from_proto(record)) == [], (story, verify(record_from_proto(record)))
    # The store's log is the record: the live match and the log agree.
    log = await running.store.load(match_id)
    assert log is not None and log.finished is not None, story
    assert [(r.seq, r.seat, r.action, r.clock_default) for r in log.actions] == [
        (a.seq, a.seat, a.action, a.clock_default) for a in record.actions
    ], story
    # Streams that stayed open saw every version up to the last, no gap, no repeat.
    for watch in watches:
        assert watch.task is not None
        await asyncio.wait_for(watch.task, 10)
        assert watch.final is not None, (story, watch.label)
        assert watch.versions and watch.versions[-1] == summary.version, (story, watch)
        assert table.contiguous(watch.versions), (story, watch.label, watch.versions)
        assert watch.resyncs == 0, (story, watch.label)
    # Every request id sent is asked again: the stored answer, or a refusal; nothing moves.
    before = await table.state(match)
    applied: dict[int, Sent] = {}
    for sent in ledger.of(match_id):
        request = sent.request
        try:
            again = await patient(
                functools.partial(client.stub.SubmitAction, request, metadata=sent.seat.metadata),
                ledger.counts,
            )
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, (story, sent, err)
            assert sent.ack is None, f"{story}: seq {sent.ack} was acknowledged, now {err}"
            ledger.counts["retried, never applied"] += 1
            continue
        assert again.duplicate, f"{story}: {sent.text} applied by a retry after the end"
        if sent.ack is not None:
            assert (again.seq, again.version) == (sent.ack.seq, sent.ack.version), (story, sent)
            ledger.counts["acks checked"] += 1
        else:
            ledger.counts["applied though the client gave up"] += 1
        assert again.seq not in applied, (
            f"{story}: seq {again.seq} answered for two request ids: "
            f"{applied[again.seq].request.request_id} and {request.request_id}"
        )
        applied[again.seq] = sent
        row = record.actions[again.seq - 1]
        assert (row.seat, row.action, row.clock_default) == (sent.seat.seat, sent.text, False), (
            f"{story}: seq {again.seq} is {row} in the record, but request "
            f"{request.request_id} of seat {sent.seat.seat} ({sent.text}) was answered with it"
        )
    assert await table.state(match) == before, f"{story}: a retry changed the match"
    # Exactly once, the other way round: every action a seat played is one of our requests.
    played = {a.seq for a in record.actions if not a.clock_default}
    assert played == set(applied), (
        f"{story}: record seqs without a known request: {sorted(played - set(applied))}; "
        f"requests answered with seqs the record calls defaults: {sorted(set(applied) - played)}"
    )
    ledger.counts["matches checked"] += 1
    ledger.counts["record actions checked"] += len(record.actions)
    return record


# --------------------------------------------------------------------------- giving up


async def give_up_unary(
    call_factory: Callable[[float | None], Any],
    rng: random.Random,
    counts: Counter[str],
    kind: str,
) -> Any | None:
    """Make a unary call and give up on it: a 0.1-5 ms deadline, or ``call.cancel()`` after a
    random 0-2 ms. Returns the answer when it came anyway, None when we gave up; a refusal
    (ABORTED / FAILED_PRECONDITION) is raised."""
    if rng.random() < 0.5:
        try:
            return await call_factory(rng.uniform(0.0001, 0.005))
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
            counts[f"{kind} deadline"] += 1
            return None
    call = call_factory(None)
    await asyncio.sleep(rng.choice([0.0, rng.uniform(0, 0.002)]))
    call.cancel()
    try:
        return await call
    except asyncio.CancelledError:
        counts[f"{kind} cancel"] += 1
        return None
    except grpc.aio.AioRpcError as err:
        if err.code() != grpc.StatusCode.CANCELLED:
            raise
        counts[f"{kind} cancel"] += 1
        return None


async def rate_pause(err: grpc.aio.AioRpcError, counts: Counter[str]) -> bool:
    """True (after a pause) when the server's fairness limits said "slow down"."""
    if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return False
    counts["rate limited"] += 1
    await asyncio.sleep(0.05)
    return True


async def patient(make_call: Callable[[], Any], counts: Counter[str]) -> Any:
    """A call that waits for its answer, repeated (same request) while rate limited."""
    while True:
        try:
            return await make_call()
        except grpc.aio.AioRpcError as err:
            if not await rate_pause(err, counts):
                raise


async def unary_chaos(
    client: AsyncClient, seat: Seat, ledger: Ledger, rng: random.Random, attempts: int
) -> None:
    """SubmitAction given up on, again and again; now and then asked again at once."""
    stub = client.stub
    for _ in range(attempts):
        view = await client.get_view(seat)
        if view.status == FINISHED:
            return
        if not must_act(view, seat):
            await asyncio.sleep(0.003)
            continue
        request = submit_request(seat, view, rng)
        sent = ledger.add(seat, request, "unary")

        def call(timeout: float | None, request: Any = request) -> Any:
            return stub.SubmitAction(request, metadata=seat.metadata, timeout=timeout)

        try:
            ack = await give_up_unary(call, rng, ledger.counts, "submit")
            if ack is None and rng.random() < 0.3:
                ack = await patient(lambda: call(None), ledger.counts)  # the same id again
                ledger.counts["submit retried at once"] += 1
            if ack is not None:
                ledger.acked(sent, ack)
                await check_advanced(client, seat, ack)
        except grpc.aio.AioRpcError as err:
            if await rate_pause(err, ledger.counts):
                continue
            assert err.code() in REFUSED, (seat, sent.text, err)
            sent.refused = err.code()
        await asyncio.sleep(rng.uniform(0, 0.003))


async def stream_chaos(
    client: AsyncClient, seat: Seat, ledger: Ledger, rng: random.Random, attempts: int
) -> None:
    """Play streams that write a submit and are dropped a moment later."""
    for _ in range(attempts):
        call = client.play_stream(seat)
        try:
            subscribe = match_service_pb2.Subscribe(match_id=seat.match_id)
            await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
            sent: Sent | None = None
            async for response in call:
                kind = response.WhichOneof("event")
                if kind == "view" and response.view.status == FINISHED:
                    return
                if kind == "view" and sent is None and must_act(response.view, seat):
                    request = submit_request(seat, response.view, rng)
                    sent = ledger.add(seat, request, "stream")
                    await call.write(match_service_pb2.PlayRequest(submit=request))
                    if rng.random() < 0.85:
                        await asyncio.sleep(rng.choice([0.0, rng.uniform(0, 0.002)]))
                        call.cancel()
                        ledger.counts["stream dropped after a submit"] += 1
                        break
                if kind == "result" and sent is not None:
                    result = response.result
                    if result.request_id != sent.request.request_id:
                        continue
                    if result.WhichOneof("result") == "accepted":
                        ledger.acked(sent, result.accepted)
                        await check_advanced(client, seat, result.accepted)
                    else:
                        sent.refused = grpc.StatusCode.ABORTED
                    call.cancel()
                    break
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.CANCELLED:
                continue
            if not await rate_pause(err, ledger.counts):
                raise
        finally:
            call.cancel()
        await asyncio.sleep(rng.uniform(0, 0.004))


async def play_rest(
    table: Any,
    client: AsyncClient,
    match: Any,
    ledger: Ledger,
    seed: int,
    silent: Sequence[int] = (),
) -> None:
    """The SDK runner plays every seat but the silent ones (the clock plays those)."""
    seats = [s for s in match.seats if s.seat not in silent]
    await asyncio.wait_for(
        table.play_out(
            match,
            seats=seats,
            seed=seed,
            client=client,
            on_ack=lambda s, req, ack: ledger.runner_ack(match.seats[s], req, ack),
        ),
        PLAY_OUT_S,
    )


def report(name: str, counts: Counter[str], extra: Counter[str] | None = None) -> None:
    TOTALS.update(counts)
    if extra:
        TOTALS.update(extra)
    print(f"\n{name}: {dict(sorted(counts.items()))} {dict(extra or {})}")


# --------------------------------------------------------------------------- SubmitAction


@pytest.mark.parametrize("kind", STORES)
async def test_c7_submit_given_up_by_deadline_and_cancel(table: Any, kind: str) -> None:
    """Unary submits with tiny deadlines or cancelled after sending; then the match goes on.

    Matches run a few at a time, so that a call's round trip on the shared event loop stays
    near the deadlines and the giving up lands all along the path.
    """
    seed = STORES.index(kind)
    running = await start(table, kind, seed)
    rng = random.Random(seed)
    ledger = Ledger()
    gate = asyncio.Semaphore(2)

    async def one(m: int) -> None:
        async with gate:
            client = table.connect(**OWN_CONNECTION)
            match = await table.create(client=client, options={"deals": "2"}, move_clock_ms=50)
            watches = [watch_public(client, match.match_id)]
            watches += [watch_seat(client, seat) for seat in match.seats]
            chaos = [random.Random(rng.random()) for _ in match.seats]
            await asyncio.gather(
                *(
                    unary_chaos(client, s, ledger, r, 40)
                    for s, r in zip(match.seats, chaos, strict=True)
                )
            )
            # The match goes on: the runner plays it out; in every third match seat 1 goes
            # silent and its clock plays for it.
            silent = m % 3 == 0
            then = await client.get_match(match.match_id)
            await play_rest(table, client, match, ledger, m, silent=[1] if silent else [])
            record = await reconcile(running, table, client, match, ledger, watches)
            if silent and then.status != FINISHED:
                # A request given up on a moment ago may still land; after that, the clock.
                later = [a for a in record.actions if a.seat == 1 and a.seq > then.version + 2]
                assert all(a.clock_default for a in later), (match.match_id, then, later)
                ledger.counts["clock defaults of silent seats"] += len(later)

    await asyncio.gather(*(one(m) for m in range(10)))
    assert running.runtime.running_matches == 0 and running.runtime.waiting_matches == 0
    given_up = ledger.counts["submit deadline"] + ledger.counts["submit cancel"]
    assert given_up >= 150, ledger.counts
    # The silent seats' clocks played them to the end (a match near its end when its seat
    # fell silent may have had nothing left for it).
    assert ledger.counts["clock defaults of silent seats"] >= 5, ledger.counts
    report(f"submit/{kind}", ledger.counts)


# --------------------------------------------------------------------------- Play streams


@pytest.mark.parametrize("kind", ["memory", "slow-sqlite"])
async def test_c7_play_stream_dropped_after_a_submit(table: Any, kind: str) -> None:
    """Streams cut a moment after a submit; views and clocks go on for the rest."""
    seed = 10 + STORES.index(kind)
    running = await start(table, kind, seed)
    rng = random.Random(seed)
    ledger = Ledger()
    gate = asyncio.Semaphore(3)

    async def one(m: int) -> None:
        async with gate:
            client = table.connect(**OWN_CONNECTION)
            match = await table.create(client=client, options={"deals": "2"}, move_clock_ms=50)
            watches = [watch_public(client, match.match_id), watch_seat(client, match.seats[0])]
            chaos = [random.Random(rng.random()) for _ in match.seats]
            await asyncio.gather(
                *(
                    stream_chaos(client, s, ledger, r, 25)
                    for s, r in zip(match.seats, chaos, strict=True)
                )
            )
            await play_rest(table, client, match, ledger, m, silent=[0] if m % 2 else [])
            await reconcile(running, table, client, match, ledger, watches)

    await asyncio.gather(*(one(m) for m in range(6)))
    assert running.runtime.running_matches == 0
    assert ledger.counts["stream dropped after a submit"] >= 100, ledger.counts
    report(f"stream/{kind}", ledger.counts)


# --------------------------------------------------------------------------- CreateMatch


def create_request(request_id: str) -> match_service_pb2.CreateMatchRequest:
    return match_service_pb2.CreateMatchRequest(
        game="take5", seats=2, options={"deals": "1"}, move_clock_ms=50, request_id=request_id
    )


JOIN_TIMEOUT_S = 8.0


@pytest.mark.parametrize("kind", ["slow-memory", "slow-sqlite"])
async def test_c7_create_match_given_up(table: Any, kind: str) -> None:
    """CreateMatch given up on: a retry gets the match it made, and nothing is a ghost."""
    seed = 20 + STORES.index(kind)
    # Long enough for the creations and their checks on a loaded machine (a match that
    # expired mid-check was once taken for a miscount), short enough to wait for at the end.
    running = await start(table, kind, seed, join_timeout_s=JOIN_TIMEOUT_S)
    runtime = running.runtime
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    # CreateMatch costs the most of the server's per-connection rate: spread the request ids
    # over a few connections (each id keeps its own).
    stubs = [table.connect(**OWN_CONNECTION).stub for _ in range(12)]
    client = table.connect(**OWN_CONNECTION)
    first: dict[str, str | None] = {}  # request id -> match id answered (if any)
    stub_of: dict[str, Any] = {}
    for n in range(60):
        request_id = new_request_id()
        stub = stub_of[request_id] = stubs[n % len(stubs)]

        def call(timeout: float | None, rid: str = request_id, stub: Any = stub) -> Any:
            return stub.CreateMatch(create_request(rid), timeout=timeout)

        while True:
            try:
                answer = await give_up_unary(call, rng, counts, "create")
                counts["create answered at once"] += answer is not None
                break
            except grpc.aio.AioRpcError as err:
                if not await rate_pause(err, counts):
                    raise
        if answer is None and rng.random() < 0.3:
            # Asked again at once: the first may still be on its way through the runtime.
            answer = await patient(functools.partial(call, None), counts)
            counts["create retried at once"] += 1
            counts["create made by a retry at once"] += not answer.duplicate
        first[request_id] = None if answer is None else answer.match_id
    # Half of the request ids given up on are asked again (twice): the same match, now a
    # duplicate, counted once.
    retried: dict[str, str] = {}
    for request_id, match_id in first.items():
        if match_id is not None or rng.random() < 0.5:
            request = create_request(request_id)
            stub = stub_of[request_id]
            again = await patient(functools.partial(stub.CreateMatch, request), counts)
            if match_id is not None:
                assert again.match_id == match_id and again.duplicate, (request_id, again)
            # The waiting count is unchanged by a duplicate. A match expiring meanwhile
            # lowers it: a count that moved is asked again, as a duplicate that counted
            # would move it every time.
            for _ in range(3):
                waiting = runtime.waiting_matches
                third = await patient(functools.partial(stub.CreateMatch, request), counts)
                assert third.match_id == again.match_id and third.duplicate, (request_id, third)
                assert third.commitment == again.commitment
                if runtime.waiting_matches == waiting:
                    break
            else:
                raise AssertionError("a duplicate CreateMatch counted")
            retried[request_id] = again.match_id
            counts["create retried"] += 1
    assert len(set(retried.values())) == len(retried), "two request ids, one match"
    # The log and the runtime agree: every stored match is live and counted as waiting.
    # Matches expiring meanwhile are finished in the store a moment before in memory, so
    # the two are compared until they agree (within a second).
    loop = asyncio.get_running_loop()
    until = loop.time() + 1.0
    while True:
        stored = set(await running.store.unfinished())
        ghosts = stored - set(runtime.matches)
        assert not ghosts, f"matches only the store knows: {ghosts}"
        if runtime.waiting_matches == len(stored) or loop.time() > until:
            break
        await asyncio.sleep(0.01)
    assert runtime.waiting_matches == len(stored), (runtime.waiting_matches, len(stored))
    assert set(retried.values()) <= stored
    counts["matches made though the client gave up"] = (
        len(stored) - counts["create answered at once"] - counts["create made by a retry at once"]
    )
    # Six retried matches are joined and played out; the rest expire, ghosts included.
    ledger = Ledger()
    played = []
    for match_id in list(retried.values())[:6]:
        seats = [await client.join(match_id, seat=s, name=f"s{s}") for s in range(2)]
        played.append(Handle(match_id, seats))
    await asyncio.gather(*(play_rest(table, client, m, ledger, i) for i, m in enumerate(played)))
    for match in played:
        await reconcile(running, table, client, match, ledger)
    until = loop.time() + JOIN_TIMEOUT_S + 10
    while runtime.waiting_matches and loop.time() < until:  # noqa: ASYNC110 (no event to wait on)
        await asyncio.sleep(0.05)
    assert runtime.waiting_matches == 0 and runtime.running_matches == 0
    assert await running.store.unfinished() == []
    for match_id in stored - {m.match_id for m in played}:
        summary = await client.get_match(match_id)
        assert summary.status == FINISHED and summary.outcome.termination == "expired"
    report(f"create/{kind}", counts, ledger.counts)


# --------------------------------------------------------------------------- JoinMatch


@dataclass
class JoinTry:
    """One JoinMatch request id and its answers."""

    request: match_service_pb2.JoinMatchRequest
    answers: list[match_service_pb2.JoinMatchResponse] = field(default_factory=list)


async def agree_on_seats(running: Running, client: AsyncClient, match_id: str) -> None:
    """GetMatch (the live match) names the seats the store's log has, within a second."""
    loop = asyncio.get_running_loop()
    until = loop.time() + 1.0
    while True:
        log = await running.store.load(match_id)
        summary = await client.get_match(match_id)
        assert log is not None
        stored = {joined.seat: joined.name for joined in log.seats}
        live = {seat: name for seat, name in enumerate(summary.seat_names) if name}
        if stored == live:
            return
        assert loop.time() < until, (
            f"match {match_id}: the log seats {stored}, the live match {live} (ghost seats: "
            f"{sorted(set(stored) - set(live))})"
        )
        await asyncio.sleep(0.02)


GIVEN_UP = 60
"""JoinMatch calls the join test must have given up on (by deadline or cancel)."""


@pytest.mark.parametrize("kind", ["slow-memory", "slow-sqlite"])
async def test_c7_join_match_given_up(table: Any, kind: str) -> None:
    """JoinMatch given up on: no ghost seat; a retry gets the same seat and the same token."""
    seed = 30 + STORES.index(kind)
    running = await start(table, kind, seed)
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    ledger = Ledger()
    matches = []

    def given_up() -> int:
        return counts["join deadline"] + counts["join cancel"]

    # 24 matches at least, and more (up to 72) until the joins given up on reach GIVEN_UP:
    # on a quick host more of them are answered before the client gives up.
    for m in itertools.count():
        if m >= 24 and (given_up() >= GIVEN_UP or m >= 72):
            break
        client = table.connect(**OWN_CONNECTION)  # one per match: the server's rates
        stub = client.stub
        created = await client.create_match("take5", 3, {"deals": "1"}, move_clock_ms=50)
        tries: list[JoinTry] = []
        explicit = m % 2 == 0  # half name their seat, half take the lowest free one
        for s in range(3):
            for letter in "ab":
                request = match_service_pb2.JoinMatchRequest(
                    match_id=created.match_id,
                    name=f"m{m}-s{s}-{letter}",
                    request_id=new_request_id(),
                )
                if explicit:
                    request.seat = s
                join = JoinTry(request)
                tries.append(join)

                def call(timeout: float | None, request: Any = request, stub: Any = stub) -> Any:
                    return stub.JoinMatch(request, timeout=timeout)

                try:
                    answer = await give_up_unary(call, rng, counts, "join")
                except grpc.aio.AioRpcError as err:
                    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err
                    continue
                if answer is not None:
                    join.answers.append(answer)
                    break  # the seat is ours
                if rng.random() < 0.5:
                    # Asked again with the same request id: the seat, if it was taken.
                    try:
                        join.answers.append(await patient(functools.partial(call, None), counts))
                        counts["join retried at once"] += 1
                        break
                    except grpc.aio.AioRpcError as err:
                        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err
                # else: a new request id ("b") tries next.
        matches.append((created, tries, client))
    # The log and the live match agree on who sits where (a call given up on a moment ago
    # may still be finishing: give it a moment), before anyone asks again.
    for created, _, client in matches:
        await agree_on_seats(running, client, created.match_id)
    # Every request id is asked again: a taken seat always answers with the same seat and
    # token; a seat nobody recovers would be a ghost.
    handles = []
    for created, tries, client in matches:
        stub = client.stub
        holders: dict[int, JoinTry] = {}
        for join in tries:
            try:
                again = await patient(functools.partial(stub.JoinMatch, join.request), counts)
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err
                assert not join.answers, (created.match_id, join, err)
                counts["join retried, never took a seat"] += 1
                continue
            if not join.answers:
                counts["seats taken though the client gave up"] += int(again.duplicate)
            for earlier in join.answers:
                assert (earlier.seat, earlier.token) == (again.seat, again.token), (join, again)
                assert again.duplicate
            if not again.duplicate:
                counts["seats taken by the late retry"] += 1
            join.answers.append(again)
            assert again.seat not in holders, (created.match_id, again.seat)
            holders[again.seat] = join
        summary = await client.get_match(created.match_id)
        names = list(summary.seat_names)
        for seat, name in enumerate(names):
            if name:
                assert seat in holders, f"match {created.match_id}: ghost seat {seat} ({name})"
                assert holders[seat].request.name == name
        # Fill what is left (no cancelling), then play the match out.
        for seat in range(3):
            if seat not in holders:
                joined = await client.join(created.match_id, seat=seat, name=f"late-{seat}")
                holders[seat] = JoinTry(
                    match_service_pb2.JoinMatchRequest(),
                    [match_service_pb2.JoinMatchResponse(seat=seat, token=joined.token)],
                )
        match = Handle(
            created.match_id,
            [Seat(created.match_id, s, holders[s].answers[-1].token) for s in range(3)],
        )
        for held in match.seats:  # every token held is a live seat token
            assert (await client.get_view(held)).status != WAITING
        handles.append((match, client))
    await asyncio.gather(*(play_rest(table, c, h, ledger, i) for i, (h, c) in enumerate(handles)))
    for match, client in handles:
        await reconcile(running, table, client, match, ledger)
    assert given_up() >= GIVEN_UP, counts
    report(f"join/{kind}", counts, ledger.counts)


def test_zz_totals() -> None:
    """Prints the counts over the module (run with -s)."""
    print(f"\nC7 totals: {dict(sorted(TOTALS.items()))}")
