"""What the SDK measures about its own bot: think time (wall) and memory (resident).

The course referee measured CPU time and peak *virtual* memory; we measure wall time and
*resident* memory (RSS), which is what actually competes for a machine's RAM. The referee's
own wall clock is authoritative; the figures here are the bot's self-report, stored beside it.
"""

from __future__ import annotations

import resource
import sys

import psutil

_PROCESS = psutil.Process()
# ru_maxrss is KiB on Linux, bytes on macOS.
_MAXRSS_UNIT = 1 if sys.platform == "darwin" else 1024


def current_rss() -> int:
    """The process's resident memory now, in bytes."""
    return int(_PROCESS.memory_info().rss)


def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes.

    On Linux this is ``VmHWM``, the high-water mark of this process's own memory map. Not
    ``ru_maxrss``: a process started with vfork()+exec (as Python's subprocess does) inherits
    the *launcher's* peak in it, so a bot started by a large referee or test runner would
    report the launcher's memory as its own.
    """
    hwm = _vm_hwm()
    if hwm is not None:
        return hwm
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * _MAXRSS_UNIT


def _vm_hwm() -> int | None:
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def used_mb() -> float:
    """The process's resident memory now, in MB: what a memory limit is checked against.

    Course bots see ``space_remaining = space_limit - used_mb()``.
    """
    return current_rss() / 2**20
