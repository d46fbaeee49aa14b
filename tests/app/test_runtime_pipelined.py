"""Pipelined submits: a match's next submit is checked and applied while the one before it
is on its way to the store (``RuntimeConfig.pipeline_appends``, stores with
``ordered_appends``).

The promise is unchanged: nothing is acknowledged, shown or clocked before it is durable,
a failed append changes nothing in memory (the ones pipelined after it fail with it), and a
repeated request id is answered once, from the log. These tests hold the appends in a
store that applies them in the order they were made, as SQLite's writer does, and let
them through one by one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from speeltafel.server.app.errors import StaleVersion
from speeltafel.server.app.match import Match, Outbox
from speeltafel.server.app.runtime import Ack, MatchRuntime, RuntimeConfig
from speeltafel.server.store.base import ActionRow, AppendResult
from speeltafel.server.store.memory import MemoryStore


class StoreDown(OSError):
    """An append the held store was told to fail."""


class HeldAppends:
    """A MemoryStore whose appends wait, in the order they were made, until released."""

    ordered_appends = True

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.held: list[tuple[ActionRow, asyncio.Future[AppendResult]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def append(self, row: ActionRow) -> AppendResult:
        answer: asyncio.Future[AppendResult] = asyncio.get_running_loop().create_future()
        self.held.append((row, answer))
        return await answer

    async def release(self, fail: bool = False) -> ActionRow:
        """Let the oldest held append through to the store (or fail it)."""
        row, answer = self.held.pop(0)
        if fail:
            answer.set_exception(StoreDown("append refused"))
        else:
            answer.set_result(await self.inner.append(row))
        await settle()
        return row


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def started(runtime: MatchRuntime, seats: int) -> Match:
    created = await runtime.create_match("take5", seats, {"deals": "1"})
    for seat in range(seats):
        await runtime.join(created.match.id, seat, f"s{seat}", b"")
    return created.match


def drained(outbox: Outbox) -> list[Any]:
    items = []
    while not outbox.empty:
        items.append(outbox._items.popleft())
    return items


def selections(match: Match) -> dict[int, Any]:
    """A card for every seat of a Take 5 turn (each seat's own, so none depends on another)."""
    return {seat: match.game.default_action(match.state, seat) for seat in match.to_act()}


@pytest.mark.parametrize("pipelined", [True, False])
async def test_a_turns_selections_go_to_the_store_together_and_are_acked_once_durable(
    pipelined: bool,
) -> None:
    store = HeldAppends()
    runtime = MatchRuntime(
        store, RuntimeConfig(default_move_clock_ms=600_000, pipeline_appends=pipelined)
    )
    try:
        match = await started(runtime, 4)
        spectator = runtime.subscribe(match, None, 0)
        assert [u.snapshot.version for u in drained(spectator)] == [1]
        acks: list[Ack] = []
        submits = [
            asyncio.ensure_future(
                runtime.submit(match.id, seat, 1, f"r{seat}", action, on_ack=acks.append)
            )
            for seat, action in selections(match).items()
        ]
        await settle()
        # Pipelined, all four are on their way at once; serial, one at a time.
        assert len(store.held) == (4 if pipelined else 1)
        assert acks == [] and match.version == 1 and match.current.version == 1
        assert drained(spectator) == []  # nothing shown before it is durable
        assert not any(task.done() for task in submits)
        for _ in range(4):
            await settle()
            await store.release()
        answers = await asyncio.gather(*submits)
        shown = [u.snapshot.version for u in drained(spectator) if u.snapshot is not None]
        assert shown == sorted(shown) and shown[-1] == runtime.matches[match.id].version
        assert [a.seq for a in acks] == [1, 2, 3, 4]  # recorded and acknowledged in seq order
        assert sorted(a.seq for a in answers) == [1, 2, 3, 4]
        log = await store.inner.load(match.id)
        assert log is not None
        assert log.actions == tuple(runtime.matches[match.id].actions)
        assert runtime.matches[match.id].version == len(log.actions) + 1
    finally:
        await runtime.close()


async def test_a_failed_append_fails_the_ones_after_it_and_changes_nothing() -> None:
    store = HeldAppends()
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime, 2)
        chosen = selections(match)
        first = asyncio.ensure_future(runtime.submit(match.id, 0, 1, "a", chosen[0]))
        second = asyncio.ensure_future(runtime.submit(match.id, 1, 1, "b", chosen[1]))
        await settle()
        assert len(store.held) == 2
        await store.release(fail=True)
        with pytest.raises(StoreDown):
            await first
        await store.release()  # seq 2 without seq 1: the store refuses it
        with pytest.raises(StaleVersion):
            await second
        live = runtime.matches[match.id]
        assert live.version == 1 and not live.actions and not live.pending
        log = await store.inner.load(match.id)
        assert log is not None and log.actions == ()
        # Both try again with the same request ids and are taken afresh, in one pipeline.
        retried = [
            asyncio.ensure_future(runtime.submit(match.id, seat, 1, rid, chosen[seat]))
            for seat, rid in ((0, "a"), (1, "b"))
        ]
        await settle()
        await store.release()
        await settle()
        await store.release()
        acks = await asyncio.gather(*retried)
        assert [(a.seq, a.duplicate) for a in acks] == [(1, False), (2, False)]
    finally:
        await runtime.close()


async def test_a_request_repeated_while_on_its_way_is_answered_once_from_the_log() -> None:
    store = HeldAppends()
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime, 2)
        action = selections(match)[0]
        first = asyncio.ensure_future(runtime.submit(match.id, 0, 1, "same", action))
        await settle()
        again = asyncio.ensure_future(runtime.submit(match.id, 0, 1, "same", action))
        await settle()
        assert len(store.held) == 1 and not again.done()  # it waits; it is not applied twice
        await store.release()
        ack, repeat = await asyncio.gather(first, again)
        assert (ack.seq, ack.duplicate) == (1, False)
        assert (repeat.seq, repeat.duplicate) == (1, True)
        log = await store.inner.load(match.id)
        assert log is not None and len(log.actions) == 1
    finally:
        await runtime.close()


async def test_the_final_action_waits_for_the_ones_before_it_and_finishes_the_match() -> None:
    store = HeldAppends()
    runtime = MatchRuntime(store, RuntimeConfig(default_move_clock_ms=600_000))
    try:
        match = await started(runtime, 2)
        n = 0
        while runtime.matches[match.id].outcome is None:
            live = runtime.matches[match.id]
            tasks = [
                asyncio.ensure_future(
                    runtime.submit(match.id, seat, live.version, f"r{n}-{seat}", action)
                )
                for seat, action in selections(live).items()
            ]
            n += 1
            while not all(task.done() for task in tasks):
                await settle()
                if store.held:
                    await store.release()
            for task in tasks:
                task.result()
        live = runtime.matches[match.id]
        log = await store.inner.load(match.id)
        assert log is not None and log.finished is not None
        assert live.finished == log.finished and log.actions == tuple(live.actions)
        assert live.current.status == "finished" and not live.pending
    finally:
        await runtime.close()
