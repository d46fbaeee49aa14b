"""Fairness (G1-G4): one client must not starve or lock out the others.

Each attack runs in its own process (``attacker.py``) against a real server started in
this process; meanwhile an honest client (its own channel, this process) plays Take 5
matches with ListGames, CreateMatch, JoinMatch and GetMatch around each. Pass: no honest
call refused, every honest match finished, and the honest moves/s under attack at least
half of the same client's moves/s measured alone in the same test (the issue's criterion;
no absolute timings). The limits themselves are checked with small caps below.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from attacker import Measurement, honest_run, measure
from google.rpc import error_details_pb2, status_pb2

from speeltafel.cli.server_process import ServerProcess
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.v1 import common_pb2, match_service_pb2
from speeltafel.server.app.errors import BadRequest
from speeltafel.server.rpc.limits import (
    MAX_OPTION_CHARS,
    MAX_PRESET_DECKS,
    Limiter,
    LimitsConfig,
    Refusal,
    check_create_request,
    limits_for_serve,
    peer_ip,
)
from speeltafel.server.rpc.server import start_server
from speeltafel.server.store.memory import MemoryStore

# Throughput ratios measured here: run alone, after the parallel tests (make test).
pytestmark = pytest.mark.serial
WINDOW_S = 2.5
Code = grpc.StatusCode


ATTEMPTS = 2  # a shared 2-core machine is noisy: the better of two measurements counts


async def fairness(table: Any, attack: str, *args: str) -> dict[str, Any]:
    """The server in its own process (SQLite, as deployed), the attacker in another, the
    honest client here: honest alone, then attacked; asserts the issue's criterion (no
    honest call refused, at least half the throughput, p99 under four times)."""
    server = ServerProcess(table.tmp_path / "fairness.db", table.tmp_path, "--log-level", "warning")
    await server.start_async()
    try:
        best: Measurement | None = None
        for _ in range(ATTEMPTS):
            measured = await measure(server.target, attack, WINDOW_S, server.pid, *args)
            assert not measured.refused, (attack, measured.refused, measured.summary)
            assert measured.alone.matches >= 1 and measured.attacked.matches >= 1
            if best is None or measured.ratio > best.ratio:
                best = measured
            if measured.meets_the_bar():
                break
    finally:
        await asyncio.to_thread(server.stop)
    assert best is not None
    figures = (attack, round(best.ratio, 2), round(best.p99_ratio, 2), best.summary)
    assert best.ratio >= 0.5, figures
    assert best.p99_ratio < 4.0, figures
    return best.summary


# --------------------------------------------------------------------------- attacks


async def test_g4_thousands_of_idle_play_streams_on_one_channel(table: Any) -> None:
    summary = await fairness(table, "idle-play", "--streams", "4000")
    # At most 256 are in flight on the attacker's connection (HTTP/2), the rest wait in its
    # own channel; those the server holds are within the per-connection cap.
    assert summary["opened"] == 4000


async def test_g4_thousands_of_spectate_streams(table: Any) -> None:
    summary = await fairness(table, "idle-spectate", "--streams", "4000")
    # At most 256 are in flight on the attacker's connection (HTTP/2), the rest wait in its
    # own channel; those the server holds are within the per-connection cap.
    assert summary["opened"] == 4000


async def test_g4_create_match_flood(table: Any) -> None:
    summary = await fairness(table, "create-flood")
    assert summary["codes"].get("RESOURCE_EXHAUSTED", 0) > 0


async def test_g4_unknown_match_get_match_flood(table: Any) -> None:
    summary = await fairness(table, "getmatch-flood")
    assert summary["codes"].get("NOT_FOUND", 0) > 0


async def test_g4_invalid_submit_flood(table: Any) -> None:
    summary = await fairness(table, "invalid-submit")
    assert summary["codes"].get("INVALID_ARGUMENT", 0) > 0


async def test_g2_two_thousand_concurrent_get_views_of_one_token(table: Any) -> None:
    summary = await fairness(table, "getview-2000")
    assert summary["codes"].get("RESOURCE_EXHAUSTED", 0) > 0


async def test_g4_huge_create_match_requests(table: Any) -> None:
    summary = await fairness(table, "huge-create")
    assert summary["request_bytes"] > 60_000
    assert summary["codes"].get("OK", 0) == 0
    assert summary["codes"].get("INVALID_ARGUMENT", 0) > 0  # refused: nothing was held


# --------------------------------------------------------------------------- the limits


def _details(err: grpc.aio.AioRpcError) -> status_pb2.Status:
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            return status_pb2.Status.FromString(value)
    raise AssertionError("no rich status")


def _rule_and_retry(err: grpc.aio.AioRpcError) -> tuple[str, float | None]:
    rule, retry = "", None
    for detail in _details(err).details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            rule = info.reason
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            delay = error_details_pb2.RetryInfo()
            detail.Unpack(delay)
            retry = delay.retry_delay.ToNanoseconds() / 1e9
    return rule, retry


async def _limited_server(table: Any, limits: LimitsConfig) -> AsyncClient:
    running = await start_server(MemoryStore(), limits=limits)
    table._servers.append(running)
    table._running = running
    return table.connect()


async def _refusal(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if hasattr(call, "read"):
            await call.read()
        else:
            await call
    return caught.value


async def test_g1_streams_count_from_open_and_are_released_however_they_end(
    table: Any,
) -> None:
    client = await _limited_server(table, LimitsConfig(max_streams_per_peer=3))
    created = await client.create_match("take5", 2)
    request = match_service_pb2.SpectateRequest(match_id=created.match_id)
    held = [client.stub.Spectate(request) for _ in range(3)]
    await asyncio.sleep(0.2)
    err = await _refusal(client.stub.Spectate(request))
    assert err.code() == Code.RESOURCE_EXHAUSTED
    assert _rule_and_retry(err)[0] == "too_many_streams"
    # Unary calls are still served while the streams are full.
    assert (await client.get_match(created.match_id)).match_id == created.match_id
    for call in held:
        call.cancel()
    # Cancelled streams free their places; so do streams that end with an error.
    for _ in range(3):
        for _ in range(50):
            failing = client.stub.Spectate(match_service_pb2.SpectateRequest(match_id="nope"))
            err = await _refusal(failing)
            if err.code() == Code.NOT_FOUND:
                break
            await asyncio.sleep(0.02)
        assert err.code() == Code.NOT_FOUND, err
    again = [client.stub.Spectate(request) for _ in range(3)]
    await asyncio.sleep(0.2)
    assert not any(call.done() for call in again)
    for call in again:
        call.cancel()


async def test_g2_rate_limited_answers_carry_retry_info_and_spare_other_tokens(
    table: Any,
) -> None:
    limits = LimitsConfig(unary_rate_per_token=1, unary_burst_per_token=5)
    client = await _limited_server(table, limits)
    created = await client.create_match("take5", 2)
    seats = [await client.join(created.match_id, s) for s in (0, 1)]
    codes = []
    for _ in range(10):
        try:
            await client.get_view(seats[0])
            codes.append(Code.OK)
        except grpc.aio.AioRpcError as err:
            codes.append(err.code())
            assert err.code() == Code.RESOURCE_EXHAUSTED
            rule, retry = _rule_and_retry(err)
            assert rule == "rate_limited" and retry is not None and 0 < retry <= 1.0
    assert codes.count(Code.RESOURCE_EXHAUSTED) >= 2
    # The other seat's token is unaffected.
    assert (await client.get_view(seats[1])).seat == 1


async def test_g3_concurrent_unary_calls_of_one_token_are_capped(table: Any) -> None:
    client = await _limited_server(table, LimitsConfig(max_unary_per_token=4))
    runtime = table.running.runtime
    get = runtime.get

    async def slow_get(match_id: str) -> Any:
        await asyncio.sleep(0.05)  # calls that overlap, as slow handlers do
        return await get(match_id)

    runtime.get = slow_get
    created = await client.create_match("take5", 2)
    seat = await client.join(created.match_id, 0)
    results = await asyncio.gather(
        *(client.get_view(seat) for _ in range(200)), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert all(r.code() == Code.RESOURCE_EXHAUSTED for r in refused)
    assert refused and {_rule_and_retry(r)[0] for r in refused} == {"too_many_calls"}
    assert await client.get_view(seat)


async def test_refusals_of_a_flood_are_held_longer_than_an_honest_clients_one() -> None:
    config = LimitsConfig(
        max_unary_per_token=1, max_park_s=0.05, max_park_escalated_s=0.2, park_escalation_step=4
    )
    limiter = Limiter(config)
    flooder, honest = ("127.0.0.1:1000", "flood"), ("127.0.0.1:2000", "honest")
    leases = [limiter.admit_unary(*who, 1.0) for who in (flooder, honest)]
    assert not any(isinstance(lease, Refusal) for lease in leases)
    holds: list[asyncio.Task[None]] = []
    for n in range(12):
        assert isinstance(limiter.admit_unary(*flooder, 1.0), Refusal)  # over its cap
        assert limiter.park_s(*flooder) == pytest.approx(min(0.2, 0.05 * (1 + n // 4)))
        holds.append(asyncio.ensure_future(limiter.park(*flooder)))
        await asyncio.sleep(0)  # the hold has begun
    # 12 held: the flooder's next refusal waits the longest; a refused honest call does not.
    assert limiter.park_s(*flooder) == pytest.approx(0.2)
    assert isinstance(limiter.admit_unary(*honest, 1.0), Refusal)
    assert limiter.park_s(*honest) == pytest.approx(0.05)
    started = asyncio.get_running_loop().time()
    await limiter.park(*honest)
    assert asyncio.get_running_loop().time() - started < 0.15
    await asyncio.gather(*holds)
    assert limiter.parked == 0 and limiter.park_s(*flooder) == pytest.approx(0.05)
    for lease in leases:
        assert not isinstance(lease, Refusal)
        lease.release()
    assert all(usage.parked == 0 for usage in limiter.tokens.values())


async def test_play_messages_over_the_rate_are_delayed_not_refused(table: Any) -> None:
    limits = LimitsConfig(message_rate_per_token=40, message_burst_per_token=2)
    client = await _limited_server(table, limits)
    seats_before = await honest_run(table.target, 0.0)
    assert not seats_before.refused and seats_before.matches == 1
    # Every move went through; 40 messages/s per seat token bounds the pace.
    assert seats_before.moves_per_s < 2 * 40 * 1.5
    await client.close()


async def test_create_policy_token_needs_the_organiser_token(table: Any) -> None:
    limits = LimitsConfig(create_policy="token", organiser_token="s3cret")
    client = await _limited_server(table, limits)
    for metadata in ((), (("authorization", "Bearer wrong"),)):
        err = await _refusal(
            client.stub.CreateMatch(
                match_service_pb2.CreateMatchRequest(game="take5", seats=2), metadata=metadata
            )
        )
        assert err.code() == Code.UNAUTHENTICATED
        assert _rule_and_retry(err)[0] == "organiser_token_required"
    created = await client.stub.CreateMatch(
        match_service_pb2.CreateMatchRequest(game="take5", seats=2),
        metadata=(("authorization", "Bearer s3cret"),),
    )
    assert created.match_id
    assert await client.list_games()  # other calls need no token


def test_create_policy_defaults_follow_the_bind_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SPEELTAFEL_ORGANISER_TOKEN", raising=False)
    assert limits_for_serve("127.0.0.1", None, None).create_policy == "open"
    assert limits_for_serve("::1", None, None).create_policy == "open"
    with pytest.raises(SystemExit) as refused:
        limits_for_serve("0.0.0.0", None, None)
    assert "--organiser-token" in str(refused.value) and "\n" not in str(refused.value)
    assert limits_for_serve("0.0.0.0", "open", None).create_policy == "open"
    monkeypatch.setenv("SPEELTAFEL_ORGANISER_TOKEN", "t")
    limits = limits_for_serve("0.0.0.0", None, None)
    assert (limits.create_policy, limits.organiser_token) == ("token", "t")
    assert "t'" not in repr(limits)  # the token never appears in a repr


def test_per_ip_limits_skip_loopback_peers() -> None:
    assert peer_ip("ipv4:127.0.0.1:5000") is None
    assert peer_ip("ipv6:[::1]:5000") is None
    assert peer_ip("unix:/tmp/socket") is None
    assert peer_ip("ipv4:10.1.2.3:5000") == "10.1.2.3"
    assert peer_ip("ipv6:[2001:db8::1]:443") == "2001:db8::1"


@pytest.mark.parametrize(
    ("options", "decks", "rule"),
    [
        ({f"o{i}": "1" for i in range(17)}, [], "too_many_options"),
        ({"x" * (MAX_OPTION_CHARS + 1): "1"}, [], "option_too_long"),
        ({"deals": "9" * 10_000}, [], "option_too_long"),
        ({}, [[str(c) for c in range(1, 33)]] * (MAX_PRESET_DECKS + 1), "too_many_preset_decks"),
        ({"edition": "full"}, [[str(c) for c in range(1, 105)]] * 10, "too_many_preset_cards"),
        ({}, [["x" * 1000]], "invalid_options"),
    ],
)
def test_a6_create_requests_are_bounded(
    options: dict[str, str], decks: list[list[str]], rule: str
) -> None:
    request = match_service_pb2.CreateMatchRequest(
        game="take5",
        seats=2,
        options=options,
        preset_decks=[common_pb2.DeckOrder(cards=d) for d in decks],
    )
    with pytest.raises(BadRequest) as caught:
        check_create_request(request)
    assert caught.value.rule == rule
    assert len(caught.value.message) < 120  # never echoes the client's input


async def test_the_sdk_waits_out_a_rate_limit_for_create_and_join(table: Any) -> None:
    """CreateMatch costs 10 units: five creations and ten joins are three times the burst of
    20. The SDK sends a call refused for its rate again after the server's RetryInfo delay
    (same request id), so every one goes through."""
    client = await _limited_server(
        table, LimitsConfig(unary_rate_per_peer=40, unary_burst_per_peer=20)
    )
    for _ in range(5):
        created = await client.create_match("take5", 2)
        seats = [await client.join(created.match_id) for _ in range(2)]
        assert [s.seat for s in seats] == [0, 1]
    assert len(table.running.runtime.matches) == 5
