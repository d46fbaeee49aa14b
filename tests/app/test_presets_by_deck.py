"""Preset decks by deck name through the runtime and the store, and the runtime's games.

CreateMatch's presets are a mapping from deck name to orders (the name "" and a plain
sequence mean the game's first deck); the store keeps them by name; a store file of the
earlier schema (presets a JSON list of orders) still loads, as the game's first deck.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.engine.core import InvalidOptions
from speeltafel.server.engine.games.take5 import GAME
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SCHEMA_VERSION, SqliteStore

FIRST = tuple(str(c) for c in range(32, 0, -1))
SECOND = tuple(str(c) for c in range(1, 33))


def hand(match_state: object, seat: int) -> tuple[str, ...]:
    return tuple(str(c) for c in GAME.observe(match_state, seat).hand)


async def test_presets_are_stored_by_deck_name_and_used_in_turn() -> None:
    runtime = MatchRuntime(MemoryStore())
    match = (await runtime.create_match("take5", 2, {}, presets={"pack": [FIRST, SECOND]})).match
    assert match.created.presets == (("pack", (FIRST, SECOND)),)
    for seat in range(2):
        await runtime.join(match.id, seat, f"s{seat}", b"")
    assert hand(match.state, 0) == tuple(sorted(FIRST[:12], key=int))
    await runtime.close()


@pytest.mark.parametrize("given", [[FIRST], {"": [FIRST]}, {"pack": [FIRST]}])
async def test_every_form_of_the_first_deck_is_the_same_request(given: object) -> None:
    runtime = MatchRuntime(MemoryStore())
    made = await runtime.create_match("take5", 2, {}, presets={"pack": [FIRST]}, request_id="r1")
    again = await runtime.create_match("take5", 2, {}, presets=given, request_id="r1")  # type: ignore[arg-type]
    assert again.duplicate and again.match is made.match
    await runtime.close()


@pytest.mark.parametrize(
    "given",
    [{"no_such_deck": [FIRST]}, {"": [FIRST], "pack": [SECOND]}, {"pack": [FIRST[:-1]]}],
)
async def test_bad_presets_are_refused_before_anything_is_stored(given: object) -> None:
    store = MemoryStore()
    runtime = MatchRuntime(store)
    with pytest.raises(InvalidOptions):
        await runtime.create_match("take5", 2, {}, presets=given)  # type: ignore[arg-type]
    assert await store.unfinished() == []
    await runtime.close()


async def test_a_store_file_of_the_earlier_schema_loads_its_presets_as_the_first_deck(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    store = SqliteStore(path)
    runtime = MatchRuntime(store)
    match_id = (await runtime.create_match("take5", 2, {})).match.id
    await runtime.close()
    await store.close()
    # Write the row as schema 2 did: presets a JSON list of orders, and user_version 2.
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "UPDATE matches SET presets=? WHERE match_id=?",
        (json.dumps([list(FIRST)]), match_id),
    )
    conn.execute("PRAGMA user_version=2")
    conn.close()

    store = SqliteStore(path)
    try:
        log = await store.load(match_id)
        assert log is not None and log.created.presets == (("", (FIRST,)),)
        runtime = MatchRuntime(store)
        await runtime.recover()
        match = await runtime.get(match_id)
        assert match.presets == {"pack": (FIRST,)}
        for seat in range(2):
            await runtime.join(match_id, seat, f"s{seat}", b"")
        assert hand(match.state, 1) == tuple(sorted(FIRST[12:24], key=int))
        # A new match is stored in the new form, and the file says so.
        new = (await runtime.create_match("take5", 2, {}, presets={"pack": [SECOND]})).match
        await runtime.close()
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    (stored,) = conn.execute("SELECT presets FROM matches WHERE match_id=?", (new.id,)).fetchone()
    assert stored.startswith('{"pack":[[')
    conn.close()


async def test_the_runtime_offers_the_games_it_is_given() -> None:
    runtime = MatchRuntime(MemoryStore(), games={})
    assert runtime.games() == []
    with pytest.raises(InvalidOptions) as caught:
        await runtime.create_match("take5", 2, {})
    assert caught.value.rule == "unknown_game"
    await runtime.close()
    default = MatchRuntime(MemoryStore())
    assert default.game("take5") is GAME
    await default.close()
