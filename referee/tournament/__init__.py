"""Tournaments: formats, pairings and the runner that plays them."""

#: How long a game waits for a remote entry that is not connected, by default (tournaments'
#: and ``referee sprt``'s ``--remote-timeout``); here so the CLI can name it without importing
#: the runner.
DEFAULT_REMOTE_WAIT_S = 300.0
