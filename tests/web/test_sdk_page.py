"""``/sdk``: the class server hands out the exact wheel of its running version (built once
with pip from the installed source, then cached), with its SHA-256, the pip line, the
protocol version and a quick start; ``referee sdk wheel -o DIR`` writes the same file."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from referee.commands.main import main as referee_main
from referee.server.app import PROTOCOL_VERSION, protocol_refusal
from referee.tools.sdkwheel import CACHE_ENV, source_key
from referee.web.app import create_app

pytestmark = pytest.mark.slow  # the first request builds the wheel with pip


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("sdk-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(folder))
        yield folder


@pytest.fixture(scope="module")
def client(cache: Path) -> Iterator[TestClient]:
    with TestClient(create_app(None)) as c:
        yield c


def test_the_page_serves_the_wheel_with_its_sha256_and_pip_line(client: TestClient) -> None:
    """The page's link downloads a wheel whose SHA-256 is the one shown; the pip line names
    that link; the protocol version and a five-line quick start are there; /api/sdk agrees."""
    page = client.get("/sdk")
    assert page.status_code == 200
    html = page.text
    facts = client.get("/api/sdk").json()
    wheel = client.get(f"/sdk/{facts['wheel']}")
    assert wheel.status_code == 200
    assert hashlib.sha256(wheel.content).hexdigest() == facts["sha256"]
    assert len(wheel.content) == facts["size"]
    assert re.fullmatch(r"tetromino_arena-[\d.]+-py3-none-any\.whl", facts["wheel"])
    assert f'<code id="sdk-sha256">{facts["sha256"]}</code>' in html
    assert f"pip install {facts['url']}" in html and facts["url"].endswith(facts["wheel"])
    assert f"protocol version {PROTOCOL_VERSION}" in html
    quick = re.search(r'<pre id="sdk-quickstart">(.*?)</pre>', html, re.S)
    assert quick is not None and len(quick.group(1).strip().splitlines()) == 5
    assert "client_sdk play my_bot" in quick.group(1)
    assert client.get("/sdk/tetromino_arena-0.0.0-py3-none-any.whl").status_code == 404


def test_the_wheel_is_built_once_and_the_command_writes_the_same_file(
    client: TestClient, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cache holds one wheel for this source (keyed by its digest), not rebuilt by later
    requests; `referee sdk wheel -o DIR` copies that same wheel."""
    facts = client.get("/api/sdk").json()
    slot = cache / source_key()[:24]
    built = slot / facts["wheel"]
    stamp = built.stat().st_mtime_ns
    assert client.get("/sdk").status_code == 200
    assert built.stat().st_mtime_ns == stamp and [p.name for p in slot.iterdir()] == [built.name]
    assert referee_main(["sdk", "wheel", "-o", str(tmp_path), "--json"]) == 0
    written = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert written["sha256"] == facts["sha256"]
    copy = Path(written["path"])
    assert copy.parent == tmp_path and copy.read_bytes() == built.read_bytes()
    assert referee_main(["sdk", "wheel", "-o", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_a_protocol_refusal_names_where_to_get_the_matching_sdk() -> None:
    """A bot speaking another protocol is told to get the SDK from this server's /sdk page
    when it has one, else to ask the operator."""
    served = protocol_refusal(PROTOCOL_VERSION + 1, "http://arena.example.edu:8080/sdk")
    assert served is not None and served.endswith("get it at http://arena.example.edu:8080/sdk")
    bare = protocol_refusal(PROTOCOL_VERSION + 1)
    assert bare is not None and "ask the server's operator" in bare
    assert protocol_refusal(PROTOCOL_VERSION) is None
