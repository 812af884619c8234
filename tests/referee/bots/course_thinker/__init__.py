"""A course-style bot that reports what it thought through ``self.think_record``."""

from .program import Agent

__all__ = ["Agent"]
