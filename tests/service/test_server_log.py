"""The server's log as an operator reads it: one JSON object a line on stderr, what happens
to matches at the default level, and a line for every accepted action only at ``debug``.

A real server process plays one Take 5 match of random bots at each level. Its log is
then parsed line by line: a line that is not a whole JSON object (a line and its newline
written apart and interleaved, say) fails the test.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from server_process import ServerProcess

from speeltafel.bots.random_bot import RandomBot
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2

SEATS = 3


async def _one_match(tmp_path: Path, *extra: str) -> tuple[list[dict[str, object]], int, str]:
    """Play a match on a server started with ``extra``; its log's events, the number of
    actions the bots had acknowledged and the match id."""
    server = ServerProcess(tmp_path, "log.db", *extra)
    await server.start()
    try:
        async with AsyncClient(server.target) as client:
            created = await client.create_match("take5", SEATS, {"deals": "1"})
            seats = await asyncio.gather(
                *(client.join(created.match_id, name=f"log-{s}") for s in range(SEATS))
            )
            stats = [RunStats() for _ in seats]
            finals = await asyncio.gather(
                *(
                    play_seat(client, seat, RandomBot(seed=seat.seat), stats=run)
                    for seat, run in zip(seats, stats, strict=True)
                )
            )
        assert all(view.status == common_pb2.MATCH_STATUS_FINISHED for view in finals)
    finally:
        assert server.stop() == 0, server.log_tail()
    events = [json.loads(line) for line in server.log_path.read_text().splitlines()]
    assert all(isinstance(event, dict) and "event" in event for event in events)
    return events, sum(run.actions for run in stats), created.match_id


@pytest.mark.parametrize(("extra", "per_action"), [((), False), (("--log-level", "debug"), True)])
async def test_the_default_level_logs_matches_and_debug_adds_every_action(
    tmp_path: Path, extra: tuple[str, ...], per_action: bool
) -> None:
    events, actions, match_id = await _one_match(tmp_path, *extra)
    assert actions > 0
    of_match = Counter(e["event"] for e in events if e.get("match_id") == match_id)
    # What happens to the match is logged at the default level.
    assert of_match["match_created"] == 1
    assert of_match["seat_joined"] == SEATS
    assert of_match["match_started"] == 1
    assert of_match["match_finished"] == 1
    # Each accepted action only at debug, then exactly once.
    assert of_match["action_accepted"] == (actions if per_action else 0)
    # One line a seq: the actions' seqs follow on from the first without a gap.
    seqs = sorted(int(str(e["seq"])) for e in events if e["event"] == "action_accepted")
    assert seqs == (list(range(seqs[0], seqs[0] + actions)) if per_action else [])
