"""The tournament director: schedules, starts and follows the matches of every tournament.

**A tournament** is a :class:`TournamentRow` in the store plus its schedule, which is a
pure function of the row (:func:`formats.schedule`), so nothing but the row, the fixture to
match ids and the results needs storing. One scheduler task goes through the tournaments
in creation order and starts every fixture, in fixture order, whose participants are all
connected, play the game and have room (their ``max_concurrent``); it wakes when a bot
registers, a match ends or a tournament is created.

**Starting a fixture** is idempotent step by step, so a crash anywhere is repaired by
doing it again: the match is created with a request id derived from the tournament's
secret key and the fixture number (so the same match is found again, and nobody who does
not hold the key can take that request id first); the fixture's match id is stored; every
seat is joined with a request id derived the same way from (fixture, seat), which makes
the runtime derive the same seat token every time (HMAC of the match's token key with
seat and request id): after a restart the director gets its bots' tokens back by joining
again. Then each bot is given its seat through the lobby.

**Seeds.** With an organiser's seed, fixture n's match seed is
``HMAC-SHA256(seed, "speeltafel/v1/tournament/match:n")`` and duplicate set k's is
``HMAC-SHA256(seed, "speeltafel/v1/tournament/set:k")``, so the same seed and participants
deal the same cards in every run; without one the same derivation runs from the
tournament's secret key, which is as good as a fresh secret seed per match or set and
survives a restart. Outside duplicate sets each seat joins with its bot's registered
entropy. In a duplicate set the entropy is mixed in once for the whole set: the first
match of the set joins its seat 0 with the set's entropy (SHA-256 over the lineup's
registered entropies, empty when none gave any) and its other seats with none, and every
later match of the set joins the same way with the same bytes, so every match of the set
has the same shuffle key. The record's ``deal`` says all this.

**Sealing.** A match of a duplicate set is sealed until every match of its set has ended
(or the tournament was cancelled and its last created match of the set has ended): the
runtime's seal predicate answers from here, so the match service refuses its record and
spectators. Results of a sealed set stay out of the standings and its match_finished
events are held back until the set ends, so no bot (nor anyone watching) learns of one
match of a set from another before the set is over.

**Results** are stored per fixture when a match ends (ranks, utilities, the seats' misses,
refused moves and forfeits) and rated in fixture order, never in the order matches end, so
the standings after a restart are the ones an uninterrupted run gives.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import structlog

from speeltafel.server.app.errors import AppError, BadRequest, RequestIdReused
from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import MatchRuntime, clean_name
from speeltafel.server.engine.core import InvalidOptions, Rng
from speeltafel.server.store.base import (
    FixtureMatch,
    FixtureResult,
    TournamentRow,
    TournamentStore,
)
from speeltafel.server.tournament import formats
from speeltafel.server.tournament.formats import Fixture, Format
from speeltafel.server.tournament.lobby import Assignment, Lobby
from speeltafel.server.tournament.results import MatchResult, Standings, compute_standings

log = structlog.get_logger("speeltafel.director")

MAX_FIXTURES = 10_000
"""The most matches one tournament may schedule."""
MAX_ROUNDS = 1_000
MAX_SEED_BYTES = 64
MAX_TIME_BANK_MS = 3_600_000
RATED_TERMINATIONS = frozenset({"normal", "forfeit"})


class TournamentNotFound(AppError):
    """No tournament has this id."""

    code = "not_found"
    default_rule = "no_such_tournament"


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    """What an organiser asks for (the proto's CreateTournamentRequest, checked here)."""

    name: str
    game: str
    options: Mapping[str, str]
    format: Format
    participants: tuple[str, ...]
    seats: int = 0
    rounds: int = 0
    max_matches: int = 0
    move_clock_ms: int = 0
    time_bank_ms: int = 0
    max_misses: int = 0
    forfeit: str = "autoplay"
    seed: bytes = b""
    request_id: str = ""


@dataclass(frozen=True, slots=True)
class Event:
    """One item of a tournament's progress stream: ``kind`` is "progress" (``state``),
    "started" or "finished" (``fixture``, with ``result`` when finished) or "standings"."""

    kind: str
    fixture: Fixture | None = None
    match_id: str = ""
    result: FixtureResult | None = None


@dataclass(eq=False)
class Tournament:
    """A tournament in memory: its row, schedule, matches and results."""

    row: TournamentRow
    schedule: list[Fixture]
    matches: dict[int, str] = field(default_factory=dict)  # fixture -> match id
    results: dict[int, FixtureResult] = field(default_factory=dict)
    running: set[int] = field(default_factory=set)
    watchers: set[asyncio.Queue[Event]] = field(default_factory=set)

    @property
    def id(self) -> str:
        """The tournament id."""
        return self.row.tournament_id

    @property
    def done(self) -> bool:
        """Finished or cancelled."""
        return self.row.status in ("finished", "cancelled")

    def set_of(self, fixture: int) -> list[Fixture]:
        """The fixtures of the duplicate set ``fixture`` belongs to (itself alone outside)."""
        number = self.schedule[fixture].duplicate_set
        if not number:
            return [self.schedule[fixture]]
        return [f for f in self.schedule if f.duplicate_set == number]

    def set_ended(self, fixture: int) -> bool:
        """Every match of the fixture's set has ended (of a cancelled tournament: every
        match that was created)."""
        members = self.set_of(fixture)
        if self.row.status == "cancelled":
            return all(f.number in self.results or f.number not in self.matches for f in members)
        return all(f.number in self.results for f in members)

    def publish(self, event: Event) -> None:
        """Send an event to every watcher."""
        for queue in self.watchers:
            queue.put_nowait(event)


def _derive(key: bytes, label: str) -> bytes:
    return hmac.new(key, f"speeltafel/v1/tournament/{label}".encode(), hashlib.sha256).digest()


class Director:
    """Every tournament of one server process (see the module docstring)."""

    def __init__(self, runtime: MatchRuntime, store: TournamentStore, lobby: Lobby) -> None:
        self.runtime = runtime
        self.store = store
        self.lobby = lobby
        self.tournaments: dict[str, Tournament] = {}
        self._by_match: dict[str, tuple[Tournament, int]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        lobby.on_ready = self._wake.set
        runtime.finish_listeners.append(self._match_ended)
        runtime.seal = self.sealed

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Load bots and tournaments, take up where the store left off, start scheduling.

        Call after the runtime has recovered its matches and before clients connect."""
        await self.lobby.load()
        for row in await self.store.tournaments():
            tournament = self._remember(row)
            for fixture in await self.store.fixtures(row.tournament_id):
                self._index(tournament, fixture.fixture, fixture.match_id)
            for result in await self.store.results(row.tournament_id):
                tournament.results[result.fixture] = result
            if tournament.done:
                continue
            for number, match_id in sorted(tournament.matches.items()):
                if number not in tournament.results:
                    await self._resume_fixture(tournament, number, match_id)
            await self._check_end(tournament)
        self._task = asyncio.get_running_loop().create_task(self._schedule_loop())
        self._wake.set()

    async def close(self) -> None:
        """Stop scheduling (matches go on in the runtime until it closes)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for tournament in self.tournaments.values():
            for queue in tournament.watchers:
                queue.put_nowait(Event("closed"))
        # Detached from the runtime: in a cluster, a process that stops directing goes on
        # serving matches, and the next director (maybe in this process) attaches its own.
        with contextlib.suppress(ValueError):
            self.runtime.finish_listeners.remove(self._match_ended)
        if self.runtime.seal == self.sealed:
            self.runtime.seal = None

    def _remember(self, row: TournamentRow) -> Tournament:
        fixtures = formats.schedule(
            Format(row.format), row.participants, row.seats, row.rounds, row.max_matches
        )
        tournament = Tournament(row, fixtures)
        self.tournaments[row.tournament_id] = tournament
        return tournament

    def _index(self, tournament: Tournament, fixture: int, match_id: str) -> None:
        tournament.matches[fixture] = match_id
        self._by_match[match_id] = (tournament, fixture)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ organiser calls

    async def create(self, spec: TournamentSpec) -> tuple[Tournament, bool]:
        """A new tournament (or the one this request id made before: duplicate=True)."""
        row = self._checked_row(spec)
        stored = await self.store.create_tournament(row)
        if stored.tournament_id != row.tournament_id:
            same = _definition(stored) == _definition(row) and stored.seed == row.seed
            if not same:
                raise RequestIdReused(
                    "this request_id already created a tournament with other parameters",
                    "request_id_reused",
                )
            return self.tournaments[stored.tournament_id], True
        tournament = self._remember(stored)
        log.info(
            "tournament_created",
            tournament_id=row.tournament_id,
            game=row.game,
            format=row.format,
            matches=len(tournament.schedule),
            seeded=bool(row.seed),
        )
        self._wake.set()
        return tournament, False

    def _checked_row(self, spec: TournamentSpec) -> TournamentRow:
        if len(spec.request_id) > self.runtime.config.max_request_id_length:
            raise BadRequest("request_id is longer than 64 characters", "request_id")
        name = clean_name(spec.name, self.runtime.config.max_name_length)
        if not spec.game:
            raise BadRequest("game is required", "game")
        game = self.runtime.game(spec.game)
        options = dict(spec.options)
        if spec.format is Format.DUPLICATE and any(
            o.name == formats.SHUFFLE_OPTION for o in game.info.options
        ):
            options[formats.SHUFFLE_OPTION] = "true"
        canonical = game.info.canonical_options(options)
        low, high = game.info.seats_for(canonical)
        seats = spec.seats or low
        if not low <= seats <= high:
            raise InvalidOptions(f"{spec.game} takes {low} to {high} seats", "seats")
        game.new(canonical, seats, Rng(b"validation"), {})  # the engine has the last word
        participants: list[str] = []
        for given in spec.participants:
            credential = self.lobby.known(given)
            if credential is None:
                raise BadRequest(
                    "every participant must be a bot with a token (IssueBotToken)",
                    "unknown_participant",
                )
            if credential.name in participants:
                raise BadRequest("a participant is listed twice", "participant_twice")
            participants.append(credential.name)
        if len(participants) < seats:
            raise BadRequest(
                f"{len(participants)} participants cannot fill {seats} seats", "participants"
            )
        rounds = spec.rounds or 1
        if rounds > MAX_ROUNDS:
            raise BadRequest(f"rounds must be at most {MAX_ROUNDS}", "rounds")
        size = formats.schedule_size(spec.format, len(participants), seats, rounds)
        if min(size, spec.max_matches or size) > MAX_FIXTURES:
            raise BadRequest(
                f"the schedule has {size} matches; at most {MAX_FIXTURES} (set max_matches)",
                "too_many_matches",
            )
        config = self.runtime.config
        clock = spec.move_clock_ms or config.default_move_clock_ms
        if not config.min_move_clock_ms <= clock <= config.max_move_clock_ms:
            raise BadRequest(
                f"move_clock_ms must be {config.min_move_clock_ms}..{config.max_move_clock_ms}",
                "move_clock_ms",
            )
        if spec.time_bank_ms > MAX_TIME_BANK_MS:
            raise BadRequest(f"time_bank_ms must be at most {MAX_TIME_BANK_MS}", "time_bank_ms")
        if len(spec.seed) > MAX_SEED_BYTES:
            raise BadRequest(f"seed is over {MAX_SEED_BYTES} bytes", "seed")
        if spec.forfeit not in ("autoplay", "lose"):
            raise BadRequest("forfeit must be autoplay or lose", "forfeit")
        try:
            formats.schedule(spec.format, participants, seats, rounds, spec.max_matches)
        except ValueError as exc:
            raise BadRequest(str(exc), "max_matches") from None
        return TournamentRow(
            tournament_id=secrets.token_hex(8),
            request_id=spec.request_id,
            name=name,
            game=spec.game,
            options=tuple(sorted(canonical.items())),
            format=spec.format.value,
            participants=tuple(participants),
            seats=seats,
            rounds=rounds,
            max_matches=spec.max_matches,
            move_clock_ms=clock,
            time_bank_ms=spec.time_bank_ms,
            max_misses=spec.max_misses,
            forfeit=spec.forfeit,
            seed=bytes(spec.seed),
            secret=secrets.token_bytes(32),
            created_ms=self.runtime.clock.now_ms(),
        )

    async def cancel(self, tournament_id: str) -> Tournament:
        """Schedule no more matches; running ones play to their end."""
        tournament = self.get(tournament_id)
        if not tournament.done:
            await self._set_status(tournament, "cancelled")
            log.info("tournament_cancelled", tournament_id=tournament_id)
            tournament.publish(Event("progress"))
            await self._check_end(tournament)
        return tournament

    def get(self, tournament_id: str) -> Tournament:
        """A tournament by id, or TournamentNotFound."""
        if not tournament_id:
            raise BadRequest("tournament_id is required", "tournament_id")
        found = self.tournaments.get(tournament_id)
        if found is None:
            raise TournamentNotFound(f"no tournament {tournament_id[:40]!r}")
        return found

    def visible_results(self, tournament: Tournament) -> list[FixtureResult]:
        """Results whose duplicate set has ended, by fixture number."""
        return [
            tournament.results[n] for n in sorted(tournament.results) if tournament.set_ended(n)
        ]

    def standings(self, tournament: Tournament) -> Standings:
        """The standings from every visible result, rated in fixture order."""
        results = [
            MatchResult(
                fixture=r.fixture,
                lineup=tournament.schedule[r.fixture].lineup,
                scores=r.scores,
                ranks=r.ranks,
                utilities=r.utilities,
                misses=r.misses,
                rejected=r.rejected,
                forfeited=r.forfeited,
                rated=r.rated,
            )
            for r in self.visible_results(tournament)
        ]
        lower = self.runtime.game(tournament.row.game).info.lower_is_better
        return compute_standings(results, tournament.row.participants, lower)

    async def watch(self, tournament_id: str) -> AsyncIterator[Event]:
        """Progress first, then started and finished matches, and the standings at the end.

        A watcher that comes late first gets what it missed: a "finished" event for every
        result already visible and a "started" event for every match running, in fixture
        order, so it never needs a second call to know where the tournament stands."""
        tournament = self.get(tournament_id)
        queue: asyncio.Queue[Event] = asyncio.Queue()
        tournament.watchers.add(queue)
        # Taken with the queue in place and no await between: nothing missed, nothing twice.
        missed = [
            Event("finished", tournament.schedule[r.fixture], r.match_id, r)
            for r in self.visible_results(tournament)
        ] + [
            Event("started", tournament.schedule[n], tournament.matches[n])
            for n in sorted(tournament.running)
        ]
        try:
            yield Event("progress")
            for event in missed:
                yield event
            if tournament.done and not tournament.running:
                yield Event("standings")
                return
            while True:
                event = await queue.get()
                if event.kind == "closed":
                    return
                yield event
                if event.kind == "standings":
                    return
        finally:
            tournament.watchers.discard(queue)

    # ------------------------------------------------------------------ sealing

    def sealed(self, match: Match) -> bool:
        """Whether ``match`` belongs to a duplicate set that has not ended."""
        found = self._by_match.get(match.id)
        if found is None:
            return False
        tournament, fixture = found
        return bool(tournament.schedule[fixture].duplicate_set) and not tournament.set_ended(
            fixture
        )

    # ------------------------------------------------------------------ scheduling

    async def _schedule_loop(self) -> None:
        while not self._closing:
            await self._wake.wait()
            self._wake.clear()
            for tournament in list(self.tournaments.values()):
                if tournament.done:
                    continue
                try:
                    await self._schedule(tournament)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    # A store or runtime fault: try again a little later.
                    log.exception("schedule_failed", tournament_id=tournament.id)
                    loop = asyncio.get_running_loop()
                    loop.call_later(1.0, self._wake.set)

    async def _schedule(self, tournament: Tournament) -> None:
        row = tournament.row
        for fixture in tournament.schedule:
            if self._closing or tournament.done:
                return
            if fixture.number in tournament.matches:
                continue
            if not all(self.lobby.has_room(name, row.game) for name in fixture.lineup):
                continue
            await self._start_fixture(tournament, fixture)

    def _request_id(self, tournament: Tournament, label: str) -> str:
        """A request id only this tournament's key can make (it recovers seat tokens)."""
        return "t" + _derive(tournament.row.secret, label).hex()[:40]

    def _seed(self, tournament: Tournament, fixture: Fixture) -> bytes:
        key = tournament.row.seed or tournament.row.secret
        if fixture.duplicate_set:
            return _derive(key, f"set:{fixture.duplicate_set}")
        return _derive(key, f"match:{fixture.number}")

    def _deal(self, tournament: Tournament, fixture: Fixture) -> str:
        root = (
            "derives from the organiser's tournament seed"
            if tournament.row.seed
            else "derives from the server's secret key of the tournament"
        )
        if fixture.duplicate_set:
            size = len(tournament.set_of(fixture.number))
            return (
                f"duplicate set {fixture.duplicate_set} of tournament {tournament.id}: its "
                f"{size} matches share this seed and shuffle key (the set's entropy is seat "
                f"0's); the seed {root} (HMAC-SHA256 of "
                f"'speeltafel/v1/tournament/set:{fixture.duplicate_set}')"
            )
        return (
            f"fixture {fixture.number} of tournament {tournament.id}: the seed {root} "
            f"(HMAC-SHA256 of 'speeltafel/v1/tournament/match:{fixture.number}')"
        )

    async def _set_entropy(self, tournament: Tournament, fixture: Fixture) -> bytes:
        """The entropy of a duplicate set: what an earlier match of the set joined with, or
        SHA-256 over the lineup's registered entropies (empty when none gave any)."""
        for member in tournament.set_of(fixture.number):
            match_id = tournament.matches.get(member.number)
            if match_id is not None and member.number != fixture.number:
                match = await self.runtime.get(match_id)
                if 0 in match.joined:
                    return match.joined[0].entropy
        given = []
        for name in sorted(fixture.lineup):
            registration = self.lobby.ready(name)
            given.append(registration.entropy if registration is not None else b"")
        if not any(given):
            return b""
        digest = hashlib.sha256(b"speeltafel/v1/set-entropy")
        for entropy in given:
            digest.update(len(entropy).to_bytes(4, "big") + entropy)
        return digest.digest()

    async def _start_fixture(self, tournament: Tournament, fixture: Fixture) -> None:
        row = tournament.row
        if row.status == "waiting":
            await self._set_status(tournament, "running")
        created = await self.runtime.create_match(
            row.game,
            row.seats,
            dict(row.options),
            row.move_clock_ms,
            request_id=self._request_id(tournament, f"create:{fixture.number}"),
            seed=self._seed(tournament, fixture),
            time_bank_ms=row.time_bank_ms,
            max_misses=row.max_misses,
            forfeit=row.forfeit,
            deal=self._deal(tournament, fixture),
        )
        match_id = created.match.id
        await self.store.put_fixture(FixtureMatch(tournament.id, fixture.number, match_id))
        # Seated before it counts as started here: when a join fails, the next round of
        # scheduling does it all again (the same match, the same seats and tokens).
        await self._seat(tournament, fixture, match_id, resumed=False)
        self._index(tournament, fixture.number, match_id)
        tournament.running.add(fixture.number)
        log.info(
            "fixture_started",
            tournament_id=tournament.id,
            fixture=fixture.number,
            match_id=match_id,
        )
        tournament.publish(Event("started", fixture, match_id))
        tournament.publish(Event("progress"))

    async def _seat(
        self, tournament: Tournament, fixture: Fixture, match_id: str, resumed: bool
    ) -> None:
        """Join every seat (again: the same tokens) and give each bot its seat."""
        row = tournament.row
        match = await self.runtime.get(match_id)
        set_entropy = b""
        if fixture.duplicate_set and 0 not in match.joined:
            set_entropy = await self._set_entropy(tournament, fixture)
        for seat, name in enumerate(fixture.lineup):
            if seat in match.joined:
                entropy = match.joined[seat].entropy
            elif fixture.duplicate_set:
                entropy = set_entropy if seat == 0 else b""
            else:
                registration = self.lobby.ready(name)
                entropy = registration.entropy if registration is not None else b""
            joined = await self.runtime.join(
                match_id,
                seat,
                name,
                entropy,
                request_id=self._request_id(tournament, f"join:{fixture.number}:{seat}"),
            )
            assignment = Assignment(
                tournament_id=tournament.id,
                match_id=match_id,
                seat=seat,
                token=joined.token,
                game=row.game,
                options=row.options,
                seats=row.seats,
                move_clock_ms=row.move_clock_ms,
                time_bank_ms=row.time_bank_ms,
                fixture=fixture.number,
            )
            self.lobby.assign(name, assignment, resumed=resumed)

    async def _resume_fixture(self, tournament: Tournament, number: int, match_id: str) -> None:
        """After a restart: a fixture's match that has ended is recorded, one still running
        gets its seats (and tokens) back for its bots."""
        fixture = tournament.schedule[number]
        try:
            match = await self.runtime.get(match_id)
        except AppError:
            log.exception("fixture_lost", tournament_id=tournament.id, fixture=number)
            return
        if match.finished is not None:
            await self._record(tournament, number, match)
            return
        tournament.running.add(number)
        await self._seat(tournament, fixture, match_id, resumed=True)

    # ------------------------------------------------------------------ results

    def _match_ended(self, match: Match) -> None:
        found = self._by_match.get(match.id)
        if found is None or self._closing:
            return
        tournament, number = found
        self._spawn(self._finish(tournament, number, match))

    async def _finish(self, tournament: Tournament, number: int, match: Match) -> None:
        try:
            await self._record(tournament, number, match)
            await self._check_end(tournament)
        except Exception:
            log.exception("result_failed", tournament_id=tournament.id, fixture=number)
        self._wake.set()

    async def _record(self, tournament: Tournament, number: int, match: Match) -> None:
        """Store a fixture's result, free its bots, and tell the watchers."""
        if number in tournament.results:
            return
        result = _result(tournament.id, number, match)
        await self.store.put_result(result)
        tournament.results[number] = result
        tournament.running.discard(number)
        fixture = tournament.schedule[number]
        for seat, name in enumerate(fixture.lineup):
            self.lobby.release(name, match.id, seat)
        log.info(
            "fixture_finished",
            tournament_id=tournament.id,
            fixture=number,
            match_id=match.id,
            termination=result.termination,
        )
        # A set's results are told together, once the whole set has ended.
        if tournament.set_ended(number):
            for member in tournament.set_of(number):
                if member.number in tournament.results:
                    tournament.publish(
                        Event(
                            "finished",
                            member,
                            tournament.matches[member.number],
                            tournament.results[member.number],
                        )
                    )
        tournament.publish(Event("progress"))

    async def _check_end(self, tournament: Tournament) -> None:
        """Finish a tournament whose every fixture has a result (a cancelled one once its
        running matches have ended), and send the final standings."""
        if tournament.running:
            return
        if tournament.row.status in ("waiting", "running"):
            if len(tournament.results) < len(tournament.schedule):
                return
            await self._set_status(tournament, "finished")
            log.info("tournament_finished", tournament_id=tournament.id)
        tournament.publish(Event("progress"))
        tournament.publish(Event("standings"))

    async def _set_status(self, tournament: Tournament, status: str) -> None:
        ended = self.runtime.clock.now_ms() if status in ("finished", "cancelled") else 0
        await self.store.set_tournament_status(tournament.id, status, ended)
        tournament.row = _with_status(tournament.row, status, ended)


def _with_status(row: TournamentRow, status: str, finished_ms: int) -> TournamentRow:
    return replace(row, status=status, finished_ms=finished_ms)


def _definition(row: TournamentRow) -> tuple[Any, ...]:
    """What a repeated CreateTournament must match."""
    return (
        row.name,
        row.game,
        row.options,
        row.format,
        row.participants,
        row.seats,
        row.rounds,
        row.max_matches,
        row.move_clock_ms,
        row.time_bank_ms,
        row.max_misses,
        row.forfeit,
    )


def _result(tournament_id: str, number: int, match: Match) -> FixtureResult:
    """A finished match as a fixture result. A match the rules or a forfeit ended is
    rated; one ended otherwise (abandoned, expired) counts as a draw that is not rated,
    as is a match dealt from preset decks."""
    seats = match.created.seats
    outcome = match.outcome
    termination = match.termination
    if outcome is not None and outcome.ranks:
        scores: Sequence[int] = outcome.scores or (0,) * seats
        ranks: Sequence[int] = outcome.ranks
        utilities: Sequence[float] = outcome.utilities
    else:
        scores, ranks, utilities = (0,) * seats, (1,) * seats, (0.0,) * seats
    return FixtureResult(
        tournament_id=tournament_id,
        fixture=number,
        match_id=match.id,
        scores=tuple(int(s) for s in scores),
        ranks=tuple(int(r) for r in ranks),
        utilities=tuple(float(u) for u in utilities),
        termination=termination,
        misses=tuple(match.misses),
        rejected=tuple(match.rejected),
        forfeited=tuple(match.forfeited),
        rated=termination in RATED_TERMINATIONS and not match.created.presets,
    )
