"""The match runtime: creates, seats, runs, clocks and recovers matches.

The path of one action: the match's lock (one writer per match) -> request-id check
(exactly once) -> version check -> ``engine.apply`` (pure; an illegal action stops here and
changes nothing) -> ``store.append`` (durable before anything else happens) -> the
in-memory match advances -> every subscriber gets the new snapshot -> the caller gets its
acknowledgement. A crash anywhere before the append leaves no trace; a crash after it is
repaired by replaying the log at the next start.

Logs never carry an action's content, a hand, a seed or a deck order: a sealed selection
logged before its reveal would tell an operator (and anything reading the logs) what a seat
may not know yet. They carry match id, seat, seq, and public facts.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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
from speeltafel.server.app.match import Match, Outbox
from speeltafel.server.engine.core import GameAny, GameOver, Rng, commitment
from speeltafel.server.engine.registry import GAMES, get_game
from speeltafel.server.store.base import (
    ActionRow,
    AppendStatus,
    MatchCreated,
    MatchFinished,
    MatchStore,
    SeatJoined,
)

log = structlog.get_logger("speeltafel.runtime")


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
    """Matches not yet finished, across the server; past it CreateMatch is refused."""
    max_subscribers_per_seat: int = 4
    """Concurrent streams of one seat (a reconnecting bot may briefly hold two)."""
    max_spectators: int = 64
    """Spectator streams per match."""
    finished_linger_s: float = 300.0
    """How long a finished match stays in memory before only the store has it."""
    max_name_length: int = 64
    max_entropy_bytes: int = 64
    max_request_id_length: int = 64


@dataclass(frozen=True, slots=True)
class Ack:
    """The answer to an accepted action (also the stored answer of a repeated request)."""

    seq: int
    version: int
    duplicate: bool


def token_hash(token: str) -> bytes:
    """What the store keeps of a seat token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).digest()


class MatchRuntime:
    """Every match of one server process."""

    def __init__(
        self,
        store: MatchStore,
        config: RuntimeConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.config = config or RuntimeConfig()
        self.clock: Clock = clock or SystemClock()
        self.matches: dict[str, Match] = {}
        self.tokens: dict[bytes, tuple[str, int]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False

    # ------------------------------------------------------------------ lifecycle

    async def recover(self) -> int:
        """Load and resume every unfinished match of the store; returns how many."""
        now = self.clock.now_ms()
        count = 0
        for match_id in await self.store.unfinished():
            try:
                match = await self._load(match_id)
            except Exception:
                # One match that cannot be rebuilt (say, logged under rules this server no
                # longer has) must not keep every other match from resuming.
                log.exception("recovery_failed", match_id=match_id)
                continue
            if match is None:
                continue
            match.extend_clocks(now)
            if match.outcome is not None and match.finished is None:
                await self._finish(match)
            self._arm_timer(match)
            count += 1
        # A match that finished shortly before the restart stays in memory for the rest of
        # its linger time, as it would have without the restart: its seats' tokens are known
        # again, so a bot that was cut off before it saw the final view can still get it.
        linger_ms = int(self.config.finished_linger_s * 1000)
        for match_id in await self.store.finished_since(now - linger_ms):
            await self._load(match_id)
        log.info("recovered", matches=count)
        return count

    async def close(self) -> None:
        """Stop the clocks and wait for running clock tasks; the store stays open."""
        self._closing = True
        for match in self.matches.values():
            if match.timer is not None:
                match.timer.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _load(self, match_id: str) -> Match | None:
        stored = await self.store.load(match_id)
        if stored is None:
            return None
        existing = self.matches.get(match_id)
        if existing is not None:  # loaded meanwhile by another caller
            return existing
        match = Match.replay(stored, get_game(stored.created.game))
        self.matches[match_id] = match
        for joined in stored.seats:
            self.tokens[joined.token_hash] = (match_id, joined.seat)
        if match.finished is not None:
            self._schedule_eviction(match)
        return match

    async def get(self, match_id: str) -> Match:
        """A match by id, from memory or (finished and evicted) from the store."""
        if not match_id:
            raise BadRequest("match_id is required", "match_id")
        match = self.matches.get(match_id)
        if match is None and match_id:
            match = await self._load(match_id)
        if match is None:
            raise MatchNotFound(f"no match {match_id[:64]!r}")
        return match

    # ------------------------------------------------------------------ creating and joining

    async def create_match(
        self,
        game_id: str,
        seats: int,
        options: Mapping[str, str],
        move_clock_ms: int = 0,
        presets: Sequence[Sequence[str]] = (),
    ) -> Match:
        """A new match waiting for its seats, with a fresh secret seed and its commitment."""
        game = get_game(game_id)
        canonical = game.info.canonical_options(options)
        # The engine validates the seat count and any preset decks; nothing is stored first.
        game.new(canonical, seats, Rng(b"validation"), presets)
        clock_ms = move_clock_ms or self.config.default_move_clock_ms
        if not self.config.min_move_clock_ms <= clock_ms <= self.config.max_move_clock_ms:
            raise BadRequest(
                f"move_clock_ms must be {self.config.min_move_clock_ms}.."
                f"{self.config.max_move_clock_ms}",
                "move_clock_ms",
            )
        live = sum(1 for m in self.matches.values() if m.outcome is None)
        if live >= self.config.max_live_matches:
            raise LimitExceeded("the server runs as many matches as it may", "too_many_matches")
        seed = secrets.token_bytes(32)
        created = MatchCreated(
            match_id=secrets.token_hex(8),
            game=game_id,
            rules_version=game.info.rules_version,
            options=tuple(sorted(canonical.items())),
            seats=seats,
            server_seed=seed,
            commitment=commitment(seed),
            move_clock_ms=clock_ms,
            presets=tuple(tuple(order) for order in presets),
            created_ms=self.clock.now_ms(),
        )
        await self.store.create(created)
        match = Match(created, game)
        self.matches[created.match_id] = match
        log.info(
            "match_created",
            match_id=created.match_id,
            game=game_id,
            seats=seats,
            commitment=created.commitment,
            preset_deck=bool(presets),
        )
        return match

    async def join(
        self, match_id: str, seat: int | None, name: str, entropy: bytes
    ) -> tuple[int, str]:
        """Take a seat; returns it with its secret token. The last seat to join starts the deal."""
        if len(name) > self.config.max_name_length:
            raise BadRequest(f"name is longer than {self.config.max_name_length}", "name")
        if len(entropy) > self.config.max_entropy_bytes:
            raise BadRequest(f"entropy is over {self.config.max_entropy_bytes} bytes", "entropy")
        match = await self.get(match_id)
        async with match.lock:
            if match.status != "waiting" or len(match.joined) == match.created.seats:
                raise Refused("every seat of this match is taken", "match_full")
            if seat is None:
                seat = min(s for s in range(match.created.seats) if s not in match.joined)
            elif seat >= match.created.seats:
                raise BadRequest(f"seat must be below {match.created.seats}", "seat")
            elif seat in match.joined:
                raise Refused(f"seat {seat} is taken", "seat_taken")
            token = secrets.token_urlsafe(32)
            now = self.clock.now_ms()
            joined = SeatJoined(match.id, seat, name, token_hash(token), bytes(entropy), now)
            if await self.store.join(joined) is not AppendStatus.COMMITTED:
                raise Refused(f"seat {seat} is taken", "seat_taken")
            match.join(joined)
            self.tokens[joined.token_hash] = (match.id, seat)
            log.info("seat_joined", match_id=match.id, seat=seat, name=name)
            if len(match.joined) == match.created.seats:
                match.start(now)
                log.info("match_started", match_id=match.id, version=match.version)
                match.publish()
                self._arm_timer(match)
        return seat, token

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
    ) -> Ack:
        """Apply one action exactly once; see the module docstring for the path it takes.

        ``on_ack`` is called with the answer before the views the action caused are
        published (a stream queues its acknowledgement ahead of them)."""
        if not request_id:
            raise BadRequest("request_id is required", "request_id")
        if len(request_id) > self.config.max_request_id_length:
            raise BadRequest(
                f"request_id is longer than {self.config.max_request_id_length}", "request_id"
            )
        if expected_version <= 0:
            raise BadRequest(
                "expected_version is required (versions start at 1)", "expected_version"
            )
        match = await self.get(match_id)
        text = match.game.action_text(action)
        async with match.lock:
            stored = match.requests.get((seat, request_id))
            if stored is not None:
                ack = self._repeat(stored, text)
                if on_ack is not None:
                    on_ack(ack)
                return ack
            if match.status == "waiting":
                raise Refused("the match has not started: seats are still joining", "not_started")
            if match.status == "finished":
                raise GameOver("the match is over")
            match.check_version(seat, expected_version)
            return await self._commit(
                match, seat, action, text, request_id, clock_default=False, on_ack=on_ack
            )

    @staticmethod
    def _repeat(stored: ActionRow, text: str) -> Ack:
        if stored.action != text:
            raise RequestIdReused(
                "this request_id was already used for a different action", "request_id_reused"
            )
        return Ack(stored.seq, stored.seq + 1, duplicate=True)

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
        """Apply, make durable, advance, publish. The caller holds the match lock."""
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
        result = await self.store.append(row)
        if result.status is AppendStatus.DUPLICATE and result.existing is not None:
            ack = self._repeat(result.existing, text)
            if on_ack is not None:
                on_ack(ack)
            return ack
        if result.status is AppendStatus.CONFLICT:
            # Another writer took this seq (only possible with a shared store): what we
            # hold is out of date. Drop it; the next access replays the log.
            self.matches.pop(match.id, None)
            raise StaleVersion("the match moved on; resync and choose again", "conflict")
        match.record(row, state)
        log.info(
            "action_accepted",
            match_id=match.id,
            seat=seat,
            seq=row.seq,
            clock_default=clock_default,
        )
        ack = Ack(row.seq, match.version, duplicate=False)
        if on_ack is not None:
            on_ack(ack)
        if match.outcome is not None:
            await self._finish(match)
        match.publish()
        self._arm_timer(match)
        return ack

    async def _finish(self, match: Match) -> None:
        finished = MatchFinished(match.id, self.clock.now_ms(), match.final_hash())
        await self.store.finish(finished)
        match.finished = finished
        outcome = match.outcome
        log.info(
            "match_finished",
            match_id=match.id,
            scores=list(outcome.scores) if outcome else [],
            actions=len(match.actions),
        )
        self._schedule_eviction(match)

    # ------------------------------------------------------------------ clocks

    def _arm_timer(self, match: Match) -> None:
        if match.timer is not None:
            match.timer.cancel()
            match.timer = None
        if self._closing or match.status != "running":
            return
        deadlines = [match.deadline(s) for s in match.to_act()]
        if not deadlines:
            return
        delay = max(0.0, (min(deadlines) - self.clock.now_ms()) / 1000)
        loop = asyncio.get_running_loop()
        match.timer = loop.call_later(delay, self._on_deadline, match)

    def _on_deadline(self, match: Match) -> None:
        task = asyncio.ensure_future(self._expire(match))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _expire(self, match: Match) -> None:
        """Play the documented default move for every seat whose clock has run out."""
        try:
            async with match.lock:
                while match.status == "running" and not self._closing:
                    now = self.clock.now_ms()
                    overdue = [s for s in match.to_act() if 0 < match.deadline(s) <= now]
                    if not overdue:
                        break
                    seat = overdue[0]
                    action = match.game.default_action(match.state, seat)
                    request_id = f"clock:{match.version}:{match.deadline(seat)}"
                    log.info("clock_expired", match_id=match.id, seat=seat, seq=match.version)
                    await self._commit(
                        match,
                        seat,
                        action,
                        match.game.action_text(action),
                        request_id,
                        clock_default=True,
                    )
                self._arm_timer(match)
        except Exception:
            log.exception("clock_failed", match_id=match.id)

    # ------------------------------------------------------------------ streams

    def subscribe(self, match: Match, seat: int | None, since_version: int) -> Outbox:
        """An outbox that receives the backlog after ``since_version`` and then every version."""
        same = [o for o in match.subscribers if o.seat == seat]
        limit = self.config.max_spectators if seat is None else self.config.max_subscribers_per_seat
        if len(same) >= limit:
            raise LimitExceeded("too many streams for this seat", "too_many_streams")
        outbox = Outbox(seat)
        snapshots, resync = match.backlog(since_version)
        for snapshot in snapshots:
            outbox.push_snapshot(snapshot, resync=resync)
        match.subscribers.add(outbox)
        return outbox

    @staticmethod
    def unsubscribe(match: Match, outbox: Outbox) -> None:
        """Stop sending to an outbox."""
        match.subscribers.discard(outbox)

    # ------------------------------------------------------------------ memory

    def _schedule_eviction(self, match: Match) -> None:
        if self._closing:
            return
        loop = asyncio.get_running_loop()
        loop.call_later(self.config.finished_linger_s, self._evict, match.id)

    def _evict(self, match_id: str) -> None:
        match = self.matches.get(match_id)
        if match is None:
            return
        if match.subscribers:  # someone still watches: look again later
            self._schedule_eviction(match)
            return
        del self.matches[match_id]
        for joined in match.joined.values():
            self.tokens.pop(joined.token_hash, None)

    @staticmethod
    def games() -> list[GameAny]:
        """Every game the server offers."""
        return list(GAMES.values())
