"""A search bot for every game: flat Monte Carlo over worlds sampled from its own view.

This is the pattern of ``shared/design.md``: a bot imports the SDK, and the engine only to
search worlds sampled from its own view. It knows no game's rules or messages:

1. The view is decoded back into the engine's observation of this seat by the wire's
   decoder (``observation_from_view``): the one inverse of what the server sent.
2. For every decision it samples worlds with the engine's ``sample_world(observation,
   rng)``: full states consistent with the observation, hidden cards dealt anew. The seat's
   legal actions there are the view's, in the same (the engine's stable) order.
3. On each world it tries every legal action (common random numbers: all candidates see
   the same worlds) and plays on for every seat with a playout policy: the game's
   heuristic bot (the registry's), acting on that seat's observation of the world, with a
   little randomness (``explore``) so that the others are not assumed predictable; a game
   without a heuristic is played on at random.
4. A rollout's value: where the heuristic reads running scores from an observation, the
   rollout stops after ``horizon`` more rounds (a round is one action per seat) and is
   worth the bot's score change minus ``others_weight`` times the others' mean change,
   oriented by the game's ``lower_is_better``; otherwise it is played to the end and worth
   the bot's utility. The action with the best mean value wins, ties to the heuristic's
   choice, then to the first legal action.
5. Where the game has an exact solver (``solvers``, the registry's) and its tuning an
   ``exact_reach``, a rollout ends as soon as the solver answers for the state: its score
   changes under perfect play of the world (all hands known) are the rollout's, as in
   Perfect Information Monte Carlo. Kleurenwiezen's double-dummy solver
   (:mod:`~speeltafel.bots.kleurenwiezen_solver`) answers once at most ``exact_reach``
   tricks are left: the endgame is solved in every world, an earlier card is played on by
   the heuristic up to that point and solved from there. The solver also names equivalent
   actions (two touching cards of a suit), which are tried once.

Some games need other settings than the bot's defaults (:data:`TUNING`, per game id): a
longer ``horizon`` where scores change only at the end of a long deal, a larger time
budget (``budget_scale``) where one rollout is long, less exploration where a random
action of another seat (a wild bid) swings the score more than any choice of the bot's,
and ``until_scored``: stop a rollout as soon as the running scores change (checked on
the observation the playout policy reads anyway; only for games whose running scores are
public, the same in every seat's observation). Three more serve games whose heuristic is
hard to beat everywhere: ``search_phases`` (search only where the observation's ``phase``
is listed; elsewhere the heuristic's choice is played, counted in ``delegated``),
``plausible_tries`` (redraw a world until the heuristic's optional ``plausible(observation)``
accepts every other seat's view of it: worlds the others' public actions make likely) and
``overrule_z`` (leave the heuristic's choice only for a gain of that many paired standard
errors over the worlds).

It samples at most ``samples`` worlds and stops early when its time budget (``budget_ms``,
capped at ``clock_fraction`` of the move clock's remaining time when the view has a
deadline) is spent; it checks the clock after every rollout, so it overshoots by at most
one rollout. If even the first world cannot be searched in time it plays the heuristic's
choice (or the first legal action). All chance comes from ``random.Random(seed)``, and the
engine ``Rng`` of each decision is keyed from it, so a bot with a seed and no time limit
(``budget_ms=None``) is fully deterministic. A game the engine does not know, or a view it
cannot decode, gets a random legal action.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import EngineError, GameAny, Rng
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.wire.registry import observation_from_view


class HeuristicBot(Protocol):
    """A game's heuristic, in engine terms: the search bot's playout policy."""

    def act(self, observation: Any, legal_actions: Sequence[Any]) -> int:
        """The index in ``legal_actions`` of the action it plays on this observation."""
        ...

    def running_scores(self, observation: Any) -> Sequence[int] | None:
        """Every seat's score so far (the game's ``Outcome.scores`` if it ended now), or
        None if the game cannot tell before its end."""
        ...


class Solver(Protocol):
    """A game's exact evaluator of a world: where it answers, a rollout stops and takes its
    result instead of playing on (module docstring)."""

    def points(self, state: Any, reach: int) -> Sequence[int] | None:
        """Every seat's score change to the end of the game's scoring unit (Kleurenwiezen:
        the deal) under perfect play of the world, or None when the state is out of the
        solver's ``reach`` (or one it does not solve)."""
        ...

    def representatives(self, observation: Any, actions: Sequence[Any]) -> Sequence[int]:
        """For every action, the index of an equivalent one (the same in every world) that
        the search tries in its place; an action's own index when it has none earlier."""
        ...


Heuristics = Callable[[str], HeuristicBot | None]
Solvers = Callable[[str], Solver | None]


@dataclass(frozen=True, slots=True)
class Tuning:
    """One game's departures from the bot's own settings (module docstring)."""

    horizon: int | None = None  # rounds a rollout plays on (None: the bot's ``horizon``)
    budget_scale: float = 1.0  # times the bot's ``budget_ms`` (a budget of None stays None)
    explore: float | None = None  # None: the bot's ``explore``
    until_scored: bool = False  # stop a rollout at the first change of the running scores
    #: The phases (the observation's ``phase``, as a string) in which the bot searches; in
    #: any other the heuristic's choice is played unsearched. Empty: search every decision.
    search_phases: frozenset[str] = frozenset()
    #: Worlds drawn at most per sampled world until one is plausible (the heuristic's
    #: optional ``plausible(observation)`` accepts every other seat's observation of it);
    #: 0 or 1: the first drawn, as ``sample_world`` deals it.
    plausible_tries: int = 0
    #: How sure the search must be to overrule the heuristic's choice: the best action's
    #: mean gain over it, paired world by world, must exceed this many standard errors
    #: (0: any gain overrules). Guards against a few noisy worlds picking a worse card.
    overrule_z: float = 0.0
    #: The game's solver (``solvers``) ends a rollout as soon as it answers within this
    #: reach (Kleurenwiezen: tricks left), and its exact points are the rollout's result;
    #: 0: no solver, rollouts play on with the heuristic.
    exact_reach: int = 0


#: Per game id. Kleurenwiezen scores once per deal of about 60 actions, so a rollout plays
#: to the end of the deal (21 rounds: a whole deal from its first bid, with a long auction
#: and the kleine-miserie discards) and stops there; a rollout costs about 5-8 ms, so the
#: budget is eight times the default; and a random bid of another seat (solo slim, blote
#: miserie) would decide the rollout's value by itself, so the others explore rarely.
#: Bids are left to the heuristic (``search_phases``): a rollout of a bid is decided by the
#: whole deal's play and by what the others bid after it, too noisy at a few worlds to
#: beat the heuristic's counted tricks; the card play is searched. Its worlds are redrawn
#: (``plausible_tries``) until every other seat's hand fits its bids (WiezerBot.plausible:
#: an asker holds its colour), which a uniform deal ignores. The card play is Perfect
#: Information Monte Carlo (``exact_reach``): with at most 5 tricks left every world is
#: solved exactly by the double-dummy solver (:mod:`~speeltafel.bots.kleurenwiezen_solver`),
#: earlier a rollout plays on with the heuristic until 5 tricks are left and is solved from
#: there. A 5-trick solve costs a few ms; at 6 tricks a decision of 8 worlds took four
#: times as long (about 1.6 s against 0.4 s on a loaded machine), at 4 about two thirds.
#: Measured with ``scripts/kleurenwiezen_h2h.py search wiezer --samples 8 --server
#: --duplicate`` (one search seat rotated, 95% intervals; "paired": minus wiezer's own
#: result in that seat of the same preset deals; the command in the script's docstring),
#: 200 matches of 4 deals through servers: utility +0.175 ± 0.095, point margin +3.8 ±
#: 2.0; paired utility +0.070 ± 0.054, paired margin +1.2 ± 1.1 (the paired figures are the
#: gain of the card play alone: the bids are wiezer's, so both matches of a pair have the
#: same contracts; the unpaired ones include the seats' luck of the cards, which the
#: all-wiezer matches of the same deals show at +2.6 points). Matches 200-299 added
#: (decided before the 200's figures were in), 300 matches: utility +0.124 ± 0.081, point
#: margin +3.0 ± 1.6, paired utility +0.061 ± 0.044, paired margin +1.5 ± 0.8. A decision
#: of 8 worlds takes about 0.3-0.4 s (no limit), 200 matches about 37 minutes for each half
#: running side by side on a shared two-core machine. The solver's own share is not
#: measurable yet: with ``--tune exact_reach=0`` (rollouts to the deal's end, in-process,
#: the same 200 duplicate matches) utility +0.150 ± 0.098, paired utility +0.045 ± 0.053,
#: paired margin +1.1 ± 1.0; the solver minus that, match by match: paired margin +0.05 ±
#: 0.91, utility +0.025 ± 0.048. What made the edge significant is mostly the measurement
#: (duplicate deals, 200-300 matches). Before the solver (rollouts
#: to the deal's end, 200 matches, 8 worlds): in-process paired utility +0.07 ± 0.12,
#: paired margin +1.9 ± 2.4 (only the first deal paired); through a server utility +0.06 ±
#: 0.10, point margin +1.1 ± 2.1. Tried and dropped (in-process, 8 worlds, before the solver):
#: uniform worlds (80 matches: paired margin +1.4 ± 4.0), ``explore=0`` (no better),
#: ``overrule_z=1`` (60 matches: paired margin -1.9 ± 3.4).
TUNING: dict[str, Tuning] = {
    "kleurenwiezen": Tuning(
        horizon=20,
        budget_scale=8.0,
        explore=0.05,
        until_scored=True,
        search_phases=frozenset({"play"}),
        plausible_tries=20,
        exact_reach=5,
    ),
}
_DEFAULT_TUNING = Tuning()


def decode_view(view: common_pb2.View) -> Any:
    """The engine observation of the view's seat; ``ValueError`` for a spectator's view or
    a game the engine does not know (and whatever the decoder refuses)."""
    if not view.HasField("seat"):
        raise ValueError("a spectator's view has no hand to search from")
    if view.game not in GAMES:
        raise ValueError(f"the engine does not know the game {view.game[:40]!r}")
    observation = observation_from_view(view.game, view)
    if observation is None:
        raise ValueError("the view has no game part yet")
    return observation


def _sure(rows: Sequence[Sequence[float]], best: int, preferred: int, z: float) -> bool:
    """Whether ``best`` gains over ``preferred`` by more than ``z`` standard errors of the
    paired per-world differences (a gain in every world with no spread is sure; one world
    is never enough)."""
    diffs = [row[best] - row[preferred] for row in rows]
    n = len(diffs)
    if n < 2:
        return False
    mean = sum(diffs) / n
    if math.isinf(mean):  # a world where the rules refused one of them decides
        return mean > 0
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean > z * math.sqrt(variance / n)


class SearchBot:
    """Flat Monte Carlo search over sampled worlds (see the module docstring)."""

    name = "search"
    blocking = True  # searches for up to a few hundred ms: the runner calls it off the loop

    def __init__(
        self,
        seed: int | None = None,
        *,
        heuristics: Heuristics | None = None,
        solvers: Solvers | None = None,
        samples: int = 16,
        budget_ms: float | None = 30.0,
        clock_fraction: float = 0.1,
        horizon: int = 2,
        explore: float = 0.25,
        others_weight: float = 0.5,
    ) -> None:
        if samples < 1:
            raise ValueError("samples must be at least 1")
        self._random = random.Random(seed)
        self._heuristics = heuristics or (lambda game_id: None)
        self._heuristic: dict[str, HeuristicBot | None] = {}
        self._solvers = solvers or (lambda game_id: None)
        self._solver: dict[str, Solver | None] = {}
        self.samples = samples
        self.budget_ms = budget_ms
        self.clock_fraction = clock_fraction
        self.horizon = horizon
        self.explore = explore
        self.others_weight = others_weight
        self.last_samples = 0  # worlds searched by the last decision
        self.fallbacks = 0  # decisions made without search (no time, or a bad view)
        self.delegated = 0  # decisions left to the heuristic by the game's ``search_phases``
        self.plausible_worlds = 0  # worlds whose draw the heuristic found plausible
        self.overruled_not = 0  # searches whose best action was not sure enough (overrule_z)

    def heuristic(self, game_id: str) -> HeuristicBot | None:
        """The game's heuristic bot (made once per game), or None."""
        if game_id not in self._heuristic:
            self._heuristic[game_id] = self._heuristics(game_id)
        return self._heuristic[game_id]

    def solver(self, game_id: str) -> Solver | None:
        """The game's solver (made once per game) when its tuning gives it a reach, else
        None."""
        if TUNING.get(game_id, _DEFAULT_TUNING).exact_reach <= 0:
            return None
        if game_id not in self._solver:
            self._solver[game_id] = self._solvers(game_id)
        return self._solver[game_id]

    @staticmethod
    def searches(game_id: str, observation: Any) -> bool:
        """Whether the bot searches a decision on ``observation``: always, unless the game's
        tuning names ``search_phases`` and the observation's ``phase`` is not one of them."""
        phases = TUNING.get(game_id, _DEFAULT_TUNING).search_phases
        return not phases or str(getattr(observation, "phase", "")) in phases

    def budget_seconds(self, view: common_pb2.View) -> float:
        """This decision's time budget: ``budget_ms`` (scaled for the game, :data:`TUNING`),
        at most ``clock_fraction`` of the time the clock has left (inf: no limit)."""
        scale = TUNING.get(view.game, _DEFAULT_TUNING).budget_scale
        budget = float("inf") if self.budget_ms is None else self.budget_ms * scale / 1000
        if view.clock.deadline_unix_ms:
            budget = min(budget, view.clock.remaining_ms / 1000 * self.clock_fraction)
        return budget

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The legal action with the best mean rollout value."""
        started = time.perf_counter()
        legal = list(legal_actions)
        self.last_samples = 0
        # Keyed now, so that the bot's random stream does not depend on the view.
        key = self._random.randbytes(32)
        sample_seed = self._random.getrandbits(64)
        game = GAMES.get(view.game)
        if game is None or len(legal) <= 1:
            return self._random.choice(legal)
        try:
            observation = decode_view(view)
        except (ValueError, KeyError, EngineError):
            self.fallbacks += 1
            return self._random.choice(legal)
        seat = view.seat
        root = Rng(key)
        heuristic = self.heuristic(view.game)
        first = self._sample(game, observation, root, 0, seat, heuristic)
        actions = game.legal_actions(first, seat)
        if len(actions) != len(legal):  # the view and its decoding disagree: do not search
            self.fallbacks += 1
            return self._random.choice(legal)
        preferred = heuristic.act(observation, actions) if heuristic is not None else 0
        if heuristic is not None and not self.searches(view.game, observation):
            self.delegated += 1
            return legal[preferred]
        deadline = started + self.budget_seconds(view)

        solver = self.solver(view.game)
        same = (
            list(solver.representatives(observation, actions))
            if solver is not None
            else list(range(len(actions)))
        )
        tried = sorted(set(same))
        sums = [0.0] * len(actions)
        rows: list[list[float]] = []  # every counted world's values, for ``overrule_z``
        for number in range(self.samples):
            world = (
                first
                if number == 0
                else self._sample(game, observation, root, number, seat, heuristic)
            )
            found: dict[int, float] = {}
            for j in tried:
                try:
                    found[j] = self._rollout(
                        game, world, seat, actions[j], heuristic, sample_seed + number
                    )
                except EngineError:
                    found[j] = float("-inf")  # the server sent what the rules refuse
                if time.perf_counter() > deadline and len(found) < len(tried):
                    break
            if len(found) < len(tried):
                break  # out of time in the middle of a world: it is not counted
            values = [found[same[j]] for j in range(len(actions))]
            for j, value in enumerate(values):
                sums[j] += value
            rows.append(values)
            self.last_samples += 1
            if time.perf_counter() > deadline:
                break

        if self.last_samples == 0:
            self.fallbacks += 1
            return legal[preferred]
        best = max(range(len(actions)), key=lambda j: (sums[j], j == preferred, -j))
        z = TUNING.get(view.game, _DEFAULT_TUNING).overrule_z
        if z > 0 and best != preferred and not _sure(rows, best, preferred, z):
            self.overruled_not += 1
            return legal[preferred]
        return legal[best]

    def _sample(
        self,
        game: GameAny,
        observation: Any,
        root: Rng,
        number: int,
        seat: int,
        heuristic: HeuristicBot | None,
    ) -> Any:
        """World ``number``: the first of up to the game's ``plausible_tries`` draws that the
        heuristic's ``plausible`` finds every other seat's hand plausible in (the last draw
        when none is; a heuristic without the method, or tries of 0 or 1, takes the first)."""
        world = game.sample_world(observation, root.derive(f"sample {number}"))
        tries = TUNING.get(game.info.game_id, _DEFAULT_TUNING).plausible_tries
        plausible = getattr(heuristic, "plausible", None)
        if tries <= 1 or plausible is None or heuristic is None:
            return world
        scores = heuristic.running_scores(observation)
        if scores is None:
            return world
        others = [s for s in range(len(scores)) if s != seat]
        for attempt in range(1, tries + 1):
            if all(plausible(game.observe(world, s)) for s in others):
                self.plausible_worlds += 1
                return world
            if attempt < tries:
                world = game.sample_world(observation, root.derive(f"sample {number} {attempt}"))
        return world

    def _rollout(
        self,
        game: GameAny,
        world: Any,
        seat: int,
        action: Any,
        heuristic: HeuristicBot | None,
        seed: int,
    ) -> float:
        """Play ``action``, then the playout policy for every seat (module docstring, 3 and
        4); the rollout's value, higher is better."""
        chooser = random.Random(seed)
        tuning = TUNING.get(game.info.game_id, _DEFAULT_TUNING)
        horizon = self.horizon if tuning.horizon is None else tuning.horizon
        explore = self.explore if tuning.explore is None else tuning.explore
        scores = heuristic.running_scores(game.observe(world, None)) if heuristic else None
        seats = len(scores) if scores is not None else 0
        limit = (horizon + 1) * seats if scores is not None else game.max_actions(world)
        state = game.apply(world, seat, action)
        steps = 1
        solver = self.solver(game.info.game_id) if scores is not None else None
        while (outcome := game.outcome(state)) is None and steps < limit:
            exact = solver.points(state, tuning.exact_reach) if solver is not None else None
            if exact is not None:
                return self._value(game, seat, exact)
            mover = game.to_act(state)[0]
            legal = game.legal_actions(state, mover)
            if heuristic is None or chooser.random() < explore:
                index = chooser.randrange(len(legal))
            else:
                seen = game.observe(state, mover)
                if tuning.until_scored and heuristic.running_scores(seen) != scores:
                    break
                index = heuristic.act(seen, legal)
            state = game.apply(state, mover, legal[index])
            steps += 1
        if scores is None or heuristic is None:
            return outcome.utilities[seat] if outcome is not None else 0.0
        after = (
            outcome.scores
            if outcome is not None
            else heuristic.running_scores(game.observe(state, None))
        )
        if after is None:
            return 0.0
        return self._value(game, seat, [a - b for a, b in zip(after, scores, strict=True)])

    def _value(self, game: GameAny, seat: int, change: Sequence[int]) -> float:
        """A rollout's value from every seat's score change: the seat's own minus
        ``others_weight`` times the others' mean, oriented by ``lower_is_better``."""
        others = [change[s] for s in range(len(change)) if s != seat]
        value = change[seat] - self.others_weight * sum(others) / max(1, len(others))
        return -value if game.info.lower_is_better else value
