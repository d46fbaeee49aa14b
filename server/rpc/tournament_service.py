"""The LobbyService and TournamentService servicers: proto in, director and lobby, proto out.

:func:`add_tournament_services` puts both on a server beside the match service (under the
same interceptors, so the lobby stream counts against the stream limits of its peer and
its bot token like a Play stream) and returns a :class:`TournamentServices` handle whose
:meth:`~TournamentServices.start` (after the runtime has recovered its matches) loads the
tournaments and starts the director, and :meth:`~TournamentServices.close` stops it.

Organiser calls need ``authorization: Bearer <organiser token>``, compared in constant
time; a server always has one (``speeltafel serve`` generates one when none is given and
writes it beside the database, see :func:`organiser_token_file`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import math
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

import grpc

from speeltafel.sdk.v1 import tournament_pb2, tournament_pb2_grpc
from speeltafel.server.app.errors import BadRequest, Refused, Unauthenticated
from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.rpc.errors import abort, after_first_message, bearer_token
from speeltafel.server.rpc.service import _record
from speeltafel.server.store.base import FixtureResult, TournamentStore
from speeltafel.server.tournament.director import (
    Director,
    Event,
    Tournament,
    TournamentSpec,
)
from speeltafel.server.tournament.formats import Format
from speeltafel.server.tournament.lobby import REPLACED, Assignment, Lobby, Replaced
from speeltafel.server.tournament.results import Standings

Context: TypeAlias = Any  # grpc's servicer context is untyped at this one seam
T = TypeVar("T")

FORMATS = {
    tournament_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN: Format.ROUND_ROBIN,
    tournament_pb2.TOURNAMENT_FORMAT_GAUNTLET: Format.GAUNTLET,
    tournament_pb2.TOURNAMENT_FORMAT_DUPLICATE: Format.DUPLICATE,
}
FORMAT_NUMBERS = {value: key for key, value in FORMATS.items()}
FORFEITS = {
    tournament_pb2.FORFEIT_POLICY_UNSPECIFIED: "autoplay",
    tournament_pb2.FORFEIT_POLICY_AUTOPLAY: "autoplay",
    tournament_pb2.FORFEIT_POLICY_LOSE: "lose",
}
FORFEIT_NUMBERS = {"autoplay": tournament_pb2.FORFEIT_POLICY_AUTOPLAY, "lose": 2}
STATUSES = {
    "waiting": tournament_pb2.TOURNAMENT_STATUS_WAITING,
    "running": tournament_pb2.TOURNAMENT_STATUS_RUNNING,
    "finished": tournament_pb2.TOURNAMENT_STATUS_FINISHED,
    "cancelled": tournament_pb2.TOURNAMENT_STATUS_CANCELLED,
}
MAX_PARTICIPANTS = 256
MAX_OPTIONS = 16
MAX_OPTION_CHARS = 64
LOBBY_SERVICE = tournament_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
TOURNAMENT_SERVICE = tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name


def organiser_token_file(db: str | os.PathLike[str]) -> Path:
    """Where ``speeltafel serve`` writes a generated organiser token: ``<db>.organiser-token``."""
    return Path(f"{os.fspath(db)}.organiser-token")


def write_organiser_token(path: Path) -> str:
    """The organiser token kept in ``path``: the one written there before (a restarted
    server keeps its token, so tools that read it go on working), else a new one written
    there, readable by its owner only."""
    with contextlib.suppress(FileNotFoundError):
        kept = path.read_text().strip()
        if kept:
            return kept
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(token + "\n")
    return token


# --------------------------------------------------------------------------- conversions


def tournament_to_proto(tournament: Tournament) -> tournament_pb2.Tournament:
    """The proto's Tournament (counts as of now)."""
    row = tournament.row
    return tournament_pb2.Tournament(
        tournament_id=row.tournament_id,
        name=row.name,
        game=row.game,
        options=dict(row.options),
        format=FORMAT_NUMBERS[Format(row.format)],
        participants=list(row.participants),
        seats=row.seats,
        clock=tournament_pb2.ClockPolicy(
            move_clock_ms=row.move_clock_ms,
            time_bank_ms=row.time_bank_ms,
            max_misses=row.max_misses,
            forfeit=FORFEIT_NUMBERS.get(row.forfeit, 0),  # type: ignore[arg-type]
        ),
        status=STATUSES[row.status],
        matches_total=len(tournament.schedule),
        matches_finished=len(tournament.results),
        matches_running=len(tournament.running),
        created_unix_ms=row.created_ms,
        finished_unix_ms=row.finished_ms,
        seeded=bool(row.seed),
    )


def match_to_proto(
    tournament: Tournament, fixture: int, match_id: str, result: FixtureResult | None
) -> tournament_pb2.TournamentMatch:
    """The proto's TournamentMatch of one fixture (with its outcome when ``result``)."""
    scheduled = tournament.schedule[fixture]
    message = tournament_pb2.TournamentMatch(
        fixture=fixture,
        match_id=match_id,
        lineup=list(scheduled.lineup),
        duplicate_set=scheduled.duplicate_set,
    )
    if result is not None:
        message.outcome.scores.extend(result.scores)
        message.outcome.ranks.extend(result.ranks)
        message.outcome.utilities.extend(result.utilities)
        message.outcome.termination = result.termination
        message.misses.extend(result.misses)
        message.rejected.extend(result.rejected)
    return message


def _finite(value: float) -> float:
    """NaN (an interval of fewer than two matches) travels as 0: proto readers in other
    languages print NaN badly, and a zero half-width with one match says the same."""
    return 0.0 if math.isnan(value) else value


def standings_to_proto(
    tournament: Tournament, standings: Standings, score_name: str
) -> tournament_pb2.Standings:
    """The proto's Standings."""
    return tournament_pb2.Standings(
        tournament_id=tournament.id,
        game=tournament.row.game,
        score_name=score_name,
        lower_is_better=standings.lower_is_better,
        matches_counted=standings.matches_counted,
        rows=[
            tournament_pb2.Standing(
                place=row.place,
                participant=row.participant,
                matches=row.matches,
                rating=row.rating,
                mu=row.mu,
                sigma=row.sigma,
                mean_utility=_finite(row.mean_utility),
                utility_ci95=_finite(row.utility_ci95),
                mean_score=_finite(row.mean_score),
                misses=row.misses,
                rejected=row.rejected,
                forfeits=row.forfeits,
            )
            for row in standings.rows
        ],
        crosstable=[
            tournament_pb2.Pairing(
                participant=pair.participant,
                opponent=pair.opponent,
                matches=pair.matches,
                mean_utility=_finite(pair.mean_utility),
                utility_ci95=_finite(pair.utility_ci95),
            )
            for pair in standings.crosstable
        ],
    )


def assignment_to_proto(assignment: Assignment) -> tournament_pb2.SeatAssignment:
    """The proto's SeatAssignment."""
    return tournament_pb2.SeatAssignment(
        tournament_id=assignment.tournament_id,
        match_id=assignment.match_id,
        seat=assignment.seat,
        token=assignment.token,
        game=assignment.game,
        options=dict(assignment.options),
        seats=assignment.seats,
        move_clock_ms=assignment.move_clock_ms,
        time_bank_ms=assignment.time_bank_ms,
        fixture=assignment.fixture,
        resumed=assignment.resumed,
    )


# --------------------------------------------------------------------------- servicers


class LobbyService(tournament_pb2_grpc.LobbyServiceServicer):
    """One Connect stream per bot: Register, then seat assignments pushed.

    In a cluster, a process that does not direct relays the stream to the one that does
    (see :class:`TournamentServices`)."""

    def __init__(self, services: TournamentServices) -> None:
        self.services = services

    @property
    def lobby(self) -> Lobby:
        """The lobby of the director this process runs now."""
        return self.services.lobby

    async def Connect(
        self, request_iterator: AsyncIterator[tournament_pb2.ConnectRequest], context: Context
    ) -> AsyncIterator[tournament_pb2.ConnectResponse]:
        stub = await self.services.relay(context, tournament_pb2_grpc.LobbyServiceStub)
        if stub is not None:
            async for response in _relay_both(stub.Connect, request_iterator, context):
                yield response
            return
        try:
            name = self.lobby.authenticate(bearer_token(context.invocation_metadata()))
        except Unauthenticated:
            # Refused after the client's register is in: a refusal that overtakes the
            # client's write in flight reaches a grpc Python client as INTERNAL.
            await after_first_message(request_iterator)
            raise
        first = await anext(aiter(request_iterator), None)
        if first is None:
            return
        if first.WhichOneof("kind") != "register":
            raise BadRequest("the first message of Connect must be register", "register_first")
        connection = self.lobby.connect(name)
        try:
            registration = self._register(connection, first.register)
            yield tournament_pb2.ConnectResponse(
                registered=tournament_pb2.Registered(
                    bot_name=name,
                    max_concurrent=registration.max_concurrent,
                    games=sorted(registration.games),
                )
            )
            reader = asyncio.ensure_future(self._read(request_iterator, connection))
            try:
                while True:
                    item = await connection.next()
                    if item is _GONE:
                        await abort(
                            context,
                            grpc.StatusCode.UNAVAILABLE,
                            "this server process stopped directing tournaments: reconnect",
                            "director_moved",
                        )
                    if item is REPLACED:
                        raise Replaced(
                            "this bot connected again (or its token was issued anew): this"
                            " stream ends",
                        )
                    if isinstance(item, Assignment):
                        yield tournament_pb2.ConnectResponse(assignment=assignment_to_proto(item))
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader
        finally:
            self.lobby.disconnect(connection)

    def _register(self, connection: Any, register: tournament_pb2.Register) -> Any:
        return self.lobby.register(
            connection,
            list(register.games),
            register.max_concurrent,
            register.entropy,
            register.client,
        )

    async def _read(
        self, requests: AsyncIterator[tournament_pb2.ConnectRequest], connection: Any
    ) -> None:
        """Later Register messages change what the bot offers; anything else is ignored
        (a stream whose reading fails just stops reading: the assignments go on)."""
        with contextlib.suppress(Exception):
            async for request in requests:
                if request.WhichOneof("kind") == "register":
                    with contextlib.suppress(BadRequest):
                        self._register(connection, request.register)


class TournamentService(tournament_pb2_grpc.TournamentServiceServicer):
    """Bot tokens, tournaments, their progress, standings and records."""

    def __init__(self, services: TournamentServices) -> None:
        self.services = services
        self.runtime: MatchRuntime = services.runtime
        self._organiser = services.organiser_token.encode()

    @property
    def director(self) -> Director:
        """The director this process runs now."""
        return self.services.director

    async def _remote(self, context: Context) -> Any:
        """The director's TournamentService when another process directs, else None."""
        return await self.services.relay(context, tournament_pb2_grpc.TournamentServiceStub)

    def _organiser_only(self, context: Context) -> None:
        token = bearer_token(context.invocation_metadata()).encode()
        if not self._organiser or not hmac.compare_digest(token, self._organiser):
            raise Unauthenticated(
                "this call needs the organiser's token", "organiser_token_required"
            )

    async def IssueBotToken(
        self, request: tournament_pb2.IssueBotTokenRequest, context: Context
    ) -> tournament_pb2.IssueBotTokenResponse:
        if (remote := await self._remote(context)) is not None:
            return await _relay(
                remote.IssueBotToken, request, context, tournament_pb2.IssueBotTokenResponse
            )
        self._organiser_only(context)
        name, token = await self.director.lobby.issue(request.bot_name, self.runtime.clock.now_ms())
        return tournament_pb2.IssueBotTokenResponse(bot_name=name, token=token)

    async def CreateTournament(
        self, request: tournament_pb2.CreateTournamentRequest, context: Context
    ) -> tournament_pb2.CreateTournamentResponse:
        if (remote := await self._remote(context)) is not None:
            return await _relay(
                remote.CreateTournament, request, context, tournament_pb2.CreateTournamentResponse
            )
        self._organiser_only(context)
        if request.format not in FORMATS:
            raise BadRequest("format is required (round robin, gauntlet or duplicate)", "format")
        if request.clock.forfeit not in FORFEITS:
            raise BadRequest("unknown forfeit policy", "forfeit")
        if len(request.participants) > MAX_PARTICIPANTS:
            raise BadRequest(f"more than {MAX_PARTICIPANTS} participants", "participants")
        if len(request.options) > MAX_OPTIONS or any(
            len(k) > MAX_OPTION_CHARS or len(v) > MAX_OPTION_CHARS
            for k, v in request.options.items()
        ):
            raise BadRequest(
                f"at most {MAX_OPTIONS} options of {MAX_OPTION_CHARS} characters", "options"
            )
        if len(request.game) > MAX_OPTION_CHARS:
            raise BadRequest("game is too long", "game")
        spec = TournamentSpec(
            name=request.name,
            game=request.game,
            options=dict(request.options),
            format=FORMATS[request.format],
            participants=tuple(p[: MAX_OPTION_CHARS + 1] for p in request.participants),
            seats=request.seats,
            rounds=request.rounds,
            max_matches=request.max_matches,
            move_clock_ms=request.clock.move_clock_ms,
            time_bank_ms=request.clock.time_bank_ms,
            max_misses=request.clock.max_misses,
            forfeit=FORFEITS[request.clock.forfeit],
            seed=request.seed,
            request_id=request.request_id,
        )
        tournament, duplicate = await self.director.create(spec)
        return tournament_pb2.CreateTournamentResponse(
            tournament=tournament_to_proto(tournament), duplicate=duplicate
        )

    async def CancelTournament(
        self, request: tournament_pb2.CancelTournamentRequest, context: Context
    ) -> tournament_pb2.CancelTournamentResponse:
        if (remote := await self._remote(context)) is not None:
            return await _relay(
                remote.CancelTournament, request, context, tournament_pb2.CancelTournamentResponse
            )
        self._organiser_only(context)
        tournament = await self.director.cancel(request.tournament_id)
        return tournament_pb2.CancelTournamentResponse(tournament=tournament_to_proto(tournament))

    async def ListTournaments(
        self, request: tournament_pb2.ListTournamentsRequest, context: Context
    ) -> tournament_pb2.ListTournamentsResponse:
        if (remote := await self._remote(context)) is not None:
            return await _relay(
                remote.ListTournaments, request, context, tournament_pb2.ListTournamentsResponse
            )
        return tournament_pb2.ListTournamentsResponse(
            tournaments=[tournament_to_proto(t) for t in self.director.tournaments.values()]
        )

    async def GetTournament(
        self, request: tournament_pb2.GetTournamentRequest, context: Context
    ) -> tournament_pb2.GetTournamentResponse:
        if (remote := await self._remote(context)) is not None:
            return await _relay(
                remote.GetTournament, request, context, tournament_pb2.GetTournamentResponse
            )
        tournament = self.director.get(request.tournament_id)
        return tournament_pb2.GetTournamentResponse(tournament=tournament_to_proto(tournament))

    def _standings(self, tournament: Tournament) -> tournament_pb2.Standings:
        info = self.runtime.game(tournament.row.game).info
        return standings_to_proto(tournament, self.director.standings(tournament), info.score_name)

    async def GetStandings(
        self, request: tournament_pb2.GetStandingsRequest, context: Context
    ) -> tournament_pb2.GetStandingsResponse:
        if (remote := await self._remote(context)) is not None:
            return await _relay(
                remote.GetStandings, request, context, tournament_pb2.GetStandingsResponse
            )
        tournament = self.director.get(request.tournament_id)
        return tournament_pb2.GetStandingsResponse(standings=self._standings(tournament))

    async def WatchTournament(
        self, request: tournament_pb2.WatchTournamentRequest, context: Context
    ) -> AsyncIterator[tournament_pb2.WatchTournamentResponse]:
        if (remote := await self._remote(context)) is not None:
            async for item in _relay_stream(
                remote.WatchTournament(request, metadata=_passed(context)), context
            ):
                yield item
            return
        tournament = self.director.get(request.tournament_id)
        async for event in self.director.watch(request.tournament_id):
            yield self._event(tournament, event)

    def _event(
        self, tournament: Tournament, event: Event
    ) -> tournament_pb2.WatchTournamentResponse:
        response = tournament_pb2.WatchTournamentResponse
        if event.kind == "standings":
            return response(standings=self._standings(tournament))
        if event.kind in ("started", "finished") and event.fixture is not None:
            match = match_to_proto(tournament, event.fixture.number, event.match_id, event.result)
            if event.kind == "started":
                return response(match_started=match)
            return response(match_finished=match)
        return response(progress=tournament_to_proto(tournament))

    async def ExportRecords(
        self, request: tournament_pb2.ExportRecordsRequest, context: Context
    ) -> AsyncIterator[tournament_pb2.ExportRecordsResponse]:
        if (remote := await self._remote(context)) is not None:
            async for item in _relay_stream(
                remote.ExportRecords(request, metadata=_passed(context)), context
            ):
                yield item
            return
        tournament = self.director.get(request.tournament_id)
        if tournament.results and not self.director.visible_results(tournament):
            raise Refused(
                "no duplicate set of this tournament has ended yet: its records are sealed",
                "record_sealed",
            )
        for result in self.director.visible_results(tournament):
            match = await self.runtime.get(result.match_id)
            if match.finished is None or match.termination == "expired":
                continue
            yield tournament_pb2.ExportRecordsResponse(
                record=_record(match),
                fixture=result.fixture,
                lineup=list(tournament.schedule[result.fixture].lineup),
            )


# --------------------------------------------------------------------------- wiring


class TournamentServices:
    """The lobby, the director and their two services on one server.

    **One process** runs its director from :meth:`start` to :meth:`close`.

    **A cluster** (several processes on one PostgreSQL store, ``elected=True``): exactly one
    process directs at a time, the one holding the director's advisory lock
    (``speeltafel.server.app.cluster``), which calls :meth:`lead` when it wins the lock and
    :meth:`follow` when it loses it. Every other process relays the tournament and lobby
    calls that reach it to the director's process (``relay``: its address read from the
    store), unchanged, metadata and statuses included. Why relay rather than share the
    lobby through the store: the director's state (who is connected, who has room, the
    seats given) stays in the one process that decides with it, the code that decides is
    the code a single server runs, and lobby traffic is a few messages per match, while
    the matches themselves (the load) are served by whichever process the proxy routes
    their ``x-match-id`` to. A bot's Connect stream through a relay breaks when the
    director's process dies; the bot reconnects (the SDK does, with backoff), reaches the
    new director and gets its running seats back, marked resumed.

    A following process seals every match of a duplicate set until its tournament is over
    (it does not know when a set ends; the director does): a record asked of it early is
    refused, never leaked. Records come out of ExportRecords, which the director answers.
    """

    def __init__(
        self,
        runtime: MatchRuntime,
        store: TournamentStore,
        organiser_token: str,
        *,
        elected: bool = False,
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.organiser_token = organiser_token
        self.elected = elected
        self.lobby = self._new_lobby()
        self.director = Director(runtime, store, self.lobby)
        self.directing = not elected
        """Whether this process directs now (always, outside a cluster)."""
        self.remote: Callable[[], Awaitable[grpc.aio.Channel | None]] | None = None
        """Set by the cluster: a channel to the directing process (None: nobody known)."""
        self._ended: set[str] = set()  # tournaments known over (a follower's seal)
        if elected:
            self._detach(self.director)

    def _new_lobby(self) -> Lobby:
        runtime = self.runtime
        return Lobby(self.store, lambda: [g.info.game_id for g in runtime.games()])

    def _detach(self, director: Director) -> None:
        with contextlib.suppress(ValueError):
            self.runtime.finish_listeners.remove(director._match_ended)
        self.runtime.seal = self._follower_seal

    async def start(self) -> None:
        """Load tournaments and bots, then direct (after the runtime has recovered); in a
        cluster the election decides instead."""
        if not self.elected:
            await self.director.start()

    async def lead(self) -> None:
        """This process won the director's lock: a fresh lobby and director take up where
        the store left off."""
        self.lobby = self._new_lobby()
        self.director = Director(self.runtime, self.store, self.lobby)
        await self.director.start()
        self.directing = True

    async def follow(self) -> None:
        """This process lost (or never had) the lock: stop directing, relay instead. Its
        bots' streams end (UNAVAILABLE) and reconnect to the director."""
        was = self.directing
        self.directing = False
        if was:
            await self.director.close()
            for connection in list(self.lobby.connections.values()):
                connection.push(_GONE)
        self.runtime.seal = self._follower_seal

    async def learn_ended(self) -> None:
        """Read which tournaments are over (a follower unseals their records)."""
        self._ended = {
            t.tournament_id
            for t in await self.store.tournaments()
            if t.status in ("finished", "cancelled")
        }

    def _follower_seal(self, match: Match) -> bool:
        deal = match.created.deal
        if not deal.startswith("duplicate set "):
            return False
        _, _, rest = deal.partition(" of tournament ")
        tournament_id = rest.split(":", 1)[0]
        return tournament_id not in self._ended

    async def relay(self, context: Context, stub: Callable[[grpc.aio.Channel], T]) -> T | None:
        """A stub on the directing process, or None when this process directs.

        UNAVAILABLE (retry) while no process directs: between a director's death and the
        next one's election, about a second."""
        if self.directing or self.remote is None:
            return None
        channel = await self.remote()
        if channel is None:
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                "no server process directs the tournaments right now: retry in a moment",
                "no_director",
            )
            raise AssertionError("unreachable: abort raises")
        return stub(channel)

    async def close(self) -> None:
        """Stop directing (before the runtime closes)."""
        if self.directing or not self.elected:
            await self.director.close()
        self.directing = False


_GONE = object()
"""Queued on a lobby connection when its process stops directing: the stream ends."""


def _passed(context: Context) -> tuple[tuple[str, str], ...]:
    """The caller's metadata a relayed call carries: its token and routing keys."""
    return tuple(
        (key, value)
        for key, value in context.invocation_metadata() or ()
        if key == "authorization" or (key.startswith("x-") and isinstance(value, str))
    )


async def _relay(method: Any, request: Any, context: Context, kind: type[T]) -> T:
    """One unary call relayed: the director's answer, or its status (details included)."""
    remaining = context.time_remaining()
    timeout = remaining if remaining is not None and remaining < 3600 else None
    try:
        response = await method(request, metadata=_passed(context), timeout=timeout)
    except grpc.aio.AioRpcError as exc:
        await _relayed_error(exc, context)
        raise  # not reached: the abort raises
    assert isinstance(response, kind)
    return response


async def _relay_stream(call: Any, context: Context) -> AsyncIterator[Any]:
    """A server stream relayed, its end status included."""
    try:
        async for item in call:
            yield item
    except grpc.aio.AioRpcError as exc:
        await _relayed_error(exc, context)
    finally:
        call.cancel()


async def _relayed_error(exc: grpc.aio.AioRpcError, context: Context) -> None:
    """End a relayed call with the director's status. A status the director did not send
    (its process cannot be reached: it died, and the next one is not elected yet) is
    UNAVAILABLE saying so, never naming an internal address."""
    trailing = tuple(exc.trailing_metadata() or ())
    if not any(key == "grpc-status-details-bin" for key, _ in trailing):
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "the server process that directs the tournaments cannot be reached: retry",
            "no_director",
        )
    await context.abort(exc.code(), exc.details() or "", trailing)


async def _relay_both(
    method: Any, requests: AsyncIterator[Any], context: Context
) -> AsyncIterator[Any]:
    """A bidirectional stream relayed: the caller's messages up, the director's down."""
    call = method(metadata=_passed(context))

    async def up() -> None:
        with contextlib.suppress(Exception):
            async for request in requests:
                await call.write(request)
            await call.done_writing()

    sending = asyncio.ensure_future(up())
    try:
        async for item in _relay_stream(call, context):
            yield item
    finally:
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sending


def add_tournament_services(
    embedded: Any,
    runtime: MatchRuntime,
    store: Any,
    organiser_token: str = "",
    *,
    elected: bool = False,
) -> TournamentServices:
    """Add the LobbyService and TournamentService to an embedded speeltafel (its
    ``add_service``: the same interceptors and serving gate as the match service).
    ``store`` must also be a :class:`TournamentStore`; without ``organiser_token`` a random
    one is made (read it from the handle). ``elected``: a cluster process, which directs
    only while it holds the director's lock (see :class:`TournamentServices`)."""
    services = TournamentServices(
        runtime, store, organiser_token or secrets.token_urlsafe(32), elected=elected
    )
    embedded.add_service(
        tournament_pb2_grpc.add_LobbyServiceServicer_to_server, LobbyService(services)
    )
    embedded.add_service(
        tournament_pb2_grpc.add_TournamentServiceServicer_to_server, TournamentService(services)
    )
    return services
