"""Behaviour similarity: how often two bots choose the same move on the same positions.

A fixed set of positions (:func:`probe_positions`: random legal playouts from a fixed seed, so
every bot of a run is asked the same ones) is put to every bot in the sandbox, one short game
per position: the referee opens the game with the moves leading to the position (as it opens
games from a book) and ends it by the game's turn limit right after the bot's one move. Two
bots' similarity is the share of positions, among those both answered, where they chose the
same move. Copied code usually plays the same moves; two bots with the same idea may too, so
a high figure is a reason to look, never a verdict.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.registry import load_game
from referee.match.clock import TimeControl
from referee.sandbox.isolation import Isolation
from referee.sandbox.launch import BotSpec

#: Positions are taken between these plies of the random playouts.
FIRST_PLY, LAST_PLY = 4, 30


@dataclass(frozen=True, slots=True)
class Answers:
    """One bot's move at each probe position (``None``: no answer: a crash, a timeout)."""

    name: str
    moves: tuple[str | None, ...]


def probe_positions(game_name: str, count: int, seed: int = 30024) -> list[tuple[str, ...]]:
    """``count`` positions, each as the moves that reach it, from seeded random playouts."""
    rng = random.Random(seed)
    game = load_game(game_name)
    found: list[tuple[str, ...]] = []
    attempts = 0
    while len(found) < count and attempts < count * 20:
        attempts += 1
        state = game.new_state()
        target = rng.randint(FIRST_PLY, LAST_PLY)
        moves: list[str] = []
        while len(moves) < target and not state.is_over():
            legal = sorted(game.move_to_text(m) for m in state.legal_moves)
            if not legal:
                break
            text = rng.choice(legal)
            state.apply(game.move_from_text(text))
            moves.append(text)
        if len(moves) == target and not state.is_over():
            found.append(tuple(moves))
    return found


async def ask(
    spec: BotSpec,
    game_name: str,
    position: Sequence[str],
    *,
    time_control: TimeControl,
    isolation: Isolation,
    memory_mb: float | None = None,
) -> str | None:
    """The move the bot at ``spec`` plays at ``position`` (both seats are the bot; the game
    ends after its one move). ``None`` when it gave no legal move."""
    from referee.play.local import play_match

    game = load_game(game_name, turn_limit=len(position) + 1)
    result = await play_match(
        [spec, spec],
        game,
        time_control=time_control,
        memory_mb=memory_mb,
        labels={"mode": "similarity"},
        opening=tuple(position),
        isolation=isolation,
    )
    played = [m for m in result.report.moves if m.ply >= len(position)]
    return played[0].action if played else None


async def answers_of(
    name: str,
    spec: BotSpec,
    game_name: str,
    positions: Sequence[Sequence[str]],
    *,
    time_control: TimeControl,
    isolation: Isolation,
    concurrency: int = 1,
    memory_mb: float | None = None,
) -> Answers:
    """The bot's moves at every position, ``concurrency`` positions at a time."""
    slots = asyncio.Semaphore(max(1, concurrency))

    async def one(position: Sequence[str]) -> str | None:
        async with slots:
            return await ask(
                spec,
                game_name,
                position,
                time_control=time_control,
                isolation=isolation,
                memory_mb=memory_mb,
            )

    moves = await asyncio.gather(*(one(p) for p in positions))
    return Answers(name, tuple(moves))


def agreement(a: Answers, b: Answers) -> tuple[float | None, int]:
    """The share of positions both answered where they chose the same move, and how many
    positions both answered (``None`` when none)."""
    both = [(x, y) for x, y in zip(a.moves, b.moves, strict=True) if x and y]
    if not both:
        return None, 0
    return sum(x == y for x, y in both) / len(both), len(both)


def answers_json(answers: Answers) -> dict[str, Any]:
    return {"name": answers.name, "moves": list(answers.moves)}
