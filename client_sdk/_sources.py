"""What ``python -m client_sdk submit --language cpp|javascript FILE`` uploads: the bot's
source file and the source files beside it, zipped with a ``submission.json`` naming the
language and the entry (the server builds it: clients/cpp/README.md, clients/js/README.md).

Only the top level of the entry's folder goes, and only files in the language
(``.cpp .cc .h .hpp`` for C++, ``.js .json`` for JavaScript; never ``package.json``'s
``node_modules`` or a build folder): the server compiles against its own build of the client
library and bundles its own ``node_modules``.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from client_sdk._errors import PackError
from client_sdk._packing import Package

#: The languages the server builds, with the suffixes of their entry and of the files sent.
LANGUAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cpp": ((".cpp", ".cc"), (".cpp", ".cc", ".h", ".hpp")),
    "javascript": ((".js",), (".js", ".json")),
}
#: Files that mark a folder as a project in another language, and that language.
_PROJECT_FILES = {"CMakeLists.txt": "cpp", "package.json": "javascript"}
_SKIPPED = {"package.json", "package-lock.json", "submission.json"}


def project_language(path: Path) -> str | None:
    """The language a folder's build file says it is in (``None``: no such file)."""
    if not path.is_dir() or (path / "__init__.py").is_file():
        return None
    for name, language in _PROJECT_FILES.items():
        if (path / name).is_file():
            return language
    return None


def foreign_project_error(path: Path) -> PackError | None:
    """The sentence for a C++ or JavaScript folder given as a Python bot, else None."""
    language = project_language(path)
    if language is None:
        return None
    marker = next(n for n, lang in _PROJECT_FILES.items() if lang == language)
    example = "greedy_bot.cpp" if language == "cpp" else "greedy_bot.js"
    return PackError(
        f"{path} holds {marker}: a {language} project, not a Python bot; upload its bot's "
        f"source file with --language {language} (e.g. {path / example})"
    )


def pack_sources(path: str, language: str) -> Package:
    """Zip the entry ``path`` and the sources in ``language`` beside it."""
    entries, sent = LANGUAGES[language]
    source = Path(path)
    if source.is_dir():
        raise PackError(
            f"{path}: a folder; with --language {language} give the bot's source file "
            f"({' or '.join(entries)}); the files in {language} beside it go too"
        )
    if not source.is_file() or source.suffix not in entries:
        raise PackError(f"{path}: not a {' or '.join(entries)} file")
    files = sorted(
        p
        for p in source.resolve().parent.iterdir()
        if p.is_file() and not p.is_symlink() and p.suffix in sent and p.name not in _SKIPPED
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        manifest = {"entry": source.name, "language": language}
        archive.writestr("submission.json", json.dumps(manifest))
        for file in files:
            archive.write(file, file.name)
    return Package(buffer.getvalue(), source.name, len(files))
