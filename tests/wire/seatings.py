"""Every seat count of every game, with the options that allow it (shared by the wire tests).

A game's ``min_seats``..``max_seats`` spans every choice of options; a seat count the
defaults do not allow is played with the option value whose ``SeatRange`` allows it.
"""

from __future__ import annotations

from speeltafel.server.engine.core import GameInfo


def seatings(info: GameInfo) -> list[tuple[dict[str, str], int]]:
    """``(options, seats)`` for each seat count from ``min_seats`` to ``max_seats`` that some
    options allow: the defaults where they do, else the first seat range's option value."""
    out = []
    for seats in range(info.min_seats, info.max_seats + 1):
        low, high = info.seats_for({})
        if low <= seats <= high:
            out.append(({}, seats))
            continue
        for seat_range in info.seat_ranges:
            options = {seat_range.option: seat_range.value}
            low, high = info.seats_for(options)
            if low <= seats <= high:
                out.append((options, seats))
                break
    return out
