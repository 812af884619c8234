"""The Submissions gRPC service (``tetromino.referee.v1.Submissions``): uploads over a stream,
and each student's own versions, games and bot output.

Every call carries the player's token (``authorization: Bearer <token>``): a student sees
their own versions, games and bot output, the instructor everyone's (the views are
:mod:`referee.rpc.myviews`, the roles :mod:`referee.rpc.callers`). Uploads are received
chunk by chunk and cut off as soon as they pass the archive size limit, so a client can never
make the server buffer more than that. The work itself is :class:`Submissions`'.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import grpc

from client_sdk.proto import submissions_pb2 as spb
from client_sdk.proto import submissions_pb2_grpc
from engine.records.lessons import Limits
from referee.analysis.gameeval import Analyst, store_analysis
from referee.analysis.lessonbook import LessonBook
from referee.hosting.lessonjob import LessonRuns
from referee.rpc import myviews
from referee.rpc.callers import Caller, Callers
from referee.rpc.mylessons import my_lessons
from referee.server import bounds
from referee.server.access import Gate
from referee.server.status import call_in_thread
from referee.storage import Repository
from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import SubmissionInfo
from referee.submissions.errors import NameTaken, QuotaExceeded, UploadRefused
from referee.submissions.service import Submissions
from referee.submissions.validation_queue import Position

SERVICE_NAME = spb.DESCRIPTOR.services_by_name["Submissions"].full_name
#: How long one upload may take to arrive (a stalled or trickling client is cut off).
UPLOAD_TIMEOUT_S = 120.0

_P = ParamSpec("_P")
_T = TypeVar("_T")
#: The request and response types of whichever call a helper serves.
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


class SubmissionService(submissions_pb2_grpc.SubmissionsServicer):
    """Uploads into ``submissions``; each caller sees only their own things."""

    name = SERVICE_NAME

    def __init__(
        self,
        submissions: Submissions,
        *,
        validate: bool = True,
        upload_timeout_s: float = UPLOAD_TIMEOUT_S,
        gate: Gate | None = None,
        analyst: Analyst | None = None,
    ) -> None:
        self.submissions = submissions
        self.upload_timeout_s = upload_timeout_s
        # One upload at a time per player: a client cannot hold many archives in memory.
        self._uploading: set[str] = set()
        #: False only for benchmarks of the store: versions then stay ``validating``.
        self.validate = validate
        self.repo = submissions.repo
        self._validations: set[asyncio.Future[Any]] = set()
        #: The player and role behind each call's token, checked by the server's gate (shared
        #: with its other doors, so a client's failed logins count at all of them).
        self.callers = Callers(self.repo, gate)
        #: Lessons of stored games; games not yet analysed are analysed in the background.
        repo = self.repo
        self.lessons = LessonBook(
            repo, analyst or Analyst(store=functools.partial(store_analysis, repo))
        )
        #: Each accepted version tried on its bot's earlier lessons, after validations.
        validation = submissions.validation
        self.lesson_runs = LessonRuns(
            repo,
            self.lessons,
            Limits(
                validation.time_control.game_time_s,
                validation.time_control.move_time_s,
                validation.memory_mb or 0.0,
            ),
            no_sandbox=validation.no_sandbox,
            busy=[lambda: bool(self._validations)],
        )

    def add_to(self, server: grpc.aio.Server) -> None:
        submissions_pb2_grpc.add_SubmissionsServicer_to_server(self, server)

    async def _caller(self, context: grpc.aio.ServicerContext[_Req, _Resp]) -> Caller:
        caller = await self.callers.of(context)
        if caller is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "a valid player token is required (authorization: Bearer TOKEN)",
            )
        assert caller is not None
        return caller

    async def Submit(
        self,
        request_iterator: AsyncIterator[spb.SubmitRequest],
        context: grpc.aio.ServicerContext[spb.SubmitRequest, spb.SubmitEvent],
    ) -> AsyncIterator[spb.SubmitEvent]:
        player = (await self._caller(context)).player
        if player.name in self._uploading:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "another upload of yours is still arriving: one upload at a time",
            )
        self._uploading.add(player.name)
        try:
            async with asyncio.timeout(self.upload_timeout_s):
                start, data = await self._receive(request_iterator, context)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"the upload did not arrive within {self.upload_timeout_s:g} s",
            )
            raise
        finally:
            self._uploading.discard(player.name)
        try:
            info, new = await self.submissions.receive_new(
                player.name, data, start.bot_name or None
            )
        except QuotaExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            raise  # not reached: abort raises
        except NameTaken as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            raise
        except UploadRefused as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise
        yield spb.SubmitEvent(stored=_stored(info, new))
        if info.status is not SubmissionStatus.VALIDATING or not self.validate:
            if not start.no_wait:
                yield spb.SubmitEvent(validated=_validated(info))
            return
        # The validation runs to its end even if the client goes away.
        checked: asyncio.Future[tuple[SubmissionInfo, asyncio.Future[SubmissionInfo] | None]]
        checked = asyncio.ensure_future(self.submissions.check_and_queue(info))
        self._keep(checked)
        checked.add_done_callback(self._checked_done)
        if start.no_wait:
            return
        info, full = await asyncio.shield(checked)
        yield spb.SubmitEvent(checked=self._checked(info))
        if full is None or start.first_only:
            if full is None and info.status is not SubmissionStatus.VALIDATING:
                yield spb.SubmitEvent(validated=_validated(info))
            return
        yield spb.SubmitEvent(validated=_validated(await asyncio.shield(full)))

    def _keep(self, task: asyncio.Future[Any]) -> None:
        self._validations.add(task)
        task.add_done_callback(self._validations.discard)

    def _checked(self, info: SubmissionInfo) -> spb.Checked:
        place, wait = self.submissions.queue.position(info.id)
        return spb.Checked(
            bot=info.bot_name,
            version=info.version,
            status=info.status.value,
            reason=info.reason,
            output=info.output,
            place=place,
            wait_estimate_s=wait,
        )

    async def _receive(
        self,
        request_iterator: AsyncIterator[spb.SubmitRequest],
        context: grpc.aio.ServicerContext[spb.SubmitRequest, spb.SubmitEvent],
    ) -> tuple[spb.SubmitStart, bytes]:
        limit = self.submissions.limits.max_archive_bytes
        start: spb.SubmitStart | None = None
        parts: list[bytes] = []
        size = 0
        async for message in request_iterator:
            kind = message.WhichOneof("kind")
            if start is None:
                if kind != "start":
                    await context.abort(
                        grpc.StatusCode.INVALID_ARGUMENT, "the first message must be `start`"
                    )
                start = message.start
                try:
                    bounds.check_submit_name(start.bot_name)
                except bounds.BadField as exc:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
                if start.size > limit:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, _too_big(limit))
                continue
            if kind != "chunk":
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "expected archive chunks")
            size += len(message.chunk)
            if size > limit:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, _too_big(limit))
            parts.append(message.chunk)
        if start is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "nothing was uploaded")
        assert start is not None
        return start, b"".join(parts)

    async def ListMine(
        self,
        request: spb.ListMineRequest,
        context: grpc.aio.ServicerContext[spb.ListMineRequest, spb.ListMineResponse],
    ) -> spb.ListMineResponse:
        # The queue's positions read here, on the loop: the view is built in a thread.
        positions = self.submissions.queue.snapshot()
        return await self._view(
            context,
            myviews.list_mine,
            request.player,
            lambda sid: positions.get(sid, Position("")),
        )

    async def GetMyGame(
        self,
        request: spb.GetMyGameRequest,
        context: grpc.aio.ServicerContext[spb.GetMyGameRequest, spb.MyGameRecord],
    ) -> spb.MyGameRecord:
        return await self._view(context, myviews.my_game, request.game_id)

    async def GetMyOutput(
        self,
        request: spb.GetMyOutputRequest,
        context: grpc.aio.ServicerContext[spb.GetMyOutputRequest, spb.MyOutput],
    ) -> spb.MyOutput:
        return await self._view(context, myviews.my_output, request.game_id, _seat(request))

    async def GetMyFailurePack(
        self,
        request: spb.GetMyOutputRequest,
        context: grpc.aio.ServicerContext[spb.GetMyOutputRequest, spb.MyFailurePack],
    ) -> spb.MyFailurePack:
        return await self._view(context, myviews.my_failure_pack, request.game_id, _seat(request))

    async def GetMyLessons(
        self,
        request: spb.GetMyLessonsRequest,
        context: grpc.aio.ServicerContext[spb.GetMyLessonsRequest, spb.MyLessons],
    ) -> spb.MyLessons:
        limits = self.lesson_runs.limits
        return await self._view(context, my_lessons, self.lessons, request, limits)

    async def _view(
        self,
        context: grpc.aio.ServicerContext[_Req, _Resp],
        view: Callable[Concatenate[Repository, Caller, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        """The caller's ``view`` of the store in a worker thread; an expected error (or no
        valid token) ends the call with its status."""
        caller = await self._caller(context)
        return await call_in_thread(context, view, self.repo, caller, *args, **kwargs)

    def receiving(self, player: str) -> bool:
        """Whether an upload of ``player`` is arriving now (a second one is refused)."""
        return player in self._uploading

    def _checked_done(
        self, task: asyncio.Future[tuple[SubmissionInfo, asyncio.Future[SubmissionInfo] | None]]
    ) -> None:
        """After the first check: the lessons run waits for the full games' verdict, if any."""
        if task.cancelled() or task.exception() is not None:
            return
        info, full = task.result()
        if full is None:
            self._accepted(info)
        else:
            full.add_done_callback(self._validated)

    def _validated(self, task: asyncio.Future[SubmissionInfo]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._accepted(task.result())

    def _accepted(self, info: SubmissionInfo) -> None:
        """An accepted version's lessons run is queued (behind validations and games)."""
        if info.status is SubmissionStatus.ACCEPTED:
            self.lesson_runs.submit(info.bot_version_id)

    async def close(self) -> None:
        """Stop the lesson runs (server shutdown): the running bot is killed; stop waiting
        for the workers' validation jobs (they go on, and record their verdicts)."""
        await self.lesson_runs.close()
        await self.submissions.close()

    async def drain(self) -> None:
        """Wait for validations still running (server shutdown)."""
        while self._validations:
            await asyncio.gather(*list(self._validations), return_exceptions=True)
        await self.submissions.queue.drain()


def _seat(request: spb.GetMyOutputRequest) -> int | None:
    """The seat asked for; ``None``: the caller's own."""
    return request.seat if request.HasField("seat") else None


def _too_big(limit: int) -> str:
    return f"the archive is over the upload limit of {limit / (1024 * 1024):.1f} MB"


def _validated(info: SubmissionInfo) -> spb.Validated:
    return spb.Validated(
        bot=info.bot_name,
        version=info.version,
        status=info.status.value,
        reason=info.reason,
        output=info.output,
        sandbox=info.sandbox,
    )


def _stored(info: SubmissionInfo, new: bool) -> spb.Stored:
    return spb.Stored(
        bot=info.bot_name,
        version=info.version,
        digest=info.digest,
        archive_bytes=info.archive_bytes,
        unpacked_bytes=info.unpacked_bytes,
        files=info.files,
        new=new,
        status=info.status.value,
    )
