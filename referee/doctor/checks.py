"""The checks of ``referee doctor``: each looks at one thing the referee uses on this host and
says whether it works, is degraded (the referee runs, with less: said how) or is broken, and
the fix. :data:`CHECKS` is the list, in the order shown; a new check is one function added
there (it takes the :class:`Context` and returns a :class:`Check`)."""

from __future__ import annotations

import enum
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from referee.sandbox import hostcheck

if TYPE_CHECKING:
    from referee.submissions.build import Toolchains

__all__ = ["CHECKS", "Check", "Context", "Status", "run_checks"]


class Status(enum.StrEnum):
    WORKS = "works"
    DEGRADED = "degraded"
    BROKEN = "broken"
    #: Not looked at (the database when no ``--db`` is given): neither good nor bad news.
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the doctor's table."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return {k: str(v) for k, v in asdict(self).items()}


@dataclass(frozen=True, slots=True)
class Context:
    """What the checks are given: the database named by ``--db``, if any."""

    db: str | None = None


def _bwrap(_: Context) -> Check:
    path = shutil.which("bwrap")
    if path is None:
        return Check(
            "bubblewrap",
            Status.BROKEN,
            "bwrap is not on PATH: launched bots would run without the sandbox",
            "apt-get install bubblewrap",
        )
    return Check("bubblewrap", Status.WORKS, path)


def _namespaces(_: Context) -> Check:
    from referee.sandbox.isolation import probe

    name = "user namespaces"
    if shutil.which("bwrap") is None:
        return Check(name, Status.BROKEN, "not tried: no bwrap", "apt-get install bubblewrap")
    settings = [
        f"{key}={value}"
        for key in (
            "kernel.unprivileged_userns_clone",
            "kernel.apparmor_restrict_unprivileged_userns",
            "user.max_user_namespaces",
        )
        if (value := hostcheck.sysctl(key)) is not None
    ]
    blocker = hostcheck.userns_blocker()
    support = probe()
    if blocker is not None or (not support.available and "namespace" in support.reason):
        found = blocker or hostcheck.Finding(support.reason, support.fix)
        return Check(name, Status.BROKEN, found.reason, found.fix)
    return Check(name, Status.WORKS, ", ".join(settings) or "bwrap makes them")


def _seccomp(_: Context) -> Check:
    from referee.sandbox import seccomp

    outer = hostcheck.seccomp_mode() == 2
    note = "; this process runs under a seccomp filter too (a container?)" if outer else ""
    if not seccomp.seccomp_available():
        return Check(
            "seccomp filter",
            Status.BROKEN,
            "the bots' filter cannot be built (pyseccomp/libseccomp2)" + note,
            "apt-get install libseccomp2; .venv/bin/pip install pyseccomp",
        )
    return Check("seccomp filter", Status.WORKS, "the bots' filter compiles" + note)


def _cgroups(_: Context) -> Check:
    from referee.sandbox.cgroups import detect_cgroup_parent

    parent = detect_cgroup_parent()
    if parent is None:
        return Check(
            "memory cgroup",
            Status.DEGRADED,
            "no writable memory cgroup (v2 delegated or v1): memory is measured by polling "
            "each bot's resident memory, and records say memory_measured_by rss_poll",
            "run the referee as root, or under systemd with Delegate=yes (deploy/referee.service)",
        )
    kind = "v2, delegated" if parent.version == 2 else "v1 memory hierarchy"
    return Check("memory cgroup", Status.WORKS, f"{kind}, writable: {parent.path}")


def _bot_uids(_: Context) -> Check:
    import pwd

    from referee.sandbox.identity import BOT_UID_BASE, BOT_UID_COUNT

    span = f"{BOT_UID_BASE}-{BOT_UID_BASE + BOT_UID_COUNT - 1}"
    if os.geteuid() != 0:
        return Check(
            "per-bot uids",
            Status.DEGRADED,
            f"the referee is not root: bots run as its own uid {os.geteuid()} (in their "
            "user namespace), not one uid each",
            "run the referee as root: it gives each bot a uid of its own and never root",
        )
    taken = [u.pw_name for u in pwd.getpwall() if 0 <= u.pw_uid - BOT_UID_BASE < BOT_UID_COUNT]
    if taken:
        return Check(
            "per-bot uids",
            Status.BROKEN,
            f"accounts inside the bots' uid range {span}: {', '.join(taken[:5])}",
            "move those accounts out of the range",
        )
    return Check("per-bot uids", Status.WORKS, f"range {span} free; one fresh uid per bot")


def _reachable(_: Context) -> Check:
    from referee.sandbox.botcode import PLATFORM
    from referee.sandbox.isolation import probe
    from referee.sandbox.jail import PLATFORM_PARTS, python_roots

    name = "checkout and venv for bots"
    support = probe()  # its last step: a sandboxed Python as a bot, reading them
    if not support.available:
        if hostcheck.PYTHON_FAILURE in support.reason:
            return Check(name, Status.BROKEN, support.reason, support.fix)
        return Check(name, Status.BROKEN, f"not tried: {support.reason}", support.fix)
    where = ", ".join([*(str(h) for _, h in python_roots()), str(PLATFORM / PLATFORM_PARTS[0])])
    who = "a bot's uid" if os.geteuid() == 0 else "this user"
    return Check(name, Status.WORKS, f"sandboxed Python as {who} reads {where}")


def _database(context: Context) -> Check:
    if not context.db:
        return Check("database", Status.SKIPPED, "not checked: give --db URL to check one")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from referee.storage.db import sqlite_url
    from referee.storage.failures import describe

    url = make_url(context.db if "://" in context.db else sqlite_url(context.db))
    if url.get_backend_name() != "postgresql":
        folder = Path(url.database or ".").parent
        if os.access(folder, os.W_OK):
            return Check("database", Status.WORKS, f"SQLite in {folder} (writable)")
        return Check("database", Status.BROKEN, f"{folder} is not writable", "pick another path")
    engine = create_engine(url, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            version = connection.execute(text("show server_version")).scalar()
    except Exception as exc:  # any driver failure is the answer, said in one line
        why = describe(exc, url.render_as_string(hide_password=True)) or str(exc).splitlines()[0]
        return Check("database", Status.BROKEN, why, "start it, or fix --db (docs/storage.md)")
    finally:
        engine.dispose()
    return Check("database", Status.WORKS, f"PostgreSQL {version}")


def _chromium(_: Context) -> Check:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return Check("chromium", Status.WORKS, f"{path} (the browser tests drive it)")
    return Check(
        "chromium",
        Status.DEGRADED,
        "not found: only the web front's browser tests need it",
        "apt-get install chromium",
    )


#: Free space below which games and records may fail to be written.
_LOW_DISK = 1 << 30
_FULL_DISK = 100 << 20


def _disk(_: Context) -> Check:
    folders = {tempfile.gettempdir(), os.getcwd()}
    worst = min((shutil.disk_usage(f).free, f) for f in folders)
    free, folder = worst
    detail = f"{free / (1 << 30):.1f} GB free in {folder}"
    if free < _FULL_DISK:
        return Check("free disk", Status.BROKEN, detail, "free some space")
    if free < _LOW_DISK:
        return Check("free disk", Status.DEGRADED, detail, "free some space")
    return Check("free disk", Status.WORKS, detail)


def _leftovers(_: Context) -> Check:
    from referee.sandbox.leftovers import leftover_check

    fine, detail = leftover_check()
    if fine:
        return Check("leftover game folders", Status.WORKS, detail)
    fix = "start any referee command (it removes them), or delete those folders"
    return Check("leftover game folders", Status.DEGRADED, detail, fix)


def _uploads_in_other_languages(_: Context, tools: Toolchains | None = None) -> Check:
    from referee.submissions.build import Toolchains, cannot_build

    name = "C++ and JavaScript uploads"
    tools = tools or Toolchains()
    reasons = [why for lang in ("cpp", "javascript") if (why := cannot_build(lang, tools))]
    if not reasons:
        return Check(name, Status.WORKS, "the server builds both (clients/cpp/build, clients/js)")
    fix = "; ".join(why.rsplit("(", 1)[-1].rstrip(")") for why in reasons)
    detail = "; ".join(why.split(" (", 1)[0].removeprefix("this server ") for why in reasons)
    return Check(name, Status.DEGRADED, f"{detail}: such uploads stay validating", fix)


#: Every check, in the order shown (add one here: a function of the Context to a Check).
CHECKS: list[Callable[[Context], Check]] = [
    _bwrap,
    _namespaces,
    _seccomp,
    _cgroups,
    _bot_uids,
    _reachable,
    _database,
    _chromium,
    _uploads_in_other_languages,
    _disk,
    _leftovers,
]


def run_checks(context: Context) -> list[Check]:
    """Run every check; one that raises is reported broken with its error, never a traceback."""
    results: list[Check] = []
    for check in CHECKS:
        try:
            results.append(check(context))
        except Exception as exc:  # a check's own failure is a finding, not a crash
            name = check.__name__.strip("_").replace("_", " ")
            results.append(Check(name, Status.BROKEN, f"the check failed: {exc}", ""))
    return results
