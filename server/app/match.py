"""One match in memory: its state, version, clocks, request ids and subscribers.

Everything here is rebuilt from the log alone (:meth:`Match.replay`): the state by
replaying the actions, the clocks from the logged server times (a seat's deadline is the
time at which its current decision began plus the move clock), the request-id answers from
the action rows. Live play and recovery go through the same two transitions,
:meth:`Match.start` and :meth:`Match.record`.

Versions: 0 while seats join; 1 once the first deal is made; +1 per accepted action (so the
action with log seq ``n`` produces version ``n + 1``); +1 once more when the runtime ends a
match early (expired or abandoned), so that the end is a change a client can see.

Endings: the rules end a match ("normal"), or the runtime does: "expired" (its seats never
filled) or "abandoned" (the clock ran out several periods in a row with nobody acting). An
early end has an outcome with no scores or ranks and a utility of 0 for every seat
(:meth:`Match.end`); it is stored in the finished row, so replay ends the match the same way.

Clock policy (tournaments): besides the move clock a seat may have a time bank, spent by
the time a move takes beyond the move clock: a seat's deadline is the start of its decision
plus the move clock plus what is left of its bank. Both are derived from the logged server
times (the row's ``server_ms`` against the start of the decision it ends), so replay
rebuilds every bank. A clock default is a *miss*; after ``max_misses`` misses a seat has
*forfeited*: under "autoplay" its later decisions are due at once (defaulted as soon as
they begin; those defaults are not misses and do not count as idle periods, so they never
make a match "abandoned"); under "lose" the runtime ends the match with the termination
"forfeit" (:meth:`Match.end`): the seat ranks last alone with utility -1, the others share
rank 1 and the rest of the utility. Moves the engine refused are counted per seat in
:attr:`Match.rejected` (memory only: they change nothing in the log).

Staleness: a seat's decision begins at the version where it entered ``to_act`` (or where its
own previous action left it still to act). An action chosen from any view at or after that
version is current: other seats' sealed commitments change nothing about this seat's choice,
so they do not make its action stale.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import zlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from speeltafel.server.app.errors import StaleVersion
from speeltafel.server.engine.core import GameAny, Outcome, Rng, named_presets, shuffle_key
from speeltafel.server.engine.verify import unnamed_to_first
from speeltafel.server.store.base import (
    ActionRow,
    MatchCreated,
    MatchFinished,
    MatchLog,
    SeatJoined,
)

PackedRow = tuple[int, int, str, str, int, bool]
"""An action row as a running match holds it: ``(seq, seat, request_id, action, server_ms,
clock_default)``, its match id left out. A tuple of plain values, not an ``ActionRow``:
CPython stops tracking such a tuple at the first collection that sees it, and the collector
never walks it again. Each row object stayed in every middle collection's walk until it
moved to the oldest generation, for the rest of its match (docs/performance-rounds.md,
round 26)."""

HISTORY = 64  # snapshots kept per match for resuming streams without a gap
CACHED_VERSIONS = 4  # the newest snapshots keep their shared view parts
REPLAY_HISTORY = 2
"""Snapshots a replayed match starts with (see :meth:`Match.replay`). Each keeps its own
engine state, and a recovered match is usually idle: 8 of them were a quarter of an idle
match's memory (bench (e)). A stream resuming across a restart from further back gets the
current view marked resync, which carries the deal's public history: nothing is lost."""


CLOCK_PREFIX = "clock:"
"""Request ids of the server's own clock defaults start with this; clients may not use it."""


def clock_request_id(version: int, deadline_ms: int) -> str:
    """The request id of a clock default: fixed by the match's version and the deadline, so
    two processes that both see the clock run out can never both apply it."""
    return f"{CLOCK_PREFIX}{version}:{deadline_ms}"


def clock_deadline(request_id: str) -> int | None:
    """The deadline a clock default's request id names (None for another request id)."""
    kind, _, rest = request_id.partition(":")
    _, _, deadline = rest.partition(":")
    return int(deadline) if kind == "clock" and deadline.isdigit() else None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The match at one version: what every view of that version is built from."""

    version: int
    status: str  # "waiting", "running" or "finished"
    state: Any  # the engine state; None while waiting
    to_act: tuple[int, ...]
    deadlines: tuple[int, ...]  # per seat, server unix ms; 0 when not acting
    outcome: Outcome | None
    banks: tuple[int, ...] = ()  # per seat: time bank left, ms
    begins: tuple[int, ...] = ()  # seats whose decision begins at this version (a tuple of
    # ints, not a frozenset: CPython stops tracking it, so the collector never walks it again)
    # What the transport derives once per version and shares among subscribers (the public
    # part of the views); not part of the snapshot's value.
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(slots=True)
class Update:
    """One item of a subscriber's outbox: a snapshot to send, or a result for the client."""

    snapshot: Snapshot | None = None
    resync: bool = False
    result: Any = None


def wanted_by(seat: int | None, snapshot: Snapshot) -> bool:
    """Whether a subscriber that asked for views only when it must act wants ``snapshot``:
    one of its decisions begins there, or the match is over."""
    return snapshot.status == "finished" or (seat is not None and seat in snapshot.begins)


class Outbox:
    """A subscriber's queue. When views pile up past ``limit`` (a slow reader), they are
    replaced by one fresh snapshot marked resync; results of the client's own requests are
    never dropped, so a client that sends without reading is made to wait instead
    (:meth:`room_for_result`).

    ``only_when_acting``: the subscriber wants a view only where one of its decisions
    begins, plus the final view and any resync (see :func:`wanted_by`); the others are not
    queued at all. A bot then gets one view per decision instead of one per version: in
    Take 5, four seats committing sealed cards made 16 views, and now make 4.

    One task reads an outbox (its stream). It waits on a plain future that the next push
    settles, not on an ``asyncio.Event``: the event's ``wait`` and ``set`` are Python
    coroutines and loops run at every message (issue 12, round 21)."""

    def __init__(
        self,
        seat: int | None,
        limit: int = 256,
        result_limit: int = 64,
        only_when_acting: bool = False,
    ) -> None:
        self.seat = seat
        self.only_when_acting = only_when_acting
        self.limit = limit
        self.result_limit = result_limit
        self._items: deque[Update] = deque()
        self._views = 0
        self._results = 0
        self._waiter: asyncio.Future[None] | None = None  # the reader's, while it waits
        self._room = asyncio.Event()
        self._room.set()

    def push_snapshot(self, snapshot: Snapshot, resync: bool = False, always: bool = False) -> None:
        """Queue a view; collapse the backlog into one resync snapshot when over the limit.

        ``always``: queue it even when the subscriber wants views only when it must act
        (the runtime chose it for the subscription's backlog)."""
        if self.only_when_acting and not (resync or always or wanted_by(self.seat, snapshot)):
            return
        if self._views >= self.limit:
            self._items = deque(u for u in self._items if u.snapshot is None)
            self._views = 0
            resync = True
        self._items.append(Update(snapshot=snapshot, resync=resync))
        self._views += 1
        self._wake()

    def push_result(self, result: Any) -> None:
        """Queue the answer to one of the client's requests."""
        self._items.append(Update(result=result))
        self._results += 1
        if self._results >= self.result_limit:
            self._room.clear()
        self._wake()

    def _wake(self) -> None:
        """Settle the waiting reader's future, if it waits."""
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():  # cancelled with its reader
                waiter.set_result(None)

    @property
    def full(self) -> bool:
        """The client has not read enough answers to be sent another."""
        return not self._room.is_set()

    async def room_for_result(self) -> None:
        """Wait until the client has read enough answers to be sent another."""
        await self._room.wait()

    def pending_results(self) -> list[Any]:
        """Take every queued result (the views left behind are dropped)."""
        results = [u.result for u in self._items if u.snapshot is None]
        self._items.clear()
        self._views = self._results = 0
        self._room.set()
        return results

    @property
    def empty(self) -> bool:
        """Nothing is waiting to be sent."""
        return not self._items

    async def get(self) -> Update:
        """The next update, waiting for one."""
        while not self._items:
            if self._waiter is not None:
                raise RuntimeError("an outbox has one reader")
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:  # cancelled before a push settled it
                    self._waiter = None
        update = self._items.popleft()
        if update.snapshot is not None:
            self._views -= 1
        else:
            self._results -= 1
            if self._results < self.result_limit:
                self._room.set()
        return update


@dataclass(slots=True, eq=False)
class Pipelined:
    """A submit applied ahead of the durable state (see :meth:`Match.pipeline`)."""

    row: ActionRow
    state: Any
    acting_since: dict[int, tuple[int, int]]
    done: asyncio.Future[bool]  # True once recorded, False when its append failed


class Match:
    """The live runtime of one match (the runtime holds its lock while changing it)."""

    # Slots: with its 35 attributes, an instance dict outgrew CPython's shared-key layout
    # and cost two 0.8 KB tables per match (tracemalloc, bench (e)).
    __slots__ = (
        "_actions",
        "_by_request",
        "_idle_deadline",
        "_packed",
        "_replaying",
        "_to_act",
        "_to_act_of",
        "acting_since",
        "banks",
        "compacted",
        "created",
        "failures",
        "finished",
        "forfeited",
        "game",
        "history",
        "id",
        "idle_periods",
        "join_requests",
        "joined",
        "lock",
        "misses",
        "outcome",
        "pending",
        "rejected",
        "replaced",
        "requests",
        "stale",
        "started_ms",
        "state",
        "subscribers",
        "termination",
        "timer",
        "version",
    )

    def __init__(self, created: MatchCreated, game: GameAny) -> None:
        self.created = created
        self.game = game
        self.id = created.match_id
        self.joined: dict[int, SeatJoined] = {}
        self.state: Any = None
        self.version = 0
        self._actions: list[PackedRow] = []
        self._packed = b""  # the action rows of a compacted match (see compact)
        self.compacted = False
        # Request-id answers: by request id alone (no key tuple per row: an idle match holds
        # tens of rows); ``requests`` holds a row whose request id another seat used first,
        # and, once compacted, each seat's last answer (see find_request and compact).
        self._by_request: dict[str, PackedRow] = {}
        self.requests: dict[tuple[int, str], ActionRow] = {}
        self.join_requests: dict[str, SeatJoined] = {}  # join request id -> the seat taken
        self.acting_since: dict[int, tuple[int, int]] = {}  # seat -> (version, server ms)
        self.started_ms = 0
        self.finished: MatchFinished | None = None
        self.outcome: Outcome | None = None
        self.termination = "normal"
        self.idle_periods = 0  # clock periods in a row that expired with nobody acting
        seats = created.seats
        self.banks = [created.time_bank_ms] * seats  # per seat: time bank left, ms
        self.misses = [0] * seats  # per seat: clock defaults before any forfeit
        self.forfeited = [False] * seats
        self.rejected = [0] * seats  # per seat: moves the engine refused (memory only)
        self._idle_deadline: int | None = None
        # Set by the runtime: ``stale`` when the log may be ahead of this object (a conflict
        # whose reload failed), ``replaced`` once a fresh object from the log took its place.
        self.stale = False
        self.replaced = False
        self.failures = 0  # background writes (clock, finish, end) failed in a row
        # Submits applied ahead of the durable state, their rows on their way to the store
        # in seq order (MatchRuntime's pipelined appends); None when there are none.
        self.pending: list[Pipelined] | None = None
        self.lock = asyncio.Lock()
        self._to_act: tuple[int, ...] = ()
        self._to_act_of: Any = None  # the state _to_act belongs to
        self._replaying = False  # replay builds no snapshot until the end
        # A list trimmed to HISTORY by hand, not a deque(maxlen=HISTORY): a deque allocates
        # a block of 64 slots (about 0.8 KB) even for the one snapshot most matches keep.
        self.history: list[Snapshot] = []
        self.subscribers: set[Outbox] = set()
        self.timer: asyncio.TimerHandle | None = None
        self.history.append(self._snapshot())

    # ------------------------------------------------------------------ facts

    @property
    def status(self) -> str:
        """waiting, running or finished."""
        if self.outcome is not None:
            return "finished"
        return "waiting" if self.state is None else "running"

    @property
    def options(self) -> Mapping[str, str]:
        """The match's options (built when asked: only the deal reads them)."""
        return dict(self.created.options)

    @property
    def presets(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """The preset deck orders by deck name, in the game's deck order (a match stored
        before decks had names reads as the game's first deck)."""
        stored = dict(self.created.presets)
        return named_presets(self.game.info.decks, unnamed_to_first(self.game.info.decks, stored))

    @property
    def final_outcome(self) -> Outcome | None:
        """How the match ended, for the wire (``Outcome.termination`` included); None while
        it is not over. The same value as :attr:`outcome`."""
        return self.outcome

    @property
    def current(self) -> Snapshot:
        """The snapshot of the current version."""
        return self.history[-1]

    @property
    def shuffle_key(self) -> bytes:
        """The key of the match's deal generator (seed and the seats' entropy)."""
        entropies = [self.joined[s].entropy for s in range(self.created.seats)]
        return shuffle_key(self.created.server_seed, entropies)

    def to_act(self) -> tuple[int, ...]:
        """Seats that must act now (asked of the engine once per state)."""
        state = self.state
        if state is None or self.termination != "normal":
            return ()
        if self._to_act_of is not state:
            self._to_act = tuple(self.game.to_act(state))
            self._to_act_of = state
        return self._to_act

    def deadline(self, seat: int) -> int:
        """Server unix ms by which ``seat`` must act; 0 when it need not.

        The start of its decision plus the move clock plus its time bank; a seat that has
        forfeited under "autoplay" is due at once."""
        since = self.acting_since.get(seat)
        if since is None:
            return 0
        if self.forfeited[seat]:
            return since[1]
        return since[1] + self.created.move_clock_ms + self.banks[seat]

    def deadlines(self) -> list[int]:
        """:meth:`deadline` of every seat, in one pass over the seats that must act (a
        snapshot's and the timer's, at every version)."""
        deadlines = [0] * self.created.seats
        clock_ms, banks, forfeited = self.created.move_clock_ms, self.banks, self.forfeited
        for seat, (_, since_ms) in self.acting_since.items():
            deadlines[seat] = since_ms if forfeited[seat] else since_ms + clock_ms + banks[seat]
        return deadlines

    @property
    def forfeit_due(self) -> bool:
        """A seat has forfeited under the "lose" policy and the match still runs."""
        return (
            self.created.forfeit == "lose"
            and any(self.forfeited)
            and self.termination == "normal"
            and self.outcome is None
        )

    def final_hash(self) -> str:
        """Hex SHA-256 of the engine's canonical encoding of the current state ("" before the
        deal; the stored one once the state is let go of, see :meth:`drop_state`)."""
        if self.state is None:
            return self.finished.final_hash if self.finished is not None else ""
        return hashlib.sha256(self.game.encode(self.state)).hexdigest()

    def check_version(self, seat: int, expected_version: int) -> None:
        """Raise StaleVersion unless ``expected_version`` is current for ``seat``'s decision
        (at the head: after the pipelined actions, as if each were durable already)."""
        pending = self.pending
        if pending:
            head = pending[-1]
            version, acting_since = head.row.seq + 1, head.acting_since
        else:
            version, acting_since = self.version, self.acting_since
        current = {"version": str(version)}
        if expected_version > version:
            raise StaleVersion(
                f"expected_version {expected_version} is ahead of the match (version {version})",
                metadata=current,
            )
        since = acting_since.get(seat)
        if expected_version < version and (since is None or expected_version < since[0]):
            raise StaleVersion(
                f"expected_version {expected_version} is stale; the match is at version "
                f"{version}: resync and choose again",
                metadata=current,
            )

    @property
    def head_state(self) -> Any:
        """The state after every pipelined action (the durable state when none is)."""
        pending = self.pending
        return pending[-1].state if pending else self.state

    @property
    def head_version(self) -> int:
        """The version after every pipelined action: the seq of the next action."""
        pending = self.pending
        return pending[-1].row.seq + 1 if pending else self.version

    def pipeline(self, row: ActionRow, state: Any) -> Pipelined:
        """Put ``row`` (applied to the head, giving ``state``) at the head, ahead of its
        durability: the next submit is checked and applied against it. It is recorded
        (:meth:`record`) only once durable, in seq order; until then no view, clock or
        answer shows it."""
        pending = self.pending
        if pending:
            before_state, before_since = pending[-1].state, pending[-1].acting_since
        else:
            before_state, before_since = self.state, self.acting_since
        game = self.game
        before = set(game.to_act(before_state))
        after = game.to_act(state)  # never a final state: those are not pipelined
        version = row.seq + 1
        acting_since = {
            s: (version, row.server_ms)
            if s == row.seat or s not in before or s not in before_since
            else before_since[s]
            for s in after
        }
        entry = Pipelined(row, state, acting_since, asyncio.get_running_loop().create_future())
        if pending is None:
            self.pending = [entry]
        else:
            pending.append(entry)
        return entry

    def pending_request(self, seat: int, request_id: str) -> Pipelined | None:
        """The pipelined action of a seat's request id, if one is on its way."""
        for entry in self.pending or ():
            if entry.row.request_id == request_id and entry.row.seat == seat:
                return entry
        return None

    def settle_pending(self, entry: Pipelined, recorded: bool) -> None:
        """``entry`` left the pipeline: recorded (durable) or not (its append failed)."""
        pending = self.pending
        if pending is not None and entry in pending:
            pending.remove(entry)
            if not pending:
                self.pending = None
        if not entry.done.done():
            entry.done.set_result(recorded)

    async def drained(self) -> None:
        """Wait until no pipelined action is on its way (the lock holder's view of the match
        is then the durable one)."""
        while self.pending:
            await asyncio.shield(self.pending[-1].done)

    # ------------------------------------------------------------------ transitions

    def join(self, joined: SeatJoined) -> None:
        """A seat taken (the runtime starts the match when the last one arrives)."""
        self.joined[joined.seat] = joined
        if joined.request_id:
            self.join_requests[joined.request_id] = joined

    def start(self, now_ms: int) -> None:
        """Deal: the engine's ``new`` with the shuffle key of seed and entropy."""
        rng = Rng(self.shuffle_key)
        state = self.game.new(self.options, self.created.seats, rng, self.presets)
        self.started_ms = now_ms
        self.version = 1
        self._advance(state, actor=None, now_ms=now_ms)

    def record(self, row: ActionRow, state: Any) -> None:
        """An action made durable: the new state, version, request answer and clocks."""
        packed = (row.seq, row.seat, row.request_id, row.action, row.server_ms, row.clock_default)
        self._actions.append(packed)
        first = self._by_request.setdefault(row.request_id, packed)
        if first is not packed:  # another seat used this request id before
            self.requests[(row.seat, row.request_id)] = row
        self.version = row.seq + 1
        autoplayed = row.clock_default and self.forfeited[row.seat]
        self._spend(row)
        if autoplayed:
            pass  # a forfeited seat's default: neither a miss nor an idle period
        elif not row.clock_default:
            self.idle_periods, self._idle_deadline = 0, None
        else:
            # One period per deadline: seats defaulted together at one expiry count once. The
            # deadline is read from the logged request id, so replay counts the same.
            deadline = clock_deadline(row.request_id)
            if deadline is None or deadline != self._idle_deadline:
                self.idle_periods += 1
            self._idle_deadline = deadline
        self._advance(state, actor=row.seat, now_ms=row.server_ms)

    def _spend(self, row: ActionRow) -> None:
        """The time bank and misses of the seat whose decision ``row`` ends."""
        seat = row.seat
        since = self.acting_since.get(seat)
        if since is not None and not self.forfeited[seat]:
            over = row.server_ms - since[1] - self.created.move_clock_ms
            if over > 0:
                self.banks[seat] -= min(over, self.banks[seat])
        if row.clock_default and not self.forfeited[seat]:
            self.misses[seat] += 1
            limit = self.created.max_misses
            if limit and self.misses[seat] >= limit:
                self.forfeited[seat] = True

    def end(self, termination: str) -> None:
        """End the match early: "expired" or "abandoned" (no scores, no ranks, utility 0),
        or "forfeit" (the seat that forfeited ranks last alone with utility -1, the others
        share rank 1 and utility 1 / (seats - 1); every score 0).

        The end is a version of its own (one above the last), so a client that has seen the
        running match at version v learns of the end as v + 1 like any other change, and a
        stream resumed at v gets the final view."""
        self.termination = termination
        seats = self.created.seats
        if termination == "forfeit" and any(self.forfeited):
            loser = self.forfeited.index(True)
            share = 1.0 / (seats - 1) if seats > 1 else 0.0
            self.outcome = Outcome(
                (0,) * seats,
                tuple(seats if s == loser else 1 for s in range(seats)),
                tuple(-1.0 if s == loser else share for s in range(seats)),
                termination,
            )
        else:
            self.outcome = Outcome((), (), (0.0,) * seats, termination)
        self.acting_since = {}
        self.version += 1
        self._keep(self._snapshot())
        self._settle()

    def _advance(self, state: Any, actor: int | None, now_ms: int) -> None:
        before = set(self.to_act())
        self.state = state
        after = self.to_act()
        self.acting_since = {
            seat: (self.version, now_ms)
            if seat == actor or seat not in before or seat not in self.acting_since
            else self.acting_since[seat]
            for seat in after
        }
        self.outcome = self.game.outcome(state)
        if self._replaying:
            return
        self._keep(self._snapshot())
        if self.outcome is not None:
            self._settle()
        elif len(self.history) > CACHED_VERSIONS:
            # Views of older versions go only to a lagging stream: rebuild them if asked.
            self.history[-CACHED_VERSIONS - 1].cache.clear()

    @property
    def actions(self) -> list[ActionRow]:
        """The action rows in log order (built from the packed rows; unpacked again for a
        compacted match)."""
        match_id = self.id
        if not self.compacted:
            return [ActionRow(match_id, *row) for row in self._actions]
        return [
            ActionRow(match_id, seq, seat, request_id, action, server_ms, clock_default)
            for seq, seat, request_id, action, server_ms, clock_default in json.loads(
                zlib.decompress(self._packed)
            )
        ]

    @property
    def action_count(self) -> int:
        """How many actions are recorded (without building their rows while running)."""
        return len(self.actions) if self.compacted else len(self._actions)

    def known_request(self, seat: int, request_id: str) -> ActionRow | None:
        """The stored row of a seat's request id if it is at hand without unpacking (every
        row of a running match; a compacted match's last answer per seat)."""
        stored = self._by_request.get(request_id)
        if stored is not None and stored[1] == seat:
            return ActionRow(self.id, *stored)
        return self.requests.get((seat, request_id))

    def find_request(self, seat: int, request_id: str) -> ActionRow | None:
        """The stored row of a seat's request id, if any (a compacted match unpacks its
        rows for one that is not its seat's last: a rare retry after the end)."""
        stored = self.known_request(seat, request_id)
        if stored is not None or not self.compacted:
            return stored
        return next(
            (r for r in self.actions if r.seat == seat and r.request_id == request_id), None
        )

    def compact(self) -> None:
        """The match is over and its end is stored: keep what a finished match answers
        with, in less memory.

        The action rows (a tuple each, with its own strings) are packed into one
        compressed JSON blob that :attr:`actions` unpacks when a record is asked for, and
        of the request-id answers each seat keeps its last own one (clock defaults played
        for it after it may not hide it): a seat has at most one
        action in flight, so the answer a client most likely asks for after the end is its
        last (the SDK runner asks once more for an action whose answer the end cut off).
        An older request id is still answered with its stored answer, found by unpacking
        the rows (:meth:`find_request`): exactly once holds after the end too.
        With its snapshots gone too (:meth:`_settle`) and, once the transport has kept the
        final views serialised, its state (:meth:`drop_state`), a finished match kept for
        its linger time is mostly these rows, its seats and those views."""
        if self.compacted:
            return
        last: dict[int, PackedRow] = {}
        for packed in self._actions:  # (seq, seat, request_id, action, server_ms, default)
            if not packed[5]:  # nobody retries the server's own clock defaults
                last[packed[1]] = packed
        match_id = self.id
        self.requests = {(p[1], p[2]): ActionRow(match_id, *p) for p in last.values()}
        self._by_request = {}
        # The packed rows as JSON arrays: [seq, seat, request_id, action, server_ms, default].
        text = json.dumps(self._actions, separators=(",", ":"))
        self._packed = zlib.compress(text.encode())
        self._actions = []
        self.compacted = True

    def drop_state(self) -> None:
        """The match is over, compacted, and the transport has kept what its views will
        answer with in the final snapshot's cache (``MatchRuntime.keep_final_views``): let
        go of the engine state.

        The final state with the deal's whole history was half of what a finished match
        holds for its linger time (bench (e)), and nothing after the end needs it: late
        views come from that cache, the record and the request answers from the action rows,
        the summary from the outcome. The final snapshot is replaced by an equal one without
        the state that shares its cache, so a snapshot queued before this renders the same
        bytes. :meth:`final_hash` answers with the stored hash from here on."""
        final = self.history[-1]
        self.history = [replace(final, state=None, cache=final.cache)]
        self.state = None
        self._to_act_of = None

    def _settle(self) -> None:
        """The match is over: keep its final snapshot, not the history of earlier ones.

        A finished match stays in memory for the linger time (so a bot cut off before the
        end still gets its final view), and its 64 snapshots of engine states were most of
        its memory and most of what a full garbage collection walked. The final view
        carries the deal's public history, and a stream resuming from an earlier version
        gets that view marked resync; the record is rebuilt from the action rows."""
        self.history = [self.history[-1]]

    def extend_clocks(self, now_ms: int) -> None:
        """After a restart, give every seat to act a full move clock from now."""
        self.acting_since = {
            seat: (version, max(ms, now_ms)) for seat, (version, ms) in self.acting_since.items()
        }
        # It replaces the snapshot of the same version rather than adding one (a resumed
        # stream would get only the later of the two anyway: see backlog).
        if self.history and self.history[-1].version == self.version:
            self.history.pop()
        self._keep(self._snapshot())

    def _keep(self, snapshot: Snapshot) -> None:
        """Append ``snapshot`` to the history, keeping the newest :data:`HISTORY`."""
        history = self.history
        history.append(snapshot)
        if len(history) > HISTORY:
            del history[0]

    def _snapshot(self) -> Snapshot:
        version = self.version
        return Snapshot(
            version,
            self.status,
            self.state,
            self.to_act(),
            tuple(self.deadlines()),
            self.outcome,
            tuple(self.banks),
            tuple([s for s, (since, _) in self.acting_since.items() if since == version]),
        )

    # ------------------------------------------------------------------ rebuilding

    @classmethod
    def replay(cls, log: MatchLog, game: GameAny) -> Match:
        """The match a log describes: every stored action re-validated by the engine."""
        if log.created.rules_version != game.info.rules_version:
            raise ValueError(
                f"match {log.created.match_id} was played under {game.info.game_id} rules "
                f"version {log.created.rules_version}; this server has version "
                f"{game.info.rules_version}"
            )
        match = cls(log.created, game)
        for joined in log.seats:
            match.join(joined)
        if len(match.joined) == log.created.seats:
            # Snapshots only for the last REPLAY_HISTORY versions: a stream that resumes
            # across a restart has missed a few versions at most and gets them without a
            # gap; an older one gets a resync (the view carries the deal's history).
            # Building a snapshot per logged action was a fifth of recovery.
            last_quiet = len(log.actions) - REPLAY_HISTORY
            match._replaying = last_quiet >= 0
            match.start(max(j.joined_ms for j in log.seats))
            for index, row in enumerate(log.actions):
                if index == last_quiet:
                    match._replaying = False
                    match.history.clear()
                action = game.parse_action(row.action)
                match.record(row, game.apply(match.state, row.seat, action))
        match.finished = log.finished
        if log.finished is not None and log.finished.termination != "normal":
            match.end(log.finished.termination)
        return match

    # ------------------------------------------------------------------ fan-out

    def publish(self) -> None:
        """Send the current snapshot to every subscriber."""
        snapshot = self.current
        for outbox in self.subscribers:
            outbox.push_snapshot(snapshot)

    def backlog(self, since_version: int) -> tuple[list[Snapshot], bool]:
        """Snapshots after ``since_version`` to resume a stream, and whether it is a resync.

        0 asks for a fresh start: the current snapshot. A version that is still kept gives
        every later snapshot, no gap and no duplicate; an older one (or one from the future)
        gives the current snapshot marked resync.
        """
        if since_version <= 0:
            return [self.current], False
        if since_version == self.version:
            return [], False
        kept = [s for s in self.history if s.version > since_version]
        if since_version < self.version and kept and kept[0].version == since_version + 1:
            # Later snapshots of one version (clocks extended after a restart) replace
            # earlier ones.
            latest: dict[int, Snapshot] = {s.version: s for s in kept}
            return list(latest.values()), False
        return [self.current], True
