"""One exception root for the referee (``referee.errors.RefereeError``) and one for the SDK
(``client_sdk.SdkError``): every public exception class either defines sits under its root."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import client_sdk
import referee
from client_sdk import BotLoadError, PackError, SdkError, SessionError, TlsSetupError
from referee.errors import RefereeError, Refused

#: Modules that are not imported as part of the package (a script run in the jail, the
#: migrations Alembic loads by path, generated protobuf code) or keep another contract (the
#: course-compatible ``referee.game`` raises the course's own exceptions).
SKIP = ("referee.sandbox._shim", "referee.storage.migrations", "referee.game", "client_sdk.proto")


def _modules(package: ModuleType) -> list[ModuleType]:
    names = [
        m.name
        for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
        if not m.name.startswith(SKIP)
    ]
    return [importlib.import_module(name) for name in names]


def _exceptions(package: ModuleType) -> list[type[BaseException]]:
    """The public exception classes defined in ``package`` (imported names not counted)."""
    found = []
    for module in _modules(package):
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


# Slow: importing every module of the referee imports procrastinate, which runs `file` once.
@pytest.mark.slow
def test_every_referee_exception_is_a_referee_error() -> None:
    """Each exception class the referee defines derives from RefereeError."""
    found = _exceptions(referee)
    assert len(found) >= 20
    outside = [f"{e.__module__}.{e.__qualname__}" for e in found if not issubclass(e, RefereeError)]
    assert outside == []


def test_the_referee_refusals_share_one_base() -> None:
    """The refusals of the handshake, the login token and uploads are all Refused (the login
    gate and the challenge desk raise Refused itself), each named for what it refuses."""
    from referee.server.admission import HandshakeRefused
    from referee.server.auth import AuthError
    from referee.storage.players import TokenRejected
    from referee.submissions.errors import UploadRefused

    for kind in (HandshakeRefused, AuthError, TokenRejected, UploadRefused):
        assert issubclass(kind, Refused), kind
    # Callers that catch the builtin still do.
    assert issubclass(UploadRefused, ValueError)


def test_every_sdk_exception_is_an_sdk_error() -> None:
    """Each exception class the SDK defines derives from SdkError."""
    found = _exceptions(client_sdk)
    assert len(found) >= 6
    outside = [f"{e.__module__}.{e.__qualname__}" for e in found if not issubclass(e, SdkError)]
    assert outside == []


@pytest.mark.parametrize("kind", [SessionError, BotLoadError, PackError, TlsSetupError])
def test_the_sdk_errors_a_bot_author_meets_are_exported(kind: type[Exception]) -> None:
    """The errors an author may catch are importable from client_sdk and are SdkErrors."""
    assert getattr(client_sdk, kind.__name__) is kind
    assert issubclass(kind, SdkError)


def test_game_result_vocabulary_is_exported() -> None:
    """What a bot author meets in GameResult (its verdict and termination types) is exported
    from client_sdk, the same objects the referee uses."""
    from engine.adjudication import Verdict
    from engine.outcome import Termination

    assert client_sdk.Verdict is Verdict and client_sdk.Termination is Termination
    assert client_sdk.Verdict("time") is Verdict.TIME
