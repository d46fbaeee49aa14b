"""Several server processes on one shared log: what each process runs beside its runtime.

Processes own nothing. The PostgreSQL log decides which move wins; a process only caches
replayed matches. This module keeps such a cache honest and shares out the one job that
must run once:

- **Other processes' moves** (:meth:`Cluster._follow`). The store sends one NOTIFY per
  committed batch naming the matches that moved (``store.moves()``). For each one this
  process holds in memory, :meth:`MatchRuntime.refresh` reads the new rows by seq and
  applies them: the process's own subscribers get the views, its clock is re-armed, and a
  match that ended tells the finish listeners (the tournament director). A match nobody
  here holds is not read at all. Refreshes of one match never overlap: a notification
  that comes while one runs makes it run once more afterwards.
- **Streams routed anywhere** (:class:`ClusterInterceptor`). A seat call carries
  ``x-match-id``; when this process does not know the caller's seat token, the match is
  loaded (or refreshed, when a seat joined elsewhere) before the token is checked, so the
  call works wherever the proxy sent it, at the cost of one replay.
- **Clocks.** Every process that holds a match arms its clock. Two of them that both fire
  play the same default move with the same request id (``clock_request_id`` of the version
  and deadline), so the log stores it once: the second append is a duplicate (same seat,
  same request id) or a conflict (the seq moved), never a second row.
- **Deadlines nobody holds** (:meth:`Cluster._sweep`). Every process records, for each
  match it holds, the deadline its timer is armed for (``runtime.deadline_listeners``),
  coalesced per match and written every :data:`DEADLINE_FLUSH_S` as one statement in the
  store's ``deadlines`` table (a row moves only forward by seq, so processes at different
  versions of a match cannot set it back). Every :data:`SWEEP_INTERVAL_S` each process
  claims deadlines overdue by :data:`CLAIM_GRACE_MS` with ``FOR UPDATE SKIP LOCKED`` and a
  lease of :data:`CLAIM_LEASE_MS`, and runs those matches' clocks
  (``runtime.run_clock``: loading the match if it does not hold it). The grace leaves the
  holder's own timer the first go, so in a healthy cluster sweeps find nothing; when the
  holder died, the match's default is played within about the grace plus one sweep of its
  deadline. Exactly one default per expiry: the claim is disjoint, and the default's fixed
  request id makes any racing attempt (the holder's timer, a claim after a lease ran out)
  a duplicate or a conflict, never a second row.
- **One tournament director** (:meth:`Cluster._elect`): the process holding a
  session-level advisory lock on a dedicated connection directs, and writes its address to
  the store's ``director`` row so the others relay tournament and lobby calls to it. The
  others try the lock every :data:`ELECT_INTERVAL_S`. A process that dies (even by SIGKILL)
  loses its connection, PostgreSQL releases the lock, and the next try elsewhere wins: the
  new director loads the tournaments from the store and carries on. A director that loses
  its connection while alive stops directing at once (someone else may hold the lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import grpc
import structlog

from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import MatchRuntime, token_hash

log = structlog.get_logger("speeltafel.cluster")

ELECT_INTERVAL_S = 0.5
"""How often a process that does not direct tries the director's lock (a takeover after a
kill takes about this long plus the new director's start)."""
HOLD_CHECK_S = 1.0
"""How often the director checks that its lock's connection is alive."""
ENDED_INTERVAL_S = 1.0
"""How often a following process reads which tournaments are over (it unseals them)."""
SWEEP_INTERVAL_S = 0.5
"""How often a process claims overdue deadlines."""
CLAIM_GRACE_MS = 1_000
"""How long past a deadline before any process claims it: the holder's own timer plays
first (no claim traffic while every holder lives); a holder that died is replaced this
much late, plus up to one sweep."""
CLAIM_LEASE_MS = 5_000
"""How long a claim keeps others off: a claimer that dies before playing is taken over by
another process after this."""
DEADLINE_FLUSH_S = 0.1
"""How often recorded deadlines are written (coalesced: one row a match, one statement)."""
MAX_MATCH_ID = 64
CONCURRENT_REFRESHES = 2
"""Refreshes reading the store at once: fewer than the store's pool of readers (4), so
calls' own reads still get a connection when the process is behind; a match waiting its
turn collects its moves and reads them in one go (refreshes of a match coalesce)."""


def director_lock_key(schema: str) -> int:
    """The advisory lock key of the director of the store in ``schema`` (a signed 64-bit
    number from a hash, so stores in several schemas of one database elect separately)."""
    digest = hashlib.sha256(f"speeltafel/v1/director/{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class SharedStore(Protocol):
    """What the cluster needs of the store (the PostgreSQL store has it)."""

    origin: str
    schema: str
    conninfo: str

    def moves(self, *, include_own: bool = False) -> Any: ...

    async def set_director(self, address: str, origin: str) -> None: ...

    async def director(self) -> tuple[str, str] | None: ...

    async def set_deadlines(self, entries: Sequence[tuple[str, int, int | None]]) -> None: ...

    async def claim_overdue(
        self, now_ms: int, *, grace_ms: int, lease_ms: int, limit: int = 16
    ) -> list[tuple[str, int, int]]: ...


class Directing(Protocol):
    """What the cluster needs of the tournament services (``TournamentServices``)."""

    directing: bool
    remote: Callable[[], Awaitable[grpc.aio.Channel | None]] | None

    async def lead(self) -> None: ...

    async def follow(self) -> None: ...

    async def learn_ended(self) -> None: ...


class ClusterInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # untyped grpc
    """Loads the match a seat call names when this process does not know its token (see
    the module docstring). Runs inside the seat-token check, so the check sees it loaded."""

    def __init__(self, runtime: MatchRuntime) -> None:
        self.runtime = runtime

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        match_id = token = ""
        for key, value in details.invocation_metadata or ():
            if key == "x-match-id" and isinstance(value, str):
                match_id = value
            elif key == "authorization" and isinstance(value, str):
                token = value.removeprefix("Bearer ").strip()
        if match_id and token and len(match_id) <= MAX_MATCH_ID:
            await self._hold(match_id, token)
        return await continuation(details)

    async def _hold(self, match_id: str, token: str) -> None:
        runtime = self.runtime
        if token_hash(token) in runtime.tokens:
            return
        # Whatever fails here (an unknown match, the store away) is the handler's to
        # answer, as it would be without a cluster: the token check then refuses.
        with contextlib.suppress(Exception):
            if match_id in runtime.matches:
                await runtime.refresh(match_id)
            else:
                await runtime.get(match_id)


class Cluster:
    """The cluster's tasks of one server process (see the module docstring).

    ``advertise``: the address other processes reach this one at (for relayed tournament
    calls); ``tournaments``: the process's tournament services, or None for none.
    """

    def __init__(
        self,
        runtime: MatchRuntime,
        store: SharedStore,
        tournaments: Directing | None = None,
        advertise: str = "",
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.tournaments = tournaments
        self.advertise = advertise
        self.interceptor = ClusterInterceptor(runtime)
        self.refreshes = 0  # matches caught up with another process's moves
        self._busy: set[str] = set()
        self._reads = asyncio.Semaphore(CONCURRENT_REFRESHES)
        self._again: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._feed: Any = None
        self._closing = False
        self.elected = asyncio.Event()
        """Set while this process directs."""
        self.claimed = 0  # overdue deadlines this process claimed (and ran the clock of)
        self._deadlines: dict[str, tuple[int, int | None]] = {}  # recorded, not yet written
        self._flushed = asyncio.Event()

    async def start(self) -> None:
        """Follow the other processes' moves; run for director (with tournaments)."""
        self._feed = self.store.moves()
        self._spawn(self._follow())
        # What moved between the runtime's recovery and the feed's start: catch up once.
        for match_id in list(self.runtime.matches):
            self._poke(match_id)
        self.runtime.deadline_listeners.append(self._record_deadline)
        for match in list(self.runtime.matches.values()):  # armed before the listener
            if match.finished is None and match.status == "running":
                due = [match.deadline(s) for s in match.to_act()]
                self._record_deadline(match, min(due) if due else None)
        self._spawn(self._write_deadlines())
        self._spawn(self._sweep())
        if self.tournaments is not None:
            self.tournaments.remote = self._remote
            self._spawn(self._elect())
            self._spawn(self._learn_ended())

    async def close(self) -> None:
        """Stop the tasks (the director first, if this process directs)."""
        self._closing = True
        if self._feed is not None:
            self._feed.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.tournaments is not None and self.tournaments.directing:
            await self.tournaments.follow()
        for channel in self._channels.values():
            await channel.close()

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ moves

    async def _follow(self) -> None:
        async for match_ids in self._feed:
            for match_id in match_ids:
                if match_id in self.runtime.matches:
                    self._poke(match_id)

    def _poke(self, match_id: str) -> None:
        if match_id in self._busy:
            self._again.add(match_id)
            return
        self._busy.add(match_id)
        self._spawn(self._catch_up(match_id))

    async def _catch_up(self, match_id: str) -> None:
        try:
            while not self._closing:
                self._again.discard(match_id)
                try:
                    async with self._reads:
                        self._again.discard(match_id)  # what waited is read now
                        moved = await self.runtime.refresh(match_id)
                    if moved:
                        self.refreshes += 1
                except Exception:
                    # The store is away, say: the match's own clock or the next call
                    # reloads it; the next notification tries again.
                    log.warning("refresh_failed", match_id=match_id, exc_info=True)
                if match_id not in self._again:
                    return
        finally:
            self._busy.discard(match_id)

    # ------------------------------------------------------------------ deadlines

    def _record_deadline(self, match: Match, deadline_ms: int | None) -> None:
        if deadline_ms == 0:
            deadline_ms = None  # no seat on a clock: nothing to claim
        self._deadlines[match.id] = (match.version, deadline_ms)
        self._flushed.set()

    async def _write_deadlines(self) -> None:
        """Write what was recorded, coalesced, every :data:`DEADLINE_FLUSH_S`. A failed
        write (the store away) is kept and tried again, unless newer entries replaced it."""
        while True:
            await self._flushed.wait()
            self._flushed.clear()
            entries, self._deadlines = self._deadlines, {}
            try:
                await self.store.set_deadlines(
                    [(match_id, seq, due) for match_id, (seq, due) in entries.items()]
                )
            except Exception:
                log.warning("deadlines_not_written", matches=len(entries), exc_info=True)
                for match_id, entry in entries.items():
                    self._deadlines.setdefault(match_id, entry)
                self._flushed.set()
            await asyncio.sleep(DEADLINE_FLUSH_S)

    async def _sweep(self) -> None:
        """Claim overdue deadlines and run those matches' clocks (see the module docstring)."""
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            try:
                claimed = await self.store.claim_overdue(
                    self.runtime.clock.now_ms(),
                    grace_ms=CLAIM_GRACE_MS,
                    lease_ms=CLAIM_LEASE_MS,
                )
            except Exception:
                log.warning("claim_failed", exc_info=True)
                continue
            for match_id, seq, deadline_ms in claimed:
                self.claimed += 1
                log.info("deadline_claimed", match_id=match_id, seq=seq, deadline_ms=deadline_ms)
                self._spawn(self._run_claimed(match_id))

    async def _run_claimed(self, match_id: str) -> None:
        try:
            await self.runtime.run_clock(match_id)
        except Exception:
            # An unknown match (none to run) or the store away: the lease runs out and a
            # sweep (here or elsewhere) claims it again.
            log.warning("claimed_clock_failed", match_id=match_id, exc_info=True)
            return
        match = self.runtime.matches.get(match_id)
        if match is not None and match.finished is not None:
            # Loaded finished (its holder ended it but died before writing the deadline
            # off): nothing armed, so say it here, or the row would be claimed forever.
            self._record_deadline(match, None)

    # ------------------------------------------------------------------ the director

    async def _elect(self) -> None:
        import psycopg  # the cluster runs on the PostgreSQL store, which has psycopg

        assert self.tournaments is not None
        key = director_lock_key(self.store.schema)
        while not self._closing:
            conn: Any = None
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.store.conninfo, autocommit=True, connect_timeout=5
                )
                while True:
                    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
                    row = await cursor.fetchone()
                    if row is not None and row[0]:
                        break
                    await asyncio.sleep(ELECT_INTERVAL_S)
                log.info("director_elected", address=self.advertise)
                await self.tournaments.lead()
                await self.store.set_director(self.advertise, self.store.origin)
                self.elected.set()
                while True:  # hold it while the connection lives
                    await asyncio.sleep(HOLD_CHECK_S)
                    await conn.execute("SELECT 1")
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("director_lock_lost", exc_info=True)
                await asyncio.sleep(ELECT_INTERVAL_S)
            finally:
                if self.elected.is_set():
                    self.elected.clear()
                    with contextlib.suppress(Exception):
                        await asyncio.shield(self.tournaments.follow())
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()

    async def _remote(self) -> grpc.aio.Channel | None:
        """A channel to the directing process (None while none is known)."""
        try:
            found = await self.store.director()
        except Exception:
            return None
        if found is None:
            return None
        address, origin = found
        if origin == self.store.origin:
            return None  # the row names this process, which lost the lock: nobody now
        channel = self._channels.get(address)
        if channel is None:
            channel = grpc.aio.insecure_channel(address)
            self._channels[address] = channel
        return channel

    async def _learn_ended(self) -> None:
        assert self.tournaments is not None
        while True:
            if not self.tournaments.directing:
                with contextlib.suppress(Exception):
                    await self.tournaments.learn_ended()
            await asyncio.sleep(ENDED_INTERVAL_S)
