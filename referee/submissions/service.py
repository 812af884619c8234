"""The one entry point for uploads (gRPC, the web page, tests): vet, store, validate.

::

    submissions = Submissions(repo, SubmissionStore("/srv/arena/store"))
    result = await submissions.submit("alice", archive_bytes, name="alice-greedy")
    result.status, result.reason, result.output      # accepted / rejected, why, what it printed

or in two steps, to show the version before its validation game ends::

    info = await submissions.receive("alice", archive_bytes, name=None)   # refused: nothing kept
    info = await submissions.validate(info)

``receive`` raises :class:`~referee.submissions.errors.Refused` (``ArchiveRefused``,
``LayoutError``, ``QuotaExceeded``, ``NameTaken``) with the student's sentence, and then
nothing is stored. Otherwise the version exists (status ``validating``) and ``validate`` plays
its validation game and records ``accepted`` or ``rejected`` with the sentence and the bot's
own output. Storage calls run in worker threads; validation games share a semaphore.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from referee.play.bots import register_source
from referee.play.store import Filing, store_game
from referee.sandbox import priority
from referee.sandbox.isolation import Isolation, SandboxUnavailable, choose, require_trusted
from referee.sandbox.launch import BotSpec
from referee.storage import ConflictError, Repository
from referee.storage import submissions as rows
from referee.storage.enums import GameKind, SubmissionStatus
from referee.storage.submissions import AlreadyJudged, NewVersion, SubmissionInfo
from referee.submissions.archive import Unpacked
from referee.submissions.build import BuildFailed, BuildUnavailable, command_of
from referee.submissions.errors import NameTaken, QuotaExceeded
from referee.submissions.firstchecks import FirstCheckSlots
from referee.submissions.layout import Entry, find_entry
from referee.submissions.limits import DEFAULT_LIMITS, UploadLimits
from referee.submissions.naming import bot_name, source_kind
from referee.submissions.offload import FIRST_STEP, FULL_STEP, TAKEN_BACK, Guard, Offload
from referee.submissions.store import Stored, SubmissionStore
from referee.submissions.validate import (
    ValidationGame,
    ValidationResult,
    ValidationSettings,
    check_imports,
    play_validation,
)
from referee.submissions.validate import (
    first_check as play_first_check,
)
from referee.submissions.validation_queue import RUNNING_NOTE, ValidationQueue
from referee.telemetry.logs import get_logger
from referee.telemetry.metrics import observe_validation

log = get_logger("referee.submissions")

#: How a version whose first check passed says so until its full games end (``mine``).
FIRST_PASSED = "first check passed"


@dataclass(frozen=True, slots=True)
class SubmissionResult:
    """What the student is told: bot, version, status, the sentence and their bot's output."""

    bot: str
    version: str
    status: SubmissionStatus
    reason: str
    output: str
    digest: str
    new: bool

    @classmethod
    def of(cls, info: SubmissionInfo, new: bool) -> SubmissionResult:
        return cls(
            info.bot_name,
            info.version,
            info.status,
            info.reason,
            info.output,
            info.digest,
            new,
        )


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


class Submissions:
    """Uploads for one repository and store, under ``limits``, validated per ``validation``."""

    def __init__(
        self,
        repo: Repository,
        store: SubmissionStore,
        *,
        limits: UploadLimits = DEFAULT_LIMITS,
        validation: ValidationSettings | None = None,
        concurrency: int = 1,
        offload: Offload | None = None,
        warm_first_checks: bool = False,
    ) -> None:
        self.repo = repo
        #: With live workers, both validation steps are their jobs (docs/submissions.md).
        self.offload = offload
        self.store = store
        self.limits = limits
        self.validation = validation or ValidationSettings()
        self._slots = asyncio.Semaphore(max(1, concurrency))
        #: First checks' own slots, ahead of the full games; with ``warm_first_checks`` (the
        #: server, not a worker's job) their bots' sandboxes are started ahead (firstchecks.py).
        self.first_slots = FirstCheckSlots(self.validation if warm_first_checks else None)
        #: The full validations, in the fair order (docs/submissions.md).
        self.queue = ValidationQueue(self._full, self._supersede, slots=concurrency)
        # Attempts per player in the rate window, refused archives included (the database
        # only knows stored versions, and a flood of bad archives must be throttled too).
        self._attempts: dict[str, collections.deque[float]] = collections.defaultdict(
            collections.deque
        )

    async def submit(
        self, player: str, data: bytes, name: str | None = None, *, validate: bool = True
    ) -> SubmissionResult:
        """Receive ``data`` and (unless ``validate`` is false) play its validation game."""
        info, new = await self.receive_new(player, data, name)
        if validate and info.status is SubmissionStatus.VALIDATING:
            info, full = await self.check_and_queue(info)
            if full is not None:
                info = await full
        return SubmissionResult.of(info, new)

    async def receive(self, player: str, data: bytes, name: str | None = None) -> SubmissionInfo:
        return (await self.receive_new(player, data, name))[0]

    async def receive_new(
        self, player: str, data: bytes, name: str | None = None
    ) -> tuple[SubmissionInfo, bool]:
        """Vet and store one upload; ``(info, new)`` (``new`` false: same code uploaded before)."""
        self._count_attempt(player)
        since = datetime.now(UTC) - timedelta(seconds=self.limits.rate_window_s)
        used = await asyncio.to_thread(rows.usage, self.repo.db, player, since)
        self._check_rate(player, used.submissions_since)

        def admit(unpacked: Unpacked, digest: str) -> None:
            total = used.stored_bytes + unpacked.bytes
            if total > self.limits.max_stored_bytes_per_player:
                raise QuotaExceeded(
                    f"storage quota: your versions would take {_mb(total)}, over your "
                    f"{_mb(self.limits.max_stored_bytes_per_player)}; ask the instructor to "
                    "remove old versions"
                )

        stored = await asyncio.to_thread(self.store.ingest, data, self.limits, admit)
        new = NewVersion(
            owner=player,
            bot_name=bot_name(name, player, stored),
            version=stored.version,
            digest=stored.digest,
            source_kind=source_kind(stored.entry),
            location=self._location(stored),
            archive_bytes=len(data),
            unpacked_bytes=stored.unpacked.bytes,
            files=stored.unpacked.files,
        )
        try:
            info, created = await asyncio.to_thread(rows.record_submission, self.repo.db, new)
        except ConflictError as exc:
            raise NameTaken(str(exc)) from None
        log.info("submission_stored", player=player, bot=info.label, new=created)
        return info, created

    def _location(self, stored: Stored) -> str:
        """How the version is launched: its SDK target, or the command of its build."""
        if stored.entry.language == "python":
            return stored.target
        return command_of(stored.entry.language, self.store.build_of(stored.digest))

    def _count_attempt(self, player: str) -> None:
        now = time.monotonic()
        attempts = self._attempts[player]
        while attempts and attempts[0] < now - self.limits.rate_window_s:
            attempts.popleft()
        attempts.append(now)

    def _check_rate(self, player: str, stored_recently: int) -> None:
        count = max(len(self._attempts[player]), stored_recently + 1)
        limit = self.limits.max_submissions_per_window
        if count > limit:
            window = self.limits.rate_window_s
            span = f"{window / 3600:g} hour(s)" if window >= 3600 else f"{window:g} s"
            raise QuotaExceeded(
                f"submission rate: at most {limit} uploads per {span}; try again later"
            )

    async def check_and_queue(
        self, info: SubmissionInfo
    ) -> tuple[SubmissionInfo, asyncio.Future[SubmissionInfo] | None]:
        """The first check's verdict, and the full validation's (a future) when it passed."""
        checked, passed = await self.first_check(info)
        return checked, self.queue.put(checked) if passed else None

    async def first_check(
        self, info: SubmissionInfo, *, adopt: bool = False
    ) -> tuple[SubmissionInfo, bool]:
        """Check the imports and the first moves as each seat; ``(info, passed)``. A failure
        is the version's final verdict (rejected); a pass leaves it ``validating``, saying so,
        until its full games end; a missing sandbox leaves it ``validating`` unchecked. With
        live workers (:attr:`offload`), a worker runs it; ``adopt``: a job of this step is
        left by an earlier run (:meth:`resume`), waited for even with no worker alive."""
        started = time.monotonic()
        done = await self._offloaded(FIRST_STEP, info, adopt)
        if done is not None:
            observe_validation("first_check", time.monotonic() - started)
            passed = done.status is SubmissionStatus.VALIDATING and done.reason.startswith(
                FIRST_PASSED
            )
            return done, passed
        try:
            result = await self.judge_first(info)
        except (SandboxUnavailable, BuildUnavailable) as exc:
            log.error("validation_postponed", bot=info.label, reason=str(exc))
            return dataclasses.replace(info, reason=f"validation postponed: {exc}"), False
        observe_validation("first_check", time.monotonic() - started)
        try:
            return await self.settle_first(info, result), result.accepted
        except AlreadyJudged:
            return await self._duplicate(info, FIRST_STEP), False

    async def judge_first(self, info: SubmissionInfo) -> ValidationResult:
        """The first check's result (nothing recorded); ``SandboxUnavailable`` or
        ``BuildUnavailable`` when it cannot run here."""
        root = self.store.path_of(info.digest)
        result = await asyncio.to_thread(check_imports, root)
        if result is not None:
            return result
        async with self.first_slots.slot(info.label):
            try:
                # A C++ or JavaScript version is built first (once): a compile error is
                # the first check's verdict.
                entry = await asyncio.to_thread(find_entry, root)
                return await self._build(info, entry) or await play_first_check(
                    _spec(info, entry), self.validation
                )
            except (SandboxUnavailable, BuildUnavailable):
                raise
            except Exception as exc:  # the referee's own failure: said, never silent
                log.exception("first_check_failed", bot=info.label)
                return ValidationResult(False, f"the first check could not be run ({exc})")

    async def settle_first(
        self, info: SubmissionInfo, result: ValidationResult, guard: Guard | None = None
    ) -> SubmissionInfo:
        """Record the first check: a failure as the final verdict (once), a pass as a note."""
        log.info("submission_checked", bot=info.label, passed=result.accepted)
        if not result.accepted:
            return await self.record(info, result, guard)
        note = f"{FIRST_PASSED} ({result.reason.removeprefix(FIRST_PASSED + ' (')}"
        return await asyncio.to_thread(rows.note_progress, self.repo.db, info.id, note, guard)

    async def _offloaded(
        self, step: str, info: SubmissionInfo, adopt: bool = False
    ) -> SubmissionInfo | None:
        """Run ``step`` on a worker and read the version back (``None``: no live worker, it
        runs here; ``adopt``: its job left by an earlier run is waited for, or taken back).
        A job that ended without a verdict (its workers died at every attempt) is the
        version's rejection, recorded once. A job taken back (no worker left alive) runs
        here unless its step's result was recorded before its worker fell silent."""
        offload = self.offload
        if offload is None or not (adopt or await offload.available()):
            return None
        status = await offload.run(step, info)
        if status is None:
            return None
        now = await asyncio.to_thread(rows.submission_by_id, self.repo.db, info.id)
        if status == TAKEN_BACK:
            first_done = step == FIRST_STEP and now.reason.startswith(FIRST_PASSED)
            done = now.status is not SubmissionStatus.VALIDATING or first_done
            return now if done else None
        if now.status is not SubmissionStatus.VALIDATING or status == "succeeded":
            return now
        log.error("validation_job_failed", bot=info.label, step=step, status=status)
        reason = f"the validation could not be completed on the workers (its job {status})"
        try:
            return await self.record(info, ValidationResult(False, f"{reason}; upload again"))
        except AlreadyJudged:
            return await self._duplicate(info, step)

    async def _duplicate(self, info: SubmissionInfo, step: str) -> SubmissionInfo:
        """The version as judged by another attempt at ``step`` (a worker's job that ran
        while the server did): this attempt's verdict refused, the first one kept."""
        now = await asyncio.to_thread(rows.submission_by_id, self.repo.db, info.id)
        log.info("validation_duplicate_refused", bot=info.label, step=step, status=str(now.status))
        return now

    async def _full(self, info: SubmissionInfo) -> SubmissionInfo:
        """The queue's work: the full validation games of a version whose first check passed."""
        running = f"{info.reason}; {RUNNING_NOTE}"
        await asyncio.to_thread(rows.note_progress, self.repo.db, info.id, running)
        return await self.validate(info)

    async def _supersede(self, info: SubmissionInfo, newer: SubmissionInfo) -> SubmissionInfo:
        """A waiting version replaced by its team's newer upload: never validated."""
        reason = f"not validated: your newer upload {newer.label} replaced it in the queue"
        try:
            return await asyncio.to_thread(
                rows.finish_validation,
                self.repo.db,
                info.id,
                accepted=False,
                reason=reason,
                once=True,
            )
        except AlreadyJudged:
            return await self._duplicate(info, FULL_STEP)

    async def validate(self, info: SubmissionInfo, *, adopt: bool = False) -> SubmissionInfo:
        """Check the version's imports, play its validation game, record the verdict (on a
        worker when :attr:`offload` has a live one; ``adopt``: as for :meth:`first_check`).

        Where the sandbox cannot run (and the operator did not pass ``--no-sandbox``) the
        version stays ``validating`` (validated when the server next starts), never rejected
        for the server's own state. A version its imports already refuse is answered at
        once: only a validation game waits for a slot behind other students' games."""
        done = await self._offloaded(FULL_STEP, info, adopt)
        if done is not None:
            return done
        try:
            result = await self.judge_full(info)
        except (SandboxUnavailable, BuildUnavailable) as exc:
            log.error("validation_postponed", bot=info.label, reason=str(exc))
            return dataclasses.replace(info, reason=f"validation postponed: {exc}")
        try:
            return await self.record(info, result)
        except AlreadyJudged:
            return await self._duplicate(info, FULL_STEP)

    async def judge_full(self, info: SubmissionInfo) -> ValidationResult:
        """The full validation's result (nothing recorded); ``SandboxUnavailable`` or
        ``BuildUnavailable`` when it cannot run here."""
        root = self.store.path_of(info.digest)
        result = await asyncio.to_thread(check_imports, root)
        if result is None:
            # Its bots run below the first checks' (referee.sandbox.priority): they can wait.
            async with self._slots:
                entry = await asyncio.to_thread(find_entry, root)
                with priority.background():
                    result = await self._build(info, entry) or await self._play(info, entry)
        return result

    async def record(
        self, info: SubmissionInfo, result: ValidationResult, guard: Guard | None = None
    ) -> SubmissionInfo:
        """Keep the deciding game (if one was played) and record the verdict, once (a
        version already judged raises ``AlreadyJudged``)."""
        log.info(
            "submission_validated", bot=info.label, accepted=result.accepted, reason=result.reason
        )
        if result.report is not None:
            result = await asyncio.to_thread(self._keep_game, info, result, guard)
        return await asyncio.to_thread(
            rows.finish_validation,
            self.repo.db,
            info.id,
            accepted=result.accepted,
            reason=result.reason,
            output=result.output,
            game_uid=result.game_uid,
            sandbox=result.sandbox,
            once=True,
            guard=guard,
        )

    def _keep_game(
        self, info: SubmissionInfo, result: ValidationResult, guard: Guard | None
    ) -> ValidationResult:
        """Store the validation game as a private, unrated game record (the version against
        the reference bot), so its uploader can read it; a failure to store it is logged and
        the verdict kept (without a game id)."""
        assert result.report is not None and result.game is not None
        refused: list[Exception] = []

        def watched(s: Session) -> None:
            try:
                if guard is not None:
                    guard(s)
            except Exception as exc:
                refused.append(exc)
                raise

        try:
            reference = register_source(self.repo, self.validation.reference)
            upload = self.repo.get_bot_version(info.bot_version_id)
            # One game per seat the upload played (validate.py); older results hold one.
            games = result.games or (ValidationGame(0, result.report, result.outputs),)
            for played in games:
                seats = [reference, reference]
                seats[played.seat] = upload
                store_game(
                    self.repo,
                    played.report,
                    result.game,
                    seats,
                    Filing("validation", GameKind.VALIDATION),
                    outputs=played.outputs,
                    uid=played.report.game_id,
                    guard=watched,
                )
        except Exception:
            if refused:
                raise  # the guard's refusal (a worker lost its job): nothing more is recorded
            log.exception("validation_game_not_stored", bot=info.label)
            return dataclasses.replace(result, game_uid=None)
        return result

    async def _build(self, info: SubmissionInfo, entry: Entry) -> ValidationResult | None:
        """Build a C++ or JavaScript version in the sandbox (once): its compile error as the
        verdict, else None (then it plays; a Python version has nothing to build)."""
        if entry.language == "python":
            return None
        isolation = choose(self.validation.no_sandbox)
        require_trusted(isolation, False, "an uploaded bot's build", self.validation.no_sandbox)
        contained = isolation is Isolation.BWRAP
        try:
            await asyncio.to_thread(self.store.build, info.digest, entry, contained)
        except BuildFailed as exc:
            log.info("submission_build_failed", bot=info.label)
            return ValidationResult(False, f"your {_LANGUAGE_NAMES[entry.language]} {exc}")
        return None

    async def _play(self, info: SubmissionInfo, entry: Entry) -> ValidationResult:
        try:
            return await play_validation(_spec(info, entry), self.validation)
        except SandboxUnavailable:
            raise
        except Exception as exc:  # the referee's own failure: never a silent "validating"
            log.exception("validation_failed", bot=info.label)
            return ValidationResult(False, f"the validation game could not be run ({exc})")

    async def close(self) -> None:
        """Stop waiting for the workers' validation jobs and keeping first checks' sandboxes
        warm (server shutdown)."""
        await self.first_slots.close()
        if self.offload is not None:
            await self.offload.close()

    async def resume(self) -> int:
        """Validate every version left ``validating`` (e.g. by a restart); how many. The
        workers' jobs the previous run left are reconciled first (:meth:`Offload.reconcile`):
        a version's step that still has one is that job's (adopted), never run again beside
        it; the waiting jobs of versions judged since are cancelled."""
        waiting = [
            s
            for s in await asyncio.to_thread(rows.list_submissions, self.repo.db)
            if s.status is SubmissionStatus.VALIDATING
        ]
        left = {} if self.offload is None else await self.offload.reconcile([s.id for s in waiting])
        for info in waiting:
            steps = left.get(info.id, frozenset())
            # Read again: a worker may have judged it while earlier versions were validated.
            info = await asyncio.to_thread(rows.submission_by_id, self.repo.db, info.id)
            if info.status is SubmissionStatus.VALIDATING and FIRST_STEP in steps:
                info, _ = await self.first_check(info, adopt=True)
            if info.status is SubmissionStatus.VALIDATING:
                await self.validate(info, adopt=FULL_STEP in steps)
        return len(waiting)


_LANGUAGE_NAMES = {"cpp": "C++ upload:", "javascript": "JavaScript upload:"}


async def submit(
    repo: Repository,
    store: SubmissionStore,
    player: str,
    archive_bytes: bytes,
    name: str | None = None,
    *,
    limits: UploadLimits = DEFAULT_LIMITS,
    validation: ValidationSettings | None = None,
) -> SubmissionResult:
    """One upload from start to verdict (see :class:`Submissions`)."""
    service = Submissions(repo, store, limits=limits, validation=validation)
    return await service.submit(player, archive_bytes, name)


def _spec(info: SubmissionInfo, entry: Entry) -> BotSpec:
    """How a version is launched: an SDK target, or the command that runs its build."""
    return BotSpec("sdk" if entry.language == "python" else "command", info.location)
