"""The built-in bots by name, each with the games it plays, and each game's heuristic bot.

What ``--bot``, ``--bots`` and the tournament accept. ``random`` and ``first`` read nothing
but the legal actions, so they play every game, even one this install does not know;
``search`` plays every game of the engine (it searches with the engine's rules); the
heuristic bots play the game they were written for. A game's heuristic bot is also the
search bot's playout policy for that game, so a new game gets a search bot at once, and a
stronger one as soon as it has a heuristic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from speeltafel.bots.alles_klar_lookahead import LookaheadBot
from speeltafel.bots.beverbende_keeper import KeeperBot
from speeltafel.bots.first_bot import FirstBot
from speeltafel.bots.karel_kakelaar_hungry import HungryBot
from speeltafel.bots.kleurenwiezen_solver import WiezenSolver
from speeltafel.bots.kleurenwiezen_wiezer import WiezerBot
from speeltafel.bots.random_bot import RandomBot
from speeltafel.bots.search_bot import HeuristicBot, SearchBot, Solver
from speeltafel.bots.sneaky_bastard_budget import BudgetBot
from speeltafel.bots.take5_gap import GapBot, GreedyBot
from speeltafel.sdk.runner import Bot
from speeltafel.server.engine.registry import GAMES

ANY_GAME = None  # the games of a bot that reads only the legal actions


@dataclass(frozen=True, slots=True)
class BotEntry:
    """One built-in bot: how to make it and which games it plays."""

    name: str
    make: Callable[[int | None], Bot]
    games: frozenset[str] | None  # ANY_GAME: every game there is
    description: str

    def plays(self, game_id: str) -> bool:
        """Whether this bot plays ``game_id``."""
        return self.games is None or game_id in self.games


#: Each game's heuristic bot (engine terms): the search bot's playout policy there.
HEURISTICS: dict[str, Callable[[], HeuristicBot]] = {
    "take5": GapBot,
    "karel_kakelaar": HungryBot,
    "sneaky_bastard": BudgetBot,
    "beverbende": KeeperBot,
    "alles_klar": LookaheadBot,
    "kleurenwiezen": WiezerBot,
}


def heuristic_for(game_id: str) -> HeuristicBot | None:
    """A new heuristic bot of ``game_id``, or None when the game has none yet."""
    factory = HEURISTICS.get(game_id)
    return factory() if factory is not None else None


#: Each game's exact solver of a world, where it has one: ends the search bot's rollouts
#: within its tuning's ``exact_reach``.
SOLVERS: dict[str, Callable[[], Solver]] = {
    "kleurenwiezen": WiezenSolver,
}


def solver_for(game_id: str) -> Solver | None:
    """A new solver of ``game_id``, or None when the game has none."""
    factory = SOLVERS.get(game_id)
    return factory() if factory is not None else None


def _search(seed: int | None) -> Bot:
    return SearchBot(seed, heuristics=heuristic_for, solvers=solver_for)


_ENTRIES = (
    BotEntry("random", RandomBot, ANY_GAME, "a uniformly random legal action"),
    BotEntry("first", FirstBot, ANY_GAME, "always the first legal action"),
    BotEntry("greedy", GreedyBot, frozenset({"take5"}), "Take 5: avoids only certain penalties"),
    BotEntry("gap", GapBot, frozenset({"take5"}), "Take 5: avoids rows about to be taken"),
    BotEntry(
        "hungry", HungryBot, frozenset({"karel_kakelaar"}), "Karel Kakelaar: bids by expected gain"
    ),
    BotEntry(
        "budget",
        BudgetBot,
        frozenset({"sneaky_bastard"}),
        "Sneaky Bastard: bids within a budget per house, sneaks on big pots",
    ),
    BotEntry(
        "keeper",
        KeeperBot,
        frozenset({"beverbende"}),
        "Beverbende: keeps low cards, knocks when ahead",
    ),
    BotEntry(
        "lookahead",
        LookaheadBot,
        frozenset({"alles_klar"}),
        "Alles Klar?: weighs each play by the trick it decides now or next turn",
    ),
    BotEntry(
        "wiezer",
        WiezerBot,
        frozenset({"kleurenwiezen"}),
        "Kleurenwiezen: bids the tricks its hand counts (miserie on a low hand), plays cheap",
    ),
    BotEntry(
        "search",
        _search,
        frozenset(GAMES),
        "Monte Carlo search over worlds sampled from its view; the game's heuristic bot "
        "as playout policy",
    ),
)
BOTS: dict[str, BotEntry] = {entry.name: entry for entry in _ENTRIES}


def bots_for(game_id: str, names: Iterable[str] | None = None) -> list[str]:
    """The bots (of ``names``, default all, in that order) that play ``game_id``."""
    return [name for name in (names or BOTS) if name in BOTS and BOTS[name].plays(game_id)]


def check_bot(name: str, game_id: str | None = None) -> BotEntry:
    """The named bot's entry; ``ValueError`` with a clear message for an unknown bot or one
    that does not play ``game_id``."""
    try:
        entry = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; built in: {', '.join(BOTS)}") from None
    if game_id is not None and not entry.plays(game_id):
        plays = ", ".join(sorted(entry.games or ()))
        others = ", ".join(bots_for(game_id)) or "none"
        raise ValueError(
            f"bot {name!r} does not play {game_id!r} (it plays {plays}); "
            f"bots for {game_id}: {others}"
        )
    return entry


def make_bot(name: str, seed: int | None = None, game: str | None = None) -> Bot:
    """A new bot of the named kind; with ``game``, refused unless it plays that game."""
    return check_bot(name, game).make(seed)
