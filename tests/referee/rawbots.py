"""Bot specs for the referee tests: the raw-protocol test bot (with misbehaviour flags) and the
SDK examples. The referee and the launched bots come from
:func:`referee.play.local.local_referee`."""

from __future__ import annotations

import sys
from pathlib import Path

from referee.sandbox.launch import BotSpec

RAWBOT = Path(__file__).parent / "bots" / "rawbot.py"
REPO = Path(__file__).resolve().parents[2]


def rawbot(*flags: str) -> BotSpec:
    """The raw-protocol test bot as a shell command, with misbehaviour flags."""
    extra = " ".join(flags)
    return BotSpec(
        "command", f"{sys.executable} {RAWBOT} --server {{server}} --token {{token}} {extra}"
    )


def sdk_bot(module: str = "client_sdk.examples.random_bot") -> BotSpec:
    return BotSpec("sdk", module)
