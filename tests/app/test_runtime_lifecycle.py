"""Waiting matches expire, counts stay exact, names are checked, and CreateMatch and
JoinMatch are idempotent by request id, also across a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from speeltafel.server.app.errors import (
    BadRequest,
    LimitExceeded,
    Refused,
    RequestIdReused,
    Unauthenticated,
)
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig, join_token
from speeltafel.server.store.base import MatchCreated
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore

OPTIONS = {"deals": "1"}
JOIN_ID = "3f1c2a9e-7b4d-4e21-9c55-0a8d6f1e2b3c"


class FakeClock:
    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now = now_ms

    def now_ms(self) -> int:
        return self.now


class SlowCreate(MemoryStore):
    """Every create waits for ``gate``; ``fail`` makes them raise."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.fail = False

    async def create(self, created: MatchCreated) -> MatchCreated:
        await self.gate.wait()
        if self.fail:
            raise OSError("disk full")
        return await super().create(created)


async def test_a_waiting_match_expires_and_forgets_its_tokens() -> None:
    store = MemoryStore()
    runtime = MatchRuntime(store, RuntimeConfig(join_timeout_s=0.1))
    try:
        match = (await runtime.create_match("take5", 2, OPTIONS)).match
        joined = await runtime.join(match.id, 0, "early", b"")
        outbox = runtime.subscribe(match, 0, 0)
        assert runtime.waiting_matches == 1
        for _ in range(100):
            await asyncio.sleep(0.02)
            if match.finished is not None:
                break
        assert match.status == "finished" and match.termination == "expired"
        assert match.final_outcome is not None
        assert match.final_outcome.termination == "expired"
        assert match.final_outcome.utilities == (0.0, 0.0)
        assert match.final_outcome.scores == () and match.final_outcome.ranks == ()
        log = await store.load(match.id)
        assert log is not None and log.finished is not None
        assert log.finished.termination == "expired" and log.finished.final_hash == ""
        assert runtime.waiting_matches == 0
        with pytest.raises(Unauthenticated):
            runtime.authenticate(joined.token)
        with pytest.raises(Refused) as refused:
            await runtime.join(match.id, 1, "late", b"")
        assert refused.value.rule == "match_expired"
        last = None
        while not outbox.empty:
            last = (await outbox.get()).snapshot
        assert last is not None and last.status == "finished"
    finally:
        await runtime.close()


async def test_recovery_ends_waiting_matches_whose_join_time_passed(tmp_path: Path) -> None:
    clock = FakeClock()
    config = RuntimeConfig(join_timeout_s=60)
    store = SqliteStore(tmp_path / "e.db")
    first = MatchRuntime(store, config, clock)
    old = (await first.create_match("take5", 2, OPTIONS)).match
    clock.now += 30_000
    young = (await first.create_match("take5", 2, OPTIONS)).match
    joined = await first.join(old.id, 0, "a", b"")
    await first.close()
    await store.close()

    clock.now += 45_000  # old is 75 s old, young 45 s
    store = SqliteStore(tmp_path / "e.db")
    second = MatchRuntime(store, config, clock)
    try:
        assert await second.recover() == 1
        assert (second.waiting_matches, second.running_matches) == (1, 0)
        assert second.matches[young.id].status == "waiting"
        ended = await second.get(old.id)
        assert ended.termination == "expired" and ended.status == "finished"
        with pytest.raises(Unauthenticated):
            second.authenticate(joined.token)
        log = await store.load(old.id)
        assert log is not None and log.finished is not None
        assert log.finished.termination == "expired"
        assert await store.unfinished() == [young.id]
    finally:
        await second.close()
        await store.close()


async def test_concurrent_creates_at_the_cap_exactly_cap_succeed() -> None:
    store = SlowCreate()
    runtime = MatchRuntime(store, RuntimeConfig(max_waiting_matches=5))
    try:
        calls = [
            asyncio.ensure_future(runtime.create_match("take5", 2, OPTIONS)) for _ in range(20)
        ]
        await asyncio.sleep(0.01)
        assert runtime.waiting_matches == 5  # reserved before any store write finished
        store.gate.set()
        results = await asyncio.gather(*calls, return_exceptions=True)
        made = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, LimitExceeded)]
        assert len(made) == 5 and len(refused) == 15
        assert {r.rule for r in refused} == {"too_many_waiting_matches"}
        assert runtime.waiting_matches == 5 and len(await store.unfinished()) == 5
    finally:
        await runtime.close()


async def test_a_failed_create_gives_its_slot_back_also_when_cancelled() -> None:
    store = SlowCreate()
    runtime = MatchRuntime(store, RuntimeConfig(max_waiting_matches=2))
    try:
        store.fail = True
        failing = asyncio.ensure_future(runtime.create_match("take5", 2, OPTIONS))
        cancelled = asyncio.ensure_future(runtime.create_match("take5", 2, OPTIONS))
        await asyncio.sleep(0.01)
        assert runtime.waiting_matches == 2
        cancelled.cancel()
        store.gate.set()
        with pytest.raises(OSError):
            await failing
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        await asyncio.gather(*list(runtime._tasks), return_exceptions=True)
        assert runtime.waiting_matches == 0
        store.fail = False
        await runtime.create_match("take5", 2, OPTIONS)
        assert runtime.waiting_matches == 1
    finally:
        await runtime.close()


async def test_running_matches_count_toward_max_live_matches_and_leave_it() -> None:
    runtime = MatchRuntime(
        MemoryStore(), RuntimeConfig(max_live_matches=1, default_move_clock_ms=600_000)
    )
    try:
        match = (await runtime.create_match("take5", 2, OPTIONS)).match
        waiting = (await runtime.create_match("take5", 2, OPTIONS)).match  # waiting: allowed
        assert (runtime.waiting_matches, runtime.running_matches) == (2, 0)
        for seat in range(2):
            await runtime.join(match.id, seat, "", b"")
        assert (runtime.waiting_matches, runtime.running_matches) == (1, 1)
        with pytest.raises(LimitExceeded) as refused:
            await runtime.create_match("take5", 2, OPTIONS)
        assert refused.value.rule == "too_many_matches"
        # A waiting match whose seats fill still starts (documented: its seats were promised).
        for seat in range(2):
            await runtime.join(waiting.id, seat, "", b"")
        assert (runtime.waiting_matches, runtime.running_matches) == (0, 2)
        n = 0
        while match.status == "running":
            seat = match.to_act()[0]
            action = match.game.default_action(match.state, seat)
            await runtime.submit(match.id, seat, match.version, f"r{n}", action)
            n += 1
        assert runtime.running_matches == 1
    finally:
        await runtime.close()


@pytest.mark.parametrize(
    "name",
    [
        "a\u202eb",  # right-to-left override
        "a\u200bb",  # zero-width space (Cf)
        "a\nb",
        "a\x00b",
        "a\u2028b",  # line separator
        "a\ue000b",  # private use
        "n" * 65,
    ],
)
async def test_names_must_be_printable_and_short(name: str) -> None:
    runtime = MatchRuntime(MemoryStore())
    try:
        match = (await runtime.create_match("take5", 2, OPTIONS)).match
        with pytest.raises(BadRequest) as refused:
            await runtime.join(match.id, 0, name, b"")
        assert refused.value.rule == "name_invalid"
        assert name not in refused.value.message
        assert not match.joined
    finally:
        await runtime.close()


async def test_names_are_stripped_and_unique_case_insensitively() -> None:
    runtime = MatchRuntime(MemoryStore())
    try:
        match = (await runtime.create_match("take5", 3, OPTIONS)).match
        await runtime.join(match.id, 0, "  Zoë  ", b"")
        assert match.joined[0].name == "Zoë"
        with pytest.raises(Refused) as refused:
            await runtime.join(match.id, 1, "ZOË", b"")
        assert refused.value.rule == "name_taken"
        await runtime.join(match.id, 1, "", b"")
        await runtime.join(match.id, 2, "  ", b"")  # empty names never clash
        assert match.status == "running"
    finally:
        await runtime.close()


async def test_error_messages_clip_client_input() -> None:
    runtime = MatchRuntime(MemoryStore())
    try:
        with pytest.raises(Exception) as raised:
            await runtime.get("x" * 1000)
        assert len(str(raised.value)) < 80
    finally:
        await runtime.close()


async def test_request_ids_are_checked() -> None:
    runtime = MatchRuntime(MemoryStore())
    try:
        with pytest.raises(BadRequest):
            await runtime.create_match("take5", 2, OPTIONS, request_id="r" * 65)
        match = (await runtime.create_match("take5", 2, OPTIONS)).match
        with pytest.raises(BadRequest) as short:
            await runtime.join(match.id, 0, "a", b"", request_id="too-short")
        assert short.value.rule == "request_id"
        with pytest.raises(BadRequest):
            await runtime.join(match.id, 0, "a", b"", request_id="r" * 65)
    finally:
        await runtime.close()


async def test_create_and_join_are_idempotent_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    store = SqliteStore(path)
    first = MatchRuntime(store)
    made = await first.create_match("take5", 2, OPTIONS, request_id="create-1")
    again = await first.create_match("take5", 2, OPTIONS, request_id="create-1")
    assert not made.duplicate and again.duplicate and again.match is made.match
    with pytest.raises(RequestIdReused):
        await first.create_match("take5", 3, OPTIONS, request_id="create-1")
    match_id = made.match.id
    joined = await first.join(match_id, None, "ann", b"e0", request_id=JOIN_ID)
    repeat = await first.join(match_id, None, "ann", b"e0", request_id=JOIN_ID)
    assert not joined.duplicate and repeat.duplicate
    assert (repeat.seat, repeat.token) == (joined.seat, joined.token) == (0, repeat.token)
    assert repeat.token == join_token(made.match.created.token_key, 0, JOIN_ID)
    with pytest.raises(RequestIdReused):
        await first.join(match_id, None, "bob", b"e0", request_id=JOIN_ID)
    with pytest.raises(RequestIdReused):
        await first.join(match_id, 1, "ann", b"e0", request_id=JOIN_ID)
    # The token key never shows in a repr (and so in no log line built from one).
    assert made.match.created.token_key.hex() not in repr(made.match.created)
    await first.close()
    await store.close()

    store = SqliteStore(path)
    second = MatchRuntime(store)
    try:
        assert await second.recover() == 1
        after = await second.create_match("take5", 2, OPTIONS, request_id="create-1")
        assert after.duplicate and after.match.id == match_id
        rejoined = await second.join(match_id, 0, "ann", b"e0", request_id=JOIN_ID)
        assert rejoined.duplicate and rejoined.token == joined.token
        assert second.authenticate(rejoined.token) == (match_id, 0)
        other = await second.join(match_id, None, "bob", b"", request_id=JOIN_ID.upper())
        assert other.seat == 1 and not other.duplicate and other.token != joined.token
        assert second.matches[match_id].status == "running"
        assert (second.waiting_matches, second.running_matches) == (0, 1)
    finally:
        await second.close()
        await store.close()


async def test_joins_without_a_request_id_are_not_idempotent() -> None:
    runtime = MatchRuntime(MemoryStore())
    try:
        match = (await runtime.create_match("take5", 3, OPTIONS)).match
        a = await runtime.join(match.id, None, "", b"")
        b = await runtime.join(match.id, None, "", b"")
        assert (a.seat, b.seat) == (0, 1) and a.token != b.token
        assert not a.duplicate and not b.duplicate and not a.preset_deck
    finally:
        await runtime.close()
