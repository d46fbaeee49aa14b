"""An SQLite store written by the first schema (before request ids, token keys and
terminations) opens, migrates once, and keeps every match."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.store.base import MatchFinished
from speeltafel.server.store.sqlite import SCHEMA_VERSION, SqliteStore

# The schema exactly as the first version wrote it (server/store/sqlite.py at b0f4c3a).
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id      TEXT PRIMARY KEY,
    game          TEXT NOT NULL,
    rules_version INTEGER NOT NULL,
    options       TEXT NOT NULL,
    seats         INTEGER NOT NULL,
    server_seed   BLOB NOT NULL,
    commitment    TEXT NOT NULL,
    move_clock_ms INTEGER NOT NULL,
    presets       TEXT NOT NULL,
    created_ms    INTEGER NOT NULL,
    finished_ms   INTEGER,
    final_hash    TEXT
);
CREATE TABLE IF NOT EXISTS seats (
    match_id   TEXT NOT NULL REFERENCES matches(match_id),
    seat       INTEGER NOT NULL,
    name       TEXT NOT NULL,
    token_hash BLOB NOT NULL,
    entropy    BLOB NOT NULL,
    joined_ms  INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS actions (
    match_id      TEXT NOT NULL REFERENCES matches(match_id),
    seq           INTEGER NOT NULL,
    seat          INTEGER NOT NULL,
    request_id    TEXT NOT NULL,
    action        TEXT NOT NULL,
    server_ms     INTEGER NOT NULL,
    clock_default INTEGER NOT NULL,
    PRIMARY KEY (match_id, seq),
    UNIQUE (match_id, seat, request_id)
);
CREATE INDEX IF NOT EXISTS matches_unfinished ON matches(finished_ms, created_ms);
"""


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
