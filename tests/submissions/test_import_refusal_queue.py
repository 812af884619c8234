"""An upload its imports already refuse needs no game, so it is answered at once, never queued
behind another student's validation game."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hostile import GOOD_SDK_BOT, zip_of

from referee.storage import Repository
from referee.storage.enums import SubmissionStatus
from referee.submissions.service import Submissions
from referee.submissions.store import SubmissionStore


def test_an_import_refusal_does_not_wait_for_the_validation_slot(tmp_path: Path) -> None:
    """With the only validation slot taken by another student's game, an upload importing a
    package the server lacks is still rejected, naming the package, before that game ends."""
    repo = Repository.open(str(tmp_path / "arena.db"))
    repo.create_player("bob")
    service = Submissions(repo, SubmissionStore(tmp_path / "store"), concurrency=1)

    async def main() -> None:
        info = await service.receive(
            "bob", zip_of({"needs_torch.py": "import torch\n" + GOOD_SDK_BOT})
        )
        async with service._slots:  # another student's validation game holds the only slot
            done = await asyncio.wait_for(service.validate(info), timeout=120)
        assert done.status is SubmissionStatus.REJECTED and "'torch'" in done.reason

    try:
        asyncio.run(main())
    finally:
        repo.close()
