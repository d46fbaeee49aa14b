"""A speeltafel server as a subprocess, for the tests that kill or stop it (E1, E4, E7).

The shared helper of ``speeltafel.cli.server_process``, with these tests' constructor and
an awaitable ``start``.
"""

from __future__ import annotations

from pathlib import Path

from speeltafel.cli import server_process

START_TIMEOUT_S = 15.0


class ServerProcess(server_process.ServerProcess):
    """One server subprocess at a time on one SQLite file, restarted on the same port."""

    def __init__(self, workdir: Path, db_name: str, *extra_args: str) -> None:
        super().__init__(workdir / db_name, workdir, *extra_args)

    async def start(self) -> int:  # type: ignore[override]
        """Spawn and wait until the server has written its port file (it then serves)."""
        return await self.start_async(START_TIMEOUT_S)
