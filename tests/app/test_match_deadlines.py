"""Every seat's deadline at once (Match.deadlines, what each snapshot and the timer read)
agrees with the one-seat rule (Match.deadline) at every version of a match with time
banks being spent, clock defaults and a seat that forfeited under "autoplay"."""

from __future__ import annotations

import random

from started_match import GAME, started_take5

from speeltafel.server.store.base import ActionRow

SEATS = 4


def test_every_seats_deadline_at_once_is_each_seats_deadline() -> None:
    match = started_take5(SEATS, time_bank_ms=5000, max_misses=2, forfeit="autoplay")
    chooser = random.Random(7)
    now = 1
    seen = {"forfeited": False, "spent": False, "several": False}
    n = 0
    while match.outcome is None:
        every = match.deadlines()
        assert every == [match.deadline(s) for s in range(SEATS)]
        assert match.current.deadlines == tuple(every)
        assert [s for s in range(SEATS) if every[s]] == sorted(match.to_act())
        seen["several"] |= sum(1 for d in every if d) > 1
        seat = chooser.choice(match.to_act())
        action = chooser.choice(GAME.legal_actions(match.state, seat))
        n += 1
        now += chooser.choice((10, 10, 1500))  # now and then over the move clock
        clock = seat == 2 and n % 3 == 0  # seat 2 misses until it forfeits
        request_id = f"clock:{match.version}:{now}" if clock else f"r{n}"
        row = ActionRow("m1", match.version, seat, request_id, GAME.action_text(action), now, clock)
        match.record(row, GAME.apply(match.state, seat, action))
        seen["forfeited"] |= match.forfeited[2]
        seen["spent"] |= any(bank < 5000 for bank in match.banks)
    assert match.deadlines() == [0] * SEATS  # over: nobody is due
    assert all(seen.values()), seen
