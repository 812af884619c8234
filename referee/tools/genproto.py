"""Generate the Python code for every ``.proto`` under ``protos/`` into ``client_sdk/proto/``.

Run ``python -m referee.tools.genproto`` (or ``protos/generate.sh``) after editing a ``.proto``
and commit the result; ``tests/referee/test_proto_fresh.py`` fails while the committed code is
stale. The generated modules live in the SDK so that bots and the referee share them without
the SDK importing referee internals.

protoc writes imports that mirror the proto package path (``from tetromino.referee.v1 import
referee_pb2``); they are rewritten to ``client_sdk.proto`` so no top-level ``tetromino``
package is needed. Proto file basenames must therefore be unique.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "protos"
OUT_DIR = ROOT / "client_sdk" / "proto"
OUT_PACKAGE = "client_sdk.proto"

_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")


def proto_files(proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Every ``.proto`` file under ``proto_root``, sorted."""
    return sorted(proto_root.rglob("*.proto"))


def _plugin(name: str) -> str:
    # The mypy-protobuf plugins are console scripts next to the running interpreter.
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found: install the dev extras (mypy-protobuf)")
    return found


def generate(out_dir: Path, proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Generate the modules into ``out_dir`` (flat) and return the files written, sorted."""
    import grpc_tools
    from grpc_tools import protoc

    files = proto_files(proto_root)
    if not files:
        raise SystemExit(f"no .proto files under {proto_root}")
    include = Path(grpc_tools.__file__).parent / "_proto"
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{proto_root}",
            f"-I{include}",
            f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
            f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
            f"--python_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--mypy_out={tmp}",
            f"--mypy_grpc_out={tmp}",
            *(str(f.relative_to(proto_root)) for f in files),
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        modules = {f.stem for f in files}
        out_dir.mkdir(parents=True, exist_ok=True)
        for src in sorted(Path(tmp).rglob("*")):
            if not src.is_file() or not src.name.endswith(_SUFFIXES):
                continue
            text = _rewrite_imports(src.read_text(), modules)
            if src.name.endswith("_pb2_grpc.pyi"):
                # grpc ships no type information, so mypy-protobuf's ignores and overloads in
                # the service stubs trip mypy's checks of the stub file itself.
                text = "# mypy: ignore-errors\n" + text
            dst = out_dir / src.name
            dst.write_text(text)
            written.append(dst)
    return sorted(written)


def _rewrite_imports(text: str, modules: set[str]) -> str:
    # "from tetromino.referee.v1 import referee_pb2 as x" -> "from client_sdk.proto import ..."
    # and "import tetromino.referee.v1.referee_pb2" (stubs) likewise.
    names = "|".join(re.escape(m) for m in sorted(modules))
    text = re.sub(
        rf"^from [\w.]+ import ({names})(_pb2\b)",
        rf"from {OUT_PACKAGE} import \1\2",
        text,
        flags=re.MULTILINE,
    )
    return re.sub(
        rf"^import [\w.]+\.({names})_pb2\b",
        rf"import {OUT_PACKAGE}.\1_pb2",
        text,
        flags=re.MULTILINE,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m referee.tools.genproto", description=__doc__)
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output directory")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
