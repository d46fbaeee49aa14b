"""Replay and verify a finished match from its published record (standard library only).

Anyone holding a record can check that the server dealt fairly and played it straight:
the revealed seed matches the commitment published at creation, the shuffle key is the
documented HMAC of that seed with the seats' entropy, every recorded action was legal when
it was played, and the final state hashes to the published value.

A match the server ended as "abandoned" (its clock ran out period after period with nobody
acting) has a record too: its actions replay to a state the rules have not finished, and
that state hashes to the published value. A record claiming abandonment whose actions do
finish the match does not verify, nor does any other termination the rules did not reach.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from speeltafel.server.engine.core import EngineError, Rng, commitment, shuffle_key
from speeltafel.server.engine.registry import get_game


@dataclass(frozen=True, slots=True)
class RecordedMatch:
    """The parts of a match record that replay needs (plain values, no protobuf)."""

    game: str
    options: Mapping[str, str]
    seats: int
    server_seed: bytes
    commitment: str
    entropies: Sequence[bytes]
    presets: Sequence[Sequence[str]]
    actions: Sequence[tuple[int, str]]  # (seat, action text) in log order
    final_hash: str
    termination: str = "normal"  # the record's Outcome.termination


def replay(record: RecordedMatch) -> Any:
    """The final state of a record, every action re-validated by the engine."""
    game = get_game(record.game)
    key = shuffle_key(record.server_seed, record.entropies)
    state = game.new(record.options, record.seats, Rng(key), record.presets)
    for seat, text in record.actions:
        state = game.apply(state, seat, game.parse_action(text))
    return state


def verify(record: RecordedMatch) -> list[str]:
    """Every problem found with a record; an empty list means it verifies."""
    problems = []
    if commitment(record.server_seed) != record.commitment:
        problems.append("the revealed seed does not match the commitment")
    try:
        state = replay(record)
    except EngineError as exc:
        return [*problems, f"the recorded actions do not replay: {exc.message}"]
    game = get_game(record.game)
    finished = game.outcome(state) is not None
    termination = record.termination or "normal"  # older records leave it empty
    if termination == "abandoned":
        if finished:
            problems.append("the record claims abandonment but its actions finish the match")
    elif termination != "normal":
        problems.append(f"a record cannot verify with termination {termination[:32]!r}")
    elif not finished:
        problems.append("the recorded actions do not finish the match")
    if hashlib.sha256(game.encode(state)).hexdigest() != record.final_hash:
        problems.append("the replayed final state does not match the published hash")
    return problems
