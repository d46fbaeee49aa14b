"""The match runtime: creates, seats, runs, clocks and recovers matches.

The path of one action: the match's lock (one writer per match) -> request-id check
(exactly once) -> version check -> ``engine.apply`` (pure; an illegal action stops here and
changes nothing) -> ``store.append`` (durable before anything else happens) -> the
in-memory match advances -> the caller's ``on_ack`` -> the finish row, when the action ended
the match -> every subscriber gets the new snapshot -> the clock is armed -> the caller gets
its acknowledgement. A crash anywhere before the append leaves no trace; a crash after it is
repaired by replaying the log at the next start.

Pipelined submits. A store that applies appends in the order they are made
(``ordered_appends``: SQLite's one writer thread, memory) lets a player's submit leave the
lock as soon as its row is on its way: the match's next submit is checked (request id,
version, legality) and applied against the *head*, the state after the actions still on
their way (:meth:`Match.pipeline`), and its row follows in the same group commit. The append is
begun before the lock is let go (``store.base.start_append``: on SQLite and memory a future
the store settles, no task of its own), so rows reach the store in submit order. Only the
durable part is ever shown: each action is recorded in memory once its append returns, in
seq order, and then acknowledged, published and clocked as above. Take 5's four sealed
selections of a turn were four commits in a row, each waiting for the one before; now they
share one (docs/performance-rounds.md, round 9). A failed append changes nothing in memory; the
actions pipelined after it cannot be stored after it (every store's append is conditional
on the seq before), so they fail too and the match is reloaded from the log. A repeated
request id that is still on its way waits for it and is answered from the log. Everything
else that takes the lock (clock defaults, ends, finishing, joins, reloads) first waits for
the pipeline to drain, so it meets the durable match as before, and the final action of a
match does too: it is committed, and its finished row stored, under the lock.

Cancellation. grpc.aio cancels a handler's task when its client gives up (deadline passed,
stream dropped), and every ``await`` is a point after which the rest of that task may never
run. So no critical section runs in a caller's task: create, join, submit and every clock
expiry run whole (lock, checks, engine, store, memory, finish, publish, clock) in a task the
runtime owns (kept in ``_tasks``, awaited by :meth:`MatchRuntime.close`), and the caller
awaits that task through :func:`asyncio.shield`. A cancelled caller only stops waiting; the
operation completes, and a retry with the same request id gets its stored answer. An
exception still reaches a caller that waits. Checks that touch nothing durable (field
validation, finding the match) may run in the caller's task.

One caller is never cancelled part way, and its submits run in its own task instead
(``submit(inline=True)``): the Play stream's reader. Its stream, when it ends, cancels the
reader only while no submit is under way, and otherwise lets it finish that submit and
stop (``rpc/service.py``). :meth:`MatchRuntime.close` waits for such submits as it waits
for its own tasks. The task and the shield cost a decision about 6% of the runtime's
instructions (docs/performance-rounds.md, round 23), and the Play stream carries nearly every
decision.

Why a task per operation rather than a per-match actor (one long-lived task draining a
queue)? The match lock already serialises a match's writers in arrival order (asyncio.Lock
is FIFO), so an actor would be a second mechanism for the same order, plus an idle task per
match, a queue to bound, and a lifetime to manage across eviction and conflict reloads (the
actor would have to move to the reloaded object). A task per operation lives exactly as
long as its operation, needs no shutdown protocol beyond awaiting ``_tasks``, and keeps the
code straight-line.

Failures. A store error during a create, join or submit leaves memory unchanged and reaches
the caller. A conflict (another writer took the seq or the seat) replays the log into a
fresh Match object that takes the old one's place; the subscribers go with it (the two
objects share one subscriber set, so a stream holding either reaches the same outboxes)
and get the current snapshot marked resync. When that reload fails, the old object stays
in place marked stale, its subscribers with it, and the next access reloads. Subscribers
are never left on an object the runtime no longer updates, and outboxes are never closed
by the runtime. Background writes (a clock default, the finish row, an expiry or an
abandonment) that fail are logged and retried by the match's timer, backing off from 0.5 s
to 5 s: the clock never dies, and the default move is played as soon as the store writes
again. The caller whose action ended a match gets its acknowledgement even when the finish
row must be retried.

Limits. Waiting matches count toward ``max_waiting_matches``, running ones toward
``max_live_matches``; both counts are integers kept exact on every transition. CreateMatch
reserves its waiting slot before its first await and gives it back when creation fails, and
is refused while either count is at its cap. A waiting match whose last seat joins always
starts (its seats were promised a game), so the running count can pass ``max_live_matches``
by at most the matches that were waiting when it was reached. A match still waiting
``join_timeout_s`` after its creation is ended as "expired"; a running match whose clock ran
out ``abandon_after_periods`` periods in a row with no seat acting is ended as "abandoned".

Logs never carry an action's content, a hand, a seed, a deck order or a token key: a sealed
selection logged before its reveal would tell an operator (and anything reading the logs)
what a seat may not know yet. They carry match id, seat, seq, and public facts.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import secrets
import time
import unicodedata
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import structlog

from speeltafel.server.app.errors import (
    BadRequest,
    LimitExceeded,
    MatchNotFound,
    Refused,
    RequestIdReused,
    StaleVersion,
    Unauthenticated,
)
from speeltafel.server.app.match import (
    CLOCK_PREFIX,
    Match,
    Outbox,
    Pipelined,
    Snapshot,
    clock_request_id,
)
from speeltafel.server.engine.core import (
    GameAny,
    GameOver,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    Presets,
    Rng,
    clip,
    commitment,
    named_presets,
)
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.engine.verify import unnamed_to_first
from speeltafel.server.store.base import (
    ActionRow,
    AppendResult,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    MatchLog,
    MatchStore,
    SeatJoined,
    start_append,
)

T = TypeVar("T")

log = structlog.get_logger("speeltafel.runtime")


class _Behind(Exception):
    """A submit named a version ahead of this process's copy (see
    :meth:`MatchRuntime._submit_caught_up`)."""


JOIN_REQUEST_ID_MIN_LENGTH = 16
"""A join's request id recovers its seat token, so it must be as hard to guess as a secret:
clients send a random one (a UUID4 is 36 characters)."""
RECOVERY_SLICE_S = 0.005
"""Recovery replays matches for at most this long before it lets calls in (health, and
calls for matches it has not reached, which resume their own match at once)."""
RECOVERY_CHUNK = 250
"""Unfinished logs read at a time by recovery (see ``MatchRuntime._recover_bulk``)."""
MAX_VALIDATED_FORMS = 1024
"""Forms of match (game, options, seats) remembered as valid without a trial deal; the set
starts over when it is full (a client that varies options only costs trial deals again)."""
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 5.0
_NOT_PRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
"""Unicode categories a display name may not contain: controls, format characters (among
them the bidirectional overrides), surrogates, private use, line and paragraph
separators."""


class Clock(Protocol):
    """Wall-clock time in unix milliseconds (injected so tests can control it)."""

    def now_ms(self) -> int:
        """The current time."""
        ...


class SystemClock:
    """The real clock."""

    def now_ms(self) -> int:
        """Unix time in milliseconds."""
        return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """Limits and defaults of the runtime."""

    default_move_clock_ms: int = 30_000
    """Per-move clock when CreateMatch leaves it at 0."""
    min_move_clock_ms: int = 20
    max_move_clock_ms: int = 3_600_000
    max_live_matches: int = 10_000
    """Running matches across the server; while that many run, CreateMatch is refused."""
    max_waiting_matches: int = 10_000
    """Matches still waiting for seats; while that many wait, CreateMatch is refused."""
    join_timeout_s: float = 600.0
    """A match still waiting for seats this long after its creation is ended as expired."""
    abandon_after_periods: int = 3
    """A running match whose clock ran out this many periods in a row with no seat acting
    is ended as abandoned (0: never)."""
    max_subscribers_per_seat: int = 4
    """Concurrent streams of one seat (a reconnecting bot may briefly hold two)."""
    max_spectators: int = 64
    """Spectator streams per match."""
    finished_linger_s: float = 300.0
    """How long a finished match's seats may still call (a late final view, a retried
    request's stored answer); after that only the store has it."""
    finished_whole_s: float = 10.0
    """How long, within the linger time, a finished match stays whole in memory; after
    that only its seats' token hashes do, and a late call loads it from the store (as
    after a restart, :meth:`MatchRuntime._load_lingering`). A bot reads its final view
    within moments of the end; holding every finished match whole for the whole linger
    time cost about 11 KB each (bench (e)), the tokens alone about 2 KB."""
    max_name_length: int = 64
    max_entropy_bytes: int = 64
    max_request_id_length: int = 64
    pipeline_appends: bool = True
    """Let a match's next submit be checked and applied while the one before it is still
    on its way to the store (stores with ``ordered_appends`` only; see the module
    docstring). Off: each submit holds the match's lock until its append is durable."""


@dataclass(frozen=True, slots=True)
class Ack:
    """The answer to an accepted action (also the stored answer of a repeated request)."""

    seq: int
    version: int
    duplicate: bool


@dataclass(frozen=True, slots=True)
class Created:
    """The answer to CreateMatch; ``duplicate`` when the request id had made it before."""

    match: Match
    duplicate: bool


@dataclass(frozen=True, slots=True)
class Joined:
    """The answer to JoinMatch; a repeated request id gets the same seat and token."""

    seat: int
    token: str
    duplicate: bool
    preset_deck: bool


def token_hash(token: str) -> bytes:
    """What the store keeps of a seat token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).digest()


def join_token(token_key: bytes, seat: int, request_id: str) -> str:
    """The token of a join that carries a request id: urlsafe base64 (unpadded, as
    ``secrets.token_urlsafe``) of HMAC-SHA256(match's token key, "seat:request_id")."""
    digest = hmac.new(token_key, f"{seat}:{request_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def clean_name(name: str, max_length: int) -> str:
    """A display name stripped, or BadRequest ``name_invalid`` (never echoing it)."""
    name = name.strip()
    if len(name) > max_length:
        raise BadRequest(f"name is longer than {max_length} characters", "name_invalid")
    if any(unicodedata.category(ch) in _NOT_PRINTABLE for ch in name):
        raise BadRequest(
            "name must be printable text (no control, format, private-use or separator characters)",
            "name_invalid",
        )
    return name


def backoff_s(failures: int) -> float:
    """Delay before the next retry after ``failures`` failures in a row."""
    return min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2.0 ** max(0, failures - 1))


class _Slot:
    """A waiting-match slot reserved by a CreateMatch in flight."""

    def __init__(self, counts: dict[str, int]) -> None:
        self._counts = counts
        self.held = True
        counts["waiting"] += 1

    def release(self) -> None:
        if self.held:
            self.held = False
            self._counts["waiting"] -= 1


class _Locked:
    """:meth:`MatchRuntime._locked`: entered, the live match of an id with its lock held.

    A class rather than ``contextlib.asynccontextmanager``: every submit enters one, and
    the generator-based wrapper costs several Python calls more on each (issue 12, round
    21). A cancellation while it waits for the lock, or for the pipelined submits, leaves
    the lock as it found it."""

    __slots__ = ("_drain", "_lock", "_match_id", "_runtime")

    def __init__(self, runtime: MatchRuntime, match_id: str, drain: bool) -> None:
        self._runtime = runtime
        self._match_id = match_id
        self._drain = drain
        self._lock: asyncio.Lock | None = None

    async def __aenter__(self) -> Match:
        runtime, match_id = self._runtime, self._match_id
        while True:
            match = await runtime.get(match_id)
            lock = match.lock
            await lock.acquire()
            try:
                if self._drain and match.pending:
                    await match.drained()  # pipelined submits first: then memory is durable
                if runtime.matches.get(match_id) is match and not match.stale:
                    self._lock = lock
                    return match
            except BaseException:
                lock.release()
                raise
            lock.release()
            # Replaced, evicted or made stale while this waited for the lock: look again.

    async def __aexit__(self, *exc_info: object) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()


class MatchRuntime:
    """Every match of one server process.

    ``games`` are the games it offers, by game id (default: every game of the engine's
    registry); a match logged under a game it does not offer is not recovered.
    """

    def __init__(
        self,
        store: MatchStore,
        config: RuntimeConfig | None = None,
        clock: Clock | None = None,
        games: Mapping[str, GameAny] | None = None,
    ) -> None:
        self._games: dict[str, GameAny] = dict(GAMES if games is None else games)
        self.store = store
        self.config = config or RuntimeConfig()
        # Pipelined submits need a store that applies appends in the order they are made
        # (one writer: SQLite's thread, memory); a shared store's appends may race.
        self._pipelining = self.config.pipeline_appends and bool(
            getattr(store, "ordered_appends", False)
        )
        self.clock: Clock = clock or SystemClock()
        self.matches: dict[str, Match] = {}
        self.tokens: dict[bytes, tuple[str, int]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inline = 0  # submits under way in their callers' tasks (submit(inline=True))
        self._inline_over: asyncio.Future[None] | None = None  # close() waits on it for those
        self._closing = False
        self._create_requests: dict[str, str] = {}  # request id -> match id, in memory
        self._validated: set[tuple[str, tuple[tuple[str, str], ...], int]] = set()
        """(game, canonical options, seats) whose deal without preset decks has validated."""
        self._counted: dict[str, str] = {}  # match id -> "waiting" or "running"
        self._counts: dict[str, int] = {"waiting": 0, "running": 0}
        self.finish_listeners: list[Callable[[Match], None]] = []
        """Called with a match once its end is stored (never for a match that ended before
        this process started: whoever needs those reads them at start). They run in the
        runtime's task; they must not block or raise."""
        self._pending: set[str] = set()  # unfinished matches a restart has not resumed yet
        self._recovery: asyncio.Future[int] | None = None
        self._recovery_now = 0
        self._read: dict[str, MatchLog] = {}  # the bulk read, while it is being resumed
        # Matches that finished shortly before a restart, not loaded: their seats' token
        # hashes, forgotten at the end of the linger time (see _load_lingering).
        self._lingering: dict[str, tuple[bytes, ...]] = {}
        self._loading: dict[str, asyncio.Task[Match | None]] = {}  # loads in flight
        self.deadline_listeners: list[Callable[[Match, int | None], None]] = []
        """Called with a match and the deadline (ms) its timer was armed for, or None once
        it has none (finished): the cluster's record of deadlines, so that another process
        can play a default when this one dies (``speeltafel.server.app.cluster``). Retries
        after failures are not reported. They must not block or raise."""
        self.keep_final_views: Callable[[Match, Snapshot], bool] | None = None
        """Set by the transport: keeps, in a finished match's final snapshot's cache,
        everything its views of that snapshot will be answered with (serialised; the views
        need the wire, which the runtime does not import), and returns whether it did. Then
        the match lets go of its engine state (:meth:`Match.drop_state`); without it the
        state stays. Called once per finished match, in the runtime's task; it must not
        block, and an exception keeps the state."""
        self.seal: Callable[[Match], bool] | None = None
        """Whether a match's record (and its spectators' view) is withheld for now: the
        tournament director seals the matches of a duplicate set until the set has ended."""

    def sealed(self, match: Match) -> bool:
        """Whether ``match`` is sealed (see :attr:`seal`)."""
        return self.seal is not None and self.seal(match)

    def _finished(self, match: Match) -> None:
        for listener in list(self.finish_listeners):
            try:
                listener(match)
            except Exception:
                log.exception("finish_listener_failed", match_id=match.id)

    @property
    def waiting_matches(self) -> int:
        """Matches waiting for seats (with CreateMatch calls in flight)."""
        return self._counts["waiting"]

    @property
    def running_matches(self) -> int:
        """Matches being played."""
        return self._counts["running"]

    # ------------------------------------------------------------------ lifecycle

    async def recover(self) -> int:
        """Load and resume every unfinished match of the store; returns how many.

        A match that waited for seats past its join timeout is ended as expired instead.
        The same as :meth:`start_recovery` followed by :meth:`recovered`.
        """
        await self.start_recovery()
        return await self.recovered()

    async def start_recovery(self) -> None:
        """Begin resuming the store's unfinished matches; returns as soon as calls may come.

        With a store that reads in bulk (``load_unfinished`` and ``unfinished_seats``, the
        SQLite store), this learns only which matches are unfinished and whose seat tokens
        are whose (two statements), and resumes the matches in a task of the runtime:
        every log in one read, then replayed match by match, the loop free for calls in
        between. A call for a match not resumed yet waits for it: the match is read and
        resumed at once, ahead of the bulk (:meth:`get`), so the caller waits for one
        match's replay, not for the whole recovery. We chose waiting over answering
        UNAVAILABLE: every client would retry at once, and a match's own replay takes
        milliseconds. A store without bulk reads is recovered match by match before this
        returns, as before.
        """
        now = self.clock.now_ms()
        self._recovery_now = now
        load_many = getattr(self.store, "load_many", None)
        seats = getattr(self.store, "unfinished_seats", None)
        if load_many is None or seats is None:
            count = 0
            for match_id in await self.store.unfinished():
                try:
                    stored = await self.store.load(match_id)
                except Exception:
                    log.exception("recovery_failed", match_id=match_id)
                    continue
                self._pending.add(match_id)
                match = None if stored is None else await self._resume(stored)
                if match is not None and match.status != "finished":
                    count += 1
            self._pending.clear()
            await self._load_lingering(now)
            log.info("recovered", matches=count)
            done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            done.set_result(count)
            self._recovery = done
            return
        order = await self.store.unfinished()
        self._pending.update(order)
        for match_id, seat, token in await seats():
            self.tokens.setdefault(token, (match_id, seat))
        log.info("recovering", matches=len(self._pending))
        task = asyncio.get_running_loop().create_task(self._recover_bulk(load_many, order, now))
        self._keep(task)
        self._recovery = task

    async def recovered(self) -> int:
        """Wait until every unfinished match is resumed; returns how many were."""
        if self._recovery is None:
            return 0
        return await asyncio.shield(self._recovery)

    @property
    def recovering(self) -> bool:
        """Unfinished matches of the store are still being resumed."""
        return self._recovery is not None and not self._recovery.done()

    async def _recover_bulk(
        self, load_many: Callable[[list[str]], Any], order: list[str], now: int
    ) -> int:
        """Resume ``order`` (the unfinished matches, oldest first) in chunks of
        :data:`RECOVERY_CHUNK` logs: one read per chunk, then its replays in slices.

        Chunks, not one read of every log: the rows of a chunk and the replays' transient
        states are freed before the next chunk is read, and their memory reused, instead of
        every log being in memory at once. The single read made the process's memory
        high-water mark (which it keeps) about 15 KB per match above what the matches
        hold (bench (e))."""
        started = time.perf_counter()
        count = read_logs = 0
        read_s = 0.0
        unread: set[str] = set()
        yielded = time.perf_counter()
        for first in range(0, len(order), RECOVERY_CHUNK):
            if self._closing:
                break
            wanted = [m for m in order[first : first + RECOVERY_CHUNK] if m in self._pending]
            if not wanted:
                continue
            reading = time.perf_counter()
            try:
                logs = await load_many(wanted)
            except Exception:
                # These matches are still resumed one by one as calls ask for them.
                log.exception("recovery_read_failed")
                unread.update(wanted)
                continue
            read_s += time.perf_counter() - reading
            read_logs += len(logs)
            # A call for a match of this chunk resumes it from here, not from the store.
            self._read = {stored.created.match_id: stored for stored in logs}
            for stored in logs:
                if self._closing:
                    break
                match = await self._resume(stored)
                if match is not None and match.status != "finished":
                    count += 1
                if time.perf_counter() - yielded > RECOVERY_SLICE_S:
                    await asyncio.sleep(0)  # calls are answered between slices of replays
                    yielded = time.perf_counter()
            del logs  # the rows are now in the matches; let the read's lists go
            self._read = {}
        self._pending &= unread
        await self._load_lingering(now)
        log.info(
            "recovered",
            matches=count,
            logs=read_logs,
            read_s=round(read_s, 3),
            seconds=round(time.perf_counter() - started, 3),
        )
        return count

    async def _load_lingering(self, now: int) -> None:
        """Answer late calls to the matches that finished shortly before the restart for a
        linger time, as without the restart: a bot cut off before it saw the final view can
        still get it, and its retried request its stored answer.

        With a store that reads the seats of finished matches (``finished_seats``, the
        SQLite store) only their seats' tokens are known again; a match is loaded from the
        store when a call asks for it (:meth:`get`, once however many ask at a time).
        Loading every such match at start replayed each whole and kept it: a start-up cost
        and 18 KB per match of the resident set (bench (e)) for matches that a call
        rarely asks for. Another store loads them."""
        linger_ms = int(self.config.finished_linger_s * 1000)
        seats = getattr(self.store, "finished_seats", None)
        if seats is None:
            for match_id in await self.store.finished_since(now - linger_ms):
                with contextlib.suppress(Exception):
                    await self._load(match_id)
            return
        tokens: dict[str, list[bytes]] = {}
        # Each match's tokens go at the end of its own linger time, counted from its end
        # (not from the restart): one timer per tenth of a second of those ends.
        ends: dict[int, list[str]] = {}
        for match_id, seat, token, finished_ms in await seats(now - linger_ms):
            if match_id not in self.matches and self.tokens.get(token, (match_id,))[0] == match_id:
                self.tokens[token] = (match_id, seat)
                if match_id not in tokens:
                    tenths = -((now - finished_ms - linger_ms) // 100)  # rounded up
                    ends.setdefault(tenths, []).append(match_id)
                tokens.setdefault(match_id, []).append(token)
        for match_id, of_match in tokens.items():
            self._lingering[match_id] = tuple(of_match)
        if not self._closing:
            loop = asyncio.get_running_loop()
            for tenths, match_ids in ends.items():
                loop.call_later(max(0, tenths) / 10, self._evict_all, match_ids)

    def _evict_all(self, match_ids: list[str]) -> None:
        for match_id in match_ids:
            self._evict(match_id)

    async def _resume(self, stored: MatchLog) -> Match | None:
        """Rebuild an unfinished match from its log and set it going again (once: the bulk
        and a call that asked for it first may both get here)."""
        match_id = stored.created.match_id
        if match_id not in self._pending:
            return self.matches.get(match_id)  # resumed by the other path
        self._pending.discard(match_id)
        try:
            match = Match.replay(stored, self.game(stored.created.game))
        except Exception:
            # One match that cannot be rebuilt (say, logged under rules this server no
            # longer has) must not keep every other match from resuming.
            log.exception("recovery_failed", match_id=match_id)
            return None
        match = self._register(match, arm=False)  # armed once its clocks are set
        now = self._recovery_now
        try:
            # Registered and locked with no await between: no call reaches it before this.
            async with match.lock:
                if match.status == "waiting" and now >= self._join_deadline(match):
                    await self._end(match, "expired")
                    return match
                if match.status == "running":
                    match.extend_clocks(now)
                if match.outcome is not None and match.finished is None:
                    await self._store_finish(match)
        except Exception:
            match.failures += 1
            log.exception("recovery_write_failed", match_id=match_id)
        self._arm_timer(match)  # retries a failed write, or runs the clock
        return match

    async def close(self) -> None:
        """Stop the clocks and wait for the runtime's tasks; the store stays open."""
        self._closing = True
        for match in self.matches.values():
            if match.timer is not None:
                match.timer.cancel()
                match.timer = None
        while self._tasks or self._inline:
            if self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            else:
                self._inline_over = asyncio.get_running_loop().create_future()
                await self._inline_over

    # ------------------------------------------------------------------ owned tasks

    async def _owned(
        self, operation: Coroutine[Any, Any, T], on_done: Callable[[], None] | None = None
    ) -> T:
        """Run ``operation`` in a task of the runtime; a cancelled caller only stops waiting."""
        task = asyncio.get_running_loop().create_task(operation)
        if on_done is not None:
            task.add_done_callback(lambda _: on_done())
        self._keep(task)
        return await asyncio.shield(task)

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            # Retrieved here so that an answer nobody waits for any more (its caller was
            # cancelled) does not make asyncio warn; a waiting caller gets it through shield.
            task.exception()

    def _locked(self, match_id: str, drain: bool = True) -> _Locked:
        """``async with`` it: the live Match of ``match_id``, its lock held (reloaded first
        when stale), with no pipelined submit on its way unless ``drain`` is False (a
        submit's own)."""
        return _Locked(self, match_id, drain)

    # ------------------------------------------------------------------ memory of matches

    async def _load(self, match_id: str, arm: bool = True) -> Match | None:
        stored = await self.store.load(match_id)
        if stored is None:
            return None
        existing = self.matches.get(match_id)
        if existing is not None:  # loaded meanwhile by another caller
            return existing
        return self._register(Match.replay(stored, self.game(stored.created.game)), arm)

    def _register(self, match: Match, arm: bool = True) -> Match:
        """Keep ``match`` in memory (unless one with its id already is) and run its timer."""
        existing = self.matches.get(match.id)
        if existing is not None:
            return existing
        self.matches[match.id] = match
        self._index(match)
        self._track(match)
        if match.finished is not None:
            self._compact(match)
            self._schedule_eviction(match)
        elif arm:
            self._arm_timer(match)
        return match

    def _compact(self, match: Match) -> None:
        """A finished match whose end is stored keeps only what late calls are answered
        with: its action rows packed (:meth:`Match.compact`) and, once the transport has
        kept the final views serialised (:attr:`keep_final_views`), no engine state."""
        match.compact()
        keep = self.keep_final_views
        if keep is None or match.state is None or match.current.status != "finished":
            return
        try:
            kept = keep(match, match.current)
        except Exception:
            log.exception("final_views_failed", match_id=match.id)
            return
        if kept:
            match.drop_state()

    def _index(self, match: Match) -> None:
        if match.created.request_id:
            self._create_requests[match.created.request_id] = match.id
        if match.termination == "expired":
            return  # an expired match's tokens are forgotten
        for joined in match.joined.values():
            # Keyed by the seat's own bytes (the key recovery put in first is dropped), so
            # the token hash is held once per seat.
            self.tokens.pop(joined.token_hash, None)
            self.tokens[joined.token_hash] = (match.id, joined.seat)

    def _track(self, match: Match) -> None:
        """Count ``match`` as what it is now (waiting, running, or neither)."""
        old = self._counted.pop(match.id, None)
        if old is not None:
            self._counts[old] -= 1
        status = match.status
        if status != "finished" and not match.replaced:
            self._counted[match.id] = status
            self._counts[status] += 1

    async def _refresh(self, old: Match) -> Match:
        """Replace ``old`` by a replay of the log (the caller holds ``old.lock``)."""
        try:
            stored = await self.store.load(old.id)
            if stored is None:
                raise MatchNotFound(f"match {clip(old.id)} is no longer in the store")
            fresh = Match.replay(stored, old.game)
        except Exception:
            old.stale = True
            log.exception("reload_failed", match_id=old.id)
            raise
        if self.matches.get(old.id) is not old:  # evicted meanwhile: nothing to replace
            return self._register(fresh)
        if old.timer is not None:
            old.timer.cancel()
            old.timer = None
        old.replaced, old.stale = True, False
        # One subscriber set for both objects: a stream that holds the old one (to build its
        # views from the immutable parts) still reaches, and leaves, the same outboxes.
        fresh.subscribers = old.subscribers
        del self.matches[old.id]
        self._register(fresh)
        snapshot = fresh.current
        for outbox in list(fresh.subscribers):
            outbox.push_snapshot(snapshot, resync=True)
        log.info("match_reloaded", match_id=fresh.id, version=fresh.version)
        return fresh

    async def refresh(self, match_id: str) -> bool:
        """Catch up with what another process stored in a shared log (the cluster's hook,
        ``speeltafel.server.app.cluster``); returns whether the match moved here.

        Only for a match this process holds and has not seen end: a match it does not hold
        is loaded whole by the next call that needs it. The rows after its version are read
        by seq (``store.read_actions``) and applied as if committed here: each version goes
        to the subscribers, the clock is re-armed, and an outcome stores the finish row
        (idempotent: the first one stays) and tells the finish listeners. Anything else
        (a seat joined, the match ended without a move, a gap in what was read, a store
        without ``read_actions``) replays the whole log, as a conflict does."""
        match = self.matches.get(match_id)
        if match is None or match.finished is not None or self._closing:
            return False
        return await self._owned(self._catch_up(match_id))

    async def _catch_up(self, match_id: str) -> bool:
        async with self._locked(match_id) as match:
            if match.finished is not None:
                return False
            read = getattr(self.store, "read_actions", None)
            rows: tuple[ActionRow, ...] = ()
            if read is not None and match.status == "running":
                rows = await read(match_id, match.version - 1)
            if rows and all(row.seq == match.version + i for i, row in enumerate(rows)):
                for row in rows:
                    action = match.game.parse_action(row.action)
                    state = match.game.apply(match.state, row.seat, action)
                    match.record(row, state)
                    match.publish()
                match.failures = 0
                self._track(match)
                if match.outcome is not None:
                    try:
                        await self._store_finish(match)
                    except Exception:
                        match.failures += 1  # the timer retries the finish row
                        log.exception("finish_failed", match_id=match.id)
                self._arm_timer(match)
                return True
            version, status = match.version, match.status
            fresh = await self._refresh(match)
            if fresh.finished is not None:
                self._finished(fresh)
            return (fresh.version, fresh.status) != (version, status)

    async def get(self, match_id: str) -> Match:
        """A match by id, from memory or (finished and evicted) from the store."""
        if not match_id:
            raise BadRequest("match_id is required", "match_id")
        match = self.matches.get(match_id)
        if match is None and match_id in self._pending:
            # Not resumed yet after a restart: resume this one now, ahead of the bulk.
            stored = self._read.get(match_id) or await self.store.load(match_id)
            if stored is not None:
                await self._resume(stored)
            match = self.matches.get(match_id)
        if match is not None and match.stale:
            async with match.lock:
                await match.drained()
                if self.matches.get(match_id) is match and match.stale:
                    return await self._refresh(match)
            match = self.matches.get(match_id)
        if match is None:
            match = await self._load_once(match_id)
        if match is None:
            raise MatchNotFound(f"no match {clip(match_id)}")
        return match

    async def _load_once(self, match_id: str) -> Match | None:
        """Load a match that is not in memory, once however many calls ask for it at the
        same time: one store read and one replay in a task of the runtime, which every
        caller awaits (a cancelled caller only stops waiting)."""
        task = self._loading.get(match_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._load(match_id))
            self._loading[match_id] = task
            task.add_done_callback(lambda _: self._loading.pop(match_id, None))
            self._keep(task)
        return await asyncio.shield(task)

    def _check_request_id(self, request_id: str, minimum: int = 0) -> None:
        if len(request_id) > self.config.max_request_id_length:
            raise BadRequest(
                f"request_id is longer than {self.config.max_request_id_length}", "request_id"
            )
        if request_id and len(request_id) < minimum:
            raise BadRequest(
                f"a join's request_id must be at least {minimum} random characters "
                "(a UUID4, say): it recovers the seat's token",
                "request_id",
            )

    # ------------------------------------------------------------------ creating and joining

    async def create_match(
        self,
        game_id: str,
        seats: int,
        options: Mapping[str, str],
        move_clock_ms: int = 0,
        presets: Presets = (),
        request_id: str = "",
        *,
        seed: bytes | None = None,
        time_bank_ms: int = 0,
        max_misses: int = 0,
        forfeit: str = "",
        deal: str = "",
    ) -> Created:
        """A new match waiting for its seats, with a fresh secret seed and its commitment.

        The keyword-only parameters are the tournament director's, never a client's (the
        public CreateMatch passes none of them): ``seed`` a given server seed (the matches
        of a duplicate set share theirs; an organiser's seed makes a tournament
        reproducible), the clock policy (``time_bank_ms``, ``max_misses``, ``forfeit``:
        "autoplay" or "lose"), and ``deal``, how the decks were made, for the record.

        With a ``request_id``, the same request again gets the same match (duplicate=True),
        also after a restart; other parameters under that id are RequestIdReused.

        ``presets``: deck orders by deck name (the name "" means the game's first deck), or a
        plain sequence of orders of the first deck; each deck's orders are used in turn as
        the engine documents, and the match stores them by deck name.
        """
        self._check_request_id(request_id)
        game = self.game(game_id)
        canonical = game.info.canonical_options(options)
        by_deck = named_presets(game.info.decks, unnamed_to_first(game.info.decks, presets))
        # The engine validates the seat count and any preset decks; nothing is stored first.
        # Without preset decks the check is the same every time for the same game, options
        # and seats (a fixed seed), so a form that passed once is not dealt again (a trial
        # deal of Take 5 costs about 55 us, a fifth of a unary echo call on the server).
        ordered = tuple(sorted(canonical.items()))
        form = (game_id, ordered, seats)
        if by_deck or form not in self._validated:
            game.new(canonical, seats, Rng(b"validation"), by_deck)
            if not by_deck:
                if len(self._validated) >= MAX_VALIDATED_FORMS:
                    self._validated.clear()
                self._validated.add(form)
        clock_ms = move_clock_ms or self.config.default_move_clock_ms
        if not self.config.min_move_clock_ms <= clock_ms <= self.config.max_move_clock_ms:
            raise BadRequest(
                f"move_clock_ms must be {self.config.min_move_clock_ms}.."
                f"{self.config.max_move_clock_ms}",
                "move_clock_ms",
            )
        if forfeit not in ("", "autoplay", "lose"):
            raise BadRequest("forfeit must be autoplay or lose", "forfeit")
        if seed is None:
            seed = secrets.token_bytes(32)
        created = MatchCreated(
            match_id=secrets.token_hex(8),
            game=game_id,
            rules_version=game.info.rules_version,
            options=ordered,
            seats=seats,
            server_seed=seed,
            commitment=commitment(seed),
            move_clock_ms=clock_ms,
            presets=tuple(by_deck.items()),
            created_ms=self.clock.now_ms(),
            request_id=request_id,
            token_key=secrets.token_bytes(32),
            time_bank_ms=time_bank_ms,
            max_misses=max_misses,
            forfeit=forfeit if max_misses else "",
            deal=deal,
        )
        known = self._create_requests.get(request_id) if request_id else None
        if known is not None:
            return self._created_again(await self.get(known), created)
        if self._counts["running"] >= self.config.max_live_matches:
            raise LimitExceeded("the server runs as many matches as it may", "too_many_matches")
        if self._counts["waiting"] >= self.config.max_waiting_matches:
            raise LimitExceeded(
                "as many matches as the server allows are waiting for seats",
                "too_many_waiting_matches",
            )
        slot = _Slot(self._counts)  # reserved before the first await; freed if it fails
        return await self._owned(self._create(created, game, slot), on_done=slot.release)

    async def _create(self, created: MatchCreated, game: GameAny, slot: _Slot) -> Created:
        stored = await self.store.create(created)
        if stored.match_id != created.match_id:  # the request id made a match before
            slot.release()
            return self._created_again(await self.get(stored.match_id), created)
        slot.release()  # ... and, with no await between, counted as a waiting match
        match = self._register(Match(created, game))
        log.info(
            "match_created",
            match_id=created.match_id,
            game=created.game,
            seats=created.seats,
            commitment=created.commitment,
            preset_deck=bool(created.presets),
        )
        return Created(match, duplicate=False)

    @staticmethod
    def _created_again(match: Match, wanted: MatchCreated) -> Created:
        made = match.created
        same = (made.game, made.options, made.seats, made.move_clock_ms) == (
            wanted.game,
            wanted.options,
            wanted.seats,
            wanted.move_clock_ms,
        ) and tuple(match.presets.items()) == wanted.presets
        if not same:
            raise RequestIdReused(
                "this request_id already created a match with other parameters",
                "request_id_reused",
            )
        return Created(match, duplicate=True)

    async def join(
        self,
        match_id: str,
        seat: int | None,
        name: str,
        entropy: bytes,
        request_id: str = "",
    ) -> Joined:
        """Take a seat; returns it with its secret token. The last seat to join starts the deal.

        With a ``request_id`` (at least 16 random characters: it recovers the token), the
        same request again gets the same seat and the same token (duplicate=True), also
        after a restart; another seat, name or entropy under that id is RequestIdReused.
        Without one the token is random and a retry takes another seat.
        """
        name = clean_name(name, self.config.max_name_length)
        if len(entropy) > self.config.max_entropy_bytes:
            raise BadRequest(f"entropy is over {self.config.max_entropy_bytes} bytes", "entropy")
        if seat is not None and seat < 0:
            raise BadRequest("seat must not be negative", "seat")
        self._check_request_id(request_id, JOIN_REQUEST_ID_MIN_LENGTH)
        await self.get(match_id)  # an unknown match is answered from the caller's task
        return await self._owned(self._join(match_id, seat, name, bytes(entropy), request_id))

    async def _join(
        self, match_id: str, seat: int | None, name: str, entropy: bytes, request_id: str
    ) -> Joined:
        async with self._locked(match_id) as match:
            if request_id in match.join_requests:
                return self._joined_again(match, seat, name, entropy, request_id)
            if match.termination == "expired":
                raise Refused("the match expired before its seats were filled", "match_expired")
            if match.status != "waiting" or len(match.joined) == match.created.seats:
                raise Refused("every seat of this match is taken", "match_full")
            if seat is None:
                seat = min(s for s in range(match.created.seats) if s not in match.joined)
            elif seat >= match.created.seats:
                raise BadRequest(f"seat must be below {match.created.seats}", "seat")
            elif seat in match.joined:
                raise Refused(f"seat {seat} is taken", "seat_taken")
            folded = name.casefold()
            if name and any(j.name.casefold() == folded for j in match.joined.values()):
                raise Refused("another seat of this match has that name", "name_taken")
            if request_id and not match.created.token_key:
                raise Refused(
                    "this match takes no join request ids; join without one", "request_id"
                )
            if request_id:
                token = join_token(match.created.token_key, seat, request_id)
            else:
                token = secrets.token_urlsafe(32)
            now = self.clock.now_ms()
            joined = SeatJoined(match.id, seat, name, token_hash(token), entropy, now, request_id)
            if await self.store.join(joined) is not AppendStatus.COMMITTED:
                # Taken through another process sharing the log: what this one holds is out
                # of date. Reload, then answer from the log.
                fresh = await self._refresh(match)
                if request_id in fresh.join_requests:
                    return self._joined_again(fresh, seat, name, entropy, request_id)
                raise Refused(f"seat {seat} is taken", "seat_taken")
            match.join(joined)
            self.tokens[joined.token_hash] = (match.id, seat)
            log.info("seat_joined", match_id=match.id, seat=seat, name=name)
            if len(match.joined) == match.created.seats:
                match.start(now)
                self._track(match)
                log.info("match_started", match_id=match.id, version=match.version)
                match.publish()
                self._arm_timer(match)
            return Joined(seat, token, duplicate=False, preset_deck=bool(match.created.presets))

    @staticmethod
    def _joined_again(
        match: Match, seat: int | None, name: str, entropy: bytes, request_id: str
    ) -> Joined:
        earlier = match.join_requests[request_id]
        if (seat is not None and seat != earlier.seat) or (name, entropy) != (
            earlier.name,
            earlier.entropy,
        ):
            raise RequestIdReused(
                "this request_id already took a seat with other parameters", "request_id_reused"
            )
        token = join_token(match.created.token_key, earlier.seat, request_id)
        return Joined(earlier.seat, token, duplicate=True, preset_deck=bool(match.created.presets))

    def authenticate(self, token: str) -> tuple[str, int]:
        """The (match id, seat) a seat token belongs to, or Unauthenticated."""
        # Looked up by its SHA-256: the dictionary never compares secret bytes directly, so
        # timing tells nothing about a token.
        found = self.tokens.get(token_hash(token)) if token else None
        if found is None:
            raise Unauthenticated("unknown seat token", "bad_token")
        return found

    # ------------------------------------------------------------------ playing

    async def submit(
        self,
        match_id: str,
        seat: int,
        expected_version: int,
        request_id: str,
        action: Any,
        on_ack: Callable[[Ack], None] | None = None,
        *,
        inline: bool = False,
    ) -> Ack:
        """Apply one action exactly once; see the module docstring for the path it takes.

        ``on_ack`` is called with the acknowledgement (also a duplicate's) once the action is
        recorded in memory and before any subscriber gets the view it caused, so a stream
        can queue the answer ahead of that view. It runs in the runtime's task, so also when
        the caller was cancelled (with ``inline``, in the caller's task, which is not
        cancelled part way); it must not block or raise.

        ``inline``: run in the caller's task rather than in one of the runtime's. Only for a
        caller that is never cancelled before this returns (the Play stream's reader): a
        cancellation part way would leave the action half done (see the module docstring).
        """
        if not request_id:
            raise BadRequest("request_id is required", "request_id")
        self._check_request_id(request_id)
        if request_id.startswith(CLOCK_PREFIX):
            raise BadRequest(
                f"request ids starting with {CLOCK_PREFIX!r} are the server's own (clock defaults)",
                "request_id",
            )
        if expected_version <= 0:
            raise BadRequest(
                "expected_version is required (versions start at 1)", "expected_version"
            )
        match = await self.get(match_id)
        text = match.game.action_text(action)
        operation = self._submit_caught_up(
            match_id, seat, expected_version, request_id, action, text, on_ack
        )
        if not inline:
            return await self._owned(operation)
        self._inline += 1
        try:
            return await operation
        finally:
            self._inline -= 1
            over = self._inline_over
            if not self._inline and over is not None and not over.done():
                over.set_result(None)

    async def _submit_caught_up(
        self,
        match_id: str,
        seat: int,
        expected_version: int,
        request_id: str,
        action: Any,
        text: str,
        on_ack: Callable[[Ack], None] | None,
    ) -> Ack:
        """:meth:`_submit`, once more after a replay of the log when the request names a
        version this process's copy has not reached.

        On a shared log (several processes, appends not pipelined) a client may have seen
        a version on another process that this one has not followed yet (its NOTIFY is on
        its way, or the client's stream moved here when that process died). Such a copy is
        behind, not the client: refusing would make the client choose again for a decision
        it has already taken, and a retried request that the other process stored would be
        refused instead of answered. Once per request, so a client that names a version
        that does not exist costs one replay and then gets StaleVersion as before."""
        try:
            return await self._submit(
                match_id, seat, expected_version, request_id, action, text, on_ack, True
            )
        except _Behind:
            return await self._submit(
                match_id, seat, expected_version, request_id, action, text, on_ack, False
            )

    async def _submit(
        self,
        match_id: str,
        seat: int,
        expected_version: int,
        request_id: str,
        action: Any,
        text: str,
        on_ack: Callable[[Ack], None] | None,
        catch_up: bool = False,
    ) -> Ack:
        async with self._locked(match_id, drain=False) as match:
            if catch_up and not self._pipelining and expected_version > match.version:
                match.stale = True  # the next access replays the log into its place
                raise _Behind
            stored = match.known_request(seat, request_id)
            if stored is not None:
                return self._acked(match, self._repeat(stored, text), on_ack)
            if match.status == "waiting":
                raise Refused("the match has not started: seats are still joining", "not_started")
            if match.status == "finished":
                stored = match.find_request(seat, request_id)
                if stored is not None:
                    return self._acked(match, self._repeat(stored, text), on_ack)
                raise GameOver("the match is over")
            if match.pending_request(seat, request_id) is not None:
                # The same request is on its way to the store: answer once it settled (a
                # first try that failed left nothing, and this one is taken afresh).
                await self._drained_live(match)
                stored = match.known_request(seat, request_id)
                if stored is not None:
                    return self._acked(match, self._repeat(stored, text), on_ack)
            match.check_version(seat, expected_version)
            try:
                if not self._pipelining:
                    return await self._commit(
                        match, seat, action, text, request_id, clock_default=False, on_ack=on_ack
                    )
                state = match.game.apply(match.head_state, seat, action)
            except (IllegalAction, NotYourTurn, InvalidAction):
                match.rejected[seat] += 1  # the tournament's count of refused moves
                raise
            if match.game.outcome(state) is not None:
                # The last action: it finishes the match under the lock, after the rest.
                await self._drained_live(match)
                match.check_version(seat, expected_version)
                try:
                    return await self._commit(
                        match, seat, action, text, request_id, clock_default=False, on_ack=on_ack
                    )
                except (IllegalAction, NotYourTurn, InvalidAction):
                    match.rejected[seat] += 1  # the state it met was not the head it was sent to
                    raise
            row = ActionRow(
                match_id=match.id,
                seq=match.head_version,
                seat=seat,
                request_id=request_id,
                action=text,
                server_ms=self.clock.now_ms(),
                clock_default=False,
            )
            before = match.pending[-1] if match.pending else None
            entry = match.pipeline(row, state)
            # Begun before the lock is let go: the append reaches the store ahead of the next
            # submit's (start_append keeps the order of its calls).
            appended = start_append(self.store, row)
        return await self._durable(match, entry, before, appended, text, on_ack)

    async def _durable(
        self,
        match: Match,
        entry: Pipelined,
        before: Pipelined | None,
        appended: asyncio.Future[AppendResult],
        text: str,
        on_ack: Callable[[Ack], None] | None,
    ) -> Ack:
        """A pipelined action once its append returns: recorded after the one before it,
        then acknowledged, published and clocked exactly as :meth:`_commit` does (without
        the lock, which the next submit may hold: nothing here waits for it)."""
        row = entry.row
        recorded = False
        try:
            result = await appended
            if before is not None and not await asyncio.shield(before.done):
                # The action before it failed, so this one cannot have been stored after it.
                result = AppendResult(AppendStatus.CONFLICT)
            if result.status is AppendStatus.COMMITTED:
                match.record(row, entry.state)
                recorded = True
        finally:
            match.settle_pending(entry, recorded)
        if not recorded:
            # Stored before yet unknown here, or another writer took the seq: as in
            # :meth:`_commit`, the log is replayed into the match's place.
            match.stale = True
            await self._reload(match)
            if result.status is AppendStatus.DUPLICATE and result.existing is not None:
                return self._acked(match, self._repeat(result.existing, text), on_ack)
            raise self._moved_on(self.matches.get(match.id, match).version)
        ack = self._accepted(match, row, on_ack)
        match.publish()
        self._arm_timer(match)
        return ack

    def _accepted(self, match: Match, row: ActionRow, on_ack: Callable[[Ack], None] | None) -> Ack:
        """An action just recorded: counted, logged at debug (the store holds every action;
        a line for each at info cost a decision about a sixth of its server CPU,
        docs/performance-rounds.md round 22) and acknowledged."""
        match.failures = 0
        self._track(match)
        log.debug(
            "action_accepted",
            match_id=match.id,
            seat=row.seat,
            seq=row.seq,
            clock_default=row.clock_default,
        )
        return self._acked(match, Ack(row.seq, match.version, duplicate=False), on_ack)

    async def _drained_live(self, match: Match) -> None:
        """Wait for the pipelined submits of ``match`` (the lock is held); a conflict when
        one of them failed into a reload and this object is no longer the live one."""
        await match.drained()
        if self.matches.get(match.id) is not match or match.stale:
            raise self._moved_on(match.version)

    @staticmethod
    def _moved_on(version: int) -> StaleVersion:
        return StaleVersion(
            "the match moved on; resync and choose again",
            "conflict",
            metadata={"version": str(version)},
        )

    @staticmethod
    def _repeat(stored: ActionRow, text: str) -> Ack:
        if stored.action != text:
            raise RequestIdReused(
                "this request_id was already used for a different action", "request_id_reused"
            )
        return Ack(stored.seq, stored.seq + 1, duplicate=True)

    @staticmethod
    def _acked(match: Match, ack: Ack, on_ack: Callable[[Ack], None] | None) -> Ack:
        if on_ack is not None:
            try:
                on_ack(ack)
            except Exception:
                log.exception("on_ack_failed", match_id=match.id, seq=ack.seq)
        return ack

    async def _commit(
        self,
        match: Match,
        seat: int,
        action: Any,
        text: str,
        request_id: str,
        clock_default: bool,
        on_ack: Callable[[Ack], None] | None = None,
    ) -> Ack:
        """Apply, make durable, advance, acknowledge, finish, publish, arm the clock.

        The caller holds the match lock and runs in a task of the runtime.
        """
        state = match.game.apply(match.state, seat, action)
        row = ActionRow(
            match_id=match.id,
            seq=match.version,
            seat=seat,
            request_id=request_id,
            action=text,
            server_ms=self.clock.now_ms(),
            clock_default=clock_default,
        )
        result = await self.store.append(row)  # raises: memory unchanged, the caller told
        if result.status is AppendStatus.DUPLICATE and result.existing is not None:
            # Stored before, yet unknown here: the log is ahead of this object. Answer from
            # the log, and replay it so the next request meets the current match.
            ack = self._repeat(result.existing, text)
            with contextlib.suppress(Exception):
                await self._refresh(match)
            return self._acked(match, ack, on_ack)
        if result.status is not AppendStatus.COMMITTED:
            # Another writer took this seq (only possible with a shared store): replay the
            # log into a fresh object that keeps this one's subscribers.
            with contextlib.suppress(Exception):
                await self._refresh(match)
            raise self._moved_on(self.matches.get(match.id, match).version)
        match.record(row, state)
        ack = self._accepted(match, row, on_ack)
        if match.outcome is not None:
            try:
                await self._store_finish(match)
            except Exception:
                # The action is durable and acknowledged; the timer retries the finish row.
                match.failures += 1
                log.exception("finish_failed", match_id=match.id)
        match.publish()
        self._arm_timer(match)
        return ack

    async def _reload(self, match: Match) -> None:
        """Replay the log into the place of ``match``, marked stale by a pipelined submit
        (which does not hold the lock: it takes it here, after the others settled)."""
        async with match.lock:
            await match.drained()
            if self.matches.get(match.id) is match and match.stale:
                with contextlib.suppress(Exception):  # still stale: the next access reloads
                    await self._refresh(match)

    async def _store_finish(self, match: Match) -> None:
        """Store the finished row of a match whose outcome is known (raises on failure)."""
        finished = MatchFinished(
            match.id, self.clock.now_ms(), match.final_hash(), match.termination
        )
        await self.store.finish(finished)
        match.finished = finished
        match.failures = 0
        outcome = match.outcome
        log.info(
            "match_finished",
            match_id=match.id,
            termination=match.termination,
            scores=list(outcome.scores) if outcome else [],
            actions=match.action_count,
        )
        self._schedule_eviction(match)
        self._finished(match)
        self._compact(match)

    async def _end(self, match: Match, termination: str) -> None:
        """End a match early: the finished row first, then memory (the lock is held)."""
        finished = MatchFinished(match.id, self.clock.now_ms(), match.final_hash(), termination)
        await self.store.finish(finished)
        match.end(termination)
        match.finished = finished
        match.failures = 0
        self._track(match)
        if termination == "expired":
            for joined in match.joined.values():
                self.tokens.pop(joined.token_hash, None)
        log.info(
            "match_ended",
            match_id=match.id,
            termination=termination,
            seats_joined=len(match.joined),
            actions=match.action_count,
        )
        match.publish()
        self._arm_timer(match)
        self._schedule_eviction(match)
        self._finished(match)
        self._compact(match)

    # ------------------------------------------------------------------ clocks

    def _join_deadline(self, match: Match) -> int:
        return match.created.created_ms + int(self.config.join_timeout_s * 1000)

    def _arm_timer(self, match: Match) -> None:
        """Schedule the match's next timed event: a retry after failures, the join
        deadline, the earliest move deadline, or the retry of a missing finish row."""
        if match.timer is not None:
            match.timer.cancel()
            match.timer = None
        if self._closing or match.replaced:
            return
        now = self.clock.now_ms()
        if match.failures:
            delay = backoff_s(match.failures)
        elif match.status == "waiting":
            self._report_deadline(match, self._join_deadline(match))
            delay = max(0.0, (self._join_deadline(match) - now) / 1000)
        elif match.status == "running":
            every = match.deadlines()
            deadlines = [every[s] for s in match.to_act()]
            self._report_deadline(match, min(deadlines) if deadlines else None)
            if not deadlines:
                return
            delay = max(0.0, (min(deadlines) - now) / 1000)
        elif match.finished is None:
            delay = backoff_s(1)
        else:
            self._report_deadline(match, None)
            return
        loop = asyncio.get_running_loop()
        match.timer = loop.call_later(delay, self._on_deadline, match.id)

    def _report_deadline(self, match: Match, deadline_ms: int | None) -> None:
        for listener in self.deadline_listeners:
            try:
                listener(match, deadline_ms)
            except Exception:
                log.exception("deadline_listener_failed", match_id=match.id)

    async def run_clock(self, match_id: str) -> None:
        """Run a match's clock now: the cluster's sweeper claimed its overdue deadline,
        perhaps because the process that held it died.

        The match is loaded (when this process does not hold it) or caught up with the log
        (when it does), then its clock runs as if its own timer had fired: an overdue seat
        gets its default move with the fixed request id (``clock_request_id``), so a second
        claimer, or this process's own timer racing the claim, stores nothing twice; a
        deadline that has moved on meanwhile plays nothing. Raises what loading raises
        (MatchNotFound, StoreUnavailable)."""
        if match_id in self.matches:
            await self.refresh(match_id)
        else:
            await self.get(match_id)
        await self._expire(match_id)

    def _on_deadline(self, match_id: str) -> None:
        if self._closing:
            return
        task = asyncio.get_running_loop().create_task(self._expire(match_id))
        self._keep(task)

    async def _expire(self, match_id: str) -> None:
        """The match's timer went off: expire it, play defaults, abandon it, or retry a
        write that failed. Any failure is logged and retried with a backoff."""
        if self._closing or match_id not in self.matches:
            return
        try:
            async with self._locked(match_id) as match:
                if match.finished is not None or self._closing:
                    return
                await self._run_clock(match)
                match.failures = 0
                self._arm_timer(match)
        except StaleVersion:
            # A conflict: the log was replayed into a fresh object with its own timer.
            log.info("clock_conflict", match_id=match_id)
            live = self.matches.get(match_id)
            if live is not None and live.stale:
                live.failures += 1
                self._arm_timer(live)
        except Exception:
            live = self.matches.get(match_id)
            if live is not None and live.finished is None:
                live.failures += 1
                log.exception("clock_failed", match_id=match_id, failures=live.failures)
                self._arm_timer(live)
            else:
                log.exception("clock_failed", match_id=match_id)

    async def _run_clock(self, match: Match) -> None:
        now = self.clock.now_ms()
        if match.status == "waiting":
            if now >= self._join_deadline(match):
                await self._end(match, "expired")
            return
        limit = self.config.abandon_after_periods
        # A default found stored already (another process of a shared log played it)
        # replaces ``match`` by a replay, which runs its own clock: this object is done.
        # Without that check the loop played the same stored default forever.
        while match.status == "running" and not self._closing and not match.replaced:
            if (limit and match.idle_periods >= limit) or match.forfeit_due:
                break
            now = self.clock.now_ms()
            overdue = [s for s in match.to_act() if 0 < match.deadline(s) <= now]
            if not overdue:
                break
            seat = overdue[0]
            action = match.game.default_action(match.state, seat)
            log.info("clock_expired", match_id=match.id, seat=seat, seq=match.version)
            await self._commit(
                match,
                seat,
                action,
                match.game.action_text(action),
                clock_request_id(match.version, match.deadline(seat)),
                clock_default=True,
            )
        if match.replaced:
            return
        if match.status == "running" and match.forfeit_due:
            await self._end(match, "forfeit")
        elif limit and match.status == "running" and match.idle_periods >= limit:
            await self._end(match, "abandoned")
        if match.outcome is not None and match.finished is None:
            await self._store_finish(match)

    # ------------------------------------------------------------------ streams

    def _live(self, match: Match) -> Match:
        """The object that now stands for ``match`` (a reload may have replaced it)."""
        return self.matches.get(match.id) or match

    def subscribe(
        self,
        match: Match,
        seat: int | None,
        since_version: int,
        *,
        only_when_acting: bool = False,
    ) -> Outbox:
        """An outbox that receives the backlog after ``since_version`` and then every version.

        ``only_when_acting`` (a seat's bot): only the versions where one of the seat's
        decisions begins, the final one and resyncs (see :class:`Outbox`). Its backlog is at
        most the current view, sent when the seat must act now or the match is over (the
        view carries the deal's public history, so the versions in between add nothing a
        bot needs), and always on a fresh start (``since_version`` 0)."""
        match = self._live(match)
        same = [o for o in match.subscribers if o.seat == seat]
        limit = self.config.max_spectators if seat is None else self.config.max_subscribers_per_seat
        if len(same) >= limit:
            raise LimitExceeded("too many streams for this seat", "too_many_streams")
        outbox = Outbox(seat, only_when_acting=only_when_acting and seat is not None)
        snapshots, resync = match.backlog(since_version)
        if outbox.only_when_acting and snapshots and not resync and since_version > 0:
            current = snapshots[-1]
            needed = current.status == "finished" or seat in current.to_act
            snapshots = [current] if needed else []
        for snapshot in snapshots:
            outbox.push_snapshot(snapshot, resync=resync, always=True)
        match.subscribers.add(outbox)
        return outbox

    def unsubscribe(self, match: Match, outbox: Outbox) -> None:
        """Stop sending to an outbox."""
        match.subscribers.discard(outbox)
        self._live(match).subscribers.discard(outbox)

    # ------------------------------------------------------------------ memory

    def _linger_left_s(self, match: Match) -> float:
        # The linger time counts from the match's end, also for one loaded after a restart.
        delay = self.config.finished_linger_s
        if match.finished is not None:
            left_ms = match.finished.finished_ms + int(delay * 1000) - self.clock.now_ms()
            delay = min(delay, max(0.0, left_ms / 1000))
        return delay

    def _schedule_eviction(self, match: Match, at_least_s: float = 0.0) -> None:
        """Forget ``match`` at the end of its linger time; before that, once it has been
        finished (or loaded) for ``finished_whole_s``, keep only its seats' tokens."""
        if self._closing:
            return
        loop = asyncio.get_running_loop()
        left = max(at_least_s, self._linger_left_s(match))
        loop.call_later(left, self._evict, match.id)
        whole = self.config.finished_whole_s
        if whole < left:
            loop.call_later(whole, self._shrink, match.id)

    def _shrink(self, match_id: str) -> None:
        """Keep a finished match's seats' tokens only, until the end of its linger time; a
        call that asks for it loads it from the store again (:meth:`get`)."""
        match = self.matches.get(match_id)
        if match is None or match.finished is None or self._closing:
            return
        if match.subscribers:  # someone still watches: try again later
            asyncio.get_running_loop().call_later(
                max(1.0, self.config.finished_whole_s), self._shrink, match_id
            )
            return
        self._lingering[match_id] = tuple(
            joined.token_hash
            for joined in match.joined.values()
            if self.tokens.get(joined.token_hash, ("",))[0] == match_id
        )
        del self.matches[match_id]
        self._track(match)
        if self._create_requests.get(match.created.request_id) == match_id:
            # The store answers a repeated CreateMatch with it (as after a restart).
            del self._create_requests[match.created.request_id]

    def _evict(self, match_id: str) -> None:
        match = self.matches.get(match_id)
        if match is None:
            # A match that finished before a restart and was never loaded: its tokens go.
            for token in self._lingering.pop(match_id, ()):
                if self.tokens.get(token, ("",))[0] == match_id:
                    del self.tokens[token]
            return
        if match.finished is None:
            return
        if match.subscribers:  # someone still watches: look again later
            self._schedule_eviction(match, at_least_s=1.0)
            return
        del self.matches[match_id]
        self._lingering.pop(match_id, None)
        self._track(match)
        if self._create_requests.get(match.created.request_id) == match_id:
            del self._create_requests[match.created.request_id]
        for joined in match.joined.values():
            self.tokens.pop(joined.token_hash, None)

    def games(self) -> list[GameAny]:
        """Every game the server offers."""
        return list(self._games.values())

    def game(self, game_id: str) -> GameAny:
        """The offered game with this id, or :class:`InvalidOptions` naming the ones there are."""
        try:
            return self._games[game_id]
        except KeyError:
            known = ", ".join(sorted(self._games))
            raise InvalidOptions(
                f"unknown game {game_id[:40]!r}; known: {known}", "unknown_game"
            ) from None
