"""Sneaky Bastard scenarios: both worked examples of shared/rules/sneaky_bastard.md section
11 step by step with the exact state after each step, the section's further checks, and
edge cases of the sale, the forced bidder (D3), the skips (D4) and the clock defaults.

Positions are built with ``dataclasses.replace`` on a state dealt from a preset house
order (the cards a position leaves out are put among the discarded ones, so that card
conservation still holds); from there they are driven only through ``GAME.apply``. Both
examples are also reached from the start of a game through moves alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import pytest

from speeltafel.server.engine.core import (
    GameOver,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    NotYourTurn,
    Rng,
)
from speeltafel.server.engine.games.sneaky_bastard import (
    BID,
    GAME,
    PASS,
    RAISE,
    SNEAK,
    Card,
    CardKind,
    Phase,
    RoundResult,
    SneakyBastardAction,
    SneakyBastardState,
    Status,
    add,
    known_hands,
    sort_cards,
)

SEED = Rng(b"sneaky bastard scenarios")
B, S, OUT, U = Status.BIDDER, Status.SNEAK, Status.OUT, Status.BUYER


def m(value: int) -> Card:
    return Card(CardKind.MONEY, value)


def h(value: int) -> Card:
    return Card(CardKind.HOUSE, value)


FULL = (m(10), m(25), m(100), m(250), m(500))
HOUSE_ORDER = [400, 200, 100, 150, 250, 300, 500, 600]


def houses(order: Sequence[int]) -> dict[str, list[list[str]]]:
    return {"houses": [[f"house:{v}" for v in order]]}


def assert_conserved(state: SneakyBastardState) -> None:
    cards = sorted(c for zone in GAME.zones(state).values() for c in zone)
    assert cards == sorted(GAME.deck(state))


def position(
    hands: Sequence[Sequence[Card]],
    house: int,
    *,
    start: int = 0,
    deck: Sequence[int] = (),
    options: dict[str, str] | None = None,
) -> SneakyBastardState:
    """A round's first turn with exactly these hands; ``house`` on offer, ``deck`` below
    (top first, the preview first); every other house and money card is discarded."""
    state = GAME.new(options or {}, len(hands), SEED)
    placed = sorted((c for hand in hands for c in hand), key=str)
    value_cards = [text for text in GAME.deck(state) if not text.startswith("sneaky:")]
    everything = [GAME.parse_action(f"add:{text}").card for text in value_cards]
    left = [c for c in everything if c is not None]
    for card in (*placed, h(house), *(h(v) for v in deck)):
        left.remove(card)
    state = replace(
        state,
        round=len(state.houses) - len(deck),
        house=h(house),
        deck=tuple(h(v) for v in deck),
        start_player=start,
        turn=start,
        hands=tuple(sort_cards(hand) for hand in hands),
        discarded=tuple(left),
    )
    assert_conserved(state)
    return state


def play(state: SneakyBastardState, seat: int, *steps: SneakyBastardAction) -> SneakyBastardState:
    """``seat`` plays ``steps`` (its one turn, in steps); every step legal at its moment."""
    for step in steps:
        assert GAME.to_act(state) == (seat,), f"seat {seat} is not to act before {step}"
        assert step in GAME.legal_actions(state, seat), f"{step} is not legal for {seat}"
        state = GAME.apply(state, seat, step)
        assert_conserved(state)
    return state


def bid(*cards: Card) -> tuple[SneakyBastardAction, ...]:
    return (*(add(c) for c in cards), BID)


def sneak(*cards: Card) -> tuple[SneakyBastardAction, ...]:
    return (*(add(c) for c in cards), SNEAK)


def raise_(*cards: Card) -> tuple[SneakyBastardAction, ...]:
    return (*(add(c) for c in cards), RAISE)


def refused(state: SneakyBastardState, seat: int, action: SneakyBastardAction) -> str:
    """The rule of the refusal (the state is unchanged)."""
    before = GAME.encode(state)
    with pytest.raises((IllegalAction, NotYourTurn, GameOver, InvalidAction)) as caught:
        GAME.apply(state, seat, action)
    assert GAME.encode(state) == before
    return caught.value.rule


# --------------------------------------------------------------------------- example 1

LISA, FRANK, FLEUR = 0, 1, 2


def example_1() -> SneakyBastardState:
    lisa = (m(10), m(25), m(100), m(250), h(200))  # her 500K spent earlier
    return position([lisa, FULL, FULL], 400, deck=[100, 150, 250, 300, 500, 600])


def test_example_1_lisa_outbids_frank_with_a_house_and_her_bid_is_discarded() -> None:
    state = example_1()
    assert state.house == h(400) and state.deck[0] == h(100)  # the preview
    assert GAME.to_act(state) == (LISA,)

    state = play(state, LISA, *bid(m(100)))  # 1
    assert state.fronts == ((m(100),), (), ()) and state.statuses == (B, B, B)
    assert GAME.to_act(state) == (FRANK,)

    state = play(state, FRANK, *bid(m(500)))  # 2
    assert state.fronts == ((m(100),), (m(500),), ())
    assert GAME.observe(state, None).bids == (100, 500, 0)

    state = play(state, FLEUR, PASS)  # 3
    assert state.statuses == (B, B, OUT) and state.hands[FLEUR] == FULL
    assert GAME.to_act(state) == (LISA,)

    # 4: money alone reaches at most 100 + 10 + 25 + 250 = 385, below 500.
    probe = play(state, LISA, add(m(10)), add(m(25)), add(m(250)))
    assert BID not in GAME.legal_actions(probe, LISA)
    assert refused(probe, LISA, BID) == "bid_too_low"
    state = play(state, LISA, *bid(h(200), m(250)))
    assert state.fronts == ((m(100), h(200), m(250)), (m(500),), ())
    assert GAME.observe(state, None).bids == (550, 500, 0)
    assert GAME.to_act(state) == (FRANK,)

    state = play(state, FRANK, PASS)  # 5: Frank takes back his 500K ... 6: Lisa buys
    assert state.hands[FRANK] == FULL
    assert state.results[-1] == RoundResult(
        round=2,
        house=h(400),
        start_player=LISA,
        buyer=LISA,
        price=(m(100), h(200), m(250)),
        sneaky_winner=None,
        sneaky_bid=(),
    )
    assert state.hands[LISA] == (m(10), m(25), h(400))
    assert {m(100), h(200), m(250)} <= set(state.discarded)
    # The next round: the preview is on offer, Lisa starts.
    assert state.round == 3 and state.house == h(100) and state.deck[0] == h(150)
    assert state.start_player == LISA and GAME.to_act(state) == (LISA,)
    assert state.statuses == (B, B, B) and state.fronts == ((), (), ())


def test_example_1_reached_from_the_start_of_a_game() -> None:
    """Round 1: Lisa buys Driehoog achter for her 500K; round 2 is example 1."""
    state = GAME.new({}, 3, SEED, houses([200, 400, 100, 150, 250, 300, 500, 600]))
    assert state.house == h(200) and state.deck[0] == h(400)
    state = play(state, LISA, *bid(m(500)))
    state = play(state, FRANK, PASS)
    state = play(state, FLEUR, PASS)
    assert state.round == 2 and state.house == h(400) and GAME.to_act(state) == (LISA,)
    assert state.hands == ((m(10), m(25), m(100), m(250), h(200)), FULL, FULL)
    state = play(state, LISA, *bid(m(100)))
    state = play(state, FRANK, *bid(m(500)))
    state = play(state, FLEUR, PASS)
    state = play(state, LISA, *bid(h(200), m(250)))
    state = play(state, FRANK, PASS)
    assert state.hands[LISA] == (m(10), m(25), h(400))
    assert state.discarded == (m(500), m(100), h(200), m(250))


# --------------------------------------------------------------------------- example 2

E2_LISA, E2_FRANK, E2_ROBIN, E2_FLEUR = 0, 1, 2, 3


def example_2() -> SneakyBastardState:
    # The game has four 10K cards: Frank's second one is Fleur's (she bids only 25K).
    frank = (m(10), m(10), m(25), m(100), m(250), m(500))
    fleur = (m(25), m(100), m(250), m(500))
    return position([FULL, frank, FULL, fleur], 200, deck=[100, 150, 250, 300, 400, 500, 600])


def test_example_2_lisa_wins_the_sneaky_bastard_auction() -> None:
    state = example_2()
    state = play(state, E2_LISA, *bid(m(10)))  # 1
    assert GAME.observe(state, None).bids == (10, 0, 0, 0)
    state = play(state, E2_FRANK, *bid(m(10), m(10)))  # 2
    assert GAME.observe(state, None).bids == (10, 20, 0, 0)
    state = play(state, E2_ROBIN, SNEAK)  # 3: an SB bid of 0
    assert state.statuses == (B, B, S, B) and state.fronts[E2_ROBIN] == ()
    state = play(state, E2_FLEUR, *bid(m(25)))  # 4
    assert GAME.observe(state, None).bids == (10, 20, 0, 25)

    state = play(state, E2_LISA, SNEAK)  # 5: her 10K is now an SB bid of 10 (> 0)
    assert state.statuses == (S, B, S, B)
    assert GAME.observe(state, None).bids == (10, 20, 0, 25)
    assert GAME.to_act(state) == (E2_FRANK,)

    state = play(state, E2_FRANK, *bid(m(100)))  # 6
    assert GAME.observe(state, None).bids == (10, 120, 0, 25)
    assert GAME.to_act(state) == (E2_ROBIN,)  # not the leader (0 < 10), another sneak

    state = play(state, E2_ROBIN, *raise_(m(25)))  # 7
    assert GAME.observe(state, None).bids == (10, 120, 25, 25)

    state = play(state, E2_FLEUR, PASS)  # 8: the sale
    assert state.hands[E2_FLEUR] == (m(25), m(100), m(250), m(500))
    assert state.phase is Phase.SNEAKY_AUCTION
    assert state.statuses == (S, U, S, OUT)
    assert h(200) in state.hands[E2_FRANK]
    assert state.fronts[E2_FRANK] == (m(10), m(10), m(100))
    assert GAME.to_act(state) == (E2_LISA,)  # after Fleur, clockwise; Lisa trails (10 < 25)

    state = play(state, E2_LISA, *raise_(m(25)))  # 9: 35
    assert GAME.observe(state, None).bids == (35, 120, 25, 0)
    assert GAME.to_act(state) == (E2_ROBIN,)  # 10: Frank (the buyer) is skipped

    lisa_before = FULL
    state = play(state, E2_ROBIN, PASS)  # 11, 12
    assert state.hands[E2_ROBIN] == FULL
    assert state.sneaky_cards == (False, True, True, True)
    result = state.results[-1]
    assert result == RoundResult(
        round=result.round,
        house=h(200),
        start_player=E2_LISA,
        buyer=E2_FRANK,
        price=(m(10), m(10), m(100)),
        sneaky_winner=E2_LISA,
        sneaky_bid=(m(10), m(25)),
    )
    # The money flow: Lisa +120 - 35 = +85 and one SB card fewer; Frank -120, +1 house.
    lisa_money = sum(c.value for c in state.hands[E2_LISA])
    assert lisa_money - sum(c.value for c in lisa_before) == 85
    assert state.hands[E2_LISA] == (m(10), m(10), m(100), m(100), m(250), m(500))
    assert state.hands[E2_FRANK] == (m(25), m(250), m(500), h(200))
    assert state.discarded[-2:] == (m(10), m(25))
    assert state.hands[E2_FLEUR] == (m(25), m(100), m(250), m(500))
    assert GAME.to_act(state) == (E2_FRANK,) and state.start_player == E2_FRANK
    assert state.house == h(100)


def test_example_2_further_checks() -> None:
    state = example_2()
    state = play(state, E2_LISA, *bid(m(10)))
    # A house bid must be strictly higher: Frank's one 10K would tie Lisa's 10.
    tie = play(state, E2_FRANK, add(m(10)))
    assert BID not in GAME.legal_actions(tie, E2_FRANK)
    assert refused(tie, E2_FRANK, BID) == "bid_too_low"
    assert BID in GAME.legal_actions(play(tie, E2_FRANK, add(m(10))), E2_FRANK)
    state = play(state, E2_FRANK, *bid(m(10), m(10)))
    state = play(state, E2_ROBIN, SNEAK)
    state = play(state, E2_FLEUR, *bid(m(25)))
    # Lone sneak waits: had Lisa not sneaked, Robin is skipped (4 -> 1 -> 3 ...).
    waited = play(state, E2_LISA, PASS)
    assert GAME.to_act(waited) == (E2_FRANK,)
    waited = play(waited, E2_FRANK, *bid(m(100)))
    assert GAME.to_act(waited) == (E2_FLEUR,)  # Robin, the only sneak, is skipped
    assert GAME.legal_actions(waited, E2_ROBIN) == ()
    assert refused(waited, E2_ROBIN, PASS) == "not_your_turn"


def test_an_sb_bid_must_beat_the_highest_sb_bid() -> None:
    """Robin at 0 and Lisa sneaking with a total of 0: refused."""
    again = example_2()
    again = play(again, E2_LISA, *bid(m(10)))
    again = play(again, E2_FRANK, *bid(m(10), m(10)))
    again = play(again, E2_ROBIN, SNEAK)
    again = play(again, E2_FLEUR, *bid(m(25)))
    zero = replace(again, fronts=((), *again.fronts[1:]), hands=(FULL, *again.hands[1:]))
    assert SNEAK not in GAME.legal_actions(zero, E2_LISA)
    assert refused(zero, E2_LISA, SNEAK) == "sneak_too_low"
    assert SNEAK in GAME.legal_actions(play(zero, E2_LISA, add(m(10))), E2_LISA)


def test_example_2_reached_from_the_start_of_a_game() -> None:
    """Round 1: Fleur buys for 10K and Frank steals it with an SB bid of 0; round 2: Lisa
    buys for 500K. Round 3 is example 2 (Frank's SB card is gone; he does not sneak)."""
    state = GAME.new({}, 4, SEED, houses([100, 150, 200, 250, 300, 400, 500, 600]))
    state = play(state, E2_LISA, PASS)
    state = play(state, E2_FRANK, SNEAK)
    state = play(state, E2_ROBIN, PASS)  # Fleur is the only bidder, with nothing: forced
    assert GAME.observe(state, None).forced
    assert GAME.legal_actions(state, E2_FLEUR)[0] == add(m(10))
    state = play(state, E2_FLEUR, *bid(m(10)))
    assert state.results[-1].sneaky_winner == E2_FRANK
    state = play(state, E2_FLEUR, PASS)  # round 2: Fleur starts
    state = play(state, E2_LISA, *bid(m(500)))
    state = play(state, E2_FRANK, PASS)
    state = play(state, E2_ROBIN, PASS)
    assert state.round == 3 and state.house == h(200) and GAME.to_act(state) == (E2_LISA,)
    state = play(state, E2_LISA, *bid(m(10)))
    state = play(state, E2_FRANK, *bid(m(10), m(10)))
    state = play(state, E2_ROBIN, SNEAK)
    state = play(state, E2_FLEUR, *bid(m(25)))
    state = play(state, E2_LISA, SNEAK)
    state = play(state, E2_FRANK, *bid(m(100)))
    state = play(state, E2_ROBIN, *raise_(m(25)))
    state = play(state, E2_FLEUR, PASS)
    state = play(state, E2_LISA, *raise_(m(25)))
    before = sum(c.value for c in state.hands[E2_LISA] if c.kind is CardKind.MONEY) + 35
    state = play(state, E2_ROBIN, PASS)
    assert sum(c.value for c in state.hands[E2_LISA] if c.kind is CardKind.MONEY) == before + 85
    assert state.sneaky_cards == (False, False, True, True)
    assert GAME.to_act(state) == (E2_FRANK,)
    assert known_hands(GAME.observe(state, None)) == state.hands


# --------------------------------------------------------------------------- edge cases


def test_a_free_house_returns_the_sneaks_cards() -> None:
    state = position([FULL, FULL, (m(10),)], 400, deck=[100, 600], options={"minimum_bid": "20"})
    state = play(state, 0, *sneak(m(25)))
    state = play(state, 1, PASS)  # seat 2 is the only bidder, with 10 < 20: free house
    assert state.results[-1] == RoundResult(
        round=state.results[-1].round,
        house=h(400),
        start_player=0,
        buyer=2,
        price=(),
        sneaky_winner=None,
        sneaky_bid=(),
    )
    assert state.hands[0] == FULL and state.sneaky_cards == (True, True, True)
    assert state.hands[2] == (m(10), h(400))
    assert GAME.to_act(state) == (2,) and state.house == h(100)


def test_the_forced_bidder_must_bid_and_his_clock_default_lays_the_smallest_cards() -> None:
    state = position([FULL, FULL, FULL], 400, deck=[100], options={"minimum_bid": "30"})
    state = play(state, 0, PASS)
    state = play(state, 1, PASS)
    assert GAME.to_act(state) == (2,) and GAME.observe(state, 2).forced
    legal = GAME.legal_actions(state, 2)
    assert PASS not in legal and SNEAK not in legal and BID not in legal
    assert refused(state, 2, PASS) == "forced_bid"
    assert GAME.default_action(state, 2) == add(m(10))
    state = GAME.apply(state, 2, add(m(10)))
    assert GAME.default_action(state, 2) == add(m(25))
    state = GAME.apply(state, 2, add(m(25)))
    assert GAME.default_action(state, 2) == BID
    state = GAME.apply(state, 2, BID)
    assert state.results[-1].buyer == 2 and state.results[-1].price == (m(10), m(25))


def test_the_clock_default_is_pass_for_everyone_else() -> None:
    state = example_2()
    assert GAME.default_action(state, E2_LISA) == PASS
    state = play(state, E2_LISA, add(m(100)))
    assert GAME.default_action(state, E2_LISA) == PASS
    state = GAME.apply(state, E2_LISA, PASS)  # a pass mid-turn returns what was laid
    assert state.hands[E2_LISA] == FULL and state.statuses[E2_LISA] is OUT


def test_a_lone_sneak_at_the_sale_wins_at_once() -> None:
    state = position([FULL, FULL, FULL], 400, deck=[100])
    state = play(state, 0, *bid(m(250)))
    state = play(state, 1, SNEAK)
    state = play(state, 2, PASS)  # seat 0 buys; seat 1, the lone sneak, takes the 250
    assert state.results[-1].sneaky_winner == 1 and state.results[-1].price == (m(250),)
    assert state.hands[1] == sort_cards((*FULL, m(250)))
    assert state.hands[0] == (m(10), m(25), m(100), m(500), h(400))


def test_the_leading_sneak_is_skipped_d4() -> None:
    state = position([FULL, FULL, FULL, FULL], 400, deck=[100])
    state = play(state, 0, *bid(m(10)))
    state = play(state, 1, *sneak(m(25)))
    state = play(state, 2, *sneak(m(100)))  # leads the sneaks at 100
    state = play(state, 3, *bid(m(25)))
    assert GAME.to_act(state) == (0,)
    state = play(state, 0, *bid(m(100)))
    assert GAME.to_act(state) == (1,)  # trails at 25: must raise or pass
    state = play(state, 1, *raise_(m(250)))  # 275 leads now
    assert GAME.to_act(state) == (2,)  # seat 2 trails now
    assert RAISE not in GAME.legal_actions(state, 2)  # nothing laid yet
    state = play(state, 2, PASS)
    assert GAME.to_act(state) == (3,)  # seat 1 leads and is the only sneak: skipped anyway


def test_no_second_sneak_once_the_card_is_gone_and_a_sold_house_takes_no_sneak() -> None:
    state = position([FULL, FULL, FULL], 400, deck=[100, 150])
    state = replace(state, sneaky_cards=(False, True, True))
    assert SNEAK not in GAME.legal_actions(state, 0)
    assert refused(state, 0, SNEAK) == "no_sneaky_card"


def test_the_game_ends_after_the_last_house_and_money_breaks_the_tie() -> None:
    """A holds 400 + 150, B 550: tied at 550, the higher money total wins."""
    state = position(
        [(m(10), h(400)), (m(25), h(550)), (m(10),)],
        150,
        options={"houses": "100,150,200,250,300,400,550,600"},
    )
    state = play(state, 0, *bid(m(10)))
    state = play(state, 1, PASS)
    state = play(state, 2, PASS)
    assert state.phase is Phase.OVER and GAME.to_act(state) == ()
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.scores == (550, 550, 0)
    assert outcome.ranks == (2, 1, 3)  # B kept 25 in money, A nothing
    assert refused(state, 0, PASS) == "game_over"


def test_three_seats_play_with_fifteen_money_cards_and_three_sneaky_cards() -> None:
    state = GAME.new({}, 3, SEED)
    deck = GAME.deck(state)
    assert sum(1 for c in deck if c.startswith("money:")) == 15
    assert sum(1 for c in deck if c.startswith("sneaky:")) == 3
    assert sum(1 for c in deck if c.startswith("house:")) == 8
    with pytest.raises(InvalidOptions):
        GAME.new({}, 2, SEED)
    with pytest.raises(InvalidOptions):
        GAME.new({}, 5, SEED)


def test_options_money_and_houses_are_lists_with_the_rules_defaults() -> None:
    specs = {spec.name: spec for spec in GAME.info.options}
    assert specs["money"].default == "10,25,100,250,500"
    assert specs["houses"].default == "100,150,200,250,300,400,500,600"
    assert specs["minimum_bid"].default == "10"
    assert (GAME.info.score_name, GAME.info.lower_is_better) == ("houses", False)
    assert [deck.name for deck in GAME.info.decks] == ["houses"]
    state = GAME.new({"houses": "300,200,100"}, 3, SEED)
    assert len(state.deck) + 1 == 3  # three rounds
    random_start = {
        GAME.new({"first_player": "random"}, 4, Rng(bytes([i]))).start_player for i in range(30)
    }
    assert random_start == {0, 1, 2, 3}


def test_legal_action_lists_stay_short_in_random_games() -> None:
    """One choice per distinct card plus at most four completions, whatever the hand."""
    longest = 0
    for seed in range(40):
        chooser = random.Random(seed)
        state = GAME.new({}, 3 + seed % 2, Rng(bytes([seed])))
        while GAME.to_act(state):
            (seat,) = GAME.to_act(state)
            legal = GAME.legal_actions(state, seat)
            longest = max(longest, len(legal))
            assert len(legal) <= 4 + len(set(state.hands[seat]))
            state = GAME.apply(state, seat, chooser.choice(legal))
    assert longest <= 4 + 5 + 8


def test_action_texts_round_trip_and_bad_texts_are_refused() -> None:
    for action in (PASS, BID, SNEAK, RAISE, add(m(25)), add(h(200))):
        assert GAME.parse_action(GAME.action_text(action)) == action
    for text in ("add:money:x", "add:coin:10", "add", "bidd", "add:money:²", ""):
        with pytest.raises(InvalidAction):
            GAME.parse_action(text)
