"""A8: random interleavings of valid and invalid calls, checked after every step.

A hypothesis state machine plays one or two Take 5 matches on a real grpc.aio server
through the blocking SDK client: legal moves (from the seat's own view, with any
expected_version that is still current for the seat's decision), stale and future
versions, another seat's or another match's token, unknown and missing tokens, repeated
request ids (same action and a different one, also by another seat), illegal and
malformed actions, moves after the end, GetView and GetMatchRecord.

hypothesis drives its machines synchronously, so the server runs on its own event loop in
a background thread; the test reads the runtime's memory and the store's log through
that loop (``ServerThread.call``), never from the test's thread.

The deck orders are drawn by hypothesis and given as preset decks (with the server's
secret shuffle a rerun would meet another deal, and hypothesis could not replay or shrink
its choices). Every call's answer is predicted by a model that holds its own copy of the
engine state (taken from the server once, at the deal, checked against the preset, then
advanced only by the model) and follows the documented order of checks: token, match,
action message, request fields, request id, game over, version, rules. The test runs on a
MemoryStore and on a SqliteStore. After every step, for every match:

* version = 1 + accepted actions, in GetMatch, every view, the runtime and the model;
* the store's log is exactly the accepted actions, in order, one row per request id;
* a step that accepted nothing changed nothing (GetMatch and every view byte-identical);
* a seat's view holds its own hand and sealed card, and no card of any hand, sealed card
  or set-aside card anywhere else; its public part equals every other seat's;
* ``Match.replay`` of the store's log gives the runtime's state hash (and the model's),
  and once finished the published record verifies and replays to that hash.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import threading
import uuid
from collections import Counter
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from speeltafel.sdk.client import Client, Seat
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import RuntimeConfig
from speeltafel.server.engine.core import (
    EngineError,
    GameOver,
    IllegalAction,
    InvalidAction,
    NotYourTurn,
    Rng,
)
from speeltafel.server.engine.games.take5 import GAME, ActionKind, Take5Action
from speeltafel.server.engine.verify import replay, verify
from speeltafel.server.rpc.limits import LimitsConfig
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.base import MatchLog, MatchStore
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.store.sqlite import SqliteStore
from speeltafel.server.wire.common import record_from_proto
from speeltafel.server.wire.take5 import WIRE

T = TypeVar("T")
Code = grpc.StatusCode
DETAILS_KEY = "grpc-status-details-bin"
MOVE_CLOCK_MS = 600_000  # no clock ever runs out during the test: no defaults to model
MAX_REQUEST_ID = 64
RUNNING = common_pb2.MATCH_STATUS_RUNNING
FINISHED = common_pb2.MATCH_STATUS_FINISHED
U32 = 2**32 - 1
U64 = 2**64 - 1
DECK = list(range(1, 33))  # the trial edition

SETTINGS = settings(
    max_examples=20,
    stateful_step_count=35,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------- the server


class ServerThread:
    """A real server on its own event loop in a daemon thread."""

    def __init__(self, store: MatchStore) -> None:
        self.store = store
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="a8-server", daemon=True)
        self.thread.start()
        try:
            config = RuntimeConfig(default_move_clock_ms=MOVE_CLOCK_MS)
            # Thousands of calls from one client in quick succession are what this test is:
            # the rates are not what it checks (test_fairness does), so they are lifted.
            unlimited = 1e9
            limits = LimitsConfig(
                unary_rate_per_peer=unlimited,
                unary_burst_per_peer=unlimited,
                unary_rate_per_token=unlimited,
                unary_burst_per_token=unlimited,
            )
            self.running: Running = self.call(start_server(store, config=config, limits=limits))
        except BaseException:
            self._stop_loop()
            raise

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.running.port}"

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run a coroutine on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        try:
            self.call(self.running.stop(0.2))
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        if not self.thread.is_alive():
            self.loop.close()


@dataclass(frozen=True)
class ServerFacts:
    """What the server holds of one match, read on its loop under the match's lock."""

    version: int
    state_hash: str
    status: str
    rows: tuple[tuple[int, int, str, str], ...]  # (seq, seat, request_id, action text)
    requests: frozenset[tuple[int, str]]
    log: MatchLog


async def read_facts(server: ServerThread, match_id: str) -> ServerFacts:
    runtime = server.running.runtime
    match = runtime.matches[match_id]
    async with match.lock:
        log = await server.store.load(match_id)
        assert log is not None
        return ServerFacts(
            version=match.version,
            # A finished match has let go of its state (Match.drop_state): its hash is
            # the one stored with its end, computed from that state.
            state_hash=match.final_hash(),
            status=match.status,
            rows=tuple((r.seq, r.seat, r.request_id, r.action) for r in match.actions),
            # Every request id the match answers as a duplicate (a finished match keeps
            # its rows packed and finds them there: Match.find_request).
            requests=frozenset(
                (r.seat, r.request_id)
                for r in match.actions
                if match.find_request(r.seat, r.request_id) == r
            ),
            log=log,
        )


async def read_state(server: ServerThread, match_id: str) -> Any:
    match = server.running.runtime.matches[match_id]
    async with match.lock:
        return match.state


# --------------------------------------------------------------------------- helpers


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rule_of(err: grpc.RpcError) -> str:
    """The ErrorInfo reason of a failed call ("" when it carries none)."""
    for key, value in err.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == DETAILS_KEY:
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return str(info.reason)
    return ""


def engine_code(exc: EngineError) -> Code:
    """The documented status of an engine refusal."""
    if isinstance(exc, InvalidAction):
        return Code.INVALID_ARGUMENT
    assert isinstance(exc, IllegalAction | NotYourTurn | GameOver), exc
    return Code.FAILED_PRECONDITION


def select(card: int) -> common_pb2.Action:
    action = common_pb2.Action()
    action.take5.select.card = card
    return action


def choose_row(number: int) -> common_pb2.Action:
    action = common_pb2.Action()
    action.take5.choose_row.row = number
    return action


def no_move() -> common_pb2.Action:
    """An action of the right game that names no move."""
    action = common_pb2.Action()
    action.take5.SetInParent()
    return action


def public_cards(view: common_pb2.View) -> set[int]:
    """Every card number in the public part of a Take 5 view."""
    t5 = view.take5
    cards = {c.number for r in t5.rows for c in r.cards}
    cards |= {c.number for s in t5.seats for c in s.penalty}
    cards |= {p.card for p in t5.to_place}
    for turn in t5.history:
        cards |= {r.card for r in turn.revealed}
        for placement in turn.placements:
            cards.add(placement.card)
            cards |= set(placement.taken)
    return cards


def public_part(view: common_pb2.View) -> bytes:
    """A view without what belongs to its seat alone (seat, hand, sealed card, legal
    actions, clock): equal for every seat of a match at one version."""
    copy = common_pb2.View()
    copy.CopyFrom(view)
    for name in ("seat", "legal_actions", "clock"):
        copy.ClearField(name)
    copy.take5.ClearField("hand")
    copy.take5.ClearField("selected")
    return copy.SerializeToString(deterministic=True)


def normalized(view: common_pb2.View) -> bytes:
    copy = common_pb2.View()
    copy.CopyFrom(view)
    copy.clock.remaining_ms = 0  # the one field that moves with the wall clock
    return copy.SerializeToString(deterministic=True)


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Accepted:
    seat: int
    request_id: str
    text: str
    seq: int


@dataclass
class Expect:
    """A predicted answer: an error (code, rule) or an acknowledgement."""

    code: Code | None = None
    rule: str = ""
    ack: tuple[int, int, bool] | None = None  # (seq, version, duplicate)
    state: Any = None  # the state after a newly accepted action
    accepted: Accepted | None = None


@dataclass
class MatchModel:
    match_id: str
    seats: list[Seat]
    state: Any
    version: int = 1
    since: dict[int, int] = field(default_factory=dict)  # seat -> version its decision began
    log: list[Accepted] = field(default_factory=list)
    requests: dict[tuple[int, str], Accepted] = field(default_factory=dict)
    seen: tuple[bytes, tuple[bytes, ...]] | None = None  # GetMatch and views, last step
    seen_version: int = 0
    record_checked: bool = False

    @property
    def finished(self) -> bool:
        return GAME.outcome(self.state) is not None

    def to_act(self) -> tuple[int, ...]:
        return tuple(GAME.to_act(self.state))

    def start(self) -> None:
        self.since = dict.fromkeys(self.to_act(), 1)

    def predict(
        self,
        token_seat: int | None,
        token_match: str | None,
        match_id: str,
        expected_version: int,
        request_id: str,
        message: common_pb2.Action,
    ) -> Expect:
        """The answer the documented rules give, in the server's order of checks.

        ``token_seat``/``token_match``: whose token is sent (None: no token or an unknown
        one).
        """
        if token_seat is None or token_match is None:
            return Expect(Code.UNAUTHENTICATED, "unauthenticated")
        if not match_id:
            return Expect(Code.INVALID_ARGUMENT, "match_id")
        if token_match != match_id:
            return Expect(Code.PERMISSION_DENIED, "wrong_match")
        assert token_match == self.match_id
        if message.WhichOneof("game") is None or message.take5.WhichOneof("kind") is None:
            return Expect(Code.INVALID_ARGUMENT, "empty_action")
        if message.take5.WhichOneof("kind") == "select":
            action = Take5Action(ActionKind.SELECT, message.take5.select.card)
        else:
            action = Take5Action(ActionKind.ROW, message.take5.choose_row.row)
        text = GAME.action_text(action)
        if not request_id or len(request_id) > MAX_REQUEST_ID:
            return Expect(Code.INVALID_ARGUMENT, "request_id")
        if expected_version <= 0:
            return Expect(Code.INVALID_ARGUMENT, "expected_version")
        seat = token_seat
        prior = self.requests.get((seat, request_id))
        if prior is not None:
            if prior.text != text:
                return Expect(Code.ALREADY_EXISTS, "request_id_reused")
            return Expect(ack=(prior.seq, prior.seq + 1, True))
        if self.finished:
            return Expect(Code.FAILED_PRECONDITION, "game_over")
        since = self.since.get(seat)
        if expected_version > self.version or (
            expected_version < self.version and (since is None or expected_version < since)
        ):
            return Expect(Code.ABORTED, "stale_version")
        try:
            state = GAME.apply(self.state, seat, action)
        except EngineError as exc:
            return Expect(engine_code(exc), exc.rule)
        accepted = Accepted(seat, request_id, text, self.version)
        return Expect(ack=(self.version, self.version + 1, False), state=state, accepted=accepted)

    def accept(self, expect: Expect) -> None:
        """Advance by a newly accepted action (the documented staleness rule for clocks)."""
        assert expect.accepted is not None
        actor = expect.accepted.seat
        before = set(self.to_act())
        self.state = expect.state
        self.version += 1
        self.since = {
            s: self.version
            if s == actor or s not in before or s not in self.since
            else self.since[s]
            for s in self.to_act()
        }
        self.log.append(expect.accepted)
        self.requests[(actor, expect.accepted.request_id)] = expect.accepted


# --------------------------------------------------------------------------- the machine


class ServiceMachine(RuleBasedStateMachine):
    """Bound to a server by :func:`bound_machine` (class attributes below)."""

    server: ServerThread
    client: Client
    decoy: Seat  # a seat of a match outside the machine (waiting for its other seats)
    totals: Counter[str]  # what every run of the machine did, for the test's summary

    def __init__(self) -> None:
        super().__init__()
        self.matches: list[MatchModel] = []
        self.calls = Counter[str]()

    # ------------------------------------------------------------------ calls

    def submit(
        self,
        metadata: tuple[tuple[str, str], ...],
        match_id: str,
        expected_version: int,
        request_id: str,
        action: common_pb2.Action,
    ) -> tuple[match_service_pb2.SubmitActionResponse | None, grpc.RpcError | None]:
        request = match_service_pb2.SubmitActionRequest(
            match_id=match_id,
            expected_version=expected_version,
            request_id=request_id,
            action=action,
        )
        try:
            return self.client.stub.SubmitAction(request, metadata=metadata, timeout=10), None
        except grpc.RpcError as err:
            return None, err

    def attempt(
        self,
        m: MatchModel,
        token: str,
        token_seat: int,
        match_id: str,
        expected_version: int,
        request_id: str,
        action: common_pb2.Action,
    ) -> Expect:
        """Send one SubmitAction, check its answer against the model, advance the model."""
        seat = m.seats[token_seat]
        if token == "own":
            metadata = seat.metadata
            who: tuple[int | None, str | None] = (token_seat, m.match_id)
        elif token == "foreign":
            other = self.foreign_seat(m)
            metadata = (("authorization", f"Bearer {other.token}"), ("x-match-id", match_id))
            who = (other.seat, other.match_id)
        elif token == "unknown":
            fake = secrets.token_urlsafe(32)
            metadata = (("authorization", f"Bearer {fake}"), ("x-match-id", match_id))
            who = (None, None)
        else:
            metadata = (("x-match-id", match_id),)
            who = (None, None)
        expect = m.predict(*who, match_id, expected_version, request_id, action)
        response, err = self.submit(metadata, match_id, expected_version, request_id, action)
        context = (token, token_seat, match_id, expected_version, request_id, action, expect)
        if expect.code is not None:
            assert err is not None, ("accepted, expected an error", context, response)
            assert (err.code(), rule_of(err)) == (expect.code, expect.rule), (
                err.code(),
                err.details(),
                rule_of(err),
                context,
            )
            assert "Exception" not in (err.details() or ""), err.details()
            self.calls[f"refused:{expect.rule}"] += 1
            return expect
        assert err is None, ("refused, expected an ack", err.code(), err.details(), context)
        assert response is not None
        assert (response.seq, response.version, response.duplicate) == expect.ack, context
        if expect.ack is not None and expect.ack[2]:
            self.calls["duplicate"] += 1
        else:
            m.accept(expect)
            self.calls["accepted"] += 1
        return expect

    def foreign_seat(self, m: MatchModel) -> Seat:
        """A seat token of another match (the other match of the machine, or the decoy)."""
        others = [o for o in self.matches if o is not m]
        return others[0].seats[0] if others else self.decoy

    def play_legal(self, m: MatchModel, seat: int, pick: int, version_pick: int) -> None:
        """A legal action from the seat's own view, with an expected_version that is
        current for its decision (any from the version its decision began to now)."""
        view = self.client.get_view(m.seats[seat])
        assert view.version == m.version and seat in view.to_act and view.legal_actions
        action = view.legal_actions[pick % len(view.legal_actions)]
        low = m.since[seat]
        expected = low + version_pick % (m.version - low + 1)
        expect = self.attempt(m, "own", seat, m.match_id, expected, new_id(), action)
        assert expect.accepted is not None, expect

    # ------------------------------------------------------------------ setup

    @initialize(
        plan=st.lists(
            st.tuples(st.integers(2, 4), st.sampled_from([1, 1, 2])), min_size=1, max_size=2
        ),
        data=st.data(),
    )
    def create_matches(self, plan: list[tuple[int, int]], data: st.DataObject) -> None:
        # Deck orders come from hypothesis: with the server's secret shuffle, the same
        # choices would meet another deal on a rerun and hypothesis could not replay them.
        for seats, deals in plan:
            decks = data.draw(
                st.lists(st.permutations(DECK), min_size=deals, max_size=deals), label="decks"
            )
            presets = [[str(card) for card in deck] for deck in decks]
            options = {"deals": str(deals)}
            created = self.client.create_match("take5", seats, options, preset_decks=presets)
            joined = [
                self.client.join(created.match_id, s, name=f"seat-{s}", entropy=bytes([s]))
                for s in range(seats)
            ]
            state = self.server.call(read_state(self.server, created.match_id))
            dealt = GAME.new(options, seats, Rng(b"model"), presets)
            assert (state.hands, state.rows, state.unused) == (
                dealt.hands,
                dealt.rows,
                dealt.unused,
            )
            m = MatchModel(created.match_id, joined, state)
            m.start()
            self.matches.append(m)

    # ------------------------------------------------------------------ rules

    def running(self) -> list[MatchModel]:
        return [m for m in self.matches if not m.finished]

    @precondition(lambda self: bool(self.running()))
    @rule(data=st.data())
    def legal_move(self, data: st.DataObject) -> None:
        m = data.draw(st.sampled_from(self.running()), label="match")
        seat = data.draw(st.sampled_from(m.to_act()), label="seat")
        self.play_legal(m, seat, data.draw(st.integers(0, 11)), data.draw(st.integers(0, 5)))

    @precondition(lambda self: bool(self.running()))
    @rule(data=st.data(), moves=st.integers(1, 40))
    def burst_of_legal_moves(self, data: st.DataObject, moves: int) -> None:
        m = data.draw(st.sampled_from(self.running()), label="match")
        rnd = data.draw(st.randoms(use_true_random=False), label="rnd")
        for _ in range(moves):
            if m.finished:
                break
            seat = rnd.choice(m.to_act())
            self.play_legal(m, seat, rnd.randrange(12), rnd.randrange(6))

    @rule(data=st.data())
    def any_submit(self, data: st.DataObject) -> None:
        """A submission with every part drawn at random: the model predicts the answer."""
        m = data.draw(st.sampled_from(self.matches), label="match")
        n = len(m.seats)
        token = data.draw(
            st.sampled_from(["own"] * 6 + ["foreign", "unknown", "none"]), label="token"
        )
        token_seat = data.draw(st.integers(0, n - 1), label="token seat")
        intended = data.draw(st.integers(0, n - 1), label="seat whose move it is")
        # Another match's id with its own token would be a valid call on that match.
        elsewhere = [] if token == "foreign" else [self.foreign_seat(m).match_id]
        match_id = data.draw(
            st.sampled_from([m.match_id] * 8 + [*elsewhere, "", uuid.uuid4().hex[:16]]),
            label="match_id",
        )
        versions = [m.version, m.version - 1, m.version + 1, *m.since.values()]
        expected = data.draw(
            st.one_of(
                st.just(m.version),  # twice: most rule checks need a current version
                st.just(m.version),
                st.sampled_from([v for v in versions if v > 0]),
                st.integers(1, m.version + 2),
                st.sampled_from([0, U64]),
            ),
            label="expected_version",
        )
        reused = [a.request_id for a in m.log]
        request_id = data.draw(
            st.one_of(
                st.builds(new_id),
                st.sampled_from(["a", "b", "c"]),
                st.sampled_from(reused or ["a"]),
                st.sampled_from(["", "r" * (MAX_REQUEST_ID + 1), "r" * MAX_REQUEST_ID]),
            ),
            label="request_id",
        )
        legal = [WIRE.action_to_proto(a) for a in GAME.legal_actions(m.state, intended)]
        action = data.draw(
            st.one_of(
                st.sampled_from(legal or [select(1)]),
                st.builds(select, st.one_of(st.integers(0, 40), st.just(U32))),
                st.builds(choose_row, st.one_of(st.integers(0, 5), st.just(U32))),
                st.sampled_from([common_pb2.Action(), no_move()]),
            ),
            label="action",
        )
        self.attempt(m, token, token_seat, match_id, expected, request_id, action)

    @precondition(lambda self: any(m.log for m in self.matches))
    @rule(data=st.data())
    def resend_accepted(self, data: st.DataObject) -> None:
        """An accepted request_id again: the same action (the stored answer, whatever the
        version sent now), another action (refused), or by another seat (a new request)."""
        m = data.draw(st.sampled_from([m for m in self.matches if m.log]), label="match")
        prior = data.draw(st.sampled_from(m.log), label="prior")
        seat = data.draw(st.sampled_from([prior.seat, prior.seat, (prior.seat + 1) % 2]))
        same = WIRE.action_to_proto(GAME.parse_action(prior.text))
        other = data.draw(
            st.sampled_from(
                [WIRE.action_to_proto(a) for a in GAME.legal_actions(m.state, seat)]
                or [select(prior.seq % 32 + 1)]
            )
        )
        action = data.draw(st.sampled_from([same, same, other]), label="action")
        expected = data.draw(st.integers(1, m.version + 1), label="expected_version")
        self.attempt(m, "own", seat, m.match_id, expected, prior.request_id, action)

    @precondition(lambda self: bool(self.running()))
    @rule(data=st.data())
    def stale_or_future_version(self, data: st.DataObject) -> None:
        """A legal move chosen from an out-of-date view (or from a version not yet made)."""
        m = data.draw(st.sampled_from(self.running()), label="match")
        seat = data.draw(st.sampled_from(m.to_act()), label="seat")
        since = m.since[seat]
        choices = [st.integers(m.version + 1, m.version + 3)]
        if since > 1:
            choices.append(st.integers(1, since - 1))
        expected = data.draw(st.one_of(choices), label="expected_version")
        action = data.draw(
            st.sampled_from([WIRE.action_to_proto(a) for a in GAME.legal_actions(m.state, seat)])
        )
        expect = self.attempt(m, "own", seat, m.match_id, expected, new_id(), action)
        assert expect.code is Code.ABORTED

    @precondition(lambda self: any(m.finished for m in self.matches))
    @rule(data=st.data())
    def after_the_end(self, data: st.DataObject) -> None:
        m = data.draw(st.sampled_from([m for m in self.matches if m.finished]), label="match")
        seat = data.draw(st.integers(0, len(m.seats) - 1), label="seat")
        action = data.draw(st.one_of(st.builds(select, st.integers(1, 32)), st.just(row_1())))
        expect = self.attempt(m, "own", seat, m.match_id, m.version, new_id(), action)
        assert (expect.code, expect.rule) == (Code.FAILED_PRECONDITION, "game_over")

    @rule(data=st.data())
    def get_view_and_record(self, data: st.DataObject) -> None:
        """GetView with a seat's own token, an unknown one, another match's; GetMatchRecord."""
        m = data.draw(st.sampled_from(self.matches), label="match")
        seat = m.seats[data.draw(st.integers(0, len(m.seats) - 1), label="seat")]
        request = match_service_pb2.GetViewRequest(match_id=m.match_id)
        kind = data.draw(st.sampled_from(["own", "unknown", "foreign", "none"]), label="token")
        if kind == "own":
            self.check_view(m, seat.seat, self.client.get_view(seat))
            return
        if kind == "unknown":
            metadata: Any = (("authorization", f"Bearer {secrets.token_urlsafe(32)}"),)
            expected = (Code.UNAUTHENTICATED, "unauthenticated")
        elif kind == "foreign":
            metadata = self.foreign_seat(m).metadata
            expected = (Code.PERMISSION_DENIED, "wrong_match")
        else:
            metadata = ()
            expected = (Code.UNAUTHENTICATED, "unauthenticated")
        with pytest.raises(grpc.RpcError) as caught:
            self.client.stub.GetView(request, metadata=metadata, timeout=10)
        assert (caught.value.code(), rule_of(caught.value)) == expected
        if not m.finished:
            with pytest.raises(grpc.RpcError) as early:
                self.client.record(m.match_id)
            assert (early.value.code(), rule_of(early.value)) == (
                Code.FAILED_PRECONDITION,
                "not_finished",
            )

    def teardown(self) -> None:
        self.totals.update(self.calls)
        self.totals["matches"] += len(self.matches)
        self.totals["finished"] += sum(m.finished for m in self.matches)

    # ------------------------------------------------------------------ invariants

    def check_view(self, m: MatchModel, seat: int, view: common_pb2.View) -> None:
        """One seat's view against the model: versions, turn, legal actions, secrecy."""
        state = m.state
        assert view.match_id == m.match_id and view.HasField("seat") and view.seat == seat
        assert view.version == m.version
        assert view.status == (FINISHED if m.finished else RUNNING)
        assert tuple(view.to_act) == m.to_act()
        legal = [WIRE.action_to_proto(a) for a in GAME.legal_actions(state, seat)]
        assert list(view.legal_actions) == legal
        t5 = view.take5
        assert [[c.number for c in r.cards] for r in t5.rows] == [list(r) for r in state.rows]
        assert [c.number for c in t5.hand] == list(state.hands[seat])
        own = state.selected[seat]
        assert (t5.selected if t5.HasField("selected") else None) == own
        assert [(s.hand_size, s.committed) for s in t5.seats] == [
            (len(h), c is not None) for h, c in zip(state.hands, state.selected, strict=True)
        ]
        hidden = {c for hand in state.hands for c in hand}
        hidden |= {c for c in state.selected if c is not None}
        hidden |= set(state.unused)
        leaked = public_cards(view) & hidden
        assert not leaked, f"seat {seat}'s view shows hidden cards {sorted(leaked)}"

    @invariant()
    def server_agrees_with_the_model(self) -> None:
        for m in self.matches:
            summary = self.client.get_match(m.match_id)
            assert summary.version == m.version == 1 + len(m.log)
            assert summary.status == (FINISHED if m.finished else RUNNING)
            views = [self.client.get_view(seat) for seat in m.seats]
            for seat, view in enumerate(views):
                self.check_view(m, seat, view)
            assert len({public_part(v) for v in views}) == 1, "seats disagree on public facts"
            seen = (
                summary.SerializeToString(deterministic=True),
                tuple(normalized(v) for v in views),
            )
            if m.seen is not None and m.seen_version == m.version:
                assert seen == m.seen, "a step that accepted nothing changed the match"
            m.seen, m.seen_version = seen, m.version

            facts = self.server.call(read_facts(self.server, m.match_id))
            model_hash = sha(GAME.encode(m.state))
            assert facts.version == m.version
            assert facts.state_hash == model_hash
            assert facts.status == ("finished" if m.finished else "running")
            expected_rows = tuple((a.seq, a.seat, a.request_id, a.text) for a in m.log)
            assert facts.rows == expected_rows
            stored = tuple((r.seq, r.seat, r.request_id, r.action) for r in facts.log.actions)
            assert stored == expected_rows, "the store's log is not the accepted actions"
            assert [r[0] for r in stored] == list(range(1, len(stored) + 1))
            per_request = Counter((r[1], r[2]) for r in stored)
            assert set(per_request) == set(m.requests) == set(facts.requests)
            assert all(count == 1 for count in per_request.values())

            rebuilt = Match.replay(facts.log, GAME)
            assert rebuilt.version == m.version
            assert rebuilt.final_hash() == facts.state_hash
            if m.finished:
                assert facts.log.finished is not None
                assert facts.log.finished.final_hash == facts.state_hash
                if not m.record_checked:
                    self.check_record(m, facts.state_hash)
            else:
                assert facts.log.finished is None

    def check_record(self, m: MatchModel, state_hash: str) -> None:
        record = self.client.record(m.match_id)
        recorded = record_from_proto(record)
        assert verify(recorded) == []
        assert sha(GAME.encode(replay(recorded))) == state_hash == record.final_state_sha256
        assert [(a.seq, a.seat, a.action) for a in record.actions] == [
            (a.seq, a.seat, a.text) for a in m.log
        ]
        m.record_checked = True


def new_id() -> str:
    return uuid.uuid4().hex


def row_1() -> common_pb2.Action:
    return choose_row(1)


def bound_machine(server: ServerThread, client: Client) -> type[ServiceMachine]:
    """The machine class bound to a server, with a decoy match for foreign tokens."""
    created = client.create_match("take5", 3)
    decoy = client.join(created.match_id, 0, name="decoy")
    attrs = {"server": server, "client": client, "decoy": decoy, "totals": Counter[str]()}
    return type("ServiceMachineOnServer", (ServiceMachine,), attrs)


@pytest.fixture(params=["memory", "sqlite"])
def served(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[ServerThread, Client]]:
    store: MatchStore = (
        MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "a8.db")
    )
    server = ServerThread(store)
    client = Client(server.target)
    try:
        yield server, client
    finally:
        client.close()
        server.close()


def test_a8_random_interleavings_keep_every_invariant(
    served: tuple[ServerThread, Client],
) -> None:
    server, client = served
    machine = bound_machine(server, client)
    run_state_machine_as_test(machine, settings=SETTINGS)
    totals = machine.totals
    print(f"A8 ({type(server.store).__name__}): {dict(sorted(totals.items()))}")
    # The runs did reach what they are meant to: moves, refusals, duplicates, ends.
    assert totals["accepted"] > 0 and totals["finished"] > 0
