"""How a match's fixed facts are kept in a relational row, for every SQL store alike.

The SQLite and PostgreSQL stores keep the same ``matches`` columns in the same encodings:
options and preset decks as compact JSON text. One module holds those encodings and the
conversion of a ``matches`` row into its created and finished parts, so the two stores
cannot drift apart (a record written by one must read the same in the other's tests).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from speeltafel.server.store.base import DeckPresets, MatchCreated, MatchFinished

MATCH_COLUMNS = (
    "match_id, game, rules_version, options, seats, server_seed, commitment, move_clock_ms,"
    " presets, created_ms, finished_ms, final_hash, request_id, token_key, termination,"
    " time_bank_ms, max_misses, forfeit, deal"
)
"""The ``matches`` columns :func:`match_parts` reads, in its order."""


def rows_to_json(rows: tuple[tuple[str, ...], ...]) -> str:
    """Rows of texts (the options' name/value pairs) as compact JSON."""
    return json.dumps([list(row) for row in rows], separators=(",", ":"))


def rows_from_json(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(item) for item in row) for row in json.loads(text))


@functools.lru_cache(maxsize=256)
def options_from_json(text: str) -> tuple[tuple[str, str], ...]:
    """A stored options text as the options tuple, one shared tuple per distinct text:
    matches of one game and settings (most of them) keep one object between them."""
    return tuple((k, v) for k, v in rows_from_json(text))


def presets_to_json(presets: DeckPresets) -> str:
    """``{"deck": [[card, ...], ...], ...}`` in the game's deck order."""
    by_deck = {name: [list(order) for order in orders] for name, orders in presets}
    return json.dumps(by_deck, separators=(",", ":"))


def presets_from_json(text: str) -> DeckPresets:
    """Preset decks by name; a JSON list (SQLite's schema 2 and before) is orders of the
    deck "" (the game's first)."""
    value = json.loads(text)
    if isinstance(value, list):
        orders = tuple(tuple(str(card) for card in order) for order in value)
        return (("", orders),) if orders else ()
    return tuple(
        (str(name), tuple(tuple(str(card) for card in order) for order in orders))
        for name, orders in value.items()
    )


def match_parts(row: tuple[Any, ...]) -> tuple[MatchCreated, MatchFinished | None]:
    """A ``matches`` row (in :data:`MATCH_COLUMNS` order) as its created and finished parts."""
    (
        match_id,
        game,
        rules_version,
        options,
        seats,
        seed,
        commitment,
        clock,
        presets,
        created_ms,
        finished_ms,
        final_hash,
        request_id,
        token_key,
        termination,
        time_bank_ms,
        max_misses,
        forfeit,
        deal,
    ) = row
    created = MatchCreated(
        match_id=match_id,
        game=game,
        rules_version=rules_version,
        options=options_from_json(options),
        seats=seats,
        server_seed=bytes(seed),
        commitment=commitment,
        move_clock_ms=clock,
        presets=presets_from_json(presets),
        created_ms=created_ms,
        request_id=request_id or "",
        token_key=bytes(token_key or b""),
        time_bank_ms=time_bank_ms,
        max_misses=max_misses,
        forfeit=forfeit,
        deal=deal,
    )
    finished = (
        MatchFinished(match_id, finished_ms, final_hash or "", termination or "normal")
        if finished_ms is not None
        else None
    )
    return created, finished
