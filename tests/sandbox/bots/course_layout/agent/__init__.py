"""A course bot laid out as COMP30024 students ship theirs: this package imports its own
modules relatively, opens a data file beside its code, and imports a helper folder without
``__init__.py`` (``utils/``, a namespace package) and a helper module (``helpermod.py``)
lying beside it."""

from .program import Agent

__all__ = ["Agent"]
