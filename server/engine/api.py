"""The engine as a library: every game's rules for programs that need no server.

One module, typed, and stable: what is named in ``__all__`` keeps its meaning and
signature across releases, while the engine's internal modules (``core``, ``registry``,
``verify``, the game modules) may change under it. It is pure like the engine (no clock,
no I/O, no global randomness) and imports nothing beyond the standard library, so an
analysis script, a notebook or a training loop can use it without grpc::

    from speeltafel.server.engine import api

    spec = api.list_games()[0]                    # options, seat ranges, score name ...
    match = api.new_match(spec.game_id, seats=spec.min_seats, seed=7)
    while not match.is_over:
        seat = match.to_act[0]
        match = match.apply(seat, match.legal_actions(seat)[0])
    print(match.outcome)                          # scores, ranks, utilities
    assert api.verify(match.record()).ok

Decisions:

* **Actions are their canonical texts** (``"select:17"``, ``"bid:worm:5:2"``): the same
  texts a match record and the protocol's error messages use. They are stable across
  releases (records replay by them), where the engine's action objects are not.
  :meth:`Match.legal_actions` lists them in the engine's stable order.
* **Observations are the engine's frozen observation values**, returned as they are (each
  game's own dataclass, with a ``phase`` and a ``seat``); :func:`plain` turns one into
  JSON-ready dicts and lists for code that wants data, not classes.
* **A match is an immutable value.** :meth:`Match.apply` returns a new match and leaves
  the old one as it was, so search code may branch from any position.
* **Chance comes from the seed.** ``seed`` is the server seed of the match record (bytes,
  or an int: its 32-byte big-endian form, longer for an int that needs more): the deal
  is the one the server would make from that seed (and the seats' ``entropies``), so
  :meth:`Match.record` replays and verifies like a record the server published. Preset
  decks replace the shuffles of the decks they name.
* **Errors are the engine's**: :class:`InvalidOptions` (unknown game, bad option, seat
  count or preset), :class:`InvalidAction` (a text that names no action),
  :class:`NotYourTurn`, :class:`IllegalAction`, :class:`GameOver`; each has a ``rule`` id
  and a ``message``, and a refused call changes nothing.
* **Games come from the registry**: a game added to the engine appears here with no code
  of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from speeltafel.server.engine.codec import to_plain
from speeltafel.server.engine.core import (
    EngineError,
    GameAny,
    GameOver,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    OptionKind,
    Outcome,
    Presets,
    Rng,
    commitment,
    shuffle_key,
)
from speeltafel.server.engine.registry import GAMES, get_game
from speeltafel.server.engine.verify import RecordedMatch
from speeltafel.server.engine.verify import replay as _replay
from speeltafel.server.engine.verify import verify as _verify

__all__ = [
    "Deck",
    "EngineError",
    "GameOver",
    "GameSpec",
    "IllegalAction",
    "InvalidAction",
    "InvalidOptions",
    "Match",
    "NotYourTurn",
    "Option",
    "OptionKind",
    "Outcome",
    "Record",
    "SeatRange",
    "Verification",
    "game",
    "list_games",
    "new_match",
    "plain",
    "replay",
    "verify",
]

Record = RecordedMatch
"""A match record in plain values: game, options, seats, server seed and its commitment,
the seats' entropies, preset orders by deck name, ``(seat, action text)`` pairs in order,
the final state's hash and the termination. The server's published ``MatchRecord``
carries the same fields."""


@dataclass(frozen=True, slots=True)
class Option:
    """One table option of a game. ``kind``: ``int``, ``bool``, ``choice``, ``int_list`` or
    ``choice_list``; values are given as text (ints in decimal, ``true``/``false``, lists
    joined by commas). ``minimum``/``maximum`` bound ints and int-list items; ``choices``
    are the values of a choice; ``min_items``..``max_items`` a list's length; an
    ``automatic`` int takes 0 to mean "chosen from the seat count"."""

    name: str
    kind: OptionKind
    default: str
    description: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    min_items: int = 0
    max_items: int | None = None
    automatic: bool = False


@dataclass(frozen=True, slots=True)
class SeatRange:
    """While option ``option`` is ``value``, the game takes ``min_seats``..``max_seats``."""

    option: str
    value: str
    min_seats: int
    max_seats: int


@dataclass(frozen=True, slots=True)
class Deck:
    """A named deck of a game (preset orders name it)."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class GameSpec:
    """What a game is: id, name, rules version, seats, options, decks and its score.

    ``min_seats``..``max_seats`` is the range over every choice of options; ``seat_ranges``
    narrow it under particular option values (:meth:`seats_for` applies them).
    ``simultaneous``: the game has sealed simultaneous choices (several seats in
    ``Match.to_act``). ``score_name`` says what ``Outcome.scores`` count
    (Take 5: ``"heads"``); ``lower_is_better`` whether the lowest score wins."""

    game_id: str
    name: str
    rules_version: int
    description: str
    min_seats: int
    max_seats: int
    seat_ranges: tuple[SeatRange, ...]
    options: tuple[Option, ...]
    decks: tuple[Deck, ...]
    simultaneous: bool
    score_name: str
    lower_is_better: bool

    def seats_for(self, options: Mapping[str, str] | None = None) -> tuple[int, int]:
        """The (min, max) seats a match with these options takes; InvalidOptions for a bad
        option."""
        return get_game(self.game_id).info.seats_for(dict(options or {}))

    def canonical_options(self, options: Mapping[str, str] | None = None) -> dict[str, str]:
        """Every option as canonical text, defaults filled in (what a record stores);
        InvalidOptions for an unknown option or a bad value."""
        return get_game(self.game_id).info.canonical_options(dict(options or {}))


def _spec(engine_game: GameAny) -> GameSpec:
    info = engine_game.info
    return GameSpec(
        game_id=info.game_id,
        name=info.name,
        rules_version=info.rules_version,
        description=info.description,
        min_seats=info.min_seats,
        max_seats=info.max_seats,
        seat_ranges=tuple(
            SeatRange(r.option, r.value, r.min_seats, r.max_seats) for r in info.seat_ranges
        ),
        options=tuple(
            Option(
                name=o.name,
                kind=o.kind,
                default=o.default,
                description=o.description,
                choices=o.choices,
                minimum=o.minimum,
                maximum=o.maximum,
                min_items=o.min_items,
                max_items=o.max_items,
                automatic=o.automatic,
            )
            for o in info.options
        ),
        decks=tuple(Deck(d.name, d.description) for d in info.decks),
        simultaneous=info.simultaneous,
        score_name=info.score_name,
        lower_is_better=info.lower_is_better,
    )


def list_games() -> tuple[GameSpec, ...]:
    """Every game of the engine, in the registry's order."""
    return tuple(_spec(g) for g in GAMES.values())


def game(game_id: str) -> GameSpec:
    """The game with this id; InvalidOptions (rule ``unknown_game``) naming the known ones."""
    return _spec(get_game(game_id))


@dataclass(frozen=True, slots=True)
class Verification:
    """Whether a record verifies, and every problem found (empty when ``ok``)."""

    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _seed_bytes(seed: int | bytes) -> bytes:
    if isinstance(seed, bool) or not isinstance(seed, int | bytes):
        raise TypeError("seed must be an int or bytes")
    if isinstance(seed, bytes):
        return seed
    if seed < 0:
        raise ValueError("seed must not be negative")
    return seed.to_bytes(max(32, (seed.bit_length() + 7) // 8), "big")


@dataclass(frozen=True, slots=True)
class Match:
    """One match as an immutable value: a position and (unless sampled) how it was reached.

    Build one with :func:`new_match` or :func:`replay`; every method leaves it unchanged.
    """

    game_id: str
    seats: int
    options: Mapping[str, str]
    """Every option as canonical text, defaults filled in."""
    _game: GameAny = field(repr=False, compare=False)
    _state: Any = field(repr=False, compare=False)
    _origin: Record | None = field(repr=False, compare=False)
    history: tuple[tuple[int, str], ...] = ()
    """``(seat, action text)`` of every action since the start; empty for a sampled world."""

    @property
    def spec(self) -> GameSpec:
        """The game being played."""
        return _spec(self._game)

    @property
    def to_act(self) -> tuple[int, ...]:
        """The seats that must act now, ascending; () once the match is over. Several seats
        mean sealed simultaneous choices: each acts without seeing the others' choice."""
        return tuple(self._game.to_act(self._state))

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self._game.outcome(self._state) is not None

    @property
    def outcome(self) -> Outcome | None:
        """Scores, ranks and zero-sum utilities per seat; None while the match runs."""
        return self._game.outcome(self._state)

    def legal_actions(self, seat: int) -> tuple[str, ...]:
        """Every legal action of ``seat`` as text, in the engine's stable order; () when the
        seat need not act now."""
        self._check_seat(seat)
        game = self._game
        return tuple(game.action_text(a) for a in game.legal_actions(self._state, seat))

    def default_action(self, seat: int) -> str:
        """The move the server plays for ``seat`` when its clock runs out."""
        self._check_seat(seat)
        return self._game.action_text(self._game.default_action(self._state, seat))

    def apply(self, seat: int, action: str) -> Match:
        """The match after ``seat`` plays ``action`` (one of :meth:`legal_actions`).

        InvalidAction for a text that names no action, NotYourTurn, IllegalAction or
        GameOver otherwise; this match is unchanged either way."""
        self._check_seat(seat)
        state = self._game.apply(self._state, seat, self._game.parse_action(action))
        history = (*self.history, (seat, action)) if self._origin is not None else ()
        return Match(
            self.game_id, self.seats, self.options, self._game, state, self._origin, history
        )

    def observe(self, seat: int | None) -> Any:
        """What ``seat`` may know now (``None``: a spectator, public information only): the
        game's frozen observation value. It never shows another seat's hidden cards or a
        sealed choice before its reveal. :func:`plain` makes it JSON-ready."""
        if seat is not None:
            self._check_seat(seat)
        return self._game.observe(self._state, seat)

    def sample_world(self, seat: int, seed: int | bytes) -> Match:
        """A match consistent with everything ``seat`` knows now, the rest (hidden cards,
        future chance) drawn from ``seed``: what search bots plan on. The sampled world has
        no history or record (it was never played)."""
        self._check_seat(seat)
        observation = self._game.observe(self._state, seat)
        state = self._game.sample_world(observation, Rng(_seed_bytes(seed)))
        return Match(self.game_id, self.seats, self.options, self._game, state, None, ())

    def state_hash(self) -> str:
        """Hex SHA-256 of the canonical state: equal positions, equal hashes (a record's
        ``final_hash`` is this of its last position)."""
        return hashlib.sha256(self._game.encode(self._state)).hexdigest()

    def record(self) -> Record:
        """The match's record, as the server would publish it at this point (termination
        ``normal``); ValueError for a sampled world, which has none."""
        if self._origin is None:
            raise ValueError("a sampled world has no record: it was never played")
        origin = self._origin
        return RecordedMatch(
            game=origin.game,
            options=origin.options,
            seats=origin.seats,
            server_seed=origin.server_seed,
            commitment=origin.commitment,
            entropies=origin.entropies,
            presets=origin.presets,
            actions=self.history,
            final_hash=self.state_hash(),
        )

    def _check_seat(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise InvalidAction(f"seat must be 0..{self.seats - 1}", rule="bad_seat")


def new_match(
    game_id: str,
    seats: int,
    *,
    options: Mapping[str, str] | None = None,
    seed: int | bytes = 0,
    entropies: Sequence[bytes] = (),
    presets: Presets = (),
) -> Match:
    """A new match, dealt. ``options`` by name as text (absent ones take their default);
    ``seed`` and ``entropies`` make the deal (see the module docstring); ``presets``: deck
    orders (card texts, top first) by deck name, used before any shuffle of that deck (a
    plain sequence of orders means the game's first deck). InvalidOptions for an unknown
    game, option, value or seat count, or a preset that is not an order of its deck."""
    engine_game = get_game(game_id)
    canonical = engine_game.info.canonical_options(dict(options or {}))
    server_seed = _seed_bytes(seed)
    given = tuple(bytes(entropy) for entropy in entropies)
    key = shuffle_key(server_seed, given)
    state = engine_game.new(canonical, seats, Rng(key), presets)
    origin = RecordedMatch(
        game=game_id,
        options=canonical,
        seats=seats,
        server_seed=server_seed,
        commitment=commitment(server_seed),
        entropies=given,
        presets=presets,
        actions=(),
        final_hash="",
    )
    return Match(game_id, seats, canonical, engine_game, state, origin, ())


def replay(record: Record) -> Match:
    """The match a record describes, every action re-validated (an EngineError names the
    first one that is not legal)."""
    engine_game = get_game(record.game)
    state = _replay(record, engine_game)
    canonical = engine_game.info.canonical_options(dict(record.options))
    return Match(
        record.game,
        record.seats,
        canonical,
        engine_game,
        state,
        record,
        tuple((int(seat), str(text)) for seat, text in record.actions),
    )


def verify(record: Record) -> Verification:
    """Check a finished match's record: the seed matches its commitment, every action was
    legal, the actions finish the match (or it was abandoned), and the final state hashes
    to the published value."""
    try:
        return Verification(tuple(_verify(record)))
    except EngineError as exc:  # an unknown game or bad options in the record
        return Verification((f"the record does not set up a match: {exc.message}",))


def plain(value: Any) -> Any:
    """An engine value (an observation, an outcome) as JSON-ready dicts, lists, strings
    and numbers: dataclasses by field name, enums by value, bytes as hex."""
    return to_plain(value)
