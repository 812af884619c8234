#!/usr/bin/env bash
# Everything a fresh Debian machine needs to run and test the platform, in one command:
# the system packages (bubblewrap and libseccomp2 for the bot sandbox, Chromium for the
# browser tests),
# a virtualenv in ./.venv, and the project with its development extras (which include the
# validators deploy/check.py uses for the container and Kubernetes files: all from PyPI).
# Run from the repository root: `bash deploy/install.sh`. Safe to run again.
#
# It says what it is doing: a line when each step starts and ends, with the seconds since the
# start, and a line at least every INSTALL_TICK_S seconds (10) while a step runs. The system
# packages install beside the Python packages (they do not depend on each other).
# INSTALL_DRY_RUN=1 prints the steps without running them (each "runs" for INSTALL_DRY_RUN_S
# seconds, 0 by default): the test of these lines uses it.
set -euo pipefail
cd "$(dirname "$0")/.."

START=$SECONDS
TICK=${INSTALL_TICK_S:-10}
DRY=${INSTALL_DRY_RUN:-}
LOG=/dev/null
[ -n "$DRY" ] || LOG=$(mktemp -t tetromino-install-XXXXXX.log)

say() { printf 'install.sh: [%4ss] %s\n' "$((SECONDS - START))" "$*"; }

# step WHAT COMMAND...: run COMMAND with its output kept in $LOG (shown if it fails), saying
# when it starts, every $TICK seconds while it runs, and when it ends.
step() {
    local what=$1
    shift
    say "$what ..."
    (
        trap 'exit 0' TERM
        while :; do
            for ((i = 0; i < TICK; i++)); do sleep 1; done
            say "  ... still $what"
        done
    ) &
    local ticker=$! status=0
    if [ -n "$DRY" ]; then
        sleep "${INSTALL_DRY_RUN_S:-0}"
    else
        "$@" >>"$LOG" 2>&1 || status=$?
    fi
    kill "$ticker" 2>/dev/null || true
    wait "$ticker" 2>/dev/null || true
    if ((status)); then
        say "$what failed (exit $status); its output:"
        tail -n 40 "$LOG" >&2
        return "$status"
    fi
    say "$what: done"
}

# System packages: installed when missing and we are root; otherwise say what is missing.
SYSTEM_PACKAGES=(bubblewrap libseccomp2 chromium)
# --- Bots in other languages (clients/cpp, clients/js): their toolchains ---------------------
# C++: cmake, g++ and Debian's gRPC and protobuf; JavaScript: Node.js 18 or newer with npm
# (Debian's nodejs and npm unless a node is already installed). Installed in the same apt run.
LANGUAGE_PACKAGES=(cmake g++ pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc)
command -v node >/dev/null && command -v npm >/dev/null || LANGUAGE_PACKAGES+=(nodejs npm)
SYSTEM_PACKAGES+=("${LANGUAGE_PACKAGES[@]}")
# ---------------------------------------------------------------------------------------------
missing=()
for pkg in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})) && [ -z "$DRY" ] && ! { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; }; then
    echo "install.sh: missing system packages: ${missing[*]}" >&2
    echo "install.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
system_packages() {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}
# The C++ client's build (clients/cpp/build), which C++ uploads compile against, is not made
# here: the referee makes it at the first C++ upload (about a minute of CPU a course in Python
# never needs; docs/submissions.md).
apt_pid=
if ((${#missing[@]})); then
    step "system packages (${missing[*]}) with apt-get" system_packages &
    apt_pid=$!
fi
# Bots in other languages: the JavaScript client's locked dependencies (npm ci, which also
# copies protos/ into clients/js), beside pip when Node.js is already there, else after apt.
npm_ci() { (cd clients/js && npm ci --no-audit --no-fund --loglevel=error); }
npm_pid=
if command -v npm >/dev/null; then
    step "the JavaScript client's packages (npm ci in clients/js)" npm_ci &
    npm_pid=$!
fi

step "virtualenv in .venv" python3 -m venv .venv
step "Python packages (pip install -e '.[dev]')" \
    .venv/bin/pip install --progress-bar off -e ".[dev]"
# The checkout's bytecode, as pip writes it for the packages it installs: a command then starts
# without compiling ~1000 modules (even where PYTHONDONTWRITEBYTECODE is set). The referee
# compiles the bots' part into the sandbox's own copy of the platform (referee/sandbox/mirror.py).
step "the checkout's bytecode" .venv/bin/python -m compileall -q -j 0 client_sdk engine referee
# The Tetress placement tables, stored once: every bot reads them instead of building them
# (engine/tetress/tables.py; the referee also writes them before its first launch).
step "the Tetress placement tables" .venv/bin/python -c "from engine.tetress import tables; tables.write_if_stale()"
if [ -n "$apt_pid" ]; then
    wait "$apt_pid"
fi
if [ -n "$npm_pid" ]; then
    wait "$npm_pid"
else
    step "the JavaScript client's packages (npm ci in clients/js)" npm_ci
fi

# Check the host for everything the referee uses (the sandbox, cgroups, Chromium, disk) and say
# what works, what is degraded and the fix. A degraded or broken host does not fail the install:
# the referee still runs (bots uncontained where the sandbox cannot run, and it says so).
say "referee doctor"
if [ -z "$DRY" ]; then
    .venv/bin/referee doctor || echo "install.sh: referee doctor found something broken (above); the install itself is done" >&2
fi
say "installed in $((SECONDS - START)) s (details in $LOG)"
