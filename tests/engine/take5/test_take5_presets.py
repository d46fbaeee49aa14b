"""How a preset pack is dealt (as the module docstring says), and Take 5's description."""

from __future__ import annotations

from speeltafel.server.engine.core import Rng
from speeltafel.server.engine.games.take5 import GAME


def test_a_preset_pack_is_dealt_as_documented() -> None:
    order = [str(c) for c in (*range(32, 0, -1),)]  # 32, 31, ..., 1 from the top
    state = GAME.new({}, 3, Rng(b"unused"), {"pack": [order]})
    cards = [int(c) for c in order]
    assert state.hands == tuple(tuple(sorted(cards[s * 9 : s * 9 + 9])) for s in range(3))
    assert state.rows == ((cards[27],), (cards[28],), (cards[29],))  # positions 28-30
    assert state.unused == tuple(cards[30:])  # positions 31-32
    plain = GAME.new({}, 3, Rng(b"unused"), [order])
    assert GAME.encode(plain) == GAME.encode(state)


def test_take5_describes_its_score_and_its_deck() -> None:
    info = GAME.info
    assert (info.score_name, info.lower_is_better) == ("heads", True)
    assert [deck.name for deck in info.decks] == ["pack"]
    assert info.rules_version == 1
