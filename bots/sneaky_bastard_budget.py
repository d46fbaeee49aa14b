"""A Sneaky Bastard heuristic bot that reads only its view: a budget per house, and a sneak
when the pot is worth stealing.

* **Budget.** A house is worth its share of the house value still to come (this house and
  the houses not offered yet); the bot is willing to pay that share of its money, times
  ``eagerness``. It bids the least that beats the highest other house bid (money only,
  never its houses) while that stays within the budget.
* **Sneak.** Priced out, it plays its Sneaky Bastard card when the leading house bid is at
  least ``steal_at`` and it can take the lead among the sneaks for at most ``margin`` of
  that bid (for nothing at all when no one else sneaks); a sneak raises on the same terms
  (against the buyer's price once the house is sold) and passes otherwise.
* **Forced.** As the forced bidder it lays its smallest cards until it reaches the minimum.

A turn is played in steps (lay a card, then complete): at every step the bot works out its
plan again from the view (what it has laid counts), lays the largest card of the cheapest
cover of what is still missing, and completes once the plan's total is reached. It plays
Sneaky Bastard only (the registry says so); it works on engine values, so the same code is
the search bot's playout policy.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.games.sneaky_bastard import (
    ActionKind,
    Card,
    CardKind,
    Phase,
    SneakyBastardAction,
    SneakyBastardObservation,
    Status,
    house_total,
    known_hands,
    total,
)
from speeltafel.server.wire.registry import action_from_proto, observation_from_view


def cover(cards: Sequence[Card], need: int) -> list[Card] | None:
    """Cards of ``cards`` whose total is at least ``need``, overpaying little (greedy: the
    smallest single card that covers the rest, else the largest and go on); None if even
    all of them fall short."""
    if need <= 0:
        return []
    left = sorted(cards, key=lambda c: c.value)
    chosen: list[Card] = []
    while need > 0:
        if not left:
            return None
        single = next((c for c in left if c.value >= need), None)
        card = single if single is not None else left[-1]
        chosen.append(card)
        left.remove(card)
        need -= card.value
    return chosen


class BudgetBot:
    """Bids within a per-house budget; sneaks on big pots (see the module docstring)."""

    name = "budget"
    eagerness = 1.3
    steal_at = 100
    margin = 0.6

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    # ------------------------------------------------------------------ engine terms

    def act(
        self, observation: SneakyBastardObservation, legal_actions: Sequence[SneakyBastardAction]
    ) -> int:
        """The index in ``legal_actions`` of the next step of its plan."""
        legal = list(legal_actions)
        kind, target = self._plan(observation)
        obs = observation
        seat = obs.seat if obs.seat is not None else 0
        laid = obs.bids[seat] + total(obs.pending)
        wanted: SneakyBastardAction | None = None
        if kind is ActionKind.PASS:
            wanted = SneakyBastardAction(ActionKind.PASS)
        elif laid >= target and (kind is ActionKind.SNEAK or obs.pending):
            wanted = SneakyBastardAction(kind)
        else:
            money = [c for c in obs.hand if c.kind is CardKind.MONEY]
            chosen = cover(money, target - laid) or cover(list(obs.hand), target - laid)
            if chosen:
                wanted = SneakyBastardAction(ActionKind.ADD, max(chosen, key=lambda c: c.value))
        for action in (wanted, SneakyBastardAction(ActionKind.PASS)):
            if action in legal:
                return legal.index(action)
        return 0

    def _plan(self, obs: SneakyBastardObservation) -> tuple[ActionKind, int]:
        """What to end this turn with, and the total it needs in front."""
        seat = obs.seat if obs.seat is not None else 0
        statuses = obs.statuses
        others = [s for s in range(len(statuses)) if s != seat]
        if obs.forced:
            return ActionKind.BID, obs.minimum_bid
        sneak_bids = [obs.bids[s] for s in others if statuses[s] is Status.SNEAK]
        sneak_need = max(sneak_bids) + 1 if sneak_bids else 0
        if obs.phase is Phase.SNEAKY_AUCTION:
            pot = obs.bids[statuses.index(Status.BUYER)]
        else:
            pot = max((obs.bids[s] for s in others if statuses[s] is Status.BIDDER), default=0)
        laid = obs.bids[seat] + total(obs.pending)
        money = laid + sum(c.value for c in obs.hand if c.kind is CardKind.MONEY)
        if statuses[seat] is Status.SNEAK:
            if sneak_need <= self.margin * pot and sneak_need - laid <= money - laid:
                return ActionKind.RAISE, sneak_need
            return ActionKind.PASS, 0
        house = obs.house.value if obs.house is not None else 0
        to_come = house + sum(obs.houses) - sum(r.house.value for r in obs.results) - house
        share = house / max(1, to_come)
        budget = self.eagerness * share * money
        need = max(pot + 1, obs.minimum_bid)
        if need <= budget and need <= money:
            return ActionKind.BID, need
        if obs.sneaky_cards[seat] and pot >= self.steal_at:
            if not sneak_bids:
                return ActionKind.SNEAK, laid
            if max(sneak_need, laid) <= self.margin * pot and sneak_need <= money:
                return ActionKind.SNEAK, max(sneak_need, laid)
        return ActionKind.PASS, 0

    def running_scores(self, observation: SneakyBastardObservation) -> tuple[int, ...] | None:
        """Every seat's house value so far (the hands follow from the public history)."""
        return tuple(house_total(hand) for hand in known_hands(observation))

    # ------------------------------------------------------------------ the view

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The next step of its plan, read from the view."""
        legal = list(legal_actions)
        if view.WhichOneof("game_view") != "sneaky_bastard":
            return self._random.choice(legal)
        observation = observation_from_view(view.game, view)
        actions = [action_from_proto(view.game, a) for a in legal]
        return legal[self.act(observation, actions)]
