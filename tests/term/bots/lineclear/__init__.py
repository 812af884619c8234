"""A test student's course-style bot."""

from .program import Agent

__all__ = ["Agent"]
