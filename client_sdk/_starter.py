"""``python -m client_sdk new NAME [--course]``: a starter bot to begin from.

It writes a folder ``NAME/`` holding the bot's package ``NAME/NAME/`` (an SDK :class:`Agent`,
or with ``--course`` the course's ``Agent`` with ``action``/``update``), a README with the
commands to try it here, against a server and to upload it, and ``test_NAME.py``, which plays
it once with :func:`client_sdk.testing.play_local` (``python test_NAME.py``; or under pytest
where the student installed it: the SDK does not).
"""

from __future__ import annotations

import argparse
import keyword
import sys
from collections.abc import Sequence
from pathlib import Path

_SDK_BOT = '''"""{name}: a bot written with the tetromino SDK. It plays any registered game."""

from __future__ import annotations

import random
from typing import Any

from client_sdk import Agent, Clocks, game_seed
from engine.game import State


class {cls}(Agent):
    """Plays a random legal move: replace choose_move with something smarter."""

    name = "{name}"

    def __init__(self) -> None:
        # Seeded with the game's seed: the same moves again when the game is replayed
        # (python -m client_sdk reproduce), on a server or here.
        self.rng = random.Random(game_seed())

    def choose_move(self, state: State[Any], clocks: Clocks) -> Any:
        # state.legal_moves lists every legal move; state.apply(move) / state.undo() look
        # ahead; clocks.budget is the time this move may take (seconds, None: no limit).
        return self.rng.choice(list(state.legal_moves))
'''

_COURSE_INIT = '''"""{name}: a course-style bot (COMP30024's Agent interface)."""

from .program import Agent

__all__ = ["Agent"]
'''

_COURSE_PROGRAM = '''"""The course's interface: Agent(color, **referee), action(**referee) and
update(color, action, **referee). Only referee.game is imported, as in the course."""

from __future__ import annotations

import random
from typing import Any

from referee.game import BOARD_N, Board, Coord, PlaceAction, PlayerColor
from referee.game.pieces import PieceType, create_piece

_NEIGHBOURS = (Coord(1, 0), Coord(0, 1), Coord(BOARD_N - 1, 0), Coord(0, BOARD_N - 1))


class Agent:
    """Plays a random legal placement: replace action with something smarter."""

    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        self.color = color
        self.board = Board()
        # Drawn from Python's random, which the SDK seeds with the game's seed before this
        # runs: the same moves again when the game is replayed (python -m client_sdk reproduce).
        self.rng = random.Random(random.getrandbits(64))

    def action(self, **referee: Any) -> PlaceAction:
        # referee["time_remaining"] and referee["space_remaining"] are the budgets left.
        return self.rng.choice(placements(self.board, self.color))

    def update(self, color: PlayerColor, action: PlaceAction, **referee: Any) -> None:
        self.board.apply_action(action)


def placements(board: Board, color: PlayerColor) -> list[PlaceAction]:
    """Every legal placement for ``color``: pieces on free cells touching its own tokens
    (anywhere free for its first one)."""
    every = [Coord(r, c) for r in range(BOARD_N) for c in range(BOARD_N)]
    own = [cell for cell in every if board[cell].player == color]
    anchors = {{cell + step for cell in own for step in _NEIGHBOURS}} if own else set(every)
    found: dict[frozenset[Coord], PlaceAction] = {{}}
    for anchor in anchors:
        if board[anchor].player is not None:
            continue
        for kind in PieceType:
            # Each of the piece's own cells in turn lies on the anchor.
            for offset in create_piece(kind, Coord(0, 0)).coords:
                cells = create_piece(kind, anchor - offset).coords
                if all(board[cell].player is None for cell in cells):
                    found.setdefault(frozenset(cells), PlaceAction(*cells))
    return list(found.values())
'''

_TEST = '''"""{name} plays a whole local game against the random bot without breaking a rule.

Run it as a script: python test_{name}.py (or with pytest, which the SDK does not install:
pip install pytest, then python -m pytest test_{name}.py)
"""

from pathlib import Path

from client_sdk.testing import play_local

BOT = str(Path(__file__).resolve().parent / "{name}")


def test_{name}_plays_a_whole_game() -> None:
    """The game ends by the rules, not by a fault of ours (time, illegal move, crash)."""
    for seat in (0, 1):
        game = play_local(BOT, "random", seat=seat)
        assert game.offender != seat, game.reason
        assert game.plies > 0


if __name__ == "__main__":
    test_{name}_plays_a_whole_game()
    print("{name}: ok")
'''

_README = """# {name}

A starter bot ({style}). Its code is in `{name}/`; change it, then:

```sh
# a local game against the random bot (-v: board and clocks every move; --games 10: a match)
python -m client_sdk play {name}
python -m client_sdk play {name} level1 --games 4        # against a reference bot
python test_{name}.py                                   # (pytest works too, once installed)

# against the class server (your token in a file keeps it off the command line)
python -m client_sdk --server HOST --token-file token.txt {name}

# upload it: the server validates it and plays it while you sleep
python -m client_sdk submit --server HOST --token-file token.txt {name}
python -m client_sdk mine --server HOST --token-file token.txt
```

Local games are judged as on the server, but nothing is sandboxed: the bots run as you.
"""


def new_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m client_sdk new",
        description="Write a starter bot NAME/NAME, a README with the commands to try, test "
        "and upload it, and a test that plays it.",
    )
    parser.add_argument("name", metavar="NAME", help="the bot's name (a Python identifier)")
    parser.add_argument(
        "--course",
        action="store_true",
        help="the course's Agent with action/update (default: an SDK Agent)",
    )
    parser.add_argument("--dir", default=".", metavar="DIR", help="where to write NAME/")
    args = parser.parse_args(argv)
    name: str = args.name
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("test"):
        parser.error(f"{name!r}: the name must be a Python identifier (letters, digits, _)")
    folder = Path(args.dir) / name
    if folder.exists():
        print(f"python -m client_sdk new: {folder} exists already", file=sys.stderr)
        return 2
    write_starter(folder, name, course=args.course)
    print(f"wrote {folder}/: {name}/ (the bot), README.md, test_{name}.py")
    print(f"next: cd {folder} && python -m client_sdk play {name}")
    return 0


def write_starter(folder: Path, name: str, *, course: bool) -> None:
    """The starter's files under ``folder`` (which must not exist)."""
    package = folder / name
    package.mkdir(parents=True)
    if course:
        (package / "__init__.py").write_text(_COURSE_INIT.format(name=name), encoding="utf-8")
        (package / "program.py").write_text(_COURSE_PROGRAM.format(), encoding="utf-8")
    else:
        cls = "".join(part.capitalize() for part in name.split("_")) or "Bot"
        text = _SDK_BOT.format(name=name, cls=cls if cls.isidentifier() else "Bot")
        (package / "__init__.py").write_text(text, encoding="utf-8")
    style = "the course's Agent" if course else "an SDK Agent"
    (folder / "README.md").write_text(_README.format(name=name, style=style), encoding="utf-8")
    (folder / f"test_{name}.py").write_text(_TEST.format(name=name), encoding="utf-8")
