"""A Take 5 heuristic bot that reads only its view: avoid rows that are about to be taken.

For every card in hand it predicts where the card would go if it were revealed alone:

* no row ends below it: it must take a row, so its cost is the cheapest row's heads;
* its row already holds five cards: its cost is that row's heads;
* otherwise the risk grows with the row's length and with the gap to the row's end (other
  seats' cards may land in between and fill the row first).

It plays the card with the lowest cost (ties: the smallest gap, then the lowest card). When
it must choose a row it takes the one with the fewest heads. It plays Take 5 only (the
registry says so).

The heuristic works on engine values (:func:`card_cost`), so the same code answers a view
(:meth:`GapBot.choose`) and a seat's observation in a world the search bot samples
(:meth:`GapBot.act`): it is Take 5's playout policy there.

``GreedyBot`` is the same without the risk estimate: it only avoids certain penalties.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.games.take5 import (
    ROW_LIMIT,
    ActionKind,
    Phase,
    Take5Action,
    Take5Observation,
    total_heads,
)

Rows = Sequence[Sequence[int]]


def card_cost(card: int, rows: Rows, weigh_risk: bool = True) -> tuple[float, int, int]:
    """How likely ``card`` takes a row (lower is better), then its gap, then the card."""
    target: Sequence[int] | None = None
    end = 0
    for row in rows:
        last = row[-1]
        if end < last < card:
            target, end = row, last
    if target is None:
        return (float(min(total_heads(row) for row in rows)), 0, card)
    gap = card - end
    if len(target) >= ROW_LIMIT:
        return (float(total_heads(target)), gap, card)
    if not weigh_risk:
        return (0.0, gap, card)
    # The fuller the row and the wider the gap, the likelier others fill it first.
    fill = len(target) / ROW_LIMIT
    return (total_heads(target) * fill * fill * min(1.0, gap / 10), gap, card)


def cheapest_row(rows: Rows) -> int:
    """The row (numbered from 1) with the fewest heads, ties to the lowest number."""
    return min(range(len(rows)), key=lambda r: (total_heads(rows[r]), r)) + 1


class GapBot:
    """Plays the card least likely to take a row (see the module docstring)."""

    name = "gap"
    weigh_risk = True

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    # ------------------------------------------------------------------ engine terms

    def act(self, observation: Take5Observation, legal_actions: Sequence[Take5Action]) -> int:
        """The index in ``legal_actions`` of the cheapest card, or of the cheapest row."""
        rows = observation.rows
        if observation.phase is Phase.ROW_CHOICE:
            wanted = Take5Action(ActionKind.ROW, cheapest_row(rows))
        else:
            cards = [a.value for a in legal_actions if a.kind is ActionKind.SELECT]
            if not cards:
                return 0
            best = min(cards, key=lambda c: card_cost(c, rows, self.weigh_risk))
            wanted = Take5Action(ActionKind.SELECT, best)
        try:
            return list(legal_actions).index(wanted)
        except ValueError:
            return 0

    def running_scores(self, observation: Take5Observation) -> tuple[int, ...]:
        """Every seat's heads so far in the match: finished deals plus the current pile."""
        return tuple(
            total + total_heads(pile)
            for total, pile in zip(observation.totals, observation.penalties, strict=True)
        )

    # ------------------------------------------------------------------ the view

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The cheapest card, or the cheapest row."""
        legal = list(legal_actions)
        if view.WhichOneof("game_view") != "take5":
            return self._random.choice(legal)
        table = view.take5
        rows = [tuple(card.number for card in row.cards) for row in table.rows]
        if table.phase == take5_pb2.TAKE5_PHASE_ROW_CHOICE:
            row = cheapest_row(rows)
            for action in legal:
                if action.take5.choose_row.row == row:
                    return action
        selects = [a for a in legal if a.take5.WhichOneof("kind") == "select"]
        if not selects:
            return legal[0]
        return min(selects, key=lambda a: card_cost(a.take5.select.card, rows, self.weigh_risk))


class GreedyBot(GapBot):
    """Avoids only certain penalties; otherwise plays the card closest to its row."""

    name = "greedy"
    weigh_risk = False
