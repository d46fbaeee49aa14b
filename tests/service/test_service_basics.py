"""The service as a whole: game list, standard services, spectators, complete matches."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from speeltafel.sdk.v1 import common_pb2, match_service_pb2, take5_pb2
from speeltafel.server.engine.core import Rng, shuffle_key
from speeltafel.server.engine.games import take5
from speeltafel.server.engine.registry import GAMES

FINISHED = common_pb2.MATCH_STATUS_FINISHED
GAME = take5.GAME


async def test_list_games_describes_take5(table: Any, server: Any) -> None:
    games = await table.client.list_games()
    assert [g.game for g in games] == list(GAMES)  # every registered game, in its order
    (info,) = [g for g in games if g.game == "take5"]
    # The range CreateMatch takes with the default options (the trial edition), and the
    # ranges of the other option values beside it.
    assert (info.name, info.rules_version, info.min_seats, info.max_seats) == ("Take 5", 1, 2, 4)
    assert [(r.option, r.value, r.min_seats, r.max_seats) for r in info.seat_ranges] == [
        ("edition", "trial", 2, 4),
        ("edition", "full", 2, 10),
    ]
    assert info.simultaneous and info.description
    options = {o.name: o for o in info.options}
    assert list(options) == ["edition", "deals", "end_score"]
    edition, deals, end_score = options["edition"], options["deals"], options["end_score"]
    assert (edition.kind, edition.default, list(edition.choices)) == (
        "choice",
        "trial",
        ["trial", "full"],
    )
    assert not edition.HasField("minimum") and not edition.HasField("maximum")
    assert (deals.kind, deals.default, deals.minimum, deals.maximum) == ("int", "3", 1, 50)
    assert (end_score.kind, end_score.default, end_score.minimum, end_score.maximum) == (
        "int",
        "0",
        0,
        10_000,
    )
    assert all(o.description for o in info.options)
    # CreateMatch fills the defaults in, and the seat range of an edition holds.
    created = await table.client.create_match("take5", 10, options={"edition": "full"})
    assert dict(created.options) == {"edition": "full", "deals": "3", "end_score": "0"}
    assert created.rules_version == 1 and len(created.commitment) == 64


async def test_list_games_advertises_only_seat_counts_create_match_accepts(
    table: Any, server: Any
) -> None:
    for info in await table.client.list_games():
        cases = [({}, info.min_seats, info.max_seats)] + [
            ({r.option: r.value}, r.min_seats, r.max_seats) for r in info.seat_ranges
        ]
        for options, low, high in cases:
            for seats in range(low, high + 1):
                await table.client.create_match(info.game, seats, options=options)
            for seats in (low - 1, high + 1):
                await table.fails(
                    table.client.create_match(info.game, seats, options=options),
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "seat_count",
                )


async def test_health_list_answers_every_service(table: Any, server: Any) -> None:
    stub = health_pb2_grpc.HealthStub(table.raw_channel())
    reply = await stub.List(health_pb2.HealthListRequest())
    statuses = {name: status.status for name, status in reply.statuses.items()}
    assert statuses == {
        "": health_pb2.HealthCheckResponse.SERVING,
        "speeltafel.v1.MatchService": health_pb2.HealthCheckResponse.SERVING,
    }


async def test_reflection_v1_describes_the_services(table: Any, server: Any) -> None:
    # The v1 protocol (what current grpcurl asks first) has v1alpha's messages field for
    # field, so v1alpha's message classes speak it over the v1 method name.
    channel = table.raw_channel()
    info = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    call = info()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    names = {s.name for s in (await call.read()).list_services_response.service}
    assert {
        "speeltafel.v1.MatchService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names
    for symbol in ("speeltafel.v1.MatchService", "grpc.reflection.v1.ServerReflection"):
        await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol))
        response = await call.read()
        assert response.WhichOneof("message_response") == "file_descriptor_response", symbol
    call.cancel()


async def test_health_serving(table: Any, server: Any) -> None:
    stub = health_pb2_grpc.HealthStub(table.raw_channel())
    for service in ("", "speeltafel.v1.MatchService"):
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND


async def test_reflection_lists_the_match_service(table: Any, server: Any) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(table.raw_channel())
    call = stub.ServerReflectionInfo()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    response = await call.read()
    names = {s.name for s in response.list_services_response.service}
    assert {
        "speeltafel.v1.MatchService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names
    call.cancel()

    # What grpcurl does: rebuild the descriptors from the server alone, then call ListGames
    # with messages built from those descriptors (no generated code involved).
    def describe(target: str) -> tuple[list[str], list[str], list[tuple[Any, ...]]]:
        with grpc.insecure_channel(target) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            pool = descriptor_pool.DescriptorPool(database)
            service = pool.FindServiceByName("speeltafel.v1.MatchService")
            view = pool.FindMessageTypeByName("speeltafel.v1.Take5View")
            method = service.FindMethodByName("ListGames")
            request_class = message_factory.GetMessageClass(method.input_type)
            response_class = message_factory.GetMessageClass(method.output_type)
            list_games = channel.unary_unary(
                "/speeltafel.v1.MatchService/ListGames",
                request_serializer=request_class.SerializeToString,
                response_deserializer=response_class.FromString,
            )
            games = [
                (g.game, g.min_seats, g.max_seats, [o.name for o in g.options])
                for g in list_games(request_class(), timeout=10).games
            ]
            return [m.name for m in service.methods], [f.name for f in view.fields], games

    methods, view_fields, games = await asyncio.to_thread(describe, table.target)
    expected = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].methods
    assert methods == [m.name for m in expected]
    assert view_fields == [f.name for f in take5_pb2.Take5View.DESCRIPTOR.fields]
    assert [g[0] for g in games] == list(GAMES)
    assert games[0] == ("take5", 2, 4, ["edition", "deals", "end_score"])


async def test_spectator_sees_no_hands_and_the_stream_ends(table: Any, server: Any) -> None:
    match = await table.create()
    watched: list[common_pb2.View] = []

    async def watch() -> None:
        async for view in table.client.spectate(match.match_id):
            watched.append(view)

    watcher = asyncio.ensure_future(watch())
    finals = await table.play_out(match)
    await asyncio.wait_for(watcher, 10)  # the stream ends by itself after the finished view
    assert watched[-1].status == FINISHED
    assert [v.status for v in watched[:-1]] == [common_pb2.MATCH_STATUS_RUNNING] * (
        len(watched) - 1
    )
    versions = [v.version for v in watched]
    assert table.contiguous(versions) and versions[-1] == finals[0].version
    assert watched[-1].outcome == finals[0].outcome
    for view in watched:
        assert not view.HasField("seat")
        assert not view.take5.hand and not view.take5.HasField("selected")
        assert not view.legal_actions
        assert not view.HasField("clock")
        assert view.commitment == match.commitment
        assert [s.hand_size for s in view.take5.seats]  # sizes are public, cards are not
    # No card in a hand or sealed selection ever shows: replay the record to know them.
    record = await table.client.record(match.match_id)
    key = shuffle_key(record.server_seed, [s.entropy for s in record.seat_records])
    states = [GAME.new(dict(record.options), 2, Rng(key))]
    for action in record.actions:
        states.append(GAME.apply(states[-1], action.seat, GAME.parse_action(action.action)))
    for view in watched:
        state = states[view.version - 1]
        secret = {c for hand in state.hands for c in hand}
        secret |= {c for c in state.selected if c is not None}
        t5 = view.take5
        shown = {c.number for r in t5.rows for c in r.cards}
        shown |= {c.number for seat in t5.seats for c in seat.penalty}
        shown |= {r.card for r in t5.to_place}
        shown |= {r.card for turn in t5.history for r in turn.revealed}
        assert not shown & secret, view.version
        assert [s.committed for s in t5.seats] == [c is not None for c in state.selected]
    # Spectating a finished match: its final view, and the stream ends.
    late = [v async for v in table.client.spectate(match.match_id)]
    assert len(late) == 1 and late[0].status == FINISHED and late[0].version == versions[-1]


@pytest.mark.parametrize("seats", [2, 3, 4])
async def test_full_match_through_play_seat(table: Any, server: Any, seats: int) -> None:
    match = await table.create(seats)
    acks: list[tuple[int, int]] = []
    finals = await asyncio.wait_for(
        table.play_out(match, seed=seats, on_ack=lambda s, req, ack: acks.append((s, ack.seq))),
        60,
    )
    summary = await table.client.get_match(match.match_id)
    record = await table.client.record(match.match_id)
    assert summary.status == FINISHED
    assert summary.seat_names == [f"seat-{s}" for s in range(seats)]
    outcome = summary.outcome
    for final in finals:
        assert final.status == FINISHED and final.version == summary.version
        assert final.outcome == outcome and not final.legal_actions and not final.to_act
        assert final.take5.phase == take5_pb2.TAKE5_PHASE_OVER
    assert record.outcome == outcome
    # The outcome agrees with the table: totals, ranks (lowest total wins), utilities.
    final = finals[0]
    totals = [s.total for s in final.take5.seats]
    assert list(outcome.scores) == totals
    assert all(len(s.deal_scores) == 3 and sum(s.deal_scores) == s.total for s in final.take5.seats)
    assert list(outcome.ranks) == [1 + sum(t < mine for t in totals) for mine in totals]
    assert abs(sum(outcome.utilities)) < 1e-9
    assert all(-1 <= u <= 1 for u in outcome.utilities)
    assert outcome.termination == "normal"
    # Every acknowledged action is in the log once; the log replays to the final state.
    assert sorted(seq for _, seq in acks) == [a.seq for a in record.actions]
    assert [a.seq for a in record.actions] == list(range(1, summary.version))
    hand = take5.TRIAL_HAND_SIZES[seats]
    selections = [a for a in record.actions if a.action.startswith("select:")]
    assert len(selections) == 3 * hand * seats
    key = shuffle_key(record.server_seed, [s.entropy for s in record.seat_records])
    state = GAME.new(dict(record.options), seats, Rng(key))
    for action in record.actions:
        state = GAME.apply(state, action.seat, GAME.parse_action(action.action))
    assert hashlib.sha256(GAME.encode(state)).hexdigest() == record.final_state_sha256
    assert GAME.outcome(state).scores == tuple(outcome.scores)
    assert record.started_unix_ms >= record.created_unix_ms
    assert record.finished_unix_ms >= record.started_unix_ms
