"""Properties over random matches at 4, 5 and 6 seats (hypothesis picks seeds and a bidding
temper that reaches every kind of contract), and the hidden-information rules of the
section 11 table checked on sampled worlds: voids, the shown blote-miserie hand, sealed
discards, troel aces and partner, the gathered and cut pack."""

from __future__ import annotations

import random
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from kleurenwiezen_helpers import SUIT_HANDS, act, new

from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.kleurenwiezen import (
    ALL_CARDS,
    GAME,
    PASS,
    ActionKind,
    ContractKind,
    DealEnd,
    Phase,
    WiezenAction,
    WiezenState,
    bid,
    cut,
    dealt_positions,
    in_order,
    steekspel,
)

LEVEL_ONE = {ActionKind.ASK, ActionKind.JOIN, ActionKind.ALONE, ActionKind.REASK}
LEVEL_ONE |= {ActionKind.RAISE, ActionKind.PASTROEL}
BIDDING = (Phase.TROEL_AUCTION, Phase.DECLARE, Phase.OPBIEDEN, Phase.MISERIE_RESPONSE)


def choose(chooser: random.Random, legal: tuple[WiezenAction, ...], temper: float) -> WiezenAction:
    """A random move; while bidding, ``temper`` is the weight of passing and of the level-1
    moves against the high bids (which uniform choice would pick nearly always)."""
    if legal[0].kind in (ActionKind.PLAY, ActionKind.DISCARD):
        return chooser.choice(legal)
    quiet = [a for a in legal if a.kind is ActionKind.PASS or a.kind in LEVEL_ONE]
    kleine = [a for a in legal if a.contract is ContractKind.KLEINE_MISERIE]
    roll = chooser.random()
    if roll < temper and quiet:
        return chooser.choice(quiet)
    if roll < temper + 0.1 and kleine:
        return kleine[0]
    return chooser.choice(legal)


def match(seats: int, seed: int, temper: float, **options: str) -> Iterator[WiezenState]:
    """Every state of a random match."""
    chooser = random.Random(seed)
    state = GAME.new(options, seats, Rng(seed.to_bytes(8, "big")))
    yield state
    while to_act := GAME.to_act(state):
        seat = chooser.choice(to_act)
        state = GAME.apply(state, seat, choose(chooser, GAME.legal_actions(state, seat), temper))
        yield state


@settings(max_examples=12, deadline=None)
@given(
    seats=st.integers(4, 6),
    seed=st.integers(0, 2**32),
    temper=st.sampled_from([0.5, 0.8, 0.95]),
)
def test_random_matches_are_zero_sum_and_keep_their_invariants(
    seats: int, seed: int, temper: float
) -> None:
    deals = 3
    last: WiezenState | None = None
    for state in match(seats, seed, temper, deals=str(deals)):
        cards = sorted(c for zone in GAME.zones(state).values() for c in zone)
        assert cards == sorted(ALL_CARDS)
        if state.phase in BIDDING:
            sizes = [len(state.hands[s]) for s in range(seats)]
            assert sizes == [13 if s in state.active else 0 for s in range(seats)]
        if last is not None and len(state.results) > len(last.results):
            result = state.results[-1]
            assert sum(result.points) == 0
            assert all(result.points[s] == 0 for s in range(seats) if s not in last.active)
            assert result.multiplier == (2 if last.doubling and result.end is DealEnd.PLAYED else 1)
            assert state.doubling == (result.end is DealEnd.RONDPAS)
            assert state.scores == tuple(
                map(sum, zip(*(r.points for r in state.results), strict=True))
            )
            if result.end is DealEnd.PLAYED:
                assert result.contract is not None
                assert sum(last.won) + len(last.trick) // 4 <= 13
        last = state
    assert last is not None and last.phase is Phase.OVER
    assert len(last.results) == deals
    outcome = GAME.outcome(last)
    assert outcome is not None and outcome.scores == last.scores


@settings(max_examples=8, deadline=None)
@given(seats=st.integers(4, 6), seed=st.integers(0, 2**32), temper=st.sampled_from([0.8, 0.95]))
def test_sampled_worlds_agree_with_every_view(seats: int, seed: int, temper: float) -> None:
    """D1 on matches that reach troel, kleine miserie, trick auctions and pairs: the world
    looks the same to its seat, offers the same moves, and replays from its deal's start."""
    chooser = random.Random(seed)
    for step, state in enumerate(match(seats, seed, temper, deals="2")):
        if chooser.random() > 0.15:
            continue
        for seat in (*range(seats), None):
            view = GAME.observe(state, seat)
            world = GAME.sample_world(view, Rng(b"%d/%d" % (seed, step)))
            assert GAME.observe(world, seat) == view
            assert GAME.to_act(world) == GAME.to_act(state)
            if seat is not None:
                assert GAME.legal_actions(world, seat) == GAME.legal_actions(state, seat)
            start, actions = GAME.rewind(world)
            for acting, action in actions:
                assert action in GAME.legal_actions(start, acting)
                start = GAME.apply(start, acting, action)
            assert start == world


def kleine_miserie_in_play() -> WiezenState:
    """P2's kleine miserie, discards made, three tricks played by the clock default."""
    state = act(new(), PASS, bid(ContractKind.KLEINE_MISERIE), PASS, PASS)
    for seat in (0, 1, 2, 3):
        state = GAME.apply(state, seat, GAME.default_action(state, seat))
    for _ in range(12):
        state = act(state, GAME.default_action(state, state.turn))
    return state


def test_a_seat_that_showed_out_holds_none_of_that_suit_in_any_world() -> None:
    state = kleine_miserie_in_play()  # P1 leads spades; nobody else holds one
    view = GAME.observe(state, 1)
    for k in range(20):
        world = GAME.sample_world(view, Rng(b"void %d" % k))
        for seat in (2, 3, 0):
            assert not any(c[1] == "S" for c in world.hands[seat])
        assert world.hands[1] == state.hands[1]


def test_sealed_discards_stay_hidden() -> None:
    state = act(new(), PASS, bid(ContractKind.KLEINE_MISERIE), PASS, PASS)
    picks = [GAME.apply(state, 2, GAME.parse_action(f"discard:{c}")) for c in state.hands[2][:3]]
    for viewer in (None, 0, 1, 3):
        views = {GAME.observe(p, viewer) for p in picks}
        assert len(views) == 1
    assert {GAME.observe(p, 2).discard for p in picks} == set(state.hands[2][:3])
    done = kleine_miserie_in_play()
    assert all(e.action.card == "" for e in done.events if e.action.kind is ActionKind.DISCARD)
    worlds = {
        GAME.sample_world(GAME.observe(done, 0), Rng(b"d%d" % k)).discards[2] for k in range(8)
    }
    assert len(worlds) > 1, "another seat's discard is dealt anew in each world"


def test_the_shown_blote_miserie_hand_is_fixed_in_every_world() -> None:
    state = act(new(), PASS, bid(ContractKind.BLOTE_MISERIE), PASS, PASS)
    for _ in range(5):
        state = act(state, GAME.default_action(state, state.turn))
    view = GAME.observe(state, 3)
    assert view.shown == state.hands[2]
    for k in range(5):
        assert GAME.sample_world(view, Rng(b"bm %d" % k)).hands[2] == state.hands[2]


def test_troel_worlds_keep_the_holders_aces_and_the_partner() -> None:
    hands = [["AS", "AD", "AH"], ["AC"]]
    state = new(hands)
    for viewer in (None, 0, 2, 3):
        for k in range(6):
            world = GAME.sample_world(GAME.observe(state, viewer), Rng(b"t %d" % k))
            assert sum(1 for c in world.hands[1] if c[0] == "A") == 3
    state = act(state, PASS, PASS, PASS, PASS)
    assert state.turn == 2  # the partner, holder of the club ace, leads
    for viewer in (None, 0, 3):
        for k in range(6):
            world = GAME.sample_world(GAME.observe(state, viewer), Rng(b"p %d" % k))
            aces = [sum(1 for c in world.hands[s] if c[0] == "A") for s in range(4)]
            assert aces == [0, 3, 1, 0] and world.turn == 2  # some fourth ace, with him
    nobody = new()
    for k in range(10):
        world = GAME.sample_world(GAME.observe(nobody, None), Rng(b"n %d" % k))
        assert world.troel_holder == -1


def test_the_next_pack_is_the_gathered_tricks_cut() -> None:
    state = act(new(deals="2"), PASS, bid(ContractKind.GROTE_MISERIE), PASS, PASS)
    while state.deal_number == 1:
        before = state
        state = act(state, GAME.default_action(state, state.turn))
    (last_card,) = before.hands[before.turn]  # the deal's last card
    plays = [p for t in before.tricks for p in t.plays] + [*before.trick]
    gathered = (*(p.card for p in plays), last_card)
    assert state.pack in {cut(gathered, c) for c in range(4, 49)}
    assert state.pack != gathered
    # A void deal gathers the four hands in the order they were dealt.
    passed = act(new(deals="2"), PASS, PASS, PASS, PASS)
    dealt = tuple(new().pack[i] for p in range(4) for i in dealt_positions(p))
    assert passed.pack in {cut(dealt, c) for c in range(4, 49)}


def test_shuffle_between_deals_and_the_steekspel() -> None:
    shuffled = act(new(deals="2", shuffle_between_deals="true"), PASS, PASS, PASS, PASS)
    dealt = tuple(new().pack[i] for p in range(4) for i in dealt_positions(p))
    assert shuffled.pack not in {cut(dealt, c) for c in range(4, 49)}
    order = tuple(ALL_CARDS[::-1])
    sorted_pack = steekspel(order)
    for p in range(4):
        hand = [order[i] for i in dealt_positions(p)]
        assert sorted_pack[13 * p : 13 * p + 13] == in_order(hand)
    assert cut(order, 4) == order[4:] + order[:4]
    state = GAME.new({"sorted_start": "true"}, 4, Rng(b"steekspel"))
    assert sorted(state.pack) == sorted(ALL_CARDS)


def test_first_dealer_random_and_the_automatic_match_length() -> None:
    dealers = {GAME.new({"first_dealer": "random"}, 6, Rng(b"%d" % k)).dealer for k in range(30)}
    assert len(dealers) > 2
    for seats in (4, 5, 6):
        assert GAME.new({}, seats, Rng(b"x")).deals == 4 * seats
    assert GAME.new({"deals": "7"}, 5, Rng(b"x")).deals == 7


def test_the_clock_defaults() -> None:
    state = new(more=[SUIT_HANDS])
    assert GAME.default_action(state, 1) == PASS
    km = act(state, PASS, bid(ContractKind.KLEINE_MISERIE), PASS, PASS)
    for seat in range(4):
        assert GAME.default_action(km, seat).card == km.hands[seat][0]
    gm = act(new(), PASS, bid(ContractKind.GROTE_MISERIE), PASS, PASS)
    assert GAME.default_action(gm, 1) == GAME.legal_actions(gm, 1)[0]
    assert str(GAME.default_action(gm, 1)) == "play:2S"
