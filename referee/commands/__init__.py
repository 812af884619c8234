"""Subcommands of the ``referee`` CLI, one module each (see :mod:`referee.commands.main`)."""
