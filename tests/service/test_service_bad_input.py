"""A. Bad input: garbage, oversized messages, unknown fields, missing and out-of-range values.

reliability.md A1, A2, A5, A6. Bad input gets a clear status and changes nothing.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from speeltafel.sdk.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc, take5_pb2
from speeltafel.server.engine.registry import GAMES

SERVICE = "/speeltafel.v1.MatchService/"
METHODS = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].methods
METHODS_BY_NAME = {m.name: m for m in METHODS}
SEAT_METHODS = {"GetView", "SubmitAction", "Play"}
Code = grpc.StatusCode


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def varint_field(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


async def healthy(table: Any) -> None:
    """The server answers health checks and a plain call."""
    channel = table.raw_channel()
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "speeltafel.v1.MatchService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    games = await table.client.list_games()
    assert [g.game for g in games] == list(GAMES)


def valid_request(method: str, match_id: str) -> bytes:
    """A well-formed request of each method (what the garbage is cut from)."""
    requests: dict[str, Any] = {
        "ListGames": match_service_pb2.ListGamesRequest(),
        "CreateMatch": match_service_pb2.CreateMatchRequest(game="take5", seats=2),
        "JoinMatch": match_service_pb2.JoinMatchRequest(match_id=match_id, name="x"),
        "GetMatch": match_service_pb2.GetMatchRequest(match_id=match_id),
        "GetView": match_service_pb2.GetViewRequest(match_id=match_id),
        "SubmitAction": match_service_pb2.SubmitActionRequest(
            match_id=match_id, expected_version=1, request_id="r", action=common_pb2.Action()
        ),
        "Play": match_service_pb2.PlayRequest(
            subscribe=match_service_pb2.Subscribe(match_id=match_id)
        ),
        "Spectate": match_service_pb2.SpectateRequest(match_id=match_id),
        "GetMatchRecord": match_service_pb2.GetMatchRecordRequest(match_id=match_id),
    }
    data: bytes = requests[method].SerializeToString()
    return data


def garbage_payloads(method: str, match_id: str) -> list[bytes]:
    """Bytes that parse as no message: junk, a length past the end, a truncated request."""
    request_class = message_factory.GetMessageClass(METHODS_BY_NAME[method].input_type)
    payloads = [
        b"\xff" * 16,  # a varint tag that never ends
        b"\x0a\x7fshort",  # field 1 claims 127 bytes, 5 follow
        b"\x0f\x00",  # wire type 7 does not exist
    ]
    valid = valid_request(method, match_id)
    if len(valid) > 1:
        payloads.append(valid[:-1])  # the last length-delimited field cut short
    for payload in payloads:
        with pytest.raises(Exception):  # noqa: B017 - any parse error will do
            request_class.FromString(payload)
    return payloads


async def raw_call(
    channel: grpc.aio.Channel, method: str, payload: bytes, metadata: Any
) -> grpc.aio.AioRpcError:
    """Send raw bytes to ``method``; return the error it must end with."""
    descriptor = METHODS_BY_NAME[method]
    path = SERVICE + method
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if descriptor.client_streaming:
            call = channel.stream_stream(path)(metadata=metadata)
            await call.write(payload)
            await call.done_writing()
            async for _ in call:
                pass
        elif descriptor.server_streaming:
            async for _ in channel.unary_stream(path)(payload, metadata=metadata):
                pass
        else:
            await channel.unary_unary(path)(payload, metadata=metadata)
    return caught.value


# --------------------------------------------------------------------------- A1


@pytest.mark.lifted_rates
async def test_a1_garbage_on_every_rpc(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    await table.submit(match.seats[0], table.select(5))
    before = await table.state(match)
    matches_before = set(server.runtime.matches)
    channel = table.raw_channel()
    seat = match.seats[0]
    assert {m.name for m in METHODS} >= SEAT_METHODS
    tried = 0
    with capture_logs() as logs:
        for descriptor in METHODS:
            method = descriptor.name
            for payload in garbage_payloads(method, match.match_id):
                for metadata in (seat.metadata, ()):
                    err = await raw_call(channel, method, payload, metadata)
                    tried += 1
                    allowed = {Code.INVALID_ARGUMENT}
                    if method in SEAT_METHODS and not metadata:
                        allowed.add(Code.UNAUTHENTICATED)
                    assert err.code() in allowed, (method, payload, err.code(), err.details())
                    if err.code() is Code.INVALID_ARGUMENT:
                        assert table.rule_of(err) == "malformed_request"
                    # No parser text, type name or traceback reaches the client.
                    for word in ("DecodeError", "Traceback", "Error parsing", "Unexpected"):
                        assert word not in (err.details() or "")
    assert tried >= len(METHODS) * 2 * 3
    assert not [e for e in logs if e.get("log_level") == "error"]
    await healthy(table)
    assert await table.state(match) == before
    assert set(server.runtime.matches) == matches_before


async def test_a1_garbage_inside_an_open_play_stream(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    before = await table.state(match)
    seat = match.seats[0]
    channel = table.raw_channel()
    call = channel.stream_stream(SERVICE + "Play")(metadata=seat.metadata)
    subscribe = match_service_pb2.PlayRequest(
        subscribe=match_service_pb2.Subscribe(match_id=match.match_id)
    )
    await call.write(subscribe.SerializeToString())
    subscribed = match_service_pb2.PlayResponse.FromString(await call.read())
    assert subscribed.subscribed.version == 1
    first = match_service_pb2.PlayResponse.FromString(await call.read())
    assert first.view.version == 1
    await call.write(b"\xff" * 16)
    response = match_service_pb2.PlayResponse.FromString(await call.read())
    error = response.result.error
    assert error.code == Code.INVALID_ARGUMENT.value[0]
    assert error.rule == "malformed_request"
    call.cancel()
    await healthy(table)
    assert await table.state(match) == before


# --------------------------------------------------------------------------- A2


async def test_a2_message_above_receive_limit(table: Any, server: Any, monkeypatch: Any) -> None:
    from speeltafel.server.rpc.server import MAX_RECEIVE_BYTES

    match = await table.create(deck=table.STANDARD_DECK)
    before = await table.state(match)
    seat = match.seats[0]
    calls: list[str] = []
    runtime = server.runtime
    original_submit, original_create = runtime.submit, runtime.create_match

    async def spy_submit(*args: Any, **kwargs: Any) -> Any:
        calls.append("submit")
        return await original_submit(*args, **kwargs)

    async def spy_create(*args: Any, **kwargs: Any) -> Any:
        calls.append("create")
        return await original_create(*args, **kwargs)

    monkeypatch.setattr(runtime, "submit", spy_submit)
    monkeypatch.setattr(runtime, "create_match", spy_create)
    big = "x" * (MAX_RECEIVE_BYTES + 1024)
    stub = table.client.stub
    err = await table.fails(
        stub.CreateMatch(match_service_pb2.CreateMatchRequest(game=big, seats=2)),
        Code.RESOURCE_EXHAUSTED,
    )
    assert "larger than max" in err.details()
    request = match_service_pb2.SubmitActionRequest(
        match_id=match.match_id, expected_version=1, request_id=big, action=table.select(5)
    )
    await table.fails(stub.SubmitAction(request, metadata=seat.metadata), Code.RESOURCE_EXHAUSTED)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        call = stub.Play(metadata=seat.metadata)
        await call.write(match_service_pb2.PlayRequest(submit=request))
        async for _ in call:
            pass
    assert caught.value.code() is Code.RESOURCE_EXHAUSTED
    # The handlers never ran.
    assert calls == []
    # Just below the limit the message arrives and the handler refuses the long id itself.
    request.request_id = "x" * (MAX_RECEIVE_BYTES - 1024)
    await table.fails(
        stub.SubmitAction(request, metadata=seat.metadata), Code.INVALID_ARGUMENT, "request_id"
    )
    assert calls == ["submit"]
    await healthy(table)
    assert await table.state(match) == before


# --------------------------------------------------------------------------- A5

MARKS = [b"LEAK-MARK-%d-unknown-field-bytes" % i for i in range(5)]


def request_with_unknowns(match_id: str, version: int, request_id: str, card: int) -> bytes:
    """A valid select, with unknown fields (and unknown 'enum' varints) at every level."""
    select = varint_field(1, card) + length_delimited(999, MARKS[0])
    take5 = (
        length_delimited(1, select)
        + length_delimited(998, MARKS[1])
        + varint_field(50, 77)  # an enum field of a later version, with a value we never had
    )
    action = length_delimited(10, take5) + length_delimited(997, MARKS[2])
    head = match_service_pb2.SubmitActionRequest(
        match_id=match_id, expected_version=version, request_id=request_id
    ).SerializeToString()
    return (
        head
        + length_delimited(4, action)
        + length_delimited(999, MARKS[3])
        + varint_field(20, 2**31 + 5)
    )


def leaks(blob: bytes) -> list[bytes]:
    return [mark for mark in MARKS if mark in blob]


async def test_a5_unknown_fields_are_dropped_at_the_wire(table: Any, monkeypatch: Any) -> None:
    await table.start(table.sqlite_store())
    options = {"deals": "1"}
    match = await table.create(deck=table.STANDARD_DECK, options=options)
    twin = await table.create(deck=table.STANDARD_DECK, options=options)
    raw = request_with_unknowns(match.match_id, 1, "with-unknowns", 7)
    parsed = match_service_pb2.SubmitActionRequest.FromString(raw)
    assert (
        parsed.action.take5.select.card == 7
    )  # the client library keeps them, the server must not
    assert leaks(parsed.SerializeToString())

    channel = table.raw_channel()
    submit = channel.unary_unary(SERVICE + "SubmitAction")
    seat0 = match.seats[0]
    with capture_logs() as logs:
        ack = match_service_pb2.SubmitActionResponse.FromString(
            await submit(raw, metadata=seat0.metadata)
        )
        assert (ack.seq, ack.version, ack.duplicate) == (1, 2, False)
        # The same request again, its unknown bytes changed: the same action, so a duplicate.
        again = raw.replace(MARKS[3], MARKS[4])
        repeat = match_service_pb2.SubmitActionResponse.FromString(
            await submit(again, metadata=seat0.metadata)
        )
        assert (repeat.seq, repeat.duplicate) == (1, True)
        # Handled as if absent: the twin match, sent the plain move, looks the same.
        await table.submit(twin.seats[0], table.select(7), 1)
        for mine, other in zip(match.seats, twin.seats, strict=True):
            seen, expected = await table.view(mine), await table.view(other)
            for view in (seen, expected):
                view.match_id = ""
                view.commitment = ""
                view.ClearField("clock")
            assert seen == expected
            assert not leaks(seen.SerializeToString())
        # Unknown members of a oneof read as "nothing set".
        unknown_game = match_service_pb2.SubmitActionRequest(
            match_id=match.match_id, expected_version=2, request_id="future-game"
        ).SerializeToString() + length_delimited(4, length_delimited(19, b"\x08\x01"))
        err = await raw_error(submit, unknown_game, match.seats[1].metadata)
        assert (err.code(), table.rule_of(err)) == (Code.INVALID_ARGUMENT, "empty_action")
        unknown_kind = match_service_pb2.SubmitActionRequest(
            match_id=match.match_id, expected_version=2, request_id="future-kind"
        ).SerializeToString() + length_delimited(
            4, length_delimited(10, length_delimited(3, b"\x08\x01"))
        )
        err = await raw_error(submit, unknown_kind, match.seats[1].metadata)
        assert (err.code(), table.rule_of(err)) == (Code.INVALID_ARGUMENT, "empty_action")

        # Play the match out and look everywhere the bytes could have gone.
        seen_views: list[bytes] = []
        finals = await table.play_out(
            match, on_view=lambda s, v: seen_views.append(v.SerializeToString())
        )
    assert all(v.status == common_pb2.MATCH_STATUS_FINISHED for v in finals)
    record = await table.client.record(match.match_id)
    summary = await table.client.get_match(match.match_id)
    spectated = [v.SerializeToString() async for v in table.client.spectate(match.match_id)]
    assert record.actions[0].action == "select:7" and record.actions[0].seat == 0
    for blob in [*seen_views, *spectated, record.SerializeToString(), summary.SerializeToString()]:
        assert not leaks(blob)
    assert not leaks(repr(logs).encode())
    db_files = sorted(table.db_path.parent.glob(table.db_path.name + "*"))
    assert db_files
    for path in db_files:
        assert not leaks(path.read_bytes()), path.name
    await table.stop()
    for path in sorted(table.db_path.parent.glob(table.db_path.name + "*")):
        assert not leaks(path.read_bytes()), path.name


async def raw_error(method: Any, payload: bytes, metadata: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await method(payload, metadata=metadata)
    return caught.value


# --------------------------------------------------------------------------- A6


@pytest.mark.lifted_rates
async def test_a6_bad_submissions_name_the_field_or_rule(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    stub = table.client.stub

    def request(**fields: Any) -> match_service_pb2.SubmitActionRequest:
        base: dict[str, Any] = {
            "match_id": match.match_id,
            "expected_version": 1,
            "request_id": "bad-1",
            "action": table.select(3),
        }
        base.update(fields)
        return match_service_pb2.SubmitActionRequest(**base)

    empty_take5 = common_pb2.Action()
    empty_take5.take5.SetInParent()
    select_phase = [
        (request(match_id=""), Code.INVALID_ARGUMENT, "match_id"),
        (request(request_id=""), Code.INVALID_ARGUMENT, "request_id"),
        (request(request_id="r" * 65), Code.INVALID_ARGUMENT, "request_id"),
        (request(expected_version=0), Code.INVALID_ARGUMENT, "expected_version"),
        (request(action=common_pb2.Action()), Code.INVALID_ARGUMENT, "empty_action"),
        (request(action=empty_take5), Code.INVALID_ARGUMENT, "empty_action"),
        (request(action=table.row(1)), Code.FAILED_PRECONDITION, "wrong_phase"),
        (request(action=table.select(0)), Code.INVALID_ARGUMENT, "no_such_card"),
        (request(action=table.select(33)), Code.INVALID_ARGUMENT, "no_such_card"),
        (request(action=table.select(2**31)), Code.INVALID_ARGUMENT, "no_such_card"),
        (request(action=table.select(2**32 - 1)), Code.INVALID_ARGUMENT, "no_such_card"),
        (request(action=table.select(13)), Code.FAILED_PRECONDITION, "not_in_hand"),
        (request(action=table.select(25)), Code.FAILED_PRECONDITION, "not_in_hand"),
        (request(action=table.row(0)), Code.INVALID_ARGUMENT, "no_such_row"),
        (request(action=table.row(4)), Code.INVALID_ARGUMENT, "no_such_row"),
        (request(action=table.row(2**31)), Code.INVALID_ARGUMENT, "no_such_row"),
    ]
    before = await table.state(match)
    for bad, code, rule in select_phase:
        await table.fails(stub.SubmitAction(bad, metadata=seat0.metadata), code, rule)
        assert await table.state(match) == before, (bad, rule)
    # The stream answers the same, per action.
    call = table.client.play_stream(seat0)
    await call.write(
        match_service_pb2.PlayRequest(
            subscribe=match_service_pb2.Subscribe(match_id=match.match_id, since_version=1)
        )
    )
    assert (await call.read()).subscribed.version == 1
    for bad, code, rule in select_phase[1:]:
        await call.write(match_service_pb2.PlayRequest(submit=bad))
        result = (await call.read()).result
        assert (result.error.code, result.error.rule) == (code.value[0], rule), result
    call.cancel()
    assert await table.state(match) == before

    # A row choice pending for seat 0: selecting is the wrong kind of action now.
    await table.submit(seat0, table.select(1), 1)
    await table.submit(seat1, table.select(13), 2)
    view = await table.view(seat0)
    assert view.take5.phase == take5_pb2.TAKE5_PHASE_ROW_CHOICE and list(view.to_act) == [0]
    before = await table.state(match)
    for action, code, rule in [
        (table.select(2), Code.FAILED_PRECONDITION, "wrong_phase"),
        (table.select(99), Code.INVALID_ARGUMENT, "no_such_card"),
        (table.row(0), Code.INVALID_ARGUMENT, "no_such_row"),
        (table.row(4), Code.INVALID_ARGUMENT, "no_such_row"),
    ]:
        bad = request(expected_version=view.version, action=action)
        await table.fails(stub.SubmitAction(bad, metadata=seat0.metadata), code, rule)
        assert await table.state(match) == before


async def test_a6_missing_match_ids(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    before = await table.state(match)
    stub = table.client.stub
    seat = match.seats[0]
    invalid = Code.INVALID_ARGUMENT
    await table.fails(stub.GetMatch(match_service_pb2.GetMatchRequest()), invalid, "match_id")
    await table.fails(stub.JoinMatch(match_service_pb2.JoinMatchRequest()), invalid, "match_id")
    await table.fails(
        stub.GetMatchRecord(match_service_pb2.GetMatchRecordRequest()), invalid, "match_id"
    )
    await table.fails(
        stub.GetView(match_service_pb2.GetViewRequest(), metadata=seat.metadata),
        invalid,
        "match_id",
    )
    spectate = stub.Spectate(match_service_pb2.SpectateRequest())
    await table.fails(spectate.read(), invalid, "match_id")
    play = stub.Play(metadata=(seat.metadata[0], ("x-match-id", "")))
    await play.write(match_service_pb2.PlayRequest(subscribe=match_service_pb2.Subscribe()))
    await table.fails(play.read(), invalid, "match_id")
    # Unknown ids are NOT_FOUND (public calls; seat calls are covered by the identity tests).
    not_found = Code.NOT_FOUND
    unknown = "0123456789abcdef"
    await table.fails(
        stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=unknown)),
        not_found,
        "no_such_match",
    )
    await table.fails(
        stub.JoinMatch(match_service_pb2.JoinMatchRequest(match_id=unknown)),
        not_found,
        "no_such_match",
    )
    await table.fails(
        stub.Spectate(match_service_pb2.SpectateRequest(match_id=unknown)).read(),
        not_found,
        "no_such_match",
    )
    assert await table.state(match) == before


@pytest.mark.parametrize(
    ("game", "seats", "options", "deck", "clock", "rule"),
    [
        ("", 2, {}, None, 0, "game"),
        ("chess", 2, {}, None, 0, "unknown_game"),
        ("take5", 2, {"colour": "red"}, None, 0, "invalid_options"),
        ("take5", 2, {"edition": "mega"}, None, 0, "invalid_options"),
        ("take5", 2, {"deals": "0"}, None, 0, "invalid_options"),
        ("take5", 2, {"deals": "three"}, None, 0, "invalid_options"),
        ("take5", 2, {"deals": "51"}, None, 0, "invalid_options"),
        ("take5", 2, {"end_score": "-1"}, None, 0, "invalid_options"),
        ("take5", 0, {}, None, 0, "seat_count"),
        ("take5", 1, {}, None, 0, "seat_count"),
        ("take5", 5, {}, None, 0, "seat_count"),
        ("take5", 11, {"edition": "full"}, None, 0, "seat_count"),
        ("take5", 2, {}, [str(c) for c in range(1, 32)], 0, "invalid_options"),
        ("take5", 2, {}, ["1", *[str(c) for c in range(1, 32)]], 0, "invalid_options"),
        ("take5", 2, {}, [*[str(c) for c in range(1, 32)], "33"], 0, "invalid_options"),
        ("take5", 2, {}, [*[str(c) for c in range(1, 32)], "x"], 0, "invalid_options"),
        ("take5", 2, {}, [str(c) for c in range(1, 105)], 0, "invalid_options"),
        ("take5", 2, {}, None, 5, "move_clock_ms"),
        ("take5", 2, {}, None, 3_600_001, "move_clock_ms"),
    ],
)
async def test_a6_create_match_refusals(
    table: Any,
    server: Any,
    game: str,
    seats: int,
    options: dict[str, str],
    deck: list[str] | None,
    clock: int,
    rule: str,
) -> None:
    before = dict(server.runtime.matches)
    await table.fails(
        table.client.create_match(
            game,
            seats,
            options=options,
            move_clock_ms=clock,
            preset_decks=None if deck is None else [deck],
        ),
        Code.INVALID_ARGUMENT,
        rule,
    )
    assert server.runtime.matches == before


@pytest.mark.lifted_rates
async def test_a6_refusals_hold_after_accepted_calls_of_the_same_form(
    table: Any, server: Any
) -> None:
    """What the server keeps from an accepted call (a form of match that dealt once, the
    error guard's handler of a method) never lets a later bad call through."""
    client = table.client
    for _ in range(2):
        await client.create_match("take5", 2)
    before = dict(server.runtime.matches)
    # The same game and options with another seat count, or with a bad preset deck.
    await table.fails(client.create_match("take5", 5), Code.INVALID_ARGUMENT, "seat_count")
    await table.fails(
        client.create_match("take5", 2, preset_decks=[[str(c) for c in range(1, 32)]]),
        Code.INVALID_ARGUMENT,
        "invalid_options",
    )
    # A malformed request of a method that has just been answered.
    err = await raw_call(table.raw_channel(), "CreateMatch", b"\xff" * 16, ())
    assert err.code() is Code.INVALID_ARGUMENT
    assert table.rule_of(err) == "malformed_request"
    assert server.runtime.matches == before
    # A seat call: a good token, a bad one, a good one again, none.
    match = await table.create(deck=table.STANDARD_DECK)
    seat = match.seats[0]
    stub = match_service_pb2_grpc.MatchServiceStub(table.raw_channel())  # type: ignore[no-untyped-call]
    request = match_service_pb2.GetViewRequest(match_id=match.match_id)
    bad = (("authorization", "Bearer not-a-seat-token"),)
    for metadata in (seat.metadata, bad, seat.metadata, (), seat.metadata):
        call = stub.GetView(request, metadata=metadata)
        if metadata == seat.metadata:
            assert (await call).view.version >= 1
        else:
            await table.fails(call, Code.UNAUTHENTICATED, "unauthenticated")
    await healthy(table)


async def test_a6_join_refusals(table: Any, server: Any) -> None:
    full = await table.create()
    before = await table.state(full)
    client = table.client
    await table.fails(client.join(full.match_id), Code.FAILED_PRECONDITION, "match_full")
    await table.fails(client.join(full.match_id, seat=1), Code.FAILED_PRECONDITION, "match_full")
    assert await table.state(full) == before

    waiting = await table.create(3, join=1)
    summary = await client.get_match(waiting.match_id)
    await table.fails(client.join(waiting.match_id, seat=0), Code.FAILED_PRECONDITION, "seat_taken")
    await table.fails(client.join(waiting.match_id, seat=3), Code.INVALID_ARGUMENT, "seat")
    await table.fails(
        client.join(waiting.match_id, name="n" * 65), Code.INVALID_ARGUMENT, "name_invalid"
    )
    await table.fails(
        client.join(waiting.match_id, entropy=b"e" * 65), Code.INVALID_ARGUMENT, "entropy"
    )
    assert await client.get_match(waiting.match_id) == summary
    assert summary.status == common_pb2.MATCH_STATUS_WAITING and summary.version == 0
    # A seat that is not playing yet is told so.
    await table.fails(
        table.submit(waiting.seats[0], table.select(1), 1),
        Code.FAILED_PRECONDITION,
        "not_started",
    )
