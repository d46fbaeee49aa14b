"""The built wheel, installed into a fresh virtual environment, works on its own.

Builds the wheel (``pip wheel --no-deps``), installs it into a new venv without the system
or project site-packages (its runtime dependencies come from the package index, or pip's
cache), then checks there: the ``speeltafel`` command answers ``--help``; the import
packages import, carry ``py.typed``, and load no test or development tool; and every
source module of the tree is in the wheel (a package missing from pyproject's list is
named here, not found by a user).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"server": "server", "sdk": "sdk", "bots": "bots", "cli": "cli", "rl": "rl"}
DEV_ONLY = ("pytest", "hypothesis", "grpc_tools", "mypy", "ruff", "locust", "pettingzoo")

CHECK = """
import importlib, importlib.resources, sys
packages = ["speeltafel.server", "speeltafel.sdk", "speeltafel.bots", "speeltafel.cli",
            "speeltafel.rl"]
for name in packages:
    assert importlib.resources.files(name).joinpath("py.typed").is_file(), name
import speeltafel.server.rpc.server, speeltafel.server.rpc.embed, speeltafel.server.engine.api
import speeltafel.sdk, speeltafel.sdk.client, speeltafel.sdk.runner, speeltafel.bots.registry
import speeltafel.cli.main
from speeltafel.server.engine import api
assert api.list_games(), "the engine offers games"
dev = sorted(m for m in sys.modules if m.split(".")[0] in {dev_only!r})
assert not dev, dev
assert "site-packages" in speeltafel.server.__path__[0], speeltafel.server.__path__
print("ok", len(api.list_games()))
"""


def run(*command: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, timeout=240, cwd=cwd
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: the project's own setuptools builds it (no second download).
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", out, ROOT)  # fmt: skip
    (built,) = out.glob("speeltafel-*.whl")
    return built


def test_every_source_module_is_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            inside = f"speeltafel/{package}/{path.relative_to(ROOT / folder).as_posix()}"
            if inside not in names:
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, "not in the wheel (add the package to pyproject's packages): " + str(
        sorted(missing)
    )
    assert "speeltafel/sdk/v1/common_pb2.pyi" in names  # the stubs' types ship too


@pytest.mark.timeout(300)
def test_the_wheel_installs_and_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    usage = run(venv / "bin" / "speeltafel", "--help", cwd=tmp_path)
    assert "serve" in usage and "play" in usage
    out = run(python, "-c", CHECK.replace("{dev_only!r}", repr(set(DEV_ONLY))), cwd=tmp_path)
    assert out.startswith("ok ")
