"""A ``python -m speeltafel.server`` subprocess: the one helper that starts a server process.

The arena (``speeltafel run``), ``scripts/bench.py`` and the tests that kill or stop a
server (``tests/service``) all use it. It knows the server only as a command line, so the
command imports nothing of the server by using it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the parent dies, even by SIGKILL (Linux only)."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class ServerProcess:
    """One server subprocess at a time on one store, restarted on the port it first got.

    ``start`` (blocking) or ``start_async`` spawn it and wait for its port file (it then
    serves); ``stop`` ends it gracefully (SIGTERM, then SIGKILL), ``kill`` at once. As a
    context manager it starts on entry and stops on exit.
    """

    def __init__(
        self,
        db: str | Path,
        workdir: Path,
        *extra_args: str,
        log_path: Path | None = None,
        python_args: Sequence[str] = (),
        die_with_parent: bool = False,
    ) -> None:
        self.db = db
        self.workdir = workdir
        # Named after the store, so that servers of different stores may share a folder.
        self.port_file = workdir / f"{Path(db).name}.port"
        self.log_path = log_path or workdir / "server.log"
        self.extra_args = extra_args
        self.python_args = tuple(python_args)  # e.g. ("-m", "cProfile", "-o", file)
        self.die_with_parent = die_with_parent  # only where no thread runs yet (preexec)
        self.port = 0  # 0 until the first start has picked a free port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def target(self) -> str:
        """``host:port`` for a client."""
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """The running process's id."""
        assert self.proc is not None, "the server is not running"
        return self.proc.pid

    def command(self) -> list[str]:
        """The server's command line (on the port of the first start, if any)."""
        return [
            sys.executable, *self.python_args, "-m", "speeltafel.server",
            "--host", "127.0.0.1", "--port", str(self.port), "--db", str(self.db),
            "--port-file", str(self.port_file), *self.extra_args,
        ]  # fmt: skip

    def spawn(self) -> subprocess.Popen[bytes]:
        """Launch the server process; its stdout and stderr go to ``log_path``."""
        assert self.proc is None, "the previous server is still running"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port_file.unlink(missing_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=_die_with_parent if self.die_with_parent else None,
            )
        return self.proc

    def _poll_started(self) -> int | None:
        """The port once the server has written it; raises if the server has exited."""
        assert self.proc is not None
        text = ""
        with contextlib.suppress(OSError):
            text = self.port_file.read_text()
        if text.endswith("\n"):  # written in one call, but it may be read half-way
            port = int(text)
            assert self.port in (0, port), f"restarted on port {port}, not {self.port}"
            self.port = port
            return port
        code = self.proc.poll()
        if code is not None:
            self.proc = None
            raise RuntimeError(f"the server exited with {code}:\n{self.log_tail()}")
        return None

    def _timed_out(self) -> TimeoutError:
        self.kill()
        return TimeoutError(f"the server did not start:\n{self.log_tail()}")

    def start(self, timeout: float = START_TIMEOUT_S) -> int:
        """Spawn and wait (blocking) until it serves; its port."""
        self.spawn()
        deadline = time.monotonic() + timeout
        while (port := self._poll_started()) is None:
            if time.monotonic() > deadline:
                raise self._timed_out()
            time.sleep(0.02)
        return port

    async def start_async(self, within_s: float = START_TIMEOUT_S) -> int:
        """Spawn and wait (without blocking the event loop) until it serves; its port."""
        self.spawn()
        deadline = time.monotonic() + within_s
        while (port := self._poll_started()) is None:
            if time.monotonic() > deadline:
                raise self._timed_out()
            await asyncio.sleep(0.01)
        return port

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (graceful), then SIGKILL if it has not ended in ``timeout``; its status."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        return proc.returncode

    async def terminate(self, within_s: float) -> tuple[int | None, float]:
        """SIGTERM; the exit status (None if still running after ``within_s``) and seconds."""
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
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
