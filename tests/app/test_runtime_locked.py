"""``MatchRuntime._locked``: the match's lock is held inside and only inside, whatever
ends the block: a normal exit, an exception, or the caller cancelled while it waits for
the lock or for the pipelined submits (reliability.md, C7)."""

from __future__ import annotations

import asyncio

import pytest

from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.store.memory import MemoryStore


async def _runtime_and_match() -> tuple[MatchRuntime, str]:
    runtime = MatchRuntime(MemoryStore())
    match = (await runtime.create_match("take5", 2, {"deals": "1"})).match
    return runtime, match.id


async def test_the_lock_is_held_inside_and_let_go_after_a_normal_exit_or_an_error() -> None:
    runtime, match_id = await _runtime_and_match()
    try:
        async with runtime._locked(match_id) as match:
            assert match.id == match_id and match.lock.locked()
        assert not match.lock.locked()
        with pytest.raises(ZeroDivisionError):
            async with runtime._locked(match_id) as match:
                assert match.lock.locked()
                _ = 1 / 0
        assert not match.lock.locked()
    finally:
        await runtime.close()


async def test_a_caller_cancelled_while_it_waits_for_the_lock_takes_nothing() -> None:
    runtime, match_id = await _runtime_and_match()
    try:
        entered = asyncio.Event()
        leave = asyncio.Event()

        async def holder() -> None:
            async with runtime._locked(match_id):
                entered.set()
                await leave.wait()

        async def waiter() -> None:
            async with runtime._locked(match_id):
                raise AssertionError("a cancelled waiter entered")

        holding = asyncio.ensure_future(holder())
        await entered.wait()
        waiting = asyncio.ensure_future(waiter())
        await asyncio.sleep(0.01)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        assert waiting.cancelled()
        leave.set()
        await holding
        match = runtime.matches[match_id]
        assert not match.lock.locked()
        async with asyncio.timeout(1):  # free for the next caller
            async with runtime._locked(match_id) as again:
                assert again is match
    finally:
        await runtime.close()


async def test_a_caller_cancelled_while_it_drains_the_pipeline_lets_the_lock_go() -> None:
    runtime, match_id = await _runtime_and_match()
    try:
        match = runtime.matches[match_id]
        done = asyncio.get_running_loop().create_future()
        match.pending = [type("Entry", (), {"done": done})()]  # a submit on its way
        draining = asyncio.ensure_future(runtime._locked(match_id).__aenter__())
        await asyncio.sleep(0.01)
        assert match.lock.locked() and not draining.done()  # holds the lock, waits
        draining.cancel()
        await asyncio.gather(draining, return_exceptions=True)
        assert draining.cancelled()
        assert not match.lock.locked()
        match.pending = None
    finally:
        await runtime.close()
