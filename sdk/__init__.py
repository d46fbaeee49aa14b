"""speeltafel Python SDK: sync and async clients, the Bot protocol and a runner.

A bot is anything with ``choose(view, legal_actions) -> action``; :func:`play_seat` (async)
or :func:`run_bot` (blocking) plays a seat with it over one bidirectional stream.
"""

from speeltafel.sdk.client import AsyncClient, Client, Seat, new_request_id
from speeltafel.sdk.runner import Bot, RunStats, play_seat, run_bot
from speeltafel.sdk.v1 import common_pb2, match_service_pb2, take5_pb2

__all__ = [
    "AsyncClient",
    "Bot",
    "Client",
    "RunStats",
    "Seat",
    "common_pb2",
    "match_service_pb2",
    "new_request_id",
    "play_seat",
    "run_bot",
    "take5_pb2",
]
