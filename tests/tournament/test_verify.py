"""``speeltafel verify``: true records from a real server verify; tampered ones do not."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from speeltafel.bots.registry import make_bot
from speeltafel.cli.main import main
from speeltafel.cli.verify import check_record, records_from_bytes
from speeltafel.sdk.client import AsyncClient
from speeltafel.sdk.runner import play_seat
from speeltafel.sdk.v1 import common_pb2, tournament_pb2
from speeltafel.server.engine.registry import GAMES
from speeltafel.server.engine.verify import replay
from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.memory import MemoryStore
from speeltafel.server.wire.common import record_from_proto


async def play_match(client: AsyncClient, game: str, seed: int) -> common_pb2.MatchRecord:
    """A finished match of random bots, every seat with its own entropy; its record."""
    seats = GAMES[game].info.seats_for({})[0]
    created = await client.create_match(game, seats)
    joined = [
        await client.join(created.match_id, seat=i, name=f"bot{i}", entropy=os.urandom(8))
        for i in range(seats)
    ]
    await asyncio.gather(
        *(
            play_seat(client, seat, make_bot("random", seed=seed + seat.seat, game=game))
            for seat in joined
        )
    )
    return await client.record(created.match_id)


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    running = await start_server(MemoryStore())
    try:
        yield running
    finally:
        await running.stop(0)


@pytest.fixture
async def record(server: Running) -> common_pb2.MatchRecord:
    async with AsyncClient(f"127.0.0.1:{server.port}") as client:
        return await play_match(client, "take5", seed=1)


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as exited:
        main(["verify", *args])
    return int(exited.value.code or 0)


async def test_every_games_true_record_verifies(server: Running) -> None:
    async with AsyncClient(f"127.0.0.1:{server.port}") as client:
        for number, game in enumerate(sorted(GAMES)):
            record = await play_match(client, game, seed=10 * number)
            assert record.actions, game
            assert check_record(record) == [], game


def test_a_true_record_file_verifies_as_json_jsonl_and_binary(
    record: common_pb2.MatchRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.json").write_text(json_format.MessageToJson(record))
    (tmp_path / "m.bin").write_bytes(record.SerializeToString())
    exported = tournament_pb2.ExportRecordsResponse(record=record, fixture=3, lineup=["a", "b"])
    line = json_format.MessageToJson(exported, indent=None)
    (tmp_path / "all.jsonl").write_text(f"{line}\n{line}\n")
    for name in ("m.json", "m.bin", "all.jsonl"):
        assert run_cli(str(tmp_path / name)) == 0, name
    out = capsys.readouterr().out
    assert out.count(f"OK   match {record.match_id}") == 4
    assert "FAIL" not in out


@pytest.mark.parametrize("tamper", ["action", "seed", "entropy", "outcome", "hash", "key"])
def test_a_tampered_record_is_rejected(
    record: common_pb2.MatchRecord,
    tamper: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = common_pb2.MatchRecord()
    bad.CopyFrom(record)
    if tamper == "action":
        # A later action of the same seat changed to its first (a card already played):
        # a swap of two cards can end in the same final state; this never replays.
        first = bad.actions[0]
        later = next(
            a for a in bad.actions[1:] if a.seat == first.seat and a.action != first.action
        )
        later.action = first.action
    elif tamper == "seed":
        bad.server_seed = bytes([bad.server_seed[0] ^ 1]) + bad.server_seed[1:]
    elif tamper == "entropy":
        bad.seat_records[0].entropy = b"chosen afterwards"
    elif tamper == "outcome":
        bad.outcome.scores[0] += 1
    elif tamper == "hash":
        bad.final_state_sha256 = "0" * 64
    elif tamper == "key":
        bad.shuffle_key = bytes(32)
    assert check_record(bad), tamper
    path = tmp_path / "bad.json"
    path.write_text(json_format.MessageToJson(bad))
    assert run_cli(str(path)) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"FAIL match {record.match_id}: "), out
    assert len(out.splitlines()) == 1
    expected = {
        "action": "do not replay",
        "seed": "commitment",
        "entropy": "shuffle key",
        "outcome": "stated outcome",
        "hash": "final state",
        "key": "shuffle key",
    }
    if tamper in expected:
        assert expected[tamper] in out


def test_unreadable_input_fails_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "junk.bin").write_bytes(b"\xff\xfe not a record")
    (tmp_path / "junk.json").write_text('{"game": 5}')
    assert run_cli(str(tmp_path / "junk.bin"), str(tmp_path / "junk.json")) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("FAIL") and "junk.bin" in lines[0]
    assert lines[1].startswith("FAIL") and "junk.json" in lines[1]
    assert lines[2] == "0 verified, 2 failed"
    assert run_cli(str(tmp_path / "missing.json")) == 1
    assert "no such file" in capsys.readouterr().out


def test_a_record_of_an_unknown_game_is_refused(record: common_pb2.MatchRecord) -> None:
    other = common_pb2.MatchRecord()
    other.CopyFrom(record)
    other.game = "chess"
    assert check_record(other) == ["this install does not know the game 'chess'"]
    assert records_from_bytes(other.SerializeToString(), "x")[0][1].game == "chess"


async def test_a_match_id_is_fetched_from_the_server(
    server: Running, record: common_pb2.MatchRecord
) -> None:
    target = f"127.0.0.1:{server.port}"
    command = [sys.executable, "-m", "speeltafel.cli", "verify", "--server", target]
    good = await asyncio.create_subprocess_exec(
        *command, record.match_id, "no-such-match", stdout=subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(good.communicate(), 60)
    lines = out.decode().strip().splitlines()
    assert good.returncode == 1  # one of the two is unknown
    assert lines[0].startswith(f"OK   match {record.match_id}: take5")
    assert lines[1].startswith("FAIL match no-such-match: the server answered NOT_FOUND")
    assert lines[2] == "1 verified, 1 failed"


def forfeit_record(record: common_pb2.MatchRecord, actions: int) -> common_pb2.MatchRecord:
    """The record a "lose" forfeit after ``actions`` actions would have: seat 1 missed its
    deadline (a clock default) and was ended last alone."""
    cut = common_pb2.MatchRecord()
    cut.CopyFrom(record)
    del cut.actions[actions:]
    loser_action = next(a for a in cut.actions if a.seat == 1)
    loser_action.clock_default = True
    game = GAMES[cut.game]
    state = replay(record_from_proto(cut))
    cut.final_state_sha256 = hashlib.sha256(game.encode(state)).hexdigest()
    cut.outcome.CopyFrom(
        common_pb2.Outcome(
            scores=[0, 0], ranks=[1, 2], utilities=[1.0, -1.0], termination="forfeit"
        )
    )
    return cut


def test_a_forfeit_record_verifies_by_its_policy(record: common_pb2.MatchRecord) -> None:
    assert record.seats == 2
    forfeit = forfeit_record(record, 4)
    assert check_record(forfeit) == []
    no_miss = common_pb2.MatchRecord()
    no_miss.CopyFrom(forfeit)
    for action in no_miss.actions:
        action.clock_default = False
    assert check_record(no_miss) == ["seat 1 is said to have forfeited but missed no deadline"]
    wrong_shape = common_pb2.MatchRecord()
    wrong_shape.CopyFrom(forfeit)
    wrong_shape.outcome.utilities[:] = [0.0, -1.0]
    assert "one seat last alone" in check_record(wrong_shape)[0]
    finished = forfeit_record(record, len(record.actions))
    assert "finish the match" in check_record(finished)[0]
