"""A lesson position's bot process in the sandbox: the SDK's bot child (the process
``python -m client_sdk test`` starts for each position, :data:`client_sdk.testing.CHILD_MODULE`)
run inside an uploaded bot's jail (:mod:`referee.sandbox.jail`: its mounts, namespaces, seccomp
filter and, for a root referee, its own uid through the exec shim), talking over its stdin and
stdout. No referee socket is mounted: the bot only answers the one position it is given."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from client_sdk.testing import CHILD_MODULE, BotCommand
from referee.sandbox.jail import build_jail
from referee.sandbox.spawn import resolve_program, shim_argv


@contextmanager
def jailed_child(target: str, memory_mb: float | None) -> Iterator[BotCommand]:
    """How to start the SDK bot ``target`` (a path, as validation plays it) in a fresh jail,
    for one process: the jail's descriptors are read once by bwrap. The jail's copy of the
    code is removed on exit."""
    jail = build_jail(
        "sdk", target, socket_path="", token="", memory_mb=memory_mb, module=CHILD_MODULE
    )
    try:
        argv = [resolve_program(jail.argv[0], jail.env, "/"), *jail.argv[1:]]
        if jail.run_as is not None:  # root: the shim mounts what is staged and becomes the uid
            argv = shim_argv(argv[0], argv, 0, [], jail.run_as)
        yield BotCommand(tuple(argv), dict(jail.env), jail.pass_fds, cwd="/")
    finally:
        jail.remove()
