"""Challenges on ``referee serve``: a bot asks for one game against a named classmate's bot.

A session whose Hello names a challenge (``python -m client_sdk --challenge OWNER/NAME``) is
never paired casually. The desk finds the named bot among the connected sessions, waits for it
to be free (holding it out of casual pairing meanwhile), offers it the game and waits for its
answer. The challenger is told the outcome as a Notice: accepted (the game follows), or refused
with a sentence (declined, not connected, no answer, no common game), then Goodbye.

The game is the first of the server's games that the challenger asked for (or the server's
default game) and that the challenged bot plays; the challenger moves first.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from client_sdk.proto import referee_pb2 as pb
from engine.game import Game
from referee.errors import Refused
from referee.server import bounds
from referee.server.capacity import DEFAULT_ANSWER_S
from referee.server.handle import SessionPool
from referee.server.session import BotSession
from referee.telemetry.logs import get_logger

log = get_logger("referee.hosting.challenges")


def shown(session: BotSession) -> str:
    """How others name a session's bot: ``owner/name`` when its token has an owner."""
    owner = session.identity.player_id
    return f"{owner}/{session.name}" if owner else session.name


def is_challenger(session: BotSession) -> bool:
    return bool(session.hello.challenge.strip())


def challenger_of(session: BotSession) -> str:
    """Whose challenge a session is, for the per-player cap: its token's player (its name on
    an open server)."""
    return session.identity.player_id or session.name


def too_many(open_now: int, cap: int) -> str:
    """The challenger's sentence when the cap refuses its challenge."""
    return (
        f"you already have {open_now} open challenge(s), the most this server allows at once "
        f"({cap}); wait for one to finish, then challenge again"
    )


async def tell(session: BotSession, kind: int, text: str, challenge_id: str = "") -> None:
    """Send a Notice; best effort (a bot that does not read must not hold anyone up)."""
    notice = pb.Notice(kind=kind, text=text, challenge_id=challenge_id)  # type: ignore[arg-type]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(2.0):
            await session.send_quietly(pb.RefereeMessage(notice=notice))


@dataclass(frozen=True, slots=True)
class Agreed:
    challenge_id: str
    opponent: BotSession
    game: Game[Any]


class ChallengeDesk:
    """Arranges challenges; the matchmaker plays the agreed games."""

    def __init__(
        self,
        lobby: SessionPool,
        answer_s: float = DEFAULT_ANSWER_S,
        reserved: Callable[[BotSession], bool] | None = None,
    ) -> None:
        self.lobby = lobby
        self.answer_s = answer_s
        #: Sessions a tournament on this server needs: a challenge must not take them either.
        self.reserved = reserved
        #: Challenged sessions held out of casual pairing while they are asked.
        self.held: set[str] = set()

    def withheld(self, session: BotSession) -> bool:
        """Whether casual pairing must leave this session alone."""
        return is_challenger(session) or session.session_id in self.held

    async def arrange(self, challenger: BotSession, games: Sequence[Game[Any]]) -> Agreed:
        """Ask the named bot; :class:`~referee.errors.Refused` with the challenger's sentence
        when it is off."""
        target = challenger.hello.challenge.strip()
        opponent = self._find(challenger, target)
        game = self._game(challenger, opponent, games, target)
        challenge_id = uuid.uuid4().hex[:12]
        await self._wait_free(opponent, target)
        self.held.add(opponent.session_id)
        try:
            while not opponent.answers.empty():  # stale answers to an earlier offer
                opponent.answers.get_nowait()
            await opponent.send_quietly(
                pb.RefereeMessage(
                    challenge_offer=pb.ChallengeOffer(
                        challenge_id=challenge_id,
                        challenger=shown(challenger),
                        game=game.name,
                        answer_within_s=self.answer_s,
                    )
                )
            )
            answer = await self._answer(opponent, challenge_id, target)
        except BaseException:
            self.held.discard(opponent.session_id)
            raise
        if not answer.accept:
            self.held.discard(opponent.session_id)
            reason = bounds.clean_note(answer.reason).strip()
            why = f": {reason}" if reason else ""
            raise Refused(f"{target} declined your challenge{why}")
        log.info("challenge_accepted", challenger=shown(challenger), opponent=target)
        return Agreed(challenge_id, opponent, game)

    def release(self, session: BotSession) -> None:
        self.held.discard(session.session_id)

    def _find(self, challenger: BotSession, target: str) -> BotSession:
        wanted = target.lower()
        for session in self.lobby.sessions():
            mine = session is challenger or is_challenger(session)
            if not mine and shown(session).lower() == wanted:
                if self.reserved is not None and self.reserved(session):
                    raise Refused(f"{target} is playing in a tournament; challenge it afterwards")
                return session
        raise Refused(f"{target} is not connected to this server (challenge it once it is)")

    @staticmethod
    def _game(
        challenger: BotSession, opponent: BotSession, games: Sequence[Game[Any]], target: str
    ) -> Game[Any]:
        for game in games:
            if challenger.pairs_casually(game.name) and opponent.plays(game.name):
                return game
        asked = ", ".join(sorted(challenger.casual_games or ())) or "the default game"
        raise Refused(f"{target} does not play {asked}")

    async def _wait_free(self, opponent: BotSession, target: str) -> None:
        deadline = time.monotonic() + self.answer_s
        while not (opponent.is_free() and opponent.session_id not in self.held):
            if opponent.closed.is_set():
                raise Refused(f"{target} left the server before it could be asked")
            since = self.lobby.generation
            left = deadline - time.monotonic()
            if left <= 0:
                raise Refused(f"{target} stayed busy for {self.answer_s:g} s; try again later")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self.lobby.wait_change(since)

    async def _answer(
        self, opponent: BotSession, challenge_id: str, target: str
    ) -> pb.ChallengeAnswer:
        gone = asyncio.ensure_future(opponent.closed.wait())
        get: asyncio.Future[pb.ChallengeAnswer] | None = None
        try:
            async with asyncio.timeout(self.answer_s):
                while True:
                    get = asyncio.ensure_future(opponent.answers.get())
                    done, _ = await asyncio.wait({get, gone}, return_when=asyncio.FIRST_COMPLETED)
                    if get not in done:
                        raise Refused(f"{target} left the server before answering")
                    answer = get.result()
                    if answer.challenge_id == challenge_id:
                        return answer
        except TimeoutError:
            raise Refused(
                f"{target} did not answer your challenge within {self.answer_s:g} s"
            ) from None
        finally:
            gone.cancel()
            if get is not None:
                get.cancel()
