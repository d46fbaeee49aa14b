"""An exact (double-dummy) solver of Kleurenwiezen card play: the search bot's evaluator
of a sampled world once few tricks are left.

In a world every hand is known, so the rest of the deal is a two-sided game of perfect
information: the declaring side against the opponents (the classic Perfect Information
Monte Carlo of bridge programs: solve each sampled world exactly, average over worlds).
:meth:`WiezenSolver.points` solves it and returns every seat's points for the deal, as the
engine's ``score_deal`` scores the result of optimal play by both sides.

Only the score-relevant quantity is searched: the tricks the declaring side takes (every
trick of a pair or troel; a soloist's up to 8, beyond which the score does not rise), for
abondance and solo slim only whether the target is made, for a miserie only whether the
declarer takes a trick (there the opponents are the side that wants tricks, the
declarer's). Each question "can the side take at least ``need`` more tricks?" is an
alpha-beta search card by card over bitmask hands, with

* equivalent cards merged: cards of one hand in one suit with no other live card between
  them (played cards do not separate) are one move;
* move ordering: a leader tries high cards first; a follower whose side is winning the
  trick plays low, otherwise the cheapest card that wins first;
* a transposition table keyed by the four hands and the leader at every trick's start,
  holding the lower and upper bound of the side's tricks from there proved so far; it is
  kept across questions, worlds and decisions of the same contract (its positions are
  the same), and cleared when it grows beyond ``table_limit`` entries.

The exact number is found by a binary search over the thresholds that change the score.
States the solver does not handle (no contract, a two-declarer kleine miserie, whose
declarers do not form one side, and a three-ace troel before its trump is named) and
states with more than ``reach`` tricks left get None: the search bot plays those on with
its rollouts instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from speeltafel.server.engine.games.kleurenwiezen import (
    RANKS,
    SUITS,
    ActionKind,
    Contract,
    ContractKind,
    Phase,
    WiezenAction,
    WiezenObservation,
    WiezenState,
    score_deal,
)

_FULL = (1 << 13) - 1
_SUIT_INDEX = {suit: i for i, suit in enumerate(SUITS)}
_MISERIES = (ContractKind.KLEINE_MISERIE, ContractKind.GROTE_MISERIE, ContractKind.BLOTE_MISERIE)
Hands = list[int]


def card_index(card: str) -> int:
    """The card's bit: 13 per suit in ``SUITS`` order, two lowest."""
    return _SUIT_INDEX[card[1]] * 13 + RANKS.index(card[0])


def hand_mask(cards: Sequence[str]) -> int:
    """The bitmask of ``cards``."""
    mask = 0
    for card in cards:
        mask |= 1 << card_index(card)
    return mask


class TrickSearch:
    """Exact searches over one deal's play: four hands in play order (position 0..3, the
    next position plays after), a trump (suit index, -1 none), the positions whose tricks
    are counted and the positions that want the count high (the others want it low)."""

    def __init__(
        self,
        trump: int,
        counted: Sequence[bool],
        maximizing: Sequence[bool],
        table: dict[tuple[int, int, int, int, int], tuple[int, int]] | None = None,
    ) -> None:
        self.trump = trump
        self.counted = tuple(counted)
        self.maximizing = tuple(maximizing)
        self.table = {} if table is None else table
        self.nodes = 0

    def max_tricks(self, hands: Sequence[int], leader: int, trick: Sequence[int] = ()) -> int:
        """The counted tricks from here (the trick in progress, ``trick``'s cards played from
        ``leader`` on, included) under optimal play of both sides."""
        mover = (leader + len(trick)) & 3
        return self.threshold(hands, leader, trick, range(1, hands[mover].bit_count() + 1))

    def threshold(
        self, hands: Sequence[int], leader: int, trick: Sequence[int], needs: Sequence[int]
    ) -> int:
        """The largest of the ascending ``needs`` that the side can force (``at_least``), or
        one less than the first when it forces none: the answer's class for a score that
        changes only at those counts."""
        lo, hi = 0, len(needs)  # needs[:lo] are forced, needs[hi:] are not
        while lo < hi:
            mid = (lo + hi) // 2
            if self.at_least(hands, leader, trick, needs[mid]):
                lo = mid + 1
            else:
                hi = mid
        return needs[lo - 1] if lo > 0 else (needs[0] - 1 if needs else 0)

    def at_least(self, hands: Sequence[int], leader: int, trick: Sequence[int], need: int) -> bool:
        """Whether the maximizing side can make the counted tricks from here at least
        ``need`` whatever the others play."""
        work = list(hands)
        if not trick:
            return self._trick(work, leader, need)
        live = work[0] | work[1] | work[2] | work[3]
        win_pos, win_card = leader, trick[0]
        for i, card in enumerate(trick):
            position = (leader + i) & 3
            work[position] &= ~(1 << card)
            live |= 1 << card
            if i and self._beats(card, win_card):
                win_pos, win_card = position, card
        return self._node(work, leader, list(trick), need, win_pos, win_card, live)

    def _beats(self, card: int, best: int) -> bool:
        """Whether ``card`` takes the trick from ``best``, the card winning it so far."""
        if card // 13 == best // 13:
            return card > best
        return card // 13 == self.trump

    def _trick(self, hands: Hands, leader: int, need: int) -> bool:
        """``at_least`` at the start of a trick (hands without the played cards)."""
        if need <= 0:
            return True
        remaining = hands[leader].bit_count()
        if need > remaining:
            return False
        if remaining == 1:  # the last trick plays itself
            cards = [hands[(leader + i) & 3].bit_length() - 1 for i in range(4)]
            return self.counted[(leader + self._winner(cards)) & 3] >= need
        key = (hands[0], hands[1], hands[2], hands[3], leader)
        lo, hi = self.table.get(key, (0, remaining))
        if lo >= need:
            return True
        if hi < need:
            return False
        live = hands[0] | hands[1] | hands[2] | hands[3]
        result = self._node(hands, leader, [], need, -1, -1, live)
        if result:
            lo = need
        else:
            hi = need - 1
        self.table[key] = (lo, hi)
        return result

    def _node(
        self,
        hands: Hands,
        leader: int,
        trick: list[int],
        need: int,
        win_pos: int,
        win_card: int,
        live: int,
    ) -> bool:
        """``at_least`` with ``trick``'s cards played from ``leader`` on (``win_pos`` plays
        the winning ``win_card`` so far); ``live``: the cards in hands and in the trick."""
        self.nodes += 1
        played = len(trick)
        mover = (leader + played) & 3
        maximizing = self.maximizing[mover]
        trump = self.trump
        moves = self._moves(hands[mover], live, trick, maximizing, win_pos, win_card)
        for card in moves:
            bit = 1 << card
            if played == 0:
                position, best = mover, card
            elif card // 13 == win_card // 13:
                position, best = (mover, card) if card > win_card else (win_pos, win_card)
            elif card // 13 == trump:
                position, best = mover, card
            else:
                position, best = win_pos, win_card
            hands[mover] ^= bit
            if played == 3:
                result = self._trick(hands, position, need - self.counted[position])
            else:
                trick.append(card)
                result = self._node(hands, leader, trick, need, position, best, live)
                trick.pop()
            hands[mover] ^= bit
            if result is maximizing:
                return result
        return not maximizing

    def _winner(self, trick: Sequence[int]) -> int:
        """The index in ``trick`` of the card that takes it."""
        best = 0
        for i in range(1, len(trick)):
            if self._beats(trick[i], trick[best]):
                best = i
        return best

    def _moves(
        self,
        mine: int,
        live: int,
        trick: Sequence[int],
        maximizing: bool,
        win_pos: int,
        win_card: int,
    ) -> Sequence[int]:
        """The mover's legal cards, one per group of equivalent cards, in search order: a
        leader high first; a follower whose side wins the trick low first, otherwise the
        cheapest card that wins first, then low."""
        trump = self.trump
        if trick:
            led = trick[0] // 13
            shift = 13 * led
            held = (mine >> shift) & _FULL
            if held:  # following suit
                cards = _groups(led, held, (live >> shift) & _FULL)[1]
                if len(cards) <= 1 or self.maximizing[win_pos] is maximizing:
                    return cards
                if win_card // 13 != led:  # trumped: nothing wins
                    return cards
                return [c for c in cards if c > win_card] + [c for c in cards if c < win_card]
        moves: list[int] = []
        for suit in range(4):
            held = (mine >> (13 * suit)) & _FULL
            if held:
                moves += _groups(suit, held, (live >> (13 * suit)) & _FULL)[0]
        if len(moves) <= 1:
            return moves
        if not trick:
            moves.sort(key=_minus_rank)
            return moves
        # A discard or a ruff.
        moves.sort(key=_rank)
        plain = [c for c in moves if c // 13 != trump]
        trumps = [c for c in moves if c // 13 == trump]
        if self.maximizing[win_pos] is maximizing or not trumps:
            return plain + trumps
        if win_card // 13 == trump:
            ruffs = [c for c in trumps if c > win_card]
            return ruffs + plain + [c for c in trumps if c < win_card]
        return trumps + plain


_GROUPS: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}


def _groups(suit: int, held: int, alive: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One card (its index) per run of ``held`` ranks with no other ``alive`` rank between:
    high first, and low first."""
    key = suit | held << 2 | alive << 15
    found = _GROUPS.get(key)
    if found is None:
        cards: list[int] = []
        previous_mine = False
        for rank in range(12, -1, -1):
            if not (alive >> rank) & 1:
                continue
            if (held >> rank) & 1:
                if not previous_mine:
                    cards.append(suit * 13 + rank)
                previous_mine = True
            else:
                previous_mine = False
        found = _GROUPS[key] = (tuple(cards), tuple(reversed(cards)))
    return found


def _rank(card: int) -> int:
    return card % 13


def _minus_rank(card: int) -> int:
    return -(card % 13)


Table = dict[tuple[int, int, int, int, int], tuple[int, int]]


class WiezenSolver:
    """The exact result of a world's card play (module docstring), for the search bot."""

    def __init__(self, table_limit: int = 200_000) -> None:
        self.table_limit = table_limit
        self._tables: dict[tuple[object, ...], Table] = {}
        self._size = 0
        self.solved = 0  # worlds (states) solved
        self.nodes = 0  # search nodes visited, over all solves

    def points(self, state: WiezenState, reach: int) -> tuple[int, ...] | None:
        """Every seat's points for the deal of ``state`` (the play phase) when both sides
        play the rest perfectly with all hands known; None when the state is not a
        two-sided play (no contract, two kleine-miserie declarers, a three-ace troel before
        trump is named) or more than ``reach`` tricks are left."""
        contract = state.contract
        if state.phase is not Phase.PLAY or contract is None:
            return None
        if contract.kind is ContractKind.KLEINE_MISERIE and len(contract.declarers) != 1:
            return None
        trick = state.trick
        naming = not state.tricks or (len(state.tricks) == 1 and not trick)
        if contract.kind is ContractKind.TROEL and state.troel_aces == 3 and naming:
            return None  # the lead to trick 2 names trump
        active = state.active
        leader = active.index(trick[0].seat if trick else state.leader)
        mover = (leader + len(trick)) & 3
        remaining = len(state.hands[active[mover]])
        if remaining > reach:
            return None
        declaring = [seat in contract.declarers for seat in active]
        miserie = contract.kind in _MISERIES
        taken = sum(state.won[s] for s in contract.declarers)
        needs = self._needs(contract, state.target, taken, remaining)
        more = 0
        if needs:
            maximizing = [not d for d in declaring] if miserie else declaring
            key = (contract, state.trump, tuple(active))
            table = self._tables.get(key)
            if table is None or self._size > self.table_limit:
                if self._size > self.table_limit:
                    self._tables.clear()
                    self._size = 0
                table = self._tables.setdefault(key, {})
            before = len(table)
            search = TrickSearch(
                _SUIT_INDEX[state.trump] if state.trump else -1, declaring, maximizing, table
            )
            hands = [hand_mask(state.hands[seat]) for seat in active]
            cards = [card_index(p.card) for p in trick]
            for i, card in enumerate(cards):  # the trick's cards are out of the hands
                hands[(leader + i) & 3] &= ~(1 << card)
            more = search.threshold(hands, leader, cards, needs)
            self._size += len(table) - before
            self.nodes += search.nodes
        self.solved += 1
        won = [0] * state.players
        won[contract.declarers[0]] = taken + more
        multiplier = 2 if state.doubling else 1
        return score_deal(contract, won, state.target, multiplier, active, state.players)

    @staticmethod
    def representatives(
        observation: WiezenObservation, actions: Sequence[WiezenAction]
    ) -> list[int]:
        """For every action, the index of the first equivalent one: two cards of the seat's
        hand in one suit are equivalent when no live card (not yet played, or in the trick
        in progress) of another hand lies between them, so that they win and lose the same
        tricks in every world; any other action is its own."""
        played = {p.card for t in observation.tricks for p in t.plays}
        if observation.discard:
            played.add(observation.discard)
        mine = set(observation.hand)
        group: dict[str, int] = {}  # card: its run's first index
        first: list[int] = []
        for i, action in enumerate(actions):
            card = action.card if action.kind is ActionKind.PLAY else ""
            if not card or card not in mine:
                first.append(i)
                continue
            suit, rank = card[1], RANKS.index(card[0])
            index = i
            for other, j in group.items():
                if other[1] != suit:
                    continue
                low, high = sorted((rank, RANKS.index(other[0])))
                between = (RANKS[r] + suit for r in range(low + 1, high))
                if all(c in played or c in mine for c in between):
                    index = j
                    break
            group[card] = index
            first.append(index)
        return first

    @staticmethod
    def _needs(contract: Contract, target: int, taken: int, remaining: int) -> list[int]:
        """The counts of further declarer tricks at which the deal's score changes, within
        1..remaining (empty: nothing left to decide)."""
        kind = contract.kind
        if kind in _MISERIES:
            wanted = [1 - taken]  # one trick of the declarer's defeats him
        elif kind in (ContractKind.ABONDANCE, ContractKind.SOLO_SLIM):
            wanted = [(13 if kind is ContractKind.SOLO_SLIM else target) - taken]
        elif kind is ContractKind.ALONE:
            # Tricks beyond the 8th (or the bid, when higher) do not count.
            wanted = list(range(1, max(8, target) - taken + 1))
        else:  # a pair or troel: every trick counts
            wanted = list(range(1, remaining + 1))
        return [n for n in wanted if 1 <= n <= remaining]
