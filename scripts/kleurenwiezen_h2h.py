"""Kleurenwiezen head-to-head: one candidate bot against three baseline bots, the candidate's
seat rotated over the four seats, for the figures of issue 10.

Two ways to play a match:

* ``--server``: through a real server process (SQLite in a temporary folder), every seat a
  built-in bot playing over the SDK's stream (``play_seat``), as ``speeltafel run`` does;
* otherwise in-process: the engine drives, every bot answers the view the server's own wire
  code builds for its seat (the same bytes a server would send), much faster.

``--samples N`` runs the search bot with N sampled worlds per decision and no time limit
(deterministic, and independent of the machine's load); without it the search bot is the
registered one (its time budget).

``--tune field=value`` (repeatable) overrides a field of the search bot's Kleurenwiezen
:class:`~speeltafel.bots.search_bot.Tuning` for this run (in-process and through a server:
the bots run in this process either way), for trying settings before changing the table:
``--tune explore=0 --tune search_phases=play,discard`` (a set is comma-separated, "" all).

``--duplicate`` deals every deal of match n from preset packs (``preset_decks`` through a
server; shuffled from the match's number, :func:`packs`) and plays each match twice: with
the candidate in its seat and with the baseline there too. Without it the first deal
of the two is the same (the same engine seed in-process) but later deals are not: the
pack is gathered from the play, so one different card deals the next deal differently.

Prints the candidate's mean utility (zero-sum, in [-1, 1]; 0 is par) and its mean point
margin per match (its points minus the mean of the three others'), each with a 95%
interval (normal approximation, 1.96 standard errors). In-process, and through a server
with ``--duplicate``, it also prints both *paired*: minus what the baseline bot itself
scores in the candidate's seat of the same deals (the all-baseline match). The luck of the
cards cancels out and the interval is narrower; the mean estimates the same gain (an
all-baseline seat averages about 0 over rotated seats). Through a server without
``--duplicate`` the deals are the server's, so there is no pairing.

``--records FILE`` appends each match's figures as a JSON line, so that a run can be split
over processes (``--first``, ``--matches``) and summed up by ``--summarize FILE...``.

Usage: ``.venv/bin/python scripts/kleurenwiezen_h2h.py wiezer random --matches 200``. The
search bot's measurement of issue 10 (``search_bot.TUNING``), through servers, in two
halves that run side by side::

    for first in 0 100; do
      .venv/bin/python scripts/kleurenwiezen_h2h.py search wiezer --server --duplicate \\
        --samples 8 --matches 100 --first $first --records h2h-$first.jsonl &
    done; wait
    .venv/bin/python scripts/kleurenwiezen_h2h.py --summarize h2h-0.jsonl h2h-100.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from speeltafel.bots.registry import heuristic_for, make_bot, solver_for
from speeltafel.bots.search_bot import TUNING, SearchBot, Tuning
from speeltafel.sdk.runner import Bot
from speeltafel.sdk.v1 import common_pb2
from speeltafel.server.engine.core import Outcome, Rng
from speeltafel.server.engine.games.kleurenwiezen import ALL_CARDS, GAME
from speeltafel.server.wire.common import build_view
from speeltafel.server.wire.kleurenwiezen import WIRE

SEATS = 4


def _bot(name: str, seed: int, samples: int | None) -> Bot:
    if name == "search" and samples is not None:
        return SearchBot(
            seed, heuristics=heuristic_for, solvers=solver_for, samples=samples, budget_ms=None
        )
    return make_bot(name, seed, "kleurenwiezen")


def packs(seed: int, deals: int) -> list[list[str]]:
    """``--duplicate``: match ``seed``'s preset packs, one shuffled order of the 52 cards for
    every deal."""
    chooser = random.Random(f"h2h packs {seed}")
    return [chooser.sample(ALL_CARDS, len(ALL_CARDS)) for _ in range(deals)]


def in_process(
    lineup: Sequence[str],
    seed: int,
    deals: int,
    samples: int | None,
    presets: Sequence[Sequence[str]] = (),
) -> Outcome:
    """One match driven by the engine; each bot answers its seat's view."""
    bots = [_bot(name, seed * 10 + s, samples) for s, name in enumerate(lineup)]
    state = GAME.new({"deals": str(deals)}, len(lineup), Rng(b"h2h %d" % seed), {"pack": presets})
    version = 1
    while (outcome := GAME.outcome(state)) is None:
        seat = GAME.to_act(state)[0]
        view = build_view(
            WIRE,
            match_id="m",
            seat=seat,
            version=version,
            status="running",
            seats=len(lineup),
            commitment="c",
            observation=GAME.observe(state, seat),
            to_act=GAME.to_act(state),
            legal_actions=GAME.legal_actions(state, seat),
            move_clock_ms=0,
            deadline_ms=0,
            now_ms=0,
            outcome=None,
        )
        chosen = bots[seat].choose(view, list(view.legal_actions))
        assert isinstance(chosen, common_pb2.Action), "these bots answer at once"
        state = GAME.apply(state, seat, WIRE.action_from_proto(chosen))
        version += 1
    return outcome


async def through_server(
    target: str,
    lineup: Sequence[str],
    seed: int,
    deals: int,
    samples: int | None,
    presets: Sequence[Sequence[str]] = (),
) -> Outcome:
    """One match on the server at ``target``, every seat a bot over the SDK; ``presets``:
    the server deals these packs (``preset_decks``) instead of its own."""
    from speeltafel.sdk import AsyncClient, play_seat

    async with AsyncClient(target) as client:
        created = await client.create_match(
            "kleurenwiezen",
            len(lineup),
            {"deals": str(deals)},
            preset_decks={"pack": presets} if presets else None,
        )
        joined = [await client.join(created.match_id, name=f"s{i}") for i in range(len(lineup))]
        bots = [_bot(name, seed * 10 + s, samples) for s, name in enumerate(lineup)]
        finals = await asyncio.gather(
            *(play_seat(client, s, b) for s, b in zip(joined, bots, strict=True))
        )
        final = finals[0].outcome
        return Outcome(
            tuple(final.scores), tuple(final.ranks), tuple(final.utilities), final.termination
        )


def tuned(base: Tuning, overrides: Sequence[str]) -> Tuning:
    """``base`` with the ``field=value`` overrides applied (values parsed by the field's
    type: a number, a bool as true/false, a set of strings comma-separated)."""
    fields = {f.name: f for f in dataclasses.fields(Tuning)}
    changes: dict[str, object] = {}
    for item in overrides:
        name, _, text = item.partition("=")
        if name not in fields:
            raise SystemExit(f"--tune: no Tuning field {name!r} (fields: {', '.join(fields)})")
        current = getattr(base, name)
        value: object
        if isinstance(current, frozenset):
            value = frozenset(p for p in text.split(",") if p)
        elif isinstance(current, bool):
            value = text.lower() in ("1", "true", "yes")
        elif text.lower() == "none":
            value = None
        elif name == "horizon" or isinstance(current, int):
            value = int(text)
        else:
            value = float(text)
        changes[name] = value
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def margin(outcome: Outcome, seat: int) -> float:
    """The seat's points minus the mean of the others' points."""
    others = [p for s, p in enumerate(outcome.scores) if s != seat]
    return outcome.scores[seat] - sum(others) / len(others)


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(variance / n)


def summary(records: Sequence[dict[str, Any]], label: str) -> str:
    """The figures of ``records`` (one per match, as ``--records`` writes them)."""
    utilities = [r["utility"] for r in records]
    u, hu = interval(utilities)
    m, hm = interval([r["margin"] for r in records])
    wins = sum(1 for x in utilities if x > 0)
    text = (
        f"{label}, {len(records)} matches: utility {u:+.3f} ± {hu:.3f}, point margin "
        f"{m:+.1f} ± {hm:.1f}, best or shared best in {wins}/{len(records)}"
    )
    paired = [r for r in records if "paired" in r]
    if paired:
        p, hp = interval([r["paired"] for r in paired])
        pm, hpm = interval([r["paired_margin"] for r in paired])
        text += (
            f"\npaired with the baseline in the same seat of the same deals: utility "
            f"{p:+.3f} ± {hp:.3f}, point margin {pm:+.1f} ± {hpm:.1f}"
        )
    return text


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("candidate", nargs="?", default="search")
    parser.add_argument("baseline", nargs="?", default="wiezer")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--deals", type=int, default=4, help="deals per match (4: each deals once)")
    parser.add_argument("--samples", type=int, default=None, help="search: worlds, no time limit")
    parser.add_argument("--server", action="store_true", help="play through a server process")
    parser.add_argument("--first", type=int, default=0, help="the first match's seed")
    parser.add_argument("--tune", action="append", default=[], help="field=value (search)")
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="every deal from preset packs, each match played twice (paired)",
    )
    parser.add_argument("--records", type=Path, help="append every match's figures (JSON lines)")
    parser.add_argument(
        "--summarize", type=Path, nargs="+", help="only print the figures of records files"
    )
    args = parser.parse_args()
    if args.summarize:
        records = [
            json.loads(line) for path in args.summarize for line in path.read_text().splitlines()
        ]
        numbers = [r["match"] for r in records]
        if len(set(numbers)) != len(numbers):
            raise SystemExit("--summarize: a match is in the records twice")
        print(summary(records, f"{args.candidate} (1 seat, rotated) vs {args.baseline}"))
        return
    if args.tune:
        TUNING["kleurenwiezen"] = tuned(TUNING["kleurenwiezen"], args.tune)
        print(f"tuning: {TUNING['kleurenwiezen']}", file=sys.stderr)

    records = []
    started = time.perf_counter()
    server = None
    if args.server:
        from speeltafel.cli.server_process import ServerProcess

        folder = tempfile.TemporaryDirectory()
        server = ServerProcess(
            Path(folder.name) / "h2h.db", Path(folder.name), "--log-level", "warning"
        )
        await server.start_async()
    try:
        for number in range(args.first, args.first + args.matches):
            seat = number % SEATS
            lineup = [args.baseline] * SEATS
            lineup[seat] = args.candidate
            presets = packs(number, args.deals) if args.duplicate else []
            par: Outcome | None = None
            if server is not None:
                outcome = await through_server(
                    server.target, lineup, number, args.deals, args.samples, presets
                )
                if presets:  # the same packs with the baseline in the candidate's seat too
                    par = await through_server(
                        server.target, [args.baseline] * SEATS, number, args.deals, None, presets
                    )
            else:
                outcome = in_process(lineup, number, args.deals, args.samples, presets)
                # The same deals with the baseline in the candidate's seat too.
                par = in_process([args.baseline] * SEATS, number, args.deals, None, presets)
            record: dict[str, Any] = {
                "match": number,
                "seat": seat,
                "utility": outcome.utilities[seat],
                "margin": margin(outcome, seat),
                "scores": list(outcome.scores),
            }
            if par is not None:
                record["paired"] = outcome.utilities[seat] - par.utilities[seat]
                record["paired_margin"] = margin(outcome, seat) - margin(par, seat)
            records.append(record)
            if args.records is not None:
                with args.records.open("a") as out:
                    out.write(json.dumps(record) + "\n")
            if len(records) % 10 == 0:
                figures = summary(records, f"{time.perf_counter() - started:.0f} s")
                print(figures.replace("\n", "; "), file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.stop()
    mode = ("server" if args.server else "in-process") + (", duplicate" if args.duplicate else "")
    print(
        summary(
            records,
            f"{args.candidate} (1 seat, rotated) vs {args.baseline} (3 seats), matches of "
            f"{args.deals} deals, {mode}, {time.perf_counter() - started:.0f} s",
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
