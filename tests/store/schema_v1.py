"""The store's first schema, exactly as the first release wrote it (server/store/sqlite.py
at the foundation's last commit): the files of that version that tests open and migrate."""

SCHEMA_V1 = """
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
