"""A short Locust run (3 bots, 20 s) against a server of its own: nothing fails, nothing is
lost, every finished match verifies; and the reconciliation does catch a lost, a misplaced
and a doubled action.

Locust runs in its own process (``python -m loadtests.run``): it patches the standard
library with gevent, which this test process must not be.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # loadtests/ is a folder of the repository, not installed
    sys.path.insert(0, str(ROOT))

from loadtests.players import Ack  # noqa: E402
from loadtests.reconcile import Reconciliation, check_store, read_acks  # noqa: E402

USERS = 3
RUN_TIME = "20s"
# The smoke run is about correctness: a loose latency budget, as the machine is shared.
P99_BUDGET_MS = 5000


@dataclasses.dataclass
class SmokeRun:
    out: Path
    summary: dict[str, Any]
    stdout: str


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> SmokeRun:
    out = tmp_path_factory.mktemp("load")
    command = [
        sys.executable, "-m", "loadtests.run", "load", "--users", str(USERS),
        "--spawn-rate", str(USERS), "--run-time", RUN_TIME,
        "--p99-ms", str(P99_BUDGET_MS), "--out", str(out),
    ]  # fmt: skip
    done = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    summary_path = out / "summary.json"
    assert summary_path.exists(), done.stdout + done.stderr
    summary = json.loads(summary_path.read_text())
    assert done.returncode == 0, done.stdout + done.stderr
    return SmokeRun(out, summary, done.stdout)


@pytest.mark.timeout(300)
def test_smoke_run_plays_whole_matches_without_failures(smoke: SmokeRun) -> None:
    summary = smoke.summary
    assert summary["verdict"] == "pass", smoke.stdout
    assert summary["failures"] == {}
    rows = {(row["kind"], row["name"]): row for row in summary["rows"]}
    assert all(row["failures"] == 0 for row in rows.values())
    assert rows[("Play", "submit→ack")]["requests"] > 0
    # Every game the server offers was played to the end at least once (the rotation).
    played = {name for kind, name in rows if kind == "match"}
    assert len(played) >= 3, played
    assert summary["seat_matches"] >= 3 * USERS
    for path in ("load_stats.csv", "load_failures.csv", "load.html"):
        assert (smoke.out / path).stat().st_size > 0


@pytest.mark.timeout(300)
def test_smoke_run_stores_every_acknowledged_move_once_and_verifies_every_record(
    smoke: SmokeRun,
) -> None:
    report = smoke.summary["reconciliation"]
    assert report["problems"] == []
    assert report["acked"] > 0
    assert report["stored_once"] == report["acked"]
    assert report["record_actions_checked"] > 0
    assert report["matches_finished"] > 0
    assert report["records_verified"] == report["matches_finished"]
    # Every action Locust saw acknowledged is one the users logged (nothing unreported).
    rows = {(row["kind"], row["name"]): row for row in smoke.summary["rows"]}
    assert rows[("Play", "submit→ack")]["requests"] == report["acked"]


@pytest.mark.timeout(300)
def test_reconciliation_catches_lost_misplaced_and_doubled_actions(smoke: SmokeRun) -> None:
    db = smoke.out / "load.db"
    acks = read_acks([smoke.out / "load_acks.jsonl"])
    assert len(acks) > 2
    honest = Reconciliation()
    check_store(db, acks, honest)
    assert honest.problems == [] and honest.stored_once == len(acks)

    first, second = acks[0], acks[1]
    lost = dataclasses.replace(first, request_id="0" * 32)
    misplaced = dataclasses.replace(second, seq=second.seq + 1000)
    doubled = dataclasses.replace(acks[2], duplicate=False)
    tampered: list[Ack] = [lost, misplaced, *acks[2:], doubled]
    report = Reconciliation()
    check_store(db, tampered, report)
    assert any("is not stored" in p for p in report.problems), report.problems
    assert any("acknowledged as seq" in p for p in report.problems), report.problems
    assert any("accepted as new twice" in p for p in report.problems), report.problems
    assert report.stored_once == len(acks) - 2
