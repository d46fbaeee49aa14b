"""``scripts/cluster.py`` leaves nothing running, however it ends (real processes).

The run is SIGKILLed once its bots play: its servers, HAProxy and bot processes (the bots
in sessions of their own, out of its process group) must all be gone within seconds, by
the watchdog it forked at start. A SIGTERM stops it in order as well.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "cluster.py"
GONE_WITHIN_S = 15.0


def _children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start(folder: Path, postgres_url: str) -> tuple[subprocess.Popen[bytes], set[int]]:
    run = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--folder", str(folder), "--postgres",
         postgres_url.split("?")[0], "--game", "take5", "--max-seats", "2", "--rounds", "3"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while True:  # until the servers, HAProxy and the bots run
        started = _children(run.pid)
        bots = folder / "bots"
        if bots.exists() and len(list(bots.glob("*.log"))) >= 3 and len(started) >= 7:
            return run, started
        assert run.poll() is None, "the cluster run ended early"
        assert time.monotonic() < deadline, "the cluster run never started its bots"
        time.sleep(0.2)


@pytest.mark.skipif(not Path("/proc").exists(), reason="the watchdog finds processes by /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_nothing_outlives_a_killed_cluster_run(
    tmp_path: Path, postgres_url: str, how: signal.Signals
) -> None:
    run, started = _start(tmp_path / "cluster", postgres_url)
    try:
        os.kill(run.pid, how)
        run.wait(60)
        deadline = time.monotonic() + GONE_WITHIN_S
        while (left := {p for p in started if _alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"still running after the run was killed: {sorted(left)}"
    finally:
        for pid in started:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
