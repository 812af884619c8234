"""Attack bots for the sandbox tests: each class tries one way out of its sandbox when it is
created, prints ``ATTACK <name>: BLOCKED <why>`` or ``ATTACK <name>: ESCAPED <what>`` for each
attempt, then plays random legal moves. ``targets.json`` beside this file (written by the test
into the bot's folder) names the host paths, variable, port and pid to go after."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import random
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from client_sdk import Agent, Clocks
from engine.game import State

TARGETS: dict[str, Any] = json.loads((Path(__file__).parent / "targets.json").read_text())
_libc = ctypes.CDLL(None, use_errno=True)


def report(name: str, escaped: bool, detail: str) -> None:
    print(f"ATTACK {name}: {'ESCAPED' if escaped else 'BLOCKED'} {detail}", file=sys.stderr)


class AttackBot(Agent):
    """Runs :meth:`attack` once, then plays random legal moves."""

    name = "attacker"

    def __init__(self) -> None:
        self.rng = random.Random(7)
        try:
            self.attack()
        except Exception as exc:  # an attack that blew up is reported, the game goes on
            print(f"ATTACK {type(self).__name__}: ERROR {exc!r}", file=sys.stderr)
        print(f"ATTACKS DONE {type(self).__name__}", file=sys.stderr)

    def attack(self) -> None:
        raise NotImplementedError

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        return self.rng.choice(list(state.legal_moves))


def try_read(name: str, path: str) -> None:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        report(name, False, f"{path}: {exc.strerror}")
    else:
        report(name, True, f"{path}: read {len(data)} bytes")


class ReadFiles(AttackBot):
    """/etc/shadow, the referee's database, the opponent's source, the referee's code."""

    def attack(self) -> None:
        try_read("shadow", "/etc/shadow")
        try_read("database", TARGETS["database"])
        try_read("opponent_source", TARGETS["opponent_source"])
        try_read("referee_code", TARGETS["referee_code"])
        for guess in ("/bots/../opponent/__init__.py", "/work", "/home", "/root/.bash_history"):
            try_read("guess", guess)


class ReadEnvironment(AttackBot):
    """The referee's environment: a secret variable set in the referee's process."""

    def attack(self) -> None:
        secret = TARGETS["secret_value"]
        leaked = [k for k, v in os.environ.items() if secret in v]
        report("environ", bool(leaked), f"variables holding the secret: {leaked}")
        report("environ_names", False, " ".join(sorted(os.environ)))
        for pid in _pids():
            try:
                data = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if secret.encode() in data:
                report("proc_environ", True, f"pid {pid} holds the secret")
                return
        report("proc_environ", False, "no visible process holds the secret")


class HostPaths(AttackBot):
    """The referee's installation as the sandbox's processes show it: every visible process's
    command line and environment (its own, the shell's, the sandbox's init) and sys.path."""

    def attack(self) -> None:
        host = [p for p in TARGETS["host_paths"] if p]
        for pid in ["self", *map(str, _pids())]:
            for part in ("cmdline", "environ"):
                try:
                    data = Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace")
                except OSError as exc:
                    report(f"proc_{part}", False, f"/proc/{pid}/{part}: {exc.strerror}")
                    continue
                shown = [p for p in host if p in data]
                text = data.replace("\0", " ")[:300]
                report(f"proc_{part}", bool(shown), f"/proc/{pid}/{part}: {shown or text}")
        shown = [p for p in host if any(p in entry for entry in [sys.executable, *sys.path])]
        report("sys_path", bool(shown), f"{sys.executable} {sys.path}")


class HostMounts(AttackBot):
    """The mount table as the sandbox's processes see it (a bind mount names its source's
    path there) and the virtualenv's own record of where it was made: no host path shows."""

    def attack(self) -> None:
        host = [p for p in TARGETS["mount_paths"] if p]
        tables = ["/proc/self/mountinfo", "/proc/1/mountinfo", "/proc/self/mounts"]
        tables += [f"/proc/{pid}/mountinfo" for pid in _pids()]
        for table in [*tables, "/opt/venv/pyvenv.cfg"]:
            try:
                text = Path(table).read_text()
            except OSError as exc:
                report("mount_table", False, f"{table}: {exc.strerror}")
                continue
            words = text.split()
            shown = sorted(
                {p for p in host for w in words if w == p or w.startswith(p.rstrip("/") + "/")}
            )
            report("mount_table", bool(shown), f"{table}: {shown or len(text)} ")


def _pids() -> list[int]:
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


class ReadTokens(AttackBot):
    """Tokens on other processes' command lines, environments and open files."""

    def attack(self) -> None:
        own = Path(os.environ.get("TETROMINO_TOKEN_FILE", "/nonexistent")).read_text().strip()
        found = []
        for pid in _pids():
            for part in ("cmdline", "environ"):
                try:
                    data = Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace")
                except OSError:
                    continue
                if own in data:
                    found.append(f"own token in /proc/{pid}/{part}")
        report("own_token_exposed", bool(found), "; ".join(found) or "on no command line")
        report("pids_visible", len(_pids()) > 4, f"{_pids()}")


class Signals(AttackBot):
    """SIGSTOP/SIGKILL the referee, the opponent (by pid), every pid, and the parent."""

    def attack(self) -> None:
        for label, pid in (
            ("referee", TARGETS["referee_pid"]),
            ("opponent", TARGETS["opponent_pid"]),
        ):
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except OSError as exc:
                    report(f"kill_{label}", False, f"pid {pid}: {exc.strerror}")
                else:
                    report(f"kill_{label}", pid not in _pids(), f"pid {pid} signalled {sig}")
        hit = []
        # Its own threads answer kill() too, and pid 1 is its own sandbox's init.
        own = {1, *(int(t) for t in os.listdir("/proc/self/task"))}
        for pid in range(1, 4096):
            if pid in own:
                continue
            try:
                os.kill(pid, 0)
            except OSError:
                continue
            hit.append(pid)
        report("other_pids", bool(hit), f"signalable beyond its own: {hit}")
        try:
            os.kill(os.getppid(), signal.SIGKILL)
            os.kill(1, signal.SIGKILL)
            os.kill(-1, signal.SIGKILL)  # everything it may signal, except itself
        except OSError as exc:
            report("kill_parent", False, exc.strerror or "")
        time.sleep(0.2)
        report("kill_parent", False, f"still here, parent {os.getppid()}")


class Writes(AttackBot):
    """Write outside the scratch; then fill the scratch."""

    def attack(self) -> None:
        for path in (
            "/evil",
            "/usr/evil",
            "/bots/evil",
            "/opt/arena/evil",
            "/etc/evil",
            TARGETS["database"],
            TARGETS["opponent_source"],
            "/run/arena/token",
        ):
            try:
                with open(path, "a") as handle:
                    handle.write("pwned")
            except OSError as exc:
                report("write", False, f"{path}: {exc.strerror}")
            else:
                report("write", True, path)
        with open("/tmp/ok", "w") as handle:
            handle.write("scratch works")
        # Past the scratch's 64 MB is an escape (shared memory stops sooner than the scratch).
        for name, folder in (("fill_scratch", "/tmp"), ("fill_shm", "/dev/shm")):
            fill(name, f"{folder}/fill", 256 << 20)


def fill(name: str, path: str, most: int) -> None:
    """Write ``path`` until refused, up to ``most`` bytes (reaching them is an escape)."""
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        with open(path, "wb") as handle:
            while written < most:
                handle.write(chunk)
                handle.flush()
                written += len(chunk)
    except OSError as exc:
        report(name, False, f"{exc.strerror} after {written >> 20} MB")
    else:
        report(name, True, f"wrote {written >> 20} MB to {path}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


class ForkBomb(AttackBot):
    """Start processes (small ones, so the task cap is reached before the memory limit)
    until refused, then clean up and play."""

    def attack(self) -> None:
        children = []
        try:
            for _ in range(5000):
                children.append(os.posix_spawn("/bin/sleep", ["sleep", "60"], {}))
        except OSError as exc:
            report("fork_bomb", False, f"{exc.strerror} after {len(children)} processes")
        else:
            report("fork_bomb", True, f"{len(children)} processes")
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


class CopyBomb(AttackBot):
    """A real fork bomb: copies of itself (the whole interpreter, shared copy-on-write) until
    the process cap refuses one; then it dies of it, as a fork bomb does."""

    def attack(self) -> None:
        children = 0
        while True:
            try:
                pid = os.fork()
            except OSError as exc:
                report("fork_bomb", False, f"{exc.strerror} after {children} copies")
                sys.stderr.flush()
                os._exit(1)
            if pid == 0:
                while True:
                    signal.pause()
            children += 1


class Network(AttackBot):
    """TCP to the referee's port and PostgreSQL, listening, raw and packet sockets."""

    def attack(self) -> None:
        for port in (TARGETS["tcp_port"], 5432):
            for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
                try:
                    with socket.socket(family, socket.SOCK_STREAM) as s:
                        s.settimeout(2)
                        s.connect((host, port))
                except OSError as exc:
                    report("connect", False, f"{host}:{port}: {exc.strerror or exc}")
                else:
                    report("connect", True, f"{host}:{port}")
        for label, args in (
            ("listen", (socket.AF_INET, socket.SOCK_STREAM, 0)),
            ("raw", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
            ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0)),
            ("netlink", (socket.AF_NETLINK, socket.SOCK_RAW, 0)),
        ):
            try:
                s = socket.socket(*args)
            except OSError as exc:
                report(label, False, exc.strerror or str(exc))
            else:
                s.close()
                report(label, True, "socket created")


class Ptrace(AttackBot):
    """ptrace a forked sibling and the parent; read another process's memory."""

    def attack(self) -> None:
        child = os.fork()
        if child == 0:
            time.sleep(30)
            os._exit(0)
        for label, pid in (("child", child), ("parent", os.getppid())):
            rc = _libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
            err = ctypes.get_errno()
            report(f"ptrace_{label}", rc == 0, f"rc {rc} {errno.errorcode.get(err, err)}")
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


class Escape(AttackBot):
    """Leave the cgroup, mount, make namespaces, load BPF, use keyrings; capabilities."""

    def attack(self) -> None:
        status = Path("/proc/self/status").read_text()
        caps = next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff"))
        report("capabilities", int(caps, 16) != 0, f"CapEff {caps}, uid {os.getuid()}")
        report(
            "cgroup_view", False, Path("/proc/self/cgroup").read_text().strip().replace("\n", " | ")
        )
        for path in (
            "/sys/fs/cgroup/cgroup.procs",
            "/sys/fs/cgroup/pids/cgroup.procs",
            "/sys/fs/cgroup/memory/cgroup.procs",
        ):
            try:
                with open(path, "w") as handle:
                    handle.write(str(os.getpid()))
            except OSError as exc:
                report("cgroup_move", False, f"{path}: {exc.strerror}")
            else:
                report("cgroup_move", True, path)
        calls = {
            "mount": lambda: _libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
            "unshare": lambda: _libc.unshare(0x10000000),
            "setns": lambda: _libc.setns(0, 0),
            "bpf": lambda: _libc.syscall(321, 0, None, 0),
            "keyctl": lambda: _libc.syscall(250, 0, 0, 0, 0),
        }
        for label, call in calls.items():
            rc = call()
            err = ctypes.get_errno()
            report(label, rc >= 0, f"rc {rc} {errno.errorcode.get(err, err)}")
        try:
            pid = os.fork()
        except OSError as exc:
            report("fork", True, f"plain fork refused: {exc}")
        else:
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)


class Daemon(AttackBot):
    """Leave a daemon behind: double fork, new session, a process that would outlive the game
    (the test looks for its command line on the host afterwards)."""

    def attack(self) -> None:
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", "600.4242"])
            os._exit(0)
        os.waitpid(pid, 0)
        report("daemon", False, "started; it must end with the sandbox")


class Hog(AttackBot):
    """Plays a few moves, then allocates far past its memory limit."""

    def attack(self) -> None:
        self.moves = 0

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        self.moves += 1
        if self.moves == 3:
            hog = []
            try:
                for _ in range(100):  # 10 MB at a time, touched: resident at once
                    chunk = bytearray(10 * 1024 * 1024)
                    chunk[::4096] = b"x" * len(chunk[::4096])
                    hog.append(chunk)
            except MemoryError:
                pass  # RLIMIT_DATA: it holds what it got, over its limit
            time.sleep(5)
        return super().choose_move(state, clocks)


class Crash(AttackBot):
    """Plays a few moves, then dies of a segmentation fault."""

    def attack(self) -> None:
        self.moves = 0

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        self.moves += 1
        if self.moves == 3:
            ctypes.string_at(0)
        return super().choose_move(state, clocks)
