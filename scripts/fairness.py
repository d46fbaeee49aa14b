"""Fairness figures: an honest Take 5 client alone, then under each attack of the issue.

A server subprocess (SQLite in a temporary folder), the attacker of
``tests/service/attacker.py`` in its own process, and the honest client in this process
(its own channel; 2 seats, 5 deals, bots choosing ``legal_actions[0]``, ListGames /
CreateMatch / JoinMatch / GetMatch around every match, its calls kept under 80% of the
default per-connection rate). For each attack: honest moves/s and view-to-ack
p99 alone, then attacked (once past the attacker's burst), the ratios (the issue asks >= 0.5 for
moves/s and < 4 for p99), and the CPU the attacker
and the server used during the attacked window (from /proc/<pid>/stat, in % of one core).

Usage: ``.venv/bin/python scripts/fairness.py [--seconds 10] [--attacks a,b]``.
Shared machines are noisy: compare the ratio, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "service"))

from attacker import ATTACKS, measure  # type: ignore[import-not-found]  # noqa: E402

from speeltafel.cli.server_process import ServerProcess  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="each window")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    args = parser.parse_args()
    attacks = [a for a in args.attacks.split(",") if a]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "fairness.db", Path(tmp), "--log-level", "warning")
        await server.start_async()
        try:
            for attack in attacks:
                m = await measure(server.target, attack, args.seconds, server.pid)
                rows.append(
                    (
                        attack,
                        f"{m.alone.moves_per_s:.0f}",
                        f"{m.alone.p99_ms:.1f}",
                        f"{m.attacked.moves_per_s:.0f}",
                        f"{m.attacked.p99_ms:.1f}",
                        f"{m.ratio:.2f}",
                        f"{m.p99_ratio:.2f}",
                        str(len(m.refused)),
                        f"{m.summary['calls_per_s']:.0f}",
                        f"{100 * m.attacker_cpu:.0f}%",
                        f"{100 * m.server_cpu:.0f}%",
                    )
                )
                print(f"{attack}: {json.dumps(m.summary)}", file=sys.stderr, flush=True)
                for reason in m.refused:
                    print(f"{attack}: honest call refused: {reason}", file=sys.stderr)
        finally:
            await asyncio.to_thread(server.stop)
    header = (
        "attack", "alone mv/s", "alone p99 ms", "attacked mv/s", "attacked p99 ms", "ratio",
        "p99 ratio", "honest refused", "attacker calls/s", "attacker CPU", "server CPU",
    )  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    asyncio.run(main())
