"""Karel Kakelaar (Robert Brouwer, 999 Games): the rules engine.

Rules source: ``shared/rules/karel_kakelaar.md`` (its decisions D1-D12, restated here as
this project's own). Terms: a *kip* / chicken card is a bid card 3..7 in a player's colour;
a *worm* card (1..8) scores in hand and may be bid; a *moederkip* / mother hen is never a
bid, and played between rounds it brings two cards back from the player's own discard
pile; the *tractor* decides ties; the *robotkip* / robot chicken is the virtual third
bidder of a two-player game.

Components. 25 chicken cards ``chicken:<colour>:<3..7>`` in the colours ``red``,
``yellow``, ``green``, ``blue``, ``purple`` (D2; seat ``i`` plays the ``i``-th colour and
starts with its five cards); 36 worm cards ``worm:<value>:<copy>``; 9 mother hens
``hen:<1..9>``; the tractor (a marker, not a card). The worm distribution is the option
``worm_counts``: how many worms of value 1, 2, .., 8, default ``6,6,5,5,4,4,3,3`` (D1: no
published list exists; 142 worm points in all). The counts must add up to 36, the seed's
number of worm cards, so that the draw pile sizes below hold for every distribution.

Setup, by seat count (2..5 players):

====== ======== ================= ===========
seats  row size removed to box     draw pile
====== ======== ================= ===========
2      3        18                27 (+ robot deck of 15)
3      3        18                27
4      4        9                 36
5      5        0                 45
====== ======== ================= ===========

Unused chicken colours leave the game openly with 3-5 players (zone ``out``); with 2 the 15
chickens of the three unused colours (green, blue, purple) form the face-down robot deck.
The first tractor holder is always a player, never the robot (D10): option
``first_tractor`` (``0``, the default: drawn by the match's RNG among the players; ``1..5``:
player number ``n``, i.e. seat ``n - 1``; a number above the seat count is refused).

Named decks and presets (``GameInfo.decks``):

* ``draw``: the 36 worms and 9 mother hens, ordered once at setup, top card first. The
  first ``removed`` cards (18 / 18 / 9 / 0 for 2 / 3 / 4 / 5 players) go to the box unseen;
  the next ``k`` (row size) cards are round 1's row, positions 1..k in that order, the next
  ``k`` round 2's row, and so on. Example, 4 players: cards 1-9 to the box, 10-13 round 1's
  row (card 10 is position 1), 14-17 round 2's, ..., 42-45 round 9's.
* ``robot``: with 2 players only, the 15 robot chickens, ordered once at setup after the
  draw pile, top card first: card ``r`` is the robot's bid in round ``r`` (cards 10-15 are
  never turned). A ``robot`` preset with 3-5 players is refused (there is no robot).

Chance, in order: the draw pile (preset or shuffle), the robot deck (2 players), the first
tractor holder (``below(players)``, unless the option sets it). Nothing is random later.

Each of the 9 rounds (rules section 4; automatic steps happen inside ``apply``):

1. Row reveal: ``k`` cards from the draw pile to positions 1..k.
2. Bid (sealed, simultaneous): every player with a chicken or worm in hand commits one as
   ``bid:<card>`` (a mother hen never, rule ``hen_not_a_bid``). Others learn only that the
   seat has committed; a bid is final (D9). A player with no chicken or worm gets an empty
   bid automatically (D5: value 0, discards nothing) and is not asked.
3. Reveal and distribute, when the last bid arrives: the robot (2 players) bids the top card
   of its deck. Bidders rank by value, highest first; ties go to the bidder nearest the
   tractor clockwise, distance ``(bidder - tractor) mod S`` with ``S`` bidders (players,
   or 3 with the robot; D3: the holder has distance 0). Bidder ranked ``i`` takes row
   position ``i``; the robot's card leaves the game (D11).
4. Discard: each bid card goes face up onto its owner's discard pile (the robot's out of
   the game).
5. Mother hen (sealed, simultaneous, optional): a player holding a mother hen whose own
   discard pile is not empty decides ``play_mother_hen:<hen>/<c1>,<c2>`` or
   ``skip_mother_hen``; the others skip without being asked. ``take`` lists exactly
   ``min(2, discard size)`` distinct cards of the player's own pile (D6), in card order
   (chickens by colour and value, then worms by value and copy); mother hens are alike, so
   the action names the player's lowest-numbered one. At the reveal each played hen leaves
   the game and its cards go back to hand. At most one hen per player per round.
6. Tractor pass: to the next bidder clockwise (with 2 players: seat 0, seat 1, robot, so
   the robot holds it every third round, D4). Not after round 9.

Round 9's mother-hen phase is the seed's last chance; then the game ends. Score: the worm
values in hand (``score_name`` "worms", highest wins); ties go to the fewer cards in hand;
still tied, a shared victory (D8): ``Outcome.from_keys`` with key ``(worms, -hand size)``.

Clock defaults (server decision, rules section 5): in a bid, the lowest-value biddable card
(a chicken before a worm of equal value, then the lower copy); in the mother-hen phase,
``skip_mother_hen``.

Actions, as text: ``bid:<card>``, ``play_mother_hen:<hen>/<card>[,<card>]``,
``skip_mother_hen``. ``apply`` accepts exactly ``legal_actions`` (bids in hand order, then
for the mother hen every ``take`` in card order followed by the skip); ``_why_illegal`` only
names the rule of a refusal (``wrong_game``, ``no_such_seat``, ``game_over``,
``no_such_card``, ``wrong_phase``, ``already_bid``, ``hen_not_a_bid``, ``not_in_hand``,
``already_decided``, ``not_eligible``, ``no_mother_hen``, ``empty_discard``,
``lowest_hen``, ``take_count``, ``take_order``, ``not_in_discard``).

What each seat sees (D7, D12, rules section 7): its own hand, its own sealed bid and its own
sealed mother-hen decision (``private_fields``); the row; every hand's size; who has
committed; every discard pile; the draw pile's, box's and robot deck's sizes; the cards out
of the game; the tractor; and the public history: each round's tractor, row, revealed bids
(the robot's too), ranking and the cards taken, and the revealed mother-hen decisions. Other
hands are not shown although this history determines them (D12); :func:`known_hands` works
them out for bots and for :meth:`KarelKakelaar.sample_world`, which deals anew only what no
player can know: the order of the draw pile, the box, the order of the robot deck, and the
others' sealed choices (uniformly among what each could have chosen).

rules_version history:

* 1 - first version.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

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
    evolver,
    fast_constructor,
    int_list_option,
    int_option,
    named_presets,
    refuse_unless_legal,
    remember_last,
)

COLOURS = ("red", "yellow", "green", "blue", "purple")
CHICKEN_VALUES = (3, 4, 5, 6, 7)
WORM_VALUES = (1, 2, 3, 4, 5, 6, 7, 8)
WORM_CARDS = 36
MOTHER_HENS = 9
ROUNDS = 9
DEFAULT_WORM_COUNTS = (6, 6, 5, 5, 4, 4, 3, 3)
ROW_SIZE = {2: 3, 3: 3, 4: 4, 5: 5}
REMOVED = {2: 18, 3: 18, 4: 9, 5: 0}


class CardKind(StrEnum):
    """The three kinds of card."""

    CHICKEN = "chicken"
    WORM = "worm"
    MOTHER_HEN = "hen"


@dataclass(frozen=True, slots=True)
class CardInfo:
    """What a card text means: its kind, bid value (0 for a mother hen), colour (chickens)
    and its place in card order."""

    kind: CardKind
    value: int
    colour: str
    order: tuple[int, int, int, int]


def _all_cards() -> dict[str, CardInfo]:
    cards: dict[str, CardInfo] = {}
    for c, colour in enumerate(COLOURS):
        for v in CHICKEN_VALUES:
            cards[f"chicken:{colour}:{v}"] = CardInfo(CardKind.CHICKEN, v, colour, (0, c, v, 0))
    for v in WORM_VALUES:
        for copy in range(1, WORM_CARDS + 1):
            cards[f"worm:{v}:{copy}"] = CardInfo(CardKind.WORM, v, "", (1, 0, v, copy))
    for number in range(1, MOTHER_HENS + 1):
        cards[f"hen:{number}"] = CardInfo(CardKind.MOTHER_HEN, 0, "", (2, 0, 0, number))
    return cards


CARDS: Mapping[str, CardInfo] = _all_cards()
"""Every card text there can be (any ``worm_counts``), with what it means."""


def card_info(card: str) -> CardInfo:
    """What ``card`` means; :class:`InvalidAction` (rule ``no_such_card``) if no card."""
    info = CARDS.get(card)
    if info is None:
        raise InvalidAction(f"there is no card {card[:40]!r}", rule="no_such_card")
    return info


def card_value(card: str) -> int:
    """A card's bid value (chicken 3..7, worm 1..8; a mother hen 0)."""
    return CARDS[card].value


_VALUE = {card: info.value for card, info in CARDS.items()}  # card_value as a table
_WORM_POINTS = {c: i.value if i.kind is CardKind.WORM else 0 for c, i in CARDS.items()}


def worm_points(cards: Sequence[str]) -> int:
    """The worm values among ``cards`` (what a hand scores)."""
    points = _WORM_POINTS
    return sum([points[c] for c in cards])


def biddable(card: str) -> bool:
    """Whether a card may be bid (a chicken or a worm)."""
    return CARDS[card].kind is not CardKind.MOTHER_HEN


def in_card_order(cards: Sequence[str]) -> tuple[str, ...]:
    """``cards`` in card order: chickens by colour and value, worms by value and copy, hens."""
    return tuple(sorted(cards, key=_CARD_RANK.__getitem__))


def _with_card(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    """``in_card_order((*hand, card))`` for a hand already in card order (every hand is)."""
    at = bisect.bisect_right(hand, _CARD_RANK[card], key=_CARD_RANK.__getitem__)
    return (*hand[:at], card, *hand[at:])


# in_card_order's key: each card's place in card order (an int compares faster than the
# order tuple it stands for).
_CARD_RANK = {card: rank for rank, card in enumerate(sorted(CARDS, key=lambda c: CARDS[c].order))}


@functools.cache
def chickens(colour: str) -> tuple[str, ...]:
    """The five chicken cards of a colour."""
    return tuple(f"chicken:{colour}:{v}" for v in CHICKEN_VALUES)


def draw_cards(worm_counts: Sequence[int]) -> tuple[str, ...]:
    """The worms and mother hens of the draw pile, in card order."""
    return _draw_cards(tuple(worm_counts))


@functools.lru_cache(maxsize=64)
def _draw_cards(worm_counts: tuple[int, ...]) -> tuple[str, ...]:
    worms = [
        f"worm:{v}:{k}"
        for v, n in zip(WORM_VALUES, worm_counts, strict=True)
        for k in range(1, n + 1)
    ]
    return (*worms, *(f"hen:{n}" for n in range(1, MOTHER_HENS + 1)))


@functools.cache
def robot_cards(players: int) -> tuple[str, ...]:
    """The robot deck's cards (2 players: the three unused colours), in card order."""
    if players != 2:
        return ()
    return tuple(c for colour in COLOURS[players:] for c in chickens(colour))


class Phase(StrEnum):
    """Where a round stands (the automatic steps happen inside ``apply``)."""

    BID = "bid"
    MOTHER_HEN = "mother_hen"
    OVER = "over"


class ActionKind(StrEnum):
    """The three kinds of player action."""

    BID = "bid"
    PLAY_MOTHER_HEN = "play_mother_hen"
    SKIP_MOTHER_HEN = "skip_mother_hen"


@dataclass(frozen=True, slots=True)
class KarelAction:
    """``BID`` a ``card``; ``PLAY_MOTHER_HEN`` the hen ``card`` taking ``take`` (card order)
    back from the own discard pile; ``SKIP_MOTHER_HEN``."""

    kind: ActionKind
    card: str = ""
    take: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.kind is ActionKind.BID:
            return f"bid:{self.card}"
        if self.kind is ActionKind.PLAY_MOTHER_HEN:
            return f"play_mother_hen:{self.card}/{','.join(self.take)}"
        return "skip_mother_hen"


SKIP = KarelAction(ActionKind.SKIP_MOTHER_HEN)
_action = fast_constructor(KarelAction)  # kind, card, take: positionally


def bid(card: str) -> KarelAction:
    """The action bidding ``card`` (checked to name a card)."""
    card_info(card)
    return KarelAction(ActionKind.BID, card)


def play_mother_hen(hen: str, take: Sequence[str]) -> KarelAction:
    """The action playing mother hen ``hen`` for ``take`` (checked, put in card order)."""
    if card_info(hen).kind is not CardKind.MOTHER_HEN:
        raise InvalidAction(f"{hen} is not a mother hen", rule="not_a_mother_hen")
    for card in take:
        card_info(card)
    if not 1 <= len(take) <= 2 or len(set(take)) != len(take):
        raise InvalidAction("a mother hen takes one or two distinct cards", rule="take_count")
    return KarelAction(ActionKind.PLAY_MOTHER_HEN, hen, in_card_order(take))


@dataclass(frozen=True, slots=True)
class HenDecision:
    """A player's revealed mother-hen decision."""

    seat: int
    action: KarelAction


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """The public record of one round.

    Bidders are the seats in order, then the robot (bidder ``players``, 2 players only).
    ``bids[b]`` is bidder ``b``'s revealed card (None: an empty bid, D5); ``ranking`` lists
    the bidders best first, and ``ranking[i]`` took row position ``i + 1``. ``decisions``
    are the revealed mother-hen decisions of the players who had one, in seat order (empty
    until they are revealed).
    """

    number: int
    tractor: int
    row: tuple[str, ...]
    bids: tuple[str | None, ...]
    ranking: tuple[int, ...]
    decisions: tuple[HenDecision, ...]

    def taken(self, bidder: int) -> str:
        """The row card ``bidder`` took."""
        return self.row[self.ranking.index(bidder)]


@dataclass(frozen=True, slots=True)
class KarelState:
    """The full state of a match (every field; observe() decides who sees what)."""

    worm_counts: tuple[int, ...]
    players: int
    round: int
    phase: Phase
    tractor: int  # the bidder holding the tractor (``players`` is the robot)
    draw: tuple[str, ...]  # top first
    box: tuple[str, ...]  # removed unseen at setup
    robot_deck: tuple[str, ...]  # top first
    row: tuple[str, ...]  # this round's row during the bid, positions 1..k
    hands: tuple[tuple[str, ...], ...]  # card order
    discards: tuple[tuple[str, ...], ...]  # bottom first
    bids: tuple[str | None, ...]  # sealed bids of the current bid
    decisions: tuple[KarelAction | None, ...]  # sealed mother-hen decisions
    out: tuple[str, ...]  # out of the game, openly, in the order they left
    history: tuple[RoundRecord, ...]


@dataclass(frozen=True, slots=True)
class KarelObservation:
    """What one seat (or a spectator, ``seat=None``) may know."""

    private_fields: ClassVar[tuple[str, ...]] = ("hand", "bid", "decision")

    seat: int | None
    worm_counts: tuple[int, ...]
    players: int
    round: int
    rounds: int
    phase: Phase
    tractor: int  # a bidder: ``players`` is the robot
    robot: bool
    row: tuple[str, ...]
    hand: tuple[str, ...]
    bid: str | None
    decision: KarelAction | None
    committed: tuple[bool, ...]
    hand_sizes: tuple[int, ...]
    discards: tuple[tuple[str, ...], ...]
    draw_size: int
    box_size: int
    robot_deck_size: int
    out: tuple[str, ...]
    history: tuple[RoundRecord, ...]


_STATE_HEADER = {"game": "karel_kakelaar", "format": 1}
_BIDS = {card: KarelAction(ActionKind.BID, card) for card in CARDS}
_HENS = frozenset(card for card in CARDS if not biddable(card))  # the mother hens


# ``dataclasses.replace`` without its per-call introspection (the engine's hot path).
_evolve = evolver(KarelState)
_build = fast_constructor(KarelState)  # every field, positionally
_record = fast_constructor(RoundRecord)  # every field, positionally
_hen_decision = fast_constructor(HenDecision)  # seat, action
# Enum members for the hot paths: on Python 3.11 ``Phase.BID`` costs about half a
# microsecond (EnumType's ``__getattr__`` sends every class attribute lookup down a slow
# path), a module global a twentieth of that.
_PHASE_BID, _PHASE_MOTHER_HEN, _PHASE_OVER = Phase.BID, Phase.MOTHER_HEN, Phase.OVER
_KIND_BID, _KIND_PLAY = ActionKind.BID, ActionKind.PLAY_MOTHER_HEN


def _bidders(players: int) -> int:
    return 3 if players == 2 else players


@functools.lru_cache(maxsize=64)
def _options(given: tuple[tuple[str, str], ...]) -> tuple[tuple[int, ...], int]:
    """The worm counts and first tractor of ``new``'s options, resolved and parsed
    (``InvalidOptions`` as there); remembered, as every match at the same options asks."""
    resolved = GAME.info.resolve_options(dict(given))
    return int_list_option(resolved, "worm_counts"), int_option(resolved, "first_tractor")


def _eligible(hand: Sequence[str], discard: Sequence[str]) -> bool:
    """Whether a player decides about a mother hen (holds one, own discard not empty)."""
    return bool(discard) and not _HENS.isdisjoint(hand)


def _hen_choices(hand: Sequence[str], discard: Sequence[str]) -> tuple[KarelAction, ...]:
    """An eligible player's mother-hen actions: each play of the lowest hen, then the skip."""
    for hen in hand:
        if hen in _HENS:
            return _hen_takes(hen, tuple(discard))
    raise ValueError("no mother hen in hand")


@functools.lru_cache(maxsize=4096)
def _hen_takes(hen: str, discard: tuple[str, ...]) -> tuple[KarelAction, ...]:
    """The plays of ``hen`` on a discard pile and the skip (remembered: piles recur across
    matches)."""
    pile = in_card_order(discard)
    takes = tuple(itertools.combinations(pile, 2)) if len(pile) >= 2 else ((pile[0],),)
    plays = _HEN_PLAYS.get(hen)
    if plays is None or len(plays) >= _HEN_PLAYS_KEPT:
        plays = _HEN_PLAYS[hen] = {}
    try:
        return (*map(plays.__getitem__, takes), SKIP)  # a loop in C: the usual case
    except KeyError:
        return (*[plays.get(take) or _hen_play(plays, hen, take) for take in takes], SKIP)


# A pile differs from round to round, but its pairs recur: each play is built once (a
# frozen dataclass costs about a microsecond to build, and a pile of 9 has 36 pairs).
_HEN_PLAYS: dict[str, dict[tuple[str, ...], KarelAction]] = {}  # by hen, then by take
# Takes kept per hen, started anew when full: a bound for any worm_counts. The default
# counts allow about 1,600 (a pile holds its owner's 5 chickens and any of the 36 worms).
_HEN_PLAYS_KEPT = 4096


def _hen_play(
    plays: dict[tuple[str, ...], KarelAction], hen: str, take: tuple[str, ...]
) -> KarelAction:
    action = plays[take] = _action(_KIND_PLAY, hen, take)
    return action


def rank_bidders(bids: Sequence[str | None], tractor: int) -> tuple[int, ...]:
    """Bidders best first: value descending (an empty bid is 0), ties by clockwise distance
    from the tractor holder (D3)."""
    count = len(bids)
    # (-value, distance) as one int: a distance is below 8 (at most 5 bidders).
    keys = [((_VALUE[c] if c else 0) << 3) - (b - tractor) % count for b, c in enumerate(bids)]
    return tuple(sorted(range(count), key=keys.__getitem__, reverse=True))


def known_hands(observation: KarelObservation) -> tuple[tuple[str, ...], ...]:
    """Every player's hand as the public history determines it (before sealed bids of the
    current round, which only their owners know), in card order. The observer's own hand
    is the observation's (it already lacks its sealed bid)."""
    obs = observation
    hands = [set(chickens(COLOURS[s])) for s in range(obs.players)]
    for record in obs.history:
        for s in range(obs.players):
            card = record.bids[s]
            if card is not None:
                hands[s].discard(card)
        for position, bidder in enumerate(record.ranking):
            if bidder < obs.players:
                hands[bidder].add(record.row[position])
        for decision in record.decisions:
            if decision.action.kind is ActionKind.PLAY_MOTHER_HEN:
                hands[decision.seat].discard(decision.action.card)
                hands[decision.seat].update(decision.action.take)
    out = [in_card_order(list(hand)) for hand in hands]
    if obs.seat is not None and 0 <= obs.seat < obs.players:
        out[obs.seat] = obs.hand
    return tuple(out)


_TO_ACT_LAST: list[tuple[Any, tuple[int, ...]]] = [(None, ())]  # swapped whole (threads)


def _to_act(state: KarelState) -> tuple[int, ...]:
    """:meth:`KarelKakelaar.to_act` computed."""
    if state.phase is _PHASE_BID:
        # A hand with something to bid is one that is not all mother hens.
        hands = state.hands
        return tuple(
            [
                s
                for s, bid in enumerate(state.bids)
                if bid is None and not _HENS.issuperset(hands[s])
            ]
        )
    if state.phase is _PHASE_MOTHER_HEN:
        hands, discards = state.hands, state.discards
        return tuple(
            [
                s
                for s, decision in enumerate(state.decisions)
                if decision is None and _eligible(hands[s], discards[s])
            ]
        )
    return ()


class KarelKakelaar:
    """The Karel Kakelaar rules (see the module docstring)."""

    info = GameInfo(
        game_id="karel_kakelaar",
        name="Karel Kakelaar",
        rules_version=1,
        min_seats=2,
        max_seats=5,
        options=(
            OptionSpec(
                "worm_counts",
                OptionKind.INT_LIST,
                ",".join(map(str, DEFAULT_WORM_COUNTS)),
                "how many worm cards of value 1, 2, .., 8 (36 in all; the default is the "
                "rules file's D1, as no published list exists)",
                minimum=0,
                maximum=WORM_CARDS,
                min_items=len(WORM_VALUES),
                max_items=len(WORM_VALUES),
            ),
            OptionSpec(
                "first_tractor",
                OptionKind.INT,
                "0",
                "the player who holds the tractor first, numbered from 1 (1 is seat 0); "
                "0: drawn at random among the players",
                minimum=1,
                maximum=5,
                automatic=True,
            ),
        ),
        simultaneous=True,
        description="Sealed simultaneous bids for a row of worms; rank decides who takes "
        "which card, ties go to the tractor. Most worms in hand wins.",
        score_name="worms",
        lower_is_better=False,
        decks=(
            DeckSpec(
                "draw",
                "the worms and mother hens, ordered at setup, top first: the first 18/18/9/0 "
                "cards (2/3/4/5 players) go to the box unseen, then each round's row, "
                "position 1 first",
            ),
            DeckSpec(
                "robot",
                "2 players only: the robot chicken's 15 chickens (green, blue, purple), "
                "ordered at setup, top first: card r is the robot's bid in round r",
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
    ) -> KarelState:
        """Set up, order the decks (presets as the module says) and reveal round 1's row."""
        counts, first = _options(tuple(sorted(options.items())))
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise InvalidOptions(
                f"Karel Kakelaar takes 2-5 players, not {seats}", rule="seat_count"
            )
        if sum(counts) != WORM_CARDS:
            raise InvalidOptions(
                f"option worm_counts: the counts add up to {sum(counts)}, not {WORM_CARDS}",
                rule="worm_count",
            )
        if first > seats:
            raise InvalidOptions(
                f"option first_tractor: there is no player {first} among {seats}",
                rule="no_such_player",
            )
        if presets and seats != 2 and "robot" in named_presets(self.info.decks, presets):
            raise InvalidOptions(
                f"there is no robot deck with {seats} players", rule="no_robot_deck"
            )
        contents = {"draw": draw_cards(counts), "robot": robot_cards(seats)}
        decks = Decks.checked(rng, self.info.decks, presets, contents)
        order, decks = decks.order("draw", contents["draw"])
        robot: tuple[str, ...] = ()
        if seats == 2:
            robot, decks = decks.order("robot", contents["robot"])
        if first == 0:
            tractor, decks = decks.below(seats)
        else:
            tractor = first - 1
        removed = REMOVED[seats]
        unused = () if seats == 2 else tuple(c for col in COLOURS[seats:] for c in chickens(col))
        state = KarelState(
            worm_counts=counts,
            players=seats,
            round=1,
            phase=Phase.BID,
            tractor=tractor,
            draw=order[removed:],
            box=order[:removed],
            robot_deck=robot,
            row=(),
            hands=tuple(chickens(COLOURS[s]) for s in range(seats)),
            discards=((),) * seats,
            bids=(None,) * seats,
            decisions=(None,) * seats,
            out=unused,
            history=(),
        )
        return self._reveal_row(state)

    # ------------------------------------------------------------------ queries

    def to_act(self, state: KarelState) -> tuple[int, ...]:
        """Players still to bid (with a card to bid), or still to decide about a hen.

        The last answer is remembered by the state's identity (states are values; the
        entry holds the state, so its identity is not reused): ``apply`` asks it of the
        state it returns, and the caller asks again of that same state.
        """
        last = _TO_ACT_LAST[0]
        if last[0] is state:
            return last[1]
        seats = _to_act(state)
        _TO_ACT_LAST[0] = (state, seats)
        return seats

    @remember_last
    def legal_actions(self, state: KarelState, seat: int) -> tuple[KarelAction, ...]:
        """Bids: every chicken and worm in hand. Mother hen: each take, then the skip."""
        if not 0 <= seat < state.players:
            return ()
        if state.phase is _PHASE_BID:
            if state.bids[seat] is not None:
                return ()
            return tuple([_BIDS[c] for c in state.hands[seat] if c not in _HENS])
        if state.phase is _PHASE_MOTHER_HEN:
            hand, discard = state.hands[seat], state.discards[seat]
            if state.decisions[seat] is not None or not _eligible(hand, discard):
                return ()
            return _hen_choices(hand, discard)
        return ()

    def default_action(self, state: KarelState, seat: int) -> KarelAction:
        """The lowest biddable card (chicken first on equal value); or skip the mother hen."""
        legal = self.legal_actions(state, seat)
        if not legal:
            raise NotYourTurn(f"seat {seat} need not act now")
        if state.phase is _PHASE_BID:
            return min(legal, key=lambda a: (CARDS[a.card].value, CARDS[a.card].order))
        return SKIP

    # ------------------------------------------------------------------ the mutator

    def apply(self, state: KarelState, seat: int, action: KarelAction) -> KarelState:
        """Play one of ``legal_actions``; the given state is never changed."""
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        if action.kind is _KIND_BID:
            return self._bid(state, seat, action.card)
        return self._decide(state, seat, action)

    def _why_illegal(self, state: KarelState, seat: int, action: KarelAction) -> EngineError | None:
        """The rule an action not in ``legal_actions`` breaks (a diagnostic only)."""
        if not isinstance(action, KarelAction):
            return InvalidAction("not a Karel Kakelaar action", rule="wrong_game")
        if not 0 <= seat < state.players:
            return InvalidAction(f"there is no seat {seat}", rule="no_such_seat")
        if state.phase is Phase.OVER:
            return GameOver("the match is over")
        for card in (
            (action.card, *action.take) if action.kind is not ActionKind.SKIP_MOTHER_HEN else ()
        ):
            if card not in CARDS:
                return InvalidAction(f"there is no card {card[:40]!r}", rule="no_such_card")
        hand, discard = state.hands[seat], state.discards[seat]
        if action.kind is ActionKind.BID:
            if state.phase is not Phase.BID:
                return IllegalAction("no bids are being made now", rule="wrong_phase")
            if state.bids[seat] is not None:
                return IllegalAction("you have already bid this round; it is final", "already_bid")
            if CARDS[action.card].kind is CardKind.MOTHER_HEN:
                return IllegalAction("a mother hen is never a bid", rule="hen_not_a_bid")
            return IllegalAction(f"{action.card} is not in your hand", rule="not_in_hand")
        if state.phase is not Phase.MOTHER_HEN:
            return IllegalAction("mother hens are played after a round's bids", "wrong_phase")
        if state.decisions[seat] is not None:
            return IllegalAction(
                "you have already decided about a mother hen this round", "already_decided"
            )
        if action.kind is ActionKind.SKIP_MOTHER_HEN:
            return IllegalAction("you have no mother hen to decide about", rule="not_eligible")
        if not any(CARDS[c].kind is CardKind.MOTHER_HEN for c in hand):
            return IllegalAction("you hold no mother hen", rule="no_mother_hen")
        if action.card not in hand:
            return IllegalAction(f"{action.card} is not in your hand", rule="not_in_hand")
        if not discard:
            return IllegalAction("your discard pile is empty (D6)", rule="empty_discard")
        if CARDS[action.card].kind is not CardKind.MOTHER_HEN:
            return InvalidAction(f"{action.card} is not a mother hen", rule="not_a_mother_hen")
        lowest = min(CARDS[c].order for c in hand if CARDS[c].kind is CardKind.MOTHER_HEN)
        if CARDS[action.card].order != lowest:
            return IllegalAction(
                "mother hens are alike: play your lowest-numbered one", rule="lowest_hen"
            )
        if len(action.take) != min(2, len(discard)) or len(set(action.take)) != len(action.take):
            return IllegalAction(
                f"take exactly {min(2, len(discard))} distinct card(s) of your discard pile",
                rule="take_count",
            )
        if any(card not in discard for card in action.take):
            return IllegalAction("take only cards of your own discard pile", "not_in_discard")
        return IllegalAction("list the cards to take in card order", rule="take_order")

    def _bid(self, state: KarelState, seat: int, card: str) -> KarelState:
        # A sealed commitment changes nobody else's turn: the seats still to act are the
        # given state's but this one (remembered for the caller's to_act).
        last = _TO_ACT_LAST[0]
        seats = last[1] if last[0] is state else _to_act(state)
        waiting = tuple([s for s in seats if s != seat])
        hands = list(state.hands)
        hand = hands[seat]
        at = hand.index(card)
        hands[seat] = hand[:at] + hand[at + 1 :]
        bids = list(state.bids)
        bids[seat] = card
        if not waiting:  # the last bid: straight on to the distribution
            return self._distribute(state, hands, tuple(bids))
        s = state  # _evolve(state, hands=..., bids=...) spelt out: a bid is most moves
        state = _build(
            s.worm_counts,
            s.players,
            s.round,
            s.phase,
            s.tractor,
            s.draw,
            s.box,
            s.robot_deck,
            s.row,
            tuple(hands),
            s.discards,
            tuple(bids),
            s.decisions,
            s.out,
            s.history,
        )
        _TO_ACT_LAST[0] = (state, waiting)
        return state

    def _decide(self, state: KarelState, seat: int, action: KarelAction) -> KarelState:
        last = _TO_ACT_LAST[0]  # as in _bid
        seats = last[1] if last[0] is state else _to_act(state)
        waiting = tuple([s for s in seats if s != seat])
        decisions = list(state.decisions)
        decisions[seat] = action
        if not waiting:  # the last decision: straight on to the reveal
            return self._resolve_mother_hens(state, decisions)
        state = _evolve(state, decisions=tuple(decisions))
        _TO_ACT_LAST[0] = (state, waiting)
        return state

    # ------------------------------------------------------------------ automatic steps

    def _reveal_row(self, state: KarelState) -> KarelState:
        """ROW_REVEAL, then the bid (resolved at once if nobody can bid, D5)."""
        k = ROW_SIZE[state.players]
        state = _evolve(
            state,
            phase=_PHASE_BID,
            row=state.draw[:k],
            draw=state.draw[k:],
            bids=(None,) * state.players,
        )
        if self.to_act(state):
            return state
        return self._distribute(state)

    def _distribute(
        self,
        state: KarelState,
        hands_now: list[tuple[str, ...]] | None = None,
        bids_now: tuple[str | None, ...] | None = None,
    ) -> KarelState:
        """REVEAL_AND_DISTRIBUTE and DISCARD, then the mother-hen phase. ``hands_now`` and
        ``bids_now``, when given, stand for ``state``'s (the last bid, not built as a state
        of its own)."""
        players = state.players
        bids = state.bids if bids_now is None else bids_now
        out = state.out
        robot_deck = state.robot_deck
        if players == 2:
            bids = (*bids, robot_deck[0])
            robot_deck = robot_deck[1:]
        ranking = rank_bidders(bids, state.tractor)
        hands = list(state.hands) if hands_now is None else hands_now
        discards = list(state.discards)
        row = state.row
        rank, rank_of = _CARD_RANK, _CARD_RANK.__getitem__
        for position, bidder in enumerate(ranking):
            card = row[position]
            bid_card = bids[bidder]
            if bidder < players:  # every player ranks, takes a card and discards his bid
                hand = hands[bidder]  # _with_card(hand, card), inline
                at = bisect.bisect_right(hand, rank[card], key=rank_of)
                hands[bidder] = (*hand[:at], card, *hand[at:])
                if bid_card is not None:
                    discards[bidder] = (*discards[bidder], bid_card)
            else:  # the robot's bid and its row card leave the game (D11)
                out = (*out, *(c for c in (bid_card, card) if c is not None))
        record = _record(state.round, state.tractor, row, bids, ranking, ())
        nobody = (None,) * players
        s = state  # _evolve spelt out
        state = _build(
            s.worm_counts,
            players,
            s.round,
            _PHASE_MOTHER_HEN,
            s.tractor,
            s.draw,
            s.box,
            robot_deck,
            (),  # row
            tuple(hands),
            tuple(discards),
            nobody,  # bids
            nobody,  # decisions
            out,
            (*s.history, record),
        )
        # _to_act of the new state: nobody has decided yet.
        waiting = tuple(
            [s for s in range(players) if discards[s] and not _HENS.isdisjoint(hands[s])]
        )
        if waiting:
            _TO_ACT_LAST[0] = (state, waiting)
            return state
        return self._resolve_mother_hens(state)

    def _resolve_mother_hens(
        self, state: KarelState, decisions: Sequence[KarelAction | None] | None = None
    ) -> KarelState:
        """Reveal and apply the mother-hen decisions, then TRACTOR_PASS and the next row
        (ROW_REVEAL as in :meth:`_reveal_row`, in the same step). ``decisions``, when
        given, stand for ``state``'s (the last decision, not built as a state of its own)."""
        hands = list(state.hands)
        discards = list(state.discards)
        out = state.out
        revealed = []
        for s, action in enumerate(state.decisions if decisions is None else decisions):
            if action is None:
                continue
            revealed.append(_hen_decision(s, action))
            if action.kind is _KIND_PLAY:
                hen, take = action.card, action.take
                out = (*out, hen)
                hand = hands[s]
                if hand.count(hen) == 1:  # always: the hand (in card order) less the hen
                    at = hand.index(hen)
                    hand = hand[:at] + hand[at + 1 :]
                    for card in take:
                        hand = _with_card(hand, card)
                    hands[s] = hand
                else:
                    hands[s] = in_card_order([*(c for c in hand if c != hen), *take])
                discards[s] = tuple([c for c in discards[s] if c not in take])
        history = state.history
        last = history[-1]
        record = (
            _record(last.number, last.tractor, last.row, last.bids, last.ranking, tuple(revealed))
            if revealed or last.decisions
            else last  # nothing to reveal: the record as it is
        )
        players = state.players
        nobody = (None,) * players
        if state.round >= ROUNDS:
            return _evolve(
                state,
                phase=_PHASE_OVER,
                hands=tuple(hands),
                discards=tuple(discards),
                decisions=nobody,
                out=out,
                history=(*history[:-1], record),
            )
        k = ROW_SIZE[players]
        draw = state.draw
        state = _build(  # _evolve spelt out: every field but three changes
            state.worm_counts,
            players,
            state.round + 1,
            _PHASE_BID,
            (state.tractor + 1) % _bidders(players),
            draw[k:],
            state.box,
            state.robot_deck,
            draw[:k],  # row
            tuple(hands),
            tuple(discards),
            nobody,  # bids
            nobody,  # decisions
            out,
            (*history[:-1], record),
        )
        # _to_act of the new state: nobody has bid yet (D5: a hand of hens only bids nothing).
        waiting = tuple([s for s in range(players) if not _HENS.issuperset(hands[s])])
        if waiting:
            _TO_ACT_LAST[0] = (state, waiting)
            return state
        return self._distribute(state)

    # ------------------------------------------------------------------ views

    def observe(self, state: KarelState, seat: int | None) -> KarelObservation:
        """A seat's own hand and sealed choices, plus everything public."""
        own = seat is not None and 0 <= seat < state.players
        if state.phase is _PHASE_BID:
            committed = tuple(b is not None for b in state.bids)
        elif state.phase is _PHASE_MOTHER_HEN:
            committed = tuple(d is not None for d in state.decisions)
        else:
            committed = (False,) * state.players
        return KarelObservation(
            seat=seat,
            worm_counts=state.worm_counts,
            players=state.players,
            round=state.round,
            rounds=ROUNDS,
            phase=state.phase,
            tractor=state.tractor,
            robot=state.players == 2,
            row=state.row,
            hand=state.hands[seat] if own and seat is not None else (),
            bid=state.bids[seat] if own and seat is not None else None,
            decision=state.decisions[seat] if own and seat is not None else None,
            committed=committed,
            hand_sizes=tuple(len(hand) for hand in state.hands),
            discards=state.discards,
            draw_size=len(state.draw),
            box_size=len(state.box),
            robot_deck_size=len(state.robot_deck),
            out=state.out,
            history=state.history,
        )

    def sample_world(self, observation: KarelObservation, rng: Rng) -> KarelState:
        """Hands as the history determines them; the others' sealed choices drawn among
        what each could have chosen; the unseen worms and hens dealt anew to the draw pile
        and the box, and the robot's unturned chickens shuffled."""
        obs = observation
        players = obs.players
        own = obs.seat if obs.seat is not None and 0 <= obs.seat < players else None
        hands = [list(hand) for hand in known_hands(obs)]
        bids: list[str | None] = [None] * players
        decisions: list[KarelAction | None] = [None] * players
        for s in range(players):
            if s == own:
                bids[s], decisions[s] = obs.bid, obs.decision
                continue
            if not obs.committed[s]:
                continue
            if obs.phase is Phase.BID:
                choices = [c for c in hands[s] if biddable(c)]
                index, rng = rng.below(len(choices))
                bids[s] = choices[index]
                hands[s].remove(choices[index])
            else:
                options = _hen_choices(hands[s], obs.discards[s])
                index, rng = rng.below(len(options))
                decisions[s] = options[index]
        seen = set(obs.row) | set(obs.out)
        for hand in hands:
            seen.update(hand)
        for pile in obs.discards:
            seen.update(pile)
        seen.update(b for b in bids if b is not None)
        unseen = [c for c in draw_cards(obs.worm_counts) if c not in seen]
        shuffled, rng = rng.shuffle(unseen)
        turned = {c for record in obs.history for c in record.bids[players:] if c is not None}
        robot_left = [c for c in robot_cards(players) if c not in turned]
        robot_deck, rng = rng.shuffle(robot_left)
        return KarelState(
            worm_counts=obs.worm_counts,
            players=players,
            round=obs.round,
            phase=obs.phase,
            tractor=obs.tractor,
            draw=shuffled[: obs.draw_size],
            box=shuffled[obs.draw_size :],
            robot_deck=robot_deck,
            row=obs.row,
            hands=tuple(tuple(hand) for hand in hands),
            discards=obs.discards,
            bids=tuple(bids),
            decisions=tuple(decisions),
            out=obs.out,
            history=obs.history,
        )

    def determinize(self, state: KarelState, seat: int, rng: Rng) -> KarelState:
        """``sample_world(observe(state, seat), rng)``."""
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(self, state: KarelState) -> tuple[KarelState, tuple[tuple[int, KarelAction], ...]]:
        """The state after setup (the whole game is one deal) and every action since: each
        round's bids in seat order, then its mother-hen decisions in seat order."""
        players = state.players
        rows = [c for record in state.history for c in record.row]
        turned = [c for record in state.history for c in record.bids[players:] if c is not None]
        unused = (
            () if players == 2 else tuple(c for col in COLOURS[players:] for c in chickens(col))
        )
        start = KarelState(
            worm_counts=state.worm_counts,
            players=players,
            round=1,
            phase=Phase.BID,
            tractor=state.history[0].tractor if state.history else state.tractor,
            draw=(*rows, *state.row, *state.draw),
            box=state.box,
            robot_deck=(*turned, *state.robot_deck),
            row=(),
            hands=tuple(chickens(COLOURS[s]) for s in range(players)),
            discards=((),) * players,
            bids=(None,) * players,
            decisions=(None,) * players,
            out=unused,
            history=(),
        )
        actions: list[tuple[int, KarelAction]] = []
        for record in state.history:
            actions.extend((s, _BIDS[c]) for s, c in enumerate(record.bids[:players]) if c)
            actions.extend((d.seat, d.action) for d in record.decisions)
        actions.extend((s, _BIDS[c]) for s, c in enumerate(state.bids) if c is not None)
        actions.extend((s, d) for s, d in enumerate(state.decisions) if d is not None)
        return self._reveal_row(start), tuple(actions)

    def outcome(self, state: KarelState) -> Outcome | None:
        """Worms in hand, highest first; ties to the fewer cards in hand, then shared."""
        if state.phase is not _PHASE_OVER:
            return None
        scores = [worm_points(hand) for hand in state.hands]
        keys = [(score, -len(hand)) for score, hand in zip(scores, state.hands, strict=True)]
        return Outcome.from_keys(scores, keys, self.info.lower_is_better)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: KarelAction) -> str:
        """``bid:worm:5:2``, ``play_mother_hen:hen:3/worm:2:1,chicken:red:7``,
        ``skip_mother_hen``."""
        return str(action)

    def parse_action(self, text: str) -> KarelAction:
        """The action of a text written by :meth:`action_text` (``take`` put in card order)."""
        try:
            if text == "skip_mother_hen":
                return SKIP
            kind, sep, rest = text.partition(":")
            if sep and kind == "bid":
                return bid(rest)
            if sep and kind == "play_mother_hen":
                hen, slash, take = rest.partition("/")
                if slash:
                    return play_mother_hen(hen, take.split(","))
        except InvalidAction:
            pass
        raise InvalidAction(f"not a Karel Kakelaar action: {text[:40]!r}", rule="bad_action_text")

    def encode(self, state: KarelState) -> bytes:
        """Canonical JSON bytes of the state."""
        return encode_value(_STATE_HEADER, state)

    def decode(self, data: bytes) -> KarelState:
        """The state :meth:`encode` wrote."""
        return decode_value(_STATE_HEADER, KarelState, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: KarelState) -> tuple[str, ...]:
        """All 25 chickens, the worms of ``worm_counts`` and the 9 mother hens."""
        every = [c for colour in COLOURS for c in chickens(colour)]
        return tuple(sorted([*every, *draw_cards(state.worm_counts)]))

    def zones(self, state: KarelState) -> Mapping[str, tuple[str, ...]]:
        """Draw pile, box, robot deck, row, hands, sealed bids, discard piles, out of game."""
        zones: dict[str, tuple[str, ...]] = {
            "draw": state.draw,
            "box": state.box,
            "robot_deck": state.robot_deck,
            "row": state.row,
            "out": state.out,
        }
        for s in range(state.players):
            zones[f"hand:{s}"] = state.hands[s]
            card = state.bids[s]
            zones[f"bid:{s}"] = () if card is None else (card,)
            zones[f"discard:{s}"] = state.discards[s]
        return zones

    def max_actions(self, state: KarelState) -> int:
        """Per round one bid and at most one mother-hen decision per player."""
        return ROUNDS * 2 * state.players


GAME = KarelKakelaar()
