"""An Alles Klar? heuristic bot that reads only its view: one turn of look-ahead.

For every card it may play (and, on a double card, every numeral) it works out what the
play does to the trick, with the rules' own steps (same number, numeral, check):

* the trick is decided now: worth the trick's size when the bot takes it, minus the size
  divided by ``players - 1`` when another seat does (one opponent's gain is less of a loss
  at a bigger table); a blind trick is worth ``BLIND_LEAD`` (the bot leads next);
* otherwise the next player's answer is taken to be any Arabic number 1..11 with any
  numeral (none, or I..V) with equal chance, and the play is worth the mean of what that
  answer would decide (valued as above, an undecided answer as 0). With three or more rank
  cards still up no answer can decide, so that mean is 0 without working it out.

Ties go to playing a card without a numeral that still matters, then to keeping double
cards (they choose their numeral later), then to the stable order. The heuristic works on
engine values, so the same code answers a view (:meth:`choose`, through the wire's decoder)
and a seat's observation in a world the search bot samples (:meth:`act`): it is Alles
Klar?'s playout policy there.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import EngineError
from speeltafel.server.engine.games.alles_klar import (
    AllesAction,
    AllesObservation,
    card_number,
    card_set,
    numerals_of,
)
from speeltafel.server.wire.registry import action_from_proto, observation_from_view

BLIND_LEAD = 0.3  # what leading the next trick after a blind trick is worth
NUMBERS = tuple(range(1, 12))
ANSWER_NUMERALS = (0, 1, 2, 3, 4, 5)


def resolve(
    ups: dict[int, int], ranks: frozenset[int], seat: int, number: int, numeral: int
) -> tuple[dict[int, int], frozenset[int], str, int]:
    """A play on a trick given by its face-up cards (number to owner) and the face-up rank
    cards: the new face-up cards and ranks, and ``("won", winner)``, ``("blind", seat)`` or
    ``("open", -1)``."""
    ups = {**ups, number: seat}  # a repeated number replaces (turns down) the earlier card
    if numeral in ranks:
        ranks = ranks - {numeral}
    if len(ranks) == 1:
        (r,) = ranks
        if len(ups) >= r:
            return ups, ranks, "won", ups[sorted(ups, reverse=True)[r - 1]]
    if not ranks:
        return ups, ranks, "blind", seat
    return ups, ranks, "open", -1


class LookaheadBot:
    """One turn of look-ahead over the trick (module docstring)."""

    name = "lookahead"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    # ------------------------------------------------------------------ engine terms

    def act(self, observation: AllesObservation, legal_actions: Sequence[AllesAction]) -> int:
        """The index in ``legal_actions`` of the play it makes."""
        obs = observation
        if not legal_actions or obs.seat is None:
            return 0
        seat = obs.seat
        ups = {
            card_number(p.card): p.seat for p, up in zip(obs.trick, obs.face_up, strict=True) if up
        }
        ranks = frozenset(r + 1 for r in range(5) if obs.ranks_up[r])
        size = len(obs.trick) + 1
        nxt = self._next_seat(obs)

        def worth(result: str, who: int, cards: int) -> float:
            if result == "won":
                return float(cards) if who == seat else -cards / max(1, obs.players - 1)
            if result == "blind":
                return BLIND_LEAD if who == seat else 0.0
            return 0.0

        def value(index: int) -> tuple[float, int, int, int]:
            action = legal_actions[index]
            printed = numerals_of(obs.numerals, action.card)
            numeral = action.numeral or (printed[0] if printed else 0)
            after, left, result, who = resolve(ups, ranks, seat, card_number(action.card), numeral)
            if result != "open":
                score = worth(result, who, size)
            elif nxt is None or nxt == seat or len(left) > 2:
                score = 0.0  # with three rank cards up no single answer decides the trick
            else:
                # A numeral whose rank card is down acts as none: weigh "none" by its share.
                weights = [(0, (len(ANSWER_NUMERALS) - len(left)) / len(ANSWER_NUMERALS))]
                weights += [(y, 1 / len(ANSWER_NUMERALS)) for y in sorted(left)]
                total = 0.0
                for x in NUMBERS:
                    for y, weight in weights:
                        _, _, res2, who2 = resolve(after, left, nxt, x, y)
                        total += weight * worth(res2, who2, size + 1)
                score = total / len(NUMBERS)
            wasted = 0 if numeral in ranks else 1
            double = 1 if card_set(action.card) == "W" else 0
            return (score, wasted, -double, -index)

        return max(range(len(legal_actions)), key=value)

    def running_scores(self, observation: AllesObservation) -> tuple[int, ...]:
        """Every seat's cards won so far (what the outcome would score now)."""
        return observation.scores

    # ------------------------------------------------------------------ the parts

    @staticmethod
    def _next_seat(obs: AllesObservation) -> int | None:
        """The seat that plays after the bot if the trick goes on."""
        assert obs.seat is not None
        for step in range(1, obs.players + 1):
            other = (obs.seat + step) % obs.players
            if other == obs.seat:
                return other if len(obs.hand) > 1 else None
            if obs.hand_sizes[other] or obs.drawn[other]:
                return other
        return None

    # ------------------------------------------------------------------ the view

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The action :meth:`act` picks on the view's decoded observation."""
        legal = list(legal_actions)
        if view.WhichOneof("game_view") != "alles_klar" or not view.HasField("seat"):
            return self._random.choice(legal)
        try:
            observation = observation_from_view(view.game, view)
            actions = [action_from_proto(view.game, a) for a in legal]
        except (ValueError, KeyError, EngineError):
            return self._random.choice(legal)
        return legal[self.act(observation, actions)]
