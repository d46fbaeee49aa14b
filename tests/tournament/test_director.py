"""The director in process: a MemoryStore, the real runtime, bots that play through the lobby
connection's assignments by calling the runtime directly (no gRPC).

Clock-policy tests use the runtime's real timers with short move clocks (40 ms): a silent
bot costs a few hundred milliseconds per match.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig
from speeltafel.server.engine.core import EngineError
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.tournament import formats
from speeltafel.server.tournament.director import Director, TournamentSpec
from speeltafel.server.tournament.formats import Format
from speeltafel.server.tournament.lobby import REPLACED, Assignment, Lobby

GAME = "take5"
OPTIONS = {"edition": "trial", "deals": "1"}


@dataclass
class Table:
    runtime: MatchRuntime
    store: MemoryStore
    lobby: Lobby
    director: Director
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


@pytest.fixture
async def table() -> AsyncIterator[Table]:
    store = MemoryStore()
    runtime = MatchRuntime(store, RuntimeConfig(min_move_clock_ms=20))
    await runtime.recover()
    lobby = Lobby(store, lambda: [g.info.game_id for g in runtime.games()])
    director = Director(runtime, store, lobby)
    await director.start()
    found = Table(runtime, store, lobby, director)
    yield found
    for task in found.tasks:
        task.cancel()
    await asyncio.gather(*found.tasks, return_exceptions=True)
    await director.close()
    await runtime.close()


async def play(table: Table, assignment: Assignment, style: str) -> None:
    """Play one seat: "first" plays the first legal action; "silent" never acts;
    "illegal" first tries a card it does not hold at every decision, then plays."""
    runtime = table.runtime
    match = await runtime.get(assignment.match_id)
    outbox = runtime.subscribe(match, assignment.seat, 0)
    seat = assignment.seat
    try:
        while True:
            update = await outbox.get()
            snapshot = update.snapshot
            if snapshot is None:
                continue
            if snapshot.status == "finished":
                return
            if seat not in snapshot.to_act or style == "silent":
                continue
            game = match.game
            legal = game.legal_actions(snapshot.state, seat)
            if style == "illegal":
                held = {game.action_text(a) for a in legal}
                foreign = [
                    a
                    for other in snapshot.to_act
                    if other != seat
                    for a in game.legal_actions(snapshot.state, other)
                    if game.action_text(a) not in held
                ]
                if foreign:
                    with contextlib.suppress(EngineError):
                        await runtime.submit(
                            match.id, seat, snapshot.version, uuid.uuid4().hex, foreign[0]
                        )
            with contextlib.suppress(Exception):  # stale after another seat's move: next view
                await runtime.submit(match.id, seat, snapshot.version, uuid.uuid4().hex, legal[0])
    finally:
        runtime.unsubscribe(match, outbox)


async def bot(table: Table, name: str, style: str = "first", concurrent: int = 1) -> None:
    """A bot in the lobby: registers, plays every seat it is given."""
    connection = table.lobby.connect(name)
    table.lobby.register(connection, [GAME], concurrent, b"", "test")
    playing: set[asyncio.Task[None]] = set()
    try:
        while True:
            item = await connection.next()
            if item is REPLACED:
                return
            assert isinstance(item, Assignment)
            task = asyncio.ensure_future(play(table, item, style))
            playing.add(task)
            task.add_done_callback(playing.discard)
    finally:
        for task in playing:
            task.cancel()
        table.lobby.disconnect(connection)


async def issue(table: Table, *names: str) -> None:
    for name in names:
        await table.lobby.issue(name, 0)


async def run_to_end(table: Table, spec: TournamentSpec, styles: dict[str, str]) -> str:
    await issue(table, *styles)
    tournament, _ = await table.director.create(spec)
    events = table.director.watch(tournament.id)
    for name, style in styles.items():
        table.tasks.append(asyncio.ensure_future(bot(table, name, style)))
    async with asyncio.timeout(60):
        async for event in events:
            if event.kind == "standings":
                break
    return tournament.id


def spec(format: Format = Format.ROUND_ROBIN, **changes: object) -> TournamentSpec:
    base: dict[str, object] = {
        "name": "test",
        "game": GAME,
        "options": OPTIONS,
        "format": format,
        "participants": ("alice", "bob", "carol"),
        "seats": 2,
        "seed": b"organiser seed",
        "move_clock_ms": 2_000,
    }
    base.update(changes)
    return TournamentSpec(**base)  # type: ignore[arg-type]


async def test_a_round_robin_plays_every_fixture_and_ranks_in_fixture_order(
    table: Table,
) -> None:
    tid = await run_to_end(table, spec(), {"alice": "first", "bob": "first", "carol": "first"})
    tournament = table.director.get(tid)
    assert tournament.row.status == "finished"
    assert sorted(tournament.results) == list(range(6))  # 3 pairs x 2 rotations
    stored = await table.store.results(tid)
    assert [r.fixture for r in stored] == list(range(6))
    for result in stored:
        assert result.termination == "normal"
        assert result.rated
        assert sorted(result.ranks)[0] == 1
        assert result.misses == (0, 0)
        assert result.rejected == (0, 0)
    standings = table.director.standings(tournament)
    assert standings.matches_counted == 6
    assert {row.participant for row in standings.rows} == {"alice", "bob", "carol"}
    assert all(row.matches == 4 for row in standings.rows)
    # Each fixture's match was dealt from the seed derived from the organiser's seed.
    for number, match_id in tournament.matches.items():
        match = await table.runtime.get(match_id)
        assert list(match.joined[s].name for s in range(2)) == list(
            tournament.schedule[number].lineup
        )
        assert f"fixture {number} of tournament {tid}" in match.created.deal
        assert "organiser" in match.created.deal


async def test_the_same_organiser_seed_deals_the_same_cards(table: Table) -> None:
    styles = {"alice": "first", "bob": "first"}
    first = await run_to_end(table, spec(participants=("alice", "bob")), styles)
    second = await run_to_end(table, spec(participants=("alice", "bob"), name="again"), styles)
    other = await run_to_end(
        table, spec(participants=("alice", "bob"), seed=b"another seed", name="other"), styles
    )

    async def keys(tid: str) -> list[bytes]:
        matches = table.director.get(tid).matches
        return [(await table.runtime.get(matches[n])).shuffle_key for n in sorted(matches)]

    assert await keys(first) == await keys(second)
    assert set(await keys(first)).isdisjoint(await keys(other))
    results = [[r.scores for r in await table.store.results(t)] for t in (first, second)]
    assert results[0] == results[1]  # deterministic bots, the same deals: the same games


async def test_a_silent_bot_forfeits_by_the_lose_policy(table: Table) -> None:
    tid = await run_to_end(
        table,
        spec(participants=("alice", "mute"), move_clock_ms=40, max_misses=2, forfeit="lose"),
        {"alice": "first", "mute": "silent"},
    )
    tournament = table.director.get(tid)
    for result in await table.store.results(tid):
        mute = tournament.schedule[result.fixture].lineup.index("mute")
        assert result.termination == "forfeit"
        assert result.forfeited[mute]
        assert result.misses[mute] == 2
        assert result.ranks[mute] == 2 and result.ranks[1 - mute] == 1
        assert result.utilities[mute] == -1.0
        assert result.rated
    rows = {row.participant: row for row in table.director.standings(tournament).rows}
    assert rows["mute"].forfeits == 2
    assert rows["mute"].misses == 4
    assert rows["alice"].place == 1


async def test_a_silent_bot_is_autoplayed_after_its_misses(table: Table) -> None:
    tid = await run_to_end(
        table,
        spec(participants=("alice", "mute"), move_clock_ms=40, max_misses=3, forfeit="autoplay"),
        {"alice": "first", "mute": "silent"},
    )
    tournament = table.director.get(tid)
    for result in await table.store.results(tid):
        mute = tournament.schedule[result.fixture].lineup.index("mute")
        assert result.termination == "normal"  # played to its end by default moves
        assert result.forfeited[mute]
        assert result.misses[mute] == 3  # the autoplayed moves after the forfeit are not misses
        match = await table.runtime.get(result.match_id)
        defaults = [row for row in match.actions if row.clock_default and row.seat == mute]
        assert len(defaults) > 3


async def test_a_time_bank_absorbs_slow_moves(table: Table) -> None:
    # 40 ms per move and a 10 s bank: a silent seat's first deadline is 10.04 s away.
    await issue(table, "alice", "mute")
    tournament, _ = await table.director.create(
        spec(participants=("alice", "mute"), move_clock_ms=40, time_bank_ms=10_000)
    )
    events = table.director.watch(tournament.id)
    table.tasks.append(asyncio.ensure_future(bot(table, "alice")))
    table.tasks.append(asyncio.ensure_future(bot(table, "mute", "silent")))
    async with asyncio.timeout(10):
        async for event in events:
            if event.kind == "started":
                break
    match = await table.runtime.get(tournament.matches[0])
    await asyncio.sleep(0.3)
    mute = tournament.schedule[0].lineup.index("mute")
    assert mute in match.to_act()
    since = match.acting_since[mute][1]
    assert match.deadline(mute) == since + 40 + 10_000
    assert match.misses[mute] == 0
    assert match.current.banks[mute] == 10_000
    await table.director.cancel(tournament.id)


async def test_refused_moves_are_counted_per_seat(table: Table) -> None:
    tid = await run_to_end(
        table, spec(participants=("alice", "cheat")), {"alice": "first", "cheat": "illegal"}
    )
    tournament = table.director.get(tid)
    for result in await table.store.results(tid):
        cheat = tournament.schedule[result.fixture].lineup.index("cheat")
        assert result.rejected[cheat] > 0
        assert result.rejected[1 - cheat] == 0
    rows = {row.participant: row for row in table.director.standings(tournament).rows}
    assert rows["cheat"].rejected > 0
    assert rows["alice"].rejected == 0


async def test_a_duplicate_set_shares_its_deal_and_is_sealed_until_it_ends(
    table: Table,
) -> None:
    sealed_at_end: dict[str, bool] = {}

    def probe(match: Match) -> None:
        sealed_at_end.setdefault(match.id, table.director.sealed(match))

    table.runtime.finish_listeners.append(probe)
    tid = await run_to_end(
        table,
        spec(Format.DUPLICATE, participants=("alice", "bob", "carol")),
        {"alice": "first", "bob": "first", "carol": "first"},
    )
    tournament = table.director.get(tid)
    by_set: dict[int, list[bytes]] = {}
    for fixture in tournament.schedule:
        match = await table.runtime.get(tournament.matches[fixture.number])
        by_set.setdefault(fixture.duplicate_set, []).append(match.shuffle_key)
        assert f"duplicate set {fixture.duplicate_set} of tournament {tid}" in match.created.deal
        assert not table.director.sealed(match)  # every set has ended
    assert sorted(by_set) == [1, 2, 3]
    for keys in by_set.values():
        assert len(keys) == 2 and keys[0] == keys[1]
    assert len({keys[0] for keys in by_set.values()}) == 3
    # While a set ran, its matches were sealed (checked as each match ended).
    assert sealed_at_end and all(sealed_at_end.values())


async def test_bad_tournaments_are_refused_and_change_nothing(table: Table) -> None:
    from speeltafel.server.app.errors import AppError
    from speeltafel.server.engine.core import InvalidOptions

    await issue(table, "alice", "bob")
    bad = [
        spec(participants=("alice", "nobody")),
        spec(participants=("alice", "alice")),
        spec(participants=("alice",)),
        spec(game="no_such_game"),
        spec(options={"deals": "0"}),
        spec(seats=11),
        spec(move_clock_ms=1),
        spec(seed=b"x" * 65),
        spec(Format.DUPLICATE, participants=("alice", "bob"), max_matches=1),
    ]
    for wrong in bad:
        with pytest.raises((AppError, InvalidOptions)):
            await table.director.create(wrong)
    assert await table.store.tournaments() == []
    assert table.director.tournaments == {}


async def test_the_same_request_id_returns_the_first_tournament(table: Table) -> None:
    from speeltafel.server.app.errors import RequestIdReused

    await issue(table, "alice", "bob", "carol")
    first, duplicate = await table.director.create(spec(request_id="r1"))
    again, duplicate_again = await table.director.create(spec(request_id="r1"))
    assert not duplicate and duplicate_again and again is first
    with pytest.raises(RequestIdReused):
        await table.director.create(spec(request_id="r1", rounds=2))


class _ShufflingTake5:
    """Take 5 with a ``shuffle_between_deals`` option (as Kleurenwiezen has), for the
    director's duplicate rule; the option itself changes nothing here."""

    def __init__(self) -> None:
        from speeltafel.server.engine.core import OptionKind, OptionSpec
        from speeltafel.server.engine.registry import GAMES

        self._game = GAMES["take5"]
        extra = OptionSpec(formats.SHUFFLE_OPTION, OptionKind.BOOL, "false", "test")
        self.info = replace(self._game.info, options=(*self._game.info.options, extra))

    def new(self, options: Any, seats: int, rng: Any, presets: Any) -> Any:
        plain = {k: v for k, v in options.items() if k != formats.SHUFFLE_OPTION}
        return self._game.new(plain, seats, rng, presets)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)


async def test_duplicate_tournaments_turn_shuffling_between_deals_on() -> None:
    store = MemoryStore()
    runtime = MatchRuntime(store, games={"take5": _ShufflingTake5()})  # type: ignore[dict-item]
    lobby = Lobby(store, lambda: ["take5"])
    director = Director(runtime, store, lobby)
    for name in ("alice", "bob"):
        await lobby.issue(name, 0)
    given = {formats.SHUFFLE_OPTION: "false", **OPTIONS}
    duplicate, _ = await director.create(
        spec(Format.DUPLICATE, participants=("alice", "bob"), options=given)
    )
    plain, _ = await director.create(spec(participants=("alice", "bob"), options=given))
    assert dict(duplicate.row.options)[formats.SHUFFLE_OPTION] == "true"
    assert dict(plain.row.options)[formats.SHUFFLE_OPTION] == "false"
    await director.close()
    await runtime.close()
