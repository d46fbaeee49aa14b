"""``make bench`` (c)'s diagnosis of its tail: the host's disk probed beside the server, and
each slow ack put down to a disk stall, a match's setup, or neither
(``scripts/bench_server.py``: :func:`disk_probe`, :func:`tail_attribution`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from scripts_import import script  # tests/load is on sys.path


def test_each_slow_ack_is_put_down_to_a_stall_a_setup_or_neither() -> None:
    bench = script("bench_server")
    timed = [(0.000, 0.0003), (0.020, 0.080), (0.100, 0.0002)]  # one stall: 20-100 ms
    setups = [(1.000, 1.010)]
    spans = [
        (0.050, 0.090),  # slow, through the stall
        (0.010, 0.030),  # slow, its end inside the stall
        (1.005, 1.012),  # slow, overlapping the setup
        (2.000, 2.010),  # slow, neither
        (3.000, 3.001),  # quick
        (1.002, 1.003),  # quick, inside the setup
    ]
    found = bench.tail_attribution(timed, spans, setups)
    assert found["fdatasyncs"] == 3
    assert found["stalls"] == 1
    assert round(found["stalled_ms"]) == 80
    assert round(found["max_ms"]) == 80
    assert found["slow_acks"] == 4
    assert found["slow_acks_in_stalls"] == 2
    assert found["slow_acks_in_setups"] == 1
    assert found["slow_acks_in_neither"] == 1
    assert found["acks"] == 6
    assert found["acks_in_setups"] == 2
    # Clear of both: the 10 ms ack that overlapped neither and the 1 ms one.
    assert found["acks_clear"] == 2
    assert round(found["p99_ms_clear"]) == 10


def test_a_span_that_only_touches_a_stall_is_not_in_it() -> None:
    bench = script("bench_server")
    assert not bench.overlaps((0.0, 1.0), [(1.0, 2.0)])
    assert not bench.overlaps((2.0, 3.0), [(1.0, 2.0)])
    assert bench.overlaps((0.5, 1.5), [(1.0, 2.0)])
    assert bench.overlaps((1.2, 1.3), [(0.0, 5.0), (1.0, 2.0)])


def test_the_disk_probe_times_fdatasyncs_inside_its_window_and_cleans_up(
    tmp_path: Path,
) -> None:
    bench = script("bench_server")
    window = bench.Window.after(0.1, 0.4)
    timed = asyncio.run(bench.disk_probe(tmp_path, window))
    assert len(timed) >= 5  # one every 20 ms, unless the disk stalled for most of it
    for start, took in timed:
        assert window.start - 0.01 <= start < window.end
        assert took > 0
    assert time.perf_counter() >= window.end
    assert list(tmp_path.iterdir()) == []  # the probe's file is gone
