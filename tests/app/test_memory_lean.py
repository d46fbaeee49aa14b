"""What keeps an idle match small (bench (e)) keeps every behaviour: recovery reads the
store in chunks, loaded rows share strings, the request-id index needs no key tuple per row
and still tells seats apart, and the history is a list trimmed by hand."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from speeltafel.server.app import match as match_module
from speeltafel.server.app import runtime as runtime_module
from speeltafel.server.app.match import Match
from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.engine.games.take5 import GAME
from speeltafel.server.store.base import ActionRow, MatchCreated, SeatJoined
from speeltafel.server.store.sqlite import SqliteStore


async def _played(runtime: MatchRuntime, moves: int, seed: int) -> str:
    """A 2-seat Take 5 match with ``moves`` random actions taken through the runtime."""
    match = (await runtime.create_match("take5", 2, {})).match
    for seat in range(2):
        await runtime.join(match.id, seat, f"p{seat}", b"")
    chooser = random.Random(seed)
    for number in range(moves):
        live = runtime.matches[match.id]
        seat = chooser.choice(live.to_act())
        action = chooser.choice(GAME.legal_actions(live.state, seat))
        await runtime.submit(match.id, seat, live.version, f"r{seed}-{number}", action)
    return match.id


async def test_recovery_in_chunks_resumes_every_match_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chunks.db"
    store = SqliteStore(path)
    first = MatchRuntime(store)
    ids = [await _played(first, 3 + index, index) for index in range(5)]
    before = {i: (first.matches[i].version, first.matches[i].state) for i in ids}
    await first.close()
    await store.close()

    monkeypatch.setattr(runtime_module, "RECOVERY_CHUNK", 2)  # 5 matches: 3 chunks
    store = SqliteStore(path)
    loads: list[list[str]] = []
    load_many = store.load_many

    async def counted(match_ids: list[str]) -> list[object]:
        loads.append(list(match_ids))
        return list(await load_many(match_ids))

    monkeypatch.setattr(store, "load_many", counted)
    second = MatchRuntime(store)
    try:
        await second.start_recovery()
        assert await second.recovered() == 5
        assert [len(chunk) for chunk in loads] == [2, 2, 1]
        assert sorted(m for chunk in loads for m in chunk) == sorted(ids)
        for match_id in ids:
            again = second.matches[match_id]
            assert (again.version, again.state) == before[match_id]
    finally:
        await second.close()
        await store.close()


async def test_load_many_keeps_order_skips_unknown_ids_and_shares_the_id(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "many.db")
    runtime = MatchRuntime(store)
    try:
        ids = [await _played(runtime, 4, index) for index in range(3)]
        wanted = [ids[2], "no-such-match", ids[0]]
        logs = await store.load_many(wanted)
        assert [log.created.match_id for log in logs] == [ids[2], ids[0]]
        for log in logs:
            one = await store.load(log.created.match_id)
            assert one == log
            assert len(log.actions) == 4
            # Every row holds the same id object (not one string per row).
            assert len({id(row.match_id) for row in log.actions}) == 1
            assert len({id(s.match_id) for s in log.seats}) == 1
    finally:
        await runtime.close()
        await store.close()


def _match() -> Match:
    created = MatchCreated(
        match_id="m1",
        game="take5",
        rules_version=GAME.info.rules_version,
        options=tuple(sorted(GAME.info.canonical_options({}).items())),
        seats=2,
        server_seed=b"s" * 32,
        commitment="",
        move_clock_ms=60_000,
        presets=(),
        created_ms=0,
        request_id="",
        token_key=b"k" * 32,
    )
    match = Match(created, GAME)
    for seat in range(2):
        match.join(SeatJoined("m1", seat, f"p{seat}", b"", b"", 0, ""))
    match.start(1_000)
    return match


def _play(match: Match, seat: int, request_id: str) -> ActionRow:
    action = GAME.legal_actions(match.state, seat)[0]
    row = ActionRow("m1", match.version, seat, request_id, GAME.action_text(action), 2_000, False)
    match.record(row, GAME.apply(match.state, seat, action))
    return row


def test_two_seats_with_one_request_id_each_get_their_own_answer() -> None:
    match = _match()
    first = _play(match, 0, "same")
    second = _play(match, 1, "same")  # the other seat happens to use the same id
    assert match.known_request(0, "same") == first
    assert match.known_request(1, "same") == second
    assert match.find_request(1, "same") == second
    assert match.known_request(0, "other") is None
    assert match.find_request(1, "never") is None


def test_history_keeps_the_newest_snapshots_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(match_module, "HISTORY", 3)
    match = _match()
    for number in range(6):
        seat = match.to_act()[0]
        _play(match, seat, f"r{number}")
    assert [s.version for s in match.history] == [5, 6, 7]
    assert match.current.version == match.version == 7
