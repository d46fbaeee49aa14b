"""The protocol as an outside bot author meets it: the order of messages on a stream, what a
subscription is answered with, how a stream ends, what an error tells a client.

Written against raw stream messages (no SDK runner), as a bot in another language sees them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from speeltafel.sdk.v1 import common_pb2, match_service_pb2

Code = grpc.StatusCode
FINISHED = common_pb2.MATCH_STATUS_FINISHED


async def _open(table: Any, seat: Any, since: int) -> Any:
    call = table.client.play_stream(seat)
    subscribe = match_service_pb2.Subscribe(match_id=seat.match_id, since_version=since)
    await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
    return call


def _submit(seat: Any, version: int, request_id: str, action: Any) -> Any:
    return match_service_pb2.PlayRequest(
        submit=match_service_pb2.SubmitActionRequest(
            match_id=seat.match_id,
            expected_version=version,
            request_id=request_id,
            action=action,
        )
    )


async def test_the_answer_to_an_action_comes_before_the_views_it_caused(
    table: Any, server: Any
) -> None:
    """A bot that acts on every view where it must act never double-submits: its answer is
    in hand before the view of the version its action made."""
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    await table.submit(seat1, table.select(13), 1)  # seat 1 has committed; seat 0 reveals
    call = await _open(table, seat0, since=2)
    assert (await call.read()).subscribed.version == 2
    await call.write(_submit(seat0, 2, "last-card-of-the-turn", table.select(1)))
    events = []
    while len(events) < 2:
        response = await asyncio.wait_for(call.read(), 5)
        events.append(response.WhichOneof("event"))
        if events[-1] == "result":
            assert response.result.accepted.version == 3, response
        else:
            assert response.view.version == 3
    call.cancel()
    assert events == ["result", "view"]


async def test_the_documented_simple_bot_plays_a_whole_match_without_a_refusal(
    table: Any, server: Any
) -> None:
    """The bot of docs/protocol.md, in a few lines: one action in flight; act on the newest
    view that lists legal actions once the last answer is in and the view is at least as new
    as the version that answer made. Every action it sends is accepted."""
    match = await table.create()

    async def simple_bot(seat: Any) -> tuple[int, int]:
        call = await _open(table, seat, since=0)
        accepted = refused = 0
        in_flight = False
        floor = 0
        latest: Any = None
        async for response in call:
            kind = response.WhichOneof("event")
            if kind == "result":
                in_flight = False
                if response.result.WhichOneof("result") == "accepted":
                    accepted += 1
                    floor = response.result.accepted.version
                else:
                    refused += 1
            elif kind == "view":
                latest = response.view
                if latest.status == FINISHED:
                    break
            ready = latest is not None and latest.legal_actions and latest.version >= floor
            if ready and not in_flight:
                in_flight = True
                request_id = f"{seat.seat}-{latest.version}"
                action = latest.legal_actions[0]
                await call.write(_submit(seat, latest.version, request_id, action))
        call.cancel()
        return accepted, refused

    results = await asyncio.wait_for(
        asyncio.gather(*(simple_bot(seat) for seat in match.seats)), 60
    )
    assert all(refused == 0 for _, refused in results), results
    record = await table.client.record(match.match_id)
    assert sum(accepted for accepted, _ in results) == len(record.actions)


async def test_subscribing_at_the_current_version_is_answered_at_once(
    table: Any, server: Any
) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    call = await _open(table, match.seats[0], since=1)
    first = await asyncio.wait_for(call.read(), 5)
    assert first.WhichOneof("event") == "subscribed"
    assert (first.subscribed.version, first.subscribed.status) == (
        1,
        common_pb2.MATCH_STATUS_RUNNING,
    )
    assert first.subscribed.preset_deck  # dealt from a preset deck: its creator knows it
    # Nothing else until something changes; then exactly the next version.
    await table.submit(match.seats[1], table.select(13), 1)
    nxt = await asyncio.wait_for(call.read(), 5)
    assert nxt.view.version == 2
    call.cancel()


async def test_a_half_close_ends_the_stream_after_its_answers(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0 = match.seats[0]
    call = await _open(table, seat0, since=1)
    await call.write(_submit(seat0, 1, "before-the-close", table.select(1)))
    await call.done_writing()
    kinds = []
    async for response in call:  # ends by itself
        kinds.append(response.WhichOneof("event"))
        if kinds[-1] == "result":
            assert response.result.accepted.version == 2
    assert kinds[0] == "subscribed" and "result" in kinds
    assert await call.code() == Code.OK


async def test_a_spectator_half_close_is_not_needed_the_stream_ends_after_the_final_view(
    table: Any, server: Any
) -> None:
    match = await table.create()
    await table.play_out(match)
    # A finished match: Subscribed, then the final snapshot, then the end.
    responses = [
        r
        async for r in table.client.stub.Spectate(
            match_service_pb2.SpectateRequest(match_id=match.match_id)
        )
    ]
    assert [r.WhichOneof("event") for r in responses] == ["subscribed", "view"]
    assert responses[1].view.status == FINISHED
    # Subscribed at the final version: answered, and the stream ends.
    final = responses[1].view.version
    again = [
        r
        async for r in table.client.stub.Spectate(
            match_service_pb2.SpectateRequest(match_id=match.match_id, since_version=final)
        )
    ]
    assert [r.WhichOneof("event") for r in again] == ["subscribed"]


async def test_aborted_carries_the_current_version(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    await table.submit(seat0, table.select(1), 1)
    await table.submit(seat1, table.select(13), 2)  # version 3: seat 0 chooses a row
    err = await table.fails(table.submit(seat0, table.row(1), 1), Code.ABORTED)
    info = table.error_info(err)
    assert info is not None and info.metadata["version"] == "3"
    # The stream says the same in its ActionError.
    call = await _open(table, seat0, since=3)
    assert (await call.read()).subscribed.version == 3
    await call.write(_submit(seat0, 2, "stale", table.row(1)))
    error = (await asyncio.wait_for(call.read(), 5)).result.error
    call.cancel()
    assert (error.code, dict(error.metadata)) == (Code.ABORTED.value[0], {"version": "3"})


async def test_errors_never_repeat_unbounded_client_input(table: Any, server: Any) -> None:
    """A long option value or name must not make the error itself too large: the client
    still gets INVALID_ARGUMENT with its rule id, and the message stays short."""
    long = "x" * 20_000
    for options in ({"edition": long}, {long: "1"}, {"deals": long}):
        err = await table.fails(
            table.client.create_match("take5", 2, options=options), Code.INVALID_ARGUMENT
        )
        assert table.rule_of(err), options.keys()
        assert len(err.details() or "") <= 200
        assert long[:100] not in (err.details() or "")
    err = await table.fails(table.client.create_match(long, 2), Code.INVALID_ARGUMENT)
    assert table.rule_of(err) and len(err.details() or "") <= 200


async def test_a_preset_deal_says_so_to_every_seat(table: Any, server: Any) -> None:
    preset = await table.create(deck=table.STANDARD_DECK)
    assert preset.created.preset_deck
    assert all(joined.preset_deck for joined in preset.joined)
    assert all([(await table.view(seat)).preset_deck for seat in preset.seats])
    shuffled = await table.create()
    assert not shuffled.created.preset_deck
    assert not any(joined.preset_deck for joined in shuffled.joined)
    assert not any([(await table.view(seat)).preset_deck for seat in shuffled.seats])


async def test_a_malformed_message_is_answered_and_the_stream_reads_on(
    table: Any, server: Any
) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0 = match.seats[0]
    call = table.raw_channel().stream_stream("/speeltafel.v1.MatchService/Play")(
        metadata=seat0.metadata
    )
    subscribe = match_service_pb2.PlayRequest(
        subscribe=match_service_pb2.Subscribe(match_id=match.match_id, since_version=1)
    )
    await call.write(subscribe.SerializeToString())
    assert match_service_pb2.PlayResponse.FromString(await call.read()).subscribed.version == 1
    await call.write(b"\xff" * 16)
    error = match_service_pb2.PlayResponse.FromString(await call.read()).result.error
    assert (error.code, error.rule) == (Code.INVALID_ARGUMENT.value[0], "malformed_request")
    # The next message is read and answered, and a half-close still ends the stream.
    await call.write(_submit(seat0, 1, "after-garbage", table.select(1)).SerializeToString())
    await call.done_writing()
    kinds = []
    while (raw := await asyncio.wait_for(call.read(), 5)) is not grpc.aio.EOF:
        response = match_service_pb2.PlayResponse.FromString(raw)
        kinds.append(response.WhichOneof("event"))
        if kinds[-1] == "result":
            assert response.result.accepted.version == 2
    assert "result" in kinds
    assert await call.code() == Code.OK


async def test_request_ids_of_the_servers_clock_are_refused(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    err = await table.fails(
        table.submit(match.seats[0], table.select(1), 1, request_id="clock:1:1"),
        Code.INVALID_ARGUMENT,
        "request_id",
    )
    assert "clock:" in (err.details() or "")


async def test_an_early_end_is_a_version_of_its_own(table: Any, server: Any) -> None:
    """A match nobody plays is ended as abandoned; the end is one version above the last
    running one, so a stream resumed there gets the final view."""
    match = await table.create(move_clock_ms=20)
    views = [
        r.view
        async for r in table.client.stub.Spectate(
            match_service_pb2.SpectateRequest(match_id=match.match_id)
        )
        if r.HasField("view")
    ]
    final = views[-1]
    assert (final.status, final.outcome.termination) == (FINISHED, "abandoned")
    running = [v for v in views if v.status != FINISHED]
    assert final.version == running[-1].version + 1
    resumed = [
        r
        async for r in table.client.stub.Spectate(
            match_service_pb2.SpectateRequest(
                match_id=match.match_id, since_version=running[-1].version
            )
        )
    ]
    assert [r.WhichOneof("event") for r in resumed] == ["subscribed", "view"]
    assert resumed[1].view.version == final.version
