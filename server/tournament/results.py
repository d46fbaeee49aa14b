"""Standings from a tournament's finished matches: ratings, utilities, a crosstable.

Pure functions over plain values (no protobuf, no I/O, no clock), so the director, the
store's recovery and the tests all compute the same standings from the same results; the
RPC layer copies :class:`Standings` into the proto message of the same name.

Decisions:

- **Only rated matches count.** A match dealt from preset decks (``rated=False``) is
  skipped entirely: no rating update, no utility, no misses. The deal was chosen by
  someone, so its result says nothing about the bots.
- **Ratings** are OpenSkill Plackett-Luce, fed one match at a time in fixture order (not
  finishing order), so the same results give the same ratings however the matches
  interleaved, and a restarted tournament rates exactly as an uninterrupted one. A
  participant seated twice in one match (only possible with fewer participants than
  seats) is rated once, at its better rank; a match with fewer than two distinct
  participants changes no rating. The rating shown is the ordinal ``mu - 3 sigma``.
- **Intervals** are Student-t 95% intervals of a mean (the samples are few: a pairing may
  meet only a handful of times, where the normal 1.96 would be too narrow). With fewer
  than two samples the half-width is NaN: unknown, not zero.
- **Per-match values.** A participant's utility (and score) in a match is the mean over
  its seats in that match, so every match is one sample, whatever the seating.
- **Order and places.** Participants who played come first, by rating, then mean utility,
  then mean score (oriented by ``lower_is_better``); those equal on all three share a
  place (1, 1, 3). Participants without a counted match share the last place. Names only
  break ties in the listing order, never in the place.
- **Crosstable**: every ordered pair of distinct participants, in the order the
  participants are given, including pairs that never met (``matches=0``), so the table
  has the same shape at every moment of the tournament.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

# Two-sided 95% quantiles of Student's t distribution for 1..30 degrees of freedom.
_T975 = (
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
)
_Z975 = 1.959963984540054  # the normal quantile, the limit of the t quantiles
_PLACE_DIGITS = 9  # keys equal to this many decimals are a tie (float noise is not a lead)


def t_quantile_975(degrees_of_freedom: int) -> float:
    """The 0.975 quantile of Student's t: exact (to 9 digits) up to 30 degrees of freedom,
    beyond that the Cornish-Fisher expansion around the normal quantile (error < 2e-6)."""
    if degrees_of_freedom < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if degrees_of_freedom <= len(_T975):
        return _T975[degrees_of_freedom - 1]
    z, n = _Z975, float(degrees_of_freedom)
    return (
        z
        + (z**3 + z) / (4 * n)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * n**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * n**3)
    )


def mean_ci95(samples: Sequence[float]) -> tuple[float, float]:
    """The mean of ``samples`` and the half-width of its 95% confidence interval (Student
    t, sample standard deviation). No samples: ``(0.0, nan)``; one sample: ``(x, nan)``."""
    n = len(samples)
    if n == 0:
        return 0.0, math.nan
    mean = math.fsum(samples) / n
    if n == 1:
        return mean, math.nan
    variance = math.fsum((x - mean) ** 2 for x in samples) / (n - 1)
    return mean, t_quantile_975(n - 1) * math.sqrt(variance / n)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """One finished match of a tournament, per seat where a tuple (seat order)."""

    fixture: int
    """The match's number within its tournament: the order ratings are fed in."""
    lineup: tuple[str, ...]
    """The participant in each seat."""
    scores: tuple[int, ...]
    """The game's own score per seat."""
    ranks: tuple[int, ...]
    """1 = best; ties share a rank (the outcome's, a forfeit included)."""
    utilities: tuple[float, ...]
    """Zero-sum utilities in [-1, 1]."""
    misses: tuple[int, ...]
    """Deadlines missed (clock defaults played)."""
    rejected: tuple[int, ...]
    """Moves refused as illegal."""
    forfeited: tuple[bool, ...]
    """Whether the seat forfeited by the clock policy."""
    rated: bool
    """False for a match dealt from preset decks: it never counts."""

    def __post_init__(self) -> None:
        seats = len(self.lineup)
        if seats == 0:
            raise ValueError(f"fixture {self.fixture}: a result needs at least one seat")
        for name in ("scores", "ranks", "utilities", "misses", "rejected", "forfeited"):
            if len(getattr(self, name)) != seats:
                raise ValueError(
                    f"fixture {self.fixture}: {name} has {len(getattr(self, name))} "
                    f"entries for {seats} seats"
                )
        if any(rank < 1 for rank in self.ranks):
            raise ValueError(f"fixture {self.fixture}: ranks start at 1")


@dataclass(frozen=True, slots=True)
class Standing:
    """One participant's line (the proto's ``Standing``)."""

    place: int
    participant: str
    matches: int
    rating: float
    """OpenSkill ordinal, ``mu - 3 sigma``."""
    mu: float
    sigma: float
    mean_utility: float
    utility_ci95: float
    """Half-width of the 95% interval of ``mean_utility``; NaN below two matches."""
    mean_score: float
    misses: int
    rejected: int
    forfeits: int


@dataclass(frozen=True, slots=True)
class Pairing:
    """How ``participant`` did in the matches where ``opponent`` also sat."""

    participant: str
    opponent: str
    matches: int
    mean_utility: float
    utility_ci95: float


@dataclass(frozen=True, slots=True)
class Standings:
    """The standings of a tournament (the proto's ``Standings`` without its labels)."""

    lower_is_better: bool
    matches_counted: int
    rows: tuple[Standing, ...]
    """Best first."""
    crosstable: tuple[Pairing, ...]


@dataclass(slots=True)
class _Tally:
    utilities: list[float]
    scores: list[float]
    misses: int = 0
    rejected: int = 0
    forfeits: int = 0


def _seats_of(lineup: Sequence[str]) -> dict[str, list[int]]:
    """Each participant's seats in a lineup, in first-seat order."""
    seats: dict[str, list[int]] = {}
    for seat, name in enumerate(lineup):
        seats.setdefault(name, []).append(seat)
    return seats


def compute_standings(
    results: Iterable[MatchResult], participants: Sequence[str], lower_is_better: bool
) -> Standings:
    """The standings over ``results`` for ``participants`` (every one gets a row; a result
    naming anyone else is a ValueError). See the module docstring for the decisions."""
    if len(set(participants)) != len(participants):
        raise ValueError("participants must be distinct")
    known = set(participants)
    counted = sorted((r for r in results if r.rated), key=lambda r: r.fixture)
    fixtures = [r.fixture for r in counted]
    if len(set(fixtures)) != len(fixtures):
        raise ValueError("two results have the same fixture number")

    model = PlackettLuce()
    ratings: dict[str, PlackettLuceRating] = {p: model.rating(name=p) for p in participants}
    tallies = {p: _Tally([], []) for p in participants}
    met: dict[tuple[str, str], list[float]] = {
        (p, q): [] for p in participants for q in participants if p != q
    }

    for result in counted:
        strangers = set(result.lineup) - known
        if strangers:
            raise ValueError(f"fixture {result.fixture} seats non-participants {sorted(strangers)}")
        seats = _seats_of(result.lineup)
        utility: dict[str, float] = {}
        for name, own in seats.items():
            tally = tallies[name]
            utility[name] = math.fsum(result.utilities[s] for s in own) / len(own)
            tally.utilities.append(utility[name])
            tally.scores.append(math.fsum(result.scores[s] for s in own) / len(own))
            tally.misses += sum(result.misses[s] for s in own)
            tally.rejected += sum(result.rejected[s] for s in own)
            tally.forfeits += sum(1 for s in own if result.forfeited[s])
        for name in seats:
            for other in seats:
                if other != name:
                    met[(name, other)].append(utility[name])
        if len(seats) >= 2:
            names = list(seats)
            teams = [[ratings[name]] for name in names]
            ranks: list[float] = [min(result.ranks[s] for s in seats[name]) for name in names]
            for name, (rating,) in zip(names, model.rate(teams, ranks=ranks), strict=True):
                ratings[name] = rating

    def sort_key(name: str) -> tuple[float, float, float]:
        tally = tallies[name]
        mean_score = math.fsum(tally.scores) / len(tally.scores) if tally.scores else 0.0
        return (
            round(-ratings[name].ordinal(), _PLACE_DIGITS),
            round(-mean_ci95(tally.utilities)[0], _PLACE_DIGITS),
            round(mean_score if lower_is_better else -mean_score, _PLACE_DIGITS),
        )

    played = sorted(
        (p for p in participants if tallies[p].utilities), key=lambda p: (sort_key(p), p)
    )
    idle = sorted(p for p in participants if not tallies[p].utilities)
    rows: list[Standing] = []
    for index, name in enumerate(played):
        if index and sort_key(played[index - 1]) == sort_key(name):
            place = rows[-1].place
        else:
            place = index + 1
        rows.append(_row(name, place, ratings[name], tallies[name]))
    for name in idle:
        rows.append(_row(name, len(played) + 1, ratings[name], tallies[name]))

    crosstable = tuple(
        Pairing(p, q, len(samples), *mean_ci95(samples)) for (p, q), samples in met.items()
    )
    return Standings(lower_is_better, len(counted), tuple(rows), crosstable)


def _row(name: str, place: int, rating: PlackettLuceRating, tally: _Tally) -> Standing:
    mean_utility, ci95 = mean_ci95(tally.utilities)
    mean_score = math.fsum(tally.scores) / len(tally.scores) if tally.scores else 0.0
    return Standing(
        place=place,
        participant=name,
        matches=len(tally.utilities),
        rating=rating.ordinal(),
        mu=rating.mu,
        sigma=rating.sigma,
        mean_utility=mean_utility,
        utility_ci95=ci95,
        mean_score=mean_score,
        misses=tally.misses,
        rejected=tally.rejected,
        forfeits=tally.forfeits,
    )
