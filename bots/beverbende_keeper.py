"""A Beverbende heuristic bot that reads only its view: keep low cards, look before knocking.

Every card it cannot see counts at the mean of the number cards it has not seen (the
deck's numbers less the discard pile, the row cards it knows and the card it holds); a
special card in its own row counts at that mean too (it will be replaced at the end).
Its *worst* position is the one with the highest estimate (a known card before an unknown
one of the same estimate).

* Turn start: take the discard pile's top number card when it improves the worst position
  by at least ``TAKE_GAIN``; otherwise draw.
* A drawn number card replaces the worst position when it improves it by at least
  ``SWAP_GAIN`` (the second card of draw twice always goes where it hurts least); otherwise
  it is discarded.
* Peek: an unknown own card, the middle first. Swap: its worst card for the lowest other
  card it knows, or for an unknown card of the leading opponent, when that gains at least
  ``SWAP_GAIN``. Draw twice: always used. The first draw-twice card is kept by the swap
  rule, else rejected.
* Knock when its estimated row is at most ``KNOCK_AT`` and lower than every other row's
  estimate, with at most one unknown card of its own.

Running scores (for the search bot's rollouts): the totals so far plus every row's
estimate as the observation shows it, so that ending a round early is neither free nor
penalised by itself.

The heuristic works on engine values, so the same code answers a view (:meth:`choose`,
through the wire's decoder) and a seat's observation in a world the search bot samples
(:meth:`act`): it is Beverbende's playout policy there.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import EngineError
from speeltafel.server.engine.games.beverbende import (
    NUMBERS,
    ActionKind,
    BeverAction,
    BeverObservation,
    Phase,
    deck_cards,
    is_number,
)
from speeltafel.server.wire.registry import action_from_proto, observation_from_view

TAKE_GAIN = 2.0
SWAP_GAIN = 1.0
KNOCK_AT = 7.0


class KeeperBot:
    """Keeps low cards, peeks at the unknown, knocks when ahead (module docstring)."""

    name = "keeper"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    # ------------------------------------------------------------------ engine terms

    def running_scores(self, observation: BeverObservation) -> tuple[int, ...]:
        """The totals of the finished rounds plus the current round's rows as the
        observation shows them (an unknown card at the mean of the unseen numbers), rounded:
        what the game would score if the round ended now, as far as the viewer can tell."""
        obs = observation
        if obs.phase is Phase.OVER:
            return obs.totals
        mean = _unseen_mean(obs)
        return tuple(
            total + round(sum(_estimate(card, mean) for card in row))
            for total, row in zip(obs.totals, obs.rows, strict=True)
        )

    def act(self, observation: BeverObservation, legal_actions: Sequence[BeverAction]) -> int:
        """The index in ``legal_actions`` of the action it plays."""
        if not legal_actions or observation.seat is None:
            return 0
        obs, legal = observation, list(legal_actions)
        me = obs.seat
        assert me is not None
        mean = _unseen_mean(obs)
        est = [_estimate(card, mean) for card in obs.rows[me]]
        worst = max(range(3), key=lambda p: (est[p], obs.rows[me][p] != ""))

        def index(action: BeverAction) -> int:
            return legal.index(action) if action in legal else 0

        phase = obs.phase
        if phase is Phase.KNOCK_DECISION:
            mine = sum(est)
            unknown = sum(1 for c in obs.rows[me] if c == "")
            others = [
                sum(_estimate(c, mean) for c in row) for s, row in enumerate(obs.rows) if s != me
            ]
            knock = mine <= KNOCK_AT and unknown <= 1 and all(mine < o for o in others)
            return index(BeverAction(ActionKind.KNOCK if knock else ActionKind.NO_KNOCK))
        if phase is Phase.TURN_START:
            top = obs.discard[-1] if obs.discard else ""
            if is_number(top) and est[worst] - int(top) >= TAKE_GAIN:
                return index(BeverAction(ActionKind.TAKE_DISCARD, worst))
            return index(BeverAction(ActionKind.DRAW_DECK))
        card = obs.drawn
        if is_number(card):
            value = int(card)
            if phase is Phase.DRAW_TWICE_1:
                if est[worst] - value >= SWAP_GAIN:
                    return index(BeverAction(ActionKind.KEEP, worst))
                return index(BeverAction(ActionKind.REJECT))
            if phase is Phase.DRAW_TWICE_2:
                return index(BeverAction(ActionKind.SWAP_DRAWN, worst))
            if est[worst] - value >= SWAP_GAIN:
                return index(BeverAction(ActionKind.SWAP_DRAWN, worst))
            return index(BeverAction(ActionKind.DISCARD_DRAWN))
        if phase is Phase.DRAW_TWICE_1:
            return index(BeverAction(ActionKind.REJECT))
        if card == "draw_twice":
            return index(BeverAction(ActionKind.DRAW_TWICE))
        if card == "peek":
            unseen = [p for p in (1, 0, 2) if obs.rows[me][p] == ""]
            if unseen:
                return index(BeverAction(ActionKind.PEEK, unseen[0]))
            return index(BeverAction(ActionKind.DISCARD_DRAWN))
        if card == "swap":
            target = self._swap_target(obs, mean)
            if target is not None and est[worst] - target[2] >= SWAP_GAIN:
                return index(BeverAction(ActionKind.SWAP, worst, target[0], target[1]))
        return index(BeverAction(ActionKind.DISCARD_DRAWN))

    def _swap_target(self, obs: BeverObservation, mean: float) -> tuple[int, int, float] | None:
        """The other card to take: the lowest known number, else an unknown card of the
        opponent with the lowest total."""
        me = obs.seat
        known = [
            (s, p, float(int(c)))
            for s, row in enumerate(obs.rows)
            if s != me
            for p, c in enumerate(row)
            if is_number(c)
        ]
        if known:
            best = min(known, key=lambda t: t[2])
            if best[2] < mean:
                return best
        others = [s for s in range(obs.players) if s != me]
        leader = min(others, key=lambda s: obs.totals[s] if obs.totals else 0)
        hidden = [p for p, c in enumerate(obs.rows[leader]) if c == ""]
        if hidden:
            return (leader, hidden[0], mean)
        return min(known, key=lambda t: t[2]) if known else None

    # ------------------------------------------------------------------ the view

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The action :meth:`act` picks on the view's decoded observation."""
        legal = list(legal_actions)
        if view.WhichOneof("game_view") != "beverbende" or not view.HasField("seat"):
            return self._random.choice(legal)
        try:
            observation = observation_from_view(view.game, view)
            actions = [action_from_proto(view.game, a) for a in legal]
        except (ValueError, KeyError, EngineError):
            return self._random.choice(legal)
        return legal[self.act(observation, actions)]


def _unseen_mean(obs: BeverObservation) -> float:
    """The mean of the number cards the viewer has not seen."""
    unseen = Counter(c for c in deck_cards(obs.number_counts) if is_number(c))
    seen = [*obs.discard, *(c for row in obs.rows for c in row), obs.drawn]
    unseen.subtract(c for c in seen if is_number(c))
    cards = [int(c) for c in unseen.elements()]
    if not cards:
        return sum(int(n) for n in NUMBERS) / len(NUMBERS)
    return sum(cards) / len(cards)


def _estimate(card: str, mean: float) -> float:
    return float(int(card)) if is_number(card) else mean
