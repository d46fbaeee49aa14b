"""A cancelled call never desynchronises a match (reliability.md, C7).

grpc.aio cancels a handler's task when its client gives up. These tests drive the runtime
directly over a store whose writes can be held at a gate, and cancel the caller before,
during and after the write, many times across seeds: afterwards the log and the live match
agree, views keep coming, clocks keep firing, a retry with the same request id gets the
stored answer, and the match finishes with its finished row stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from speeltafel.server.app.errors import StaleVersion
from speeltafel.server.app.match import Match, Outbox
from speeltafel.server.app.runtime import Ack, MatchRuntime, RuntimeConfig
from speeltafel.server.engine.verify import RecordedMatch, verify
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
from speeltafel.server.store.sqlite import SqliteStore

T = TypeVar("T")
OPTIONS = {"deals": "1"}


class StoreDown(OSError):
    """What the flaky store raises while it is "down"."""


class GatedStore:
    """A MatchStore around another one; one write can be held before or after it happens,
    and any write can be made to fail."""

    def __init__(self, inner: MatchStore) -> None:
        self.inner = inner
        self.pause: tuple[str, str] | None = None  # (operation, "before" | "after")
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.failing: set[str] = set()
        self.calls: dict[str, int] = {}

    def hold(self, operation: str, where: str) -> None:
        self.pause = (operation, where)
        self.entered.clear()
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    async def _write(self, name: str, call: Callable[[], Awaitable[T]]) -> T:
        self.calls[name] = self.calls.get(name, 0) + 1
        if name in self.failing:
            raise StoreDown(f"{name} refused")
        pause = self.pause
        if pause is None or pause[0] != name:
            return await call()
        self.pause = None
        if pause[1] == "before":
            self.entered.set()
            await self.gate.wait()
        result = await call()
        if pause[1] == "after":
            self.entered.set()
            await self.gate.wait()
        return result

    async def create(self, created: MatchCreated) -> MatchCreated:
        return await self._write("create", lambda: self.inner.create(created))

    async def join(self, joined: SeatJoined) -> AppendStatus:
        return await self._write("join", lambda: self.inner.join(joined))

    async def append(self, row: ActionRow) -> AppendResult:
        return await self._write("append", lambda: self.inner.append(row))

    async def finish(self, finished: MatchFinished) -> None:
        await self._write("finish", lambda: self.inner.finish(finished))

    async def load(self, match_id: str) -> MatchLog | None:
        return await self.inner.load(match_id)

    async def unfinished(self) -> list[str]:
        return await self.inner.unfinished()

    async def finished_since(self, since_ms: int) -> list[str]:
        return await self.inner.finished_since(since_ms)

    async def close(self) -> None:
        await self.inner.close()


async def idle(runtime: MatchRuntime) -> None:
    """Wait until no task of the runtime runs (timers may still be armed)."""
    while runtime._tasks:
        await asyncio.gather(*list(runtime._tasks), return_exceptions=True)


async def agree(runtime: MatchRuntime, store: MatchStore, match_id: str) -> Match:
    """The log and the live match say the same."""
    await idle(runtime)
    log = await store.load(match_id)
    assert log is not None
    match = runtime.matches[match_id]
    assert log.actions == tuple(match.actions)
    assert log.seats == tuple(match.joined[s] for s in sorted(match.joined))
    requests = [(r.seat, r.request_id) for r in log.actions]
    assert len(requests) == len(set(requests)), "a request applied twice"
    assert [r.seq for r in log.actions] == list(range(1, len(log.actions) + 1))
    if match.status != "waiting":
        # An early end (abandoned) is a version of its own.
        ended_early = log.finished is not None and log.finished.termination != "normal"
        assert match.version == len(log.actions) + 1 + ended_early
    assert (log.finished is not None) == (match.finished is not None)
    return match


async def cancelled_then_retried(
    rng: random.Random,
    store: GatedStore,
    runtime: MatchRuntime,
    operation: str,
    call: Callable[[], Awaitable[T]],
) -> tuple[T, bool]:
    """Call, cancel the caller at a random point of the path, then retry the same request.

    Returns the retry's answer and whether the first attempt was cancelled.
    """
    mode = rng.choice(["none", "early", "before", "after"])
    if mode == "none":
        await call()
        return await call(), False
    if mode in ("before", "after"):
        store.hold(operation, mode)
    task = asyncio.ensure_future(call())
    if mode == "early":
        for _ in range(rng.randrange(3)):
            await asyncio.sleep(0)
    else:
        await store.entered.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    if rng.random() < 0.5:  # the retry may arrive while the first write is still held
        retry = asyncio.ensure_future(call())
        for _ in range(rng.randrange(4)):
            await asyncio.sleep(0)
        store.release()
        return await retry, True
    store.release()
    await idle(runtime)
    return await call(), True


def drained(outbox: Outbox) -> list[Any]:
    items = []
    while not outbox.empty:
        items.append(outbox._items.popleft())
    return items


async def play_cancelled_match(inner: MatchStore, seed: int) -> None:
    rng = random.Random(seed)
    store = GatedStore(inner)
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        created, _ = await cancelled_then_retried(
            rng,
            store,
            runtime,
            "create",
            lambda: runtime.create_match("take5", 2, OPTIONS, request_id=f"create-{seed}"),
        )
        match_id = created.match.id
        # One match, whether the first attempt got as far as the store or not.
        assert await inner.unfinished() == [match_id]
        assert runtime.waiting_matches == 1
        tokens = []
        for seat in range(2):
            rid = f"join-{seed}-{seat}-0123456789abcdef"
            joined, _ = await cancelled_then_retried(
                rng,
                store,
                runtime,
                "join",
                functools.partial(
                    runtime.join, match_id, seat, f"seat {seat}", bytes([seat]), request_id=rid
                ),
            )
            assert joined.seat == seat
            assert runtime.authenticate(joined.token) == (match_id, seat)
            tokens.append(joined.token)
            await agree(runtime, inner, match_id)
        assert (runtime.waiting_matches, runtime.running_matches) == (0, 1)
        outboxes = [runtime.subscribe(await runtime.get(match_id), s, 0) for s in range(2)]
        n = 0
        while (match := await agree(runtime, inner, match_id)).status == "running":
            seat = rng.choice(match.to_act())
            action = rng.choice(match.game.legal_actions(match.state, seat))
            version, rid = match.version, f"a{n}"
            n += 1
            acks: list[Ack] = []
            ack, _ = await cancelled_then_retried(
                rng,
                store,
                runtime,
                "append",
                functools.partial(
                    runtime.submit, match_id, seat, version, rid, action, on_ack=acks.append
                ),
            )
            assert ack.seq == version and acks[-1] == ack
            # The retry is a duplicate exactly when the first attempt was applied (then its
            # on_ack ran, in the runtime's task, though its caller was gone).
            assert ack.duplicate == (len(acks) == 2)
            log = await inner.load(match_id)
            assert log is not None
            assert [r.seq for r in log.actions if r.request_id == rid] == [version]
            assert all(a.seq == version for a in acks)
        match = await agree(runtime, inner, match_id)
        assert match.status == "finished" and match.finished is not None
        log = await inner.load(match_id)
        assert log is not None and log.finished == match.finished
        assert runtime.running_matches == 0
        for outbox in outboxes:
            versions = [u.snapshot.version for u in drained(outbox) if u.snapshot is not None]
            assert versions == list(range(1, match.version + 1))
    finally:
        await runtime.close()


@pytest.mark.parametrize("seed", range(150))
async def test_cancelled_calls_leave_log_and_match_in_agreement_memory(seed: int) -> None:
    await play_cancelled_match(MemoryStore(), seed)


@pytest.mark.parametrize("seed", range(8))
async def test_cancelled_calls_leave_log_and_match_in_agreement_sqlite(
    seed: int, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "c.db")
    try:
        await play_cancelled_match(store, 1000 + seed)
    finally:
        await store.close()


async def started(
    runtime: MatchRuntime, seats: int = 2, options: dict[str, str] | None = None, **kw: Any
) -> Match:
    created = await runtime.create_match("take5", seats, options or OPTIONS, **kw)
    for seat in range(seats):
        await runtime.join(created.match.id, seat, f"s{seat}", b"")
    return created.match


async def test_a_cancelled_final_action_still_stores_the_finished_row() -> None:
    inner = MemoryStore()
    store = GatedStore(inner)
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime)
        outbox = runtime.subscribe(match, None, 0)
        n = 0
        while True:
            match = runtime.matches[match.id]
            seat = match.to_act()[0]
            action = match.game.default_action(match.state, seat)
            probe = match.game.apply(match.state, seat, action)
            if match.game.outcome(probe) is not None:
                break
            await runtime.submit(match.id, seat, match.version, f"r{n}", action)
            n += 1
        store.hold("finish", "before")
        task = asyncio.ensure_future(runtime.submit(match.id, seat, match.version, "last", action))
        await store.entered.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        store.release()
        await idle(runtime)
        log = await inner.load(match.id)
        assert log is not None and log.finished is not None
        assert runtime.matches[match.id].finished == log.finished
        last = drained(outbox)[-1].snapshot
        assert last is not None and last.status == "finished"
    finally:
        await runtime.close()


async def test_close_waits_for_an_inline_submit_under_way() -> None:
    """A submit in its caller's task (the Play stream's reader) is waited for by close(),
    as the runtime's own tasks are, so the store is not closed under it."""
    inner = MemoryStore()
    store = GatedStore(inner)
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    match = await started(runtime)
    seat = match.to_act()[0]
    action = match.game.default_action(match.state, seat)
    store.hold("append", "before")
    submit = asyncio.ensure_future(
        runtime.submit(match.id, seat, match.version, "r1", action, inline=True)
    )
    await store.entered.wait()
    assert not runtime._tasks  # no task of the runtime's runs it
    closing = asyncio.ensure_future(runtime.close())
    for _ in range(10):
        await asyncio.sleep(0)
    assert not closing.done()
    store.release()
    ack = await submit
    await asyncio.wait_for(closing, 5)
    assert (ack.seq, ack.duplicate) == (1, False)
    log = await inner.load(match.id)
    assert log is not None and [r.request_id for r in log.actions] == ["r1"]
    assert runtime.matches[match.id].version == 2


async def test_ack_is_queued_before_the_view_it_caused() -> None:
    runtime = MatchRuntime(MemoryStore(), RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime)
        outbox = runtime.subscribe(match, 0, 0)
        drained(outbox)
        action = match.game.default_action(match.state, 0)
        ack = await runtime.submit(match.id, 0, 1, "r1", action, on_ack=outbox.push_result)
        again = await runtime.submit(match.id, 0, 1, "r1", action, on_ack=outbox.push_result)
        items = drained(outbox)
        assert items[0].result == ack and not ack.duplicate
        assert items[1].snapshot is not None and items[1].snapshot.version == 2
        assert items[2].result == again and again.duplicate
    finally:
        await runtime.close()


async def test_a_store_error_in_submit_changes_nothing_and_propagates() -> None:
    store = GatedStore(MemoryStore())
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime)
        action = match.game.default_action(match.state, 0)
        store.failing.add("append")
        with pytest.raises(StoreDown):
            await runtime.submit(match.id, 0, 1, "r1", action)
        assert match.version == 1 and not match.actions and not match.requests
        store.failing.clear()
        ack = await runtime.submit(match.id, 0, 1, "r1", action)
        assert (ack.seq, ack.duplicate) == (1, False)
    finally:
        await runtime.close()


async def test_the_clock_survives_a_failing_store_and_plays_once_it_recovers() -> None:
    store = GatedStore(MemoryStore())
    config = RuntimeConfig(default_move_clock_ms=30, abandon_after_periods=0)
    runtime = MatchRuntime(store, config)
    try:
        match = await started(runtime)
        store.failing.add("append")
        for _ in range(100):  # the deadline passes; the default fails, and is retried
            await asyncio.sleep(0.05)
            if store.calls.get("append", 0) >= 3:
                break
        assert store.calls.get("append", 0) >= 3
        assert match.version == 1 and match.failures >= 1 and match.timer is not None
        store.failing.clear()
        for _ in range(100):
            await asyncio.sleep(0.05)
            if match.actions:
                break
        assert match.actions and match.actions[0].clock_default
        await agree(runtime, store.inner, match.id)
    finally:
        await runtime.close()


async def test_a_failed_finish_row_is_retried_until_stored() -> None:
    inner = MemoryStore()
    store = GatedStore(inner)
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime)
        store.failing.add("finish")
        n = 0
        while match.status == "running":
            seat = match.to_act()[0]
            action = match.game.default_action(match.state, seat)
            ack = await runtime.submit(match.id, seat, match.version, f"r{n}", action)
            assert not ack.duplicate
            n += 1
        assert match.finished is None and match.timer is not None
        for _ in range(100):
            await asyncio.sleep(0.05)
            if store.calls["finish"] >= 2:
                break
        assert store.calls["finish"] >= 2 and match.finished is None
        store.failing.clear()
        for _ in range(150):
            await asyncio.sleep(0.05)
            if match.finished is not None:
                break
        log = await inner.load(match.id)
        assert log is not None and log.finished is not None and log.finished == match.finished
    finally:
        await runtime.close()


async def test_cancelled_submit_then_silence_the_clock_plays_on_and_abandons() -> None:
    inner = MemoryStore()
    store = GatedStore(inner)
    config = RuntimeConfig(default_move_clock_ms=40, abandon_after_periods=3)
    runtime = MatchRuntime(store, config)
    try:
        match = await started(runtime, options={"deals": "2"})
        outbox = runtime.subscribe(match, 1, 0)
        action = match.game.default_action(match.state, 0)
        store.hold("append", "after")
        task = asyncio.ensure_future(runtime.submit(match.id, 0, 1, "r1", action))
        await store.entered.wait()
        task.cancel()
        store.release()
        for _ in range(200):
            await asyncio.sleep(0.02)
            if match.finished is not None:
                break
        match = await agree(runtime, inner, match.id)
        assert match.termination == "abandoned" and match.status == "finished"
        assert match.outcome is not None and match.outcome.termination == "abandoned"
        assert match.outcome.utilities == (0.0, 0.0) and match.outcome.scores == ()
        assert match.to_act() == ()
        assert match.actions[0].request_id == "r1"
        assert all(r.clock_default for r in match.actions[1:])
        log = await inner.load(match.id)
        assert log is not None and log.finished is not None
        assert log.finished.termination == "abandoned"
        views = [u.snapshot for u in drained(outbox) if u.snapshot is not None]
        assert views[-1].status == "finished" and views[-1].outcome == match.outcome
        # The record verifies, and tampering does not.
        recorded = RecordedMatch(
            game=match.created.game,
            options=dict(match.created.options),
            seats=2,
            server_seed=match.created.server_seed,
            commitment=match.created.commitment,
            entropies=[match.joined[s].entropy for s in range(2)],
            presets=[],
            actions=[(r.seat, r.action) for r in match.actions],
            final_hash=log.finished.final_hash,
            termination="abandoned",
        )
        assert verify(recorded) == []
        assert verify(RecordedMatch(**{**_fields(recorded), "final_hash": "0" * 64}))
        assert verify(RecordedMatch(**{**_fields(recorded), "termination": "normal"}))
        assert verify(RecordedMatch(**{**_fields(recorded), "actions": recorded.actions[:-1]}))
        # A restart does not bring it back to life.
        second = MatchRuntime(inner, config)
        assert await second.recover() == 0
        again = await second.get(match.id)
        assert again.termination == "abandoned" and again.outcome == match.outcome
        await second.close()
    finally:
        await runtime.close()


def _fields(record: RecordedMatch) -> dict[str, Any]:
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


async def test_a_conflict_moves_subscribers_to_the_reloaded_match(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store_a, store_b = SqliteStore(path), SqliteStore(path)
    config = RuntimeConfig(default_move_clock_ms=600_000)
    a, b = MatchRuntime(store_a, config), MatchRuntime(store_b, config)
    try:
        match = await started(a)
        stale = await b.get(match.id)
        outbox = b.subscribe(stale, 1, 0)
        drained(outbox)
        hands = stale.state.hands
        await a.submit(match.id, 0, 1, "via-a", match.game.default_action(match.state, 0))
        with pytest.raises(StaleVersion):
            await b.submit(match.id, 1, 1, "via-b", stale.game.default_action(stale.state, 1))
        fresh = b.matches[match.id]
        assert fresh is not stale and fresh.version == 2 and stale.replaced
        resync = drained(outbox)
        assert len(resync) == 1 and resync[0].resync and resync[0].snapshot.version == 2
        # Views keep coming to the same outbox from the live object.
        action = fresh.game.default_action(fresh.state, 1)
        assert hands[1]
        ack = await b.submit(match.id, 1, 2, "via-b", action)
        assert ack.version == 3
        assert [u.snapshot.version for u in drained(outbox) if u.snapshot] == [3]
        # A stream that still holds the old object leaves the live one's subscribers.
        b.unsubscribe(stale, outbox)
        assert outbox not in b.matches[match.id].subscribers
        assert (b.running_matches, b.waiting_matches) == (1, 0)
    finally:
        await a.close()
        await b.close()
        await store_a.close()
        await store_b.close()
