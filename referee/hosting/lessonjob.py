"""The server's lesson runs: each accepted upload is put, in the sandbox, to every position its
bot's earlier versions lost ("v7 solves 14 of the 20 positions v6 lost"), and each position's
outcome is stored (:mod:`referee.storage.lessonruns`) for the lessons pages.

Each position is tried by the SDK's own one-position runner
(:func:`client_sdk.testing.try_lesson`, what ``python -m client_sdk test`` runs), with the bot
process started in a fresh jail (:func:`referee.sandbox.lessonjail.jailed_child`) under the
game's clock and memory limit. The work is a background job bounded in CPU: one queue, one
runner thread (never the event loop), one position at a time, and it waits before each
position while a validation or another game of the server is running (they come first).
:meth:`LessonRuns.close` cancels it: the position's bot process is killed and the thread
joined, so nothing outlives the server.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from client_sdk.testing import Tried, try_lesson
from engine.records.lessons import Lesson, Limits
from referee.analysis.lessonbook import LessonBook
from referee.sandbox.isolation import Isolation, choose
from referee.sandbox.lessonjail import jailed_child
from referee.storage import Repository
from referee.storage.bots import BotVersionInfo
from referee.storage.lessonruns import PositionRun, save_runs
from referee.storage.submissions import submission_of_version
from referee.telemetry.logs import get_logger

log = get_logger("referee.lessons")

#: How often a waiting run looks again whether the server's other work has finished.
YIELD_POLL_S = 0.5


class LessonRuns:
    """Lesson runs of accepted uploads, one at a time, below validation and games."""

    def __init__(
        self,
        repo: Repository,
        book: LessonBook,
        limits: Limits,
        *,
        no_sandbox: bool = False,
        busy: Sequence[Callable[[], bool]] = (),
    ) -> None:
        self.repo = repo
        self.book = book
        self.limits = limits
        self.no_sandbox = no_sandbox
        #: Each says whether higher-priority work runs now (validations, games).
        self.busy: list[Callable[[], bool]] = list(busy)
        self._queue: asyncio.Queue[int] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lesson-run")
        self._cancelled = threading.Event()
        self._kill: Callable[[], None] | None = None
        self._kill_lock = threading.Lock()
        #: Set once a position's bot process has started (tests wait for it).
        self.started = threading.Event()
        #: Versions whose runs are stored (for logs and tests).
        self.done: list[int] = []
        self._ran = asyncio.Event()

    def submit(self, version_id: int) -> None:
        """Queue ``version_id`` (an accepted upload); the runner starts with the first."""
        self._queue.put_nowait(version_id)
        if self._task is None:
            self._task = asyncio.create_task(self._serve(), name="lesson-runs")

    async def _serve(self) -> None:
        while True:
            version_id = await self._queue.get()
            try:
                await self.run_version(version_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("lesson_run_failed", version_id=version_id)

    async def run_version(self, version_id: int) -> list[PositionRun]:
        """Put ``version_id`` to its bot's earlier versions' lessons and store the outcomes."""
        version = await asyncio.to_thread(self.repo.get_bot_version, version_id)
        upload = await asyncio.to_thread(submission_of_version, self.repo.db, version_id)
        if upload is None:  # a remote bot: the server holds no code to run
            return []
        if not self.no_sandbox and await asyncio.to_thread(choose) is Isolation.NONE:
            log.warning("lesson_run_postponed", bot=version.label, reason="no sandbox here")
            return []
        earlier = await asyncio.to_thread(self._earlier, version)
        runs: list[PositionRun] = []
        for before in earlier:
            found = await asyncio.to_thread(self.book.of_versions, [before])
            for lesson in found.lessons:
                await self._yield()
                tried = await self._try(upload.location, lesson)
                runs.append(position_run(version_id, before.id, lesson, tried))
        await asyncio.to_thread(save_runs, self.repo.db, version_id, runs)
        solved = sum(r.solved for r in runs)
        log.info("lesson_run", bot=version.label, solved=solved, positions=len(runs))
        self.done.append(version_id)
        self._ran.set()
        return runs

    async def stored(self, version_id: int) -> None:
        """Wait until ``version_id``'s runs are stored."""
        while version_id not in self.done:
            self._ran.clear()
            await self._ran.wait()

    def _earlier(self, version: BotVersionInfo) -> list[BotVersionInfo]:
        """The bot's versions before ``version``, newest first."""
        same = [v for v in self.repo.list_bot_versions() if v.bot_id == version.bot_id]
        return sorted((v for v in same if v.id < version.id), key=lambda v: v.id, reverse=True)

    async def _yield(self) -> None:
        """Wait while the server has work that comes first."""
        while any(check() for check in self.busy):
            await asyncio.sleep(YIELD_POLL_S)

    async def _try(self, target: str, lesson: Lesson) -> Tried:
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._executor, self._try_here, target, lesson)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            self._stop_current()
            await asyncio.gather(work, return_exceptions=True)
            raise

    def _try_here(self, target: str, lesson: Lesson) -> Tried:
        """One position, in the runner thread: a fresh jailed bot process."""
        if self._cancelled.is_set():
            raise RuntimeError("lesson runs are cancelled")
        memory = self.limits.memory_mb or None
        with jailed_child(target, memory) as command:
            return try_lesson(target, lesson, self.limits, command=command, on_start=self._started)

    def _started(self, kill: Callable[[], None]) -> None:
        with self._kill_lock:
            self._kill = kill
        self.started.set()
        if self._cancelled.is_set():
            kill()

    def _stop_current(self) -> None:
        self._cancelled.set()
        with self._kill_lock:
            kill = self._kill
        if kill is not None:
            kill()

    async def close(self) -> None:
        """Cancel the queue's runner, kill the bot it is running, and wait for its thread."""
        self._cancelled.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._stop_current()
        await asyncio.to_thread(self._executor.shutdown, wait=True)


def position_run(version_id: int, lessons_of: int, lesson: Lesson, tried: Tried) -> PositionRun:
    """What is stored of one position's try."""
    return PositionRun(
        version_id,
        lessons_of,
        lesson.game_id,
        lesson.ply,
        lesson.seat,
        tried.result,
        tried.move,
        round(tried.seconds, 3),
    )
