"""``bench/deadline.py --web-process``: the server on PostgreSQL, the pages from ``referee web``.

The setup a class server runs when its pages must not share the server's CPU: ``referee serve``
(here: the bench's process, as in the in-process setup) writes a PostgreSQL database; the
readers and the spectators are served by a separate ``referee web --db postgresql://...``
process, which reads the same database and follows live games by ``LISTEN arena_live``
(``referee/workers/live.py``). The spectated game is published as a worker publishes its
games (``NOTIFY``), so its spectators' lag includes the database's hop.

The server process may run at a lower priority than the web process (``--server-nice``: the
server, its validation games' and the ladder's sandboxed bots inherit it), the operator's
choice documented in docs/scaling.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
#: The PostgreSQL server a scratch database is made on (as the tests' and bench/workers.py's).
ADMIN_URL = os.environ.get(
    "ARENA_TEST_PG_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextlib.contextmanager
def scratch_database(admin_url: str) -> Iterator[str]:
    """A fresh database on ``admin_url``'s server (its SQLAlchemy URL), dropped afterwards."""
    admin = make_url(admin_url).set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"arena_deadline_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        if os.environ.get("DEADLINE_KEEP_DATABASE"):  # to look at it afterwards
            print(f"kept database {name}", file=sys.stderr)
        else:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class WebProcess:
    """``referee web --db URL`` on a free port, at the priority the bench had when it started
    it (its ``url``; :meth:`stop` ends it)."""

    def __init__(self, url: str, extra: Sequence[str] = ()) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="deadline-web-")
        address_file = Path(self.folder.name) / "web.address"
        # DEADLINE_WEB_PROFILE=FILE: the web process under cProfile, its statistics in FILE.
        profile = os.environ.get("DEADLINE_WEB_PROFILE")
        command = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else [])]
        command += ["-m", "referee", "web", "--db", url]
        command += ["--listen", "127.0.0.1:0", "--address-file", str(address_file)]
        command += ["--log-level", "WARNING", *extra]
        self.proc = subprocess.Popen(command, cwd=ROOT)
        deadline = time.monotonic() + 60
        while not (address_file.exists() and address_file.read_text().endswith("\n")):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError(f"referee web did not start (exit {self.proc.poll()})")
            time.sleep(0.05)
        self.url = address_file.read_text().strip()

    async def stop(self) -> None:
        self.proc.terminate()
        try:
            await asyncio.to_thread(self.proc.wait, 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.folder.cleanup()


class NotifyHub:
    """The live hub's three calls the bench makes, sent as a worker sends its games' events
    (``NOTIFY arena_live``) to the web process's listener."""

    def __init__(self, publisher: Any) -> None:
        self.publisher = publisher

    def start(
        self, uid: str, game: str, players: Sequence[str], seat_names: Sequence[str], pos: str
    ) -> None:
        self.publisher.start_game(uid, game, players, seat_names, pos, None)

    def move(self, uid: str, move: Any) -> None:
        self.publisher.send(
            "move",
            uid,
            ply=move.ply,
            seat=move.seat,
            action=move.action,
            time_s=move.time_s,
            position=move.position,
            clocks=list(move.clocks),
        )

    def finish(self, uid: str, end: Any) -> None:
        self.publisher.end_game(uid, end)

    async def stop(self) -> None:
        await self.publisher.close()


async def open_live_game(hub: NotifyHub, web_url: str, uid: str, opening: tuple[Any, ...]) -> None:
    """Start the spectated game until the web process shows it (its ``LISTEN`` may start after
    the first ``NOTIFY``)."""
    import httpx

    async with httpx.AsyncClient(base_url=web_url, timeout=5) as client:
        for _ in range(600):
            hub.start(uid, *opening)
            await asyncio.sleep(0.1)
            if (await client.get(f"/api/live/{uid}")).status_code == 200:
                return
    raise RuntimeError(f"the web process never showed the live game {uid}")


def lower_server(niceness: int, group: Path | None) -> None:
    """This process (the server) at ``niceness`` and in ``group``: the bots it starts from
    now on inherit both."""
    renice(niceness)
    join_cpu_group(group)


def renice(niceness: int) -> None:
    """Every thread of this process (the server, and the bots it starts later) at
    ``niceness`` (Linux keeps it per thread)."""
    if niceness:
        for task in os.listdir("/proc/self/task"):
            os.setpriority(os.PRIO_PROCESS, int(task), niceness)


def at_priority_zero(*pids: int) -> None:
    """The load processes (the class's browsers, not the server) back at niceness 0 and in
    the root cpu cgroup when the bench may (as root); else they keep the server's. (Not in
    ``preexec_fn``: a fork with gRPC's threads running may crash.)"""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, 0)
        with contextlib.suppress(OSError):
            join_cpu_group(CPU_CGROUPS, pid)


#: The cgroup v1 ``cpu`` hierarchy. Its groups also take their processes out of the kernel's
#: autogroups (one per session, weighed alike whatever their niceness: a sandboxed bot leads
#: a session of its own, so its niceness does not lower it against the web process).
CPU_CGROUPS = Path("/sys/fs/cgroup/cpu")


@contextlib.contextmanager
def cpu_group(shares: int) -> Iterator[Path | None]:
    """A ``cpu`` cgroup of ``shares`` for this run (``None`` for 0), removed afterwards."""
    if not shares:
        yield None
        return
    group = CPU_CGROUPS / f"arena-deadline-{os.getpid()}"
    group.mkdir()
    try:
        (group / "cpu.shares").write_text(f"{shares}\n")
        yield group
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                join_cpu_group(CPU_CGROUPS, int(pid))
        with contextlib.suppress(OSError):  # a bot still ending: the group stays, empty soon
            group.rmdir()


def join_cpu_group(group: Path | None, pid: int = 0) -> None:
    """Move process ``pid`` (0: this one, every thread) into ``group`` (nothing for ``None``)."""
    if group is not None:
        (group / "cgroup.procs").write_text(f"{pid or os.getpid()}\n")
