"""Beverbende (trial edition, 999 Games): the rules engine.

Rules source: ``shared/rules/beverbende.md`` (its decisions D1-D8, restated here as this
project's own). Every player has a row of 3 face-down cards (positions 0 left, 1 middle,
2 right; 0 and 2 are the *outer* positions) and tries to end a round with the lowest sum.

Components (32 cards, texts): number cards ``"0"`` .. ``"6"``, special cards ``"swap"``
(ruilen), ``"peek"`` (spieken) and ``"draw_twice"`` (twee keer trekken), 3 of each special.
The number split is the option ``number_counts``: how many cards of value 0, 1, .., 6,
default ``3,3,3,3,3,3,5`` (D1: no published list exists for the trial; the top value is the
most common, as in the full deck). The counts must add up to 23, the trial's number cards.
Special cards have no value.

Players: 2-4 (D2). Rounds: as many as players, 4 with 2 players. Round ``r`` (from 1) starts
with seat ``(r - 1) mod N`` (D6: rotating, from seat 0).

Named deck ``pile`` (``GameInfo.decks``): all 32 cards. Each round's shuffle takes the next
preset order, top card first, and then every reshuffle of the discard pile in the game takes
the next one, restricted to the discard pile's cards (:func:`~..core.restrict`); when the
presets are used up, the match's ``Rng`` shuffles. Dealing (this project's order): cards
1-3 of the order go to seat 0's positions 0, 1, 2, the next three to seat 1, and so on; the
next card starts the discard pile face up (a special card simply stays there); the rest is
the draw pile, top first.

Knowledge (rules section 7), kept in the state as data: every card of a round is a *token*
(its index in the round's deal order; a reshuffle makes the reshuffled cards new tokens), and
the state holds, per seat, the tokens whose value the seat knows, plus the tokens everybody
knows. A seat is shown a row card exactly while it knows that card's token, so knowledge
moves with the cards:

1. Setup: the owner knows his positions 0 and 2 (D3: the outer cards; the seed's last line
   "only the middle card" is treated as an error). Nobody knows position 1.
2. A peek by O at p: O knows (O, p).
3. A card put into (O, p) from a drawn card (swap_drawn, keep): only O knows it; the old card
   goes face up onto the discard pile (public), so nobody keeps knowledge of (O, p) except O.
4. A card put into (O, p) from the discard pile (take_discard): everybody knows it.
5. A swap (ruilen) moves every seat's knowledge with the two cards: the swapper knows the
   card he gave (if he knew it) and not the one he received (unless he knew it already).
6. The discard pile is public, all of it.
7. A drawn card (draw_deck, the draw-twice cards X1 and X2) is seen only by the drawer until
   it is discarded (public) or placed in his row (rule 3).
8. At the end of a round every row card is revealed to all.

Turn (rules section 4), one seat at a time; automatic steps happen inside ``apply``:

* ``turn_start``: ``draw_deck`` (the card goes to the drawer's hand: phase ``drawn``) or
  ``take_discard:<pos>`` (only if the discard pile's top card is a number card: it goes face
  down into ``pos``, the old card face up onto the discard pile and its action, if special,
  never happens).
* ``drawn``: ``discard_drawn`` (any card; a special card's action does not happen);
  ``swap_drawn:<pos>`` (number cards only; the player does not see the old card before it
  lands face up on the pile); for a special card its use (``USE_SPECIAL`` of the rules
  file, one action kind per special, the parameters telling which):
  ``peek:<pos>`` (look at own card ``pos``), ``swap:<own>/<seat>:<pos>`` (swap own ``own``
  with another player's ``pos``, both unseen), ``draw_twice``.
* Draw twice (D4): X1 is drawn and seen by the drawer (phase ``draw_twice_1``): a number X1
  may be kept, ``keep:<pos>`` (as swap_drawn), or rejected; a special X1 can only be
  rejected. ``reject`` discards X1 face up and draws X2 (phase ``draw_twice_2``), which must
  be used: a number X2 only by ``swap_drawn:<pos>``; a special X2 by its use (a new draw
  twice starts a new sequence) or ``discard_drawn``. The draw-twice card goes face up onto
  the discard pile after its whole sequence, on top of everything the sequence discarded
  (nested sequences: the inner draw-twice card first, the outer one on top).
* A special card only acts when drawn from the draw pile; from a row it is inert.
* ``knock_decision``: offered only if nobody has knocked this round and every player, the
  actor included (his current turn counts), has had a turn this round: ``knock`` or
  ``no_knock``. Otherwise it passes automatically. After a knock every other player,
  clockwise from the knocker, has exactly one more turn; then the round ends.
* Reshuffle (D5): if the draw pile is empty at the end of a turn, or whenever a card must be
  drawn from an empty draw pile (mid-turn or in the end-of-round replacement), the whole
  discard pile becomes the new draw pile (named deck ``pile``: next preset, else ``Rng``)
  and the discard pile is empty, so ``take_discard`` is impossible until a card is
  discarded.
* Safety limit (D7, this project's rule): option ``turn_limit`` (default 30, 1..200): a round
  in which nobody has knocked ends when every player has had ``turn_limit`` turns, after
  the last of those turns (its knock decision is still offered; a knock then takes
  precedence). The game then ends normally but ``Outcome.termination`` is ``"limit"``.

End of a round (rules sections 8-9): every row card is revealed; the special cards in rows
are replaced, starting with the knocker (without a knock: the round's start player) and
going clockwise, each player positions 0 to 2: the special card goes face up onto the
discard pile and the draw pile's top card takes its place, again while it is special. A
player's round score is the sum of his three cards. After the last round the lowest total
wins; equal lowest totals share the victory (D8): ``Outcome.from_keys`` with key
``(total,)`` and ``lower_is_better``; ``score_name`` is "points".

Clock defaults (rules section 5): ``turn_start`` draw_deck; ``drawn`` discard_drawn;
``draw_twice_1`` reject; ``draw_twice_2`` swap_drawn:1 for a number card, discard_drawn for a
special card; ``knock_decision`` no_knock.

What each seat sees: its row knowledge as above and the card it holds (``private_fields``:
``rows``, ``drawn``); publicly: the cards everybody knows in every row, whether the actor
holds a card, the draw-twice cards waiting, the whole discard pile, the draw pile's size,
turns taken, the knocker, round scores, the previous round's revealed rows, and the public
history of the round: every action with its parameters and the cards it turned face up,
each reshuffle (the pile's cards) and each end-of-round replacement. ``sample_world``
replays that history on tokens (:func:`trace`) to find which cards a seat cannot know, deals
those anew (a card publicly put into a row from the hand is a number card) and replays the
round's actions on the new deal.

rules_version history:

* 1 - first version.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
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
    refuse_unless_legal,
    remember_last,
    replacer,
)

NUMBERS = ("0", "1", "2", "3", "4", "5", "6")
_NUMBER_SET = frozenset(NUMBERS)
_VALUE = {card: int(card) for card in NUMBERS}
SWAP, PEEK, DRAW_TWICE = "swap", "peek", "draw_twice"
SPECIALS = (SWAP, PEEK, DRAW_TWICE)
SPECIAL_COUNT = 3
NUMBER_CARDS = 23
DEFAULT_NUMBER_COUNTS = (3, 3, 3, 3, 3, 3, 5)
ROW = 3
POSITIONS = (0, 1, 2)
DEFAULT_TURN_LIMIT = 30
MAX_TURN_LIMIT = 200
ACTIONS_PER_TURN = 10  # draw, 3 x (use draw twice, reject), the last use, knock


def is_number(card: str) -> bool:
    """Whether a card text is a number card."""
    return card in _NUMBER_SET


def deck_cards(number_counts: Sequence[int]) -> tuple[str, ...]:
    """The 32 cards with this number split, numbers first, then the specials."""
    counts = tuple(number_counts)
    cards = _DECKS.get(counts)
    if cards is None:
        cards = _deck_cards(counts)
        if len(_DECKS) >= _DECKS_KEPT:
            _DECKS.clear()
        _DECKS[counts] = cards
    return cards


_DECKS: dict[tuple[int, ...], tuple[str, ...]] = {}  # per number split (the default, mostly)
_DECKS_KEPT = 64


def _deck_cards(number_counts: Sequence[int]) -> tuple[str, ...]:
    numbers = [n for n, count in zip(NUMBERS, number_counts, strict=True) for _ in range(count)]
    return (*numbers, *(s for s in SPECIALS for _ in range(SPECIAL_COUNT)))


def rounds_for(players: int) -> int:
    """N rounds for N players, 4 with 2 players."""
    return 4 if players == 2 else players


class Phase(StrEnum):
    """Where a turn stands."""

    TURN_START = "turn_start"
    DRAWN = "drawn"
    DRAW_TWICE_1 = "draw_twice_1"
    DRAW_TWICE_2 = "draw_twice_2"
    KNOCK_DECISION = "knock_decision"
    OVER = "over"


class ActionKind(StrEnum):
    """The player actions (the rules file's USE_SPECIAL is one kind per special card)."""

    DRAW_DECK = "draw_deck"
    TAKE_DISCARD = "take_discard"
    DISCARD_DRAWN = "discard_drawn"
    SWAP_DRAWN = "swap_drawn"
    PEEK = "peek"
    SWAP = "swap"
    DRAW_TWICE = "draw_twice"
    KEEP = "keep"
    REJECT = "reject"
    KNOCK = "knock"
    NO_KNOCK = "no_knock"


_WITH_POS = (ActionKind.TAKE_DISCARD, ActionKind.SWAP_DRAWN, ActionKind.PEEK, ActionKind.KEEP)


@dataclass(frozen=True, slots=True)
class BeverAction:
    """One action: ``pos`` an own row position (take_discard, swap_drawn, peek, keep; the own
    position of a swap), ``other`` and ``other_pos`` the other player's card of a swap."""

    kind: ActionKind
    pos: int = -1
    other: int = -1
    other_pos: int = -1

    def __str__(self) -> str:
        if self.kind in _WITH_POS:
            return f"{self.kind.value}:{self.pos}"
        if self.kind is ActionKind.SWAP:
            return f"swap:{self.pos}/{self.other}:{self.other_pos}"
        return self.kind.value


DRAW = BeverAction(ActionKind.DRAW_DECK)
DISCARD = BeverAction(ActionKind.DISCARD_DRAWN)
USE_DRAW_TWICE = BeverAction(ActionKind.DRAW_TWICE)
REJECT = BeverAction(ActionKind.REJECT)
KNOCK = BeverAction(ActionKind.KNOCK)
NO_KNOCK = BeverAction(ActionKind.NO_KNOCK)


def take_discard(pos: int) -> BeverAction:
    return BeverAction(ActionKind.TAKE_DISCARD, pos)


def swap_drawn(pos: int) -> BeverAction:
    return BeverAction(ActionKind.SWAP_DRAWN, pos)


def peek(pos: int) -> BeverAction:
    return BeverAction(ActionKind.PEEK, pos)


def keep(pos: int) -> BeverAction:
    return BeverAction(ActionKind.KEEP, pos)


def swap(own: int, other: int, other_pos: int) -> BeverAction:
    return BeverAction(ActionKind.SWAP, own, other, other_pos)


class EventKind(StrEnum):
    """The public steps of a round."""

    DEAL = "deal"  # shown: the card that started the discard pile
    ACTION = "action"  # shown: the cards the action put face up on the pile, in order
    RESHUFFLE = "reshuffle"  # shown: the discard pile's cards (bottom first) now the draw pile
    REPLACE = "replace"  # end of round: shown (the special replaced, the card drawn)


# Enum members the hot paths compare with, as module constants: in CPython 3.11 looking a
# member up on its class (``Phase.OVER``) costs about 0.2 us, a dozen of them per move.
_P_DRAWN = Phase.DRAWN
_P_DRAW_TWICE_1 = Phase.DRAW_TWICE_1
_P_DRAW_TWICE_2 = Phase.DRAW_TWICE_2
_P_KNOCK_DECISION = Phase.KNOCK_DECISION
_P_OVER = Phase.OVER
_P_TURN_START = Phase.TURN_START
_A_DISCARD_DRAWN = ActionKind.DISCARD_DRAWN
_A_DRAW_DECK = ActionKind.DRAW_DECK
_A_DRAW_TWICE = ActionKind.DRAW_TWICE
_A_KEEP = ActionKind.KEEP
_A_KNOCK = ActionKind.KNOCK
_A_PEEK = ActionKind.PEEK
_A_REJECT = ActionKind.REJECT
_A_SWAP = ActionKind.SWAP
_A_SWAP_DRAWN = ActionKind.SWAP_DRAWN
_A_TAKE_DISCARD = ActionKind.TAKE_DISCARD
_E_ACTION = EventKind.ACTION
_E_DEAL = EventKind.DEAL
_E_REPLACE = EventKind.REPLACE


@dataclass(frozen=True, slots=True)
class Event:
    """One public step of a round; ``seat`` -1 for automatic steps."""

    kind: EventKind
    seat: int = -1
    action: BeverAction | None = None
    position: int = -1
    shown: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BeverState:
    """The full state of a match (observe() decides who sees what).

    Row cards, piles and the hand hold tokens, indexes into ``values``."""

    number_counts: tuple[int, ...]
    turn_limit: int
    players: int
    rounds: int
    round: int
    start_player: int
    round_scores: tuple[tuple[int, ...], ...]
    last_rows: tuple[tuple[str, ...], ...]
    limited: int  # rounds ended by the safety limit
    phase: Phase
    actor: int
    turns: tuple[int, ...]
    knocker: int
    values: tuple[str, ...]
    rows: tuple[tuple[int, ...], ...]
    draw: tuple[int, ...]  # top first
    discard: tuple[int, ...]  # bottom first
    hand: int  # the drawn card, -1 for none
    pending: tuple[int, ...]  # draw-twice cards waiting for the end of their sequence
    known: tuple[tuple[int, ...], ...]  # per seat, the tokens it knows (sorted)
    public: tuple[int, ...]  # the tokens everybody knows (sorted)
    history: tuple[Event, ...]
    start_values: tuple[str, ...]  # this round's deal order
    start_decks: Decks
    decks: Decks


@dataclass(frozen=True, slots=True)
class BeverObservation:
    """What one seat (or a spectator, ``seat=None``) may know. A row card is ``""`` when
    unknown to the viewer; ``drawn`` is ``""`` unless the viewer holds a drawn card."""

    private_fields: ClassVar[tuple[str, ...]] = ("rows", "drawn")

    seat: int | None
    number_counts: tuple[int, ...]
    turn_limit: int
    players: int
    rounds: int
    round: int
    start_player: int
    phase: Phase
    actor: int
    turns: tuple[int, ...]
    knocker: int
    rows: tuple[tuple[str, ...], ...]
    drawn: str
    holding: bool
    pending: tuple[str, ...]
    discard: tuple[str, ...]
    draw_size: int
    round_scores: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    last_rows: tuple[tuple[str, ...], ...]
    limited: int
    history: tuple[Event, ...]


_STATE_HEADER = {"game": "beverbende", "format": 1}


class _Table:
    """A round's working copy during one ``apply`` (the state stays a value).

    Every collection starts as the state's own tuple and a change replaces it with a new
    tuple (a move changes one or two of them, a few items each), so ``freeze`` hands every
    untouched one on as it was and copies nothing back. The events of this ``apply`` are
    kept apart from the history. The state's ``known`` and ``public`` tuples are sorted and
    hold no token twice (the deal makes them so), and ``know`` and ``reveal`` insert in
    place, which keeps them so without re-sorting.
    """

    __slots__ = (
        "decks",
        "discard",
        "draw",
        "events",
        "hand",
        "known",
        "pending",
        "public",
        "rows",
        "s",
        "shown",
        "values",
    )

    def __init__(self, state: BeverState) -> None:
        self.s = state
        self.values = state.values  # only a reshuffle extends it (a new tuple)
        self.rows = state.rows
        self.draw = state.draw
        self.discard = state.discard
        self.hand = state.hand
        self.pending = state.pending
        self.known = state.known
        self.public = state.public
        self.decks = state.decks
        self.shown: list[str] = []
        self.events: list[Event] = []  # appended to the state's history by ``freeze``

    def token(self, seat: int, pos: int) -> int:
        """The token at (seat, pos) now."""
        return self.rows[seat][pos]

    def put(self, seat: int, pos: int, token: int) -> None:
        """``token`` into (seat, pos), nothing else."""
        rows = self.rows
        row = rows[seat]
        rows_list = list(rows)
        rows_list[seat] = (*row[:pos], token, *row[pos + 1 :])
        self.rows = tuple(rows_list)

    def know(self, seat: int, token: int) -> None:
        """``seat`` now knows ``token``."""
        self.known = _knowing(self.known, seat, token)

    def reveal(self, token: int) -> None:
        """Everybody now knows ``token``."""
        self.public = _revealing(self.public, token)

    def push(self, token: int) -> None:
        """A card face up onto the discard pile."""
        self.discard = (*self.discard, token)
        self.reveal(token)
        self.shown.append(self.values[token])

    def take_discard(self) -> int:
        """The discard pile's top card, off the pile."""
        discard = self.discard
        self.discard = discard[:-1]
        return discard[-1]

    def pop(self) -> int:
        """The draw pile's top card (after a reshuffle if the pile is empty)."""
        if not self.draw:
            self.reshuffle()
        draw = self.draw
        self.draw = draw[1:]
        return draw[0]

    def reshuffle(self) -> None:
        cards = [self.values[t] for t in self.discard]
        order, self.decks = self.decks.order("pile", cards)
        first = len(self.values)
        self.values = (*self.values, *order)
        self.draw = tuple(range(first, first + len(order)))
        self.discard = ()
        self.events.append(_event(EventKind.RESHUFFLE, -1, None, -1, tuple(cards)))

    def place(self, seat: int, pos: int, token: int) -> None:
        """``token`` into (seat, pos), the old card face up onto the pile."""
        old = self.rows[seat][pos]
        self.put(seat, pos, token)
        self.push(old)

    def end_sequence(self) -> None:
        """The drawn card is gone; the waiting draw-twice cards onto the pile, last first."""
        self.hand = -1
        pending = self.pending
        if pending:
            self.pending = ()
            for token in reversed(pending):
                self.push(token)

    def freeze(
        self,
        phase: Phase,
        actor: int | None = None,
        turns: tuple[int, ...] | None = None,
        knocker: int | None = None,
        round_scores: tuple[tuple[int, ...], ...] | None = None,
        limited: int | None = None,
    ) -> BeverState:
        """The state after this ``apply``: ``phase``, the other arguments where given."""
        state = self.s
        events = self.events
        # Positional, in BeverState's field order (half the cost of keywords).
        return _new_state(
            state.number_counts,
            state.turn_limit,
            state.players,
            state.rounds,
            state.round,
            state.start_player,
            state.round_scores if round_scores is None else round_scores,
            state.last_rows,
            state.limited if limited is None else limited,
            phase,
            state.actor if actor is None else actor,
            state.turns if turns is None else turns,
            state.knocker if knocker is None else knocker,
            self.values,
            self.rows,
            self.draw,
            self.discard,
            self.hand,
            self.pending,
            self.known,
            self.public,
            (*state.history, *events) if events else state.history,
            state.start_values,
            state.start_decks,
            self.decks,
        )


def _knowing(
    known: tuple[tuple[int, ...], ...], seat: int, token: int
) -> tuple[tuple[int, ...], ...]:
    """``known`` with ``token`` among ``seat``'s tokens (sorted, each once)."""
    mine = known[seat]
    i = bisect_left(mine, token)
    if i < len(mine) and mine[i] == token:
        return known
    seats = list(known)
    seats[seat] = (*mine[:i], token, *mine[i:])
    return tuple(seats)


def _revealing(public: tuple[int, ...], token: int) -> tuple[int, ...]:
    """``public`` with ``token`` (sorted, each once)."""
    i = bisect_left(public, token)
    if i < len(public) and public[i] == token:
        return public
    return (*public[:i], token, *public[i:])


def _round_ends(state: BeverState, knocker: int, nxt: int) -> bool | None:
    """Whether the round ends when the turn passes to ``nxt``: None (it goes on), False
    (everybody has had his turn after the knock), True (the safety limit)."""
    if knocker != -1 and nxt == knocker:
        return False
    if knocker == -1 and min(state.turns) >= state.turn_limit:
        return True
    return None


def _next_turns(turns: tuple[int, ...], nxt: int) -> tuple[int, ...]:
    """``turns`` with ``nxt``'s new turn counted."""
    counted = list(turns)
    counted[nxt] += 1
    return tuple(counted)


# ``dataclasses.replace`` without its per-call introspection (the engine's hot path).
_evolve = evolver(BeverState)
# BeverState(...) and Event(...) without the frozen dataclass's setattr per field.
_new_state = fast_constructor(BeverState)
_event = fast_constructor(Event)
# The two commonest moves, which touch no pile but the draw pile (replacer: see core).
_drawn = replacer(BeverState, "phase", "draw", "hand", "known", "history")
_passed = replacer(BeverState, "phase", "actor", "turns", "knocker", "history")
# A card taken from the discard pile or a drawn card used, then the knock decision or the
# next turn (Beverbende._quick_action).
_ACTED = ("rows", "discard", "hand", "public", "history")
_acted = replacer(BeverState, "phase", *_ACTED)
_acted_passed = replacer(BeverState, "phase", "actor", "turns", *_ACTED)


def _round_start(
    common: Mapping[str, Any],
    order: tuple[str, ...],
    decks: Decks,
) -> BeverState:
    """The state of a freshly dealt round (``common``: the fields that carry over)."""
    players = common["players"]
    rows, draw, known, flip = _layout(players, len(order))
    start = (common["round"] - 1) % players
    return _new_state(
        common["number_counts"],
        common["turn_limit"],
        players,
        common["rounds"],
        common["round"],
        start,  # start_player
        common["round_scores"],
        common["last_rows"],
        common["limited"],
        _P_TURN_START,
        start,  # actor
        _FIRST_TURNS[players][start],
        -1,  # knocker
        order,  # values
        rows,
        draw,
        (flip,),  # discard
        -1,  # hand
        (),  # pending
        known,
        (flip,),  # public
        (_event(_E_DEAL, -1, None, -1, (order[flip],)),),  # history
        order,  # start_values
        decks,  # start_decks
        decks,
    )


def _layout(
    players: int, cards: int
) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[tuple[int, ...], ...], int]:
    """A fresh deal's tokens (rows, draw pile, what each seat knows, the first discard),
    the same for every deal of a table size: built once."""
    layout = _LAYOUTS.get((players, cards))
    if layout is None:
        flip = ROW * players
        layout = _LAYOUTS[players, cards] = (
            tuple(tuple(range(ROW * s, ROW * s + ROW)) for s in range(players)),
            tuple(range(flip + 1, cards)),
            tuple((ROW * s, ROW * s + 2) for s in range(players)),
            flip,
        )
    return layout


_LAYOUTS: dict[
    tuple[int, int],
    tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[tuple[int, ...], ...], int],
] = {}  # bounded: 2-4 players, 32 cards
# Per table size, per start player: the turns at a round's start (the start player's first).
_FIRST_TURNS = {
    players: tuple(tuple(int(s == start) for s in range(players)) for start in range(players))
    for players in range(2, 5)
}


def _common(state: BeverState) -> dict[str, Any]:
    return {
        "number_counts": state.number_counts,
        "turn_limit": state.turn_limit,
        "players": state.players,
        "rounds": state.rounds,
        "round": state.round,
        "round_scores": state.round_scores,
        "last_rows": state.last_rows,
        "limited": state.limited,
    }


def knows(state: BeverState, viewer: int | None, owner: int, pos: int) -> bool:
    """Whether ``viewer`` (None: a spectator) knows the card at (owner, pos) now."""
    token = state.rows[owner][pos]
    if state.phase is Phase.OVER or token in state.public:
        return True
    return viewer is not None and 0 <= viewer < state.players and token in state.known[viewer]


def _use_actions(card: str, seat: int, players: int) -> tuple[BeverAction, ...]:
    """``discard_drawn`` and the uses of a drawn special card, remembered per (card, seat,
    players): the answer depends on nothing else, and building the nine to 27 swap actions
    was a large part of ``legal_actions``."""
    key = (card, seat, players)
    uses = _USES.get(key)
    if uses is None:
        if card == PEEK:
            uses = tuple(peek(p) for p in POSITIONS)
        elif card == SWAP:
            uses = tuple(
                swap(own, other, op)
                for own in POSITIONS
                for other in range(players)
                if other != seat
                for op in POSITIONS
            )
        else:
            uses = (USE_DRAW_TWICE,)
        uses = (DISCARD, *uses)
        _USES[key] = uses
    return uses


_USES: dict[tuple[str, int, int], tuple[BeverAction, ...]] = {}  # bounded: cards x seats
# The position actions, built once (legal_actions hands out these very values).
_TAKE_DISCARD = tuple(take_discard(p) for p in POSITIONS)
_SWAP_DRAWN = tuple(swap_drawn(p) for p in POSITIONS)
_KEEP = tuple(keep(p) for p in POSITIONS)
_DRAW_OR_TAKE = (DRAW, *_TAKE_DISCARD)
_DRAW_ONLY = (DRAW,)
_KNOCK_OR_NOT = (KNOCK, NO_KNOCK)
_KEEP_OR_REJECT = (*_KEEP, REJECT)
_REJECT_ONLY = (REJECT,)
_DISCARD_OR_SWAP = (DISCARD, *_SWAP_DRAWN)


class Beverbende:
    """The Beverbende rules (see the module docstring)."""

    info = GameInfo(
        game_id="beverbende",
        name="Beverbende",
        rules_version=1,
        min_seats=2,
        max_seats=4,
        options=(
            OptionSpec(
                "number_counts",
                OptionKind.INT_LIST,
                ",".join(map(str, DEFAULT_NUMBER_COUNTS)),
                "how many number cards of value 0, 1, .., 6 (23 in all; the default is the "
                "rules file's D1)",
                minimum=0,
                maximum=NUMBER_CARDS,
                min_items=len(NUMBERS),
                max_items=len(NUMBERS),
            ),
            OptionSpec(
                "turn_limit",
                OptionKind.INT,
                str(DEFAULT_TURN_LIMIT),
                "safety limit: a round nobody knocks in ends after this many turns per player",
                minimum=1,
                maximum=MAX_TURN_LIMIT,
            ),
        ),
        simultaneous=False,
        description="Three face-down cards each, known only where you looked; draw, swap, "
        "peek and knock. Lowest total after the rounds wins.",
        score_name="points",
        lower_is_better=True,
        decks=(
            DeckSpec(
                "pile",
                "all 32 cards: each round's shuffle (top first: seat 0's positions 0-2, then "
                "seat 1's, ..., the first discard, the draw pile), then each reshuffle of the "
                "discard pile (restricted to its cards)",
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
    ) -> BeverState:
        """Set up and deal round 1."""
        resolved = self.info.resolve_options(options)
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise InvalidOptions(f"Beverbende takes 2-4 players, not {seats}", rule="seat_count")
        counts = int_list_option(resolved, "number_counts")
        if sum(counts) != NUMBER_CARDS:
            raise InvalidOptions(
                f"option number_counts: the counts add up to {sum(counts)}, not {NUMBER_CARDS}",
                rule="number_count",
            )
        cards = deck_cards(counts)
        decks = Decks.checked(rng, self.info.decks, presets, {"pile": cards})
        order, decks = decks.order("pile", cards)
        common = {
            "number_counts": counts,
            "turn_limit": int_option(resolved, "turn_limit"),
            "players": seats,
            "rounds": rounds_for(seats),
            "round": 1,
            "round_scores": (),
            "last_rows": (),
            "limited": 0,
        }
        return _round_start(common, order, decks)

    # ------------------------------------------------------------------ queries

    def to_act(self, state: BeverState) -> tuple[int, ...]:
        """The actor, one seat at a time."""
        return () if state.phase is _P_OVER else (state.actor,)

    @remember_last
    def legal_actions(self, state: BeverState, seat: int) -> tuple[BeverAction, ...]:
        """The actor's actions in the rules file's order (section 5)."""
        if state.phase is _P_OVER or seat != state.actor:
            return ()
        phase = state.phase
        if phase is _P_TURN_START:
            if state.discard and state.values[state.discard[-1]] in _NUMBER_SET:
                return _DRAW_OR_TAKE
            return _DRAW_ONLY
        if phase is _P_KNOCK_DECISION:
            return _KNOCK_OR_NOT
        card = state.values[state.hand]
        if phase is _P_DRAW_TWICE_1:
            return _KEEP_OR_REJECT if card in _NUMBER_SET else _REJECT_ONLY
        if card in _NUMBER_SET:
            return _SWAP_DRAWN if phase is _P_DRAW_TWICE_2 else _DISCARD_OR_SWAP
        return _use_actions(card, seat, state.players)

    def default_action(self, state: BeverState, seat: int) -> BeverAction:
        """The clock defaults of the rules file's section 5."""
        legal = self.legal_actions(state, seat)
        if not legal:
            raise NotYourTurn(f"seat {seat} need not act now")
        phase = state.phase
        if phase is Phase.TURN_START:
            return DRAW
        if phase is Phase.DRAW_TWICE_1:
            return REJECT
        if phase is Phase.KNOCK_DECISION:
            return NO_KNOCK
        if phase is Phase.DRAW_TWICE_2 and is_number(state.values[state.hand]):
            return swap_drawn(1)
        return DISCARD

    # ------------------------------------------------------------------ the mutator

    def apply(self, state: BeverState, seat: int, action: BeverAction) -> BeverState:
        """Play one of ``legal_actions``; the given state is never changed."""
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        return self._play(state, seat, action)

    def _why_illegal(self, state: BeverState, seat: int, action: BeverAction) -> EngineError | None:
        """The rule an action not in ``legal_actions`` breaks (a diagnostic only)."""
        if not isinstance(action, BeverAction):
            return InvalidAction("not a Beverbende action", rule="wrong_game")
        if not 0 <= seat < state.players:
            return InvalidAction(f"there is no seat {seat}", rule="no_such_seat")
        if state.phase is Phase.OVER:
            return GameOver("the match is over")
        if seat != state.actor:
            return NotYourTurn(f"it is seat {state.actor}'s turn")
        kind, phase = action.kind, state.phase
        if action.pos not in (-1, *POSITIONS) or action.other_pos not in (-1, *POSITIONS):
            return InvalidAction("a row position is 0, 1 or 2", rule="no_such_position")
        wanted = {
            ActionKind.DRAW_DECK: (Phase.TURN_START,),
            ActionKind.TAKE_DISCARD: (Phase.TURN_START,),
            ActionKind.DISCARD_DRAWN: (Phase.DRAWN, Phase.DRAW_TWICE_2),
            ActionKind.SWAP_DRAWN: (Phase.DRAWN, Phase.DRAW_TWICE_2),
            ActionKind.PEEK: (Phase.DRAWN, Phase.DRAW_TWICE_2),
            ActionKind.SWAP: (Phase.DRAWN, Phase.DRAW_TWICE_2),
            ActionKind.DRAW_TWICE: (Phase.DRAWN, Phase.DRAW_TWICE_2),
            ActionKind.KEEP: (Phase.DRAW_TWICE_1,),
            ActionKind.REJECT: (Phase.DRAW_TWICE_1,),
            ActionKind.KNOCK: (Phase.KNOCK_DECISION,),
            ActionKind.NO_KNOCK: (Phase.KNOCK_DECISION,),
        }[kind]
        if phase not in wanted:
            if kind is ActionKind.KNOCK:
                return IllegalAction(
                    "knocking is offered after your action, once everybody has had a turn "
                    "and nobody has knocked",
                    rule="knock_not_offered",
                )
            return IllegalAction(
                f"{kind.value} is not possible in phase {phase.value}", "wrong_phase"
            )
        if kind is ActionKind.TAKE_DISCARD:
            if not state.discard:
                return IllegalAction("the discard pile is empty", rule="discard_empty")
            return IllegalAction(
                "the discard pile's top card is a special card: draw instead",
                rule="special_on_discard",
            )
        card = state.values[state.hand]
        if kind in (ActionKind.SWAP_DRAWN, ActionKind.KEEP):
            return IllegalAction("a special card never goes into a row", rule="special_to_row")
        if kind is ActionKind.DISCARD_DRAWN:
            return IllegalAction("the second card of draw twice must be used", rule="must_use")
        if kind in (ActionKind.PEEK, ActionKind.SWAP, ActionKind.DRAW_TWICE):
            if kind.value != card:
                return IllegalAction("that is not the special card you drew", "not_that_special")
            if kind is ActionKind.SWAP:
                if action.other == seat:
                    return IllegalAction("swap with another player's card", rule="own_seat")
                return InvalidAction(f"there is no seat {action.other}", rule="no_such_seat")
        return None

    def _play(self, state: BeverState, seat: int, action: BeverAction) -> BeverState:
        kind = action.kind
        phase = state.phase
        # The two commonest moves first, without a working copy, when the draw pile holds a
        # card (no reshuffle): a card drawn, and a knock decision that passes the turn.
        if kind is _A_DRAW_DECK and state.draw:
            hand = state.draw[0]
            event = _event(_E_ACTION, seat, action, -1, ())
            known = _knowing(state.known, seat, hand)
            return _drawn(state, _P_DRAWN, state.draw[1:], hand, known, (*state.history, event))
        if phase is _P_KNOCK_DECISION and state.draw:
            knocker = seat if kind is _A_KNOCK else state.knocker
            nxt = (state.actor + 1) % state.players
            if _round_ends(state, knocker, nxt) is None:
                event = _event(_E_ACTION, seat, action, -1, ())
                turns = _next_turns(state.turns, nxt)
                history = (*state.history, event)
                return _passed(state, _P_TURN_START, nxt, turns, knocker, history)
        if kind is _A_TAKE_DISCARD or (phase is _P_DRAWN and not state.pending):
            done = self._quick_action(state, seat, action)
            if done is not None:
                return done
        t = _Table(state)
        next_phase = _P_KNOCK_DECISION  # after a completed action
        if kind is _A_DRAW_DECK:
            t.hand = t.pop()
            t.know(seat, t.hand)
            next_phase = _P_DRAWN
        elif kind is _A_TAKE_DISCARD:
            t.place(seat, action.pos, t.take_discard())
        elif kind is _A_DISCARD_DRAWN:
            t.push(t.hand)
            t.end_sequence()
        elif kind is _A_SWAP_DRAWN or kind is _A_KEEP:
            t.place(seat, action.pos, t.hand)
            t.end_sequence()
        elif kind is _A_PEEK:
            t.know(seat, t.token(seat, action.pos))
            t.push(t.hand)
            t.end_sequence()
        elif kind is _A_SWAP:
            own, theirs = t.token(seat, action.pos), t.token(action.other, action.other_pos)
            t.put(seat, action.pos, theirs)
            t.put(action.other, action.other_pos, own)
            t.push(t.hand)
            t.end_sequence()
        elif kind is _A_DRAW_TWICE:
            t.reveal(t.hand)
            t.pending = (*t.pending, t.hand)
            t.hand = t.pop()
            t.know(seat, t.hand)
            next_phase = _P_DRAW_TWICE_1
        elif kind is _A_REJECT:
            t.push(t.hand)
            t.hand = t.pop()
            t.know(seat, t.hand)
            next_phase = _P_DRAW_TWICE_2
        t.events.insert(0, _event(_E_ACTION, seat, action, -1, tuple(t.shown)))
        knocker = seat if kind is _A_KNOCK else state.knocker
        if phase is _P_KNOCK_DECISION:
            return self._end_turn(t, knocker)
        if next_phase is not _P_KNOCK_DECISION:
            return t.freeze(next_phase)
        if knocker == -1 and min(state.turns) >= 1:
            return t.freeze(_P_KNOCK_DECISION)
        return self._end_turn(t, knocker)

    def _quick_action(self, state: BeverState, seat: int, action: BeverAction) -> BeverState | None:
        """A completed take_discard, or swap_drawn or discard_drawn of a card drawn from the
        pile (no draw-twice sequence waiting), without a working copy: what the general
        path does for them, when it needs no reshuffle and the round goes on. None when it
        does not apply (the general path plays the action then)."""
        kind, values = action.kind, state.values
        rows, discard = state.rows, state.discard
        if kind is _A_DISCARD_DRAWN:
            gone = state.hand
        else:
            taken = discard[-1] if kind is _A_TAKE_DISCARD else state.hand
            if kind is _A_TAKE_DISCARD:
                discard = discard[:-1]
            elif kind is not _A_SWAP_DRAWN:
                return None
            row = rows[seat]
            gone = row[action.pos]
            seats = list(rows)
            seats[seat] = (*row[: action.pos], taken, *row[action.pos + 1 :])
            rows = tuple(seats)
        discard = (*discard, gone)
        public = _revealing(state.public, gone)
        history = (*state.history, _event(_E_ACTION, seat, action, -1, (values[gone],)))
        knocker = state.knocker
        if knocker == -1 and min(state.turns) >= 1:
            return _acted(state, _P_KNOCK_DECISION, rows, discard, -1, public, history)
        nxt = (state.actor + 1) % state.players
        if not state.draw or _round_ends(state, knocker, nxt) is not None:
            return None
        turns = _next_turns(state.turns, nxt)
        phase = _P_TURN_START
        return _acted_passed(state, phase, nxt, turns, rows, discard, -1, public, history)

    def _end_turn(self, t: _Table, knocker: int) -> BeverState:
        state = t.s
        t.shown = []
        if not t.draw:
            t.reshuffle()
        nxt = (state.actor + 1) % state.players
        limited = _round_ends(state, knocker, nxt)
        if limited is not None:
            return self._end_round(t, knocker, limited)
        turns = _next_turns(state.turns, nxt)
        return t.freeze(_P_TURN_START, actor=nxt, turns=turns, knocker=knocker)

    def _end_round(self, t: _Table, knocker: int, limited: bool) -> BeverState:
        """Reveal, replace the special cards, score; then the next round or the end."""
        state = t.s
        players = state.players
        first = knocker if knocker != -1 else state.start_player
        for k in range(players):
            seat = (first + k) % players
            for pos in POSITIONS:
                old = t.rows[seat][pos]
                while t.values[old] not in _NUMBER_SET:
                    t.discard = (*t.discard, old)
                    new = t.pop()
                    t.put(seat, pos, new)
                    shown = (t.values[old], t.values[new])
                    t.events.append(_event(_E_REPLACE, seat, None, pos, shown))
                    old = new
        rows, values = t.rows, t.values
        final = tuple((values[a], values[b], values[c]) for a, b, c in rows)
        scores = tuple(_VALUE[a] + _VALUE[b] + _VALUE[c] for a, b, c in final)
        round_scores = (*state.round_scores, scores)
        limited_rounds = state.limited + (1 if limited else 0)
        if state.round >= state.rounds:
            for row in rows:
                for tok in row:
                    t.reveal(tok)
            return t.freeze(
                _P_OVER,
                actor=-1,
                knocker=knocker,
                round_scores=round_scores,
                limited=limited_rounds,
            )
        common = _common(state)
        common["round_scores"] = round_scores
        common["last_rows"] = final
        common["limited"] = limited_rounds
        common["round"] = state.round + 1
        order, decks = t.decks.order("pile", deck_cards(state.number_counts))
        return _round_start(common, order, decks)

    # ------------------------------------------------------------------ views

    def observe(self, state: BeverState, seat: int | None) -> BeverObservation:
        """Row cards the viewer knows, the viewer's drawn card, everything public."""
        own = seat is not None and 0 <= seat < state.players
        values = state.values
        rows = tuple(
            tuple(
                values[tok] if knows(state, seat if own else None, s, p) else ""
                for p, tok in enumerate(row)
            )
            for s, row in enumerate(state.rows)
        )
        holding = state.hand != -1
        drawn = values[state.hand] if own and holding and seat == state.actor else ""
        return BeverObservation(
            seat=seat,
            number_counts=state.number_counts,
            turn_limit=state.turn_limit,
            players=state.players,
            rounds=state.rounds,
            round=state.round,
            start_player=state.start_player,
            phase=state.phase,
            actor=state.actor,
            turns=state.turns,
            knocker=state.knocker,
            rows=rows,
            drawn=drawn,
            holding=holding,
            pending=tuple(values[t] for t in state.pending),
            discard=tuple(values[t] for t in state.discard),
            draw_size=len(state.draw),
            round_scores=state.round_scores,
            totals=_totals(state.round_scores, state.players),
            last_rows=state.last_rows,
            limited=state.limited,
            history=state.history,
        )

    def sample_world(self, observation: BeverObservation, rng: Rng) -> BeverState:
        """The round's deal and reshuffles dealt anew where the viewer cannot know them,
        then the round's actions replayed (see :func:`trace`)."""
        obs = observation
        traced = trace(obs)
        values = dict(traced.values)
        for k, tokens in enumerate(traced.pools):
            remaining = Counter(traced.contents[k])
            remaining.subtract(values[t] for t in tokens if t in values)
            unknown = [t for t in tokens if t not in values]
            bound = [t for t in unknown if t in traced.numbers]
            free = [t for t in unknown if t not in traced.numbers]
            numbers = [c for c in sorted(remaining.elements()) if is_number(c)]
            numbers_shuffled, rng = rng.shuffle(numbers)
            for t, card in zip(bound, numbers_shuffled, strict=False):
                values[t] = card
            rest = Counter(remaining.elements())
            rest.subtract(numbers_shuffled[: len(bound)])
            rest_shuffled, rng = rng.shuffle(sorted(rest.elements()))
            for t, card in zip(free, rest_shuffled, strict=True):
                values[t] = card
        order = tuple(values[t] for t in traced.pools[0])
        full = deck_cards(obs.number_counts)
        presets = []
        for tokens in traced.pools[1:]:
            part = [values[t] for t in tokens]
            rest = Counter(full)
            rest.subtract(part)
            presets.append((*part, *sorted(rest.elements())))
        decks = Decks(rng.derive("future"), ("pile",), (tuple(presets),), (0,))
        common = {
            "number_counts": obs.number_counts,
            "turn_limit": obs.turn_limit,
            "players": obs.players,
            "rounds": obs.rounds,
            "round": obs.round,
            "round_scores": obs.round_scores[: obs.round - 1],
            "last_rows": traced.last_rows_before,
            "limited": traced.limited_before,
        }
        state = _round_start(common, order, decks)
        for event in obs.history:
            if event.kind is EventKind.ACTION and event.action is not None:
                state = self._play(state, event.seat, event.action)
        return state

    def determinize(self, state: BeverState, seat: int, rng: Rng) -> BeverState:
        """``sample_world(observe(state, seat), rng)``."""
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(self, state: BeverState) -> tuple[BeverState, tuple[tuple[int, BeverAction], ...]]:
        """The state when the current round was dealt and the actions played since."""
        common = _common(state)
        start = _round_start(common, state.start_values, state.start_decks)
        if state.phase is Phase.OVER:
            start = _evolve(
                start,
                round_scores=state.round_scores[:-1],
                limited=state.limited - _ended_by_limit(state),
            )
        actions = tuple(
            (e.seat, e.action)
            for e in state.history
            if e.kind is EventKind.ACTION and e.action is not None
        )
        return start, actions

    def outcome(self, state: BeverState) -> Outcome | None:
        """Totals, lowest first; equal totals share (D8)."""
        if state.phase is not _P_OVER:
            return None
        totals = _totals(state.round_scores, state.players)
        termination = "limit" if state.limited else "normal"
        return Outcome.from_keys(totals, [(t,) for t in totals], True, termination)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: BeverAction) -> str:
        """``draw_deck``, ``take_discard:1``, ``swap:0/2:1``, ``knock`` ..."""
        return str(action)

    def parse_action(self, text: str) -> BeverAction:
        """The action of a text written by :meth:`action_text`."""
        kind_text, sep, rest = text.partition(":")
        try:
            kind = ActionKind(kind_text)
        except ValueError:
            kind = None
        if kind is not None:
            if not sep and kind not in _WITH_POS and kind is not ActionKind.SWAP:
                return BeverAction(kind)
            if sep and kind in _WITH_POS and rest in ("0", "1", "2"):
                return BeverAction(kind, int(rest))
            if sep and kind is ActionKind.SWAP:
                own, slash, other = rest.partition("/")
                seat, colon, pos = other.partition(":")
                if (
                    slash
                    and colon
                    and own in ("0", "1", "2")
                    and pos in ("0", "1", "2")
                    and seat in ("0", "1", "2", "3")
                ):
                    return swap(int(own), int(seat), int(pos))
        raise InvalidAction(f"not a Beverbende action: {text[:40]!r}", rule="bad_action_text")

    def encode(self, state: BeverState) -> bytes:
        """Canonical JSON bytes of the state."""
        return encode_value(_STATE_HEADER, state)

    def decode(self, data: bytes) -> BeverState:
        """The state :meth:`encode` wrote."""
        return decode_value(_STATE_HEADER, BeverState, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: BeverState) -> tuple[str, ...]:
        """The 32 cards of the number split."""
        return tuple(sorted(deck_cards(state.number_counts)))

    def zones(self, state: BeverState) -> Mapping[str, tuple[str, ...]]:
        """Draw pile, discard pile, the drawn card, waiting draw-twice cards, every row."""
        v = state.values
        zones: dict[str, tuple[str, ...]] = {
            "draw": tuple(v[t] for t in state.draw),
            "discard": tuple(v[t] for t in state.discard),
            "hand": () if state.hand == -1 else (v[state.hand],),
            "pending": tuple(v[t] for t in state.pending),
        }
        for s, row in enumerate(state.rows):
            zones[f"row:{s}"] = tuple(v[t] for t in row)
        return zones

    def max_actions(self, state: BeverState) -> int:
        """Rounds x players x (turn_limit + 1) turns x the actions of one turn."""
        return state.rounds * state.players * (state.turn_limit + 1) * ACTIONS_PER_TURN


def _totals(round_scores: Sequence[Sequence[int]], players: int) -> tuple[int, ...]:
    return tuple(sum(scores[s] for scores in round_scores) for s in range(players))


def _ended_by_limit(state: BeverState) -> int:
    """1 if the finished last round ended by the safety limit (nobody knocked)."""
    return 1 if state.knocker == -1 else 0


# --------------------------------------------------------------------------- tracing


@dataclass
class Traced:
    """What the public history and a view tell about a round's tokens.

    ``pools[0]`` are the deal's tokens, ``pools[k]`` the tokens of the k-th reshuffle (draw
    order); ``contents[k]`` their cards; ``values`` the tokens whose card the viewer knows;
    ``numbers`` tokens publicly put into a row from a hand (so number cards)."""

    pools: list[list[int]]
    contents: list[list[str]]
    values: dict[int, str]
    numbers: set[int]
    last_rows_before: tuple[tuple[str, ...], ...]
    limited_before: int


def trace(obs: BeverObservation) -> Traced:
    """Replay the round's public history on tokens (the engine's moves without values)."""
    players = obs.players
    total = len(deck_cards(obs.number_counts))
    rows = [[ROW * s + p for p in POSITIONS] for s in range(players)]
    flip = ROW * players
    draw = list(range(flip + 1, total))
    discard = [flip]
    values: dict[int, str] = {}
    pools: list[list[int]] = [list(range(total))]
    contents: list[list[str]] = [list(deck_cards(obs.number_counts))]
    numbers: set[int] = set()
    pending: list[int] = []
    hand = -1
    next_id = total

    def reshuffle() -> None:
        nonlocal draw, discard, next_id
        cards = [values[t] for t in discard]
        new = list(range(next_id, next_id + len(cards)))
        next_id += len(cards)
        pools.append(new)
        contents.append(cards)
        draw, discard = list(new), []

    def pop() -> int:
        if not draw:
            reshuffle()
        return draw.pop(0)

    for event in obs.history:
        shown = iter(event.shown)

        def push(token: int, shown: Any = shown) -> None:
            values[token] = next(shown)
            discard.append(token)

        if event.kind is EventKind.DEAL:
            values[flip] = event.shown[0]
        elif event.kind is EventKind.RESHUFFLE:
            if not draw:
                reshuffle()
        elif event.kind is EventKind.REPLACE:
            s, p = event.seat, event.position
            push(rows[s][p])
            new_token = pop()
            values[new_token] = event.shown[1]
            rows[s][p] = new_token
        elif event.action is not None:
            a, s = event.action, event.seat
            kind = a.kind
            if kind is ActionKind.DRAW_DECK:
                hand = pop()
            elif kind is ActionKind.TAKE_DISCARD:
                taken = discard.pop()
                old = rows[s][a.pos]
                rows[s][a.pos] = taken
                push(old)
            elif kind is ActionKind.DRAW_TWICE:
                values[hand] = DRAW_TWICE
                pending.append(hand)
                hand = pop()
            elif kind is ActionKind.REJECT:
                push(hand)
                hand = pop()
            elif kind in (ActionKind.KNOCK, ActionKind.NO_KNOCK):
                pass
            else:
                if kind in (ActionKind.SWAP_DRAWN, ActionKind.KEEP):
                    numbers.add(hand)
                    old = rows[s][a.pos]
                    rows[s][a.pos] = hand
                    push(old)
                else:
                    if kind is ActionKind.SWAP:
                        o, op = a.other, a.other_pos
                        rows[s][a.pos], rows[o][op] = rows[o][op], rows[s][a.pos]
                    push(hand)
                hand = -1
                while pending:
                    push(pending.pop())
    for s, row in enumerate(obs.rows):
        for p, card in enumerate(row):
            if card:
                values[rows[s][p]] = card
    if obs.drawn and hand != -1:
        values[hand] = obs.drawn
    over = obs.phase is Phase.OVER
    return Traced(
        pools=pools,
        contents=contents,
        values=values,
        numbers=numbers,
        last_rows_before=obs.last_rows,
        limited_before=obs.limited - (1 if over and obs.knocker == -1 else 0),
    )


GAME = Beverbende()
