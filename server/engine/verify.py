"""Replay and verify a finished match from its published record (standard library only).

Anyone holding a record can check that the server dealt fairly and played it straight:
the revealed seed matches the commitment published at creation, the shuffle key is the
documented HMAC of that seed with the seats' entropy, every recorded action was legal when
it was played, and the final state hashes to the published value.

A match the server ended as "abandoned" (its clock ran out period after period with nobody
acting) has a record too: its actions replay to a state the rules have not finished, and
that state hashes to the published value. A record claiming abandonment whose actions do
finish the match does not verify, nor does any other termination the rules did not reach.

Preset decks travel as ``(deck name, order)`` pairs (protobuf ``DeckOrder``); the name ""
means the game's first deck (what every preset was before decks had names).
:func:`group_orders` turns such pairs into the mapping ``Game.new`` takes, and
:func:`unnamed_to_first` reads its "" as the first deck's name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from speeltafel.server.engine.core import (
    DeckSpec,
    EngineError,
    GameAny,
    InvalidOptions,
    Presets,
    Rng,
    clip,
    commitment,
    shuffle_key,
)
from speeltafel.server.engine.registry import get_game


def group_orders(
    orders: Iterable[tuple[str, Sequence[str]]],
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """``(deck name, order)`` pairs grouped by deck name, each deck's orders in the order
    given ("" stays "": the game's first deck, see :func:`unnamed_to_first`)."""
    grouped: dict[str, list[tuple[str, ...]]] = {}
    for name, order in orders:
        grouped.setdefault(name, []).append(tuple(order))
    return {name: tuple(deck_orders) for name, deck_orders in grouped.items()}


def unnamed_to_first(decks: Sequence[DeckSpec], presets: Presets) -> Presets:
    """``presets`` with the deck name "" read as the game's first deck (a plain sequence of
    orders already means that deck); InvalidOptions when orders of that deck come both with
    and without its name (their order would be ambiguous)."""
    if not isinstance(presets, Mapping) or "" not in presets:
        return presets
    if not decks:
        raise InvalidOptions("this game deals no deck, so it takes no preset order")
    first = decks[0].name
    if presets.get(first):
        raise InvalidOptions(
            f"orders of deck {clip(first)} are given both with and without its name"
        )
    resolved = {name: orders for name, orders in presets.items() if name not in ("", first)}
    return {first: presets[""], **resolved}


@dataclass(frozen=True, slots=True)
class RecordedMatch:
    """The parts of a match record that replay needs (plain values, no protobuf)."""

    game: str
    options: Mapping[str, str]
    seats: int
    server_seed: bytes
    commitment: str
    entropies: Sequence[bytes]
    presets: Presets
    """Preset orders by deck name (:func:`group_orders` of the record's ``preset_decks``;
    "" is the first deck), or a plain sequence of orders of the first deck."""
    actions: Sequence[tuple[int, str]]  # (seat, action text) in log order
    final_hash: str
    termination: str = "normal"  # the record's Outcome.termination


def replay(record: RecordedMatch, game: GameAny | None = None) -> Any:
    """The final state of a record, every action re-validated by the engine (``game``: the
    record's game when it is not in the engine's registry, e.g. a test game)."""
    game = game or get_game(record.game)
    key = shuffle_key(record.server_seed, record.entropies)
    presets = unnamed_to_first(game.info.decks, record.presets)
    state = game.new(record.options, record.seats, Rng(key), presets)
    for seat, text in record.actions:
        state = game.apply(state, seat, game.parse_action(text))
    return state


def verify(record: RecordedMatch, game: GameAny | None = None) -> list[str]:
    """Every problem found with a record; an empty list means it verifies (``game`` as for
    :func:`replay`)."""
    problems = []
    if commitment(record.server_seed) != record.commitment:
        problems.append("the revealed seed does not match the commitment")
    try:
        state = replay(record, game)
    except EngineError as exc:
        return [*problems, f"the recorded actions do not replay: {exc.message}"]
    game = game or get_game(record.game)
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
