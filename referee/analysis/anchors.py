"""Anchors: the reference bots' calibrated Elo, stored once, pinned on leaderboards.

An anchor is known by its code, never by its name: a bot version is an anchor only when the
referee launches it (an SDK module, not a remote bot and not an upload), its stored content
hash is the hash of the shipped module, and its class is the anchor's class
(:func:`anchor_of`). A student's remote bot that calls itself
``client_sdk.examples.greedy_bot`` is an ordinary bot.

``anchors.json`` (beside this module) holds, per game, the maximum-likelihood Elo of the
random and greedy examples and of each reference level, from games among them with the random
example pinned at ``RANDOM_ELO`` (made by ``python bench/refbot.py --calibrate --write``). A
leaderboard that pins these bots to these ratings (``referee leaderboard --anchors``) puts
every class and every week on the same scale.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ANCHORS_FILE = Path(__file__).with_name("anchors.json")
#: The random example's rating: the bottom of the scale.
RANDOM_ELO = 1000.0
#: Bot specs of the anchors, by table name (what a tournament launches).
ANCHOR_SPECS: Mapping[str, str] = {
    "random": "client_sdk.examples.random_bot",
    "greedy": "client_sdk.examples.greedy_bot",
    "reference-L1": "client_sdk.examples.reference_bot:Level1",
    "reference-L2": "client_sdk.examples.reference_bot:Level2",
    "reference-L3": "client_sdk.examples.reference_bot:Level3",
}


@functools.cache
def shipped_hash(module: str) -> str | None:
    """The content hash of the shipped module ``module`` as this checkout holds it."""
    from referee.play.bots import module_origin
    from referee.storage.content import content_hash

    origin = module_origin(module)
    return content_hash(origin) if origin is not None else None


def anchor_of(version: Any, *, submitted: bool = False) -> str | None:
    """The anchor's table name if ``version`` (a ``BotVersionInfo``) is a shipped reference
    bot, by identity: launched as an SDK module, not an upload (``submitted``), with the
    shipped module's content hash and the anchor's class. ``None`` for every other bot."""
    from referee.storage.enums import SourceKind

    if submitted or version.source_kind is not SourceKind.SDK_MODULE:
        return None
    if not version.content_hash:
        return None
    cls = version.location.rpartition(":")[2] if ":" in version.location else ""
    for name, spec in ANCHOR_SPECS.items():
        module, _, want = spec.partition(":")
        if want == cls and version.content_hash == shipped_hash(module):
            return name
    return None


def anchored_versions(repo: Any) -> dict[str, str]:
    """``{label: anchor name}`` of every stored bot version that is an anchor by identity."""
    from referee.storage.submissions import submission_of_version

    found: dict[str, str] = {}
    for v in repo.list_bot_versions():
        name = anchor_of(v)
        if name is not None and submission_of_version(repo.db, v.id) is None:
            found[v.label] = name
    return found


def calibrate(games: Sequence[Any]) -> dict[str, float]:
    """Maximum-likelihood Elo of every bot in ``games`` (``.result()`` each), random pinned."""
    from referee.ratings.mle import fit_ratings

    fit = fit_ratings([g.result() for g in games], anchor="random", anchor_rating=RANDOM_ELO)
    return {name: round(rating, 1) for name, rating in fit.as_dict().items()}


def load_anchors(game: str, path: Path = ANCHORS_FILE) -> dict[str, float]:
    """The stored table of ``game`` (``{}`` if none)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    table = data.get(game, {}).get("elo", {})
    return {str(k): float(v) for k, v in table.items()}


def write_anchors(game: str, table: Mapping[str, float], games: int, command: str) -> None:
    data: dict[str, Any] = {}
    if ANCHORS_FILE.is_file():
        data = json.loads(ANCHORS_FILE.read_text(encoding="utf-8"))
    data[game] = {"elo": dict(table), "games": games, "command": command}
    ANCHORS_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def anchored_fit(
    results: Sequence[Any], fixed: Mapping[str, float], prior_games: float = 1.0
) -> dict[str, float]:
    """Maximum-likelihood Elo of every player with the ``fixed`` ones pinned.

    Newton's method on the free ratings (logistic model, draws as half a win); each free
    player also plays ``prior_games`` virtual draws against a pinned player's average, so a
    perfect score stays finite. Players with no path to a pinned one keep that average.
    """
    import numpy as np

    counted = [r for r in results if not getattr(r, "void", False)]
    names = sorted({r.first for r in counted} | {r.second for r in counted} | set(fixed))
    index = {n: i for i, n in enumerate(names)}
    free = [n for n in names if n not in fixed]
    if not free:
        return {n: float(fixed[n]) for n in names}
    center = sum(fixed.values()) / len(fixed) if fixed else RANDOM_ELO
    scale = math.log(10) / 400.0
    theta = np.array([fixed.get(n, center) * scale for n in names])
    pos = {n: k for k, n in enumerate(free)}
    for _ in range(100):
        grad = np.zeros(len(free))
        hess = np.zeros((len(free), len(free)))
        for r in counted:
            i, j = index[r.first], index[r.second]
            p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            w = p * (1.0 - p)
            for name, sign, s in ((r.first, 1.0, r.score), (r.second, -1.0, 1.0 - r.score)):
                if name in pos:
                    grad[pos[name]] += s - (p if sign > 0 else 1.0 - p)
            a, b = pos.get(r.first), pos.get(r.second)
            if a is not None:
                hess[a, a] -= w
            if b is not None:
                hess[b, b] -= w
            if a is not None and b is not None:
                hess[a, b] += w
                hess[b, a] += w
        for name, k in pos.items():
            p = 1.0 / (1.0 + math.exp(center * scale - theta[index[name]]))
            grad[k] += prior_games * (0.5 - p)
            hess[k, k] -= prior_games * p * (1.0 - p)
        step = np.linalg.solve(hess, -grad)
        for name, k in pos.items():
            theta[index[name]] += step[k]
        if float(np.max(np.abs(step))) < 1e-9:
            break
    return {n: float(theta[index[n]] / scale) for n in names}
