"""Server processes on one PostgreSQL for the cluster tests.

The PostgreSQL comes from ``tests/store/conftest.py`` (the server at 127.0.0.1:5432, a
throwaway cluster, or a skip saying why), loaded here under its own name so both folders
share one session-wide server; each test gets a fresh schema.
"""

from __future__ import annotations

import importlib.util
import secrets
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from speeltafel.cli.server_process import ServerProcess

_path = Path(__file__).resolve().parents[1] / "store" / "conftest.py"
_spec = importlib.util.spec_from_file_location("speeltafel_tests_postgres", _path)
assert _spec is not None and _spec.loader is not None
_postgres = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _postgres
_spec.loader.exec_module(_postgres)

postgres_server = _postgres.postgres_server
postgres_url = _postgres.postgres_url

Spawn = Callable[..., ServerProcess]


@pytest.fixture
def organiser_token() -> str:
    """One organiser token for every process of a test's cluster."""
    return secrets.token_urlsafe(24)


@pytest.fixture
def servers(tmp_path: Path, postgres_url: str, organiser_token: str) -> Iterator[Spawn]:
    """``servers(name, *extra)``: a server process on the test's schema (not yet started);
    every one is killed at teardown."""
    made: list[ServerProcess] = []

    def spawn(name: str, *extra: str) -> ServerProcess:
        process = ServerProcess(
            tmp_path / name,  # names only the port file: --store replaces --db
            tmp_path,
            "--store",
            postgres_url,
            f"--organiser-token={organiser_token}",  # one argument: it may begin with "-"
            "--log-level",
            "debug",  # test_routing reads which process committed a match's actions
            *extra,
            log_path=tmp_path / f"{name}.log",
        )
        made.append(process)
        return process

    try:
        yield spawn
    finally:
        for process in made:
            process.kill()
