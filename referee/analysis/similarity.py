"""Code similarity of submitted bots: winnowed fingerprints of normalised token streams.

Each bot's Python files are read with Python's own tokenizer; comments, blank lines and
indentation vanish, every name becomes ``N``, every number ``0`` and every string ``S``
(keywords and operators stay), so renaming identifiers or reformatting the code changes
nothing. Hashes of every ``K`` consecutive tokens are winnowed (the smallest hash of each
window of ``W`` hashes is kept, as MOSS does): two bots sharing a run of at least
``K + W - 1`` tokens are guaranteed to share a fingerprint. Fingerprints of the shipped
example and reference bots are removed from every bot first: that code is common to all.
Two bots that are each mostly that shipped code, and share it, are still told apart from the
rest (:func:`shipped_copies`): renamed copies of an example score nothing once it is removed.

A pair's score is the share of the smaller bot's fingerprints also found in the other (so a
copy inside a larger bot still scores high); the matching fragments are the line ranges the
shared fingerprints cover, merged, shown side by side. It flags; it decides nothing.

(A small hand-written winnowing rather than the ``copydetect`` package: that package pulls
matplotlib and tqdm onto the server, has had no release since 2024, and tokenizes through a
generic lexer; Python's tokenizer gives exact tokens and their lines.)
"""

from __future__ import annotations

import hashlib
import io
import keyword
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Tokens per hashed k-gram, and hashes per winnowing window.
K = 12
W = 8
#: Files larger than this are not read (a bot's code is far smaller).
MAX_FILE_BYTES = 1 << 20
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
_SKIP |= {tokenize.ENCODING, tokenize.ENDMARKER}
_STRINGS = {tokenize.STRING} | {
    getattr(tokenize, n)
    for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, n)
}


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class Print:
    """A kept fingerprint: its hash and the lines its k-gram spans."""

    hash: int
    file: str
    first: int
    last: int


@dataclass
class Fingerprints:
    """One bot's fingerprints, its files' lines (for fragments) and its token count."""

    name: str
    prints: list[Print] = field(default_factory=list)
    lines: dict[str, list[str]] = field(default_factory=dict)
    tokens: int = 0

    @property
    def hashes(self) -> set[int]:
        return {p.hash for p in self.prints}


def normalised_tokens(source: str, file: str) -> list[Token]:
    """The token stream of ``source`` with names, numbers and strings normalised (a file that
    does not tokenize gives the tokens up to its error)."""
    out: list[Token] = []
    pending_string = False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in _SKIP:
                continue
            if tok.type in _STRINGS:
                # Adjacent string pieces (implicit concatenation, f-string parts) are one "S".
                if not pending_string:
                    out.append(Token("S", file, tok.start[0]))
                pending_string = True
                continue
            pending_string = False
            if tok.type == tokenize.NAME:
                text = tok.string if keyword.iskeyword(tok.string) else "N"
            elif tok.type == tokenize.NUMBER:
                text = "0"
            else:
                text = tok.string
            out.append(Token(text, file, tok.start[0]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _hash(tokens: Sequence[Token]) -> int:
    digest = hashlib.blake2b("\x1f".join(t.text for t in tokens).encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def winnow(tokens: Sequence[Token], k: int = K, w: int = W) -> list[Print]:
    """The winnowed fingerprints of a token stream (the rightmost minimum of each window)."""
    grams = [
        Print(_hash(tokens[i : i + k]), tokens[i].file, tokens[i].line, tokens[i + k - 1].line)
        for i in range(len(tokens) - k + 1)
    ]
    if len(grams) <= w:
        return grams[:1] if grams else []
    kept: dict[int, Print] = {}
    for start in range(len(grams) - w + 1):
        window = grams[start : start + w]
        best = min(range(w), key=lambda j: (window[j].hash, -j))
        kept[start + best] = window[best]
    return [kept[i] for i in sorted(kept)]


def python_files(root: Path) -> list[Path]:
    """The ``.py`` files of a bot (a file, or a folder searched recursively), sorted."""
    if root.is_file():
        return [root]
    skipped = {"__pycache__", ".git", ".venv", "venv", "node_modules"}
    return sorted(
        p
        for p in root.rglob("*.py")
        if p.is_file() and not skipped & set(p.relative_to(root).parts)
    )


def fingerprint(name: str, root: Path, common: Iterable[int] = ()) -> Fingerprints:
    """The fingerprints of the bot at ``root``, without the ``common`` hashes."""
    common_set = set(common)
    found = Fingerprints(name)
    for path in python_files(root):
        if path.stat().st_size > MAX_FILE_BYTES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.name if root.is_file() else path.relative_to(root).as_posix()
        found.lines[rel] = text.splitlines()
        tokens = normalised_tokens(text, rel)
        found.tokens += len(tokens)
        found.prints += [p for p in winnow(tokens) if p.hash not in common_set]
    return found


def common_hashes(roots: Iterable[Path]) -> set[int]:
    """Every k-gram hash (not only the winnowed ones) of the shipped code at ``roots``."""
    hashes: set[int] = set()
    for root in roots:
        for path in python_files(root):
            tokens = normalised_tokens(path.read_text(encoding="utf-8", errors="replace"), "")
            hashes |= {_hash(tokens[i : i + K]) for i in range(len(tokens) - K + 1)}
    return hashes


def shipped_share(whole: Fingerprints, own: Fingerprints) -> float:
    """The share of a bot's fingerprints that are shipped code: ``whole`` is the bot's
    fingerprints, ``own`` the same without the common hashes."""
    return 1.0 - len(own.hashes) / len(whole.hashes) if whole.hashes else 0.0


def shipped_copies(
    whole: tuple[Fingerprints, Fingerprints], own: tuple[Fingerprints, Fingerprints], share: float
) -> CodeMatch | None:
    """Two bots that are each mostly shipped code and, counting it, share at least ``share``
    of their code (two renamed copies of a shipped example score nothing once the example is
    taken out as common code): their match counting the shipped code; else ``None``."""
    if min(shipped_share(w, o) for w, o in zip(whole, own, strict=True)) < share:
        return None
    match = compare(*whole)
    return match if match.score >= share else None


def shipped_roots() -> list[Path]:
    """The shipped example and reference bots' code (common to every student)."""
    import client_sdk

    base = Path(client_sdk.__file__).resolve().parent
    return [base / "examples", base / "reference"]


@dataclass(frozen=True, slots=True)
class Fragment:
    """Matching lines: ``a`` lines ``a_lines`` of file ``a_file``, and the same for ``b``."""

    a_file: str
    a_lines: tuple[int, int]
    b_file: str
    b_lines: tuple[int, int]
    a_text: str
    b_text: str


@dataclass(frozen=True, slots=True)
class CodeMatch:
    a: str
    b: str
    #: Shared fingerprints over the smaller bot's fingerprints (0..1).
    score: float
    shared: int
    a_share: float
    b_share: float
    fragments: tuple[Fragment, ...]


def compare(a: Fingerprints, b: Fingerprints, max_fragments: int = 8) -> CodeMatch:
    """How much of ``a`` and ``b`` is the same code, with the matching fragments."""
    shared = a.hashes & b.hashes
    small = min(len(a.hashes), len(b.hashes))
    score = len(shared) / small if small else 0.0
    fragments = _fragments(a, b, shared)[:max_fragments]
    return CodeMatch(
        a.name,
        b.name,
        score,
        len(shared),
        len(shared) / len(a.hashes) if a.hashes else 0.0,
        len(shared) / len(b.hashes) if b.hashes else 0.0,
        tuple(fragments),
    )


def _fragments(a: Fingerprints, b: Fingerprints, shared: set[int]) -> list[Fragment]:
    """Runs of shared fingerprints in ``a``'s order, each paired with ``b``'s lines."""
    where_b: dict[int, Print] = {}
    for p in b.prints:
        where_b.setdefault(p.hash, p)
    runs: list[list[tuple[Print, Print]]] = []
    for p in a.prints:
        if p.hash not in shared:
            continue
        q = where_b[p.hash]
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and last[0].file == p.file
            and last[1].file == q.file
            and p.first <= last[0].last + 2
            and abs(q.first - last[1].last) <= 3
        ):
            runs[-1].append((p, q))
        else:
            runs.append([(p, q)])
    runs.sort(key=len, reverse=True)
    out = []
    for run in runs:
        a_file, b_file = run[0][0].file, run[0][1].file
        a_span = (min(p.first for p, _ in run), max(p.last for p, _ in run))
        b_span = (min(q.first for _, q in run), max(q.last for _, q in run))
        out.append(
            Fragment(
                a_file,
                a_span,
                b_file,
                b_span,
                _text(a.lines.get(a_file, []), a_span),
                _text(b.lines.get(b_file, []), b_span),
            )
        )
    return out


def _text(lines: Sequence[str], span: tuple[int, int], most: int = 40) -> str:
    first, last = span
    chosen = lines[first - 1 : min(last, first + most - 1)]
    return "\n".join(chosen)
