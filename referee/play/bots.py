"""Bots as a tournament knows them: registered versions, and how to start or find each one.

A bot argument on the command line is either a registered bot (``name`` or ``name@version``)
or something the referee can launch (a course-style package directory, an SDK module, a Python
file or a shell command, see :mod:`referee.sandbox.launch`), which is registered on the spot:
its name is the spec's label and its version the first 12 hex digits of its content hash, so editing
the code makes a new version and the ratings never mix two bodies of code.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox.launch import BotSpec, parse_bot_spec
from referee.storage import (
    BotVersionInfo,
    ConflictError,
    NotFoundError,
    Repository,
    SourceKind,
)
from referee.storage.botnames import short_name_matches
from referee.storage.content import content_hash
from referee.text.names import SHIPPED_PREFIX, as_name, shipped_folder, shipped_name_problem


@dataclass(frozen=True, slots=True)
class Source:
    """What to register for one launchable bot."""

    kind: SourceKind
    location: str
    content_hash: str | None
    label: str


def describe_source(text: str) -> Source:
    """Classify a launchable bot argument and hash its code (``ValueError`` if unusable)."""
    spec = parse_bot_spec(text)
    if spec.kind == "command":
        return Source(SourceKind.COMMAND, spec.value, None, _clean(spec.label))
    target, sep, cls = spec.value.partition(":")
    path = Path(target)
    if path.exists():
        location = str(path.resolve()) + (sep + cls if sep else "")
        kind = SourceKind.PACKAGE if path.is_dir() else SourceKind.SDK_MODULE
        label = cls if sep else spec.label
        return Source(kind, location, content_hash(path), _clean(label))
    origin = module_origin(target)
    digest = content_hash(origin) if origin is not None else None
    label = cls if sep else target.rsplit(".", 1)[-1]
    return Source(SourceKind.SDK_MODULE, spec.value, digest, _clean(label))


def module_origin(module: str) -> Path | None:
    """The file (or package directory) of ``module``, found without importing it (``None``: not
    found); what a registered SDK module's content hash is taken of."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None:
        return None
    origin = Path(found.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def _clean(label: str) -> str:
    return as_name(label, "bot")


def register_source(
    repo: Repository,
    text: str,
    *,
    name: str | None = None,
    version: str | None = None,
    owner: str | None = None,
) -> BotVersionInfo:
    """Register a launchable bot (idempotent for the same code)."""
    source = describe_source(text)
    if version is None:
        version = source.content_hash.split(":", 1)[1][:12] if source.content_hash else "1"
    base = name or source.label
    shipped = _is_shipped(source)
    if name and not shipped and (problem := shipped_name_problem(name)) is not None:
        raise ConflictError(problem)
    candidates = [base] if name else [base, *(f"{base}-{i}" for i in range(2, 50))]
    if not name and not shipped and shipped_name_problem(base) is not None:
        # A shipped bot's name stays that bot's: another bot's code goes by a numbered one.
        candidates = candidates[1:]
    last: Exception | None = None
    for candidate in candidates:
        # A derived name may already belong to another bot's code: try the next free one.
        if not name and _taken_by_other(repo, candidate, source):
            continue
        try:
            return repo.add_bot_version(
                candidate,
                version,
                source_kind=source.kind,
                location=source.location,
                content_hash=source.content_hash,
                owner=owner,
            )
        except ConflictError as exc:
            last = exc
            if name:
                raise
    raise ConflictError(f"cannot register {text!r}: {last}")


def _is_shipped(source: Source) -> bool:
    """Whether ``source`` is a bot shipped with the SDK (by module path or by file path)."""
    if source.kind is SourceKind.SDK_MODULE and source.location.startswith(SHIPPED_PREFIX):
        return True
    path = Path(source.location)
    if not path.exists():
        path = Path(source.location.rpartition(":")[0])
    folder = shipped_folder()
    return folder is not None and path.is_absolute() and folder in path.resolve().parents


def _taken_by_other(repo: Repository, bot_name: str, source: Source) -> bool:
    versions = repo.list_bot_versions(bot_name)
    return any(v.location != source.location for v in versions)


def register_remote(
    repo: Repository, name: str, *, owner: str, version: str = "1", hello_name: str | None = None
) -> BotVersionInfo:
    """Register a bot that connects by itself with its owner's token.

    The referee recognises its session by the token's owner and the name in its Hello
    (``hello_name``, default the bot's name). A name that reads as a shipped bot's module path
    is refused (:class:`ConflictError`) unless owner-prefixed.
    """
    problem = shipped_name_problem(name)
    if problem is not None:
        raise ConflictError(problem)
    return repo.add_bot_version(
        name,
        version,
        source_kind=SourceKind.REMOTE,
        location=hello_name or name,
        owner=owner,
    )


def resolve_bot(repo: Repository, text: str) -> BotVersionInfo:
    """The one bot ``text`` names: a registered ``name[@version]`` (``owner/name`` for a bot
    its owner's client registered, ``owner-name`` for an upload, or just ``name`` when one
    bot has it as its short form: :mod:`referee.storage.botnames`), else a launchable
    bot registered now. ``ValueError`` listing the matches when ``text`` names several (e.g. an
    example module and a student's bot of the same name): nothing is picked silently."""
    if text.startswith(("sdk:", "cmd:")):
        return register_source(repo, text)
    name, sep, version = text.partition("@")
    wanted = version if sep else None
    is_path = Path(text.split(":", 1)[0]).exists()
    owned: list[str] = []
    # A shipped module path means the shipped bot, whatever a player named a bot of theirs.
    if text.startswith(SHIPPED_PREFIX) and _launchable(text):
        return register_source(repo, text)
    if not is_path and " " not in text:
        try:
            return repo.find_bot_version(name, wanted)
        except NotFoundError:
            if sep and "/" not in name:
                raise
        owned = short_name_matches(repo, name)
    local = _launchable(text)
    if local and owned:
        raise ValueError(
            f"{text} names several bots: the local bot {text} and {', '.join(owned)}; "
            f"give one of {', '.join(owned)}, or sdk:{text} for the local one"
        )
    if len(owned) > 1:
        raise ValueError(f"{text} names several bots: {', '.join(owned)}; give one of them")
    if owned:
        return repo.find_bot_version(owned[0], wanted)
    return register_source(repo, text)


def _launchable(text: str) -> bool:
    """Whether ``text`` is a local bot this machine can start (a path or an importable module)."""
    try:
        spec = parse_bot_spec(text)
    except ValueError:
        return False
    if spec.kind != "sdk":
        return False
    target = spec.value.split(":", 1)[0]
    return Path(target).exists() or module_origin(target) is not None


def launch_spec(version: BotVersionInfo) -> BotSpec:
    """How the referee starts a registered launchable bot."""
    if version.source_kind is SourceKind.COMMAND:
        return BotSpec("command", version.location)
    if version.source_kind is SourceKind.REMOTE:
        raise ValueError(f"{version.label} is a remote bot: it connects by itself")
    return BotSpec("sdk", version.location)


def launchable_spec(repo: Repository, text: str) -> BotSpec | None:
    """How ``text`` (as :func:`resolve_bot` takes it) would be launched; ``None`` for a remote
    bot. Nothing is registered."""
    name, sep, version = text.partition("@")
    if "/" not in text and " " not in text:
        try:
            found = repo.find_bot_version(name, version if sep else None)
        except NotFoundError:
            if sep:
                raise
        else:
            return None if found.source_kind is SourceKind.REMOTE else launch_spec(found)
    return parse_bot_spec(text)
