"""The Kleurenwiezen wiezer bot: its hand counts, its bids and plays in set positions, that
it answers a view as it answers the observation behind it, and that it beats random play
in-process (the server-side series are in the issue's closing note)."""

from __future__ import annotations

import dataclasses
import random

from speeltafel.bots.kleurenwiezen_wiezer import WiezerBot, miserie_danger, trick_estimate
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.kleurenwiezen import (
    GAME,
    PASS,
    Bid,
    Contract,
    ContractKind,
    Party,
    Phase,
    Play,
    WiezenAction,
    WiezenObservation,
    ask,
    bid,
    discard,
    join,
    play,
    raise_to,
)
from speeltafel.server.wire import common as wire_common
from speeltafel.server.wire.kleurenwiezen import WIRE

STRONG_HEARTS = ("AH", "KH", "QH", "JH", "9H", "4H", "AS", "KS", "3S", "AC", "5C", "2D", "7D")
LOW = ("2S", "3S", "5S", "2C", "4C", "6C", "2D", "3D", "5D", "7D", "2H", "3H", "4H")
MIDDLING = ("AS", "7S", "3S", "KC", "9C", "4C", "QD", "8D", "5D", "JH", "8H", "6H", "2H")


def _base(phase: Phase = Phase.DECLARE) -> WiezenObservation:
    """A real observation of seat 0 (a 4-seat deal), to be changed field by field."""
    for number in range(50):
        state = GAME.new({}, 4, Rng(b"wiezer %d" % number))
        if state.phase is Phase.DECLARE:
            break
    return dataclasses.replace(GAME.observe(state, 0), phase=phase)


def _choice(obs: WiezenObservation, legal: list[WiezenAction]) -> WiezenAction:
    return legal[WiezerBot(1).act(obs, legal)]


# --------------------------------------------------------------------------- hand counts


def test_trick_estimate_counts_trumps_honours_and_ruffs() -> None:
    assert trick_estimate(STRONG_HEARTS, "H") >= 7  # six hearts to the AKQJ, two side aces
    assert trick_estimate(STRONG_HEARTS, "D") < trick_estimate(STRONG_HEARTS, "H") - 3
    assert trick_estimate(LOW, "H") == 0
    assert 1.5 <= trick_estimate(MIDDLING, "S") <= 3.5


def test_miserie_danger_counts_cards_too_high_to_slide_under() -> None:
    assert miserie_danger(LOW) == 0
    assert miserie_danger(("AS", *LOW[1:])) == 1  # a bare ace over the 3 and 5 of spades
    assert miserie_danger(STRONG_HEARTS) >= 8


# --------------------------------------------------------------------------- bidding


def test_it_asks_its_strong_suit_and_passes_a_weak_hand() -> None:
    obs = dataclasses.replace(_base(), hand=STRONG_HEARTS)
    legal = [PASS, *(ask(s) for s in "SCDH")]
    assert _choice(obs, legal) == ask("H")
    assert _choice(dataclasses.replace(obs, hand=MIDDLING), legal) == PASS


def test_it_joins_an_asked_suit_it_supports() -> None:
    obs = dataclasses.replace(_base(), hand=STRONG_HEARTS)
    assert _choice(obs, [PASS, join("H"), ask("S")]) == join("H")
    # no support in clubs: it asks its own hearts instead of joining clubs
    assert _choice(obs, [PASS, join("C"), ask("H")]) == ask("H")


def test_a_low_hand_bids_miserie() -> None:
    obs = dataclasses.replace(_base(), hand=LOW)
    km, gm = bid(ContractKind.KLEINE_MISERIE), bid(ContractKind.GROTE_MISERIE)
    assert _choice(obs, [PASS, ask("H"), km, gm]) == gm  # no dangerous card at all
    one_ace = dataclasses.replace(obs, hand=("AS", *LOW[1:]))
    assert _choice(one_ace, [PASS, ask("H"), km, gm]) == km  # the discard takes the ace
    assert _choice(dataclasses.replace(obs, hand=MIDDLING), [PASS, km, gm]) == PASS


def test_it_raises_only_as_far_as_its_side_counts() -> None:
    obs = dataclasses.replace(_base(Phase.OPBIEDEN), hand=STRONG_HEARTS)
    alone = Party(ContractKind.ALONE, "H", 0, -1, 0, Bid(ContractKind.ALONE, 5, "H"))
    auction = dataclasses.replace(obs, parties=(alone,))  # seat 0 alone in hearts
    assert _choice(auction, [PASS, raise_to(6), raise_to(7)]) == raise_to(6)
    assert _choice(auction, [PASS, raise_to(12), raise_to(13)]) == PASS


# --------------------------------------------------------------------------- play


def _playing(
    hand: tuple[str, ...], contract: Contract, trick: tuple[Play, ...], trump: str
) -> WiezenObservation:
    return dataclasses.replace(
        _base(Phase.PLAY), hand=hand, contract=contract, trick=trick, trump=trump, partner=-1
    )


def test_a_partner_does_not_overtake_a_winning_partner() -> None:
    pair = Contract(ContractKind.PAIR, 8, "S", (0, 2))
    obs = _playing(("AH", "KH", "3H"), pair, (Play(2, "QH"), Play(3, "5H")), "S")
    legal = [play("3H"), play("KH"), play("AH")]
    assert _choice(obs, legal) == play("3H")


def test_it_wins_cheaply_and_follows_cheap_when_it_cannot_win() -> None:
    solo = Contract(ContractKind.ALONE, 5, "S", (0,))
    obs = _playing(("AH", "KH", "3H"), solo, (Play(1, "QH"),), "S")
    assert _choice(obs, [play("3H"), play("KH"), play("AH")]) == play("KH")
    lost = _playing(("JH", "3H", "9H"), solo, (Play(1, "QH"),), "S")
    assert _choice(lost, [play("3H"), play("9H"), play("JH")]) == play("3H")
    # void in the suit led: it trumps with its lowest trump rather than a high one
    ruff = _playing(("2S", "AS", "4D"), solo, (Play(1, "QH"),), "S")
    assert _choice(ruff, [play("2S"), play("AS"), play("4D")]) == play("2S")


def test_a_miserie_declarer_ducks_with_its_highest_losing_card() -> None:
    km = Contract(ContractKind.GROTE_MISERIE, 0, "", (0,))
    obs = _playing(("2H", "9H", "KH"), km, (Play(1, "TH"),), "")
    assert _choice(obs, [play("2H"), play("9H"), play("KH")]) == play("9H")
    forced = _playing(("QH", "KH"), km, (Play(1, "TH"),), "")
    assert _choice(forced, [play("QH"), play("KH")]) == play("KH")  # rid of the highest


def test_it_leads_a_master_card_and_discards_its_most_dangerous_card() -> None:
    solo = Contract(ContractKind.ALONE, 5, "S", (1,))
    obs = _playing(("AD", "5D", "9C", "4C", "3C"), solo, (), "S")
    legal = [play(c) for c in ("3C", "4C", "9C", "5D", "AD")]
    assert _choice(obs, legal) == play("AD")
    km = Contract(ContractKind.KLEINE_MISERIE, 0, "", (0,))
    hand = ("2S", "3S", "KS", "2H", "3H", "4H")
    obs = dataclasses.replace(_base(Phase.DISCARD), hand=hand, contract=km)
    assert _choice(obs, [discard(c) for c in hand]) == discard("KS")


# --------------------------------------------------------------------------- whole games


def _match(seed: int, seats: int, wiezer: int) -> float:
    bot, chooser = WiezerBot(seed), random.Random(seed)
    state = GAME.new({"deals": "4"}, seats, Rng(b"wiezer match %d" % seed))
    while (outcome := GAME.outcome(state)) is None:
        seat = GAME.to_act(state)[0]
        legal = GAME.legal_actions(state, seat)
        if seat == wiezer:
            action = legal[bot.act(GAME.observe(state, seat), legal)]
            assert action in legal
        else:
            action = chooser.choice(legal)
        state = GAME.apply(state, seat, action)
    return outcome.utilities[wiezer]


def test_wiezer_beats_random() -> None:
    utilities = [_match(seed, 4 + seed % 3, seed % 4) for seed in range(30)]
    assert sum(utilities) / len(utilities) > 0.5


def test_wiezer_chooses_from_a_view_as_from_its_observation() -> None:
    state = GAME.new({"deals": "2"}, 5, Rng(b"wiezer view"))
    bot = WiezerBot(1)
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        legal = GAME.legal_actions(state, seat)
        view = wire_common.build_view(
            WIRE,
            match_id="m",
            seat=seat,
            version=1,
            status="running",
            seats=5,
            commitment="c",
            observation=GAME.observe(state, seat),
            to_act=GAME.to_act(state),
            legal_actions=legal,
            move_clock_ms=1000,
            deadline_ms=0,
            now_ms=0,
            outcome=None,
        )
        action = WIRE.action_from_proto(bot.choose(view, view.legal_actions))
        assert action == legal[bot.act(GAME.observe(state, seat), legal)]
        state = GAME.apply(state, seat, action)


def test_running_scores_are_the_match_scores() -> None:
    obs = dataclasses.replace(_base(), scores=(6, -2, -2, -2))
    assert WiezerBot().running_scores(obs) == (6, -2, -2, -2)
