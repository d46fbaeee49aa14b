"""A Kleurenwiezen heuristic bot that reads only its view: bids what its hand can take,
plays the cheapest card that does the job.

**Hand value.** For a trump suit the bot counts the tricks its hand should take alone
(:func:`trick_estimate`): trump honours (ace 1, king 0.8 with a second trump, queen 0.5
with a third), every trump beyond the third as one trick, side aces 1, side kings 0.5 with
a guard, and with five or more trumps a ruff for every short side suit. A miserie hand is
counted by its *dangerous* cards (:func:`miserie_danger`): in each suit, the i-th lowest
card (0 first) is dangerous when its rank (two = 0 .. ace = 12) is above ``2i + 1``, as a
card that high can rarely be slid under another.

**Bidding.** Troel is the engine's (announced by the server); in the troel auction the bot
passes unless its hand is a blote miserie. Otherwise, from strongest to weakest: abondance
for the most tricks it counts at least ``ABONDANCE_MARGIN`` above; grote miserie without a
dangerous card; kleine miserie with at most one (the discard takes it away); joining an
asked suit where it counts ``JOIN_AT`` tricks (a pair needs 8 together), unless its own
best suit counts ``OWN_SUIT`` more; asking its best suit (four cards or more) when it
counts ``ASK_AT``; going alone in round 2+ when it counts ``ALONE_AT``;
``dood`` when the rules offer it and it would not join; else pass. In the trick auction it
raises to the fewest tricks that beat the strongest bid when its side counts that many (a
pair counts the partner at ``PARTNER_TRICKS``), else passes; an outbid miserie bidder
answers with grote miserie only on a clean hand.

**Play.** The declaring side of a trump or no-trump game tries to take tricks, the
opponents too, and a miserie declarer tries to take none:

* *leading*: a master card (every higher card of its suit is played or held) first, trumps
  first when its side declared and holds the master trump; otherwise the lowest card of
  its longest side suit. A miserie declarer leads its lowest card; its opponents lead low
  too, so that the declarer must find a card under it. A 3-ace troel partner leading
  trick 2 chooses trump by that lead: the fourth ace's suit (target 9) when it holds three
  of them, else its longest suit.
* *following*: when its partner is winning the trick it plays its cheapest card (partners
  do not overtake each other); otherwise it wins with the cheapest card that wins (a
  non-trump before a trump), or plays its cheapest card when none does. A miserie declarer
  plays the highest card that loses the trick (the highest card when all win); a miserie
  opponent, when a declarer is winning, plays the highest card that keeps him winning.
* *kleine-miserie discard*: its most dangerous card, the highest of a short suit.

Running scores (for the search bot's rollouts) are the match's scores so far: they change
once per deal, so the search bot plays its rollouts to the end of the deal (its per-game
horizon). The heuristic works on engine values, so the same code answers a view
(:meth:`choose`, through the wire's decoder) and a seat's observation in a world the search
bot samples (:meth:`act`): it is Kleurenwiezen's playout policy there. Its bidding rules
also judge the search bot's worlds (:meth:`plausible`): a world where a seat asked a colour
it hardly holds is drawn again.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import EngineError
from speeltafel.server.engine.games.kleurenwiezen import (
    ALL_CARDS,
    RANKS,
    SUIT_VALUE,
    SUITS,
    ActionKind,
    ContractKind,
    Phase,
    Play,
    WiezenAction,
    WiezenObservation,
    trick_winner,
)
from speeltafel.server.wire.registry import action_from_proto, observation_from_view

ASK_AT = 4.0  # tricks counted in a suit to ask it (a partner adds about four)
JOIN_AT = 3.5  # tricks counted in an asked suit to join it
OWN_SUIT = 2.0  # how many more tricks its own suit must count to ask it rather than join
ALONE_AT = 5.5  # tricks counted to go alone for 5
ABONDANCE_MARGIN = 0.5  # counted tricks above the bid for abondance
PARTNER_TRICKS = 4.0  # what a pair counts its partner for in the trick auction
PLAUSIBLE_SLACK = 1.0  # tricks a bid may count below this bot's own threshold (plausible)
MISERIES = (ContractKind.KLEINE_MISERIE, ContractKind.GROTE_MISERIE, ContractKind.BLOTE_MISERIE)
_RANK = {card: RANKS.index(card[0]) for card in ALL_CARDS}


def _suit(card: str) -> str:
    return card[1]


def trick_estimate(hand: Sequence[str], trump: str) -> float:
    """The tricks ``hand`` should take alone with ``trump`` as trump ("" none; module
    docstring)."""
    by_suit: dict[str, list[int]] = {s: [] for s in SUITS}
    for card in hand:
        by_suit[_suit(card)].append(_RANK[card])
    total = 0.0
    trumps = len(by_suit[trump]) if trump else 0
    for suit, ranks in by_suit.items():
        length = len(ranks)
        high = set(ranks)
        if suit == trump:
            total += 1.0 if 12 in high else 0.0
            total += 0.8 if 11 in high and length >= 2 else 0.0
            total += 0.5 if 10 in high and length >= 3 else 0.0
            total += max(0, length - 3)
            continue
        total += 1.0 if 12 in high else 0.0
        total += 0.5 if 11 in high and length >= 2 else 0.0
        if trumps >= 5 and length <= 1:
            total += 1.0 - 0.5 * length  # a void ruffs at once, a singleton after one round
    return total


def miserie_danger(hand: Sequence[str]) -> int:
    """How many cards of ``hand`` a miserie declarer could hardly slide under (module
    docstring)."""
    danger = 0
    for suit in SUITS:
        ranks = sorted(_RANK[c] for c in hand if _suit(c) == suit)
        danger += sum(1 for i, rank in enumerate(ranks) if rank > 2 * i + 1)
    return danger


def _dangerous_card(hand: Sequence[str]) -> str:
    """The card a miserie declarer most wants to lose: the highest card whose suit has the
    fewest cards under it."""

    def risk(card: str) -> tuple[int, int]:
        under = sum(1 for c in hand if _suit(c) == _suit(card) and _RANK[c] < _RANK[card])
        return (_RANK[card] - 2 * under, _RANK[card])

    return max(hand, key=risk)


def _fits(hand: Sequence[str], action: WiezenAction) -> bool:
    """Whether :class:`WiezerBot`'s bidding rules, ``PLAUSIBLE_SLACK`` tricks looser, could
    have made bid ``action`` on deal-start ``hand`` (see :meth:`WiezerBot.plausible`)."""
    kind, suit, slack = action.kind, action.suit, PLAUSIBLE_SLACK
    if kind is ActionKind.ASK:
        length = sum(1 for c in hand if _suit(c) == suit)
        return length >= 4 and trick_estimate(hand, suit) >= ASK_AT - slack
    if kind is ActionKind.JOIN:
        return trick_estimate(hand, suit) >= JOIN_AT - slack
    if kind is ActionKind.ALONE:
        return trick_estimate(hand, suit) >= ALONE_AT - slack
    if kind is ActionKind.BID and action.contract is ContractKind.ABONDANCE:
        return trick_estimate(hand, suit) >= action.tricks + ABONDANCE_MARGIN - slack
    if kind is ActionKind.BID and action.contract in MISERIES[:2]:
        return miserie_danger(hand) <= 2
    return True


class WiezerBot:
    """Bids by counted tricks and miserie danger, plays cheap (module docstring)."""

    name = "wiezer"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    # ------------------------------------------------------------------ engine terms

    def running_scores(self, observation: WiezenObservation) -> tuple[int, ...]:
        """Every seat's points of the finished deals (what the outcome would score now)."""
        return observation.scores

    def plausible(self, observation: WiezenObservation) -> bool:
        """Whether the observing seat's hand fits the bids it made this deal, read as this
        bot's own rules with ``PLAUSIBLE_SLACK`` tricks to spare (other bidders count
        differently): an asked colour held four times and counted near ``ASK_AT``, a joined
        one near ``JOIN_AT``, alone near ``ALONE_AT``, abondance near its tricks, a miserie
        with at most two dangerous cards. The hand judged is the one the seat bid on: its
        cards now, the cards it played this deal and its discard. The search bot asks this
        of every other seat's observation of a sampled world to keep worlds that the
        bidding makes likely (passes are not read: they depend on what was offered)."""
        me = observation.seat
        if me is None or me not in observation.active:
            return True
        hand = list(observation.hand)
        hand += [p.card for t in observation.tricks for p in t.plays if p.seat == me]
        hand += [p.card for p in observation.trick if p.seat == me]
        if observation.discard:
            hand.append(observation.discard)
        return all(
            _fits(hand, event.action)
            for event in observation.history
            if event.seat == me and not event.automatic
        )

    def act(self, observation: WiezenObservation, legal_actions: Sequence[WiezenAction]) -> int:
        """The index in ``legal_actions`` of the action it plays."""
        if len(legal_actions) <= 1 or observation.seat is None:
            return 0
        legal = list(legal_actions)
        kinds = {a.kind for a in legal}
        if ActionKind.PLAY in kinds:
            return legal.index(self._play(observation, legal))
        if ActionKind.DISCARD in kinds:
            card = _dangerous_card([a.card for a in legal if a.kind is ActionKind.DISCARD])
            return next(i for i, a in enumerate(legal) if a.card == card)
        return legal.index(self._bid(observation, legal))

    # ------------------------------------------------------------------ bidding

    def _bid(self, obs: WiezenObservation, legal: list[WiezenAction]) -> WiezenAction:
        hand = obs.hand
        estimate = {s: trick_estimate(hand, s) for s in SUITS}
        danger = miserie_danger(hand)
        by_kind: dict[ActionKind, list[WiezenAction]] = {}
        for action in legal:
            by_kind.setdefault(action.kind, []).append(action)
        bids = {
            (a.contract, a.tricks, a.suit): a
            for a in by_kind.get(ActionKind.BID, [])
            if a.contract is not None
        }
        passing = by_kind.get(ActionKind.PASS, [legal[0]])[0]

        if obs.phase is Phase.TROEL_AUCTION:
            bm = bids.get((ContractKind.BLOTE_MISERIE, 0, ""))
            return (
                bm
                if bm is not None and danger == 0 and max(_RANK[c] for c in hand) < 9
                else passing
            )
        # Abondance: the most tricks it counts a margin above, in its best suit for them.
        abondances = [
            (tricks, SUIT_VALUE[suit], action)
            for (kind, tricks, suit), action in bids.items()
            if kind is ContractKind.ABONDANCE and estimate[suit] >= tricks + ABONDANCE_MARGIN
        ]
        if abondances:
            return max(abondances, key=lambda item: (item[0], estimate[item[2].suit], item[1]))[2]
        gm = bids.get((ContractKind.GROTE_MISERIE, 0, ""))
        if gm is not None and danger == 0:
            return gm
        km = bids.get((ContractKind.KLEINE_MISERIE, 0, ""))
        if km is not None and danger <= 1:
            return km
        if ActionKind.RAISE in by_kind:
            return self._raise(obs, by_kind[ActionKind.RAISE], estimate, passing)
        asks = [
            a
            for a in by_kind.get(ActionKind.ASK, [])
            if estimate[a.suit] >= ASK_AT and sum(1 for c in hand if _suit(c) == a.suit) >= 4
        ]
        best_ask = max(asks, key=lambda a: (estimate[a.suit], SUIT_VALUE[a.suit]), default=None)
        joins = [a for a in by_kind.get(ActionKind.JOIN, []) if estimate[a.suit] >= JOIN_AT]
        if joins:
            best_join = max(joins, key=lambda a: (estimate[a.suit], SUIT_VALUE[a.suit]))
            # A much stronger suit of its own is worth asking (and playing alone) instead.
            if best_ask is None or estimate[best_ask.suit] < estimate[best_join.suit] + OWN_SUIT:
                return best_join
        alones = [a for a in by_kind.get(ActionKind.ALONE, []) if estimate[a.suit] >= ALONE_AT]
        if alones:
            return max(alones, key=lambda a: (estimate[a.suit], SUIT_VALUE[a.suit]))
        if ActionKind.REASK in by_kind:
            return by_kind[ActionKind.REASK][0]
        if best_ask is not None:
            return best_ask
        if ActionKind.DOOD in by_kind:
            return by_kind[ActionKind.DOOD][0]
        return passing

    def _raise(
        self,
        obs: WiezenObservation,
        raises: list[WiezenAction],
        estimate: dict[str, float],
        passing: WiezenAction,
    ) -> WiezenAction:
        """The cheapest raise its side counts enough tricks for, else a pass."""
        me = obs.seat
        party = next(
            (p for p in obs.parties if p.live and me in (p.asker, p.joiner, p.speaker)), None
        )
        if party is None:
            return passing
        alone = party.kind is ContractKind.ALONE or party.joiner < 0 or party.bid is None
        counted = estimate[party.suit] + (0.0 if alone else PARTNER_TRICKS)
        cheapest = min(raises, key=lambda a: a.tricks)
        return cheapest if counted >= cheapest.tricks else passing

    # ------------------------------------------------------------------ play

    def _play(self, obs: WiezenObservation, legal: list[WiezenAction]) -> WiezenAction:
        me = obs.seat
        assert me is not None
        cards = [a.card for a in legal if a.kind is ActionKind.PLAY]
        by_card = {a.card: a for a in legal if a.kind is ActionKind.PLAY}
        contract = obs.contract
        kind = contract.kind if contract is not None else None
        declarers = set(contract.declarers) if contract is not None else set()
        if obs.partner >= 0:
            declarers.add(obs.partner)
        trump = obs.trump
        miserie = kind in MISERIES

        def cheap(card: str) -> tuple[int, int, int]:
            # Lowest first; a trump is worth keeping, so it counts as dearer.
            return (1 if _suit(card) == trump else 0, _RANK[card], SUIT_VALUE[_suit(card)])

        if not obs.trick:
            return by_card[self._lead(obs, cards, declarers, miserie)]

        winner = trick_winner(obs.trick, trump)
        winning = next(p.card for p in obs.trick if p.seat == winner)

        def wins(card: str) -> bool:
            return trick_winner((*obs.trick, Play(me, card)), trump) == me

        if miserie:
            if me in declarers:
                losing = [c for c in cards if not wins(c)]
                pick = max(losing or cards, key=lambda c: _RANK[c])
                return by_card[pick]
            if winner in declarers:
                keeping = [c for c in cards if not wins(c)]
                if keeping:
                    return by_card[max(keeping, key=lambda c: _RANK[c])]
            return by_card[min(cards, key=cheap)]

        my_side = me in declarers
        if (winner in declarers) == my_side and winner != me and winning:
            return by_card[min(cards, key=cheap)]  # the partner has it: do not overtake
        winners = [c for c in cards if wins(c)]
        if winners:
            return by_card[min(winners, key=cheap)]
        return by_card[min(cards, key=cheap)]

    def _lead(
        self, obs: WiezenObservation, cards: list[str], declarers: set[int], miserie: bool
    ) -> str:
        me = obs.seat
        trump = obs.trump
        if miserie:
            return min(cards, key=lambda c: (_RANK[c], SUIT_VALUE[_suit(c)]))
        hand = obs.hand
        lengths = Counter(_suit(c) for c in hand)
        contract = obs.contract
        if (
            contract is not None
            and contract.kind is ContractKind.TROEL
            and not trump
            and len(obs.tricks) == 1
        ):
            # The 3-ace troel partner's lead of trick 2 names trump.
            ace_suit = _suit(obs.tricks[0].plays[0].card)
            suit = (
                ace_suit
                if lengths[ace_suit] >= 3
                else max(lengths, key=lambda s: (lengths[s], s == ace_suit))
            )
            return max((c for c in cards if _suit(c) == suit), key=lambda c: _RANK[c])
        played = {p.card for t in obs.tricks for p in t.plays}
        gone = played | set(hand)

        def master(card: str) -> bool:
            return all(
                f"{RANKS[r]}{_suit(card)}" in gone for r in range(_RANK[card] + 1, len(RANKS))
            )

        if trump and me in declarers:
            trumps = [c for c in cards if _suit(c) == trump]
            outstanding = sum(
                1 for r in RANKS if f"{r}{trump}" not in gone
            )  # trumps the others may still hold
            if trumps and outstanding and master(max(trumps, key=lambda c: _RANK[c])):
                return max(trumps, key=lambda c: _RANK[c])
        masters = [c for c in cards if master(c) and _suit(c) != trump]
        if masters:
            return max(masters, key=lambda c: (_RANK[c], lengths[_suit(c)]))
        side = [c for c in cards if _suit(c) != trump] or cards
        longest = max({_suit(c) for c in side}, key=lambda s: (lengths[s], SUIT_VALUE[s]))
        return min((c for c in side if _suit(c) == longest), key=lambda c: _RANK[c])

    # ------------------------------------------------------------------ the view

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The action :meth:`act` picks on the view's decoded observation."""
        legal = list(legal_actions)
        if view.WhichOneof("game_view") != "kleurenwiezen" or not view.HasField("seat"):
            return self._random.choice(legal)
        try:
            observation = observation_from_view(view.game, view)
            actions = [action_from_proto(view.game, a) for a in legal]
        except (ValueError, KeyError, EngineError):
            return self._random.choice(legal)
        return legal[self.act(observation, actions)]
