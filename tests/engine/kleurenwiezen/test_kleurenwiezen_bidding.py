"""The bidding state machine of section 6, path by path, beyond the section 13 scenarios:
round 1's moves, the extra rounds (D7), the end of DECLARE, the trick auction's order,
the answer to a blocked kleine miserie, the troel auction, the leads of section 6.6 and the
refusals' rule ids. Four seats, dealer seat 0: P1..P4 are seats 1, 2, 3, 0."""

from __future__ import annotations

from kleurenwiezen_helpers import act, finish, legal, new, refused

from speeltafel.server.engine.games.kleurenwiezen import (
    GAME,
    PASS,
    REASK,
    WAIT,
    BidderState,
    Contract,
    ContractKind,
    DealEnd,
    Phase,
    alone,
    ask,
    bid,
    join,
    raise_to,
)

ALONE, PAIR = ContractKind.ALONE, ContractKind.PAIR
KM, AB, GM = ContractKind.KLEINE_MISERIE, ContractKind.ABONDANCE, ContractKind.GROTE_MISERIE
BM, SS = ContractKind.BLOTE_MISERIE, ContractKind.SOLO_SLIM
P1, P2, P3, P4 = 1, 2, 3, 0


def test_round_one_moves_of_each_position() -> None:
    state = new()
    first = legal(state)
    assert {"pass", "wait", "rondpas", "ask:S", "ask:H", "bid:kleine_miserie"} <= first
    assert {"bid:abondance:9:S", "bid:solo_slim:H", "bid:grote_miserie"} <= first
    assert not any(m.startswith(("join", "alone", "raise")) or m == "dood" for m in first)
    state = act(state, ask("D"))
    second = legal(state)
    assert "join:D" in second and "ask:D" not in second and "wait" not in second
    assert "rondpas" not in second, "P2 only confirms a running proposal"
    refused(state, WAIT, "not_p1")
    refused(state, ask("D"), "suit_taken")
    refused(state, join("H"), "nobody_to_join")
    refused(state, alone("H"), "wrong_phase")
    refused(state, raise_to(9), "wrong_phase")


def test_everyone_passes_the_deal_is_passed_out() -> None:
    state = act(new(deals="2"), PASS, PASS, PASS, PASS)
    assert state.results[0].end is DealEnd.PASSED_OUT
    assert state.results[0].points == (0, 0, 0, 0) and state.deal_number == 2


def test_one_party_plays_at_its_minimum() -> None:
    state = act(new(), PASS, ask("C"), PASS, join("C"))
    assert state.contract == Contract(PAIR, 8, "C", (P2, P4))
    state = act(new(), ask("D"), PASS, PASS, PASS, alone("D"))
    assert state.contract == Contract(ALONE, 5, "D", (P1,))
    # An asker may go alone in a higher free colour.
    state = act(new(), ask("S"), PASS, PASS, PASS, alone("H"))
    assert state.contract == Contract(ALONE, 5, "H", (P1,))


def test_extra_rounds_reask_in_rounds_two_and_three_only() -> None:
    state = act(new(), ask("H"), ask("D"), ask("C"), PASS)
    assert state.round == 2 and state.turn == P1
    assert "reask" in legal(state)  # D and C are lower askers who may still move up
    state = act(state, REASK, REASK)
    assert state.turn == P3 and "reask" not in legal(state)  # nobody below clubs
    state = act(state, PASS)
    assert state.round == 3 and state.turn == P1
    state = act(state, REASK)
    assert state.turn == P2
    state = act(state, alone("D"))
    assert state.round == 4 and state.turn == P1
    refused(state, REASK, "extra_rounds_over")
    assert legal(state) == {"pass", "alone:H"}
    state = act(state, alone("H"))
    assert state.phase is Phase.OPBIEDEN
    assert [p.suit for p in state.parties] == ["D", "H"]


def test_asking_a_higher_colour_in_round_two() -> None:
    state = act(new(), ask("S"), ask("D"), PASS, PASS)
    state = act(state, alone("S"))
    assert state.turn == P2
    # P2 (diamonds) could ask hearts only if somebody could still join: nobody can.
    refused(state, ask("H"), "cannot_be_joined")
    state = act(new(), WAIT, ask("C"), PASS, PASS)
    state = act(state, PASS)  # the waiter passes
    refused(state, ask("S"), "only_higher_suit")
    refused(state, ask("D"), "cannot_be_joined")


def test_joint_kleine_miserie_and_no_third() -> None:
    state = act(new(), bid(KM), bid(KM))
    assert "bid:kleine_miserie" not in legal(state)
    refused(state, bid(KM), "bid_too_low")
    state = act(state, PASS, PASS)
    assert state.contract == Contract(KM, 0, "", (P1, P2)) and state.phase is Phase.DISCARD


def test_a_level_three_bid_closes_level_one() -> None:
    state = act(new(), ask("H"), bid(AB, 9, "S"))
    assert state.bidders[P1].state is BidderState.PASSED
    refused(state, ask("D"), "level_closed")
    refused(state, join("H"), "level_closed")
    assert act(state, PASS, PASS).contract == Contract(AB, 9, "S", (P2,))


def test_outbid_bidders_answer_in_later_rounds() -> None:
    state = act(new(), bid(KM), bid(GM), PASS, PASS)
    assert state.round == 2 and state.turn == P1 and state.bidders[P1].outbid
    assert "bid:kleine_miserie" not in legal(state) and "bid:blote_miserie" in legal(state)
    refused(state, bid(KM), "bid_not_allowed")
    state = act(state, bid(BM))
    assert state.turn == P2
    refused(state, ask("H"), "level_closed")
    state = act(state, bid(SS, 0, "S"))
    assert state.turn == P1
    state = act(state, PASS)
    assert state.contract == Contract(SS, 0, "S", (P2,))
    assert state.turn == P1, "solo slim: P1 leads"


def test_solo_slim_by_p1_is_led_by_p2() -> None:
    state = act(new(), bid(SS, 0, "H"), PASS, PASS, PASS)
    assert state.contract == Contract(SS, 0, "H", (P1,)) and state.turn == P2


def test_kleine_miserie_with_a_party_goes_to_the_trick_auction() -> None:
    state = act(new(), ask("S"), bid(KM), PASS, PASS, alone("S"))
    assert state.phase is Phase.OPBIEDEN and state.turn == P1
    assert legal(state) == {"pass", *(f"raise:{t}" for t in range(8, 14))}
    state = act(state, PASS)
    assert state.contract == Contract(KM, 0, "", (P2,))


def test_trick_auction_order_skips_the_strongest_and_wraps() -> None:
    # Three parties: P1 alone S, P2 alone C, P3 + P4 pair H.
    state = act(new(), ask("S"), ask("C"), ask("H"), join("H"), alone("S"), alone("C"))
    assert state.phase is Phase.OPBIEDEN
    assert [(p.suit, p.speaker) for p in state.parties] == [("S", P1), ("C", P2), ("H", P4)]
    assert state.turn == P1  # lowest suit, not the strongest (PAIR 8 H)
    state = act(state, raise_to(6))  # ALONE(6, S) 91 is strongest
    assert state.turn == P2
    state = act(state, raise_to(6))  # ALONE(6, C) 92
    assert state.turn == P4
    state = act(state, raise_to(10))  # PAIR(10, H) 104
    assert state.turn == P1  # wraps round to spades
    state = act(state, PASS)
    assert state.turn == P2
    state = act(state, PASS)
    assert state.contract == Contract(PAIR, 10, "H", (P3, P4))


def test_two_blocked_kleine_miseries_answer_clockwise_from_the_first() -> None:
    state = act(new(), ask("H"), bid(KM), bid(KM), join("H"))
    state = act(state, raise_to(11))
    assert state.phase is Phase.MISERIE_RESPONSE and state.turn == P2
    state = act(state, PASS)
    assert state.turn == P3
    state = act(state, bid(AB, 9, "C"))
    assert state.bidders[P1].state is state.bidders[P4].state is BidderState.PASSED
    assert state.contract == Contract(AB, 9, "C", (P3,)), "P2 passed: no more answers"
    # Both answer: the first is outbid and may answer again.
    state = act(new(), ask("H"), bid(KM), bid(KM), join("H"), raise_to(11))
    state = act(state, bid(AB, 9, "C"), bid(GM))
    assert state.turn == P2
    state = act(state, PASS)
    assert state.contract == Contract(GM, 0, "", (P3,))


def test_troel_auction_solo_slim_over_blote_miserie() -> None:
    state = new([["AS", "AC", "AD", "AH"]])
    state = act(state, bid(BM), PASS, bid(SS, 0, "D"))
    assert legal(state) == {"pass"}
    state = act(state, PASS)
    assert state.contract == Contract(SS, 0, "D", (P3,))


def test_rule_ids_in_the_later_phases() -> None:
    km = act(new(), PASS, bid(KM), PASS, PASS)
    assert GAME.to_act(km) == (0, 1, 2, 3)
    card = km.hands[P1][0]
    refused(km, GAME.parse_action(f"play:{card}"), "wrong_phase", seat=P1)
    refused(km, GAME.parse_action(f"discard:{km.hands[P2][0]}"), "not_in_hand", seat=P1)
    after = GAME.apply(km, P1, GAME.parse_action(f"discard:{card}"))
    assert GAME.to_act(after) == (0, 2, 3)
    refused(after, GAME.parse_action(f"discard:{after.hands[P1][0]}"), "already_discarded", P1)
    playing = finish(act(new(), PASS, PASS, PASS, bid(AB, 9, "H")))
    refused(playing, PASS, "game_over", seat=P1)


def test_stop_when_decided_ends_a_lost_miserie_at_its_first_trick() -> None:
    state = act(new(stop_when_decided="true"), bid(GM), PASS, PASS, PASS)
    state = finish(state)
    (result,) = state.results
    assert result.points == (5, -15, 5, 5) and result.declarer_tricks == (1,)
    full = finish(act(new(), bid(GM), PASS, PASS, PASS))
    assert full.results[0].points == result.points and full.results[0].declarer_tricks == (13,)
