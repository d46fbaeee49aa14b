"""Schedules: every lineup, every rotation, seat balance, gauntlets, duplicate sets, caps."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from speeltafel.server.tournament.formats import (
    Format,
    duplicate,
    gauntlet,
    round_robin,
    schedule,
    schedule_size,
    seatings,
)

FIVE = ("a", "b", "c", "d", "e")


def seat_counts(lineups: list[tuple[str, ...]]) -> Counter[tuple[str, int]]:
    return Counter((name, seat) for lineup in lineups for seat, name in enumerate(lineup))


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_round_robin_plays_every_lineup_in_every_rotation(seats: int) -> None:
    fixtures = round_robin(FIVE, seats)
    assert [f.number for f in fixtures] == list(range(len(fixtures)))
    assert (
        len(fixtures)
        == math.comb(5, seats) * seats
        == schedule_size(Format.ROUND_ROBIN, 5, seats, 1)
    )
    played = Counter(frozenset(f.lineup) for f in fixtures)
    assert set(played) == {frozenset(c) for c in itertools.combinations(FIVE, seats)}
    assert set(played.values()) == {seats}  # each lineup once per rotation
    # Every participant sits in every seat equally often.
    counts = seat_counts([f.lineup for f in fixtures])
    assert len(set(counts.values())) == 1
    assert len(counts) == 5 * seats
    assert all(f.duplicate_set == 0 for f in fixtures)


def test_round_robin_repeats_for_rounds() -> None:
    one = round_robin(FIVE[:3], 2)
    three = round_robin(FIVE[:3], 2, rounds=3)
    assert [f.lineup for f in three] == [f.lineup for f in one] * 3


def test_gauntlet_puts_the_first_participant_in_every_match() -> None:
    fixtures = gauntlet(FIVE, 3)
    assert len(fixtures) == math.comb(4, 2) * 3 == schedule_size(Format.GAUNTLET, 5, 3, 1)
    assert all("a" in f.lineup for f in fixtures)
    # The challenger meets every pair of the field, in every seat equally often.
    assert {frozenset(f.lineup) - {"a"} for f in fixtures} == {
        frozenset(c) for c in itertools.combinations(FIVE[1:], 2)
    }
    challenger_seats = Counter(f.lineup.index("a") for f in fixtures)
    assert set(challenger_seats.values()) == {math.comb(4, 2)}


@pytest.mark.parametrize("seats", [2, 3])
def test_duplicate_sets_hold_every_permutation_when_few(seats: int) -> None:
    fixtures = duplicate(FIVE[:4], seats)
    by_set: dict[int, list[tuple[str, ...]]] = {}
    for f in fixtures:
        by_set.setdefault(f.duplicate_set, []).append(f.lineup)
    assert sorted(by_set) == list(range(1, math.comb(4, seats) + 1))
    for lineups in by_set.values():
        assert sorted(lineups) == sorted(itertools.permutations(lineups[0]))
    assert len(fixtures) == schedule_size(Format.DUPLICATE, 4, seats, 1)


@pytest.mark.parametrize("seats", [4, 5, 6])
def test_duplicate_sets_of_many_seats_are_balanced_subsets(seats: int) -> None:
    lineup = (*FIVE, "f")[:seats]
    matches = seatings(lineup)
    assert len(matches) == 2 * seats
    assert len(set(matches)) == len(matches)
    counts = seat_counts(matches)
    assert set(counts.values()) == {2}
    assert len(counts) == seats * seats
    # Every ordered pair is d seats apart as often as seats - d apart.
    for x, y in itertools.permutations(lineup, 2):
        distances = Counter((m.index(y) - m.index(x)) % seats for m in matches)
        for d in range(1, seats):
            assert distances[d] == distances[seats - d]


def test_duplicate_sets_are_contiguous_and_numbered_from_one() -> None:
    fixtures = duplicate(FIVE, 4, rounds=2)
    sets = [f.duplicate_set for f in fixtures]
    assert sets == sorted(sets)
    assert sets[0] == 1
    assert max(sets) == 2 * math.comb(5, 4)


def test_a_cap_cuts_a_duplicate_schedule_after_a_whole_set() -> None:
    whole = schedule(Format.DUPLICATE, FIVE[:3], 2, 1)
    assert len(whole) == 6  # three sets of two
    assert [f.duplicate_set for f in schedule(Format.DUPLICATE, FIVE[:3], 2, 1, 5)] == [
        1,
        1,
        2,
        2,
    ]
    with pytest.raises(ValueError, match="below one duplicate set"):
        schedule(Format.DUPLICATE, FIVE[:3], 2, 1, 1)
    assert len(schedule(Format.ROUND_ROBIN, FIVE, 2, 1, 7)) == 7


def test_bad_participants_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot fill"):
        round_robin(("a",), 2)
    with pytest.raises(ValueError, match="distinct"):
        round_robin(("a", "A", "b"), 2)
    assert schedule_size(Format.ROUND_ROBIN, 1, 2, 1) == 0
