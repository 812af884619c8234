"""A helper module beside the bot package."""

READY = True
