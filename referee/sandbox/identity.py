"""The unprivileged host identity a sandboxed bot runs as when the referee is root.

bubblewrap maps the bot's in-sandbox user (1000) to the *real* uid that started it. Started by
a root referee, that is host uid 0: a kernel escape from the user namespace would land as root.
So a root referee starts bwrap (through the exec shim, after the cgroups are joined) as a fresh
uid and gid from a reserved range, one per launch, in no supplementary group. That uid owns the
bot's per-game copy and nothing else on the host; other bots (other uids) cannot read it.

bwrap resolves every bind source with that uid's permissions, so each host path the sandbox
mounts must be reachable by an unprivileged user. A Python installation under a private folder
(``/root/.pyenv``) is not: :func:`host_source` then offers a hard-link mirror of it in a
world-readable cache folder (same files, reachable directories), mounted at the original path.
"""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
import shutil
import stat
from pathlib import Path

from referee.telemetry.logs import get_logger

__all__ = ["BOT_UID_BASE", "BOT_UID_COUNT", "MIRROR_ROOT", "bot_uid", "host_source", "reachable"]

log = get_logger("referee.sandbox.identity")

#: Reserved range of host uids/gids for bots (far above any login or system account).
BOT_UID_BASE = 1_900_000_000
BOT_UID_COUNT = 1_000_000
#: Where mirrors of unreachable host folders live (next to the temp folder: same filesystem).
MIRROR_ROOT = Path(os.environ.get("TETROMINO_SANDBOX_MIRROR", "/var/tmp/arena-sandbox-mirror"))


def bot_uid() -> int | None:
    """A fresh uid (also used as gid) for one bot, or ``None`` when the referee is not root
    (then bwrap already maps the bot to the referee's own unprivileged uid)."""
    if os.geteuid() != 0:
        return None
    return BOT_UID_BASE + secrets.randbelow(BOT_UID_COUNT)


def reachable(path: Path) -> bool:
    """Whether any unprivileged user can reach (search every folder of) and read ``path``."""
    path = Path(os.path.abspath(path))
    for folder in [*reversed(path.parents)]:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(path).st_mode
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


def host_source(path: Path) -> Path | None:
    """What to bind for ``path`` so an unprivileged bwrap can: ``path`` itself when reachable,
    else a hard-link mirror of it (made once per process); ``None`` if neither works."""
    if reachable(path):
        return path
    return _mirror(str(path))


@functools.cache
def _mirror(source: str) -> Path | None:
    key = hashlib.sha256(f"{source}:{os.stat(source).st_mtime_ns}".encode()).hexdigest()[:16]
    target = MIRROR_ROOT / key
    if (target / ".complete").exists():
        return target
    try:
        MIRROR_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chmod(MIRROR_ROOT, 0o755)
        building = MIRROR_ROOT / f".{key}.{os.getpid()}"
        shutil.rmtree(building, ignore_errors=True)
        shutil.copytree(source, building, symlinks=True, copy_function=os.link)
        os.chmod(building, 0o755)
        (building / ".complete").touch()
        try:
            os.rename(building, target)
        except OSError:  # another referee made it meanwhile
            shutil.rmtree(building, ignore_errors=True)
    except OSError as exc:
        log.warning("sandbox_mirror_failed", source=source, error=str(exc))
        return None
    return target if reachable(target) else None
