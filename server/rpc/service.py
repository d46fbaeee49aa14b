"""The MatchService servicer: request -> wire -> runtime -> wire -> response, nothing more.

No rules and no SQL here. Errors are raised as engine or runtime exceptions and turned
into statuses by the ErrorInterceptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from itertools import accumulate
from typing import Any, TypeAlias

import grpc

from speeltafel.sdk.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc
from speeltafel.server.app.errors import BadRequest, PermissionDenied, Refused
from speeltafel.server.app.match import Match, Outbox, Snapshot
from speeltafel.server.app.runtime import Ack, MatchRuntime
from speeltafel.server.engine.verify import group_orders
from speeltafel.server.rpc.errors import (
    bearer_token,
    bounded,
    classify,
    error_metadata,
    internal_error,
)
from speeltafel.server.rpc.limits import check_create_request, message_refused
from speeltafel.server.wire.common import (
    STATUSES,
    GameWire,
    action_from_proto,
    game_info_to_proto,
    outcome_to_proto,
    private_view_bytes,
    public_view,
    public_view_bytes,
    replaces_public,
    seat_view,
    seat_view_bytes,
)
from speeltafel.server.wire.encoding import embedded_field
from speeltafel.server.wire.registry import WIRES

# grpc ships no type information: the servicer context is untyped at this one seam.
Context: TypeAlias = Any

FINAL_RESULT_WAIT_S = 5.0  # how long a finished Play stream waits for its last answer
HALF_CLOSED = object()  # queued by the reader when the client half-closes its Play stream
VIEW_FIELD = 1  # PlayResponse.view and SpectateResponse.view
RESULT_FIELD = 2  # PlayResponse.result
RESYNC_TRUE = b"\x18\x01"  # PlayResponse.resync and SpectateResponse.resync (field 3) = true
STREAMS_OF_BYTES = ("Play", "Spectate")
FINAL_VIEWS = "final_views"
"""The key, in a finished match's final snapshot's cache, of its views serialised: every
seat's and the spectator's, compressed together (see :meth:`MatchService.keep_final_views`)."""


def _bytes_or_message(response: Any) -> bytes:
    """The response serializer of Play and Spectate: a view's response arrives already
    serialised (``bytes``, see :meth:`MatchService._view_response`) and is passed through;
    any other response is a message and is serialised here."""
    if isinstance(response, bytes):
        return response
    data: bytes = response.SerializeToString()
    return data


def _public_parts(match: Match, snapshot: Snapshot) -> dict[str, Any]:
    """The arguments of :func:`public_view` (and :func:`public_view_bytes`) at a snapshot."""
    state = snapshot.state
    return {
        "match_id": match.id,
        "version": snapshot.version,
        "status": snapshot.status,
        "seats": match.created.seats,
        "commitment": match.created.commitment,
        "observation": None if state is None else match.game.observe(state, None),
        "to_act": snapshot.to_act,
        "outcome": snapshot.outcome,
    }


class _Reading:
    """A Play stream's reader task as its handler sees it. ``idle`` is clear while the
    reader is in a submit. That submit runs in the reader's own task
    (``MatchRuntime.submit(inline=True)``), so the reader must not be cancelled then: a
    stream that ends meanwhile sets ``stopped`` instead, and the reader stops once the
    submit has returned."""

    __slots__ = ("idle", "stopped")

    def __init__(self) -> None:
        self.idle = asyncio.Event()
        self.idle.set()
        self.stopped = False


class _PassingBytes:
    """Stands in for a server while the generated registration runs: Play's and Spectate's
    handlers get :func:`_bytes_or_message` as their response serializer, then everything
    is registered on the real server as the generated code would."""

    def __init__(self, server: Any) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """Ignored: the generic form is rebuilt from the rewritten handlers below."""

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        rewritten = dict(handlers)
        for name in STREAMS_OF_BYTES:
            handler = rewritten[name]
            make = (
                grpc.stream_stream_rpc_method_handler
                if handler.request_streaming
                else grpc.unary_stream_rpc_method_handler
            )
            behaviour = handler.stream_stream or handler.unary_stream
            rewritten[name] = make(
                behaviour,
                request_deserializer=handler.request_deserializer,
                response_serializer=_bytes_or_message,
            )
        generic = grpc.method_handlers_generic_handler(service, rewritten)
        self._server.add_generic_rpc_handlers((generic,))
        self._server.add_registered_method_handlers(service, rewritten)


def add_match_service(servicer: MatchService, server: Any) -> None:
    """Register ``servicer`` on ``server`` (a ``grpc.aio.Server`` or anything with its two
    registration methods) like the generated ``add_MatchServiceServicer_to_server``, with
    Play and Spectate answering in pre-serialised bytes.

    Why: a version's views share everything but each seat's small private part. The public
    part is serialised once per version and each seat's part alone; gRPC is handed the
    concatenation instead of a message it would serialise whole for every seat."""
    match_service_pb2_grpc.add_MatchServiceServicer_to_server(  # type: ignore[no-untyped-call]
        servicer, _PassingBytes(server)
    )


def _metadata(context: Context, key: str) -> str:
    for k, v in context.invocation_metadata() or ():
        if k == key and isinstance(v, str):
            return v
    return ""


def _result_response(result: match_service_pb2.ActionResult) -> bytes:
    """A serialised ``PlayResponse(result=result)``, written around the result's own bytes
    (one message serialised, none built and copied into)."""
    return embedded_field(RESULT_FIELD, result.SerializeToString())


def _ack_to_proto(ack: Ack) -> match_service_pb2.SubmitActionResponse:
    return match_service_pb2.SubmitActionResponse(
        seq=ack.seq, version=ack.version, duplicate=ack.duplicate
    )


def _action_error(exc: BaseException, where: str) -> match_service_pb2.ActionError:
    """What a stream tells the client about a refused message: what the unary call's status
    and ErrorInfo would have said."""
    code, message, rule = classify(exc) or internal_error(exc, where)
    return match_service_pb2.ActionError(
        code=code.value[0], message=bounded(message), rule=rule, metadata=error_metadata(exc)
    )


def _subscribed(match: Match) -> match_service_pb2.Subscribed:
    return match_service_pb2.Subscribed(
        version=match.version,
        status=STATUSES[match.status],
        preset_deck=bool(match.created.presets),
    )


class MatchService(match_service_pb2_grpc.MatchServiceServicer):
    """The gRPC face of a :class:`MatchRuntime`; ``wires`` maps each of its games' ids to
    the game's wire (default: the wire registry)."""

    def __init__(self, runtime: MatchRuntime, wires: Mapping[str, GameWire] = WIRES) -> None:
        self.runtime = runtime
        self.wires = wires
        runtime.keep_final_views = self.keep_final_views
        # Readers of ended Play streams finishing a submit: held here, as the loop holds a
        # task only weakly.
        self._finishing: set[asyncio.Task[None]] = set()

    def keep_final_views(self, match: Match, snapshot: Snapshot) -> bool:
        """Keep a finished match's views of its final snapshot serialised in the snapshot's
        cache, so that the match may let go of its engine state (``Match.drop_state``);
        returns whether they were kept.

        The spectator's view and every seat's, as :meth:`_view_bytes` builds them, are
        compressed together (they share the public part: about 4.4 KB make 0.6 KB in Take
        5) with where each ends; a late view is a decompression and a slice of its own
        seat's bytes (:meth:`_final_view`). What else the cache held to build views (the
        public message and bytes, seats' views) is dropped. Not kept when a view holds a
        clock (a deadline): such a view changes with time; a finished match has none."""
        if any(snapshot.deadlines):
            return False
        cache = snapshot.cache
        seats: list[int | None] = [None, *range(match.created.seats)]
        views = [self._view_bytes(match, snapshot, seat) for seat in seats]
        cache.clear()  # the public message and bytes, seats' views: the kept views hold them
        cache[FINAL_VIEWS] = (zlib.compress(b"".join(views)), tuple(accumulate(map(len, views))))
        return True

    @staticmethod
    def _final_view(snapshot: Snapshot, seat: int | None) -> bytes | None:
        """``seat``'s serialised view (None: the spectator's) kept by
        :meth:`keep_final_views`, or None when the snapshot has none kept."""
        kept: tuple[bytes, tuple[int, ...]] | None = snapshot.cache.get(FINAL_VIEWS)
        if kept is None:
            return None
        packed, ends = kept
        index = 0 if seat is None else seat + 1
        return zlib.decompress(packed)[ends[index - 1] if index else 0 : ends[index]]

    # ------------------------------------------------------------------ helpers

    def _seat(self, context: Context, match_id: str) -> int:
        """The caller's seat in ``match_id``; the token decides, never a request field."""
        token_match, seat = self.runtime.authenticate(bearer_token(context.invocation_metadata()))
        if not match_id:
            raise BadRequest("match_id is required", "match_id")
        if token_match != match_id:
            # The same answer whether match_id exists or not: nothing to enumerate.
            raise PermissionDenied("the seat token does not belong to this match", "wrong_match")
        return seat

    def _public(self, match: Match, snapshot: Snapshot) -> common_pb2.View:
        """The public part of a version's views (the spectator's view), built once from the
        spectator's observation and kept with the snapshot."""
        public: common_pb2.View | None = snapshot.cache.get("public")
        if public is None:
            public = public_view(self.wires[match.created.game], **_public_parts(match, snapshot))
            public.preset_deck = bool(match.created.presets)
            snapshot.cache["public"] = public
        return public

    def _public_bytes(self, match: Match, snapshot: Snapshot) -> bytes:
        """The public part of a version's views, serialised: from the message when one was
        built (GetView, a spectator), else written as bytes (:func:`public_view_bytes`)."""
        public: common_pb2.View | None = snapshot.cache.get("public")
        if public is not None:
            return public.SerializeToString()
        return public_view_bytes(
            self.wires[match.created.game],
            **_public_parts(match, snapshot),
            preset_deck=bool(match.created.presets),
        )

    def _view_bytes(self, match: Match, snapshot: Snapshot, seat: int | None) -> bytes:
        """The serialised view of ``seat`` (None: a spectator) at a snapshot: the public
        part's bytes (serialised once per version) followed by the seat's own part,
        serialised alone (see :func:`private_view`). Parsed, it equals :meth:`_view`.
        A finished match's views come from those kept (:meth:`keep_final_views`)."""
        final = self._final_view(snapshot, seat)
        if final is not None:
            return final
        cache = snapshot.cache
        public: bytes | None = cache.get("public_bytes")
        if public is None:
            public = self._public_bytes(match, snapshot)
            cache["public_bytes"] = public
        if seat is None:
            return public
        wire = self.wires[match.created.game]
        if replaces_public(wire):
            return self._view(match, snapshot, seat).SerializeToString()
        state = snapshot.state
        acting = state is not None and seat in snapshot.to_act
        game = match.game
        private = private_view_bytes(
            wire,
            seat=seat,
            observation=None if state is None else game.observe(state, seat),
            legal_actions=game.legal_actions(state, seat) if acting else (),
            move_clock_ms=match.created.move_clock_ms,
            deadline_ms=snapshot.deadlines[seat],
            now_ms=self.runtime.clock.now_ms(),
            time_bank_ms=snapshot.banks[seat] if snapshot.banks and acting else None,
        )
        return seat_view_bytes(public, private)

    def _view_response(
        self, match: Match, snapshot: Snapshot, seat: int | None, resync: bool
    ) -> bytes:
        """A serialised ``PlayResponse(view=..., resync=...)``; the same bytes are a
        ``SpectateResponse``, whose view and resync have the same field numbers."""
        response = embedded_field(VIEW_FIELD, self._view_bytes(match, snapshot, seat))
        return response + RESYNC_TRUE if resync else response

    def _view(self, match: Match, snapshot: Snapshot, seat: int | None) -> common_pb2.View:
        """The view of ``seat`` (None: a spectator) at a snapshot, as a message (GetView).

        The public part is built once per version from the spectator's observation and
        shared; each seat's copy adds only what that seat's own observation holds beyond it.
        A finished match's view is parsed from the bytes kept (:meth:`keep_final_views`).

        A seat's view is built once per version and kept serialised in the snapshot's cache
        under the seat's own key, without the one field that moves with the wall clock
        (``clock.remaining_ms``, set on every answer): a storm of GetView calls of one
        token costs a parse per call, not an observation, the legal actions and a copy
        (the fairness test's ``getview-2000``). The cache is the snapshot's (one match, one
        version) and the key is the seat the token gave, so no seat is answered with
        another's view; it goes with the snapshot's other cached parts (``CACHED_VERSIONS``).
        """
        final = self._final_view(snapshot, seat)
        if final is not None:
            return common_pb2.View.FromString(final)
        if seat is None:
            return self._public(match, snapshot)
        deadline_ms = snapshot.deadlines[seat]
        now_ms = self.runtime.clock.now_ms()
        key = f"seat_view:{seat}"
        kept: bytes | None = snapshot.cache.get(key)
        if kept is not None:
            view = common_pb2.View.FromString(kept)
            if deadline_ms:
                view.clock.remaining_ms = max(0, deadline_ms - now_ms)
            return view
        game = match.game
        state = snapshot.state
        acting = state is not None and seat in snapshot.to_act
        view = seat_view(
            self._public(match, snapshot),
            self.wires[match.created.game],
            seat=seat,
            observation=None if state is None else game.observe(state, seat),
            legal_actions=game.legal_actions(state, seat) if acting else (),
            move_clock_ms=match.created.move_clock_ms,
            deadline_ms=deadline_ms,
            now_ms=now_ms,
        )
        if snapshot.banks and acting:
            view.clock.time_bank_ms = snapshot.banks[seat]
        remaining = view.clock.remaining_ms
        view.clock.remaining_ms = 0
        snapshot.cache[key] = view.SerializeToString()
        view.clock.remaining_ms = remaining
        return view

    async def _submit(
        self,
        match: Match,
        seat: int,
        request: Any,
        on_ack: Callable[[Ack], None] | None = None,
        inline: bool = False,
    ) -> Ack:
        """``inline``: see :meth:`MatchRuntime.submit`; only for a caller never cancelled
        part way (the Play stream's reader)."""
        if request.match_id != match.id:
            raise PermissionDenied("the seat token does not belong to this match", "wrong_match")
        action = action_from_proto(self.wires[match.created.game], request.action)
        return await self.runtime.submit(
            match.id,
            seat,
            request.expected_version,
            request.request_id,
            action,
            on_ack=on_ack,
            inline=inline,
        )

    # ------------------------------------------------------------------ unary calls

    async def ListGames(
        self, request: match_service_pb2.ListGamesRequest, context: Context
    ) -> match_service_pb2.ListGamesResponse:
        return match_service_pb2.ListGamesResponse(
            games=[game_info_to_proto(g.info) for g in self.runtime.games()]
        )

    async def CreateMatch(
        self, request: match_service_pb2.CreateMatchRequest, context: Context
    ) -> match_service_pb2.CreateMatchResponse:
        if not request.game:
            raise BadRequest("game is required", "game")
        check_create_request(request)
        created = await self.runtime.create_match(
            request.game,
            request.seats,
            dict(request.options),
            request.move_clock_ms,
            group_orders((deck.deck, deck.cards) for deck in request.preset_decks),
            request_id=request.request_id,
        )
        match = created.match
        return match_service_pb2.CreateMatchResponse(
            match_id=match.id,
            commitment=match.created.commitment,
            rules_version=match.created.rules_version,
            options=dict(match.created.options),
            move_clock_ms=match.created.move_clock_ms,
            duplicate=created.duplicate,
            preset_deck=bool(match.created.presets),
        )

    async def JoinMatch(
        self, request: match_service_pb2.JoinMatchRequest, context: Context
    ) -> match_service_pb2.JoinMatchResponse:
        seat = request.seat if request.HasField("seat") else None
        joined = await self.runtime.join(
            request.match_id, seat, request.name, request.entropy, request_id=request.request_id
        )
        return match_service_pb2.JoinMatchResponse(
            match_id=request.match_id,
            seat=joined.seat,
            token=joined.token,
            preset_deck=joined.preset_deck,
            duplicate=joined.duplicate,
        )

    async def GetMatch(
        self, request: match_service_pb2.GetMatchRequest, context: Context
    ) -> match_service_pb2.GetMatchResponse:
        match = await self.runtime.get(request.match_id)
        created = match.created
        names = [match.joined[s].name if s in match.joined else "" for s in range(created.seats)]
        summary = match_service_pb2.MatchSummary(
            match_id=match.id,
            game=created.game,
            rules_version=created.rules_version,
            options=dict(created.options),
            seats=created.seats,
            status=STATUSES[match.status],
            version=match.version,
            seat_names=names,
            commitment=created.commitment,
            outcome=outcome_to_proto(None if self.runtime.sealed(match) else match.outcome),
            move_clock_ms=created.move_clock_ms,
            preset_deck=bool(created.presets),
        )
        return match_service_pb2.GetMatchResponse(match=summary)

    async def GetView(
        self, request: match_service_pb2.GetViewRequest, context: Context
    ) -> match_service_pb2.GetViewResponse:
        seat = self._seat(context, request.match_id)
        match = await self.runtime.get(request.match_id)
        return match_service_pb2.GetViewResponse(view=self._view(match, match.current, seat))

    async def SubmitAction(
        self, request: match_service_pb2.SubmitActionRequest, context: Context
    ) -> match_service_pb2.SubmitActionResponse:
        seat = self._seat(context, request.match_id)
        match = await self.runtime.get(request.match_id)
        return _ack_to_proto(await self._submit(match, seat, request))

    async def GetMatchRecord(
        self, request: match_service_pb2.GetMatchRecordRequest, context: Context
    ) -> match_service_pb2.GetMatchRecordResponse:
        match = await self.runtime.get(request.match_id)
        if match.finished is None:
            raise Refused("the record is published when the match has finished", "not_finished")
        if match.termination == "expired":
            # Its seats never all joined: nothing was dealt and there is nothing to replay.
            raise Refused("the match expired before it was dealt: it has no record", "expired")
        if self.runtime.sealed(match):
            raise Refused(
                "the match belongs to a duplicate set that has not ended: its record is sealed",
                "record_sealed",
            )
        return match_service_pb2.GetMatchRecordResponse(record=_record(match))

    # ------------------------------------------------------------------ streams

    async def Play(
        self, request_iterator: AsyncIterator[match_service_pb2.PlayRequest], context: Context
    ) -> AsyncIterator[match_service_pb2.PlayResponse | bytes]:
        first = await anext(aiter(request_iterator), None)
        if first is None:
            return
        if first.WhichOneof("kind") != "subscribe":
            raise BadRequest("the first message of Play must be subscribe", "subscribe_first")
        match_id = first.subscribe.match_id
        routed = _metadata(context, "x-match-id")
        if routed != match_id:
            raise BadRequest("metadata x-match-id must name the subscribed match", "x-match-id")
        seat = self._seat(context, match_id)
        match = await self.runtime.get(match_id)
        outbox = self.runtime.subscribe(
            match,
            seat,
            first.subscribe.since_version,
            only_when_acting=first.subscribe.only_when_acting,
        )
        subscribed = _subscribed(match)
        reading = _Reading()
        # Two tasks per stream: gRPC's handler task runs this generator and sends; this
        # one reads and submits, so a slow submission never holds up the views.
        reader = asyncio.ensure_future(
            self._read_actions(request_iterator, match, seat, outbox, reading)
        )
        try:
            yield match_service_pb2.PlayResponse(subscribed=subscribed)
            # The outbox is drained here rather than through a helper generator: each
            # async-generator layer costs a frame switch per message.
            if match.status != "finished" or not outbox.empty:
                while True:
                    update = await outbox.get()
                    snapshot = update.snapshot
                    if snapshot is None:
                        if update.result is HALF_CLOSED:
                            return  # the client is done sending and has every answer
                        yield _result_response(update.result)
                        continue
                    yield self._view_response(match, snapshot, seat, update.resync)
                    if snapshot.status == "finished":
                        break
            # The final view is out. The action that ended the match is answered after its
            # view was published: let that answer (and any other) reach the client before the
            # stream closes, so that every acknowledged action is acknowledged to its sender.
            with contextlib.suppress(TimeoutError):
                # asyncio.timeout, not wait_for, which on Python 3.11 can swallow the
                # handler's cancellation (the client gone) when idle is set at that moment.
                async with asyncio.timeout(FINAL_RESULT_WAIT_S):
                    await reading.idle.wait()
            for result in outbox.pending_results():
                if result is not HALF_CLOSED:
                    yield _result_response(result)
        finally:
            self.runtime.unsubscribe(match, outbox)
            if reading.idle.is_set():
                reader.cancel()
            else:
                # Its submit runs in its own task: cancelled part way, it would leave the
                # action half done. It stops once the submit has returned.
                reading.stopped = True
                self._finishing.add(reader)
                reader.add_done_callback(self._finishing.discard)

    async def _read_actions(
        self,
        requests: AsyncIterator[match_service_pb2.PlayRequest],
        match: Match,
        seat: int,
        outbox: Outbox,
        reading: _Reading,
    ) -> None:
        try:
            await self._read_submissions(requests, match, seat, outbox, reading)
        except Exception as exc:
            # A message that does not parse ends the reading (the stream of views goes on);
            # the client is told why instead of hearing nothing about its later actions.
            error = _action_error(exc, "Play/read")
            outbox.push_result(match_service_pb2.ActionResult(error=error))
        else:
            # The client half-closed: every answer to what it sent is queued; the stream
            # ends once they are out.
            outbox.push_result(HALF_CLOSED)

    async def _read_submissions(
        self,
        requests: AsyncIterator[match_service_pb2.PlayRequest],
        match: Match,
        seat: int,
        outbox: Outbox,
        reading: _Reading,
    ) -> None:
        while True:
            try:
                request = await anext(requests)
            except StopAsyncIteration:
                return
            except BadRequest as exc:
                # One message that does not parse is answered; the stream reads on.
                await outbox.room_for_result()
                outbox.push_result(
                    match_service_pb2.ActionResult(error=_action_error(exc, "Play/read"))
                )
                message_refused()
                continue
            # A client that sends without reading its answers waits here (and its HTTP/2
            # window then stops its sending) instead of growing the server's memory.
            if outbox.full:
                await outbox.room_for_result()
            if request.WhichOneof("kind") != "submit":
                error = match_service_pb2.ActionError(
                    code=grpc.StatusCode.INVALID_ARGUMENT.value[0],
                    message="only submit may follow subscribe",
                    rule="subscribe_once",
                )
                outbox.push_result(match_service_pb2.ActionResult(error=error))
                continue
            submit = request.submit
            result = match_service_pb2.ActionResult(request_id=submit.request_id)
            answered = False

            def acknowledge(ack: Ack, result: Any = result) -> None:
                # Called by the runtime before it publishes the views this action caused,
                # so the sender learns of its acceptance before it sees the new version.
                nonlocal answered
                answered = True
                result.accepted.CopyFrom(_ack_to_proto(ack))
                outbox.push_result(result)

            reading.idle.clear()
            try:
                # In this task: the stream does not cancel it while it submits (_Reading).
                await self._submit(match, seat, submit, on_ack=acknowledge, inline=True)
            except Exception as exc:
                if not answered:  # a fault after the action was acknowledged changes nothing
                    result.error.CopyFrom(_action_error(exc, "Play/submit"))
                    outbox.push_result(result)
                    message_refused()  # a flood of refused moves is slowed (rpc/limits.py)
            finally:
                reading.idle.set()
            if reading.stopped:
                return  # the stream has ended

    async def Spectate(
        self, request: match_service_pb2.SpectateRequest, context: Context
    ) -> AsyncIterator[match_service_pb2.SpectateResponse | bytes]:
        match = await self.runtime.get(request.match_id)
        if self.runtime.sealed(match):
            # Its deal is shared by matches still being played: only its seats may look.
            raise Refused(
                "the match belongs to a duplicate set that has not ended: only its seats"
                " may watch it",
                "record_sealed",
            )
        outbox = self.runtime.subscribe(match, None, request.since_version)
        try:
            yield match_service_pb2.SpectateResponse(subscribed=_subscribed(match))
            if match.status != "finished" or not outbox.empty:
                while True:
                    update = await outbox.get()
                    snapshot = update.snapshot
                    if snapshot is None:
                        continue  # a spectator sends nothing, so nothing is answered
                    yield self._view_response(match, snapshot, None, update.resync)
                    if snapshot.status == "finished":
                        break
        finally:
            self.runtime.unsubscribe(match, outbox)


def _record(match: Match) -> common_pb2.MatchRecord:
    created = match.created
    finished = match.finished
    assert finished is not None  # checked by the caller
    record = common_pb2.MatchRecord(
        match_id=match.id,
        game=created.game,
        rules_version=created.rules_version,
        options=dict(created.options),
        seats=created.seats,
        server_seed=created.server_seed,
        commitment=created.commitment,
        shuffle_key=match.shuffle_key,
        preset_deck=bool(created.presets),
        preset_decks=[
            common_pb2.DeckOrder(cards=order, deck=deck)
            for deck, orders in match.presets.items()
            for order in orders
        ],
        outcome=outcome_to_proto(match.outcome),
        final_state_sha256=finished.final_hash,
        move_clock_ms=created.move_clock_ms,
        created_unix_ms=created.created_ms,
        started_unix_ms=match.started_ms,
        finished_unix_ms=finished.finished_ms,
        deal=created.deal,
    )
    for seat in range(created.seats):
        joined = match.joined[seat]
        record.seat_records.add(seat=seat, name=joined.name, entropy=joined.entropy)
    for row in match.actions:
        record.actions.add(
            seq=row.seq,
            seat=row.seat,
            action=row.action,
            server_time_unix_ms=row.server_ms,
            clock_default=row.clock_default,
        )
    return record
