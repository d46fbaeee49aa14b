"""Two server processes on one PostgreSQL log (real processes, a real PostgreSQL).

- A match whose seats play on different processes: each process's views of the other's
  moves come from the store's NOTIFY (no clock runs out: the clock is long, and the log
  shows no clock default), and a seat's stream routed to a process that never saw the
  match works (it loads the match to check the token).
- Clocks: both processes hold a match whose clock runs out with nobody acting; both fire
  (their logs say so), and the log has exactly one default move per seat and expiry.
- Deadlines nobody holds: the only process holding a match is SIGKILLed while a seat's
  clock runs; another process, which never heard of the match, claims the overdue deadline
  and plays the default within seconds, exactly once, then runs the match's clock on.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from speeltafel.bots.random_bot import RandomBot
from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.app.match import Match, clock_deadline
from speeltafel.server.engine.registry import get_game

Spawn = Callable[..., ServerProcess]

START_TIMEOUT_S = 30.0
PLAY_TIMEOUT_S = 90.0


async def _store(url: str):  # type: ignore[no-untyped-def]
    from speeltafel.server.store.postgres import PostgresStore

    return await PostgresStore.open(url, listen=False)


async def test_a_match_plays_with_its_seats_on_two_processes(
    servers: Spawn, postgres_url: str
) -> None:
    a, b = servers("a", "--move-clock-ms", "20000"), servers("b", "--move-clock-ms", "20000")
    await asyncio.gather(a.start_async(START_TIMEOUT_S), b.start_async(START_TIMEOUT_S))
    rnd = random.Random(int.from_bytes(os.urandom(4), "big"))
    async with AsyncClient(a.target) as on_a, AsyncClient(b.target) as on_b:
        created = await on_a.create_match("take5", 3, {"deals": "2"}, move_clock_ms=20_000)
        match_id = created.match_id
        # Seat 0 joins on a, seats 1 and 2 on b (which loads the match from the store).
        seats = [
            await on_a.join(match_id, 0, entropy=os.urandom(8)),
            await on_b.join(match_id, 1, entropy=os.urandom(8)),
            await on_b.join(match_id, 2, entropy=os.urandom(8)),
        ]
        # Seat 0 plays on b, seats 1 and 2 on a: every stream on a process where its
        # seat did not join, and each process sees the other's moves only by NOTIFY.
        clients = [on_b, on_a, on_a]
        stats = [RunStats() for _ in seats]
        views = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_seat(c, s, RandomBot(rnd.randrange(2**32)), stats=st)
                    for c, s, st in zip(clients, seats, stats, strict=True)
                )
            ),
            PLAY_TIMEOUT_S,
        )
    assert all(v.status == common_pb2.MATCH_STATUS_FINISHED for v in views)
    assert len({v.version for v in views}) == 1, "the seats saw different final versions"
    store = await _store(postgres_url)
    try:
        log = await store.load(match_id)
    finally:
        await store.close()
    assert log is not None and log.finished is not None
    assert [r.seq for r in log.actions] == list(range(1, len(log.actions) + 1))
    assert not any(r.clock_default for r in log.actions), "a seat waited for its clock"
    assert sum(st.actions for st in stats) == len(log.actions)
    replayed = Match.replay(log, get_game("take5"))
    assert replayed.final_hash() == log.finished.final_hash
    assert views[0].version == replayed.version


async def test_two_processes_holding_a_match_play_one_default_per_expiry(
    servers: Spawn, postgres_url: str, tmp_path: Path
) -> None:
    a, b = servers("a"), servers("b")
    await asyncio.gather(a.start_async(START_TIMEOUT_S), b.start_async(START_TIMEOUT_S))
    async with AsyncClient(a.target) as on_a, AsyncClient(b.target) as on_b:
        created = await on_a.create_match("take5", 2, {"deals": "1"}, move_clock_ms=300)
        match_id = created.match_id
        await on_a.join(match_id, 0)
        await on_b.join(match_id, 1)  # b holds it too, and arms its own clock
        # Nobody acts: the clock defaults every seat, three periods in a row, and then the
        # match is abandoned.
        deadline = asyncio.get_running_loop().time() + 30
        while (await on_a.get_match(match_id)).status != common_pb2.MATCH_STATUS_FINISHED:
            assert asyncio.get_running_loop().time() < deadline, "the match never ended"
            await asyncio.sleep(0.2)
    store = await _store(postgres_url)
    try:
        log = await store.load(match_id)
    finally:
        await store.close()
    assert log is not None and log.finished is not None
    assert log.finished.termination == "abandoned"
    defaults = [r for r in log.actions if r.clock_default]
    assert defaults and len(defaults) == len(log.actions)
    assert [r.seq for r in log.actions] == list(range(1, len(log.actions) + 1))
    # One default per seat and expiry: no (seat, deadline) twice.
    expiries = Counter((r.seat, clock_deadline(r.request_id)) for r in defaults)
    assert max(expiries.values()) == 1, expiries
    assert len({d for _, d in expiries}) == 3  # three periods, then abandoned

    # Both processes' clocks fired for it: the race was real, the log decided it.
    def fired(process: ServerProcess) -> int:
        lines = process.log_path.read_text().splitlines()
        return sum(1 for line in lines if "clock_expired" in line and match_id in line)

    assert fired(a) > 0 and fired(b) > 0, "one process never ran the clock"


async def test_a_match_whose_holder_died_gets_its_default_from_another_process(
    servers: Spawn, postgres_url: str
) -> None:
    from speeltafel.server.app.cluster import CLAIM_GRACE_MS, SWEEP_INTERVAL_S

    a, b = servers("a"), servers("b")
    await asyncio.gather(a.start_async(START_TIMEOUT_S), b.start_async(START_TIMEOUT_S))
    store = await _store(postgres_url)
    try:
        async with AsyncClient(a.target) as on_a:
            created = await on_a.create_match("take5", 2, {"deals": "1"}, move_clock_ms=1500)
            match_id = created.match_id
            await on_a.join(match_id, 0)
            await on_a.join(match_id, 1)
        # a records the running match's move deadline (within its 0.1 s flush; the join
        # deadline it recorded while the match waited is much later); then it dies
        # with the seats' clocks running. Nobody calls b about the match.
        loop = asyncio.get_running_loop()
        until = loop.time() + 10
        soon_ms = int(time.time() * 1000) + 5_000  # the move deadline, not the join one
        while (row := await store.deadline(match_id)) is None or not (row[1] or soon_ms) < soon_ms:
            assert loop.time() < until, "a never recorded the deadline"
            await asyncio.sleep(0.05)
        deadline_ms = row[1]
        a.kill()
        # b claims the deadline after the grace and plays the default; with nobody acting
        # it then runs the clock on itself: three periods, then the match is abandoned.
        until = loop.time() + 40
        while (log := await store.load(match_id)) is None or log.finished is None:
            if loop.time() > until:
                row = await store.deadline(match_id)
                now_ms = int(time.time() * 1000)
                raise AssertionError(f"nobody finished the match: {row}, now {now_ms}")
            await asyncio.sleep(0.2)
    finally:
        await store.close()
    assert log.finished.termination == "abandoned"
    assert all(r.clock_default for r in log.actions)
    assert [r.seq for r in log.actions] == list(range(1, len(log.actions) + 1))
    expiries = Counter((r.seat, clock_deadline(r.request_id)) for r in log.actions)
    assert max(expiries.values()) == 1, expiries  # exactly one default per seat and expiry
    first = log.actions[0]
    assert clock_deadline(first.request_id) == deadline_ms
    # Within seconds: the grace, a sweep, and a load (on a busy machine: some slack).
    late_ms = first.server_ms - deadline_ms
    assert CLAIM_GRACE_MS <= late_ms <= CLAIM_GRACE_MS + SWEEP_INTERVAL_S * 1000 + 2_500
    lines = b.log_path.read_text().splitlines()
    assert any("deadline_claimed" in line and match_id in line for line in lines)
    assert any("clock_expired" in line and match_id in line for line in lines)
    # b wrote the deadline off when the match ended: no sweep claims it again.
    store = await _store(postgres_url)
    try:
        until = asyncio.get_running_loop().time() + 5
        while (row := await store.deadline(match_id)) is None or row[1] is not None:
            assert asyncio.get_running_loop().time() < until, row
            await asyncio.sleep(0.1)
    finally:
        await store.close()


@pytest.fixture(autouse=True)
def _quiet_grpc() -> None:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
