"""A warm sandbox's first program: import the platform, then wait for one game.

Run by the referee as ``python -m client_sdk._warm FD READY [numpy]`` inside a freshly started
sandbox (see ``referee/sandbox/warm.py``), before any game is assigned, at a low priority. It
imports what every launched bot imports (the SDK and gRPC; NumPy too, when installed and asked
for: the bots of the queued work import it), says so on descriptor READY, then blocks reading
descriptor FD until the referee writes the game's command line (``python -m client_sdk``'s
arguments and its PYTHONPATH, as JSON) and closes it.
By then the game's code has been copied into ``/bots``, its socket and one-game token put in
``/run/arena``, and its priority restored; the program then runs exactly what a cold launch
runs. No bot code runs before that, and this process (the whole sandbox) serves one game only.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from collections.abc import Sequence

#: Imported ahead of the game: what ``python -m client_sdk`` imports for any bot before its
#: first move. Not a game's rules nor the course's ``referee.game``: the sandbox does not know
#: yet which game or bot it serves, and a bot imports nothing it does not need.
PREIMPORTS = (
    "client_sdk.__main__",
    "client_sdk._session",
    "client_sdk._loader",
    "client_sdk._agent",
    "engine.registry",
)
#: Imported when asked for and installed (a bot's usual numerical library); otherwise a bot
#: that uses it imports it itself, as a cold launch does.
OPTIONAL = ("numpy",)


def _preimport(optional: Sequence[str]) -> None:
    for name in PREIMPORTS:
        importlib.import_module(name)
    for name in OPTIONAL:
        if name in optional:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def main() -> int:
    fd, ready = int(sys.argv[1]), int(sys.argv[2])
    _preimport(sys.argv[3:])
    # The referee prefers sandboxes that are ready; one taken earlier closed its end already.
    with contextlib.suppress(OSError):
        os.write(ready, b"1")
    os.close(ready)
    message = _read_all(fd)
    if not message:
        return 0  # the pool let this sandbox go unused
    order = json.loads(message)
    args = order["args"]
    os.environ["PYTHONPATH"] = order["pythonpath"]  # what a cold launch's children inherit
    os.environ.update(order.get("env", {}))  # the game's own (its seed), as a cold launch has
    # The game's code arrived after start: forget what the import system saw of /bots.
    importlib.invalidate_caches()
    sys.path_importer_cache.clear()
    from client_sdk import __main__ as entry

    sys.argv = [entry.__file__ or "client_sdk", *args]
    return entry.main(args)


if __name__ == "__main__":
    sys.exit(main())
