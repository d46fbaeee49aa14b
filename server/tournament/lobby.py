"""The lobby: bot tokens, the one connection of each bot, and the seats pushed down it.

**Bot tokens.** The organiser issues a token per bot name (:meth:`Lobby.issue`); the store
keeps only its SHA-256. A token is looked up by its hash (a dictionary keyed by digests
never compares secret bytes directly) and the stored digest is then compared with
``hmac.compare_digest``, so timing tells nothing about a token. Issuing again for a name
replaces its token: the old one stops working at once, and a bot connected with it is cut
off.

**Connections.** A bot has at most one live :class:`BotConnection`. A second Connect with
the same token replaces the first: the old connection is told (:data:`REPLACED`) and its
stream ends with ABORTED. A connection is *ready* once the bot has registered (the games it
plays, how many matches at once, its entropy); registering again changes what it offers.

**Seats.** The director gives a bot its seats through :meth:`Lobby.assign`; they stay in
:attr:`Lobby.active` until their match ends (:meth:`Lobby.release`), and a bot that
connects again gets every one of them once more, marked ``resumed``. A bot's load is the
number of its active seats, whichever tournament they belong to; the director seats a bot
only while its load is below its ``max_concurrent``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from speeltafel.server.app.errors import AppError, BadRequest, Unauthenticated
from speeltafel.server.app.runtime import clean_name
from speeltafel.server.store.base import BotCredential, TournamentStore

MAX_CONCURRENT = 16
"""The most matches at once the lobby grants one bot, whatever it asks for."""
MAX_BOT_NAME = 64
MAX_ENTROPY_BYTES = 64
MAX_CLIENT_CHARS = 200
MAX_GAMES = 64


class Replaced(AppError):
    """The bot connected again: this (older) connection ends."""

    code = "aborted"
    default_rule = "connection_replaced"


@dataclass(frozen=True, slots=True)
class Assignment:
    """A seat given to a bot (the proto's ``SeatAssignment``)."""

    tournament_id: str
    match_id: str
    seat: int
    token: str = field(repr=False)
    game: str
    options: tuple[tuple[str, str], ...]
    seats: int
    move_clock_ms: int
    time_bank_ms: int
    fixture: int
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class Registration:
    """What a bot offers: the games it plays (those the server has), matches at once, its
    entropy and a free text about its client."""

    games: frozenset[str]
    max_concurrent: int
    entropy: bytes
    client: str


REPLACED = object()
"""Queued on a connection that a newer one of the same bot replaced."""


class BotConnection:
    """One bot's open lobby stream: what it registered, and its queue of outgoing items
    (:class:`Assignment` values, or :data:`REPLACED`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.registration: Registration | None = None
        self.closed = False
        self._queue: asyncio.Queue[object] = asyncio.Queue()

    @property
    def ready(self) -> bool:
        """Registered and still open."""
        return self.registration is not None and not self.closed

    def push(self, item: object) -> None:
        """Queue an assignment (or :data:`REPLACED`) for the stream."""
        if not self.closed:
            self._queue.put_nowait(item)

    async def next(self) -> object:
        """The next item for the stream, waiting for one."""
        return await self._queue.get()


def token_digest(token: str) -> bytes:
    """What the store keeps of a bot token: its SHA-256."""
    return hashlib.sha256(token.encode()).digest()


class Lobby:
    """Bot tokens, connections and active seats (one event loop)."""

    def __init__(self, store: TournamentStore, games: Callable[[], Iterable[str]]) -> None:
        self.store = store
        self._games = games
        self._by_digest: dict[bytes, BotCredential] = {}
        self._by_name: dict[str, BotCredential] = {}  # folded name -> credential
        self.connections: dict[str, BotConnection] = {}  # folded name -> live connection
        self.active: dict[str, dict[str, Assignment]] = {}  # folded name -> match id -> seat
        self.on_ready: Callable[[], None] = lambda: None
        """Called whenever a bot registers (the director looks for seats to fill)."""

    async def load(self) -> None:
        """Read the issued tokens from the store (at start)."""
        for credential in await self.store.bots():
            self._remember(credential)

    def _remember(self, credential: BotCredential) -> None:
        folded = credential.name.casefold()
        old = self._by_name.get(folded)
        if old is not None:
            self._by_digest.pop(old.token_hash, None)
        self._by_name[folded] = credential
        self._by_digest[credential.token_hash] = credential

    def known(self, name: str) -> BotCredential | None:
        """The credential of a bot name (case-insensitive), or None."""
        return self._by_name.get(name.casefold())

    async def issue(self, name: str, now_ms: int) -> tuple[str, str]:
        """A new token for ``name`` (the old one, if any, stops working): (name, token)."""
        name = clean_name(name, MAX_BOT_NAME)
        if not name:
            raise BadRequest("bot_name is required (1-64 printable characters)", "bot_name")
        previous = self.known(name)
        if previous is not None:
            name = previous.name  # the name keeps the spelling it was first issued with
        token = secrets.token_urlsafe(32)
        credential = BotCredential(name, token_digest(token), now_ms)
        await self.store.put_bot(credential)  # durable before the token is shown
        self._remember(credential)
        connection = self.connections.pop(name.casefold(), None)
        if connection is not None:  # connected with the revoked token: cut off
            connection.push(REPLACED)
            connection.closed = True
        return name, token

    def authenticate(self, token: str) -> str:
        """The bot name of a bot token, or Unauthenticated."""
        digest = token_digest(token) if token else b""
        found = self._by_digest.get(digest)
        if found is None or not hmac.compare_digest(found.token_hash, digest):
            raise Unauthenticated("unknown or revoked bot token", "bad_bot_token")
        return found.name

    # ------------------------------------------------------------------ connections

    def connect(self, name: str) -> BotConnection:
        """A new connection of ``name``, replacing (and ending) the one it had."""
        folded = name.casefold()
        old = self.connections.get(folded)
        if old is not None:
            old.push(REPLACED)
            old.closed = True
        connection = BotConnection(name)
        self.connections[folded] = connection
        return connection

    def register(
        self,
        connection: BotConnection,
        games: Iterable[str],
        max_concurrent: int,
        entropy: bytes,
        client: str,
    ) -> Registration:
        """Record what the bot offers (games the server has, the concurrency granted); the
        first registration of a connection then gets the bot's running seats again."""
        games = list(games)
        if len(games) > MAX_GAMES:
            raise BadRequest(f"more than {MAX_GAMES} games", "games")
        if len(entropy) > MAX_ENTROPY_BYTES:
            raise BadRequest(f"entropy is over {MAX_ENTROPY_BYTES} bytes", "entropy")
        if len(client) > MAX_CLIENT_CHARS:
            raise BadRequest(f"client is longer than {MAX_CLIENT_CHARS} characters", "client")
        offered = set(self._games())
        registration = Registration(
            games=frozenset(g for g in games if g in offered),
            max_concurrent=min(MAX_CONCURRENT, max(1, max_concurrent)),
            entropy=bytes(entropy),
            client=client,
        )
        first = connection.registration is None
        connection.registration = registration
        if first:
            for assignment in self.active.get(connection.name.casefold(), {}).values():
                connection.push(replace(assignment, resumed=True))
        self.on_ready()
        return registration

    def disconnect(self, connection: BotConnection) -> None:
        """The stream of ``connection`` ended."""
        connection.closed = True
        folded = connection.name.casefold()
        if self.connections.get(folded) is connection:
            del self.connections[folded]

    # ------------------------------------------------------------------ seats

    def ready(self, name: str) -> Registration | None:
        """What a connected, registered bot offers; None when it is not connected."""
        connection = self.connections.get(name.casefold())
        return connection.registration if connection is not None and connection.ready else None

    def load_of(self, name: str) -> int:
        """How many seats the bot plays now."""
        return len(self.active.get(name.casefold(), {}))

    def has_room(self, name: str, game: str, seats: int = 1) -> bool:
        """Whether the bot is connected, plays ``game`` and can take ``seats`` more seats."""
        registration = self.ready(name)
        return (
            registration is not None
            and game in registration.games
            and self.load_of(name) + seats <= registration.max_concurrent
        )

    def assign(self, name: str, assignment: Assignment, resumed: bool = False) -> None:
        """Give the bot a seat: remembered until its match ends, and pushed to the bot now
        when it is connected and registered."""
        self.active.setdefault(name.casefold(), {})[assignment.match_id + f"/{assignment.seat}"] = (
            assignment
        )
        connection = self.connections.get(name.casefold())
        if connection is not None and connection.ready:
            connection.push(replace(assignment, resumed=resumed))

    def release(self, name: str, match_id: str, seat: int) -> None:
        """The seat's match has ended."""
        seats = self.active.get(name.casefold())
        if seats is not None:
            seats.pop(f"{match_id}/{seat}", None)
