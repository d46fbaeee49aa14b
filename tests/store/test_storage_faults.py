"""Storage faults told apart from bugs (reliability.md E8), at the store.

Opening: only a path that does not exist becomes a new store; an empty, foreign, text or
damaged file is refused with a StoreOpenError naming the file and what to do; a file of the
previous version (no application_id yet) is recognised and stamped.

Writing: a real SQLITE_FULL (``PRAGMA max_page_count``), a real SQLITE_READONLY
(``PRAGMA query_only``) and a real I/O error (a file size limit, in a child process) each
raise StoreUnavailable, commit nothing of their batch, turn ``writable`` False and tell the
listeners; the writer's probe turns it True again once the fault is lifted, without any
client write.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from schema_v1 import SCHEMA_V1 as PREVIOUS_SCHEMA

from speeltafel.server.store.base import (
    ActionRow,
    AppendStatus,
    MatchCreated,
    SeatJoined,
    StoreOpenError,
    StoreUnavailable,
)
from speeltafel.server.store.sqlite import APPLICATION_ID, SqliteStore

FULL = "PRAGMA max_page_count = 1"  # SQLite raises it to the current size: no more growth
ROOMY = "PRAGMA max_page_count = 1073741823"
RECOVERY_S = 5.0  # the probe runs every 0.5 s; generous for slow machines
BIG = "x" * 20_000  # an action row that needs fresh overflow pages


def created(match_id: str = "m1") -> MatchCreated:
    return MatchCreated(
        match_id=match_id,
        game="take5",
        rules_version=1,
        options=(("deals", "3"),),
        seats=2,
        server_seed=bytes(range(32)),
        commitment="c" * 64,
        move_clock_ms=1000,
        presets=(),
        created_ms=1,
    )


def joined(seat: int, match_id: str = "m1") -> SeatJoined:
    return SeatJoined(match_id, seat, f"s{seat}", bytes([seat]) * 32, b"e" * 16, 2)


def row(seq: int, action: str = "select:1", match_id: str = "m1") -> ActionRow:
    return ActionRow(match_id, seq, seq % 2, f"r{seq}", action, 100 + seq, False)


def application_id(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        value: int = conn.execute("PRAGMA application_id").fetchone()[0]
    conn.close()
    return value


async def filled_store(path: Path, actions: int = 400) -> None:
    """A real store file with one match of ``actions`` actions, closed."""
    store = SqliteStore(path)
    await store.create(created())
    await store.join(joined(0))
    await store.join(joined(1))
    for seq in range(1, actions + 1):
        assert (await store.append(row(seq))).status is AppendStatus.COMMITTED
    await store.close()


def refused(path: Path, *phrases: str) -> StoreOpenError:
    with pytest.raises(StoreOpenError) as caught:
        SqliteStore(path)
    text = str(caught.value)
    assert str(path) in text and "\n" not in text, text
    for phrase in phrases:
        assert phrase in text, text
    return caught.value


# --------------------------------------------------------------------------- opening


async def test_open_fresh_path_becomes_a_stamped_store(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.db"
    store = SqliteStore(path)
    await store.create(created())
    await store.close()
    assert application_id(path) == APPLICATION_ID
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []
    reopened = SqliteStore(path)  # and it is accepted again
    assert await reopened.load("m1") is not None
    await reopened.close()


def test_open_refuses_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    refused(path, "empty (0 bytes)", "delete it", "restore")
    assert path.stat().st_size == 0  # left as it was


def test_open_refuses_a_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("shopping list: milk, cards, more cards\n" * 50)
    refused(path, "not an SQLite database", "--db")
    assert path.read_text().startswith("shopping list")


def test_open_refuses_a_foreign_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL);")
    conn.close()
    refused(path, "without speeltafel's tables", "invoices", "does not exist yet")
    with sqlite3.connect(path) as conn:  # untouched: no tables of ours added
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
    conn.close()
    assert names == {"invoices"}


def test_open_refuses_an_empty_sqlite_database_and_another_programs(tmp_path: Path) -> None:
    blank = tmp_path / "blank.db"
    conn = sqlite3.connect(blank)
    conn.execute("PRAGMA user_version = 7")  # a valid database file with no tables
    conn.close()
    refused(blank, "without speeltafel's tables", "(it is empty)")

    theirs = tmp_path / "theirs.db"
    conn = sqlite3.connect(theirs)
    conn.executescript(PREVIOUS_SCHEMA)  # even our tables, under someone else's stamp
    conn.execute("PRAGMA application_id = 1234")
    conn.close()
    refused(theirs, "another program", "0x4d2")


async def test_open_refuses_a_store_with_garbage_over_its_pages(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    await filled_store(path)
    size = path.stat().st_size
    page = 4096
    assert size >= 8 * page
    with path.open("r+b") as file:  # pages 3..5: b-tree pages of our tables
        file.seek(2 * page)
        file.write(os.urandom(3 * page))
    error = refused(path, "Restore the store from a backup")
    assert "integrity check" in error.what_failed or "damaged" in error.what_failed


async def test_open_refuses_a_truncated_store(tmp_path: Path) -> None:
    path = tmp_path / "truncated.db"
    await filled_store(path)
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)
    refused(path, "Restore the store from a backup")


async def test_open_accepts_and_stamps_a_store_of_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "previous.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(PREVIOUS_SCHEMA)
    conn.execute(
        "INSERT INTO matches VALUES ('old', 'take5', 1, '[]', 2, x'00', 'c', 1000, '[]', 5,"
        " NULL, NULL)"
    )
    conn.execute("INSERT INTO actions VALUES ('old', 1, 0, 'r1', 'select:3', 9, 0)")
    conn.close()
    assert application_id(path) == 0

    store = SqliteStore(path)
    stored = await store.load("old")
    assert stored is not None and [a.action for a in stored.actions] == ["select:3"]
    assert await store.unfinished() == ["old"]
    await store.close()
    assert application_id(path) == APPLICATION_ID


# --------------------------------------------------------------------------- writing


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    made = SqliteStore(tmp_path / "s.db")
    await made.create(created())
    await made.join(joined(0))
    await made.join(joined(1))
    try:
        yield made
    finally:
        await made.close()


class Listener:
    """Collects health changes, told on the event loop."""

    def __init__(self, store: SqliteStore) -> None:
        self.told: list[bool] = []
        self.changed = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        store.add_health_listener(self)

    def __call__(self, writable: bool) -> None:
        assert asyncio.get_running_loop() is self.loop  # told on the loop, not the writer
        self.told.append(writable)
        self.changed.set()

    async def wait_for(self, writable: bool) -> None:
        async with asyncio.timeout(RECOVERY_S):
            while not self.told or self.told[-1] != writable:
                self.changed.clear()
                await self.changed.wait()


async def hold_writer(store: SqliteStore) -> asyncio.Task[object]:
    """Keep the writer thread busy for a moment, so what is queued next forms one batch."""
    busy = asyncio.ensure_future(
        store._execute_for_tests(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500000)"
            " SELECT count(*) FROM c"
        )
    )
    await asyncio.sleep(0.01)  # it is taken by the writer
    return busy


async def test_disk_full_fails_the_whole_batch_and_commits_nothing(store: SqliteStore) -> None:
    listener = Listener(store)
    await store._execute_for_tests(FULL)
    busy = await hold_writer(store)
    # One batch: a row that would fit in the pages the file has, and one that cannot.
    small = asyncio.ensure_future(store.append(row(1)))
    big = asyncio.ensure_future(store.append(row(2, BIG)))
    finish_later = asyncio.ensure_future(store.create(created("m2")))
    await busy
    outcomes = await asyncio.gather(small, big, finish_later, return_exceptions=True)
    assert all(isinstance(o, StoreUnavailable) for o in outcomes), outcomes
    assert {o.cause for o in outcomes if isinstance(o, StoreUnavailable)} == {"SQLITE_FULL"}
    assert not store.writable
    await listener.wait_for(False)

    stored = await store.load("m1")  # reads still work
    assert stored is not None and stored.actions == ()
    assert await store.load("m2") is None

    # The probe runs during the fault too, and must not report health that is not there.
    await asyncio.sleep(1.2)
    assert not store.writable and listener.told == [False]


async def test_probe_restores_health_without_any_client_write(store: SqliteStore) -> None:
    listener = Listener(store)
    await store._execute_for_tests(FULL)
    with pytest.raises(StoreUnavailable):
        await store.append(row(1, BIG))
    await listener.wait_for(False)
    batches = store.batches

    await store._execute_for_tests(ROOMY)
    await listener.wait_for(True)
    assert store.writable and listener.told == [False, True]
    assert store.batches == batches  # nobody wrote: the probe found out

    # The same request goes through once, exactly as it would have.
    assert (await store.append(row(1, BIG))).status is AppendStatus.COMMITTED
    assert (await store.append(row(1, BIG))).status is AppendStatus.DUPLICATE
    stored = await store.load("m1")
    assert stored is not None and [a.seq for a in stored.actions] == [1]


async def test_read_only_database_refuses_every_write_until_lifted(store: SqliteStore) -> None:
    listener = Listener(store)
    await store._execute_for_tests("PRAGMA query_only = ON")
    for write in (store.append(row(1)), store.create(created("m2")), store.join(joined(0, "x"))):
        with pytest.raises(StoreUnavailable) as caught:
            await write
        assert caught.value.cause == "SQLITE_READONLY"
    await listener.wait_for(False)
    assert not store.writable
    stored = await store.load("m1")  # reads go on without the write lock
    assert stored is not None and stored.actions == () and len(stored.seats) == 2
    assert await store.unfinished() == ["m1"]
    await asyncio.sleep(1.2)
    assert not store.writable  # the probe is refused too

    await store._execute_for_tests("PRAGMA query_only = OFF")
    await listener.wait_for(True)
    assert (await store.append(row(1))).status is AppendStatus.COMMITTED
    assert listener.told == [False, True]


async def test_a_bug_is_not_a_storage_fault(store: SqliteStore) -> None:
    listener = Listener(store)
    with pytest.raises(sqlite3.IntegrityError):  # the same match id twice: a program error
        await store.create(created())
    assert store.writable and listener.told == []


IO_FAULT_CHILD = textwrap.dedent(
    """
    import asyncio, os, resource, signal, sys
    from speeltafel.server.store.base import ActionRow, MatchCreated, StoreUnavailable
    from speeltafel.server.store.sqlite import SqliteStore

    async def main(path):
        store = SqliteStore(path)
        await store.create(MatchCreated("m", "take5", 1, (), 2, b"s" * 32, "c", 1000, (), 1))
        told = []
        store.add_health_listener(told.append)
        # The kernel refuses to grow any file past this size (EFBIG): a real I/O error.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path + "-wal"), hard))
        try:
            await store.append(ActionRow("m", 1, 0, "r1", "select:1" * 200, 5, False))
            print("no fault")
            return
        except StoreUnavailable as exc:
            print("unavailable", exc.cause, store.writable)
        await asyncio.sleep(1.2)
        print("still", store.writable)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        for _ in range(50):
            await asyncio.sleep(0.1)
            if store.writable:
                break
        print("after", store.writable, told)
        print("retry", (await store.append(
            ActionRow("m", 1, 0, "r1", "select:1" * 200, 5, False))).status)
        print("stored", len((await store.load("m")).actions))
        await store.close()

    asyncio.run(main(sys.argv[1]))
    """
)


def test_io_error_is_unavailable_and_heals(tmp_path: Path) -> None:
    # In a child process: a file size limit applies to every file the process writes.
    result = subprocess.run(
        [sys.executable, "-c", IO_FAULT_CHILD, str(tmp_path / "io.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "unavailable SQLITE_IOERR_WRITE False",
        "still False",
        "after True [False, True]",
        "retry committed",
        "stored 1",
    ], result.stdout + result.stderr
