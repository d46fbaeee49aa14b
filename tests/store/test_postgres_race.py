"""Three OS processes race appends to the same matches on one PostgreSQL, with no routing.

Each process (this file run as a script) opens its own PostgresStore and runs several
writer tasks, so its group commits carry many rows of several matches at once. Every task
appends to random matches at the seq it believes next, so the processes collide all the
time: the unique keys must let exactly one move take each seq. A task also resends some
requests it had stored, at a later seq, which must come back as the stored duplicate.

Afterwards: every acknowledged move is in the log exactly once, at its acknowledged seq;
the seqs of each match are contiguous; every stored row was acknowledged to exactly one
process; and the processes really did collide and really did commit multi-row batches.

A racer that would spin forever fails at once instead, with its story (see ``worker``): a
run once stalled about 1 in 20 because a racer counted rows it read back from a ``next_seq``
another of its tasks had moved meanwhile, and went past the end of the log; when all three
did so on one match, nobody stored the missing seq.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from speeltafel.server.store.base import ActionRow, AppendStatus, MatchCreated

# Round trips of three processes: slow on a loaded 2-core machine, hence its own timeout.
# Serial (run alone, after the parallel tests): the three must race evenly, and another
# test's load beside them let one process win nearly every seq (157 commits against 1 and
# 2, one racer meeting no duplicate at all).
pytestmark = [pytest.mark.slow, pytest.mark.serial, pytest.mark.timeout(300)]

PROCESSES = 3
TASKS = 4  # writer tasks per process
MATCHES = 4
ACTIONS = 40  # per match: the run stops once each match has this many
RUN_TIMEOUT_S = 240
STALL_CONFLICTS = 200  # conflicts in a row at one match, nothing new to read: a stall


def created(match_id: str) -> MatchCreated:
    return MatchCreated(
        match_id=match_id,
        game="take5",
        rules_version=1,
        options=(),
        seats=PROCESSES,
        server_seed=bytes(32),
        commitment="c" * 64,
        move_clock_ms=1000,
        presets=(),
        created_ms=int(match_id[1:]),
    )


class Stalled(Exception):
    """A racer believes a match is further along than its stored log: it would never finish."""


async def worker(url: str, process: int, match_ids: list[str]) -> dict[str, Any]:
    """One racing process: its acknowledgements and what it met. Once its store is open it
    prints ``ready`` and waits for a line on stdin, so the test starts the three processes
    together and they really race (one that started late would find every match done).

    It fails fast instead of spinning: ``next_seq[m] - 1`` may never pass the stored log's
    last seq (it advances only past a seq acknowledged COMMITTED, or past rows read back),
    so after a CONFLICT it checks that, and counts conflicts in a row with nothing new to
    read. Either way it raises Stalled with every change it made to that match's
    ``next_seq``, its acknowledgements there and the stored log."""
    from speeltafel.server.store.postgres import PostgresStore

    store = await PostgresStore.open(url, listen=False)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    rnd = random.Random(process)
    acks: list[tuple[str, int, str, int]] = []  # (match, seat, request id, seq)
    met: Counter[str] = Counter()
    next_seq = dict.fromkeys(match_ids, 1)  # what this process believes
    history: dict[str, list[str]] = {m: [] for m in match_ids}  # why next_seq moved
    idle = Counter[str]()  # conflicts in a row with no newer row to read, per match

    def advance(match_id: str, new: int, why: str) -> None:
        if new > next_seq[match_id]:
            history[match_id].append(f"{next_seq[match_id]} -> {new}: {why}")
            next_seq[match_id] = new

    async def stalled(match_id: str, what: str) -> Stalled:
        stored = await store.read_actions(match_id)
        lines = [
            f"racer {process}: {match_id}: {what}",
            f"stored log: {[(r.seq, r.seat, r.request_id) for r in stored]}",
            f"its acks: {[(seq, rid) for m, _s, rid, seq in acks if m == match_id]}",
            "its next_seq moves:",
            *history[match_id],
        ]
        return Stalled("\n".join(lines))

    async def task(number: int) -> None:
        sent = 0
        while True:
            open_matches = [m for m in match_ids if next_seq[m] <= ACTIONS]
            if not open_matches:
                return
            match_id = rnd.choice(open_matches)
            seq = next_seq[match_id]
            mine = [a for a in acks if a[0] == match_id]
            if mine and rnd.random() < 0.1:
                # A retry of a stored request, at the seq it would take now: a duplicate.
                _m, seat, request_id, stored_seq = rnd.choice(mine)
                row = ActionRow(match_id, seq, seat, request_id, "again", 0, False)
                result = await store.append(row)
                assert result.status is AppendStatus.DUPLICATE, result
                assert result.existing is not None and result.existing.seq == stored_seq
                met["duplicate"] += 1
                continue
            sent += 1
            request_id = f"p{process}-t{number}-{sent}"
            row = ActionRow(match_id, seq, process, request_id, f"play:{seq}", 0, False)
            result = await store.append(row)
            met[result.status.value] += 1
            if result.status is AppendStatus.COMMITTED:
                acks.append((match_id, process, request_id, seq))
                idle[match_id] = 0
                advance(match_id, seq + 1, f"t{number} {request_id} COMMITTED at {seq}")
            else:
                assert result.status is AppendStatus.CONFLICT, result
                stored = await store.read_actions(match_id, next_seq[match_id] - 1)
                if stored:
                    # Past the last row read, not len(stored) past next_seq: another task may
                    # have moved next_seq during the read, and counting from there overshot
                    # the log (every racer past the end of one match: a stall).
                    advance(
                        match_id,
                        stored[-1].seq + 1,
                        f"t{number} CONFLICT at {seq}, read {[r.seq for r in stored]}",
                    )
                    idle[match_id] = 0
                    continue
                believed = next_seq[match_id] - 1
                log = await store.read_actions(match_id, 0)
                last = log[-1].seq if log else 0
                if last < believed:
                    raise await stalled(
                        match_id, f"believes seq {believed} is stored, the log ends at {last}"
                    )
                idle[match_id] += 1
                if idle[match_id] >= STALL_CONFLICTS:
                    raise await stalled(
                        match_id, f"{STALL_CONFLICTS} conflicts in a row, nothing new to read"
                    )

    try:
        await asyncio.gather(*(task(n) for n in range(TASKS)))
    finally:
        await store.close()
    return {
        "acks": acks,
        "met": dict(met),
        "batches": store.batches,
        "operations": store.operations,
        "retries": store.retries,
    }


async def test_three_processes_race_appends_and_lose_nothing(
    postgres_url: str, tmp_path: Path
) -> None:
    from speeltafel.server.store.postgres import PostgresStore

    match_ids = [f"m{i}" for i in range(MATCHES)]
    store = await PostgresStore.open(postgres_url, listen=False)
    try:
        for match_id in match_ids:
            await store.create(created(match_id))
        started = time.monotonic()
        logs_of = [tmp_path / f"racer-{p}.log" for p in range(PROCESSES)]
        processes = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                postgres_url,
                str(p),
                ",".join(match_ids),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=logs_of[p].open("wb"),
            )
            for p in range(PROCESSES)
        ]
        outputs = []
        waits: list[asyncio.Future[tuple[bytes, bytes]]] = []
        try:
            async with asyncio.timeout(RUN_TIMEOUT_S):
                for proc in processes:  # every racer's store is open: start them together
                    assert proc.stdout is not None
                    assert await proc.stdout.readline() == b"ready\n"
                for proc in processes:
                    assert proc.stdin is not None
                    proc.stdin.write(b"go\n")
                    await proc.stdin.drain()
                # The first racer to fail ends the run (a stalled one exits with its story).
                waits = [asyncio.ensure_future(proc.communicate()) for proc in processes]
                for done in asyncio.as_completed(waits):
                    await done
                    for p, proc in enumerate(processes):
                        failed = proc.returncode not in (None, 0)
                        assert not failed, f"racer {p} failed:\n{logs_of[p].read_text()}"
                outputs = [json.loads((await w)[0]) for w in waits]
        finally:
            for proc in processes:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            await asyncio.gather(*waits, return_exceptions=True)
        seconds = time.monotonic() - started
        logs = {m: await store.load(m) for m in match_ids}
    finally:
        await store.close()

    acked = [tuple(a) for out in outputs for a in out["acks"]]
    stored: dict[tuple[str, int], tuple[int, str]] = {}
    for match_id, log in logs.items():
        assert log is not None
        seqs = [row.seq for row in log.actions]
        assert seqs == list(range(1, len(seqs) + 1)), f"{match_id}: seqs not contiguous"
        assert len(seqs) >= ACTIONS
        assert all(row.action == f"play:{row.seq}" for row in log.actions)
        stored.update({(match_id, r.seq): (r.seat, r.request_id) for r in log.actions})
    # Each acknowledgement names its stored row, no seq was acknowledged twice, and every
    # stored row was acknowledged (every racer finished normally).
    assert Counter((m, seq) for m, _s, _r, seq in acked).most_common(1)[0][1] == 1
    for match_id, seat, request_id, seq in acked:
        assert stored[(match_id, seq)] == (seat, request_id)
    assert len(acked) == len(stored)
    # The race was real: every process lost some seqs to the others, and met its own
    # stored requests again; and the writers committed several rows per batch.
    met = [Counter(out["met"]) for out in outputs]
    assert all(m["conflict"] > 0 and m["duplicate"] > 0 for m in met), met
    assert sum(out["operations"] for out in outputs) > sum(out["batches"] for out in outputs)
    print(
        f"race: {len(acked)} rows by {PROCESSES} processes in {seconds:.1f} s; "
        f"met {[dict(m) for m in met]}; "
        f"rows per batch {[round(o['operations'] / o['batches'], 2) for o in outputs]}; "
        f"batches retried after a deadlock {[o['retries'] for o in outputs]}"
    )


if __name__ == "__main__":
    url, number, ids = sys.argv[1:4]
    try:
        result = asyncio.run(worker(url, int(number), ids.split(",")))
    except Stalled as stall:
        sys.exit(f"STALLED: {stall}")
    print(json.dumps(result))
