"""What a Take 5 decision must cost the server at the least, and where its CPU goes.

``make bench`` (b) compares the server's CPU per decision with the echo's per message. This
module splits that decision (``scripts/bench_server.py`` prints the split every run):

* **its own work**, measured here in process with no server around it: the submit parsed
  from its bytes, the action read from the wire form and written as the log's text, the
  engine's ``apply``, the acknowledgement built and serialised, and for every seat that
  must act anew, its view as the server writes it (the public part once per version, the
  seat's private part with its legal actions). That is the work any server of these games
  does for a decision, whatever its design;
* **the transport**: the echo with two replies of each message (a decision's messages, no
  server work), from the same run;
* **the store**: the server's CPU per decision on SQLite less the same on the memory store;
* **the matches' setups and ends**, the share of each decision: from the memory store's
  decision in the bench's matches and in matches ten times as long, and the matches
  begun and ended per decision in each;
* **the rest**: what the server spends around those on each decision (the runtime's
  exactly-once and cancellation machinery, locks, tasks, the limits' and error layers,
  snapshots, clocks). With the matches' share it is the server's machinery, which splits
  once more: **the runtime's**, measured here in process as well (the same decisions
  through the runtime and the service's helpers, no gRPC: :func:`measure_runtime_work`,
  less the own work), and **the transport's layers**, what is left (interceptors, the
  Play stream's reader task and wake-ups, the calls that set matches up).

Run alone: ``.venv/bin/python scripts/decision_work.py [seconds]``.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from inspect import signature
from typing import Any

from speeltafel.sdk.v1 import match_service_pb2
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.registry import get_game
from speeltafel.server.wire.common import (
    action_from_proto,
    private_view_bytes,
    public_view_bytes,
    seat_view_bytes,
)
from speeltafel.server.wire.encoding import embedded_field
from speeltafel.server.wire.registry import WIRES

MATCH_ID = "m" * 22
"""As long as the server's match ids."""
COMMITMENT = "c" * 64
"""As long as a match's deal commitment (a SHA-256 in hex)."""


@dataclass
class DecisionWork:
    """CPU of the bench's thread per decision, over ``decisions`` decisions (the own work,
    :func:`decision_work`, or through the runtime, :func:`measure_runtime_work`)."""

    us_per_decision: float
    decisions: int
    views: int
    matches: int

    @property
    def views_per_decision(self) -> float:
        return self.views / self.decisions if self.decisions else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "us_per_decision": self.us_per_decision,
            "decisions": self.decisions,
            "views": self.views,
            "views_per_decision": self.views_per_decision,
            "matches": self.matches,
        }


def decision_work(seconds: float, edition: str = "trial", seats: int = 4) -> DecisionWork:
    """Whole random 4-seat Take 5 matches (the bench's ``edition``) for about ``seconds``,
    each decision doing only its own work (module docstring). Views as the bench's bots ask
    for them (``only_when_acting``): to each seat that must act anew, and to all at the end.
    """
    game = get_game("take5")
    wire = WIRES["take5"]
    options = {"edition": edition}
    chooser = random.Random(12)
    decisions = views = matches = 0
    start = time.thread_time()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or not decisions:
        state = game.new(options, seats, Rng(hashlib.sha256(matches.to_bytes(8, "big")).digest()))
        matches += 1
        version = 1
        while game.outcome(state) is None:
            acting = game.to_act(state)
            seat = chooser.choice(acting)
            choice = chooser.choice(game.legal_actions(state, seat))
            # The client's side, not timed work of the server's, but cheap beside the rest:
            # the submit as bytes, as it arrives.
            request = match_service_pb2.PlayRequest()
            submit = request.submit
            submit.match_id = MATCH_ID
            submit.expected_version = version
            submit.request_id = f"{seat}-{version}"
            submit.action.CopyFrom(wire.action_to_proto(choice))
            data = request.SerializeToString()
            # The server's side of the decision.
            parsed = match_service_pb2.PlayRequest.FromString(data).submit
            action = action_from_proto(wire, parsed.action)
            game.action_text(action)
            state = game.apply(state, seat, action)
            version += 1
            decisions += 1
            result = match_service_pb2.ActionResult(request_id=parsed.request_id)
            result.accepted.seq = version - 1
            result.accepted.version = version
            embedded_field(2, result.SerializeToString())  # PlayResponse.result, as Play writes it
            after = game.to_act(state)
            outcome = game.outcome(state)
            anew = [s for s in after if s not in acting or s == seat]
            if not anew and outcome is None:
                continue
            public = public_view_bytes(
                wire,
                match_id=MATCH_ID,
                version=version,
                status="running" if outcome is None else "finished",
                seats=seats,
                commitment=COMMITMENT,
                observation=game.observe(state, None),
                to_act=after,
                outcome=outcome,
                preset_deck=False,
            )
            for s in anew if outcome is None else range(seats):
                private = private_view_bytes(
                    wire,
                    seat=s,
                    observation=game.observe(state, s),
                    legal_actions=game.legal_actions(state, s) if s in after else (),
                    move_clock_ms=0,
                    deadline_ms=0,
                    now_ms=0,
                    time_bank_ms=None,
                )
                seat_view_bytes(public, private)
                views += 1
    spent = time.thread_time() - start
    return DecisionWork(1e6 * spent / decisions, decisions, views, matches)


def runtime_work(
    seconds: float,
    edition: str = "trial",
    seats: int = 4,
    tables: int = 16,
    deals: int | None = None,
    matches: int | None = None,
    make_runtime: Callable[[], Any] | None = None,
) -> DecisionWork:
    """:func:`measure_runtime_work` on a loop of its own (uvloop, as the server's)."""
    from speeltafel.server.rpc.server import run_event_loop

    measured: list[DecisionWork] = []

    async def main() -> None:
        measured.append(
            await measure_runtime_work(
                seconds, edition, seats, tables, deals, matches, make_runtime
            )
        )

    run_event_loop(main())
    return measured[0]


async def measure_runtime_work(
    seconds: float,
    edition: str = "trial",
    seats: int = 4,
    tables: int = 16,
    deals: int | None = None,
    matches: int | None = None,
    make_runtime: Callable[[], Any] | None = None,
) -> DecisionWork:
    """The server's decision without its transport: ``tables`` random Take 5 matches at a
    time, replaced as they end, through the runtime (memory store) and the service's
    helpers, on the running loop and with no gRPC.

    Each seat does in one task what its Play stream's two tasks do on the server: take the
    next update of its outbox and write it as the stream would (a result as a
    ``PlayResponse``, a view as the service's bytes), and when the view asks it to act,
    parse a submit from its bytes and hand it to the service's submit with the stream's
    acknowledgement callback. Matches are created and joined through the runtime. So the
    figure is the own work with the runtime's machinery around it (exactly-once, the
    pipeline, the owned task, locks, snapshots, outboxes, clocks, the matches' setups and
    ends) and without gRPC, the interceptors, the reader task and the streams' wake-ups.
    The client's choice, from the engine's legal actions, is a small part of it. ``deals``:
    in each match (the game's default of 3 unless given).

    ``matches``: each table plays that many matches and stops, whatever ``seconds`` says
    (``scripts/bench_instructions.py`` counts the instructions of a fixed workload).
    ``make_runtime``: makes the ``MatchRuntime`` (on the memory store) to play through,
    on the running loop, instead of a default one. Each seat chooses with a generator of
    its own, so the games do not depend on the order in which the seats' tasks run."""
    # Imported here: the own-work figure alone needs none of the server's runtime.
    from speeltafel.server.app.runtime import MatchRuntime
    from speeltafel.server.rpc.server import configure_logging
    from speeltafel.server.rpc.service import MatchService, _ack_to_proto
    from speeltafel.server.store.memory import MemoryStore

    configure_logging("warning")  # info would add each match's lines (no action's) to the console
    runtime = make_runtime() if make_runtime is not None else MatchRuntime(MemoryStore())
    service = MatchService(runtime)
    wire = WIRES["take5"]
    game = get_game("take5")
    options = {"edition": edition} | ({} if deals is None else {"deals": str(deals)})
    tally = {"decisions": 0, "views": 0, "matches": 0}
    end = time.perf_counter() + seconds
    # In the seat's task, as the Play stream's reader submits (a tree before round 23 has
    # no such choice: --compare runs this on older trees too).
    inline = {"inline": True} if "inline" in signature(service._submit).parameters else {}

    async def seat_loop(match: Any, seat: int, chooser: random.Random) -> None:
        outbox = runtime.subscribe(match, seat, 0, only_when_acting=True)
        try:
            while True:
                update = await outbox.get()
                snapshot = update.snapshot
                if snapshot is None:
                    # PlayResponse.result as Play writes it (service._result_response; not
                    # imported, so that --compare can run this on an older tree).
                    embedded_field(2, update.result.SerializeToString())
                    continue
                service._view_response(match, snapshot, seat, update.resync)
                tally["views"] += 1
                if snapshot.status == "finished":
                    return
                if seat not in snapshot.to_act:
                    continue
                choice = chooser.choice(game.legal_actions(snapshot.state, seat))
                request = match_service_pb2.PlayRequest()
                submit = request.submit
                submit.match_id = match.id
                submit.expected_version = snapshot.version
                submit.request_id = f"{chooser.getrandbits(128):032x}"
                submit.action.CopyFrom(wire.action_to_proto(choice))
                parsed = match_service_pb2.PlayRequest.FromString(
                    request.SerializeToString()
                ).submit
                result = match_service_pb2.ActionResult(request_id=parsed.request_id)

                def acknowledge(ack: Any, result: Any = result) -> None:
                    result.accepted.CopyFrom(_ack_to_proto(ack))  # as the Play stream does
                    outbox.push_result(result)

                await service._submit(match, seat, parsed, on_ack=acknowledge, **inline)
                tally["decisions"] += 1
        finally:
            runtime.unsubscribe(match, outbox)

    async def table(index: int) -> None:
        number = 0
        while (number < matches) if matches is not None else (time.perf_counter() < end):
            number += 1
            match = (await runtime.create_match("take5", seats, options)).match
            for seat in range(seats):
                await runtime.join(match.id, seat, f"bot-{seat}", b"")
            async with asyncio.TaskGroup() as group:
                for seat in range(seats):
                    chooser = random.Random(index * 1_000_003 + number * 101 + seat)
                    group.create_task(seat_loop(match, seat, chooser))
            tally["matches"] += 1

    start = time.thread_time()
    try:
        await asyncio.gather(*(table(i) for i in range(tables)))
    finally:
        spent = time.thread_time() - start
        await runtime.close()
    decisions = tally["decisions"]
    return DecisionWork(
        1e6 * spent / decisions if decisions else 0.0, decisions, tally["views"], tally["matches"]
    )


LONG_DEALS = 30
"""Deals in the long matches, ten times the default's 3, whose decisions carry a tenth of
the matches' setups and ends at most."""


@dataclass(frozen=True)
class Breakdown:
    """A decision's server CPU (us) split into parts; :func:`breakdown`. ``matches_us``:
    the share of each match's setup and end (None when not measured; then it is in
    ``rest_us``). ``runtime_us``: the decision through the runtime with no transport
    (:func:`measure_runtime_work`; None when not measured)."""

    decision_us: float
    transport_us: float
    own_work_us: float
    store_us: float
    matches_us: float | None
    rest_us: float
    runtime_us: float | None = None

    @property
    def machinery_us(self) -> float:
        """What the server spends around the messages, the work and the store."""
        return self.rest_us + (self.matches_us or 0.0)

    @property
    def runtime_machinery_us(self) -> float | None:
        """The part of the machinery measured in process: the runtime around the own work
        (its matches' setups and ends without their calls included)."""
        return None if self.runtime_us is None else self.runtime_us - self.own_work_us

    @property
    def transport_layers_us(self) -> float | None:
        """The rest of the machinery: what the server's streams and calls cost beyond the
        echo's messages and the runtime (interceptors, the Play stream's reader task and
        wake-ups, the calls that set matches up)."""
        runtime = self.runtime_machinery_us
        return None if runtime is None else self.machinery_us - runtime


def breakdown(
    decision_us: float,
    memory_decision_us: float,
    transport_us: float,
    own_work_us: float,
    long: tuple[float, float, float] | None = None,
    runtime_us: float | None = None,
) -> Breakdown:
    """Split ``decision_us`` (the server on SQLite): the store is what it costs over the
    same server on the memory store, the transport and the own work are measured apart,
    and the rest is what remains of the memory store's decision.

    With ``long`` = (the memory store's decision in long matches, matches begun or ended
    per decision there, the same in the bench's matches), the matches' setups and ends
    come out of the rest. A decision costs ``a + S * m`` with ``m`` matches begun or ended
    per decision and ``S`` the cost of each; two runs that differ in ``m`` give ``S``.

    With ``runtime_us`` (:func:`measure_runtime_work`), the machinery splits further into
    the runtime's, measured in process, and the transport's layers, by subtraction."""
    matches = None
    if long is not None:
        long_us, long_events, events = long
        if events > long_events:
            each = (memory_decision_us - long_us) / (events - long_events)
            matches = each * events
    return Breakdown(
        decision_us=decision_us,
        transport_us=transport_us,
        own_work_us=own_work_us,
        store_us=decision_us - memory_decision_us,
        matches_us=matches,
        rest_us=memory_decision_us - transport_us - own_work_us - (matches or 0.0),
        runtime_us=runtime_us,
    )


def match_events(window: dict[str, Any]) -> float | None:
    """Matches begun or ended in a game-path window (``bench.game_path``) per decision."""
    count = int(window.get("count") or 0)
    if not count:
        return None
    events = int(window.get("matches_started", 0)) + int(window.get("matches_finished", 0))
    return events / count


def echo_share_without(parts: Breakdown, echo_us: float) -> float:
    """(b) by CPU (the echo's us per message over a decision's) were the machinery (the
    rest and the matches' share) free, every other part as measured."""
    decision = parts.transport_us + parts.own_work_us + parts.store_us
    return echo_us / decision


def floor_in_echo_messages(parts: Breakdown, echo_us: float) -> float:
    """A decision's messages and own work, in echo messages: what no server can spend less
    on. (b) at 0.5 needs the whole decision within 2 of them, at 0.25 within 4."""
    return (parts.transport_us + parts.own_work_us) / echo_us


def main(argv: list[str]) -> int:
    seconds = float(argv[1]) if len(argv) > 1 else 3.0
    work = decision_work(seconds)
    print(
        f"a Take 5 decision's own work: {work.us_per_decision:.1f} us "
        f"({work.decisions:,} decisions, {work.views_per_decision:.2f} views each)"
    )
    through = runtime_work(seconds)
    print(
        f"the same through the runtime, no transport: {through.us_per_decision:.1f} us "
        f"({through.decisions:,} decisions, {through.matches:,} matches)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
