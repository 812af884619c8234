"""Tries to leave its cpu cgroup from inside the sandbox (its pid into the cgroup files it might
reach, a cgroup file system mounted of its own, a child of its own in a new session), says how
each try went, then waits."""

import ctypes
import os
import time

TARGETS = (
    "/sys/fs/cgroup/cpu/cgroup.procs",
    "/sys/fs/cgroup/cpu/tasks",
    "/sys/fs/cgroup/cpu,cpuacct/cgroup.procs",
    "/sys/fs/cgroup/cgroup.procs",
    "/proc/1/root/sys/fs/cgroup/cpu/cgroup.procs",
)

for path in TARGETS:
    try:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))
    except OSError as exc:
        print("REFUSED", path, exc.strerror, flush=True)
    else:
        print("MOVED", path, flush=True)

os.makedirs("/tmp/cpu", exist_ok=True)
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(b"cgroup", b"/tmp/cpu", b"cgroup", 0, b"cpu") != 0:
    print("REFUSED mount", os.strerror(ctypes.get_errno()), flush=True)
else:
    print("MOVED mount", flush=True)

if os.fork() == 0:
    os.setsid()
    print("child in a session of its own", flush=True)
    while True:
        time.sleep(3600)
print("ready", flush=True)
while True:
    time.sleep(3600)
