"""Any laptop: the SDK's code path (connect, play, submit, mine, play locally) imports no
POSIX-only module and calls no POSIX-only function, so it runs on Windows as on Linux.

Checked twice: in a fresh interpreter where our own code is refused every POSIX-only module
(as on Windows; the standard library and psutil still choose their own platform modules) while
it goes down the whole path, and by reading the source of every module of ours that path
loaded, for imports and calls a Windows Python does not have."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Standard-library modules that exist only on POSIX systems.
POSIX_MODULES = frozenset(
    {"fcntl", "resource", "pwd", "grp", "termios", "tty", "pty", "posix", "crypt", "spwd",
     "syslog", "nis", "pipes", "posixpath"}
)  # fmt: skip
#: ``os`` and ``signal`` names a Windows Python does not have.
POSIX_CALLS = frozenset(
    {"fork", "forkpty", "killpg", "setsid", "setpgrp", "getpgid", "getuid", "geteuid",
     "getgid", "getegid", "setuid", "setgid", "wait3", "wait4", "sysconf", "nice", "getloadavg",
     "uname", "chown", "mkfifo", "WNOHANG", "O_NONBLOCK", "SIGKILL", "SIGALRM", "alarm",
     "setitimer", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPIPE", "SIGQUIT", "SIGSTOP",
     "pthread_kill", "getrusage"}
)  # fmt: skip

#: Goes down the SDK's path with POSIX-only modules refused to our code; prints what it loaded.
_WALK = """
import json, sys
from pathlib import Path
OURS = tuple(str(Path(p).resolve()) for p in sys.argv[1:4])
BLOCKED = set(sys.argv[4].split(","))
refused = []

class NotOnWindows:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in BLOCKED:
            return None
        frame = sys._getframe(1)
        while frame is not None and "importlib" in frame.f_code.co_filename:
            frame = frame.f_back
        where = str(Path(frame.f_code.co_filename).resolve()) if frame else ""
        if where.startswith(OURS):
            refused.append(f"{name} imported by {where}")
            raise ImportError(f"No module named {name!r} (not on Windows)")
        return None

sys.meta_path.insert(0, NotOnWindows())
import client_sdk, client_sdk.__main__, client_sdk.testing
from client_sdk import _child, _match, _mine, _play, _procbot, _starter, _submit
from client_sdk._session import Session
from client_sdk._loader import load_bot
from client_sdk.testing import play_local
import referee.game, engine.records.openings
from engine.records import write_record

game = play_local("client_sdk.examples.greedy_bot", "course-random")
_submit.pack("client_sdk/examples/course_random")
Session(load_bot("client_sdk.examples.random_bot"), "example.org", "")
_mine  # its parser is built on use
code = _play.play_main(["client_sdk.examples.random_bot", "--json", "--record", sys.argv[5]])
ours = sorted(
    m.__file__ for m in list(sys.modules.values())
    if getattr(m, "__file__", None) and str(Path(m.__file__).resolve()).startswith(OURS)
)
print(json.dumps({"refused": refused, "modules": ours, "verdict": str(game.verdict), "code": code}))
"""


def _walk(tmp_path: Path) -> dict[str, object]:
    roots = [str(REPO / p) for p in ("client_sdk", "engine", "referee")]
    done = subprocess.run(
        [sys.executable, "-c", _WALK, *roots, ",".join(sorted(POSIX_MODULES)),
         str(tmp_path / "g.pgn")],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _posix_uses(path: Path) -> list[str]:
    """Imports of POSIX-only modules and uses of POSIX-only os/signal names in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name.partition(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module.partition(".")[0]]
        found += [f"{path.name}:{node.lineno} imports {n}" for n in names if n in POSIX_MODULES]
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("os", "signal", "resource")
            and node.attr in POSIX_CALLS
        ):
            found.append(f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}")
    return found


@pytest.mark.slow
def test_the_sdk_path_needs_no_posix_only_module_or_call(tmp_path: Path) -> None:
    """Refused every POSIX-only module, our code still connects (a session), plays locally
    (in process and with bot processes), packs an upload and writes a record; and none of
    the modules it loaded imports or calls anything POSIX-only."""
    walked = _walk(tmp_path)
    assert walked["refused"] == [], walked["refused"]
    assert walked["verdict"] in ("normal", "turn_limit") and walked["code"] == 0
    modules = [Path(p) for p in walked["modules"]]  # type: ignore[attr-defined]
    names = {p.name for p in modules}
    assert {"_procbot.py", "_session.py", "_submit.py", "_metrics.py", "adjudicator.py"} <= names
    problems = [use for path in modules for use in _posix_uses(path)]
    child = REPO / "client_sdk" / "_child.py"
    problems += _posix_uses(child)
    assert problems == [], problems
    assert (tmp_path / "g.pgn").read_text(encoding="utf-8").startswith("[Event")
