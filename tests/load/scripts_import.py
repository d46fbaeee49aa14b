"""The bench scripts as modules, for the tests of ``tests/load`` (tests/load is on
sys.path: rootdir-relative imports)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def script(name: str) -> ModuleType:
    """``scripts/<name>.py`` imported; the scripts import each other as plain modules."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)
