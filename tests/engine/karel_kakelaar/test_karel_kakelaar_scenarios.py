"""Karel Kakelaar scenarios: every example of shared/rules/karel_kakelaar.md section 12, step
by step with the exact state after each step, and one of them through a real server.

Matches are dealt from preset orders of the named decks ``draw`` and ``robot``
(:func:`draw_order` puts the given rows where the module docstring says they go); a few
end-of-game positions are built with ``dataclasses.replace`` (every card not placed goes to
the box, so card conservation still holds) and then driven only through ``GAME.apply``.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import IllegalAction, InvalidOptions, Outcome, Rng
from speeltafel.server.engine.games.karel_kakelaar import (
    COLOURS,
    GAME,
    REMOVED,
    ROW_SIZE,
    SKIP,
    HenDecision,
    KarelAction,
    KarelState,
    Phase,
    RoundRecord,
    bid,
    chickens,
    draw_cards,
    play_mother_hen,
    rank_bidders,
    robot_cards,
    worm_points,
)
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.sqlite import SqliteStore

SEED = Rng(b"karel kakelaar scenarios")
DEFAULT_DRAW = draw_cards((6, 6, 5, 5, 4, 4, 3, 3))


def chicken(seat: int, value: int) -> str:
    """Seat ``seat``'s chicken of ``value`` (seat i plays the i-th colour)."""
    return f"chicken:{COLOURS[seat]}:{value}"


def draw_order(players: int, rows: Sequence[Sequence[str]]) -> list[str]:
    """A ``draw`` preset: the box first, then ``rows`` as rounds 1, 2, ..., then the rest
    (the box and later rows take the unnamed cards in card order)."""
    named = [card for row in rows for card in row]
    assert all(len(row) == ROW_SIZE[players] for row in rows)
    rest = [card for card in DEFAULT_DRAW if card not in named]
    box = rest[: REMOVED[players]]
    return [*box, *named, *rest[REMOVED[players] :]]


def assert_conserved(state: KarelState) -> None:
    cards = sorted(card for zone in GAME.zones(state).values() for card in zone)
    assert cards == sorted(GAME.deck(state))


def play(state: KarelState, *moves: tuple[int, KarelAction]) -> KarelState:
    """Apply ``(seat, action)`` moves in order, checking conservation after each."""
    for seat, action in moves:
        state = GAME.apply(state, seat, action)
        assert_conserved(state)
    return state


def bids(state: KarelState, cards: Sequence[str]) -> KarelState:
    """Every seat bids ``cards[seat]``, seat 0 first."""
    return play(state, *((seat, bid(card)) for seat, card in enumerate(cards)))


def to_the_end(state: KarelState) -> KarelState:
    """Every seat plays its clock default until the game ends."""
    while GAME.to_act(state):
        seat = GAME.to_act(state)[0]
        state = play(state, (seat, GAME.default_action(state, seat)))
    return state


def refused(state: KarelState, seat: int, action: KarelAction, rule: str) -> None:
    """``action`` is refused with ``rule`` and the state stays as it was."""
    before = GAME.encode(state)
    with pytest.raises(IllegalAction) as error:
        GAME.apply(state, seat, action)
    assert error.value.rule == rule
    assert GAME.encode(state) == before


# --------------------------------------------------------------------------- 1 setup sizes


@pytest.mark.parametrize(
    ("players", "removed", "pile", "row_size", "robot"),
    [(2, 18, 27, 3, 15), (3, 18, 27, 3, 0), (4, 9, 36, 4, 0), (5, 0, 45, 5, 0)],
)
def test_scenario1_setup_sizes_and_nine_rounds_empty_the_draw_pile(
    players: int, removed: int, pile: int, row_size: int, robot: int
) -> None:
    state = GAME.new({}, players, SEED)
    assert len(state.box) == removed
    assert len(state.row) == row_size
    assert len(state.row) + len(state.draw) == pile == 9 * row_size  # round 1's row is out
    assert len(state.robot_deck) == robot
    assert state.hands == tuple(chickens(COLOURS[s]) for s in range(players))
    assert state.discards == ((),) * players
    assert state.tractor in range(players)  # always a player, never the robot (D10)
    assert (state.round, state.phase) == (1, Phase.BID)
    assert GAME.to_act(state) == tuple(range(players))
    # Round 1: only chickens to bid.
    assert [a.card for a in GAME.legal_actions(state, 0)] == list(chickens(COLOURS[0]))

    end = to_the_end(state)
    assert end.phase is Phase.OVER
    assert end.draw == () and end.row == ()
    assert [record.number for record in end.history] == list(range(1, 10))
    assert len(end.robot_deck) == (6 if players == 2 else 0)


# --------------------------------------------------------------------------- 2 hen is no bid


def test_scenario2_a_mother_hen_is_never_a_bid() -> None:
    rows = [["hen:1", "worm:1:1", "worm:1:2"]]
    state = GAME.new({"first_tractor": "1"}, 3, SEED, {"draw": [draw_order(3, rows)]})
    state = bids(state, [chicken(0, 7), chicken(1, 4), chicken(2, 3)])
    assert state.hands[0] == (*chickens("red")[:4], "hen:1")
    assert state.phase is Phase.MOTHER_HEN and GAME.to_act(state) == (0,)
    state = play(state, (0, SKIP))
    assert (state.round, state.phase) == (2, Phase.BID)
    assert bid("hen:1") not in GAME.legal_actions(state, 0)
    refused(state, 0, bid("hen:1"), "hen_not_a_bid")
    # A seat that does not hold the hen gets the same answer (no card is named to it).
    refused(state, 1, bid("hen:1"), "hen_not_a_bid")


# --------------------------------------------------------------------------- 3 by rank


ROW3 = ["worm:3:1", "hen:1", "worm:8:1", "worm:1:1"]
BIDS3 = [chicken(0, 7), chicken(1, 5), chicken(2, 5), chicken(3, 3)]


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_scenario3_distribution_by_rank_in_any_submission_order(order: tuple[int, ...]) -> None:
    presets = {"draw": [draw_order(4, [ROW3])]}
    state = GAME.new({"first_tractor": "3"}, 4, SEED, presets)  # player 3 is seat 2
    assert (state.tractor, state.row) == (2, tuple(ROW3))
    for step, seat in enumerate(order[:-1], start=1):
        state = play(state, (seat, bid(BIDS3[seat])))
        assert state.phase is Phase.BID
        assert set(GAME.to_act(state)) == set(range(4)) - set(order[:step])
        assert state.history == () and state.row == tuple(ROW3)
    state = play(state, (order[-1], bid(BIDS3[order[-1]])))

    record = state.history[0]
    assert record == RoundRecord(1, 2, tuple(ROW3), tuple(BIDS3), (0, 2, 1, 3), ())
    assert [record.taken(s) for s in range(4)] == ["worm:3:1", "worm:8:1", "hen:1", "worm:1:1"]
    assert "worm:3:1" in state.hands[0] and "worm:8:1" in state.hands[1]
    assert "hen:1" in state.hands[2] and "worm:1:1" in state.hands[3]
    assert state.discards == tuple((card,) for card in BIDS3)
    assert [len(hand) for hand in state.hands] == [5, 5, 5, 5]
    # Seat 2 holds the hen and has a discard: it alone decides; then round 2, tractor on.
    assert state.phase is Phase.MOTHER_HEN and GAME.to_act(state) == (2,)
    assert GAME.legal_actions(state, 2) == (
        play_mother_hen("hen:1", [chicken(2, 5)]),
        SKIP,
    )
    state = play(state, (2, SKIP))
    assert state.history[0].decisions == (HenDecision(2, SKIP),)
    assert (state.round, state.tractor, state.phase) == (2, 3, Phase.BID)


# --------------------------------------------------------------------------- 4 by distance


def test_scenario4_tie_by_clockwise_distance_from_the_tractor() -> None:
    assert rank_bidders([chicken(0, 4), chicken(1, 4), chicken(2, 3), chicken(3, 5)], 3) == (
        3,
        0,
        1,
        2,
    )
    state = GAME.new({"first_tractor": "4"}, 4, SEED)
    row = state.row
    state = bids(state, [chicken(0, 4), chicken(1, 4), chicken(2, 3), chicken(3, 5)])
    record = state.history[0]
    assert record.tractor == 3 and record.ranking == (3, 0, 1, 2)
    assert [record.taken(s) for s in (3, 0, 1, 2)] == list(row)
    # The holder wins every tie it is part of (distance 0).
    assert rank_bidders([chicken(0, 4), chicken(1, 4), chicken(2, 4)], 1) == (1, 2, 0)


# --------------------------------------------------------------------------- 5 worm as a bid


def test_scenario5_a_worm_bid_outranks_chickens_and_is_discarded() -> None:
    rows = [
        ["worm:8:1", "worm:1:1", "worm:1:2", "worm:1:3"],
        ["worm:2:1", "worm:2:2", "worm:2:3", "worm:2:4"],
    ]
    state = GAME.new({"first_tractor": "1"}, 4, SEED, {"draw": [draw_order(4, rows)]})
    state = bids(state, [chicken(0, 7), chicken(1, 3), chicken(2, 3), chicken(3, 3)])
    assert "worm:8:1" in state.hands[0] and worm_points(state.hands[0]) == 8
    assert state.round == 2  # no hen in the row: no mother-hen phase
    assert bid("worm:8:1") in GAME.legal_actions(state, 0)

    state = bids(state, ["worm:8:1", chicken(1, 7), chicken(2, 6), chicken(3, 5)])
    record = state.history[1]
    assert record.ranking == (0, 1, 2, 3)
    assert record.taken(0) == "worm:2:1"
    assert state.discards[0] == (chicken(0, 7), "worm:8:1")
    assert "worm:8:1" not in state.hands[0]
    assert worm_points(state.hands[0]) == 2  # the bid worm no longer scores


# --------------------------------------------------------------------------- 6 mother hen


def _scenario6(second_hen: bool) -> KarelState:
    """Three players, tractor at seat 0: by the end of round 3 seat 0's discard pile is
    [chicken 5, worm 2, chicken 7] and it holds hen:1 (and hen:2 if ``second_hen``)."""
    rows = [
        ["worm:2:1", "worm:1:1", "worm:1:2"],
        ["worm:3:1", "worm:3:2", "hen:1"],
        ["hen:2" if second_hen else "worm:4:1", "worm:4:2", "worm:4:3"],
    ]
    state = GAME.new({"first_tractor": "1"}, 3, SEED, {"draw": [draw_order(3, rows)]})
    state = bids(state, [chicken(0, 5), chicken(1, 4), chicken(2, 3)])
    assert state.hands[0] == (*chickens("red")[:2], *chickens("red")[3:], "worm:2:1")
    # Round 2, tractor at seat 1: both 7s outrank the worm 2; seat 1 wins the tie.
    assert state.tractor == 1
    state = bids(state, ["worm:2:1", chicken(1, 7), chicken(2, 7)])
    assert state.history[1].ranking == (1, 2, 0)
    assert "hen:1" in state.hands[0]
    assert GAME.to_act(state) == (0,)
    state = play(state, (0, SKIP))
    state = bids(state, [chicken(0, 7), chicken(1, 6), chicken(2, 6)])
    assert state.discards[0] == (chicken(0, 5), "worm:2:1", chicken(0, 7))
    assert state.phase is Phase.MOTHER_HEN and GAME.to_act(state) == (0,)
    return state


def test_scenario6_a_mother_hen_takes_two_cards_back() -> None:
    state = _scenario6(second_hen=False)
    assert state.hands[0] == (chicken(0, 3), chicken(0, 4), chicken(0, 6), "worm:4:1", "hen:1")
    legal = GAME.legal_actions(state, 0)
    assert legal == (
        play_mother_hen("hen:1", [chicken(0, 5), chicken(0, 7)]),
        play_mother_hen("hen:1", [chicken(0, 5), "worm:2:1"]),
        play_mother_hen("hen:1", [chicken(0, 7), "worm:2:1"]),
        SKIP,
    )
    action = play_mother_hen("hen:1", ["worm:2:1", chicken(0, 7)])  # any order: card order
    assert GAME.action_text(action) == "play_mother_hen:hen:1/chicken:red:7,worm:2:1"
    # The wrong number of cards, cards of another pile, a card twice: refused.
    refused(state, 0, KarelAction(action.kind, "hen:1", ("worm:2:1",)), "take_count")
    refused(
        state, 0, KarelAction(action.kind, "hen:1", (chicken(1, 4), "worm:2:1")), "not_in_discard"
    )
    refused(state, 0, KarelAction(action.kind, "hen:1", ("worm:2:1", chicken(0, 7))), "take_order")
    refused(state, 1, SKIP, "not_eligible")

    state = play(state, (0, action))
    assert (state.round, state.phase, state.tractor) == (4, Phase.BID, 0)
    assert state.discards[0] == (chicken(0, 5),)
    assert state.hands[0] == (
        chicken(0, 3),
        chicken(0, 4),
        chicken(0, 6),
        chicken(0, 7),
        "worm:2:1",
        "worm:4:1",
    )
    assert len(state.hands[0]) == 6  # hand size +1
    assert state.out[-1] == "hen:1"  # the hen goes to the box
    assert state.history[2].decisions == (HenDecision(0, action),)


def test_scenario6_a_second_mother_hen_in_the_same_round_is_rejected() -> None:
    state = _scenario6(second_hen=True)
    assert state.hands[0][-2:] == ("hen:1", "hen:2")
    # Hens are alike: the lowest-numbered one is the one to play.
    assert {a.card for a in GAME.legal_actions(state, 0) if a != SKIP} == {"hen:1"}
    refused(state, 0, play_mother_hen("hen:2", ["worm:2:1", chicken(0, 7)]), "lowest_hen")
    # Seat 0 alone decides, so the decision resolves at once: the seal is tested by hand
    # on a three-hen table below; here the next round's mother-hen phase is the next chance.
    state = play(state, (0, play_mother_hen("hen:1", ["worm:2:1", chicken(0, 7)])))
    assert "hen:2" in state.hands[0] and state.round == 4
    refused(state, 0, play_mother_hen("hen:2", [chicken(0, 5)]), "wrong_phase")


def test_a_sealed_mother_hen_decision_is_final_and_hidden() -> None:
    """Two players decide at once: the first one's second hen is refused, the others see
    only that it has decided."""
    state = _scenario6(second_hen=True)
    # Give seat 1 a hen as well (moved from the draw pile; conservation holds).
    hands = list(state.hands)
    hands[1] = (*hands[1], "hen:9")
    state = replace(
        state,
        hands=tuple(hands),
        box=tuple(c for c in state.box if c != "hen:9"),
        draw=tuple(c for c in state.draw if c != "hen:9"),
    )
    assert "hen:9" in state.hands[1] and GAME.to_act(state) == (0, 1)
    assert_conserved(state)
    public = GAME.observe(state, 1)
    state = play(state, (0, play_mother_hen("hen:1", ["worm:2:1", chicken(0, 7)])))
    refused(state, 0, play_mother_hen("hen:2", [chicken(0, 5)]), "already_decided")
    refused(state, 0, SKIP, "already_decided")
    seen = GAME.observe(state, 1)
    assert seen.committed == (True, False, False)
    assert replace(seen, committed=public.committed) == public
    assert GAME.observe(state, 0).decision is not None and seen.decision is None


# --------------------------------------------------------------------------- 7 robot chicken


def test_scenario7_two_players_the_robot_bids_its_deck_and_holds_every_third_tractor() -> None:
    robot = [*reversed(robot_cards(2))]  # purple 7 first
    presets = {"draw": [draw_order(2, [])], "robot": [robot]}
    state = GAME.new({"first_tractor": "1"}, 2, SEED, presets)
    assert state.robot_deck == tuple(robot)
    first_row = state.row
    # Round 1: the robot's purple 7 beats both; it takes position 1, which leaves the game.
    state = bids(state, [chicken(0, 3), chicken(1, 4)])
    record = state.history[0]
    assert record.bids == (chicken(0, 3), chicken(1, 4), "chicken:purple:7")
    assert record.ranking == (2, 1, 0)
    assert state.out[:2] == ("chicken:purple:7", first_row[0])
    assert all(first_row[0] not in hand for hand in state.hands)
    end = to_the_end(state)
    assert [r.tractor for r in end.history] == [0, 1, 2, 0, 1, 2, 0, 1, 2]
    assert [r.bids[2] for r in end.history] == robot[:9]
    assert end.robot_deck == tuple(robot[9:])
    for r in end.history:
        won = r.taken(2)
        assert won in end.out and all(won not in hand for hand in end.hands)


def test_a_robot_preset_with_three_players_is_refused() -> None:
    with pytest.raises(InvalidOptions, match="no robot deck"):
        GAME.new({}, 3, SEED, {"robot": [list(robot_cards(2))]})


# --------------------------------------------------------------------------- 8 final hen


def position(
    players: int,
    round_number: int,
    hands: Sequence[Sequence[str]],
    discards: Sequence[Sequence[str]],
    row: Sequence[str],
    tractor: int = 0,
) -> KarelState:
    """A BID-phase position with exactly these cards in play; every other card is in the
    box (the draw pile is what later rounds need, taken from the box's end)."""
    state = GAME.new({}, players, SEED)
    placed = [c for group in (*hands, *discards, row) for c in group]
    assert len(placed) == len(set(placed))
    rest = [c for c in GAME.deck(state) if c not in placed and not c.startswith("chicken:")]
    rest += [
        c for c in GAME.deck(state) if c.startswith("chicken:") and c not in placed
    ]  # unused chickens too: the box holds everything else
    later = (9 - round_number) * ROW_SIZE[players]
    state = replace(
        state,
        round=round_number,
        tractor=tractor,
        draw=tuple(rest[:later]),
        box=tuple(rest[later:]),
        robot_deck=(),
        row=tuple(row),
        hands=tuple(tuple(h) for h in hands),
        discards=tuple(tuple(d) for d in discards),
        out=(),
    )
    assert_conserved(state)
    return state


def test_scenario8_the_last_mother_hen_after_round_9_counts() -> None:
    state = position(
        3,
        9,
        hands=[
            [chicken(0, 3), "worm:6:1", "hen:1"],
            [chicken(1, 3), "worm:5:1"],
            [chicken(2, 3), "worm:5:2"],
        ],
        discards=[["worm:8:1", chicken(0, 4), "worm:7:1"], [], []],
        row=["worm:1:1", "worm:1:2", "worm:1:3"],
    )
    state = bids(state, [chicken(0, 3), chicken(1, 3), chicken(2, 3)])
    assert state.phase is Phase.MOTHER_HEN and GAME.to_act(state) == (0,)
    assert GAME.outcome(state) is None
    take = play_mother_hen("hen:1", ["worm:8:1", "worm:7:1"])
    assert take in GAME.legal_actions(state, 0)
    state = play(state, (0, take))
    assert state.phase is Phase.OVER and GAME.to_act(state) == ()
    assert state.hands[0] == ("worm:1:1", "worm:6:1", "worm:7:1", "worm:8:1")
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.scores == (22, 6, 6)
    assert outcome.ranks == (1, 2, 2)  # seats 1 and 2: 6 worms and 2 cards each, shared


# --------------------------------------------------------------------------- 9 scoring


def test_scenario9_equal_worms_go_to_the_fewer_cards_then_share() -> None:
    a = ["worm:8:1", "worm:5:1", chicken(0, 3), chicken(0, 4), chicken(0, 6), chicken(0, 7)]
    b = ["worm:6:1", "worm:7:1", chicken(1, 3), chicken(1, 4), chicken(1, 5)]
    state = replace(position(2, 9, [a, b], [[], []], []), phase=Phase.OVER)
    assert GAME.outcome(state) == Outcome((13, 13), (2, 1), (-1.0, 1.0))
    even = replace(state, hands=(tuple(a[:5]), tuple(b)))
    assert worm_points(even.hands[0]) == 13
    assert GAME.outcome(even) == Outcome((13, 13), (1, 1), (0.0, 0.0))


# --------------------------------------------------------------------------- clock defaults


def test_clock_defaults_bid_the_lowest_card_chicken_first_and_skip_the_hen() -> None:
    hands = [
        [chicken(0, 3), "worm:3:1", "worm:5:1", "hen:1"],
        [chicken(1, 4), "worm:3:2", "worm:1:1"],
        [chicken(2, 6), "worm:7:1", "hen:2"],
    ]
    state = position(
        3, 4, hands, [[chicken(0, 4)], [], [chicken(2, 7)]], ["worm:2:1", "worm:2:2", "worm:2:3"]
    )
    assert [GAME.default_action(state, s) for s in range(3)] == [
        bid(chicken(0, 3)),  # chicken 3 before worm 3
        bid("worm:1:1"),
        bid(chicken(2, 6)),
    ]
    state = play(state, *((s, GAME.default_action(state, s)) for s in range(3)))
    assert GAME.to_act(state) == (0, 2)
    assert GAME.default_action(state, 0) == SKIP == GAME.default_action(state, 2)


# --------------------------------------------------------------------------- through a server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    from speeltafel.server.engine.registry import GAMES
    from speeltafel.server.wire import karel_kakelaar as kk_wire
    from speeltafel.server.wire.registry import WIRES

    running = await start_server(
        SqliteStore(tmp_path / "kk.db"),
        games={**GAMES, "karel_kakelaar": GAME},
        wires={**WIRES, "karel_kakelaar": kk_wire.WIRE},
    )
    try:
        yield running
    finally:
        await running.stop(0.1)


def bid_message(card: str) -> common_pb2.Action:
    action = common_pb2.Action()
    action.karel_kakelaar.bid.card = card
    return action


async def test_scenario3_through_a_real_server_from_preset_decks(server: Running) -> None:
    from speeltafel.server.wire import karel_kakelaar as kk_wire

    async with AsyncClient(f"127.0.0.1:{server.port}") as client:
        info = {g.game: g for g in await client.list_games()}["karel_kakelaar"]
        assert (info.min_seats, info.max_seats) == (2, 5)
        assert (info.score_name, info.lower_is_better) == ("worms", False)
        assert [d.name for d in info.decks] == ["draw", "robot"]
        options = {o.name: o for o in info.options}
        assert options["worm_counts"].kind == "int_list"
        assert options["worm_counts"].default == "6,6,5,5,4,4,3,3"

        created = await client.create_match(
            "karel_kakelaar",
            4,
            {"first_tractor": "3"},
            preset_decks={"draw": [draw_order(4, [ROW3])]},
        )
        seats = [await client.join(created.match_id, name=f"kk-{s}") for s in range(4)]
        views = [await client.get_view(seat) for seat in seats]
        assert [card.id for card in views[0].karel_kakelaar.row] == ROW3
        assert views[0].karel_kakelaar.tractor == 2
        assert list(views[0].to_act) == [0, 1, 2, 3]

        for step, s in enumerate((3, 1, 0, 2), start=1):
            version = views[s].version
            await client.submit(seats[s], bid_message(BIDS3[s]), expected_version=version)
            views = [await client.get_view(seat) for seat in seats]
            if step < 4:
                table = views[2].karel_kakelaar  # seat 2 bids last
                assert [seat.committed for seat in table.seats].count(True) == step
                assert not table.HasField("bid")  # another seat's sealed bid never shows
                assert views[s].karel_kakelaar.bid.id == BIDS3[s]  # its own does
        observations = [kk_wire.WIRE.observation_from_view(view) for view in views]
        record = observations[0].history[0]
        assert record.ranking == (0, 2, 1, 3)
        assert [record.taken(s) for s in range(4)] == ["worm:3:1", "worm:8:1", "hen:1", "worm:1:1"]
        assert observations[2].hand == (
            *chickens(COLOURS[2])[:2],
            *chickens(COLOURS[2])[3:],
            "hen:1",
        )
        assert observations[0].discards == tuple((card,) for card in BIDS3)
        assert list(views[0].to_act) == [2] and views[0].phase == "mother_hen"
        legal = list(views[2].legal_actions)
        assert [a.karel_kakelaar.WhichOneof("kind") for a in legal] == [
            "play_mother_hen",
            "skip_mother_hen",
        ]
        await client.submit(seats[2], legal[-1], expected_version=views[2].version)
        view = await client.get_view(seats[0])
        assert (view.karel_kakelaar.round, view.karel_kakelaar.tractor) == (2, 3)
        assert view.phase == "bid"
