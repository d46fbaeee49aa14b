"""``scripts/bench_syscalls.py``: a decision's system calls read from ``strace -c``'s table
and put per decision by the difference of two runs."""

from __future__ import annotations

import collections

import pytest
from scripts_import import script  # tests/load is on sys.path

# strace 5.x/6.x ``-c``: the errors column is empty for most rows; the total row counts
# everything and must not count as a call of its own.
SUMMARY = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 77.88    0.153228        1915        80        40 wait4
  3.70    0.007278           5      1372       589 openat
  0.15    0.000300           6        44           futex
  0.12    0.000234           2        93           getpid
  0.00    0.000000           0         6           chdir
------ ----------- ----------- --------- --------- ----------------
100.00    0.196749          21      1595       629 total
"""


def test_the_summary_is_read_by_call_name_without_its_total() -> None:
    calls = script("bench_syscalls").parse_summary(SUMMARY)
    assert calls == {"wait4": 80, "openat": 1372, "futex": 44, "getpid": 93, "chdir": 6}
    assert sum(calls.values()) == 1595  # the table's own total


def test_calls_per_unit_are_the_difference_of_two_runs() -> None:
    bench = script("bench_syscalls")
    small = (10, collections.Counter({"futex": 100, "write": 40, "getpid": 7}))
    large = (30, collections.Counter({"futex": 300, "write": 80, "sendmsg": 20}))
    each = bench.per_unit(small, large)
    assert each["futex"] == 10.0 and each["write"] == 2.0 and each["sendmsg"] == 1.0
    assert each["getpid"] == -7 / 20  # start-up calls the larger run did not repeat
    assert each["total"] == pytest.approx(10.0 + 2.0 + 1.0 - 0.35)
    with pytest.raises(ValueError, match="no more work"):
        bench.per_unit(large, small)
