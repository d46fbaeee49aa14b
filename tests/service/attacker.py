"""An attacking client, run as its own process, and the honest client it is measured against.

``python tests/service/attacker.py TARGET ATTACK [--seconds S]`` runs one attack against a
server until ``S`` seconds have passed or its stdin closes. It prints ``ready`` on a line
of its own once the attack is in full swing (streams opened, flood started), and at the
end one JSON line: what the attack did and the status codes it got. Attacks (one client
channel each, unless ``--channels`` says otherwise):

* ``idle-play``: thousands of Play streams that never subscribe;
* ``idle-spectate``: thousands of Spectate streams on a match that never moves;
* ``create-flood``: CreateMatch as fast as it can (``--concurrency`` callers);
* ``getmatch-flood``: GetMatch of unknown matches;
* ``invalid-submit``: invalid moves with a real seat's token, unary and on a Play stream;
* ``getview-2000``: 2,000 concurrent GetView calls of one token, again and again;
* ``huge-create``: 63 KB CreateMatch requests with as many maximal preset decks as fit.

:func:`honest_run` is the honest client (its own channel, in the caller's process): it
plays Take 5 matches (2 seats, 5 deals, bots choosing ``legal_actions[0]``) one after the
other, with ListGames, CreateMatch, JoinMatch and GetMatch around each, keeping its calls
under the default per-connection rate, and reports its moves/s,
its view-to-ack p99 and every call that was refused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from speeltafel.sdk.client import AsyncClient, Seat
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.rpc.limits import LimitsConfig

ATTACKS = (
    "idle-play",
    "idle-spectate",
    "create-flood",
    "getmatch-flood",
    "invalid-submit",
    "getview-2000",
    "huge-create",
)

# --------------------------------------------------------------------------- the honest side


class FirstBot:
    """Always the first legal action: cheap and deterministic."""

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        return legal_actions[0]


@dataclass
class HonestResult:
    """What the honest client did in one window."""

    moves: int = 0
    matches: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.seconds if self.seconds else 0.0

    @property
    def p99_ms(self) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


TICKS = os.sysconf("SC_CLK_TCK")
WARM_UP_S = 1.5  # past the attacker's allowed burst, into its steady flood


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Measurement:
    """The honest client alone, then under one attack, with who used the CPU meanwhile."""

    attack: str
    alone: HonestResult
    attacked: HonestResult
    summary: dict[str, Any]
    attacker_cpu: float  # share of one core during the attacked window
    server_cpu: float

    @property
    def ratio(self) -> float:
        """Honest moves/s attacked over alone (the issue asks >= 0.5)."""
        return self.attacked.moves_per_s / self.alone.moves_per_s

    @property
    def p99_ratio(self) -> float:
        """Honest p99 attacked over alone (the issue asks < 4)."""
        return self.attacked.p99_ms / max(self.alone.p99_ms, 1e-9)

    @property
    def refused(self) -> list[str]:
        """Every honest call the server refused, alone or attacked."""
        return self.alone.refused + self.attacked.refused

    def meets_the_bar(self) -> bool:
        """No honest call refused, half the throughput kept, p99 under four times."""
        return not self.refused and self.ratio >= 0.5 and self.p99_ratio < 4.0


async def measure(
    target: str, attack: str, seconds: float, server_pid: int, *args: str
) -> Measurement:
    """Honest alone for ``seconds``, then the attacker (its own process) and, once past its
    burst, honest again for ``seconds``; the attacker stops and reports."""
    alone = await honest_run(target, seconds)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, target, attack, "--seconds", str(seconds * 4 + 60), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdin is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if line != b"ready\n":
            raise RuntimeError(f"attacker {attack} did not start: {line!r}")
        await asyncio.sleep(WARM_UP_S)
        before = cpu_seconds(proc.pid), cpu_seconds(server_pid), time.perf_counter()
        attacked = await honest_run(target, seconds)
        elapsed = time.perf_counter() - before[2]
        attacker_cpu = (cpu_seconds(proc.pid) - before[0]) / elapsed
        server_cpu = (cpu_seconds(server_pid) - before[1]) / elapsed
    finally:
        proc.stdin.close()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    if proc.returncode != 0:
        raise RuntimeError(f"attacker {attack} failed: {err.decode()[-2000:]}")
    summary: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    return Measurement(attack, alone, attacked, summary, attacker_cpu, server_cpu)


def _unary_cost_per_match() -> float:
    """What one honest match costs its connection's call bucket: ListGames, CreateMatch,
    two JoinMatch and two GetMatch, at the server's default method costs."""
    costs = LimitsConfig().method_costs
    methods = ["ListGames", "CreateMatch", "JoinMatch", "JoinMatch", "GetMatch", "GetMatch"]
    return sum(costs.get(f"/speeltafel.v1.MatchService/{m}", 1.0) for m in methods)


HONEST_SHARE = 0.8
"""Of the default per-connection call rate, what the honest client spends at most. An honest
client stays within the documented limits however quick the host is: at 3 deals a match,
unpaced, it reached 250 cost units/s on a quick host, the very rate of its connection's
bucket, and was (rightly) refused once its burst ran out."""


async def honest_run(target: str, seconds: float, deals: int = 5) -> HonestResult:
    """Play whole matches for about ``seconds`` (the last one is finished, not cut), never
    spending more than :data:`HONEST_SHARE` of the connection's call rate (it waits instead,
    as a client that reads the documented limits does)."""
    result = HonestResult()
    min_match_s = _unary_cost_per_match() / (HONEST_SHARE * LimitsConfig().unary_rate_per_peer)
    async with AsyncClient(target) as client:
        await client.channel.channel_ready()
        started = time.perf_counter()
        while True:  # at least one match
            try:
                await _honest_match(client, result, deals)
            except grpc.aio.AioRpcError as err:
                result.refused.append(f"{err.code().name}: {err.details()}")
                break
            if time.perf_counter() - started >= seconds:
                break
            ahead = started + result.matches * min_match_s - time.perf_counter()
            if ahead > 0:
                await asyncio.sleep(ahead)
        result.seconds = time.perf_counter() - started
    return result


async def _honest_match(client: AsyncClient, result: HonestResult, deals: int) -> None:
    games = await client.list_games()
    assert any(g.game == "take5" for g in games)
    created = await client.create_match("take5", 2, options={"deals": str(deals)})
    seats = [await client.join(created.match_id, s, name=f"honest-{s}") for s in (0, 1)]
    await client.get_match(created.match_id)
    asked: dict[int, float] = {}

    def viewer(seat: int) -> Callable[[common_pb2.View], None]:
        def on_view(view: common_pb2.View) -> None:
            if view.legal_actions and seat not in asked:
                asked[seat] = time.perf_counter()

        return on_view

    def acker(seat: int) -> Callable[[Any, Any], None]:
        def on_ack(_request: Any, _ack: Any) -> None:
            result.moves += 1
            since = asked.pop(seat, None)
            if since is not None:
                result.latencies.append(time.perf_counter() - since)

        return on_ack

    finals = await asyncio.gather(
        *(
            play_seat(client, seat, FirstBot(), on_view=viewer(i), on_ack=acker(i))
            for i, seat in enumerate(seats)
        )
    )
    assert all(f.status == common_pb2.MATCH_STATUS_FINISHED for f in finals)
    summary = await client.get_match(created.match_id)
    assert summary is not None
    result.matches += 1


# --------------------------------------------------------------------------- the attacks


class Attack:
    """Shared state of one attack: its channels, status counts, and the stop signal."""

    def __init__(self, target: str, args: argparse.Namespace) -> None:
        self.args = args
        self.clients = [AsyncClient(target) for _ in range(args.channels)]
        self.codes: Counter[str] = Counter()
        self.stop = asyncio.Event()
        self.facts: dict[str, Any] = {}

    @property
    def client(self) -> AsyncClient:
        return self.clients[0]

    async def call(self, awaitable: Awaitable[Any]) -> None:
        try:
            await awaitable
            self.codes["OK"] += 1
        except grpc.aio.AioRpcError as err:
            self.codes[err.code().name] += 1

    async def loop(self, make: Callable[[int], Awaitable[Any]], workers: int) -> None:
        async def worker(i: int) -> None:
            while not self.stop.is_set():
                await self.call(make(i))

        await asyncio.gather(*(worker(i) for i in range(workers)))

    async def seat(self) -> tuple[str, list[Seat]]:
        """A running match of the attacker's own (setting up waits out the rate limits, as
        any client must; the attack itself does not)."""
        while True:
            try:
                created = await self.client.create_match("take5", 2, options={"deals": "50"})
                seats = [await self.client.join(created.match_id, s, name=f"a{s}") for s in (0, 1)]
                return created.match_id, seats
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                await asyncio.sleep(0.2)


async def hold_streams(attack: Attack, open_call: Callable[[AsyncClient], Any]) -> None:
    """Open ``--streams`` streams over the channels, report how many the server kept."""
    calls = []
    for i in range(attack.args.streams):
        calls.append(open_call(attack.clients[i % len(attack.clients)]))
        if i % 256 == 255:
            await asyncio.sleep(0)  # let the channel send what it has
    # Until the server has answered what it refuses (no change for half a second).
    done, since = -1, time.perf_counter()
    while time.perf_counter() - since < 0.5 and not attack.stop.is_set():
        await asyncio.sleep(0.1)
        now_done = sum(1 for c in calls if c.done())
        if now_done != done:
            done, since = now_done, time.perf_counter()
    refused = Counter([(await c.code()).name for c in calls if c.done()])
    attack.facts.update(opened=len(calls), refused_at_open=dict(refused))
    attack.facts["held"] = len(calls) - sum(refused.values())
    print("ready", flush=True)
    await attack.stop.wait()
    for call in calls:
        call.cancel()


async def idle_play(attack: Attack) -> None:
    # Seat tokens, or the seat check would end each stream at once; many seats, so that
    # the per-connection cap is reached and not only the per-token one.
    seats: list[Seat] = []
    while len(seats) < attack.args.tokens:
        seats += (await attack.seat())[1]
    count = iter(range(10**9))

    def open_play(client: AsyncClient) -> Any:
        return client.play_stream(seats[next(count) % len(seats)])

    await hold_streams(attack, open_play)


async def idle_spectate(attack: Attack) -> None:
    created = await attack.client.create_match("take5", 2)
    request = match_service_pb2.SpectateRequest(match_id=created.match_id)
    await hold_streams(attack, lambda client: client.stub.Spectate(request))


async def create_flood(attack: Attack) -> None:
    print("ready", flush=True)

    # The raw call: an attacker does not wait out a refusal as the SDK does.
    def create(_: int) -> Awaitable[Any]:
        request = match_service_pb2.CreateMatchRequest(
            game="take5", seats=2, request_id=uuid.uuid4().hex
        )
        return attack.client.stub.CreateMatch(request)  # type: ignore[no-any-return]

    await attack.loop(create, attack.args.concurrency)


async def getmatch_flood(attack: Attack) -> None:
    print("ready", flush=True)
    await attack.loop(
        lambda i: attack.client.get_match(uuid.uuid4().hex[:16]), attack.args.concurrency
    )


async def invalid_submit(attack: Attack) -> None:
    match_id, seats = await attack.seat()
    seat = seats[0]
    bad = common_pb2.Action()
    bad.take5.select.card = 999  # no such card: INVALID_ARGUMENT after parsing and lookup

    def submit(i: int) -> Awaitable[Any]:
        request = match_service_pb2.SubmitActionRequest(
            match_id=match_id, expected_version=1, request_id=uuid.uuid4().hex, action=bad
        )
        return attack.client.stub.SubmitAction(request, metadata=seat.metadata)

    async def stream() -> None:
        call = attack.client.play_stream(seats[1])
        subscribe = match_service_pb2.Subscribe(match_id=match_id)
        await call.write(match_service_pb2.PlayRequest(subscribe=subscribe))

        async def reader() -> None:
            async for response in call:
                if response.WhichOneof("event") == "result":
                    attack.codes["stream_result"] += 1

        reading = asyncio.ensure_future(reader())
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            while not attack.stop.is_set():
                request = match_service_pb2.SubmitActionRequest(
                    match_id=match_id,
                    expected_version=1,
                    request_id=uuid.uuid4().hex,
                    action=bad,
                )
                await call.write(match_service_pb2.PlayRequest(submit=request))
                attack.codes["stream_sent"] += 1
        call.cancel()
        reading.cancel()

    print("ready", flush=True)
    await asyncio.gather(attack.loop(submit, attack.args.concurrency), stream())


async def getview_2000(attack: Attack) -> None:
    _, seats = await attack.seat()
    print("ready", flush=True)
    await attack.loop(lambda i: attack.client.get_view(seats[0]), 2000)


async def huge_create(attack: Attack) -> None:
    deck = [str(card) for card in range(1, 105)]
    decks = [deck] * 150  # ~63 KB: just under the server's 64 KiB receive limit
    request = match_service_pb2.CreateMatchRequest(
        game="take5",
        seats=2,
        options={"edition": "full", "deals": "50"},
        preset_decks=[common_pb2.DeckOrder(cards=d) for d in decks],
    )
    attack.facts["request_bytes"] = request.ByteSize()
    print("ready", flush=True)
    await attack.loop(lambda i: attack.client.stub.CreateMatch(request), attack.args.concurrency)


RUNNERS: dict[str, Callable[[Attack], Awaitable[None]]] = {
    "idle-play": idle_play,
    "idle-spectate": idle_spectate,
    "create-flood": create_flood,
    "getmatch-flood": getmatch_flood,
    "invalid-submit": invalid_submit,
    "getview-2000": getview_2000,
    "huge-create": huge_create,
}


def _stop_on_eof_or_timeout(stop: asyncio.Event, seconds: float) -> None:
    """Stop when stdin closes (the parent's signal) or after ``seconds``."""
    loop = asyncio.get_running_loop()
    # A daemon thread: a blocked read never holds the process open at exit.
    threading.Thread(
        target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True
    ).start()
    loop.call_later(seconds, stop.set)


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Attack a speeltafel server.")
    parser.add_argument("target")
    parser.add_argument("attack", choices=ATTACKS)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--streams", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=64, help="seats used by idle-play")
    args = parser.parse_args(argv)
    attack = Attack(args.target, args)
    for client in attack.clients:
        await client.channel.channel_ready()
    started = time.perf_counter()
    _stop_on_eof_or_timeout(attack.stop, args.seconds)
    try:
        await RUNNERS[args.attack](attack)
    finally:
        seconds = time.perf_counter() - started
        calls = sum(n for code, n in attack.codes.items() if not code.startswith("stream"))
        summary = {
            "attack": args.attack,
            "seconds": round(seconds, 2),
            "codes": dict(attack.codes),
            "calls_per_s": round(calls / seconds, 1) if seconds else 0.0,
            **attack.facts,
        }
        print(json.dumps(summary), flush=True)
        for client in attack.clients:
            await client.close()


if __name__ == "__main__":
    asyncio.run(main())
