"""Refusing a bot that cannot be loaded before any game is played.

A local bot (package directory, SDK module or Python file) is started through the same launch
path as for a game (:func:`referee.sandbox.launch.launch`: the sandbox, its limits, its
bounded output), told by ``TETROMINO_LOAD_CHECK=1`` to import itself and find its entry point
and then exit. A shell command cannot be checked this way: it is taken as given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import DEFAULT_MEMORY_MB, BotSpec, launch

#: Seconds a bot may take to import itself (NumPy and a big package included).
LOAD_CHECK_TIMEOUT_S = 30.0
_PREFIX = "python -m client_sdk: "


async def check_loads(
    spec: BotSpec,
    *,
    memory_mb: float | None = DEFAULT_MEMORY_MB,
    timeout: float = LOAD_CHECK_TIMEOUT_S,
    isolation: Isolation | None = None,
) -> str | None:
    """``None`` when ``spec`` loads (or cannot be checked), else one line saying why not.
    ``isolation`` is the one the game will use (default: the sandbox where it runs here)."""
    if spec.kind != "sdk":
        return None
    bot = await launch(
        spec,
        "",
        "",
        memory_mb=memory_mb,
        extra_env={"TETROMINO_LOAD_CHECK": "1"},
        isolation=isolation,
    )
    try:
        code = await bot.wait(timeout)
    finally:
        await bot.stop(0.5)
    if code == 0:
        return None
    if code is None:
        return f"it did not finish loading within {timeout:g} s"
    lines = [line for line in bot.output.text().splitlines() if line.startswith(_PREFIX)]
    if lines:
        # A sandboxed bot names itself by its copy's path inside the sandbox: say the user's.
        inside = bot.jail.code.value if bot.jail is not None else spec.value
        return lines[-1].removeprefix(_PREFIX).replace(inside, spec.value)
    if bot.memory_exceeded:
        return f"it went over its memory limit ({memory_mb:g} MB) while loading"
    tail = bot.output.tail(1).strip()
    return f"it exited while loading ({bot.describe_exit()})" + (f": {tail}" if tail else "")


async def check_all(
    specs: Sequence[BotSpec],
    *,
    memory_mb: float | None = DEFAULT_MEMORY_MB,
    isolation: Isolation | None = None,
) -> list[str | None]:
    """:func:`check_loads` for each spec, concurrently; the reasons in spec order."""
    checks = (check_loads(s, memory_mb=memory_mb, isolation=isolation) for s in specs)
    return list(await asyncio.gather(*checks))


def refusal(specs: Sequence[BotSpec], reasons: Sequence[str | None]) -> str | None:
    """The one line a command prints for the first bot that does not load, or ``None``."""
    for spec, reason in zip(specs, reasons, strict=True):
        if reason is not None:
            detail = reason.removeprefix(f"{spec.value}: ")
            return f"bot {spec.value} cannot be loaded: {detail}"
    return None
