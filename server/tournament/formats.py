"""Tournament schedules: which participants sit where in each match, as pure functions.

A schedule is a list of :class:`Fixture` values numbered from 0 in the order the director
starts them (and the order their results are rated in, whatever order they finish in).

* **Round robin** (:func:`round_robin`): every lineup of ``seats`` participants (every
  combination), each played once in every cyclic rotation of its seats, so every
  participant of a lineup sits in every seat once; the whole schedule ``rounds`` times.
* **Gauntlet** (:func:`gauntlet`): the first participant against every lineup of the
  others, seats rotated the same way.
* **Duplicate** (:func:`duplicate`): sets of matches that share one deal. A set is one
  lineup played with every permutation of its seats when there are at most
  :data:`MAX_PERMUTATIONS` of them (2 or 3 seats), else with a balanced subset: the
  ``seats`` cyclic rotations of the lineup and the ``seats`` rotations of its reverse. In
  that subset every participant sits in every seat exactly twice, and every pair sits in
  both orders equally often (whoever plays d seats after someone in one half plays d seats
  before them in the other), so neither the seat nor the order of play round the table
  favours anyone, at ``2 * seats`` matches instead of ``seats!`` (24 at 4 seats, 720 at 6).

A game whose partnerships form during play (Kleurenwiezen: partners are made in the
bidding) cannot keep partners apart by seating; its duplicate sets rely on the same deals
alone. Such a game re-forms its pack from the previous deal's play unless told to shuffle
between deals; the director turns :data:`SHUFFLE_OPTION` on for duplicate tournaments of a
game that has it, so every deal of a set's matches follows from the set's seed alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

MAX_PERMUTATIONS = 6
"""Sets of a duplicate tournament hold every seat permutation up to this many (3 seats)."""
SHUFFLE_OPTION = "shuffle_between_deals"
"""A game option which, when a game has it, duplicate tournaments set to true."""


class Format(StrEnum):
    """The tournament formats."""

    ROUND_ROBIN = "round_robin"
    GAUNTLET = "gauntlet"
    DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True)
class Fixture:
    """One match of a schedule: its number, the participant per seat, and its duplicate set
    (numbered from 1; 0 outside the duplicate format)."""

    number: int
    lineup: tuple[str, ...]
    duplicate_set: int = 0


def rotations(lineup: Sequence[str]) -> list[tuple[str, ...]]:
    """The cyclic rotations of a lineup, the lineup itself first."""
    n = len(lineup)
    return [tuple(lineup[(i + shift) % n] for i in range(n)) for shift in range(n)]


def seatings(lineup: Sequence[str]) -> list[tuple[str, ...]]:
    """The seatings of one duplicate set: every permutation of ``lineup`` when there are at
    most :data:`MAX_PERMUTATIONS`, else the rotations of the lineup and of its reverse."""
    if math.factorial(len(lineup)) <= MAX_PERMUTATIONS:
        return [tuple(p) for p in itertools.permutations(lineup)]
    return rotations(lineup) + rotations(tuple(reversed(lineup)))


def _numbered(lineups: list[tuple[tuple[str, ...], int]]) -> list[Fixture]:
    return [Fixture(n, lineup, number_of_set) for n, (lineup, number_of_set) in enumerate(lineups)]


def round_robin(participants: Sequence[str], seats: int, rounds: int = 1) -> list[Fixture]:
    """Every lineup of ``seats`` participants in every rotation, ``rounds`` times."""
    _check(participants, seats)
    one_round = [
        lineup
        for combination in itertools.combinations(participants, seats)
        for lineup in rotations(combination)
    ]
    return _numbered([(lineup, 0) for _ in range(rounds) for lineup in one_round])


def gauntlet(participants: Sequence[str], seats: int, rounds: int = 1) -> list[Fixture]:
    """The first participant against every lineup of ``seats - 1`` others, rotated."""
    _check(participants, seats)
    challenger, *field = participants
    one_round = [
        lineup
        for others in itertools.combinations(field, seats - 1)
        for lineup in rotations((challenger, *others))
    ]
    return _numbered([(lineup, 0) for _ in range(rounds) for lineup in one_round])


def duplicate(participants: Sequence[str], seats: int, rounds: int = 1) -> list[Fixture]:
    """A duplicate set per lineup and round, each played in :func:`seatings`."""
    _check(participants, seats)
    sets = [
        combination
        for _ in range(rounds)
        for combination in itertools.combinations(participants, seats)
    ]
    return _numbered(
        [
            (lineup, number_of_set)
            for number_of_set, combination in enumerate(sets, start=1)
            for lineup in seatings(combination)
        ]
    )


def schedule(
    format: Format, participants: Sequence[str], seats: int, rounds: int, max_matches: int = 0
) -> list[Fixture]:
    """The fixtures of a tournament, cut to ``max_matches`` (0: no cap). A duplicate
    schedule is cut after its last whole set (a set cut short would not cancel card luck);
    ValueError when not even one set fits."""
    build = {Format.ROUND_ROBIN: round_robin, Format.GAUNTLET: gauntlet}.get(format, duplicate)
    fixtures = build(participants, seats, rounds)
    if not max_matches or len(fixtures) <= max_matches:
        return fixtures
    if format is not Format.DUPLICATE:
        return fixtures[:max_matches]
    cut = fixtures[:max_matches]
    if fixtures[max_matches].duplicate_set == cut[-1].duplicate_set:
        last = cut[-1].duplicate_set
        cut = [f for f in cut if f.duplicate_set != last]
    if not cut:
        size = len(seatings(participants[:seats]))
        raise ValueError(f"max_matches {max_matches} is below one duplicate set ({size} matches)")
    return cut


def schedule_size(format: Format, participants: int, seats: int, rounds: int) -> int:
    """How many fixtures :func:`schedule` makes without a cap (computed, not built, so a
    request for an enormous tournament is refused cheaply)."""
    if participants < seats or seats < 1:
        return 0
    if format is Format.GAUNTLET:
        return math.comb(participants - 1, seats - 1) * seats * rounds
    lineups = math.comb(participants, seats) * rounds
    if format is Format.ROUND_ROBIN:
        return lineups * seats
    per_set = math.factorial(seats) if math.factorial(seats) <= MAX_PERMUTATIONS else 2 * seats
    return lineups * per_set


def _check(participants: Sequence[str], seats: int) -> None:
    if seats < 1:
        raise ValueError("a match needs at least one seat")
    if len(participants) < seats:
        raise ValueError(f"{len(participants)} participants cannot fill {seats} seats")
    if len({p.casefold() for p in participants}) != len(participants):
        raise ValueError("participants must be distinct")
