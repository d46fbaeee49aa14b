"""An SQLite store written by the first schema (before request ids, token keys and
terminations) opens, migrates once, and keeps every match."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from schema_v1 import SCHEMA_V1 as OLD_SCHEMA

from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.store.base import MatchFinished
from speeltafel.server.store.sqlite import SCHEMA_VERSION, SqliteStore


def old_file(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(OLD_SCHEMA)
    conn.execute(
        "INSERT INTO matches VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        ("m-old", "take5", 1, '[["deals","1"]]', 2, bytes(32), "c" * 64, 1000, "[]", 5, None, None),
    )
    conn.execute(
        "INSERT INTO matches VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        ("m-done", "take5", 1, "[]", 2, bytes(32), "d" * 64, 1000, "[]", 6, 90, "h"),
    )
    conn.execute("INSERT INTO seats VALUES (?,?,?,?,?,?)", ("m-old", 0, "ann", b"t" * 32, b"e", 7))
    conn.execute(
        "INSERT INTO actions VALUES (?,?,?,?,?,?,?)", ("m-done", 1, 0, "r1", "select:3", 8, 0)
    )
    conn.close()


async def test_an_old_file_is_migrated_and_keeps_its_matches(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_file(path)
    store = SqliteStore(path)
    try:
        log = await store.load("m-old")
        assert log is not None
        assert log.created.request_id == "" and len(log.created.token_key) == 32
        assert [(s.seat, s.name, s.request_id) for s in log.seats] == [(0, "ann", "")]
        done = await store.load("m-done")
        assert done is not None and done.finished == MatchFinished("m-done", 90, "h", "normal")
        assert [a.action for a in done.actions] == ["select:3"]
        assert len(done.created.token_key) == 32
        assert done.created.token_key != log.created.token_key
        assert await store.unfinished() == ["m-old"]
        # The new columns work: a request id is unique, a termination is stored.
        await store.finish(MatchFinished("m-old", 100, "", "expired"))
        ended = await store.load("m-old")
        assert ended is not None and ended.finished is not None
        assert ended.finished.termination == "expired"
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    # Opening again migrates nothing twice: the keys stay.
    again = SqliteStore(path)
    try:
        reloaded = await again.load("m-done")
        assert reloaded is not None and reloaded.created.token_key == done.created.token_key
        runtime = MatchRuntime(again)
        created = await runtime.create_match("take5", 2, {}, request_id="after-migration")
        repeat = await runtime.create_match("take5", 2, {}, request_id="after-migration")
        assert repeat.duplicate and repeat.match is created.match
        await runtime.close()
    finally:
        await again.close()
