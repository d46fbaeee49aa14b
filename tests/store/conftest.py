"""A real PostgreSQL for the store tests, or a skip that says plainly why there is none.

In order: the URL in SPEELTAFEL_TEST_POSTGRES, if set; the server at 127.0.0.1:5432
(database ``test``, as user ``postgres`` or the OS user) when one answers; otherwise a
throwaway cluster started from the PostgreSQL binaries (``initdb`` and ``pg_ctl`` from
/usr/lib/postgresql/*/bin or the PATH), stopped and deleted after the run. Otherwise every
PostgreSQL test is skipped with the reason. SPEELTAFEL_TEST_POSTGRES=throwaway forces the
throwaway cluster, =off skips.

Each test gets a fresh schema (``postgres_url`` names it in the URL's search_path), dropped
after the test, so runs never see each other's rows, nor each other's NOTIFY channel.
"""

from __future__ import annotations

import contextlib
import getpass
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

ENV = "SPEELTAFEL_TEST_POSTGRES"
HOST, PORT, DATABASE = "127.0.0.1", 5432, "test"
NOT_RUN = "the PostgreSQL tests did not run"


@dataclass(frozen=True)
class PostgresServer:
    """A PostgreSQL that answers: its URL and where it came from."""

    url: str
    origin: str  # "the server at 127.0.0.1:5432", "a throwaway cluster", ...


def _answers(url: str) -> str | None:
    """None when ``url`` accepts a connection, else the first line of why not."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return None


def _binaries() -> tuple[Path, Path] | None:
    """``initdb`` and ``pg_ctl`` of the newest PostgreSQL installed, if any."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    initdb = Path(found[-1]) if found else None
    if initdb is None and shutil.which("initdb"):
        initdb = Path(str(shutil.which("initdb")))
    if initdb is None or not (initdb.parent / "pg_ctl").exists():
        return None
    return initdb, initdb.parent / "pg_ctl"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _throwaway_cluster(folder: Path, why_not_local: str) -> Iterator[PostgresServer]:
    """initdb + pg_ctl start on a free port; stopped (fast) and deleted afterwards.

    initdb refuses to run as root, so as root the cluster runs as the ``postgres`` user, in
    a folder of its own under the system's temporary directory: that user cannot reach
    ``folder``, which is under pytest's base temporary directory (mode 0700, root's).
    """
    binaries = _binaries()
    if binaries is None:
        pytest.skip(
            f"{NOT_RUN}: {why_not_local}, and no PostgreSQL binaries (initdb, pg_ctl) are"
            " installed to start a throwaway one"
        )
    initdb, pg_ctl = binaries
    prefix: list[str] = []
    user = getpass.getuser()
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip(f"{NOT_RUN}: running as root and there is no postgres user for initdb")
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip(f"{NOT_RUN}: running as root and runuser is missing to run initdb")
        prefix = [runuser, "-u", "postgres", "--"]
        user = "postgres"
    if prefix:
        folder = Path(tempfile.mkdtemp(prefix="speeltafel-postgres-"))
    folder.mkdir(parents=True, exist_ok=True)
    data, sockets, log = folder / "data", folder / "sockets", folder / "postgres.log"
    sockets.mkdir()
    if prefix:
        for path in (folder, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    port = _free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run(
        [*prefix, str(initdb), "-D", str(data), "-U", user, "--auth=trust", "-E", "UTF8"], **run
    )
    options = f"-c listen_addresses={HOST} -p {port} -k {sockets}"
    subprocess.run(
        [*prefix, str(pg_ctl), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"],
        **run,
    )
    try:
        yield PostgresServer(f"postgresql://{user}@{HOST}:{port}/postgres", "a throwaway cluster")
    finally:
        subprocess.run(
            [*prefix, str(pg_ctl), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """The PostgreSQL the tests use for this run (see the module docstring)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip(f"{NOT_RUN}: psycopg is not installed (make install adds the postgres extra)")
    setting = os.environ.get(ENV, "")
    if setting == "off":
        pytest.skip(f"{NOT_RUN}: {ENV}=off")
    if setting and setting != "throwaway":
        why = _answers(setting)
        if why is not None:
            pytest.fail(f"{ENV} names a PostgreSQL that does not answer: {why}")
        yield PostgresServer(setting, f"{ENV}")
        return
    why_not_local = f"{ENV}=throwaway"
    if not setting:
        for user in dict.fromkeys(("postgres", getpass.getuser())):
            url = f"postgresql://{user}@{HOST}:{PORT}/{DATABASE}"
            why = _answers(url)
            if why is None:
                yield PostgresServer(url, f"the server at {HOST}:{PORT}")
                return
            why_not_local = f"no PostgreSQL answered at {HOST}:{PORT} ({why})"
    with _throwaway_cluster(tmp_path_factory.mktemp("postgres"), why_not_local) as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A URL whose search_path is a fresh, empty schema, dropped after the test."""
    import psycopg
    from psycopg import sql

    schema = f"speeltafel_test_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        separator = "&" if "?" in postgres_server.url else "?"
        yield f"{postgres_server.url}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
