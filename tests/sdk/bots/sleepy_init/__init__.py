"""A course-style bot whose constructor sleeps ``SLEEPY_INIT_S`` seconds (default 1.0), then
plays random legal actions: the constructor's time is charged to the bot's clock."""

from .program import Agent, SlowMover

__all__ = ["Agent", "SlowMover"]
