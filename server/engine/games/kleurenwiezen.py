"""Kleurenwiezen (Belgian colour whist): the rules engine.

(Work in progress: the public types below are stable; the rules follow.)

Options (names fixed): ``deals`` (int, 0 = automatic: 4 x seats), ``first_dealer``
(``seat0`` | ``random``), ``shuffle_between_deals`` (bool, false), ``sorted_start`` (bool,
false: the initial "steekspel"), ``rondpas_needs_p4`` (bool, false), ``stop_when_decided``
(bool, false). Named deck ``pack``.

Rule ids of refusals (fixed): ``wrong_game``, ``no_such_seat``, ``game_over``,
``not_your_turn``, ``no_such_card``, ``wrong_phase``, ``not_p1``, ``rondpas_not_allowed``,
``dood_not_allowed``, ``suit_taken``, ``nobody_to_join``, ``level_closed``,
``cannot_be_joined``, ``extra_rounds_over``, ``only_higher_suit``, ``bid_too_low``,
``bid_not_allowed``, ``raise_too_low``, ``pastroel_not_allowed``, ``not_in_hand``,
``must_follow_suit``, ``forced_lead``, ``already_discarded``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

# --------------------------------------------------------------------------- cards

SUITS = ("S", "C", "D", "H")
"""The suits in bidding order, low to high: spades, clubs, diamonds, hearts."""
SUIT_VALUE = {"S": 1, "C": 2, "D": 3, "H": 4}
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A")
ALL_CARDS = tuple(rank + suit for suit in SUITS for rank in RANKS)
"""The 52 cards in the stable order: suits S, C, D, H, then rank 2 .. A (``"TH"`` is the
ten of hearts)."""
_ORDER = {card: i for i, card in enumerate(ALL_CARDS)}
ACTIVE = 4
HAND = 13


def suit_of(card: str) -> str:
    """The suit letter of a card text."""
    return card[1]


def rank_of(card: str) -> int:
    """The rank of a card, 0 for a two up to 12 for an ace."""
    return RANKS.index(card[0])


def in_order(cards: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``cards`` in the stable order."""
    return tuple(sorted(cards, key=_ORDER.__getitem__))


# --------------------------------------------------------------------------- enums


class Phase(StrEnum):
    """Where a deal stands (the rules file's section 6 states, then play)."""

    TROEL_AUCTION = "troel_auction"
    DECLARE = "declare"
    OPBIEDEN = "opbieden"
    MISERIE_RESPONSE = "miserie_response"
    DISCARD = "discard"
    PLAY = "play"
    OVER = "over"


class ActionKind(StrEnum):
    """Every kind of move a seat makes."""

    PASS = "pass"
    ASK = "ask"  # suit: propose a colour, looking for a partner
    JOIN = "join"  # suit: join the player who asked that colour
    REASK = "reask"  # keep one's own colour asked (rounds 2 and 3)
    ALONE = "alone"  # suit: play the colour alone
    WAIT = "wait"  # P1 in round 1: wachten
    RONDPAS = "rondpas"
    DOOD = "dood"  # P4 in round 1 after three asks, holding 5+ of the fourth suit
    BID = "bid"  # contract (+ tricks, suit): kleine miserie and everything above it
    RAISE = "raise"  # tricks: a level-1 side raises its bid in the trick auction
    PASTROEL = "pastroel"  # a pair's joiner hands the decision to the asker
    DISCARD = "discard"  # card: the kleine-miserie discard (sealed)
    PLAY = "play"  # card: a card to the trick


class ContractKind(StrEnum):
    """Every contract of the rules file's section 5 table, lowest level first."""

    ALONE = "alone"
    PAIR = "pair"
    KLEINE_MISERIE = "kleine_miserie"
    ABONDANCE = "abondance"
    GROTE_MISERIE = "grote_miserie"
    TROEL = "troel"
    BLOTE_MISERIE = "blote_miserie"
    SOLO_SLIM = "solo_slim"


class BidderState(StrEnum):
    """A seat's standing in the bidding (rules section 6.3); ``out`` sits the deal out."""

    NEW = "new"
    WAITING = "waiting"
    RONDPAS = "rondpas"
    OPEN = "open"
    PAIR_ASKER = "pair_asker"
    PAIR_JOINER = "pair_joiner"
    ALONE = "alone"
    HIGH = "high"
    PASSED = "passed"
    OUT = "out"


class DealEnd(StrEnum):
    """How a deal ended."""

    PLAYED = "played"
    PASSED_OUT = "passed_out"
    RONDPAS = "rondpas"
    DOOD = "dood"


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Bid:
    """A contract as bid: ``tricks`` for alone, pair and abondance (else 0), ``suit`` for
    alone, pair, abondance and solo slim (else "")."""

    kind: ContractKind
    tricks: int = 0
    suit: str = ""

    @property
    def strength(self) -> int:
        """The rules file's strength number (section 5)."""
        return strength(self)


def strength(bid: Bid | None) -> int:
    """The strength of a bid (section 5); -1 for none."""
    if bid is None:
        return -1
    kind = bid.kind
    s = SUIT_VALUE.get(bid.suit, 0)
    if kind is ContractKind.ALONE:
        return 10 * (bid.tricks + 3) + s
    if kind is ContractKind.PAIR:
        return 10 * bid.tricks + s
    if kind is ContractKind.ABONDANCE:
        return 1000 + 10 * bid.tricks + s
    return _FIXED_STRENGTH[kind]


_FIXED_STRENGTH = {
    ContractKind.KLEINE_MISERIE: 105,
    ContractKind.GROTE_MISERIE: 2000,
    ContractKind.TROEL: 3000,
    ContractKind.BLOTE_MISERIE: 4000,
    ContractKind.SOLO_SLIM: 5000,
}


@dataclass(frozen=True, slots=True)
class WiezenAction:
    """One move. ``suit`` for ask, join, alone and a bid of abondance or solo slim;
    ``tricks`` for raise and abondance; ``contract`` for bid; ``card`` for discard and play.
    Text forms: ``pass``, ``wait``, ``rondpas``, ``dood``, ``reask``, ``pastroel``,
    ``ask:H``, ``join:H``, ``alone:H``, ``raise:9``, ``bid:kleine_miserie``,
    ``bid:abondance:9:H``, ``bid:grote_miserie``, ``bid:blote_miserie``,
    ``bid:solo_slim:H``, ``discard:7H``, ``play:7H``."""

    kind: ActionKind
    suit: str = ""
    tricks: int = 0
    contract: ContractKind | None = None
    card: str = ""

    def __str__(self) -> str:
        kind = self.kind
        if kind in (ActionKind.ASK, ActionKind.JOIN, ActionKind.ALONE):
            return f"{kind.value}:{self.suit}"
        if kind is ActionKind.RAISE:
            return f"raise:{self.tricks}"
        if kind in (ActionKind.DISCARD, ActionKind.PLAY):
            return f"{kind.value}:{self.card}"
        if kind is ActionKind.BID and self.contract is not None:
            if self.contract is ContractKind.ABONDANCE:
                return f"bid:{self.contract.value}:{self.tricks}:{self.suit}"
            if self.contract is ContractKind.SOLO_SLIM:
                return f"bid:{self.contract.value}:{self.suit}"
            return f"bid:{self.contract.value}"
        return kind.value

    def bid(self) -> Bid:
        """The contract a ``bid`` action names."""
        assert self.contract is not None
        return Bid(self.contract, self.tricks, self.suit)


PASS = WiezenAction(ActionKind.PASS)
WAIT = WiezenAction(ActionKind.WAIT)
RONDPAS = WiezenAction(ActionKind.RONDPAS)
DOOD = WiezenAction(ActionKind.DOOD)
REASK = WiezenAction(ActionKind.REASK)
PASTROEL = WiezenAction(ActionKind.PASTROEL)


def ask(suit: str) -> WiezenAction:
    return WiezenAction(ActionKind.ASK, suit=suit)


def join(suit: str) -> WiezenAction:
    return WiezenAction(ActionKind.JOIN, suit=suit)


def alone(suit: str) -> WiezenAction:
    return WiezenAction(ActionKind.ALONE, suit=suit)


def raise_to(tricks: int) -> WiezenAction:
    return WiezenAction(ActionKind.RAISE, tricks=tricks)


def bid(contract: ContractKind, tricks: int = 0, suit: str = "") -> WiezenAction:
    return WiezenAction(ActionKind.BID, suit=suit, tricks=tricks, contract=contract)


def discard(card: str) -> WiezenAction:
    return WiezenAction(ActionKind.DISCARD, card=card)


def play(card: str) -> WiezenAction:
    return WiezenAction(ActionKind.PLAY, card=card)


@dataclass(frozen=True, slots=True)
class Event:
    """One public step of a deal's bidding and play: who, what. ``automatic``: the server
    acted for the seat (a waiter with nobody to join passes). A kleine-miserie discard is
    public only as ``discard`` with ``card`` "" (nobody sees the card)."""

    seat: int
    action: WiezenAction
    automatic: bool = False


@dataclass(frozen=True, slots=True)
class Bidder:
    """A seat's standing in the bidding: its state, its colour (open, pair, alone) and its
    standing bid (high); ``outbid`` when a stronger high bid stands."""

    state: BidderState
    suit: str = ""
    bid: Bid | None = None
    outbid: bool = False


@dataclass(frozen=True, slots=True)
class Party:
    """A level-1 side in the trick auction (section 6.4). ``joiner`` is -1 for a lone player
    (``asker`` is then the player); ``speaker`` decides for the side; ``bid`` is its current
    bid (None right after a joiner's pass, until the asker raises alone)."""

    kind: ContractKind
    suit: str
    asker: int
    joiner: int
    speaker: int
    bid: Bid | None
    live: bool = True


@dataclass(frozen=True, slots=True)
class Contract:
    """The contract of a deal: its kind, the tricks bid (alone, pair, abondance), its suit
    (the trump named by the bid; "" for miseries and troel), the declarers in bidding order
    (a pair: asker, joiner; troel: holder, partner)."""

    kind: ContractKind
    tricks: int
    suit: str
    declarers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Play:
    """One card played to a trick."""

    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class TrickRecord:
    """A completed trick: its number (from 1), the plays from the leader on, the trump that
    applied ("" none) and the winner."""

    number: int
    plays: tuple[Play, ...]
    trump: str
    winner: int


@dataclass(frozen=True, slots=True)
class DealResult:
    """A finished deal: its number (from 1), dealer, how it ended, the contract (None for a
    void deal), the tricks the declaring side took (a two-declarer kleine miserie: each
    declarer's, in ``declarer_tricks``), the multiplier and every seat's points."""

    number: int
    dealer: int
    end: DealEnd
    contract: Contract | None
    declarer_tricks: tuple[int, ...]
    multiplier: int
    points: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class WiezenObservation:
    """What one seat (or a spectator, ``seat=None``) may know.

    Private: ``hand`` (the seat's own cards, stable order) and ``discard`` (its own
    kleine-miserie discard, "" none). Everything else is public: the table (``players``,
    ``active`` P1..P4, ``dealer``), the deal's bidding and play history (``history``) with its
    derived facts (``bidders`` per seat, ``high``, ``parties``, ``contract``, ``trump``,
    ``target``, ``partner`` once he has led, the trick in progress and completed tricks,
    tricks won per seat), the troel announcement, the blote-miserie hand once shown
    (``shown``), every hand's size, who has discarded, and the match: deal number, the
    doubling flag, running scores and every finished deal's result.
    """

    private_fields: ClassVar[tuple[str, ...]] = ("hand", "discard")

    seat: int | None
    players: int
    deals: int
    deal_number: int
    dealer: int
    active: tuple[int, ...]
    phase: Phase
    to_act: tuple[int, ...]
    round: int
    troel_holder: int
    troel_aces: int
    bidders: tuple[Bidder, ...]
    high: Bid | None
    rondpas_calls: int
    parties: tuple[Party, ...]
    contract: Contract | None
    trump: str
    target: int
    partner: int
    leader: int
    trick: tuple[Play, ...]
    tricks: tuple[TrickRecord, ...]
    tricks_won: tuple[int, ...]
    hand: tuple[str, ...]
    discard: str
    hand_sizes: tuple[int, ...]
    discarded: tuple[bool, ...]
    shown: tuple[str, ...]
    shown_seat: int
    doubling: bool
    multiplier: int
    scores: tuple[int, ...]
    results: tuple[DealResult, ...]
    history: tuple[Event, ...]
