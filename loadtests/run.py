"""``make load`` and ``make stress``: run the Locust bots headless, judge, reconcile.

``python -m loadtests.run load``: starts a server on a fresh SQLite file under ``--out``
(default ``var/load``) unless ``--server HOST:PORT`` is given, runs Locust headless with
``--users``, ``--spawn-rate`` and ``--run-time`` (CSV stats, the HTML report and Locust's
log under ``--out``), then reconciles (``loadtests/reconcile.py``) and prints a summary
(also ``summary.json``). It exits non-zero when Locust counted any failure, when the p99
of any RPC called at least 100 times (every unary method and ``Play submit→ack``; not
whole streams or matches, which last as long as a match) exceeds ``--p99-ms``, when no
match finished, or when the reconciliation found a lost, doubled or misplaced action or a
record that does not verify.

``python -m loadtests.run stress``: steps of ``--step-time`` seconds on one server, the
users doubling from ``--start-users``, until ``--past-knee`` steps in a row raised the
throughput by less than 10 % (or broke the p99 bound ``--p99-ms``). The knee: the fewest
users that reached 90 % of the best throughput within the bound. Then two steps with as
many users as the last: every user on **one** connection (as one tournament runner
playing many seats), and every user a naive client that polls GetView over unary calls,
which meets the server's per-token rates. It exits non-zero when any call failed with a
status other than RESOURCE_EXHAUSTED or UNAVAILABLE (for the polling bots also ABORTED
and FAILED_PRECONDITION: a stale submit, refused by design), or when the reconciliation
over every step found anything lost.

The server runs with its production limits (``server/rpc/limits.py``), nothing lifted:
one connection per user keeps an honest bot far below the per-connection and per-token
rates; the polling step shows what the rates do to a client that is not honest about them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtests.players import SUBMIT_ACK
from loadtests.reconcile import Reconciliation, reconcile
from speeltafel.cli.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[1]
LOCUSTFILE = ROOT / "loadtests" / "locustfile.py"
STOP_TIMEOUT_S = 30
"""How long a user may take to finish the match it is in when the run time is up."""
GATED_TYPES = ("grpc", "Play", "Unary")
"""Request types whose p99 is gated: unary calls and single actions."""
MIN_GATED_CALLS = 100
"""A p99 of fewer calls is their maximum (the 6 ListGames of a start-up), not a percentile."""
ALLOWED_UNDER_STRESS = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE"})
STATUS_NAME = re.compile(r"\b(OK|CANCELLED|UNKNOWN|INVALID_ARGUMENT|DEADLINE_EXCEEDED|NOT_FOUND|"
                         r"ALREADY_EXISTS|PERMISSION_DENIED|RESOURCE_EXHAUSTED|"
                         r"FAILED_PRECONDITION|ABORTED|OUT_OF_RANGE|UNIMPLEMENTED|INTERNAL|"
                         r"UNAVAILABLE|DATA_LOSS|UNAUTHENTICATED)\b")  # fmt: skip


@dataclass
class Entry:
    """One row of Locust's statistics (one request type and name)."""

    kind: str
    name: str
    requests: int
    failures: int
    rps: float
    p50: float
    p99: float


@dataclass
class StepResult:
    """One Locust run: its exit status, its rows, its failures by status."""

    users: int
    seconds: float
    exit_code: int
    entries: list[Entry]
    failures: dict[str, int]
    prefix: Path
    cpu: dict[str, float] = field(default_factory=dict)

    def entry(self, kind: str, name: str) -> Entry | None:
        """The row of ``kind`` and ``name``, if any."""
        return next((e for e in self.entries if (e.kind, e.name) == (kind, name)), None)

    @property
    def actions_per_s(self) -> float:
        """Acknowledged actions per second (the submit→ack row's successes over the run)."""
        row = self.entry("Play", SUBMIT_ACK) or self.entry("Unary", SUBMIT_ACK)
        return 0.0 if row is None else (row.requests - row.failures) / max(self.seconds, 1e-9)

    @property
    def matches(self) -> int:
        """Whole matches played to the end (every seat's, so a 3-seat match counts 3)."""
        return sum(e.requests - e.failures for e in self.entries if e.kind == "match")

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        ack = self.entry("Play", SUBMIT_ACK)
        return {
            "users": self.users,
            "seconds": round(self.seconds, 1),
            "locust_exit_code": self.exit_code,
            "actions_per_s": round(self.actions_per_s, 1),
            "submit_ack_p50_ms": ack.p50 if ack else None,
            "submit_ack_p99_ms": ack.p99 if ack else None,
            "seat_matches": self.matches,
            "failures": self.failures,
            "cpu": self.cpu,
            "rows": [e.__dict__ for e in self.entries],
        }


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def read_summary(path: Path) -> tuple[float, list[Entry], dict[str, int]]:
    """The final statistics the locustfile wrote (its ``--summary-json``): the seconds from
    the first request to the last, the rows, and the failures counted by gRPC status."""
    data = json.loads(path.read_text())
    entries = [
        Entry(
            kind=row["kind"],
            name=row["name"],
            requests=row["requests"],
            failures=row["failures"],
            rps=row["requests"] / row["seconds"] if row["seconds"] > 0 else 0.0,
            p50=row["p50"],
            p99=row["p99"],
        )
        for row in data["entries"]
    ]
    failures: dict[str, int] = {}
    for error in data["errors"]:
        # RpcFailure's text is "STATUS rule": keep both, so a report names the limit.
        found = STATUS_NAME.search(error["error"])
        rule = re.search(r"\b[A-Z_]+ ([a-z_]+)", error["error"])
        key = f"other: {error['error'][:80]}"
        if found:
            key = f"{found.group(1)} {rule.group(1)}" if rule else found.group(1)
        failures[key] = failures.get(key, 0) + int(error["count"])
    return float(data["seconds"]), entries, failures


def run_locust(
    target: str,
    out: Path,
    name: str,
    users: int,
    spawn_rate: float,
    run_time: str,
    extra: list[str],
    *,
    errors_fail: bool = True,
) -> StepResult:
    """One headless Locust run against ``target``; its CSV files, HTML report, log, ack log
    and match log are ``<out>/<name>*``."""
    prefix = out / name
    command = [
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless",
        "--host", target, "-u", str(users), "-r", str(spawn_rate), "-t", run_time,
        "--stop-timeout", str(STOP_TIMEOUT_S), "--csv", str(prefix),
        "--html", f"{prefix}.html", "--logfile", f"{prefix}.log", "--only-summary",
        "--exit-code-on-error", "1" if errors_fail else "0",
        "--ack-log", f"{prefix}_acks.jsonl", "--match-log", f"{prefix}_matches.json",
        "--summary-json", f"{prefix}_summary.json",
        *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(f"{prefix}.out", "w") as output:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            timeout=_seconds(run_time) + STOP_TIMEOUT_S + 120,
            check=False,
        )
    summary = Path(f"{prefix}_summary.json")
    if not summary.exists():
        raise RuntimeError(f"Locust wrote no summary (exit {done.returncode}): see {prefix}.out")
    seconds, entries, failures = read_summary(summary)
    return StepResult(users, seconds, done.returncode, entries, failures, prefix)


def _seconds(run_time: str) -> float:
    """Locust's run-time text (``60``, ``60s``, ``2m``, ``1h30m``) in seconds."""
    parts = re.findall(r"(\d+)([hms]?)", run_time)
    return float(sum(int(n) * {"h": 3600, "m": 60, "s": 1, "": 1}[u] for n, u in parts))


def _server(
    args: argparse.Namespace, out: Path, name: str
) -> tuple[ServerProcess | None, str, Path | None]:
    """The server to load: the given one, or one of our own on a fresh SQLite file."""
    if args.server:
        return None, args.server, None
    db = out / f"{name}.db"
    for stale in out.glob(f"{name}.db*"):
        stale.unlink()
    server = ServerProcess(
        db, out, "--grace", "5",  # the default log level, as the server ships
        log_path=out / f"{name}_server.log", die_with_parent=True,
    )  # fmt: skip
    server.start()
    return server, server.target, db


def _locust_args(args: argparse.Namespace) -> list[str]:
    extra = ["--max-seats", str(args.max_seats)]
    if args.bots:
        extra += ["--bots", args.bots]
    if args.games:
        extra += ["--games", args.games]
    return extra


def _report_reconciliation(report: Reconciliation) -> None:
    print(
        f"reconciliation: {report.acked} acknowledged actions, {report.stored_once} stored "
        f"exactly once in the store, {report.record_actions_checked} found in their records; "
        f"{report.matches_finished} of {report.matches_created} matches finished, "
        f"{report.records_verified} records verified"
    )
    for problem in report.problems:
        print(f"  PROBLEM: {problem}")


def load(args: argparse.Namespace) -> int:
    """``make load``: one run, judged."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server, target, db = _server(args, out, "load")
    try:
        step = run_locust(
            target, out, "load", args.users, args.spawn_rate, args.run_time, _locust_args(args)
        )
        report = reconcile(
            target, [Path(f"{step.prefix}_acks.jsonl")], [Path(f"{step.prefix}_matches.json")], db
        )
    finally:
        if server is not None:
            server.stop()
    verdict = []
    if step.exit_code != 0:
        verdict.append(f"Locust exited with {step.exit_code} (see {step.prefix}.out)")
    if step.failures:
        verdict.append(f"failures: {step.failures}")
    for entry in step.entries:
        gated = entry.kind in GATED_TYPES and entry.requests >= MIN_GATED_CALLS
        if gated and entry.p99 > args.p99_ms:
            verdict.append(f"p99 of {entry.name} is {entry.p99:g} ms > {args.p99_ms:g} ms")
    if report.records_verified == 0:
        verdict.append("no match finished")
    verdict += report.problems
    summary = {
        "mode": "load",
        "target": target if server is None else "own server (SQLite)",
        "p99_budget_ms": args.p99_ms,
        **step.summary(),
        "reconciliation": report.as_dict(),
        "verdict": verdict or "pass",
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(
        f"load: {args.users} users for {args.run_time}: {step.actions_per_s:.0f} actions/s, "
        f"submit→ack p50 {_ms(step, 'p50')} p99 {_ms(step, 'p99')}, "
        f"{step.matches} seat-matches played"
    )
    for entry in step.entries:
        print(
            f"  {entry.kind:7} {entry.name:16} {entry.requests:7} calls "
            f"{entry.failures:4} failed  p50 {entry.p50:6g} ms  p99 {entry.p99:6g} ms"
        )
    _report_reconciliation(report)
    print("PASS" if not verdict else "FAIL: " + "; ".join(str(v) for v in verdict))
    print(f"reports: {out}/load_stats.csv, {out}/load.html, {out}/summary.json")
    return 0 if not verdict else 1


def _ms(step: StepResult, which: str) -> str:
    row = step.entry("Play", SUBMIT_ACK)
    return "-" if row is None else f"{getattr(row, which):g} ms"


def _cpu_seconds(server: ServerProcess | None) -> tuple[float, float]:
    """CPU seconds used so far by the server (0 when not ours) and by finished children
    (each Locust run, once it has ended)."""
    import resource

    import psutil  # type: ignore[import-untyped]  # a dependency of Locust

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = 0.0
    if server is not None and server.proc is not None:
        times = psutil.Process(server.pid).cpu_times()
        server_cpu = times.user + times.system
    return server_cpu, children.ru_utime + children.ru_stime


def _step(
    args: argparse.Namespace,
    server: ServerProcess | None,
    target: str,
    out: Path,
    name: str,
    users: int,
    extra: list[str],
) -> StepResult:
    """One stress step, with the CPU share of the server and of Locust over it."""
    server_before, locust_before = _cpu_seconds(server)
    started = time.monotonic()
    step = run_locust(
        target, out, name, users, max(users / 2, 1), f"{args.step_time}s",
        [*_locust_args(args), *extra], errors_fail=False,
    )  # fmt: skip
    wall = time.monotonic() - started
    server_after, locust_after = _cpu_seconds(server)
    step.cpu = {
        "server_cores": round((server_after - server_before) / wall, 2),
        "locust_cores": round((locust_after - locust_before) / wall, 2),
    }
    row = step.entry("Play", SUBMIT_ACK) or step.entry("Unary", SUBMIT_ACK)
    p99 = "-" if row is None else f"{row.p99:g} ms"
    print(
        f"  {name:16} {users:4} users: {step.actions_per_s:6.0f} actions/s, submit→ack p99 "
        f"{p99}, CPU server {step.cpu['server_cores']:.2f} / Locust "
        f"{step.cpu['locust_cores']:.2f} cores, failures {step.failures or 0}",
        flush=True,
    )
    return step


def find_knee(steps: list[StepResult], p99_ms: float) -> StepResult | None:
    """The knee of a ramp: the fewest users that reach 90 % of the best throughput seen
    within the p99 bound (one noisy step on a shared machine moves neither the best nor
    the 90 % much); None when no step kept its p99 within the bound."""
    within = [s for s in steps if (s.entry("Play", SUBMIT_ACK) or _NO_ROW).p99 <= p99_ms]
    if not within:
        return None
    best = max(s.actions_per_s for s in within)
    return min((s for s in within if s.actions_per_s >= 0.9 * best), key=lambda s: s.users)


_NO_ROW = Entry("", "", 0, 0, 0.0, 0.0, float("inf"))


def stress(args: argparse.Namespace) -> int:
    """``make stress``: ramp past the knee, then one shared connection and polling bots."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server, target, db = _server(args, out, "stress")
    steps: list[StepResult] = []
    try:
        users, best, flat = args.start_users, 0.0, 0
        print(f"stress: steps of {args.step_time} s against {target}", flush=True)
        while users <= args.max_users:
            step = _step(args, server, target, out, f"stress_{users:04d}", users, [])
            steps.append(step)
            p99 = (step.entry("Play", SUBMIT_ACK) or _NO_ROW).p99
            # Ramp on while the throughput still rises by 10 %; stop after --past-knee
            # steps in a row that do not (or whose p99 is past the bound).
            rising = step.actions_per_s >= 1.1 * best and p99 <= args.p99_ms
            flat = 0 if rising else flat + 1
            best = max(best, step.actions_per_s)
            if flat > args.past_knee:
                break
            users *= 2
        top = steps[-1].users
        shared = _step(args, server, target, out, "stress_shared", top, ["--shared-channel"])
        polling = _step(args, server, target, out, "stress_polling", top, ["--polling"])
        every = [*steps, shared, polling]
        report = reconcile(
            target,
            [Path(f"{s.prefix}_acks.jsonl") for s in every],
            [Path(f"{s.prefix}_matches.json") for s in every],
            db,
        )
    finally:
        if server is not None:
            server.stop()
    knee = find_knee(steps, args.p99_ms)
    verdict = []
    for step in every:
        # A polling bot's stale submit is refused by design (ABORTED), and so is one that
        # came after the move was decided (FAILED_PRECONDITION): it chooses again.
        allowed = ALLOWED_UNDER_STRESS | (
            {"ABORTED", "FAILED_PRECONDITION"} if step is polling else set()
        )
        bad = {k: v for k, v in step.failures.items() if k.split(" ")[0] not in allowed}
        if bad:
            verdict.append(f"{step.prefix.name} ({step.users} users): {bad}")
    verdict += report.problems
    summary = {
        "mode": "stress",
        "target": target if server is None else "own server (SQLite)",
        "p99_bound_ms": args.p99_ms,
        "knee_users": knee.users if knee else None,
        "knee_actions_per_s": round(knee.actions_per_s, 1) if knee else None,
        "steps": [s.summary() for s in steps],
        "shared_connection": shared.summary(),
        "polling": polling.summary(),
        "reconciliation": report.as_dict(),
        "verdict": verdict or "pass",
    }
    (out / "stress_summary.json").write_text(json.dumps(summary, indent=1))
    if knee is None:
        print(f"no step kept submit→ack p99 within {args.p99_ms:g} ms")
    else:
        print(
            f"knee: {knee.users} users, {knee.actions_per_s:.0f} actions/s "
            f"(submit→ack p50 {_ms(knee, 'p50')}, p99 {_ms(knee, 'p99')}); more users "
            f"add latency, not throughput"
        )
    refused = sum(v for k, v in polling.failures.items() if k.startswith("RESOURCE_EXHAUSTED"))
    print(
        f"limits: {top} users on one connection: {shared.failures or 'no failures'}; "
        f"{top} polling bots: {refused} calls refused with RESOURCE_EXHAUSTED (RetryInfo "
        f"honoured), {polling.actions_per_s:.0f} actions/s"
    )
    _report_reconciliation(report)
    print("PASS" if not verdict else "FAIL: " + "; ".join(str(v) for v in verdict))
    print(f"reports: {out}/stress_*.csv, {out}/stress_*.html, {out}/stress_summary.json")
    return 0 if not verdict else 1


def build_parser() -> argparse.ArgumentParser:
    """The driver's command line (the Makefile passes its variables here)."""
    parser = argparse.ArgumentParser(prog="python -m loadtests.run", description=__doc__)
    parser.add_argument("mode", choices=("load", "stress"))
    parser.add_argument("--server", default="", help="HOST:PORT (default: start our own)")
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--spawn-rate", type=float, default=4.0)
    parser.add_argument("--run-time", default="60s")
    parser.add_argument("--p99-ms", type=float, default=100.0)
    parser.add_argument("--out", default="var/load")
    parser.add_argument("--max-seats", type=int, default=4)
    parser.add_argument(
        "--bots", default="", help="bot names to draw from (default: all but search)"
    )
    parser.add_argument("--games", default="", help="game ids (default: every game offered)")
    parser.add_argument("--start-users", type=int, default=2, help="stress: the first step")
    parser.add_argument("--max-users", type=int, default=256, help="stress: the last step")
    parser.add_argument("--step-time", type=int, default=20, help="stress: seconds a step")
    parser.add_argument(
        "--past-knee", type=int, default=2, help="stress: steps without a rise before stopping"
    )
    return parser


def main() -> None:
    """Entry point."""
    args = build_parser().parse_args()
    sys.exit(load(args) if args.mode == "load" else stress(args))


if __name__ == "__main__":
    main()
