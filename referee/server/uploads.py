"""The Submissions gRPC service (``tetromino.referee.v1.Submissions``): uploads over a stream,
and each student's own versions, games and bot output.

Every call carries the player's token (``authorization: Bearer <token>``); the player it
belongs to is the only one whose versions and output the call can see. Uploads are received
chunk by chunk and cut off as soon as they pass the archive size limit, so a client can never
make the server buffer more than that. The work itself is :class:`Submissions`'.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import grpc

from client_sdk.proto import submissions_pb2 as spb
from client_sdk.proto import submissions_pb2_grpc
from referee.storage import NotFoundError, PlayerInfo
from referee.storage import submissions as rows
from referee.storage.enums import SubmissionStatus
from referee.storage.submissions import SubmissionInfo
from referee.submissions.errors import NameTaken, QuotaExceeded, Refused
from referee.submissions.service import Submissions

SERVICE_NAME = spb.DESCRIPTOR.services_by_name["Submissions"].full_name
#: How long one upload may take to arrive (a stalled or trickling client is cut off).
UPLOAD_TIMEOUT_S = 120.0


def _time(value: datetime | None) -> str:
    return value.isoformat().replace("+00:00", "Z") if value is not None else ""


def _token(context: Any) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer":
                return token.strip()
    return ""


class SubmissionService(submissions_pb2_grpc.SubmissionsServicer):
    """Uploads into ``submissions``; each caller sees only their own things."""

    name = SERVICE_NAME

    def __init__(
        self,
        submissions: Submissions,
        *,
        validate: bool = True,
        upload_timeout_s: float = UPLOAD_TIMEOUT_S,
    ) -> None:
        self.submissions = submissions
        self.upload_timeout_s = upload_timeout_s
        # One upload at a time per player: a client cannot hold many archives in memory.
        self._uploading: set[str] = set()
        #: False only for benchmarks of the store: versions then stay ``validating``.
        self.validate = validate
        self.repo = submissions.repo
        self._validations: set[asyncio.Task[Any]] = set()

    def add_to(self, server: grpc.aio.Server) -> None:
        submissions_pb2_grpc.add_SubmissionsServicer_to_server(self, server)

    async def _player(self, context: Any) -> PlayerInfo:
        token = _token(context)
        player = await asyncio.to_thread(self.repo.authenticate, token) if token else None
        if player is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "a valid player token is required (authorization: Bearer TOKEN)",
            )
        assert player is not None
        return player

    async def Submit(
        self, request_iterator: AsyncIterator[spb.SubmitRequest], context: Any
    ) -> AsyncIterator[spb.SubmitEvent]:
        player = await self._player(context)
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
        except Refused as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise
        yield spb.SubmitEvent(stored=_stored(info, new))
        if info.status is SubmissionStatus.VALIDATING and self.validate:
            # The validation runs to its end even if the client goes away.
            task = asyncio.ensure_future(self.submissions.validate(info))
            self._validations.add(task)
            task.add_done_callback(self._validations.discard)
            if start.no_wait:
                return
            info = await asyncio.shield(task)
        elif start.no_wait:
            return
        yield spb.SubmitEvent(
            validated=spb.Validated(
                bot=info.bot_name,
                version=info.version,
                status=info.status.value,
                reason=info.reason,
                output=info.output,
                sandbox=info.sandbox,
            )
        )

    async def _receive(
        self, request_iterator: AsyncIterator[spb.SubmitRequest], context: Any
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

    async def ListMine(self, request: spb.ListMineRequest, context: Any) -> spb.ListMineResponse:
        player = await self._player(context)
        return await asyncio.to_thread(self._mine, player)

    def _mine(self, player: PlayerInfo) -> spb.ListMineResponse:
        mine = rows.list_submissions(self.repo.db, owner=player.name)
        playing = {
            rows.playing_version(self.repo.db, v.bot_id)
            for v in self.repo.list_bot_versions()
            if v.owner_id == player.id
        }
        reply = spb.ListMineResponse(player=player.name)
        reply.versions.extend(_view(s, s.bot_version_id in playing) for s in mine)
        reply.games.extend(self._my_games(player))
        return reply

    def _my_games(self, player: PlayerInfo) -> list[spb.MyGame]:
        versions = self.repo.list_bot_versions()
        labels = {v.id: v.label for v in versions}
        own = {v.id for v in versions if v.owner_id == player.id}
        tournaments = {t.id: t.name for t in self.repo.list_tournaments()}
        games: dict[str, spb.MyGame] = {}
        for version_id in sorted(own):
            for g in self.repo.list_games(bot_version_id=version_id, limit=None):
                seat = next(s.seat for s in g.seats if s.bot_version_id in own)
                games[g.uid] = spb.MyGame(
                    game_id=g.uid,
                    tournament=tournaments.get(g.tournament_id or 0, ""),
                    seats=[labels.get(s.bot_version_id, "?") for s in g.seats],
                    my_seat=seat,
                    result=g.result,
                    verdict=g.verdict.value,
                    reason=g.reason,
                    finished_at=_time(g.finished_at),
                )
        return sorted(games.values(), key=lambda g: (g.finished_at, g.game_id))

    async def GetMyOutput(self, request: spb.GetMyOutputRequest, context: Any) -> spb.MyOutput:
        player = await self._player(context)
        try:
            found = await asyncio.to_thread(self._output, player, request.game_id)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
            raise
        if found is None:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "none of your bots played this game: you may read only your own bot's output",
            )
        assert found is not None
        return found

    def _output(self, player: PlayerInfo, game_id: str) -> spb.MyOutput | None:
        detail = self.repo.get_game(game_id)
        versions = {v.id: v for v in self.repo.list_bot_versions() if v.owner_id == player.id}
        for seat in detail.summary.seats:
            if seat.bot_version_id in versions:
                return spb.MyOutput(
                    game_id=detail.summary.uid,
                    seat=seat.seat,
                    bot=versions[seat.bot_version_id].label,
                    output=detail.stderr[seat.seat] or "",
                    record=detail.record_text or "",
                )
        return None

    async def drain(self) -> None:
        """Wait for validations still running (server shutdown)."""
        while self._validations:
            await asyncio.gather(*list(self._validations), return_exceptions=True)


def _too_big(limit: int) -> str:
    return f"the archive is over the upload limit of {limit / (1024 * 1024):.1f} MB"


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


def _view(info: SubmissionInfo, playing: bool) -> spb.SubmissionView:
    return spb.SubmissionView(
        bot=info.bot_name,
        version=info.version,
        digest=info.digest,
        status=info.status.value,
        reason=info.reason,
        uploaded_at=_time(info.uploaded_at),
        validated_at=_time(info.validated_at),
        archive_bytes=info.archive_bytes,
        unpacked_bytes=info.unpacked_bytes,
        files=info.files,
        playing=playing,
        output=info.output,
    )
