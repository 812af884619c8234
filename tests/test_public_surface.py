"""The public surface of what users import, pinned (in the manner of httpx's exported-members
test): each module's ``__all__`` is exactly its public attributes, sorted as below, and equal
to the list written here, so adding, removing or leaking a name is a deliberate change."""

from __future__ import annotations

import importlib
import types

import pytest

SURFACE: dict[str, list[str]] = {
    "engine": [
        "AmbiguousMoveError",
        "BookError",
        "EngineError",
        "Game",
        "IllegalMoveError",
        "LegalMoves",
        "NotationError",
        "Outcome",
        "PositionError",
        "RecordError",
        "RecordIssue",
        "State",
        "Termination",
        "UnknownGameError",
        "game_names",
        "load_game",
        "register_game",
    ],
    "engine.records": [
        "ANNOTATIONS",
        "REFEREE_TERMINATIONS",
        "RESULTS",
        "GameRecord",
        "RecordBuilder",
        "RecordedMove",
        "SearchInfo",
        "apply_recorded",
        "initial_state",
        "iter_records",
        "positions",
        "read_json",
        "read_json_lines",
        "read_record",
        "read_records",
        "record_from_json",
        "record_from_state",
        "record_game",
        "record_to_json",
        "replay",
        "verify_record",
        "write_json",
        "write_json_lines",
        "write_record",
        "write_records",
    ],
    "client_sdk": [
        "PROTOCOL_VERSION",
        "SDK_VERSION",
        "Agent",
        "Backoff",
        "BotLoadError",
        "Clocks",
        "Ending",
        "FunctionAgent",
        "GameInfo",
        "GameResult",
        "MoveLike",
        "PackError",
        "SdkError",
        "SessionError",
        "Termination",
        "Think",
        "TlsSetupError",
        "Verdict",
        "game_seed",
        "run",
    ],
    # What GameResult holds (its verdict and termination) comes from here; the SDK re-exports
    # the names a bot author meets.
    "engine.adjudication": [
        "Accepted",
        "Adjudicator",
        "Allowance",
        "Answer",
        "BotFailed",
        "ClockMode",
        "Disconnected",
        "Ending",
        "GameEnd",
        "Measured",
        "MoveAnswer",
        "NotAMove",
        "ProtocolViolation",
        "SeatClock",
        "Spent",
        "Strike",
        "TimeControl",
        "TimedOut",
        "Turn",
        "Verdict",
        "parse_ending",
        "ply_number",
    ],
    "referee.errors": ["RefereeError", "Refused"],
    "client_sdk.testing": [
        "BUILTIN_OPPONENTS",
        "CHILD_MODULE",
        "BotCommand",
        "BotLike",
        "LocalGame",
        "Tried",
        "play_local",
        "try_lesson",
    ],
    # What the referee takes from the SDK (it imports none of the SDK's private modules): the
    # failure pack's format (it writes packs, `reproduce` reads them), the bound on a move's
    # text (a replay judges it as the referee does) and the TLS options (`referee watch`).
    "client_sdk.packs": [
        "FORMAT",
        "MAX_PACK_BYTES",
        "MAX_TEXT",
        "OUTPUT_TAIL_CHARS",
        "VERSION",
        "FailurePackError",
        "Pack",
        "encode",
        "load_pack",
        "parse_pack",
    ],
    "client_sdk.protocol": ["MAX_ACTION_CHARS", "action_problem"],
    "client_sdk.tls": ["Tls", "TlsSetupError", "handshake_failure", "tls_of", "tls_options"],
    "referee.game": [
        "BOARD_N",
        "MAX_TURNS",
        "Action",
        "Board",
        "BoardMutation",
        "CellMutation",
        "CellState",
        "Coord",
        "Direction",
        "IllegalActionException",
        "Piece",
        "PieceType",
        "PlaceAction",
        "PlayerColor",
        "PlayerException",
        "Vector2",
        "create_piece",
    ],
}


def _public_attributes(module: types.ModuleType) -> list[str]:
    """Names a user can import from ``module`` that do not start with ``_`` (sub-modules, which
    appear as attributes once imported anywhere, and ``from __future__`` features aside),
    those a module loads on first use (listed by its ``__dir__``) included."""
    names = {*vars(module), *dir(module)}
    return [
        name
        for name in names
        if not name.startswith("_")
        and not isinstance(value := getattr(module, name), types.ModuleType)
        and not (name == "annotations" and type(value).__name__ == "_Feature")
    ]


def _ordered(names: list[str]) -> list[str]:
    """Constants first, then classes, then functions: upper case, capitalised, lower case."""
    return sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))


@pytest.mark.parametrize("name", sorted(SURFACE))
def test_all_is_exactly_the_public_attributes(name: str) -> None:
    """``__all__`` lists every public attribute of the module, and nothing else."""
    module = importlib.import_module(name)
    exported = list(getattr(module, "__all__", []))
    assert exported == _ordered(exported), f"{name}.__all__ is not in order"
    assert sorted(exported) == sorted(_public_attributes(module)), name


@pytest.mark.parametrize("name", sorted(SURFACE))
def test_the_surface_is_the_pinned_one(name: str) -> None:
    """Each module exports exactly the names pinned here (change both on purpose)."""
    module = importlib.import_module(name)
    assert list(module.__all__) == SURFACE[name]


def test_sdk_internals_are_private() -> None:
    """Every module of the SDK package other than its public ones starts with ``_``."""
    import pkgutil

    import client_sdk

    public = {"testing", "examples", "proto", "reference", "packs", "protocol", "tls"}
    names = {m.name for m in pkgutil.iter_modules(client_sdk.__path__)}
    assert {n for n in names if not n.startswith("_")} == public
