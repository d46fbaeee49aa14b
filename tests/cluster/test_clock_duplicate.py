"""A clock default that another process of a shared log stored first.

Two runtimes over one SQLite file stand for two processes (no PostgreSQL needed: the bug
was the runtime's). Both hold a match; one plays the defaults of an expired clock; the
other's timer then fires with its cached match still behind. Its append of the same
default is a duplicate, its match is replaced by a replay of the log, and its clock must
stop there: before the fix it went on with the replaced object, still behind, and played
the same stored default again and again (a busy loop of appends and replays, found with
py-spy in ``make cluster``, where it kept three processes busy long after the match ended).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.store.sqlite import SqliteStore

MOVE_CLOCK_MS = 400


class Clock:
    """A clock tests set; the runtimes' timers still run on the event loop's time."""

    def __init__(self) -> None:
        self.now = 1_000_000

    def now_ms(self) -> int:
        return self.now


async def test_a_default_found_stored_stops_the_stale_clock(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store_a, store_b = SqliteStore(path), SqliteStore(path)
    clock = Clock()
    a, b = MatchRuntime(store_a, clock=clock), MatchRuntime(store_b, clock=clock)
    appends: list[Any] = []
    append = store_b.append

    async def counted(row: Any) -> Any:
        appends.append(row)
        return await append(row)

    store_b.append = counted  # type: ignore[method-assign]
    try:
        created = (await a.create_match("take5", 2, {}, move_clock_ms=MOVE_CLOCK_MS)).match
        for seat in range(2):
            await a.join(created.id, seat, f"s{seat}", b"")
        held_by_b = await b.get(created.id)  # b's timer: MOVE_CLOCK_MS of loop time
        assert held_by_b.version == 1
        # The seats' clocks run out; a plays both defaults (take5 seats choose at once).
        clock.now += MOVE_CLOCK_MS
        await a.run_clock(created.id)
        stored = await store_a.load(created.id)
        assert stored is not None
        defaults = [(r.seq, r.request_id) for r in stored.actions]
        assert len(defaults) == 2 and all(r.clock_default for r in stored.actions)
        # b's timer fires with its match at version 1: its first append is a duplicate.
        await asyncio.sleep(MOVE_CLOCK_MS / 1000 + 0.6)
        assert appends, "b's clock never ran"
        assert appends[0].request_id == defaults[0][1]
        assert len(appends) <= 2, f"b appended {len(appends)} times: the stale clock looped"
        assert b.matches[created.id].version == 3  # b replayed the log: both defaults
        after = await store_a.load(created.id)
        assert after is not None
        assert [(r.seq, r.request_id) for r in after.actions] == defaults
    finally:
        await a.close()
        await b.close()
        await store_a.close()
        await store_b.close()
