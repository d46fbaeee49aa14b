"""D. Hidden information and I. randomness, over the wire.

reliability.md D3, D5, D6, I3: errors that cannot tell worlds apart, internal errors that
name nothing, a seed and deck order that stay secret until the end, and a record that
proves the deal.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import defaultdict
from typing import Any

import grpc
import pytest
from structlog.testing import capture_logs

from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.engine.core import Rng, shuffle_key
from speeltafel.server.engine.games import take5
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.wire.take5 import WIRE

Code = grpc.StatusCode
GAME = take5.GAME
INCIDENT = re.compile(r"internal error \(incident [0-9a-f]{12}\)")


# --------------------------------------------------------------------------- D3


@pytest.mark.lifted_rates
async def test_d3_twin_worlds_give_identical_errors(table: Any, server: Any) -> None:
    """Seat 0's invalid requests get the same answers whatever the cards hidden from it."""
    rows = [25, 26, 27]
    mine = list(range(1, 13))
    world_a = table.trial_deck([mine, list(range(13, 25))], rows, [28, 29, 30, 31, 32])
    # Seat 1's hand and the unused cards swapped in part: nothing seat 0 may see changes.
    world_b = table.trial_deck(
        [mine, [13, 14, 15, 16, 17, 18, 19, 28, 29, 30, 31, 32]], rows, [20, 21, 22, 23, 24]
    )
    a = await table.create(deck=world_a)
    b = await table.create(deck=world_b)

    def requests(match_id: str, version: int) -> list[match_service_pb2.SubmitActionRequest]:
        def make(action: common_pb2.Action, **fields: Any) -> Any:
            base: dict[str, Any] = {
                "match_id": match_id,
                "expected_version": version,
                "request_id": "twin",
                "action": action,
            }
            base.update(fields)
            return match_service_pb2.SubmitActionRequest(**base)

        return [
            make(table.select(20)),  # seat 1's in world A, unused in world B
            make(table.select(28)),  # unused in world A, seat 1's in world B
            make(table.select(13)),  # seat 1's in both
            make(table.select(25)),  # on a row
            make(table.select(0)),
            make(table.select(33)),
            make(table.row(1)),
            make(table.row(9)),
            make(common_pb2.Action()),
            make(table.select(20), expected_version=version + 5),
            make(table.select(20), expected_version=0),
            make(table.select(20), request_id=""),
        ]

    async def answers(match: Any, version: int) -> list[tuple[Any, ...]]:
        seat = match.seats[0]
        out: list[tuple[Any, ...]] = []
        for request in requests(match.match_id, version):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await table.client.stub.SubmitAction(request, metadata=seat.metadata)
            err = caught.value
            out.append((err.code(), err.details(), table.status_details(err)))
        view = table.normalized(await table.view(seat))
        view.match_id = ""
        view.commitment = ""
        view.clock.deadline_unix_ms = 0
        out.append(("view", view.SerializeToString(deterministic=True)))
        return out

    assert await answers(a, 1) == await answers(b, 1)
    # After seat 0 commits: every further selection is refused the same way.
    await table.submit(a.seats[0], table.select(1), 1)
    await table.submit(b.seats[0], table.select(1), 1)
    assert await answers(a, 2) == await answers(b, 2)


# --------------------------------------------------------------------------- D5


SECRET = "hidden hand of seat 1: [13, 14, 15, 16, 17] and unused [28, 29]"


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(SECRET)


def _assert_opaque(table: Any, err: grpc.aio.AioRpcError) -> str:
    details = err.details() or ""
    assert err.code() is Code.INTERNAL
    assert INCIDENT.fullmatch(details), details
    assert table.rule_of(err) == "internal"
    trailer = repr(err.trailing_metadata()) + repr(err.debug_error_string())
    for text in ("hidden", "13, 14", "28, 29", "Traceback", "RuntimeError", "_boom"):
        assert text not in details and text not in trailer, text
    return details.split()[-1].rstrip(")")


async def test_d5_internal_errors_are_opaque(table: Any, server: Any, monkeypatch: Any) -> None:
    match = await table.create(deck=table.STANDARD_DECK)
    seat0 = match.seats[0]
    before = await table.state(match)
    # Views share a public part built once per version: drop it, so that the spectator's
    # path below has to observe the state again.
    for snapshot in server.runtime.matches[match.match_id].history:
        snapshot.cache.clear()
    with capture_logs() as logs:
        monkeypatch.setattr(GAME, "observe", _boom)
        incidents = [_assert_opaque(table, await table.fails(table.view(seat0), Code.INTERNAL))]
        spectate = table.client.stub.Spectate(
            match_service_pb2.SpectateRequest(match_id=match.match_id)
        )
        assert (await spectate.read()).WhichOneof("event") == "subscribed"
        incidents.append(_assert_opaque(table, await table.fails(spectate.read(), Code.INTERNAL)))
        monkeypatch.undo()

        monkeypatch.setattr(GAME, "apply", _boom)
        err = await table.fails(table.submit(seat0, table.select(3), 1), Code.INTERNAL)
        incidents.append(_assert_opaque(table, err))
        # The stream's answer to an action is just as opaque.
        call = table.client.play_stream(seat0)
        await call.write(
            match_service_pb2.PlayRequest(
                subscribe=match_service_pb2.Subscribe(match_id=match.match_id, since_version=1)
            )
        )
        submit = match_service_pb2.SubmitActionRequest(
            match_id=match.match_id, expected_version=1, request_id="s", action=table.select(3)
        )
        assert (await call.read()).WhichOneof("event") == "subscribed"
        await call.write(match_service_pb2.PlayRequest(submit=submit))
        error = (await call.read()).result.error
        call.cancel()
        assert error.code == Code.INTERNAL.value[0] and error.rule == "internal"
        assert INCIDENT.fullmatch(error.message) and "hidden" not in error.message
        incidents.append(error.message.split()[-1].rstrip(")"))
        monkeypatch.undo()
    assert len(set(incidents)) == len(incidents)
    # The operator can find each incident, with its cause, in the server's log.
    logged = {e["incident"]: e for e in logs if e["event"] == "internal_error"}
    assert set(logged) == set(incidents)
    assert all(e["log_level"] == "error" and e.get("exc_info") for e in logged.values())
    # Nothing was applied, and the server goes on serving.
    assert await table.state(match) == before
    assert (await table.submit(seat0, table.select(3), 1)).seq == 1
    assert [g.game for g in await table.client.list_games()] == list(GAMES)


# --------------------------------------------------------------------------- D6 and I3


class Capture:
    """Every message the clients received during a match, and what it was."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, Any]] = []
        self.views: dict[int | None, list[common_pb2.View]] = defaultdict(list)

    def add(self, label: str, message: Any) -> None:
        self.messages.append((label, message))

    def view(self, seat: int | None, view: common_pb2.View) -> None:
        self.views[seat].append(view)
        self.add(f"view:{seat}", view)


async def _observed_match(table: Any, entropy: list[bytes]) -> tuple[Any, Capture, list[Any]]:
    """A 2-seat match played by random bots, every response and log line captured."""
    capture = Capture()
    client = table.client
    with capture_logs() as logs:
        match = await table.create(2, entropy=entropy)
        created = match.created
        capture.add("create", created)
        for joined in match.joined:
            capture.add("join", joined)
        for seat in match.seats:
            first = await client.get_view(seat)
            assert first.version == 1
            capture.view(seat.seat, first)
        capture.add("summary", await client.get_match(created.match_id))
        err = await table.fails(
            client.record(created.match_id), Code.FAILED_PRECONDITION, "not_finished"
        )
        capture.add("record-refused", err.details())

        async def spectate() -> None:
            async for view in client.spectate(created.match_id):
                capture.view(None, view)

        watcher = asyncio.ensure_future(spectate())
        await table.play_out(
            match,
            on_view=capture.view,
            on_ack=lambda s, req, ack: capture.add(f"ack:{s}", ack),
        )
        await watcher
        capture.add("summary", await client.get_match(created.match_id))
    return match, capture, list(logs)


def _replay(record: common_pb2.MatchRecord) -> list[Any]:
    """Every state of a recorded match, indexed by version - 1."""
    key = shuffle_key(record.server_seed, [s.entropy for s in record.seat_records])
    state = GAME.new(dict(record.options), record.seats, Rng(key))
    states = [state]
    for action in record.actions:
        state = GAME.apply(state, action.seat, GAME.parse_action(action.action))
        states.append(state)
    return states


async def test_d6_seed_and_deck_stay_secret_until_the_end(table: Any, server: Any) -> None:
    match, capture, logs = await _observed_match(table, [b"alpha-entropy", b""])
    commitment = match.created.commitment
    record = await table.client.record(match.match_id)
    seed = record.server_seed
    assert len(seed) == 32
    # The revealed seed verifies against the commitment published at creation.
    assert hashlib.sha256(seed).hexdigest() == commitment == record.commitment
    key = record.shuffle_key
    hidden = [seed, seed.hex().encode(), seed.hex().upper().encode(), key, key.hex().encode()]
    for label, message in capture.messages:
        blob = message.encode() if isinstance(message, str) else message.SerializeToString()
        for secret in hidden:
            assert secret not in blob, label
    # The commitment is there from the start, in every view and summary.
    for label, message in capture.messages:
        if label.startswith(("view", "summary")):
            assert message.commitment == commitment, label
    # Deck order: the cards set aside in each deal never reach anyone, seat or spectator.
    states = _replay(record)
    unused_by_deal = {s.deal: set(s.unused) for s in states}
    assert all(len(cards) == 5 for cards in unused_by_deal.values())
    for seat, views in capture.views.items():
        for view in views:
            t5 = view.take5
            seen = {c.number for c in t5.hand}
            seen |= {c.number for r in t5.rows for c in r.cards}
            seen |= {c.number for s in t5.seats for c in s.penalty}
            seen |= {r.card for r in t5.to_place}
            for turn in t5.history:
                seen |= {r.card for r in turn.revealed}
                seen |= {p.card for p in turn.placements} | {
                    c for p in turn.placements for c in p.taken
                }
            if t5.HasField("selected"):
                seen.add(t5.selected)
            assert not seen & unused_by_deal[t5.deal], (seat, view.version)
    # Logs: no seed, no shuffle key, no action text (a sealed card), no hand.
    assert sum(1 for e in logs if e["event"] == "action_accepted") == len(record.actions)
    texts = [seed.hex(), seed.hex().upper(), key.hex(), repr(seed)[2:-1], repr(key)[2:-1]]
    for event in logs:
        text = repr(event)
        for secret in texts:
            assert secret not in text, event
        assert "select:" not in text and "row:" not in text, event
        assert "hand" not in event and "action" not in event, event


async def test_i3_the_record_recomputes_the_deal_and_the_match(table: Any, server: Any) -> None:
    entropy = [bytes(range(7, 71)), b"\x00seat-one\xff"]
    match, capture, _ = await _observed_match(table, entropy)
    record = await table.client.record(match.match_id)
    assert [s.entropy for s in record.seat_records] == entropy
    key = shuffle_key(record.server_seed, entropy)
    assert record.shuffle_key == key
    assert key != shuffle_key(record.server_seed, [b"", b""])  # the entropy counts
    assert not record.preset_deck
    dealt = GAME.new(dict(record.options), record.seats, Rng(key))
    for seat in (0, 1):
        first = capture.views[seat][0]
        assert first.version == 1
        assert [c.number for c in first.take5.hand] == list(dealt.hands[seat])
        assert [[c.number for c in r.cards] for r in first.take5.rows] == [
            list(r) for r in dealt.rows
        ]
    # Replaying the record reproduces every view each seat received and the final hash.
    states = _replay(record)
    assert [a.seq for a in record.actions] == list(range(1, len(record.actions) + 1))
    for seat, views in capture.views.items():
        assert views, seat
        for view in views:
            state = states[view.version - 1]
            expected = common_pb2.View()
            observation = GAME.observe(state, seat)
            WIRE.fill_public(expected, observation)
            WIRE.fill_private(expected, observation)
            assert view.take5 == expected.take5, (seat, view.version)
            legal = (
                [WIRE.action_to_proto(a) for a in GAME.legal_actions(state, seat)]
                if (seat is not None)
                else []
            )
            assert list(view.legal_actions) == legal
    final = states[-1]
    assert hashlib.sha256(GAME.encode(final)).hexdigest() == record.final_state_sha256
    outcome = GAME.outcome(final)
    assert outcome is not None
    assert list(record.outcome.scores) == list(outcome.scores)
    assert list(record.outcome.ranks) == list(outcome.ranks)


@pytest.mark.parametrize("seats", [3, 4])
async def test_i3_recompute_with_more_seats(table: Any, server: Any, seats: int) -> None:
    entropy = [f"seat {s}".encode() * (s + 1) for s in range(seats)]
    match = await table.create(seats, entropy=entropy, options={"deals": "1"})
    firsts = [await table.view(s) for s in match.seats]
    await table.play_out(match)
    record = await table.client.record(match.match_id)
    dealt = GAME.new(dict(record.options), seats, Rng(shuffle_key(record.server_seed, entropy)))
    for seat, view in enumerate(firsts):
        assert [c.number for c in view.take5.hand] == list(dealt.hands[seat])
    assert hashlib.sha256(GAME.encode(_replay(record)[-1])).hexdigest() == (
        record.final_state_sha256
    )
