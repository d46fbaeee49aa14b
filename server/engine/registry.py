"""Every game the engine offers, by game id. A new game is one module and one line here."""

from __future__ import annotations

from speeltafel.server.engine.core import GameAny, InvalidOptions
from speeltafel.server.engine.games import (
    alles_klar,
    beverbende,
    karel_kakelaar,
    kleurenwiezen,
    sneaky_bastard,
    take5,
)

GAMES: dict[str, GameAny] = {
    game.info.game_id: game
    for game in (
        take5.GAME,
        karel_kakelaar.GAME,
        sneaky_bastard.GAME,
        beverbende.GAME,
        alles_klar.GAME,
        kleurenwiezen.GAME,
    )
}

# Every game's number k, fixed when it was planned (shared/design.md): its proto fields are
# ``Action`` field 10 + k and ``View`` field 20 + k. A planned game keeps its number before
# its module exists, so that no field number is ever reused for another game.
GAME_NUMBERS: dict[str, int] = {
    "take5": 0,
    "karel_kakelaar": 1,
    "sneaky_bastard": 2,
    "beverbende": 3,
    "alles_klar": 4,
    "kleurenwiezen": 5,
}


def action_field(game_id: str) -> int:
    """The ``Action`` message field number of a game's actions (10 + k)."""
    return 10 + GAME_NUMBERS[game_id]


def view_field(game_id: str) -> int:
    """The ``View`` message field number of a game's view (20 + k)."""
    return 20 + GAME_NUMBERS[game_id]


def get_game(game_id: str) -> GameAny:
    """The game with this id, or :class:`InvalidOptions` naming the ones there are."""
    try:
        return GAMES[game_id]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise InvalidOptions(
            f"unknown game {game_id[:40]!r}; known: {known}", "unknown_game"
        ) from None
