"""What ``python -m client_sdk submit`` uploads: the bot and its helpers, zipped.

The *folder being submitted* is the folder the bot lies in: the bot (a package folder or a
``.py`` module) and the helpers named beside it. Nothing that leads outside it goes up unless
the student names it on the command line:

* a helper named by ``--helper NAME`` or in the bot's ``submission.json`` must be a package or
  module in that folder; one that is a symbolic link to somewhere else (or a path leading out)
  is refused, naming where it leads;
* ``--outside-helper PATH`` sends a folder or module from anywhere, under its own name, and
  the command lists every file it sends from there first;
* inside the bot and each helper, a symbolic link that stays inside that folder is uploaded as
  what it points to (with a note); one that leads out of it is refused, naming the link.

The archive is a zip with ``submission.json`` at its top naming the entry and the helpers.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from client_sdk._errors import PackError

_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True, slots=True)
class Package:
    """The archive to upload and what it holds."""

    data: bytes
    entry: str
    files: int
    #: What the packing did that its author should know (a symbolic link followed, the files
    #: sent from outside the folder being submitted).
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Item:
    """One top-level entry of the archive: its real path, its name there, and what to call
    the folder its links must stay in."""

    real: Path
    name: str
    what: str
    #: Named on purpose from outside the folder being submitted: every file sent is listed.
    outside: bool = False


def pack(path: str, helpers: Sequence[str] = (), outside: Sequence[str] = ()) -> Package:
    """Zip the bot at ``path`` (``dir``, ``file.py``, optional ``:Class``) with the helpers
    named beside it (``helpers``, and its ``submission.json``'s) and those the student named
    from outside the folder being submitted (``outside``)."""
    target, cls = _split(path)
    source = Path(target)
    manifest: dict[str, Any] = {}
    if source.is_dir():
        if not (source / "__init__.py").is_file():
            raise PackError(f"{target}: a bot package needs an __init__.py")
        manifest = _manifest(source / "submission.json")
        entry = source.resolve().name
    elif source.is_file() and source.suffix == ".py":
        entry = source.stem
    else:
        raise PackError(f"{target}: not a package folder or a .py file")
    cls = cls or manifest.get("class")
    beside = source.resolve().parent
    notes: list[str] = []
    items = [_Item(source.resolve(), source.resolve().name, "the bot's folder")]
    items += [_helper(beside, h, "--helper", notes) for h in helpers]
    items += [_helper(beside, h, "submission.json", notes) for h in _listed(manifest)]
    items += [_outside(beside, p) for p in outside]
    buffer = io.BytesIO()
    count = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        unique = _unique(items)
        top = {"entry": entry, **({"class": cls} if cls else {})}
        top["helpers"] = [i.name for i in unique[1:]]
        archive.writestr("submission.json", json.dumps(top))
        for item in unique:
            sent = list(_files(item, notes))
            if item.outside:
                shown = ", ".join(str(file) for file, _ in sent) or "nothing"
                notes.append(f"sending {item.real} from outside {beside}: {shown}")
            for file, name in sent:
                archive.write(file, name)
                count += 1
    return Package(buffer.getvalue(), entry, count, tuple(notes))


def _manifest(own: Path) -> dict[str, Any]:
    if not own.is_file():
        return {}
    try:
        found = json.loads(own.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise PackError(f"{own}: not valid JSON ({exc})") from None
    if not isinstance(found, dict):
        raise PackError(f"{own}: not a JSON object")
    return found


def _listed(manifest: dict[str, Any]) -> list[str]:
    helpers = manifest.get("helpers", [])
    if not isinstance(helpers, list) or not all(isinstance(h, str) for h in helpers):
        raise PackError('submission.json: "helpers" must be a list of names')
    return helpers


def _split(path: str) -> tuple[str, str | None]:
    head, sep, tail = path.rpartition(":")
    if sep and head and tail.isidentifier():
        return head, tail
    return path, None


def _helper(beside: Path, name: str, how: str, notes: list[str]) -> _Item:
    """A helper named by ``how`` (``--helper`` or ``submission.json``): a package or module in
    ``beside``, the folder being submitted, and nothing that leads out of it."""
    given = Path(name)
    candidates = [beside / name, beside / f"{name}.py"]
    if given.is_absolute() or len(given.parts) > 1:
        # A path on the command line is the shell's (from the working folder); one in the
        # bot's submission.json is read from the folder being submitted.
        candidates = [(Path.cwd() if how == "--helper" else beside) / given]
    for candidate in candidates:
        if not (candidate.exists() or candidate.is_symlink()):
            continue
        real = candidate.resolve()
        if not real.is_relative_to(beside) or real == beside:
            link = f"a symbolic link to {real}" if real != candidate.absolute() else str(real)
            raise PackError(
                f"helper {name!r} ({how}) is {link}, outside the folder being submitted "
                f"{beside}: refused, nothing uploaded (copy it in, or send it on purpose with "
                f"--outside-helper {candidate}: the command then lists every file it sends)"
            )
        if candidate.is_symlink():
            notes.append(f"helper {candidate} is a symbolic link: uploaded as {real}")
        return _Item(real, candidate.name, f"the helper folder {candidate.name}")
    raise PackError(
        f"helper {name!r}: no package or module of that name beside the bot in {beside}"
    )


def _outside(beside: Path, path: str) -> _Item:
    """A helper the student named on purpose (``--outside-helper``), from anywhere."""
    given = Path(path)
    if not given.exists():
        raise PackError(f"--outside-helper {path}: no such folder or module")
    real = given.resolve()
    if real == beside or beside.is_relative_to(real):
        raise PackError(f"--outside-helper {path}: holds the bot's own folder {beside}")
    name = given.absolute().name
    return _Item(real, name, f"the outside helper {name}", outside=True)


def _unique(items: list[_Item]) -> list[_Item]:
    """The items once each; two different ones under one name cannot both go up."""
    found: dict[str, _Item] = {}
    for item in items:
        other = found.setdefault(item.name, item)
        if other.real != item.real:
            raise PackError(f"two entries would be {item.name!r}: {other.real} and {item.real}")
    return list(found.values())


def _files(item: _Item, notes: list[str]) -> Iterator[tuple[Path, str]]:
    """Every file to upload from ``item`` with its name in the archive. A symbolic link inside
    the folder that points inside it is uploaded as what it points to (said in ``notes``); one
    that points outside it is refused, naming it: following it would upload a file the author
    never meant to share (``/etc/passwd``, a key)."""
    if item.real.is_file():
        yield item.real, item.name
        return
    yield from _walk(item, item.real, Path(item.name), notes, {item.real})


def _walk(
    item: _Item, folder: Path, base: Path, notes: list[str], seen: set[Path]
) -> Iterator[tuple[Path, str]]:
    """The files under ``folder`` (inside ``item``), named relative to ``base``."""
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name in _SKIP_DIRS or entry.name.endswith(_SKIP_SUFFIXES):
            continue
        name = (base / entry.relative_to(folder)).as_posix()
        target = entry
        if entry.is_symlink():
            target = entry.resolve()
            if not target.is_relative_to(item.real):
                raise PackError(
                    f"{entry} is a symbolic link to {target}, outside {item.what} "
                    f"{item.real}: refused (copy the file into the folder if the bot needs it)"
                )
            notes.append(f"{entry} is a symbolic link: uploaded as the contents of {target}")
        if target.is_dir():
            if target in seen:  # a link back up the tree: its files are uploaded already
                continue
            yield from _walk(item, target, Path(name), notes, seen | {target})
        elif target.is_file():
            yield target, name
