"""A Take 5 search bot: flat Monte Carlo over determinisations of its own view.

This is the pattern of ``shared/design.md``: a bot imports the SDK, and the engine only to
search on its own determinised view.

1. :func:`state_from_view` rebuilds an engine :class:`Take5State` from the seat's
   ``View`` alone. Everything public (rows, revealed cards, penalty piles, history, scores)
   and everything the seat knows of itself (its hand, its sealed card) is copied. The
   cards it cannot see (other hands, others' sealed cards, the unused cards) are exactly
   the deck minus everything visible; they are filled in ascending order (any consistent
   fill will do, because step 2 re-deals them). The dealer of future deals gets an ``Rng``
   of our own: nobody can know future deals.
2. For every decision it draws determinisations with ``GAME.determinize(state, seat,
   rng)``: a full state consistent with the view, the hidden cards dealt anew.
3. On each determinisation it tries every legal action (common random numbers: all
   candidates see the same samples) and plays on with a cheap policy for every seat: the
   rest of the current turn, then ``horizon`` more turns of the deal. The cheap policy is
   the gap heuristic of :mod:`speeltafel.bots.take5_gap` in engine terms, with a little
   randomness (``explore``) so that the others are not assumed to be predictable.
4. A rollout's value is the heads the bot took minus ``others_weight`` times the mean
   heads the others took (lower is better); the action with the lowest mean value wins,
   ties to the action the cheap policy prefers, then to the first legal action.

It draws at most ``samples`` determinisations and stops early when its time budget
(``budget_ms``, capped at ``clock_fraction`` of the move clock's remaining time when the
view has a deadline) is spent; it checks the clock after every rollout, so it overshoots
by at most one rollout. If even the first determinisation cannot be completed in time, it
plays the cheap policy's choice. All chance comes from ``random.Random(seed)``, and the
engine ``Rng`` of each decision is keyed from it, so a bot with a seed and no time limit
(``budget_ms=None``) is fully deterministic. In any other game it plays a random legal
action.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from speeltafel.sdk.v1 import common_pb2, take5_pb2
from speeltafel.server.engine.core import Dealer, EngineError, Rng
from speeltafel.server.engine.games.take5 import (
    GAME,
    LAYOUTS,
    ROW_LIMIT,
    ActionKind,
    Edition,
    Phase,
    Placement,
    Take5Action,
    Take5State,
    Turn,
    total_heads,
)

PHASES = {
    take5_pb2.TAKE5_PHASE_SELECT: Phase.SELECT,
    take5_pb2.TAKE5_PHASE_ROW_CHOICE: Phase.ROW_CHOICE,
    take5_pb2.TAKE5_PHASE_OVER: Phase.OVER,
}

#: The key of the future-deal generator when the caller gives none. Future deals cannot be
#: known from a view; :meth:`Take5.determinize` re-keys them anyway.
UNKNOWN_FUTURE = Rng(b"speeltafel.bots.take5_search: future deals are unknown")


# --------------------------------------------------------------------------- the view


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


def engine_action(message: common_pb2.Action) -> Take5Action | None:
    """The engine action of a Take 5 action message (``None`` if it is none)."""
    if message.WhichOneof("game") != "take5":
        return None
    kind = message.take5.WhichOneof("kind")
    if kind == "select":
        return Take5Action(ActionKind.SELECT, message.take5.select.card)
    if kind == "choose_row":
        return Take5Action(ActionKind.ROW, message.take5.choose_row.row)
    return None


# --------------------------------------------------------------------------- cheap policy


def cheap_card(rows: Sequence[Sequence[int]], hand: Sequence[int]) -> int:
    """The gap heuristic (``take5_gap.GapBot``) on engine values: the card least likely to
    take a row, ties to the smallest gap, then the lowest card."""
    cheapest_row = min(total_heads(row) for row in rows)
    best_card = hand[0]
    best_key = (float("inf"), 0, 0)
    for card in hand:
        target: Sequence[int] | None = None
        end = 0
        for row in rows:
            last = row[-1]
            if end < last < card:
                target, end = row, last
        if target is None:
            key = (float(cheapest_row), 0, card)
        else:
            gap = card - end
            if len(target) >= ROW_LIMIT:
                key = (float(total_heads(target)), gap, card)
            else:
                fill = len(target) / ROW_LIMIT
                key = (total_heads(target) * fill * fill * min(1.0, gap / 10), gap, card)
        if key < best_key:
            best_card, best_key = card, key
    return best_card


def cheap_row(rows: Sequence[Sequence[int]]) -> int:
    """The row (numbered from 1) with the fewest heads, ties to the lowest number."""
    return min(range(len(rows)), key=lambda r: (total_heads(rows[r]), r)) + 1


def cheap_action(state: Take5State, seat: int) -> Take5Action:
    """The cheap policy's move for ``seat`` (which must be to act)."""
    if state.phase is Phase.ROW_CHOICE:
        return Take5Action(ActionKind.ROW, cheap_row(state.rows))
    return Take5Action(ActionKind.SELECT, cheap_card(state.rows, state.hands[seat]))


def running_totals(state: Take5State) -> list[int]:
    """Every seat's heads so far in the match: finished deals plus the current pile."""
    return [
        sum(scores[s] for scores in state.deal_scores) + total_heads(state.penalties[s])
        for s in range(state.seats)
    ]


# --------------------------------------------------------------------------- the bot


class SearchBot:
    """Flat Monte Carlo search over determinisations (see the module docstring)."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        *,
        samples: int = 16,
        budget_ms: float | None = 30.0,
        clock_fraction: float = 0.1,
        horizon: int = 2,
        explore: float = 0.25,
        others_weight: float = 0.5,
    ) -> None:
        if samples < 1:
            raise ValueError("samples must be at least 1")
        self._random = random.Random(seed)
        self.samples = samples
        self.budget_ms = budget_ms
        self.clock_fraction = clock_fraction
        self.horizon = horizon
        self.explore = explore
        self.others_weight = others_weight
        self.last_samples = 0  # determinisations used by the last decision
        self.fallbacks = 0  # decisions made without search (no time, or a bad view)

    def budget_seconds(self, view: common_pb2.View) -> float:
        """This decision's time budget: ``budget_ms``, at most ``clock_fraction`` of the
        time the clock has left (inf: no limit)."""
        budget = float("inf") if self.budget_ms is None else self.budget_ms / 1000
        if view.clock.deadline_unix_ms:
            budget = min(budget, view.clock.remaining_ms / 1000 * self.clock_fraction)
        return budget

    def choose(
        self, view: common_pb2.View, legal_actions: Sequence[common_pb2.Action]
    ) -> common_pb2.Action:
        """The legal action with the best mean rollout value."""
        started = time.perf_counter()
        legal = list(legal_actions)
        self.last_samples = 0
        if view.WhichOneof("game_view") != "take5":
            return self._random.choice(legal)
        # Keyed now, so that the bot's random stream does not depend on the view.
        key = self._random.randbytes(32)
        sample_seed = self._random.getrandbits(64)
        actions = [engine_action(a) for a in legal]
        try:
            state = state_from_view(view)
        except (ValueError, KeyError):
            self.fallbacks += 1
            return self._random.choice(legal)
        candidates = [(i, a) for i, a in enumerate(actions) if a is not None]
        if len(candidates) <= 1:
            return legal[candidates[0][0]] if candidates else self._random.choice(legal)
        seat = view.seat
        preferred = cheap_action(state, seat) if seat in GAME.to_act(state) else None
        deadline = started + self.budget_seconds(view)

        sums = [0.0] * len(candidates)
        root = Rng(key)
        for number in range(self.samples):
            sample = GAME.determinize(state, seat, root.derive(f"sample {number}"))
            values: list[float] = []
            for _, action in candidates:
                try:
                    values.append(self._rollout(sample, seat, action, sample_seed + number))
                except EngineError:
                    values.append(float("inf"))  # the server sent what the rules refuse
                if time.perf_counter() > deadline and len(values) < len(candidates):
                    break
            if len(values) < len(candidates):
                break  # out of time in the middle of a sample: it is not counted
            for j, value in enumerate(values):
                sums[j] += value
            self.last_samples += 1
            if time.perf_counter() > deadline:
                break

        if self.last_samples == 0:
            self.fallbacks += 1
            for index, action in candidates:
                if action == preferred:
                    return legal[index]
            return legal[candidates[0][0]]
        best = min(
            range(len(candidates)),
            key=lambda j: (sums[j], candidates[j][1] != preferred, j),
        )
        return legal[candidates[best][0]]

    def _rollout(self, state: Take5State, seat: int, action: Take5Action, seed: int) -> float:
        """Play ``action``, then the cheap policy for every seat to the horizon; the value
        (lower is better) is own heads minus ``others_weight`` x the others' mean heads."""
        before = running_totals(state)
        chooser = random.Random(seed) if self.explore > 0 else None
        deal = state.deal
        current = (state.deal, state.turn)
        turns_left = self.horizon
        s = GAME.apply(state, seat, action)
        while s.phase is not Phase.OVER:
            if (s.deal, s.turn) != current:
                if s.deal != deal or turns_left == 0:
                    break
                turns_left -= 1
                current = (s.deal, s.turn)
            if s.phase is Phase.ROW_CHOICE:
                owner = s.to_place[0][1]
                s = GAME.apply(s, owner, Take5Action(ActionKind.ROW, cheap_row(s.rows)))
                continue
            picks = []
            for other in range(s.seats):
                if s.selected[other] is None:
                    hand = s.hands[other]
                    if chooser is not None and chooser.random() < self.explore:
                        card = hand[chooser.randrange(len(hand))]
                    else:
                        card = cheap_card(s.rows, hand)
                    picks.append((other, card))
            for other, card in picks:
                s = GAME.apply(s, other, Take5Action(ActionKind.SELECT, card))
        after = running_totals(s)
        mine = after[seat] - before[seat]
        others = [after[o] - before[o] for o in range(s.seats) if o != seat]
        return mine - self.others_weight * sum(others) / len(others)
