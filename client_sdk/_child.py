"""One bot in its own process, for ``python -m client_sdk play``: ``python -m client_sdk._child
BOT`` loads the bot and then serves one game at a time over its stdin and stdout, one JSON
object a line (see :mod:`client_sdk._procbot`, the other end).

Requests: ``{"op": "start", "info": {...}, "position": P}``, ``{"op": "move", "clocks":
{...}, "position": P}``, ``{"op": "accepted", "seat": S, "text": T}``, ``{"op": "end",
"result": {...}, "position": P}``. Replies: ``{"ready": true}`` or ``{"load_error": LINE}``
once after loading, then one reply to each ``move``. The bot's own prints go to stderr:
stdout carries only the replies. Only portable calls (``os.dup``/``os.dup2``) are used, so it
runs on Windows as on Linux and macOS.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from dataclasses import asdict
from typing import IO, Any

from client_sdk._agent import Clocks, GameInfo, GameResult
from client_sdk._driver import GameDriver
from client_sdk._loader import AgentFactory, BotLoadError, load_bot
from engine.adjudication.verdicts import Verdict, parse_ending
from engine.registry import load_game


def _replies() -> IO[str]:
    """Our private copy of stdout for the replies; fd 1 (and ``sys.stdout``) become stderr,
    so whatever the bot prints cannot corrupt the conversation."""
    sys.stdout.flush()
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return replies


def _send(out: IO[str], **reply: Any) -> None:
    out.write(json.dumps(reply) + "\n")
    out.flush()


def _load(out: IO[str], bot: str) -> AgentFactory | None:
    """Load ``bot`` and tell the parent (``ready``, or ``load_error`` and ``None``)."""
    try:
        factory = load_bot(bot)
    except BotLoadError as exc:
        _send(out, load_error=str(exc))
        return None
    _send(out, ready=True)
    return factory


def _start(factory: AgentFactory, request: dict[str, Any]) -> GameDriver:
    raw = request["info"]
    info = GameInfo(
        game_id=raw["game_id"],
        game=raw["game"],
        seat=raw["seat"],
        seat_names=tuple(raw["seat_names"]),
        params=raw["params"],
        time_per_game=raw["time_per_game"],
        move_time=raw["move_time"],
        memory_limit_mb=raw["memory_limit_mb"],
        opponent=raw["opponent"],
    )
    rules = load_game(info.game, **dict(info.params))
    return GameDriver(factory, info, rules, rules.state_from_string(request["position"]))


def _result(raw: dict[str, Any]) -> GameResult:
    verdict = Verdict(raw["verdict"])
    return GameResult(
        raw["game_id"],
        raw["seat"],
        raw["winner"],
        verdict,
        parse_ending(raw["termination"]),
        raw["reason"],
        raw["plies"],
        tuple(raw["seat_names"]),
    )


def serve(bot: str) -> int:
    """Load ``bot``, then answer requests until stdin closes."""
    out = _replies()
    # Ctrl-C reaches the whole terminal's process group: the command decides, and ends us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    seed = os.environ.get("TETROMINO_PLAY_SEED")
    if seed is not None:
        random.seed(int(seed))
    factory = _load(out, bot)
    if factory is None:
        return 2
    driver: GameDriver | None = None
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "start":
            driver = _start(factory, request)
        elif driver is None:
            continue
        elif op == "move":
            reply = driver.request(Clocks(**request["clocks"]), request["position"])
            _send(
                out,
                text=reply.text,
                not_a_move=reply.not_a_move,
                expected=reply.expected,
                error=reply.error,
                think=reply.think_time_s,
                peak=reply.peak_rss_bytes,
                # The bot's think record, for the game's record (as the referee keeps it).
                search=None if reply.think is None else asdict(reply.think),
            )
        elif op == "accepted":
            driver.accepted(request["seat"], request["text"])
        elif op == "end":
            driver.finish(_result(request["result"]), request["position"])
            driver = None
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
