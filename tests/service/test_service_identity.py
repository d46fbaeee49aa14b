"""B. Identity: the seat comes from the token, never from the request.

reliability.md B1, B2, B3.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from speeltafel.sdk.client import Seat
from speeltafel.sdk.v1 import match_service_pb2, take5_pb2

Code = grpc.StatusCode


async def play_error(table: Any, metadata: Any, match_id: str) -> grpc.aio.AioRpcError:
    """Open Play with ``metadata``, subscribe to ``match_id``; the error it ends with."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        call = table.client.stub.Play(metadata=metadata)
        await call.write(
            match_service_pb2.PlayRequest(subscribe=match_service_pb2.Subscribe(match_id=match_id))
        )
        async for _ in call:
            pass
    return caught.value


def seat_calls(table: Any, match_id: str, metadata: Any) -> dict[str, Any]:
    """The three seat calls, each as a coroutine factory with the given metadata."""
    stub = table.client.stub
    submit = match_service_pb2.SubmitActionRequest(
        match_id=match_id, expected_version=1, request_id="id-1", action=table.select(3)
    )
    return {
        "GetView": lambda: stub.GetView(
            match_service_pb2.GetViewRequest(match_id=match_id), metadata=metadata
        ),
        "SubmitAction": lambda: stub.SubmitAction(submit, metadata=metadata),
        "Play": lambda: play_error(table, metadata, match_id),
    }


async def outcome_of(factory: Any) -> grpc.aio.AioRpcError:
    try:
        result = await factory()
    except grpc.aio.AioRpcError as err:
        return err
    if isinstance(result, grpc.aio.AioRpcError):
        return result
    raise AssertionError(f"the call succeeded: {result}")


# --------------------------------------------------------------------------- B1


async def test_b1_missing_malformed_or_unknown_token(
    table: Any, server: Any, monkeypatch: Any
) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    real = match.seats[0].token
    before = await table.state(match)
    ran: list[str] = []
    runtime = server.runtime
    for name in ("get", "submit", "subscribe"):
        original = getattr(runtime, name)

        def spy(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            ran.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(runtime, name, spy)
    route = ("x-match-id", match.match_id)
    cases = {
        "no token": (route,),
        "empty bearer": (("authorization", "Bearer "), route),
        "no scheme": (("authorization", real), route),
        "other scheme": (("authorization", f"Basic {real}"), route),
        "no space after Bearer": (("authorization", f"Bearer{real}"), route),
        "unknown token": (("authorization", "Bearer " + "A" * 43), route),
        "token changed by one char": (("authorization", "Bearer " + real[:-1] + "?"), route),
        "token with suffix": (("authorization", f"Bearer {real}x"), route),
        "token in another header": (("x-token", f"Bearer {real}"), route),
    }
    for label, metadata in cases.items():
        for method, factory in seat_calls(table, match.match_id, metadata).items():
            err = await outcome_of(factory)
            assert err.code() is Code.UNAUTHENTICATED, (label, method, err.details())
            assert table.rule_of(err) == "unauthenticated", (label, method)
            # Without a readable bearer token it is "missing"; otherwise "unknown".
            unknown = label.startswith(("unknown", "token changed", "token with"))
            expected = "unknown seat token" if unknown else "missing seat token"
            assert err.details() == expected, (label, method, err.details())
            assert real not in (err.details() or "")
    # The handlers never ran: no match was looked up, no action submitted, no stream opened.
    assert ran == []
    monkeypatch.undo()
    assert await table.state(match) == before


# --------------------------------------------------------------------------- B2


async def test_b2_the_token_decides_the_seat(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    before = await table.state(match)
    # Seat 1's token names seat 1 whatever the request says: a card of seat 0's hand is
    # "not in your hand", and nothing happens to seat 0.
    await table.fails(
        table.submit(seat1, table.select(1), 1), Code.FAILED_PRECONDITION, "not_in_hand"
    )
    # A Seat object claiming seat 0 with seat 1's token is still seat 1.
    forged = Seat(match.match_id, 0, seat1.token)
    view = await table.view(forged)
    assert view.seat == 1 and [c.number for c in view.take5.hand] == list(range(13, 25))
    assert await table.state(match) == before
    ack = await table.submit(forged, table.select(13), 1)
    assert ack.seq == 1
    view0, view1 = await table.view(seat0), await table.view(seat1)
    assert view1.take5.HasField("selected") and view1.take5.selected == 13
    assert not view0.take5.HasField("selected")
    assert [s.committed for s in view0.take5.seats] == [False, True]
    assert [c.number for c in view0.take5.hand] == list(range(1, 13))
    assert list(view0.to_act) == [0]

    # Seat 0 alone must choose a row: seat 1's token is refused, not taken as seat 0's.
    await table.submit(seat0, table.select(1), 2)
    view0 = await table.view(seat0)
    assert view0.take5.phase == take5_pb2.TAKE5_PHASE_ROW_CHOICE and list(view0.to_act) == [0]
    before = await table.state(match)
    for seat in (seat1, forged):
        await table.fails(
            table.submit(seat, table.row(1), view0.version),
            Code.FAILED_PRECONDITION,
            "not_your_turn",
        )
    assert await table.state(match) == before
    ack = await table.submit(seat0, table.row(1), view0.version)
    assert ack.version == view0.version + 1


async def test_b2_a_token_of_another_match_is_denied(table: Any, server: Any) -> None:
    x = await table.create(deck=table.STANDARD_DECK)
    y = await table.create(deck=table.STANDARD_DECK)
    before = await table.state(y)
    x_on_y = (*x.seats[0].metadata[:1], ("x-match-id", y.match_id))
    for method, factory in seat_calls(table, y.match_id, x_on_y).items():
        err = await outcome_of(factory)
        assert err.code() is Code.PERMISSION_DENIED, (method, err.details())
        assert table.rule_of(err) == "wrong_match"
    assert await table.state(y) == before


# --------------------------------------------------------------------------- B3


async def test_b3_no_enumeration_of_matches(table: Any, server: Any) -> None:
    x = await table.create(deck=table.STANDARD_DECK)
    y = await table.create(deck=table.STANDARD_DECK)
    finished = await table.create(options={"deals": "1"})
    await table.play_out(finished)
    before = await table.state(y)
    token = x.seats[1].metadata[0]
    targets = {
        "existing": y.match_id,
        "finished": finished.match_id,
        "missing": "feedfacecafebeef",
        "missing, odd shape": "z" * 40,
    }
    answers: dict[str, dict[str, tuple[Any, ...]]] = {}
    for label, target in targets.items():
        metadata = (token, ("x-match-id", target))
        answers[label] = {}
        for method, factory in seat_calls(table, target, metadata).items():
            err = await outcome_of(factory)
            answers[label][method] = (
                err.code(),
                err.details(),
                table.error_info(err),
                table.status_details(err),
            )
            assert err.code() is Code.PERMISSION_DENIED
            assert target not in err.details()
    reference = answers["existing"]
    for label, answer in answers.items():
        assert answer == reference, label
    assert await table.state(y) == before
