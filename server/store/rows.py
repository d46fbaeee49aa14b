"""How matches and tournaments are kept in relational rows, for every SQL store alike.

The SQLite and PostgreSQL stores keep the same ``matches`` and ``tournaments`` columns in
the same encodings: options, preset decks, a tournament's definition and a fixture's result
as compact JSON text. One module holds those encodings and the
conversion of a ``matches`` row into its created and finished parts, so the two stores
cannot drift apart (a record written by one must read the same in the other's tests).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from speeltafel.server.store.base import (
    DeckPresets,
    FixtureResult,
    MatchCreated,
    MatchFinished,
    TournamentRow,
)

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


TOURNAMENT_COLUMNS = (
    "tournament_id, request_id, definition, seed, secret, created_ms, status, finished_ms"
)


def definition_json(row: TournamentRow) -> str:
    """The fixed part of a tournament (what its schedule derives from) as JSON."""
    return json.dumps(
        {
            "name": row.name,
            "game": row.game,
            "options": [list(pair) for pair in row.options],
            "format": row.format,
            "participants": list(row.participants),
            "seats": row.seats,
            "rounds": row.rounds,
            "max_matches": row.max_matches,
            "move_clock_ms": row.move_clock_ms,
            "time_bank_ms": row.time_bank_ms,
            "max_misses": row.max_misses,
            "forfeit": row.forfeit,
        },
        separators=(",", ":"),
    )


def tournament_row(found: tuple[Any, ...]) -> TournamentRow:
    tournament_id, request_id, definition, seed, secret, created_ms, status, finished_ms = found
    value = json.loads(definition)
    return TournamentRow(
        tournament_id=tournament_id,
        request_id=request_id or "",
        name=str(value["name"]),
        game=str(value["game"]),
        options=tuple((str(k), str(v)) for k, v in value["options"]),
        format=str(value["format"]),
        participants=tuple(str(p) for p in value["participants"]),
        seats=int(value["seats"]),
        rounds=int(value["rounds"]),
        max_matches=int(value["max_matches"]),
        move_clock_ms=int(value["move_clock_ms"]),
        time_bank_ms=int(value["time_bank_ms"]),
        max_misses=int(value["max_misses"]),
        forfeit=str(value["forfeit"]),
        seed=bytes(seed),
        secret=bytes(secret),
        created_ms=created_ms,
        status=status,
        finished_ms=finished_ms,
    )


def result_json(result: FixtureResult) -> str:
    """A fixture's result as JSON (read back by :func:`fixture_result`)."""
    return json.dumps(
        {
            "scores": list(result.scores),
            "ranks": list(result.ranks),
            "utilities": list(result.utilities),
            "termination": result.termination,
            "misses": list(result.misses),
            "rejected": list(result.rejected),
            "forfeited": list(result.forfeited),
            "rated": result.rated,
        },
        separators=(",", ":"),
    )


def fixture_result(tournament_id: str, fixture: int, match_id: str, text: str) -> FixtureResult:
    value = json.loads(text)
    return FixtureResult(
        tournament_id,
        fixture,
        match_id,
        tuple(int(x) for x in value["scores"]),
        tuple(int(x) for x in value["ranks"]),
        tuple(float(x) for x in value["utilities"]),
        str(value["termination"]),
        tuple(int(x) for x in value["misses"]),
        tuple(int(x) for x in value["rejected"]),
        tuple(bool(x) for x in value["forfeited"]),
        bool(value["rated"]),
    )
