"""Until the wire's decoder lands: a Take 5 engine state rebuilt from a seat's view.

Temporary: ``speeltafel.server.wire.registry.observation_from_view`` replaces it, and then
this module goes. The cards a seat cannot see are filled in ascending order (any
consistent fill will do: the search bot samples its worlds from the observation).
"""

from __future__ import annotations

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.core import Dealer, Rng
from speeltafel.server.engine.games.take5 import (
    LAYOUTS,
    Edition,
    Phase,
    Placement,
    Take5State,
    Turn,
)

PHASES = {
    take5_pb2.TAKE5_PHASE_SELECT: Phase.SELECT,
    take5_pb2.TAKE5_PHASE_ROW_CHOICE: Phase.ROW_CHOICE,
    take5_pb2.TAKE5_PHASE_OVER: Phase.OVER,
}

#: The key of the future-deal generator when the caller gives none. Future deals cannot be
#: known from a view; :meth:`Take5.determinize` re-keys them anyway.
UNKNOWN_FUTURE = Rng(b"speeltafel.bots.take5_search: future deals are unknown")


def state_from_view(view: common_pb2.View, dealer_rng: Rng | None = None) -> Take5State:
    """An engine state consistent with everything the view's seat knows (see the module
    docstring). Raises ``ValueError`` when the view is not a seat's Take 5 view or is not
    self-consistent (a card seen twice, too few unknown cards for the hidden zones)."""
    if view.WhichOneof("game_view") != "take5":
        raise ValueError("not a Take 5 view")
    if not view.HasField("seat"):
        raise ValueError("a spectator's view has no hand to search from")
    table = view.take5
    me = view.seat
    edition = Edition(table.edition)
    layout = LAYOUTS[edition]
    seats = len(table.seats)
    if not 0 <= me < seats or [s.seat for s in table.seats] != list(range(seats)):
        raise ValueError("the view's seats are not numbered 0..seats-1 or lack this seat")
    if table.phase not in PHASES:
        raise ValueError(f"unknown Take 5 phase {table.phase}")

    rows = tuple(tuple(card.number for card in row.cards) for row in table.rows)
    hand = tuple(sorted(card.number for card in table.hand))
    own_selected = table.selected if table.HasField("selected") else None
    penalties = tuple(tuple(sorted(c.number for c in s.penalty)) for s in table.seats)
    to_place = tuple((reveal.card, reveal.seat) for reveal in table.to_place)

    visible = [c for row in rows for c in row]
    visible += hand
    visible += [c for pile in penalties for c in pile]
    visible += [card for card, _ in to_place]
    if own_selected is not None:
        visible.append(own_selected)
    seen = set(visible)
    if len(seen) != len(visible) or not seen <= set(range(1, layout.cards + 1)):
        raise ValueError("the view shows a card twice or a card outside the deck")
    unknown = [c for c in range(1, layout.cards + 1) if c not in seen]

    hands: list[tuple[int, ...]] = []
    selected: list[int | None] = []
    for other, record in enumerate(table.seats):
        if other == me:
            hands.append(hand)
            selected.append(own_selected)
            continue
        size = record.hand_size
        if size > len(unknown):
            raise ValueError("too few unknown cards for the other hands")
        hands.append(tuple(unknown[:size]))
        del unknown[:size]
        if record.committed:
            if not unknown:
                raise ValueError("too few unknown cards for the sealed selections")
            selected.append(unknown.pop(0))
        else:
            selected.append(None)

    finished = len(table.seats[0].deal_scores)
    deal_scores = tuple(tuple(s.deal_scores[d] for s in table.seats) for d in range(finished))
    history = tuple(
        Turn(
            number=turn.number,
            revealed=tuple((r.seat, r.card) for r in turn.revealed),
            placements=tuple(
                Placement(p.seat, p.card, p.row, tuple(p.taken), p.chosen) for p in turn.placements
            ),
        )
        for turn in table.history
    )
    return Take5State(
        edition=edition,
        deals=table.deals,
        end_score=table.end_score,
        seats=seats,
        dealer=Dealer(dealer_rng or UNKNOWN_FUTURE, (), table.deal),
        deal=table.deal,
        turn=table.turn,
        phase=PHASES[table.phase],
        rows=rows,
        hands=tuple(hands),
        unused=tuple(unknown),
        selected=tuple(selected),
        to_place=to_place,
        penalties=penalties,
        deal_scores=deal_scores,
        history=history,
    )
