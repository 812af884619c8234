"""Run a command under a container seccomp profile (Docker/OCI JSON), as a runtime would:

    python under_profile.py PROFILE.json COMMAND [ARG ...]

The profile's default action and its ERRNO rules by syscall name are compiled with pyseccomp
(the referee's own binding) and loaded into this process, which then executes COMMAND, so it and
everything it starts (the referee, bubblewrap, the bots) run under that profile."""

from __future__ import annotations

import json
import os
import sys

import pyseccomp as sc


def load(profile: dict[str, object]) -> None:
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW", "only allow-by-default profiles"
    flt = sc.SyscallFilter(sc.ALLOW)
    for rule in profile["syscalls"]:  # type: ignore[attr-defined]
        assert rule["action"] == "SCMP_ACT_ERRNO" and not rule.get("args"), rule
        action = sc.ERRNO(int(rule.get("errnoRet", profile.get("defaultErrnoRet", 1))))
        for name in rule["names"]:
            try:
                flt.add_rule(action, name)
            except (OSError, ValueError, RuntimeError):
                continue  # a syscall this architecture does not have (runtimes skip them too)
    flt.load()


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        load(json.load(handle))
    os.execvp(sys.argv[2], sys.argv[2:])
