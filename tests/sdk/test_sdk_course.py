"""Course-style bot packages run unchanged through the SDK, called the course's way."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from client_sdk._course import action_from_text
from client_sdk._loader import BotLoadError, load_bot
from client_sdk.testing import play_local


def calls(module: str) -> list[tuple[str, ...]]:
    calls_list: list[tuple[str, ...]] = getattr(sys.modules[module], "CALLS")  # noqa: B009
    return calls_list


def test_fancy_bot_runs_unchanged(bots_dir: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A package using NumPy, a sibling-relative import, a helper package beside it and print
    plays a full game; its prints land on stderr, never stdout."""
    game = play_local(str(bots_dir / "fancy_bot"), "random")
    assert game.verdict in ("normal", "turn_limit")
    out, err = capfd.readouterr()
    assert "fancy_bot: playing RED, 180 s on the clock" in err
    assert "fancy_bot:" not in out


def test_course_calling_convention(bots_dir: Path) -> None:
    """color by keyword; action only on the bot's turn; update after every accepted action
    but the last, own actions as the very object returned, the opponent's in its order;
    referee keywords set on every call."""
    spec = str(bots_dir / "recorder_bot")
    load_bot(spec)
    calls("recorder_bot").clear()
    game = play_local(spec, spec, memory_limit_mb=250)
    assert game.verdict in ("normal", "turn_limit")
    log = calls("recorder_bot")
    inits = [c for c in log if c[0] == "init"]
    assert [(str(c[1]), c[2], c[3]) for c in inits] == [
        (color, "args=0", "kw=space_limit,space_remaining,time_remaining")
        for color in ("RED", "BLUE")
    ]
    actions = [c for c in log if c[0] == "action"]
    assert len(actions) == game.plies
    assert all(f"turn={c[1]}" == c[2] for c in actions)
    assert all(c[4].startswith("space=250") for c in actions)
    for color in ("RED", "BLUE"):
        updates = [c for c in log if c[0] == "update" and str(c[1]) == color]
        # Every accepted action but the game-ending one, in order, both colours.
        assert [u[3] for u in updates] == game.moves[:-1]
        assert [str(u[2]) for u in updates] == [("RED", "BLUE")[i % 2] for i in range(len(updates))]
        own = [u for u in updates if str(u[2]) == color]
        assert all(u[4] == "same=True" for u in own)
        assert all(float(u[5].removeprefix("time=")) <= 180 for u in updates)
    # Red's bot hears of each action before Blue's bot does.
    firsts = [c for c in log if c[0] == "update"]
    assert [str(c[1]) for c in firsts[:2]] == ["RED", "BLUE"]
    # The recorder hands its cells over in descending order; the opponent receives that order.
    for text in game.moves:
        cells = action_from_text(text)
        assert [cells.c1, cells.c2, cells.c3, cells.c4] == sorted(cells.coords, reverse=True)


def test_none_is_an_illegal_action(bots_dir: Path) -> None:
    """A course bot returning None loses with an illegal-move verdict (dir:ClassName form)."""
    game = play_local(f"{bots_dir / 'recorder_bot'}:NoneBot", "random", seat=0)
    assert game.verdict == "illegal_move" and game.winner == 1
    assert "None" in game.reason


def test_dir_colon_class_form(bots_dir: Path) -> None:
    """A course package that names its class explicitly loads through dir:ClassName."""
    factory = load_bot(f"{bots_dir / 'recorder_bot'}:Agent")
    assert type(factory()).__name__ == "CourseAgent"


def test_loader_errors(tmp_path: Path) -> None:
    """Unknown paths, folders without __init__.py and missing classes are clear errors."""
    with pytest.raises(BotLoadError, match="no such"):
        load_bot(str(tmp_path / "nothing_here"))
    (tmp_path / "not_a_package").mkdir()
    with pytest.raises(BotLoadError, match="__init__"):
        load_bot(str(tmp_path / "not_a_package"))
    with pytest.raises(BotLoadError, match="has no 'Nope'"):
        load_bot("client_sdk.examples.random_bot:Nope")


def test_loader_forms(tmp_path: Path) -> None:
    """Modules, module:Name, python files and function bots all load."""
    assert type(load_bot("client_sdk.examples.greedy_bot")()).__name__ == "GreedyBot"
    assert type(load_bot("client_sdk.examples.random_bot:RandomBot")()).__name__ == "RandomBot"
    script = tmp_path / "mybot_file.py"
    script.write_text("def choose_move(state, clocks):\n    return next(iter(state.legal_moves))\n")
    agent = load_bot(str(script))()
    game = play_local(agent, "random")
    assert game.verdict in ("normal", "turn_limit")


def test_course_bots_announce_tetress_only(bots_dir: Path) -> None:
    """Course bots say they play Tetress only (the referee must not give them ATT); SDK bots
    play any game."""
    from client_sdk._loader import games_of

    assert games_of(load_bot(str(bots_dir / "fancy_bot"))) == ("tetress",)
    assert games_of(load_bot("client_sdk.examples.random_bot")) == ()


@pytest.mark.slow
def test_a_checkout_beside_the_bot_does_not_shadow_referee_game(tmp_path: Path) -> None:
    """A course bot lying beside its own ``referee/`` (a course checkout) still gets the
    platform's ``referee.game``, though the loader binds only the ``referee`` package before
    the bot's folder goes on sys.path (``referee.game`` waits for a bot that imports it)."""
    import subprocess

    fake = tmp_path / "referee"
    (fake / "game").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "game" / "__init__.py").write_text("FAKE = True\n")
    bot = tmp_path / "my_bot"
    bot.mkdir()
    (bot / "__init__.py").write_text("from .program import Agent\n")
    (bot / "program.py").write_text(
        "from referee.game import PlaceAction\n\n"
        "class Agent:\n"
        "    def __init__(self, color, **referee):\n"
        "        pass\n"
    )
    probe = (
        "import sys; from client_sdk._loader import load_bot; "
        f"load_bot({str(bot)!r}); import referee.game; "
        "print(referee.game.__file__, getattr(referee.game, 'FAKE', False))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    where, fake_seen = done.stdout.split()
    assert fake_seen == "False"
    assert Path(where).resolve().is_relative_to(Path(__file__).resolve().parents[2] / "referee")


def test_the_course_random_example_finds_exactly_the_legal_placements() -> None:
    """The example's actions are the engine's legal placements, each once: on the empty board,
    at Blue's first action and along a random game while the mover has tokens."""
    import random

    from client_sdk.examples.course_random.program import legal_actions
    from engine.tetress import Tetress
    from referee.game import Board

    def cells(action: object) -> frozenset[tuple[int, int]]:
        return frozenset((c.r, c.c) for c in action.coords)  # type: ignore[attr-defined]

    board, state, rng = Board(), Tetress().new_state(), random.Random(7)
    checked = 0
    while not board.game_over and checked < 40:
        color = board.turn_color
        found = legal_actions(board, color)
        if board.turn_count >= 2 and not any(s.player is color for s in board._state.values()):
            break  # no tokens left: no placement is legal, which the example does not check
        wanted = {frozenset(divmod(i, 11) for i in p.cells) for p in state.legal_moves}
        assert len(found) == len(wanted) and {cells(a) for a in found} == wanted
        action = rng.choice(found)
        board.apply_action(action)
        state.apply(state.game.move_from_text(str(action)))
        checked += 1
    assert checked >= 2


def test_the_course_random_examples_first_action_is_any_free_placement() -> None:
    """Drawn directly, a first action is always one of the legal placements, on the empty board
    and beside the opponent's first action, and the draws spread over the placements."""
    import random

    from client_sdk.examples.course_random.program import first_action, legal_actions
    from referee.game import Board, PlayerColor

    rng = random.Random(1)
    board = Board()
    for color in (PlayerColor.RED, PlayerColor.BLUE):
        legal = {frozenset(a.coords) for a in legal_actions(board, color)}
        drawn = [first_action(board, rng) for _ in range(400)]
        assert all(frozenset(a.coords) in legal for a in drawn)
        assert len({str(a) for a in drawn}) > 300
        board.apply_action(drawn[0])
