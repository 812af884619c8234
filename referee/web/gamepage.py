"""A stored game's view as the reader may see it (:func:`load_game_view`), and what the game
page adds to the replay: the chart, the "why this game ended" summary, each ply's think record
and reference judgement, and the PV ghosts on the board; all of it filtered by who may see
which seat's thinking (:mod:`referee.web.thinking`).

The engine's legal-move counts come with the game's view (counted while it is replayed); per
game and viewer class (which seats' thinking, whether the analysis is ready) the chart is
drawn once; a ply only moves the chart's marker and redraws the board.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request

from engine.adjudication.verdicts import Verdict
from engine.records import SearchInfo
from referee.analysis.gameeval import Analysis
from referee.storage import GameDetail, NotFoundError, readers
from referee.web import gamechart as gc
from referee.web.context import Web
from referee.web.replay import GameView, build_view
from referee.web.story import Story, move_sentence, score_words, symlog, tell
from referee.web.thinking import tournament_status, visible_seats

if TYPE_CHECKING:
    from referee.web.context import Web
    from referee.web.replay import MoveLine
    from referee.web.security import Session

#: Lines of a fault's last output shown in the summary.
OUTPUT_LINES = 20


@dataclass(frozen=True, slots=True)
class Extras:
    """The viewer's view of a game's extras (see the module's docstring)."""

    seats: frozenset[int]
    analysis: Analysis | None
    pending: bool
    chart: gc.Chart
    story: Story
    #: Per ply, what the move list adds after the move: the reference mark and its sentence
    #: (when the record has no annotation of its own), the mover's depth and score if visible.
    notes: Mapping[int, Markup]

    def search(self, view: GameView, ply: int) -> SearchInfo | None:
        """The think record of ``ply`` if this viewer may see its mover's."""
        if not 1 <= ply <= len(view.searches) or view.moves[ply - 1].seat not in self.seats:
            return None
        return view.searches[ply - 1]

    def judgement(self, ply: int) -> tuple[str, str] | None:
        """``(glyph, sentence)`` of the reference judgement of ``ply`` if it marks the move."""
        found = self.analysis.evals.get(ply) if self.analysis is not None else None
        if found is None or found.glyph is None:
            return None
        return found.glyph, move_sentence(found)

    def score_words(self, value: float) -> str:
        return score_words(value)


def extras(web: Web, request: Request, view: GameView, detail: GameDetail) -> Extras:
    s = view.summary
    me = web.session(request)
    repo = web.need_repo()
    status = tournament_status(repo, s.tournament_id)
    seats = visible_seats(web.settings.publish_thinking, me, view.players, status)
    stored = (detail.record_json or {}).get("analysis")
    analysis = web.analyst.get(s.id, detail.record_text, stored)
    pending = analysis is None and web.analyst.pending(s.id)
    key = ("chart", s.id, seats, analysis is not None, pending)
    drawn = web.fragments.get(key)
    if drawn is None:
        drawn = (_chart(view, seats, analysis, pending), _notes(view, seats, analysis))
        web.fragments.put(key, drawn)
    chart, notes = drawn
    output = _fault_output(web, me, view, detail, seats)
    story = tell(
        verdict=Verdict(s.verdict),
        sentence=view.sentence,
        winner=s.winner_seat,
        offender=s.offender_seat,
        seat_names=view.seat_names,
        movers=[m.seat for m in view.moves],
        moves=[m.move for m in view.moves],
        analysis=analysis,
        output=output,
        pending=pending,
    )
    return Extras(seats, analysis, pending, chart, story, notes)


def _notes(view: GameView, seats: frozenset[int], analysis: Analysis | None) -> dict[int, Markup]:
    """The move list's additions per ply (see :attr:`Extras.notes`), rendered once."""
    notes: dict[int, Markup] = {}
    for index, line in enumerate(view.moves):
        parts: list[Markup] = []
        judged = analysis.evals.get(line.ply) if analysis is not None else None
        if judged is not None and judged.glyph is not None and line.annotation:
            # The record's own mark stays; the reference search's sentence still explains.
            note = Markup('<div class="comment judged-note">{}</div>')
            parts.append(note.format(move_sentence(judged)))
        elif judged is not None and judged.glyph is not None:
            sentence = move_sentence(judged)
            parts.append(
                Markup(
                    '<span class="annotation" title="{0}">{1}</span>'
                    '<div class="comment judged-note">{0}</div>'
                ).format(sentence, judged.glyph)
            )
        search = view.searches[index] if index < len(view.searches) else None
        if search is not None and line.seat in seats:
            said = []
            if search.depth is not None:
                said.append(f"d{search.depth}")
            if search.score is not None:
                said.append(score_words(search.score))
            if said:
                parts.append(Markup('<div class="searched">{}</div>').format(" ".join(said)))
        if parts:
            notes[line.ply] = Markup("").join(parts)
    return notes


def _fault_output(
    web: Web, me: Session | None, view: GameView, detail: GameDetail, seats: frozenset[int]
) -> str | None:
    """The offender's last output if the viewer owns it or is an instructor (else ``None``)."""
    seat = view.summary.offender_seat
    if seat is None or me is None or seat >= len(detail.stderr):
        return None
    player = view.players[seat] if seat < len(view.players) else None
    mine = player is not None and player.owner_id == me.player_id
    if not readers.may_read_seat(me.role, mine):
        return None
    packs = detail.failure_packs
    text = detail.stderr[seat] or reported_error(packs[seat] if seat < len(packs) else None)
    return "\n".join((text or "(nothing on standard error)").splitlines()[-OUTPUT_LINES:])


def reported_error(pack: str | None) -> str:
    """What a bot reported of its own failure in a pack (e.g. a remote bot's traceback, which
    the referee holds although the bot's output stayed on its machine); empty: nothing."""
    try:
        raw = json.loads(pack or "")
    except ValueError:
        return ""
    messages = raw.get("messages") if isinstance(raw, dict) else None
    return "\n".join(
        str(m.get("detail", ""))
        for m in messages or ()
        if isinstance(m, dict) and m.get("event") == "bot_error"
    )


def _chart(
    view: GameView,
    seats: frozenset[int],
    analysis: Analysis | None,
    pending: bool,
) -> gc.Chart:
    n = view.plies
    names = view.seat_names
    movers = [m.seat for m in view.moves]

    def by_seat(pick: Callable[[int, MoveLine], float | None]) -> list[list[float | None]]:
        columns: list[list[float | None]] = [[None] * (n + 1) for _ in names]
        for ply, line in enumerate(view.moves, start=1):
            value = pick(ply, line)
            if value is not None:
                columns[line.seat][ply] = float(value)
        return columns

    evaluation = [
        analysis.first_seat_eval(p, movers[p - 1]) if analysis is not None and p else None
        for p in range(n + 1)
    ]
    panels = [gc.evaluation_panel(names[0], evaluation, pending)]
    visible = [view.searches[p - 1] if movers[p - 1] in seats else None for p in range(1, n + 1)]
    if any(s is not None and s.score is not None for s in visible):
        scores = by_seat(lambda p, _: _score(visible[p - 1]))
        panels.append(
            gc.Panel(
                "Bot's own score (its own side, log scale)",
                gc.per_seat(names, scores),
                tick=gc.log_tick,
                zero=True,
            )
        )
    if any(s is not None and s.depth is not None for s in visible):
        depths = by_seat(lambda p, _: _depth(visible[p - 1]))
        panels.append(gc.Panel("Search depth (bot-reported)", gc.per_seat(names, depths)))
    legal = [
        [float(c) if c is not None else None for c in col] for col in zip(*view.legal, strict=True)
    ]
    panels.append(gc.Panel("Legal moves", gc.per_seat(names, legal)))
    times = by_seat(lambda _, line: line.time_s)
    panels.append(gc.Panel("Move time (s, wall)", gc.per_seat(names, times, bars=True)))
    cpu = by_seat(lambda _, line: getattr(line, "cpu_s", None))
    if any(v is not None for col in cpu for v in col):
        panels.append(gc.Panel("Move time (s, CPU)", gc.per_seat(names, cpu, bars=True)))
    memory = by_seat(lambda _, line: line.memory_mb)
    panels.append(gc.Panel("Memory (MB)", gc.per_seat(names, memory)))
    clocks = [list(view.clocks_at(p)) for p in range(n + 1)]
    left = [[c[i] for c in clocks] for i in range(len(names))]
    if any(v is not None for col in left for v in col):
        panels.append(gc.Panel("Clock left (s)", gc.per_seat(names, left)))
    game_id = view.summary.id
    return gc.draw(panels, n, lambda p: f"/games/{game_id}?ply={p}", _labeller(view, evaluation))


def _labeller(view: GameView, evaluation: Sequence[float | None]) -> Callable[[int], str]:
    """Each chart column's tooltip: the ply, its move and the reference evaluation."""

    def label(ply: int) -> str:
        if ply == 0:
            return "ply 0: the start"
        line = view.moves[ply - 1]
        text = f"ply {ply}: {line.seat_name} {line.move}"
        if evaluation[ply] is not None:
            text += f" · reference {score_words(evaluation[ply] or 0.0)}"
        return text

    return label


def _score(search: SearchInfo | None) -> float | None:
    return None if search is None or search.score is None else symlog(search.score)


def _depth(search: SearchInfo | None) -> int | None:
    return None if search is None else search.depth


def pv_of(extras: Extras, view: GameView, ply: int) -> Sequence[str]:
    search = extras.search(view, ply)
    return search.pv if search is not None else ()


def load_game_view(
    web: Web, game_id: int, request: Request | None = None
) -> tuple[GameView, GameDetail]:
    """A stored game's view; 404 for a validation game unless ``request`` is signed in as the
    student whose upload it checked or as staff (:mod:`referee.storage.readers`)."""
    cached = web.views.get(game_id)
    if cached is None:
        try:
            detail = web.need_repo().get_game(game_id)
        except NotFoundError:
            raise HTTPException(404, f"no game {game_id}") from None
        names = web.need_tables().names_for(s.bot_version_id for s in detail.summary.seats)
        cached = (build_view(detail, names), detail)
        web.views.put(game_id, cached)
    view, detail = cached
    me = web.session(request) if request is not None else None
    owns = me is not None and any(
        p is not None and p.owner_id == me.player_id for p in view.players
    )
    if not readers.may_read_game(detail.summary.kind, me.role if me else None, owns):
        raise HTTPException(404, f"no game {game_id}")
    return cached
