"""Validation steps run elsewhere: what :class:`~referee.submissions.service.Submissions` asks
of the ``referee worker`` processes that run them on PostgreSQL (the implementation is
:class:`referee.workers.validationjob.QueuedValidation`, which this layer may not import).

A worker records a step's result itself, under its lease on the job (``Guard``), and the
server reads the version back: the verdict is written once, by whichever attempt holds the
job, and a late duplicate is refused (``AlreadyJudged``). When no worker is alive any more
while a step waits for one (queued, or running on a worker that went silent), the server
takes the job back (:data:`TAKEN_BACK`: no worker may record it now) and runs the step itself.
A server that starts again adopts the jobs its previous run left for the versions it validates
again (:meth:`Offload.reconcile`), so a step is never run by a leftover job and anew at once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol

from sqlalchemy.orm import Session

from referee.storage.submissions import SubmissionInfo

#: The two steps of a validation, as a worker's job names them.
FIRST_STEP = "first"
FULL_STEP = "full"
#: :meth:`Offload.run`'s answer for a step whose job was taken back from the workers.
TAKEN_BACK = "taken back"

#: A check run in the transaction that records a result; it raises to refuse (a worker's
#: lease on its job, :func:`referee.workers.job.lease_guard`).
Guard = Callable[[Session], None]


class Offload(Protocol):
    """Validation steps run by ``referee worker`` processes (``referee serve`` on PostgreSQL:
    :class:`referee.workers.validationjob.QueuedValidation`)."""

    async def available(self) -> bool:
        """Whether a worker is alive to take the step now (else it runs on the server)."""
        ...

    async def run(self, step: str, info: SubmissionInfo) -> str | None:
        """Have a worker run ``step`` of ``info`` and record its result; the job's final
        status (``succeeded``: the step's result is recorded), :data:`TAKEN_BACK` when no
        worker was left alive to run it (the job ended so that none records it), ``None``
        when the job could not be enqueued (in both cases the server runs the step itself)."""
        ...

    async def reconcile(self, validating: Collection[int]) -> dict[int, frozenset[str]]:
        """At start: cancel the waiting jobs an earlier run left for versions no longer in
        ``validating``; the steps of ``validating`` versions that still have a job (waiting
        or running), by submission id, for the server to adopt: its :meth:`run` of that
        step waits for that job, whether or not a worker is alive now."""
        ...

    async def close(self) -> None:
        """Stop waiting for jobs (server shutdown; the workers go on with them)."""
        ...
