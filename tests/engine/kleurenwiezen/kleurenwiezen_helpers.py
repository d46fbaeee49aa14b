"""Shared helpers of the Kleurenwiezen tests: deals from preset packs, moves by the seat to
act, refusals by rule id, and play to the end of a deal by the clock default."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from speeltafel.server.engine.core import EngineError, Rng
from speeltafel.server.engine.games.kleurenwiezen import (
    ALL_CARDS,
    GAME,
    RANKS,
    Phase,
    WiezenAction,
    WiezenState,
    dealt_positions,
)

SEED = Rng(b"kleurenwiezen scenarios")


def suit(letter: str, ranks: str = "".join(RANKS)) -> list[str]:
    """The cards of one suit with these ranks (all 13 by default)."""
    return [rank + letter for rank in ranks]


SUIT_HANDS = [suit("S"), suit("C"), suit("D"), suit("H")]
"""P1 all spades, P2 all clubs, P3 all diamonds, P4 all hearts: one ace each (no troel)."""


def pack_of(hands: Sequence[Sequence[str]]) -> list[str]:
    """A ``pack`` order (top first) that deals P1..P4 these hands; hands with fewer than 13
    cards are completed from the remaining cards in the stable order."""
    given = [c for hand in hands for c in hand]
    assert len(given) == len(set(given)), "a card given twice"
    rest = [c for c in ALL_CARDS if c not in given]
    full = [list(h) for h in hands] + [[] for _ in range(4 - len(hands))]
    for hand in full:
        while len(hand) < 13:
            hand.append(rest.pop(0))
    pack = [""] * 52
    for position, hand in enumerate(full):
        for i, card in zip(dealt_positions(position), hand, strict=True):
            pack[i] = card
    return pack


def new(
    hands: Sequence[Sequence[str]] = SUIT_HANDS,
    seats: int = 4,
    more: Sequence[Sequence[Sequence[str]]] = (),
    **options: str,
) -> WiezenState:
    """A match whose first deal (dealer seat 0) gives P1..P4 these hands; ``more``: the
    hands of the following deals."""
    options.setdefault("deals", str(1 + len(more)))
    presets = [pack_of(hands), *(pack_of(h) for h in more)]
    return GAME.new(options, seats, SEED, {"pack": presets})


def act(state: WiezenState, *moves: WiezenAction) -> WiezenState:
    """Each move by the (single) seat to act."""
    for move in moves:
        (seat,) = GAME.to_act(state)
        state = GAME.apply(state, seat, move)
    return state


def legal(state: WiezenState) -> set[str]:
    """The texts of the legal moves of the (single) seat to act."""
    (seat,) = GAME.to_act(state)
    return {str(a) for a in GAME.legal_actions(state, seat)}


def refused(state: WiezenState, move: WiezenAction, rule: str, seat: int | None = None) -> None:
    """``move`` by the seat to act (or ``seat``) is refused with ``rule``; nothing changes."""
    if seat is None:
        (seat,) = GAME.to_act(state)
    before = GAME.encode(state)
    with pytest.raises(EngineError) as error:
        GAME.apply(state, seat, move)
    assert error.value.rule == rule, error.value.message
    assert GAME.encode(state) == before


def finish(state: WiezenState) -> WiezenState:
    """Discard and play out the current deal by the clock default (lowest card, first legal
    card in the stable order)."""
    number = state.deal_number
    while state.phase in (Phase.DISCARD, Phase.PLAY) and state.deal_number == number:
        for seat in GAME.to_act(state):
            state = GAME.apply(state, seat, GAME.default_action(state, seat))
    return state
