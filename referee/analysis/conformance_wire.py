"""The conformance kit's wire: a bare ``Play`` endpoint on a local port whose streams a
scenario drives message by message (raw bytes out, so it can also send what a real referee
never would), and the bot under test as a process of its own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import grpc
from grpc import aio

from client_sdk.proto import referee_pb2 as pb

PLAY_METHOD = "/tetromino.referee.v1.Referee/Play"


class Stream:
    """One ``Play`` stream a bot opened: its messages in, ours out, and how it ends."""

    def __init__(self, context: aio.ServicerContext[bytes, bytes]) -> None:
        self._context = context
        self.inbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        self.finish = asyncio.Event()
        self.drop = False

    async def send(self, message: pb.RefereeMessage | bytes) -> None:
        """Write one message (bytes go out as they are)."""
        data = message if isinstance(message, bytes) else message.SerializeToString()
        with contextlib.suppress(Exception):
            await self._context.write(data)

    async def receive(self, timeout: float) -> pb.BotMessage | None:
        """The bot's next message; None when the stream ended; TimeoutError when none came."""
        return await asyncio.wait_for(self.inbox.get(), timeout)

    def close(self, *, drop: bool = False) -> None:
        """End the stream: normally, or (``drop``) as a broken connection would."""
        self.drop = drop
        self.finish.set()

    async def _read(self) -> None:
        try:
            while True:
                data: object = await self._context.read()
                if not isinstance(data, bytes):  # aio.EOF: the bot closed its side
                    break
                try:
                    self.inbox.put_nowait(pb.BotMessage.FromString(data))
                except Exception:  # an undecodable message: the scenario sees an empty one
                    self.inbox.put_nowait(pb.BotMessage())
        except Exception:  # the stream broke under us
            pass
        self.inbox.put_nowait(None)


class KitServer:
    """The kit's referee endpoint on 127.0.0.1, port chosen by the system."""

    def __init__(self) -> None:
        self.streams: asyncio.Queue[Stream] = asyncio.Queue()
        self.opened = 0
        self._server = aio.server()
        handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
            self._play
        )
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    "tetromino.referee.v1.Referee", {"Play": handler}
                ),
            )
        )
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def _play(self, _requests: object, context: aio.ServicerContext[bytes, bytes]) -> None:
        stream = Stream(context)
        self.opened += 1
        reader = asyncio.create_task(stream._read())
        await self.streams.put(stream)
        try:
            await stream.finish.wait()
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if stream.drop:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "conformance kit: connection dropped")

    async def next_stream(self, timeout: float, bot: BotRun | None = None) -> Stream | None:
        """The next stream a bot opens within ``timeout`` seconds, else None (at once when
        ``bot`` exits first)."""
        opened = asyncio.ensure_future(self.streams.get())
        waiters: set[asyncio.Future[Any]] = {opened}
        if bot is not None and bot.proc is not None:
            waiters.add(asyncio.ensure_future(bot.proc.wait()))
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        return opened.result() if opened.done() and not opened.cancelled() else None

    async def start(self) -> None:
        await self._server.start()

    async def stop(self) -> None:
        await self._server.stop(grace=None)


class BotRun:
    """The bot under test: ``argv`` with ``{server}``, ``{token}`` and ``{token_file}``
    replaced, and ``TETROMINO_SERVER``, ``TETROMINO_TOKEN_FILE`` and ``TETROMINO_TOKEN`` set."""

    def __init__(self, argv: Sequence[str], server: str, token: str, folder: Path) -> None:
        token_file = folder / "token"
        token_file.write_text(token + "\n")
        token_file.chmod(0o600)
        self.log_path = folder / "bot.log"
        self.argv = [
            a.replace("{server}", server)
            .replace("{token_file}", str(token_file))
            .replace("{token}", token)
            for a in argv
        ]
        self.env = dict(
            os.environ,
            TETROMINO_SERVER=server,
            TETROMINO_TOKEN_FILE=str(token_file),
            TETROMINO_TOKEN=token,
        )
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> str:
        """Start it; an empty string, or why it could not start."""
        try:
            with self.log_path.open("wb") as log:
                self.proc = await asyncio.create_subprocess_exec(
                    *self.argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=self.env,
                    start_new_session=True,
                )
        except OSError as exc:
            return f"{self.argv[0]}: {exc.strerror or exc}"
        return ""

    async def exit_code(self, timeout: float) -> int | None:
        """Its exit status within ``timeout`` seconds, else None (still running)."""
        if self.proc is None:
            return None
        if self.proc.returncode is not None:
            return self.proc.returncode
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return None

    def tail(self, lines: int = 3) -> str:
        """The last lines it printed, for a failed check's detail."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])

    async def stop(self) -> None:
        """Kill its whole process group (if it is still there) and reap it."""
        if self.proc is None or self.proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()


@contextlib.asynccontextmanager
async def kit_session(argv: Sequence[str], token: str) -> AsyncIterator[tuple[KitServer, BotRun]]:
    """A started kit server and the bot started against it; both stopped on the way out."""
    server = KitServer()
    await server.start()
    with tempfile.TemporaryDirectory(prefix="conformance-") as folder:
        bot = BotRun(argv, server.address, token, Path(folder))
        try:
            yield server, bot
        finally:
            await bot.stop()
            await server.stop()
