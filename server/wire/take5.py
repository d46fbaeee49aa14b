"""Take 5: engine values to protobuf and back. Converts only; the rules stay in the engine."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.core import InvalidAction
from speeltafel.server.engine.games.take5 import (
    GAME,
    ActionKind,
    Edition,
    Phase,
    Placement,
    Take5Action,
    Take5Observation,
    Turn,
    heads,
    total_heads,
)
from speeltafel.server.wire.encoding import (
    bool_field,
    embedded_field,
    packed_uints,
    string_field,
    uint_field,
)

PHASES = {
    Phase.SELECT: take5_pb2.TAKE5_PHASE_SELECT,
    Phase.ROW_CHOICE: take5_pb2.TAKE5_PHASE_ROW_CHOICE,
    Phase.OVER: take5_pb2.TAKE5_PHASE_OVER,
}
_PHASES_BACK = {number: phase for phase, number in PHASES.items()}


# Views are rebuilt at every version, mostly from the same parts: the card messages and the
# finished turns of the deal's history are built once and copied in (copying a message is
# a C-level memcpy-like operation; building one field by field is Python work).
_CARDS = {n: take5_pb2.Take5Card(number=n, heads=heads(n)) for n in range(1, 105)}


def _cards(numbers: Iterable[int]) -> list[take5_pb2.Take5Card]:
    return [_CARDS[n] for n in numbers]


@functools.lru_cache(maxsize=8192)
def _turn(turn: Turn) -> take5_pb2.Take5Turn:
    """The message of one turn (cached: a turn's record is a value, shared by every later
    version of the deal). Callers copy it in and never change it."""
    record = take5_pb2.Take5Turn(number=turn.number)
    record.revealed.extend(take5_pb2.Take5Reveal(seat=s, card=c) for s, c in turn.revealed)
    for p in turn.placements:
        record.placements.add(seat=p.seat, card=p.card, row=p.row, taken=p.taken, chosen=p.chosen)
    return record


# The same parts as bytes, for the views serialised at every version (``public_bytes``,
# ``private_bytes``): Take5View's fields as protobuf writes them.
_CARD_BYTES = {n: card.SerializeToString() for n, card in _CARDS.items()}


_CARD_FIELDS = {
    number: {n: embedded_field(number, card) for n, card in _CARD_BYTES.items()}
    for number in (2, 4, 9)
}
"""Each card as an entry of the repeated Take5Card fields that hold cards: a row's cards
(Take5Row field 2), a seat's penalty pile (Take5Seat field 4) and a hand (Take5View
field 9)."""


def _card_fields(number: int, cards: tuple[int, ...]) -> bytes:
    """``cards`` as the repeated Take5Card field ``number`` (2, 4 or 9): one lookup per
    card, no call (a hand is written anew at every view)."""
    return b"".join(map(_CARD_FIELDS[number].__getitem__, cards))


@functools.lru_cache(maxsize=4096)
def _row_field(number: int, cards: tuple[int, ...]) -> bytes:
    """Take5View.rows entry (field 8)."""
    return embedded_field(
        8, uint_field(1, number) + _card_fields(2, cards) + uint_field(3, total_heads(cards))
    )


@functools.lru_cache(maxsize=4096)
def _head(
    edition: Edition, deal: int, deals: int, end_score: int, turn: int, turns: int, phase: Phase
) -> bytes:
    """Take5View's scalar fields 1-7."""
    return (
        string_field(1, edition.value)
        + uint_field(2, deal)
        + uint_field(3, deals)
        + uint_field(4, end_score)
        + uint_field(5, turn)
        + uint_field(6, turns)
        + uint_field(7, PHASES[phase])
    )


@functools.lru_cache(maxsize=8192)
def _seat_field(
    seat: int,
    hand_size: int,
    committed: bool,
    penalty: tuple[int, ...],
    deal_scores: tuple[int, ...],
    total: int,
) -> bytes:
    """Take5View.seats entry (field 11)."""
    return embedded_field(
        11,
        uint_field(1, seat)
        + uint_field(2, hand_size)
        + bool_field(3, committed)
        + _card_fields(4, penalty)
        + uint_field(5, total_heads(penalty))
        + packed_uints(6, deal_scores)
        + uint_field(7, total),
    )


@functools.lru_cache(maxsize=4096)
def _reveal_field(number: int, seat: int, card: int) -> bytes:
    """A Take5Reveal message as field ``number`` (12: Take5View.to_place, 2:
    Take5Turn.revealed); a seat and a card, so cached."""
    return embedded_field(number, uint_field(1, seat) + uint_field(2, card))


def _turn_bytes(turn: Turn) -> bytes:
    """A Take5Turn message, serialised."""
    parts = [uint_field(1, turn.number)]
    parts.extend([_reveal_field(2, s, c) for s, c in turn.revealed])
    parts.extend(
        embedded_field(
            3,
            uint_field(1, p.seat)
            + uint_field(2, p.card)
            + uint_field(3, p.row)
            + packed_uints(4, p.taken)
            + bool_field(5, p.chosen),
        )
        for p in turn.placements
    )
    return b"".join(parts)


class _HistoryBytes:
    """Take5View.history (field 13) as bytes, kept by the identity of the history tuple
    and of each turn: the engine's states share both from one version to the next, so a
    deal's history is written once per turn instead of once per version. The cache holds
    each object it keeps bytes for, so the identity it is found by cannot be another
    object's.

    The objects and the bytes are in two dicts keyed alike rather than one dict of
    ``(object, bytes)`` pairs: a pair holding a tracked object is itself one more object
    for the collector to walk, two per version (docs/performance-rounds.md, round 26)."""

    __slots__ = ("_histories", "_history_bytes", "_turn_bytes", "_turns")

    LIMIT = 2048
    """Entries of each kind kept (a few MB at most); a full cache starts again empty."""

    def __init__(self) -> None:
        self._histories: dict[int, tuple[Turn, ...]] = {}
        self._history_bytes: dict[int, bytes] = {}
        self._turns: dict[int, Turn] = {}
        self._turn_bytes: dict[int, bytes] = {}

    def __call__(self, history: tuple[Turn, ...]) -> bytes:
        key = id(history)
        if self._histories.get(key) is history:
            kept = self._history_bytes.get(key)  # None only if another thread cleared it between
            if kept is not None:
                return kept
        data = b"".join(self._turn(turn) for turn in history)
        if len(self._histories) >= self.LIMIT:
            self._histories.clear()
            self._history_bytes.clear()
        self._histories[key] = history
        self._history_bytes[key] = data
        return data

    def _turn(self, turn: Turn) -> bytes:
        key = id(turn)
        if self._turns.get(key) is turn:
            kept = self._turn_bytes.get(key)  # None only if another thread cleared it between
            if kept is not None:
                return kept
        data = embedded_field(13, _turn_bytes(turn))
        if len(self._turns) >= self.LIMIT:
            self._turns.clear()
            self._turn_bytes.clear()
        self._turns[key] = turn
        self._turn_bytes[key] = data
        return data


_history_field = _HistoryBytes()


class Take5Wire:
    """The Take 5 fields of the common View and Action messages."""

    game = GAME
    field = "take5"

    def fill_public(self, view: common_pb2.View, obs: Take5Observation) -> None:
        """Everything but the seat's own hand and sealed card."""
        out = view.take5
        out.edition = obs.edition.value
        out.deal = obs.deal
        out.deals = obs.deals
        out.end_score = obs.end_score
        out.turn = obs.turn
        out.turns = obs.turns
        out.phase = PHASES[obs.phase]
        for number, row in enumerate(obs.rows, start=1):
            out.rows.add(number=number, cards=_cards(row), heads=total_heads(row))
        for seat in range(len(obs.hand_sizes)):
            out.seats.add(
                seat=seat,
                hand_size=obs.hand_sizes[seat],
                committed=obs.committed[seat],
                penalty=_cards(obs.penalties[seat]),
                penalty_heads=total_heads(obs.penalties[seat]),
                deal_scores=[scores[seat] for scores in obs.deal_scores],
                total=obs.totals[seat],
            )
        out.to_place.extend(take5_pb2.Take5Reveal(seat=s, card=c) for c, s in obs.to_place)
        out.history.extend(_turn(turn) for turn in obs.history)

    def public_bytes(self, obs: Take5Observation) -> bytes:
        """What :meth:`fill_public` writes into ``view.take5``, serialised (each part from
        bytes kept between versions: most of a version's view is its predecessor's)."""
        hand_sizes = obs.hand_sizes
        seats = len(hand_sizes)
        # Each seat's scores of the finished deals: the columns of the deals' rows.
        scores = tuple(zip(*obs.deal_scores, strict=True)) if obs.deal_scores else ((),) * seats
        parts = [
            _head(obs.edition, obs.deal, obs.deals, obs.end_score, obs.turn, obs.turns, obs.phase),
            *[_row_field(number, row) for number, row in enumerate(obs.rows, start=1)],
            *[
                _seat_field(
                    seat,
                    hand_sizes[seat],
                    obs.committed[seat],
                    obs.penalties[seat],
                    scores[seat],
                    obs.totals[seat],
                )
                for seat in range(seats)
            ],
            *[_reveal_field(12, s, c) for c, s in obs.to_place],
        ]
        parts.append(_history_field(obs.history))
        return b"".join(parts)

    def private_bytes(self, obs: Take5Observation) -> bytes:
        """What :meth:`fill_private` writes into ``view.take5``, serialised."""
        data = _card_fields(9, obs.hand)
        if obs.selected is not None:
            data += uint_field(10, obs.selected, always=True)
        return data

    def fill_private(self, view: common_pb2.View, obs: Take5Observation) -> None:
        """The seat's own hand and its sealed selection."""
        out = view.take5
        out.hand.extend(_cards(obs.hand))
        if obs.selected is not None:
            out.selected = obs.selected

    def action_to_proto(self, action: Take5Action) -> common_pb2.Action:
        """The typed protobuf form of an engine action."""
        message = common_pb2.Action()
        if action.kind is ActionKind.SELECT:
            message.take5.select.card = action.value
        else:
            message.take5.choose_row.row = action.value
        return message

    def action_from_proto(self, message: common_pb2.Action) -> Take5Action:
        """The engine action of a client's message; :class:`InvalidAction` if malformed."""
        kind = message.take5.WhichOneof("kind")
        if kind == "select":
            return Take5Action(ActionKind.SELECT, message.take5.select.card)
        if kind == "choose_row":
            return Take5Action(ActionKind.ROW, message.take5.choose_row.row)
        raise InvalidAction("action.take5 names no move (set select or choose_row)", "empty_action")

    def observation_from_view(self, view: common_pb2.View) -> Take5Observation:
        """The observation :meth:`fill_public` and :meth:`fill_private` wrote (the seat's
        own, or the spectator's for a view without a seat)."""
        t5 = view.take5
        if t5.phase not in _PHASES_BACK:
            raise ValueError(f"unknown Take 5 phase {t5.phase}")
        seats = t5.seats
        finished_deals = len(seats[0].deal_scores) if seats else 0
        return Take5Observation(
            seat=view.seat if view.HasField("seat") else None,
            edition=Edition(t5.edition),
            deal=t5.deal,
            deals=t5.deals,
            end_score=t5.end_score,
            turn=t5.turn,
            turns=t5.turns,
            phase=_PHASES_BACK[t5.phase],
            rows=tuple(tuple(card.number for card in row.cards) for row in t5.rows),
            hand=tuple(card.number for card in t5.hand),
            selected=t5.selected if t5.HasField("selected") else None,
            committed=tuple(seat.committed for seat in seats),
            hand_sizes=tuple(seat.hand_size for seat in seats),
            to_place=tuple((reveal.card, reveal.seat) for reveal in t5.to_place),
            penalties=tuple(tuple(card.number for card in seat.penalty) for seat in seats),
            deal_scores=tuple(
                tuple(seat.deal_scores[deal] for seat in seats) for deal in range(finished_deals)
            ),
            totals=tuple(seat.total for seat in seats),
            history=tuple(
                Turn(
                    number=turn.number,
                    revealed=tuple((reveal.seat, reveal.card) for reveal in turn.revealed),
                    placements=tuple(
                        Placement(p.seat, p.card, p.row, tuple(p.taken), p.chosen)
                        for p in turn.placements
                    ),
                )
                for turn in t5.history
            ),
        )


WIRE = Take5Wire()
