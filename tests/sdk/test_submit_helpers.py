"""What ``submit`` sends from outside the folder being submitted (the folder the bot lies in):
nothing through a helper that is a symbolic link or a path leading out, whether named by
``--helper`` or in ``submission.json``; only a helper named on purpose with
``--outside-helper``, and then every file it sends is listed first."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from client_sdk._packing import PackError, pack


def _course_bot(tmp_path: Path) -> tuple[Path, Path]:
    """``work/agent`` (importing ``utils``) and a private folder elsewhere."""
    agent = tmp_path / "work" / "agent"
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text("from utils.choose import pick\n", encoding="utf-8")
    private = tmp_path / "home" / "private"
    private.mkdir(parents=True)
    (private / "choose.py").write_text("def pick(m):\n    return m[0]\n", encoding="utf-8")
    (private / "grades.csv").write_text("alice,95\n", encoding="utf-8")
    return agent, private


def _names(data: bytes) -> set[str]:
    return set(zipfile.ZipFile(io.BytesIO(data)).namelist())


def test_a_helper_that_links_out_of_the_folder_is_refused_by_option_or_manifest(
    tmp_path: Path,
) -> None:
    """``utils`` beside the bot is a link to a private folder: ``--helper utils`` and
    ``{"helpers": ["utils"]}`` are both refused, naming the link's target and the way to send
    it on purpose."""
    agent, private = _course_bot(tmp_path)
    (agent.parent / "utils").symlink_to(private, target_is_directory=True)
    with pytest.raises(PackError) as by_option:
        pack(str(agent), ["utils"])
    said = str(by_option.value)
    assert f"a symbolic link to {private}" in said and "outside the folder being submitted" in said
    assert "--outside-helper" in said
    (agent / "submission.json").write_text('{"helpers": ["utils"]}', encoding="utf-8")
    with pytest.raises(PackError, match=r"helper 'utils' \(submission\.json\) is a symbolic link"):
        pack(str(agent))


def test_a_helper_named_by_a_path_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    """``--helper /abs/path`` (or ``../path``) of a folder outside is refused, not uploaded."""
    agent, private = _course_bot(tmp_path)
    with pytest.raises(PackError, match="outside the folder being submitted"):
        pack(str(agent), [str(private)])
    (agent / "submission.json").write_text(
        json.dumps({"helpers": ["../home/private"]}), encoding="utf-8"
    )
    with pytest.raises(PackError, match="outside the folder being submitted"):
        pack(str(agent))


def test_a_link_inside_a_helper_folder_is_refused_naming_the_helper_folder(
    tmp_path: Path,
) -> None:
    """A link out of a helper folder is refused in words that name that helper folder, not
    the bot's folder."""
    agent, private = _course_bot(tmp_path)
    utils = agent.parent / "utils"
    utils.mkdir()
    (utils / "grades.csv").symlink_to(private / "grades.csv")
    with pytest.raises(PackError) as caught:
        pack(str(agent), ["utils"])
    said = str(caught.value)
    assert f"outside the helper folder utils {utils}" in said and "bot's folder" not in said


def test_an_outside_helper_named_on_purpose_goes_up_under_its_name_with_every_file_listed(
    tmp_path: Path,
) -> None:
    """``--outside-helper PATH`` sends the folder under its own name, and the notes list every
    file sent from it; the archive's manifest names it as a helper."""
    agent, private = _course_bot(tmp_path)
    package = pack(str(agent), outside=[str(private)])
    assert {"private/choose.py", "private/grades.csv"} <= _names(package.data)
    listed = [n for n in package.notes if n.startswith(f"sending {private} from outside")]
    assert listed and str(private / "grades.csv") in listed[0]
    assert str(private / "choose.py") in listed[0]
    top = json.loads(zipfile.ZipFile(io.BytesIO(package.data)).read("submission.json"))
    assert top == {"entry": "agent", "helpers": ["private"]}


def test_a_helper_beside_the_bot_still_goes_up(tmp_path: Path) -> None:
    """A real helper folder beside the bot (and a link to one inside the folder being
    submitted) goes up under the name the bot imports."""
    agent, _ = _course_bot(tmp_path)
    real = agent.parent / "utils_v2"
    real.mkdir()
    (real / "choose.py").write_text("def pick(m):\n    return m[0]\n", encoding="utf-8")
    (agent.parent / "utils").symlink_to(real, target_is_directory=True)
    package = pack(str(agent), ["utils"])
    assert "utils/choose.py" in _names(package.data)
    assert any("helper" in n and "symbolic link" in n for n in package.notes)
