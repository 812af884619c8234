#!/usr/bin/env bash
# Everything a fresh Debian machine needs to run and test the platform, in one command:
# the system packages (bubblewrap and libseccomp2 for the bot sandbox, Chromium for the
# browser tests),
# a virtualenv in ./.venv, and the project with its development extras (which include the
# validators deploy/check.py uses for the container and Kubernetes files: all from PyPI).
# Run from the repository root: `bash deploy/install.sh`. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages: installed when missing and we are root; otherwise say what is missing.
SYSTEM_PACKAGES=(bubblewrap libseccomp2 chromium)
missing=()
for pkg in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "install.sh: missing system packages: ${missing[*]}" >&2
        echo "install.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi

python3 -m venv .venv
.venv/bin/pip install -q -e ".[dev]"
# The checkout's bytecode, as pip writes it for the packages it installs: a command then starts
# without compiling ~1000 modules (even where PYTHONDONTWRITEBYTECODE is set). The referee
# brings the bots' part up to date itself before launching any (referee/sandbox/bytecode.py).
.venv/bin/python -m compileall -q client_sdk engine referee >/dev/null
# The Tetress placement tables, stored once: every bot reads them instead of building them
# (engine/tetress/tables.py; the referee also writes them before its first launch).
.venv/bin/python -c "from engine.tetress import tables; tables.write_if_stale()"
# The same for the test suite: pytest rewrites each test module for its assertions and caches
# the result beside it. Collected once here, so the suite's workers do not each rewrite all of
# them at their first run (about 3 s of CPU a worker).
.venv/bin/pytest --collect-only -q -n 0 -p no:cacheprovider >/dev/null

# Check the host for everything the referee uses (the sandbox, cgroups, Chromium, disk) and say
# what works, what is degraded and the fix. A degraded or broken host does not fail the install:
# the referee still runs (bots uncontained where the sandbox cannot run, and it says so).
.venv/bin/referee doctor || echo "install.sh: referee doctor found something broken (above); the install itself is done" >&2
