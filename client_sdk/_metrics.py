"""What the SDK measures about its own bot: think time (wall) and memory (resident).

The course referee measured CPU time and peak *virtual* memory; we measure wall time and
*resident* memory (RSS), which is what actually competes for a machine's RAM. The referee's
own wall clock is authoritative; the figures here are the bot's self-report, stored beside it.
"""

from __future__ import annotations

from typing import Any

#: The largest resident size seen so far, where the platform keeps no high-water mark.
_seen_peak = 0


def current_rss() -> int:
    """The process's resident memory now, in bytes: on Linux read from ``/proc`` directly,
    elsewhere through psutil, imported only then (a bot's start-up never pays for it)."""
    rss = _status_kb(b"VmRSS:")
    return rss if rss is not None else int(_memory_info().rss)


def _memory_info() -> Any:
    import psutil

    return psutil.Process().memory_info()


def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes.

    On Linux this is ``VmHWM``, the high-water mark of this process's own memory map, and on
    Windows the peak working set; elsewhere (macOS) the largest resident size seen at each
    call. Not ``ru_maxrss``: a process started with vfork()+exec (as Python's subprocess
    does) inherits the *launcher's* peak in it, and the ``resource`` module does not exist
    on Windows.
    """
    global _seen_peak
    hwm = _status_kb(b"VmHWM:")
    if hwm is not None:
        return hwm
    info = _memory_info()
    _seen_peak = max(_seen_peak, int(getattr(info, "peak_wset", 0) or info.rss))
    return _seen_peak


def _status_kb(field: bytes) -> int | None:
    """A size from ``/proc/self/status`` (Linux), in bytes; ``None`` where there is none."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def used_mb() -> float:
    """The process's resident memory now, in MB: what a memory limit is checked against.

    Course bots see ``space_remaining = space_limit - used_mb()``.
    """
    return current_rss() / 2**20
