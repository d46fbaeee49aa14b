"""A decision's system calls on the server, next to an echo exchange's, counted.

``make bench`` (b) prints a decision's kernel time next to an echo exchange's, and
``bench_instructions.py`` counts the user-space instructions of both. This script counts
what the kernel time is made of: the server's system calls, by name, with ``strace -f
-c`` (every thread: the event loop, gRPC's poller, the SQLite writer). Like the
instructions, a count does not move with the host's noise the way seconds do; unlike them
it depends on how messages fall in time (a slow traced server batches more), so it is
read as a ratio to the echo's, counted the same way in the same run.

The workloads are ``bench_instructions.py``'s: ``--tables`` tables of the bench's lean
client playing ``--matches`` 3-deal trial Take 5 matches each, then three times as many;
``--streams`` EchoStream calls of ``--exchanges`` messages with two replies each (a
decision's three messages), then three times as many. The difference over the difference
in decisions (exchanges) is one decision's (exchange's) calls; start-up and shut-down
cancel out. The game runs on the memory store and on SQLite (``--stores``), the echo on
the memory store. strace's own times are not reported: tracing slows every call.

Run: ``.venv/bin/python scripts/bench_syscalls.py`` (about half a minute). Needs
``strace``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_instructions import echo, play

from speeltafel.cli.server_process import ServerProcess

START_S = 120.0
STOP_S = 120.0

_LINE = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def parse_summary(text: str) -> collections.Counter[str]:
    """Calls by system call name from ``strace -c``'s table (the "total" row left out).

    A row is ``% time, seconds, usecs/call, calls, errors, syscall``; errors may be
    empty (the total row of older versions has no usecs/call, and is left out anyway)."""
    calls: collections.Counter[str] = collections.Counter()
    for line in text.splitlines():
        found = _LINE.match(line)
        if found and found.group(2) != "total":
            calls[found.group(2)] += int(found.group(1))
    return calls


def per_unit(
    small: tuple[int, collections.Counter[str]], large: tuple[int, collections.Counter[str]]
) -> dict[str, float]:
    """Each call's count per unit (decision or exchange) between two runs, and "total"."""
    units = large[0] - small[0]
    if units <= 0:
        raise ValueError(f"the larger run did no more work ({small[0]} then {large[0]})")
    each = {
        name: (large[1][name] - small[1][name]) / units for name in set(small[1]) | set(large[1])
    }
    each["total"] = sum(each.values())
    return each


class TracedServer(ServerProcess):
    """The server under ``strace -f -c``, its summary written to ``out``."""

    def __init__(self, db: str, folder: Path, out: Path) -> None:
        super().__init__(db, folder, "--diagnostics")  # default log level
        self.out = out

    def command(self) -> list[str]:
        return ["strace", "-f", "-c", "-o", str(self.out), *super().command()]

    def stop(self, timeout: float = STOP_S) -> int | None:
        """SIGTERM to the traced server (strace writes its table once the server ends)."""
        proc = self.proc
        if proc is None:
            return None
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        for pid in children.read_text().split() if children.exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)
        return super().stop(timeout=10)  # strace itself, should it still run


def one_run(
    folder: Path, name: str, store: str, work: Callable[[str], Coroutine[Any, Any, int]]
) -> tuple[int, collections.Counter[str]]:
    """A traced server on ``store`` ("memory" or "sqlite", a new file) serves
    ``work(target)``, then stops; the units of work done and the server's calls."""
    out = folder / f"{name}.strace"
    db = ":memory:" if store == "memory" else str(folder / f"{name}.db")
    server = TracedServer(db, folder / name, out)
    server.start(timeout=START_S)
    try:
        units = asyncio.run(work(server.target))
    finally:
        code = server.stop()
    if code != 0 or not out.exists() or not out.read_text().strip():
        raise RuntimeError(f"the traced server ended with {code}:\n{server.log_tail()}")
    return units, parse_summary(out.read_text())


def measure(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    workloads: list[tuple[str, str, str, Callable[[int], Any], int]] = [
        (
            f"a decision ({store})",
            f"game-{store}",
            store,
            lambda n: functools.partial(play, tables=args.tables, matches=n),
            args.matches,
        )
        for store in args.stores
    ]
    workloads.append(
        (
            "an echo exchange",
            "echo",
            "memory",
            lambda n: functools.partial(echo, streams=args.streams, exchanges=n),
            args.exchanges,
        )
    )
    folder = Path(tempfile.mkdtemp(prefix="speeltafel-syscalls-"))
    results: dict[str, dict[str, float]] = {}
    try:
        for column, name, store, make_work, base in workloads:
            runs = []
            for scale in (1, 3):
                print(f"{name}: x {scale * base}...")
                work = make_work(scale * base)
                runs.append(one_run(folder, f"{name}-{scale}", store, work))
            results[column] = per_unit(runs[0], runs[1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results


def report(results: dict[str, dict[str, float]]) -> None:
    from rich.console import Console
    from rich.table import Table

    names = sorted(
        {name for each in results.values() for name in each if name != "total"},
        key=lambda name: -max(each.get(name, 0.0) for each in results.values()),
    )
    table = Table(title="system calls of the server (strace -f -c), per unit")
    table.add_column("call")
    for column in results:
        table.add_column(column, justify="right")
    for name in [*names, "total"]:
        cells = [results[column].get(name, 0.0) for column in results]
        if name == "total" or max(abs(c) for c in cells) >= 0.05:
            table.add_row(name, *(f"{c:.2f}" for c in cells))
    Console().print(table)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--stores", nargs="+", choices=("memory", "sqlite"),
                        default=["memory", "sqlite"])  # fmt: skip
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--matches", type=int, default=1, help="per table, small run")
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--exchanges", type=int, default=50, help="per stream, small run")
    parser.add_argument("--json", type=Path, default=Path("var/bench_syscalls.json"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("strace") is None:
        print("strace is not installed (apt-get install strace)", file=sys.stderr)
        return 2
    results = measure(args)
    report(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2, sort_keys=True))
    print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
