"""After a load run: is every acknowledged action in the store exactly once, and does every
finished match's record verify?

Two independent sources, because each sees what the other cannot:

* **the SQLite file** (when the run started its own server): the ``actions`` table holds
  each stored action with its request id, so an acknowledged action is looked up by
  ``(match_id, request_id)``: it must be there once, at the acknowledged ``seq`` and seat.
  Works for matches still running when the test stopped too.
* **the published records** (``GetMatchRecord``, any server, also ``SERVER=host:port``):
  every finished match of the run is verified by replay (``speeltafel.server.engine.verify``
  on ``record_from_proto``), and each acknowledged action of it must be the record's action
  at its ``seq``, played by its seat and not by the clock. Records carry no request ids, so
  this source checks places, not identities.

The driver (``loadtests/run.py``) reads the server's store and engine here, as a tool that
audits the server; the Locust users themselves use only the SDK and the bots.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc

from loadtests.players import Ack
from speeltafel.sdk.client import Client, retry_info_delay
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.verify import verify
from speeltafel.server.wire.common import record_from_proto

T = TypeVar("T")
MAX_PROBLEMS = 20  # problems listed in full; the counts cover all of them


@dataclass
class Reconciliation:
    """What the reconciliation found; ``problems`` empty means nothing was lost or doubled."""

    acked: int = 0
    """Acknowledged actions the users logged."""
    stored_once: int = 0
    """Of those, found in the SQLite store exactly once at their seq and seat."""
    matches_created: int = 0
    matches_finished: int = 0
    records_verified: int = 0
    record_actions_checked: int = 0
    """Acknowledged actions of finished matches found at their place in the record."""
    stored_unacked: int = 0
    """Stored actions of a seat that no user logged as acknowledged (a user stopped with its
    answer in flight, or the server's clock played for it): counted, not a problem."""
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        """Note a problem (the first :data:`MAX_PROBLEMS` in full, then only the count)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)
        elif len(self.problems) == MAX_PROBLEMS:
            self.problems.append("... more problems left out")

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return dict(self.__dict__)


def read_acks(paths: Iterable[Path]) -> list[Ack]:
    """The acknowledged actions of one or more ack logs (JSON lines)."""
    acks = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if line.strip():
                acks.append(Ack(**json.loads(line)))
    return acks


def read_matches(paths: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """The matches of one or more match logs, by id."""
    matches: dict[str, dict[str, Any]] = {}
    for path in paths:
        if path.exists():
            for match_id, facts in json.loads(path.read_text()).items():
                known = matches.setdefault(match_id, facts)
                known["finished"] = bool(known.get("finished")) or bool(facts.get("finished"))
    return matches


def check_store(db: Path, acks: list[Ack], report: Reconciliation) -> None:
    """Every acknowledged action is in the SQLite store exactly once, at its seq and seat."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        matches = sorted({ack.match_id for ack in acks})
        for match_id in matches:
            for seq, seat, request_id in connection.execute(
                "SELECT seq, seat, request_id FROM actions WHERE match_id = ?", (match_id,)
            ):
                rows[(match_id, request_id)].append((seq, seat))
        acked_ids = {(ack.match_id, ack.request_id) for ack in acks}
        report.stored_unacked += sum(1 for key in rows if key not in acked_ids)
    finally:
        connection.close()
    seen: Counter[tuple[str, str]] = Counter()
    for ack in acks:
        key = (ack.match_id, ack.request_id)
        seen[key] += 1
        found = rows.get(key, [])
        if not found:
            report.problem(f"acknowledged action {ack.request_id} of {ack.match_id} is not stored")
        elif len(found) > 1:
            report.problem(
                f"action {ack.request_id} of {ack.match_id} is stored {len(found)} times"
            )
        elif found[0] != (ack.seq, ack.seat):
            report.problem(
                f"action {ack.request_id} of {ack.match_id} is stored as seq {found[0][0]} of "
                f"seat {found[0][1]}, acknowledged as seq {ack.seq} of seat {ack.seat}"
            )
        elif seen[key] == 1:
            report.stored_once += 1
    for (match_id, request_id), times in seen.items():
        # The same request id answered twice is fine only as a duplicate (a re-send).
        if times > 1:
            fresh = [a for a in acks if (a.match_id, a.request_id) == (match_id, request_id)]
            if sum(1 for a in fresh if not a.duplicate) > 1:
                report.problem(f"action {request_id} of {match_id} was accepted as new twice")


def _patiently(call: Callable[[], T], attempts: int = 50) -> T:
    """``call``, sent again after the server's RetryInfo delay while it is rate limited (the
    reconciliation reads hundreds of records over one connection)."""
    for _ in range(attempts - 1):
        try:
            return call()
        except grpc.RpcError as error:
            delay = retry_info_delay(error) if isinstance(error, grpc.Call) else None
            if delay is None:
                raise
            time.sleep(delay)
    return call()


def check_records(
    target: str,
    matches: Mapping[str, Mapping[str, Any]],
    acks: list[Ack],
    report: Reconciliation,
) -> None:
    """Every created match that finished has a record that verifies, holding each of its
    acknowledged actions at its seq, played by its seat (not by the clock)."""
    by_match: dict[str, list[Ack]] = defaultdict(list)
    for ack in acks:
        by_match[ack.match_id].append(ack)
    report.matches_created += len(matches)
    with Client(target) as client:
        for match_id in sorted(matches):
            summary = _patiently(lambda m=match_id: client.get_match(m))  # type: ignore[misc]
            if summary.status != common_pb2.MATCH_STATUS_FINISHED:
                continue
            report.matches_finished += 1
            record = _patiently(lambda m=match_id: client.record(m))  # type: ignore[misc]
            problems = verify(record_from_proto(record))
            if problems:
                report.problem(f"the record of {match_id} does not verify: {'; '.join(problems)}")
            else:
                report.records_verified += 1
            actions = {a.seq: a for a in record.actions}
            for ack in by_match.get(match_id, []):
                stored = actions.get(ack.seq)
                if stored is None or stored.seat != ack.seat or stored.clock_default:
                    report.problem(
                        f"the record of {match_id} lacks seat {ack.seat}'s acknowledged "
                        f"action at seq {ack.seq}"
                    )
                else:
                    report.record_actions_checked += 1


def reconcile(
    target: str,
    ack_logs: Iterable[Path],
    match_logs: Iterable[Path],
    db: Path | None,
) -> Reconciliation:
    """The whole reconciliation of one run (``db``: the server's SQLite file, when known)."""
    report = Reconciliation()
    acks = read_acks(ack_logs)
    matches = read_matches(match_logs)
    report.acked = len(acks)
    if db is not None:
        check_store(db, acks, report)
    check_records(target, matches, acks, report)
    return report
