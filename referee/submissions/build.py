"""Building a C++ or JavaScript upload into the program the referee launches.

A C++ upload is compiled in the sandbox (the bubblewrap containment of a bot: new namespaces,
no network, the read-only system, the seccomp filter) with one fixed command line, documented
in clients/cpp/README.md ("Uploading")::

    g++ -std=c++17 -O2 -I<client include> -I<generated protos> SOURCES.cpp
        libtetromino_client.a $(pkg-config --cflags --libs grpc++ protobuf) -o bot

against the server's own build of clients/cpp (``cmake --build clients/cpp/build``: the
client library and the code generated from ``protos/``, mounted read-only). The upload is
read-only at ``/src``; only the output folder is writable. The build runs under a time limit,
an address-space limit (``RLIMIT_AS``), a file-size limit (``RLIMIT_FSIZE``, which also bounds
the compiler's output, written to a file) and only the output's first lines are kept. The
limits are set by a small interpreter that then becomes the build (:data:`_LIMITS_SHIM`),
never by ``preexec_fn``: that forces a plain fork() of the threaded referee, and gRPC's fork
handlers start a poller thread in the child that crashes it (SIGSEGV, SIGABRT) before exec.

A step that ends for the build machinery's reasons rather than the compiler's (killed by a
signal, the sandbox not started) is run again once; a second such end is
:class:`BuildCrashed`, the referee's failure, never the student's compile error.

A JavaScript upload is "built" by checking its entry parses (``node --check``, in the same
sandbox) and bundling it at ``bot/`` beside a copy of the server's clients/js (its ``src``,
``package.json``, ``node_modules`` and the repository's ``protos/``): the upload requires
``../src/client`` as the examples do, and nothing is fetched from the network.

The artefact lies at ``ROOT/builds/<source digest>/`` with ``artefact.json`` (language,
entry, the artefact's own content hash), sealed read-only like the source; the version's
launch command (:func:`command_of`) names that folder.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from referee.errors import RefereeError
from referee.sandbox import seccomp
from referee.sandbox.botcode import PLATFORM
from referee.sandbox.jail import contained_args, memory_file
from referee.storage.content import content_hash
from referee.telemetry.logs import get_logger

log = get_logger("referee.submissions.build")

#: What the artefact's manifest is called, in the build folder.
ARTEFACT = "artefact.json"
_OUT_INSIDE = "/out"
_SRC_INSIDE = "/src"
_TOOLKIT_INSIDE = "/opt/toolkit"
#: The build's whole environment.
_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C"}
#: How often a step the build machinery broke is run (the second break is BuildCrashed).
_ATTEMPTS = 2
#: The shim's status when it could not start the build (bwrap or the compiler not found).
_NOT_STARTED = 127
#: Run as ``python -S -E -s -c _LIMITS_SHIM AS_BYTES FSIZE_BYTES ARGV...``: sets the limits
#: in the new process itself, then becomes ARGV (see the module's docstring for why).
_LIMITS_SHIM = """\
import os, resource, sys
memory, size = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
try:
    os.execvp(sys.argv[3], sys.argv[3:])
except OSError as exc:
    os.write(2, f"build: cannot run {sys.argv[3]}: {exc}\\n".encode())
    os._exit(127)
"""


@dataclass(frozen=True, slots=True)
class BuildLimits:
    """How long, how much memory and how much output one build may take."""

    time_s: float = 300.0
    memory_mb: int = 3072
    #: The largest file the build may write (the program, or the compiler's output).
    file_mb: int = 256
    #: How much of the compiler's output the student is shown (its first errors).
    shown_chars: int = 2000


@dataclass(frozen=True, slots=True)
class Toolchains:
    """The server's own client builds that uploads compile or bundle against."""

    cpp_build: Path = PLATFORM / "clients" / "cpp" / "build"
    cpp_include: Path = PLATFORM / "clients" / "cpp" / "include"
    #: The C++ client's sources (its CMakeLists.txt), built into ``cpp_build`` when missing.
    cpp_source: Path = PLATFORM / "clients" / "cpp"
    cmake: str = "cmake"
    #: The C++ compiler driver (looked up on ``/usr/bin:/bin`` unless a path).
    cxx: str = "g++"
    js_client: Path = PLATFORM / "clients" / "js"
    protos: Path = PLATFORM / "protos"


class BuildFailed(RefereeError):
    """The upload did not build: the sentence (with the compiler's first errors) is the
    student's verdict."""


class BuildUnavailable(RefereeError):
    """The server cannot build this language (its toolchain or client build is missing)."""


class BuildCrashed(BuildUnavailable):
    """The build machinery failed at both attempts (killed by a signal, the sandbox not
    started): the server's failure, not a compile error; the version is built again later."""


def command_of(language: str, out: Path) -> str:
    """The command that launches the artefact built into ``out``."""
    if language == "cpp":
        return shlex.quote(str(out / "bot"))
    return f"node {shlex.quote(str(out / 'js'))}"


def cannot_build(language: str, tools: Toolchains = Toolchains()) -> str | None:
    """Why this server cannot build ``language``'s uploads (with the fix), or ``None`` when
    it can: the one rule the build and ``referee doctor`` both follow."""
    if language == "cpp":
        library = tools.cpp_build / "libtetromino_client.a"
        have_cxx = shutil.which(tools.cxx, path=_ENV["PATH"]) is not None
        if have_cxx and (_client_built(tools) or _can_make_client(tools)):
            return None
        return (
            f"this server cannot build C++ uploads: {tools.cxx} and {library} are needed "
            "(apt-get install cmake g++ libgrpc++-dev protobuf-compiler-grpc, or "
            "cmake --build clients/cpp/build)"
        )
    if language == "javascript":
        client = tools.js_client
        if (client / "node_modules" / "@grpc" / "grpc-js").is_dir() and shutil.which("node"):
            return None
        return (
            f"this server cannot host JavaScript uploads: node and {client}/node_modules are "
            "needed (npm ci in clients/js)"
        )
    return f"no build for language {language!r}"


def _client_built(tools: Toolchains) -> bool:
    return (tools.cpp_build / "libtetromino_client.a").is_file() and (
        tools.cpp_build / "generated"
    ).is_dir()


def _can_make_client(tools: Toolchains) -> bool:
    """Whether :func:`make_client` can build the client here: its sources, cmake, and a
    folder the build may be written to."""
    folder = tools.cpp_build if tools.cpp_build.exists() else tools.cpp_build.parent
    return (
        (tools.cpp_source / "CMakeLists.txt").is_file()
        and shutil.which(tools.cmake) is not None
        and os.access(folder, os.W_OK)
    )


def make_client(tools: Toolchains, timeout_s: float = 900.0) -> None:
    """The server's C++ client build, made at the first C++ upload if the install left none
    (about a minute of CPU on two cores: an install for a Python course does not pay for it).
    One build at a time, across processes; raises :class:`BuildUnavailable` if it fails."""
    if _client_built(tools):
        return
    tools.cpp_build.mkdir(parents=True, exist_ok=True)
    with (tools.cpp_build.parent / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _client_built(tools):  # another process built it while this one waited
            return
        log.info("cpp_client_build", folder=str(tools.cpp_build))
        source, build = str(tools.cpp_source), str(tools.cpp_build)
        jobs = str(os.cpu_count() or 1)
        for argv in (
            [tools.cmake, "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release"],
            [tools.cmake, "--build", build, "-j", jobs],
        ):
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
            except (OSError, subprocess.SubprocessError) as exc:
                raise BuildUnavailable(f"the server's C++ client build failed: {exc}") from None
            if done.returncode != 0:
                tail = (done.stdout + done.stderr)[-400:]
                raise BuildUnavailable(f"the server's C++ client build failed: {tail}")
    if not _client_built(tools):
        raise BuildUnavailable(f"the server's C++ client build made no library in {build}")


def build_upload(
    source: Path,
    language: str,
    entry: str,
    out: Path,
    *,
    contained: bool,
    tools: Toolchains = Toolchains(),
    limits: BuildLimits = BuildLimits(),
) -> str:
    """Build the upload at ``source`` into the empty folder ``out``; the artefact's content
    hash. Raises :class:`BuildFailed` (the student's) or :class:`BuildUnavailable` (ours)."""
    if language == "cpp":
        _compile_cpp(source, out, contained, tools, limits)
    elif language == "javascript":
        _bundle_js(source, entry, out, contained, tools, limits)
    else:
        raise BuildUnavailable(f"no build for language {language!r}")
    digest = content_hash(out)
    manifest = {"language": language, "entry": entry, "sha256": digest}
    (out / ARTEFACT).write_text(json.dumps(manifest, indent=1) + "\n")
    return digest


def _compile_cpp(
    source: Path, out: Path, contained: bool, tools: Toolchains, limits: BuildLimits
) -> None:
    if (missing := cannot_build("cpp", tools)) is not None:
        raise BuildUnavailable(missing)
    make_client(tools)
    library = tools.cpp_build / "libtetromino_client.a"
    generated = tools.cpp_build / "generated"
    sources = sorted(p.name for p in source.iterdir() if p.suffix in (".cpp", ".cc"))
    flags = _pkg_config()
    where = _Where(source, out, contained)
    toolkit = f"{_TOOLKIT_INSIDE}/lib.a" if contained else str(library)
    include = f"{_TOOLKIT_INSIDE}/include" if contained else str(tools.cpp_include)
    gen = f"{_TOOLKIT_INSIDE}/generated" if contained else str(generated)
    argv = [tools.cxx, "-std=c++17", "-O2", f"-I{include}", f"-I{gen}"]
    argv += [f"{where.src}/{name}" for name in sources]
    argv += [toolkit, *flags, "-o", f"{where.out}/bot"]
    mounts = [
        (library, f"{_TOOLKIT_INSIDE}/lib.a"),
        (tools.cpp_include, f"{_TOOLKIT_INSIDE}/include"),
    ]
    mounts.append((generated, f"{_TOOLKIT_INSIDE}/generated"))
    _run("the C++ build", argv, where, mounts, limits)
    if not (out / "bot").is_file():
        raise BuildFailed("the C++ build produced no program")


def _bundle_js(
    source: Path, entry: str, out: Path, contained: bool, tools: Toolchains, limits: BuildLimits
) -> None:
    if (missing := cannot_build("javascript", tools)) is not None:
        raise BuildUnavailable(missing)
    client = tools.js_client
    where = _Where(source, out, contained)
    _run("the JavaScript check", ["node", "--check", f"{where.src}/{entry}"], where, [], limits)
    bundle = out / "js"
    bundle.mkdir()
    for part in ("src", "node_modules"):
        shutil.copytree(client / part, bundle / part, symlinks=True)
    shutil.copy2(client / "package.json", bundle / "package.json")
    shutil.copytree(tools.protos, bundle / "protos")
    shutil.copytree(source, bundle / "bot", symlinks=True)
    # The launcher `node js` runs: package.json names index.js as the folder's main file.
    (bundle / "index.js").write_text(f"'use strict';\nrequire({json.dumps('./bot/' + entry)});\n")


@dataclass(frozen=True, slots=True)
class _Where:
    """The upload and the output folder, and their paths as the build sees them."""

    source: Path
    output: Path
    contained: bool

    @property
    def src(self) -> str:
        return _SRC_INSIDE if self.contained else str(self.source)

    @property
    def out(self) -> str:
        return _OUT_INSIDE if self.contained else str(self.output)


def _run(
    what: str,
    argv: list[str],
    where: _Where,
    mounts: list[tuple[Path, str]],
    limits: BuildLimits,
) -> None:
    """Run one build step (contained unless the operator chose no sandbox); a failure is a
    :class:`BuildFailed` with the first of its output. A step the build machinery broke
    (:func:`_broken`) runs again once; broken twice, it is :class:`BuildCrashed`."""
    for attempt in range(1, _ATTEMPTS + 1):
        code, output = _step(argv, where, mounts, limits)
        broken = _broken(code, output)
        if broken is None:
            break
        log.warning("build_crashed", step=what, attempt=attempt, why=broken)
    else:
        raise BuildCrashed(
            f"the build crashed: {what} {broken}, at each of {_ATTEMPTS} attempts; a failure "
            "of the server, not a compile error (the version is built again later)"
        )
    if code is None:
        raise BuildFailed(f"{what} took longer than {limits.time_s:g} s and was stopped")
    if code != 0:
        shown = _first(output, limits.shown_chars)
        raise BuildFailed(f"{what} failed (exit {code}):\n{shown}")


def _step(
    argv: list[str], where: _Where, mounts: list[tuple[Path, str]], limits: BuildLimits
) -> tuple[int | None, str]:
    """One run of a build step, in the sandbox when ``where`` says so: see :func:`_bounded_run`."""
    fds: list[int] = []
    try:
        if where.contained:
            args = contained_args(scratch_mb=256)
            for host, inside in mounts:
                args += ["--ro-bind", str(host), inside]
            args += ["--ro-bind", str(where.source), _SRC_INSIDE, "--bind", str(where.output)]
            args += [_OUT_INSIDE, "--remount-ro", "/"]
            fds.append(memory_file("arena-build-seccomp", seccomp.bpf_program()))
            args += ["--seccomp", str(fds[0]), "--chdir", _OUT_INSIDE]
            packed = b"".join(a.encode() + b"\0" for a in args)
            fds.append(memory_file("arena-build-args", packed))
            argv = ["bwrap", "--args", str(fds[1]), "--", *argv]
        return _bounded_run(argv, dict(_ENV), tuple(fds), limits)
    finally:
        for fd in fds:
            os.close(fd)


def _broken(code: int | None, output: str) -> str | None:
    """How the build machinery, not the compiler, ended a step (``None``: the step ran to its
    own end, success or the compiler's errors, or over its time). A status over 128 is the
    compiler (or node) killed by a signal, as bwrap relays it."""
    if code is None or code == 0:
        return None
    if code < 0 or code > 128:
        number = -code if code < 0 else code - 128
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        whose = "was killed" if code < 0 else "had its compiler killed"
        return f"{whose} by {name} (exit {code})"
    first = output.strip().splitlines()[0] if output.strip() else ""
    if code == _NOT_STARTED and first.startswith("build: cannot run"):
        return f"could not start ({first})"
    if first.startswith("bwrap:"):
        return f"could not start its sandbox ({first})"
    return None


def _bounded_run(
    argv: list[str], env: dict[str, str], fds: tuple[int, ...], limits: BuildLimits
) -> tuple[int | None, str]:
    """``(exit code or None on timeout, output)``: a new session killed whole on timeout,
    under the limits the shim sets before it becomes ``argv``."""
    memory = limits.memory_mb * 1024 * 1024
    size = limits.file_mb * 1024 * 1024
    shim = [sys.executable, "-S", "-E", "-s", "-c", _LIMITS_SHIM, str(memory), str(size)]
    with tempfile.TemporaryFile() as output:
        try:
            proc = subprocess.Popen(
                [*shim, *argv],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
                pass_fds=fds,
                start_new_session=True,
            )
        except OSError as exc:
            return _NOT_STARTED, f"build: cannot run {sys.executable}: {exc}\n"
        try:
            code: int | None = proc.wait(timeout=limits.time_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        output.seek(0)
        return code, output.read(64 * 1024).decode("utf-8", "replace")


def _first(output: str, chars: int) -> str:
    """The output's start, cut at a line, with a note of what was left out."""
    if len(output) <= chars:
        return output.rstrip()
    cut = output[:chars].rsplit("\n", 1)[0]
    return f"{cut}\n[... {len(output) - len(cut)} more characters of output]"


def _pkg_config() -> list[str]:
    try:
        done = subprocess.run(
            ["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildUnavailable(
            f"this server cannot build C++ uploads: pkg-config ({exc})"
        ) from None
    return done.stdout.split()
