"""A PettingZoo AEC environment for every speeltafel game (``pip install 'speeltafel[rl]'``).

::

    from speeltafel.rl.pettingzoo_env import env

    table = env("take5", seats=3, seed=1)
    table.reset(seed=42)
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, info = table.last()
        if terminated or truncated:
            action = None
        else:  # any policy; this one is random among the legal actions
            action = table.action_space(agent).sample(observation["action_mask"])
        table.step(action)

The rules come from the engine's library facade (:mod:`speeltafel.server.engine.api`), so
every game of the engine's registry is here with no code of its own. This module (and
the extra's pettingzoo, gymnasium and numpy) is imported by nobody else: the server, the
SDK and the engine never load it.

Decisions:

* **Agents** are ``seat_0`` .. ``seat_{n-1}``. ``agent_selection`` is the lowest seat that
  must act. **Sealed simultaneous phases** (Take 5's card choices, Sneaky Bastard's bids,
  ...) become consecutive AEC turns in seat order: each seat commits in its turn, and its
  observation is the engine's ``observe(state, seat)``, which shows of an earlier seat's
  sealed choice only that it was made (the engine's rule for every observation). So no
  seat ever sees another's choice before the reveal, whatever order the turns take.
* **Actions**: ``Discrete(max_actions)``; action ``i`` is the ``i``-th legal action in the
  engine's stable order (Take 5 lists the hand lowest card first, so ``i`` is "my
  ``i``-th lowest card"). Games have no fixed, enumerable catalogue of actions in
  general (Karel Kakelaar's mother hen takes any set of cards: thousands of texts), so the
  index into the legal list is what can be fixed for every game without game-specific
  code. The ``action_mask`` marks the indices that are legal now.
  ``max_actions`` defaults to a bound measured once per game, options and seat count by
  seeded random playouts (twice the largest legal list seen, at least 8); should a
  position ever list more, the agent can choose among the first ``max_actions`` only
  (never an illegal one) and a ``RuntimeWarning`` says so once. Pass ``max_actions`` to
  fix it yourself. :meth:`SpeeltafelEnv.action_text` names an index's action.
* **Observations**: ``{"observation": float32 vector, "action_mask": int8 vector}``. The
  vector is a generic encoding of the seat's observation (``observe(state, seat)``, with
  its public history): every leaf of the observation, ``path=value`` (list positions kept
  for lists of lists, dropped for lists of plain values such as a hand), counted into
  ``observation_size`` buckets by a stable hash (BLAKE2b, the same in every process).
  A learner that wants the game's own structure uses ``featurize`` (observation value to
  a vector of ``observation_size``) or reads the observation value itself from
  :meth:`SpeeltafelEnv.engine_observation`.
* **Rewards** are 0 until the end, then the outcome's zero-sum utilities in [-1, 1]
  ((seats beaten - seats that beat you) / (seats - 1)). Every agent terminates together
  when the match ends; no truncation (every game is finite), unless ``max_steps`` is
  given.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import warnings
from collections.abc import Callable, Mapping
from enum import Enum
from functools import cache
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from speeltafel.server.engine import api

DEFAULT_OBSERVATION_SIZE = 1024
PROBE_PLAYOUTS = 12
MIN_ACTIONS = 8

Featurize = Callable[[Any], NDArray[np.float32]]


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _leaves(value: Any, path: str, out: list[str]) -> None:
    """``path=value`` of every leaf of an engine value (dataclasses by field name, enums by
    value, as :func:`speeltafel.server.engine.api.plain` writes them) into ``out``."""
    # The common cases first: most leaves are plain scalars.
    if isinstance(value, Enum):
        out.append(f"{path}={value.value}")
    elif isinstance(value, str | int | float) or value is None:
        out.append(f"{path}={value}")
    elif isinstance(value, tuple | list):
        flat = all(isinstance(item, str | int | float | Enum) for item in value)
        for index, item in enumerate(value):
            _leaves(item, f"{path}.*" if flat else f"{path}.{index}", out)
        out.append(f"{path}#={len(value)}")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for name in _field_names(type(value)):
            _leaves(getattr(value, name), f"{path}.{name}" if path else name, out)
    elif isinstance(value, Mapping):
        for key in sorted(value, key=str):
            _leaves(value[key], f"{path}.{key}", out)
    elif isinstance(value, bytes):
        out.append(f"{path}={value.hex()}")
    else:
        out.append(f"{path}={value}")


@cache
def _bucket(feature: str, size: int) -> int:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % size


def hashed_features(observation: Any, size: int = DEFAULT_OBSERVATION_SIZE) -> NDArray[np.float32]:
    """The default encoding of an observation value (see the module docstring)."""
    features: list[str] = []
    _leaves(observation, "", features)
    buckets = [_bucket(feature, size) for feature in features]
    return np.bincount(buckets, minlength=size).astype(np.float32)


@cache
def measured_max_actions(game_id: str, seats: int, options: tuple[tuple[str, str], ...]) -> int:
    """Twice the longest legal-action list of seeded random playouts (at least 8)."""
    longest = 1
    for playout in range(PROBE_PLAYOUTS):
        match = api.new_match(game_id, seats, options=dict(options), seed=playout)
        chooser = random.Random(playout)
        while not match.is_over:
            seat = match.to_act[0]
            legal = match.legal_actions(seat)
            longest = max(longest, len(legal))
            match = match.apply(seat, chooser.choice(legal))
    return max(MIN_ACTIONS, 2 * longest)


class SpeeltafelEnv(AECEnv[str, dict[str, NDArray[Any]], int]):  # type: ignore[misc]
    """One game of speeltafel as a PettingZoo AEC environment (module docstring)."""

    metadata = {"render_modes": ["ansi"], "name": "speeltafel_v0", "is_parallelizable": False}

    def __init__(
        self,
        game_id: str,
        seats: int | None = None,
        *,
        options: Mapping[str, str] | None = None,
        seed: int = 0,
        max_actions: int | None = None,
        observation_size: int = DEFAULT_OBSERVATION_SIZE,
        featurize: Featurize | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.spec_ = api.game(game_id)  # InvalidOptions for an unknown game
        self.game_id = game_id
        self.options = self.spec_.canonical_options(options)
        low, high = self.spec_.seats_for(self.options)
        self.seats = low if seats is None else seats
        if not low <= self.seats <= high:
            raise api.InvalidOptions(f"{game_id} takes {low}-{high} seats, not {self.seats}")
        self.max_actions = max_actions or measured_max_actions(
            game_id, self.seats, tuple(sorted(self.options.items()))
        )
        self.observation_size = observation_size
        self._featurize: Featurize = featurize or (
            lambda observation: hashed_features(observation, observation_size)
        )
        self.max_steps = max_steps
        self.render_mode = render_mode
        self._seeds = random.Random(seed)
        self._warned = False
        self.possible_agents = [f"seat_{seat}" for seat in range(self.seats)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.action_spaces = {a: spaces.Discrete(self.max_actions) for a in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(
                        low=-np.inf, high=np.inf, shape=(observation_size,), dtype=np.float32
                    ),
                    "action_mask": spaces.Box(
                        low=0, high=1, shape=(self.max_actions,), dtype=np.int8
                    ),
                }
            )
            for agent in self.possible_agents
        }
        self.match: api.Match | None = None
        self.steps = 0

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the AEC cycle

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match: dealt from ``seed``, or from the environment's own seeded sequence."""
        if seed is None:
            seed = self._seeds.randrange(2**63)
        else:
            self._seeds = random.Random(seed)
        self.match = api.new_match(self.game_id, self.seats, options=self.options, seed=seed)
        self.steps = 0
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.match.to_act[0]]

    def step(self, action: int | None) -> None:
        """Play the agent's action (an index into its legal actions; None once it is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self._current()
        seat = self._seat[agent]
        legal = match.legal_actions(seat)
        if action is None or not 0 <= int(action) < min(len(legal), self.max_actions):
            raise ValueError(
                f"{agent} has {min(len(legal), self.max_actions)} legal actions now; "
                f"{action!r} is not one of their indices (see the action mask)"
            )
        self._cumulative_rewards[agent] = 0.0
        self.match = match = match.apply(seat, legal[int(action)])
        self.steps += 1
        self.rewards = {a: 0.0 for a in self.agents}
        outcome = match.outcome
        if outcome is not None:
            for a in self.agents:
                self.rewards[a] = float(outcome.utilities[self._seat[a]])
                self.terminations[a] = True
        elif self.max_steps is not None and self.steps >= self.max_steps:
            for a in self.agents:
                self.truncations[a] = True
        if outcome is None and not any(self.truncations.values()):
            self.agent_selection = self.possible_agents[match.to_act[0]]
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        """The agent's observation vector and its action mask (all 0 when not its turn)."""
        match = self._current()
        seat = self._seat[agent]
        vector = np.asarray(self._featurize(match.observe(seat)), dtype=np.float32)
        mask = np.zeros(self.max_actions, dtype=np.int8)
        legal = match.legal_actions(seat) if not match.is_over else ()
        if len(legal) > self.max_actions and not self._warned:
            self._warned = True
            warnings.warn(
                f"{self.game_id}: {len(legal)} legal actions, more than max_actions="
                f"{self.max_actions}; only the first {self.max_actions} can be chosen",
                RuntimeWarning,
                stacklevel=2,
            )
        mask[: min(len(legal), self.max_actions)] = 1
        return {"observation": vector, "action_mask": mask}

    # ------------------------------------------------------------------ beyond PettingZoo

    def action_text(self, agent: str, index: int) -> str:
        """The canonical text of the agent's action ``index`` now (``"select:17"``)."""
        return self._current().legal_actions(self._seat[agent])[index]

    def engine_observation(self, agent: str) -> Any:
        """The engine's observation value for the agent (what the vector encodes)."""
        return self._current().observe(self._seat[agent])

    def render(self) -> str | None:
        """The public observation as plain data (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        return repr(api.plain(self._current().observe(None)))

    def close(self) -> None:
        """Nothing to release: the match is a value."""

    def _current(self) -> api.Match:
        if self.match is None:
            raise RuntimeError("call reset() first")
        return self.match


def raw_env(game_id: str, seats: int | None = None, **kwargs: Any) -> SpeeltafelEnv:
    """The environment without PettingZoo's checking wrappers."""
    return SpeeltafelEnv(game_id, seats, **kwargs)


def env(game_id: str, seats: int | None = None, **kwargs: Any) -> AECEnv:
    """The environment in PettingZoo's usual wrappers (order enforcing, no illegal action)."""
    wrapped: AECEnv = wrappers.AssertOutOfBoundsWrapper(raw_env(game_id, seats, **kwargs))
    return wrappers.OrderEnforcingWrapper(wrapped)


def games() -> tuple[str, ...]:
    """Every game id an environment can be made for."""
    return tuple(spec.game_id for spec in api.list_games())
