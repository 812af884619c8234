"""``python -m referee RED BLUE``: the course referee's command line, run as ``referee match``.

Students run their bots the course's way (``python -m referee my_bot my_bot -t 180 -s 250
-v 2``). The course's flags are read here: ``-t``/``--time``, ``-s``/``--space`` and
``-v``/``--verbosity`` mean what they mean there; ``-c``/``--colour`` and ``-C``/``--colourless``
colour the board or not; ``-a``/``--ascii`` is how the board is drawn anyway; ``-u``/
``--unicode`` and ``-l``/``--logfile`` have no counterpart and get one line saying so. Any other
option is ``referee match``'s own. ``python -m referee COMMAND ...`` (``serve``, ``games``...)
is the ``referee`` command itself.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

PROG = "python -m referee"

USAGE = f"""usage: {PROG} [-t S] [-s MB] [-v [N]] [-c | -C] [MATCH OPTIONS] RED BLUE
       {PROG} COMMAND ...   (the same as: referee COMMAND ...)

Plays one game between two bots, the course referee's way: this is `referee match RED BLUE`
(see `referee match --help` for every option).

  -t S, --time S         seconds per bot per game (default 180)
  -s MB, --space MB      memory per bot in MB (default 250)
  -v [N], --verbosity N  0: the result only; 1 (-v): the board and clocks every move; 2, 3: logs
  -c, --colour           colour the board; -C, --colourless: never
"""

#: Course flags spelled as ``referee match`` spells them.
_SAME = {
    "--verbosity": "--verbose",
    "-c": "--color",
    "--colour": "--color",
    "-C": "--no-color",
    "--colourless": "--no-color",
}
_DROPPED = {
    "-a": None,
    "--ascii": None,
    "-u": "-u (Unicode board): the board is drawn in ASCII here",
    "--unicode": "--unicode: the board is drawn in ASCII here",
}
_LOGFILE = ("-l", "--logfile")
_LOGFILE_NOTE = (
    "{flag}: no log file here; the game's lines go to the terminal (redirect with > FILE), "
    "and --record FILE keeps the game record"
)


def translate(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``referee match`` words for a course command line, and a note per course flag that
    means nothing here."""
    words: list[str] = []
    notes: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        flag, eq, _ = arg.partition("=")
        if arg in _SAME:
            words.append(_SAME[arg])
        elif eq and flag in _SAME:
            words.append(_SAME[flag] + arg[len(flag) :])
        elif arg in _DROPPED:
            note = _DROPPED[arg]
            if note:
                notes.append(note + "; ignored")
        elif flag in _LOGFILE:
            notes.append(_LOGFILE_NOTE.format(flag=flag))
            # The course's -l takes an optional file name: the word after it, unless that word
            # is one of the two bots (two bots are there without it, before or after -l).
            following = args[i + 1] if i + 1 < len(args) else ""
            if not eq and following and not following.startswith("-"):
                i += 1 if _bots_among([*args[:i], *args[i + 2 :]]) >= 2 else 0
        else:
            words.append(arg)
        i += 1
    return words, notes


def _match_options() -> tuple[frozenset[str], frozenset[str]]:
    """``referee match``'s options that take a value, and those whose value is optional."""
    import argparse

    from referee.commands.main import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions = [a for a in commands.choices["match"]._actions if a.option_strings]
    one = frozenset(o for a in actions if a.nargs in (None, 1) for o in a.option_strings)
    optional = frozenset(o for a in actions if a.nargs == "?" for o in a.option_strings)
    return one, optional


def _bots_among(words: Sequence[str]) -> int:
    """How many of ``words`` are bots: the words that are neither options nor their values."""
    one, optional = _match_options()
    bots = 0
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1:
            flag = _SAME.get(word, word)
            following = words[index + 1] if index + 1 < len(words) else ""
            skip = flag in one or (flag in optional and following.isdigit())
        else:
            bots += 1
    return bots


def course_main(argv: Sequence[str]) -> int:
    """Entry point of ``python -m referee``."""
    from referee.commands.main import build_parser, main, subcommand_names

    words = list(argv)
    first = words[0] if words else ""
    if first and first in subcommand_names(build_parser()) and not Path(first).exists():
        return main(words)
    if not words or first in ("-h", "--help"):
        print(USAGE, end="", file=sys.stdout if words else sys.stderr)
        return 0 if words else 2
    translated, notes = translate(words)
    for note in notes:
        print(f"{PROG}: {note}", file=sys.stderr)
    return main(["match", *translated])
