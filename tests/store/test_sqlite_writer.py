"""What a caller of the SQLite store relies on, whoever runs its statements
(``server/store/sqlite.py``: one queue, one connection, group commit): operations answered
in the order of the calls, reads that see the writes queued before them, an event loop that
never waits for another connection's write lock, callers on several loops, a cancelled
caller that leaves the store serving, and a close that finishes what was queued and refuses
what comes after. docs/performance-rounds.md (round 24) measured a store that ran its writes'
statements on the event loop against these tests."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from test_storage_faults import created, joined, row  # tests/store is on sys.path

from speeltafel.server.store.base import AppendStatus, start_append
from speeltafel.server.store.sqlite import SqliteStore

HELD_S = 0.6  # how long another connection holds the file's write lock
ANSWER_S = 3.0  # far longer than an append takes, even on a loaded machine


async def a_store(path: Path, *match_ids: str) -> SqliteStore:
    store = SqliteStore(path)
    for match_id in match_ids or ("m1",):
        await store.create(created(match_id))
        await store.join(joined(0, match_id))
        await store.join(joined(1, match_id))
    return store


async def test_reads_and_writes_keep_the_order_of_the_calls(tmp_path: Path) -> None:
    store = await a_store(tmp_path / "o.db")
    try:
        first = asyncio.ensure_future(store.append(row(1)))
        read = asyncio.ensure_future(store.load("m1"))
        second = asyncio.ensure_future(store.append(row(2)))
        await asyncio.gather(first, read, second)
        between = read.result()
        assert between is not None and [a.seq for a in between.actions] == [1]
        after = await store.load("m1")
        assert after is not None and [a.seq for a in after.actions] == [1, 2]
    finally:
        await store.close()


async def test_a_lock_held_by_another_connection_never_stalls_the_loop(tmp_path: Path) -> None:
    """Another process's transaction (two servers over one file) holds the write lock: the
    append waits for it on the writer thread, and the event loop runs on meanwhile."""
    path = tmp_path / "l.db"
    store = await a_store(path)
    locked, release = threading.Event(), threading.Event()

    def other_process() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        locked.set()
        release.wait(10)
        other.execute("COMMIT")
        other.close()

    holder = threading.Thread(target=other_process)
    holder.start()
    loop = asyncio.get_running_loop()
    gaps: list[float] = []

    async def ticker() -> None:
        last = loop.time()
        while True:
            await asyncio.sleep(0.005)
            now = loop.time()
            gaps.append(now - last)
            last = now

    try:
        await asyncio.to_thread(locked.wait, 10)
        ticking = asyncio.ensure_future(ticker())
        appended = asyncio.ensure_future(store.append(row(1)))
        threading.Timer(HELD_S, release.set).start()
        answer = await asyncio.wait_for(appended, 10)
        ticking.cancel()
        assert answer.status is AppendStatus.COMMITTED
        assert release.is_set()  # it did wait for the lock
        assert max(gaps) < HELD_S / 2, f"the loop stalled for {max(gaps):.3f} s"
        assert sum(gaps) > HELD_S / 2  # the ticker ran through the wait
        log = await store.load("m1")
        assert log is not None and [a.seq for a in log.actions] == [1]
    finally:
        release.set()
        holder.join()
        await store.close()


async def test_callers_on_two_loops_are_each_answered_on_their_own(tmp_path: Path) -> None:
    store = await a_store(tmp_path / "t.db", "m1", "m2")
    answers: list[AppendStatus] = []

    async def on_the_other_loop() -> None:
        for seq in range(1, 41):
            # A limit that fires even when the answer was set but its loop never woken.
            async with asyncio.timeout(ANSWER_S):
                answers.append((await store.append(row(seq, match_id="m2"))).status)

    other = threading.Thread(target=lambda: asyncio.run(on_the_other_loop()))
    try:
        other.start()
        here = []
        for seq in range(1, 41):
            async with asyncio.timeout(ANSWER_S):
                here.append((await store.append(row(seq))).status)
        await asyncio.to_thread(other.join, 20)
        assert not other.is_alive()
        assert here == answers == [AppendStatus.COMMITTED] * 40
        # The other loop is closed now: the store goes on serving this one.
        assert (await asyncio.wait_for(store.append(row(41)), 10)).status is AppendStatus.COMMITTED
        for match_id, last in (("m1", 41), ("m2", 40)):
            log = await store.load(match_id)
            assert log is not None and [a.seq for a in log.actions] == list(range(1, last + 1))
    finally:
        await store.close()


async def test_a_cancelled_caller_leaves_its_write_done_and_the_store_serving(
    tmp_path: Path,
) -> None:
    store = await a_store(tmp_path / "c.db")
    try:
        blocked = asyncio.ensure_future(store.append(row(1)))
        await asyncio.sleep(0)  # queued, on its way to the disk
        blocked.cancel()
        queued = asyncio.ensure_future(store.append(row(2)))
        await asyncio.sleep(0)
        queued.cancel()  # cancelled while waiting for its batch
        answer = await asyncio.wait_for(store.append(row(3)), 10)
        assert answer.status is AppendStatus.COMMITTED  # seq 3 follows the two before
        log = await store.load("m1")
        assert log is not None and [a.seq for a in log.actions] == [1, 2, 3]
    finally:
        await store.close()


async def test_close_finishes_what_was_queued_and_refuses_what_comes_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.db"
    store = await a_store(path)
    futures = [start_append(store, row(seq)) for seq in range(1, 6)]
    await store.close()
    assert [f.result().status for f in futures] == [AppendStatus.COMMITTED] * 5
    with pytest.raises(RuntimeError, match="closed"):  # not an answer that never comes
        await asyncio.wait_for(store.append(row(6)), 5)
    await store.close()  # a second close is harmless
    reopened = SqliteStore(path)
    try:
        log = await reopened.load("m1")
        assert log is not None and [a.seq for a in log.actions] == [1, 2, 3, 4, 5]
    finally:
        await reopened.close()


def test_the_writer_thread_stops_with_close(tmp_path: Path) -> None:
    async def run() -> SqliteStore:
        store = await a_store(tmp_path / "s.db")
        await store.close()
        return store

    store = asyncio.run(run())  # close() returns once it has joined the thread
    assert not store._thread.is_alive()
