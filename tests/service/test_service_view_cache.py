"""GetView answers from a seat's view kept serialised per version (``MatchService._view``).

Only the clock's ``remaining_ms`` moves between two GetViews of one version, and it is set
on every answer; everything else is the view built once. Each seat gets its own view from
the cache (never another seat's), a new version gets a new view, and a clock extended after
a restart is a new snapshot with views of its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.app.match import Match
from speeltafel.server.rpc.service import MatchService


def hand(view: common_pb2.View) -> set[int]:
    """The cards a Take 5 view shows in its seat's hand."""
    return {card.number for card in view.take5.hand}


def built(service: MatchService, match: Match, seat: int) -> common_pb2.View:
    """The seat's view built afresh (the snapshot's cache emptied first)."""
    snapshot = match.current
    saved = dict(snapshot.cache)
    snapshot.cache.clear()
    try:
        return service._view(match, snapshot, seat)
    finally:
        snapshot.cache.clear()
        snapshot.cache.update(saved)


async def test_get_view_is_built_once_per_version_and_seat(table: Any) -> None:
    running = await table.start(limits=table.LIFTED_RATES)
    match = await table.create(2, deck=table.STANDARD_DECK, move_clock_ms=60_000)
    seats = match.seats
    first = await table.view(seats[0])
    snapshot = running.runtime.matches[match.match_id].current
    assert "seat_view:0" in snapshot.cache and "seat_view:1" not in snapshot.cache
    # Another seat of the same version: its own hand, never seat 0's.
    other = await table.view(seats[1])
    assert hand(first) == set(range(1, 13)) and hand(other) == set(range(13, 25))
    assert (first.seat, other.seat) == (0, 1)
    await asyncio.sleep(0.02)
    again = await table.view(seats[0])
    assert table.normalized(again) == table.normalized(first)
    assert again.clock.deadline_unix_ms == first.clock.deadline_unix_ms > 0
    assert 0 < again.clock.remaining_ms < first.clock.remaining_ms <= 60_000
    # What the cache answers is what a fresh build answers.
    service = MatchService(running.runtime)
    live = running.runtime.matches[match.match_id]
    for seat in (0, 1):
        fresh = built(service, live, seat)
        cached = service._view(live, live.current, seat)
        assert table.normalized(cached) == table.normalized(fresh)
    # A new version: new views (seat 0 has selected a card, which seat 1 sees it has done).
    await table.submit(seats[0], table.select(1))
    after = await table.view(seats[0])
    assert after.version == first.version + 1 and 1 not in hand(after)
    assert table.normalized(await table.view(seats[1])) == table.normalized(
        built(service, running.runtime.matches[match.match_id], 1)
    )
