"""The seccomp filter every sandboxed bot runs under, compiled to BPF with ``pyseccomp``.

``pyseccomp`` (PyPI) is a ctypes binding over the system's libseccomp2 with the API of
libseccomp's own Python bindings; it is used rather than Debian's ``python3-seccomp`` because
the referee may run on a Python that is not Debian's (a pyenv build, a venv), where that module
cannot be imported. The filter is compiled once per referee process and handed to bubblewrap
as a BPF program (``bwrap --seccomp FD``), which installs it last, just before it executes the
bot: bubblewrap itself still needs ``mount`` and ``unshare`` to build the sandbox.

The default is to allow; what is refused is what a bot could use to leave its sandbox or
reach something it must not (see docs/sandbox.md). Refusals return an error (``EPERM``, or
``EAFNOSUPPORT`` for socket families) rather than killing the bot, so a library that probes
for a feature carries on, and a bot that insists gets a Python exception it can print.
"""

from __future__ import annotations

import errno
import functools
import os
import socket

__all__ = ["REFUSED_SYSCALLS", "bpf_program", "seccomp_available"]

#: Syscalls refused outright with EPERM: tracing and reading other processes, mounting and
#: namespaces, kernel keyrings and BPF, modules, io_uring (whose operations bypass seccomp), and
#: the rest of the classic container deny-list.
REFUSED_SYSCALLS: tuple[str, ...] = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "fanotify_init",
    "lookup_dcookie",
    "personality",
)

#: clone() flags that would make a new namespace (clone() is how Python forks and starts
#: threads, so only these flags are refused, not the call).
_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


def seccomp_available() -> bool:
    """Whether the filter can be compiled on this machine (pyseccomp and libseccomp present)."""
    try:
        bpf_program()
    except (ImportError, OSError, RuntimeError):
        return False
    return True


@functools.cache
def bpf_program() -> bytes:
    """The compiled filter (native architecture; other architectures' syscalls are killed)."""
    import pyseccomp as sc

    flt = sc.SyscallFilter(sc.ALLOW)
    eperm = sc.ERRNO(errno.EPERM)
    for name in REFUSED_SYSCALLS:
        try:
            flt.add_rule(eperm, name)
        except (OSError, ValueError, RuntimeError):
            continue  # a syscall this architecture does not have
    # Sockets: only AF_UNIX (the referee's socket). Internet, raw, packet, netlink... refused.
    nofamily = sc.ERRNO(errno.EAFNOSUPPORT)
    for call in ("socket", "socketpair"):
        flt.add_rule(nofamily, call, sc.Arg(0, sc.NE, socket.AF_UNIX))
    for flag in _NAMESPACE_FLAGS:
        flt.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory, where seccomp cannot look: "not implemented" makes
    # glibc fall back to clone(), whose flags are checked above.
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    # A memory file rather than a pipe: libseccomp writes the whole program before we read.
    with os.fdopen(os.memfd_create("arena-seccomp", os.MFD_CLOEXEC), "w+b") as sink:
        flt.export_bpf(sink)
        sink.seek(0)
        return sink.read()
