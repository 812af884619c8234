"""Every ``referee`` argument that names a stored game, tournament or bot by id takes the
database's id rule (referee.server.bounds) as its argparse type: a number past the range is a
usage error in one line, never a traceback from the database driver."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.commands._common import stored_ref
from referee.commands.main import build_parser, main
from referee.server.bounds import MAX_ID

HUGE = str(2**70)

#: Every argument typed as a stored reference: (command words, the option or None for a
#: positional). A new id-taking argument must be added here (the sweep below checks it).
ID_ARGUMENTS = {
    (("game", "export"), None),
    (("game", "show"), None),
    (("tournament", "show"), None),
    (("tournament", "run"), None),
    (("tournament", "resume"), None),
    (("tournament", "start"), None),
    (("tournament", "export"), None),
    (("tournament", "presence"), None),
    (("leaderboard",), None),
    (("games",), "--tournament"),
    (("grade",), "--tournament"),
    (("similarity",), "--tournament"),
    (("annotate",), "--game"),
}


def _typed(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], str | None]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _typed(sub, (*words, name))
        elif action.type is stored_ref:
            yield words, (action.option_strings[0] if action.option_strings else None)


def _argv(words: tuple[str, ...], option: str | None, value: str) -> list[str]:
    return [*words, value] if option is None else [*words, option, value]


def test_the_sweep_lists_every_id_argument_of_the_cli() -> None:
    """The arguments typed as stored references are exactly the ones this file sweeps."""
    assert set(_typed(build_parser(), ())) == ID_ARGUMENTS


@pytest.mark.parametrize(("words", "option"), sorted(ID_ARGUMENTS, key=str))
def test_an_id_past_the_database_range_is_one_usage_line(
    words: tuple[str, ...], option: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """2^70 as an id: exit 2 and one line saying it is out of range, no traceback."""
    with pytest.raises(SystemExit) as stop:
        main(_argv(words, option, HUGE))
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert (
        err.rstrip("\n")
        .splitlines()[-1]
        .endswith(f"id {HUGE} is out of range (ids go up to {MAX_ID})")
    ), err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("words", "option"),
    [
        # annotate opens its analysis in a process of its own
        pytest.param(w, o, marks=[pytest.mark.slow] if w == ("annotate",) else [], id=str(w))
        for w, o in sorted(ID_ARGUMENTS, key=str)
        if w != ("tournament", "presence")  # asks a server, which applies the same rule
    ],
)
def test_the_largest_id_reaches_the_database_and_is_not_found(
    words: tuple[str, ...], option: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The largest valid id is looked up (no overflow in the driver) and answered with one
    line: nothing stored under it."""
    db = tmp_path / "arena.db"
    assert main(["db", "upgrade", "--db", str(db), "--create"]) == 0
    capsys.readouterr()
    code = main([*_argv(words, option, str(MAX_ID)), "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and str(MAX_ID) in err and "Traceback" not in err, err


def test_names_and_ids_in_range_pass_through() -> None:
    """A name stays a name; a decimal id within range becomes the int the database keys."""
    assert stored_ref("spring-cup") == "spring-cup"
    assert stored_ref("42") == 42
    assert stored_ref(str(MAX_ID)) == MAX_ID
    assert stored_ref("٣") == "٣"  # a non-ASCII digit is a name, as on the web and in RPCs
    with pytest.raises(argparse.ArgumentTypeError):
        stored_ref(str(MAX_ID + 1))
