"""The web front: a Starlette app rendering pages on the server, its JSON endpoints and
live feeds."""
