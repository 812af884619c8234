"""Challenges and notices on the client side.

A bot answers challenge offers by a policy: ``all``, ``none``, or ``from:alice,bob`` (only
those owners, or ``owner/name`` bots). Without a policy (no ``--accept-challenges``) the bot
decides per challenge: its :meth:`Agent.accept_challenge`, which accepts every challenge unless
the author overrides it (course-style bots have no such hook: they accept). A challenger's session
(``--challenge OWNER/NAME``) ends after its one game; when the referee refuses the challenge
the client raises :class:`ChallengeRefused` with the referee's sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client_sdk._agent import Agent
from client_sdk._link import SessionError
from client_sdk.proto import referee_pb2 as pb

#: The bot's own say on a challenge: ``(challenger, game) -> accept?``.
Decide = Callable[[str, str], bool]


class ChallengeRefused(SessionError):
    """The challenged bot declined, was not connected, or did not answer."""


@dataclass(frozen=True, slots=True)
class ChallengePolicy:
    """Which challenges this bot accepts."""

    accept: bool = True
    #: When set: only challengers named here (an owner, or an exact ``owner/name``).
    only: frozenset[str] | None = None
    #: When set: asked last, per challenge (the bot's ``accept_challenge``).
    decide: Decide | None = None

    @classmethod
    def of(
        cls, policy: ChallengePolicy | str | None, factory: Callable[[], Any] | None = None
    ) -> ChallengePolicy:
        """``policy`` as given; with none, the bot's own ``accept_challenge`` decides."""
        if policy is None:
            return cls(decide=agent_decides(factory) if factory is not None else None)
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
        if self.decide is not None:
            return self._ask(offer)
        return pb.ChallengeAnswer(challenge_id=offer.challenge_id, accept=True)

    def _ask(self, offer: pb.ChallengeOffer) -> pb.ChallengeAnswer:
        assert self.decide is not None
        try:
            accept = bool(self.decide(offer.challenger, offer.game))
        except Exception as exc:  # the author's code: a failure declines, the session goes on
            why = f"its accept_challenge raised {type(exc).__name__}"
            return pb.ChallengeAnswer(challenge_id=offer.challenge_id, accept=False, reason=why)
        why = "" if accept else "its accept_challenge said no"
        return pb.ChallengeAnswer(challenge_id=offer.challenge_id, accept=accept, reason=why)


def agent_decides(factory: Callable[[], Any]) -> Decide | None:
    """The bot's :meth:`Agent.accept_challenge`, asked on one instance kept for answering
    (the instance itself for a bot given as an instance); ``None`` when the bot does not
    override it (every challenge is accepted, as ``all``)."""
    if isinstance(factory, type) and getattr(factory, "accept_challenge", None) is (
        Agent.accept_challenge
    ):
        return None
    if hasattr(factory, "agent_class"):
        return None  # a course-style bot: no hook in the course's interface
    agent: list[Any] = []

    def decide(challenger: str, game: str) -> bool:
        if not agent:
            agent.append(factory())
        hook = getattr(agent[0], "accept_challenge", None)
        return True if hook is None else bool(hook(challenger, game))

    return decide


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

    def _init_challenges(
        self,
        challenge: str,
        accept: ChallengePolicy | str | None,
        factory: Callable[[], Any] | None = None,
    ) -> None:
        #: The bot (``owner/name``) this session challenges; empty: casual play.
        self.challenge = challenge.strip()
        self.policy = ChallengePolicy.of(accept, factory)
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
