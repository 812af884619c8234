"""What an unpacked submission is: which top-level entry is the bot, and what it imports.

The archive's top level holds the bot (a course-style package folder, an SDK package folder or
a single ``.py`` module) and any helper packages or modules beside it. Which one is the bot:

* ``submission.json`` at the top level, ``{"entry": "my_bot", "class": "Agent"}`` (``class``
  optional; ``"language"``, when given, must be one the server hosts: ``python``, ``cpp``
  or ``javascript``), written by ``python -m client_sdk submit``; else
* the only top-level package folder (with ``__init__.py``) or, failing that, the only
  top-level ``.py`` file.

Dependencies a bot may import: the standard library, NumPy, the SDK (``client_sdk``,
``engine`` and the course surface ``referee.game``) and its own top-level modules.
:func:`foreign_imports` finds every other absolute import in the submission's code (imports
guarded by ``try: ... except ImportError`` are optional and skipped) so that validation can say
which import is missing before any game.
"""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from referee.submissions.errors import LayoutError

MANIFEST = "submission.json"
#: The languages an upload may declare (``"language"`` in the manifest; absent: Python). A
#: C++ or JavaScript upload is built by :mod:`referee.submissions.build` (its ``entry`` is
#: then a source file: ``bot.js``, or any ``.cpp`` file for C++, which compiles them all).
HOSTED_LANGUAGES = frozenset({"python", "cpp", "javascript"})
#: The source files a built language's entry may be, by language.
SOURCE_SUFFIXES = {"cpp": (".cpp", ".cc"), "javascript": (".js",)}
#: Third-party packages a bot may import besides the standard library and its own code.
ALLOWED_PACKAGES = frozenset({"numpy", "client_sdk", "engine"})


@dataclass(frozen=True, slots=True)
class Entry:
    """The bot inside a submission: a top-level ``name`` (folder or ``name.py``)."""

    name: str
    is_package: bool
    agent_class: str | None = None
    #: ``python``, or a language :mod:`referee.submissions.build` compiles or bundles.
    language: str = "python"

    def target(self, root: Path) -> str:
        """The BOT argument the SDK runner is given (``path[:Class]``)."""
        path = root / (self.name if self.is_package else f"{self.name}.py")
        return str(path) + (f":{self.agent_class}" if self.agent_class else "")


def find_entry(root: Path) -> Entry:
    """The bot's entry in the unpacked tree at ``root`` (:class:`LayoutError` if unclear)."""
    manifest = root / MANIFEST
    if manifest.is_file():
        return _from_manifest(root, manifest)
    packages = sorted(p.name for p in root.iterdir() if (p / "__init__.py").is_file())
    modules = sorted(p.stem for p in root.glob("*.py") if p.is_file())
    if len(packages) == 1:
        return Entry(packages[0], True)
    if not packages and len(modules) == 1:
        return Entry(modules[0], False)
    found = ", ".join([*(f"{p}/" for p in packages), *(f"{m}.py" for m in modules)]) or "none"
    raise LayoutError(
        f"cannot tell which top-level package or module is the bot (found: {found}); "
        f'add {MANIFEST} with {{"entry": "NAME"}} at the top of the archive'
    )


def _from_manifest(root: Path, manifest: Path) -> Entry:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise LayoutError(f"{MANIFEST} is not valid JSON ({exc})") from None
    language = data.get("language", "python") if isinstance(data, dict) else "python"
    _check_language(language)
    entry = data.get("entry") if isinstance(data, dict) else None
    if language != "python":
        return _source_entry(root, str(language), entry)
    cls = data.get("class") if isinstance(data, dict) else None
    if not isinstance(entry, str) or not entry.removesuffix(".py").isidentifier():
        raise LayoutError(f'{MANIFEST} needs "entry": the top-level package or module name')
    if cls is not None and (not isinstance(cls, str) or not cls.isidentifier()):
        raise LayoutError(f'{MANIFEST}: "class" must be a Python identifier')
    name = entry.removesuffix(".py")
    if (root / name / "__init__.py").is_file():
        return Entry(name, True, cls)
    if (root / f"{name}.py").is_file():
        return Entry(name, False, cls)
    raise LayoutError(f"{MANIFEST} names {entry!r}, but the archive has no such package or module")


def _source_entry(root: Path, language: str, entry: object) -> Entry:
    """The entry of a C++ or JavaScript upload: a source file at the archive's top."""
    suffixes = SOURCE_SUFFIXES[language]
    if not isinstance(entry, str) or "/" in entry or not entry.endswith(suffixes):
        raise LayoutError(
            f'{MANIFEST} needs "entry": the top-level {" or ".join(suffixes)} file of the bot'
        )
    if not (root / entry).is_file():
        raise LayoutError(f"{MANIFEST} names {entry!r}, but the archive has no such file")
    return Entry(entry, False, None, language)


def check_helpers(root: Path, entry: Entry) -> None:
    """Refuse helpers named in a manifest (the archive's and the bot package's own) that are
    not top-level packages or modules of the upload: a path (``/home/...``, ``../lib``) leads
    outside the folder being submitted, and a name with nothing under it was sent as something
    else (an older SDK uploaded a helper that was a link under its target's name). The SDK
    refuses both before uploading; this refuses them whoever packed the archive."""
    manifests = [root / MANIFEST]
    if entry.is_package:
        manifests.append(root / entry.name / MANIFEST)
    for manifest in manifests:
        shown = manifest.relative_to(root).as_posix()
        for helper in _helpers_of(manifest, shown):
            name = helper.removesuffix(".py")
            if not name.isidentifier():
                raise LayoutError(
                    f"{shown} names the helper {helper[:80]!r}, a path: a helper must be a "
                    "package or module beside the bot (a path leads outside the folder being "
                    "submitted); refused"
                )
            if not ((root / name).is_dir() or (root / f"{name}.py").is_file()):
                raise LayoutError(
                    f"{shown} names the helper {helper!r}, which the upload does not hold at its "
                    "top (an older SDK sends a helper that is a symbolic link under its target's "
                    "name, from outside the folder being submitted); refused"
                )


def _helpers_of(manifest: Path, shown: str) -> list[str]:
    if not manifest.is_file():
        return []
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []  # the bot's own file may hold anything; only the names it lists matter
    helpers = data.get("helpers", []) if isinstance(data, dict) else []
    if not isinstance(helpers, list) or not all(isinstance(h, str) for h in helpers):
        raise LayoutError(f'{shown}: "helpers" must be a list of names')
    return helpers


def _check_language(language: object) -> None:
    """Refuse an upload in a language the server does not host, saying what to do instead."""
    if language in HOSTED_LANGUAGES:
        return
    named = f"{language!r}" if isinstance(language, str) else "a non-text value"
    raise LayoutError(
        f'{MANIFEST}: "language" is {named}; this server hosts uploads in '
        f"{', '.join(sorted(HOSTED_LANGUAGES))} only: run a bot in another language yourself "
        "and connect it with your token (docs/protocol.md#writing-a-client)"
    )


def own_modules(root: Path) -> set[str]:
    """Top-level names the submission provides itself (its packages and modules)."""
    names = {p.stem for p in root.glob("*.py")}
    names |= {p.name for p in root.iterdir() if p.is_dir() and p.name.isidentifier()}
    return names


@dataclass(frozen=True, slots=True)
class ForeignImport:
    module: str
    file: str
    line: int

    def sentence(self) -> str:
        top = self.module.split(".", 1)[0]
        return (
            f"{self.file} line {self.line} imports {self.module!r}, which is neither in your "
            "upload nor available on the server (the standard library, NumPy and the SDK: "
            f"client_sdk, engine, referee.game); if {top} is your own code, upload it beside "
            f"your bot (python -m client_sdk submit ... --helper {top})"
        )


def foreign_imports(root: Path) -> list[ForeignImport]:
    """Absolute imports of modules a bot may not use (see the module docstring)."""
    own = own_modules(root)
    found: list[ForeignImport] = []
    for file in sorted(root.rglob("*.py")):
        relative = file.relative_to(root).as_posix()
        try:
            tree = ast.parse(file.read_bytes(), filename=relative)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", 0) or 0
            raise LayoutError(f"{relative} line {line}: SyntaxError: {exc}") from None
        for module, line in _imports(tree):
            if not _allowed(module, own):
                found.append(ForeignImport(module, relative, line))
    return found


def _allowed(module: str, own: set[str]) -> bool:
    top = module.split(".", 1)[0]
    if top in sys.stdlib_module_names or top in ALLOWED_PACKAGES or top in own:
        return True
    if top == "__future__":
        return True
    # The course surface only, never the referee's internals.
    return module == "referee" or module == "referee.game" or module.startswith("referee.game.")


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    optional: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            optional |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "referee":
                found += [(f"referee.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((node.module, node.lineno))
    return found


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
    kinds = handler.type
    if kinds is None:
        return True
    elements = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(e, ast.Name) and e.id in names for e in elements)
