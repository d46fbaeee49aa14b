"""Recovery at start-up resumes every match it can, and isolates one it cannot."""

from __future__ import annotations

from dataclasses import replace

from structlog.testing import capture_logs

from speeltafel.server.app.runtime import MatchRuntime
from speeltafel.server.engine.games.take5 import GAME
from speeltafel.server.store.memory import MemoryStore


async def test_a_match_logged_under_other_rules_does_not_stop_recovery() -> None:
    store = MemoryStore()
    first = MatchRuntime(store)
    good = (await first.create_match("take5", 2, {})).match
    old = (await first.create_match("take5", 2, {})).match
    for seat in range(2):
        await first.join(good.id, seat, f"g{seat}", b"")
        await first.join(old.id, seat, f"o{seat}", b"")
    await first.close()
    # Pretend the second match was logged under an earlier rules_version.
    store._created[old.id] = replace(
        store._created[old.id], rules_version=GAME.info.rules_version - 1
    )

    second = MatchRuntime(store)
    with capture_logs() as logs:
        resumed = await second.recover()
    await second.close()
    assert resumed == 1
    assert good.id in second.matches and second.matches[good.id].version == 1
    assert old.id not in second.matches
    failures = [e for e in logs if e["event"] == "recovery_failed"]
    assert [e["match_id"] for e in failures] == [old.id]
