"""A game the server was not built with runs through a real server.

``start_server(games=..., wires=...)`` serves the engine tests' Toy Duel (list options, an
automatic option, two named decks, a seat acting over two steps) beside the registered
games, with the test-only wire of ``toy_wire.py`` (Toy Duel's values carried in the Take 5
messages: see there why). Nothing in the server names a game: this proves the seams.

The match is created from preset orders of both named decks, given interleaved; every
view a seat or spectator received decodes to exactly the observation the engine gives at
that version (replayed from the published record), the record carries the deck names, and
the record verifies.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import grpc
import pytest
from toy_wire import GAME, WIRE  # tests/service is on sys.path (rootdir-relative import)

from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.engine.core import Rng, shuffle_key
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.engine.verify import (
    RecordedMatch,
    group_orders,
    unnamed_to_first,
    verify,
)
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.sqlite import SqliteStore
from speeltafel.server.wire.registry import WIRES

TOY = GAME.info.game_id
OPTIONS = {"values": "1,2,3", "colours": "red,blue", "rounds": "0", "bonus": "true"}
NUMBERS_1 = ["blue:3", "red:1", "red:3", "blue:1", "red:2", "blue:2"]
NUMBERS_2 = ["red:2", "blue:2", "blue:1", "red:3", "red:1", "blue:3"]
BONUS = ["bonus:2", "bonus:1"]


@pytest.fixture
async def toy_server(tmp_path: object) -> AsyncIterator[Running]:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    running = await start_server(
        SqliteStore(tmp_path / "toy.db"),
        games={**GAMES, TOY: GAME},
        wires={**WIRES, TOY: WIRE},
    )
    try:
        yield running
    finally:
        await running.stop(0.1)


def _request(decks: list[tuple[str, list[str]]]) -> match_service_pb2.CreateMatchRequest:
    return match_service_pb2.CreateMatchRequest(
        game=TOY,
        seats=2,
        options=OPTIONS,
        preset_decks=[common_pb2.DeckOrder(deck=name, cards=cards) for name, cards in decks],
    )


async def test_a_test_game_plays_through_a_real_server(toy_server: Running) -> None:
    async with AsyncClient(f"127.0.0.1:{toy_server.port}") as client:
        games = {g.game: g for g in await client.list_games()}
        assert set(games) == {*GAMES, TOY}
        assert [d.name for d in games[TOY].decks] == ["numbers", "bonus"]
        assert {o.name: o.kind for o in games[TOY].options}["values"] == "int_list"

        # Interleaved on purpose: each deck takes its own orders, in the order given.
        request = _request([("numbers", NUMBERS_1), ("bonus", BONUS), ("numbers", NUMBERS_2)])
        created = await client.stub.CreateMatch(request)
        assert created.preset_deck
        seats = [await client.join(created.match_id, name=f"toy-{s}") for s in range(2)]

        received: dict[tuple[int, int | None], common_pb2.View] = {}
        chooser = random.Random(7)
        while True:
            views = [await client.get_view(seat) for seat in seats]
            for seat, view in zip(seats, views, strict=True):
                received[(view.version, seat.seat)] = view
            if views[0].status == common_pb2.MATCH_STATUS_FINISHED:
                break
            acting = [(s, v) for s, v in zip(seats, views, strict=True) if v.legal_actions]
            seat, view = chooser.choice(acting)
            action = chooser.choice(list(view.legal_actions))
            await client.submit(seat, action, expected_version=view.version)
        spectated = [v async for v in client.spectate(created.match_id)]
        for view in spectated:
            received[(view.version, None)] = view
        record = await client.record(created.match_id)

    # The first deal came from the first "numbers" order: seat 0 the top two cards.
    first = WIRE.observation_from_view(received[(1, 0)])
    assert sorted(first.hand) == sorted(NUMBERS_1[:2])

    assert [(d.deck, list(d.cards)) for d in record.preset_decks] == [
        ("numbers", NUMBERS_1),
        ("numbers", NUMBERS_2),
        ("bonus", BONUS),
    ]
    recorded = RecordedMatch(
        game=record.game,
        options=dict(record.options),
        seats=record.seats,
        server_seed=record.server_seed,
        commitment=record.commitment,
        entropies=[s.entropy for s in record.seat_records],
        presets=group_orders((d.deck, d.cards) for d in record.preset_decks),
        actions=[(a.seat, a.action) for a in record.actions],
        final_hash=record.final_state_sha256,
        termination=record.outcome.termination,
    )
    assert verify(recorded, GAME) == []

    # Every view received is exactly the engine's observation at its version.
    key = shuffle_key(record.server_seed, [s.entropy for s in record.seat_records])
    presets = unnamed_to_first(GAME.info.decks, recorded.presets)
    states = [GAME.new(dict(record.options), 2, Rng(key), presets)]
    for action in record.actions:
        states.append(GAME.apply(states[-1], action.seat, GAME.parse_action(action.action)))
    assert {version for version, _ in received} == set(range(1, len(states) + 1))
    for (version, seat), view in received.items():
        decoded = WIRE.observation_from_view(view)
        assert decoded == GAME.observe(states[version - 1], seat), (version, seat)


@pytest.mark.parametrize(
    ("decks", "why"),
    [
        ([("no_such_deck", NUMBERS_1)], "no deck named"),
        ([("", NUMBERS_1), ("numbers", NUMBERS_2)], "both with and without"),
        ([("bonus", NUMBERS_1)], "not an order"),
    ],
)
async def test_preset_decks_must_name_the_games_decks(
    toy_server: Running, decks: list[tuple[str, list[str]]], why: str
) -> None:
    async with AsyncClient(f"127.0.0.1:{toy_server.port}") as client:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.stub.CreateMatch(_request(decks))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert why in (caught.value.details() or "")


async def test_an_unnamed_order_is_the_first_deck(toy_server: Running) -> None:
    async with AsyncClient(f"127.0.0.1:{toy_server.port}") as client:
        created = await client.stub.CreateMatch(_request([("", NUMBERS_1)]))
        seats = [await client.join(created.match_id, name=f"toy-{s}") for s in range(2)]
        view = await client.get_view(seats[1])
    assert sorted(WIRE.observation_from_view(view).hand) == sorted(NUMBERS_1[2:4])
