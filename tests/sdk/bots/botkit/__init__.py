"""A helper top-level package shipped beside a bot package (not inside it)."""

from botkit.cells import free_neighbours

__all__ = ["free_neighbours"]
