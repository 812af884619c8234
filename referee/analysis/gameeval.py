"""The reference evaluation of a stored game: every move judged by the shipped reference search
at a fixed node budget (:func:`client_sdk.reference.judge.judge`, as ``referee annotate``),
once per game; the game pages and the lessons (:mod:`referee.analysis.lessonbook`) read it.

It is computed off the request path, in a child process at low priority (so the referee's
event loop, which may share this process, never waits on it), one game at a time; the result is
kept in the game's JSON record (``analysis``) so it is computed once per stored game, and in
memory. A page asks :meth:`Analyst.get`: the analysis, or ``None`` while it is
being computed (the page says so).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from client_sdk.reference.judge import Judgement, judge
from referee.storage import Repository
from referee.telemetry.logs import get_logger

log = get_logger("referee.web")

#: Search nodes per position: a quarter of ``referee annotate``'s default (under the reference
#: bot's level 1, 1200 for Tetress), so a long game is analysed in seconds.
ANALYSIS_NODES = 500
#: Sets another budget for a server's analyses (``analysis_nodes``): 2000 makes lessons whose
#: better moves tell a strong bot from a weak one, at about 3.4x the CPU a game (docs/web.md).
NODES_ENV = "TETROMINO_ANALYSIS_NODES"
#: The budgets ``NODES_ENV`` may set: below, marks are noise; above, a game takes minutes.
NODES_RANGE = range(100, 20_001)


def analysis_nodes() -> int:
    """The server's budget per position: ``NODES_ENV`` when it holds a number in
    ``NODES_RANGE``, else :data:`ANALYSIS_NODES` (a bad value is logged, not fatal)."""
    text = os.environ.get(NODES_ENV, "").strip()
    if not text:
        return ANALYSIS_NODES
    if text.isdigit() and int(text) in NODES_RANGE:
        return int(text)
    log.warning(
        "analysis_nodes_ignored",
        value=text[:40],
        why=f"{NODES_ENV} takes a whole number from {NODES_RANGE.start} to {NODES_RANGE.stop - 1}",
        nodes=ANALYSIS_NODES,
    )
    return ANALYSIS_NODES


#: The most one game's analysis may take before it is given up (and tried again later).
ANALYSIS_TIMEOUT_S = 600.0
#: The key of the analysis in a stored JSON record.
RECORD_KEY = "analysis"
WIN = 1_000_000.0


#: The reference search's view of one move, from the mover's side (the judgement itself).
PlyEval = Judgement


@dataclass(frozen=True, slots=True)
class Analysis:
    nodes: int
    #: By ply (book moves and moves after the end are absent).
    evals: Mapping[int, PlyEval]

    def first_seat_eval(self, ply: int, mover: int) -> float | None:
        """The evaluation after ``ply`` from the first seat's side (``None``: not judged)."""
        found = self.evals.get(ply)
        if found is None:
            return None
        return found.played if mover == 0 else -found.played


def analysis_of(data: object) -> Analysis | None:
    """An :class:`Analysis` from its stored JSON form (``None`` if it is not one)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("moves"), list):
        return None
    evals = {}
    try:
        for item in data["moves"]:
            ply = int(item["ply"])
            glyph = item.get("glyph")
            evals[ply] = PlyEval(
                ply,
                float(item["played"]),
                float(item["best"]),
                str(item["best_move"]),
                glyph if glyph in ("??", "?", "?!", "!") else None,
                int(item.get("depth", 0)),
                tuple((str(m), float(v)) for m, v in item.get("good", ())),
            )
        return Analysis(int(data.get("nodes", 0)), evals)
    except (KeyError, TypeError, ValueError):
        return None


def analyse(record_text: str, nodes: int = ANALYSIS_NODES) -> dict[str, object]:
    """The analysis of a text record, in its stored JSON form (runs in the child process)."""
    from engine.records import read_record

    record = read_record(record_text)
    return {
        "engine": "reference",
        "nodes": nodes,
        "moves": [_stored(j) for j in judge(record, nodes=nodes)],
    }


def _stored(j: Judgement) -> dict[str, object]:
    """One judgement as stored: with its depth, and the good moves of a marked one (what a
    lesson shows)."""
    item: dict[str, object] = {
        "ply": j.ply,
        "played": round(j.played, 3),
        "best": round(j.best, 3),
        "best_move": j.best_move,
        "glyph": j.glyph,
        "depth": j.depth,
    }
    if j.glyph in ("?!", "?", "??"):
        item["good"] = [[m, round(v, 3)] for m, v in j.good]
    return item


def store_analysis(repo: Repository, game_id: int, data: Mapping[str, object]) -> None:
    """Keep a finished analysis in the game's stored JSON record (computed once)."""
    detail = repo.get_game(game_id)
    if detail.record_text and detail.record_json is not None:
        record = {**detail.record_json, RECORD_KEY: data}
        repo.set_game_record(game_id, detail.record_text, record)


def _run_child(record_text: str, nodes: int) -> dict[str, object]:
    """:func:`analyse` in a child process at low priority; raises on failure."""
    done = subprocess.run(
        [sys.executable, "-m", "referee.analysis.gameeval", str(nodes)],
        input=record_text,
        capture_output=True,
        text=True,
        timeout=ANALYSIS_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"analysis failed: {last}")
    # Checked by :func:`analysis_of` before it is shown or stored.
    data: dict[str, object] = json.loads(done.stdout)
    return data


class Analyst:
    """Analyses stored games one at a time on a background thread; keeps the results.

    ``mode``: ``process`` (a child process per game), ``thread`` (in this process) or ``off``
    (stored analyses are still shown). ``store(game_id, data)`` keeps a finished analysis with
    the game (the web front writes it into the stored JSON record); failures are logged and the
    game is tried again on a later request.
    """

    def __init__(
        self,
        store: Callable[[int, Mapping[str, object]], None] | None = None,
        nodes: int | None = None,
        mode: str = "process",
    ) -> None:
        if mode not in ("process", "thread", "off"):
            raise ValueError(f"analysis is process, thread or off, not {mode!r}")
        self.nodes = analysis_nodes() if nodes is None else nodes
        self.mode = mode
        self._store = store
        self._run: Callable[[str, int], Mapping[str, object]] = (
            _run_child if mode == "process" else analyse
        )
        self._done: dict[int, Analysis] = {}
        self._queued: set[int] = set()
        self._jobs: queue.Queue[tuple[int, str]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def get(self, game_id: int, record_text: str | None, stored: object = None) -> Analysis | None:
        """The game's analysis if known (``stored``: the record's own), else ``None`` and the
        game is queued (once) when it has a record to analyse."""
        with self._lock:
            found = self._done.get(game_id)
            if found is not None:
                return found
            kept = analysis_of(stored)
            if kept is not None:
                self._done[game_id] = kept
                return kept
            if record_text and self.mode != "off" and game_id not in self._queued:
                self._queued.add(game_id)
                self._jobs.put((game_id, record_text))
                self._start()
        return None

    def pending(self, game_id: int) -> bool:
        with self._lock:
            return game_id in self._queued

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            # A daemon: the process may exit with games still queued (they are redone later).
            self._thread = threading.Thread(target=self._work, name="analysis", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while True:
            try:
                game_id, text = self._jobs.get(timeout=5.0)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        self._thread = None
                        return
                continue
            try:
                data = self._run(text, self.nodes)
                result = analysis_of(data)
                if result is None:
                    raise RuntimeError("analysis gave no moves")
                if self._store is not None:
                    self._store(game_id, data)
                with self._lock:
                    self._done[game_id] = result
            except Exception as exc:
                log.warning("analysis_failed", game_id=game_id, error=str(exc)[:200])
            finally:
                with self._lock:
                    self._queued.discard(game_id)


def main() -> int:
    """``python -m referee.analysis.gameeval NODES`` < record text: the analysis as JSON."""
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else ANALYSIS_NODES
    os.nice(10)  # behind the referee and its bots
    print(json.dumps(analyse(sys.stdin.read(), nodes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
