"""Late calls to a finished match answer as its final state would, without that state.

A finished match lingers in memory for late calls, compacted: its action rows packed, and
its engine state let go of once the service has kept the final views serialised
(``MatchService.keep_final_views``). A match that finished shortly before a restart is not
loaded at start; only its seats' tokens are known, and a late call loads it
(``MatchRuntime._load_lingering``). Either way every late call answers what it would have
from the final state: each seat's GetView (its own view, never another seat's), a Play
stream's and a spectator's final view, GetMatch, GetMatchRecord, and a retried
SubmitAction (its stored answer, exactly once; a new request is refused as game over).

The reference answers are built from a replay of the stored log that keeps its state.
The rates are lifted: a whole match by unary calls and every late call at once are this
test's point, not the limits (test_fairness checks those).
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import grpc
import pytest

from speeltafel.sdk.client import Seat, new_request_id
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig
from speeltafel.server.engine.registry import GAMES, get_game
from speeltafel.server.rpc.service import FINAL_VIEWS, MatchService, _record
from speeltafel.server.store.base import MatchStore
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.wire.common import STATUSES, outcome_to_proto

FINISHED = common_pb2.MATCH_STATUS_FINISHED
Sent = tuple[Seat, match_service_pb2.SubmitActionRequest, match_service_pb2.SubmitActionResponse]


async def play_to_the_end(table: Any, seats: int = 3) -> tuple[Any, list[Sent]]:
    """A Take 5 match played to its end by unary calls (each seat's first legal action),
    with every request and its answer."""
    match = await table.create(seats)
    sent: list[Sent] = []
    while True:
        views = [await table.view(seat) for seat in match.seats]
        if views[0].status == FINISHED:
            return match, sent
        for seat, view in zip(match.seats, views, strict=True):
            if view.legal_actions:
                request = match_service_pb2.SubmitActionRequest(
                    match_id=match.match_id,
                    expected_version=view.version,
                    request_id=new_request_id(),
                    action=view.legal_actions[0],
                )
                answer = await table.client.stub.SubmitAction(request, metadata=seat.metadata)
                sent.append((seat, request, answer))
                break


async def reference(store: MatchStore, match_id: str) -> dict[str, Any]:
    """What the final state answers with: a replay of the log, its state kept."""
    log = await store.load(match_id)
    assert log is not None and log.finished is not None
    replayed = Match.replay(log, get_game(log.created.game))
    assert replayed.state is not None
    service = MatchService(MatchRuntime(MemoryStore()))
    final = replayed.current
    return {
        "views": [service._view(replayed, final, s) for s in range(log.created.seats)],
        "spectator": service._view(replayed, final, None),
        "bytes": [service._view_bytes(replayed, final, s) for s in range(log.created.seats)],
        "record": _record(replayed),
        "version": replayed.version,
        "outcome": outcome_to_proto(replayed.outcome),
    }


async def first_play_view(table: Any, seat: Seat) -> common_pb2.View:
    """The view a fresh Play stream of ``seat`` starts with (after its subscribed)."""
    call = table.client.stub.Play(metadata=seat.metadata)
    subscribe = match_service_pb2.Subscribe(match_id=seat.match_id, since_version=0)
    await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
    first = await call.read()
    assert first.WhichOneof("event") == "subscribed"
    assert first.subscribed.status == FINISHED
    second = await call.read()
    assert second.WhichOneof("event") == "view"
    call.cancel()
    view: common_pb2.View = second.view
    return view


async def check_late_calls(
    table: Any, match: Any, sent: list[Sent], expected: dict[str, Any]
) -> None:
    """Every late call answers as the final state would."""
    client = table.client
    for seat, view, raw in zip(match.seats, expected["views"], expected["bytes"], strict=True):
        late = await table.view(seat)
        assert late == view and late.seat == seat.seat
        assert late.SerializeToString(deterministic=True) == view.SerializeToString(
            deterministic=True
        )
        assert common_pb2.View.FromString(raw) == view
        assert await first_play_view(table, seat) == view
    spectated = [v async for v in client.spectate(match.match_id)]
    assert spectated == [expected["spectator"]]
    summary = await client.get_match(match.match_id)
    assert summary.status == FINISHED and summary.version == expected["version"]
    assert summary.outcome == expected["outcome"]
    assert summary.seat_names == [f"seat-{s}" for s in range(len(match.seats))]
    assert await client.record(match.match_id) == expected["record"]
    # Exactly once after the end: every request again gets its stored answer.
    for seat, request, answer in sent:
        again = await client.stub.SubmitAction(request, metadata=seat.metadata)
        assert (again.seq, again.version, again.duplicate) == (answer.seq, answer.version, True)
    seat, request, _ = sent[-1]
    fresh = match_service_pb2.SubmitActionRequest()
    fresh.CopyFrom(request)
    fresh.request_id = new_request_id()
    await table.fails(
        client.stub.SubmitAction(fresh, metadata=seat.metadata),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    other = match_service_pb2.SubmitActionRequest()
    other.CopyFrom(request)
    other.action.CopyFrom(table.select(999))
    await table.fails(
        client.stub.SubmitAction(other, metadata=seat.metadata),
        grpc.StatusCode.ALREADY_EXISTS,
        "request_id_reused",
    )


def compacted(running: Any, match_id: str) -> Match:
    """The runtime's finished match, checked to hold no engine state."""
    match: Match = running.runtime.matches[match_id]
    assert match.compacted and match.state is None
    assert all(snapshot.state is None for snapshot in match.history)
    assert set(match.current.cache) == {FINAL_VIEWS}
    return match


async def test_late_calls_to_a_finished_match_answer_as_its_final_state(table: Any) -> None:
    running = await table.start(limits=table.LIFTED_RATES)
    match, sent = await play_to_the_end(table)
    compacted(running, match.match_id)
    expected = await reference(running.store, match.match_id)
    # Seats' views differ (each holds its own penalty cards and seat), so a slice of
    # another seat's bytes would show here.
    assert len({v.SerializeToString(deterministic=True) for v in expected["views"]}) == 3
    await check_late_calls(table, match, sent, expected)
    compacted(running, match.match_id)  # late calls keep it lean


async def test_a_match_finished_before_a_restart_is_loaded_by_its_first_late_call(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = await table.start(table.sqlite_store(), limits=table.LIFTED_RATES)
    match, sent = await play_to_the_end(table)
    expected = await reference(running.store, match.match_id)
    await table.stop()
    await running.store.close()

    running = await table.start(table.sqlite_store(), limits=table.LIFTED_RATES)
    runtime = running.runtime
    await runtime.recovered()
    # Only its seats' tokens are known: nothing is replayed until a call asks.
    assert match.match_id not in runtime.matches
    assert {runtime.tokens[t] for t in runtime._lingering[match.match_id]} == {
        (match.match_id, s) for s in range(3)
    }
    loads: list[str] = []
    load = runtime.store.load

    async def counted(match_id: str) -> Any:
        loads.append(match_id)
        await asyncio.sleep(0.05)  # every call below arrives while the load is under way
        return await load(match_id)

    monkeypatch.setattr(runtime.store, "load", counted)
    asking = [match.seats[n % 3] for n in range(24)]  # 8 open calls per token (cap: 16)
    views = await asyncio.gather(*(table.view(seat) for seat in asking))
    assert loads == [match.match_id]  # one load however many calls ask at once
    assert views == [expected["views"][seat.seat] for seat in asking]
    compacted(running, match.match_id)
    await check_late_calls(table, match, sent, expected)
    await running.store.close()


async def test_tokens_of_an_unloaded_finished_match_go_at_the_end_of_its_linger(
    table: Any,
) -> None:
    running = await table.start(table.sqlite_store(), limits=table.LIFTED_RATES)
    match, _ = await play_to_the_end(table, seats=2)
    await table.stop()
    await running.store.close()

    running = await table.start(
        table.sqlite_store(), config=RuntimeConfig(finished_linger_s=0.3), limits=table.LIFTED_RATES
    )
    await running.runtime.recovered()
    assert match.match_id in running.runtime._lingering
    await asyncio.sleep(0.5)
    assert match.match_id not in running.runtime._lingering
    assert not running.runtime.tokens
    await table.fails(table.view(match.seats[0]), grpc.StatusCode.UNAUTHENTICATED)
    summary = await table.client.get_match(match.match_id)  # the store answers, as ever
    assert summary.status == STATUSES["finished"]
    await running.store.close()


async def test_a_lingering_match_is_forgotten_a_linger_after_its_end_not_the_restart(
    table: Any,
) -> None:
    # Linger 3 s; the server is down for 1 s of it. The tokens must go 3 s after the end
    # (at most 2 s after the restart), not 3 s after the restart.
    config = RuntimeConfig(finished_linger_s=3.0)
    running = await table.start(table.sqlite_store(), config=config, limits=table.LIFTED_RATES)
    match, _ = await play_to_the_end(table, seats=2)
    await table.stop()
    await running.store.close()
    await asyncio.sleep(1.0)

    running = await table.start(table.sqlite_store(), config=config, limits=table.LIFTED_RATES)
    await running.runtime.recovered()
    restarted = time.monotonic()
    assert match.match_id in running.runtime._lingering  # within its linger still
    await asyncio.sleep(restarted + 2.5 - time.monotonic())
    assert match.match_id not in running.runtime._lingering
    assert not running.runtime.tokens
    await running.store.close()


SHORT = {"kleurenwiezen": {"deals": "1"}}  # one deal is a whole match's worth of views


@pytest.mark.parametrize("game_id", sorted(GAMES))
async def test_every_games_final_views_are_kept_exactly(game_id: str) -> None:
    """In process, every registered game (Beverbende's seat views are built whole, not
    appended to the public bytes): the views kept at the end are the views of the final
    state, each seat its own, and the match holds no state afterwards."""
    store = MemoryStore()
    runtime = MatchRuntime(store)
    service = MatchService(runtime)
    game = get_game(game_id)
    seats = game.info.seats_for({})[0]
    match = (await runtime.create_match(game_id, seats, SHORT.get(game_id, {}))).match
    for seat in range(seats):
        await runtime.join(match.id, seat, f"p{seat}", b"")
    chooser = random.Random(7)
    number = 0
    while (live := runtime.matches[match.id]).status != "finished":
        seat = chooser.choice(live.to_act())
        action = chooser.choice(game.legal_actions(live.state, seat))
        await runtime.submit(match.id, seat, live.version, f"r{number}", action)
        number += 1
    live = runtime.matches[match.id]
    assert live.state is None and set(live.current.cache) == {FINAL_VIEWS}
    log = await store.load(match.id)
    assert log is not None
    replayed = Match.replay(log, game)
    for seat in [None, *range(seats)]:
        expected = service._view(replayed, replayed.current, seat)
        assert service._view(live, live.current, seat) == expected
        kept = service._view_bytes(live, live.current, seat)
        assert common_pb2.View.FromString(kept) == expected
        assert kept == service._view_bytes(replayed, replayed.current, seat)
    await runtime.close()


async def shrunk(runtime: MatchRuntime, match_id: str, within_s: float = 10.0) -> None:
    """Wait until ``match_id`` is out of memory, only its seats' tokens kept."""
    deadline = time.monotonic() + within_s
    while match_id in runtime.matches:
        assert time.monotonic() < deadline, "the finished match stayed whole"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_finished_match_keeps_only_its_tokens_after_a_while_and_answers_the_same(
    table: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whole for 0.5 s after its end (or after a late call loaded it), tokens for 60 s.
    config = RuntimeConfig(finished_whole_s=0.5, finished_linger_s=60.0)
    store = table.sqlite_store() if kind == "sqlite" else MemoryStore()
    running = await table.start(store, config=config, limits=table.LIFTED_RATES)
    runtime = running.runtime
    match, sent = await play_to_the_end(table)
    expected = await reference(running.store, match.match_id)
    await shrunk(runtime, match.match_id)
    assert {runtime.tokens[t] for t in runtime._lingering[match.match_id]} == {
        (match.match_id, s) for s in range(3)
    }
    assert runtime.running_matches == runtime.waiting_matches == 0
    loads: list[str] = []
    load = runtime.store.load

    async def counted(match_id: str) -> Any:
        loads.append(match_id)
        return await load(match_id)

    monkeypatch.setattr(runtime.store, "load", counted)
    assert await table.view(match.seats[1]) == expected["views"][1]
    assert loads == [match.match_id]  # the first late call loaded it ...
    compacted(running, match.match_id)  # ... lean, as a match finished live
    await check_late_calls(table, match, sent, expected)
    await shrunk(runtime, match.match_id)  # and it shrinks again
    assert match.match_id in runtime._lingering
    await running.store.close()


async def test_a_repeated_create_gets_its_match_after_the_match_shrank() -> None:
    runtime = MatchRuntime(MemoryStore(), RuntimeConfig(finished_whole_s=0.0))
    created = await runtime.create_match("take5", 2, {"edition": "trial"}, request_id="make-1")
    match_id = created.match.id
    for seat in range(2):
        await runtime.join(match_id, seat, f"p{seat}", b"")
    chooser = random.Random(3)
    number = 0
    # With no time whole at all it may leave memory as soon as its end is stored.
    while (live := runtime.matches.get(match_id)) is not None and live.status != "finished":
        seat = chooser.choice(live.to_act())
        action = chooser.choice(live.game.legal_actions(live.state, seat))
        await runtime.submit(match_id, seat, live.version, f"r{number}", action)
        number += 1
    await shrunk(runtime, match_id)
    assert (await runtime.get(match_id)).status == "finished"
    await shrunk(runtime, match_id)
    again = await runtime.create_match("take5", 2, {"edition": "trial"}, request_id="make-1")
    assert again.duplicate and again.match.id == match_id
    assert again.match.status == "finished"
    await runtime.close()
