"""Random play, course style, with a think record set inside ``action()`` (its signature is
the course's: nothing else changes)."""

from __future__ import annotations

from typing import Any

from client_sdk.examples.course_random.program import Agent as RandomAgent
from referee.game import PlaceAction


class Agent(RandomAgent):
    def action(self, **referee: Any) -> PlaceAction:
        action = super().action(**referee)
        self.think_record = {
            "depth": 2,
            "nodes": 17,
            "score": -0.5,
            "pv": [action],
            "text": "a course bot's note",
        }
        return action
