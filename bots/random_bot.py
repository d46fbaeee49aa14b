"""The random bot: a uniformly random legal action. Plays every game; a baseline."""

from __future__ import annotations

import random
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2


class RandomBot:
    """Picks uniformly among the legal actions the server sent."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """Any legal action, uniformly."""
        return self._random.choice(list(legal_actions))
