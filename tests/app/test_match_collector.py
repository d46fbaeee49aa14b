"""What a running match keeps for the rest of its match is out of the collector's walk.

Every object a decision leaves alive is walked by the cyclic collector's young and middle
collections, and the middle ones stop the event loop (``make bench`` (c) and (g)). A plain
tuple of plain values is different: CPython stops tracking it at the first collection
that sees it. So a running match holds its action rows, and each snapshot the seats whose
decision begins there, as such tuples, and builds ``ActionRow`` values from them only when
asked (docs/performance-rounds.md, round 26). These tests hold both halves: the rows come
back exactly as recorded, and after one collection the collector no longer tracks them.
"""

from __future__ import annotations

import gc
import random

from started_match import GAME, started_take5  # tests/app is on sys.path

from speeltafel.server.app.match import Match
from speeltafel.server.store.base import ActionRow


def partway(actions: int) -> tuple[Match, list[ActionRow]]:
    """A three-seat Take 5 match with ``actions`` recorded and still running, and the rows
    recorded, in order."""
    match = started_take5(3)
    chooser = random.Random(5)
    rows = []
    for n in range(actions):
        assert match.outcome is None
        seat = chooser.choice(match.to_act())
        action = chooser.choice(GAME.legal_actions(match.state, seat))
        clock = n % 7 == 6
        request_id = f"clock:{match.version}:{n}" if clock else f"r{n}"
        row = ActionRow("m1", match.version, seat, request_id, GAME.action_text(action), n, clock)
        match.record(row, GAME.apply(match.state, seat, action))
        rows.append(row)
    return match, rows


def test_a_running_match_gives_back_every_row_as_recorded() -> None:
    match, rows = partway(24)
    assert match.action_count == 24
    assert match.actions == rows
    for row in rows:
        assert match.known_request(row.seat, row.request_id) == row
        assert match.find_request(row.seat, row.request_id) == row
        assert match.known_request((row.seat + 1) % 3, row.request_id) is None


def test_a_request_id_two_seats_used_is_answered_for_each() -> None:
    match, _ = partway(0)
    first = ActionRow("m1", match.version, 0, "same", f"select:{match.state.hands[0][0]}", 1, False)
    match.record(first, GAME.apply(match.state, 0, GAME.parse_action(first.action)))
    second = ActionRow(
        "m1", match.version, 1, "same", f"select:{match.state.hands[1][0]}", 2, False
    )
    match.record(second, GAME.apply(match.state, 1, GAME.parse_action(second.action)))
    assert match.known_request(0, "same") == first
    assert match.known_request(1, "same") == second
    assert match.known_request(2, "same") is None


def test_after_one_collection_the_collector_walks_no_row_and_no_set_of_beginners() -> None:
    match, _ = partway(24)
    gc.collect()
    kept = match._actions
    assert len(kept) == 24
    assert not any(gc.is_tracked(row) for row in kept)
    assert not any(gc.is_tracked(packed) for packed in match._by_request.values())
    assert any(snapshot.begins for snapshot in match.history)
    assert not any(gc.is_tracked(snapshot.begins) for snapshot in match.history)
