"""A decision's server cost in instructions, which the host's noise does not move.

``make bench`` measures seconds, and on a shared 2-core host its figures move 10-15% from
run to run, more than most single changes to the server are worth. This script counts the
user-space instructions executed instead (``valgrind --tool=callgrind``). Kernel time
(system calls, waking threads) is not counted; ``make bench`` (b) prints the server's user
and kernel time apart. Two parts (``--only runtime`` or ``server``; both by default):

* **the runtime in process, exactly.** ``decision_work.measure_runtime_work`` (the
  decision through the runtime and the service's helpers, no gRPC) made deterministic and
  counted in a process of its own: 16 tables play ``--runtime-matches`` matches each, then
  twice as many, and the difference over the difference in decisions is a decision's
  count (start-up and shut-down cancel out). Every seat chooses with its own seeded
  generator, the match seeds and tokens come from a seeded generator, and the clock ticks
  a millisecond per reading, so two runs of the same code execute the same decisions.
  Back to back they agree to a thousandth of a percent; hours apart, or after an
  unrelated edit to this script, to 0.15% (memory layout): the figure for an A/B of a
  change of a few tenths of a percent, both trees counted in one run (``--compare``).
* **the server, split by library.** A server under callgrind on the memory store (the
  store's thread and fsyncs are (b)'s business; ``--store sqlite`` for the game's runs
  counts the SQLite store's user-space work as well) serves, in four runs: ``--tables`` tables
  of four random bots (the bench's lean client and ``play_seat``) playing ``--matches``
  3-deal trial Take 5 matches each, then three times as many; and ``--streams`` EchoStream
  calls of ``--exchanges`` messages answered with two replies each (a decision's three
  messages, no server work), then three times as many. A decision (matches' setups and
  ends included, as in (b)) and an echo exchange are each put into the libraries their
  instructions ran in: the Python interpreter (the server's own Python), gRPC (its Cython
  layer and C core are one library), protobuf, uvloop, asyncio's C part, libc and the
  rest. The client runs outside valgrind, so every message reaches the slow server alone
  (the low-load end of (c)). These repeat to a few percent, not exactly: how much gRPC's
  core and the loop do for a message depends on how the messages fall in time (the same
  echo cost 143k instructions an exchange in one run and 168k in another).

``--compare PYTHON``: count another tree as well (a ``git worktree`` of another commit
with its own venv: its ``.venv/bin/python``) and print both with their ratio. Instruction
counts stand in for time only between builds of the same kind: Cython-compiled modules
ran 13-17% fewer instructions than the same source interpreted, and no less time
(docs/performance-rounds.md, round 20).

Run: ``.venv/bin/python scripts/bench_instructions.py`` (about 7 minutes; ``--only
runtime`` about 2), or ``make bench-instructions``. Needs ``valgrind``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import TimedRandomBot, own_connection

from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import RunStats, play_seat
from speeltafel.sdk.v1 import diagnostics_pb2, diagnostics_pb2_grpc

GAME_ID = "take5"
SEATS = 4
START_S = 300.0
"""Under callgrind a server starts some 50 times slower."""
STOP_S = 300.0
RUNTIME_TABLES = 16
"""Tables of the runtime in process, as ``make bench`` (b) plays them."""

LIBRARIES = (
    ("python", "libpython"),
    ("grpc", "cygrpc"),
    ("protobuf", "_message"),
    ("uvloop", "uvloop"),
    ("asyncio", "_asyncio"),
    ("libc", "libc.so"),
)
"""The parts a cost is put in, by the name of the object file it ran in (the first match);
anything else is "other" (zlib, hashlib, the dynamic linker, ...)."""


def part_of(obj: str) -> str:
    for part, marker in LIBRARIES:
        if marker in obj:
            return part
    return "other"


_REF = re.compile(r"\((\d+)\)(?:\s+(.*))?")


def self_cost_by_object(lines: Iterable[str]) -> collections.Counter[str]:
    """The instructions executed in each object file (self cost, calls excluded) of a
    callgrind output file, read in its own format: ``ob=`` names the current object
    (compressed as ``(id) name`` once, ``(id)`` after), a cost line is ``position cost``,
    and the cost line right after ``calls=`` is a call's inclusive cost, which belongs to
    the callee and is skipped."""
    names: dict[str, str] = {}
    obj = "?"
    after_calls = False
    costs: collections.Counter[str] = collections.Counter()
    for line in lines:
        head = line[:1]
        if head.isdigit() or head in "+-*":
            fields = line.split()
            if len(fields) < 2:
                continue
            if after_calls:
                after_calls = False
                continue
            costs[obj] += int(fields[1])
        elif line.startswith("ob="):
            obj = _named(names, line[3:].strip())
        elif line.startswith("cob="):
            _named(names, line[4:].strip())  # a callee's object: only its name is learnt
        elif line.startswith("calls="):
            after_calls = True
    return costs


def _named(names: dict[str, str], text: str) -> str:
    match = _REF.fullmatch(text)
    if match is None:
        return text
    ident, name = match.groups()
    if name is not None:
        names[ident] = name
    return names.get(ident, ident)


@dataclass
class Counted:
    """One counted run: its instructions by part and the units (decisions, exchanges) it
    served."""

    units: int
    parts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.parts.values())


def counted(out_file: Path, units: int) -> Counted:
    with out_file.open(errors="replace") as lines:
        by_object = self_cost_by_object(lines)
    parts: collections.Counter[str] = collections.Counter()
    for obj, cost in by_object.items():
        parts[part_of(obj)] += cost
    return Counted(units, dict(parts))


def per_unit(small: Counted, large: Counted) -> dict[str, float]:
    """Instructions per unit (decision or exchange) by part, from two runs that differ
    only in how many units they served."""
    units = large.units - small.units
    if units <= 0:
        raise ValueError("the larger run served no more than the smaller one")
    parts = set(small.parts) | set(large.parts)
    each = {p: (large.parts.get(p, 0) - small.parts.get(p, 0)) / units for p in parts}
    each["total"] = (large.total - small.total) / units
    return each


class CountedServer(ServerProcess):
    """The server under ``valgrind --tool=callgrind``, its counts written to ``out``."""

    def __init__(self, folder: Path, out: Path, python: str, db: str | Path = ":memory:") -> None:
        super().__init__(db, folder, "--diagnostics")  # default log level
        self.out = out
        self.python = python

    def command(self) -> list[str]:
        command = super().command()
        return [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={self.out}",
            self.python, *command[1:],
        ]  # fmt: skip


async def play(target: str, tables: int, matches: int) -> int:
    """Every table plays ``matches`` matches one after another; the decisions made."""
    clients = [AsyncClient(target, channel=own_connection(target)) for _ in range(tables)]
    stats: list[RunStats] = []

    async def table(index: int) -> None:
        client = clients[index]
        for number in range(matches):
            created = await client.create_match(GAME_ID, SEATS, {"edition": "trial"})
            seats = await asyncio.gather(
                *(client.join(created.match_id, name=f"i-{index}-{s}") for s in range(SEATS))
            )
            async with asyncio.TaskGroup() as group:
                for seat in seats:
                    stats.append(RunStats())
                    bot = TimedRandomBot(seed=index * 1_000_003 + number * 101 + seat.seat)
                    group.create_task(play_seat(client, seat, bot, stats=stats[-1]))

    try:
        await asyncio.gather(*(table(i) for i in range(tables)))
    finally:
        for client in clients:
            await client.channel.close()
    return sum(s.actions for s in stats)


async def echo(target: str, streams: int, exchanges: int) -> int:
    """``streams`` EchoStream calls of ``exchanges`` messages with two replies each."""
    channels = [own_connection(target) for _ in range(min(streams, 8))]
    stubs = [diagnostics_pb2_grpc.DiagnosticsServiceStub(c) for c in channels]  # type: ignore[no-untyped-call]

    async def stream(index: int) -> None:
        call = stubs[index % len(stubs)].EchoStream()
        message = diagnostics_pb2.EchoStreamRequest(sequence=index, replies=2)
        for _ in range(exchanges):
            await call.write(message)
            await call.read()
            await call.read()
        await call.done_writing()

    try:
        await asyncio.gather(*(stream(i) for i in range(streams)))
    finally:
        for channel in channels:
            await channel.close()
    return streams * exchanges


def one_run(folder: Path, python: str, name: str, work: Any, store: str = "memory") -> Counted:
    """A server under callgrind serves ``work(target)``, then stops; its counts."""
    out = folder / f"{name}.callgrind"
    db = ":memory:" if store == "memory" else folder / name / "matches.db"
    server = CountedServer(folder / name, out, python, db)
    server.start(timeout=START_S)
    try:
        units = asyncio.run(work(server.target))
    finally:
        code = server.stop(timeout=STOP_S)
    if code != 0 or not out.exists():
        raise RuntimeError(f"the server under callgrind ended with {code}:\n{server.log_tail()}")
    return counted(out, units)


class SeededSecrets:
    """What the runtime takes from ``secrets`` (match seeds, ids, token keys, tokens), from
    a seeded generator: the runtime's matches are then the same in every run."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def token_bytes(self, size: int) -> bytes:
        return self._random.randbytes(size)

    def token_hex(self, size: int) -> str:
        return self.token_bytes(size).hex()

    def token_urlsafe(self, size: int) -> str:
        return base64.urlsafe_b64encode(self.token_bytes(size)).rstrip(b"=").decode()


class TickingClock:
    """A millisecond per reading from a fixed start: the same times in every run (far
    from every move deadline, which the runtime is given an hour for)."""

    def __init__(self) -> None:
        self.ms = 1_800_000_000_000

    def now_ms(self) -> int:
        self.ms += 1
        return self.ms


def runtime_child(matches: int) -> None:
    """Run inside callgrind: the runtime's deterministic workload; prints its decisions."""
    import decision_work

    from speeltafel.server.app import runtime as runtime_module
    from speeltafel.server.store.memory import MemoryStore

    # The module's ``secrets`` is replaced for this process alone (a benchmark's child).
    setattr(runtime_module, "secrets", SeededSecrets(20261207))  # noqa: B010
    config = runtime_module.RuntimeConfig(
        default_move_clock_ms=3_600_000,  # no clock runs out, whatever valgrind's pace
        finished_whole_s=3_600.0,  # and no finished match is compacted during the run
    )

    def make_runtime() -> Any:
        return runtime_module.MatchRuntime(MemoryStore(), config, clock=TickingClock())

    work = decision_work.runtime_work(
        0.0, tables=RUNTIME_TABLES, matches=matches, make_runtime=make_runtime
    )
    print(json.dumps({"decisions": work.decisions, "matches": work.matches}))


def runtime_run(folder: Path, python: str, matches: int) -> Counted:
    out = folder / f"runtime{matches}.callgrind"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python]
    command += [str(Path(__file__).resolve()), "--runtime-child", str(matches)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=False,
    )
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(
            f"the runtime under callgrind ended with {done.returncode}:\n{done.stderr[-2000:]}"
        )
    decisions = json.loads(done.stdout.strip().splitlines()[-1])["decisions"]
    return counted(out, decisions)


def measure(python: str, args: argparse.Namespace, label: str) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="speeltafel-instructions-"))
    results: dict[str, Any] = {"python": python}
    try:
        if args.only in ("all", "runtime"):
            small = args.runtime_matches
            print(
                f"[{label}] the runtime in process: {RUNTIME_TABLES} tables x {small} matches, "
                f"x {2 * small}..."
            )
            one = runtime_run(folder, python, small)
            two = runtime_run(folder, python, 2 * small)
            results["runtime_decisions"] = [one.units, two.units]
            results["runtime"] = per_unit(one, two)
        if args.only in ("all", "server"):
            results.update(measure_server(folder, python, args, label))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results


def measure_server(
    folder: Path, python: str, args: argparse.Namespace, label: str
) -> dict[str, Any]:
    workloads = (
        ("game", f"{args.tables} tables x {{}} matches", args.matches, args.tables, play),
        ("echo", f"{args.streams} streams x {{}} exchanges", args.exchanges, args.streams, echo),
    )
    runs: dict[str, Counted] = {}
    for scale in (1, 3):
        for name, what, base, width, work in workloads:
            count = scale * base
            print(f"[{label}] {name}: {what.format(count)}...")
            runs[f"{name}{scale}"] = one_run(
                folder,
                python,
                f"{name}{scale}",
                lambda t, w=work, a=width, n=count: w(t, a, n),
                args.store if name == "game" else "memory",
            )
    decision = per_unit(runs["game1"], runs["game3"])
    exchange = per_unit(runs["echo1"], runs["echo3"])
    return {
        "decisions": [runs["game1"].units, runs["game3"].units],
        "exchanges": [runs["echo1"].units, runs["echo3"].units],
        "decision": decision,
        "exchange": exchange,
        "decision_over_exchange": decision["total"] / exchange["total"],
        "runs": {k: asdict(v) for k, v in runs.items()},
    }


PARTS = ("total", "python", "grpc", "protobuf", "uvloop", "asyncio", "libc", "other")


def _cell(figures: dict[str, float], part: str) -> str:
    value = figures.get(part, 0.0)
    share = value / figures["total"] if part != "total" and figures["total"] else None
    return f"{value / 1000:,.1f}" + (f" ({share:.0%})" if share else "")


def report(results: list[tuple[str, dict[str, Any]]], store: str = "memory") -> None:
    from rich.console import Console
    from rich.table import Table

    columns = [
        (what, heading)
        for what, heading in (
            ("runtime", "the runtime in process: a decision"),
            ("decision", "the server: a decision"),
            ("exchange", "the server: an echo exchange (3 messages)"),
        )
        if any(what in result for _, result in results)
    ]
    table = Table(
        title=f"instructions executed (callgrind; the game on the {store} store), thousands"
    )
    table.add_column("part")
    for label, _ in results:
        for _, heading in columns:
            table.add_column(f"{label}: {heading}", justify="right")
    for part in PARTS:
        cells = [
            _cell(result[what], part) if what in result else "-"
            for _, result in results
            for what, _ in columns
        ]
        table.add_row(part, *cells)
    Console().print(table)
    for label, result in results:
        if "decision" in result:
            print(
                f"{label}: a decision = {result['decision_over_exchange']:.2f} echo exchanges "
                f"(decisions {result['decisions']}, exchanges {result['exchanges']})"
            )
    if len(results) == 2:
        (a, first), (b, second) = results
        for what, _ in columns:
            if what in first and what in second:
                total = second[what]["total"] / first[what]["total"]
                python = second[what]["python"] / first[what]["python"]
                print(f"{b} / {a}, {what}: instructions {total:.4f}, of them Python's {python:.4f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", choices=("all", "runtime", "server"), default="all")
    parser.add_argument("--runtime-matches", type=int, default=1, help="per table, small run")
    parser.add_argument("--tables", type=int, default=8, help="the server's game tables")
    parser.add_argument("--matches", type=int, default=1, help="per table, small run")
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--exchanges", type=int, default=50, help="per stream, small run")
    parser.add_argument(
        "--store",
        choices=("memory", "sqlite"),
        default="memory",
        help="the game server's store (default memory; sqlite counts the store's user-space"
        " work too, its threads' wake-ups and GIL hand-offs included)",
    )
    parser.add_argument(
        "--compare",
        metavar="PYTHON",
        help="also measure another tree: the python of that tree's venv",
    )
    parser.add_argument("--json", type=Path, default=Path("var/bench_instructions.json"))
    parser.add_argument("--runtime-child", type=int, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.runtime_child is not None:
        runtime_child(args.runtime_child)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    results = [("this tree", measure(sys.executable, args, "this tree"))]
    if args.compare:
        results.insert(0, ("compared", measure(args.compare, args, "compared")))
    report(results, args.store)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(dict(results), indent=2))
    print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
