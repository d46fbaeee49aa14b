"""F. Clocks and disconnects: silent seats get the documented default, streams resume.

reliability.md F1 and F3.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import grpc

from speeltafel.sdk.runner import RunStats
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.engine.core import Rng, shuffle_key
from speeltafel.server.engine.games import take5

GAME = take5.GAME
FINISHED = common_pb2.MATCH_STATUS_FINISHED


def replay(record: common_pb2.MatchRecord) -> list[Any]:
    """Every state of a recorded match (index = version - 1)."""
    key = shuffle_key(record.server_seed, [s.entropy for s in record.seat_records])
    presets = [list(d.cards) for d in record.preset_decks]
    state = GAME.new(dict(record.options), record.seats, Rng(key), presets)
    states = [state]
    for action in record.actions:
        state = GAME.apply(state, action.seat, GAME.parse_action(action.action))
        states.append(state)
    return states


def documented_default(state: Any, seat: int) -> str:
    """take5.py: the lowest card in hand; the row with the fewest heads, ties to the lowest."""
    if state.phase is take5.Phase.SELECT:
        return f"select:{min(state.hands[seat])}"
    costs = [sum(take5.heads(c) for c in cards) for cards in state.rows]
    return f"row:{costs.index(min(costs)) + 1}"


# --------------------------------------------------------------------------- F1


async def test_f1_a_silent_seat_gets_the_default_move(table: Any, server: Any) -> None:
    match = await table.create(options={"deals": "1"}, move_clock_ms=50)
    assert match.created.move_clock_ms == 50
    silent = match.seats[1]  # joined, and never says a word
    view = await table.view(silent)
    assert view.clock.move_clock_ms == 50 and view.clock.deadline_unix_ms > 0
    (final,) = await asyncio.wait_for(table.play_out(match, seats=[match.seats[0]]), 30)
    assert final.status == FINISHED
    assert (await table.view(silent)).status == FINISHED
    record = await table.client.record(match.match_id)
    assert record.move_clock_ms == 50
    by_silent = [a for a in record.actions if a.seat == 1]
    assert len(by_silent) >= 12 and all(a.clock_default for a in by_silent)
    states = replay(record)
    # Every clock default is the documented move, played no earlier than the deadline.
    since = dict.fromkeys(GAME.to_act(states[0]), record.started_unix_ms)
    defaults = 0
    for index, action in enumerate(record.actions):
        state = states[index]
        if action.clock_default:
            defaults += 1
            assert action.action == documented_default(state, action.seat), index
            assert action.server_time_unix_ms >= since[action.seat] + record.move_clock_ms
        before, after = set(GAME.to_act(state)), GAME.to_act(states[index + 1])
        since = {
            s: since[s]
            if s != action.seat and s in before and s in since
            else action.server_time_unix_ms
            for s in after
        }
    assert defaults >= len(by_silent)
    # Replaying the record reproduces the match.
    assert hashlib.sha256(GAME.encode(states[-1])).hexdigest() == record.final_state_sha256
    summary = await table.client.get_match(match.match_id)
    assert list(summary.outcome.scores) == list(GAME.outcome(states[-1]).scores)


async def test_f1_the_clock_counts_for_a_row_choice_too(table: Any, server: Any) -> None:
    # Seat 0 must choose a row after turn 1 and never does: the cheapest row is taken.
    deck = table.trial_deck([range(1, 13), range(13, 25)], [25, 30, 27])  # heads 2, 3, 1
    match = await table.create(deck=deck, options={"deals": "1"}, move_clock_ms=60)
    seat0, seat1 = match.seats
    # Both seats select their lowest card, which is also their clock default: should the
    # clock beat a slow test machine to it, the server has played the very same cards.
    for seat, card in ((seat0, 1), (seat1, 13)):
        try:
            await table.submit(seat, table.select(card))
        except grpc.aio.AioRpcError as err:
            assert err.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION)
    for _ in range(300):
        view = await table.view(seat0)
        if view.version > 3:
            break
        await asyncio.sleep(0.01)
    assert view.version >= 4, view
    placed = view.take5.history[0].placements
    assert (placed[0].card, placed[0].row, placed[0].chosen) == (1, 3, True)
    assert list(placed[0].taken) == [27]


# --------------------------------------------------------------------------- F3


async def _stream_seat(
    table: Any,
    seat: Any,
    since: int,
    stop_after: int | None = None,
) -> list[int]:
    """Play ``seat`` over one Play stream from ``since_version``; the versions received.

    Stops (cancelling the call) after ``stop_after`` views, or at the finished view.
    """
    call = table.client.play_stream(seat)
    subscribe = match_service_pb2.Subscribe(match_id=seat.match_id, since_version=since)
    await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
    got: list[int] = []
    pending: str | None = None
    floor = 0
    latest: common_pb2.View | None = None
    try:
        async for response in call:
            if response.WhichOneof("event") == "view":
                assert not response.resync
                latest = response.view
                got.append(latest.version)
                if latest.status == FINISHED or (stop_after and len(got) >= stop_after):
                    break
            elif response.WhichOneof("event") == "result":
                result = response.result
                assert result.request_id == pending
                if result.WhichOneof("result") == "accepted":
                    floor = result.accepted.version
                pending = None
            if (
                pending is None
                and latest is not None
                and latest.version >= floor
                and latest.legal_actions
            ):
                pending = f"{seat.seat}-{latest.version}"
                submit = match_service_pb2.SubmitActionRequest(
                    match_id=seat.match_id,
                    expected_version=latest.version,
                    request_id=pending,
                    action=latest.legal_actions[0],
                )
                await call.write(match_service_pb2.PlayRequest(submit=submit))
    finally:
        call.cancel()
    return got


async def test_f3_a_dropped_stream_resumes_without_gap_or_duplicate(
    table: Any, server: Any
) -> None:
    match = await table.create(options={"deals": "1"})
    seat0, seat1 = match.seats
    other = asyncio.ensure_future(table.play_out(match, seats=[seat1]))
    first = await _stream_seat(table, seat0, 0, stop_after=6)
    assert len(first) == 6 and table.contiguous(first)
    # While seat 0 is away the match moves on (seat 0 acting through unary calls).
    target = first[-1] + 4
    for _ in range(500):
        view = await table.view(seat0)
        if view.version >= target or view.status == FINISHED:
            break
        if view.legal_actions:
            await table.submit(seat0, view.legal_actions[-1], view.version)
        else:
            await asyncio.sleep(0.005)
    assert view.version >= target
    second = await _stream_seat(table, seat0, first[-1])
    await other
    versions = first + second
    assert second[0] == first[-1] + 1
    assert table.contiguous(versions) and len(set(versions)) == len(versions)
    summary = await table.client.get_match(match.match_id)
    assert summary.status == FINISHED and versions[-1] == summary.version


async def test_f3_resume_points(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0 = match.seats[0]
    await table.submit(seat0, table.select(2), 1)  # version 2

    async def first_response(since: int) -> match_service_pb2.PlayResponse | None:
        call = table.client.play_stream(seat0)
        subscribe = match_service_pb2.Subscribe(match_id=match.match_id, since_version=since)
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
        try:
            # Every subscription is answered at once, whatever since_version says.
            subscribed = await asyncio.wait_for(call.read(), 5)
            assert subscribed.subscribed.version == 2, subscribed
            return await asyncio.wait_for(call.read(), 0.3)
        except TimeoutError:
            return None
        finally:
            call.cancel()

    fresh = await first_response(0)  # a fresh start: the snapshot first
    assert fresh is not None and fresh.view.version == 2 and not fresh.resync
    assert fresh.view.take5.selected == 2 and len(fresh.view.take5.hand) == 11
    behind = await first_response(1)  # one version behind: exactly the missing one
    assert behind is not None and behind.view.version == 2 and not behind.resync
    assert await first_response(2) is None  # up to date: nothing until something changes
    ahead = await first_response(50)  # from the future: a fresh snapshot, marked resync
    assert ahead is not None and ahead.view.version == 2 and ahead.resync


class SlowBot:
    """A random bot that thinks for a few milliseconds (so a restart lands mid-match)."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    async def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        await asyncio.sleep(0.004)
        return self._random.choice(list(legal_actions))


async def test_f3_play_seat_reconnects_across_a_server_restart(table: Any) -> None:
    await table.start(table.sqlite_store())
    port = table.running.port
    match = await table.create(options={"deals": "2"})
    client = table.connect(
        **{
            "grpc.initial_reconnect_backoff_ms": 50,
            "grpc.min_reconnect_backoff_ms": 50,
            "grpc.max_reconnect_backoff_ms": 250,
        }
    )
    seen: dict[int, list[int]] = defaultdict(list)
    midway = asyncio.Event()

    def on_view(seat: int, view: common_pb2.View) -> None:
        seen[seat].append(view.version)
        if view.version >= 10:
            midway.set()

    stats = [RunStats(), RunStats()]
    play = asyncio.ensure_future(
        table.play_out(
            match,
            client=client,
            on_view=on_view,
            stats=stats,
            bots=[SlowBot(1), SlowBot(2)],
        )
    )
    await asyncio.wait_for(midway.wait(), 20)
    stopped_at = (await table.client.get_match(match.match_id)).version
    await table.stop(grace=0.05)
    await asyncio.sleep(0.1)  # the bots find nobody there for a moment
    await table.start(table.sqlite_store(), port=port)
    finals = await asyncio.wait_for(play, 60)
    assert all(f.status == FINISHED for f in finals)
    assert all(s.reconnects >= 1 for s in stats), stats
    summary = await table.client.get_match(match.match_id)
    assert summary.status == FINISHED and summary.version > stopped_at
    for seat, versions in seen.items():
        assert table.contiguous(versions), (seat, versions)
        assert versions[-1] == summary.version
    record = await table.client.record(match.match_id)
    assert [a.seq for a in record.actions] == list(range(1, summary.version))
    states = replay(record)
    assert hashlib.sha256(GAME.encode(states[-1])).hexdigest() == record.final_state_sha256


async def test_f3_a_stream_cut_by_the_server_is_resumed_by_play_seat(
    table: Any, server: Any
) -> None:
    """The server ends a seat's stream with an error mid-match; play_seat resumes it."""
    match = await table.create(options={"deals": "1"})
    seen: dict[int, list[int]] = defaultdict(list)
    runtime = server.runtime
    cut: list[int] = []

    def on_view(seat: int, view: common_pb2.View) -> None:
        seen[seat].append(view.version)
        if seat == 0 and view.version >= 5 and not cut:
            live = runtime.matches[match.match_id]
            for outbox in list(live.subscribers):
                if outbox.seat == 0:
                    # Something the stream cannot send: its handler fails, the call ends
                    # with INTERNAL (opaque), and the client must reconnect.
                    outbox.push_result(object())
                    cut.append(view.version)

    stats = [RunStats(), RunStats()]
    finals = await asyncio.wait_for(
        table.play_out(match, on_view=on_view, stats=stats, bots=[SlowBot(3), SlowBot(4)]), 30
    )
    assert cut and all(f.status == FINISHED for f in finals)
    assert stats[0].reconnects >= 1
    for seat, versions in seen.items():
        assert table.contiguous(versions), (seat, versions)


async def test_f3_streams_of_a_seat_are_capped_and_freed_on_disconnect(
    table: Any, server: Any
) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0 = match.seats[0]
    calls = []
    for _ in range(server.runtime.config.max_subscribers_per_seat):
        call = table.client.play_stream(seat0)
        subscribe = match_service_pb2.Subscribe(match_id=match.match_id)
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
        assert (await call.read()).subscribed.version == 1
        assert (await call.read()).view.version == 1
        calls.append(call)
    extra = table.client.play_stream(seat0)
    await extra.write(
        match_service_pb2.PlayRequest(
            subscribe=match_service_pb2.Subscribe(match_id=match.match_id)
        )
    )
    await table.fails(extra.read(), grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_streams")
    for call in calls:
        call.cancel()
    # Once the dropped streams are gone, the seat may subscribe again.
    for _ in range(100):
        if not runtime_subscribers(server, match.match_id):
            break
        await asyncio.sleep(0.01)
    again = table.client.play_stream(seat0)
    await again.write(
        match_service_pb2.PlayRequest(
            subscribe=match_service_pb2.Subscribe(match_id=match.match_id)
        )
    )
    assert (await again.read()).subscribed.version == 1
    assert (await again.read()).view.version == 1
    again.cancel()
    assert (await table.view(seat0)).version == 1


def runtime_subscribers(server: Any, match_id: str) -> int:
    return len(server.runtime.matches[match_id].subscribers)
