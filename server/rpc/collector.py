"""The garbage collector of a long-lived server: frozen start-up, fewer young collections,
and every collection's pause measured.

CPython's cyclic collector stops the event loop for as long as a collection takes, and a
full (generation 2) collection walks every tracked object in the process. A server holding
thousands of matches has millions of them, so one full collection used to stop every
stream for hundreds of milliseconds (issue 12 measured 0.46 s). Three things keep pauses
small and rare:

* :func:`tune_for_server` after start-up and recovery: ``gc.freeze()`` moves everything
  alive then (modules, the engines' tables, the recovered matches) into the permanent
  generation, which no collection walks again;
* thresholds for a server rather than a script: a young collection every 1,000 net
  allocations (CPython's default is 700), a middle one every 10 young ones, and a full
  collection only after 4,000 middle ones, 40 million net allocations. CPython also runs
  a full collection only once the objects that survived since the last one reach a
  quarter of those it already holds, so a full collection stays rare. The young
  threshold is kept small because it does not bound a young collection: the collection
  walks every object allocated since the last one that is still alive, and every older
  object freed in between takes one off the count (a match that moves on or finishes frees
  hundreds). With 20,000 the young list held 30,000-37,000 objects whenever a collection
  ran, and each paused the loop for 10-31 ms on a two-core host; with 1,000 the longest
  pause was under 10 ms, at about five collections a second and under 1% of the CPU
  (docs/performance-rounds.md, round 7);
* memory that is let go: a finished match keeps its final snapshot, not its history
  (``app/match.py``), so survivors are few.

:class:`PauseWatch` times every collection through ``gc.callbacks`` (a few hundred
nanoseconds each) and the server logs the largest pause per generation at shutdown; a
single pause over :data:`LONG_PAUSE_S` is logged when it happens.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any

import structlog

log = structlog.get_logger("speeltafel.collector")

THRESHOLDS = (1_000, 10, 4_000)
"""``gc.set_threshold`` for a long-lived server (see the module docstring)."""
LONG_PAUSE_S = 0.020
"""A collection pausing the loop longer than this is logged when it happens (the budget of
``make bench`` (g))."""


def tune_for_server() -> int:
    """Freeze what is alive and set the server's thresholds; returns how many objects are
    frozen. Call after start-up and recovery (again after a later bulk load: each call
    freezes what was added since).

    No ``gc.collect()`` first: with 10,000 recovered matches it would itself be a pause of
    a few hundred milliseconds while the server already answers calls. The price is that
    cyclic garbage alive at this moment (start-up leftovers, a few KB) is frozen with the
    rest and never freed."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    return gc.get_freeze_count()


@dataclass
class PauseWatch:
    """Times every garbage collection of this process while installed."""

    collections: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Collections per generation."""
    max_pause_s: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    """The longest pause per generation."""
    total_pause_s: float = 0.0
    _started: float = 0.0
    _installed: bool = False

    def install(self) -> PauseWatch:
        """Start timing (idempotent)."""
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True
        return self

    def remove(self) -> None:
        """Stop timing."""
        if self._installed:
            gc.callbacks.remove(self._callback)
            self._installed = False

    @property
    def max_pause_ms(self) -> float:
        """The longest pause of any generation, ms."""
        return 1e3 * max(self.max_pause_s)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        pause = time.perf_counter() - self._started
        generation = min(2, int(info.get("generation", 2)))
        self.collections[generation] += 1
        self.total_pause_s += pause
        if pause > self.max_pause_s[generation]:
            self.max_pause_s[generation] = pause
        if pause > LONG_PAUSE_S:
            # Logged after the pause: logging inside a collection allocates, but only once
            # it is over, so this never extends the pause it reports.
            log.warning(
                "gc_pause_long",
                generation=generation,
                pause_ms=round(1e3 * pause, 2),
                collected=info.get("collected", 0),
            )

    def summary(self) -> dict[str, Any]:
        """What the server logs at shutdown."""
        return {
            "collections": list(self.collections),
            "max_pause_ms": [round(1e3 * p, 3) for p in self.max_pause_s],
            "largest_pause_ms": round(self.max_pause_ms, 3),
            "total_pause_ms": round(1e3 * self.total_pause_s, 1),
            "frozen": gc.get_freeze_count(),
            "thresholds": list(gc.get_threshold()),
        }
