"""``store.base.start_append``: an append begun at once, in the order of the calls, and the
store's own ``append`` whenever a subclass or a wrapper has one of its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from test_storage_faults import created, joined  # tests/store is on sys.path

from speeltafel.server.store.base import ActionRow, AppendResult, AppendStatus, start_append
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore


def row(seq: int, request_id: str) -> ActionRow:
    return ActionRow("m1", seq, 0, request_id, "card:5", 1_000 + seq, False)


async def a_match(store: Any) -> None:
    await store.create(created())
    await store.join(joined(0))


async def test_appends_begun_together_are_stored_in_order_and_answered(tmp_path: Path) -> None:
    for store in (MemoryStore(), SqliteStore(tmp_path / "s.db")):
        try:
            await a_match(store)
            futures = [start_append(store, row(seq, f"r{seq}")) for seq in (1, 2, 3)]
            assert all(isinstance(f, asyncio.Future) for f in futures)
            answers = await asyncio.gather(*futures)
            assert [a.status for a in answers] == [AppendStatus.COMMITTED] * 3
            # The same request again: its stored row; a seq out of turn: a conflict.
            again = await start_append(store, row(4, "r2"))
            assert again.status is AppendStatus.DUPLICATE and again.existing is not None
            assert again.existing.seq == 2
            assert (await start_append(store, row(9, "r9"))).status is AppendStatus.CONFLICT
            log = await store.load("m1")
            assert log is not None and [a.seq for a in log.actions] == [1, 2, 3]
        finally:
            await store.close()


class CountingMemory(MemoryStore):
    """A subclass with an append of its own (as the tests' faulty stores have)."""

    def __init__(self) -> None:
        super().__init__()
        self.appends = 0

    async def append(self, row: ActionRow) -> AppendResult:
        self.appends += 1
        return await super().append(row)


class Wrapper:
    """A store that holds another and hands the rest on by __getattr__."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.appends = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def append(self, row: ActionRow) -> AppendResult:
        self.appends += 1
        return await self.inner.append(row)


async def test_a_store_with_its_own_append_gets_it_called() -> None:
    for store in (CountingMemory(), Wrapper()):
        await a_match(store)
        answer = await start_append(store, row(1, "r1"))  # type: ignore[arg-type]
        assert answer.status is AppendStatus.COMMITTED
        assert store.appends == 1
