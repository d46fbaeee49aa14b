"""Import direction (shared/design.md): engine <- wire <- rpc; engine <- app <- rpc;
engine <- store <- app; sdk <- bots; everything <- cli, which imports the server beyond its engine
and wire only inside ``serve``. Bots may import the engine and the wire's decoder (its
registry) only; the server imports nothing of the SDK but the generated stubs. Checked by
parsing every source file with ``ast`` (nothing is imported), including imports inside
functions and ``importlib.import_module`` calls with a literal name, so lazy imports cannot
slip past; and, at run time, by what importing the server loads.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "server": "speeltafel.server",
    "sdk": "speeltafel.sdk",
    "bots": "speeltafel.bots",
    "cli": "speeltafel.cli",
    "rl": "speeltafel.rl",
}
GENERATED = ROOT / "sdk" / "v1"  # protoc output: its imports are protoc's business

ANY = None  # third party: anything
STDLIB_ONLY = ()  # third party: nothing

# The engine is pure: no clock, no global randomness, no I/O or concurrency, no pickle.
IMPURE_STDLIB = frozenset(
    {
        "asyncio",
        "concurrent",
        "datetime",
        "logging",
        "marshal",
        "multiprocessing",
        "pickle",
        "random",
        "secrets",
        "shelve",
        "socket",
        "sqlite3",
        "subprocess",
        "threading",
        "time",
        "uuid",
        "zoneinfo",
    }
)


@dataclass(frozen=True)
class Rule:
    """What the modules of one layer may import."""

    layer: str
    first_party: tuple[str, ...]  # speeltafel packages it may import
    third_party: tuple[str, ...] | None  # allowed non-stdlib packages; None: any
    banned_stdlib: frozenset[str] = frozenset()


SERVER = "speeltafel.server"
ENGINE = f"{SERVER}.engine"
WIRE = f"{SERVER}.wire"
STORE = f"{SERVER}.store"
APP = f"{SERVER}.app"
RPC = f"{SERVER}.rpc"
TOURNAMENT = f"{SERVER}.tournament"
SDK, V1 = "speeltafel.sdk", "speeltafel.sdk.v1"  # V1: the generated protobuf stubs
BOTS, CLI = "speeltafel.bots", "speeltafel.cli"  # CLI: the `speeltafel` command
RL = "speeltafel.rl"  # the PettingZoo environment: the engine's library facade only
DECODER = f"{WIRE}.registry"  # observation_from_view: a view back into the engine's terms
SERVE = "_serve"  # the one function of the command that may load the server
PROTOBUF = ("google.protobuf", "google.rpc", "grpc_status")

# fmt: off
RULES = [
    #    layer    may import (first party)         third party
    Rule(ENGINE,  (ENGINE,),                       STDLIB_ONLY, IMPURE_STDLIB),
    Rule(WIRE,    (ENGINE, WIRE, V1),              PROTOBUF),
    Rule(STORE,   (ENGINE, STORE),                 ("psycopg", "psycopg_pool")),  # postgres.py
    Rule(APP,     (ENGINE, STORE, WIRE, APP, V1),  ANY),
    Rule(TOURNAMENT, (ENGINE, STORE, APP, TOURNAMENT), ANY),  # director, lobby, results
    Rule(RPC,     (SERVER, V1),                    ANY),
    Rule(SERVER,  (SERVER, V1),                    ANY),  # modules directly in server/
    Rule(SDK,     (SDK,),                          ANY),
    Rule(BOTS,    (BOTS, SDK, ENGINE, DECODER),    ANY),  # the engine only for search
    Rule(CLI,     (CLI, BOTS, SDK, SERVER),        ANY),  # the composition root
    Rule(RL,      (RL, f"{ENGINE}.api"),           ANY),  # pettingzoo, gymnasium, numpy
]
# fmt: on
RULE_OF = {rule.layer: rule for rule in RULES}


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    folder, *rest = relative.parts
    if rest and rest[-1] == "__init__":
        rest = rest[:-1]
    return ".".join([FOLDERS[folder], *rest])


def layer_of(module: str, is_package: bool) -> str:
    """The rule that governs a module: its subpackage of server, or its top folder."""
    parts = module.split(".")
    if parts[:2] == ["speeltafel", "server"]:
        # Modules directly in server/ form the root layer; deeper ones their subpackage.
        direct = len(parts) == 2 or (len(parts) == 3 and not is_package)
        return SERVER if direct else ".".join(parts[:3])
    return ".".join(parts[:2])


@dataclass(frozen=True)
class Import:
    line: int
    names: tuple[str, ...]  # acceptable if any of these is allowed ("pkg" or "pkg.name")
    function: str = ""  # the outermost function it is in ("": at module level)


def _functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Every node inside a function, mapped to its outermost function's name."""
    owner: dict[ast.AST, str] = {}
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                owner[inner] = node.name
        elif isinstance(node, ast.ClassDef):
            for inner, name in _functions(node).items():
                owner[inner] = name
    return owner


def imports(source: str, module: str, is_package: bool) -> Iterator[Import]:
    """Every absolute module name a source file imports, relative imports resolved."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    owner = _functions(tree)
    for node in ast.walk(tree):
        function = owner.get(node, "")
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, (alias.name,), function)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                # `from pkg import name`: name may be a submodule (sdk import v1).
                yield Import(node.lineno, (target, f"{target}.{alias.name}"), function)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (
                called in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and not first.value.startswith(".")
            ):
                yield Import(node.lineno, (first.value,), function)


def verdict(rule: Rule, name: str) -> str | None:
    """Why ``name`` may not be imported under ``rule``; None when it may."""
    top = name.split(".")[0]
    if top == "speeltafel":
        if any(within(name, allowed) for allowed in rule.first_party):
            return None
        return f"{rule.layer} may import only {', '.join(rule.first_party)}"
    if top in sys.stdlib_module_names:
        if top in rule.banned_stdlib:
            return f"{rule.layer} must stay pure: no {top}"
        return None
    if rule.third_party is None or any(within(name, p) for p in rule.third_party):
        return None
    allowed = ", ".join(rule.third_party) or "nothing outside the standard library"
    return f"{rule.layer} may import {allowed} from third parties"


def violations(source: str, module: str, is_package: bool, where: str) -> list[str]:
    """One ``file:line: message`` per forbidden import in a source file."""
    layer = layer_of(module, is_package)
    rule = RULE_OF.get(layer)
    if rule is None:
        return [f"{where}:1: no import rule for layer {layer}; add one to RULES"]
    found = []
    for imported in imports(source, module, is_package):
        reasons = [verdict(rule, name) for name in imported.names]
        if layer == CLI and imported.function != SERVE:
            # Beyond the engine and the wire's conversions (records, views: protobuf and
            # engine values only), the command loads the server only to serve.
            reasons = [
                reason
                or (
                    f"{CLI} imports the server beyond its engine and wire only in {SERVE}"
                    if within(name, SERVER) and not (within(name, ENGINE) or within(name, WIRE))
                    else None
                )
                for name, reason in zip(imported.names, reasons, strict=True)
            ]
        if all(reasons):
            found.append(f"{where}:{imported.line}: imports {imported.names[0]} ({reasons[0]})")
    return found


def source_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if not path.is_relative_to(GENERATED) and "__pycache__" not in path.parts:
                files.append(path)
    return files


# --------------------------------------------------------------------------- the project


def test_every_source_file_respects_the_import_direction() -> None:
    files = source_files()
    assert ROOT / "server" / "engine" / "core.py" in files
    assert ROOT / "server" / "engine" / "games" / "take5.py" in files
    assert not any(path.is_relative_to(GENERATED) for path in files)
    found = []
    for path in files:
        where = str(path.relative_to(ROOT))
        module = module_name(path)
        found += violations(
            path.read_text(encoding="utf-8"), module, path.name == "__init__.py", where
        )
    assert not found, "imports against the design's direction:\n" + "\n".join(found)


def test_every_layer_folder_has_a_rule() -> None:
    for folder in sorted(p for p in (ROOT / "server").iterdir() if p.is_dir()):
        if folder.name != "__pycache__" and any(folder.rglob("*.py")):
            assert f"{SERVER}.{folder.name}" in RULE_OF, folder


# --------------------------------------------------------------------------- the checker itself


@pytest.mark.parametrize(
    ("module", "source"),
    [
        (f"{ENGINE}.games.demo", "import grpc"),
        (f"{ENGINE}.games.demo", "from google.protobuf import message"),
        (f"{ENGINE}.games.demo", "import random"),
        (f"{ENGINE}.core", "import time"),
        (f"{ENGINE}.core", "from datetime import datetime"),
        (f"{ENGINE}.core", "import logging.handlers"),
        (f"{ENGINE}.core", "import asyncio"),
        (f"{ENGINE}.core", "import sqlite3"),
        (f"{ENGINE}.core", "import structlog"),
        (f"{ENGINE}.core", "def f():\n    import pickle"),
        (f"{ENGINE}.core", "from speeltafel.server.wire import take5"),
        (f"{ENGINE}.games.demo", "from ...wire import common"),
        (f"{WIRE}.take5", "from speeltafel.server.app import runtime"),
        (f"{WIRE}.take5", "from ..store.base import MatchStore"),
        (f"{WIRE}.take5", "from ..rpc import errors"),
        (f"{WIRE}.take5", "import grpc"),
        (f"{STORE}.sqlite", "from speeltafel.server.app.runtime import MatchRuntime"),
        (f"{STORE}.sqlite", "from speeltafel.server.wire import common"),
        (f"{STORE}.sqlite", "from ..rpc import service"),
        (f"{STORE}.sqlite", "from google.protobuf import message"),
        (f"{APP}.runtime", "from speeltafel.server.rpc.errors import classify"),
        (f"{APP}.runtime", "from ..rpc import errors"),
        (f"{RPC}.service", "from speeltafel.bots import random_bot"),
        (f"{RPC}.service", "from speeltafel.sdk import AsyncClient"),
        (f"{RPC}.service", "from speeltafel.sdk.runner import Bot"),
        (f"{APP}.runtime", "from speeltafel.sdk import client"),
        ("speeltafel.sdk.client", "from speeltafel.server.engine import core"),
        ("speeltafel.sdk.client", "import speeltafel.bots.random_bot"),
        ("speeltafel.bots.random_bot", "from speeltafel.server.rpc.server import serve"),
        ("speeltafel.bots.random_bot", "from speeltafel.server import app"),
        ("speeltafel.bots.gap", "importlib.import_module('speeltafel.server.app')"),
        ("speeltafel.bots.gap", "def run():\n    from speeltafel.server.store import sqlite"),
        ("speeltafel.bots.search", "from speeltafel.server.wire import common"),
        ("speeltafel.bots.search", "from speeltafel.server.wire.take5 import WIRE"),
        ("speeltafel.bots.search", "from speeltafel.cli import arena"),
        ("speeltafel.sdk.client", "from speeltafel.cli.main import main"),
        (f"{WIRE}.common", "from speeltafel.cli.server_process import ServerProcess"),
        (CLI + ".main", "from speeltafel.server.rpc.server import serve"),
        (CLI + ".main", "def _play():\n    from speeltafel.server.rpc import server"),
        (CLI + ".arena", "import speeltafel.server.app.runtime"),
        (CLI + ".arena", "def run():\n    from speeltafel.server.store import sqlite"),
        (f"{SERVER}.cache.lru", "import functools"),  # a server folder without a rule
        (f"{RL}.pettingzoo_env", "from speeltafel.server.engine.core import Rng"),
        (f"{ENGINE}.api", "import numpy"),
    ],
)
def test_the_checker_flags_a_wrong_direction(module: str, source: str) -> None:
    found = violations(source, module, False, "demo.py")
    assert len(found) == 1
    assert found[0].startswith("demo.py:")


@pytest.mark.parametrize(
    ("module", "is_package", "source"),
    [
        (f"{ENGINE}.games.demo", False, "from ..core import Rng\nimport hashlib, hmac, json"),
        (f"{ENGINE}.games.demo", False, "from speeltafel.server.engine.codec import encode_value"),
        (f"{ENGINE}.games", True, "from . import take5"),
        (f"{WIRE}.take5", False, "from speeltafel.sdk.v1 import take5_pb2\nfrom . import x"),
        (f"{WIRE}.common", False, "from speeltafel.sdk import v1\nfrom google.rpc import code"),
        (f"{STORE}.sqlite", False, "import sqlite3, threading\nfrom ..engine.core import Rng"),
        (
            f"{APP}.runtime",
            False,
            "import structlog\nfrom ..store import base\nfrom ..wire import x",
        ),
        (f"{RPC}.server", False, "import grpc\nfrom ..app.runtime import MatchRuntime"),
        (SERVER, False, "from speeltafel.server.rpc.server import main"),
        ("speeltafel.sdk.client", False, "import grpc\nfrom speeltafel.sdk.v1 import common_pb2"),
        ("speeltafel.bots.search", False, "from speeltafel.server.engine.games import take5"),
        ("speeltafel.bots.search", False, "from speeltafel.server import engine"),
        ("speeltafel.bots.search", False, "from speeltafel.server.wire.registry import x"),
        (CLI + ".main", False, "def _serve():\n    from speeltafel.server.rpc import x"),
        (CLI + ".arena", False, "from speeltafel.server.engine.verify import verify"),
        (CLI + ".arena", False, "from speeltafel.bots.registry import BOTS\nimport rich"),
        (CLI + ".arena", False, "from speeltafel.cli.server_process import ServerProcess"),
    ],
)
def test_the_checker_accepts_the_allowed_directions(
    module: str, is_package: bool, source: str
) -> None:
    assert violations(source, module, is_package, "demo.py") == []


def test_the_checker_reports_file_and_line() -> None:
    source = "import hashlib\n\n\ndef later():\n    import time\n"
    assert violations(source, f"{ENGINE}.core", False, "server/engine/core.py") == [
        "server/engine/core.py:5: imports time (speeltafel.server.engine must stay pure: no time)"
    ]


def test_module_names_and_layers_follow_the_folders() -> None:
    assert module_name(ROOT / "server" / "engine" / "games" / "take5.py") == f"{ENGINE}.games.take5"
    assert module_name(ROOT / "server" / "wire" / "__init__.py") == f"{WIRE}"
    assert module_name(ROOT / "cli" / "main.py") == "speeltafel.cli.main"
    assert layer_of(f"{ENGINE}.games.take5", False) == ENGINE
    assert layer_of(f"{WIRE}", True) == f"{WIRE}"
    assert layer_of(f"{SERVER}.__main__", False) == SERVER
    assert layer_of("speeltafel.sdk.runner", False) == "speeltafel.sdk"
    assert layer_of("speeltafel.cli.main", False) == CLI
    assert layer_of("speeltafel.cli.arena", False) == CLI
    assert layer_of("speeltafel.bots.search_bot", False) == BOTS


# --------------------------------------------------------------------------- at run time


def test_the_server_never_loads_the_sdk_client_or_runner() -> None:
    """The server imports the generated stubs in ``speeltafel.sdk.v1``, which runs the SDK's
    ``__init__``: that must not load the client or the runner (PEP 562, on first use)."""
    code = (
        "import sys\n"
        "import speeltafel.server.rpc.server\n"
        "import speeltafel.server.wire.common\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('speeltafel.sdk.')\n"
        "    and not m.startswith('speeltafel.sdk.v1'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
