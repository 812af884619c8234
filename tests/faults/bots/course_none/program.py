"""A course-style bot that returns None on its first move (a common student mistake)."""

from __future__ import annotations

from typing import Any


class Agent:
    def __init__(self, color: Any, **referee: Any) -> None:
        self._color = color

    def action(self, **referee: Any) -> Any:
        return None

    def update(self, color: Any, action: Any, **referee: Any) -> None:
        return None
