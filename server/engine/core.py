"""The game interface every rules module implements, its errors, and the deterministic RNG.

The engine is pure: it imports nothing but the standard library, never reads a clock and
never touches the global ``random``. All chance comes from an :class:`Rng` value carried
inside the game state, so ``(seed, actions)`` always reproduces a match exactly.

Deterministic generator (documented so that anyone can recompute a deal):

* block ``i`` (``i = 0, 1, 2, ...``) is ``HMAC-SHA256(key, i as 8 bytes big-endian)``;
* every draw takes one fresh block and reads its first 8 bytes as an unsigned big-endian
  integer ``x`` (64 bits);
* ``below(n)`` rejects ``x >= 2**64 - (2**64 % n)`` and draws again, then returns
  ``x % n``, so every result is exactly equally likely;
* ``shuffle`` is Fisher-Yates from the top: for ``i = n-1 .. 1``, ``j = below(i+1)``,
  swap items ``i`` and ``j``.

Preset decks: a match may be created from given deck orders (analysis, puzzles, exact
tests). A :class:`Dealer` hands those out in order, one per deal, before it shuffles with
its ``Rng``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NewType, Protocol, TypeVar, runtime_checkable

Seat = NewType("Seat", int)

_TWO_64 = 1 << 64
T = TypeVar("T")


# --------------------------------------------------------------------------- errors


class EngineError(Exception):
    """Base of every error the engine raises on purpose.

    ``rule`` is a short stable identifier (``"not_in_hand"``) that clients can match on;
    the message is English for people. Neither ever names a card the acting seat may not
    know.
    """

    default_rule = "engine_error"

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule or self.default_rule


class InvalidAction(EngineError):
    """The action is malformed: wrong kind for this game, out-of-range value, bad text."""

    default_rule = "invalid_action"


class IllegalAction(EngineError):
    """The action is well formed but the rules do not allow it now."""

    default_rule = "illegal_action"


class NotYourTurn(EngineError):
    """The seat is not among the seats that must act now."""

    default_rule = "not_your_turn"


class GameOver(EngineError):
    """The game has ended; no action is accepted."""

    default_rule = "game_over"


class InvalidOptions(EngineError):
    """Unknown option, bad option value, or a seat count the game does not allow."""

    default_rule = "invalid_options"


# --------------------------------------------------------------------------- chance


@dataclass(frozen=True, slots=True)
class Rng:
    """An immutable HMAC-SHA256 counter-mode generator (see the module docstring).

    Every method returns its result together with the advanced generator, so a state
    that holds an ``Rng`` stays a value.
    """

    key: bytes
    counter: int = 0

    def _block(self, index: int) -> int:
        digest = hmac.new(self.key, index.to_bytes(8, "big"), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big")

    def below(self, n: int) -> tuple[int, Rng]:
        """A uniform integer in ``[0, n)`` and the advanced generator."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        limit = _TWO_64 - (_TWO_64 % n)
        counter = self.counter
        while True:
            x = self._block(counter)
            counter += 1
            if x < limit:
                return x % n, Rng(self.key, counter)

    def shuffle(self, items: Sequence[T]) -> tuple[tuple[T, ...], Rng]:
        """A uniformly shuffled copy of ``items`` (Fisher-Yates) and the advanced generator."""
        out = list(items)
        rng = self
        for i in range(len(out) - 1, 0, -1):
            j, rng = rng.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return tuple(out), rng

    def derive(self, label: str) -> Rng:
        """An independent generator for a named purpose (e.g. a bot's determinization)."""
        return Rng(hmac.new(self.key, label.encode(), hashlib.sha256).digest(), 0)


def shuffle_key(server_seed: bytes, entropies: Sequence[bytes]) -> bytes:
    """The key of a match's shuffle generator: HMAC of the server seed with the seats' entropy.

    ``HMAC-SHA256(server_seed, "speeltafel/v1/shuffle" || for each seat in seat order:
    4-byte big-endian length || entropy)``. Seats that gave no entropy contribute length 0.
    """
    message = bytearray(b"speeltafel/v1/shuffle")
    for entropy in entropies:
        message += len(entropy).to_bytes(4, "big") + entropy
    return hmac.new(server_seed, bytes(message), hashlib.sha256).digest()


def commitment(server_seed: bytes) -> str:
    """The public commitment to a server seed: hex SHA-256."""
    return hashlib.sha256(server_seed).hexdigest()


@dataclass(frozen=True, slots=True)
class Dealer:
    """Where each deal's deck order comes from: preset orders first, then the ``Rng``.

    Deck orders are card texts, top card first, so one dealer serves every game.
    """

    rng: Rng
    presets: tuple[tuple[str, ...], ...] = ()
    deals_made: int = 0

    def deal(self, deck: Sequence[str]) -> tuple[tuple[str, ...], Dealer]:
        """The next deck order (a preset one while any is left) and the advanced dealer."""
        if self.deals_made < len(self.presets):
            order = self.presets[self.deals_made]
            return order, Dealer(self.rng, self.presets, self.deals_made + 1)
        order, rng = self.rng.shuffle(deck)
        return order, Dealer(rng, self.presets, self.deals_made + 1)

    @staticmethod
    def checked(rng: Rng, presets: Sequence[Sequence[str]], deck: Sequence[str]) -> Dealer:
        """A dealer whose presets are each verified to be an order of exactly ``deck``."""
        expected = sorted(deck)
        for number, order in enumerate(presets, start=1):
            if sorted(order) != expected:
                raise InvalidOptions(
                    f"preset deck {number} is not an order of the game's {len(deck)} cards"
                )
        return Dealer(rng, tuple(tuple(order) for order in presets))


# --------------------------------------------------------------------------- description


class OptionKind(StrEnum):
    """The type of one table option."""

    INT = "int"
    BOOL = "bool"
    CHOICE = "choice"


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One table option: name, type, default, allowed values and what it means."""

    name: str
    kind: OptionKind
    default: str
    description: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def parse(self, text: str) -> int | bool | str:
        """The typed value of ``text``, or :class:`InvalidOptions` naming the option."""
        if self.kind is OptionKind.INT:
            try:
                value = int(text)
            except ValueError:
                raise InvalidOptions(
                    f"option {self.name}: {clip(text)} is not an integer"
                ) from None
            if self.minimum is not None and value < self.minimum:
                raise InvalidOptions(f"option {self.name}: {value} is below {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise InvalidOptions(f"option {self.name}: {value} is above {self.maximum}")
            return value
        if self.kind is OptionKind.BOOL:
            if text in ("true", "false"):
                return text == "true"
            raise InvalidOptions(f"option {self.name}: {clip(text)} is not true or false")
        if text not in self.choices:
            allowed = ", ".join(self.choices)
            raise InvalidOptions(f"option {self.name}: {clip(text)} is not one of {allowed}")
        return text


def clip(text: str, limit: int = 32) -> str:
    """``text`` quoted for an error message and cut to ``limit`` characters: an error never
    repeats unbounded client input."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


@dataclass(frozen=True, slots=True)
class SeatRange:
    """The seats a game takes while option ``option`` has the value ``value``."""

    option: str
    value: str
    min_seats: int
    max_seats: int


@dataclass(frozen=True, slots=True)
class GameInfo:
    """The declarative description of a game that generic tests and ListGames rely on."""

    game_id: str
    name: str
    rules_version: int
    min_seats: int
    max_seats: int
    options: tuple[OptionSpec, ...]
    simultaneous: bool
    description: str
    seat_ranges: tuple[SeatRange, ...] = ()
    """Narrower seat ranges under particular option values (``min_seats``..``max_seats``
    is the range over every choice of options)."""

    def seats_for(self, given: Mapping[str, str]) -> tuple[int, int]:
        """The (min, max) seats that ``new`` accepts with these options."""
        options = self.canonical_options(given)
        low, high = self.min_seats, self.max_seats
        for seat_range in self.seat_ranges:
            if options.get(seat_range.option) == seat_range.value:
                low, high = max(low, seat_range.min_seats), min(high, seat_range.max_seats)
        return low, high

    def resolve_options(self, given: Mapping[str, str]) -> dict[str, int | bool | str]:
        """Every option typed, defaults filled in; unknown names are an error, never ignored."""
        known = {spec.name: spec for spec in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(clip(name) for name in unknown[:4])
            more = f" and {len(unknown) - 4} more" if len(unknown) > 4 else ""
            raise InvalidOptions(f"unknown option(s) for {self.game_id}: {names}{more}")
        return {name: spec.parse(given.get(name, spec.default)) for name, spec in known.items()}

    def canonical_options(self, given: Mapping[str, str]) -> dict[str, str]:
        """Every option as canonical text, defaults filled in (what a match record stores)."""
        return {
            name: ("true" if value else "false") if isinstance(value, bool) else str(value)
            for name, value in self.resolve_options(given).items()
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game as a value.

    ``scores`` are the game's own points per seat (what the rules count), ``ranks`` are
    1 for the best seat with ties sharing a rank, and ``utilities`` are zero-sum values in
    [-1, 1]: (seats beaten - seats that beat you) / (seats - 1).
    """

    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    utilities: tuple[float, ...]
    termination: str = "normal"

    @staticmethod
    def from_scores(scores: Sequence[int], lower_is_better: bool) -> Outcome:
        """Ranks and utilities from per-seat scores; equal scores share a rank."""
        n = len(scores)
        sign = 1 if lower_is_better else -1
        keyed = [sign * s for s in scores]
        ranks = tuple(1 + sum(1 for other in keyed if other < mine) for mine in keyed)
        if n == 1:
            utilities: tuple[float, ...] = (0.0,)
        else:
            utilities = tuple(
                (sum(1 for o in keyed if o > mine) - sum(1 for o in keyed if o < mine)) / (n - 1)
                for mine in keyed
            )
        return Outcome(tuple(scores), ranks, utilities)


# --------------------------------------------------------------------------- interface

S = TypeVar("S")
A = TypeVar("A")
O_co = TypeVar("O_co", covariant=True)  # the observation type: only ever returned


@runtime_checkable
class Game(Protocol[S, A, O_co]):
    """The interface of one game's rules. Every game module exports one ``GAME``.

    ``apply`` is the only mutator: it validates, and on an illegal action raises and leaves
    the given state unchanged (states are immutable values, so it cannot change them).
    """

    info: GameInfo

    def new(
        self,
        options: Mapping[str, str],
        seats: int,
        rng: Rng,
        presets: Sequence[Sequence[str]] = (),
    ) -> S:
        """Set up and deal. ``presets`` are deck orders (card texts), one per deal."""
        ...

    def to_act(self, state: S) -> tuple[int, ...]:
        """The seats that must act now; several for a sealed simultaneous choice; () at the end."""
        ...

    def legal_actions(self, state: S, seat: int) -> tuple[A, ...]:
        """Every legal action of ``seat`` in a stable order; () when it need not act."""
        ...

    def apply(self, state: S, seat: int, action: A) -> S:
        """The state after ``seat`` plays ``action``; raises an :class:`EngineError` if illegal."""
        ...

    def default_action(self, state: S, seat: int) -> A:
        """The documented move the server plays for ``seat`` when its clock runs out."""
        ...

    def observe(self, state: S, seat: int | None) -> O_co:
        """What ``seat`` may know (``None``: a spectator, public information only)."""
        ...

    def determinize(self, state: S, seat: int, rng: Rng) -> S:
        """A full state consistent with all ``seat`` knows, its hidden cards dealt anew."""
        ...

    def outcome(self, state: S) -> Outcome | None:
        """Final scores, ranks and utilities; ``None`` while the game runs."""
        ...

    def action_text(self, action: A) -> str:
        """The canonical text of an action (``"select:17"``); round-trips with parse_action."""
        ...

    def parse_action(self, text: str) -> A:
        """The action a text names; :class:`InvalidAction` if it names none."""
        ...

    def encode(self, state: S) -> bytes:
        """Canonical, versioned serialisation of a state."""
        ...

    def decode(self, data: bytes) -> S:
        """The state ``encode`` wrote."""
        ...

    def deck(self, state: S) -> tuple[str, ...]:
        """Every card of the game's deck (texts, sorted); the conservation law's total."""
        ...

    def zones(self, state: S) -> Mapping[str, tuple[str, ...]]:
        """Where every card is now (zone name to card texts); together exactly the deck."""
        ...

    def max_actions(self, state: S) -> int:
        """An upper bound on the number of actions of a whole game from its initial state."""
        ...


GameAny = Game[Any, Any, Any]
