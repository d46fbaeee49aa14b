"""The test scenarios of shared/rules/kleurenwiezen.md section 13, in its order, including the
seed's scoring table; each driven through ``GAME.apply`` from preset packs (four seats,
dealer seat 0: P1..P4 are seats 1, 2, 3, 0) unless it is a pure scoring rule."""

from __future__ import annotations

import pytest
from kleurenwiezen_helpers import SUIT_HANDS, act, finish, legal, new, refused, suit

from speeltafel.server.engine.games.kleurenwiezen import (
    DOOD,
    GAME,
    PASS,
    PASTROEL,
    REASK,
    RONDPAS,
    WAIT,
    Bid,
    BidderState,
    Contract,
    ContractKind,
    DealEnd,
    Phase,
    WiezenState,
    alone,
    ask,
    bid,
    join,
    play,
    raise_to,
    score_deal,
    strength,
)

ALONE, PAIR = ContractKind.ALONE, ContractKind.PAIR
KM, AB, GM = ContractKind.KLEINE_MISERIE, ContractKind.ABONDANCE, ContractKind.GROTE_MISERIE
BM, SS, TROEL = ContractKind.BLOTE_MISERIE, ContractKind.SOLO_SLIM, ContractKind.TROEL
ACTIVE = (1, 2, 3, 0)  # P1..P4 with four seats and dealer seat 0
P1, P2, P3, P4 = ACTIVE


def points(
    kind: ContractKind,
    declarers: tuple[int, ...],
    taken: dict[int, int],
    target: int,
    multiplier: int = 1,
) -> tuple[int, ...]:
    tricks = [taken.get(seat, 0) for seat in range(4)]
    return score_deal(Contract(kind, target, "", declarers), tricks, target, multiplier, ACTIVE, 4)


def seats(**by_position: int) -> tuple[int, ...]:
    """Points per seat from keyword points per position (p1=..)."""
    out = [0] * 4
    for name, value in by_position.items():
        out[ACTIVE[int(name[1]) - 1]] = value
    return tuple(out)


# --------------------------------------------------------------------------- the seed's table


@pytest.mark.parametrize(
    ("bid_tricks", "taken", "unit"),
    [(6, 7, 3), (6, 8, 4), (8, 9, 2), (9, 10, 2), (7, 6, -3)],
)
def test_the_seeds_scoring_table(bid_tricks: int, taken: int, unit: int) -> None:
    """The soloist receives 3X and each opponent pays X (D10)."""
    result = points(ALONE, (P1,), {P1: taken, P2: 13 - taken}, bid_tricks)
    assert result == seats(p1=3 * unit, p2=-unit, p3=-unit, p4=-unit)


# --------------------------------------------------------------------------- 1-6: scoring


def test_1_pair_basic() -> None:
    pair = (P1, P3)
    assert points(PAIR, pair, {P1: 4, P3: 4, P2: 5}, 8) == seats(p1=2, p2=-2, p3=2, p4=-2)
    assert points(PAIR, pair, {P1: 6, P3: 4, P2: 3}, 8) == seats(p1=4, p2=-4, p3=4, p4=-4)
    assert points(PAIR, pair, {P1: 3, P3: 4, P2: 6}, 8) == seats(p1=-3, p2=3, p3=-3, p4=3)


def test_2_pair_rond() -> None:
    assert points(PAIR, (P2, P4), {P2: 7, P4: 6}, 8) == seats(p1=-14, p2=14, p3=-14, p4=14)


def test_3_solo_cap() -> None:
    assert points(ALONE, (P3,), {P3: 13}, 5) == seats(p1=-5, p2=-5, p3=15, p4=-5)


def test_4_kleine_miserie_single() -> None:
    assert points(KM, (P2,), {P1: 12}, 0) == seats(p1=-3, p2=9, p3=-3, p4=-3)
    assert points(KM, (P2,), {P1: 11, P2: 1}, 0) == seats(p1=3, p2=-9, p3=3, p4=3)


def test_5_kleine_miserie_double() -> None:
    a, b = P1, P3
    assert points(KM, (a, b), {P2: 12}, 0) == seats(p1=9, p2=-9, p3=9, p4=-9)
    assert points(KM, (a, b), {P2: 10, P3: 2}, 0) == seats(p1=9, p2=0, p3=-9, p4=0)


def test_6_fixed_contracts() -> None:
    assert points(AB, (P1,), {P1: 11, P2: 2}, 9) == seats(p1=12, p2=-4, p3=-4, p4=-4)
    assert points(GM, (P1,), {P1: 1, P2: 12}, 0) == seats(p1=-15, p2=5, p3=5, p4=5)
    assert points(BM, (P1,), {P2: 13}, 0) == seats(p1=30, p2=-10, p3=-10, p4=-10)
    assert points(SS, (P1,), {P1: 13}, 13) == seats(p1=150, p2=-50, p3=-50, p4=-50)


# --------------------------------------------------------------------------- 7-8: troel


def test_7_troel_three_aces_trump_by_the_partners_second_lead() -> None:
    # P2 holds three aces, P1 the club ace and more clubs (and diamonds).
    hands = [
        ["AC", *suit("C", "KQJ"), *suit("D", "KQJT98765")],
        ["AS", "AD", "AH", *suit("H", "KQJT98765"), "4H"],
        suit("S", "KQJT98765432"),
    ]
    for lead, trump, target in (("JC", "C", 9), ("5D", "D", 10)):
        state = new(hands)
        assert (state.troel_holder, state.troel_aces) == (P2, 3)
        state = act(state, PASS, PASS, PASS, PASS)
        assert state.contract == Contract(TROEL, 0, "", (P2, P1))
        assert state.turn == P1 and legal(state) == {"play:AC"}
        state = act(state, play("AC"))
        while state.trick:
            state = act(state, GAME.default_action(state, state.turn))
        assert state.tricks[0].winner == P1 and state.tricks[0].trump == ""
        state = act(state, play(lead))
        assert (state.trump, state.target) == (trump, target)
    # Scoring of the scenario: target 9 with 10 tricks X = 6; target 10 with 10 X = 4.
    assert points(TROEL, (P2, P1), {P1: 6, P2: 4}, 9) == seats(p1=6, p2=6, p3=-6, p4=-6)
    assert points(TROEL, (P2, P1), {P1: 6, P2: 4}, 10) == seats(p1=4, p2=4, p3=-4, p4=-4)


def test_8_troel_four_aces_partner_holds_the_highest_heart() -> None:
    hands = [
        ["AS", "AC", "AD", "AH", "QH"],
        [*suit("S", "KQJT98765432"), "2H"],
        ["KH", *suit("C", "KQJT98765432")],
    ]
    state = new(hands)
    assert (state.troel_holder, state.troel_aces) == (P1, 4)
    state = act(state, PASS, PASS, PASS, PASS)
    assert state.contract == Contract(TROEL, 0, "", (P1, P3))
    assert (state.trump, state.target, state.turn) == ("H", 9, P3)
    assert legal(state) == {"play:KH"}
    refused(state, play("KC"), "forced_lead")
    # With the king among the holder's cards the queen's holder would be partner.
    hands[0][4], hands[2][0] = "KH", "QH"
    state = act(new(hands), PASS, PASS, PASS, PASS)
    assert state.turn == P3 and legal(state) == {"play:QH"}


# --------------------------------------------------------------------------- 9-16: bidding


def troel_deal() -> WiezenState:
    return new([["AS", "AC", "AD"]])


def test_9_troel_auction() -> None:
    state = troel_deal()
    assert state.phase is Phase.TROEL_AUCTION
    assert legal(state) == {"pass", "bid:blote_miserie", *(f"bid:solo_slim:{s}" for s in "SCDH")}
    refused(state, ask("H"), "wrong_phase")
    refused(state, bid(AB, 9, "H"), "bid_not_allowed")
    state = act(state, PASS, bid(BM))
    refused(state, bid(BM), "bid_too_low")
    state = act(state, PASS, PASS)
    assert state.contract == Contract(BM, 0, "", (P2,))
    assert state.phase is Phase.PLAY and state.turn == P1


def test_10_rondpas_doubles_the_next_played_deal_once() -> None:
    pair_h = (ask("H"), PASS, PASS, join("H"))  # P1 + P4: 13 tricks, X = 14
    rondpas = (RONDPAS, RONDPAS, RONDPAS)
    state = act(new(more=[SUIT_HANDS]), *rondpas)
    assert state.results[0].end is DealEnd.RONDPAS and state.doubling
    assert GAME.observe(state, None).multiplier == 2
    state = finish(act(state, *pair_h))
    assert state.results[1].multiplier == 2
    assert state.results[1].points == _seat_points(state, 1, (28, -28, -28, 28))
    assert not state.doubling
    # Two rondpas deals in a row: still x2.
    state = act(new(more=[SUIT_HANDS, SUIT_HANDS]), *rondpas)
    state = act(state, *rondpas)
    state = finish(act(state, *pair_h))
    assert state.results[2].multiplier == 2
    # Rondpas, then a passed-out deal, then the contract: x1.
    state = act(new(more=[SUIT_HANDS, SUIT_HANDS]), *rondpas)
    state = act(state, PASS, PASS, PASS, PASS)
    assert state.results[1].end is DealEnd.PASSED_OUT and not state.doubling
    state = finish(act(state, *pair_h))
    assert state.results[2].multiplier == 1
    assert state.results[2].points == _seat_points(state, 2, (14, -14, -14, 14))


def _seat_points(state: WiezenState, deal: int, by_position: tuple[int, ...]) -> tuple[int, ...]:
    """Points per seat of deal ``deal`` (0-based) from points per position."""
    dealer = state.results[deal].dealer
    out = [0] * state.players
    for i, value in enumerate(by_position):
        out[(dealer + 1 + i) % state.players] = value
    return tuple(out)


def test_11_failed_rondpas() -> None:
    state = act(new(), RONDPAS, ask("H"))
    assert state.bidders[P1].state is BidderState.PASSED
    assert "rondpas" not in legal(state)
    refused(state, RONDPAS, "rondpas_not_allowed")
    state = act(new(), RONDPAS, RONDPAS, PASS)
    assert state.bidders[P1].state is state.bidders[P2].state is BidderState.PASSED


def test_11b_rondpas_needs_p4_option() -> None:
    state = act(new(rondpas_needs_p4="true"), RONDPAS, RONDPAS, RONDPAS)
    assert state.phase is Phase.DECLARE and state.turn == P4 and "rondpas" in legal(state)
    state = act(state, RONDPAS)
    assert state.results[-1].end is DealEnd.RONDPAS


def test_12_dood() -> None:
    state = act(new(), ask("S"), ask("C"), ask("D"))
    assert "dood" in legal(state)  # P4 holds 13 hearts
    state = act(state, DOOD)
    assert state.results[-1].end is DealEnd.DOOD and not state.doubling
    # Asks in S, C and H: P4 holds only four diamonds.
    hands = [suit("S"), suit("C"), [*suit("D", "23456789T"), *suit("H", "AKQJ")]]
    hands.append([*suit("H", "T98765432"), *suit("D", "JQKA")])
    four = act(new(hands), ask("S"), ask("C"), ask("H"))
    assert sum(1 for c in four.hands[P4] if c[1] == "D") == 4
    assert "dood" not in legal(four)
    refused(four, DOOD, "dood_not_allowed")
    # Dood after rondpas clears the doubling flag.
    state = act(new(more=[SUIT_HANDS]), RONDPAS, RONDPAS, RONDPAS)
    assert state.doubling
    state = act(state, ask("S"), ask("C"), ask("D"), DOOD)
    assert state.results[-1].end is DealEnd.DOOD and not state.doubling
    # If P2 joined instead of asking, dood is illegal.
    joined = act(new(), ask("S"), join("S"), ask("D"))
    refused(joined, DOOD, "dood_not_allowed")


def test_13_wachten() -> None:
    state = act(new(), WAIT, ask("D"), PASS, PASS)
    assert state.round == 2 and state.turn == P1
    assert legal(state) == {"pass", "join:D"}
    joined = act(state, join("D"))
    assert joined.contract == Contract(PAIR, 8, "D", (P2, P1))
    passed = act(state, PASS)
    assert passed.turn == P2 and legal(passed) == {"pass", *(f"alone:{s}" for s in "DH")}
    refused(passed, REASK, "cannot_be_joined")


def test_13b_a_waiter_with_nobody_to_join_is_passed_by_the_server() -> None:
    state = act(new(), WAIT, bid(KM), PASS, PASS)
    assert state.contract == Contract(KM, 0, "", (P2,))
    assert state.events[-1].automatic and state.events[-1].seat == P1


def test_14_moving_up() -> None:
    state = act(new(), ask("S"), ask("H"), PASS, PASS)
    assert state.turn == P1
    assert legal(state) == {"pass", "join:H", "alone:S", "alone:C", "alone:D"}
    refused(state, ask("C"), "cannot_be_joined")
    refused(state, REASK, "cannot_be_joined")
    refused(state, alone("H"), "suit_taken")
    joined = act(state, join("H"))
    assert joined.contract == Contract(PAIR, 8, "H", (P2, P1))


def opbieden_15() -> WiezenState:
    state = act(new(), ask("S"), ask("H"), join("H"), PASS, alone("S"))
    assert state.phase is Phase.OPBIEDEN
    return state


def test_15_opbieden_solo_against_pair() -> None:
    state = opbieden_15()
    assert state.turn == P1, "the lowest suit acts first; the pair (H) is stronger"
    assert legal(state) == {"pass", *(f"raise:{t}" for t in range(6, 14))}
    refused(state, raise_to(5), "raise_too_low")
    state = act(state, raise_to(6))
    assert state.turn == P3, "the joiner speaks for the pair"
    assert legal(state) == {"pass", *(f"raise:{t}" for t in range(9, 14))}
    refused(state, PASTROEL, "pastroel_not_allowed")
    matched = act(state, raise_to(9))
    assert matched.turn == P1
    # The joiner passes: the asker may go on alone in hearts, at once, from 6 tricks.
    alone_h = act(state, PASS)
    assert alone_h.turn == P2 and alone_h.bidders[P3].state is BidderState.PASSED
    assert legal(alone_h) == {"pass", *(f"raise:{t}" for t in range(6, 14))}
    done = act(alone_h, raise_to(6))
    assert done.turn == P1
    done = act(done, PASS)
    assert done.contract == Contract(ALONE, 6, "H", (P2,))


def opbieden_16() -> WiezenState:
    state = act(new(), bid(KM), ask("H"), join("H"), PASS)
    assert state.phase is Phase.OPBIEDEN and state.turn == P3
    return state


def test_16_blocking_kleine_miserie() -> None:
    state = opbieden_16()
    assert legal(state) == {"pass", "pastroel", "raise:11", "raise:12", "raise:13"}
    blocked = act(state, raise_to(11))
    assert blocked.phase is Phase.MISERIE_RESPONSE and blocked.turn == P1
    assert "bid:grote_miserie" in legal(blocked) and "bid:kleine_miserie" not in legal(blocked)
    gm = act(blocked, bid(GM))
    assert gm.contract == Contract(GM, 0, "", (P1,))
    assert gm.bidders[P2].state is gm.bidders[P3].state is BidderState.PASSED
    kept = act(blocked, PASS)
    assert kept.contract == Contract(PAIR, 11, "H", (P2, P3))
    # The joiner passes: P2 may go alone in hearts from 8 tricks.
    solo = act(state, PASS)
    assert solo.turn == P2 and legal(solo) == {"pass", *(f"raise:{t}" for t in range(8, 14))}
    assert act(solo, PASS).contract == Contract(KM, 0, "", (P1,))
    # Pastroel: the asker decides for the pair, from 11.
    handed = act(state, PASTROEL)
    assert handed.turn == P2 and legal(handed) == {"pass", "raise:11", "raise:12", "raise:13"}
    assert act(handed, raise_to(12)).phase is Phase.MISERIE_RESPONSE
    assert act(handed, PASS).contract == Contract(KM, 0, "", (P1,))


def test_17_strength_checks() -> None:
    assert strength(Bid(ALONE, 8, "S")) == 111 > strength(Bid(KM)) == 105
    assert strength(Bid(KM)) > strength(Bid(PAIR, 10, "H")) == 104
    assert strength(Bid(PAIR, 11, "S")) == 111 > strength(Bid(KM))
    assert strength(Bid(AB, 9, "S")) == 1091 > strength(Bid(PAIR, 13, "H")) == 134
    assert strength(Bid(AB, 10, "S")) == 1101 > strength(Bid(AB, 9, "H")) == 1094
    assert strength(Bid(BM)) > strength(Bid(TROEL)) > strength(Bid(GM))
    assert strength(Bid(ALONE, 5, "H")) == 84 and strength(Bid(PAIR, 8, "S")) == 81


def test_18_follow_suit() -> None:
    hands = [["2H", *suit("S", "23456789TJQK")], ["3H", "AS", *suit("C", "23456789TJ")]]
    state = act(new(hands), PASS, PASS, PASS, bid(GM))  # P1 leads
    state = act(state, play("2H"))
    assert legal(state) == {"play:3H"}
    refused(state, play("AS"), "must_follow_suit")
    state = act(state, play("3H"))
    assert len(legal(state)) == 13  # P3 holds no heart: any card, no duty to trump


def test_19_blote_miserie_exposure() -> None:
    state = act(new(), PASS, bid(BM), PASS, PASS)
    for viewer in (None, 0, 1, 2, 3):
        assert GAME.observe(state, viewer).shown == ()
    for _ in range(4):
        state = act(state, GAME.default_action(state, state.turn))
    for viewer in (None, 0, 1, 2, 3):
        view = GAME.observe(state, viewer)
        assert view.shown == state.hands[P2] and len(view.shown) == 12 and view.shown_seat == P2


def test_20_five_players() -> None:
    hands = [SUIT_HANDS] * 2
    state = new(seats=5, more=hands)
    for _ in range(2):
        state = act(state, PASS, PASS, PASS, PASS)
    assert state.dealer == 2 and state.active == (3, 4, 0, 1)
    state = act(state, PASS, bid(GM), PASS, PASS)
    state = finish(state)
    assert state.results[2].points[2] == 0
    assert state.results[2].points == (-5, -5, 0, -5, 15)


def test_20b_the_next_dealer() -> None:
    state = act(new(seats=5, more=[SUIT_HANDS]), PASS, PASS, PASS, PASS)
    assert state.dealer == 1 and state.active == (2, 3, 4, 0)


def test_21_abondance_lead_and_two_abondances() -> None:
    state = act(new(), PASS, PASS, bid(AB, 9, "D"), PASS)
    assert state.contract == Contract(AB, 9, "D", (P3,)) and state.turn == P3
    state = act(new(), PASS, bid(AB, 9, "H"), bid(AB, 10, "S"), PASS)
    assert state.round == 2 and state.turn == P2
    assert state.bidders[P2].outbid
    assert "bid:abondance:10:H" in legal(state) and "bid:abondance:10:S" not in legal(state)
    state = act(state, bid(AB, 10, "H"))
    assert state.turn == P3
    state = act(state, PASS)
    assert state.contract == Contract(AB, 10, "H", (P2,)) and state.turn == P2
