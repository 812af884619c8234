"""A course-style bot that plays a random legal action (written only against referee.game)."""

from .program import Agent

__all__ = ["Agent"]
