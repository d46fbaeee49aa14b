"""Generate the Python protobuf and gRPC modules from proto/ into sdk/v1/.

One script does it all (``make proto``): protoc through grpcio-tools, then the import
fix-up that turns ``from speeltafel.v1 import x_pb2`` into the installed package path
``speeltafel.sdk.v1``. ``--check`` generates into a temporary folder and fails when the
committed files differ, so stale stubs cannot land.
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
OUT = ROOT / "sdk" / "v1"
HEADER = '"""Generated from proto/speeltafel/v1 by scripts/gen_protos.py. Do not edit."""\n'


def generate(out: Path) -> None:
    """Run protoc into ``out`` and fix the imports."""
    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in PROTO_ROOT.rglob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *protos,
        ]
        subprocess.run(command, check=True, cwd=ROOT)
        generated = Path(tmp) / "speeltafel" / "v1"
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*_pb2*"):
            old.unlink()
        for source in sorted(generated.iterdir()):
            text = source.read_text()
            text = re.sub(
                r"^from speeltafel\.v1 import",
                "from speeltafel.sdk.v1 import",
                text,
                flags=re.MULTILINE,
            )
            (out / source.name).write_text(text)
    (out / "__init__.py").write_text(HEADER)
    (out / "py.typed").write_text("")


def main() -> int:
    """Generate, or with --check compare against a fresh generation."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if sdk/v1 is stale")
    args = parser.parse_args()
    if not args.check:
        generate(OUT)
        print(f"generated {len(list(OUT.glob('*_pb2*.py')))} modules in sdk/v1")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "v1"
        generate(fresh)
        names = sorted(
            {p.name for p in fresh.iterdir()}
            | {p.name for p in OUT.iterdir() if p.name != "__pycache__"}
        )
        stale = [
            n
            for n in names
            if not (fresh / n).exists()
            or not (OUT / n).exists()
            or not filecmp.cmp(fresh / n, OUT / n, shallow=False)
        ]
        if stale:
            print("generated code is stale (run `make proto`): " + ", ".join(stale))
            return 1
        shutil.rmtree(fresh)
    print("generated code is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
