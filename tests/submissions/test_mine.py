"""A student's own view over gRPC, with the real CLI: versions, games (the validation game
included), a game's record, and their own bot's output, never another player's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest
from hostile import GOOD_SDK_BOT
from upload_harness import UploadServer, cli, submit_cli, upload_server, write_tree

from client_sdk.proto import arena_pb2 as apb
from client_sdk.proto import arena_pb2_grpc
from referee.storage import submissions as rows
from referee.storage.enums import GameKind, Role

pytestmark = pytest.mark.slow


async def mine_cli(up: UploadServer, player: str, *args: str) -> tuple[int, str, str]:
    return await cli("mine", *args, "--server", up.address, "--token", up.tokens[player])


async def arena_record(up: UploadServer, game_id: str, token: str = "") -> grpc.StatusCode:
    metadata = [("authorization", f"Bearer {token}")] if token else []
    async with grpc.aio.insecure_channel(up.address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        try:
            await stub.GetGame(apb.GetGameRequest(game=game_id), metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


def test_validation_game_is_the_uploaders_to_read(tmp_path: Path) -> None:
    """An upload's validation game is stored (private, unrated); `mine` lists it; its owner
    downloads its record and reads their bot's output; another student, and the public Arena
    service, are refused with a sentence; a seat that is not the student's is refused too; the
    instructor's token reads all of it."""
    write_tree(tmp_path, {"sdkbot.py": GOOD_SDK_BOT + "\nprint('hello from alice')\n"})

    async def main() -> None:
        async with upload_server(tmp_path, players=("alice", "bob")) as up:
            result = await submit_cli(up, "alice", str(tmp_path / "sdkbot.py"))
            assert result["status"] == "accepted", result
            game_id = rows.get_submission(up.repo.db, "alice-sdkbot").validation_game_uid
            assert game_id is not None
            stored = up.repo.get_game(game_id).summary
            assert stored.kind is GameKind.VALIDATION and up.repo.game_results() == []

            code, out, _ = await mine_cli(up, "alice", "--json")
            listed = json.loads(out)
            assert code == 0 and listed["versions"][0]["validation_game_id"] == game_id
            # Validation plays the upload from each seat; the submission names the last game,
            # where it played BLUE.
            games = {g["game_id"]: g for g in listed["games"]}
            assert len(games) == 2 and {g["kind"] for g in games.values()} == {"validation"}
            game = games[game_id]
            assert game["seats"][1] == f"alice-sdkbot@{result['version']}"

            record = tmp_path / "v.pgn"
            code, out, _ = await mine_cli(up, "alice", "game", game_id, "-o", str(record))
            assert code == 0 and f'[Blue "alice-sdkbot@{result["version"]}"]' in (
                record.read_text()
            )
            code, out, _ = await mine_cli(up, "alice", "output", game_id)
            assert code == 0 and "hello from alice" in out

            code, _, err = await mine_cli(up, "bob", "game", game_id)
            assert code == 1 and "validation game" in err and "uploader" in err
            code, _, err = await mine_cli(up, "bob", "output", game_id)
            assert code == 1 and "none of your bots played" in err
            code, _, err = await mine_cli(up, "alice", "output", game_id, "--seat", "0")
            assert code == 1 and "another player's bot" in err
            code, _, err = await mine_cli(up, "bob", "--player", "alice")
            assert code == 1 and "only your own" in err
            code, _, err = await mine_cli(up, "bob", "output", "x" * 5000)
            assert code == 1 and "game_id: 5000 characters" in err
            code, _, err = await mine_cli(up, "bob", "game", "no-such-game")
            assert code == 1 and "no game 'no-such-game'" in err

            assert await arena_record(up, game_id) == grpc.StatusCode.PERMISSION_DENIED
            assert await arena_record(up, game_id, up.tokens["bob"]) == (
                grpc.StatusCode.PERMISSION_DENIED
            )
            assert await arena_record(up, game_id, up.tokens["alice"]) == grpc.StatusCode.OK

            # The instructor's token sees everyone's: the record, any seat's output, any list.
            up.repo.create_player("prof")
            up.tokens["prof"] = up.repo.issue_token("prof", role=Role.INSTRUCTOR)
            assert await arena_record(up, game_id, up.tokens["prof"]) == grpc.StatusCode.OK
            code, out, _ = await mine_cli(up, "prof", "output", game_id, "--seat", "1")
            assert code == 0 and "hello from alice" in out
            code, out, _ = await mine_cli(up, "prof", "games", "--player", "alice")
            assert code == 0 and game_id in out and "(validation)" in out

    asyncio.run(main())
