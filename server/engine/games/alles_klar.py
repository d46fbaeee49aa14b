"""Alles Klar? (Thorsten Gimmler, Piatnik): the rules engine.

Rules source: ``shared/rules/alles_klar.md`` (its decisions D1-D6, restated here as this
project's own). Seats ``0..N-1`` clockwise, 2-5 players. "Rank position r" is the r-th
highest Arabic number among the face-up played cards of the current trick.

Components. 77 playing cards in 7 sets of Arabic numbers 1..11, card text
``<set>-<n>``: the plain set ``P`` (no numeral), the single-numeral sets ``S1``..``S5``
(one Roman numeral I..V each, written 1..5) and the double set ``W`` (two different
numerals each). Five rank cards I..V, each face up (still possible) or face down
(excluded for this trick). Stable card order: Arabic number ascending, then set ``P``,
``S1``..``S5``, ``W``.

Numerals (D1): option ``numerals``, a list of 77 numbers 1..5: items 1-55 are the numerals
of ``S1-1``..``S1-11``, ``S2-1``, .., ``S5-11``; items 56-77 the two numerals of ``W-1``,
then of ``W-2``, .., ``W-11`` (first, second). The default is the rules file's symmetric
cyclic layout: ``Sk-n`` carries ``((n + k - 2) mod 5) + 1``; ``W-n`` carries
``((n - 1) mod 5) + 1`` and ``((n + 1) mod 5) + 1``. The two numerals of a ``W`` card must
differ (refused otherwise, rule ``numerals``: a card with two equal numerals has nothing
to choose; this project's decision).

Further options: ``winner_takes_facedown`` (default ``true``, D2: the winner takes every
card of the trick, face down ones included; ``false``: only the face-up ones, and the
face-down ones leave the game); ``dealer`` (D6: ``seat0``, the default, or ``random``,
drawn by the match's RNG after the deck is ordered). The player to the dealer's left,
``(dealer + 1) mod N``, leads the first trick.

Named deck ``cards`` (the 77 cards, ordered once at setup, top card first): cards 1-4 are
seat 0's hand, 5-8 seat 1's, and so on; the rest is the face-down stock, top first.
Nothing is random after setup.

A turn of the player to act (``play:<card>``, or ``play:W-<n>/<numeral>`` for a double
card; D5 fixes the steps' order):

1. Play: the card goes face up into the player's trick area.
2. Same number: a face-up card of the same Arabic number already in any trick area (the
   player's own included) turns face down; it stays in the trick but no longer ranks.
3. Numeral: a single card's numeral applies; on a ``W`` card the player names either of
   its two numerals (compulsory; even one whose rank card is already down). If that rank
   card is face up it turns face down; otherwise nothing happens. ``P`` cards have none.
4. Draw: if the stock is not empty the player draws its top card. Drawing the last stock
   card makes the trick in progress the last trick (section 7). The drawn card is set
   aside face down in front of its owner (public: that he holds one; zone ``drawn:<seat>``)
   and joins his hand, where he sees it, when his next turn begins. This project's
   decision, made for the engine's contract that an action shows the acting seat no
   hidden card unless its own turn goes on: the player makes no decision between drawing
   and his next turn, so play is the same as with a card looked at at once. A drawn card
   counts as a card in hand for "has a card" (skipping in the last trick); one still set
   aside when the game ends scores nothing, like the hands.
5. Check: exactly one rank card r up and at least r face-up cards: the owner of the r-th
   highest face-up card wins the trick, takes its cards into his score pile and leads the
   next one. No rank card up: a blind trick, its cards leave the game and the player who
   turned the last rank card leads next. Otherwise the next player clockwise with a card
   in hand plays (the same player again when nobody else has one). After a decided trick
   all rank cards turn face up again and the trick areas are empty.

End (D3): the last trick is played without drawing, players with an empty hand are
skipped; the game ends when it is won or blind, or when every hand is empty before it is
decided (its cards then leave the game unscored). Cards still in hand at the end score
nothing. Score: one point per card in the score pile (``score_name`` "cards", highest
wins); equal highest scores share the victory (D4): ``Outcome.from_keys`` with the key
``(cards,)``.

Clock default (rules section 5): the first card of the hand in the stable order, naming
the lower of its two numerals on a double card; that is ``legal_actions[0]``, since the
legal actions list the hand in stable order, a double card's lower numeral first.

What each seat sees (rules section 10): its own hand and the cards it has taken into it,
in order (``private_fields``); every hand's size and who has a drawn card set aside; the
stock's size; the rank cards; the
current trick (every play with its applying numeral, which earlier card it turned down,
which rank card it turned, whether the player drew) and whether each of its cards is
still face up; every finished trick (its plays and result); every score pile; the cards
out of the game; the turn, the leader and whether this is the last trick.
:meth:`AllesKlar.sample_world` deals the unseen cards anew to the other hands and the
stock; the other players' past hands are taken to have held each card they later played
from the moment they could have (a card stream of their played cards in order, then their
hand).

Rule ids of refusals: ``wrong_game``, ``no_such_seat``, ``game_over``, ``no_such_card``,
``not_your_turn``, ``not_in_hand``, ``numeral_required``, ``numeral_not_allowed``,
``not_its_numeral``.

rules_version history:

* 1 - first version.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

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
    int_list_option,
    refuse_unless_legal,
    remember_last,
)

SETS = ("P", "S1", "S2", "S3", "S4", "S5", "W")
NUMBERS = tuple(range(1, 12))
RANKS = 5
HAND_SIZE = 4
ROMAN = ("", "I", "II", "III", "IV", "V")


def default_numerals() -> tuple[int, ...]:
    """The rules file's D1 layout as the ``numerals`` option's 77 items."""
    singles = [((n + k - 2) % 5) + 1 for k in range(1, 6) for n in NUMBERS]
    doubles = [x for n in NUMBERS for x in (((n - 1) % 5) + 1, ((n + 1) % 5) + 1)]
    return (*singles, *doubles)


DEFAULT_NUMERALS = default_numerals()
ALL_CARDS = tuple(f"{s}-{n}" for n in NUMBERS for s in SETS)  # stable order
_ORDER = {card: i for i, card in enumerate(ALL_CARDS)}


def card_number(card: str) -> int:
    """The Arabic number of a card (looked up for the game's own cards: parsing the text
    on every call was a large part of a move)."""
    number = _NUMBER.get(card)
    return number if number is not None else int(card.partition("-")[2])


def card_set(card: str) -> str:
    """The set of a card (``P``, ``S1``..``S5``, ``W``)."""
    kind = _SET.get(card)
    return kind if kind is not None else card.partition("-")[0]


_NUMBER = {card: int(card.partition("-")[2]) for card in ALL_CARDS}
_SET = {card: card.partition("-")[0] for card in ALL_CARDS}


def numerals_of(numerals: Sequence[int], card: str) -> tuple[int, ...]:
    """The numerals printed on ``card`` under the ``numerals`` option (P: none)."""
    kind, n = card_set(card), card_number(card)
    if kind == "P":
        return ()
    if kind == "W":
        base = 55 + 2 * (n - 1)
        return (numerals[base], numerals[base + 1])
    k = int(kind[1])
    return (numerals[(k - 1) * 11 + n - 1],)


def in_order(cards: Sequence[str]) -> tuple[str, ...]:
    """``cards`` in the stable order (number ascending, then P, S1..S5, W)."""
    return tuple(sorted(cards, key=_ORDER.__getitem__))


def _with_card(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    """``in_order((*hand, card))`` for a hand already in the stable order (every hand is)."""
    at = bisect.bisect_right(hand, _ORDER[card], key=_ORDER.__getitem__)
    return (*hand[:at], card, *hand[at:])


class Phase(StrEnum):
    """Whether the game is running."""

    PLAY = "play"
    OVER = "over"


class Result(StrEnum):
    """How a finished trick ended."""

    WON = "won"
    BLIND = "blind"
    UNDECIDED = "undecided"  # every hand ran out in the last trick (D3)


@dataclass(frozen=True, slots=True, order=True)
class AllesAction:
    """``play:<card>``; ``numeral`` names the applying numeral of a double card (else 0)."""

    card: str
    numeral: int = 0

    def __str__(self) -> str:
        return f"play:{self.card}/{self.numeral}" if self.numeral else f"play:{self.card}"


@dataclass(frozen=True, slots=True)
class Play:
    """One played card of a trick: who, which, the numeral that applied (0: none), the
    earlier card it turned face down ("" none), the rank card it turned (0 none), whether
    the player drew afterwards."""

    seat: int
    card: str
    numeral: int
    turned_card: str
    turned_rank: int
    drew: bool


@dataclass(frozen=True, slots=True)
class TrickRecord:
    """A finished trick: its number (from 1), leader, plays, result and the seat that took it
    (won) or turned the last rank card (blind); -1 when undecided."""

    number: int
    leader: int
    plays: tuple[Play, ...]
    result: Result
    seat: int


@dataclass(frozen=True, slots=True)
class AllesState:
    """The full state of a match."""

    numerals: tuple[int, ...]
    take_facedown: bool
    players: int
    phase: Phase
    turn: int
    leader: int
    last_trick: bool
    stock: tuple[str, ...]  # top first
    hands: tuple[tuple[str, ...], ...]  # stable order
    received: tuple[tuple[str, ...], ...]  # every card each seat took into hand, in order
    drawn: tuple[str, ...]  # per seat: the card drawn but not yet seen ("" none)
    trick: tuple[Play, ...]
    ranks_up: tuple[bool, ...]  # rank cards I..V
    piles: tuple[tuple[str, ...], ...]  # score piles, in the order taken
    out: tuple[str, ...]  # out of the game, in order
    history: tuple[TrickRecord, ...]


@dataclass(frozen=True, slots=True)
class AllesObservation:
    """What one seat (or a spectator, ``seat=None``) may know."""

    private_fields: ClassVar[tuple[str, ...]] = ("hand", "received")

    seat: int | None
    numerals: tuple[int, ...]
    take_facedown: bool
    players: int
    phase: Phase
    turn: int  # -1 when over
    leader: int
    last_trick: bool
    hand: tuple[str, ...]
    received: tuple[str, ...]
    hand_sizes: tuple[int, ...]
    drawn: tuple[bool, ...]  # per seat: holds a drawn card it sees at its next turn
    stock_size: int
    ranks_up: tuple[bool, ...]
    trick: tuple[Play, ...]
    face_up: tuple[bool, ...]  # per play of the trick: still face up
    piles: tuple[tuple[str, ...], ...]
    scores: tuple[int, ...]
    out: tuple[str, ...]
    history: tuple[TrickRecord, ...]


_STATE_HEADER = {"game": "alles_klar", "format": 1}


# ``dataclasses.replace`` without its per-call introspection (the engine's hot path).
_evolve = evolver(AllesState)
_build = fast_constructor(AllesState)  # every field, positionally
_new_play = fast_constructor(Play)  # every field, positionally
_new_record = fast_constructor(TrickRecord)  # every field, positionally

# Enum members for the hot paths: on Python 3.11 ``Phase.OVER`` costs about half a
# microsecond (EnumType's ``__getattr__`` sends every class attribute lookup down a slow
# path), a module global a twentieth of that.
_PLAYING, _OVER = Phase.PLAY, Phase.OVER
_WON, _BLIND, _UNDECIDED = Result.WON, Result.BLIND, Result.UNDECIDED

# Where a single-numeral card's numeral sits in the ``numerals`` option (numerals_of).
_SINGLE_AT = {f"S{k}-{n}": (k - 1) * 11 + n - 1 for k in range(1, RANKS + 1) for n in NUMBERS}


def face_up(trick: Sequence[Play]) -> tuple[bool, ...]:
    """For each play of a trick whether its card is still face up."""
    turned = {p.turned_card for p in trick if p.turned_card}
    return tuple(p.card not in turned for p in trick)


def ranking(trick: Sequence[Play]) -> tuple[Play, ...]:
    """The face-up plays of a trick, highest Arabic number first (rank position 1 first)."""
    ups = [p for p, up in zip(trick, face_up(trick), strict=True) if up]
    return tuple(sorted(ups, key=_highest_first))


def _highest_first(play: Play) -> int:
    return -card_number(play.card)


def played_by(history: Sequence[TrickRecord], trick: Sequence[Play], seat: int) -> list[str]:
    """Every card ``seat`` has played, in order."""
    plays = [p for record in history for p in record.plays] + list(trick)
    return [p.card for p in plays if p.seat == seat]


class AllesKlar:
    """The Alles Klar? rules (see the module docstring)."""

    info = GameInfo(
        game_id="alles_klar",
        name="Alles Klar?",
        rules_version=1,
        min_seats=2,
        max_seats=5,
        options=(
            OptionSpec(
                "numerals",
                OptionKind.INT_LIST,
                ",".join(map(str, DEFAULT_NUMERALS)),
                "the Roman numerals (1..5) on the cards: S1-1..S1-11, S2-1, .., S5-11, then "
                "both numerals of W-1, W-2, .., W-11 (77 items; the default is the rules "
                "file's D1 layout, as no published list exists); a W card's two differ",
                minimum=1,
                maximum=RANKS,
                min_items=77,
                max_items=77,
            ),
            OptionSpec(
                "winner_takes_facedown",
                OptionKind.BOOL,
                "true",
                "the trick's winner also takes its face-down cards (D2); false: they leave "
                "the game",
            ),
            OptionSpec(
                "dealer",
                OptionKind.CHOICE,
                "seat0",
                "the dealer (D6): seat 0, or drawn at random; the seat to the dealer's left "
                "leads the first trick",
                choices=("seat0", "random"),
            ),
        ),
        simultaneous=False,
        description="Play any card; a Roman numeral turns down a rank card and a repeated "
        "number turns down the earlier card. When one rank r is left, the r-th highest "
        "face-up card takes the trick. Most cards won wins.",
        score_name="cards",
        lower_is_better=False,
        decks=(
            DeckSpec(
                "cards",
                "the 77 cards, ordered at setup, top first: 4 per seat (seat 0 first), the "
                "rest is the stock, top first",
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
    ) -> AllesState:
        """Order the deck (preset or shuffle), deal 4 each, choose the dealer."""
        numerals, take_facedown, random_dealer, equal = _options(tuple(sorted(options.items())))
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise InvalidOptions(f"Alles Klar? takes 2-5 players, not {seats}", rule="seat_count")
        if equal:
            raise InvalidOptions(
                f"option numerals: the two numerals of W-{equal} are equal", rule="numerals"
            )
        decks = Decks.checked(rng, self.info.decks, presets, {"cards": ALL_CARDS})
        order, decks = decks.order("cards", ALL_CARDS)
        dealer = 0
        if random_dealer:
            dealer, decks = decks.below(seats)
        return _deal(numerals, take_facedown, seats, order, dealer)

    # ------------------------------------------------------------------ queries

    def to_act(self, state: AllesState) -> tuple[int, ...]:
        """The player whose turn it is; () at the end."""
        return () if state.phase is _OVER else (state.turn,)

    @remember_last
    def legal_actions(self, state: AllesState, seat: int) -> tuple[AllesAction, ...]:
        """Every card in hand in the stable order; a double card once per numeral, lower
        first."""
        if state.phase is _OVER or seat != state.turn:
            return ()
        plays = _plays(state.numerals)
        hand = state.hands[seat]
        try:
            return tuple([action for card in hand for action in plays[card]])
        except KeyError:  # a card asked for the first time under these numerals
            for card in hand:
                if card not in plays:
                    if card_set(card) == "W":
                        numerals = sorted(numerals_of(state.numerals, card))
                        plays[card] = tuple(AllesAction(card, x) for x in numerals)
                    else:
                        plays[card] = (AllesAction(card),)
            return tuple([action for card in hand for action in plays[card]])

    def default_action(self, state: AllesState, seat: int) -> AllesAction:
        """The first card of the hand in the stable order, a double card's lower numeral."""
        legal = self.legal_actions(state, seat)
        if not legal:
            raise NotYourTurn(f"seat {seat} need not act now")
        return legal[0]

    # ------------------------------------------------------------------ the mutator

    def apply(self, state: AllesState, seat: int, action: AllesAction) -> AllesState:
        """Play one of ``legal_actions``; the given state is never changed."""
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        return _play(state, seat, action)

    def _why_illegal(self, state: AllesState, seat: int, action: AllesAction) -> EngineError | None:
        """The rule an action not in ``legal_actions`` breaks (a diagnostic only)."""
        if not isinstance(action, AllesAction):
            return InvalidAction("not an Alles Klar? action", rule="wrong_game")
        if not 0 <= seat < state.players:
            return InvalidAction(f"there is no seat {seat}", rule="no_such_seat")
        if state.phase is Phase.OVER:
            return GameOver("the match is over")
        if action.card not in _ORDER:
            return InvalidAction(f"there is no card {action.card[:40]!r}", rule="no_such_card")
        if seat != state.turn:
            return NotYourTurn(f"it is seat {state.turn}'s turn")
        if action.card not in state.hands[seat]:
            return IllegalAction(f"{action.card} is not in your hand", rule="not_in_hand")
        printed = numerals_of(state.numerals, action.card)
        if card_set(action.card) == "W":
            if action.numeral == 0:
                return IllegalAction(
                    "name the numeral that applies on a double card", rule="numeral_required"
                )
            return IllegalAction(
                f"{action.card} carries the numerals {printed[0]} and {printed[1]}",
                rule="not_its_numeral",
            )
        return IllegalAction(
            "only a double card's player names a numeral", rule="numeral_not_allowed"
        )

    # ------------------------------------------------------------------ views

    def observe(self, state: AllesState, seat: int | None) -> AllesObservation:
        """A seat's own hand and received cards, plus everything public."""
        own = seat is not None and 0 <= seat < state.players
        return AllesObservation(
            seat=seat,
            numerals=state.numerals,
            take_facedown=state.take_facedown,
            players=state.players,
            phase=state.phase,
            turn=state.turn if state.phase is Phase.PLAY else -1,
            leader=state.leader,
            last_trick=state.last_trick,
            hand=state.hands[seat] if own and seat is not None else (),
            received=state.received[seat] if own and seat is not None else (),
            hand_sizes=tuple(len(h) for h in state.hands),
            drawn=tuple(bool(d) for d in state.drawn),
            stock_size=len(state.stock),
            ranks_up=state.ranks_up,
            trick=state.trick,
            face_up=face_up(state.trick),
            piles=state.piles,
            scores=tuple(len(p) for p in state.piles),
            out=state.out,
            history=state.history,
        )

    def sample_world(self, observation: AllesObservation, rng: Rng) -> AllesState:
        """The unseen cards dealt anew to the other hands and the stock."""
        obs = observation
        own = obs.seat if obs.seat is not None and 0 <= obs.seat < obs.players else None
        seen = set(obs.out)
        for pile in obs.piles:
            seen.update(pile)
        seen.update(p.card for p in obs.trick)
        if own is not None:
            seen.update(obs.hand)
        unseen = [c for c in ALL_CARDS if c not in seen]
        shuffled, rng = rng.shuffle(unseen)
        hands: list[tuple[str, ...]] = []
        received: list[tuple[str, ...]] = []
        drawn: list[str] = []
        at = 0
        for s in range(obs.players):
            if obs.drawn[s]:
                drawn.append(shuffled[at])
                at += 1
            else:
                drawn.append("")
            if s == own:
                hands.append(obs.hand)
                received.append(obs.received)
                continue
            size = obs.hand_sizes[s]
            hand = shuffled[at : at + size]
            at += size
            hands.append(in_order(hand))
            received.append((*played_by(obs.history, obs.trick, s), *hand))
        return AllesState(
            numerals=obs.numerals,
            take_facedown=obs.take_facedown,
            players=obs.players,
            phase=obs.phase,
            turn=obs.turn if obs.phase is Phase.PLAY else _over_turn(obs),
            leader=obs.leader,
            last_trick=obs.last_trick,
            stock=shuffled[at:],
            hands=tuple(hands),
            received=tuple(received),
            drawn=tuple(drawn),
            trick=obs.trick,
            ranks_up=obs.ranks_up,
            piles=obs.piles,
            out=obs.out,
            history=obs.history,
        )

    def determinize(self, state: AllesState, seat: int, rng: Rng) -> AllesState:
        """``sample_world(observe(state, seat), rng)``."""
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(self, state: AllesState) -> tuple[AllesState, tuple[tuple[int, AllesAction], ...]]:
        """The state after the deal (the whole game is one deal) and every play since."""
        plays = [p for record in state.history for p in record.plays] + list(state.trick)
        streams = [
            [*r, d] if d else list(r) for r, d in zip(state.received, state.drawn, strict=True)
        ]
        order: list[str] = []
        for s in range(state.players):
            order.extend(streams[s][:HAND_SIZE])
        taken = [HAND_SIZE] * state.players
        for p in plays:
            if p.drew:
                order.append(streams[p.seat][taken[p.seat]])
                taken[p.seat] += 1
        order.extend(state.stock)
        first = state.history[0].leader if state.history else state.leader
        dealer = (first - 1) % state.players
        start = _deal(state.numerals, state.take_facedown, state.players, tuple(order), dealer)
        actions = tuple(
            (p.seat, AllesAction(p.card, p.numeral if _is_w(p.card) else 0)) for p in plays
        )
        return start, actions

    def outcome(self, state: AllesState) -> Outcome | None:
        """One point per card in the score pile, highest first; ties share (D4)."""
        if state.phase is not _OVER:
            return None
        scores = [len(p) for p in state.piles]
        return Outcome.from_keys(scores, [(s,) for s in scores], self.info.lower_is_better)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: AllesAction) -> str:
        """``play:S1-5``, ``play:W-4/1``."""
        return str(action)

    def parse_action(self, text: str) -> AllesAction:
        """The action of a text written by :meth:`action_text`."""
        kind, sep, rest = text.partition(":")
        if sep and kind == "play":
            card, slash, numeral = rest.partition("/")
            if card in _ORDER:
                if not slash:
                    return AllesAction(card)
                if numeral in ("1", "2", "3", "4", "5"):
                    return AllesAction(card, int(numeral))
        raise InvalidAction(f"not an Alles Klar? action: {text[:40]!r}", rule="bad_action_text")

    def encode(self, state: AllesState) -> bytes:
        """Canonical JSON bytes of the state."""
        return encode_value(_STATE_HEADER, state)

    def decode(self, data: bytes) -> AllesState:
        """The state :meth:`encode` wrote."""
        return decode_value(_STATE_HEADER, AllesState, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: AllesState) -> tuple[str, ...]:
        """All 77 cards."""
        return tuple(sorted(ALL_CARDS))

    def zones(self, state: AllesState) -> Mapping[str, tuple[str, ...]]:
        """Stock, hands, the current trick, score piles, out of the game."""
        zones: dict[str, tuple[str, ...]] = {
            "stock": state.stock,
            "trick": tuple(p.card for p in state.trick),
            "out": state.out,
        }
        for s in range(state.players):
            zones[f"hand:{s}"] = state.hands[s]
            zones[f"pile:{s}"] = state.piles[s]
            zones[f"drawn:{s}"] = (state.drawn[s],) if state.drawn[s] else ()
        return zones

    def max_actions(self, state: AllesState) -> int:
        """Every action plays one of the 77 cards."""
        return len(ALL_CARDS)


_PLAYS: dict[int, tuple[Sequence[int], dict[str, tuple[AllesAction, ...]]]] = {}
_PLAYS_KEPT = 4096  # numerals options remembered; cleared when full


def _plays(numerals: Sequence[int]) -> dict[str, tuple[AllesAction, ...]]:
    """The actions playing each card under ``numerals``, filled in as cards are asked for.

    Kept by the numerals tuple's identity (every state of a match shares it; the entry
    holds it, so the identity stays its own): a card's actions depend on nothing else, and
    building them anew was most of ``legal_actions``.
    """
    kept = _PLAYS.get(id(numerals))
    if kept is None or kept[0] is not numerals:
        if len(_PLAYS) >= _PLAYS_KEPT:
            _PLAYS.clear()
        kept = _PLAYS[id(numerals)] = (numerals, {})
    return kept[1]


@functools.lru_cache(maxsize=64)
def _options(given: tuple[tuple[str, str], ...]) -> tuple[tuple[int, ...], bool, bool, int]:
    """The options of :meth:`AllesKlar.new` resolved and parsed (``InvalidOptions`` as
    there): the numerals, whether the winner takes face-down cards, whether the dealer is
    drawn, and the first ``W`` card number whose two numerals are equal (0: none).

    Remembered, since parsing 77 numerals was a sizeable part of a short match; the one
    numerals tuple then serves every match with these options (and ``_plays`` with it)."""
    resolved = GAME.info.resolve_options(dict(given))
    numerals = int_list_option(resolved, "numerals")
    equal = 0
    for n in NUMBERS:
        a, b = numerals_of(numerals, f"W-{n}")
        if a == b:
            equal = n
            break
    return (
        numerals,
        bool_option(resolved, "winner_takes_facedown"),
        choice_option(resolved, "dealer") == "random",
        equal,
    )


def _is_w(card: str) -> bool:
    return card_set(card) == "W"


def _over_turn(obs: AllesObservation) -> int:
    """The ``turn`` field of an ended state (the seat that played last)."""
    if obs.history and obs.history[-1].plays:
        return obs.history[-1].plays[-1].seat
    return 0


def _deal(
    numerals: tuple[int, ...],
    take_facedown: bool,
    players: int,
    order: Sequence[str],
    dealer: int,
) -> AllesState:
    hands = tuple(tuple(order[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in range(players))
    leader = (dealer + 1) % players
    return AllesState(
        numerals=numerals,
        take_facedown=take_facedown,
        players=players,
        phase=Phase.PLAY,
        turn=leader,
        leader=leader,
        last_trick=False,
        stock=tuple(order[players * HAND_SIZE :]),
        hands=tuple(in_order(h) for h in hands),
        received=hands,
        drawn=("",) * players,
        trick=(),
        ranks_up=(True,) * RANKS,
        piles=((),) * players,
        out=(),
        history=(),
    )


def _play(state: AllesState, seat: int, action: AllesAction) -> AllesState:
    """The four steps of a turn and the check (module docstring)."""
    card = action.card
    number = card_number(card)
    at = _SINGLE_AT.get(card)
    if at is not None:  # a single-numeral card (the tables hold the game's own cards)
        numeral = state.numerals[at]
    else:
        printed = numerals_of(state.numerals, card)
        numeral = action.numeral if _is_w(card) else (printed[0] if printed else 0)
    turned_card = ""
    trick = state.trick
    turned: set[str] | None = None  # face_up(trick) inline, built when first needed
    for p in trick:
        if _NUMBER[p.card] == number:
            if turned is None:  # a card is down once a later play names it as turned
                turned = {p.turned_card for p in trick}
            if p.card not in turned:
                turned_card = p.card
    ranks = state.ranks_up
    turned_rank = 0
    if numeral and ranks[numeral - 1]:
        ranks = (*ranks[: numeral - 1], False, *ranks[numeral:])
        turned_rank = numeral
    hands = list(state.hands)
    hand = hands[seat]
    if hand.count(card) == 1:  # always, in practice: a slice instead of a filter
        at = hand.index(card)
        hands[seat] = hand[:at] + hand[at + 1 :]
    else:
        hands[seat] = tuple(c for c in hand if c != card)
    drawn = list(state.drawn)
    stock = state.stock
    drew = bool(stock)
    last_trick = state.last_trick
    if drew:
        drawn[seat] = stock[0]
        stock = stock[1:]
        if not stock:
            last_trick = True
    trick = (*trick, _new_play(seat, card, numeral, turned_card, turned_rank, drew))
    ups = ranks.count(True)  # the ranks still face up
    result = _UNDECIDED
    if ups == 1:
        position = ranks.index(True) + 1
        turned = {p.turned_card for p in trick}
        showing = [p for p in trick if p.card not in turned]
        if len(showing) >= position:  # ranking(trick), sorted only when it decides
            # Highest number first, ties (none arise) in trick order: ints sort in C.
            keyed = sorted([(-_NUMBER[p.card], i) for i, p in enumerate(showing)])
            result, taker = _WON, showing[keyed[position - 1][1]].seat
    elif not ups:
        result, taker = _BLIND, seat
    if result is _UNDECIDED:
        players = state.players
        for step in range(1, players + 1):
            nxt = (seat + step) % players
            if hands[nxt] or drawn[nxt]:
                # The trick goes on: nxt's turn begins, and the card it drew last takes
                # its place in the hand (in the same evolve).
                received = state.received
                card = drawn[nxt]
                if card:
                    hands[nxt] = _with_card(hands[nxt], card)
                    received = (*received[:nxt], (*received[nxt], card), *received[nxt + 1 :])
                    drawn[nxt] = ""
                s = state  # _evolve(state, turn=..., ...) spelt out: most moves end here
                return _build(
                    s.numerals,
                    s.take_facedown,
                    players,
                    s.phase,
                    nxt,  # turn
                    s.leader,
                    last_trick,
                    stock,
                    tuple(hands),
                    received,
                    tuple(drawn),
                    trick,
                    ranks,  # ranks_up
                    s.piles,
                    s.out,
                    s.history,
                )
        taker = -1
    return _finish(state, result, taker, trick, last_trick, stock, hands, drawn)


def _finish(
    state: AllesState,
    result: Result,
    taker: int,
    trick: tuple[Play, ...],
    last_trick: bool,
    stock: tuple[str, ...],
    hands: list[tuple[str, ...]],
    drawn: list[str],
) -> AllesState:
    """A decided (or, D3, undecidable) trick: cards to the winner or out; the next trick,
    whose leader's turn begins (the card it drew last takes its place in the hand).
    ``state`` is the state before the last play; the play's own changes are the other
    arguments (one evolve for all of them)."""
    piles = state.piles
    out = state.out
    cards = [p.card for p in trick]
    if result is _WON:
        if state.take_facedown:  # D2: every card of the trick
            taken = cards
        else:
            ups = face_up(trick)
            taken = [card for card, up in zip(cards, ups, strict=True) if up]
            out = (*out, *(card for card, up in zip(cards, ups, strict=True) if not up))
        piles = (*piles[:taker], (*piles[taker], *taken), *piles[taker + 1 :])
    else:
        out = (*out, *cards)
    record = _new_record(len(state.history) + 1, state.leader, trick, result, taker)
    over = last_trick or result is _UNDECIDED
    leader = taker if taker >= 0 else state.leader
    received = state.received
    if not over:
        card = drawn[leader]
        if card:
            hands[leader] = _with_card(hands[leader], card)
            received = (*received[:leader], (*received[leader], card), *received[leader + 1 :])
            drawn[leader] = ""
    return _evolve(
        state,
        phase=_OVER if over else _PLAYING,
        turn=trick[-1].seat if over else leader,
        leader=leader,
        last_trick=last_trick,
        stock=stock,
        hands=tuple(hands),
        received=received,
        drawn=tuple(drawn),
        trick=(),
        ranks_up=(True,) * RANKS,
        piles=piles,
        out=out,
        history=(*state.history, record),
    )


GAME = AllesKlar()
