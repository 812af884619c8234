"""A stored game's failure pack over gRPC, with the real CLI: the uploader's bot faults in its
validation game, `mine` lists the failure once with the command that reproduces it, and
`reproduce GAME_ID --server` fetches the owner's pack and reaches the same verdict; another
student is refused with one line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from upload_harness import cli, submit_cli, upload_server, write_tree

from referee.storage import submissions as rows
from referee.storage.enums import Role

pytestmark = pytest.mark.slow

RAISING_BOT = """
import random

from client_sdk import Agent


class Bot(Agent):
    name = "raiser"

    def __init__(self):
        self.moves = 0

    def choose_move(self, state, clocks):
        self.moves += 1
        if self.moves >= 3:
            raise ValueError("broken on the third move")
        return random.choice(sorted(state.legal_moves, key=str))
"""


def test_the_owner_fetches_and_reproduces_a_stored_pack_and_no_one_else_may(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The validation game's faulted seat has a pack; the owner's `mine` shows it as new once
        (with the reproduce command), `reproduce GAME_ID BOT --server` matches, for the instructor
    too; bob is refused."""
    monkeypatch.setenv("TETROMINO_STATE_DIR", str(tmp_path / "state"))
    bot = write_tree(tmp_path / "bot", {"raiser.py": RAISING_BOT}) / "raiser.py"

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice", "bob")) as up:
            result = await submit_cli(up, "alice", str(bot))
            assert result["status"] == "rejected", result
            game_id = rows.get_submission(up.repo.db, "alice-raiser").validation_game_uid
            assert game_id is not None
            detail = up.repo.get_game(game_id)
            assert detail.failure_packs[0] and not detail.failure_packs[1]
            pack = json.loads(detail.failure_packs[0])
            assert pack["verdict"] == "runtime_error" and isinstance(pack["seed"], int)

            server = ("--server", up.address)
            alice = ("--token", up.tokens["alice"])
            code, out, err = await cli("mine", "failures", *server, *alice)
            assert code == 0, err
            assert f"python -m client_sdk reproduce {game_id} BOT --server {up.address}" in out
            code, out, _ = await cli("mine", "failures", *server, *alice)
            assert code == 0 and "no new failures" in out

            code, out, err = await cli("reproduce", game_id, str(bot), *server, *alice, "--json")
            assert code == 0, out + err
            assert json.loads(out.strip().splitlines()[-1])["match"] is True

            up.repo.create_player("prof")
            prof = ("--token", up.repo.issue_token("prof", role=Role.INSTRUCTOR))
            code, out, err = await cli("reproduce", game_id, str(bot), *server, *prof, "--json")
            assert code == 0 and json.loads(out.strip().splitlines()[-1])["match"], out + err

            bob = ("--token", up.tokens["bob"])
            code, out, err = await cli("reproduce", game_id, str(bot), *server, *bob)
            assert code == 2 and len(err.strip().splitlines()) == 1, err
            assert "none of your bots played" in err and "Traceback" not in err

    asyncio.run(main())


def test_mines_reproduce_command_logs_in_as_mine_did_and_old_failures_list_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mine failures --token-file F` prints a reproduce command carrying `--token-file F`
    (never the token), which runs as printed and matches; once seen, `mine failures --all`
    lists the failure again; a --token on the command line becomes a placeholder."""
    monkeypatch.setenv("TETROMINO_STATE_DIR", str(tmp_path / "state"))
    bot = write_tree(tmp_path / "bot", {"raiser.py": RAISING_BOT}) / "raiser.py"

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice",)) as up:
            assert (await submit_cli(up, "alice", str(bot)))["status"] == "rejected"
            game_id = rows.get_submission(up.repo.db, "alice-raiser").validation_game_uid
            token_file = tmp_path / "token.txt"
            token_file.write_text(up.tokens["alice"])
            login = ("--server", up.address, "--token-file", str(token_file))
            code, out, err = await cli("mine", "failures", *login)
            assert code == 0, err
            assert up.tokens["alice"] not in out
            line = next(x.strip() for x in out.splitlines() if "client_sdk reproduce" in x)
            assert line.endswith(f"--server {up.address} --token-file {token_file}"), line
            argv = line.split()[3:]  # after `python -m client_sdk`
            code, replay, err = await cli(*[str(bot) if w == "BOT" else w for w in argv], "--json")
            assert code == 0 and json.loads(replay.strip().splitlines()[-1])["match"], err
            code, out, _ = await cli("mine", "failures", *login)
            assert "no new failures" in out and game_id not in out
            code, out, _ = await cli("mine", "failures", "--all", *login)
            assert code == 0 and f"  {game_id}  " in out and "failures of your bots (1)" in out
            plain = ("--server", up.address, "--token", up.tokens["alice"])
            code, out, _ = await cli("mine", "failures", "--all", *plain)
            assert "--token YOUR_TOKEN" in out and up.tokens["alice"] not in out

    asyncio.run(main())
