"""Fairness figures: an honest Take 5 client alone, then under each attack of the issue.

A server subprocess (SQLite in a temporary folder), the attacker of
``tests/service/attacker.py`` in its own process, and the honest client in this process
(its own channel; 2 seats, bots choosing ``legal_actions[0]``, ListGames / CreateMatch /
JoinMatch / GetMatch around every match). For each attack: honest moves/s and view-to-ack
p99 alone, then attacked, their ratio (the issue asks >= 0.5), and the CPU the attacker
and the server used during the attacked window (from /proc/<pid>/stat, in % of one core).

Usage: ``.venv/bin/python scripts/fairness.py [--seconds 10] [--attacks a,b]``.
Shared machines are noisy: compare the ratio, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "service"))

from attacker import ATTACKS, HonestResult, honest_run  # type: ignore[import-not-found]  # noqa: E402

ATTACKER = ROOT / "tests" / "service" / "attacker.py"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def start_server(workdir: Path) -> tuple[asyncio.subprocess.Process, str]:
    port_file = workdir / "port"
    command = [
        sys.executable, "-m", "speeltafel.server", "--host", "127.0.0.1", "--port", "0",
        "--db", str(workdir / "fairness.db"), "--port-file", str(port_file),
        "--log-level", "warning",
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while not (port_file.exists() and port_file.read_text().endswith("\n")):
        if proc.returncode is not None or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        await asyncio.sleep(0.05)
    return proc, f"127.0.0.1:{int(port_file.read_text())}"


async def attacked_run(
    target: str, attack: str, seconds: float, server_pid: int
) -> tuple[HonestResult, dict[str, Any], float, float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ATTACKER), target, attack, "--seconds", str(seconds * 4),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdin is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    if line != b"ready\n":
        raise RuntimeError(f"attacker {attack} did not start: {line!r}")
    attacker_cpu, server_cpu, started = (
        cpu_seconds(proc.pid),
        cpu_seconds(server_pid),
        time.perf_counter(),
    )
    honest = await honest_run(target, seconds)
    elapsed = time.perf_counter() - started
    attacker_share = (cpu_seconds(proc.pid) - attacker_cpu) / elapsed
    server_share = (cpu_seconds(server_pid) - server_cpu) / elapsed
    proc.stdin.close()
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    summary: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    return honest, summary, attacker_share, server_share


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="attacked window")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    args = parser.parse_args()
    attacks = [a for a in args.attacks.split(",") if a]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server, target = await start_server(Path(tmp))
        try:
            for attack in attacks:
                alone = await honest_run(target, args.seconds / 2)
                honest, summary, attacker_cpu, server_cpu = await attacked_run(
                    target, attack, args.seconds, server.pid
                )
                refused = len(alone.refused) + len(honest.refused)
                rows.append(
                    (
                        attack,
                        f"{alone.moves_per_s:.0f}",
                        f"{alone.p99_ms:.1f}",
                        f"{honest.moves_per_s:.0f}",
                        f"{honest.p99_ms:.1f}",
                        f"{honest.moves_per_s / alone.moves_per_s:.2f}",
                        str(refused),
                        f"{summary['calls_per_s']:.0f}",
                        f"{100 * attacker_cpu:.0f}%",
                        f"{100 * server_cpu:.0f}%",
                    )
                )
                print(f"{attack}: {json.dumps(summary)}", file=sys.stderr, flush=True)
                for reason in alone.refused + honest.refused:
                    print(f"{attack}: honest call refused: {reason}", file=sys.stderr)
        finally:
            server.terminate()
            await asyncio.wait_for(server.wait(), 10)
    header = (
        "attack", "alone mv/s", "alone p99 ms", "attacked mv/s", "attacked p99 ms", "ratio",
        "honest refused", "attacker calls/s", "attacker CPU", "server CPU",
    )  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    asyncio.run(main())
