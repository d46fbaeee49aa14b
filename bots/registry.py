"""The built-in bots, by name (what ``--bot`` and the tournament accept)."""

from __future__ import annotations

from collections.abc import Callable

from speeltafel.bots.first_bot import FirstBot
from speeltafel.bots.random_bot import RandomBot
from speeltafel.bots.take5_gap import GapBot, GreedyBot
from speeltafel.bots.take5_search import SearchBot
from speeltafel.sdk.runner import Bot

BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "first": FirstBot,
    "greedy": GreedyBot,
    "gap": GapBot,
    "search": SearchBot,
}


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A new bot of the named kind."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; built in: {', '.join(sorted(BOTS))}") from None
    return factory(seed)
