"""Kleurenwiezen (Belgian colour whist): the rules engine.

Rules source: ``shared/rules/kleurenwiezen.md`` (a club rule sheet, settled by public
sources); its decisions D1-D16 are restated here as this project's own. Dutch terms: *troel*
(three or four aces in one hand), *pastroel* (a pair's joiner hands the decision to the
asker), *miserie* (take no trick: *kleine* with a discard, *grote*, *blote* with the hand
shown), *abondance* (9+ tricks alone, declarer leads), *solo slim* (all 13), *rondpas* (the
first three agree to pass: the next played deal counts double), *dood* (the fourth player
holds five of the only colour nobody asked), *wachten* (P1 waits to join), *opbieden* (the
trick auction between level-1 sides).

Table (D1): 4-6 seats, 4 play each deal: P1..P4 are the four seats after the dealer,
clockwise (with 4 seated, P4 is the dealer); the others sit the deal out and score 0.
The dealer moves one seat clockwise every deal. Every deal counts towards ``deals``, void
ones included (D3).

Cards: ``"<rank><suit>"``, ranks ``2``-``9``, ``T``, ``J``, ``Q``, ``K``, ``A``; suits
``S`` < ``C`` < ``D`` < ``H`` (the bidding order; it never decides a trick). Stable order:
suit, then rank (hands are kept and listed in it).

Named deck ``pack`` (the 52 cards, top first, as dealt: 4-4-5 from P1, P1's cards at pack
positions 1-4, 17-20 and 33-37). The first pack is shuffled (option ``sorted_start``: then
dealt 4-4-5, each hand sorted and the hands stacked, P1's on top: the steekspel), the first
dealer drawn if ``first_dealer`` is ``random``, and the pack cut. After each deal the pack
is gathered without shuffling (section 4.1): the tricks in the order played, each in play
order, then any cards not in tricks (hands left by ``stop_when_decided`` P1..P4, then the
kleine-miserie discards P1..P4); an unplayed deal gathers the four hands P1..P4 in dealt
order. The cut takes ``4 + below(45)`` cards (4..48) from the top to the bottom
(``shuffle_between_deals``: a fresh shuffle instead, D2). A preset replaces the whole
step: every deal, the first included, takes the next preset order as dealt.

Options: ``deals`` (0 = automatic: 4 per seated player), ``first_dealer`` (``seat0`` or
``random``), ``shuffle_between_deals``, ``sorted_start``, ``rondpas_needs_p4`` (the fourth
player confirms rondpas too; the seed asks only P2 and P3), ``stop_when_decided`` (the play
ends once no trick can change the score: a miserie when every declarer has taken a trick,
solo slim when the opponents have; D14's default plays every trick).

Moves (``WiezenAction``, text forms): ``pass``, ``wait``, ``rondpas``, ``dood``,
``reask``, ``pastroel``, ``ask:H``, ``join:H``, ``alone:H``, ``raise:9``,
``bid:kleine_miserie``, ``bid:abondance:9:H``, ``bid:grote_miserie``,
``bid:blote_miserie``, ``bid:solo_slim:H``, ``discard:7H``, ``play:7H``.

The deal (section 6; one source of legality, :meth:`Kleurenwiezen.legal_actions`):

* Troel check, automatic: a hand of 3 or 4 aces is announced (``troel_holder``,
  ``troel_aces``) and the deal goes to the troel auction: P1..P4 once each, ``pass``,
  blote miserie over troel, solo slim over both. Nobody bid: troel. The partner is the
  holder of the fourth ace (3 aces; he must lead it to trick 1, which has no trump, and
  the suit of his lead to trick 2 is trump: target 9 if it is the fourth ace's suit, else
  10, D5) or the holder of the highest heart outside the troel hand (4 aces; hearts trump,
  target 9; he leads that heart). He leads, so play shows him at once (``partner``).
* DECLARE, round 1: P1..P4 once each: ``pass``; ``ask`` a free colour; ``join`` an asker
  without partner; ``bid`` kleine miserie (a second one joins a lone kleine miserie, D9),
  abondance, grote or blote miserie or solo slim above the standing high bid; ``wait``
  (P1); ``rondpas`` (P1 proposes, P2 and P3 confirm in turn; anything else lapses it and
  its callers pass, D6; confirmed it ends the deal); ``dood`` (P4, after three asks, with
  5+ of the fourth suit: the deal ends). Level-1 moves only while the high bid is none or
  kleine miserie; a bid of abondance or more passes every waiter, asker and pair. Rounds
  2, 3, ...: clockwise from P1, only waiters (join or pass; with nobody to join the server
  passes for them, an ``automatic`` event), askers without partner (``pass``, ``alone`` in
  their colour or a higher free one, ``join`` a higher asker, and in rounds 2-3 only
  ``reask`` and ``ask`` a higher free colour when someone could still join it: a waiter
  or a lower asker, D7) and outbid high bidders (``bid`` higher or ``pass``). A round
  with nobody to act ends DECLARE: a bid of abondance or more is the contract; nothing:
  passed out; only kleine miserie: it; one level-1 side alone: its minimum (alone 5,
  pair 8); else the trick auction.
* OPBIEDEN (6.4): sides by suit, lowest first and round again, skipping the strongest
  (kleine miserie counts 105 and never speaks). A side raises (``raise``) to a stronger bid
  or passes; a pair's joiner speaks; his ``pass`` leaves the asker alone in the same
  colour, to raise as a solo or pass at once (D8); his ``pastroel`` (only when 11+ tricks
  are needed, and some raise is possible) lets the asker speak for the pair. A side left
  strongest over a standing kleine miserie blocked it: MISERIE_RESPONSE.
* MISERIE_RESPONSE (6.5): the kleine-miserie bidders, in the order they bid, answer
  with abondance or more (the level-1 side is then out) or ``pass`` (out for good); an
  outbid answerer answers again; nobody bids: the blocking bid is the contract.
* Contract (6.6): trump, target, first leader (abondance: the declarer; solo slim: P1, or
  P2 when P1 declares, D12; troel: the partner; else P1). Kleine miserie: every active
  seat discards one card, sealed and simultaneous (several seats in ``to_act``); nobody
  ever sees another's discard (D13); then 12 tricks. So ``GameInfo.simultaneous`` is
  true, as the protocol defines it (the game has sealed simultaneous choices), although
  the game is turn-based but for this one step.
* Play: follow suit if possible, else any card; no duty to trump (D11). Highest trump
  wins, else the highest card of the suit led. Blote miserie: from the end of trick 1 the
  declarer's remaining cards are public (``shown``).

Scoring (section 9, ``score_deal``; every deal zero-sum over the four, sit-outs 0; times 2
on the first played deal after a rondpas deal, a flag, never stacked; a passed-out or dood
deal clears it): pair ``X = 2 + (m - t)`` made (doubled when rond, 13 tricks), else
``-(2 + t - m)``, each partner ``+X`` and each opponent ``-X``; alone ``X = 2 + max(0,
min(m, 8) - t)`` made (the cap), else ``-(2 + t - m)``, the soloist ``3X`` and each
opponent ``-X`` (D10); kleine miserie 9/3 (two declarers: 9 each way, the loser of a split
pays the winner, D9); abondance 12/4; grote miserie 15/5; blote miserie 30/10; solo slim
150/50 (declarer / each opponent); troel ``X = 4 + 2(m - t)`` made (doubled when rond,
D15), else ``-(4 + 2(t - m))``, per partner and opponent. The highest total after the
last deal wins; equal totals share (D3): ``Outcome.from_keys`` with key ``(score,)``.

Clock defaults (section 7): every bidding decision ``pass`` (always legal, first in the
list); the discard: the lowest card in the stable order; a trick: the first legal card in
the stable order (the troel partner's forced lead is the only one). That is
``legal_actions[0]`` everywhere.

What each seat sees (section 11): its own hand and its own discard (``private_fields``);
publicly the table, the troel announcement, every bidding move and card played this deal
(``history``, a discard without its card), derived facts (each seat's bidder state and
bid, the high bid, the trick auction's sides, contract, trump, target, partner, the trick
in progress and the completed tricks, tricks won), hand sizes, who has discarded, the
shown blote-miserie hand, the doubling flag, running scores and every finished deal.
:func:`sample_hands` deals what a seat cannot see anew, keeping what the history proves
(voids, the troel aces and partner, the shown hand); a world replays the deal's bidding.

Rule ids of refusals: ``wrong_game``, ``no_such_seat``, ``game_over``, ``not_your_turn``
(also a seat sitting the deal out), ``no_such_card``, ``no_such_suit``,
``no_such_contract``, ``tricks_out_of_range`` (malformed moves), ``wrong_phase`` (a move
of another phase or round), ``not_p1`` (wait), ``rondpas_not_allowed``,
``dood_not_allowed``, ``suit_taken``, ``nobody_to_join``, ``level_closed`` (a level-1 move
over abondance or more), ``cannot_be_joined`` (reask or ask with nobody left to join),
``extra_rounds_over`` (reask or ask from round 4), ``only_higher_suit`` (an asker moves
only up), ``bid_too_low``, ``bid_not_allowed`` (a bid the phase or the seat's standing
does not offer), ``raise_too_low``, ``pastroel_not_allowed``, ``not_in_hand``,
``must_follow_suit``, ``forced_lead`` (the troel partner's first card),
``already_discarded``; options: ``seat_count``; record replay: ``bad_action_text``.

rules_version history:

* 1 - first version.
"""

from __future__ import annotations

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
    bool_option,
    choice_option,
    evolver,
    fast_constructor,
    int_option,
    refuse_unless_legal,
    remember_last,
    replacer,
)

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


# Enum members the hot paths compare with, as module constants: in CPython 3.11 looking a
# member up on its class (``Phase.OVER``) costs about 0.2 us, a dozen of them per move.
_P_DECLARE = Phase.DECLARE
_P_DISCARD = Phase.DISCARD
_P_MISERIE_RESPONSE = Phase.MISERIE_RESPONSE
_P_OPBIEDEN = Phase.OPBIEDEN
_P_OVER = Phase.OVER
_P_PLAY = Phase.PLAY
_P_TROEL_AUCTION = Phase.TROEL_AUCTION
_A_ALONE = ActionKind.ALONE
_A_ASK = ActionKind.ASK
_A_BID = ActionKind.BID
_A_DOOD = ActionKind.DOOD
_A_JOIN = ActionKind.JOIN
_A_PASS = ActionKind.PASS
_A_RONDPAS = ActionKind.RONDPAS
_A_WAIT = ActionKind.WAIT
_C_ABONDANCE = ContractKind.ABONDANCE
_C_ALONE = ContractKind.ALONE
_C_KLEINE_MISERIE = ContractKind.KLEINE_MISERIE
_C_PAIR = ContractKind.PAIR
_C_SOLO_SLIM = ContractKind.SOLO_SLIM
_C_TROEL = ContractKind.TROEL
_B_ALONE = BidderState.ALONE
_B_HIGH = BidderState.HIGH
_B_OPEN = BidderState.OPEN
_B_PAIR_ASKER = BidderState.PAIR_ASKER
_B_PAIR_JOINER = BidderState.PAIR_JOINER
_B_PASSED = BidderState.PASSED
_B_RONDPAS = BidderState.RONDPAS
_B_WAITING = BidderState.WAITING
_D_DOOD = DealEnd.DOOD
_D_PLAYED = DealEnd.PLAYED
_D_RONDPAS = DealEnd.RONDPAS


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
    shuffle_between_deals: bool
    rondpas_needs_p4: bool
    stop_when_decided: bool
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


# --------------------------------------------------------------------------- state

LEVEL_ONE = (ContractKind.ALONE, ContractKind.PAIR)
KM = Bid(ContractKind.KLEINE_MISERIE)
TROEL_BID = Bid(ContractKind.TROEL)
HIGH_BIDS = (
    ContractKind.KLEINE_MISERIE,
    ContractKind.ABONDANCE,
    ContractKind.GROTE_MISERIE,
    ContractKind.BLOTE_MISERIE,
    ContractKind.SOLO_SLIM,
)
MISERIES = (
    ContractKind.KLEINE_MISERIE,
    ContractKind.GROTE_MISERIE,
    ContractKind.BLOTE_MISERIE,
)
MAX_ACTIONS_PER_DEAL = 250
DEFAULT_DEALS_PER_SEAT = 4
MAX_DEALS = 48


@dataclass(frozen=True, slots=True)
class WiezenState:
    """The full state of a match. The deal part is rebuilt from ``pack`` (the order the deal
    was dealt from) and ``events`` by :meth:`Kleurenwiezen.rewind`."""

    # the match
    players: int
    deals: int
    shuffle: bool
    rondpas_needs_p4: bool
    stop_when_decided: bool
    deal_number: int
    dealer: int
    scores: tuple[int, ...]
    doubling: bool
    results: tuple[DealResult, ...]
    decks: Decks
    # the deal
    pack: tuple[str, ...]
    active: tuple[int, ...]
    hands: tuple[tuple[str, ...], ...]
    phase: Phase
    turn: int
    round: int
    troel_holder: int
    troel_aces: int
    bidders: tuple[Bidder, ...]
    km_order: tuple[int, ...]
    rondpas_calls: int
    parties: tuple[Party, ...]
    cursor: int
    responders: tuple[int, ...]
    contract: Contract | None
    trump: str
    target: int
    partner: int
    leader: int
    trick: tuple[Play, ...]
    tricks: tuple[TrickRecord, ...]
    won: tuple[int, ...]
    discards: tuple[str, ...]
    events: tuple[Event, ...]


_STATE_HEADER = {"game": "kleurenwiezen", "format": 1}
_RANK = {card: RANKS.index(card[0]) for card in ALL_CARDS}
_PLAY = {card: play(card) for card in ALL_CARDS}
_DISCARD = {card: discard(card) for card in ALL_CARDS}
HIDDEN_DISCARD = WiezenAction(ActionKind.DISCARD)
ALL_HIGH_BIDS = tuple(
    sorted(
        (
            KM,
            *(Bid(ContractKind.ABONDANCE, t, s) for t in range(9, 14) for s in SUITS),
            Bid(ContractKind.GROTE_MISERIE),
            Bid(ContractKind.BLOTE_MISERIE),
            *(Bid(ContractKind.SOLO_SLIM, 0, s) for s in SUITS),
        ),
        key=strength,
    )
)
"""Every bid of level 2 and up, weakest first (the solo slims last, in suit order)."""
_BID_ACTION = {b: bid(b.kind, b.tricks, b.suit) for b in ALL_HIGH_BIDS}
_HIGH_LADDER = tuple((b, strength(b), _BID_ACTION[b]) for b in ALL_HIGH_BIDS)
"""Every high bid with its strength and its move, weakest first."""


# A copy of a state with some fields changed: tuples are shared, never copied (the cost of a
# move is the few fields it changes). Generated (``core.evolver``): the keywords are bound in
# C and the state is built without the frozen dataclass's ``object.__setattr__`` per field.
_evolve = evolver(WiezenState)


def active_seats(dealer: int, players: int) -> tuple[int, ...]:
    """P1..P4 of a deal: the four seats after the dealer, clockwise (with four seated players
    P4 is the dealer)."""
    return tuple((dealer + i) % players for i in range(1, ACTIVE + 1))


def dealt_positions(position: int) -> tuple[int, ...]:
    """The pack positions (0 = top) that deal the hand of P(position+1): 4-4-5 from P1."""
    return (
        *range(4 * position, 4 * position + 4),
        *range(16 + 4 * position, 16 + 4 * position + 4),
        *range(32 + 5 * position, 32 + 5 * position + 5),
    )


_POSITIONS = tuple(dealt_positions(p) for p in range(ACTIVE))


def steekspel(order: tuple[str, ...]) -> tuple[str, ...]:
    """The initial sorted pack (D2): dealt 4-4-5, each hand sorted, the hands stacked P1 first."""
    return tuple(c for p in range(ACTIVE) for c in in_order([order[i] for i in _POSITIONS[p]]))


def cut(order: tuple[str, ...], count: int) -> tuple[str, ...]:
    """The top ``count`` cards to the bottom."""
    return order[count:] + order[:count]


def trick_winner(plays: tuple[Play, ...], trump: str) -> int:
    """The seat whose card takes the trick: the highest trump, else the highest of the suit
    led."""
    best = plays[0]
    for p in plays[1:]:
        suit, best_suit = p.card[1], best.card[1]
        if suit == best_suit:
            if _RANK[p.card] > _RANK[best.card]:
                best = p
        elif suit == trump:
            best = p
    return best.seat


def _standing_high(bidders: tuple[Bidder, ...] | list[Bidder]) -> Bid | None:
    """The strongest standing bid of level 2 and up."""
    best: Bid | None = None
    top = -1
    for b in bidders:
        if b.state is _B_HIGH and b.bid is not None:
            s = strength(b.bid)
            if s > top:
                best, top = b.bid, s
    return best


def _mark_outbid(bidders: list[Bidder]) -> None:
    top = strength(_standing_high(bidders))
    for seat, b in enumerate(bidders):
        if b.state is BidderState.HIGH:
            outbid = strength(b.bid) < top
            if outbid != b.outbid:
                bidders[seat] = Bidder(b.state, b.suit, b.bid, outbid)


def _level_one_open(high: Bid | None) -> bool:
    return high is None or high.kind is ContractKind.KLEINE_MISERIE


_SUITED = (BidderState.OPEN, BidderState.PAIR_ASKER, BidderState.PAIR_JOINER, BidderState.ALONE)
_LEVEL_ONE_STATES = (*_SUITED, BidderState.WAITING, BidderState.RONDPAS)


def _taken(bidders: tuple[Bidder, ...], exclude: int = -1) -> set[str]:
    return {b.suit for s, b in enumerate(bidders) if b.state in _SUITED and s != exclude}


def _open_in(bidders: tuple[Bidder, ...], suit: str, exclude: int) -> int:
    """The seat that asked ``suit`` and has no partner yet (-1 none), other than ``exclude``."""
    for s, b in enumerate(bidders):
        if b.state is BidderState.OPEN and b.suit == suit and s != exclude:
            return s
    return -1


def _could_join(bidders: tuple[Bidder, ...], suit: str, actor: int) -> bool:
    """Whether another player could still join ``suit``: a waiter, or an asker of a lower
    colour (askers only move up)."""
    value = SUIT_VALUE[suit]
    for s, b in enumerate(bidders):
        if s == actor:
            continue
        if b.state is BidderState.WAITING:
            return True
        if b.state is BidderState.OPEN and SUIT_VALUE[b.suit] < value:
            return True
    return False


def _km_standing(state: WiezenState) -> tuple[int, ...]:
    """The players standing on kleine miserie, in the order they bid it."""
    return tuple(
        s
        for s in state.km_order
        if state.bidders[s].state is BidderState.HIGH and state.bidders[s].bid == KM
    )


def _needs_to_act(b: Bidder) -> bool:
    """Rounds 2 and later: who must act (section 6.3)."""
    return b.state in (_B_WAITING, _B_OPEN) or (b.state is _B_HIGH and b.outbid)


def _party_strongest(parties: tuple[Party, ...], km: bool) -> int:
    """The strength of the strongest live item of the trick auction (KM counts 105)."""
    top = strength(KM) if km else -1
    for p in parties:
        if p.live:
            top = max(top, strength(p.bid))
    return top


def _next_party(parties: tuple[Party, ...], km: bool, cursor: int) -> int:
    """The index of the party to act: the next live party by suit after ``cursor`` (wrapping
    round), skipping the strongest; -1 when only the strongest is left."""
    top = _party_strongest(parties, km)
    candidates = [i for i, p in enumerate(parties) if p.live and strength(p.bid) < top]
    if not candidates:
        return -1
    after = [i for i in candidates if SUIT_VALUE[parties[i].suit] > cursor]
    return (after or candidates)[0]


def _party_bid(kind: ContractKind, tricks: int, suit: str) -> Bid:
    return Bid(kind, tricks, suit)


def _min_raise(p: Party, top: int) -> int:
    """The fewest tricks that make party ``p``'s bid stronger than ``top`` (14: none)."""
    low = 5 if p.kind is ContractKind.ALONE else 8
    for t in range(low, 14):
        if strength(Bid(p.kind, t, p.suit)) > top:
            return t
    return 14


def _aces(cards: Sequence[str]) -> int:
    return sum(1 for c in cards if c[0] == "A")


def troel_partner(hands: Sequence[Sequence[str]], holder: int, aces: int) -> int:
    """The troel partner: with 3 aces the holder of the fourth, with 4 the holder of the
    highest heart among the other players."""
    if aces == 3:
        for seat, hand in enumerate(hands):
            if seat != holder and _aces(hand):
                return seat
        raise ValueError("no fourth ace")
    best, partner = -1, -1
    for seat, hand in enumerate(hands):
        if seat != holder:
            for c in hand:
                if c[1] == "H" and _RANK[c] > best:
                    best, partner = _RANK[c], seat
    return partner


def _forced_lead(hand: tuple[str, ...], aces: int) -> str:
    """The troel partner's forced first card: his ace (3 aces) or his highest heart (4)."""
    if aces == 3:
        return next(c for c in hand if c[0] == "A")
    return max((c for c in hand if c[1] == "H"), key=_RANK.__getitem__)


def score_deal(
    contract: Contract,
    taken: Sequence[int],
    target: int,
    multiplier: int,
    active: Sequence[int],
    players: int,
) -> tuple[int, ...]:
    """Every seat's points for a played deal (section 9); ``taken`` is tricks per seat."""
    points = [0] * players
    kind = contract.kind
    declarers = contract.declarers
    opponents = [s for s in active if s not in declarers]
    d = multiplier
    if kind is _C_KLEINE_MISERIE and len(declarers) == 2:
        a, b = declarers
        won_a, won_b = taken[a] == 0, taken[b] == 0
        if won_a and won_b:
            amounts = {a: 9, b: 9, opponents[0]: -9, opponents[1]: -9}
        elif not won_a and not won_b:
            amounts = {a: -9, b: -9, opponents[0]: 9, opponents[1]: 9}
        else:
            amounts = {a: 9 if won_a else -9, b: 9 if won_b else -9}
        for seat, amount in amounts.items():
            points[seat] = amount * d
        return tuple(points)
    m = sum(taken[s] for s in declarers)
    if kind in MISERIES or kind in FIXED_AMOUNTS:
        per, made = FIXED_AMOUNTS[kind], (m == 0 if kind in MISERIES else m == 13)
        x = per if made else -per
        if kind is _C_ABONDANCE:
            x = per if m >= target else -per
        points[declarers[0]] = 3 * x * d
        for s in opponents:
            points[s] = -x * d
        return tuple(points)
    if kind is _C_ALONE:
        x = 2 + max(0, min(m, 8) - target) if m >= target else -(2 + target - m)
        points[declarers[0]] = 3 * x * d
        for s in opponents:
            points[s] = -x * d
        return tuple(points)
    if kind is _C_PAIR:
        x = 2 + (m - target) if m >= target else -(2 + target - m)
    else:  # troel
        x = 4 + 2 * (m - target) if m >= target else -(4 + 2 * (target - m))
    if m == 13:
        x *= 2
    for s in declarers:
        points[s] = x * d
    for s in opponents:
        points[s] = -x * d
    return tuple(points)


FIXED_AMOUNTS = {
    ContractKind.KLEINE_MISERIE: 3,
    ContractKind.ABONDANCE: 4,
    ContractKind.GROTE_MISERIE: 5,
    ContractKind.BLOTE_MISERIE: 10,
    ContractKind.SOLO_SLIM: 50,
}
"""What each opponent pays (or receives) for the contracts with a fixed amount; the lone
declarer gets three times it (D10)."""


def _common(state: WiezenState) -> dict[str, Any]:
    return {
        name: getattr(state, name)
        for name in (
            "players",
            "deals",
            "shuffle",
            "rondpas_needs_p4",
            "stop_when_decided",
            "deal_number",
            "dealer",
            "scores",
            "doubling",
            "results",
        )
    }


_new_state = fast_constructor(WiezenState)  # WiezenState(...) without a setattr per field
_NEW_BIDDER = Bidder(BidderState.NEW)
_OUT_BIDDER = Bidder(BidderState.OUT)


def deal_start(common: Mapping[str, Any], pack: tuple[str, ...], decks: Decks) -> WiezenState:
    """A freshly dealt deal (4-4-5 from P1) after the automatic troel check (section 6.1)."""
    players = common["players"]
    active = active_seats(common["dealer"], players)
    hands: list[tuple[str, ...]] = [()] * players
    holder, aces = -1, 0
    for position, seat in enumerate(active):
        hand = in_order([pack[i] for i in _POSITIONS[position]])
        hands[seat] = hand
        count = _aces(hand)
        if count >= 3:
            holder, aces = seat, count
    bidders = tuple(_NEW_BIDDER if s in active else _OUT_BIDDER for s in range(players))
    return _new_state(
        **common,
        decks=decks,
        pack=pack,
        active=active,
        hands=tuple(hands),
        phase=_P_TROEL_AUCTION if holder >= 0 else _P_DECLARE,
        turn=active[0],
        round=1,
        troel_holder=holder,
        troel_aces=aces,
        bidders=bidders,
        km_order=(),
        rondpas_calls=0,
        parties=(),
        cursor=0,
        responders=(),
        contract=None,
        trump="",
        target=0,
        partner=-1,
        leader=active[0],
        trick=(),
        tricks=(),
        won=(0,) * players,
        discards=("",) * players,
        events=(),
    )


def _next_pack(state: WiezenState, played: bool) -> tuple[tuple[str, ...], Decks]:
    """The next deal's order: a preset while any is left, else a shuffle (option), else the
    gathered pack (section 4.1) cut by the dealer's right-hand neighbour (4..48 cards)."""
    decks = state.decks
    if decks.used[0] < len(decks.presets[0]) or state.shuffle:
        return decks.order("pack", ALL_CARDS)
    if played:
        gathered = [p.card for t in state.tricks for p in t.plays]
        gathered += [p.card for p in state.trick]
        for seat in state.active:
            gathered += state.hands[seat]
        gathered += [state.discards[s] for s in state.active if state.discards[s]]
    else:
        gathered = [state.pack[i] for positions in _POSITIONS for i in positions]
    count, decks = decks.below(45)
    return cut(tuple(gathered), 4 + count), decks


_deal_result = fast_constructor(DealResult)


def _end_deal(
    state: WiezenState,
    end: DealEnd,
    events: tuple[Event, ...],
    declarer_tricks: tuple[int, ...] = (),
    points: tuple[int, ...] | None = None,
    **changes: Any,
) -> WiezenState:
    """Score a deal, then deal the next one (or end the match)."""
    multiplier = 2 if state.doubling and end is _D_PLAYED else 1
    state = _evolve(state, events=events, **changes)
    if points is None:
        points = (0,) * state.players
    result = _deal_result(
        state.deal_number,
        state.dealer,
        end,
        state.contract if end is _D_PLAYED else None,
        declarer_tricks,
        multiplier,
        points,
    )
    scores = tuple(a + b for a, b in zip(state.scores, points, strict=True))
    doubling = end is _D_RONDPAS
    results = (*state.results, result)
    if state.deal_number >= state.deals:
        return _evolve(
            state,
            phase=_P_OVER,
            turn=-1,
            scores=scores,
            doubling=doubling,
            results=results,
        )
    pack, decks = _next_pack(state, end is _D_PLAYED)
    common = _common(state)
    common.update(
        deal_number=state.deal_number + 1,
        dealer=(state.dealer + 1) % state.players,
        scores=scores,
        doubling=doubling,
        results=results,
    )
    return deal_start(common, pack, decks)


def _begin_play(
    state: WiezenState, contract: Contract, events: tuple[Event, ...], **changes: Any
) -> WiezenState:
    """Fix the contract's trump, target and first leader (section 6.6)."""
    kind = contract.kind
    p1 = state.active[0]
    trump, target, leader, partner = "", 0, p1, -1
    declarers = contract.declarers
    if kind in (_C_ALONE, _C_PAIR, _C_ABONDANCE):
        trump, target = contract.suit, contract.tricks
        if kind is _C_ABONDANCE:
            leader = declarers[0]
    elif kind is _C_SOLO_SLIM:
        trump, target = contract.suit, 13
        if declarers[0] == p1:
            leader = state.active[1]
    elif kind is _C_TROEL:
        partner = troel_partner(state.hands, state.troel_holder, state.troel_aces)
        declarers = (state.troel_holder, partner)
        contract = Contract(kind, 0, "", declarers)
        leader = partner
        if state.troel_aces == 4:
            trump, target = "H", 9
    phase = _P_DISCARD if kind is _C_KLEINE_MISERIE else _P_PLAY
    return _evolve(
        state,
        events=events,
        phase=phase,
        turn=-1 if phase is _P_DISCARD else leader,
        contract=contract,
        trump=trump,
        target=target,
        partner=partner,
        leader=leader,
        **changes,
    )


def _decided(state: WiezenState, won: Sequence[int]) -> bool:
    """Whether no further trick can change the deal's score (option stop_when_decided)."""
    contract = state.contract
    assert contract is not None
    if contract.kind in MISERIES:
        return all(won[s] > 0 for s in contract.declarers)
    if contract.kind is _C_SOLO_SLIM:
        return won[contract.declarers[0]] < sum(won)
    return False


def _declare_actions(state: WiezenState, seat: int) -> tuple[WiezenAction, ...]:
    """Every legal move of the seat to act in DECLARE (section 6.3, both tables)."""
    bidders = state.bidders
    me = bidders[seat]
    high = _standing_high(bidders)
    top = strength(high)
    open1 = _level_one_open(high)
    out = [PASS]
    if state.round == 1:
        position = state.active.index(seat)
        if open1:
            taken = _taken(bidders)
            out += [ask(s) for s in SUITS if s not in taken]
            out += [join(s) for s in SUITS if _open_in(bidders, s, seat) >= 0]
        joint_km = high == KM and len(_km_standing(state)) == 1
        out += [a for b, value, a in _HIGH_LADDER if value > top or (joint_km and b == KM)]
        if position == 0:
            out.append(WAIT)
        if _rondpas_allowed(state, position):
            out.append(RONDPAS)
        if position == 3 and _dood_allowed(state, seat):
            out.append(DOOD)
    elif me.state is _B_WAITING:
        if open1:
            out += [join(s) for s in SUITS if _open_in(bidders, s, seat) >= 0]
    elif me.state is _B_OPEN:
        own = SUIT_VALUE[me.suit]
        others = _taken(bidders, exclude=seat)
        out += [alone(s) for s in SUITS if SUIT_VALUE[s] >= own and s not in others]
        out += [join(s) for s in SUITS if SUIT_VALUE[s] > own and _open_in(bidders, s, seat) >= 0]
        if state.round <= 3:
            if _could_join(bidders, me.suit, seat):
                out.append(REASK)
            out += [
                ask(s)
                for s in SUITS
                if SUIT_VALUE[s] > own and s not in others and _could_join(bidders, s, seat)
            ]
    elif me.state is _B_HIGH and me.outbid:
        out += [a for _, value, a in _HIGH_LADDER if value > top]
    return tuple(out)


def _rondpas_allowed(state: WiezenState, position: int) -> bool:
    """P1 proposes; P2 and P3 (and P4 with ``rondpas_needs_p4``) confirm in turn."""
    if position == 0:
        return True
    if position == 3 and not state.rondpas_needs_p4:
        return False
    return state.rondpas_calls == position


def _dood_allowed(state: WiezenState, seat: int) -> bool:
    """P4, after P1, P2 and P3 each asked a colour, holding 5+ cards of the fourth."""
    bidders = state.bidders
    asked = [bidders[s] for s in state.active[:3]]
    if not all(b.state is BidderState.OPEN for b in asked):
        return False
    fourth = next(s for s in SUITS if s not in {b.suit for b in asked})
    return sum(1 for c in state.hands[seat] if c[1] == fourth) >= 5


def _rondpas_needed(state: WiezenState) -> int:
    return 4 if state.rondpas_needs_p4 else 3


def _apply_declare(state: WiezenState, seat: int, action: WiezenAction) -> WiezenState:
    bidders = list(state.bidders)
    events = (*state.events, Event(seat, action))
    position = state.active.index(seat)
    calls = state.rondpas_calls
    kind = action.kind
    km_order = state.km_order
    if state.round == 1 and 0 < calls == position and kind is not _A_RONDPAS:
        # D6: the proposal lapses; who said rondpas has passed.
        calls = 0
        for s, b in enumerate(bidders):
            if b.state is _B_RONDPAS:
                bidders[s] = Bidder(_B_PASSED)
    if kind is _A_PASS:
        bidders[seat] = Bidder(_B_PASSED)
    elif kind is _A_ASK:
        bidders[seat] = Bidder(_B_OPEN, action.suit)
    elif kind is _A_JOIN:
        asker = _open_in(state.bidders, action.suit, seat)
        bidders[asker] = Bidder(_B_PAIR_ASKER, action.suit)
        bidders[seat] = Bidder(_B_PAIR_JOINER, action.suit)
    elif kind is _A_ALONE:
        bidders[seat] = Bidder(_B_ALONE, action.suit)
    elif kind is _A_WAIT:
        bidders[seat] = Bidder(_B_WAITING)
    elif kind is _A_RONDPAS:
        bidders[seat] = Bidder(_B_RONDPAS)
        calls += 1
        if calls == _rondpas_needed(state):
            return _end_deal(state, _D_RONDPAS, events, bidders=tuple(bidders))
    elif kind is _A_DOOD:
        return _end_deal(state, _D_DOOD, events)
    elif kind is _A_BID:
        new = action.bid()
        bidders[seat] = Bidder(_B_HIGH, bid=new)
        if new == KM:
            km_order = (*km_order, seat)
        if strength(new) >= 1000:
            # Nobody at level 1 can switch level, so nobody there competes any more.
            for s, b in enumerate(bidders):
                if b.state in _LEVEL_ONE_STATES:
                    bidders[s] = Bidder(_B_PASSED)
        _mark_outbid(bidders)
    # REASK changes nothing but the history.
    return _advance_declare(state, position, events, bidders, calls, km_order)


def _advance_declare(
    state: WiezenState,
    position: int,
    events: tuple[Event, ...],
    bidders: list[Bidder],
    calls: int,
    km_order: tuple[int, ...],
) -> WiezenState:
    """The next seat that needs to act, passing a waiter with nobody to join; the end of
    DECLARE after a round in which nobody needed to act."""
    round_ = state.round
    start = position + 1
    while True:
        if round_ == 1 and start < ACTIVE:
            return _evolve(
                state,
                events=events,
                bidders=tuple(bidders),
                rondpas_calls=calls,
                km_order=km_order,
                turn=state.active[start],
            )
        full_round = start == 0
        for p in range(start, ACTIVE):
            s = state.active[p]
            b = bidders[s]
            if not _needs_to_act(b):
                continue
            if b.state is _B_WAITING and not _waiter_can_join(bidders, s):
                bidders[s] = Bidder(_B_PASSED)
                events = (*events, Event(s, PASS, automatic=True))
                continue
            return _evolve(
                state,
                events=events,
                bidders=tuple(bidders),
                rondpas_calls=calls,
                km_order=km_order,
                round=round_,
                turn=s,
            )
        if full_round:
            break
        round_ += 1
        start = 0
    state = _evolve(
        state, bidders=tuple(bidders), rondpas_calls=calls, km_order=km_order, round=round_
    )
    return _end_declare(state, events)


def _waiter_can_join(bidders: list[Bidder], seat: int) -> bool:
    if not _level_one_open(_standing_high(bidders)):
        return False
    return any(b.state is BidderState.OPEN for s, b in enumerate(bidders) if s != seat)


def _parties_of(state: WiezenState) -> tuple[Party, ...]:
    """The level-1 sides at their minimum bids, by suit."""
    bidders = state.bidders
    out = []
    for s, b in enumerate(bidders):
        if b.state is BidderState.ALONE:
            out.append(
                Party(ContractKind.ALONE, b.suit, s, -1, s, Bid(ContractKind.ALONE, 5, b.suit))
            )
        elif b.state is BidderState.PAIR_JOINER:
            asker = next(
                a
                for a, o in enumerate(bidders)
                if o.state is BidderState.PAIR_ASKER and o.suit == b.suit
            )
            out.append(
                Party(ContractKind.PAIR, b.suit, asker, s, s, Bid(ContractKind.PAIR, 8, b.suit))
            )
    return tuple(sorted(out, key=lambda p: SUIT_VALUE[p.suit]))


def _party_contract(p: Party) -> Contract:
    assert p.bid is not None
    declarers = (p.asker,) if p.joiner < 0 else (p.asker, p.joiner)
    return Contract(p.kind, p.bid.tricks, p.suit, declarers)


def _end_declare(state: WiezenState, events: tuple[Event, ...]) -> WiezenState:
    """Section 6.3, end of DECLARE."""
    high = _standing_high(state.bidders)
    if strength(high) >= 1000:
        assert high is not None
        declarer = next(
            s for s, b in enumerate(state.bidders) if b.state is BidderState.HIGH and b.bid == high
        )
        return _begin_play(state, Contract(high.kind, high.tricks, high.suit, (declarer,)), events)
    parties = _parties_of(state)
    km = _km_standing(state)
    if not parties and not km:
        return _end_deal(state, DealEnd.PASSED_OUT, events)
    if not parties:
        return _begin_play(state, Contract(ContractKind.KLEINE_MISERIE, 0, "", km), events)
    if len(parties) == 1 and not km:
        return _begin_play(state, _party_contract(parties[0]), events)
    return _advance_opbieden(
        _evolve(state, phase=Phase.OPBIEDEN, parties=parties, cursor=0), events
    )


def _advance_opbieden(state: WiezenState, events: tuple[Event, ...]) -> WiezenState:
    km = _km_standing(state)
    index = _next_party(state.parties, bool(km), state.cursor)
    if index >= 0:
        return _evolve(state, events=events, turn=state.parties[index].speaker)
    live = [p for p in state.parties if p.live]
    if not live:
        return _begin_play(state, Contract(ContractKind.KLEINE_MISERIE, 0, "", km), events)
    if not km:
        return _begin_play(state, _party_contract(live[0]), events)
    # The party blocked the kleine miserie (section 6.5).
    return _evolve(state, events=events, phase=Phase.MISERIE_RESPONSE, responders=km, turn=km[0])


def _current_party(state: WiezenState, seat: int) -> int:
    return next(i for i, p in enumerate(state.parties) if p.live and p.speaker == seat)


def _opbieden_actions(state: WiezenState, seat: int) -> tuple[WiezenAction, ...]:
    p = state.parties[_current_party(state, seat)]
    top = _party_strongest(state.parties, bool(_km_standing(state)))
    low = _min_raise(p, top)
    out = [PASS, *(raise_to(t) for t in range(low, 14))]
    if p.kind is ContractKind.PAIR and seat == p.joiner and 11 <= low <= 13:
        out.append(PASTROEL)
    return tuple(out)


def _apply_opbieden(state: WiezenState, seat: int, action: WiezenAction) -> WiezenState:
    index = _current_party(state, seat)
    parties = list(state.parties)
    bidders = list(state.bidders)
    p = parties[index]
    value = SUIT_VALUE[p.suit]
    cursor = value
    kind = action.kind
    if kind is ActionKind.RAISE:
        parties[index] = Party(
            p.kind, p.suit, p.asker, p.joiner, p.speaker, Bid(p.kind, action.tricks, p.suit)
        )
    elif kind is ActionKind.PASTROEL:
        parties[index] = Party(p.kind, p.suit, p.asker, p.joiner, p.asker, p.bid)
        cursor = value - 1  # the asker decides at once
    elif p.kind is ContractKind.PAIR and seat == p.joiner:
        # D8: the joiner is out; the asker may go on alone in the same colour, at once.
        bidders[p.joiner] = Bidder(BidderState.PASSED)
        bidders[p.asker] = Bidder(BidderState.ALONE, p.suit)
        parties[index] = Party(ContractKind.ALONE, p.suit, p.asker, -1, p.asker, None)
        cursor = value - 1
    else:
        for s in (p.asker, p.joiner):
            if s >= 0:
                bidders[s] = Bidder(BidderState.PASSED)
        parties[index] = Party(p.kind, p.suit, p.asker, p.joiner, p.speaker, p.bid, live=False)
    state = _evolve(state, parties=tuple(parties), bidders=tuple(bidders), cursor=cursor)
    return _advance_opbieden(state, (*state.events, Event(seat, action)))


def _response_top(state: WiezenState) -> int:
    top = strength(_standing_high(state.bidders))
    for p in state.parties:
        if p.live:
            top = max(top, strength(p.bid))
    return top


def _response_actions(state: WiezenState, seat: int) -> tuple[WiezenAction, ...]:
    top = _response_top(state)
    return (
        PASS,
        *(a for b, value, a in _HIGH_LADDER if value > top and b != KM),
    )


def _apply_response(state: WiezenState, seat: int, action: WiezenAction) -> WiezenState:
    """Section 6.5: the kleine-miserie players answer the block, clockwise from the first."""
    bidders = list(state.bidders)
    parties = state.parties
    responders = state.responders
    events = (*state.events, Event(seat, action))
    if action.kind is ActionKind.BID:
        bidders[seat] = Bidder(BidderState.HIGH, bid=action.bid())
        new_parties = []
        for p in parties:
            if p.live:  # the level-1 side cannot switch level: it is out
                for s in (p.asker, p.joiner):
                    if s >= 0:
                        bidders[s] = Bidder(BidderState.PASSED)
                p = Party(p.kind, p.suit, p.asker, p.joiner, p.speaker, p.bid, live=False)
            new_parties.append(p)
        parties = tuple(new_parties)
        _mark_outbid(bidders)
    else:
        bidders[seat] = Bidder(BidderState.PASSED)
        responders = tuple(r for r in responders if r != seat)
    state = _evolve(state, bidders=tuple(bidders), parties=parties, responders=responders)
    order = state.responders
    at = state.km_order.index(seat) if seat in state.km_order else 0
    ring = [s for s in state.km_order[at + 1 :] + state.km_order[: at + 1] if s in order]
    for s in ring:
        b = bidders[s]
        if (b.state is BidderState.HIGH and b.outbid) or (
            b.bid == KM and any(p.live for p in parties)
        ):
            return _evolve(state, events=events, turn=s)
    high = _standing_high(bidders)
    if strength(high) >= 1000:
        assert high is not None
        declarer = next(
            s for s, b in enumerate(bidders) if b.state is BidderState.HIGH and b.bid == high
        )
        return _begin_play(state, Contract(high.kind, high.tricks, high.suit, (declarer,)), events)
    live = next(p for p in parties if p.live)
    return _begin_play(state, _party_contract(live), events)


def _troel_actions(state: WiezenState) -> tuple[WiezenAction, ...]:
    top = max(strength(TROEL_BID), strength(_standing_high(state.bidders)))
    return (
        PASS,
        *(
            a
            for b, value, a in _HIGH_LADDER
            if value > top and b.kind in (ContractKind.BLOTE_MISERIE, ContractKind.SOLO_SLIM)
        ),
    )


def _apply_troel(state: WiezenState, seat: int, action: WiezenAction) -> WiezenState:
    bidders = list(state.bidders)
    if action.kind is ActionKind.BID:
        bidders[seat] = Bidder(BidderState.HIGH, bid=action.bid())
        _mark_outbid(bidders)
    else:
        bidders[seat] = Bidder(BidderState.PASSED)
    events = (*state.events, Event(seat, action))
    position = state.active.index(seat)
    if position < ACTIVE - 1:
        return _evolve(
            state, bidders=tuple(bidders), events=events, turn=state.active[position + 1]
        )
    state = _evolve(state, bidders=tuple(bidders))
    high = _standing_high(bidders)
    if high is None:
        return _begin_play(state, Contract(ContractKind.TROEL, 0, "", ()), events)
    declarer = next(s for s, b in enumerate(bidders) if b.bid == high and not b.outbid)
    return _begin_play(state, Contract(high.kind, high.tricks, high.suit, (declarer,)), events)


def _play_actions(state: WiezenState, seat: int) -> tuple[WiezenAction, ...]:
    hand = state.hands[seat]
    trick = state.trick
    if not trick:
        if seat == state.partner and not state.tricks:
            return (_PLAY[_forced_lead(hand, state.troel_aces)],)
        return tuple(map(_PLAY.__getitem__, hand))
    led = trick[0].card[1]
    follow = tuple([_PLAY[c] for c in hand if c[1] == led])
    return follow or tuple(map(_PLAY.__getitem__, hand))


_PLAYS = {(seat, card): Play(seat, card) for seat in range(6) for card in ALL_CARDS}
_PLAY_EVENTS = {(seat, card): Event(seat, _PLAY[card]) for seat in range(6) for card in ALL_CARDS}
# The two ways a played card changes a state, built without testing the other fields.
_with_card = replacer(WiezenState, "hands", "trick", "events", "trump", "target", "turn")
_with_trick = replacer(
    WiezenState, "hands", "trick", "tricks", "won", "trump", "target", "leader", "turn", "events"
)
_trick_record = fast_constructor(TrickRecord)


def _apply_play(state: WiezenState, seat: int, card: str) -> WiezenState:
    """A card to the trick; a full trick goes to its winner; the last one ends the deal."""
    hands = state.hands
    hand = hands[seat]
    i = hand.index(card)
    hand = hand[:i] + hand[i + 1 :]
    hands = (*hands[:seat], hand, *hands[seat + 1 :])
    trick = (*state.trick, _PLAYS[seat, card])
    events = (*state.events, _PLAY_EVENTS[seat, card])
    trump, target = state.trump, state.target
    if state.troel_aces == 3 and len(state.tricks) == 1 and len(trick) == 1:
        contract = state.contract
        if contract is not None and contract.kind is _C_TROEL:
            # D5: the partner's lead to trick 2 names trump, the fifth card on the table.
            trump = card[1]
            target = 9 if trump == state.tricks[0].plays[0].card[1] else 10
    if len(trick) < ACTIVE:
        active = state.active
        turn = active[(active.index(seat) + 1) % ACTIVE]
        return _with_card(state, hands, trick, events, trump, target, turn)
    winner = trick_winner(trick, trump)
    won = list(state.won)
    won[winner] += 1
    tricks = (*state.tricks, _trick_record(len(state.tricks) + 1, trick, trump, winner))
    # After a full trick every active hand holds as many cards as the last player's.
    if hand and not (state.stop_when_decided and _decided(state, won)):
        return _with_trick(
            state, hands, (), tricks, tuple(won), trump, target, winner, winner, events
        )
    state = _with_trick(
        state, hands, (), tricks, tuple(won), trump, target, winner, winner, state.events
    )
    contract = state.contract
    assert contract is not None
    multiplier = 2 if state.doubling else 1
    points = score_deal(contract, won, target, multiplier, state.active, state.players)
    taken = tuple(won[s] for s in contract.declarers)
    if contract.kind in (_C_PAIR, _C_TROEL):
        taken = (sum(taken),)
    return _end_deal(state, _D_PLAYED, events, taken, points)


def _apply_discard(state: WiezenState, seat: int, card: str) -> WiezenState:
    """A sealed kleine-miserie discard; the last one starts the play (D13)."""
    hands = list(state.hands)
    hands[seat] = tuple(c for c in hands[seat] if c != card)
    discards = list(state.discards)
    discards[seat] = card
    if not all(discards[s] for s in state.active):
        return _evolve(state, hands=tuple(hands), discards=tuple(discards))
    # Recorded in seat order, the order rewind replays sealed commitments in.
    # The history is public: it says who discarded, never the card (``discards`` has it).
    revealed = tuple(Event(s, HIDDEN_DISCARD) for s in sorted(state.active))
    return _evolve(
        state,
        hands=tuple(hands),
        discards=tuple(discards),
        events=(*state.events, *revealed),
        phase=_P_PLAY,
        turn=state.leader,
    )


def _step(state: WiezenState, seat: int, action: WiezenAction) -> WiezenState:
    """A legal action played (the caller has checked legality)."""
    phase = state.phase
    if phase is _P_PLAY:
        return _apply_play(state, seat, action.card)
    if phase is _P_DISCARD:
        return _apply_discard(state, seat, action.card)
    if phase is _P_DECLARE:
        return _apply_declare(state, seat, action)
    if phase is _P_OPBIEDEN:
        return _apply_opbieden(state, seat, action)
    if phase is _P_MISERIE_RESPONSE:
        return _apply_response(state, seat, action)
    return _apply_troel(state, seat, action)


class Kleurenwiezen:
    """The Kleurenwiezen rules (see the module docstring)."""

    info = GameInfo(
        game_id="kleurenwiezen",
        name="Kleurenwiezen",
        rules_version=1,
        min_seats=4,
        max_seats=6,
        options=(
            OptionSpec(
                "deals",
                OptionKind.INT,
                "0",
                "deals in the match, void deals included (0: automatic, 4 per seated "
                "player, so that everyone deals equally often)",
                minimum=1,
                maximum=MAX_DEALS,
                automatic=True,
            ),
            OptionSpec(
                "first_dealer",
                OptionKind.CHOICE,
                "seat0",
                "the first dealer: seat 0, or drawn at random",
                choices=("seat0", "random"),
            ),
            OptionSpec(
                "shuffle_between_deals",
                OptionKind.BOOL,
                "false",
                "shuffle the pack before every deal instead of gathering it unshuffled and "
                "cutting (D2; duplicate tournaments need it)",
            ),
            OptionSpec(
                "sorted_start",
                OptionKind.BOOL,
                "false",
                "the initial steekspel: the first shuffled pack is dealt 4-4-5, every hand "
                "sorted and the hands stacked before the first cut (D2)",
            ),
            OptionSpec(
                "rondpas_needs_p4",
                OptionKind.BOOL,
                "false",
                "rondpas also needs the fourth player's confirmation (the seed asks only the "
                "second and third)",
            ),
            OptionSpec(
                "stop_when_decided",
                OptionKind.BOOL,
                "false",
                "end the play as soon as the score can no longer change (a miserie once every "
                "declarer took a trick, solo slim once the opponents took one); D14 plays "
                "every trick",
            ),
        ),
        simultaneous=True,
        description="Belgian colour whist: four play each deal; ask a colour and find a "
        "partner, go alone, or bid miserie, abondance or solo slim; troel with three or "
        "four aces. Highest running score wins.",
        score_name="points",
        lower_is_better=False,
        decks=(
            DeckSpec(
                "pack",
                "the 52 cards as dealt, top first, 4-4-5 from the player after the dealer; "
                "every deal takes the next preset as the order after gathering and the cut "
                "(or the shuffle)",
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
    ) -> WiezenState:
        """Order the first pack (preset, or shuffle, steekspel and cut), choose the first
        dealer, deal."""
        resolved = self.info.resolve_options(options)
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise InvalidOptions(f"Kleurenwiezen takes 4-6 players, not {seats}", rule="seat_count")
        deals = int_option(resolved, "deals") or DEFAULT_DEALS_PER_SEAT * seats
        decks = Decks.checked(rng, self.info.decks, presets, {"pack": ALL_CARDS})
        preset = bool(decks.presets[0])
        order, decks = decks.order("pack", ALL_CARDS)
        dealer = 0
        if choice_option(resolved, "first_dealer") == "random":
            dealer, decks = decks.below(seats)
        if not preset:
            if bool_option(resolved, "sorted_start"):
                order = steekspel(order)
            count, decks = decks.below(45)
            order = cut(order, 4 + count)
        common = {
            "players": seats,
            "deals": deals,
            "shuffle": bool_option(resolved, "shuffle_between_deals"),
            "rondpas_needs_p4": bool_option(resolved, "rondpas_needs_p4"),
            "stop_when_decided": bool_option(resolved, "stop_when_decided"),
            "deal_number": 1,
            "dealer": dealer,
            "scores": (0,) * seats,
            "doubling": False,
            "results": (),
        }
        return deal_start(common, order, decks)

    # ------------------------------------------------------------------ queries

    def to_act(self, state: WiezenState) -> tuple[int, ...]:
        """The seat to act; every active seat still to discard in the kleine-miserie
        discard; () at the end."""
        if state.phase is _P_OVER:
            return ()
        if state.phase is _P_DISCARD:
            return tuple(sorted(s for s in state.active if not state.discards[s]))
        return (state.turn,)

    @remember_last
    def legal_actions(self, state: WiezenState, seat: int) -> tuple[WiezenAction, ...]:
        """Every legal move of ``seat`` in a stable order (pass first while bidding; cards in
        the stable order); () when it need not act."""
        phase = state.phase
        if phase is _P_PLAY:
            return _play_actions(state, seat) if seat == state.turn else ()
        if phase is _P_OVER:
            return ()
        if phase is _P_DISCARD:
            if seat in state.active and not state.discards[seat]:
                return tuple(_DISCARD[c] for c in state.hands[seat])
            return ()
        if seat != state.turn:
            return ()
        if phase is _P_DECLARE:
            return _declare_actions(state, seat)
        if phase is _P_OPBIEDEN:
            return _opbieden_actions(state, seat)
        if phase is _P_MISERIE_RESPONSE:
            return _response_actions(state, seat)
        return _troel_actions(state)

    def default_action(self, state: WiezenState, seat: int) -> WiezenAction:
        """Bidding: pass (always legal); the discard: the lowest card in the stable order;
        a trick: the first legal card in the stable order (the forced troel lead is the only
        one)."""
        legal = self.legal_actions(state, seat)
        if not legal:
            raise NotYourTurn(f"seat {seat} need not act now")
        return legal[0]

    # ------------------------------------------------------------------ the mutator

    def apply(self, state: WiezenState, seat: int, action: WiezenAction) -> WiezenState:
        """Play one of ``legal_actions``; the given state is never changed."""
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        return _step(state, seat, action)

    def _why_illegal(
        self, state: WiezenState, seat: int, action: WiezenAction
    ) -> EngineError | None:
        """The rule an action not in ``legal_actions`` breaks (a diagnostic only; it reads
        nothing the seat does not know)."""
        if not isinstance(action, WiezenAction):
            return InvalidAction("not a Kleurenwiezen action", rule="wrong_game")
        if not 0 <= seat < state.players:
            return InvalidAction(f"there is no seat {seat}", rule="no_such_seat")
        malformed = _malformed(action)
        if malformed is not None:
            return malformed
        if state.phase is Phase.OVER:
            return GameOver("the match is over")
        kind = action.kind
        phase = state.phase
        if seat not in state.active:
            return NotYourTurn(f"seat {seat} sits this deal out")
        if phase is Phase.DISCARD:
            if state.discards[seat]:
                return IllegalAction("you have discarded already", rule="already_discarded")
            if kind is not ActionKind.DISCARD:
                return _wrong_phase(phase)
            return IllegalAction(f"{action.card} is not in your hand", rule="not_in_hand")
        if seat != state.turn:
            return NotYourTurn(f"it is seat {state.turn}'s turn")
        if phase is Phase.PLAY:
            return self._why_not_card(state, seat, action)
        if kind is ActionKind.BID and phase in (
            Phase.TROEL_AUCTION,
            Phase.MISERIE_RESPONSE,
            Phase.DECLARE,
        ):
            return _why_not_bid(state, seat, action.bid())
        if phase is Phase.OPBIEDEN:
            if kind is ActionKind.RAISE:
                return IllegalAction(
                    "the raise must be stronger than the strongest bid", rule="raise_too_low"
                )
            if kind is ActionKind.PASTROEL:
                return IllegalAction(
                    "pastroel only by a pair's joiner when 11 or more tricks are needed",
                    rule="pastroel_not_allowed",
                )
            return _wrong_phase(phase)
        if phase is not Phase.DECLARE:
            return _wrong_phase(phase)
        return _why_not_declare(state, seat, action)

    def _why_not_card(self, state: WiezenState, seat: int, action: WiezenAction) -> EngineError:
        if action.kind is not ActionKind.PLAY:
            return _wrong_phase(state.phase)
        hand = state.hands[seat]
        if action.card not in hand:
            return IllegalAction(f"{action.card} is not in your hand", rule="not_in_hand")
        if not state.trick:
            return IllegalAction(
                "the troel partner leads his forced card to the first trick", rule="forced_lead"
            )
        return IllegalAction(
            f"follow suit: a {state.trick[0].card[1]} is led and you hold one",
            rule="must_follow_suit",
        )

    # ------------------------------------------------------------------ views

    def observe(self, state: WiezenState, seat: int | None) -> WiezenObservation:
        """A seat's own hand and discard, plus everything public."""
        own = seat is not None and 0 <= seat < state.players
        contract = state.contract
        shown: tuple[str, ...] = ()
        shown_seat = -1
        if contract is not None and contract.kind is ContractKind.BLOTE_MISERIE and state.tricks:
            shown_seat = contract.declarers[0]
            shown = state.hands[shown_seat]
        return WiezenObservation(
            seat=seat,
            players=state.players,
            deals=state.deals,
            shuffle_between_deals=state.shuffle,
            rondpas_needs_p4=state.rondpas_needs_p4,
            stop_when_decided=state.stop_when_decided,
            deal_number=state.deal_number,
            dealer=state.dealer,
            active=state.active,
            phase=state.phase,
            to_act=self.to_act(state),
            round=state.round,
            troel_holder=state.troel_holder,
            troel_aces=state.troel_aces,
            bidders=state.bidders,
            high=_standing_high(state.bidders),
            rondpas_calls=state.rondpas_calls,
            parties=state.parties,
            contract=contract,
            trump=state.trump,
            target=state.target,
            partner=state.partner,
            leader=state.leader,
            trick=state.trick,
            tricks=state.tricks,
            tricks_won=state.won,
            hand=state.hands[seat] if own and seat is not None else (),
            discard=state.discards[seat] if own and seat is not None else "",
            hand_sizes=tuple(len(h) for h in state.hands),
            discarded=tuple(bool(d) for d in state.discards),
            shown=shown,
            shown_seat=shown_seat,
            doubling=state.doubling,
            multiplier=2 if state.doubling else 1,
            scores=state.scores,
            results=state.results,
            history=state.events,
        )

    def sample_world(self, observation: WiezenObservation, rng: Rng) -> WiezenState:
        """The deal's hidden cards dealt anew where the viewer cannot know them (see
        :func:`sample_hands`), then the deal's history replayed on that deal."""
        obs = observation
        hands, discards = sample_hands(obs, rng.derive("hands"))
        pack: list[str] = [""] * len(ALL_CARDS)
        for position, seat in enumerate(obs.active):
            for i, card in zip(_POSITIONS[position], in_order(hands[seat]), strict=True):
                pack[i] = card
        over = obs.phase is Phase.OVER
        last = obs.results[-1] if over else None
        results = obs.results[:-1] if over else obs.results
        scores = obs.scores
        if last is not None:
            scores = tuple(a - b for a, b in zip(scores, last.points, strict=True))
        common = {
            "players": obs.players,
            "deals": obs.deals,
            "shuffle": obs.shuffle_between_deals,
            "rondpas_needs_p4": obs.rondpas_needs_p4,
            "stop_when_decided": obs.stop_when_decided,
            "deal_number": obs.deal_number,
            "dealer": obs.dealer,
            "scores": scores,
            "doubling": bool(results) and results[-1].end is DealEnd.RONDPAS,
            "results": results,
        }
        decks = Decks(rng.derive("future"), ("pack",), ((),), (0,))
        state = deal_start(common, tuple(pack), decks)
        for event in obs.history:
            if event.automatic:
                continue
            action = event.action
            if action.kind is ActionKind.PLAY and obs.phase is Phase.PLAY:
                # The cards of the play change only these fields; the observation has them
                # all, so the tricks need not be replayed one card at a time.
                gone = {p.card for t in obs.tricks for p in t.plays}
                gone.update(p.card for p in obs.trick)
                gone.update(discards)
                return _evolve(
                    state,
                    hands=tuple(tuple(c for c in in_order(h) if c not in gone) for h in hands),
                    trick=obs.trick,
                    tricks=obs.tricks,
                    won=obs.tricks_won,
                    trump=obs.trump,
                    target=obs.target,
                    leader=obs.leader,
                    turn=obs.to_act[0],
                    events=obs.history,
                )
            if action.kind is ActionKind.DISCARD:
                action = _DISCARD[discards[event.seat]]
            state = _step(state, event.seat, action)
        if state.phase is Phase.DISCARD:
            for seat in sorted(obs.active):
                if obs.discarded[seat]:
                    state = _step(state, seat, _DISCARD[discards[seat]])
        return state

    def determinize(self, state: WiezenState, seat: int, rng: Rng) -> WiezenState:
        """``sample_world(observe(state, seat), rng)``."""
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(
        self, state: WiezenState
    ) -> tuple[WiezenState, tuple[tuple[int, WiezenAction], ...]]:
        """The state when the current deal was dealt and the actions played since (sealed
        discards not yet revealed last, in seat order)."""
        common = _common(state)
        if state.phase is Phase.OVER:
            last = state.results[-1]
            results = state.results[:-1]
            common.update(
                scores=tuple(a - b for a, b in zip(state.scores, last.points, strict=True)),
                results=results,
                doubling=bool(results) and results[-1].end is DealEnd.RONDPAS,
            )
        start = deal_start(common, state.pack, state.decks)
        actions = [
            (
                e.seat,
                _DISCARD[state.discards[e.seat]]
                if e.action.kind is ActionKind.DISCARD
                else e.action,
            )
            for e in state.events
            if not e.automatic
        ]
        if state.phase is Phase.DISCARD:
            actions += [
                (s, _DISCARD[state.discards[s]]) for s in sorted(state.active) if state.discards[s]
            ]
        return start, tuple(actions)

    def outcome(self, state: WiezenState) -> Outcome | None:
        """The running scores after the last deal, highest first; ties share (D3)."""
        if state.phase is not _P_OVER:
            return None
        return Outcome.from_keys(state.scores, [(s,) for s in state.scores], False)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: WiezenAction) -> str:
        """``pass``, ``ask:H``, ``raise:9``, ``bid:abondance:9:H``, ``play:TH`` ..."""
        return str(action)

    def parse_action(self, text: str) -> WiezenAction:
        """The action of a text written by :meth:`action_text`."""
        action = _parse(text)
        if action is None or str(action) != text:
            raise InvalidAction(
                f"not a Kleurenwiezen action: {text[:40]!r}", rule="bad_action_text"
            )
        return action

    def encode(self, state: WiezenState) -> bytes:
        """Canonical JSON bytes of the state."""
        return encode_value(_STATE_HEADER, state)

    def decode(self, data: bytes) -> WiezenState:
        """The state :meth:`encode` wrote."""
        return decode_value(_STATE_HEADER, WiezenState, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: WiezenState) -> tuple[str, ...]:
        """All 52 cards."""
        return tuple(sorted(ALL_CARDS))

    def zones(self, state: WiezenState) -> Mapping[str, tuple[str, ...]]:
        """Every hand, the kleine-miserie discards, the trick in progress, the tricks."""
        zones: dict[str, tuple[str, ...]] = {
            "trick": tuple(p.card for p in state.trick),
            "tricks": tuple(p.card for t in state.tricks for p in t.plays),
            "discards": tuple(d for d in state.discards if d),
        }
        for s in range(state.players):
            zones[f"hand:{s}"] = state.hands[s]
        return zones

    def max_actions(self, state: WiezenState) -> int:
        """Every deal takes fewer than ``MAX_ACTIONS_PER_DEAL`` actions (four bidding rounds,
        a strictly rising ladder of bids and raises, four discards, 52 cards)."""
        return state.deals * MAX_ACTIONS_PER_DEAL


GAME = Kleurenwiezen()


# --------------------------------------------------------------------------- refusals


def _malformed(action: WiezenAction) -> InvalidAction | None:
    """Why an action cannot be a move of this game in any state (None: it can)."""
    kind = action.kind
    if not isinstance(kind, ActionKind):
        return InvalidAction("unknown action kind", rule="wrong_game")
    if kind in (ActionKind.PLAY, ActionKind.DISCARD):
        if action.card not in _ORDER:
            return InvalidAction(f"there is no card {action.card[:8]!r}", rule="no_such_card")
    elif kind in (ActionKind.ASK, ActionKind.JOIN, ActionKind.ALONE):
        if action.suit not in SUIT_VALUE:
            return InvalidAction("name a suit: S, C, D or H", rule="no_such_suit")
    elif kind is ActionKind.RAISE:
        if not 5 <= action.tricks <= 13:
            return InvalidAction("a raise names 5 to 13 tricks", rule="tricks_out_of_range")
    elif kind is ActionKind.BID:
        contract = action.contract
        if contract is None or contract not in HIGH_BIDS:
            return InvalidAction(
                "bid kleine_miserie, abondance, grote_miserie, blote_miserie or solo_slim",
                rule="no_such_contract",
            )
        wants_suit = contract in (ContractKind.ABONDANCE, ContractKind.SOLO_SLIM)
        if (action.suit in SUIT_VALUE) != wants_suit:
            return InvalidAction(f"the suit of a bid of {contract.value}", rule="no_such_suit")
        if action.bid() not in _BID_ACTION:
            return InvalidAction(
                "abondance names 9 to 13 tricks, the other bids none", rule="tricks_out_of_range"
            )
    return None


def _wrong_phase(phase: Phase) -> IllegalAction:
    return IllegalAction(f"that move is not one of the moves of {phase.value}", rule="wrong_phase")


def _why_not_bid(state: WiezenState, seat: int, wanted: Bid) -> EngineError:
    phase = state.phase
    if phase is Phase.TROEL_AUCTION:
        if wanted.kind not in (ContractKind.BLOTE_MISERIE, ContractKind.SOLO_SLIM):
            return IllegalAction(
                "with troel only blote miserie and solo slim may be bid", rule="bid_not_allowed"
            )
        return IllegalAction("a stronger bid stands", rule="bid_too_low")
    if phase is Phase.MISERIE_RESPONSE and wanted == KM:
        return IllegalAction("answer the block with a higher game", rule="bid_not_allowed")
    me = state.bidders[seat]
    if phase is Phase.DECLARE and state.round > 1:
        if not (me.state is BidderState.HIGH and me.outbid):
            return IllegalAction(
                "after round 1 only an outbid bidder bids a higher game", rule="bid_not_allowed"
            )
        if wanted == KM:
            return IllegalAction("kleine miserie is bid in round 1", rule="bid_not_allowed")
    return IllegalAction("that bid is not stronger than the strongest bid", rule="bid_too_low")


def _why_not_declare(state: WiezenState, seat: int, action: WiezenAction) -> EngineError:
    """Why a DECLARE move of the seat to act is refused (section 6.3)."""
    kind = action.kind
    bidders = state.bidders
    me = bidders[seat]
    position = state.active.index(seat)
    first = state.round == 1
    if kind in (ActionKind.PLAY, ActionKind.DISCARD, ActionKind.RAISE, ActionKind.PASTROEL):
        return _wrong_phase(state.phase)
    if kind is ActionKind.WAIT:
        if position != 0:
            return IllegalAction("only the first player may wait", rule="not_p1")
        return IllegalAction("waiting is a round 1 move", rule="wrong_phase")
    if kind is ActionKind.RONDPAS:
        return IllegalAction(
            "rondpas: the first player proposes in round 1, the next ones confirm in turn",
            rule="rondpas_not_allowed",
        )
    if kind is ActionKind.DOOD:
        return IllegalAction(
            "dood: the fourth player, after three asked colours, with five cards of the fourth",
            rule="dood_not_allowed",
        )
    if not _level_one_open(_standing_high(bidders)):
        return IllegalAction("a game of abondance or higher stands", rule="level_closed")
    suit = action.suit
    if kind is ActionKind.JOIN:
        if not first and me.state is BidderState.OPEN and SUIT_VALUE[suit] <= SUIT_VALUE[me.suit]:
            return IllegalAction("an asker only joins a higher colour", rule="only_higher_suit")
        if _open_in(bidders, suit, seat) < 0:
            return IllegalAction(f"nobody asks {suit} without a partner", rule="nobody_to_join")
        return _wrong_phase(state.phase)
    if not first and me.state is not BidderState.OPEN:
        return IllegalAction("only an asker may ask, re-ask or go alone now", rule="wrong_phase")
    if kind is ActionKind.REASK:
        if first:
            return _wrong_phase(state.phase)
        if state.round > 3:
            return IllegalAction("no re-asking from round 4 on", rule="extra_rounds_over")
        return IllegalAction(f"nobody could still join {me.suit}", rule="cannot_be_joined")
    if kind is ActionKind.ALONE:
        if first:
            return IllegalAction("go alone after round 1, on an asked colour", rule="wrong_phase")
        if SUIT_VALUE[suit] < SUIT_VALUE[me.suit]:
            return IllegalAction(
                "alone only in your colour or a higher one", rule="only_higher_suit"
            )
        return IllegalAction(f"{suit} is taken", rule="suit_taken")
    # ASK
    if suit in _taken(bidders, exclude=seat):
        return IllegalAction(f"{suit} is taken", rule="suit_taken")
    if first:
        return IllegalAction(f"{suit} cannot be asked now", rule="suit_taken")
    if state.round > 3:
        return IllegalAction("no new colours from round 4 on", rule="extra_rounds_over")
    if SUIT_VALUE[suit] <= SUIT_VALUE[me.suit]:
        return IllegalAction("an asker only moves up", rule="only_higher_suit")
    return IllegalAction(f"nobody could join {suit}", rule="cannot_be_joined")


def _parse(text: str) -> WiezenAction | None:
    head, _, rest = text.partition(":")
    try:
        kind = ActionKind(head)
    except ValueError:
        return None
    parts = rest.split(":") if rest else []
    if kind in (ActionKind.ASK, ActionKind.JOIN, ActionKind.ALONE):
        return (
            WiezenAction(kind, suit=parts[0])
            if len(parts) == 1 and parts[0] in SUIT_VALUE
            else None
        )
    if kind in (ActionKind.PLAY, ActionKind.DISCARD):
        return WiezenAction(kind, card=parts[0]) if len(parts) == 1 and parts[0] in _ORDER else None
    if kind is ActionKind.RAISE:
        if len(parts) == 1 and parts[0] in {str(t) for t in range(1, 14)}:
            return raise_to(int(parts[0]))
        return None
    if kind is ActionKind.BID:
        for action in _BID_ACTION.values():
            if str(action) == text:
                return action
        return None
    return WiezenAction(kind) if not parts and not rest else None


# --------------------------------------------------------------------------- sampling

SAMPLE_ATTEMPTS = 200


def sample_hands(obs: WiezenObservation, rng: Rng) -> tuple[list[tuple[str, ...]], list[str]]:
    """Deal-start hands (every card a seat held when the deal was dealt) and kleine-miserie
    discards per seat, consistent with everything ``obs`` shows or its history proves.

    Fixed: the viewer's own cards, every played card, the shown blote-miserie hand. Proven:
    a seat that did not follow suit holds none of that suit (its discard is free); the
    troel holder held exactly 3 or 4 aces, and without troel nobody held 3; with 4 aces the
    holder held every heart above the partner's forced lead; with troel in play the partner
    is the seat the rules make partner. The cards that are left are dealt at random to the
    hidden hands (card by card, each to a zone drawn in proportion to its free room among
    the zones that can still take the rest: Hall's condition over the suits), and a deal
    that breaks an ace condition is drawn again. Without voids or ace conditions this is a
    uniform deal; with them it is close to uniform, not exactly. After ``SAMPLE_ATTEMPTS``
    failed draws (never seen in tests) the last draw is used.
    """
    active = obs.active
    viewer = obs.seat if obs.seat is not None and obs.seat in active else None
    played: dict[int, list[str]] = {s: [] for s in active}
    voids: dict[int, set[str]] = {s: set() for s in active}
    for plays in (*(t.plays for t in obs.tricks), obs.trick):
        if not plays:
            continue
        led = plays[0].card[1]
        for p in plays:
            played[p.seat].append(p.card)
            if p.card[1] != led:
                voids[p.seat].add(led)
    known = {c for cards in played.values() for c in cards}
    fixed: dict[int, tuple[str, ...]] = {}
    if viewer is not None:
        fixed[viewer] = obs.hand
        known.update(obs.hand)
        if obs.discard:
            known.add(obs.discard)
    if obs.shown_seat >= 0 and obs.shown_seat != viewer:
        fixed[obs.shown_seat] = obs.shown
        known.update(obs.shown)
    hidden = [s for s in active if s not in fixed]
    pool = [c for c in ALL_CARDS if c not in known]
    required: dict[int, list[str]] = {s: [] for s in hidden}
    holder, aces = obs.troel_holder, obs.troel_aces
    contract = obs.contract
    in_troel = contract is not None and contract.kind is ContractKind.TROEL
    first_lead = ""
    if obs.tricks:
        first_lead = obs.tricks[0].plays[0].card
    elif obs.trick:
        first_lead = obs.trick[0].card
    fourth = ""
    if holder >= 0 and holder in required:
        unknown_aces = [c for c in pool if c[0] == "A"]
        if aces == 4:
            required[holder] += unknown_aces
        elif len(unknown_aces) > aces - _aces(played[holder]):
            # The fourth ace lies with another hidden seat (the partner, once troel is in
            # play) that can hold its suit; the holder cannot hold a suit he showed out of.
            takers = [obs.partner] if in_troel else [s for s in hidden if s != holder]
            possible = [
                c
                for c in unknown_aces
                if any(c[1] not in voids[s] or obs.discarded[s] for s in takers)
            ]
            barred = [c for c in possible if c[1] in voids[holder]]
            choices = barred or possible
            pick, rng = rng.below(len(choices))
            fourth = choices[pick]
            required[holder] += [c for c in unknown_aces if c != fourth]
        else:
            required[holder] += unknown_aces
        if in_troel and aces == 4 and first_lead:
            required[holder] += [
                c for c in pool if c[1] == "H" and c[0] != "A" and _RANK[c] > _RANK[first_lead]
            ]
    if in_troel and fourth and obs.partner in required:
        required[obs.partner].append(fourth)
    taken = {c for cards in required.values() for c in cards}
    pool = [c for c in pool if c not in taken]
    zones: list[tuple[int, bool]] = []  # (seat, is_discard)
    caps: list[int] = []
    barred_suits: list[set[str]] = []
    for s in hidden:
        zones.append((s, False))
        caps.append(obs.hand_sizes[s] - len(required[s]))
        barred_suits.append(voids[s])
        if obs.discarded[s]:
            zones.append((s, True))
            caps.append(1)
            barred_suits.append(set())
    hands: list[tuple[str, ...]] = []
    discards: list[str] = []
    for _ in range(SAMPLE_ATTEMPTS):
        filled, rng = _fill(pool, caps, barred_suits, rng)
        hands = [()] * obs.players
        discards = [""] * obs.players
        for s in active:
            if s in fixed:
                hands[s] = (*fixed[s], *played[s])
                if s == viewer and obs.discard:
                    hands[s] = (*hands[s], obs.discard)
                    discards[s] = obs.discard
            else:
                hands[s] = (*required[s], *played[s])
        for (s, is_discard), cards in zip(zones, filled, strict=True):
            hands[s] = (*hands[s], *cards)
            if is_discard:
                discards[s] = cards[0]
        if _consistent(obs, hands, in_troel):
            break
    return hands, discards


def _consistent(obs: WiezenObservation, hands: Sequence[Sequence[str]], in_troel: bool) -> bool:
    """The ace conditions of a sampled deal (see :func:`sample_hands`)."""
    counts = [_aces(h) for h in hands]
    if obs.troel_holder < 0:
        return max(counts) < 3
    if counts[obs.troel_holder] != obs.troel_aces:
        return False
    if in_troel:
        return troel_partner(hands, obs.troel_holder, obs.troel_aces) == obs.partner
    return True


def _fill(
    pool: list[str], caps: list[int], barred: list[set[str]], rng: Rng
) -> tuple[list[list[str]], Rng]:
    """``pool`` dealt at random into zones of room ``caps``, none getting a barred suit.

    Each card goes to a zone drawn in proportion to its room among the zones that take its
    suit and leave the rest placeable. Hall's condition, kept per set of suits: the cards
    of the set still to place (``need``) fit into the room of the zones taking any of them
    (``space``)."""
    order, rng = rng.shuffle(pool)
    out: list[list[str]] = [[] for _ in caps]
    if not any(barred):
        at = 0
        for z, cap in enumerate(caps):
            out[z] = list(order[at : at + cap])
            at += cap
        return out, rng
    room = list(caps)
    zones = range(len(caps))
    takes = [sum(1 << i for i, suit in enumerate(SUITS) if suit not in barred[z]) for z in zones]
    per_suit = [0] * 16
    for c in order:
        per_suit[_SUIT_BIT[c]] += 1
    need = [sum(per_suit[b] for b in _SUIT_BITS if b & m) for m in range(16)]
    space = [sum(room[z] for z in zones if takes[z] & m) for m in range(16)]
    for c in order:
        bit = _SUIT_BIT[c]
        options = [z for z in zones if room[z] and takes[z] & bit]
        chosen = options[0] if options else max(zones, key=room.__getitem__)
        while options:
            total = sum(room[z] for z in options)
            draw, rng = rng.below(total)
            for z in options:
                draw -= room[z]
                if draw < 0:
                    break
            if _hall_holds(need, space, bit, takes[z]):
                chosen = z
                break
            options.remove(z)
        # (No option left cannot happen for a consistent observation; the count stays right.)
        room[chosen] -= 1
        out[chosen].append(c)
        for m in _MASKS_MEETING[bit]:
            need[m] -= 1
        for m in _MASKS_MEETING[takes[chosen]]:
            space[m] -= 1
    return out, rng


def _hall_holds(need: list[int], space: list[int], bit: int, takes: int) -> bool:
    """Whether, with a card of suit ``bit`` placed in a zone taking the suits ``takes``,
    the cards still to place fit for every set of suits (:func:`_fill`)."""
    for m in range(1, 16):
        if need[m] - (1 if m & bit else 0) > space[m] - (1 if m & takes else 0):
            return False
    return True


_SUIT_BITS = tuple(1 << i for i in range(len(SUITS)))
_SUIT_BIT = {card: 1 << SUITS.index(card[1]) for card in ALL_CARDS}  # a card's suit as a bit
# Per set of suits (bits), the sets of suits (1..15) that share one with it.
_MASKS_MEETING = tuple(tuple(m for m in range(1, 16) if m & t) for t in range(16))
