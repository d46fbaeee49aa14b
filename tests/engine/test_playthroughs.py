"""Golden playthroughs: fixed seeds played through every game, diffed against files.

Any change to a game's rules, its deal or its state encoding changes a playthrough, and this
test points at the first line that moved. When the change is intended, bump the game's
``rules_version`` (for a rule change) and regenerate with ``make playthroughs``.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import random
from pathlib import Path

import pytest

from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.registry import GAMES

FOLDER = Path(__file__).parent / "playthroughs"
# (options, seats, seed) per game; each seed is played with a seeded random chooser.
SETUPS: dict[str, list[tuple[dict[str, str], int, int]]] = {
    "take5": [({}, 2, 1), ({}, 4, 2), ({"edition": "full", "deals": "1"}, 5, 3)],
    "karel_kakelaar": [({}, 2, 4), ({"first_tractor": "2"}, 3, 5), ({}, 5, 6)],
    "sneaky_bastard": [({}, 3, 7), ({"first_player": "random"}, 4, 8)],
    "beverbende": [({}, 2, 12), ({"turn_limit": "10"}, 3, 13), ({}, 4, 14)],
    "alles_klar": [({}, 2, 9), ({"dealer": "random"}, 3, 10), ({}, 5, 11)],
    "kleurenwiezen": [
        ({"deals": "4"}, 4, 15),
        ({"deals": "5", "first_dealer": "random"}, 5, 16),
        ({"deals": "6", "shuffle_between_deals": "true"}, 6, 17),
    ],
}


def render(game_id: str) -> str:
    """The playthrough text of one game."""
    game = GAMES[game_id]
    lines = [f"# {game_id} rules_version {game.info.rules_version}"]
    for options, seats, seed in SETUPS[game_id]:
        lines.append(f"## options {sorted(options.items())} seats {seats} seed {seed}")
        state = game.new(options, seats, Rng(seed.to_bytes(32, "big")))
        for zone, cards in sorted(game.zones(state).items()):
            lines.append(f"   {zone} {' '.join(cards)}".rstrip())
        chooser = random.Random(seed)
        seq = 0
        while game.outcome(state) is None:
            seat = chooser.choice(game.to_act(state))
            action = chooser.choice(game.legal_actions(state, seat))
            state = game.apply(state, seat, action)
            seq += 1
            digest = hashlib.sha256(game.encode(state)).hexdigest()[:12]
            lines.append(
                f"{seq:4} seat {seat} {game.action_text(action):<10} "
                f"to_act {list(game.to_act(state))} {digest}"
            )
        lines.append(f"   outcome {game.outcome(state)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_playthrough_matches_golden_file(game_id: str) -> None:
    path = FOLDER / f"{game_id}.txt"
    text = render(game_id)
    if os.environ.get("SPEELTAFEL_REGENERATE") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file for {game_id}: run `make playthroughs`"
    golden = path.read_text()
    if text != golden:
        diff = "".join(
            list(
                difflib.unified_diff(
                    golden.splitlines(keepends=True),
                    text.splitlines(keepends=True),
                    "golden",
                    "now",
                    n=2,
                )
            )[:40]
        )
        pytest.fail(
            f"{game_id} playthrough changed (intended? bump rules_version and run "
            f"`make playthroughs`):\n{diff}"
        )
