"""Turns a BOT argument into agents: a course-style package directory (``dir`` or
``dir:ClassName``), an importable module (``client_sdk.examples.random_bot``, ``mod:Name``) or a
Python file (``bot.py``, ``bot.py:Name``)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from client_sdk._agent import Agent, FunctionAgent
from client_sdk._errors import SdkError

AgentFactory = Callable[[], Agent]


class BotLoadError(SdkError):
    """The BOT argument names nothing that can play."""


def load_bot(spec: str) -> AgentFactory:
    """A factory giving the agent for each new game (a fresh instance per game for classes).

    Anything that goes wrong while the bot's code is imported (a syntax error, a missing
    import, an exception at its top level) is a :class:`BotLoadError` whose message is one
    line naming the bot and the cause: the same line wherever a bot is loaded.
    """
    target, name = _split_spec(spec)
    try:
        module = _import_target(target)
    except BotLoadError:
        raise
    except Exception as exc:
        raise BotLoadError(load_failure(spec, exc)) from exc
    return factory_for(_pick(module, name, spec), spec)


def load_failure(spec: str, exc: BaseException) -> str:
    """One line saying why importing the bot ``spec`` failed: where a syntax error is, or
    the exception's type and first line (a missing module by name)."""
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else "its code"
        return f"{spec}: syntax error in {where}: {exc.msg}"
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{spec}: {type(exc).__name__}" + (f": {first}" if first else "")


def factory_for(obj: Any, label: str = "bot") -> AgentFactory:
    """A per-game agent factory for an agent class, instance, course class or function."""
    if isinstance(obj, Agent):
        return lambda: obj
    if inspect.isclass(obj):
        if issubclass(obj, Agent):
            cls: type[Agent] = obj
            return cls
        return CourseFactory(obj)
    if callable(obj):
        return lambda: FunctionAgent(obj)
    raise BotLoadError(f"{label}: {obj!r} is neither an agent class, an agent nor a function")


class CourseFactory:
    """Makes a course-bot adapter per game; course bots play Tetress only."""

    games: tuple[str, ...] = ("tetress",)

    def __init__(self, agent_class: type[Any]) -> None:
        self.agent_class = agent_class

    def __call__(self) -> Agent:
        from client_sdk._course import CourseAgent

        return CourseAgent(self.agent_class)


def games_of(factory: AgentFactory) -> tuple[str, ...]:
    """The games a bot is limited to (empty: any game)."""
    return tuple(getattr(factory, "games", ()))


def _split_spec(spec: str) -> tuple[str, str | None]:
    head, sep, tail = spec.rpartition(":")
    if sep and tail.isidentifier() and head:
        return head, tail
    return spec, None


def _import_target(target: str) -> ModuleType:
    # Bind our ``referee`` package first so that a course checkout lying beside the bot (its
    # own ``referee/``) cannot shadow ``referee.game`` once the bot's folder is on sys.path:
    # the package (import-free) is enough, its submodules are then found in our folder only.
    # ``referee.game`` itself waits for a course bot that imports it.
    import referee  # noqa: F401

    path = Path(target)
    if path.is_dir():
        if not (path / "__init__.py").is_file():
            raise BotLoadError(f"{target}: a bot package needs an __init__.py")
        folder = path.resolve()
        _prepend_path(folder.parent)
        return _import(folder.name, target)
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise BotLoadError(f"{target}: no such file")
        file = path.resolve()
        _prepend_path(file.parent)
        spec = importlib.util.spec_from_file_location(file.stem, file)
        if spec is None or spec.loader is None:
            raise BotLoadError(f"{target}: cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[file.stem] = module
        spec.loader.exec_module(module)
        return module
    return _import(target, target)


def _import(name: str, label: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name or name.startswith(f"{exc.name}."):
            raise BotLoadError(f"{label}: no such directory, file or module") from exc
        raise


def _prepend_path(folder: Path) -> None:
    entry = str(folder)
    if entry not in sys.path:
        sys.path.insert(0, entry)


def _pick(module: ModuleType, name: str | None, spec: str) -> Any:
    if name is not None:
        try:
            return getattr(module, name)
        except AttributeError:
            raise BotLoadError(f"{spec}: {module.__name__} has no {name!r}") from None
    candidate = getattr(module, "Agent", None)
    if inspect.isclass(candidate) and candidate is not Agent:
        return candidate
    own = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Agent)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]
    if len(own) == 1:
        return own[0]
    if len(own) > 1:
        names = ", ".join(sorted(c.__name__ for c in own))
        raise BotLoadError(f"{spec}: several agent classes ({names}); name one as {spec}:Name")
    for attr in ("agent", "choose_move"):
        obj = getattr(module, attr, None)
        if obj is not None:
            return obj
    raise BotLoadError(
        f"{spec}: found no Agent class, Agent subclass, `agent` object or choose_move function"
    )


def bot_name(agent: object) -> str:
    """A default name for a bot: its ``name`` attribute, else its class, function or path."""
    if isinstance(agent, str):
        target = agent.rpartition(":")[0] if ":" in agent else agent
        return target.rstrip("/").replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
    named = getattr(agent, "name", None)
    if isinstance(named, str) and named:
        return named
    return str(getattr(agent, "__name__", type(agent).__name__))
