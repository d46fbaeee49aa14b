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

Named decks and presets: a game declares its decks by name (``GameInfo.decks``; Take 5
has one, ``"pack"``). A match may be created from given deck orders (analysis, puzzles,
exact tests): ``presets`` maps a deck name to a sequence of orders, card texts top card
first, each an order of that deck's complete contents. Every time the game puts a deck in
a random order (the shuffle before a deal, a reshuffle of a discard pile, a gather and
cut), it takes that deck's next unused preset; when none is left it draws from the
match's ``Rng``. A preset replaces the whole randomising step and is the resulting order:
for a gather-and-cut game it is the order after the cut. A step that orders only part of
a deck (a reshuffle of the discard pile) takes the cards of the preset that are in that
part, in the preset's order (:func:`restrict`). A plain sequence of orders instead of a
mapping means the game's first deck (the form every caller used before decks had names).
:class:`Decks` implements this for any number of decks; :class:`Dealer` is its one-deck
form that Take 5's encoded state holds.

The rest of the contract every game keeps is written where it applies: observations and
legality at :class:`Game`, the runtime's obligations at :meth:`Game.to_act`, finite games
at :meth:`Game.max_actions`, hidden information at :meth:`Game.sample_world`, options at
:class:`OptionSpec`, ranks and tie-breaks at :meth:`Outcome.from_keys`.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import struct
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NewType, Protocol, TypeAlias, TypeVar, cast, runtime_checkable

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


_PADS: dict[bytes, tuple[Any, Any]] = {}
_PADS_KEPT = 4096  # keys whose pads are kept (one per live match); cleared when full


def _plain_sha256() -> Callable[[bytes], Any]:
    """CPython's own SHA-256 (``_sha2``, before 3.12 ``_sha256``), else ``hashlib``'s.

    The same digests; but copying an OpenSSL 3 hash state, which every block does twice,
    costs more than hashing the block, so the built-in one draws about a third faster.
    """
    for name in ("_sha2", "_sha256"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found = getattr(module, "sha256", None)
        if callable(found):
            return cast(Callable[[bytes], Any], found)
    return hashlib.sha256


_SHA256 = _plain_sha256()


def _pads(key: bytes) -> tuple[Any, Any]:
    """SHA-256 states after HMAC's inner and outer key pads (RFC 2104), once per key.

    ``hmac.new`` redoes this for every block; copying the two prepared states costs about
    a third of that (a deal's shuffle draws one block per card). The bytes are those of
    ``hmac.new(key, message, hashlib.sha256).digest()``, which the core tests pin.
    """
    pads = _PADS.get(key)
    if pads is None:
        padded = (hashlib.sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
        pads = (_SHA256(padded.translate(_IPAD)), _SHA256(padded.translate(_OPAD)))
        if len(_PADS) >= _PADS_KEPT:
            _PADS.clear()
        _PADS[key] = pads
    return pads


_IPAD = bytes(byte ^ 0x36 for byte in range(256))
_OPAD = bytes(byte ^ 0x5C for byte in range(256))


_BLOCK_INDEX = struct.Struct(">Q").pack  # a block's counter: 8 bytes, big-endian
_BLOCK_VALUE = struct.Struct(">Q").unpack_from  # a block's value: its first 8 bytes


def _draw(key: bytes, counter: int, n: int) -> tuple[int, int]:
    """``below(n)`` on the generator ``(key, counter)``: the value and the next counter.

    The hot path of every deal: the pads are looked up inline (a function call per card
    was a tenth of the draw) and the counter and value go through prepared ``struct``
    packers, cheaper than ``int.to_bytes``/``int.from_bytes`` with their arguments.
    """
    pads = _PADS.get(key)
    inner_pad, outer_pad = pads if pads is not None else _pads(key)
    limit = _TWO_64 - (_TWO_64 % n)
    while True:
        inner = inner_pad.copy()
        inner.update(_BLOCK_INDEX(counter))
        outer = outer_pad.copy()
        outer.update(inner.digest())
        (x,) = _BLOCK_VALUE(outer.digest())
        counter += 1
        if x < limit:
            return x % n, counter


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
        value, counter = _draw(self.key, self.counter, n)
        return value, Rng(self.key, counter)

    def shuffle(self, items: Sequence[T]) -> tuple[tuple[T, ...], Rng]:
        """A uniformly shuffled copy of ``items`` (Fisher-Yates) and the advanced generator.

        The draws are exactly those of ``below(i + 1)`` for ``i = n-1 .. 1``; the counter is
        carried in a local instead of through an ``Rng`` per draw (a deal's hot path).
        """
        out = list(items)
        key, counter = self.key, self.counter
        pads = _PADS.get(key)
        inner_pad, outer_pad = pads if pads is not None else _pads(key)
        pack, value = _BLOCK_INDEX, _BLOCK_VALUE
        for i in range(len(out) - 1, 0, -1):
            # _draw(key, counter, i + 1) inline: a deal is one draw per card.
            n = i + 1
            limit = _TWO_64 - (_TWO_64 % n)
            while True:
                inner = inner_pad.copy()
                inner.update(pack(counter))
                outer = outer_pad.copy()
                outer.update(inner.digest())
                (x,) = value(outer.digest())
                counter += 1
                if x < limit:
                    break
            j = x % n
            out[i], out[j] = out[j], out[i]
        return tuple(out), Rng(key, counter)

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


Presets: TypeAlias = Mapping[str, Sequence[Sequence[str]]] | Sequence[Sequence[str]]
"""Preset deck orders: by deck name, or (the older form) a plain sequence for the first deck."""


@dataclass(frozen=True, slots=True)
class DeckSpec:
    """One named deck of a game: its name, what it holds, and when the game orders it."""

    name: str
    description: str


def named_presets(
    decks: Sequence[DeckSpec], presets: Presets
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """``presets`` by deck name; a plain sequence means the first deck; unknown names refused."""
    names = [deck.name for deck in decks]
    if isinstance(presets, Mapping):
        given = {str(name): orders for name, orders in presets.items()}
    else:
        given = {names[0]: presets} if names and presets else {}
        if presets and not names:
            raise InvalidOptions("this game deals no deck, so it takes no preset order")
    unknown = sorted(set(given) - set(names))
    if unknown:
        listed = ", ".join(clip(name) for name in unknown[:4])
        raise InvalidOptions(f"no deck named {listed}; the decks are {', '.join(names)}")
    return {
        name: tuple(tuple(str(card) for card in order) for order in given[name])
        for name in names
        if given.get(name)
    }


def restrict(order: Sequence[str], cards: Sequence[str]) -> tuple[str, ...]:
    """``cards`` (a multiset) in the order they take in ``order``; the rule by which a preset
    of a whole deck orders a reshuffle of part of it. Cards ``order`` lacks go last, sorted."""
    wanted = Counter(cards)
    out = []
    for card in order:
        if wanted[card] > 0:
            wanted[card] -= 1
            out.append(card)
    out.extend(sorted(wanted.elements()))
    return tuple(out)


def _check_orders(name: str, orders: Sequence[Sequence[str]], contents: Sequence[str]) -> None:
    expected = sorted(contents)
    for number, order in enumerate(orders, start=1):
        if sorted(order) != expected:
            raise InvalidOptions(
                f"preset {number} of deck {clip(name)} is not an order of its {len(contents)} cards"
            )


@dataclass(frozen=True, slots=True)
class Decks:
    """Where every random order of a game's named decks comes from (see the module docstring):
    each deck's presets in turn, then the ``Rng``. Other chance (a cut, a first dealer) draws
    from the same ``Rng`` through :meth:`below`, so one value holds all of a match's chance.

    ``names`` are the game's decks in ``GameInfo.decks`` order; ``presets[i]`` and
    ``used[i]`` belong to ``names[i]``.
    """

    rng: Rng
    names: tuple[str, ...]
    presets: tuple[tuple[tuple[str, ...], ...], ...]
    used: tuple[int, ...]

    @staticmethod
    def checked(
        rng: Rng,
        decks: Sequence[DeckSpec],
        presets: Presets,
        contents: Mapping[str, Sequence[str]],
    ) -> Decks:
        """Decks whose presets are each verified to order exactly that deck's ``contents``."""
        by_name = named_presets(decks, presets)
        for name, orders in by_name.items():
            _check_orders(name, orders, contents[name])
        names = tuple(deck.name for deck in decks)
        return Decks(rng, names, tuple(by_name.get(name, ()) for name in names), (0,) * len(names))

    def order(self, name: str, cards: Sequence[str]) -> tuple[tuple[str, ...], Decks]:
        """``cards`` of deck ``name`` in their next order (preset or shuffled), and the
        advanced decks."""
        index = self.names.index(name)
        used = list(self.used)
        used[index] += 1
        if self.used[index] < len(self.presets[index]):
            order = restrict(self.presets[index][self.used[index]], cards)
            return order, Decks(self.rng, self.names, self.presets, tuple(used))
        shuffled, rng = self.rng.shuffle(cards)
        return shuffled, Decks(rng, self.names, self.presets, tuple(used))

    def below(self, n: int) -> tuple[int, Decks]:
        """A uniform integer in ``[0, n)`` for chance that orders no deck."""
        value, rng = self.rng.below(n)
        return value, Decks(rng, self.names, self.presets, self.used)

    def unknown_future(self, rng: Rng) -> Decks:
        """The same decks with the presets dropped and chance from ``rng``: what a sampled
        world knows of the future (nothing)."""
        return Decks(rng, self.names, ((),) * len(self.names), self.used)


# --------------------------------------------------------------------------- description


class OptionKind(StrEnum):
    """The type of one table option."""

    INT = "int"
    BOOL = "bool"
    CHOICE = "choice"
    INT_LIST = "int_list"
    CHOICE_LIST = "choice_list"


OptionValue: TypeAlias = int | bool | str | tuple[int, ...] | tuple[str, ...]
"""An option's typed value: ``int``, ``bool``, ``str`` (a choice) or a tuple (a list)."""


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One table option: name, type, default, allowed values and what it means.

    Text forms (what a match record stores and ``canonical_options`` returns): ints in
    decimal, bools ``true``/``false``, a choice as itself, a list as its items joined by
    commas without spaces (``"6,6,5,5,4,4,3,3"``; ``""`` is the empty list).

    * ``INT``: ``minimum``..``maximum`` bound the value.
    * ``CHOICE``: the value is one of ``choices``.
    * ``INT_LIST``: every item lies in ``minimum``..``maximum``; the list has
      ``min_items``..``max_items`` items (a game distribution, e.g. Karel Kakelaar's worm
      counts or Sneaky Bastard's money values).
    * ``CHOICE_LIST``: every item is one of ``choices``; the same length range.
    * ``automatic`` (``INT`` only): the value ``0`` is allowed besides
      ``minimum``..``maximum`` and means "automatic": ``new`` resolves it from the seat
      count (Beverbende's rounds, Kleurenwiezen's deals) and the description says how.
      A match record keeps the ``0``, so replaying it resolves the same way.
    """

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

    def __post_init__(self) -> None:
        # A malformed spec is a programming error of the game, found at import time.
        if self.automatic and self.kind is not OptionKind.INT:
            raise ValueError(f"option {self.name}: only an int option can be automatic")
        if self.kind in (OptionKind.CHOICE, OptionKind.CHOICE_LIST) and not self.choices:
            raise ValueError(f"option {self.name}: a choice needs choices")
        if self.kind in (OptionKind.INT_LIST, OptionKind.CHOICE_LIST) and self.max_items is None:
            raise ValueError(f"option {self.name}: a list needs max_items")

    def parse(self, text: str) -> OptionValue:
        """The typed value of ``text``, or :class:`InvalidOptions` naming the option."""
        if self.kind is OptionKind.INT:
            try:  # int() as before lists existed: a single int is stored canonically anyway
                value = int(text)
            except ValueError:
                raise InvalidOptions(
                    f"option {self.name}: {clip(text)} is not an integer"
                ) from None
            if not (self.automatic and value == 0):
                self._check_bounds(value)
            return value
        if self.kind is OptionKind.BOOL:
            if text in ("true", "false"):
                return text == "true"
            raise InvalidOptions(f"option {self.name}: {clip(text)} is not true or false")
        if self.kind is OptionKind.CHOICE:
            return self._choice(text)
        items = text.split(",") if text else []
        if self.max_items is not None and len(items) > self.max_items:
            raise InvalidOptions(f"option {self.name}: more than {self.max_items} items")
        if len(items) < self.min_items:
            raise InvalidOptions(f"option {self.name}: fewer than {self.min_items} items")
        if self.kind is OptionKind.INT_LIST:
            numbers = tuple(self._int(item) for item in items)
            for number in numbers:
                self._check_bounds(number)
            return numbers
        return tuple(self._choice(item) for item in items)

    def text(self, value: OptionValue) -> str:
        """The canonical text of a typed value (``parse(text(v)) == v``)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, tuple):
            return ",".join(str(item) for item in value)
        return str(value)

    def _int(self, text: str) -> int:
        # A list item is ASCII digits with an optional minus sign: int() would also take
        # "+1", " 1", "1_0" and other scripts' digits.
        digits = text[1:] if text.startswith("-") else text
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 18):
            raise InvalidOptions(f"option {self.name}: {clip(text)} is not an integer")
        return int(text)

    def _check_bounds(self, value: int) -> None:
        if self.minimum is not None and value < self.minimum:
            raise InvalidOptions(f"option {self.name}: {value} is below {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidOptions(f"option {self.name}: {value} is above {self.maximum}")

    def _choice(self, text: str) -> str:
        if text not in self.choices:
            allowed = ", ".join(self.choices)
            raise InvalidOptions(f"option {self.name}: {clip(text)} is not one of {allowed}")
        return text


def clip(text: str, limit: int = 32) -> str:
    """``text`` quoted for an error message and cut to ``limit`` characters: an error never
    repeats unbounded client input."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


def int_option(values: Mapping[str, OptionValue], name: str) -> int:
    """The value of an ``INT`` option from ``GameInfo.resolve_options``."""
    value = values[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"option {name} is not an int")
    return value


def bool_option(values: Mapping[str, OptionValue], name: str) -> bool:
    """The value of a ``BOOL`` option from ``GameInfo.resolve_options``."""
    value = values[name]
    if not isinstance(value, bool):
        raise TypeError(f"option {name} is not a bool")
    return value


def choice_option(values: Mapping[str, OptionValue], name: str) -> str:
    """The value of a ``CHOICE`` option from ``GameInfo.resolve_options``."""
    value = values[name]
    if not isinstance(value, str):
        raise TypeError(f"option {name} is not a choice")
    return value


def int_list_option(values: Mapping[str, OptionValue], name: str) -> tuple[int, ...]:
    """The value of an ``INT_LIST`` option from ``GameInfo.resolve_options``."""
    value = values[name]
    if not isinstance(value, tuple) or not all(isinstance(item, int) for item in value):
        raise TypeError(f"option {name} is not a list of ints")
    return tuple(int(item) for item in value)


def choice_list_option(values: Mapping[str, OptionValue], name: str) -> tuple[str, ...]:
    """The value of a ``CHOICE_LIST`` option from ``GameInfo.resolve_options``."""
    value = values[name]
    if not isinstance(value, tuple) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"option {name} is not a list of choices")
    return tuple(str(item) for item in value)


@dataclass(frozen=True, slots=True)
class SeatRange:
    """The seats a game takes while option ``option`` has the value ``value``."""

    option: str
    value: str
    min_seats: int
    max_seats: int


_RESOLVED: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[Any, dict[str, OptionValue]]] = {}
_RESOLVED_KEPT = 1024  # distinct (game, options) kept; cleared when full


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
    score_name: str = "points"
    """What ``Outcome.scores`` count, in the game's words (Take 5: ``"heads"``)."""
    lower_is_better: bool = False
    """Whether the lowest score wins (Take 5, Beverbende) rather than the highest."""
    decks: tuple[DeckSpec, ...] = ()
    """The game's named decks, the first being the one a plain preset sequence means."""

    def seats_for(self, given: Mapping[str, str]) -> tuple[int, int]:
        """The (min, max) seats that ``new`` accepts with these options."""
        options = self.canonical_options(given)
        low, high = self.min_seats, self.max_seats
        for seat_range in self.seat_ranges:
            if options.get(seat_range.option) == seat_range.value:
                low, high = max(low, seat_range.min_seats), min(high, seat_range.max_seats)
        return low, high

    def resolve_options(self, given: Mapping[str, str]) -> dict[str, OptionValue]:
        """Every option typed, defaults filled in; unknown names are an error, never ignored.

        Remembered per game and options (a search bot's playouts start thousands of
        matches with the same options; a long list option costs tens of microseconds to
        parse). Only successes are kept, and each caller gets its own copy of the dict.
        """
        try:
            key = (id(self), tuple(sorted(given.items())))
            kept = _RESOLVED.get(key)
        except TypeError:  # values that do not sort or hash: no memo, the parse says why
            return self._resolve_options(given)
        if kept is not None and kept[0] is self:
            return dict(kept[1])
        resolved = self._resolve_options(given)
        if len(_RESOLVED) >= _RESOLVED_KEPT:
            _RESOLVED.clear()
        _RESOLVED[key] = (self, resolved)
        return dict(resolved)

    def _resolve_options(self, given: Mapping[str, str]) -> dict[str, OptionValue]:
        known = {spec.name: spec for spec in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(clip(name) for name in unknown[:4])
            more = f" and {len(unknown) - 4} more" if len(unknown) > 4 else ""
            raise InvalidOptions(f"unknown option(s) for {self.game_id}: {names}{more}")
        return {name: spec.parse(given.get(name, spec.default)) for name, spec in known.items()}

    def canonical_options(self, given: Mapping[str, str]) -> dict[str, str]:
        """Every option as canonical text, defaults filled in (what a match record stores)."""
        specs = {spec.name: spec for spec in self.options}
        return {
            name: specs[name].text(value) for name, value in self.resolve_options(given).items()
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
    def from_keys(
        scores: Sequence[int],
        keys: Sequence[Sequence[int]],
        lower_is_better: bool,
        termination: str = "normal",
    ) -> Outcome:
        """Ranks and utilities from one key per seat, compared as tuples; equal keys share.

        A key is the score followed by the game's tie-breaks, each oriented like the score:
        Karel Kakelaar (highest worms, then fewest cards in hand) ranks by
        ``(worms, -cards_in_hand)``; Sneaky Bastard by ``(houses, money)``. With
        ``lower_is_better`` the smallest key is best. ``scores`` are carried as given.
        """
        n = len(scores)
        if len(keys) != n:
            raise ValueError(f"{len(keys)} keys for {n} scores")
        sign = 1 if lower_is_better else -1
        keyed = [tuple(sign * part for part in key) for key in keys]
        ranks = tuple(1 + sum(1 for other in keyed if other < mine) for mine in keyed)
        if n == 1:
            utilities: tuple[float, ...] = (0.0,)
        else:
            utilities = tuple(
                (sum(1 for o in keyed if o > mine) - sum(1 for o in keyed if o < mine)) / (n - 1)
                for mine in keyed
            )
        return Outcome(tuple(scores), ranks, utilities, termination)

    @staticmethod
    def from_scores(scores: Sequence[int], lower_is_better: bool) -> Outcome:
        """Ranks and utilities from per-seat scores alone; equal scores share a rank."""
        return Outcome.from_keys(scores, [(score,) for score in scores], lower_is_better)


# --------------------------------------------------------------------------- legality


A_ = TypeVar("A_")


def refuse_unless_legal(
    legal: Collection[A_], action: A_, why: Callable[[], EngineError | None]
) -> None:
    """The head of every ``apply``: accept exactly the actions ``legal_actions`` lists.

    ``why`` is only a diagnostic: it runs after the action is already known to be illegal
    and names the rule (``not_in_hand``, ``wrong_phase``, ...). It can never make an
    illegal action legal; if it finds no reason, the refusal is the generic
    ``IllegalAction`` with rule ``not_legal``.
    """
    # Identity first: callers nearly always pass one of the very objects legal_actions
    # built, and ``in`` would call the dataclass __eq__ of every action before it.
    for candidate in legal:
        if candidate is action:
            return
    if action in legal:
        return
    raise why() or IllegalAction("that action is not legal now", rule="not_legal")


G_ = TypeVar("G_")
S_ = TypeVar("S_")
R_ = TypeVar("R_")


def remember_last(method: Callable[[G_, S_, int], R_]) -> Callable[[G_, S_, int], R_]:
    """``legal_actions`` that remembers its last answer: the same state object and seat give
    the same (immutable) result without recomputing it.

    A caller asks ``legal_actions(state, seat)`` and then ``apply``s one of them, and
    ``apply`` asks again (:func:`refuse_unless_legal`); a bot's playouts and the runtime do
    this on every move. States are immutable values, so the answer for one state object
    never changes; the memo holds that object, so its identity cannot be reused while the
    entry lives. One entry per decorated method: it costs one state's memory.
    """
    # One tuple swapped whole, so a thread never sees the parts of two different entries.
    last: list[tuple[Any, Any, int, Any]] = [(None, None, -1, None)]

    def remembered(game: G_, state: S_, seat: int) -> R_:
        entry = last[0]
        if entry[1] is state and entry[2] == seat and entry[0] is game:
            result: R_ = entry[3]
            return result
        result = method(game, state, seat)
        last[0] = (game, state, seat, result)
        return result

    remembered.__name__ = getattr(method, "__name__", "legal_actions")
    remembered.__qualname__ = getattr(method, "__qualname__", remembered.__name__)
    remembered.__doc__ = method.__doc__
    return remembered


def refusal(game: GameAny, state: Any, seat: int, action: Any) -> EngineError | None:
    """Why ``apply`` would refuse ``action`` from ``seat`` (the error), or None if it would
    accept it. The state is never changed."""
    try:
        game.apply(state, seat, action)
    except EngineError as error:
        return error
    return None


# --------------------------------------------------------------------------- fast values


def fast_constructor(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen slots dataclass ``cls`` taking every field positionally,
    about five times cheaper than ``cls(...)``; what it returns is an ordinary ``cls``
    value (equal, hashed, frozen and encoded like any other).

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (its
    own ``__setattr__`` refuses), which dominates building a game state of 15-20 fields on
    every move. Here a plain twin class with the very same slots stores the fields
    directly and then becomes ``cls`` by ``__class__`` assignment, which Python allows
    between classes of identical layout. Only for a dataclass without ``__post_init__``
    whose only base is ``object``: anything else is refused here, at import time.
    """
    names = tuple(getattr(cls, "__dataclass_fields__", {}))
    if (
        not names
        or cls.__bases__ != (object,)
        or tuple(getattr(cls, "__slots__", ())) != names
        or hasattr(cls, "__post_init__")
    ):
        raise TypeError(f"{cls.__name__} is not a plain slots dataclass")
    lines = [f"def __init__(self, {', '.join(names)}):"]
    lines += [f"    self.{name} = {name}" for name in names]
    lines.append("    self.__class__ = frozen")
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), {"frozen": cls}, namespace)  # names are the class's own fields
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": names, "__init__": namespace["__init__"]})
    return cast(Callable[..., T], twin)


_KEEP: Any = object()  # an evolve argument not given: the field keeps its value


def evolver(cls: type[T]) -> Callable[..., T]:
    """``dataclasses.replace`` for the frozen slots dataclass ``cls`` without its per-call
    introspection, built on :func:`fast_constructor` (a game's ``_evolve``).

    The function is generated with one keyword-only parameter per field, defaulting to a
    marker, and passes each field on as given or as kept: Python binds the keywords in C,
    which is about twice as cheap as collecting ``**changes`` and copying the fields into a
    list. An unknown field name is a ``TypeError``, as with ``dataclasses.replace``.
    """
    build = fast_constructor(cls)
    names = tuple(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    parameters = ", ".join(f"{name}=KEEP" for name in names)
    arguments = ", ".join(f"state.{name} if {name} is KEEP else {name}" for name in names)
    source = f"def evolve(state, *, {parameters}):\n    return build({arguments})"
    namespace: dict[str, Any] = {}
    exec(source, {"KEEP": _KEEP, "build": build}, namespace)  # names are the class's own fields
    return cast(Callable[..., T], namespace["evolve"])


def replacer(cls: type[T], *names: str) -> Callable[..., T]:
    """``evolver`` for one fixed set of changed fields, given positionally: ``replacer(cls,
    "a", "b")`` returns ``f(state, a, b)``, a copy of ``state`` with those two fields set.

    For a game's hottest move (a card played to a trick): it passes every other field on
    without testing whether it was given, about half the cost of the evolver on a state of
    thirty-odd fields. An unknown field name is a ``TypeError``, at import time.
    """
    build = fast_constructor(cls)
    fields = tuple(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    unknown = [name for name in names if name not in fields]
    if unknown or len(set(names)) != len(names):
        raise TypeError(f"{cls.__name__} has no fields {unknown} (or one is named twice)")
    arguments = ", ".join(name if name in names else f"state.{name}" for name in fields)
    source = f"def replace(state, {', '.join(names)}):\n    return build({arguments})"
    namespace: dict[str, Any] = {}
    exec(source, {"build": build}, namespace)  # names are the class's own fields
    return cast(Callable[..., T], namespace["replace"])


# --------------------------------------------------------------------------- interface

S = TypeVar("S")
A = TypeVar("A")
Obs = TypeVar("Obs")  # the observation type (invariant: sample_world takes one back)


@runtime_checkable
class Game(Protocol[S, A, Obs]):
    """The interface of one game's rules. Every game module exports one ``GAME``.

    **Legality has one source.** ``legal_actions`` is the complete list; ``apply`` accepts
    exactly what it lists and nothing else. The pattern (Take 5 follows it)::

        def apply(self, state, seat, action):
            refuse_unless_legal(self.legal_actions(state, seat), action,
                                lambda: self._why_illegal(state, seat, action))
            ...play it...

    ``_why_illegal`` only names the rule for a refusal (malformed → ``InvalidAction``,
    wrong seat → ``NotYourTurn``, ended → ``GameOver``, otherwise ``IllegalAction`` with a
    rule id); it never decides legality, so the two cannot drift apart. It must depend
    only on what ``seat`` knows, so that its answer is the same in every world the seat
    considers possible (the D3 leak test). ``apply`` never changes a state it was given.

    **Observations.** ``observe(state, seat)`` is everything that may leave the server for
    that seat; ``observe(state, None)`` is the spectator's part. Every observation is a
    frozen value that

    * has a ``phase`` (an enum with string values) and a ``seat``;
    * carries the public history of the current deal (bids, revealed choices, cards played
      and taken, in order), so a bot never needs its own log and a reconnect loses nothing;
    * carries the derived facts a player at the table would see or could work out at once
      (a row's heads, a trick's winner, running scores, and what the public history
      implies about hidden zones, such as the cards a seat is known to hold): they are
      computed here, once, never again in the wire or a bot;
    * is private exactly in its ``private_fields`` (a class attribute naming the fields a
      seat sees beyond a spectator; Take 5: ``hand``, ``selected``). Every other field of
      ``observe(state, seat)`` equals the same field of ``observe(state, None)``, which is
      what lets the wire build the shared part of all views once.
    """

    info: GameInfo

    def new(
        self,
        options: Mapping[str, str],
        seats: int,
        rng: Rng,
        presets: Presets = (),
    ) -> S:
        """Set up and deal. ``presets``: orders per named deck (module docstring), used first;
        a plain sequence of orders means the first deck. ``InvalidOptions`` for bad options,
        seat counts or presets. An ``automatic`` option's 0 is resolved here."""
        ...

    def to_act(self, state: S) -> tuple[int, ...]:
        """The seats that must act now, ascending; () at the end.

        What the runtime relies on (every game keeps it):

        * Several seats means sealed simultaneous commitments: each ``apply`` records one
          and changes nothing public except "seat k has committed"; when the last one
          arrives the engine reveals and resolves them atomically. A commitment is final.
        * A seat may stay in ``to_act`` over several steps of its own turn (draw, then
          decide what to do with the card); each step is one action and gets the move
          clock anew. The runtime never assumes the seat changes after an action.
        * One seat means an ordinary turn; the game chooses no seat by itself (automatic
          steps happen inside ``apply``).
        """
        ...

    def legal_actions(self, state: S, seat: int) -> tuple[A, ...]:
        """Every legal action of ``seat`` in a stable order; () when it need not act."""
        ...

    def apply(self, state: S, seat: int, action: A) -> S:
        """The state after ``seat`` plays ``action``, which must be in ``legal_actions``;
        otherwise an :class:`EngineError` naming the rule (see the class docstring)."""
        ...

    def default_action(self, state: S, seat: int) -> A:
        """The documented move the server plays for ``seat`` when its clock runs out."""
        ...

    def observe(self, state: S, seat: int | None) -> Obs:
        """What ``seat`` may know (``None``: a spectator, public information only)."""
        ...

    def sample_world(self, observation: Obs, rng: Rng) -> S:
        """A full state consistent with everything ``observation`` shows or its public
        history implies: hidden cards dealt anew from ``rng`` (uniformly among the
        possibilities the game tracks), future chance drawn from ``rng``, presets dropped.

        It reads nothing but the observation, so a world can hold nothing its seat does not
        know: ``observe(world, seat) == observation``. Search bots call it on their own
        view; the leak tests call it through :meth:`determinize`."""
        ...

    def determinize(self, state: S, seat: int, rng: Rng) -> S:
        """``sample_world(observe(state, seat), rng)``; kept for callers that hold a state."""
        ...

    def rewind(self, state: S) -> tuple[S, tuple[tuple[int, A], ...]]:
        """The state at the start of the current deal and the ``(seat, action)`` pairs played
        since, in an order whose replay gives ``state`` back (sealed commitments in seat
        order). The D1 test replays a sampled world's history this way: every action must be
        legal there and the seat must see at every step what it saw in the real match."""
        ...

    def outcome(self, state: S) -> Outcome | None:
        """Final scores, ranks and utilities (:meth:`Outcome.from_keys`); None while running."""
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
        """Every card of all the game's decks (texts, sorted); the conservation law's total."""
        ...

    def zones(self, state: S) -> Mapping[str, tuple[str, ...]]:
        """Where every card is now (zone name to card texts); together exactly the deck."""
        ...

    def max_actions(self, state: S) -> int:
        """A finite upper bound on the number of actions of a whole game from its initial state.

        Every game is finite. Where the rules put no bound on a game's length (Beverbende's
        rounds end only when someone knocks), the game has a safety-limit option (an
        ``INT`` such as ``turn_limit``, with a finite default and maximum) after which the
        deal or game ends by a documented rule and ``Outcome.termination`` is ``"limit"``;
        the bound counts that limit in.
        """
        ...


GameAny = Game[Any, Any, Any]
