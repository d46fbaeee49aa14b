"""The lobby client: a bot that waits in a server's lobby and plays the seats it is given.

For bot authors. The organiser gives you a bot token (``speeltafel tournament
issue-token NAME``); with it your bot connects, says which games it plays and how many
matches it takes at once, and the tournament director seats it in matches::

    from speeltafel.sdk.lobby import LobbyClient, match_seed

    def new_bot(assignment):                # a FRESH bot for every match
        return MyBot(seed=match_seed(assignment, "mybot"))

    lobby = LobbyClient("host:50051", token, new_bot, games=["take5"], max_concurrent=4)
    await lobby.run()                       # until lobby.stop() or a fatal refusal

What it does (``proto/speeltafel/v1/tournament.proto`` is the contract):

* opens one ``LobbyService.Connect`` stream with ``authorization: Bearer <bot token>`` and
  sends ``Register``; the server answers ``Registered`` (the name the token was issued for,
  the concurrency granted, the games accepted) and then pushes a ``SeatAssignment`` for
  every seat it gives the bot;
* plays each assignment on its own ``MatchService.Play`` stream with
  :func:`speeltafel.sdk.runner.play_seat` (which resumes by version after a dropped stream)
  and a bot made for that match alone by your factory, so nothing a bot saw in one match
  can reach its play in another (the duplicate format relies on that: the matches of a
  set share their deal);
* when the lobby stream drops it reconnects with jittered exponential backoff; matches
  keep playing on their own streams meanwhile. After a reconnect the server sends the
  assignments of the bot's running matches again (``resumed``): a seat already being
  played is not started twice, one this process does not play (it restarted) is picked up;
* gives up with :class:`LobbyRefused` when the server refuses the token
  (UNAUTHENTICATED), the registration (INVALID_ARGUMENT, PERMISSION_DENIED), has no lobby
  (UNIMPLEMENTED), or another connection with the same token replaced this one (ABORTED:
  two processes playing the same seats would fight over them);
* on :meth:`LobbyClient.stop` closes the lobby stream (no new seats come) and either lets
  the running matches finish (``drain=True``, the default) or cancels them.

Reproducibility: :func:`match_seed` derives a bot's seed from the match's fixture number,
its seat and the bot's name, so a tournament created with an organiser's seed replays
move for move, whichever process plays which match and in what order.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from speeltafel.sdk.client import CHANNEL_OPTIONS, AsyncClient, Seat
from speeltafel.sdk.runner import Bot, play_seat
from speeltafel.sdk.v1 import common_pb2, tournament_pb2, tournament_pb2_grpc

BotFactory = Callable[[tournament_pb2.SeatAssignment], Bot]
"""Makes the bot for one match from its assignment (game, options, seat, fixture...)."""

FATAL = {
    grpc.StatusCode.UNAUTHENTICATED: "the server does not accept this bot token",
    grpc.StatusCode.PERMISSION_DENIED: "the server refused this bot",
    grpc.StatusCode.INVALID_ARGUMENT: "the server refused the registration",
    grpc.StatusCode.UNIMPLEMENTED: "the server has no lobby",
    grpc.StatusCode.ABORTED: "another connection with this bot token replaced this one",
}
"""Statuses of the lobby stream after which connecting again cannot help."""

BACKOFF_FIRST_S = 0.2
BACKOFF_MAX_S = 10.0


def backoff_delay(
    attempt: int, first: float = BACKOFF_FIRST_S, cap: float = BACKOFF_MAX_S
) -> float:
    """Seconds before reconnect ``attempt`` (1-based): doubling from ``first`` up to ``cap``,
    jittered 50-150 % so that many bots dropped together do not come back together."""
    return min(cap, first * 2.0 ** (attempt - 1)) * (0.5 + random.random())


def match_seed(assignment: tournament_pb2.SeatAssignment, bot_name: str) -> int:
    """A 64-bit seed for the bot of one match: from the fixture number, the seat and the
    bot's name only (never from ids the server draws), so the same tournament replays."""
    text = f"speeltafel/lobby/{assignment.fixture}/{assignment.seat}/{bot_name}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


class LobbyRefused(RuntimeError):
    """The server refused the bot in a way reconnecting cannot mend."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{FATAL.get(code, code.name)} ({code.name}: {details})")
        self.code = code


@dataclass(slots=True)
class LobbyStats:
    """What a lobby client did, for logs and tests."""

    connects: int = 0
    """Lobby streams that got as far as ``Registered``."""
    assignments: int = 0
    """Seat assignments received (resumed ones included)."""
    duplicates: int = 0
    """Assignments of a seat already being played here (after a reconnect): not started."""
    finished: int = 0
    failed: int = 0
    """Matches whose play ended in an error (logged through ``on_event``)."""
    max_running: int = 0
    """The most matches played at once."""
    finished_matches: list[str] = field(default_factory=list)


class LobbyClient:
    """One bot in the lobby: see the module docstring."""

    def __init__(
        self,
        target: str,
        bot_token: str,
        make_bot: BotFactory,
        *,
        games: Sequence[str],
        max_concurrent: int = 1,
        client: str = "speeltafel-python-sdk",
        entropy: bytes = b"",
        channel: grpc.aio.Channel | None = None,
        on_event: Callable[[str], None] | None = None,
        on_finish: Callable[[tournament_pb2.SeatAssignment, common_pb2.View], None] | None = None,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        if len(entropy) > 64:
            raise ValueError("entropy is at most 64 bytes")
        self.target = target
        self._token = bot_token
        self._make_bot = make_bot
        self.register = tournament_pb2.Register(
            games=list(games), max_concurrent=max_concurrent, client=client, entropy=entropy
        )
        self._own_channel = channel is None
        self.channel = channel or grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
        self.matches = AsyncClient(target, self.channel)
        self._lobby = tournament_pb2_grpc.LobbyServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self._on_event = on_event or (lambda _text: None)
        self._on_finish = on_finish
        self.registered: tournament_pb2.Registered | None = None
        self.running: dict[tuple[str, int], asyncio.Task[None]] = {}
        """The seats being played, by (match id, seat)."""
        self.stats = LobbyStats()
        self._stopping = asyncio.Event()
        self._drain = True
        self._connected = asyncio.Event()

    # ------------------------------------------------------------------ public

    async def run(self) -> None:
        """Stay in the lobby and play what is assigned until :meth:`stop`; raises
        :class:`LobbyRefused` when the server refuses the bot for good (the running
        matches are then cancelled: another holder of the token may be playing them)."""
        attempt = 0
        refused: LobbyRefused | None = None
        try:
            while not self._stopping.is_set():
                try:
                    registered = await self._session()
                except grpc.aio.AioRpcError as exc:
                    if exc.code() in FATAL:
                        refused = LobbyRefused(exc.code(), exc.details() or "")
                        raise refused from None
                    self._on_event(f"lobby stream lost ({exc.code().name}); reconnecting")
                    registered = False
                if self._stopping.is_set():
                    break
                attempt = 1 if registered else attempt + 1
                with contextlib.suppress(TimeoutError):  # asyncio.timeout: see runner.py
                    async with asyncio.timeout(backoff_delay(attempt)):
                        await self._stopping.wait()
        finally:
            await self._wind_down(drain=self._drain and refused is None)
            if self._own_channel:
                await self.channel.close()

    def stop(self, drain: bool = True) -> None:
        """Leave the lobby: no new seats; the running matches finish (``drain``) or are
        cancelled. :meth:`run` returns when that is done. Calling again with
        ``drain=False`` cancels the matches a draining stop still waits for."""
        self._drain = self._drain and drain
        self._stopping.set()
        if not drain:
            for task in list(self.running.values()):
                task.cancel()

    async def wait_registered(self) -> tournament_pb2.Registered:
        """The ``Registered`` of the current (or next) lobby stream."""
        await self._connected.wait()
        assert self.registered is not None
        return self.registered

    # ------------------------------------------------------------------ internals

    async def _session(self) -> bool:
        """One lobby stream until it ends or :meth:`stop`; returns whether it registered.
        Raises the stream's error status."""
        call = self._lobby.Connect(metadata=(("authorization", f"Bearer {self._token}"),))
        registered = False
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await call.write(tournament_pb2.ConnectRequest(register=self.register))
            while True:
                read = asyncio.ensure_future(call.read())
                await asyncio.wait({read, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if not read.done():
                    read.cancel()
                    with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                        await read
                    return registered
                response = read.result()
                if response is grpc.aio.EOF:
                    self._on_event("the server ended the lobby stream; reconnecting")
                    return registered
                kind = response.WhichOneof("kind")
                if kind == "registered":
                    registered = True
                    self.registered = response.registered
                    self.stats.connects += 1
                    self._connected.set()
                    granted = response.registered
                    self._on_event(
                        f"registered as {granted.bot_name}: {granted.max_concurrent} at "
                        f"once, games {', '.join(granted.games) or 'none'}"
                    )
                elif kind == "assignment":
                    self._start(response.assignment)
        finally:
            self._connected.clear()
            stopping.cancel()
            call.cancel()

    def _start(self, assignment: tournament_pb2.SeatAssignment) -> None:
        self.stats.assignments += 1
        match_id = assignment.match_id
        key = (match_id, assignment.seat)
        if key in self.running:
            self.stats.duplicates += 1
            return
        self._on_event(
            f"{'resuming' if assignment.resumed else 'seated in'} {assignment.game} match "
            f"{match_id} (fixture {assignment.fixture}, seat {assignment.seat})"
        )
        task = asyncio.create_task(self._play(assignment), name=f"match {match_id}")
        self.running[key] = task
        self.stats.max_running = max(self.stats.max_running, len(self.running))
        task.add_done_callback(lambda _task: self.running.pop(key, None))

    async def _play(self, assignment: tournament_pb2.SeatAssignment) -> None:
        seat = Seat(assignment.match_id, assignment.seat, assignment.token)
        try:
            bot = self._make_bot(assignment)
            final = await play_seat(self.matches, seat, bot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one match's failure must not end the others or the lobby
            self.stats.failed += 1
            detail = exc.details() if isinstance(exc, grpc.aio.AioRpcError) else repr(exc)
            self._on_event(f"match {assignment.match_id} failed: {detail}")
            return
        self.stats.finished += 1
        self.stats.finished_matches.append(assignment.match_id)
        self._on_event(f"match {assignment.match_id} over: ranks {list(final.outcome.ranks)}")
        if self._on_finish is not None:
            self._on_finish(assignment, final)

    async def _wind_down(self, drain: bool) -> None:
        tasks = list(self.running.values())
        if not drain:
            for task in tasks:
                task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
