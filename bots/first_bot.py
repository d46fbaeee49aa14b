"""The first-legal-action bot: always the first action the server lists.

The engine lists actions in a stable order (Take 5: lowest card first, then row 1), so this
bot is deterministic and plays every game: a baseline that needs no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2


class FirstBot:
    """Plays ``legal_actions[0]``."""

    name = "first"

    def __init__(self, seed: int | None = None) -> None:
        del seed  # deterministic

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The first legal action."""
        return legal_actions[0]
