"""Separate hosts on one machine: network namespaces joined by veth pairs to a bridge.

The class server, its PostgreSQL, its workers and a student's bots each get a namespace of
their own (a "host") on a private /24 that only they use; a hub namespace holds the bridge
that joins them, and the machine's own namespace gets one more leg on the bridge (the
operator's console) so a test or an operator can read the database, the web and the metrics
by address. Processes run in a host with ``ip netns exec`` and reach the others only by
address. Faults: :meth:`Hosts.cut` takes a host's link down (packets are dropped, nothing is
reset: what a pulled cable does), :meth:`Hosts.kill` SIGKILLs every process in a host.

Needs root and iproute2. Used by the tests under ``tests/hosts/`` (a fixture) and by this
file as a script, which builds the hosts, starts PostgreSQL, a server and two workers on
them, prints their addresses and tears everything down on Enter or Ctrl-C::

    sudo .venv/bin/python deploy/netns_hosts.py
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Every namespace this module makes starts so, then the pid of the process that made it.
PREFIX = "arh"
#: The private /16 the subnets are taken from; one /24 per set of hosts.
NET = "10.231"
#: The hosts of a class deployment and the last byte of each address.
ROLES = {"db": 1, "server": 2, "w1": 11, "w2": 12, "student": 21}
#: A locally administered hardware address no host uses: frames sent to it reach no one.
NOWHERE = "02:00:00:00:de:ad"
#: The machine's own leg on the bridge (the operator's console).
CONSOLE = 254
PG_BIN = Path(os.environ.get("ARENA_PG_BIN", "/usr/lib/postgresql/15/bin"))
ROOT = Path(__file__).resolve().parents[1]
_LOCK = Path("/run/arena-netns-hosts.lock")


class HostsUnavailable(RuntimeError):
    """This machine cannot make the hosts (not root, no iproute2, no PostgreSQL binaries)."""


def missing() -> str | None:
    """Why the hosts cannot be made here, or ``None``."""
    if os.geteuid() != 0:
        return "network namespaces need root (run as root, as CI does)"
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if not (PG_BIN / "initdb").exists():
        return f"no PostgreSQL binaries at {PG_BIN} (set ARENA_PG_BIN)"
    if shutil.which("runuser") is None:
        return "`runuser` is missing (initdb will not run as root)"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def _namespaces() -> list[str]:
    out = _ip("netns", "list").stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _pids(ns: str) -> list[int]:
    done = _ip("netns", "pids", ns, check=False)
    return [int(p) for p in done.stdout.split() if p.strip().isdigit()]


def _kill_namespace(ns: str, deadline_s: float = 10.0) -> None:
    """SIGKILL every process in ``ns`` until none is left (or the deadline passes)."""
    end = time.monotonic() + deadline_s
    while (pids := _pids(ns)) and time.monotonic() < end:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _delete(ns: str) -> None:
    _kill_namespace(ns)
    _ip("netns", "del", ns, check=False)


def sweep() -> list[str]:
    """Delete the namespaces of sets of hosts whose maker is dead (a crashed test run);
    the names deleted."""
    gone = []
    for ns in _namespaces():
        if not ns.startswith(PREFIX):
            continue
        owner = ns[len(PREFIX) :].split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            _delete(ns)
            gone.append(ns)
    for folder in Path("/tmp").glob(f"{PREFIX}*-pg"):
        owner = folder.name[len(PREFIX) :].split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(folder, ignore_errors=True)
    return gone


def _free_subnet(start: int) -> int:
    """A third byte whose 10.231.N.0/24 no route of this machine uses yet."""
    used = _ip("route", "show").stdout
    for step in range(250):
        n = (start + step) % 250 + 1
        if f"{NET}.{n}." not in used:
            return n
    raise HostsUnavailable(f"every {NET}.N.0/24 is in use")


@dataclass
class Hosts:
    """One set of hosts; :meth:`up` makes them, :meth:`down` removes every trace."""

    workdir: Path
    tag: str = field(default_factory=lambda: str(os.getpid()))
    subnet: int = 0
    made: list[str] = field(default_factory=list)
    procs: dict[str, list[subprocess.Popen[bytes]]] = field(default_factory=dict)

    def ns(self, role: str) -> str:
        return f"{PREFIX}{self.tag}-{role}"

    def addr(self, role: str) -> str:
        last = CONSOLE if role == "console" else ROLES[role]
        return f"{NET}.{self.subnet}.{last}"

    @property
    def cidr(self) -> str:
        return f"{NET}.{self.subnet}.0/24"

    def up(self) -> None:
        """Make the hub with its bridge, a namespace per role on it, and the console's leg."""
        if reason := missing():
            raise HostsUnavailable(reason)
        self.workdir.mkdir(parents=True, exist_ok=True)
        hub = self.ns("hub")
        with _LOCK.open("w") as lock:
            # Parallel test runs pick their subnets one at a time, so no two share one.
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = _free_subnet(os.getpid() % 250)
            self._make(hub)
            _ip("-n", hub, "link", "add", "br0", "type", "bridge")
            _ip("-n", hub, "link", "set", "br0", "up")
            for role in ROLES:
                self._make(self.ns(role))
                self._leg(role, self.ns(role), "eth0")
            self._leg("console", None, f"{PREFIX}{self.tag}c"[:15])

    def _make(self, ns: str) -> None:
        _ip("netns", "add", ns)
        self.made.append(ns)
        _ip("-n", ns, "link", "set", "lo", "up")

    def _leg(self, role: str, ns: str | None, dev: str) -> None:
        """A veth from ``ns`` (None: this machine) to the bridge; the hub's end is ``p-ROLE``."""
        hub = self.ns("hub")
        where = ["netns", ns] if ns else []
        _ip("link", "add", dev, *where, "type", "veth", "peer", "name", f"p-{role}", "netns", hub)
        _ip("-n", hub, "link", "set", f"p-{role}", "master", "br0", "up")
        inside = ["-n", ns] if ns else []
        _ip(*inside, "addr", "add", f"{self.addr(role)}/24", "dev", dev)
        _ip(*inside, "link", "set", dev, "up")

    def run(
        self,
        role: str,
        argv: Sequence[str],
        log: Path,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` inside ``role``'s namespace, its output to ``log``."""
        prefix = ["ip", "netns", "exec", self.ns(role)]
        if user:
            prefix += ["runuser", "-u", user, "--"]
        full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [*prefix, *argv], stdout=out, stderr=subprocess.STDOUT, env=full
            )
        self.procs.setdefault(role, []).append(proc)
        return proc

    def cut(self, role: str) -> None:
        """Take ``role``'s link down: its packets are dropped from now on."""
        _ip("-n", self.ns("hub"), "link", "set", f"p-{role}", "down")

    def heal(self, role: str) -> None:
        """Bring ``role``'s link back."""
        _ip("-n", self.ns("hub"), "link", "set", f"p-{role}", "up")

    def partition(self, role: str, other: str) -> None:
        """Drop every packet ``role`` sends to ``other``, its other links staying up: ``other``'s
        address is pinned to a hardware address no host has, so the bridge delivers the frames
        to no one (this machine's kernel may lack tc's classifiers)."""
        pin = ["neigh", "replace", self.addr(other), "lladdr", NOWHERE, "dev", "eth0"]
        _ip("-n", self.ns(role), *pin, "nud", "permanent")

    def unpartition(self, role: str, other: str) -> None:
        """Undo :meth:`partition` (nothing happens when there is none)."""
        _ip("-n", self.ns(role), "neigh", "del", self.addr(other), "dev", "eth0", check=False)

    def pids(self, role: str) -> list[int]:
        """Every process running in ``role``'s namespace."""
        return _pids(self.ns(role))

    def kill(self, role: str) -> None:
        """The host dies: SIGKILL every process in its namespace."""
        _kill_namespace(self.ns(role))
        for proc in self.procs.get(role, []):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)

    def down(self) -> None:
        """Kill every process of every host and delete the namespaces (veths go with them)."""
        for ns in reversed(self.made):
            _delete(ns)
        self.made.clear()
        for procs in self.procs.values():
            for proc in procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5)


@dataclass
class Postgres:
    """A PostgreSQL cluster of its own on the database host, listening on its address."""

    hosts: Hosts
    datadir: Path

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@{self.hosts.addr('db')}:5432/arena"

    def init(self) -> None:
        # The cluster's folder is the postgres user's, outside the caller's (pytest's are
        # 0700 root), and goes with the hosts.
        self.datadir.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        shutil.chown(self.datadir.parent, "postgres", "postgres")
        self.datadir.mkdir(mode=0o700, exist_ok=True)
        shutil.chown(self.datadir, "postgres", "postgres")
        run = ["runuser", "-u", "postgres", "--"]
        subprocess.run(
            [
                *run,
                str(PG_BIN / "initdb"),
                "-D",
                str(self.datadir),
                "-A",
                "trust",
                "-U",
                "postgres",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        with (self.datadir / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '{self.hosts.addr('db')}'\n"
                f"unix_socket_directories = '{self.datadir}'\n"
                "max_connections = 200\nfsync = off\nsynchronous_commit = off\n"
                "full_page_writes = off\n"
            )
        with (self.datadir / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {self.hosts.cidr} trust\n")

    def start(self) -> None:
        """Start the server in the database host and wait until it accepts connections."""
        log = self.datadir.parent / "postgres.log"
        proc = self.hosts.run(
            "db",
            [str(PG_BIN / "pg_ctl"), "-D", str(self.datadir), "-l", str(log), "-w", "start"],
            self.datadir.parent / "pg_ctl.log",
            user="postgres",
        )
        if proc.wait(120) != 0:
            raise HostsUnavailable(f"PostgreSQL did not start: {log.read_text()[-2000:]}")

    def create_database(self) -> None:
        psql = [str(PG_BIN / "psql"), "-h", self.hosts.addr("db"), "-U", "postgres"]
        subprocess.run([*psql, "-c", "CREATE DATABASE arena"], check=True, capture_output=True)

    def ready(self) -> bool:
        """Whether the server accepts connections on its address."""
        check = [str(PG_BIN / "pg_isready"), "-q", "-t", "2", "-h", self.hosts.addr("db")]
        return subprocess.run(check, check=False, timeout=30).returncode == 0

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            [
                "runuser",
                "-u",
                "postgres",
                "--",
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(self.datadir),
                "-m",
                mode,
                "-w",
                "stop",
            ],
            check=False,
            capture_output=True,
            timeout=60,
        )


@contextlib.contextmanager
def hosts_with_postgres(workdir: Path) -> Iterator[tuple[Hosts, Postgres]]:
    """The hosts made and PostgreSQL running on its host with an empty ``arena`` database;
    everything torn down afterwards, also after an exception."""
    sweep()
    hosts = Hosts(workdir)
    try:
        hosts.up()
        pg = Postgres(hosts, _pg_folder(hosts.tag) / "data")
        pg.init()
        pg.start()
        pg.create_database()
        yield hosts, pg
    finally:
        hosts.down()
        shutil.rmtree(_pg_folder(hosts.tag), ignore_errors=True)


def _pg_folder(tag: str) -> Path:
    return Path("/tmp") / f"{PREFIX}{tag}-pg"


def _demo() -> None:
    import tempfile

    python = [sys.executable, "-m", "referee.commands.main"]
    with (
        tempfile.TemporaryDirectory(prefix="arena-hosts-") as tmp,
        hosts_with_postgres(Path(tmp)) as (hosts, pg),
    ):
        work = Path(tmp)
        server = hosts.addr("server")
        hosts.run(
            "server",
            [
                *python,
                "serve",
                "--db",
                pg.url,
                "--listen",
                f"{server}:50051",
                "--web",
                f"{server}:8080",
                "--metrics-listen",
                f"{server}:9100",
            ],
            work / "server.log",
        )
        for w in ("w1", "w2"):
            hosts.run(w, [*python, "worker", "--db", pg.url, "--name", w], work / f"{w}.log")
        print(f"database  {pg.url}")
        print(f"server    {server}:50051  web http://{server}:8080  metrics :9100")
        print(f"workers   {hosts.addr('w1')} {hosts.addr('w2')}; student {hosts.addr('student')}")
        print(f"logs in   {work}; run a command on a host: ip netns exec {hosts.ns('student')} ...")
        with contextlib.suppress(KeyboardInterrupt, EOFError):
            input("Enter tears it all down: ")


if __name__ == "__main__":
    if reason := missing():
        sys.exit(f"netns_hosts: {reason}")
    _demo()
