"""Hosting games on a server: pairing (matchmaker, challenges), casual games, the ladder of
submitted bots, hosted tournaments with their presence and skipped-game notices, lesson runs
and grading games. What they get of the server is its :class:`~referee.server.handle.ServerHandle`
(or just its sessions); the read services over what they play are in :mod:`referee.rpc`."""
