"""Subscribe.only_when_acting: a bot's stream carries one view per decision, plus the end.

Through a real server: a seat that asks for views only when acting gets exactly the views
where one of its decisions begins (it is in to_act, with legal actions) and the final view,
never a view of another seat's sealed commitment; a spectator (and a seat that asks for
every view) still gets every version; the acknowledgement of an action comes before the
view it caused; and a stream resumed mid-match gets the current view when the seat must
act now.
"""

from __future__ import annotations

import asyncio
from typing import Any

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2

FINISHED = common_pb2.MATCH_STATUS_FINISHED


async def test_a_bot_gets_one_view_per_decision_and_the_final_view(table: Any, server: Any) -> None:
    match = await table.create(4, options={"deals": "1"})
    spectated: list[int] = []

    async def watch() -> None:
        async for view in table.client.spectate(match.match_id):
            spectated.append(view.version)

    watcher = asyncio.ensure_future(watch())
    seen: dict[int, list[common_pb2.View]] = {s.seat: [] for s in match.seats}
    acked: dict[int, int] = {s.seat: 0 for s in match.seats}

    def viewer(seat: int) -> Any:
        return lambda view: seen[seat].append(view)

    def acker(seat: int) -> Any:
        def on_ack(_request: Any, _response: Any) -> None:
            acked[seat] += 1

        return on_ack

    finals = await asyncio.gather(
        *(
            play_seat(
                table.client,
                seat,
                RandomBot(seat.seat),
                on_view=viewer(seat.seat),
                on_ack=acker(seat.seat),
            )
            for seat in match.seats
        )
    )
    await asyncio.wait_for(watcher, 10)
    last = finals[0].version
    assert table.contiguous(spectated) and spectated[-1] == last  # spectators: every version
    for seat, views in seen.items():
        *deciding, final = views
        assert final.status == FINISHED and final.version == last
        for view in deciding:
            assert seat in view.to_act and view.legal_actions, (seat, view.version)
        # One view per decision: the seat acted on each one it was sent.
        assert len(deciding) == acked[seat], (seat, len(deciding), acked[seat])
    # Far fewer views than versions x seats: sealed commitments are not pushed to anyone.
    assert sum(len(v) for v in seen.values()) < len(match.seats) * last / 2


async def test_resumed_stream_gets_the_current_view_when_the_seat_must_act(
    table: Any, server: Any
) -> None:
    match = await table.create(2)
    seat0, seat1 = match.seats
    first = await table.view(seat0)
    # Seat 0 commits; seat 1 still has its first decision open.
    card = first.legal_actions[0]
    await table.submit(seat0, card, first.version)
    call = table.client.play_stream(seat1)
    try:
        subscribe = match_service_pb2.Subscribe(
            match_id=match.match_id, since_version=first.version, only_when_acting=True
        )
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
        subscribed = await call.read()
        assert subscribed.subscribed.version == first.version + 1
        # Seat 1's decision began at the first version (already seen), but it must act
        # now: the current view is sent so the stream does not sit silent.
        current = await asyncio.wait_for(call.read(), 5)
        assert current.view.version == first.version + 1
        assert 1 in current.view.to_act and current.view.legal_actions
    finally:
        call.cancel()

    call = table.client.play_stream(seat0)
    try:
        subscribe = match_service_pb2.Subscribe(
            match_id=match.match_id, since_version=first.version, only_when_acting=True
        )
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
        assert (await call.read()).WhichOneof("event") == "subscribed"
        # Seat 0 has committed and waits: nothing to send it until its next decision.
        try:
            extra = await asyncio.wait_for(call.read(), 0.5)
        except TimeoutError:
            extra = None
        assert extra is None, extra
    finally:
        call.cancel()


async def test_the_ack_comes_before_the_view_it_caused(table: Any, server: Any) -> None:
    match = await table.create(2)
    seat0, seat1 = match.seats
    first = await table.view(seat0)
    await table.submit(seat0, first.legal_actions[0], first.version)
    call = table.client.play_stream(seat1)
    try:
        subscribe = match_service_pb2.Subscribe(
            match_id=match.match_id, since_version=first.version + 1, only_when_acting=True
        )
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))
        assert (await call.read()).WhichOneof("event") == "subscribed"
        view = await table.view(seat1)
        submit = match_service_pb2.SubmitActionRequest(
            match_id=match.match_id,
            expected_version=view.version,
            request_id="ack-before-view-0001",
            action=view.legal_actions[0],
        )
        await call.write(match_service_pb2.PlayRequest(submit=submit))
        answer = await asyncio.wait_for(call.read(), 5)
        # The acknowledgement is queued ahead of the view the action caused.
        assert answer.WhichOneof("event") == "result"
        assert answer.result.WhichOneof("result") == "accepted"
        caused = answer.result.accepted.version
        now = await table.view(seat1)
        if now.version == caused and 1 in now.to_act:
            # Both cards were revealed and seat 1's next decision begins at once.
            following = await asyncio.wait_for(call.read(), 5)
            assert following.view.version == caused
    finally:
        call.cancel()
