"""Every game the engine offers, by game id. A new game is one module and one line here."""

from __future__ import annotations

from speeltafel.server.engine.core import GameAny, InvalidOptions
from speeltafel.server.engine.games import take5

GAMES: dict[str, GameAny] = {game.info.game_id: game for game in (take5.GAME,)}


def get_game(game_id: str) -> GameAny:
    """The game with this id, or :class:`InvalidOptions` naming the ones there are."""
    try:
        return GAMES[game_id]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise InvalidOptions(
            f"unknown game {game_id[:40]!r}; known: {known}", "unknown_game"
        ) from None
