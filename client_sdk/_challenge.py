"""Challenges and notices on the client side.

A bot answers challenge offers by a policy: ``all`` (the default), ``none``, or
``from:alice,bob`` (only those owners, or ``owner/name`` bots). A challenger's session
(``--challenge OWNER/NAME``) ends after its one game; when the referee refuses the challenge
the client raises :class:`ChallengeRefused` with the referee's sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client_sdk._link import SessionError
from client_sdk.proto import referee_pb2 as pb


class ChallengeRefused(SessionError):
    """The challenged bot declined, was not connected, or did not answer."""


@dataclass(frozen=True, slots=True)
class ChallengePolicy:
    """Which challenges this bot accepts."""

    accept: bool = True
    #: When set: only challengers named here (an owner, or an exact ``owner/name``).
    only: frozenset[str] | None = None

    @classmethod
    def of(cls, policy: ChallengePolicy | str) -> ChallengePolicy:
        return policy if isinstance(policy, ChallengePolicy) else cls.parse(policy)

    @classmethod
    def parse(cls, text: str) -> ChallengePolicy:
        """``all``, ``none`` or ``from:alice,bob``; ``ValueError`` names the forms."""
        word = text.strip().lower()
        if word in ("", "all"):
            return cls()
        if word == "none":
            return cls(accept=False)
        if word.startswith("from:"):
            names = frozenset(n.strip() for n in word[5:].split(",") if n.strip())
            if names:
                return cls(only=names)
        raise ValueError(f"{text!r}: expected all, none or from:NAME[,NAME...]")

    def answer(self, offer: pb.ChallengeOffer) -> pb.ChallengeAnswer:
        """This bot's answer to ``offer``, with the reason the challenger is told."""
        who = offer.challenger.lower()
        if not self.accept:
            return pb.ChallengeAnswer(
                challenge_id=offer.challenge_id, accept=False, reason="it accepts no challenges"
            )
        if self.only is not None and who not in self.only and who.split("/")[0] not in self.only:
            return pb.ChallengeAnswer(
                challenge_id=offer.challenge_id,
                accept=False,
                reason=f"it accepts challenges only from {', '.join(sorted(self.only))}",
            )
        return pb.ChallengeAnswer(challenge_id=offer.challenge_id, accept=True)


def offer_line(offer: pb.ChallengeOffer, answer: pb.ChallengeAnswer) -> str:
    """What the challenged bot's client prints."""
    verb = "accepted" if answer.accept else f"declined ({answer.reason})"
    return f"challenge from {offer.challenger} to play {offer.game}: {verb}"


def notice_line(notice: pb.Notice) -> str:
    """What the client prints for a notice (the referee's sentence, marked when skipped)."""
    if notice.kind == pb.NOTICE_KIND_SKIPPED and not notice.text.startswith("skipped"):
        return f"skipped: {notice.text}"
    return notice.text


def expected_line(labels: dict[str, str]) -> str | None:
    """A tournament game's announcement from its GameStart labels, e.g. "your tournament
    'week3' game 4 starts"; ``None`` for a game outside tournaments."""
    name = labels.get("tournament")
    if not name:
        return None
    round_ = f" round {labels['tournamentRound']}" if labels.get("tournamentRound") else ""
    board = f", board {labels['board']}" if labels.get("board") else ""
    leg = f", game {labels['leg']}" if labels.get("leg") else ""
    return f"your tournament '{name}'{round_}{board}{leg} starts"


class ChallengeSide:
    """The SDK session's part in challenges: its own challenge, answering offers, notices."""

    log: Callable[[str], None]
    _send: Callable[..., Any]

    def _init_challenges(self, challenge: str, accept: ChallengePolicy | str) -> None:
        #: The bot (``owner/name``) this session challenges; empty: casual play.
        self.challenge = challenge.strip()
        self.policy = ChallengePolicy.of(accept)
        self._refusal = ""

    def _side_message(self, message: pb.RefereeMessage) -> None:
        """A ChallengeOffer (answered by the policy) or a Notice (printed)."""
        if message.WhichOneof("kind") == "challenge_offer":
            answer = self.policy.answer(message.challenge_offer)
            self._send(challenge_answer=answer)
            self.log(offer_line(message.challenge_offer, answer))
            return
        self.log(notice_line(message.notice))
        if message.notice.kind == pb.NOTICE_KIND_CHALLENGE_REFUSED:
            self._refusal = message.notice.text

    def _refused(self) -> None:
        """At Goodbye: a refused challenge ends the session with the referee's sentence."""
        if self._refusal:
            raise ChallengeRefused(self._refusal)

    def _announce(self, info: pb.GameInfo) -> None:
        line = expected_line(dict(info.labels))
        if line:
            self.log(line)
