"""``make bench`` (b)'s split of a decision's server CPU (``scripts/decision_work.py``): the
decision's own work measured in process, and the arithmetic of the split."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module(name: str) -> ModuleType:
    scripts = str(ROOT / "scripts")
    if scripts not in sys.path:  # the scripts import each other as plain modules
        sys.path.insert(0, scripts)
    return importlib.import_module(name)


def test_own_work_plays_whole_matches_with_a_view_per_decision() -> None:
    work = _module("decision_work").decision_work(0.05)
    assert work.matches >= 1 and work.decisions > 0
    assert work.us_per_decision > 0.0
    # Take 5's sealed selections: each turn, every seat decides once and then every seat
    # gets one view of the next turn (row choices and the final views add a few).
    assert 0.9 <= work.views_per_decision <= 1.3
    # Whole matches: each one begun is played to its end, ten turns of four selections.
    assert work.decisions >= work.matches * 40


def test_the_split_adds_up_to_the_decision() -> None:
    module = _module("decision_work")
    parts = module.breakdown(430.0, 335.0, 98.0, 48.0)
    assert parts.store_us == pytest.approx(95.0)
    assert parts.rest_us == pytest.approx(189.0)
    total = parts.transport_us + parts.own_work_us + parts.store_us + parts.rest_us
    assert total == pytest.approx(parts.decision_us)
    # By CPU with the rest free: the echo's 71 us over 98 + 48 + 95.
    assert module.echo_share_without(parts, 71.0, rest_us=0.0) == pytest.approx(71 / 241)
    assert module.echo_share_without(parts, 71.0, rest_us=parts.rest_us) == pytest.approx(71 / 430)
    # Messages and own work: (98 + 48) / 71 echo messages, more than the 2 of 0.5.
    assert module.floor_in_echo_messages(parts, 71.0) == pytest.approx(146 / 71)


def test_the_bench_reports_the_split_only_when_every_part_was_measured() -> None:
    bench = _module("bench_server")
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
    b["memory_game"] = {"server_cpu_us_per_message": None}  # its CPU was not read
    assert bench.decision_parts(b) is None


def test_how_busy_a_share_of_capacity_keeps_the_server() -> None:
    bench = _module("bench_server")
    b = {
        "game": {"per_s": 2000.0, "server_cpu_us_per_message": 500.0},  # 1.0 core flat out
        "c_0.5": {"per_s": 1000.0, "server_cpu_us_per_decision": 750.0},  # 0.75 core
    }
    assert bench.cpu_share_at(b, "0.5") == pytest.approx(0.75)
    assert bench.cpu_share_at(b, "0.25") is None  # not run
    b["c_0.25"] = {"per_s": 500.0, "server_cpu_us_per_decision": None}  # CPU not read
    assert bench.cpu_share_at(b, "0.25") is None
