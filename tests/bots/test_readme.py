"""The README's bot example runs as written (against a test server's address)."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from speeltafel.server.rpc.server import Running, start_server
from speeltafel.server.store.memory import MemoryStore

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    server = await start_server(MemoryStore())
    try:
        yield server
    finally:
        await server.stop(0.2)


async def test_readme_bot_example_plays_a_match(running: Running) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    (example,) = [b for b in blocks if "play_seat" in b]
    assert len(example.strip().splitlines()) <= 20, "the example should stay short"
    code = example.replace("127.0.0.1:50051", f"127.0.0.1:{running.port}")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, out.decode()
    assert "scores" in out.decode() and "ranks" in out.decode()
