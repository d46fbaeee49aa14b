"""``speeltafel verify RECORD``: check a finished match's record without trusting the server.

RECORD is a file or a match id. A file may hold

- one ``MatchRecord`` in the protobuf JSON mapping (what ``speeltafel tournament export``
  writes into a folder), or one ``ExportRecordsResponse`` in JSON (its ``record``),
- JSON Lines of those (``speeltafel tournament export --jsonl``): every line is checked,
- one binary ``MatchRecord`` (``SerializeToString``).

Anything else is taken as a match id and fetched with ``GetMatchRecord`` from ``--server``.

For every record: the revealed seed must hash to the commitment published at creation; the
published shuffle key must be the documented HMAC of that seed with the seats' entropy (so
the deal is recomputed from the seed and entropy, never taken from the record); every
action must replay legally with this install's engine; the replayed final state must hash
to the published value; and the outcome the record states must be the one the rules give.
The engine part is :func:`speeltafel.server.engine.verify.verify`; this module adds the
shuffle key and outcome checks, which need the record's protobuf fields.

Each record gets one line (``OK`` or ``FAIL`` with every problem found); the exit status is
0 when every record verifies, else 1 (a file or match that cannot be read counts as a
failure too, with its own line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.v1 import common_pb2, tournament_pb2
from speeltafel.server.engine.core import EngineError, shuffle_key
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.engine.verify import replay, verify
from speeltafel.server.wire.common import record_from_proto

DEFAULT_SERVER = "127.0.0.1:50051"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What verifying one record found: no problems means it verifies."""

    label: str
    """Which record: its match id (and its line, for JSON Lines)."""
    problems: tuple[str, ...]
    summary: str = ""
    """For a record that verifies: what was checked."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        """The one-line verdict."""
        if self.ok:
            return f"OK   {self.label}: {self.summary}"
        return f"FAIL {self.label}: {'; '.join(self.problems)}"


class Unreadable(ValueError):
    """The input is not a record in any of the accepted forms."""


def check_record(record: common_pb2.MatchRecord) -> list[str]:
    """Every problem with a record: the engine's checks (commitment, replay, final hash,
    termination) plus the published shuffle key and the stated outcome."""
    if record.game not in GAMES:
        return [f"this install does not know the game {record.game[:32]!r}"]
    recorded = record_from_proto(record)
    problems = verify(recorded)
    if recorded.termination == "forfeit":
        problems = [p for p in problems if p != FORFEIT_REFUSED] + _forfeit_problems(record)
    if record.shuffle_key and record.shuffle_key != shuffle_key(
        recorded.server_seed, recorded.entropies
    ):
        problems.append("the published shuffle key is not the HMAC of the seed and entropy")
    if not problems and recorded.termination == "normal":
        try:
            outcome = GAMES[record.game].outcome(replay(recorded))
        except EngineError as exc:  # verify replayed it already; kept for safety
            return [f"the recorded actions do not replay: {exc.message}"]
        stated = record.outcome
        if outcome is not None and (
            tuple(stated.scores) != outcome.scores
            or tuple(stated.ranks) != outcome.ranks
            or not all(
                math.isclose(a, b, abs_tol=1e-9)
                for a, b in zip(stated.utilities, outcome.utilities, strict=False)
            )
            or len(stated.utilities) != len(outcome.utilities)
        ):
            problems.append(
                f"the stated outcome (scores {list(stated.scores)}, ranks "
                f"{list(stated.ranks)}) is not the rules' (scores {list(outcome.scores)}, "
                f"ranks {list(outcome.ranks)})"
            )
    rules_version = GAMES[record.game].info.rules_version
    if problems and record.rules_version and record.rules_version != rules_version:
        problems.append(
            f"(the record was played under rules v{record.rules_version}, "
            f"this install has v{rules_version})"
        )
    return problems


FORFEIT_REFUSED = "a record cannot verify with termination 'forfeit'"
"""What the engine's verify says of a forfeit, which it cannot judge alone (see below)."""


def _forfeit_problems(record: common_pb2.MatchRecord) -> list[str]:
    """A tournament's "lose" forfeit: the server ended the match when a seat had missed
    too many deadlines, so its actions replay to a state the rules have not finished, and
    the outcome is the policy's (the seat last alone with utility -1, the others share
    the rest, no scores). The record does not carry the tournament's miss limit, so what
    can be checked is that shape and that the seat did miss deadlines (clock defaults)."""
    game = GAMES[record.game]
    try:
        if game.outcome(replay(record_from_proto(record))) is not None:
            return ["the record claims a forfeit but its actions finish the match"]
    except EngineError:
        return []  # verify has said so already
    seats = record.seats
    outcome = record.outcome
    losers = [s for s, u in enumerate(outcome.utilities) if u == -1.0]
    share = 1.0 / (seats - 1) if seats > 1 else 0.0
    expected_ranks = [seats if s in losers else 1 for s in range(seats)]
    if (
        len(losers) != 1
        or list(outcome.ranks) != expected_ranks
        or any(score != 0 for score in outcome.scores)
        or any(
            not math.isclose(u, share) for s, u in enumerate(outcome.utilities) if s not in losers
        )
    ):
        return ["the forfeit's outcome is not one seat last alone and the others sharing"]
    if not any(a.seat == losers[0] and a.clock_default for a in record.actions):
        return [f"seat {losers[0]} is said to have forfeited but missed no deadline"]
    return []


def verdict(record: common_pb2.MatchRecord, label: str = "") -> Verdict:
    """Verify one record and say so in a :class:`Verdict`."""
    label = label or f"match {record.match_id or '(no id)'}"
    problems = check_record(record)
    summary = (
        f"{record.game}, {record.seats} seats, {len(record.actions)} actions: seed matches "
        f"the commitment, deal recomputed from seed and entropy, every action legal, "
        f"final state hash matches"
    )
    return Verdict(label, tuple(problems), summary)


def _record_from_json(text: str) -> common_pb2.MatchRecord:
    """A MatchRecord from its JSON, or from an ExportRecordsResponse's JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"not JSON: {exc.msg} at line {exc.lineno}") from exc
    if not isinstance(data, dict):
        raise Unreadable("JSON that is not an object")
    try:
        if "record" in data:
            exported = tournament_pb2.ExportRecordsResponse()
            json_format.ParseDict(data, exported)
            return exported.record
        record = common_pb2.MatchRecord()
        json_format.ParseDict(data, record)
        return record
    except json_format.ParseError as exc:
        raise Unreadable(f"not a MatchRecord: {str(exc)[:200]}") from exc


def records_from_bytes(data: bytes, name: str) -> list[tuple[str, common_pb2.MatchRecord]]:
    """The records in a file's contents, each with its label. Unreadable for none."""
    stripped = data.lstrip()
    if stripped.startswith(b"{"):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"{name}: JSON that is not UTF-8") from exc
        lines = [line for line in text.splitlines() if line.strip()]
        try:  # one JSON document (possibly spread over many lines)
            return [("", _record_from_json(text))]
        except Unreadable as exc:
            if len(lines) < 2:
                raise Unreadable(f"{name}: {exc}") from exc
        found = []
        for number, line in enumerate(lines, start=1):
            try:
                record = _record_from_json(line)
            except Unreadable as exc:
                raise Unreadable(f"{name} line {number}: {exc}") from exc
            found.append((f"match {record.match_id or '(no id)'} ({name}:{number})", record))
        return found
    record = common_pb2.MatchRecord()
    try:
        record.ParseFromString(data)
    except DecodeError as exc:
        raise Unreadable(f"{name}: neither JSON nor a binary MatchRecord") from exc
    if not record.game:
        raise Unreadable(f"{name}: neither JSON nor a binary MatchRecord (no game)")
    return [("", record)]


async def fetch_record(server: str, match_id: str) -> common_pb2.MatchRecord:
    """A finished match's record from a server (GetMatchRecord)."""
    async with AsyncClient(server) as client:
        return await client.record(match_id)


def verify_inputs(
    inputs: Sequence[str], server: str | None, out: TextIO | None = None, show_ok: bool = True
) -> tuple[int, int]:
    """Verify every input (file or match id), printing a line per record (``show_ok``
    False: only the failures); returns (records verified, records or inputs that failed)."""
    out = out or sys.stdout
    good = bad = 0
    for item in inputs:
        path = Path(item)
        try:
            if path.is_file():
                records = records_from_bytes(path.read_bytes(), item)
            elif server is None and (path.suffix or "/" in item):
                raise Unreadable(f"{item}: no such file")
            else:
                records = [("", asyncio.run(fetch_record(server or DEFAULT_SERVER, item)))]
        except (Unreadable, OSError) as exc:
            print(f"FAIL {exc}", file=out)
            bad += 1
            continue
        except grpc.RpcError as exc:
            code = exc.code().name if hasattr(exc, "code") else "?"
            details = exc.details() if hasattr(exc, "details") else str(exc)
            print(f"FAIL match {item}: the server answered {code}: {details}", file=out)
            bad += 1
            continue
        for label, record in records:
            result = verdict(record, label)
            if show_ok or not result.ok:
                print(result.line(), file=out)
            good, bad = (good + 1, bad) if result.ok else (good, bad + 1)
    return good, bad


def run(args: argparse.Namespace) -> int:
    """``speeltafel verify``: 0 when every record verifies, else 1."""
    good, bad = verify_inputs(args.records, args.server, show_ok=not args.quiet)
    if good + bad > 1 or args.quiet:
        print(f"{good} verified, {bad} failed")
    return 0 if bad == 0 else 1
