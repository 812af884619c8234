"""No test waits a fixed time for a state it could be told about.

A test that sleeps "long enough" for a bot to start or a server to notice passes on an idle
machine and fails by chance on a loaded one. A sleep in the test code is allowed where it is a
poll (inside a loop that checks the state each time round), a bare yield (``sleep(0)``), or
marked ``# not a wait: <why>`` on its line: the length of a fault being injected, a bot that
deliberately outstays its clock, a pause whose only job is to let nothing happen.

Bots under ``tests/**/bots/`` are programs under test, whose sleeps are their behaviour.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MARK = "# not a wait:"
#: ``module.sleep`` calls and Playwright's ``page.wait_for_timeout``.
SLEEP_MODULES = ("time", "asyncio")


def _is_sleep(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "wait_for_timeout":
        return True
    module = func.value.id if isinstance(func.value, ast.Name) else None
    return func.attr == "sleep" and module in SLEEP_MODULES


def _is_yield(call: ast.Call) -> bool:
    args = call.args
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value == 0


def fixed_sleeps(source: str) -> Iterator[int]:
    """Line numbers of the sleeps in ``source`` that are neither polls, yields nor marked."""
    tree = ast.parse(source)
    lines = source.splitlines()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_sleep(node) or _is_yield(node):
            continue
        if MARK in lines[node.lineno - 1]:
            continue
        up: ast.AST = node
        while up in parents:
            up = parents[up]
            if isinstance(up, ast.While | ast.For | ast.AsyncFor):
                break  # a poll: the loop looks at the state again after each sleep
            if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield node.lineno
                break
        else:
            yield node.lineno


def _test_modules() -> Iterator[Path]:
    for path in sorted(TESTS.rglob("*.py")):
        if "bots" not in path.relative_to(TESTS).parts:
            yield path


def test_no_test_sleeps_a_fixed_time_for_a_state() -> None:
    """Every sleep in the tests is a poll, a yield or marked with why it is not a wait."""
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in _test_modules()
        for line in fixed_sleeps(path.read_text())
    ]
    assert found == [], f"wait for the event instead, or mark '{MARK} <why>': {found}"


def test_the_rule_catches_a_fixed_wait() -> None:
    """A bare sleep before a check is caught; a poll, a yield and a marked one are not."""
    source = (
        "import asyncio, time\n"
        "def bare():\n"
        "    time.sleep(1.0)\n"
        "async def poll(ready):\n"
        "    while not ready():\n"
        "        await asyncio.sleep(0.05)\n"
        "async def yields():\n"
        "    await asyncio.sleep(0)\n"
        "def marked(page):\n"
        f"    page.wait_for_timeout(1500)  {MARK} nothing may happen meanwhile\n"
        "def browser(page):\n"
        "    page.wait_for_timeout(300)\n"
    )
    assert list(fixed_sleeps(source)) == [3, 12]
