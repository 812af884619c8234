"""Random play, reached through the helpers beside the package."""

import json
from pathlib import Path
from typing import Any

import helpermod
from utils.choose import pick
from utils.search.depth import DEPTH

from client_sdk.examples.course_random import Agent as RandomAgent
from referee.game import PlaceAction, PlayerColor

from .tables import OPENING_KEY


class Agent(RandomAgent):
    """The course's interface; refuses to start unless every helper was found."""

    def __init__(self, color: PlayerColor, **referee: Any) -> None:
        super().__init__(color, **referee)
        table = json.loads((Path(__file__).parent / "data" / "openings.json").read_text())
        if not (table[OPENING_KEY] and DEPTH == 2 and helpermod.READY):
            raise RuntimeError("a helper of the course layout is missing")

    def action(self, **referee: Any) -> PlaceAction:
        return pick(super().action(**referee))
