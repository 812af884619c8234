"""The SDK's wheel of the running version: what the web front serves at ``/sdk`` and
``referee sdk wheel -o DIR`` writes.

The wheel is built from the installed source with the standard machinery (``pip wheel
--no-deps --no-build-isolation``, so offline: setuptools comes from this environment), once,
and cached under a key that is the digest of the files it holds (:data:`SDK_PARTS`: the SDK,
the rules and the course's ``referee.game``, never the server): the code that is running is
the code in the wheel, and an edited checkout gets a new wheel. It is built from its own
``pyproject.toml`` (the project's name, version and base dependencies; no extras, no
scripts), on a copy of those files, so two builds at once (two workers, two tests) never
share a ``build/`` folder; the finished wheel is moved into the cache in one rename.

An install without its source tree beside the packages (a plain ``pip install`` of the
project) builds from :data:`SOURCE_ENV`, the tree it was installed from, or serves the wheel
built into the cache at install time (the container image runs ``referee sdk wheel`` so).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

from referee.errors import RefereeError

#: Where built wheels are kept (default: the user's cache folder).
CACHE_ENV = "TETROMINO_SDK_CACHE"
#: A source tree to build from when the packages are installed without theirs (a container
#: image builds its wheel at build time from the tree it installed).
SOURCE_ENV = "TETROMINO_SDK_SOURCE"
#: What the wheel holds (and whose files key the cache): the SDK, the rules (with the openings
#: books ``client_sdk play --openings`` reads), and of the referee only what a bot imports (the
#: course's ``referee.game``); never the server, its CLI or its ``referee`` script.
SDK_PARTS = (
    "client_sdk",
    "engine",
    "referee/__init__.py",
    "referee/py.typed",
    "referee/game",
)
#: How long a build may take before it is given up.
BUILD_TIMEOUT_S = 600.0
_BUILDING = threading.Lock()


class WheelError(RefereeError):
    """The wheel cannot be built or found; the message says why in one line."""


@dataclass(frozen=True, slots=True)
class Wheel:
    """A built wheel: its file, size and SHA-256 (hex)."""

    path: Path
    sha256: str
    size: int

    @property
    def name(self) -> str:
        return self.path.name


def installed_root() -> Path:
    """The folder holding the installed ``engine``, ``referee`` and ``client_sdk``."""
    import referee

    return Path(referee.__file__).resolve().parent.parent


def source_key(root: Path | None = None) -> str:
    """The digest of every file of the installed packages (names and contents), read once per
    process: the code running is the code that was there when it was first asked."""
    return _digest(root or installed_root())


@functools.cache
def _digest(root: Path) -> str:
    digest = hashlib.sha256(_pyproject(root).encode() + b"\0")
    for path in _sdk_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _sdk_files(root: Path) -> list[Path]:
    """Every file of :data:`SDK_PARTS` under ``root`` (caches left out), in a fixed order."""
    found: list[Path] = []
    for part in SDK_PARTS:
        if (root / part).is_file():
            found.append(root / part)
            continue
        for folder, dirs, files in os.walk(root / part):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            found += [Path(folder) / n for n in sorted(files) if not n.endswith((".pyc", ".pyo"))]
    return found


def _pyproject(root: Path) -> str:
    """The SDK's own ``pyproject.toml``: the project's name, version and base dependencies (a
    bot author's ``pip install`` of it), the packages copied, no extras and no scripts."""
    source = root / "pyproject.toml"
    if not source.is_file():
        return ""
    project = tomllib.loads(source.read_text(encoding="utf-8"))["project"]
    fields = {
        "name": project["name"],
        "version": project["version"],
        "description": "The Tetromino Arena bot SDK: connect, play, test and submit a bot.",
        "requires-python": project.get("requires-python", ">=3.11"),
        "dependencies": project.get("dependencies", []),
    }
    lines = ["[build-system]", 'requires = ["setuptools>=68"]']
    lines += ['build-backend = "setuptools.build_meta"', "", "[project]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    lines += ["", "[tool.setuptools.packages.find]", 'include = ["client_sdk*", "engine*", '
              '"referee", "referee.game*"]']  # fmt: skip
    lines += ["", "[tool.setuptools.package-data]", '"*" = ["py.typed", "*.pyi"]']
    lines += ['"engine.records" = ["books/*.json"]']
    return "\n".join(lines) + "\n"


def cache_dir() -> Path:
    """:data:`CACHE_ENV`, else ``$XDG_CACHE_HOME/tetromino-arena/sdk`` (``~/.cache/...``)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tetromino-arena" / "sdk"


def sdk_wheel(cache: Path | None = None) -> Wheel:
    """The wheel of the running version: from the cache, or built now (and cached)."""
    cache = cache or cache_dir()
    root = installed_root()
    slot = cache / source_key(root)[:24]
    with _BUILDING:
        found = _cached(slot)
        if found is not None:
            return found
        _build(Path(os.environ.get(SOURCE_ENV) or root), slot)
        found = _cached(slot)
    if found is None:
        raise WheelError(f"the build left no wheel in {slot}")
    return found


def _cached(slot: Path) -> Wheel | None:
    wheels = sorted(slot.glob("*.whl")) if slot.is_dir() else []
    if not wheels:
        return None
    data = wheels[0].read_bytes()
    return Wheel(wheels[0], hashlib.sha256(data).hexdigest(), len(data))


def _build(root: Path, slot: Path) -> None:
    """Build the wheel from ``root``'s source into ``slot`` (atomically)."""
    if not (root / "pyproject.toml").is_file():
        raise WheelError(
            f"no source tree at {root} to build the SDK wheel from, and none cached in "
            f"{slot.parent}: run `referee sdk wheel` where the project's source is installed"
        )
    slot.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sdk-build-", dir=slot.parent) as work:
        source = Path(work) / "src"
        source.mkdir()
        (source / "pyproject.toml").write_text(_pyproject(root), encoding="utf-8")
        for path in _sdk_files(root):
            copy = source / path.relative_to(root)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)
        out = Path(work) / "out"
        command = [
            sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            "--no-index", "--quiet", "--wheel-dir", str(out), str(source),
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelError(f"building the SDK wheel failed: {exc}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise WheelError(f"building the SDK wheel failed: {last}")
        try:
            os.replace(out, slot)
        except OSError:
            if _cached(slot) is None:  # not another builder's finished slot: a real failure
                raise
