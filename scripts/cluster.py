"""``make cluster``: three server processes on one PostgreSQL behind HAProxy, and the
tournament of ``make run`` played through the proxy.

On one machine: a PostgreSQL database (the server at 127.0.0.1:5432, database ``test``,
when one answers, in a fresh schema dropped afterwards; otherwise a throwaway cluster
started from the installed binaries), ``--processes`` server processes
(``speeltafel serve --store postgresql://...``, one organiser token for all), and HAProxy
in front (``deploy/haproxy.cfg``: HTTP/2 both sides, ``balance hdr(x-match-id)`` with
``hash-type consistent``, health-checked backends). Then the arena's tournament
(:func:`speeltafel.cli.arena.tournament`: a bot token per built-in bot, every bot its own
``speeltafel bot`` process in the lobby, duplicate tournaments per game and seat count,
every record exported and verified by replay) runs with the proxy as its only address,
and the standings are printed.

Nothing outlives the run: the servers, HAProxy and the bot processes (which run in
sessions of their own, so a Ctrl-C reaches the arena alone) carry a run token in their
environment, and a small watchdog process, forked first, waits on a pipe from this one;
when this process ends in any way, SIGKILL included, the pipe closes and the watchdog stops
every process with the token (:func:`start_watchdog`; Linux, by ``/proc``). SIGTERM is
taken as Ctrl-C, so the run also stops in order and drops its schema.

``--kill-every S`` SIGKILLs a random server process every S seconds while the tournament
runs and starts it again on its port (the kill test, by hand).

:class:`LocalCluster` is the same set-up as a context manager, for the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import getpass
import glob
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
HAPROXY_CONFIG = ROOT / "deploy" / "haproxy.cfg"
LOCAL_URL = "postgresql://postgres@127.0.0.1:5432/test"
PROXY_START_TIMEOUT_S = 15.0
RUN_ENV = "SPEELTAFEL_CLUSTER_RUN"
"""The environment variable carrying a run's token, inherited by everything it starts."""
WATCHDOG_GRACE_S = 5.0
"""How long the watchdog waits after SIGTERM before SIGKILL."""


def processes_of_run(token: str) -> list[int]:
    """The processes (other than this one) whose environment carries the run ``token``."""
    marker = f"{RUN_ENV}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def _stop_run(token: str) -> None:
    pids = processes_of_run(token)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + WATCHDOG_GRACE_S
    while pids and time.monotonic() < deadline:
        time.sleep(0.1)
        pids = processes_of_run(token)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def start_watchdog() -> str | None:
    """Fork the watchdog (see the module docstring); the run's token, or None where there
    is no ``/proc`` to find the run's processes by.

    Why a token in the environment and not a process group: the bots start sessions of
    their own (the arena's choice, so a Ctrl-C reaches it alone), and a group is left by
    anything that calls setsid; the environment is inherited through all of it. Why a
    pipe: its write end closes when this process ends, however it ends, and nothing else
    holds it (file descriptors are not inherited by the processes started here)."""
    if not Path("/proc/self/environ").exists():
        return None
    token = secrets.token_hex(8)
    read_end, write_end = os.pipe()
    if os.fork() == 0:  # the watchdog
        try:
            os.close(write_end)
            os.setsid()  # not stopped with the run's process group
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while os.read(read_end, 1):
                pass
            _stop_run(token)
        finally:
            os._exit(0)
    os.close(read_end)
    os.environ[RUN_ENV] = token  # after the fork: the watchdog does not carry it
    return token


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


@contextlib.contextmanager
def postgres_database(folder: Path, url: str = "") -> Iterator[str]:
    """A URL of a fresh schema: on ``url``, the local server, or a throwaway cluster."""
    import psycopg
    from psycopg import sql

    with contextlib.ExitStack() as stack:
        base = url
        if not base:
            for user in dict.fromkeys(("postgres", getpass.getuser())):
                candidate = f"postgresql://{user}@127.0.0.1:5432/test"
                if _answers(candidate):
                    base = candidate
                    break
        if not base:
            base = stack.enter_context(_throwaway_postgres(folder / "postgres"))
        schema = f"speeltafel_cluster_{secrets.token_hex(4)}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            separator = "&" if "?" in base else "?"
            yield f"{base}{separator}options={quote(f'-csearch_path={schema}')}"
        finally:
            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@contextlib.contextmanager
def _throwaway_postgres(folder: Path) -> Iterator[str]:
    """initdb + pg_ctl on a free port (as the postgres user when run as root)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    initdb = Path(found[-1]) if found else Path(shutil.which("initdb") or "initdb")
    pg_ctl = initdb.parent / "pg_ctl"
    if not pg_ctl.exists():
        raise SystemExit(
            "no PostgreSQL answers at 127.0.0.1:5432 and none is installed to start one"
            " (apt-get install postgresql)"
        )
    prefix: list[str] = []
    user = getpass.getuser()
    if os.geteuid() == 0:
        prefix, user = ["runuser", "-u", "postgres", "--"], "postgres"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if prefix:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", free_port()
    run: dict[str, Any] = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run([*prefix, str(initdb), "-D", str(data), "-U", user, "--auth=trust"], **run)
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder}"
    log = folder / "postgres.log"
    subprocess.run(
        [*prefix, str(pg_ctl), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"],
        **run,
    )
    try:
        yield f"postgresql://{user}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(pg_ctl), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


def haproxy_binary() -> str | None:
    """HAProxy's path; installed with apt when missing and running as root.

    One install at a time on the machine (a lock file): the test workers each ask while
    they collect the cluster tests, and a second ``apt-get`` meeting the first's lock on
    dpkg would fail and skip that worker's tests. ``make test`` installs HAProxy before
    any worker starts (the Makefile's ``haproxy`` target); this is for a plain pytest run.
    """
    found = _haproxy_found()
    if found is not None or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    lock_path = Path(tempfile.gettempdir()) / "speeltafel-haproxy-install.lock"
    # Root opens a name in a shared folder: never through a link, never truncating.
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the descriptor closes
        found = _haproxy_found()  # another worker may have installed it meanwhile
        if found is None:
            subprocess.run(
                ["apt-get", "install", "-y", "-q", "haproxy"],
                capture_output=True,
                timeout=600,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            )
            found = _haproxy_found()
    finally:
        os.close(lock)
    return found


def _haproxy_found() -> str | None:
    return shutil.which("haproxy") or (
        "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None
    )


class LocalCluster:
    """``processes`` servers on the PostgreSQL ``url`` and HAProxy in front, on one machine.

    ``target`` is the proxy's address (or, with ``proxy=False``, a gRPC target naming every
    server, for clients that fail over by themselves); ``kill(i)`` SIGKILLs server i and
    ``start(i)`` starts it again on its port."""

    def __init__(
        self,
        url: str,
        folder: Path,
        processes: int = 3,
        *,
        organiser_token: str = "",
        proxy: bool = True,
        server_args: Sequence[str] = (),
    ) -> None:
        from speeltafel.cli.server_process import ServerProcess

        self.url = url
        self.folder = folder
        self.organiser_token = organiser_token or secrets.token_urlsafe(24)
        self.use_proxy = proxy
        self.servers = [
            ServerProcess(
                folder / f"server-{i + 1}",  # names the port file only: --store replaces --db
                folder,
                "--store",
                url,
                # One argument: a token may begin with "-", which argparse would take
                # for an option.
                f"--organiser-token={self.organiser_token}",
                *server_args,
                log_path=folder / f"server-{i + 1}.log",
            )
            for i in range(processes)
        ]
        self.proxy_port = 0
        self.proxy: subprocess.Popen[bytes] | None = None

    @property
    def target(self) -> str:
        """Where clients connect."""
        if self.use_proxy:
            return f"127.0.0.1:{self.proxy_port}"
        return "ipv4:" + ",".join(f"127.0.0.1:{s.port}" for s in self.servers)

    def __enter__(self) -> LocalCluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            for server in self.servers:
                server.spawn()
            for server in self.servers:
                deadline = time.monotonic() + 60
                while server._poll_started() is None:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"a server did not start:\n{server.log_tail()}")
                    time.sleep(0.05)
            if self.use_proxy:
                self._start_proxy()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start_proxy(self) -> None:
        binary = haproxy_binary()
        if binary is None:
            raise SystemExit("HAProxy is not installed (apt-get install haproxy)")
        self.proxy_port = free_port()
        env = {**os.environ, "SPEELTAFEL_PROXY_BIND": f"127.0.0.1:{self.proxy_port}"}
        for i in range(3):  # the config names three servers; fewer repeat the last
            server = self.servers[min(i, len(self.servers) - 1)]
            env[f"SPEELTAFEL_SERVER_{i + 1}"] = f"127.0.0.1:{server.port}"
        log = (self.folder / "haproxy.log").open("ab")
        self.proxy = subprocess.Popen(
            [binary, "-db", "-f", str(HAPROXY_CONFIG)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
        )
        log.close()
        deadline = time.monotonic() + PROXY_START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError), socket.create_connection(self.proxy_address, 0.5):
                return
            if self.proxy.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "HAProxy did not start:\n" + (self.folder / "haproxy.log").read_text()
                )
            time.sleep(0.05)

    @property
    def proxy_address(self) -> tuple[str, int]:
        return ("127.0.0.1", self.proxy_port)

    def kill(self, index: int) -> None:
        """SIGKILL server ``index``."""
        self.servers[index].kill()

    def start(self, index: int) -> None:
        """Start server ``index`` again, on its port."""
        self.servers[index].start(60)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proxy.wait(10)
            if self.proxy.poll() is None:
                self.proxy.kill()
        for server in self.servers:
            with contextlib.suppress(Exception):
                server.stop(10)


async def _kill_now_and_then(cluster: LocalCluster, every_s: float, seed: int) -> None:
    rnd = random.Random(seed)
    while True:
        await asyncio.sleep(every_s)
        index = rnd.randrange(len(cluster.servers))
        print(f"-- SIGKILL server {index + 1} (pid {cluster.servers[index].pid})", flush=True)
        cluster.kill(index)
        await asyncio.sleep(1.0)
        await asyncio.to_thread(cluster.start, index)
        print(f"-- server {index + 1} started again", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL (default: local)")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--folder", default="var/cluster", help="logs and bot logs")
    parser.add_argument("--kill-every", type=float, default=0.0, help="seconds (0: never)")
    parser.add_argument("--rounds", default="1")
    parser.add_argument("--max-seats", default="4")
    parser.add_argument("--seed", default="", help="an organiser's seed (reproducible deals)")
    parser.add_argument("--game", action="append", default=[], help="only these games")
    parser.add_argument(
        "--option", action="append", default=[], help="GAME:NAME=VALUE, as speeltafel run"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.processes <= 3:
        parser.error("--processes must be 1 to 3 (deploy/haproxy.cfg names three servers)")
    start_watchdog()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop in order, as Ctrl-C

    from rich.console import Console

    from speeltafel.cli import arena
    from speeltafel.cli.main import build_parser
    from speeltafel.cli.tournament import crosstable, standings_table

    folder = Path(args.folder).resolve()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    console = Console()
    run_argv = ["run", "--rounds", args.rounds, "--max-seats", args.max_seats]
    for game in args.game:
        run_argv += ["--game", game]
    for option in args.option:
        run_argv += ["--option", option]
    if args.seed:
        run_argv += ["--seed", args.seed]
    run_args = build_parser().parse_args(run_argv)

    def plan_for(offered: Sequence[Any]) -> list[Any]:
        options = arena.parse_options(run_args.option)
        games = run_args.game or None
        return arena.plan_games(offered, games, None, options, None, run_args.max_seats)

    started = time.monotonic()
    with postgres_database(folder, args.postgres) as url:
        console.print(f"PostgreSQL: {url.split('?')[0]} (a fresh schema)")
        with LocalCluster(url, folder, args.processes) as cluster:
            ports = ", ".join(str(s.port) for s in cluster.servers)
            console.print(
                f"{args.processes} server processes (ports {ports}), HAProxy on {cluster.target}"
                f" (logs in {folder})"
            )

            async def play() -> list[Any]:
                killer = None
                if args.kill_every > 0:
                    killer = asyncio.ensure_future(
                        _kill_now_and_then(cluster, args.kill_every, secrets.randbits(32))
                    )
                try:
                    return await arena.tournament(
                        cluster.target,
                        cluster.organiser_token,
                        plan_for,
                        run_args,
                        folder / "bots",
                        console,
                    )
                finally:
                    if killer is not None:
                        killer.cancel()

            outcomes = asyncio.run(play())
    verified = matches = 0
    for outcome in outcomes:
        matches += len(outcome.matches)
        verified += outcome.verified
        if outcome.standings is not None:
            planned = outcome.planned
            title = (
                f"{planned.plan.name}, {planned.seats} seats - "
                f"{outcome.standings.matches_counted} matches (through the proxy)"
            )
            console.print(standings_table(outcome.standings, title))
            console.print(crosstable(outcome.standings))
        for problem in outcome.problems:
            console.print(f"[red]not verified[/red] {problem}")
    console.print(
        f"{verified}/{matches} match records verified by replay; {args.processes} processes"
        f" behind HAProxy; {time.monotonic() - started:.1f} s."
    )
    unfinished = [o.tournament_id for o in outcomes if o.standings is None]
    return 1 if verified < matches or unfinished or matches == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
