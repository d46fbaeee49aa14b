"""A Take 5 heuristic bot that reads only its view: avoid rows that are about to be taken.

For every card in hand it predicts where the card would go if it were revealed alone:

* no row ends below it: it must take a row, so its cost is the cheapest row's heads;
* its row already holds five cards: its cost is that row's heads;
* otherwise the risk grows with the row's length and with the gap to the row's end (other
  seats' cards may land in between and fill the row first).

It plays the card with the lowest cost (ties: the smallest gap, then the lowest card). When
it must choose a row it takes the one with the fewest heads. In any other game it plays a
random legal action.

``GreedyBot`` is the same without the risk estimate: it only avoids certain penalties.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2, take5_pb2

ROW_LIMIT = 5


class GapBot:
    """Plays the card least likely to take a row (see the module docstring)."""

    name = "gap"
    weigh_risk = True

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The cheapest card, or the cheapest row."""
        if view.WhichOneof("game_view") != "take5":
            return self._random.choice(list(legal_actions))
        table = view.take5
        rows = list(table.rows)
        if table.phase == take5_pb2.TAKE5_PHASE_ROW_CHOICE:
            cheapest = min(rows, key=lambda r: (r.heads, r.number))
            for action in legal_actions:
                if action.take5.choose_row.row == cheapest.number:
                    return action
        return min(legal_actions, key=lambda a: self._card_cost(a.take5.select.card, rows))

    def _card_cost(self, card: int, rows: Sequence[take5_pb2.Take5Row]) -> tuple[float, int, int]:
        below = [r for r in rows if r.cards[-1].number < card]
        if not below:
            return (float(min(r.heads for r in rows)), 0, card)
        row = max(below, key=lambda r: r.cards[-1].number)
        gap = card - row.cards[-1].number
        if len(row.cards) >= ROW_LIMIT:
            return (float(row.heads), gap, card)
        if not self.weigh_risk:
            return (0.0, gap, card)
        # The fuller the row and the wider the gap, the likelier others fill it first.
        risk = row.heads * (len(row.cards) / ROW_LIMIT) ** 2 * min(1.0, gap / 10)
        return (risk, gap, card)


class GreedyBot(GapBot):
    """Avoids only certain penalties; otherwise plays the card closest to its row."""

    name = "greedy"
    weigh_risk = False
