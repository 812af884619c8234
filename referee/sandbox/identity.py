"""The unprivileged host identity a sandboxed bot runs as when the referee is root.

bubblewrap maps the bot's in-sandbox user (1000) to the *real* uid that started it. Started by
a root referee, that is host uid 0: a kernel escape from the user namespace would land as root.
So a root referee starts bwrap (through the exec shim, after the cgroups are joined) as a fresh
uid and gid from a reserved range, one per launch, in no supplementary group. That uid owns the
bot's per-game copy and nothing else on the host; other bots (other uids) cannot read it.

bwrap resolves every bind source with that uid's permissions, so a host path under a folder it
cannot search (a checkout or a pyenv in ``/root``, mode 0700) cannot be mounted by it. Such a
path is *staged*: the shim, still root, bind-mounts it read-only onto an empty stage point in
the bot's own folder, in a mount namespace of the bot's own (gone with its last process), and
bwrap mounts the stage point where the bot sees it. Nothing on the host changes: no copy, no
link, no permission; the files themselves must still be readable by others (mode ``o+r``), as
in any installation made with the usual umask.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BOT_UID_BASE", "BOT_UID_COUNT", "HostIdentity", "bot_uid", "reachable"]

#: Reserved range of host uids/gids for bots (far above any login or system account).
BOT_UID_BASE = 1_900_000_000
BOT_UID_COUNT = 1_000_000


@dataclass
class HostIdentity:
    """Who a root referee's bot becomes on the host, and what root mounts for it first."""

    uid: int
    #: (host source, stage point) pairs the shim bind-mounts read-only before becoming ``uid``.
    stage: list[tuple[str, str]] = field(default_factory=list)

    def source(self, path: Path, folder: Path) -> Path:
        """What bwrap (as ``uid``) binds for ``path``: itself when any user can reach it, else
        a new stage point under ``folder`` (which the caller gives to ``uid`` afterwards)."""
        if reachable(path):
            return path
        if "\n" in str(path):
            raise OSError(f"cannot mount {path!r} into the sandbox: its name holds a newline")
        stage = folder / "stage"
        stage.mkdir(exist_ok=True)
        point = stage / str(len(self.stage))
        if path.is_dir():
            point.mkdir()
        else:
            point.touch()
        self.stage.append((str(path), str(point)))
        return point

    def stage_argument(self) -> str:
        """The shim's STAGE argument: SOURCE and TARGET lines, pair after pair."""
        return "\n".join(line for pair in self.stage for line in pair)


def bot_uid() -> int | None:
    """A fresh uid (also used as gid) for one bot, or ``None`` when the referee is not root
    (then bwrap already maps the bot to the referee's own unprivileged uid)."""
    if os.geteuid() != 0:
        return None
    return BOT_UID_BASE + secrets.randbelow(BOT_UID_COUNT)


def reachable(path: Path) -> bool:
    """Whether any unprivileged user can reach (search every folder of) and read ``path``."""
    path = Path(os.path.abspath(path))
    try:
        for folder in [*reversed(path.parents)]:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
        mode = os.stat(path).st_mode
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need
