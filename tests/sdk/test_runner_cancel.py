"""A bot's task cancelled by its owner stops, whatever the stream is doing at that moment.

On Python 3.11 ``asyncio.wait_for`` swallows the caller's cancellation when the awaited
operation completes in the same turn of the loop; ``play_seat`` waited for the answer to
its subscription that way, so a bot cancelled just as that answer arrived played on (a
benchmark's table hung for minutes after its window). The stream here is a fake whose
read the test completes in the same turn as it cancels the task.
"""

from __future__ import annotations

import asyncio
from typing import Any

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import Seat
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2


class FakeCall:
    """A Play stream whose next read the test answers."""

    def __init__(self) -> None:
        self.answers: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()
        self.cancelled = False

    async def write(self, _request: Any) -> None:
        return None

    async def read(self) -> Any:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.answers.put(answer)
        return await answer

    def cancel(self) -> bool:
        self.cancelled = True
        return True


class FakeClient:
    def __init__(self) -> None:
        self.call = FakeCall()

    def play_stream(self, _seat: Seat) -> FakeCall:
        return self.call


def subscribed() -> match_service_pb2.PlayResponse:
    return match_service_pb2.PlayResponse(
        subscribed=match_service_pb2.Subscribed(version=3, status=common_pb2.MATCH_STATUS_RUNNING)
    )


async def test_a_bot_cancelled_as_its_subscription_is_answered_stops() -> None:
    client = FakeClient()
    seat = Seat(match_id="m", seat=0, token="t")
    task = asyncio.ensure_future(play_seat(client, seat, RandomBot(seed=1)))  # type: ignore[arg-type]
    answer = await asyncio.wait_for(client.call.answers.get(), 5)
    answer.set_result(subscribed())  # the answer arrives...
    task.cancel()  # ...in the same turn as the owner cancels
    done, _ = await asyncio.wait({task}, timeout=2)
    assert task in done, "the cancelled bot went on reading its stream"
    assert task.cancelled()
    assert client.call.cancelled  # and its stream was cancelled on the way out


async def test_a_bot_cancelled_while_waiting_for_a_view_stops() -> None:
    client = FakeClient()
    seat = Seat(match_id="m", seat=0, token="t")
    task = asyncio.ensure_future(play_seat(client, seat, RandomBot(seed=1)))  # type: ignore[arg-type]
    (await asyncio.wait_for(client.call.answers.get(), 5)).set_result(subscribed())
    await asyncio.wait_for(client.call.answers.get(), 5)  # live: waiting for a view
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2)
    assert task in done and task.cancelled()
