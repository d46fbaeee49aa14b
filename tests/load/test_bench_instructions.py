"""``scripts/bench_instructions.py``: a decision's cost in instructions counted by
callgrind, read from callgrind's own output format and split by library."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from scripts_import import script  # tests/load is on sys.path

# Two objects, names compressed after their first use, a call whose inclusive cost (the
# line after ``calls=``) belongs to the callee and must not count for the caller.
CALLGRIND = """\
version: 1
creator: callgrind-3.19.0
events: Ir
ob=(1) /usr/lib/libpython3.11.so.1.0
fl=(1) ceval.c
fn=(1) _PyEval_EvalFrameDefault
10 500
+2 250
cob=(2) /opt/venv/grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so
cfi=(2) call.cc
cfn=(2) grpc_call_start_batch
calls=3 40
* 900
ob=(2)
fl=(2)
fn=(2)
40 900
ob=(1)
fn=(1)
12 50
ob=(3) /lib/libz.so.1
fn=(3) crc32
1 7

totals: 1707
"""


def test_self_costs_are_put_in_their_objects_and_calls_are_not_counted_twice() -> None:
    bench = script("bench_instructions")
    costs = bench.self_cost_by_object(CALLGRIND.splitlines())
    assert costs == {
        "/usr/lib/libpython3.11.so.1.0": 800,
        "/opt/venv/grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so": 900,
        "/lib/libz.so.1": 7,
    }
    assert sum(costs.values()) == 1707  # the file's own total
    assert bench.part_of("/usr/lib/libpython3.11.so.1.0") == "python"
    assert bench.part_of("/opt/venv/grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so") == (
        "grpc"
    )
    assert bench.part_of("/lib/libz.so.1") == "other"


def test_a_unit_costs_the_difference_of_two_runs_over_the_difference_of_their_units() -> None:
    bench = script("bench_instructions")
    small = bench.Counted(100, {"python": 1_000_000, "grpc": 500_000})
    large = bench.Counted(300, {"python": 1_400_000, "grpc": 540_000, "other": 20})
    each = bench.per_unit(small, large)
    # Start-up and shut-down are in both runs and cancel out.
    assert each["python"] == pytest.approx(2_000)
    assert each["grpc"] == pytest.approx(200)
    assert each["other"] == pytest.approx(0.1)
    assert each["total"] == pytest.approx(2_200.1)
    with pytest.raises(ValueError):
        bench.per_unit(large, small)


def test_the_parts_of_a_real_callgrind_run_add_up_to_its_total(tmp_path: Path) -> None:
    """Against callgrind's own output: every instruction it collected is in one part."""
    bench = script("bench_instructions")
    out = tmp_path / "run.callgrind"
    program = "sum(i * i for i in range(20_000))"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable]
    done = subprocess.run(
        [*command, "-S", "-c", program],
        capture_output=True,
        text=True,
        check=True,
    )
    collected = re.search(r"Collected : (\d+)", done.stderr)
    assert collected is not None, done.stderr[-500:]
    run = bench.counted(out, 1)
    assert run.total == int(collected.group(1))
    # An interpreter running Python: most of it is the interpreter's own library.
    assert max(run.parts, key=lambda part: run.parts[part]) == "python"
