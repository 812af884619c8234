"""Leaves things behind for whatever runs next in its sandbox (a reused warm sandbox would hand
them on to its next game or another bot's) and says what an earlier game left for it."""

import builtins
import json
import os
import sys
import types

from client_sdk.examples.random_bot import RandomBot

MARK = "/tmp/arena-leftover"
SITE = "/tmp/sitecustomize.py"


def findings() -> list[str]:
    """What an earlier bot left in this process or sandbox."""
    found = []
    if os.path.exists(MARK):
        found.append("tmp_file")
    if os.path.exists(SITE) or "sitecustomize" in sys.modules:
        found.append("sitecustomize")
    if "leftover_module" in sys.modules:
        found.append("module")
    if getattr(json.dumps, "poisoned", False):
        found.append("patched_stdlib")
    if getattr(builtins, "LEFTOVER", False):
        found.append("builtins")
    if os.environ.get("LEFTOVER"):
        found.append("environ")
    numpy = sys.modules.get("numpy")
    if numpy is not None and getattr(numpy, "leftover", False):
        found.append("patched_numpy")
    for name in ("client_sdk", "engine"):
        if getattr(sys.modules.get(name), "leftover", False):
            found.append(f"patched_{name}")
    for folder in ("/bots", "/run/arena", "/opt/arena"):
        if os.path.exists(f"{folder}/leftover"):
            found.append(f"file_in_{folder}")
    return found


def leave() -> None:
    """Everything a bot could try to hand on to a later game in the same sandbox."""
    with open(MARK, "w") as handle:
        handle.write("left by an earlier game")
    with open(SITE, "w") as handle:
        handle.write("import builtins\nbuiltins.LEFTOVER = True\n")
    sys.modules["leftover_module"] = types.ModuleType("leftover_module")
    original = json.dumps

    def dumps(*args: object, **kwargs: object) -> str:
        return original(*args, **kwargs)  # type: ignore[arg-type]

    dumps.poisoned = True  # type: ignore[attr-defined]
    json.dumps = dumps
    builtins.LEFTOVER = True  # type: ignore[attr-defined]
    os.environ["LEFTOVER"] = "1"
    for name in ("numpy", "client_sdk", "engine"):
        if name in sys.modules:
            sys.modules[name].leftover = True  # type: ignore[attr-defined]
    for folder in ("/bots", "/run/arena", "/opt/arena"):
        try:
            with open(f"{folder}/leftover", "w") as handle:
                handle.write("x")
            print(f"WROTE {folder}", flush=True)
        except OSError:
            pass


class Agent(RandomBot):
    """Plays random moves; reports leftovers found, then leaves its own."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        print("LEFTOVERS FOUND:", ",".join(findings()) or "none", flush=True)
        print("NICE", os.getpriority(os.PRIO_PROCESS, 0), flush=True)
        leave()
        print("LEFTOVERS LEFT", flush=True)
