"""A course-style greedy bot that searches one ply ahead on the course ``Board``."""

from .program import Agent

__all__ = ["Agent"]
