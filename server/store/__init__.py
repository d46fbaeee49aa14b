"""The append-only match log: the MatchStore protocol with memory and SQLite backends."""
