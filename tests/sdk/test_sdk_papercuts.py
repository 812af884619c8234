"""What a newcomer trips over with the client commands: one line for a bot that does not
load, quiet on a closed pipe, a refusal said once, symbolic links in an upload, the token off
the command line, the friendly line for an unreachable referee, the default port."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from client_sdk._loader import load_bot
from client_sdk._options import TOKEN_ENV, address_of, token_of
from client_sdk._packing import PackError, pack
from client_sdk._session import Session
from client_sdk._tls import Tls
from tests.classserver.serving import players, serve

REPO = Path(__file__).resolve().parents[2]
RANDOM = "client_sdk.examples.random_bot"


def _sdk(
    *args: str, env: dict[str, str] | None = None, **kw: object
) -> subprocess.CompletedProcess[str]:
    streams = kw or {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run(
        [sys.executable, "-m", "client_sdk", *args],
        text=True, timeout=120, cwd=REPO, stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})}, **streams,  # type: ignore[call-overload]
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("def oops(:\n", "syntax error in"),
        ("import no_such_module_for_this_test\n", "ModuleNotFoundError: No module named"),
    ],
)
def test_a_bot_that_does_not_load_is_one_line_with_the_main_client(
    tmp_path: Path, source: str, said: str, refused_port: int
) -> None:
    """The connecting command says a bot's syntax error or missing import in one line, the
    same line --check says; no traceback."""
    bot = tmp_path / "bot.py"
    bot.write_text(source, encoding="utf-8")
    done = _sdk("--server", f"127.0.0.1:{refused_port}", str(bot))
    check = _sdk("--check", str(bot))
    assert done.returncode == 2 and check.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and str(bot) in lines[0]
    assert lines == check.stderr.strip().splitlines()


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [["--help"], ["new", "--help"], ["play", "client_sdk.examples.greedy_bot"]],
)
def test_every_command_exits_quietly_on_a_closed_pipe(argv: list[str]) -> None:
    """With stdout a pipe nobody reads (``| head`` that has exited), no command ends in a
    BrokenPipeError traceback (``mine`` is tried against a real server below)."""
    assert _to_closed_pipe(*argv).returncode in (0, 1)


def _to_closed_pipe(
    *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m client_sdk ARGV`` writing to a pipe whose reader is gone; no traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _sdk(*argv, env=env, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    return done


@pytest.mark.slow
def test_a_wrong_token_is_refused_once_and_tokens_come_from_the_environment(
    tmp_path: Path,
) -> None:
    """The main client prints the referee's refusal of a wrong token (here from
    TETROMINO_TOKEN) once; `mine` takes the token from the variable or from --token-file, and
    exits quietly (status 1) when its reader has gone."""
    db = tmp_path / "arena.db"
    token = players(db, "alice")["alice"]
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n", encoding="utf-8")
    with serve(tmp_path, "--db", str(db), "--no-web", "--submissions", str(tmp_path / "st")) as at:
        wrong = _sdk("--server", at, RANDOM, env={TOKEN_ENV: "arena_nope_nope"})
        by_env = _sdk("mine", "--server", at, env={TOKEN_ENV: token})
        by_file = _sdk("mine", "--server", at, "--token-file", str(token_file))
        piped = _to_closed_pipe("mine", "--server", at, env={TOKEN_ENV: token})
    assert wrong.returncode == 1
    assert wrong.stderr.count("UNAUTHENTICATED") == 1, wrong.stderr
    assert by_env.returncode == 0 and "versions of alice" in by_env.stdout, by_env.stderr
    assert by_file.returncode == 0 and "versions of alice" in by_file.stdout, by_file.stderr
    assert piped.returncode == 1


def test_token_precedence_and_help_says_which_to_prefer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--token-file wins, then --token, then the variable; an unreadable file is an error."""
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    file = tmp_path / "t"
    file.write_text(" from-file\n", encoding="utf-8")
    assert token_of("flag", str(file)) == "from-file"
    assert token_of("flag", None) == "flag"
    assert token_of(None, None) == "from-env"
    with pytest.raises(Exception, match="cannot read the token file"):
        token_of(None, str(tmp_path / "missing"))


@pytest.mark.slow
@pytest.mark.parametrize("command", [[], ["submit"], ["mine"]])
def test_help_of_every_connecting_command_prefers_a_token_file(command: list[str]) -> None:
    """Each command that takes a token offers --token-file and the variable, and says to
    prefer them over --token (which ps shows)."""
    done = _sdk(*command, "--help")
    text = " ".join(done.stdout.split())
    assert "--token-file" in text and TOKEN_ENV in text
    assert "visible to every user of this machine" in text


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["submit", str(REPO / "client_sdk/examples/course_random")], ["mine"]]
)
def test_submit_and_mine_say_cannot_reach_a_referee(command: list[str], refused_port: int) -> None:
    """Against an address where nothing listens, submit and mine give the main client's
    sentence, not gRPC's raw text alone."""
    port = refused_port
    done = _sdk(command[0], "--server", f"127.0.0.1:{port}", "--token", "t", *command[1:])
    assert done.returncode == 1
    assert f"cannot reach a referee at 127.0.0.1:{port}" in done.stderr
    assert "is referee serve running there" in done.stderr
    assert "Traceback" not in done.stderr


def _bot_folder(tmp_path: Path) -> Path:
    bot = tmp_path / "work" / "my_bot"
    bot.mkdir(parents=True)
    (bot / "__init__.py").write_text("from .program import Agent\n", encoding="utf-8")
    (bot / "program.py").write_text("class Agent: pass\n", encoding="utf-8")
    return bot


def test_submit_refuses_a_link_out_of_the_bots_folder(tmp_path: Path) -> None:
    """A symbolic link to a file outside the bot's folder (a secret) is refused, naming it."""
    bot = _bot_folder(tmp_path)
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY", encoding="utf-8")
    (bot / "data.txt").symlink_to(secret)
    with pytest.raises(PackError, match=r"data\.txt is a symbolic link to .*id_rsa, outside"):
        pack(str(bot))
    (bot / "data.txt").unlink()
    (bot / "lib").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(PackError, match="lib is a symbolic link"):
        pack(str(bot))


def test_submit_uploads_a_link_inside_the_folder_as_its_target_and_says_so(
    tmp_path: Path,
) -> None:
    """A link to a file inside the folder goes up as that file's contents, with a note."""
    import io
    import zipfile

    bot = _bot_folder(tmp_path)
    (bot / "weights.txt").write_text("1 2 3", encoding="utf-8")
    (bot / "alias.txt").symlink_to(bot / "weights.txt")
    package = pack(str(bot))
    names = zipfile.ZipFile(io.BytesIO(package.data)).namelist()
    assert "my_bot/alias.txt" in names
    assert zipfile.ZipFile(io.BytesIO(package.data)).read("my_bot/alias.txt") == b"1 2 3"
    assert any(
        "alias.txt is a symbolic link: uploaded as the contents of" in n for n in package.notes
    )


@pytest.mark.slow
def test_submit_command_refuses_an_outside_link_before_uploading(
    tmp_path: Path, refused_port: int
) -> None:
    """`submit` with a link to /etc/passwd in the folder says so and uploads nothing."""
    bot = _bot_folder(tmp_path)
    (bot / "passwd").symlink_to("/etc/passwd")
    done = _sdk("submit", "--server", f"127.0.0.1:{refused_port}", "--token", "t", str(bot))
    assert done.returncode == 2
    assert "passwd is a symbolic link to /etc/passwd, outside the bot's folder" in done.stderr
    assert "uploading" not in done.stdout


def test_a_plain_address_gets_the_referees_port_and_tls_gets_443() -> None:
    """HOST means HOST:50051 (the port referee serve uses), HOST:443 with TLS; given ports,
    IPv6 and unix: addresses are kept."""
    assert address_of("arena.example.edu") == "arena.example.edu:50051"
    assert address_of("arena.example.edu", tls=True) == "arena.example.edu:443"
    assert address_of("arena.example.edu:7000") == "arena.example.edu:7000"
    assert address_of("[::1]") == "[::1]:50051" and address_of("[::1]:9") == "[::1]:9"
    assert address_of("::1") == "[::1]:50051"
    assert address_of("unix:/tmp/x.sock") == "unix:/tmp/x.sock"
    factory = load_bot(RANDOM)
    assert Session(factory, "arena.example.edu", "").server == "arena.example.edu:50051"
    assert Session(factory, "arena.example.edu", "", credentials=Tls()).server.endswith(":443")


@pytest.mark.slow
def test_submissions_calls_to_a_referee_without_submissions_say_so_in_one_line(
    tmp_path: Path,
) -> None:
    """reproduce --server, mine and submit against a referee started without --submissions
    say that it offers no uploads or packs, not gRPC's bare "Method not found!"."""
    db = tmp_path / "arena.db"
    token = players(db, "alice")["alice"]
    bot = str(REPO / "client_sdk/examples/course_random")
    with serve(tmp_path, "--db", str(db), "--no-web") as at:
        done = [
            _sdk("reproduce", "1", RANDOM, "--server", at, "--token", token),
            _sdk("mine", "--server", at, "--token", token),
            _sdk("submit", "--server", at, "--token", token, bot),
        ]
    for proc in done:
        assert proc.returncode in (1, 2), proc.stderr
        assert "does not offer uploads, your games or failure packs" in proc.stderr
        assert "started without --submissions" in proc.stderr
        assert "Method not found" not in proc.stderr and "Traceback" not in proc.stderr
