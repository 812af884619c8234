"""A copied bot in disguise, as a student who copies would make it: every identifier of the
helper code renamed, comments and docstrings dropped, indentation halved, blank lines gone."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

RENAMES = {
    "DIRECTIONS": "STEPS",
    "neighbours": "adjacent",
    "placements": "legal_moves",
    "touching": "contact",
    "board": "grid",
    "me": "colour",
    "mine": "owned",
    "starts": "seeds",
    "found": "moves",
    "start": "seed",
    "kind": "piece",
    "shift": "off",
    "cells": "squares",
    "cell": "square",
    "total": "count",
    "options": "choices",
    "best": "pick",
    "d": "step",
    "n": "adj",
}


def disguise(source: str) -> str:
    """``source`` renamed and reformatted (still the same program)."""
    text = re.sub(r'^\s*""".*?"""\n', "", source, flags=re.S | re.M)
    for old, new in RENAMES.items():
        text = re.sub(rf"\b{old}\b", new, text)
    out = []
    for line in text.splitlines():
        code = line.split("#", 1)[0].rstrip()
        if not code.strip():
            continue
        indent = len(code) - len(code.lstrip(" "))
        out.append(" " * (indent // 2) + code.lstrip(" "))
    return "\n".join(out) + "\n"


def disguised_copy(original: Path, target: Path) -> Path:
    """A disguised copy of the course-style package ``original`` at ``target``."""
    shutil.copytree(original, target, ignore=shutil.ignore_patterns("__pycache__"))
    program = target / "program.py"
    program.write_text(disguise(program.read_text()))
    return target
