"""The Beverbende keeper bot: plays only legal actions, from a view or an observation, and
beats random play in-process (the server-side series are in the README's bot table)."""

from __future__ import annotations

import random

from speeltafel.bots.beverbende_keeper import KeeperBot
from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.beverbende import GAME
from speeltafel.server.wire import common as wire_common
from speeltafel.server.wire.beverbende import WIRE


def play(seed: int, seats: int, keeper: int) -> float:
    bot, chooser = KeeperBot(seed), random.Random(seed)
    state = GAME.new({}, seats, Rng(b"keeper %d" % seed))
    while to_act := GAME.to_act(state):
        seat = to_act[0]
        legal = GAME.legal_actions(state, seat)
        if seat == keeper:
            action = legal[bot.act(GAME.observe(state, seat), legal)]
        else:
            action = chooser.choice(legal)
        state = GAME.apply(state, seat, action)
    outcome = GAME.outcome(state)
    assert outcome is not None
    return outcome.utilities[keeper]


def test_keeper_beats_random() -> None:
    utilities = [play(seed, 2 + seed % 3, seed % 2) for seed in range(60)]
    assert sum(utilities) / len(utilities) > 0.5


def test_keeper_chooses_from_a_view() -> None:
    state = GAME.new({}, 3, Rng(b"keeper view"))
    bot = KeeperBot(1)
    for _ in range(40):
        seat = GAME.to_act(state)[0]
        legal = GAME.legal_actions(state, seat)
        public = wire_common.public_view(
            WIRE,
            match_id="m",
            version=1,
            status="running",
            seats=3,
            commitment="c",
            observation=GAME.observe(state, None),
            to_act=(seat,),
            outcome=None,
        )
        view = wire_common.seat_view(
            public,
            WIRE,
            seat=seat,
            observation=GAME.observe(state, seat),
            legal_actions=legal,
            move_clock_ms=1000,
            deadline_ms=0,
            now_ms=0,
        )
        chosen = bot.choose(view, view.legal_actions)
        action = WIRE.action_from_proto(chosen)
        assert action == legal[bot.act(GAME.observe(state, seat), legal)]
        state = GAME.apply(state, seat, action)


def test_running_scores_add_the_visible_rows_to_the_totals() -> None:
    state = GAME.new({}, 2, Rng(b"keeper scores"))
    public = GAME.observe(state, None)
    scores = KeeperBot().running_scores(public)
    assert len(scores) == 2 and all(5 <= s <= 15 for s in scores)  # three unknown cards each
