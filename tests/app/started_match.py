"""A Take 5 ``Match`` dealt and running, built directly (no runtime, no store): the
starting point of the tests that drive a match by hand (``tests/app`` is on ``sys.path``
for the tests in it)."""

from __future__ import annotations

from typing import Any

from speeltafel.server.app.match import Match
from speeltafel.server.engine.core import commitment
from speeltafel.server.engine.registry import get_game
from speeltafel.server.store.base import MatchCreated, SeatJoined

GAME = get_game("take5")


def started_take5(seats: int, **created_fields: Any) -> Match:
    """Match ``m1``: Take 5 under its default options, every seat joined, dealt.
    ``created_fields``: more fields of its ``MatchCreated`` (time banks, forfeits...)."""
    created = MatchCreated(
        match_id="m1",
        game="take5",
        rules_version=GAME.info.rules_version,
        options=tuple(sorted(GAME.info.canonical_options({}).items())),
        seats=seats,
        server_seed=b"s" * 32,
        commitment=commitment(b"s" * 32),
        move_clock_ms=1000,
        presets=(),
        created_ms=0,
        request_id="",
        token_key=b"k" * 32,
        **created_fields,
    )
    match = Match(created, GAME)
    for seat in range(seats):
        match.join(SeatJoined("m1", seat, f"s{seat}", bytes(32), b"", 1, ""))
    match.start(1)
    return match
