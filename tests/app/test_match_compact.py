"""A finished match lets go of what only a live match needs (Match.compact).

The action rows survive packing exactly (a record built afterwards is the same), each
seat keeps the answer to its own last request (a runner's retry after the end), never a
clock default in its place, and the snapshots are down to the final one.
"""

from __future__ import annotations

import random

from started_match import GAME, started_take5  # tests/app is on sys.path

from speeltafel.server.app.match import Match
from speeltafel.server.store.base import ActionRow


def played(clock_every: int) -> Match:
    match = started_take5(3)
    chooser = random.Random(3)
    n = 0
    while match.outcome is None:
        seat = chooser.choice(match.to_act())
        action = chooser.choice(GAME.legal_actions(match.state, seat))
        n += 1
        clock = n % clock_every == 0
        request_id = f"clock:{match.version}:{n}" if clock else f"r{n}"
        row = ActionRow("m1", match.version, seat, request_id, GAME.action_text(action), n, clock)
        match.record(row, GAME.apply(match.state, seat, action))
    return match


def test_compact_keeps_the_rows_and_each_seats_last_own_answer() -> None:
    match = played(clock_every=5)
    rows = list(match.actions)
    assert len(match.history) == 1 and match.history[0].status == "finished"
    match.compact()
    assert match.compacted
    assert match.actions == rows  # unpacked exactly, in order
    own_last = {}
    for row in rows:
        if not row.clock_default:
            own_last[row.seat] = row
    assert match.requests == {(r.seat, r.request_id): r for r in own_last.values()}
    assert all(not r.clock_default for r in match.requests.values())
    match.compact()  # idempotent
    assert match.actions == rows


def test_a_compacted_match_still_finds_every_stored_request_id() -> None:
    """Exactly once after the end too: a retry of any request id, not only a seat's last,
    finds its stored row (the runtime answers it as a duplicate, never "the match is over")."""
    match = played(clock_every=5)
    rows = list(match.actions)
    match.compact()
    for row in rows:
        assert match.find_request(row.seat, row.request_id) == row
    assert match.find_request(0, "never sent") is None
    assert match.find_request(1, rows[0].request_id if rows[0].seat != 1 else "x") is None
