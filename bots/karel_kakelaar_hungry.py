"""A Karel Kakelaar heuristic bot that reads only its view: bid for the row by expected gain.

Bids. Every other hand follows from the public history (:func:`known_hands`), so for each
other bidder the bot takes its bid to be any of its chickens and worms with equal chance
(the robot: any robot chicken not yet turned; a seat that has no card to bid bids 0). For
each card it may bid it works out the chance of every rank (ties by the tractor distance,
as the rules break them) and plays the card with the best expected

    worth of the row card at that rank  -  cost of the bid card

where a worm is worth its value and a mother hen what it could bring back from the bot's
own discard pile (its best two cards, the bid card included, counted at 80%, less when it
already holds a hen); a bid worm costs its value (85% when a hen could bring it back), a
bid chicken ``CHICKEN_KEEP`` of its value while rounds remain (it is future bidding power)
and nothing in the last round.

Mother hens. It plays the take with the most worth (worms at their value, chickens at
``CHICKEN_KEEP`` of theirs while rounds remain) when that is at least ``HEN_THRESHOLD``
(lower when it holds more hens than rounds left to play them), and in the last round
whenever the take holds a worm; otherwise it skips.

The heuristic works on engine values, so the same code answers a view (:meth:`choose`,
through the wire's decoder) and a seat's observation in a world the search bot samples
(:meth:`act`): it is Karel Kakelaar's playout policy there.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import EngineError
from speeltafel.server.engine.games.karel_kakelaar import (
    CARDS,
    ActionKind,
    CardKind,
    KarelAction,
    KarelObservation,
    Phase,
    biddable,
    known_hands,
    robot_cards,
    worm_points,
)
from speeltafel.server.wire.registry import action_from_proto, observation_from_view

CHICKEN_KEEP = 0.3  # what a chicken in hand is worth, per point of value, while rounds remain
HEN_SHARE = 0.8  # how much of its best take a mother hen won now is worth
WORM_BACK = 0.85  # what a bid worm costs when a hen in hand could bring it back
HEN_THRESHOLD = 5.0  # the least worth of a take worth a mother hen before the last round


def _rank_chances(beat: Sequence[float]) -> list[float]:
    """The chance that exactly ``r`` bidders rank above the bot, for every ``r``."""
    chances = [1.0]
    for p in beat:
        nxt = [0.0] * (len(chances) + 1)
        for r, c in enumerate(chances):
            nxt[r] += c * (1 - p)
            nxt[r + 1] += c * p
        chances = nxt
    return chances


class HungryBot:
    """Bids for the row by expected gain; plays mother hens for good takes (module docstring)."""

    name = "hungry"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    # ------------------------------------------------------------------ engine terms

    def act(self, observation: KarelObservation, legal_actions: Sequence[KarelAction]) -> int:
        """The index in ``legal_actions`` of the bid or mother-hen decision it plays."""
        if not legal_actions:
            return 0
        if observation.phase is Phase.MOTHER_HEN:
            return self._mother_hen(observation, legal_actions)
        bids = [i for i, a in enumerate(legal_actions) if a.kind is ActionKind.BID]
        if not bids or observation.seat is None:
            return 0
        return max(bids, key=lambda i: self._bid_gain(observation, legal_actions[i].card))

    def running_scores(self, observation: KarelObservation) -> tuple[int, ...]:
        """Every player's worms in hand so far (what the outcome would score now)."""
        return tuple(worm_points(hand) for hand in known_hands(observation))

    # ------------------------------------------------------------------ the parts

    def _keep(self, card: str, last_round: bool) -> float:
        """What a card in hand is worth to the bot."""
        info = CARDS[card]
        if info.kind is CardKind.WORM:
            return float(info.value)
        if info.kind is CardKind.CHICKEN and not last_round:
            return CHICKEN_KEEP * info.value
        return 0.0

    def _bid_gain(self, obs: KarelObservation, card: str) -> float:
        seat = obs.seat
        assert seat is not None
        last_round = obs.round >= obs.rounds
        hands = known_hands(obs)
        bidders = obs.players + (1 if obs.robot else 0)
        value = CARDS[card].value
        mine = (seat - obs.tractor) % bidders
        beat: list[float] = []
        for other in range(bidders):
            if other == seat:
                continue
            if other < obs.players:
                values = [CARDS[c].value for c in hands[other] if biddable(c)] or [0]
            else:
                turned = {c for r in obs.history for c in r.bids[obs.players :] if c}
                values = [CARDS[c].value for c in robot_cards(obs.players) if c not in turned]
            ahead = (other - obs.tractor) % bidders < mine
            above = sum(1 for v in values if v > value or (v == value and ahead))
            beat.append(above / len(values))
        chances = _rank_chances(beat)
        holds_hen = any(CARDS[c].kind is CardKind.MOTHER_HEN for c in obs.hand)
        pile = [*obs.discards[seat], card]
        best_two = sorted((self._keep(c, last_round) for c in pile), reverse=True)[:2]
        hen_worth = max(1.0, HEN_SHARE * sum(best_two)) * (0.6 if holds_hen else 1.0)
        gain = 0.0
        for rank, chance in enumerate(chances):
            row_card = obs.row[rank]
            info = CARDS[row_card]
            worth = float(info.value) if info.kind is CardKind.WORM else hen_worth
            gain += chance * worth
        if CARDS[card].kind is CardKind.WORM:
            cost = value * (WORM_BACK if holds_hen else 1.0)
        else:
            cost = self._keep(card, last_round)
        return gain - cost

    def _mother_hen(self, obs: KarelObservation, legal: Sequence[KarelAction]) -> int:
        last_round = obs.round >= obs.rounds
        plays = [i for i, a in enumerate(legal) if a.kind is ActionKind.PLAY_MOTHER_HEN]
        skip = next((i for i, a in enumerate(legal) if a.kind is ActionKind.SKIP_MOTHER_HEN), 0)
        if not plays:
            return skip

        def worth(index: int) -> float:
            return sum(self._keep(c, last_round) for c in legal[index].take)

        best = max(plays, key=worth)
        if last_round:
            has_worm = any(CARDS[c].kind is CardKind.WORM for c in legal[best].take)
            return best if has_worm else skip
        hens = sum(1 for c in obs.hand if CARDS[c].kind is CardKind.MOTHER_HEN)
        rounds_left = obs.rounds - obs.round + 1  # mother-hen phases left, this one included
        threshold = HEN_THRESHOLD if hens < rounds_left else 0.5
        return best if worth(best) >= threshold else skip

    # ------------------------------------------------------------------ the view

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The action :meth:`act` picks on the view's decoded observation."""
        legal = list(legal_actions)
        if view.WhichOneof("game_view") != "karel_kakelaar" or not view.HasField("seat"):
            return self._random.choice(legal)
        try:
            observation = observation_from_view(view.game, view)
            actions = [action_from_proto(view.game, a) for a in legal]
        except (ValueError, KeyError, EngineError):
            return self._random.choice(legal)
        return legal[self.act(observation, actions)]
