"""A speeltafel server as a subprocess, for the tests that kill or stop it (E1, E4, E7)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

START_TIMEOUT_S = 15.0


class ServerProcess:
    """One server subprocess at a time on one SQLite file, restarted on the same port."""

    def __init__(self, workdir: Path, db_name: str, *extra_args: str) -> None:
        self.db = workdir / db_name
        self.port_file = workdir / "port"
        self.log_path = workdir / "server.log"
        self.extra_args = extra_args
        self.port = 0  # 0 until the first start has picked a free port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def spawn(self) -> subprocess.Popen[bytes]:
        """Launch the server process (on the port of the first start, if any)."""
        assert self.proc is None, "the previous server is still running"
        self.port_file.unlink(missing_ok=True)
        command = [
            sys.executable, "-m", "speeltafel.server", "--host", "127.0.0.1",
            "--port", str(self.port), "--db", str(self.db), "--port-file", str(self.port_file),
            *self.extra_args,
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
            )
        return self.proc

    async def start(self) -> int:
        """Spawn and wait until the server has written its port file (it then serves)."""
        proc = self.spawn()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            text = self.port_file.read_text() if self.port_file.exists() else ""
            if text.endswith("\n"):  # written in one call, but it may be read half-way
                break
            code = proc.poll()
            if code is not None:
                self.proc = None
                raise RuntimeError(f"server exited with {code}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"server did not start:\n{self.log_tail()}")
            await asyncio.sleep(0.01)
        port = int(text)
        assert self.port in (0, port), f"restarted on port {port}, not {self.port}"
        self.port = port
        return port

    async def terminate(self, within_s: float) -> tuple[int | None, float]:
        """SIGTERM; the exit code (None if still running after ``within_s``) and seconds."""
        assert self.proc is not None
        proc = self.proc
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            await asyncio.to_thread(proc.wait, within_s)
        code = proc.poll()
        if code is not None:
            self.proc = None
        return code, time.monotonic() - started

    def kill(self) -> None:
        """SIGKILL and reap (idempotent)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log, for failure messages."""
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
