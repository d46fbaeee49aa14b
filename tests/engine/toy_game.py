"""Toy Duel: a tiny game that uses every part of the engine core Take 5 does not.

It is registered only inside the engine tests (the contract test adds it to the games it
checks), so that the generic contract covers list options, an automatic option, tie-break
keys, two named decks with a partial reshuffle, sealed simultaneous choices and a seat that
stays to act over two steps of its own turn.

Rules. Options: ``values`` (int list, the numbers on the cards), ``colours`` (choice list,
one suit of ``values`` per colour), ``rounds`` (0 = automatic: one round per seat) and
``bonus`` (bool). Deck ``numbers`` holds ``<colour>:<value>`` for every colour and value;
deck ``bonus`` holds ``bonus:1`` and ``bonus:2``. Each round the numbers are ordered anew and
dealt two to each seat from the top, seat by seat; the rest is the stock. Every seat
secretly plays one card of its two (``play:<card>``); when the last one commits, all are
revealed and each seat scores its card's value. The highest value wins the round (ties to
the lower seat). With ``bonus`` on and bonus cards in the pile, the winner then draws the
top bonus card, seeing it alone (``draw``), and keeps it (``keep``: it scores its number
and lies open before him) or discards it (``discard``: open on the bonus discards). A
round that starts with an empty bonus pile first reshuffles the bonus discards into it.
Highest total wins; equal totals go to the seat that kept fewer bonus cards; then shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
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
    choice_list_option,
    int_list_option,
    int_option,
    refuse_unless_legal,
)

BONUS_CARDS = ("bonus:1", "bonus:2")
COLOURS = ("red", "blue", "green")


class Phase(StrEnum):
    PLAY = "play"
    DRAW = "draw"
    DECIDE = "decide"
    OVER = "over"


class Kind(StrEnum):
    PLAY = "play"
    DRAW = "draw"
    KEEP = "keep"
    DISCARD = "discard"


@dataclass(frozen=True, slots=True)
class ToyAction:
    kind: Kind
    card: str = ""


@dataclass(frozen=True, slots=True)
class ToyState:
    values: tuple[int, ...]
    colours: tuple[str, ...]
    rounds: int
    bonus: bool
    seats: int
    decks: Decks
    round: int
    phase: Phase
    hands: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...]
    committed: tuple[str | None, ...]
    table: tuple[tuple[int, str], ...]  # (seat, card) revealed this round
    winner: int
    bonus_pile: tuple[str, ...]  # top first
    drawn: str | None
    bonus_discards: tuple[str, ...]
    kept: tuple[tuple[str, ...], ...]
    points: tuple[int, ...]
    history: tuple[tuple[int, str], ...]  # (seat, public action text) this round


@dataclass(frozen=True, slots=True)
class ToyObservation:
    private_fields: ClassVar[tuple[str, ...]] = ("hand", "played", "drawn")

    seat: int | None
    values: tuple[int, ...]
    colours: tuple[str, ...]
    rounds: int
    bonus: bool
    round: int
    phase: Phase
    hand: tuple[str, ...]
    played: str | None
    drawn: str | None
    committed: tuple[bool, ...]
    hand_sizes: tuple[int, ...]
    stock_size: int
    table: tuple[tuple[int, str], ...]
    winner: int
    bonus_pile_size: int
    bonus_discards: tuple[str, ...]
    kept: tuple[tuple[str, ...], ...]
    points: tuple[int, ...]
    history: tuple[tuple[int, str], ...]


def value(card: str) -> int:
    return int(card.rsplit(":", 1)[1])


def numbers_deck(colours: tuple[str, ...], values: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(f"{colour}:{v}" for colour in colours for v in values)


_HEADER = {"game": "toy_duel", "format": 1}


class ToyDuel:
    info = GameInfo(
        game_id="toy_duel",
        name="Toy Duel",
        rules_version=1,
        min_seats=2,
        max_seats=3,
        options=(
            OptionSpec(
                "values",
                OptionKind.INT_LIST,
                "1,2,3,4,5",
                "the numbers of each colour",
                minimum=1,
                maximum=9,
                min_items=2,
                max_items=6,
            ),
            OptionSpec(
                "colours",
                OptionKind.CHOICE_LIST,
                "red,blue",
                "one suit per colour",
                choices=COLOURS,
                min_items=1,
                max_items=3,
            ),
            OptionSpec(
                "rounds",
                OptionKind.INT,
                "0",
                "rounds in a match (0: one per seat)",
                minimum=1,
                maximum=4,
                automatic=True,
            ),
            OptionSpec("bonus", OptionKind.BOOL, "true", "the round's winner draws a bonus"),
        ),
        simultaneous=True,
        description="a test game",
        score_name="points",
        lower_is_better=False,
        decks=(
            DeckSpec("numbers", "<colour>:<value> cards, ordered before every round"),
            DeckSpec("bonus", "bonus:1 and bonus:2, ordered at the start; its discards reshuffled"),
        ),
    )

    # ------------------------------------------------------------------ setup

    def new(
        self, options: Mapping[str, str], seats: int, rng: Rng, presets: Presets = ()
    ) -> ToyState:
        resolved = self.info.resolve_options(options)
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise InvalidOptions(f"toy duel takes 2-3 seats, not {seats}", rule="seat_count")
        values = int_list_option(resolved, "values")
        colours = choice_list_option(resolved, "colours")
        numbers = numbers_deck(colours, values)
        if len(numbers) < 2 * seats:
            raise InvalidOptions("too few number cards for two per seat", rule="deck_too_small")
        rounds = int_option(resolved, "rounds") or seats
        decks = Decks.checked(
            rng, self.info.decks, presets, {"numbers": numbers, "bonus": BONUS_CARDS}
        )
        bonus_pile, decks = decks.order("bonus", BONUS_CARDS)
        empty: tuple[tuple[str, ...], ...] = ((),) * seats
        state = ToyState(
            values=values,
            colours=colours,
            rounds=rounds,
            bonus=bool_option(resolved, "bonus"),
            seats=seats,
            decks=decks,
            round=0,
            phase=Phase.PLAY,
            hands=empty,
            stock=(),
            committed=(None,) * seats,
            table=(),
            winner=-1,
            bonus_pile=bonus_pile,
            drawn=None,
            bonus_discards=(),
            kept=empty,
            points=(0,) * seats,
            history=(),
        )
        return self._start_round(state)

    def _start_round(self, state: ToyState) -> ToyState:
        decks = state.decks
        pile, discards = state.bonus_pile, state.bonus_discards
        if not pile and discards:
            pile, decks = decks.order("bonus", discards)
            discards = ()
        order, decks = decks.order("numbers", numbers_deck(state.colours, state.values))
        hands = tuple(tuple(sorted(order[2 * s : 2 * s + 2])) for s in range(state.seats))
        return replace(
            state,
            decks=decks,
            round=state.round + 1,
            phase=Phase.PLAY,
            hands=hands,
            stock=order[2 * state.seats :],
            committed=(None,) * state.seats,
            table=(),
            winner=-1,
            bonus_pile=pile,
            bonus_discards=discards,
            history=(),
        )

    # ------------------------------------------------------------------ queries

    def to_act(self, state: ToyState) -> tuple[int, ...]:
        if state.phase is Phase.PLAY:
            return tuple(s for s in range(state.seats) if state.committed[s] is None)
        if state.phase in (Phase.DRAW, Phase.DECIDE):
            return (state.winner,)
        return ()

    def legal_actions(self, state: ToyState, seat: int) -> tuple[ToyAction, ...]:
        if seat not in self.to_act(state):
            return ()
        if state.phase is Phase.PLAY:
            return tuple(ToyAction(Kind.PLAY, card) for card in dict.fromkeys(state.hands[seat]))
        if state.phase is Phase.DRAW:
            return (ToyAction(Kind.DRAW),)
        return (ToyAction(Kind.KEEP), ToyAction(Kind.DISCARD))

    def default_action(self, state: ToyState, seat: int) -> ToyAction:
        legal = self.legal_actions(state, seat)
        if not legal:
            raise NotYourTurn(f"seat {seat} need not act now")
        return legal[-1] if state.phase is Phase.DECIDE else legal[0]

    # ------------------------------------------------------------------ the mutator

    def apply(self, state: ToyState, seat: int, action: ToyAction) -> ToyState:
        refuse_unless_legal(
            self.legal_actions(state, seat), action, lambda: self._why_illegal(state, seat, action)
        )
        if action.kind is Kind.PLAY:
            return self._play(state, seat, action.card)
        if action.kind is Kind.DRAW:
            return replace(
                state,
                phase=Phase.DECIDE,
                drawn=state.bonus_pile[0],
                bonus_pile=state.bonus_pile[1:],
                history=(*state.history, (seat, "draw")),
            )
        card = state.drawn or ""
        kept = list(state.kept)
        points = list(state.points)
        discards = state.bonus_discards
        if action.kind is Kind.KEEP:
            kept[seat] = (*kept[seat], card)
            points[seat] += value(card)
        else:
            discards = (*discards, card)
        state = replace(
            state,
            drawn=None,
            kept=tuple(kept),
            points=tuple(points),
            bonus_discards=discards,
            history=(*state.history, (seat, f"{action.kind.value}:{card}")),
        )
        return self._end_round(state)

    def _why_illegal(self, state: ToyState, seat: int, action: ToyAction) -> EngineError | None:
        if not isinstance(action, ToyAction):
            return InvalidAction("not a toy action", rule="wrong_game")
        if state.phase is Phase.OVER:
            return GameOver("the match is over")
        if seat not in self.to_act(state):
            return NotYourTurn("you need not act now")
        if action.kind is Kind.PLAY and state.phase is Phase.PLAY:
            return IllegalAction("that card is not in your hand", rule="not_in_hand")
        return IllegalAction(f"{action.kind.value} is not allowed now", rule="wrong_phase")

    def _play(self, state: ToyState, seat: int, card: str) -> ToyState:
        hands = list(state.hands)
        hand = list(hands[seat])
        hand.remove(card)
        hands[seat] = tuple(hand)
        committed = list(state.committed)
        committed[seat] = card
        if any(c is None for c in committed):
            return replace(state, hands=tuple(hands), committed=tuple(committed))
        table = tuple((s, c) for s, c in enumerate(committed) if c is not None)
        best = max(range(state.seats), key=lambda s: (value(table[s][1]), -s))
        points = tuple(p + value(table[s][1]) for s, p in enumerate(state.points))
        state = replace(
            state,
            hands=tuple(hands),
            committed=(None,) * state.seats,
            table=table,
            winner=best,
            points=points,
            history=(*state.history, *((s, f"play:{c}") for s, c in table)),
        )
        if state.bonus and state.bonus_pile:
            return replace(state, phase=Phase.DRAW)
        return self._end_round(state)

    def _end_round(self, state: ToyState) -> ToyState:
        if state.round >= state.rounds:
            return replace(state, phase=Phase.OVER)
        return self._start_round(state)

    # ------------------------------------------------------------------ views

    def observe(self, state: ToyState, seat: int | None) -> ToyObservation:
        own = seat if seat is not None and 0 <= seat < state.seats else None
        return ToyObservation(
            seat=seat,
            values=state.values,
            colours=state.colours,
            rounds=state.rounds,
            bonus=state.bonus,
            round=state.round,
            phase=state.phase,
            hand=state.hands[own] if own is not None else (),
            played=state.committed[own] if own is not None else None,
            drawn=state.drawn if own is not None and own == state.winner else None,
            committed=tuple(c is not None for c in state.committed),
            hand_sizes=tuple(len(h) for h in state.hands),
            stock_size=len(state.stock),
            table=state.table,
            winner=state.winner,
            bonus_pile_size=len(state.bonus_pile),
            bonus_discards=state.bonus_discards,
            kept=state.kept,
            points=state.points,
            history=state.history,
        )

    def sample_world(self, observation: ToyObservation, rng: Rng) -> ToyState:
        obs = observation
        seats = len(obs.hand_sizes)
        own = obs.seat if obs.seat is not None and 0 <= obs.seat < seats else None
        numbers = list(numbers_deck(obs.colours, obs.values))
        for card in (*obs.hand, *(c for _, c in obs.table)):
            numbers.remove(card)
        if obs.played is not None:
            numbers.remove(obs.played)
        shuffled, rng = rng.shuffle(sorted(numbers))
        cards = list(shuffled)
        hands: list[tuple[str, ...]] = []
        committed: list[str | None] = []
        for other in range(seats):
            if other == own:
                hands.append(obs.hand)
                committed.append(obs.played)
                continue
            size = obs.hand_sizes[other]
            hands.append(tuple(sorted(cards[:size])))
            del cards[:size]
            committed.append(cards.pop(0) if obs.committed[other] else None)
        bonus = list(BONUS_CARDS)
        for card in (*obs.bonus_discards, *(c for pile in obs.kept for c in pile)):
            bonus.remove(card)
        if obs.drawn is not None:
            bonus.remove(obs.drawn)
        hidden_bonus, rng = rng.shuffle(sorted(bonus))
        drawn = obs.drawn
        if obs.phase is Phase.DECIDE and drawn is None:
            drawn, hidden_bonus = hidden_bonus[0], hidden_bonus[1:]
        decks = Decks(rng.derive("future"), ("numbers", "bonus"), ((), ()), (0, 0))
        return ToyState(
            values=obs.values,
            colours=obs.colours,
            rounds=obs.rounds,
            bonus=obs.bonus,
            seats=seats,
            decks=decks,
            round=obs.round,
            phase=obs.phase,
            hands=tuple(hands),
            stock=tuple(cards),
            committed=tuple(committed),
            table=obs.table,
            winner=obs.winner,
            bonus_pile=hidden_bonus,
            drawn=drawn,
            bonus_discards=obs.bonus_discards,
            kept=obs.kept,
            points=obs.points,
            history=obs.history,
        )

    def determinize(self, state: ToyState, seat: int, rng: Rng) -> ToyState:
        return self.sample_world(self.observe(state, seat), rng)

    def rewind(self, state: ToyState) -> tuple[ToyState, tuple[tuple[int, ToyAction], ...]]:
        hands = [list(hand) for hand in state.hands]
        points = list(state.points)
        kept = [list(pile) for pile in state.kept]
        pile = list(state.bonus_pile)
        discards = list(state.bonus_discards)
        actions: list[tuple[int, ToyAction]] = []
        for seat, text in state.history:
            kind, _, card = text.partition(":")
            if kind == "play":
                hands[seat].append(card)
                points[seat] -= value(card)
                actions.append((seat, ToyAction(Kind.PLAY, card)))
            elif kind == "draw":
                actions.append((seat, ToyAction(Kind.DRAW)))
            else:
                actions.append((seat, ToyAction(Kind(kind))))
                if kind == "keep":
                    kept[seat].remove(card)
                    points[seat] -= value(card)
                else:
                    discards.remove(card)
                pile.insert(0, card)
        if state.drawn is not None:
            pile.insert(0, state.drawn)
        for seat, card in enumerate(state.committed):
            if card is not None:
                hands[seat].append(card)
                actions.append((seat, ToyAction(Kind.PLAY, card)))
        start = replace(
            state,
            phase=Phase.PLAY,
            hands=tuple(tuple(sorted(hand)) for hand in hands),
            committed=(None,) * state.seats,
            table=(),
            winner=-1,
            bonus_pile=tuple(pile),
            drawn=None,
            bonus_discards=tuple(discards),
            kept=tuple(tuple(p) for p in kept),
            points=tuple(points),
            history=(),
        )
        return start, tuple(actions)

    def outcome(self, state: ToyState) -> Outcome | None:
        if state.phase is not Phase.OVER:
            return None
        keys = [(state.points[s], -len(state.kept[s])) for s in range(state.seats)]
        return Outcome.from_keys(state.points, keys, self.info.lower_is_better)

    # ------------------------------------------------------------------ text and bytes

    def action_text(self, action: ToyAction) -> str:
        return f"play:{action.card}" if action.kind is Kind.PLAY else action.kind.value

    def parse_action(self, text: str) -> ToyAction:
        kind, _, card = text.partition(":")
        if text in ("draw", "keep", "discard"):
            return ToyAction(Kind(text))
        colour, _, number = card.partition(":")
        if (
            kind == "play"
            and colour in COLOURS
            and number.isascii()
            and number.isdigit()
            and len(number) == 1
        ):
            return ToyAction(Kind.PLAY, card)
        raise InvalidAction(f"not a toy action: {text[:40]!r}", rule="bad_action_text")

    def encode(self, state: ToyState) -> bytes:
        return encode_value(_HEADER, state)

    def decode(self, data: bytes) -> ToyState:
        return decode_value(_HEADER, ToyState, data)

    # ------------------------------------------------------------------ invariants

    def deck(self, state: ToyState) -> tuple[str, ...]:
        return tuple(sorted((*numbers_deck(state.colours, state.values), *BONUS_CARDS)))

    def zones(self, state: ToyState) -> Mapping[str, tuple[str, ...]]:
        zones: dict[str, tuple[str, ...]] = {
            "stock": state.stock,
            "table": tuple(c for _, c in state.table),
            "bonus_pile": state.bonus_pile,
            "drawn": () if state.drawn is None else (state.drawn,),
            "bonus_discards": state.bonus_discards,
        }
        for s in range(state.seats):
            zones[f"hand:{s}"] = state.hands[s]
            card = state.committed[s]
            zones[f"committed:{s}"] = () if card is None else (card,)
            zones[f"kept:{s}"] = state.kept[s]
        return zones

    def max_actions(self, state: ToyState) -> int:
        return state.rounds * (state.seats + 2)


GAME = ToyDuel()
