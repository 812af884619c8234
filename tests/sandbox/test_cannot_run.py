"""When the sandbox cannot run, one line says why and what to do, produced for real: user
namespaces switched off (``user.max_user_namespaces=0`` in a user namespace of the test's
own, the per-namespace form of the host setting), a container's seccomp profile refusing
``unshare``, no ``bwrap`` on PATH, a virtualenv folder a bot's uid cannot read. ``--no-sandbox``
reaches the load check; ``referee match --json`` prints one object when a bot cannot load;
``serve --submissions`` refuses uncontained uploads unless explicitly allowed; ``referee
doctor`` reports all of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .placed import place, placed_env, referee_argv
from .sandbox_required import require_sandbox

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
UNDER = ROOT / "tests" / "deploy" / "helpers" / "under_profile.py"
PROFILE = ROOT / "deploy" / "helm" / "tetromino" / "files" / "referee-sandbox.seccomp.json"
BOT = "client_sdk.examples.random_bot"


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("env", {**os.environ, "PYTHONPATH": str(ROOT)})
    kwargs.setdefault("cwd", ROOT)
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, **kwargs)


def _referee(*args: str) -> list[str]:
    return [sys.executable, "-m", "referee.commands.main", *args]


def _checks(stdout: str) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in json.loads(stdout)["checks"]}


def _without_user_namespaces(*argv: str) -> list[str]:
    """Run ``argv`` in a user namespace where no further one may be made."""
    script = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'
    return ["unshare", "--user", "--map-root-user", "sh", "-c", script, "sh", *argv]


def test_doctor_on_this_host_reports_every_check() -> None:
    """``referee doctor --json``: one object, every check named, the sandbox's checks working
    here (as the suite needs), exit 0."""
    require_sandbox()
    done = _run(_referee("doctor", "--json"))
    assert done.returncode == 0, done.stdout + done.stderr
    checks = _checks(done.stdout)
    assert set(checks) >= {
        "bubblewrap",
        "user namespaces",
        "seccomp filter",
        "memory cgroup",
        "per-bot uids",
        "checkout and venv for bots",
        "database",
        "chromium",
        "free disk",
    }
    for name in ("bubblewrap", "user namespaces", "seccomp filter", "checkout and venv for bots"):
        assert checks[name]["status"] == "works", checks[name]
    assert {c["status"] for c in checks.values()} <= {"works", "degraded", "broken", "skipped"}
    assert checks["database"]["status"] == "skipped"  # no --db: not looked at
    table = _run(_referee("doctor"), env={**os.environ, "COLUMNS": "200"})
    assert "checkout and venv for bots" in table.stdout and "works" in table.stdout


def test_user_namespaces_off_is_named_with_its_sysctl() -> None:
    """With user namespaces off, the match plays uncontained and says why in one line naming
    the setting and the fix; doctor marks the check broken."""
    require_sandbox()
    done = _run(_without_user_namespaces(*_referee("match", BOT, BOT, "--json")))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sandbox"] == "none"
    [line] = [x for x in done.stderr.splitlines() if "WITHOUT the sandbox" in x]
    assert "user.max_user_namespaces=0" in line and "sysctl -w" in line
    doctor = _run(_without_user_namespaces(*_referee("doctor", "--json")))
    assert doctor.returncode == 1
    found = _checks(doctor.stdout)["user namespaces"]
    assert found["status"] == "broken" and "max_user_namespaces" in found["fix"]


def test_a_container_profile_refusing_unshare_is_named(tmp_path: Path) -> None:
    """Under a seccomp profile that refuses ``unshare`` (a container runtime's default), the
    line names the seccomp filter and the profile to run with."""
    require_sandbox()
    profile = json.loads(PROFILE.read_text())
    profile["syscalls"].append(
        {"names": ["unshare", "mount"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}
    )
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps(profile))
    done = _run([sys.executable, str(UNDER), str(strict), *_referee("match", BOT, BOT)])
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stderr.splitlines() if "WITHOUT the sandbox" in x]
    assert "seccomp filter" in line and "referee-sandbox.seccomp.json" in line


def test_without_bwrap_the_line_says_how_to_install_it(tmp_path: Path) -> None:
    """No bwrap on PATH: the reason and ``apt-get install bubblewrap``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": str(tmp_path)}
    done = _run(_referee("match", BOT, BOT), env=env)
    assert done.returncode == 0, done.stderr
    assert "bwrap) is not installed; apt-get install bubblewrap" in done.stderr


@pytest.fixture
def unreadable_venv() -> Iterator[Path]:
    """A placed checkout whose virtualenv holds a package folder of mode 0700 (a venv made
    under umask 077): the python of that placement."""
    folder = Path(tempfile.mkdtemp(prefix="arena-placed-", dir="/var/tmp"))
    try:
        python = place(folder)
        packages = python.parents[1] / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        (packages / "site-packages" / "grpc").chmod(0o700)
        yield python
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_venv_a_bot_cannot_read_is_named(unreadable_venv: Path) -> None:
    """The referee (root here: its bots run as other uids) names the unreadable folder and
    the fix, and plays uncontained rather than failing every bot's load."""
    require_sandbox()
    if os.geteuid() != 0:
        pytest.fail("this test needs the suite to run as root: bots then run as other uids")
    python = unreadable_venv
    argv = referee_argv(python, "match", BOT, BOT, "--json")
    done = _run(argv, env=placed_env(python), cwd=python.parents[3])
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stderr.splitlines() if "WITHOUT the sandbox" in x]
    assert "site-packages/grpc is not readable by other users" in line and "chmod" in line


def test_no_sandbox_reaches_the_load_check(tmp_path: Path) -> None:
    """The load check runs the bot as the game will: with ``--no-sandbox`` it is uncontained
    (the bot sees ``TETROMINO_SANDBOX=none``), and ``--json`` prints one object naming the
    seat that failed to load, exit 2."""
    bot = tmp_path / "says_where.py"
    where = "os.environ['TETROMINO_SANDBOX']"
    bot.write_text(f"import os\nraise SystemExit('loaded under ' + {where})\n")
    done = _run(_referee("match", str(bot), BOT, "--json", "--no-sandbox"))
    assert done.returncode == 2
    summary = json.loads(done.stdout)
    assert summary["termination"] == "load_failure" and summary["offender"] == "RED"
    assert "loaded under none" in summary["reason"]
    assert summary["seats"]["BLUE"]["loaded"] and not summary["seats"]["RED"]["loaded"]


def test_serve_refuses_uncontained_uploads_unless_allowed(tmp_path: Path) -> None:
    """``serve --submissions --no-sandbox`` stops at start with one line naming the flag that
    would allow it."""
    db = tmp_path / "arena.db"
    args = ("serve", "--db", str(db), "--create", "--submissions", str(tmp_path / "store"))
    done = _run(_referee(*args, "--no-sandbox", "--listen", "127.0.0.1:0", "--no-web"))
    assert done.returncode != 0
    assert "--allow-unsandboxed-uploads" in done.stderr
    assert "Traceback" not in done.stderr
