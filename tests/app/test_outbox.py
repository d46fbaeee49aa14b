"""A subscriber's outbox: slow readers get one resync snapshot, answers are never dropped."""

from __future__ import annotations

import asyncio

from speeltafel.server.app.match import Outbox, Snapshot


def snapshot(version: int) -> Snapshot:
    return Snapshot(version, "running", None, (0,), (0,), None)


async def test_updates_come_out_in_the_order_they_went_in() -> None:
    outbox = Outbox(seat=0, limit=8)
    outbox.push_snapshot(snapshot(1))
    outbox.push_result("answer-1")
    outbox.push_snapshot(snapshot(2))
    updates = [await outbox.get() for _ in range(3)]
    assert [(u.snapshot.version if u.snapshot else u.result) for u in updates] == [
        1,
        "answer-1",
        2,
    ]
    assert not any(u.resync for u in updates)
    assert outbox.empty


async def test_overflow_keeps_only_the_latest_view_marked_resync() -> None:
    outbox = Outbox(seat=0, limit=2)
    outbox.push_snapshot(snapshot(1))
    outbox.push_snapshot(snapshot(2))
    outbox.push_result("kept")
    outbox.push_snapshot(snapshot(3))  # over the limit: 1 and 2 are dropped
    first = await outbox.get()
    second = await outbox.get()
    assert first.result == "kept"
    assert second.snapshot is not None and second.snapshot.version == 3 and second.resync
    assert outbox.empty


async def test_a_client_that_does_not_read_answers_is_made_to_wait() -> None:
    outbox = Outbox(seat=0, result_limit=2)
    outbox.push_result("a")
    outbox.push_result("b")
    waiting = asyncio.ensure_future(outbox.room_for_result())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    assert (await outbox.get()).result == "a"
    await asyncio.wait_for(waiting, 1)


async def test_get_waits_for_the_next_update() -> None:
    outbox = Outbox(seat=None)
    getter = asyncio.ensure_future(outbox.get())
    await asyncio.sleep(0.01)
    assert not getter.done()
    outbox.push_snapshot(snapshot(7))
    update = await asyncio.wait_for(getter, 1)
    assert update.snapshot is not None and update.snapshot.version == 7


async def test_a_reader_cancelled_while_waiting_leaves_the_outbox_readable() -> None:
    outbox = Outbox(seat=None)
    getter = asyncio.ensure_future(outbox.get())
    await asyncio.sleep(0.01)
    getter.cancel()
    await asyncio.gather(getter, return_exceptions=True)
    assert getter.cancelled()
    outbox.push_snapshot(snapshot(3))  # nobody waits: queued, not lost
    again = asyncio.ensure_future(outbox.get())
    update = await asyncio.wait_for(again, 1)
    assert update.snapshot is not None and update.snapshot.version == 3


async def test_a_push_that_settles_a_cancelled_reader_is_still_read() -> None:
    outbox = Outbox(seat=None)
    getter = asyncio.ensure_future(outbox.get())
    await asyncio.sleep(0.01)
    outbox.push_result("late")  # settles the reader's future...
    getter.cancel()  # ...which is cancelled before it runs again
    await asyncio.gather(getter, return_exceptions=True)
    if getter.cancelled():
        assert (await asyncio.wait_for(outbox.get(), 1)).result == "late"
    else:
        assert getter.result().result == "late"
    assert outbox.empty


async def test_a_second_concurrent_reader_is_refused() -> None:
    outbox = Outbox(seat=None)
    first = asyncio.ensure_future(outbox.get())
    await asyncio.sleep(0.01)
    try:
        await outbox.get()
    except RuntimeError as exc:
        assert "one reader" in str(exc)
    else:
        raise AssertionError("a second reader was let in")
    outbox.push_result("x")
    assert (await asyncio.wait_for(first, 1)).result == "x"


async def test_full_says_when_the_client_must_read_before_it_is_answered() -> None:
    outbox = Outbox(seat=0, result_limit=2)
    outbox.push_result("a")
    assert not outbox.full
    outbox.push_result("b")
    assert outbox.full
    await outbox.get()
    assert not outbox.full
