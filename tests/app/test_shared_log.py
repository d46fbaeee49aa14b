"""Two server processes over one log: the log decides which move wins (design.md,
"Beyond one machine"). A runtime whose cached state is behind answers ABORTED, replays the
log on its next access, and never loses or doubles a move."""

from __future__ import annotations

from pathlib import Path

import pytest

from speeltafel.server.app.errors import StaleVersion
from speeltafel.server.app.runtime import MatchRuntime, RuntimeConfig
from speeltafel.server.engine.games.take5 import ActionKind, Take5Action
from speeltafel.server.store.sqlite import SqliteStore


async def test_a_stale_runtime_loses_the_race_and_replays(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store_a, store_b = SqliteStore(path), SqliteStore(path)
    a, b = MatchRuntime(store_a), MatchRuntime(store_b)
    try:
        created = (await a.create_match("take5", 2, {})).match
        for seat in range(2):
            await a.join(created.id, seat, f"s{seat}", b"")
        cached_by_b = await b.get(created.id)  # b replays the log: version 1
        assert cached_by_b.version == 1
        hands = cached_by_b.state.hands

        first = Take5Action(ActionKind.SELECT, hands[0][0])
        ack = await a.submit(created.id, 0, 1, "via-a", first)
        assert (ack.seq, ack.version) == (1, 2)

        # b still believes the match is at version 1: its append of seq 1 conflicts.
        other = Take5Action(ActionKind.SELECT, hands[1][0])
        with pytest.raises(StaleVersion) as refused:
            await b.submit(created.id, 1, 1, "via-b", other)
        assert refused.value.rule == "conflict"

        # b's next access replays the log and sees a's move, once.
        fresh = await b.get(created.id)
        assert fresh.version == 2
        assert [(r.seq, r.request_id) for r in fresh.actions] == [(1, "via-a")]
        ack_b = await b.submit(created.id, 1, 2, "via-b", other)
        assert (ack_b.seq, ack_b.version) == (2, 3)
        # And a's repeat of b's request, through a stale a, is a conflict too, not a double.
        with pytest.raises(StaleVersion):
            await a.submit(
                created.id, 1, 2, "via-b-again", Take5Action(ActionKind.SELECT, hands[1][1])
            )
        log = await store_a.load(created.id)
        assert log is not None
        assert [(r.seq, r.seat, r.request_id) for r in log.actions] == [
            (1, 0, "via-a"),
            (2, 1, "via-b"),
        ]
    finally:
        await a.close()
        await b.close()
        await store_a.close()
        await store_b.close()


async def test_a_copy_behind_the_client_catches_up_instead_of_refusing(tmp_path: Path) -> None:
    # A shared log whose appends are not pipelined (as on PostgreSQL): the client saw
    # version 2 on a; b has not followed yet. b replays the log and takes the move, where
    # it used to refuse it as "ahead" and make the client choose again.
    path = tmp_path / "shared.db"
    store_a, store_b = SqliteStore(path), SqliteStore(path)
    serial = RuntimeConfig(pipeline_appends=False)
    a, b = MatchRuntime(store_a, serial), MatchRuntime(store_b, serial)
    try:
        created = (await a.create_match("take5", 2, {})).match
        for seat in range(2):
            await a.join(created.id, seat, f"s{seat}", b"")
        cached_by_b = await b.get(created.id)
        hands = cached_by_b.state.hands
        await a.submit(created.id, 0, 1, "via-a", Take5Action(ActionKind.SELECT, hands[0][0]))
        assert (await a.get(created.id)).version == 2 and cached_by_b.version == 1

        ack = await b.submit(created.id, 1, 2, "via-b", Take5Action(ActionKind.SELECT, hands[1][0]))
        assert (ack.seq, ack.version, ack.duplicate) == (2, 3, False)
        log = await store_b.load(created.id)
        assert log is not None
        assert [(r.seq, r.seat, r.request_id) for r in log.actions] == [
            (1, 0, "via-a"),
            (2, 1, "via-b"),
        ]

        # A version that exists nowhere costs one replay and is refused as before.
        with pytest.raises(StaleVersion, match="ahead"):
            await b.submit(created.id, 0, 9, "nowhere", Take5Action(ActionKind.SELECT, hands[0][1]))
        assert [r.request_id for r in (await b.get(created.id)).actions] == ["via-a", "via-b"]
    finally:
        await a.close()
        await b.close()
        await store_a.close()
        await store_b.close()
