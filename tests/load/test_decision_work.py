"""``make bench`` (b)'s split of a decision's server CPU (``scripts/decision_work.py``): the
decision's own work measured in process, and the arithmetic of the split."""

from __future__ import annotations

import pytest
from scripts_import import script  # tests/load is on sys.path


def test_own_work_plays_whole_matches_with_a_view_per_decision() -> None:
    work = script("decision_work").decision_work(0.05)
    assert work.matches >= 1 and work.decisions > 0
    assert work.us_per_decision > 0.0
    # Take 5's sealed selections: each turn, every seat decides once and then every seat
    # gets one view of the next turn (row choices and the final views add a few).
    assert 0.9 <= work.views_per_decision <= 1.3
    # Whole matches: each one begun is played to its end, ten turns of four selections.
    assert work.decisions >= work.matches * 40


def test_the_runtime_plays_whole_matches_in_process() -> None:
    module = script("decision_work")
    work = module.runtime_work(0.05, tables=2)
    # Each table plays the matches it begins to their ends: whole 3-deal matches of four
    # seats, about a hundred decisions each, a view per decision as the bots ask for them.
    assert work.matches >= 2 and work.decisions >= work.matches * 40
    assert 0.9 <= work.views / work.decisions <= 1.3
    assert work.us_per_decision > 0.0


def test_the_split_adds_up_to_the_decision() -> None:
    module = script("decision_work")
    parts = module.breakdown(430.0, 335.0, 98.0, 48.0)
    assert parts.store_us == pytest.approx(95.0)
    assert parts.matches_us is None  # not measured: in the rest
    assert parts.rest_us == pytest.approx(189.0)
    total = parts.transport_us + parts.own_work_us + parts.store_us + parts.rest_us
    assert total == pytest.approx(parts.decision_us)
    # By CPU with the machinery free: the echo's 71 us over 98 + 48 + 95.
    assert module.echo_share_without(parts, 71.0) == pytest.approx(71 / 241)
    # Messages and own work: (98 + 48) / 71 echo messages, more than the 2 of 0.5.
    assert module.floor_in_echo_messages(parts, 71.0) == pytest.approx(146 / 71)


def test_long_matches_take_the_matches_share_out_of_the_rest() -> None:
    module = script("decision_work")
    # A match costs S = 4,500 us: 2 events (begun, ended) of 2,250 us. 0.02 events per
    # decision in the bench's matches (45 us each), 0.002 in long ones (4.5 us).
    long = (335.0 - 45.0 + 4.5, 0.002, 0.02)
    parts = module.breakdown(430.0, 335.0, 98.0, 48.0, long)
    assert parts.matches_us == pytest.approx(45.0)
    assert parts.rest_us == pytest.approx(189.0 - 45.0)
    assert parts.machinery_us == pytest.approx(189.0)
    total = (
        parts.transport_us + parts.own_work_us + parts.store_us + parts.matches_us + parts.rest_us
    )
    assert total == pytest.approx(parts.decision_us)
    # Long windows with no match begun or ended at all: the difference is the whole share.
    parts = module.breakdown(430.0, 335.0, 98.0, 48.0, (335.0 - 45.0, 0.0, 0.02))
    assert parts.matches_us == pytest.approx(45.0)
    # No fewer match events in the long run: nothing to tell them apart by.
    assert module.breakdown(430.0, 335.0, 98.0, 48.0, (300.0, 0.02, 0.02)).matches_us is None
    window = {"count": 1000, "matches_started": 9, "matches_finished": 11}
    assert module.match_events(window) == pytest.approx(0.02)
    assert module.match_events({"count": 0}) is None


def test_the_runtime_in_process_splits_the_machinery() -> None:
    module = script("decision_work")
    long = (335.0 - 45.0 + 4.5, 0.002, 0.02)
    parts = module.breakdown(430.0, 335.0, 98.0, 48.0, long, runtime_us=148.0)
    assert parts.machinery_us == pytest.approx(189.0)
    assert parts.runtime_machinery_us == pytest.approx(100.0)  # 148 less the own work
    assert parts.transport_layers_us == pytest.approx(89.0)
    total = (
        parts.transport_us
        + parts.own_work_us
        + parts.store_us
        + parts.runtime_machinery_us
        + parts.transport_layers_us
    )
    assert total == pytest.approx(parts.decision_us)
    unmeasured = module.breakdown(430.0, 335.0, 98.0, 48.0, long)
    assert unmeasured.runtime_machinery_us is None and unmeasured.transport_layers_us is None


def test_the_bench_reports_the_split_only_when_every_part_was_measured() -> None:
    bench = script("bench_server")
    b = {
        "game": {"server_cpu_us_per_message": 430.0},
        "echo_shaped": {"server_cpu_us_per_message": 98.0},
        "echo_shaped_at_half": {"server_cpu_us_per_message": 160.0},  # (c)'s, not the split's
        "own_work": {"us_per_decision": 48.0},
    }
    assert bench.decision_parts(b) is None  # no memory store run (--store memory, --quick)
    b["memory_game"] = {"server_cpu_us_per_message": 335.0}
    parts = bench.decision_parts(b)
    assert parts is not None and parts.rest_us == pytest.approx(189.0)
    assert parts.matches_us is None
    b["memory_game"].update(count=1000, matches_started=10, matches_finished=10)
    b["memory_game_long"] = {
        "server_cpu_us_per_message": 335.0 - 40.5,
        "count": 1000,
        "matches_started": 1,
        "matches_finished": 1,
    }
    parts = bench.decision_parts(b)
    assert parts is not None and parts.matches_us == pytest.approx(45.0)
    assert parts.rest_us == pytest.approx(144.0)
    assert parts.runtime_machinery_us is None  # the in-process runtime was not measured
    b["runtime_work"] = {"us_per_decision": 148.0}
    parts = bench.decision_parts(b)
    assert parts is not None and parts.runtime_machinery_us == pytest.approx(100.0)
    assert parts.transport_layers_us == pytest.approx(89.0)
    b["memory_game"] = {"server_cpu_us_per_message": None}  # its CPU was not read
    assert bench.decision_parts(b) is None


def test_how_busy_a_share_of_capacity_keeps_the_server() -> None:
    bench = script("bench_server")
    b = {
        "game": {"per_s": 2000.0, "server_cpu_us_per_message": 500.0},  # 1.0 core flat out
        "c_0.5": {"per_s": 1000.0, "server_cpu_us_per_decision": 750.0},  # 0.75 core
    }
    assert bench.cpu_share_at(b, "0.5") == pytest.approx(0.75)
    assert bench.cpu_share_at(b, "0.25") is None  # not run
    b["c_0.25"] = {"per_s": 500.0, "server_cpu_us_per_decision": None}  # CPU not read
    assert bench.cpu_share_at(b, "0.25") is None


def test_pooled_windows_weigh_each_by_its_decisions() -> None:
    bench = script("bench_server")
    windows = [
        {"count": 1000, "seconds": 2.0, "per_s": 500.0, "server_cpu_us_per_message": 400.0},
        {"count": 3000, "seconds": 2.0, "per_s": 1500.0, "server_cpu_us_per_message": 300.0},
    ]
    one = bench.pooled(windows)
    assert one["count"] == 4000 and one["per_s"] == pytest.approx(1000.0)
    assert one["server_cpu_us_per_message"] == pytest.approx(325.0)  # (0.4 s + 0.9 s) / 4000
    windows[1]["server_cpu_us_per_message"] = None  # one window's CPU was not read
    assert bench.pooled(windows)["server_cpu_us_per_message"] is None


def test_a_decision_and_an_echo_exchange_split_into_user_and_kernel_time() -> None:
    bench = script("bench_server")
    game = {"server_cpu_us_per_message": 450.0, "server_sys_share": 0.3}
    shaped = {"server_cpu_us_per_message": 110.0, "server_sys_share": 0.6}
    (game_user, game_kernel), (echo_user, echo_kernel) = bench._user_and_kernel_us(game, shaped)
    assert (game_user, game_kernel) == pytest.approx((315.0, 135.0))
    assert (echo_user, echo_kernel) == pytest.approx((44.0, 66.0))
    # A window without its kernel share (a host without /proc), or no echo: no row.
    assert bench._user_and_kernel_us({"server_cpu_us_per_message": 450.0}, shaped) is None
    assert bench._user_and_kernel_us(game, None) is None
