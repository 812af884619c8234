"""A local referee for bot authors: play your bot against an opponent in this process, with
no network and no server, and get the result and every move back.

    from client_sdk.testing import play_local
    game = play_local(MyBot(), "greedy")
    print(game.winner_name, game.reason, len(game.moves))

Both bots go through the same code as over the network (including the course adapter), and
every decision (clocks, legality, verdicts and their sentences) is taken by the same
:class:`~engine.adjudication.Adjudicator` as the real referee's, so a game here ends as it would
there. Differences: the referee here cannot interrupt a bot that is still thinking (it charges
the time afterwards, and a bot over its time loses once it answers), the clocks contain no
network latency, and memory is not limited (both bots share this process).

``try_lesson`` puts one lesson position to a fresh bot process under the game's limits (what
``python -m client_sdk test`` runs per position, and the referee's lesson runs too).
"""

from client_sdk._lessontest import Tried, try_lesson
from client_sdk._local import BUILTIN_OPPONENTS, BotLike, LocalGame, play_local
from client_sdk._procbot import CHILD_MODULE, BotCommand

__all__ = [
    "BUILTIN_OPPONENTS",
    "CHILD_MODULE",
    "BotCommand",
    "BotLike",
    "LocalGame",
    "Tried",
    "play_local",
    "try_lesson",
]
