"""Take 5 (999 Games' name for Wolfgang Kramer's *6 nimmt!*): the rules engine.

Rules source: ``shared/rules/take5.md``, restated here as this project's own decisions.

Editions (option ``edition``):

* ``trial`` (default): the 999 Games trial edition. Cards 1..32 with the standard cattle
  heads (D1: multiples of 11 give 5, other multiples of 10 give 3, other multiples of 5
  give 2, 55 gives 7, every other card 1; 49 heads in all), 3 rows, 2-4 players with
  hands of 12/9/7 cards; the cards left over are set aside face down, unused.
* ``full``: the full *6 nimmt!*: cards 1..104, 4 rows, 2-10 players, 10 cards each;
  otherwise the same rules.

Play: every turn each seat secretly selects one card from its hand (a sealed simultaneous
choice: the others learn only that it has committed; a commitment is final). When the
last seat commits, the cards are revealed and placed one at a time, lowest first. A card
goes to the row whose last card is the highest one below it (Rules 1 and 2). If that row
already holds 5 cards, the player takes those 5 into his penalty pile and the card starts
the row anew (Rule 3, D2: taken on the *sixth* card). A card lower than every row's end
makes its owner choose a row (``ROW_CHOICE``, only that seat acts): he takes the whole row
and the card starts it (Rule 4). After the last turn of a deal every seat scores the cattle
heads in its penalty pile; leftover row cards score nothing.

Match end (option ``deals``, default 3 as in the seed): after that many deals, or earlier
after the deal in which a seat's total reaches ``end_score`` when that option is above 0
(66 gives the classic *6 nimmt!* ending). The lowest total wins; equal lowest totals share
the win (D4).

Actions, as text: ``select:<card>`` and ``row:<n>`` with rows numbered 1..rows as in the
rules. Clock defaults (server decision, rules section 5): select the lowest card in hand;
choose the row with the fewest cattle heads, ties to the lowest row number. ``apply``
accepts exactly ``legal_actions``; ``_why_illegal`` only names the rule of a refusal
(``wrong_game``, ``no_such_seat``, ``game_over``, ``no_such_card``, ``wrong_phase``,
``already_selected``, ``not_in_hand``, ``no_such_row``, ``not_your_turn``).

The deck and presets: one named deck, ``pack`` (cards ``"1"``..``"32"`` or ``"104"``),
shuffled before every deal. A preset order of the pack, top card first, is dealt like
this: seat 0 gets the first ``hand size`` cards, seat 1 the next ``hand size``, and so on
(each hand is then kept sorted); the next cards start rows 1, 2, 3 (and 4 in the full
edition), one card each; the rest are set aside unused. Example, trial edition with 3
seats (9 cards each): positions 1-9 to seat 0, 10-18 to seat 1, 19-27 to seat 2, 28-30
start rows 1-3, 31-32 unused. The n-th preset is the n-th deal's order; deals after the
last preset are shuffled by the match's ``Rng``.

What each seat sees: its own hand and its own sealed selection (``private_fields``);
everyone's hand sizes and who has committed; the rows; the revealed cards of the current
turn and the cards still to place; every penalty pile with its cards and heads (D3: they
were public when taken); the public history of the current deal (each turn's revealed
cards and placements, with the cards taken); the scores of finished deals and the running
totals. Spectators see the same minus any hand. Nobody sees the unused cards, another
seat's hand or sealed card, or a future deal. The public history implies nothing about
the hidden cards beyond what is visible (a card seen is on the table or in a penalty pile),
so :meth:`Take5.sample_world` deals the cards not visible anew, uniformly.

rules_version history:

* 1 - first version: trial and full editions, ``deals`` and ``end_score`` options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import ClassVar

from speeltafel.server.engine.codec import decode_value, encode_value
from speeltafel.server.engine.core import (
    Dealer,
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
    SeatRange,
    choice_option,
    evolver,
    fast_constructor,
    int_option,
    named_presets,
    refuse_unless_legal,
    remember_last,
)

ROW_LIMIT = 5  # a row holds at most five cards; the sixth takes them


def heads(card: int) -> int:
    """The cattle heads printed on a card."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


_HEADS = {card: heads(card) for card in range(1, 105)}
"""Every card's heads (the largest edition's 104 cards), for :func:`total_heads`."""


def total_heads(cards: Sequence[int]) -> int:
    """The cattle heads on a group of cards (a row, a penalty pile, a hand)."""
    return sum(map(_HEADS.__getitem__, cards))


class Edition(StrEnum):
    """Which deck and table layout a match uses."""

    TRIAL = "trial"
    FULL = "full"


@dataclass(frozen=True, slots=True)
class Layout:
    """The numbers an edition fixes."""

    cards: int
    rows: int
    min_seats: int
    max_seats: int


LAYOUTS = {
    Edition.TRIAL: Layout(cards=32, rows=3, min_seats=2, max_seats=4),
    Edition.FULL: Layout(cards=104, rows=4, min_seats=2, max_seats=10),
}
TRIAL_HAND_SIZES = {2: 12, 3: 9, 4: 7}
FULL_HAND_SIZE = 10


def hand_size(edition: Edition, seats: int) -> int:
    """Cards dealt to each seat."""
    return TRIAL_HAND_SIZES[seats] if edition is Edition.TRIAL else FULL_HAND_SIZE


class Phase(StrEnum):
    """Where a turn stands."""

    SELECT = "select"
    ROW_CHOICE = "row_choice"
    OVER = "over"


class ActionKind(StrEnum):
    """The two kinds of Take 5 action."""

    SELECT = "select"
    ROW = "row"


@dataclass(frozen=True, slots=True)
class Take5Action:
    """``SELECT`` a card (by number) or choose a ``ROW`` (numbered from 1)."""

    kind: ActionKind
    value: int

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.value}"


@dataclass(frozen=True, slots=True)
class Placement:
    """One revealed card put on the table, and the cards its owner took (if any)."""

    seat: int
    card: int
    row: int
    taken: tuple[int, ...]
    chosen: bool  # True when the owner chose the row (Rule 4)


@dataclass(frozen=True, slots=True)
class Turn:
    """The public record of one turn: the revealed cards and their placements so far."""

    number: int
    revealed: tuple[tuple[int, int], ...]  # (seat, card) in seat order
    placements: tuple[Placement, ...]


@dataclass(frozen=True, slots=True)
class Take5State:
    """The full state of a Take 5 match (every field; observe() decides who sees what)."""

    edition: Edition
    deals: int
    end_score: int
    seats: int
    dealer: Dealer
    deal: int
    turn: int
    phase: Phase
    rows: tuple[tuple[int, ...], ...]
    hands: tuple[tuple[int, ...], ...]
    unused: tuple[int, ...]
    selected: tuple[int | None, ...]
    to_place: tuple[tuple[int, int], ...]  # (card, seat), ascending; head may await a row
    penalties: tuple[tuple[int, ...], ...]
    deal_scores: tuple[tuple[int, ...], ...]
    history: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Take5Observation:
    """What one seat (or a spectator, ``seat=None``) may know."""

    private_fields: ClassVar[tuple[str, ...]] = ("hand", "selected")

    seat: int | None
    edition: Edition
    deal: int
    deals: int
    end_score: int
    turn: int
    turns: int
    phase: Phase
    rows: tuple[tuple[int, ...], ...]
    hand: tuple[int, ...]
    selected: int | None
    committed: tuple[bool, ...]
    hand_sizes: tuple[int, ...]
    to_place: tuple[tuple[int, int], ...]
    penalties: tuple[tuple[int, ...], ...]
    deal_scores: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    history: tuple[Turn, ...]


_STATE_HEADER = {"game": "take5", "format": 1}

# Every action there is, built once: legal_actions runs inside every apply.
_SELECTS = {c: Take5Action(ActionKind.SELECT, c) for c in range(1, LAYOUTS[Edition.FULL].cards + 1)}
_ROWS = {
    n: tuple(Take5Action(ActionKind.ROW, r) for r in range(1, n + 1))
    for n in {layout.rows for layout in LAYOUTS.values()}
}


# ``dataclasses.replace`` without its per-call introspection (the engine's hot path).
_evolve = evolver(Take5State)
_build = fast_constructor(Take5State)  # every field, positionally


def _totals(state: Take5State) -> tuple[int, ...]:
    """Each seat's score over the finished deals (built-in calls only: it runs at every
    observation)."""
    if not state.deal_scores:
        return (0,) * state.seats
    return tuple(map(sum, zip(*state.deal_scores, strict=True)))


class Take5:
    """The Take 5 rules (see the module docstring)."""

    info = GameInfo(
        game_id="take5",
        name="Take 5",
        rules_version=1,
        min_seats=2,
        max_seats=10,
        seat_ranges=tuple(
            SeatRange("edition", edition.value, layout.min_seats, layout.max_seats)
            for edition, layout in LAYOUTS.items()
        ),
        options=(
            OptionSpec(
                "edition",
                OptionKind.CHOICE,
                "trial",
                "trial: 32 cards, 3 rows, 2-4 seats; full: 6 nimmt! with 104 cards, 4 rows, "
                "2-10 seats, 10 cards each",
                choices=("trial", "full"),
            ),
            OptionSpec("deals", OptionKind.INT, "3", "deals in a match", minimum=1, maximum=50),
            OptionSpec(
                "end_score",
                OptionKind.INT,
                "0",
                "end the match after the deal in which a total reaches this (0: off; 66 is "
                "the classic 6 nimmt! ending)",
                minimum=0,
                maximum=10_000,
            ),
        ),
        simultaneous=True,
        description="Sealed simultaneous card choices; the sixth card in a row takes it. "
        "Fewest cattle heads wins.",
        score_name="heads",
        lower_is_better=True,
        decks=(
            DeckSpec(
                "pack",
                "cards 1..32 (trial) or 1..104 (full), shuffled before every deal; a preset "
                "deals hands seat by seat from the top, then one card per row, the rest unused",
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
    ) -> Take5State:
        """A match with its first deal made; presets of the ``pack`` as the module says."""
        resolved = self.info.resolve_options(options)
        edition = Edition(choice_option(resolved, "edition"))
        layout = LAYOUTS[edition]
        if not layout.min_seats <= seats <= layout.max_seats:
            raise InvalidOptions(
                f"the {edition.value} edition takes {layout.min_seats}-{layout.max_seats} "
                f"seats, not {seats}",
                rule="seat_count",
            )
        deck = tuple(str(c) for c in range(1, layout.cards + 1))
        pack = named_presets(self.info.decks, presets).get("pack", ())
        dealer = Dealer.checked(rng, pack, deck)
        empty: tuple[tuple[int, ...], ...] = tuple(() for _ in range(seats))
        state = Take5State(
            edition=edition,
            deals=int_option(resolved, "deals"),
            end_score=int_option(resolved, "end_score"),
            seats=seats,
            dealer=dealer,
            deal=0,
            turn=0,
            phase=Phase.SELECT,
            rows=(),
            hands=empty,
            unused=(),
            selected=(None,) * seats,
            to_place=(),
            penalties=empty,
            deal_scores=(),
            history=(),
        )
        return self._deal(state)

    def _deal(self, state: Take5State) -> Take5State:
        layout = LAYOUTS[state.edition]
        size = hand_size(state.edition, state.seats)
        order, dealer = state.dealer.deal([str(c) for c in range(1, layout.cards + 1)])
        cards = [int(c) for c in order]
        hands = tuple(tuple(sorted(cards[s * size : (s + 1) * size])) for s in range(state.seats))
        dealt = state.seats * size
        rows = tuple((cards[dealt + r],) for r in range(layout.rows))
        return replace(
            state,
            dealer=dealer,
            deal=state.deal + 1,
            turn=1,
            phase=Phase.SELECT,
            rows=rows,
            hands=hands,
            unused=tuple(cards[dealt + layout.rows :]),
            selected=(None,) * state.seats,
            to_place=(),
            penalties=tuple(() for _ in range(state.seats)),
            history=(),
        )

    # ------------------------------------------------------------------ queries

    def to_act(self, state: Take5State) -> tuple[int, ...]:
        """Uncommitted seats while selecting; the chooser during a row choice."""
        if state.phase is Phase.SELECT:
            return tuple([s for s, card in enumerate(state.selected) if card is None])
        if state.phase is Phase.ROW_CHOICE:
            return (state.to_place[0][1],)
        return ()

    @remember_last
    def legal_actions(self, state: Take5State, seat: int) -> tuple[Take5Action, ...]:
        """Every card in hand while selecting; every row for the chooser."""
        if state.phase is Phase.SELECT:
            if not 0 <= seat < state.seats or state.selected[seat] is not None:
                return ()
            return tuple([_SELECTS[c] for c in state.hands[seat]])
        if state.phase is Phase.ROW_CHOICE and seat == state.to_place[0][1]:
            return _ROWS[len(state.rows)]
        return ()

    def default_action(self, state: Take5State, seat: int) -> Take5Action:
        """Lowest card in hand; or the row with the fewest heads, ties to the lowest number."""
        if seat not in self.to_act(state):
            raise NotYourTurn(f"seat {seat} need not act now")
        if state.phase is Phase.SELECT:
            return Take5Action(ActionKind.SELECT, state.hands[seat][0])
        cheapest = min(range(len(state.rows)), key=lambda r: (total_heads(state.rows[r]), r))
        return Take5Action(ActionKind.ROW, cheapest + 1)

    # ------------------------------------------------------------------ the mutator

    def apply(self, state: Take5State, seat: int, action: Take5Action) -> Take5State:
        """Play one of ``legal_actions``; the given state is never changed."""
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        if action.kind is ActionKind.SELECT:
            return self._select(state, seat, action.value)
        return self._choose_row(state, action.value)

    def _why_illegal(self, state: Take5State, seat: int, action: Take5Action) -> EngineError | None:
        """The rule an action not in ``legal_actions`` breaks (a diagnostic only)."""
        if not isinstance(action, Take5Action):
            return InvalidAction("not a Take 5 action", rule="wrong_game")
        if not 0 <= seat < state.seats:
            return InvalidAction(f"there is no seat {seat}", rule="no_such_seat")
        if state.phase is Phase.OVER:
            return GameOver("the match is over")
        if action.kind is ActionKind.SELECT:
            if not 1 <= action.value <= LAYOUTS[state.edition].cards:
                return InvalidAction(f"there is no card {action.value}", rule="no_such_card")
            if state.phase is not Phase.SELECT:
                return IllegalAction("cards are not being selected now", rule="wrong_phase")
            if state.selected[seat] is not None:
                return IllegalAction(
                    "you have already selected a card this turn; it is final",
                    rule="already_selected",
                )
            return IllegalAction(f"card {action.value} is not in your hand", rule="not_in_hand")
        if not 1 <= action.value <= len(state.rows):
            return InvalidAction(f"there is no row {action.value}", rule="no_such_row")
        if state.phase is not Phase.ROW_CHOICE:
            return IllegalAction("no row is to be chosen now", rule="wrong_phase")
        return NotYourTurn("another seat chooses the row now")

    def _select(self, state: Take5State, seat: int, card: int) -> Take5State:
        hands = list(state.hands)
        hand = hands[seat]
        at = hand.index(card)  # legal, so in the hand (once: the cards are distinct)
        hands[seat] = hand[:at] + hand[at + 1 :]
        selected = list(state.selected)
        selected[seat] = card
        if None in selected:
            # Only sealed: built field by field, the hot path of every turn but the last.
            s = state
            return _build(
                s.edition, s.deals, s.end_score, s.seats, s.dealer, s.deal, s.turn, s.phase,
                s.rows, tuple(hands), s.unused, tuple(selected), s.to_place, s.penalties,
                s.deal_scores, s.history,
            )  # fmt: skip
        # The last seat committed: reveal everything at once and start placing.
        revealed = tuple((s, c) for s, c in enumerate(selected) if c is not None)
        state = _evolve(
            state,
            hands=tuple(hands),
            selected=(None,) * state.seats,
            to_place=tuple(sorted((c, s) for s, c in revealed)),
            history=(*state.history, Turn(number=state.turn, revealed=revealed, placements=())),
        )
        return self._place(state, chosen_row=None)

    def _choose_row(self, state: Take5State, row_number: int) -> Take5State:
        return self._place(state, chosen_row=row_number - 1)

    def _place(self, state: Take5State, chosen_row: int | None) -> Take5State:
        """Place revealed cards in ascending order until done or a row must be chosen.

        ``chosen_row`` is the row (0-based) the owner of the first card chose, if any. The
        table is worked on in local lists and the new state is built once at the end.
        """
        rows = list(state.rows)
        penalties = list(state.penalties)
        to_place = list(state.to_place)
        last = state.history[-1]
        placements = list(last.placements)
        phase = Phase.SELECT
        while to_place:
            card, seat = to_place[0]
            if chosen_row is not None:
                best, chosen, chosen_row = chosen_row, True, None
            else:
                best, best_end, chosen = -1, 0, False
                for index, row in enumerate(rows):
                    end = row[-1]
                    if best_end < end < card:
                        best, best_end = index, end
                if best < 0:
                    phase = Phase.ROW_CHOICE
                    break
            row = rows[best]
            if chosen or len(row) >= ROW_LIMIT:
                taken = row
                rows[best] = (card,)
                penalties[seat] = tuple(sorted(penalties[seat] + taken))
            else:
                taken = ()
                rows[best] = (*row, card)
            placements.append(Placement(seat, card, best + 1, taken, chosen))
            del to_place[0]
        turn_over = phase is Phase.SELECT
        state = _evolve(
            state,
            phase=phase,
            rows=tuple(rows),
            penalties=tuple(penalties),
            to_place=tuple(to_place),
            history=(*state.history[:-1], Turn(last.number, last.revealed, tuple(placements))),
            turn=state.turn + 1 if turn_over and state.hands[0] else state.turn,
        )
        if turn_over and not state.hands[0]:
            return self._end_deal(state)
        return state

    def _end_deal(self, state: Take5State) -> Take5State:
        scores = tuple(total_heads(pile) for pile in state.penalties)
        state = _evolve(state, deal_scores=(*state.deal_scores, scores))
        totals = _totals(state)
        reached = state.end_score > 0 and max(totals) >= state.end_score
        if state.deal >= state.deals or reached:
            return _evolve(state, phase=Phase.OVER)
        return self._deal(state)

    # ------------------------------------------------------------------ views

    def observe(self, state: Take5State, seat: int | None) -> Take5Observation:
        """A seat's own hand and sealed card, plus everything public."""
        own = seat is not None and 0 <= seat < state.seats
        return Take5Observation(
            seat=seat,
            edition=state.edition,
            deal=state.deal,
            deals=state.deals,
            end_score=state.end_score,
            turn=state.turn,
            turns=hand_size(state.edition, state.seats),
            phase=state.phase,
            rows=state.rows,
            hand=state.hands[seat] if own and seat is not None else (),
            selected=state.selected[seat] if own and seat is not None else None,
            committed=tuple([c is not None for c in state.selected]),
            hand_sizes=tuple(map(len, state.hands)),
            to_place=state.to_place,
            penalties=state.penalties,
            deal_scores=state.deal_scores,
            totals=_totals(state),
            history=state.history,
        )

    def sample_world(self, observation: Take5Observation, rng: Rng) -> Take5State:
        """The visible cards where the observation shows them; every other card (other
        hands, others' sealed cards, the unused cards) dealt anew from ``rng``; future deals
        from ``rng`` too."""
        obs = observation
        seats = len(obs.hand_sizes)
        own = obs.seat if obs.seat is not None and 0 <= obs.seat < seats else None
        visible = {c for row in obs.rows for c in row}
        visible.update(c for pile in obs.penalties for c in pile)
        visible.update(c for c, _ in obs.to_place)
        visible.update(obs.hand)
        if obs.selected is not None:
            visible.add(obs.selected)
        pool = [c for c in range(1, LAYOUTS[obs.edition].cards + 1) if c not in visible]
        shuffled, rng = rng.shuffle(pool)
        cards = list(shuffled)
        hands: list[tuple[int, ...]] = []
        selected: list[int | None] = []
        for other in range(seats):
            if other == own:
                hands.append(obs.hand)
                selected.append(obs.selected)
                continue
            size = obs.hand_sizes[other]
            hands.append(tuple(sorted(cards[:size])))
            del cards[:size]
            selected.append(cards.pop(0) if obs.committed[other] else None)
        return Take5State(
            edition=obs.edition,
            deals=obs.deals,
            end_score=obs.end_score,
            seats=seats,
            dealer=Dealer(rng.derive("future deals"), (), obs.deal),
            deal=obs.deal,
            turn=obs.turn,
            phase=obs.phase,
            rows=obs.rows,
            hands=tuple(hands),
            unused=tuple(cards),
            selected=tuple(selected),
            to_place=obs.to_place,
            penalties=obs.penalties,
            deal_scores=obs.deal_scores,
            history=obs.history,
        )

    def determinize(self, state: Take5State, seat: int, rng: Rng) -> Take5State:
        """``sample_world(observe(state, seat), rng)``."""
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(self, state: Take5State) -> tuple[Take5State, tuple[tuple[int, Take5Action], ...]]:
        """The deal's first state (placements undone, revealed and sealed cards back in hand)
        and the selections and row choices since, each turn's selections in seat order."""
        hands = [list(hand) for hand in state.hands]
        rows = [tuple(row) for row in state.rows]
        penalties = [list(pile) for pile in state.penalties]
        for turn in reversed(state.history):
            for placement in reversed(turn.placements):
                index = placement.row - 1
                if placement.taken:
                    rows[index] = placement.taken
                    for card in placement.taken:
                        penalties[placement.seat].remove(card)
                else:
                    rows[index] = rows[index][:-1]
            for seat, card in turn.revealed:
                hands[seat].append(card)
        actions: list[tuple[int, Take5Action]] = []
        for turn in state.history:
            actions.extend((s, Take5Action(ActionKind.SELECT, c)) for s, c in turn.revealed)
            actions.extend(
                (p.seat, Take5Action(ActionKind.ROW, p.row)) for p in turn.placements if p.chosen
            )
        for seat, sealed in enumerate(state.selected):
            if sealed is not None:
                hands[seat].append(sealed)
                actions.append((seat, Take5Action(ActionKind.SELECT, sealed)))
        over = state.phase is Phase.OVER
        start = _evolve(
            state,
            turn=1,
            phase=Phase.SELECT,
            rows=tuple(rows),
            hands=tuple(tuple(sorted(hand)) for hand in hands),
            selected=(None,) * state.seats,
            to_place=(),
            penalties=tuple(tuple(pile) for pile in penalties),
            deal_scores=state.deal_scores[:-1] if over else state.deal_scores,
            history=(),
        )
        return start, tuple(actions)

    def outcome(self, state: Take5State) -> Outcome | None:
        """Totals of cattle heads; the lowest total wins, ties share."""
        if state.phase is not Phase.OVER:
            return None
        totals = _totals(state)
        return Outcome.from_keys(totals, [(t,) for t in totals], self.info.lower_is_better)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: Take5Action) -> str:
        """``select:17`` or ``row:2``."""
        return str(action)

    def parse_action(self, text: str) -> Take5Action:
        """The action of a text written by :meth:`action_text`."""
        kind, sep, value = text.partition(":")
        # ASCII digits only and a bounded length: str.isdigit() also accepts "²", and
        # int() refuses very long numbers; both would escape as ValueError.
        digits = value.isascii() and value.isdigit() and len(value) <= 9
        if not sep or not digits or kind not in ("select", "row"):
            raise InvalidAction(f"not a Take 5 action: {text[:40]!r}", rule="bad_action_text")
        return Take5Action(ActionKind(kind), int(value))

    def encode(self, state: Take5State) -> bytes:
        """Canonical JSON bytes of the state."""
        return encode_value(_STATE_HEADER, state)

    def decode(self, data: bytes) -> Take5State:
        """The state :meth:`encode` wrote."""
        return decode_value(_STATE_HEADER, Take5State, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: Take5State) -> tuple[str, ...]:
        """Cards 1..32 (trial) or 1..104 (full)."""
        return tuple(str(c) for c in range(1, LAYOUTS[state.edition].cards + 1))

    def zones(self, state: Take5State) -> Mapping[str, tuple[str, ...]]:
        """Hands, sealed cards, cards being placed, rows, penalty piles, unused cards."""
        zones: dict[str, tuple[str, ...]] = {"unused": tuple(map(str, state.unused))}
        for s in range(state.seats):
            zones[f"hand:{s}"] = tuple(map(str, state.hands[s]))
            card = state.selected[s]
            zones[f"selected:{s}"] = () if card is None else (str(card),)
            zones[f"penalty:{s}"] = tuple(map(str, state.penalties[s]))
        for r, row in enumerate(state.rows, start=1):
            zones[f"row:{r}"] = tuple(map(str, row))
        zones["to_place"] = tuple(str(c) for c, _ in state.to_place)
        return zones

    def max_actions(self, state: Take5State) -> int:
        """Per turn: one selection and at most one row choice per seat."""
        return state.deals * hand_size(state.edition, state.seats) * 2 * state.seats


GAME = Take5()
