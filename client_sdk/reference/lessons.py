"""Lessons from games: the positions where a seat's move lost the most by the reference
evaluation (the marks of :mod:`client_sdk.reference.judge`, which the game pages show), each
with the reference's good moves, the search depth and a sentence of what went wrong.

The same code makes lessons from a local record (``python -m client_sdk lessons RECORD``) and
from a stored game's analysis on the server, so both say the same of the same game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client_sdk.reference.att_eval import well_shape
from client_sdk.reference.judge import DEFAULT_NODES, Judgement, judge
from client_sdk.reference.search import WIN
from engine.att.state import CHOOSER
from engine.records import GameRecord
from engine.records.lessons import Lesson
from engine.records.replay import apply_recorded, initial_state

#: The marks that make a lesson: inaccuracies, mistakes and blunders.
MARKS = ("?!", "?", "??")
#: The most lessons one game gives one seat (its worst moves).
PER_GAME = 5


def lessons_from_record(
    record: GameRecord,
    seat: int,
    *,
    nodes: int = DEFAULT_NODES,
    bot: str = "",
    version: str = "",
    game_id: str = "",
    per_game: int = PER_GAME,
) -> list[Lesson]:
    """``seat``'s worst moves in ``record``, judged here by the reference search. Every move
    is judged, both seats', as the server's analysis does: the search keeps its table from
    one position to the next, so judging fewer positions could judge these differently."""
    judged = judge(record, nodes=nodes)
    return lessons_from_judgements(
        record,
        judged,
        seat,
        nodes=nodes,
        bot=bot,
        version=version,
        game_id=game_id,
        per_game=per_game,
    )


def lessons_from_judgements(
    record: GameRecord,
    judgements: Sequence[Judgement],
    seat: int,
    *,
    nodes: int,
    bot: str = "",
    version: str = "",
    game_id: str = "",
    per_game: int = PER_GAME,
) -> list[Lesson]:
    """Lessons for ``seat`` from judgements already made (e.g. a stored analysis): its marked
    moves, worst first, at most ``per_game``; book moves are never judged."""
    marked = {j.ply: j for j in judgements if j.glyph in MARKS}
    if not marked:
        return []
    found: list[Lesson] = []
    state = initial_state(record)
    history: list[str] = []
    params = tuple(sorted((str(k), int(v)) for k, v in record.params.items()))
    standard = record.setup is None
    for index, recorded in enumerate(record.moves):
        ply = index + 1
        judgement = marked.get(ply)
        if judgement is not None and state.to_move == seat and not state.is_over():
            kind, sentence = explain(state, recorded.san, judgement)
            found.append(
                Lesson(
                    game=record.game,
                    position=state.to_string(),
                    seat=seat,
                    good=judgement.good or ((judgement.best_move, judgement.best),),
                    params=params,
                    history=tuple(history) if standard else (),
                    played=recorded.san,
                    played_score=judgement.played,
                    depth=judgement.depth,
                    nodes=nodes,
                    glyph=judgement.glyph,
                    kind=kind,
                    sentence=sentence,
                    bot=bot,
                    version=version,
                    game_id=game_id,
                    ply=ply,
                    clock_s=_clock_before(record, index),
                )
            )
        history.append(recorded.san)
        apply_recorded(state, recorded, ply)
    found.sort(key=lambda lesson: -(lesson.best_score or 0.0) + (lesson.played_score or 0.0))
    return sorted(found[:per_game], key=lambda lesson: lesson.ply)


def _clock_before(record: GameRecord, index: int) -> float | None:
    """The mover's clock before the move at ``index``: after its previous move, if recorded."""
    earlier = index - 2
    if earlier < 0:
        return None
    return record.moves[earlier].clock


def explain(state: Any, played: str, judgement: Judgement) -> tuple[str, str]:
    """The kind of mistake and one sentence of what went wrong, for the move ``played``
    (short notation) in ``state`` (left unchanged) where ``judgement.best_move`` was better."""
    best, score, move = judgement.best, judgement.played, judgement.best_move
    if best > WIN / 2 >= score:
        return "missed_win", f"Missed a forced win in {_plies(WIN - best)}: {move} wins."
    if score < -WIN / 2 <= best:
        return (
            "walked_into_loss",
            f"Walked into a forced loss in {_plies(WIN + score)}; {move} holds.",
        )
    after_played = _after(state, played)
    after_best = _after(state, move)
    if state.game.name == "tetress":
        return _tetress(state.to_move, after_played, after_best, move)
    if state.game.name == "att":
        return _att(state.to_move, after_played, after_best, move, judgement.drop)
    return "positional", _drop_sentence(judgement.drop, move)


def _plies(count: float) -> str:
    return "1 ply" if int(count) == 1 else f"{int(count)} plies"


def _after(state: Any, san: str) -> Any:
    child = state.copy()
    child.apply(child.parse_san(san))
    return child


def _tetress(me: int, played: Any, best: Any, move: str) -> tuple[str, str]:
    theirs, theirs_best = played.mobility(1 - me), best.mobility(1 - me)
    if theirs > theirs_best:
        return "gave_room", (
            f"Left the opponent {theirs} moves where {theirs_best} were expected (after {move})."
        )
    mine, mine_best = played.mobility(me), best.mobility(me)
    if mine < mine_best:
        return "lost_room", (
            f"Kept {mine} moves of its own where {mine_best} were possible (after {move})."
        )
    return "positional", f"Gave up tokens the reference keeps with {move}."


def _att(me: int, played: Any, best: Any, move: str, drop: float) -> tuple[str, str]:
    if me == CHOOSER:
        return "easy_piece", (
            f"Gave the placer an easy piece: {move} would leave its well {drop:.0f} points "
            "worse by the reference evaluation."
        )
    heights, holes = well_shape(played)
    best_heights, best_holes = well_shape(best)
    if holes > best_holes:
        return "holes", f"Left {holes} covered holes where {best_holes} were possible ({move})."
    if max(heights) > max(best_heights):
        return "stack", (
            f"Built the stack {max(heights)} rows high where {max(best_heights)} would do ({move})."
        )
    return "positional", _drop_sentence(drop, move)


def _drop_sentence(drop: float, move: str) -> str:
    return f"Gave up {drop:.0f} points of the reference evaluation; {move} keeps them."
