"""C. Turn order, staleness and replayed requests.

reliability.md C1-C5. The seat acting out of turn, a stale version, a repeated or reused
request id, and a seat racing itself must all leave the match exactly as the rules say.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

import grpc

from speeltafel.sdk.v1 import common_pb2, match_service_pb2, take5_pb2

Code = grpc.StatusCode


# --------------------------------------------------------------------------- C1


async def test_c1_acting_out_of_turn(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    await table.submit(seat0, table.select(1), 1)
    before = await table.state(match)
    # Seat 0 has committed this turn: another card is out of turn, whichever card it is.
    for card in (2, 12, 13):
        await table.fails(
            table.submit(seat0, table.select(card), 2),
            Code.FAILED_PRECONDITION,
            "already_selected",
        )
    assert await table.state(match) == before
    await table.submit(seat1, table.select(13), 2)
    # Seat 0 chooses a row now; seat 1 may do nothing.
    view1 = await table.view(seat1)
    assert list(view1.to_act) == [0] and not view1.legal_actions
    before = await table.state(match)
    for action, rule in [
        (table.row(1), "not_your_turn"),
        (table.row(3), "not_your_turn"),
        (table.select(14), "wrong_phase"),
    ]:
        await table.fails(
            table.submit(seat1, action, view1.version), Code.FAILED_PRECONDITION, rule
        )
    assert await table.state(match) == before
    # The same through the stream, which answers each action with an ActionResult.
    call = table.client.play_stream(seat1)
    await call.write(
        match_service_pb2.PlayRequest(
            subscribe=match_service_pb2.Subscribe(
                match_id=match.match_id, since_version=view1.version
            )
        )
    )
    submit = match_service_pb2.SubmitActionRequest(
        match_id=match.match_id,
        expected_version=view1.version,
        request_id="r",
        action=table.row(2),
    )
    assert (await call.read()).WhichOneof("event") == "subscribed"
    await call.write(match_service_pb2.PlayRequest(submit=submit))
    result = (await call.read()).result
    assert (result.request_id, result.error.code, result.error.rule) == (
        "r",
        Code.FAILED_PRECONDITION.value[0],
        "not_your_turn",
    )
    call.cancel()
    assert await table.state(match) == before


# --------------------------------------------------------------------------- C2


async def test_c2_stale_expected_version(table: Any, server: Any) -> None:
    # Rows 1, 2, 3: every card goes on a row, so turn 1 ends without a row choice.
    deck = table.trial_deck([range(4, 16), range(16, 28)], [1, 2, 3])
    match = await table.create(deck=deck)
    seat0, seat1 = match.seats
    # Simultaneous selection: seat 0's commitment (version 1 -> 2) does not make seat 1's
    # choice, made from version 1, stale (server/app/match.py: staleness).
    assert (await table.submit(seat0, table.select(5), 1)).version == 2
    assert (await table.submit(seat1, table.select(20), 1)).version == 3
    view = await table.view(seat0)
    assert view.version == 3 and view.take5.turn == 2 and list(view.to_act) == [0, 1]
    before = await table.state(match)
    # A new turn began at version 3: everything chosen before it is stale for both seats,
    # and a version the match has not reached is refused too.
    for seat, version in itertools.product((seat0, seat1), (1, 2, 4, 99, 2**63)):
        err = await table.fails(
            table.submit(seat, table.select(4 if seat is seat0 else 16), version),
            Code.ABORTED,
            "stale_version",
        )
        assert str(version) in err.details()
    assert await table.state(match) == before

    # Three seats: two others commit in between, the first seat's version-1 choice still counts.
    three = await table.create(3, options={"deals": "1"})
    views = [await table.view(s) for s in three.seats]
    assert {v.version for v in views} == {1}
    for number, seat in enumerate(reversed(three.seats)):
        card = views[seat.seat].legal_actions[0]
        ack = await table.submit(seat, card, 1)
        assert ack.version == 2 + number
    assert (await table.view(three.seats[0])).version == 4


# --------------------------------------------------------------------------- C3


async def test_c3_same_request_id_same_answer(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    first = await table.submit(seat0, table.select(4), 1, request_id="once")
    assert (first.seq, first.version, first.duplicate) == (1, 2, False)
    after = await table.state(match)
    for _ in range(3):
        again = await table.submit(seat0, table.select(4), 1, request_id="once")
        assert (again.seq, again.version, again.duplicate) == (1, 2, True)
    # Even after the match moved on, and whatever version the retry carries.
    assert await table.state(match) == after
    await table.submit(seat1, table.select(13), 2, request_id="once")  # per seat: no clash
    again = await table.submit(seat0, table.select(4), 77, request_id="once")
    assert (again.seq, again.version, again.duplicate) == (1, 2, True)
    # Over the stream as well.
    call = table.client.play_stream(seat0)
    version = (await table.view(seat0)).version
    await call.write(
        match_service_pb2.PlayRequest(
            subscribe=match_service_pb2.Subscribe(match_id=match.match_id, since_version=version)
        )
    )
    submit = match_service_pb2.SubmitActionRequest(
        match_id=match.match_id, expected_version=1, request_id="once", action=table.select(4)
    )
    assert (await call.read()).WhichOneof("event") == "subscribed"
    await call.write(match_service_pb2.PlayRequest(submit=submit))
    result = (await call.read()).result
    assert result.request_id == "once"
    assert (result.accepted.seq, result.accepted.version, result.accepted.duplicate) == (1, 2, True)
    call.cancel()
    summary = await table.client.get_match(match.match_id)
    assert summary.version == 3  # two actions applied, once each
    view0 = await table.view(seat0)
    assert 4 not in [c.number for c in view0.take5.hand]
    assert len(view0.take5.hand) == 11


async def test_c3_same_answer_after_a_restart(table: Any) -> None:
    await table.start(table.sqlite_store())
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    first = await table.submit(seat0, table.select(9), 1, request_id="durable")
    other = await table.submit(seat1, table.select(20), 1, request_id="durable")
    before = await table.state(match, clocks=False)
    await table.stop()

    await table.start(table.sqlite_store())
    assert await table.state(match, clocks=False) == before
    for _ in range(2):
        again = await table.submit(seat0, table.select(9), 1, request_id="durable")
        assert (again.seq, again.version, again.duplicate) == (first.seq, first.version, True)
        again = await table.submit(seat1, table.select(20), 2, request_id="durable")
        assert (again.seq, again.version, again.duplicate) == (other.seq, other.version, True)
    await table.fails(
        table.submit(seat0, table.select(10), 1, request_id="durable"),
        Code.ALREADY_EXISTS,
        "request_id_reused",
    )
    assert await table.state(match, clocks=False) == before
    summary = await table.client.get_match(match.match_id)
    assert summary.version == 3


# --------------------------------------------------------------------------- C4


async def test_c4_request_id_reused_for_another_action(table: Any, server: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0, seat1 = match.seats
    await table.submit(seat0, table.select(6), 1, request_id="mine")
    before = await table.state(match)
    for action in (table.select(7), table.select(6 + 100), table.row(1)):
        await table.fails(
            table.submit(seat0, action, 2, request_id="mine"),
            Code.ALREADY_EXISTS,
            "request_id_reused",
        )
    assert await table.state(match) == before
    view0 = await table.view(seat0)
    assert view0.take5.selected == 6
    # The original is still the stored answer.
    again = await table.submit(seat0, table.select(6), 1, request_id="mine")
    assert (again.seq, again.duplicate) == (1, True)
    # After the turn, a later row choice must not reuse it either.
    await table.submit(seat1, table.select(13), 2)
    view0 = await table.view(seat0)
    assert view0.take5.phase == take5_pb2.TAKE5_PHASE_ROW_CHOICE
    await table.fails(
        table.submit(seat0, table.row(1), view0.version, request_id="mine"),
        Code.ALREADY_EXISTS,
        "request_id_reused",
    )
    assert (await table.view(seat0)).version == view0.version


# --------------------------------------------------------------------------- C5


async def test_c5_a_seat_racing_itself(table: Any) -> None:
    """Two different moves of one seat at once, 100+ times: exactly one is accepted."""
    await table.start(table.sqlite_store(), limits=table.LIFTED_RATES)
    rng = random.Random(5)
    races = 0
    accepted: list[tuple[str, int, int, str]] = []  # (match, seq, seat, action text)
    matches = []
    while races < 100:
        match = await table.create(options={"deals": "3"})
        matches.append(match)
        while True:
            views = [await table.view(s) for s in match.seats]
            if views[0].status == common_pb2.MATCH_STATUS_FINISHED:
                break
            version = views[0].version
            calls: list[Any] = []
            owners: list[tuple[int, common_pb2.Action]] = []
            for seat in match.seats:
                legal = list(views[seat.seat].legal_actions)
                if not legal:
                    continue
                picks = rng.sample(legal, 2) if len(legal) > 1 else legal
                if len(picks) > 1:
                    races += 1
                for action in picks:
                    calls.append(table.client.submit(seat, action, version))
                    owners.append((seat.seat, action))
            # Every to-act seat fires its moves at once, all chosen from the same version.
            results = await asyncio.gather(*calls, return_exceptions=True)
            per_seat: dict[int, int] = {}
            for (seat_number, action), result in zip(owners, results, strict=True):
                if isinstance(result, grpc.aio.AioRpcError):
                    assert result.code() in (Code.ABORTED, Code.FAILED_PRECONDITION), result
                    assert table.rule_of(result) in {
                        "stale_version",
                        "already_selected",
                        "not_your_turn",
                        "wrong_phase",
                        "game_over",  # the other move ended the match
                    }
                    continue
                assert isinstance(result, match_service_pb2.SubmitActionResponse), result
                assert not result.duplicate
                per_seat[seat_number] = per_seat.get(seat_number, 0) + 1
                kind = action.take5.WhichOneof("kind")
                text = (
                    f"select:{action.take5.select.card}"
                    if kind == "select"
                    else f"row:{action.take5.choose_row.row}"
                )
                accepted.append((match.match_id, result.seq, seat_number, text))
            # Never both, and never neither: one move per seat that had to act.
            assert sorted(per_seat) == sorted({s for s, _ in owners})
            assert set(per_seat.values()) == {1}
    assert races >= 100
    # The log holds exactly the accepted moves, each once, with contiguous seqs.
    logged: list[tuple[str, int, int, str]] = []
    for match in matches:
        record = await table.client.record(match.match_id)
        assert [a.seq for a in record.actions] == list(range(1, len(record.actions) + 1))
        logged += [(match.match_id, a.seq, a.seat, a.action) for a in record.actions]
    assert sorted(logged) == sorted(accepted)
