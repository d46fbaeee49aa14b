"""speeltafel Python SDK: sync and async clients, the Bot protocol and a runner.

A bot is anything with ``choose(view, legal_actions) -> action``; :func:`play_seat` (async)
or :func:`run_bot` (blocking) plays a seat with it over one bidirectional stream.

The names below are loaded on first use (PEP 562): the server imports the generated stubs
in ``speeltafel.sdk.v1``, which runs this file, and must not load the client, the runner
or grpc's client side with them. Each game's messages are in ``speeltafel.sdk.v1``
(``<game>_pb2``), so a new game changes nothing here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from speeltafel.sdk.client import AsyncClient, Client, Seat, new_request_id
    from speeltafel.sdk.runner import Bot, RunStats, play_seat, run_bot
    from speeltafel.sdk.v1 import common_pb2, match_service_pb2

# Each public name and the module that defines it.
_LAZY = {
    "AsyncClient": "speeltafel.sdk.client",
    "Client": "speeltafel.sdk.client",
    "Seat": "speeltafel.sdk.client",
    "new_request_id": "speeltafel.sdk.client",
    "Bot": "speeltafel.sdk.runner",
    "RunStats": "speeltafel.sdk.runner",
    "play_seat": "speeltafel.sdk.runner",
    "run_bot": "speeltafel.sdk.runner",
    "common_pb2": "speeltafel.sdk.v1",
    "match_service_pb2": "speeltafel.sdk.v1",
}

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
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use."""
    try:
        module = _LAZY[name]
    except KeyError:
        # Not ours: the import system then tries a submodule (``from speeltafel.sdk import
        # client``).
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    if module == "speeltafel.sdk.v1":
        value = importlib.import_module(f"{module}.{name}")
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
