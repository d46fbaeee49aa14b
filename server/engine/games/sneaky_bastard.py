"""Sneaky Bastard (999 Games' trial edition): the rules engine.

Rules source: ``shared/rules/sneaky_bastard.md`` (decisions D1-D7), restated here as this
project's own decisions.

Components (options): money cards with the values of option ``money`` (default
``10,25,100,250,500``, in thousands: D1), one set of every value per seat; house cards with
the values of option ``houses`` (default the eight houses of D2: Studentenkamer 100,
Bovenwoning 150, Driehoog achter 200, Rijtjeshuis 250, Twee-onder-een-kap 300, Huis aan zee
400, Boerderij 500, Villa 600); one Sneaky Bastard (SB) card per seat (D5). With 3 seats the
fourth set and the fourth SB card are not part of the game at all (``deck`` holds the cards
in play). Houses of equal value are interchangeable (a house is known by its value). The
game lasts one round per house (8 with the defaults). Value cards are money and houses; a
house in a hand may be bid at its printed value. ``minimum_bid`` (default 10) is the least
house bid total.

Setup: every seat holds one money card of each value and its SB card; the houses are
shuffled face down (the named deck ``houses``, the only thing chance orders). Start player
of round 1 (D7, option ``first_player``): ``seat0`` (default) or ``random`` (one draw of the
match's ``Rng`` after the shuffle).

A round (rules 4): the top house is turned up (the house on offer) and, except in the last
round, the next one as a preview that stays on top of the deck and is the next round's
house. Seats are ``bidder`` (in the house auction; his house bid is the total of his cards in
front), ``sneak`` (played his SB card; his SB bid is the total of *all* his cards in front,
those bid on the house earlier included), ``out`` (passed; every card of the round back in
hand) or ``buyer``. Turns go clockwise from the start player; a seat is skipped when out or
buyer, when a sneak while the house is unsold and no one else is a sneak (the compulsory
wait), and when a sneak whose SB bid is the highest (D4).

Moves. A bid is a set of cards; so that a legal-action list stays short in every position
(identical money cards are one choice), a turn is played in steps: ``add:<card>`` lays one
card of the hand face up in front of the seat (the cards laid this turn, ``pending``, are
public at once, as at the table), and one completion ends the turn:

* ``bid`` (bidder): at least one card laid this turn; the house bid total (cards in front
  plus those laid) is at least ``minimum_bid`` and above every other bidder's house bid.
* ``sneak`` (bidder, owns his SB card, house unsold, not the forced bidder): the SB card
  goes down; his SB bid is his cards in front plus those laid (none is fine); when another
  seat is a sneak it must exceed the highest SB bid, otherwise any total (even 0) will do.
* ``raise`` (sneak whose turn it is): at least one card laid; the SB total exceeds the
  highest SB bid.
* ``pass`` (bidder or sneak whose turn it is, not the forced bidder): every card he laid
  this round, the SB card too, goes back to his hand; he is out for the round.

Cards put down are never taken back except by passing (which returns all of them); a seat
may pass in the middle of laying cards. ``add`` is offered for every distinct card of the
hand, whether or not a completion is reachable with it: ``pass`` is always there, except
for the forced bidder, who can always reach a ``bid`` by laying more.

The sale (4.5): as soon as exactly one bidder is left, he buys the house for his bid if he
has one (every house bid is at least ``minimum_bid``). If he has nothing in front he is the
forced bidder (D3): his turn comes at once, he may not pass or sneak, and must bid at least
``minimum_bid``; if his value cards cannot reach it, he gets the house free, every sneak
takes his cards back and the round ends. The house goes into the buyer's hand. With no
sneak at the sale the buyer's bid cards leave the game (``discarded``). With one sneak he
wins at once; with several the SB auction follows: only sneaks act, ``raise`` or ``pass``,
clockwise from the seat after the one whose move made the sale, with the same skips, until
one sneak is left. The SB winner discards his own bid cards and his SB card (out of the
game for good) and takes all of the buyer's bid cards (money and houses) into his hand.
The next round's start player is the buyer. The game ends after the round of the last
house.

Scores: the value of the houses in each hand; money is worthless at the end. Ranks by
``(houses, money in hand)`` (``Outcome.from_keys``); equal keys share (9.3).

Clock defaults (rules 4.4, a server decision): ``pass``; the forced bidder instead lays his
smallest card while his total is below ``minimum_bid``, then bids.

Actions, as text: ``add:money:<value>``, ``add:house:<value>``, ``bid``, ``sneak``,
``raise``, ``pass``. ``legal_actions`` lists the completions first (``pass``, ``bid``,
``sneak``, ``raise``, those that are legal) and then one ``add`` per distinct card in hand,
money before houses, each ascending. ``apply`` accepts exactly ``legal_actions``;
``_why_illegal`` names the rule of a refusal (``wrong_game``, ``no_such_seat``,
``game_over``, ``not_your_turn``, ``not_in_hand``, ``nothing_laid``, ``bid_too_low``,
``below_minimum``, ``sneak_too_low``, ``no_sneaky_card``, ``house_sold``, ``forced_bid``,
``not_a_bidder``, ``not_a_sneak``).

Cards as text: ``money:<value>``, ``house:<value>``, ``sneaky:<seat>`` (the SB card of that
seat, in ``deck``/``zones`` only). Presets: the deck ``houses`` (``house:<value>`` texts),
top card first: the first is round 1's house, the second its preview, and so on. Money is
never ordered by chance, so it is no named deck and takes no preset.

What each seat sees (D6): its own hand (``private_fields``); everything public: the house on
offer and the preview, the number of houses left in the deck (preview included), every
seat's state, cards in front and their total, the cards being laid this turn, who still owns
an SB card, hand sizes, the discarded cards, the forced-bidder flag, and the public history
of the whole game (every move, in order, and every finished round's result: house, buyer,
price, SB winner and his discarded bid). Hands of other seats are private but follow from
the history (every card movement is public): :func:`known_hands` works them out, and
:meth:`SneakyBastard.sample_world` uses it, so the only thing a sampled world draws anew is
the order of the houses below the preview.

rules_version history:

* 1 - first version.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

from speeltafel.server.engine.codec import decode_value, encode_value
from speeltafel.server.engine.core import (
    Decks,
    DeckSpec,
    EngineError,
    GameInfo,
    GameOver,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    OptionKind,
    OptionSpec,
    Outcome,
    Presets,
    Rng,
    choice_option,
    evolver,
    fast_constructor,
    int_list_option,
    int_option,
    refuse_unless_legal,
    remember_last,
)

DEFAULT_MONEY = (10, 25, 100, 250, 500)
DEFAULT_HOUSES = (100, 150, 200, 250, 300, 400, 500, 600)
HOUSE_NAMES = {
    100: "Studentenkamer",
    150: "Bovenwoning",
    200: "Driehoog achter",
    250: "Rijtjeshuis",
    300: "Twee-onder-een-kap",
    400: "Huis aan zee",
    500: "Boerderij",
    600: "Villa",
}
"""The default houses' names (D2); a house is known by its value in the engine."""

MAX_VALUE = 100_000


class CardKind(StrEnum):
    """Money or a house: the two kinds of value card."""

    MONEY = "money"
    HOUSE = "house"


# Enum members as module globals for the hot paths: on Python 3.11 ``Status.BIDDER``
# costs about half a microsecond (EnumType's ``__getattr__`` sends every class attribute
# lookup down a slow path), a global a twentieth of that.
_MONEY, _HOUSE = CardKind.MONEY, CardKind.HOUSE


@dataclass(frozen=True, slots=True)
class Card:
    """A value card: money or a house, with its value in K."""

    kind: CardKind
    value: int

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.value}"

    def __hash__(self) -> int:
        """Equal cards hash equal, without the enum's own ``__hash__`` (a Python-level call
        per card, which made hashing a hand most of ``legal_actions``). No result depends on
        the hash: the enum's hashed a name string, which differs between processes."""
        return self.value if self.kind is _MONEY else -1 - self.value


_CARDS: dict[tuple[CardKind, int], Card] = {}  # one object per card value, see card_of
_CARDS_KEPT = 4096  # a game knows a few dozen card values; cleared if ever it holds thousands


def card_of(kind: CardKind, value: int) -> Card:
    """The card ``kind:value``, one object for every equal card the engine deals: hands,
    fronts and ``add`` actions then share their cards, so removing a laid card from a hand
    finds it by identity instead of a Python-level ``__eq__`` per card before it."""
    card = _CARDS.get((kind, value))
    if card is None:
        if len(_CARDS) >= _CARDS_KEPT:
            _CARDS.clear()
        card = _CARDS[kind, value] = Card(kind, value)
    return card


def card_key(card: Card) -> tuple[int, int]:
    """The stable order of cards: money before houses, each ascending."""
    return (0 if card.kind is _MONEY else 1, card.value)


def sort_cards(cards: Sequence[Card]) -> tuple[Card, ...]:
    """``cards`` in the stable order."""
    return tuple(sorted(cards, key=card_key))


def total(cards: Sequence[Card]) -> int:
    """The value of a group of cards."""
    return sum([card.value for card in cards])


def money_total(cards: Sequence[Card]) -> int:
    """The value of the money cards among ``cards``."""
    return sum(card.value for card in cards if card.kind is _MONEY)


def house_total(cards: Sequence[Card]) -> int:
    """The value of the house cards among ``cards`` (the score of a hand)."""
    return sum(card.value for card in cards if card.kind is _HOUSE)


def _remove(hand: Sequence[Card], cards: Sequence[Card]) -> tuple[Card, ...]:
    left = list(hand)
    for card in cards:
        left.remove(card)
    return tuple(left)


def _without(hand: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    """``hand`` less one ``card``: the first equal one, found by identity where it can be
    (the engine's own cards are shared, :func:`card_of`)."""
    for at, held in enumerate(hand):
        if held is card:
            return hand[:at] + hand[at + 1 :]
    return _remove(hand, (card,))


class Phase(StrEnum):
    """Where a round stands."""

    HOUSE_AUCTION = "house_auction"
    SNEAKY_AUCTION = "sneaky_auction"
    OVER = "over"


_PHASE_HOUSE, _PHASE_SNEAKY, _PHASE_OVER = Phase.HOUSE_AUCTION, Phase.SNEAKY_AUCTION, Phase.OVER


class Status(StrEnum):
    """A seat's part in the current round (rules 4.2)."""

    BIDDER = "bidder"
    SNEAK = "sneak"
    OUT = "out"
    BUYER = "buyer"


_BIDDER, _SNEAKER, _OUT, _BUYER = Status.BIDDER, Status.SNEAK, Status.OUT, Status.BUYER


class ActionKind(StrEnum):
    """One step of a turn: lay a card, or one of the four completions."""

    ADD = "add"
    BID = "bid"
    SNEAK = "sneak"
    RAISE = "raise"
    PASS = "pass"


_KIND_ADD, _KIND_BID, _KIND_SNEAK, _KIND_RAISE, _KIND_PASS = (
    ActionKind.ADD,
    ActionKind.BID,
    ActionKind.SNEAK,
    ActionKind.RAISE,
    ActionKind.PASS,
)


@dataclass(frozen=True, slots=True)
class SneakyBastardAction:
    """``ADD`` one card (``card`` set), or a completion (``card`` None)."""

    kind: ActionKind
    card: Card | None = None

    def __str__(self) -> str:
        return f"add:{self.card}" if self.card is not None else self.kind.value


PASS = SneakyBastardAction(_KIND_PASS)
BID = SneakyBastardAction(_KIND_BID)
SNEAK = SneakyBastardAction(_KIND_SNEAK)
RAISE = SneakyBastardAction(_KIND_RAISE)


def add(card: Card) -> SneakyBastardAction:
    """The action that lays ``card``."""
    return SneakyBastardAction(_KIND_ADD, card)


# One add action per card value, built once, by the card's int key (``Card.__hash__``'s
# value, computed inline: a hash through the Python-level ``__hash__`` costs a call).
_ADD_OF: dict[int, SneakyBastardAction] = {}


def _add_of(key: int, card: Card) -> SneakyBastardAction:
    """``add(card)`` of the shared card (:func:`card_of`), kept for the next hand that
    holds an equal card (a game knows a few dozen card values; cleared if ever it holds
    thousands)."""
    if len(_ADD_OF) >= _ADDS_KEPT:
        _ADD_OF.clear()
    action = _ADD_OF[key] = add(card_of(card.kind, card.value))
    return action


_ADDS: dict[int, tuple[tuple[Card, ...], tuple[SneakyBastardAction, ...]]] = {}
_ADDS_KEPT = 4096  # hands remembered; cleared when full


def _adds(hand: tuple[Card, ...]) -> tuple[SneakyBastardAction, ...]:
    """One ``add`` per distinct card of ``hand``, in hand order.

    Remembered by the hand tuple's identity (a hand is shared, unchanged, by every state
    until its owner lays a card; the entry holds the tuple, so the identity stays its
    own): hashing each card to drop duplicates was most of ``legal_actions``.
    """
    kept = _ADDS.get(id(hand))
    if kept is not None and kept[0] is hand:
        return kept[1]
    distinct: list[SneakyBastardAction] = []
    seen: set[int] = set()
    for card in hand:  # dict.fromkeys(hand), by each card's int key
        key = card.value if card.kind is _MONEY else -1 - card.value
        if key not in seen:
            seen.add(key)
            distinct.append(_ADD_OF.get(key) or _add_of(key, card))
    adds = tuple(distinct)
    if len(_ADDS) >= _ADDS_KEPT:
        _ADDS.clear()
    _ADDS[id(hand)] = (hand, adds)
    return adds


@dataclass(frozen=True, slots=True)
class Move:
    """One move of the public history: who played what in which round."""

    round: int
    seat: int
    action: SneakyBastardAction


@dataclass(frozen=True, slots=True)
class RoundResult:
    """The public result of a finished round."""

    round: int
    house: Card
    start_player: int
    buyer: int
    price: tuple[Card, ...]  # the buyer's bid cards (empty: the house was free, D3)
    sneaky_winner: int | None
    sneaky_bid: tuple[Card, ...]  # the SB winner's own bid cards, discarded


@dataclass(frozen=True, slots=True)
class SneakyBastardState:
    """The full state of a match (every field; observe() decides who sees what)."""

    seats: int
    money: tuple[int, ...]
    houses: tuple[int, ...]
    minimum_bid: int
    decks: Decks
    phase: Phase
    round: int
    house: Card | None  # on offer
    deck: tuple[Card, ...]  # face down, top first; deck[0] is the preview
    start_player: int
    turn: int  # the seat to act; -1 when over
    statuses: tuple[Status, ...]
    hands: tuple[tuple[Card, ...], ...]
    fronts: tuple[tuple[Card, ...], ...]  # laid this round in earlier turns, in order
    pending: tuple[Card, ...]  # laid by ``turn`` in this turn, in order
    sneaky_cards: tuple[bool, ...]  # the seat still owns its SB card
    discarded: tuple[Card, ...]
    history: tuple[Move, ...]
    results: tuple[RoundResult, ...]


@dataclass(frozen=True, slots=True)
class SneakyBastardObservation:
    """What one seat (or a spectator, ``seat=None``) may know."""

    private_fields: ClassVar[tuple[str, ...]] = ("hand",)

    seat: int | None
    phase: Phase
    round: int
    rounds: int
    money: tuple[int, ...]
    houses: tuple[int, ...]
    minimum_bid: int
    house: Card | None
    preview: Card | None
    deck_size: int  # houses face down, the preview included
    start_player: int
    turn: int | None
    forced: bool  # the seat to act is the forced bidder (D3)
    statuses: tuple[Status, ...]
    fronts: tuple[tuple[Card, ...], ...]
    bids: tuple[int, ...]  # the total in front of each seat (pending not included)
    pending: tuple[Card, ...]
    sneaky_cards: tuple[bool, ...]
    hand_sizes: tuple[int, ...]
    hand: tuple[Card, ...]
    discarded: tuple[Card, ...]
    history: tuple[Move, ...]
    results: tuple[RoundResult, ...]


_STATE_HEADER = {"game": "sneaky_bastard", "format": 1}


# ``dataclasses.replace`` without its per-call introspection (the engine's hot path).
_evolve = evolver(SneakyBastardState)
_build = fast_constructor(SneakyBastardState)  # every field, positionally
_move = fast_constructor(Move)  # round, seat, action


def starting_hand(money: Sequence[int]) -> tuple[Card, ...]:
    """One money card of every value."""
    return sort_cards([card_of(_MONEY, value) for value in money])


def known_hands(observation: SneakyBastardObservation) -> tuple[tuple[Card, ...], ...]:
    """Every seat's hand as the public history implies it (D6: every movement is public).

    Start sets, then per finished round: the buyer gains the house and loses his price; the
    SB winner gains the price and loses his own bid. In the current round the buyer of a
    sold house holds it, and the cards in front and those laid this turn are not in hand.
    """
    obs = observation
    seats = len(obs.statuses)
    hands = [Counter(starting_hand(obs.money)) for _ in range(seats)]
    for result in obs.results:
        hands[result.buyer][result.house] += 1
        hands[result.buyer].subtract(result.price)
        if result.sneaky_winner is not None:
            hands[result.sneaky_winner].update(result.price)
            hands[result.sneaky_winner].subtract(result.sneaky_bid)
    if obs.phase is _PHASE_SNEAKY and obs.house is not None:
        hands[obs.statuses.index(_BUYER)][obs.house] += 1
    for seat in range(seats):
        hands[seat].subtract(obs.fronts[seat])
    if obs.turn is not None and obs.pending:
        hands[obs.turn].subtract(obs.pending)
    return tuple(sort_cards(list(hand.elements())) for hand in hands)


def _int_list(name: str, default: Sequence[int], description: str) -> OptionSpec:
    return OptionSpec(
        name,
        OptionKind.INT_LIST,
        ",".join(map(str, default)),
        description,
        minimum=1,
        maximum=MAX_VALUE,
        min_items=1,
        max_items=16,
    )


class SneakyBastard:
    """The Sneaky Bastard rules (see the module docstring)."""

    info = GameInfo(
        game_id="sneaky_bastard",
        name="Sneaky Bastard",
        rules_version=1,
        min_seats=3,
        max_seats=4,
        options=(
            _int_list(
                "money",
                DEFAULT_MONEY,
                "the money values in K; every seat starts with one card of each",
            ),
            _int_list(
                "houses",
                DEFAULT_HOUSES,
                "the house values in K, one card each; one round per house",
            ),
            OptionSpec(
                "minimum_bid",
                OptionKind.INT,
                "10",
                "the least house bid total in K",
                minimum=1,
                maximum=MAX_VALUE,
            ),
            OptionSpec(
                "first_player",
                OptionKind.CHOICE,
                "seat0",
                "round 1's start player: seat 0, or drawn at random; later rounds start "
                "with the previous buyer",
                choices=("seat0", "random"),
            ),
        ),
        simultaneous=False,
        description="Bid value cards on a house each round, or play your Sneaky Bastard "
        "card to bid on what the buyer pays. Highest house value wins.",
        score_name="houses",
        lower_is_better=False,
        decks=(
            DeckSpec(
                "houses",
                "the house cards (house:<value>), shuffled once at setup; a preset order is "
                "the order they are offered in, top first (round 1's house, then its preview)",
            ),
        ),
    )

    # ------------------------------------------------------------------ setup

    def new(
        self,
        options: Mapping[str, str],
        seats: int,
        rng: Rng,
        presets: Presets = (),
    ) -> SneakyBastardState:
        """Hands, the shuffled houses and round 1 begun (presets of ``houses``)."""
        resolved = self.info.resolve_options(options)
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise InvalidOptions(f"Sneaky Bastard takes 3-4 seats, not {seats}", rule="seat_count")
        money = int_list_option(resolved, "money")
        houses = int_list_option(resolved, "houses")
        house_texts = [str(Card(_HOUSE, value)) for value in houses]
        decks = Decks.checked(rng, self.info.decks, presets, {"houses": house_texts})
        order, decks = decks.order("houses", house_texts)
        deck = tuple(card_of(_HOUSE, int(text.split(":")[1])) for text in order)
        start = 0
        if choice_option(resolved, "first_player") == "random":
            start, decks = decks.below(seats)
        state = SneakyBastardState(
            seats=seats,
            money=money,
            houses=houses,
            minimum_bid=int_option(resolved, "minimum_bid"),
            decks=decks,
            phase=_PHASE_HOUSE,
            round=0,
            house=None,
            deck=deck,
            start_player=start,
            turn=start,
            statuses=(_BIDDER,) * seats,
            hands=tuple(starting_hand(money) for _ in range(seats)),
            fronts=((),) * seats,
            pending=(),
            sneaky_cards=(True,) * seats,
            discarded=(),
            history=(),
            results=(),
        )
        return _start_round(state, start)

    # ------------------------------------------------------------------ queries

    def to_act(self, state: SneakyBastardState) -> tuple[int, ...]:
        """The one seat whose turn it is (several steps of one turn stay with it)."""
        return () if state.phase is _PHASE_OVER else (state.turn,)

    @remember_last
    def legal_actions(
        self, state: SneakyBastardState, seat: int
    ) -> tuple[SneakyBastardAction, ...]:
        """Completions that are legal (pass, bid, sneak, raise), then one add per card."""
        if state.phase is _PHASE_OVER or seat != state.turn:
            return ()
        forced, front, highest_house, other_sneaks, highest_sneaky = _turn_facts(state, seat)
        pending = state.pending
        laid = front + total(pending) if pending else front
        status = state.statuses[seat]
        out: list[SneakyBastardAction] = []
        if not forced:
            out.append(PASS)
        if status is _BIDDER:
            if pending and laid >= state.minimum_bid and laid > highest_house:
                out.append(BID)
            if (
                not forced
                and state.phase is _PHASE_HOUSE
                and state.sneaky_cards[seat]
                and (not other_sneaks or laid > highest_sneaky)
            ):
                out.append(SNEAK)
        elif status is _SNEAKER and pending and laid > highest_sneaky:
            out.append(RAISE)
        out.extend(_adds(state.hands[seat]))
        return tuple(out)

    def default_action(self, state: SneakyBastardState, seat: int) -> SneakyBastardAction:
        """``pass``; the forced bidder lays his smallest card until he reaches the minimum,
        then bids."""
        if seat not in self.to_act(state):
            raise NotYourTurn(f"seat {seat} need not act now")
        if not _forced(state):
            return PASS
        if total(state.pending) >= state.minimum_bid:
            return BID
        return add(min(state.hands[seat], key=lambda c: (c.value, card_key(c))))

    # ------------------------------------------------------------------ the mutator

    def apply(
        self, state: SneakyBastardState, seat: int, action: SneakyBastardAction
    ) -> SneakyBastardState:
        """Play one of ``legal_actions``; the given state is never changed."""
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        history = (*state.history, _move(state.round, seat, action))
        if action.kind is _KIND_ADD:
            assert action.card is not None
            s = state  # _evolve(state, hands=..., pending=..., history=...) spelt out
            return _build(
                s.seats,
                s.money,
                s.houses,
                s.minimum_bid,
                s.decks,
                s.phase,
                s.round,
                s.house,
                s.deck,
                s.start_player,
                s.turn,
                s.statuses,
                _replaced(s.hands, seat, _without(s.hands[seat], action.card)),
                s.fronts,
                (*s.pending, action.card),
                s.sneaky_cards,
                s.discarded,
                history,
                s.results,
            )
        fronts = list(state.fronts)
        statuses = list(state.statuses)
        hands = state.hands
        if action.kind is _KIND_PASS:
            hands = _replaced(
                hands, seat, sort_cards((*hands[seat], *fronts[seat], *state.pending))
            )
            fronts[seat] = ()
            statuses[seat] = _OUT
        else:
            fronts[seat] = (*fronts[seat], *state.pending)
            if action.kind is _KIND_SNEAK:
                statuses[seat] = _SNEAKER
        new_fronts, new_statuses = tuple(fronts), tuple(statuses)
        # The usual end of a turn is the next seat's turn (no sale, no SB win): then the
        # turn goes into the same evolve; everything else is _after_turn's.
        acting = _BIDDER if state.phase is _PHASE_HOUSE else _SNEAKER
        if sum([status is acting for status in new_statuses]) > 1:
            return _evolve(
                state,
                fronts=new_fronts,
                statuses=new_statuses,
                hands=hands,
                pending=(),
                history=history,
                turn=_next_turn(new_statuses, new_fronts, seat),
            )
        state = _evolve(
            state,
            fronts=new_fronts,
            statuses=new_statuses,
            hands=hands,
            pending=(),
            history=history,
        )
        return _after_turn(state, seat)

    def _why_illegal(
        self, state: SneakyBastardState, seat: int, action: SneakyBastardAction
    ) -> EngineError | None:
        """The rule an action not in ``legal_actions`` breaks (a diagnostic only)."""
        if not isinstance(action, SneakyBastardAction):
            return InvalidAction("not a Sneaky Bastard action", rule="wrong_game")
        if not 0 <= seat < state.seats:
            return InvalidAction(f"there is no seat {seat}", rule="no_such_seat")
        if state.phase is _PHASE_OVER:
            return GameOver("the match is over")
        if seat != state.turn:
            return NotYourTurn(f"it is seat {state.turn}'s turn")
        status = state.statuses[seat]
        laid = total(state.fronts[seat]) + total(state.pending)
        kind = action.kind
        if kind is _KIND_ADD:
            return IllegalAction(f"{action.card} is not in your hand", rule="not_in_hand")
        if kind in (_KIND_PASS, _KIND_SNEAK) and _forced(state):
            return IllegalAction(
                "you are the last bidder with nothing in front: you must bid", rule="forced_bid"
            )
        if kind is _KIND_BID:
            if status is not _BIDDER:
                return IllegalAction("you are no longer a house bidder", rule="not_a_bidder")
            if not state.pending:
                return IllegalAction("lay at least one card first", rule="nothing_laid")
            if laid < state.minimum_bid:
                return IllegalAction(
                    f"a house bid is at least {state.minimum_bid}", rule="below_minimum"
                )
            return IllegalAction(
                f"a house bid must exceed {_highest_house_bid(state, seat)}", rule="bid_too_low"
            )
        if kind is _KIND_SNEAK:
            if status is not _BIDDER:
                return IllegalAction("only a house bidder can sneak", rule="not_a_bidder")
            if state.phase is not _PHASE_HOUSE:
                return IllegalAction("the house is sold", rule="house_sold")
            if not state.sneaky_cards[seat]:
                return IllegalAction("your Sneaky Bastard card is gone", rule="no_sneaky_card")
            return IllegalAction(
                f"an SB bid must exceed {_highest_sneaky_bid(state, seat)}", rule="sneak_too_low"
            )
        if kind is _KIND_RAISE:
            if status is not _SNEAKER:
                return IllegalAction("only a sneak raises", rule="not_a_sneak")
            if not state.pending:
                return IllegalAction("lay at least one card first", rule="nothing_laid")
            return IllegalAction(
                f"an SB bid must exceed {_highest_sneaky_bid(state, seat)}", rule="sneak_too_low"
            )
        return None

    # ------------------------------------------------------------------ views

    def observe(self, state: SneakyBastardState, seat: int | None) -> SneakyBastardObservation:
        """A seat's own hand, plus everything public."""
        own = seat is not None and 0 <= seat < state.seats
        over = state.phase is _PHASE_OVER
        return SneakyBastardObservation(
            seat=seat,
            phase=state.phase,
            round=state.round,
            rounds=len(state.houses),
            money=state.money,
            houses=state.houses,
            minimum_bid=state.minimum_bid,
            house=state.house,
            preview=state.deck[0] if state.deck and not over else None,
            deck_size=len(state.deck),
            start_player=state.start_player,
            turn=None if over else state.turn,
            forced=_forced(state),
            statuses=state.statuses,
            fronts=state.fronts,
            bids=tuple(total(front) for front in state.fronts),
            pending=state.pending,
            sneaky_cards=state.sneaky_cards,
            hand_sizes=tuple(len(hand) for hand in state.hands),
            hand=state.hands[seat] if own and seat is not None else (),
            discarded=state.discarded,
            history=state.history,
            results=state.results,
        )

    def sample_world(self, observation: SneakyBastardObservation, rng: Rng) -> SneakyBastardState:
        """Hands as the history implies them (they are all known, D6); the houses below the
        preview in a fresh order from ``rng``."""
        obs = observation
        seats = len(obs.statuses)
        seen: Counter[Card] = Counter(result.house for result in obs.results)
        if obs.house is not None:
            seen[obs.house] += 1
        top: tuple[Card, ...] = ()
        if obs.preview is not None:
            seen[obs.preview] += 1
            top = (obs.preview,)
        unseen = Counter(Card(_HOUSE, value) for value in obs.houses)
        unseen.subtract(seen)
        rest, rng = rng.shuffle(sort_cards(list(unseen.elements())))
        hands = known_hands(obs)
        return SneakyBastardState(
            seats=seats,
            money=obs.money,
            houses=obs.houses,
            minimum_bid=obs.minimum_bid,
            decks=Decks(rng.derive("future"), ("houses",), ((),), (1,)),
            phase=obs.phase,
            round=obs.round,
            house=obs.house,
            deck=(*top, *rest),
            start_player=obs.start_player,
            turn=-1 if obs.turn is None else obs.turn,
            statuses=obs.statuses,
            hands=hands,
            fronts=obs.fronts,
            pending=obs.pending,
            sneaky_cards=obs.sneaky_cards,
            discarded=obs.discarded,
            history=obs.history,
            results=obs.results,
        )

    def determinize(self, state: SneakyBastardState, seat: int, rng: Rng) -> SneakyBastardState:
        """``sample_world(observe(state, seat), rng)``."""
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(
        self, state: SneakyBastardState
    ) -> tuple[SneakyBastardState, tuple[tuple[int, SneakyBastardAction], ...]]:
        """The game's first state (the whole game is one deal: its history is public) and
        every move since."""
        offered = [result.house for result in state.results]
        if state.house is not None and state.phase is not _PHASE_OVER:
            offered.append(state.house)
        first = state.results[0].start_player if state.results else state.start_player
        start = SneakyBastardState(
            seats=state.seats,
            money=state.money,
            houses=state.houses,
            minimum_bid=state.minimum_bid,
            decks=state.decks,
            phase=_PHASE_HOUSE,
            round=0,
            house=None,
            deck=(*offered, *state.deck),
            start_player=first,
            turn=first,
            statuses=(_BIDDER,) * state.seats,
            hands=tuple(starting_hand(state.money) for _ in range(state.seats)),
            fronts=((),) * state.seats,
            pending=(),
            sneaky_cards=(True,) * state.seats,
            discarded=(),
            history=(),
            results=(),
        )
        return _start_round(start, first), tuple((m.seat, m.action) for m in state.history)

    def outcome(self, state: SneakyBastardState) -> Outcome | None:
        """House values in hand; ties broken by money in hand, then shared."""
        if state.phase is not _PHASE_OVER:
            return None
        scores = [house_total(hand) for hand in state.hands]
        keys = [(house_total(hand), money_total(hand)) for hand in state.hands]
        return Outcome.from_keys(scores, keys, self.info.lower_is_better)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: SneakyBastardAction) -> str:
        """``add:money:25``, ``add:house:200``, ``bid``, ``sneak``, ``raise`` or ``pass``."""
        return str(action)

    def parse_action(self, text: str) -> SneakyBastardAction:
        """The action of a text written by :meth:`action_text`."""
        for completion in (PASS, BID, SNEAK, RAISE):
            if text == completion.kind.value:
                return completion
        parts = text.split(":")
        if len(parts) == 3 and parts[0] == "add" and parts[1] in ("money", "house"):
            value = parts[2]
            # ASCII digits only and bounded: int() takes "²" and refuses huge numbers.
            if value.isascii() and value.isdigit() and len(value) <= 9:
                return add(Card(CardKind(parts[1]), int(value)))
        raise InvalidAction(f"not a Sneaky Bastard action: {text[:40]!r}", rule="bad_action_text")

    def encode(self, state: SneakyBastardState) -> bytes:
        """Canonical JSON bytes of the state."""
        return encode_value(_STATE_HEADER, state)

    def decode(self, data: bytes) -> SneakyBastardState:
        """The state :meth:`encode` wrote."""
        return decode_value(_STATE_HEADER, SneakyBastardState, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: SneakyBastardState) -> tuple[str, ...]:
        """Every seat's money set, the houses and the seats' SB cards."""
        cards = [str(Card(_MONEY, v)) for v in state.money] * state.seats
        cards += [str(Card(_HOUSE, v)) for v in state.houses]
        cards += [f"sneaky:{seat}" for seat in range(state.seats)]
        return tuple(sorted(cards))

    def zones(self, state: SneakyBastardState) -> Mapping[str, tuple[str, ...]]:
        """Hands (SB cards included), fronts, the cards laid this turn, the house on offer,
        the house deck and the discarded cards (SB cards of the SB winners included)."""
        zones: dict[str, tuple[str, ...]] = {}
        discarded = [str(card) for card in state.discarded]
        for seat in range(state.seats):
            hand = [str(card) for card in state.hands[seat]]
            front = [str(card) for card in state.fronts[seat]]
            sneaky = f"sneaky:{seat}"
            if not state.sneaky_cards[seat]:
                discarded.append(sneaky)
            elif state.statuses[seat] is _SNEAKER:
                front.append(sneaky)
            else:
                hand.append(sneaky)
            zones[f"hand:{seat}"] = tuple(hand)
            zones[f"front:{seat}"] = tuple(front)
        zones["pending"] = tuple(str(card) for card in state.pending)
        # Once sold (the SB auction), the house on offer is in its buyer's hand.
        offered = state.house is not None and state.phase is _PHASE_HOUSE
        zones["house"] = (str(state.house),) if offered else ()
        zones["deck"] = tuple(str(card) for card in state.deck)
        zones["discarded"] = tuple(discarded)
        return zones

    def max_actions(self, state: SneakyBastardState) -> int:
        """Per round and seat: every card laid once per turn's bid at most, and one
        completion per card laid plus a sneak and a pass (a turn lays at least one card
        unless it sneaks or passes)."""
        cards = len(state.money) * state.seats + len(state.houses)
        return len(state.houses) * state.seats * (2 * cards + 2)


# ---------------------------------------------------------------------- the round's steps


def _highest_house_bid(state: SneakyBastardState, seat: int) -> int:
    """The highest house bid of the bidders other than ``seat`` (0: none)."""
    return max(
        (
            total(state.fronts[s])
            for s in range(state.seats)
            if s != seat and state.statuses[s] is _BIDDER
        ),
        default=0,
    )


def _other_sneaks(state: SneakyBastardState, seat: int) -> bool:
    return any(state.statuses[s] is _SNEAKER for s in range(state.seats) if s != seat)


def _highest_sneaky_bid(state: SneakyBastardState, seat: int) -> int:
    """The highest SB bid of the sneaks other than ``seat`` (-1: none)."""
    return max(
        (
            total(state.fronts[s])
            for s in range(state.seats)
            if s != seat and state.statuses[s] is _SNEAKER
        ),
        default=-1,
    )


T = TypeVar("T")

_TURN_LAST: list[tuple[Any, ...]] = [(None, None, -1, None, None)]  # swapped whole (threads)


def _turn_facts(state: SneakyBastardState, seat: int) -> tuple[bool, int, int, bool, int]:
    """For ``seat``, whose turn it is: whether it is the forced bidder, its total in front,
    the highest other house bid, whether another seat is a sneak, the highest other SB bid.

    They depend only on the phase, the statuses and the fronts, which every step of one
    turn shares (only ``pending`` and the hand change), so the last answer is remembered by
    those tuples' identity (the entry holds them, so the identities stay theirs).
    """
    fronts, statuses, phase = state.fronts, state.statuses, state.phase
    last = _TURN_LAST[0]
    if last[0] is fronts and last[1] is statuses and last[2] == seat and last[3] is phase:
        facts: tuple[bool, int, int, bool, int] = last[4]
        return facts
    # One pass for _forced, _highest_house_bid, _other_sneaks and _highest_sneaky_bid.
    front, highest_house, highest_sneaky = 0, 0, -1
    other_bidder = other_sneak = False
    for other, cards in enumerate(fronts):
        bid = sum([card.value for card in cards]) if cards else 0
        if other == seat:
            front = bid
        elif statuses[other] is _BIDDER:
            other_bidder = True
            if bid > highest_house:
                highest_house = bid
        elif statuses[other] is _SNEAKER:
            other_sneak = True
            if bid > highest_sneaky:
                highest_sneaky = bid
    forced = (
        phase is _PHASE_HOUSE
        and statuses[seat] is _BIDDER
        and not fronts[seat]
        and not other_bidder
    )
    facts = (forced, front, highest_house, other_sneak, highest_sneaky)
    _TURN_LAST[0] = (fronts, statuses, seat, phase, facts)
    return facts


def _forced(state: SneakyBastardState) -> bool:
    """The seat to act is the only bidder left, with nothing in front (D3)."""
    if state.phase is not _PHASE_HOUSE:
        return False
    seat = state.turn
    if state.statuses[seat] is not _BIDDER or state.fronts[seat]:
        return False
    return all(state.statuses[s] is not _BIDDER for s in range(state.seats) if s != seat)


def _skipped(state: SneakyBastardState, seat: int) -> bool:
    """Rules 4.3: out, buyer, the lone sneak before the sale, the leading sneak (D4)."""
    return _is_skipped(state.statuses, state.fronts, seat)


def _is_skipped(
    statuses: tuple[Status, ...], fronts: tuple[tuple[Card, ...], ...], seat: int
) -> bool:
    """:func:`_skipped` on the statuses and fronts alone."""
    status = statuses[seat]
    if status is _BIDDER:
        return False
    if status is not _SNEAKER:  # out or buyer
        return True
    own = total(fronts[seat])
    others = [total(fronts[s]) for s, st in enumerate(statuses) if st is _SNEAKER and s != seat]
    return not others or own > max(others)


def _next_seat(state: SneakyBastardState, after: int) -> int:
    return _next_turn(state.statuses, state.fronts, after)


def _next_turn(
    statuses: tuple[Status, ...], fronts: tuple[tuple[Card, ...], ...], after: int
) -> int:
    """The first seat after ``after``, clockwise, that is not skipped (:func:`_skipped`)."""
    seats = len(statuses)
    for step in range(1, seats + 1):
        seat = (after + step) % seats
        if not _is_skipped(statuses, fronts, seat):
            return seat
    raise AssertionError("no seat can act")  # the sale and SB win rules end the round first


def _replaced(items: tuple[T, ...], at: int, item: T) -> tuple[T, ...]:
    """``items`` with ``items[at]`` replaced."""
    return (*items[:at], item, *items[at + 1 :])


def _after_turn(state: SneakyBastardState, actor: int) -> SneakyBastardState:
    """After a completed turn: the sale, the forced bidder, the SB win, or the next turn."""
    statuses = state.statuses
    if state.phase is _PHASE_HOUSE:
        bidders = [s for s in range(state.seats) if statuses[s] is _BIDDER]
        if len(bidders) == 1:
            (last,) = bidders
            if state.fronts[last]:
                return _sale(state, last, actor)
            hand = state.hands[last]
            if hand and total(hand) >= state.minimum_bid:
                return _evolve(state, turn=last)  # the forced bidder (D3)
            return _free_house(state, last)
        return _evolve(state, turn=_next_seat(state, actor))
    sneaks = [s for s in range(state.seats) if statuses[s] is _SNEAKER]
    if len(sneaks) == 1:
        return _sneaky_win(state, sneaks[0])
    return _evolve(state, turn=_next_seat(state, actor))


def _buy(state: SneakyBastardState, buyer: int) -> SneakyBastardState:
    assert state.house is not None
    statuses = list(state.statuses)
    statuses[buyer] = _BUYER
    hands = list(state.hands)
    hands[buyer] = sort_cards((*hands[buyer], state.house))
    return _evolve(state, statuses=tuple(statuses), hands=tuple(hands))


def _sale(state: SneakyBastardState, buyer: int, causer: int) -> SneakyBastardState:
    """Rules 4.5-4.6: the buyer takes the house; no sneak, one sneak, or the SB auction."""
    state = _buy(state, buyer)
    sneaks = [s for s in range(state.seats) if state.statuses[s] is _SNEAKER]
    if not sneaks:
        price = state.fronts[buyer]
        fronts = list(state.fronts)
        fronts[buyer] = ()
        state = _evolve(state, fronts=tuple(fronts), discarded=(*state.discarded, *price))
        return _end_round(state, buyer, price, None, ())
    if len(sneaks) == 1:
        return _sneaky_win(state, sneaks[0])
    state = _evolve(state, phase=_PHASE_SNEAKY)
    return _evolve(state, turn=_next_seat(state, causer))


def _free_house(state: SneakyBastardState, buyer: int) -> SneakyBastardState:
    """D3: the last bidder cannot reach the minimum; the house is free and every sneak
    takes his cards back."""
    state = _buy(state, buyer)
    hands = list(state.hands)
    fronts = list(state.fronts)
    for seat in range(state.seats):
        if state.statuses[seat] is _SNEAKER:
            hands[seat] = sort_cards((*hands[seat], *fronts[seat]))
            fronts[seat] = ()
    state = _evolve(state, hands=tuple(hands), fronts=tuple(fronts))
    return _end_round(state, buyer, (), None, ())


def _sneaky_win(state: SneakyBastardState, winner: int) -> SneakyBastardState:
    """Rule 4.6: the last sneak discards his bid and SB card and takes the buyer's bid."""
    buyer = state.statuses.index(_BUYER)
    price = state.fronts[buyer]
    own = state.fronts[winner]
    hands = list(state.hands)
    hands[winner] = sort_cards((*hands[winner], *price))
    fronts = list(state.fronts)
    fronts[buyer] = ()
    fronts[winner] = ()
    owned = list(state.sneaky_cards)
    owned[winner] = False
    state = _evolve(
        state,
        hands=tuple(hands),
        fronts=tuple(fronts),
        sneaky_cards=tuple(owned),
        discarded=(*state.discarded, *own),
    )
    return _end_round(state, buyer, price, winner, own)


def _end_round(
    state: SneakyBastardState,
    buyer: int,
    price: tuple[Card, ...],
    winner: int | None,
    sneaky_bid: tuple[Card, ...],
) -> SneakyBastardState:
    """Rule 4.7: record the round; the buyer starts the next one, or the game is over."""
    assert state.house is not None
    result = RoundResult(
        round=state.round,
        house=state.house,
        start_player=state.start_player,
        buyer=buyer,
        price=price,
        sneaky_winner=winner,
        sneaky_bid=sneaky_bid,
    )
    state = _evolve(state, results=(*state.results, result))
    if not state.deck:
        return _evolve(
            state,
            phase=_PHASE_OVER,
            house=None,
            turn=-1,
            start_player=buyer,
            statuses=(_OUT,) * state.seats,
        )
    return _start_round(state, buyer)


def _start_round(state: SneakyBastardState, start: int) -> SneakyBastardState:
    """Rule 4.1: turn up the house (the preview becomes the next house) and begin."""
    return _evolve(
        state,
        phase=_PHASE_HOUSE,
        round=state.round + 1,
        house=state.deck[0],
        deck=state.deck[1:],
        start_player=start,
        turn=start,
        statuses=(_BIDDER,) * state.seats,
        pending=(),
    )


GAME = SneakyBastard()
