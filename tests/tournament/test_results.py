"""Standings from finished results: hand-checked examples, determinism, ties, the CI math."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

import pytest
from openskill.models import PlackettLuce

from speeltafel.server.tournament.results import (
    MatchResult,
    compute_standings,
    mean_ci95,
    t_quantile_975,
)


def result(
    fixture: int,
    lineup: tuple[str, ...],
    ranks: tuple[int, ...],
    utilities: tuple[float, ...],
    scores: tuple[int, ...] | None = None,
    misses: tuple[int, ...] | None = None,
    rejected: tuple[int, ...] | None = None,
    forfeited: tuple[bool, ...] | None = None,
    rated: bool = True,
) -> MatchResult:
    zeros = (0,) * len(lineup)
    return MatchResult(
        fixture=fixture,
        lineup=lineup,
        scores=scores or zeros,
        ranks=ranks,
        utilities=utilities,
        misses=misses or zeros,
        rejected=rejected or zeros,
        forfeited=forfeited or (False,) * len(lineup),
        rated=rated,
    )


# --------------------------------------------------------------------------- the CI math


def test_t_quantiles_match_published_values() -> None:
    # Published two-sided 95% critical values of Student's t.
    assert t_quantile_975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile_975(2) == pytest.approx(4.3027, abs=1e-4)
    assert t_quantile_975(10) == pytest.approx(2.2281, abs=1e-4)
    assert t_quantile_975(40) == pytest.approx(2.021075, abs=2e-6)
    assert t_quantile_975(120) == pytest.approx(1.979930, abs=2e-6)
    assert t_quantile_975(10**9) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_t_quantiles_fall_smoothly_past_the_table() -> None:
    values = [t_quantile_975(n) for n in range(1, 200)]
    assert all(a > b for a, b in itertools.pairwise(values))
    assert values[29] - values[30] < 0.01  # table (30) to expansion (31): no jump


def test_mean_ci95_by_hand() -> None:
    # [1, -1, 1]: mean 1/3, sample variance ((2/3)^2 * 2 + (4/3)^2) / 2 = 4/3,
    # standard error sqrt(4/3 / 3) = 2/3, times t(2) = 4.302653.
    mean, half = mean_ci95([1.0, -1.0, 1.0])
    assert mean == pytest.approx(1 / 3)
    assert half == pytest.approx(4.302652730 * 2 / 3)
    assert mean_ci95([0.5, 0.5]) == (0.5, 0.0)
    single = mean_ci95([0.25])
    assert single[0] == 0.25 and math.isnan(single[1])
    empty = mean_ci95([])
    assert empty[0] == 0.0 and math.isnan(empty[1])


# --------------------------------------------------------------------------- standings


def test_two_bots_hand_checked() -> None:
    results = [
        result(0, ("a", "b"), (1, 2), (1.0, -1.0), scores=(10, 3)),
        result(1, ("b", "a"), (1, 2), (1.0, -1.0), scores=(7, 4)),
        result(2, ("a", "b"), (1, 2), (1.0, -1.0), scores=(9, 5)),
    ]
    standings = compute_standings(results, ["a", "b"], lower_is_better=False)
    assert standings.matches_counted == 3
    first, second = standings.rows
    assert (first.participant, first.place, first.matches) == ("a", 1, 3)
    assert (second.participant, second.place, second.matches) == ("b", 2, 3)
    assert first.mean_utility == pytest.approx(1 / 3)
    assert first.utility_ci95 == pytest.approx(4.302652730 * 2 / 3)
    assert second.mean_utility == pytest.approx(-1 / 3)
    assert first.mean_score == pytest.approx((10 + 4 + 9) / 3)
    assert second.mean_score == pytest.approx((3 + 7 + 5) / 3)
    assert first.rating == pytest.approx(first.mu - 3 * first.sigma)
    assert first.rating > second.rating
    pairs = {(p.participant, p.opponent): p for p in standings.crosstable}
    assert set(pairs) == {("a", "b"), ("b", "a")}
    assert pairs["a", "b"].matches == 3
    assert pairs["a", "b"].mean_utility == pytest.approx(1 / 3)
    assert pairs["b", "a"].mean_utility == pytest.approx(-1 / 3)


def test_ratings_are_openskill_fed_in_fixture_order() -> None:
    results = [
        result(0, ("a", "b", "c"), (1, 2, 3), (1.0, 0.0, -1.0)),
        result(1, ("c", "a", "b"), (1, 1, 3), (0.5, 0.5, -1.0)),
        result(2, ("b", "c", "a"), (1, 2, 3), (1.0, 0.0, -1.0)),
    ]
    model = PlackettLuce()
    expected = {name: model.rating(name=name) for name in "abc"}
    for r in results:
        teams = [[expected[name]] for name in r.lineup]
        for name, (rating,) in zip(r.lineup, model.rate(teams, ranks=list(r.ranks)), strict=True):
            expected[name] = rating
    shuffled = list(reversed(results))  # finishing order is not fixture order
    standings = compute_standings(shuffled, ["a", "b", "c"], lower_is_better=False)
    for row in standings.rows:
        assert row.mu == pytest.approx(expected[row.participant].mu)
        assert row.sigma == pytest.approx(expected[row.participant].sigma)
    # Fed in another order the same results rate differently: the order is a real choice.
    model2 = PlackettLuce()
    other = {name: model2.rating(name=name) for name in "abc"}
    for r in shuffled:
        teams = [[other[name]] for name in r.lineup]
        for name, (rating,) in zip(r.lineup, model2.rate(teams, ranks=list(r.ranks)), strict=True):
            other[name] = rating
    assert any(other[n].mu != pytest.approx(expected[n].mu) for n in "abc")


def test_the_same_results_in_any_order_give_the_same_standings() -> None:
    rng = random.Random(7)
    names = ["p", "q", "r", "s"]
    results = []
    for fixture in range(40):
        lineup = tuple(rng.sample(names, 3))
        ranks = tuple(rng.choice([(1, 2, 3), (1, 1, 3), (2, 1, 3), (3, 2, 1)]))
        utilities = tuple({1: 0.5, 2: 0.0, 3: -0.5}[k] for k in ranks)
        scores = tuple(rng.randrange(50) for _ in lineup)
        results.append(result(fixture, lineup, ranks, utilities, scores=scores))
    first = compute_standings(results, names, lower_is_better=True)
    for _ in range(5):
        rng.shuffle(results)
        assert compute_standings(results, names, lower_is_better=True) == first
    assert first.matches_counted == 40
    assert sum(row.matches for row in first.rows) == 40 * 3


def test_ties_share_a_place_and_idle_participants_come_last() -> None:
    # a and b draw twice: the same rating, utility and score; c wins its one match; d idle.
    results = [
        result(0, ("a", "b"), (1, 1), (0.0, 0.0), scores=(5, 5)),
        result(1, ("b", "a"), (1, 1), (0.0, 0.0), scores=(5, 5)),
        result(2, ("c", "a"), (1, 2), (1.0, -1.0), scores=(9, 1)),
    ]
    standings = compute_standings(
        results[:2], ["a", "b", "c", "d"], lower_is_better=False
    )  # c and d idle
    assert [(r.participant, r.place) for r in standings.rows] == [
        ("a", 1),
        ("b", 1),
        ("c", 3),
        ("d", 3),
    ]
    assert standings.rows[2].matches == 0 and math.isnan(standings.rows[2].utility_ci95)
    standings = compute_standings(results, ["d", "c", "b", "a"], lower_is_better=False)
    places = {r.participant: r.place for r in standings.rows}
    assert places["c"] == 1 and places["d"] == 4
    assert places["b"] < places["a"]  # a lost to c, b did not play it


def test_score_breaks_a_tie_by_the_games_orientation() -> None:
    results = [result(0, ("a", "b"), (1, 1), (0.0, 0.0), scores=(3, 8))]
    higher = compute_standings(results, ["a", "b"], lower_is_better=False)
    lower = compute_standings(results, ["a", "b"], lower_is_better=True)
    assert [(r.participant, r.place) for r in higher.rows] == [("b", 1), ("a", 2)]
    assert [(r.participant, r.place) for r in lower.rows] == [("a", 1), ("b", 2)]
    assert lower.lower_is_better and not higher.lower_is_better


def test_unrated_matches_never_count() -> None:
    rated = [result(0, ("a", "b"), (1, 2), (1.0, -1.0), scores=(4, 2))]
    preset = result(
        1,
        ("b", "a"),
        (1, 2),
        (1.0, -1.0),
        scores=(50, 0),
        misses=(3, 3),
        rejected=(1, 1),
        forfeited=(False, True),
        rated=False,
    )
    assert compute_standings([*rated, preset], ["a", "b"], False) == compute_standings(
        rated, ["a", "b"], False
    )
    assert compute_standings([preset], ["a", "b"], False).matches_counted == 0


def test_misses_rejected_and_forfeits_add_up() -> None:
    results = [
        result(0, ("a", "b"), (2, 1), (-1.0, 1.0), misses=(3, 0), rejected=(0, 2),
               forfeited=(True, False)),
        result(1, ("b", "a"), (1, 2), (1.0, -1.0), misses=(1, 2), rejected=(1, 0)),
    ]  # fmt: skip
    rows = {r.participant: r for r in compute_standings(results, ["a", "b"], False).rows}
    assert (rows["a"].misses, rows["a"].rejected, rows["a"].forfeits) == (5, 0, 1)
    assert (rows["b"].misses, rows["b"].rejected, rows["b"].forfeits) == (1, 3, 0)


def test_crosstable_covers_every_ordered_pair_of_the_participants() -> None:
    results = [
        result(0, ("a", "b", "c"), (1, 2, 3), (1.0, 0.0, -1.0)),
        result(1, ("a", "b"), (2, 1), (-1.0, 1.0)),
    ]
    standings = compute_standings(results, ["a", "b", "c", "d"], False)
    pairs = {(p.participant, p.opponent): p for p in standings.crosstable}
    assert len(standings.crosstable) == 4 * 3
    assert [(p.participant, p.opponent) for p in standings.crosstable][:3] == [
        ("a", "b"),
        ("a", "c"),
        ("a", "d"),
    ]
    assert pairs["a", "b"].matches == 2
    assert pairs["a", "b"].mean_utility == pytest.approx(0.0)
    assert pairs["a", "b"].utility_ci95 == pytest.approx(12.706204736 * 1.0)  # s=sqrt2, n=2
    assert pairs["a", "c"].matches == 1 and pairs["a", "c"].mean_utility == 1.0
    assert math.isnan(pairs["a", "c"].utility_ci95)
    assert pairs["c", "b"].mean_utility == -1.0
    assert pairs["a", "d"].matches == 0 and pairs["d", "a"].matches == 0


def test_a_participant_seated_twice_is_one_sample_at_its_better_rank() -> None:
    results = [result(0, ("a", "a", "b"), (1, 3, 2), (1.0, -0.5, -0.5), scores=(10, 2, 5))]
    rows = {r.participant: r for r in compute_standings(results, ["a", "b"], False).rows}
    assert rows["a"].matches == 1
    assert rows["a"].mean_utility == pytest.approx(0.25)
    assert rows["a"].mean_score == pytest.approx(6.0)
    assert rows["a"].mu > rows["b"].mu  # rated at rank 1 against b's 2


def test_a_match_of_one_participant_rates_nobody() -> None:
    results = [result(0, ("a", "a"), (1, 2), (1.0, -1.0))]
    rows = {r.participant: r for r in compute_standings(results, ["a", "b"], False).rows}
    assert rows["a"].matches == 1
    assert rows["a"].mu == rows["b"].mu


@pytest.mark.parametrize(
    "broken",
    [
        lambda: result(0, ("a", "b"), (1,), (1.0, -1.0)),
        lambda: result(0, ("a", "b"), (1, 2), (1.0, -1.0), misses=(1,)),
        lambda: result(0, ("a", "b"), (0, 2), (1.0, -1.0)),
        lambda: result(0, (), (), ()),
    ],
)
def test_malformed_results_are_refused(broken: Callable[[], MatchResult]) -> None:
    with pytest.raises(ValueError):
        broken()


def test_inconsistent_inputs_are_refused() -> None:
    one = result(0, ("a", "b"), (1, 2), (1.0, -1.0))
    with pytest.raises(ValueError, match="non-participants"):
        compute_standings([one], ["a"], False)
    with pytest.raises(ValueError, match="same fixture"):
        compute_standings([one, one], ["a", "b"], False)
    with pytest.raises(ValueError, match="distinct"):
        compute_standings([one], ["a", "b", "a"], False)
